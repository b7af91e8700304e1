// Harness for bmm_gemv.cu (bmm with m = 1 or n = 1): every kernel on every layout against a host reference (F32:
// the in-order fmaf sum, bit for bit; F16/BF16: fp64 sum within 2·k·u·Σ|terms| + one output rounding), outputs
// poisoned first; then cuBLAS strided batched (the vendor path's call) against the kernel the Java plan picks,
// interleaved, L2 flushed by a read before every launch, medians of 31, with a plain read of the same bytes.
// Build and run: OUT=$OUT bash cuda-native/dev/bmm/run_gemv.sh
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "dev_harness.h"
#include "bmm_gemv.cu"



// Experiment (forty-fourth session): the axpy warp kernel's loop in the form first measured (old: a trip count in
// steps, zero-filling ternaries), against the shipped form (axpy_rows).
template <typename T, int U, bool kStepsBound>
__global__ void __launch_bounds__(256) v_axpy_warp_old(const T* __restrict__ M, const T* __restrict__ V, T* __restrict__ Y, int batch, int R,
                                                       int K, long long m_stride, long long v_stride, int log2c) {
    constexpr int N = Vec16<T>::N;
    const long long b = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (b >= batch) return;
    const int lane = threadIdx.x & 31;
    const int chunk = lane & ((1 << log2c) - 1);
    const int slot = lane >> log2c;
    const int ks_per_step = 32 >> log2c;
    const int steps = (K + ks_per_step - 1) / ks_per_step;
    const T* mat = M + b * m_stride + chunk * N;
    const T* vec = V + b * v_stride;
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = 0.f;
    for (int s0 = 0; s0 < steps; s0 += U) {
        Vec16<T> mv[U];
        float vs[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int kk = (s0 + u) * ks_per_step + slot;
            const bool in = (!kStepsBound || s0 + u < steps) && kk < K;
            Vec16<T> z; z.raw = make_uint4(0u, 0u, 0u, 0u);
            mv[u] = in ? load16_stream(mat + (long long)kk * R) : z;
            vs[u] = in ? to_float(vec[kk]) : 0.f;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
#pragma unroll
            for (int i = 0; i < N; i++) acc[i] = fmaf(to_float(mv[u].v[i]), vs[u], acc[i]);
        }
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        for (int o = 1 << log2c; o < 32; o <<= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
    }
    if (slot == 0) store16(Y + b * R + chunk * N, round16<T>(acc));
}

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS %d at %d\n", (int)s_, __LINE__); exit(2); } } while (0)

enum Dt { F16, BF16, F32 };
static const char* dt_name(Dt d) { return d == F16 ? "f16" : d == BF16 ? "bf16" : "f32"; }
static size_t dt_bytes(Dt d) { return d == F32 ? 4 : 2; }

static float h2f(Dt d, uint16_t b) {
    if (d == F16) { __half h; memcpy(&h, &b, 2); return __half2float(h); }
    __nv_bfloat16 h; memcpy(&h, &b, 2); return __bfloat162float(h);
}
static uint16_t f2h(Dt d, float f) {
    uint16_t b;
    if (d == F16) { __half h = __float2half_rn(f); memcpy(&b, &h, 2); }
    else { __nv_bfloat16 h = __float2bfloat16_rn(f); memcpy(&b, &h, 2); }
    return b;
}

struct Plan {
    bool ok, dot, warp, mIsA;
    int R, K, log2c;
    long long mStride, vStride;
};

// Mirrors BmmHeuristics.gemvPlan / useGemv (alignment assumed).
static Plan plan(Dt d, int m, int n, int k, bool ta, bool tb, bool shared) {
    Plan p{};
    if (m != 1 && n != 1) return p;
    int N = 16 / (int)dt_bytes(d);
    if (n == 1) { p.mIsA = true; p.R = m; p.dot = !ta || m == 1; }
    else { p.mIsA = false; p.R = n; p.dot = tb; }
    p.K = k;
    int inner = p.dot ? k : p.R;
    if (inner % N) return p;
    int c = inner / N;
    p.warp = !p.dot && d != F32 && c <= 32 && (c & (c - 1)) == 0;
    p.log2c = 0; while ((1 << p.log2c) < c) p.log2c++;
    long long mat = (long long)p.R * k;
    p.mStride = p.mIsA ? mat : (shared ? 0 : mat);
    p.vStride = p.mIsA ? (shared ? 0 : k) : k;
    p.ok = true;
    return p;
}

static void launch(Dt d, const Plan& p, const void* A, const void* B, void* C, int batch, cudaStream_t st, bool force_lane = false) {
    const void* M = p.mIsA ? A : B;
    const void* V = p.mIsA ? B : A;
    int N = 16 / (int)dt_bytes(d);
    if (p.warp && !force_lane) {
        int grid = (batch + 7) / 8;
        if (d == F16) bmm_gemv_f16_axpy_warp<<<grid, 256, 0, st>>>((const __half*)M, (const __half*)V, (__half*)C, batch, p.R, p.K, p.mStride, p.vStride, p.log2c);
        else bmm_gemv_bf16_axpy_warp<<<grid, 256, 0, st>>>((const __nv_bfloat16*)M, (const __nv_bfloat16*)V, (__nv_bfloat16*)C, batch, p.R, p.K, p.mStride, p.vStride, p.log2c);
        return;
    }
    long long threads = (long long)batch * (p.dot ? p.R : p.R / N);
    int grid = (int)((threads + 255) / 256);
#define L(T, NM) \
    if (p.dot) bmm_gemv_##NM##_dot_lane<<<grid, 256, 0, st>>>((const T*)M, (const T*)V, (T*)C, batch, p.R, p.K, p.mStride, p.vStride); \
    else bmm_gemv_##NM##_axpy_lane<<<grid, 256, 0, st>>>((const T*)M, (const T*)V, (T*)C, batch, p.R, p.K, p.mStride, p.vStride);
    if (d == F16) { L(__half, f16) } else if (d == BF16) { L(__nv_bfloat16, bf16) } else { L(float, f32) }
#undef L
}

static float val(Dt d, const std::vector<uint8_t>& h, size_t i) {
    if (d == F32) { float f; memcpy(&f, &h[4 * i], 4); return f; }
    uint16_t b; memcpy(&b, &h[2 * i], 2); return h2f(d, b);
}

// Checks one case; returns the failures (prints the first).
static long check(Dt d, int batch, int m, int n, int k, bool ta, bool tb, bool shared, std::mt19937& rng, bool force_lane) {
    Plan p = plan(d, m, n, k, ta, tb, shared);
    if (!p.ok) return 0;
    size_t eb = dt_bytes(d);
    size_t na = (size_t)batch * m * k, nb = (size_t)(shared ? 1 : batch) * k * n, nc = (size_t)batch * m * n;
    std::vector<uint8_t> ha(na * eb), hb(nb * eb), hc(nc * eb);
    std::uniform_real_distribution<float> U(-1.f, 1.f);
    auto fill = [&](std::vector<uint8_t>& h, size_t cnt) {
        for (size_t i = 0; i < cnt; i++) {
            float x = U(rng); if (x == 0.f) x = 0.5f;
            if (d == F32) memcpy(&h[4 * i], &x, 4); else { uint16_t b = f2h(d, x); memcpy(&h[2 * i], &b, 2); }
        }
    };
    fill(ha, na); fill(hb, nb);
    void *A, *B, *C;
    CK(cudaMalloc(&A, na * eb)); CK(cudaMalloc(&B, nb * eb)); CK(cudaMalloc(&C, nc * eb));
    CK(cudaMemcpy(A, ha.data(), na * eb, cudaMemcpyHostToDevice)); CK(cudaMemcpy(B, hb.data(), nb * eb, cudaMemcpyHostToDevice));
    CK(cudaMemset(C, 0xff, nc * eb));  // NaN poison
    launch(d, p, A, B, C, batch, 0, force_lane);
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hc.data(), C, nc * eb, cudaMemcpyDeviceToHost));
    long fails = 0;
    double u = d == F16 ? std::ldexp(1.0, -11) : d == BF16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -24);
    for (int b = 0; b < batch; b++) {
        size_t ao = (size_t)b * m * k, bo = shared ? 0 : (size_t)b * k * n;
        for (int i = 0; i < m; i++) for (int j = 0; j < n; j++) {
            double ex = 0, mag = 0; float seq = 0.f;
            for (int kk = 0; kk < k; kk++) {
                float x = val(d, ha, ao + (ta ? (size_t)kk * m + i : (size_t)i * k + kk));
                float y = val(d, hb, bo + (tb ? (size_t)j * k + kk : (size_t)kk * n + j));
                ex += (double)x * y; mag += std::fabs((double)x * y); seq = std::fmaf(x, y, seq);
            }
            size_t ci = ((size_t)b * m + i) * n + j;
            float got = val(d, hc, ci);
            bool ok;
            if (d == F32) { uint32_t g, s; memcpy(&g, &got, 4); memcpy(&s, &seq, 4); ok = g == s; }
            else ok = std::isfinite(got) && std::fabs(got - ex) <= 2.0 * k * u * mag + u * std::fabs(ex) + 1e-7;
            if (!ok && fails++ == 0)
                printf("FAIL %s b=%d m=%d n=%d k=%d ta=%d tb=%d sh=%d at (%d,%d,%d): got %.8g expected %.8g (seq %.8g)\n", dt_name(d), batch, m, n,
                       k, ta, tb, shared, b, i, j, got, ex, seq);
        }
    }
    CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C));
    return fails;
}

int main() {
    std::mt19937 rng(7);
    long cases = 0, failed = 0;
    const int shapes[][3] = {{1, 64, 64}, {64, 1, 64}, {1, 128, 128}, {128, 1, 128}, {1, 32, 32}, {32, 1, 32}, {1, 48, 40}, {40, 1, 48},
                             {1, 64, 96}, {96, 1, 64}, {17, 1, 32}, {1, 24, 64}, {1, 1, 64}, {1, 8, 128}, {1, 1, 24}, {128, 1, 8}};
    for (Dt d : {F16, BF16, F32})
        for (auto& s : shapes)
            for (int t = 0; t < 8; t++)
                for (int lane = 0; lane < 2; lane++) {
                    bool ta = t & 1, tb = t & 2, sh = t & 4;
                    if (lane && !plan(d, s[0], s[1], s[2], ta, tb, sh).warp) continue;  // the lane kernel where the warp one ships
                    int batch = (t % 3 == 0) ? 131 : (t % 3 == 1 ? 9 : 260);
                    if (!plan(d, s[0], s[1], s[2], ta, tb, sh).ok) continue;
                    cases++;
                    if (check(d, batch, s[0], s[1], s[2], ta, tb, sh, rng, lane)) failed++;
                }
    for (Dt d : {F16, BF16, F32}) {  // many matrices: a grid of many blocks, a partial last block
        cases += 2;
        if (check(d, 4099, 64, 1, 64, false, false, false, rng, false)) failed++;
        if (check(d, 3001, 1, 7 * 16, 64, false, false, false, rng, false)) failed++;
    }
    printf("check: %ld cases, %ld failed\n", cases, failed);

    cudaStream_t st; CK(cudaStreamCreate(&st));
    cublasHandle_t h; CB(cublasCreate(&h)); CB(cublasSetStream(h, st));
    size_t flush_bytes = 256u << 20; void* flush; CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMemset(flush, 0x5a, flush_bytes));
    unsigned* sink; CK(cudaMalloc(&sink, 4));
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    double gbps = copy_rate_gbps(st);
    printf("copy rate %.0f GB/s\n", gbps);
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    const int tshapes[][4] = {{2048, 1, 64, 64}, {2048, 64, 1, 64}, {2048, 1, 128, 128}, {2048, 128, 1, 128}, {512, 1, 64, 64},
                              {512, 64, 1, 64}, {8192, 1, 64, 64}, {8192, 64, 1, 64}, {2048, 1, 32, 32}, {2048, 32, 1, 32},
                              {2048, 1, 48, 48}, {2048, 48, 1, 48}};
    for (Dt d : {F16, BF16, F32})
        for (auto& s : tshapes) {
            int batch = s[0], m = s[1], n = s[2], k = s[3];
            Plan p = plan(d, m, n, k, false, false, false);
            if (!p.ok) continue;
            size_t eb = dt_bytes(d);
            size_t na = (size_t)batch * m * k, nb = (size_t)batch * k * n, nc = (size_t)batch * m * n;
            void *A, *B, *C, *R2;
            CK(cudaMalloc(&A, na * eb)); CK(cudaMalloc(&B, nb * eb)); CK(cudaMalloc(&C, nc * eb)); CK(cudaMalloc(&R2, 16));
            CK(cudaMemset(A, 0x3c, na * eb)); CK(cudaMemset(B, 0x3c, nb * eb));
            cudaDataType ty = d == F16 ? CUDA_R_16F : d == BF16 ? CUDA_R_16BF : CUDA_R_32F;
            float one = 1.f, zero = 0.f;
            size_t bytes = (na + nb + nc) * eb;
            auto vendor = [&] {
                CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B, ty, n, (long long)k * n, A, ty, k, (long long)m * k,
                                              &zero, C, ty, n, (long long)m * n, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
            };
            auto read = [&] { l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)(p.mIsA ? A : B), (long long)((p.mIsA ? na : nb) * eb / 16), sink); };
            // paths: 0 vendor, 1 read, 2 the planned kernel, 3 the lane kernel where the warp one is planned
            const char* names[] = {"cublas", "read", "gemv", "lane"};
            int npaths = p.warp ? 4 : 3;
            std::vector<std::vector<float>> tt(npaths);
            for (int r = 0; r < 34; r++) {
                for (int w = 0; w < npaths; w++) {
                    l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
                    CK(cudaEventRecord(e0, st));
                    if (w == 0) vendor(); else if (w == 1) read(); else launch(d, p, A, B, C, batch, st, w == 3);
                    CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
                    float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                    if (r >= 3) tt[w].push_back(ms * 1000.f);
                }
            }
            CK(cudaGetLastError());
            auto med = [](std::vector<float>& v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
            double fl = bytes / (gbps * 1e3);  // gbps: bytes read + written per second
            printf("%-5s %6d %4d %4d %4d floor %6.2f %s_%s:", dt_name(d), batch, m, n, k, fl, p.dot ? "dot" : "axpy", p.warp ? "warp" : "lane");
            for (int w = 0; w < npaths; w++) printf("  %s %.2f", names[w], med(tt[w]));
            printf("  | cublas/gemv %.2fx\n", med(tt[0]) / med(tt[2]));
            if (p.warp && d == F16) {  // the experiment: the old loop forms, checked then timed with cuBLAS and the shipped kernel
                int gw = (batch + 7) / 8;
                const __half* Mp = (const __half*)(p.mIsA ? A : B);
                const __half* Vp = (const __half*)(p.mIsA ? B : A);
                std::vector<uint16_t> got(nc), mine(nc);
                launch(d, p, A, B, C, batch, st); CK(cudaStreamSynchronize(st));
                CK(cudaMemcpy(mine.data(), C, nc * 2, cudaMemcpyDeviceToHost));
                const char* vn[] = {"old_steps", "old_kk", "old_steps_u8"};
                std::vector<std::vector<float>> tv(4);
                for (int r = 0; r < 27; r++)
                    for (int w = 0; w < 4; w++) {
                        l2_flush_read<<<4 * sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
                        CK(cudaEventRecord(e0, st));
                        if (w == 0) launch(d, p, A, B, C, batch, st);
                        else if (w == 1) v_axpy_warp_old<__half, 4, true><<<gw, 256, 0, st>>>(Mp, Vp, (__half*)C, batch, p.R, p.K, p.mStride, p.vStride, p.log2c);
                        else if (w == 2) v_axpy_warp_old<__half, 4, false><<<gw, 256, 0, st>>>(Mp, Vp, (__half*)C, batch, p.R, p.K, p.mStride, p.vStride, p.log2c);
                        else v_axpy_warp_old<__half, 8, true><<<gw, 256, 0, st>>>(Mp, Vp, (__half*)C, batch, p.R, p.K, p.mStride, p.vStride, p.log2c);
                        CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
                        float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                        if (r >= 3) tv[w].push_back(ms * 1000.f);
                        if (r == 0 && w > 0) {  // same bits as the shipped kernel (same sums in the same order)
                            CK(cudaMemcpy(got.data(), C, nc * 2, cudaMemcpyDeviceToHost));
                            if (got != mine) printf("      MISMATCH %s\n", vn[w - 1]);
                        }
                    }
                CK(cudaGetLastError());
                printf("      warp forms: shipped %.2f  %s %.2f  %s %.2f  %s %.2f\n", med(tv[0]), vn[0], med(tv[1]), vn[1], med(tv[2]), vn[2], med(tv[3]));
            }
            CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C)); CK(cudaFree(R2));
        }
    return failed ? 1 : 0;
}
