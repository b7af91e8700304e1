// Standalone validation and timing harness of the int8_mm kernels (no Java): random int8 inputs, a CPU
// reference (int64 accumulation, fp64 dequantization with one rounding), every element compared, then
// custom vs cuBLASLt int8 (TN, COMPUTE_32I) vs an F16 cublasGemmEx peer, timed with CUDA events and the
// L2 flushed before every repetition, paths interleaved, medians.
//
// Build (from a directory holding this file, skinny_mma.cu, dequant.cu, int8_mm.cuh, gapfill_types.cuh):
//   nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fopenmp -I . harness.cu -lcublasLt -lcublas -o harness
// The plan() below mirrors dev.gapfill.ops.Int8MmHeuristics.
#include "skinny_mma.cu"
#include "dequant.cu"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, (int)s_); exit(1); } } while (0)

enum Out { O_I32, O_F32, O_F16, O_BF16 };
static const char* OUT_NAME[] = {"i32", "f32", "f16", "bf16"};
static const int OUT_BYTES[] = {4, 4, 2, 2};

// ---------------------------------------------------------------- plan (mirrors Int8MmHeuristics)
struct Plan { int tile, bn, step, splits, ks; size_t smem, ws; };
static const long SMEM_BUDGET = 72 * 1024;
static Plan plan(int M, int N, int K, int sms, int ctasPerSm) {
    Plan p{};
    p.tile = M <= 8 ? 8 : M <= 16 ? 16 : M <= 32 ? 32 : 64;
    p.bn = p.tile == 8 ? 64 : 128;
    p.step = p.tile == 8 ? 256 : 128;
    int tilesN = (N + p.bn - 1) / p.bn;
    long target = (long)ctasPerSm * sms;
    long splits = std::max<long>(1, (target + tilesN - 1) / tilesN);
    splits = std::min<long>(splits, (K + p.step - 1) / p.step);
    long budget = M <= 8 ? 32 * 1024 : SMEM_BUDGET;  // as Int8MmHeuristics.smemBudget (changed after run 1)
    long ksMax = std::max<long>(p.step, (budget / M - 64) / p.step * p.step);
    splits = std::max<long>(splits, (K + ksMax - 1) / ksMax);
    int ks = (int)(((K + splits - 1) / splits + p.step - 1) / p.step * p.step);
    p.ks = ks;
    p.splits = (K + ks - 1) / ks;
    p.smem = (size_t)M * (ks + 64);
    p.ws = p.splits > 1 ? ((size_t)(tilesN + 63) / 64 * 64) * 4 + (size_t)tilesN * p.splits * 4 * (p.bn / 64) * (p.tile / 8) * 32 * 16 : 0;
    return p;
}

typedef void (*SkinnyFn)(const int8_t*, const int8_t*, void*, const float*, int, const float*, int, const float*, int*, int, int, int, int);
static SkinnyFn skinny_fn(int tile, Out o) {
#define PICK(T) switch (o) { case O_I32: return (SkinnyFn)int8_mm_skinny_m##T##_i32; case O_F32: return (SkinnyFn)int8_mm_skinny_m##T##_f32; \
                             case O_F16: return (SkinnyFn)int8_mm_skinny_m##T##_f16; default: return (SkinnyFn)int8_mm_skinny_m##T##_bf16; }
    switch (tile) { case 8: PICK(8) case 16: PICK(16) case 32: PICK(32) default: PICK(64) }
#undef PICK
}

struct Scales { const float* a; int as; const float* w; int ws; const float* bias; };

// The split-K counters must be zero when a workspace starts serving a plan of another layout; the kernel
// re-arms them itself between launches of one plan. (Run 1 of this harness shared one workspace across
// layouts and zeroed it once: plans with > 64 channel tiles then read earlier partials as counters.)
static void zero_counters(int* ws, cudaStream_t st) { CK(cudaMemsetAsync(ws, 0, 64 * 1024, st)); }
static void run_custom(const Plan& p, const int8_t* a, const int8_t* w, void* out, Out o, const Scales& s, int* ws, int M, int N, int K,
                       cudaStream_t st) {
    SkinnyFn f = skinny_fn(p.tile, o);
    static std::map<SkinnyFn, size_t> opted;
    if (p.smem > 48 * 1024 && opted[f] < p.smem) { CK(cudaFuncSetAttribute((const void*)f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.smem)); opted[f] = p.smem; }
    dim3 grid((N + p.bn - 1) / p.bn, p.splits);
    f<<<grid, 128, p.smem, st>>>(a, w, out, s.a, s.as, s.w, s.ws, s.bias, ws, M, N, K, p.ks);
}

// ---------------------------------------------------------------- vendor: cuBLASLt int8 TN
struct LtPlan { cublasLtMatmulDesc_t op; cublasLtMatrixLayout_t la, lb, lc; cublasLtMatmulAlgo_t algo; size_t ws; bool ok; };
static cublasLtHandle_t g_lt;
static LtPlan lt_plan(int M, int N, int K) {
    LtPlan p{};
    CB(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32I, CUDA_R_32I));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CB(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CB(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CB(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_8I, K, N, K));   // W viewed as [K, N] column-major, op = T
    CB(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_8I, K, M, K));   // A viewed as [K, M] column-major
    CB(cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_32I, N, M, N));  // C^T [N, M] column-major = C [M, N] row-major
    cublasLtMatmulPreference_t pref;
    CB(cublasLtMatmulPreferenceCreate(&pref));
    size_t maxws = 32u << 20;
    CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &maxws, sizeof maxws));
    cublasLtMatmulHeuristicResult_t r{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g_lt, p.op, p.la, p.lb, p.lc, p.lc, pref, 1, &r, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    p.ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
    if (p.ok) { p.algo = r.algo; p.ws = r.workspaceSize; }
    return p;
}
static bool run_lt(const LtPlan& p, const int8_t* a, const int8_t* w, int* c, void* ws, cudaStream_t st) {
    int alpha = 1, beta = 0;
    return cublasLtMatmul(g_lt, p.op, &alpha, w, p.la, a, p.lb, &beta, c, p.lc, c, p.lc, &p.algo, ws, p.ws, st) == CUBLAS_STATUS_SUCCESS;
}
static void run_dequant(const int* acc, void* out, Out o, const Scales& s, int M, int N, cudaStream_t st) {
    int total = M * N, blocks = std::min((total + 255) / 256, 132 * 8);
    switch (o) {
        case O_F32: int8_mm_dequant_f32<<<blocks, 256, 0, st>>>(acc, (float*)out, s.a, s.as, s.w, s.ws, s.bias, M, N); break;
        case O_F16: int8_mm_dequant_f16<<<blocks, 256, 0, st>>>(acc, (__half*)out, s.a, s.as, s.w, s.ws, s.bias, M, N); break;
        case O_BF16: int8_mm_dequant_bf16<<<blocks, 256, 0, st>>>(acc, (__nv_bfloat16*)out, s.a, s.as, s.w, s.ws, s.bias, M, N); break;
        default: break;
    }
}

// ---------------------------------------------------------------- host reference
static void ref_acc(const std::vector<int8_t>& A, const std::vector<int8_t>& W, int M, int N, int K, std::vector<long long>& acc) {
    acc.assign((size_t)M * N, 0);
#pragma omp parallel for collapse(2) schedule(static)
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            long long s = 0;
            const int8_t* a = &A[(size_t)m * K];
            const int8_t* w = &W[(size_t)n * K];
            for (int k = 0; k < K; ++k) s += (long long)a[k] * w[k];
            acc[(size_t)m * N + n] = s;
        }
}
static double f16_value(uint16_t h) { return (double)__half2float(*reinterpret_cast<__half*>(&h)); }
static double bf16_value(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
// Nearest (ties to even) 16-bit encoding of v, found among the float-rounded candidate and its neighbours.
static uint16_t round16(double v, bool bf) {
    float f = (float)v;
    uint16_t c;
    if (bf) { __nv_bfloat16 b = __float2bfloat16_rn(f); memcpy(&c, &b, 2); } else { __half h = __float2half_rn(f); memcpy(&c, &h, 2); }
    if (std::isnan(v) || std::isinf((double)(bf ? bf16_value(c) : f16_value(c)))) return c;
    uint16_t best = c; double bd = std::fabs(v - (bf ? bf16_value(c) : f16_value(c)));
    for (int d = -1; d <= 1; d += 2) {
        uint16_t n = (uint16_t)(c + d);
        double val = bf ? bf16_value(n) : f16_value(n);
        if (std::isnan(val) || std::isinf(val) || ((n ^ c) & 0x8000)) continue;
        double dd = std::fabs(v - val);
        if (dd < bd || (dd == bd && (n & 1) == 0)) { best = n; bd = dd; }
    }
    return best;
}
static uint32_t ref_bits(long long acc, double as, double wsc, const float* bias, int n, Out o) {
    double s = as * wsc;
    double v = (double)acc * s;
    if (bias) v = v + (double)bias[n];
    switch (o) {
        case O_I32: return (uint32_t)(int32_t)acc;
        case O_F32: { float f = (float)v; uint32_t u; memcpy(&u, &f, 4); return u; }
        case O_F16: return round16(v, false);
        default: return round16(v, true);
    }
}
static uint32_t out_bits(const std::vector<uint8_t>& h, size_t i, Out o) {
    if (OUT_BYTES[o] == 4) { uint32_t u; memcpy(&u, &h[4 * i], 4); return u; }
    uint16_t u; memcpy(&u, &h[2 * i], 2); return u;
}

// ---------------------------------------------------------------- problem on the device
struct Problem {
    int M, N, K;
    std::vector<int8_t> A, W;
    std::vector<float> as, wsc, bias;
    int8_t *dA = nullptr, *dW = nullptr;
    float *dAs = nullptr, *dWs = nullptr, *dBias = nullptr;
    __half *dAh = nullptr, *dWh = nullptr, *dCh = nullptr;
    Problem(int M_, int N_, int K_, std::mt19937& rng, bool f16peer) : M(M_), N(N_), K(K_) {
        A.resize((size_t)M * K); W.resize((size_t)N * K);
        std::uniform_real_distribution<float> ds(0.001f, 0.05f), db(-1.f, 1.f);
        uint64_t x64 = rng() | ((uint64_t)rng() << 32) | 1;  // xorshift: fast full-range int8 (-128 included)
        auto next8 = [&] { x64 ^= x64 << 13; x64 ^= x64 >> 7; x64 ^= x64 << 17; return (int8_t)(x64 >> 24); };
        for (auto& x : A) x = next8();
        for (auto& x : W) x = next8();
        as.resize(M); wsc.resize(N); bias.resize(N);
        for (auto& x : as) x = ds(rng);
        for (auto& x : wsc) x = ds(rng);
        for (auto& x : bias) x = db(rng) * 100.f;
        CK(cudaMalloc(&dA, A.size())); CK(cudaMalloc(&dW, W.size()));
        CK(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice)); CK(cudaMemcpy(dW, W.data(), W.size(), cudaMemcpyHostToDevice));
        CK(cudaMalloc(&dAs, 4 * M)); CK(cudaMalloc(&dWs, 4 * N)); CK(cudaMalloc(&dBias, 4 * N));
        CK(cudaMemcpy(dAs, as.data(), 4 * M, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dWs, wsc.data(), 4 * N, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dBias, bias.data(), 4 * N, cudaMemcpyHostToDevice));
        if (f16peer) {
            std::vector<__half> ah(A.size()), wh(W.size());
            for (size_t i = 0; i < A.size(); ++i) ah[i] = __float2half((float)A[i] / 64.f);
            for (size_t i = 0; i < W.size(); ++i) wh[i] = __float2half((float)W[i] / 64.f);
            CK(cudaMalloc(&dAh, 2 * A.size())); CK(cudaMalloc(&dWh, 2 * W.size())); CK(cudaMalloc(&dCh, 2 * (size_t)M * N));
            CK(cudaMemcpy(dAh, ah.data(), 2 * A.size(), cudaMemcpyHostToDevice)); CK(cudaMemcpy(dWh, wh.data(), 2 * W.size(), cudaMemcpyHostToDevice));
        }
    }
    ~Problem() { cudaFree(dA); cudaFree(dW); cudaFree(dAs); cudaFree(dWs); cudaFree(dBias); cudaFree(dAh); cudaFree(dWh); cudaFree(dCh); }
};

static int g_sms;
static long g_failures = 0;

// Compares every element of a device output with the reference; prints the first mismatch.
static bool check(const char* what, const Problem& P, const std::vector<long long>& acc, const void* dOut, Out o, bool perTok, bool withBias) {
    size_t n = (size_t)P.M * P.N;
    std::vector<uint8_t> h(n * OUT_BYTES[o]);
    CK(cudaMemcpy(h.data(), dOut, h.size(), cudaMemcpyDeviceToHost));
    long bad = 0; size_t first = 0;
    for (size_t i = 0; i < n; ++i) {
        int m = (int)(i / P.N), c = (int)(i % P.N);
        double as = perTok ? P.as[m] : P.as[0], wsc = perTok ? P.wsc[c] : P.wsc[0];
        if (ref_bits(acc[i], as, wsc, withBias ? P.bias.data() : nullptr, c, o) != out_bits(h, i, o)) { if (!bad) first = i; ++bad; }
    }
    if (bad) {
        if (++g_failures > 20) return false;
        int m = (int)(first / P.N), c = (int)(first % P.N);
        printf("FAIL %s M=%d N=%d K=%d out=%s: %ld / %zu elements differ, first [%d,%d] got %08x want %08x (acc %lld)\n", what, P.M, P.N, P.K,
               OUT_NAME[o], bad, n, m, c, out_bits(h, first, o),
               ref_bits(acc[first], perTok ? P.as[m] : P.as[0], perTok ? P.wsc[c] : P.wsc[0], withBias ? P.bias.data() : nullptr, c, o), acc[first]);
    }
    return bad == 0;
}

int main(int argc, char** argv) {
    // modes: "full" (correctness + timing sweep), "quick" (fewer timing rows), "sanitize" (small correctness set only)
    bool quick = argc > 1 && !strcmp(argv[1], "quick");
    bool sanitize = argc > 1 && !strcmp(argv[1], "sanitize");
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    int drv, rt; cudaDriverGetVersion(&drv); cudaRuntimeGetVersion(&rt);
    printf("device %s, %d SMs, L2 %d MiB, driver %d, runtime %d, cublasLt %zu\n", prop.name, g_sms, prop.l2CacheSize >> 20, drv, rt, cublasLtGetVersion());
    CB(cublasLtCreate(&g_lt));
    cublasHandle_t blas; CB(cublasCreate(&blas));
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CB(cublasSetStream(blas, st));
    std::mt19937 rng(1234);
    void* ltws; CK(cudaMalloc(&ltws, 32u << 20));
    // one workspace per timed plan (x1, x2, x4, x8): interleaved plans of different layouts never share one
    int* dwsAll[4]; size_t wsCap = 96u << 20;
    for (auto& q : dwsAll) { CK(cudaMalloc(&q, wsCap)); CK(cudaMemset(q, 0, wsCap)); }
    int* dws = dwsAll[1];
    int* dAcc; CK(cudaMalloc(&dAcc, (size_t)128 * 28672 * 4));
    void* dOut; CK(cudaMalloc(&dOut, (size_t)128 * 28672 * 4));
    void* dOut2; CK(cudaMalloc(&dOut2, (size_t)128 * 28672 * 4));

    // ------------------------------------------------ correctness: every element against the CPU reference
    std::vector<int> Ms = {1, 7, 17, 64, 65, 128}, Ns = {1, 7, 97, 4099}, Ks = {16, 48, 4096};
    if (sanitize) { Ms = {1, 17, 64}; Ns = {7, 97}; Ks = {16, 4096}; }
    long cases = 0, vendorMissing = 0;
    for (int K : Ks) for (int N : Ns) for (int M : Ms) {
        Problem P(M, N, K, rng, false);
        std::vector<long long> acc; ref_acc(P.A, P.W, M, N, K, acc);
        LtPlan lp = lt_plan(M, N, K);
        bool ltok = false;
        if (lp.ok) {
            CK(cudaMemsetAsync(dAcc, 0xff, (size_t)M * N * 4, st));
            ltok = run_lt(lp, P.dA, P.dW, dAcc, ltws, st);
            CK(cudaStreamSynchronize(st));
        }
        if (!ltok) { ++vendorMissing; printf("vendor: no cuBLASLt int8 algorithm for M=%d N=%d K=%d (heuristic %s)\n", M, N, K, lp.ok ? "ok, matmul failed" : "found none"); }
        for (int o = 0; o < 4; ++o) for (int mode = 0; mode < 2; ++mode) {
            if (o == O_I32 && mode == 1) continue;
            bool perTok = mode == 0, withBias = mode == 0;
            Scales s{P.dAs, perTok ? 1 : 0, P.dWs, perTok ? 1 : 0, withBias ? P.dBias : nullptr};
            if (ltok) {
                if (o == O_I32) { check("vendor", P, acc, dAcc, (Out)o, perTok, withBias); }
                else {
                    CK(cudaMemsetAsync(dOut, 0xff, (size_t)M * N * OUT_BYTES[o], st));
                    run_dequant(dAcc, dOut, (Out)o, s, M, N, st); CK(cudaStreamSynchronize(st));
                    check("vendor+dequant", P, acc, dOut, (Out)o, perTok, withBias);
                }
            }
            if (M > 64) continue;
            for (int mult : {1, 2, 8}) {
                Plan p = plan(M, N, K, g_sms, mult);
                zero_counters(dws, st);
                for (int rep = 0; rep < 2; ++rep) {  // twice: the second launch proves the split-K counters were re-armed
                    CK(cudaMemsetAsync(dOut, 0xff, (size_t)M * N * OUT_BYTES[o], st));
                    run_custom(p, P.dA, P.dW, dOut, (Out)o, s, dws, M, N, K, st);
                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                    char what[64]; snprintf(what, sizeof what, "custom(splits=%d,rep=%d)", p.splits, rep);
                    check(what, P, acc, dOut, (Out)o, perTok, withBias);
                    ++cases;
                }
            }
        }
    }
    printf("correctness: %ld custom runs, %ld shapes without a vendor algorithm, %ld failures\n", cases, vendorMissing, g_failures);
    if (sanitize) return g_failures ? 1 : 0;

    // ------------------------------------------------ timing
    size_t flushBytes = std::max<size_t>(4 * (size_t)prop.l2CacheSize, 64u << 20);
    void* flush; CK(cudaMalloc(&flush, flushBytes));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const int REPS = 30, WARM = 3;
    auto timeit = [&](std::vector<std::function<void()>>& paths) {
        std::vector<std::vector<float>> t(paths.size());
        for (int r = -WARM; r < REPS; ++r)
            for (size_t i = 0; i < paths.size(); ++i) {
                CK(cudaMemsetAsync(flush, r & 0xff, flushBytes, st));
                CK(cudaEventRecord(e0, st)); paths[i](); CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 0) t[i].push_back(ms * 1000.f);
            }
        std::vector<double> med;
        for (auto& v : t) { std::sort(v.begin(), v.end()); med.push_back(v[v.size() / 2]); }
        return med;
    };
    // copy bandwidth (bytes read + written)
    double copyGBps;
    {
        size_t b = 1u << 30; void *x, *y; CK(cudaMalloc(&x, b)); CK(cudaMalloc(&y, b));
        std::vector<std::function<void()>> p = {[&] { CK(cudaMemcpyAsync(y, x, b, cudaMemcpyDeviceToDevice, st)); }};
        double us = timeit(p)[0];
        copyGBps = 2.0 * b / (us * 1e3);
        cudaFree(x); cudaFree(y);
    }
    printf("copy bandwidth %.0f GB/s\n", copyGBps);
    int KNs[][2] = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    int TMs[] = {1, 2, 4, 8, 16, 32, 64, 128};
    int mults[] = {1, 2, 4, 8};
    printf("\n%-5s %-6s %-6s %-4s %8s %8s %8s %8s %8s %8s %8s %8s %6s %6s %s\n", "M", "K", "N", "out", "floor", "vendor", "cust*", "c.x1", "c.x2", "c.x4",
           "c.x8", "f16peer", "vs.v", "%flr", "check");
    std::vector<std::string> summary;
    for (auto& kn : KNs) {
        int K = kn[0], N = kn[1];
        for (int M : TMs) {
            if (quick && M != 1 && M != 16 && M != 64) continue;
            Problem P(M, N, K, rng, true);
            LtPlan lp = lt_plan(M, N, K);
            // correctness at this size: vendor I32 vs custom I32 (every element), dequant vs the host epilogue of the vendor acc
            std::vector<long long> acc((size_t)M * N);
            bool ltok = lp.ok && run_lt(lp, P.dA, P.dW, dAcc, ltws, st);
            CK(cudaStreamSynchronize(st));
            if (ltok) {
                std::vector<int> h((size_t)M * N);
                CK(cudaMemcpy(h.data(), dAcc, h.size() * 4, cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < h.size(); ++i) acc[i] = h[i];
                // spot-check the vendor itself against exact int64 dot products on a few rows
                for (int m = 0; m < M; m += std::max(1, M / 3)) for (int n = 0; n < N; n += 997) {
                    long long s = 0; for (int k = 0; k < K; ++k) s += (long long)P.A[(size_t)m * K + k] * P.W[(size_t)n * K + k];
                    if (s != acc[(size_t)m * N + n]) { ++g_failures; printf("FAIL vendor spot M=%d N=%d K=%d [%d,%d]\n", M, N, K, m, n); }
                }
            }
            for (int o = 0; o < 3; ++o) {
                Out out = o == 0 ? O_I32 : o == 1 ? O_F16 : O_BF16;
                Scales s{P.dAs, 1, P.dWs, 1, P.dBias};
                bool ok = true;
                for (auto& q : dwsAll) zero_counters(q, st);
                if (M <= 64) {
                    CK(cudaMemsetAsync(dOut, 0xff, (size_t)M * N * OUT_BYTES[out], st));
                    run_custom(plan(M, N, K, g_sms, 2), P.dA, P.dW, dOut, out, s, dws, M, N, K, st);
                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                    if (ltok) ok = check("custom-vs-vendor", P, acc, dOut, out, true, true);
                }
                std::vector<std::function<void()>> paths;
                paths.push_back([&] { if (lp.ok) { run_lt(lp, P.dA, P.dW, dAcc, ltws, st); if (out != O_I32) run_dequant(dAcc, dOut2, out, s, M, N, st); } });
                for (int i = 0; i < 4; ++i) {
                    if (M > 64) break;
                    Plan p = plan(M, N, K, g_sms, mults[i]);
                    int* w = dwsAll[i];
                    paths.push_back([&, p, w] { run_custom(p, P.dA, P.dW, dOut, out, s, w, M, N, K, st); });
                }
                float one = 1.f, zero = 0.f;
                paths.push_back([&] { CB(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &one, P.dWh, CUDA_R_16F, K, P.dAh, CUDA_R_16F, K, &zero, P.dCh,
                                                      CUDA_R_16F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)); });
                std::vector<double> t = timeit(paths);
                double floorUs = ((double)K * N + (double)M * K + (double)M * N * OUT_BYTES[out]) / (copyGBps * 1e3);
                double vendor = t[0], peer = t.back();
                double c[4] = {NAN, NAN, NAN, NAN}, best = NAN;
                if (M <= 64) for (int i = 0; i < 4; ++i) { c[i] = t[1 + i]; best = std::isnan(best) ? c[i] : std::min(best, c[i]); }
                double cust = c[1];  // the default plan (2 CTAs per SM)
                char line[256];
                snprintf(line, sizeof line, "%-5d %-6d %-6d %-4s %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6.2f %6.0f %s", M, K, N, OUT_NAME[out], floorUs,
                         vendor, cust, c[0], c[1], c[2], c[3], peer, vendor / cust, 100 * floorUs / cust, !ltok ? "no-vendor" : ok ? "ok" : "FAIL");
                puts(line);
                if (out == O_I32) summary.push_back(line);
            }
        }
    }
    printf("\nI32 summary (cust* = default plan, c.xN = N CTAs per SM targeted, vs.v = vendor/cust*, %%flr = floor/cust*)\n");
    for (auto& l : summary) puts(l.c_str());
    printf("\nTOTAL FAILURES: %ld\n", g_failures);
    return g_failures ? 1 : 0;
}
