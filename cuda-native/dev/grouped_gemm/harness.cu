// Standalone validation and timing harness of the grouped GEMM kernels (no Java). Build and run on a GPU:
//   nvcc -std=c++17 -O3 -arch=sm_90a -I ../../src/main/cuda -I ../../src/main/cuda/common -c kernels.cu -o k.o
//   nvcc -std=c++17 -O3 -arch=sm_90a -c harness.cu -o h.o && nvcc -arch=sm_90a k.o h.o -lcublas -o gg && ./gg
// (run.sh does exactly that and also profiles the decode kernels with ncu.)
// Part 1 checks every element of every custom variant (shipped m16, m64, d16 and the harness-only d32, d16w
// of kernels.cu), at its natural grid and at grids of 3 and 1 CTAs (so each CTA runs many tiles through
// one ring), both weight layouts, gather, SwiGLU, row scale, empty groups, G = 1, one group holding every
// row, T_total = 1, K and N off the tile, K over many ring wraps; plus the two cuBLAS paths, against an
// fp64 CPU reference, outputs poisoned first; plus a CUDA-graph replay after the offsets changed on the
// device. Part 2 is issue 6's sweep: (E, top-k, H, I) x T x {gate-up SwiGLU with gather, down with router
// scale} x {F16, BF16} (plus NK-layout rows at decode), routing = top-k of random logits, every element of
// every path checked against an fp64 GPU reference (a plain loop kernel, independent of the mma code), then
// timed: custom variants vs the per-expert cuBLAS loop vs cublasGemmGroupedBatchedEx, both vendor paths as
// GroupedGemm runs them (offsets copied to the host and a stream synchronisation inside the timed region),
// L2 flushed before every repetition by READING a 256 MB buffer, paths interleaved, medians.
// Floor = max((active experts' W + X + Y + offsets + gather/scale bytes) / measured D2D copy bandwidth,
// 2·T_total·K·N / measured cuBLAS bf16 rate), as GroupedGemmBench computes it.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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
#include <type_traits>
#include <vector>

const void* gg_kernel(const char* name);
void gg_launch_gather(bool bf, const void* X, const int* gather, void* Xg, int T_total, int X_rows, int K, int blocks, cudaStream_t st);
void gg_launch_epilogue(bool bf, bool c32, const void* A, const float* scale, void* Y, int T_total, int N, int swiglu, int blocks,
                        cudaStream_t st);

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(1); } } while (0)

static const double U32 = std::ldexp(1.0, -24);

// rows: BM (mma variants) or BT (decode variants); cols: BN or BNW (W columns of a tile)
struct Var { const char* name; bool decode; int rows, cols, stages, ctas; int threads = 128; bool wg = false; };
static const Var VARS[] = {{"m16", false, 16, 64, 4, 4}, {"m64", false, 64, 128, 3, 2}, {"d16", true, 16, 64, 8, 2},
                           {"d32", true, 32, 64, 7, 2}, {"d16w", true, 16, 128, 5, 2}, {"m128", false, 128, 128, 3, 2},
                           {"m64s4", false, 64, 128, 4, 2}, {"m64t8", false, 64, 128, 3, 2, 256}, {"m16s6", false, 16, 64, 6, 3},
                           {"m16s8", false, 16, 64, 8, 2},
                           // Hopper wgmma variants (sm_90a): rows = 64 per warpgroup, 128-byte-swizzled stages
                           {"w128", false, 128, 128, 4, 1, 256, true},
                           {"w128n2", false, 128, 256, 4, 1, 256, true}, {"w64", false, 64, 128, 4, 2, 128, true},
                           {"w64n2", false, 64, 256, 4, 1, 128, true},
                           {"w128s6", false, 128, 128, 6, 1, 256, true}, {"w64s6", false, 64, 128, 6, 1, 128, true},
                           {"w64n2s5", false, 64, 256, 5, 1, 128, true},
                           {"w128t", false, 128, 256, 4, 1, 256, true}, {"w64w", false, 64, 256, 4, 1, 128, true},
                           // (the L2-prefetch variants d16p2/4/8 and m16p2/4/8 of h100-decode-m16-d16.txt: git b0ba2fb)
                           // w64 with 3 stages at 3 CTAs/SM and with 8 at one (decode, h100-w64s6.txt)
                           {"w64s3", false, 64, 128, 3, 3, 128, true}, {"w64s8", false, 64, 128, 8, 1, 128, true}};
                           // (W copies before the gather round trip, w64s6e/w64s6f/w64e of h100-early-w.txt: git d727e58)
static const int NVARS = sizeof(VARS) / sizeof(VARS[0]);

static size_t smem_bytes(const Var& v, bool nk, int G) {
    if (v.wg) return 1024 + (size_t)v.stages * (v.rows + v.cols) * 128 + 4 * (size_t)(G + 1 + v.rows);
    size_t a = (size_t)v.rows * 72, b = nk ? (size_t)v.cols * 72 : (size_t)64 * (v.cols + 8);
    return v.stages * (a + b) * 2 + (v.decode ? 4 * (3 * (size_t)G + 1) : 4 * (size_t)(G + 1 + v.rows));
}

static int g_sms = 132;
// GG_VARS=m64,w128,...: only these variants run (both parts); unset: all
static bool var_on(const Var& v) {
    const char* e = getenv("GG_VARS");
    if (!e || !*e) return true;
    std::string list = std::string(",") + e + ",";
    return list.find(std::string(",") + v.name + ",") != std::string::npos;
}
static size_t g_smem_sm = 233472;

struct Problem {
    int G, T, Xrows, K, N; bool nk, swiglu, gather, scale, bf;
    std::vector<float> X, W, S; std::vector<int> off, gat;
};

struct Dev {
    void *X = nullptr, *W = nullptr, *Y = nullptr, *Xg = nullptr; float *S = nullptr, *acc = nullptr; int *off = nullptr, *gat = nullptr;
    void** ptrs = nullptr;
};

static int grid_of(const Var& v, const Problem& p) {
    size_t sm = smem_bytes(v, p.nk, p.G);
    long per = std::min<long>(v.ctas, (long)(g_smem_sm / (sm + 1024)));
    long full = (long)g_sms * std::max(1L, per);
    int nout = p.swiglu ? p.N / 2 : p.N, oc = p.swiglu ? v.cols / 2 : v.cols;
    long maxTiles = ((long)(p.T + v.rows - 1) / v.rows + p.G) * ((nout + oc - 1) / oc);
    return (int)std::max(1L, std::min(full, maxTiles));
}

static void launch_custom(const Problem& p, Dev& d, const Var& v, cudaStream_t st, int grid_override = 0) {
    std::string name = std::string("gg_") + v.name + (p.bf ? "_bf16" : "_f16") + (p.nk ? "_nk" : "_kn") + (p.swiglu ? "_swiglu" : "_plain");
    const void* k = gg_kernel(name.c_str());
    if (!k) { printf("no kernel %s\n", name.c_str()); exit(1); }
    size_t sm = smem_bytes(v, p.nk, p.G);
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
    int grid = grid_override > 0 ? grid_override : grid_of(v, p);
    const void* gp = p.gather ? (const void*)d.gat : nullptr;
    const void* sp = p.scale ? (const void*)d.S : nullptr;
    int G = p.G, T = p.T, Xr = p.Xrows, K = p.K, N = p.N;
    void* args[] = {&d.X, &d.W, &d.Y, &d.off, (void*)&gp, (void*)&sp, &G, &T, &Xr, &K, &N};
    CK(cudaLaunchKernel(k, dim3(grid), dim3(v.threads), args, sm, st));
    CK(cudaGetLastError());
}

// The vendor paths as GroupedGemm runs them: offsets copied to the host (stream synchronisation), gather
// pass, cuBLAS (loop of cublasGemmEx with fp32 C when an epilogue follows, or one cublasGemmGroupedBatchedEx
// with C in the input dtype), epilogue pass.
static int* g_pinned_off = nullptr;
static void launch_vendor(const Problem& p, Dev& d, cublasHandle_t h, bool grouped, cudaStream_t st) {
    CK(cudaMemcpyAsync(g_pinned_off, d.off, (p.G + 1) * 4, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    const int* off = g_pinned_off;
    const void* x = d.X;
    if (p.gather) { gg_launch_gather(p.bf, d.X, d.gat, d.Xg, p.T, p.Xrows, p.K, g_sms * 4, st); x = d.Xg; }
    bool epi = p.swiglu || p.scale;
    bool c32 = epi && !grouped;  // cublasGemmGroupedBatchedEx rejects fp32 C for 16-bit A/B (status 15)
    cudaDataType dt = p.bf ? CUDA_R_16BF : CUDA_R_16F, ct = c32 ? CUDA_R_32F : dt;
    size_t cel = c32 ? 4 : 2; void* C = epi ? (void*)d.acc : d.Y;
    float one = 1.f, zero = 0.f;
    cublasOperation_t ta = p.nk ? CUBLAS_OP_T : CUBLAS_OP_N; int lda = p.nk ? p.K : p.N;
    if (!grouped) {
        for (int g = 0; g < p.G; ++g) {
            int rows = off[g + 1] - off[g]; if (rows == 0) continue;
            CB(cublasGemmEx(h, ta, CUBLAS_OP_N, p.N, rows, p.K, &one, (const char*)d.W + (size_t)g * p.K * p.N * 2, dt, lda,
                            (const char*)x + (size_t)off[g] * p.K * 2, dt, p.K, &zero, (char*)C + (size_t)off[g] * p.N * cel, ct, p.N,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
    } else {
        std::vector<int> tA, tB, m, n, k, ldA, ldB, ldC, gs; std::vector<float> al, be; std::vector<void*> pa, pb, pc;
        for (int g = 0; g < p.G; ++g) {
            int rows = off[g + 1] - off[g]; if (rows == 0) continue;
            tA.push_back(ta); tB.push_back(CUBLAS_OP_N); m.push_back(p.N); n.push_back(rows); k.push_back(p.K);
            ldA.push_back(lda); ldB.push_back(p.K); ldC.push_back(p.N); gs.push_back(1); al.push_back(1.f); be.push_back(0.f);
            pa.push_back((char*)d.W + (size_t)g * p.K * p.N * 2); pb.push_back((char*)x + (size_t)off[g] * p.K * 2);
            pc.push_back((char*)C + (size_t)off[g] * p.N * cel);
        }
        int gc = (int)gs.size();
        if (gc > 0) {
            pa.insert(pa.end(), pb.begin(), pb.end()); pa.insert(pa.end(), pc.begin(), pc.end());
            static void** pinned = nullptr; static size_t cap = 0;
            if (cap < pa.size()) { if (pinned) cudaFreeHost(pinned); cap = pa.size(); CK(cudaMallocHost(&pinned, cap * sizeof(void*))); }
            std::copy(pa.begin(), pa.end(), pinned);  // callers synchronise between calls, so the staging buffer is free
            CK(cudaMemcpyAsync(d.ptrs, pinned, pa.size() * sizeof(void*), cudaMemcpyHostToDevice, st));
            CB(cublasGemmGroupedBatchedEx(h, (cublasOperation_t*)tA.data(), (cublasOperation_t*)tB.data(), m.data(), n.data(), k.data(),
                                          al.data(), (const void* const*)d.ptrs, dt, ldA.data(), (const void* const*)(d.ptrs + gc), dt,
                                          ldB.data(), be.data(), d.ptrs + 2 * gc, ct, ldC.data(), gc, gs.data(), CUBLAS_COMPUTE_32F));
        }
    }
    if (epi) gg_launch_epilogue(p.bf, c32, d.acc, p.scale ? d.S : nullptr, d.Y, p.T, p.N, p.swiglu, g_sms * 4, st);
    CK(cudaGetLastError());
}

// ---------------------------------------------------------------- part 1: small shapes, CPU reference
static float round_to(bool bf, float x) {
    if (bf) return __bfloat162float(__float2bfloat16_rn(x));
    return __half2float(__float2half_rn(x));
}
static std::vector<uint16_t> encode(bool bf, const std::vector<float>& v) {
    std::vector<uint16_t> o(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        if (bf) { __nv_bfloat16 h = __float2bfloat16_rn(v[i]); std::memcpy(&o[i], &h, 2); }
        else { __half h = __float2half_rn(v[i]); std::memcpy(&o[i], &h, 2); }
    }
    return o;
}
static float decode(bool bf, uint16_t b) {
    if (bf) { __nv_bfloat16 h; std::memcpy(&h, &b, 2); return __bfloat162float(h); }
    __half h; std::memcpy(&h, &b, 2); return __half2float(h);
}

static Problem make(std::mt19937& rng, int G, int T, int K, int N, bool nk, bool swiglu, bool gather, bool scale, bool bf, int mode) {
    Problem p{G, T, gather ? std::max(1, T / 2 + 3) : T, K, N, nk, swiglu, gather, scale, bf};
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    p.X.resize((size_t)p.Xrows * K); for (auto& x : p.X) x = round_to(bf, u(rng));
    p.W.resize((size_t)G * K * N); for (auto& x : p.W) x = round_to(bf, u(rng));
    p.off.assign(G + 1, 0);
    std::vector<int> cnt(G, 0);
    if (mode == 1) cnt[rng() % G] = T;
    else for (int r = 0; r < T; ++r) { int g = rng() % G; if (G > 2 && g % 3 == 1) g = (g + 1) % G; cnt[g]++; }  // every third group empty
    for (int g = 0; g < G; ++g) p.off[g + 1] = p.off[g] + cnt[g];
    if (gather) { p.gat.resize(T); for (auto& x : p.gat) x = rng() % p.Xrows; }
    if (scale) { p.S.resize(T); for (auto& x : p.S) x = u(rng) * 2; }
    return p;
}

// fp64 reference and the per-element bound |out − ref| ≤ u_out|ref| + E + c·u32·|ref| + sub (docs/ops/grouped_gemm.md).
// rounded: the GEMM result was rounded to the dtype before the epilogue (the grouped-batched path)
static void reference(const Problem& p, std::vector<double>& ref, std::vector<double>& bound, bool rounded = false) {
    int nout = p.swiglu ? p.N / 2 : p.N;
    ref.assign((size_t)p.T * nout, 0); bound.assign(ref.size(), 0);
    double g = p.K * U32 / (1 - p.K * U32), A = 2 * g, uo = p.bf ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
    const double sub = p.bf ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25);
    std::vector<double> acc(p.N), sab(p.N);
    for (int grp = 0; grp < p.G; ++grp)
        for (int r = p.off[grp]; r < p.off[grp + 1]; ++r) {
            int src = p.gather ? p.gat[r] : r;
            std::fill(acc.begin(), acc.end(), 0.0); std::fill(sab.begin(), sab.end(), 0.0);
            for (int k = 0; k < p.K; ++k) {
                double x = p.X[(size_t)src * p.K + k];
                for (int n = 0; n < p.N; ++n) {
                    double w = p.nk ? p.W[((size_t)grp * p.N + n) * p.K + k] : p.W[((size_t)grp * p.K + k) * p.N + n];
                    acc[n] += x * w; sab[n] += std::fabs(x * w);
                }
            }
            double s = p.scale ? p.S[r] : 1.0;
            auto err = [&](int c) { double e = A * sab[c]; return rounded ? e * (1 + uo) + uo * std::fabs(acc[c]) : e; };
            for (int j = 0; j < nout; ++j) {
                double v;
                if (p.swiglu) {
                    double gt = acc[j], up = acc[nout + j], sg = gt / (1 + std::exp(-gt)), eg = err(j), eu = err(nout + j);
                    v = s * sg * up;
                    double e = std::fabs(s) * (std::fabs(sg) * eu + 1.1 * std::fabs(up) * eg + 1.1 * eg * eu);
                    bound[(size_t)r * nout + j] = uo * std::fabs(v) + e + 10 * U32 * std::fabs(v) + sub;
                } else {
                    v = s * acc[j];
                    bound[(size_t)r * nout + j] = uo * std::fabs(v) + std::fabs(s) * err(j) + 2 * U32 * std::fabs(v) + sub;
                }
                ref[(size_t)r * nout + j] = v;
            }
        }
}

static Dev upload(const Problem& p) {
    Dev d; auto xb = encode(p.bf, p.X), wb = encode(p.bf, p.W);
    int nout = p.swiglu ? p.N / 2 : p.N;
    CK(cudaMalloc(&d.X, std::max<size_t>(xb.size(), 8) * 2)); CK(cudaMemcpy(d.X, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
    if (!wb.empty()) { CK(cudaMalloc(&d.W, wb.size() * 2)); CK(cudaMemcpy(d.W, wb.data(), wb.size() * 2, cudaMemcpyHostToDevice)); }
    CK(cudaMalloc(&d.Y, (size_t)std::max(p.T, 1) * nout * 2));
    CK(cudaMalloc(&d.off, (p.G + 1) * 4)); CK(cudaMemcpy(d.off, p.off.data(), (p.G + 1) * 4, cudaMemcpyHostToDevice));
    if (p.gather) { CK(cudaMalloc(&d.gat, p.T * 4)); CK(cudaMemcpy(d.gat, p.gat.data(), p.T * 4, cudaMemcpyHostToDevice));
                    CK(cudaMalloc(&d.Xg, (size_t)p.T * p.K * 2)); }
    if (p.scale) { CK(cudaMalloc(&d.S, p.T * 4)); CK(cudaMemcpy(d.S, p.S.data(), p.T * 4, cudaMemcpyHostToDevice)); }
    CK(cudaMalloc(&d.acc, (size_t)std::max(p.T, 1) * p.N * 4));
    CK(cudaMalloc(&d.ptrs, 3 * (size_t)p.G * sizeof(void*)));
    return d;
}
static void release(Dev& d) {
    for (void* q : {d.X, d.W, d.Y, d.Xg, (void*)d.S, (void*)d.acc, (void*)d.off, (void*)d.gat, (void*)d.ptrs}) if (q) CK(cudaFree(q));
    d = Dev();
}

static int g_fail = 0, g_checks = 0;
static void compare(const Problem& p, Dev& d, const std::string& what, const std::vector<double>& ref, const std::vector<double>& bound) {
    CK(cudaDeviceSynchronize());
    int nout = p.swiglu ? p.N / 2 : p.N;
    std::vector<uint16_t> y((size_t)p.T * nout);
    CK(cudaMemcpy(y.data(), d.Y, y.size() * 2, cudaMemcpyDeviceToHost));
    long bad = 0; double worst = 0; size_t first = SIZE_MAX;
    for (size_t i = 0; i < y.size(); ++i) {
        double v = decode(p.bf, y[i]); double e = std::fabs(v - ref[i]);
        if (!(e <= bound[i])) { if (first == SIZE_MAX) first = i; ++bad; }
        if (bound[i] > 0 && std::isfinite(e)) worst = std::max(worst, e / bound[i]);
    }
    ++g_checks;
    if (bad) {
        if (++g_fail > 60) return;  // the first 60 failures are enough to diagnose
        printf("FAIL %-24s G=%d T=%d K=%d N=%d %s%s%s%s%s: %ld bad, first [%zu,%zu] got %g ref %g bound %g\n", what.c_str(), p.G, p.T, p.K,
               p.N, p.bf ? "bf16" : "f16", p.nk ? " nk" : " kn", p.swiglu ? " swiglu" : "", p.gather ? " gather" : "",
               p.scale ? " scale" : "", bad, first / nout, first % nout, (double)decode(p.bf, y[first]), ref[first], bound[first]);
    } else if (g_checks % 64 == 0) {
        printf("ok   %-24s G=%d T=%d K=%d N=%d (worst err/bound %.3f)\n", what.c_str(), p.G, p.T, p.K, p.N, worst);
    }
}

static void correctness(cublasHandle_t h, cudaStream_t st) {
    std::mt19937 rng(12345);
    struct Shape { int G, T, K, N, mode; };
    std::vector<Shape> shapes = {{5, 37, 72, 48, 0},  {1, 19, 64, 64, 0},   {4, 130, 136, 144, 1}, {7, 1, 72, 48, 0},
                                 {9, 203, 200, 272, 0}, {3, 70, 8, 16, 0}, {6, 90, 1032, 80, 0},  {12, 3, 520, 96, 0}};
    for (const Shape& s : shapes)
        for (int bf = 0; bf < 2; ++bf)
            for (int nk = 0; nk < 2; ++nk)
                for (int sw = 0; sw < 2; ++sw)
                    for (int opt = 0; opt < 4; ++opt) {
                        bool ga = opt & 1, sc = opt & 2;
                        Problem p = make(rng, s.G, s.T, s.K, s.N, nk, sw, ga, sc, bf, s.mode);
                        std::vector<double> ref, bound; reference(p, ref, bound);
                        std::vector<double> rref, rbound; reference(p, rref, rbound, true);
                        Dev d = upload(p);
                        int nout = sw ? s.N / 2 : s.N;
                        for (const Var& v : VARS)
                            for (int gr : {0, 3, 1}) {
                                if (!var_on(v)) continue;
                                CK(cudaMemset(d.Y, 0xff, (size_t)p.T * nout * 2));
                                launch_custom(p, d, v, st, gr);
                                compare(p, d, std::string("custom ") + v.name + " grid " + std::to_string(gr), ref, bound);
                            }
                        for (int gr = 0; gr < 2; ++gr) {
                            CK(cudaMemset(d.Y, 0xff, (size_t)p.T * nout * 2));
                            launch_vendor(p, d, h, gr, st);
                            bool twice = gr && (sw || sc);
                            compare(p, d, gr ? "cublas grouped" : "cublas loop", twice ? rref : ref, twice ? rbound : bound);
                        }
                        release(d);
                    }
    {  // N not a multiple of 16 (plain only: SwiGLU needs N/2 % 8 == 0)
        Problem p = make(rng, 6, 77, 72, 40, false, false, true, true, true, 0);
        std::vector<double> ref, bound; reference(p, ref, bound); Dev d = upload(p);
        for (const Var& v : VARS) { if (!var_on(v)) continue; CK(cudaMemset(d.Y, 0xff, (size_t)p.T * p.N * 2)); launch_custom(p, d, v, st); compare(p, d, std::string("custom N=40 ") + v.name, ref, bound); }
        release(d);
    }
    // Graph capture: capture once, change offsets (and so every group's rows) on the device, replay.
    for (const Var& v : VARS) {
        if (!var_on(v)) continue;
        Problem p = make(rng, 8, 150, 72, 48, true, true, true, true, true, 0);
        Dev d = upload(p);
        cudaGraph_t graph; cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
        launch_custom(p, d, v, st);
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        Problem q = p;
        std::vector<int> cnt(q.G, 0); for (int r = 0; r < q.T; ++r) cnt[(r * 7 + 3) % 5]++;  // groups 5..7 empty now
        for (int g = 0; g < q.G; ++g) q.off[g + 1] = q.off[g] + cnt[g];
        CK(cudaMemcpy(d.off, q.off.data(), (q.G + 1) * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(d.Y, 0xff, (size_t)q.T * q.N / 2 * 2));
        CK(cudaGraphLaunch(exec, st));
        std::vector<double> ref, bound; reference(q, ref, bound);
        compare(q, d, std::string("graph replay ") + v.name, ref, bound);
        CK(cudaGraphExecDestroy(exec)); CK(cudaGraphDestroy(graph)); release(d);
    }
    printf("correctness: %d checks, %d failed\n", g_checks, g_fail);
}

// ---------------------------------------------------------------- part 2: the sweep, GPU reference
template <typename T> __device__ __forceinline__ double to_d(T v);
template <> __device__ __forceinline__ double to_d<__half>(__half v) { return (double)__half2float(v); }
template <> __device__ __forceinline__ double to_d<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }

template <typename T>
__global__ void init_kernel(T* w, size_t n, uint32_t seed, float amp) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        const float v = amp * ((h >> 8) * (1.0f / 8388608.0f) - 1.0f);
        if constexpr (sizeof(T) == 2 && std::is_same<T, __half>::value) w[i] = __float2half_rn(v);
        else w[i] = __float2bfloat16_rn(v);
    }
}

// One thread per output element: fp64 sums over K of x·w and |x·w|, the epilogue in fp64, and the bound of
// the verification policy (rounded: the grouped-batched path's GEMM result was rounded to the dtype first).
template <typename T>
__global__ void ref_kernel(const T* X, const T* W, const int* off, const int* gather, const float* scale, int G, int T_total, int K,
                           int N, int nk, int swiglu, int rounded, double A, double uo, double sub, double* ref, double* bound) {
    const int nout = swiglu ? N / 2 : N;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nout) return;
    for (int r = blockIdx.y; r < T_total; r += gridDim.y) {
        int lo = 0, hi = G - 1;
        while (lo < hi) { int mid = (lo + hi + 1) >> 1; if (off[mid] <= r) lo = mid; else hi = mid - 1; }
        const int g = lo;
        const int src = gather ? gather[r] : r;
        const T* x = X + (size_t)src * K;
        const T* w = W + (size_t)g * K * N;
        double a0 = 0, s0 = 0, a1 = 0, s1 = 0;
        for (int k = 0; k < K; ++k) {
            const double xv = to_d(x[k]);
            const double w0 = to_d(nk ? w[(size_t)j * K + k] : w[(size_t)k * N + j]);
            a0 += xv * w0; s0 += fabs(xv * w0);
            if (swiglu) {
                const double w1 = to_d(nk ? w[(size_t)(nout + j) * K + k] : w[(size_t)k * N + nout + j]);
                a1 += xv * w1; s1 += fabs(xv * w1);
            }
        }
        const double s = scale ? (double)scale[r] : 1.0;
        double e0 = A * s0, e1 = A * s1;
        if (rounded) { e0 = e0 * (1 + uo) + uo * fabs(a0); e1 = e1 * (1 + uo) + uo * fabs(a1); }
        double v, b;
        if (swiglu) {
            const double sg = a0 / (1 + exp(-a0));
            v = s * sg * a1;
            const double e = fabs(s) * (fabs(sg) * e1 + 1.1 * fabs(a1) * e0 + 1.1 * e0 * e1);
            b = uo * fabs(v) + e + 10 * 5.9604644775390625e-08 * fabs(v) + sub;
        } else {
            v = s * a0;
            b = uo * fabs(v) + fabs(s) * e0 + 2 * 5.9604644775390625e-08 * fabs(v) + sub;
        }
        ref[(size_t)r * nout + j] = v;
        bound[(size_t)r * nout + j] = b;
    }
}

// counts[0]: elements outside the bound (NaN included); counts[1]: NaN/Inf outputs
template <typename T>
__global__ void compare_kernel(const T* Y, const double* ref, const double* bound, size_t n, unsigned long long* counts) {
    unsigned long long bad = 0, nan = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const double y = to_d(Y[i]);
        if (!(fabs(y - ref[i]) <= bound[i])) ++bad;
        if (!isfinite(y)) ++nan;
    }
    for (int o = 16; o > 0; o >>= 1) { bad += __shfl_xor_sync(0xffffffffu, bad, o); nan += __shfl_xor_sync(0xffffffffu, nan, o); }
    if ((threadIdx.x & 31) == 0 && (bad || nan)) { atomicAdd(counts, bad); atomicAdd(counts + 1, nan); }
}

__global__ void flush_kernel(const uint4* buf, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcg(buf + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;  // keeps the loads alive
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Moe { int E, topk, H, I; };

static void sweep(cublasHandle_t h, cudaStream_t st, bool profile) {
    size_t fbytes = 256u << 20; uint4* flush; unsigned* sink;
    CK(cudaMalloc(&flush, fbytes)); CK(cudaMemset(flush, 1, fbytes)); CK(cudaMalloc(&sink, 4));
    auto do_flush = [&] { flush_kernel<<<g_sms * 8, 256, 0, st>>>(flush, fbytes / 16, sink); };
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto time_once = [&](const std::function<void()>& f) {
        do_flush();
        CK(cudaEventRecord(e0, st)); f(); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1));
        float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); return ms * 1000.0;
    };
    double copyGBps = 0, tflops = 0;
    if (!profile) {  // ceilings: 1 GiB D2D copy (bytes read + written), 8192^3 bf16 cuBLAS GEMM on random data
        void *a, *b; size_t n = 1u << 30; CK(cudaMalloc(&a, n)); CK(cudaMalloc(&b, n)); CK(cudaMemset(a, 1, n));
        std::vector<double> t;
        for (int i = 0; i < 8; ++i) t.push_back(time_once([&] { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st)); }));
        copyGBps = 2.0 * n / (median(t) * 1e3);
        CK(cudaFree(a)); CK(cudaFree(b));
        int m = 8192; __nv_bfloat16 *A, *B, *C;
        CK(cudaMalloc(&A, (size_t)m * m * 2)); CK(cudaMalloc(&B, (size_t)m * m * 2)); CK(cudaMalloc(&C, (size_t)m * m * 2));
        init_kernel<<<g_sms * 8, 256>>>(A, (size_t)m * m, 1, 1.f); init_kernel<<<g_sms * 8, 256>>>(B, (size_t)m * m, 2, 1.f);
        float one = 1, zero = 0; t.clear();
        for (int i = 0; i < 6; ++i)
            t.push_back(time_once([&] { CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, A, CUDA_R_16BF, m, B, CUDA_R_16BF, m,
                                                       &zero, C, CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)); }));
        tflops = 2.0 * m * m * (double)m / (median(t) * 1e6);
        CK(cudaFree(A)); CK(cudaFree(B)); CK(cudaFree(C));
        printf("ceilings: copy %.0f GB/s, bf16 GEMM %.0f TFLOP/s\n", copyGBps, tflops);
    }
    std::vector<Moe> moes = {{64, 8, 2048, 1024}, {128, 8, 2048, 768}, {160, 6, 5120, 1536}, {8, 2, 4096, 14336}};
    std::vector<int> tokens = {1, 8, 32, 128, 512, 2048, 8192};
    if (profile && !std::getenv("GG_MOES")) moes = {{64, 8, 2048, 1024}};  // GG_MOES picks from the full list
    if (profile) tokens = {1, 8};
    // GG_MOES="0,1" (indices into moes) and GG_TOKENS="128,512" narrow the sweep (an A/B of a few rows)
    auto ints = [](const char* env) {
        std::vector<int> out;
        const char* e = std::getenv(env);
        for (const char* c = e ? e : ""; *c;) {
            out.push_back(std::atoi(c));
            while (*c && *c != ',') ++c;
            if (*c) ++c;
        }
        return out;
    };
    if (!ints("GG_MOES").empty()) {
        std::vector<Moe> m;
        for (int i : ints("GG_MOES")) m.push_back(moes.at(i));
        moes = m;
    }
    if (!ints("GG_TOKENS").empty()) tokens = ints("GG_TOKENS");
    std::mt19937 rng(6);
    std::vector<std::string> table;
    std::string hdr = "case                                ";
    for (const Var& v : VARS) { char b[16]; snprintf(b, sizeof b, " %8s", v.name); hdr += b; }
    hdr += "     loop  grouped    floor  best  %flr  xloop xgroup  check";
    printf("%s\n", hdr.c_str());
    for (const Moe& moe : moes)
        for (int bf = 1; bf >= 0; --bf) {
            if (profile && !bf) continue;
            for (int up = 1; up >= 0; --up) {
                Problem p; p.bf = bf; p.G = moe.E; p.swiglu = up; p.gather = up; p.scale = !up;
                p.K = up ? moe.H : moe.I; p.N = up ? 2 * moe.I : moe.H;
                size_t wn = (size_t)p.G * p.K * p.N;
                Dev d; CK(cudaMalloc(&d.W, wn * 2));
                if (bf) init_kernel<<<g_sms * 8, 256>>>((__nv_bfloat16*)d.W, wn, 0x1234u + moe.E * 7 + up, 0.05f);
                else init_kernel<<<g_sms * 8, 256>>>((__half*)d.W, wn, 0x1234u + moe.E * 7 + up, 0.05f);
                CK(cudaDeviceSynchronize());
                for (int T : tokens)
                    for (int nk = 0; nk < 2; ++nk) {
                        if (nk && (T > 32 || !bf || profile)) continue;  // NK rows: decode, bf16 only (the same random W read as [G, N, K])
                        p.nk = nk; p.T = T * moe.topk; p.Xrows = up ? T : p.T;
                        // routing: top-k of random logits; router weight = softmax over the chosen logits
                        std::vector<std::vector<int>> members(moe.E); std::vector<std::vector<float>> wts(moe.E);
                        std::normal_distribution<float> nd;
                        std::vector<std::pair<float, int>> l(moe.E);
                        for (int t = 0; t < T; ++t) {
                            for (int e = 0; e < moe.E; ++e) l[e] = {nd(rng), e};
                            std::partial_sort(l.begin(), l.begin() + moe.topk, l.end(), [](auto& a, auto& b) { return a.first > b.first; });
                            double z = 0; for (int j = 0; j < moe.topk; ++j) z += std::exp(l[j].first);
                            for (int j = 0; j < moe.topk; ++j) { members[l[j].second].push_back(t); wts[l[j].second].push_back((float)(std::exp(l[j].first) / z)); }
                        }
                        p.off.assign(moe.E + 1, 0); p.gat.clear(); p.S.clear();
                        int active = 0;
                        for (int e = 0; e < moe.E; ++e) {
                            p.off[e + 1] = p.off[e] + (int)members[e].size(); active += !members[e].empty();
                            for (size_t i = 0; i < members[e].size(); ++i) { p.gat.push_back(members[e][i]); p.S.push_back(wts[e][i]); }
                        }
                        int nout = p.swiglu ? p.N / 2 : p.N;
                        CK(cudaMalloc(&d.X, (size_t)p.Xrows * p.K * 2));
                        if (bf) init_kernel<<<g_sms * 4, 256>>>((__nv_bfloat16*)d.X, (size_t)p.Xrows * p.K, 0x777u + T, 1.f);
                        else init_kernel<<<g_sms * 4, 256>>>((__half*)d.X, (size_t)p.Xrows * p.K, 0x777u + T, 1.f);
                        CK(cudaMalloc(&d.Y, (size_t)p.T * nout * 2));
                        CK(cudaMalloc(&d.off, (p.G + 1) * 4)); CK(cudaMemcpy(d.off, p.off.data(), (p.G + 1) * 4, cudaMemcpyHostToDevice));
                        if (p.gather) { CK(cudaMalloc(&d.gat, p.T * 4)); CK(cudaMemcpy(d.gat, p.gat.data(), p.T * 4, cudaMemcpyHostToDevice));
                                        CK(cudaMalloc(&d.Xg, (size_t)p.T * p.K * 2)); }
                        if (p.scale) { CK(cudaMalloc(&d.S, p.T * 4)); CK(cudaMemcpy(d.S, p.S.data(), p.T * 4, cudaMemcpyHostToDevice)); }
                        CK(cudaMalloc(&d.acc, (size_t)p.T * p.N * 4));
                        CK(cudaMalloc(&d.ptrs, 3 * (size_t)p.G * sizeof(void*)));
                        // which paths run: decode variants up to 64 rows per active expert, m16 up to T = 512
                        double rpa = (double)p.T / std::max(1, active);
                        std::vector<int> vars;
                        for (int i = 0; i < NVARS; ++i) {
                            const Var& v = VARS[i];
                            if (profile && !std::getenv("GG_VARS")  // GG_VARS names the profiled variants
                                && !(std::string(v.name) == "m16" || std::string(v.name) == "m64" || std::string(v.name) == "d16")) continue;
                            if (!var_on(v)) continue;
                            if (v.decode && rpa > 64) continue;
                            if (std::string(v.name).rfind("m16", 0) == 0 && T > 512) continue;  // m16, m16s6, m16s8
                            vars.push_back(i);
                        }
                        std::vector<std::string> names; std::vector<std::function<void()>> paths;
                        for (int i : vars) { names.push_back(VARS[i].name); paths.push_back([&, i] { launch_custom(p, d, VARS[i], st); }); }
                        size_t nc = paths.size();
                        if (!profile) {
                            names.push_back("loop"); paths.push_back([&] { launch_vendor(p, d, h, false, st); });
                            names.push_back("grouped"); paths.push_back([&] { launch_vendor(p, d, h, true, st); });
                        }
                        char name[64];
                        snprintf(name, sizeof name, "E%d k%d H%d I%d T%d %s %s%s", moe.E, moe.topk, moe.H, moe.I, T, up ? "up" : "down",
                                 bf ? "bf16" : "f16", nk ? " nk" : "");
                        if (profile) {  // one warm-up and one profiled launch of each kernel
                            for (auto& f : paths) { f(); do_flush(); f(); }
                            CK(cudaDeviceSynchronize());
                            printf("profiled %s (grid:", name);
                            for (int i : vars) printf(" %s %d", VARS[i].name, grid_of(VARS[i], p));
                            printf(", active experts %d)\n", active);
                        } else {
                            // every element of every path against the fp64 GPU reference
                            double *ref, *bound, *rref, *rbound; unsigned long long* cnt;
                            size_t ne = (size_t)p.T * nout;
                            CK(cudaMalloc(&ref, ne * 8)); CK(cudaMalloc(&bound, ne * 8)); CK(cudaMalloc(&cnt, 16));
                            bool twice = p.swiglu || p.scale;
                            CK(cudaMalloc(&rref, twice ? ne * 8 : 8)); CK(cudaMalloc(&rbound, twice ? ne * 8 : 8));
                            double g = p.K * U32 / (1 - p.K * U32), A = 2 * g, uo = bf ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
                            double sub = bf ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25);
                            dim3 rg((nout + 127) / 128, std::min(p.T, 65535));
                            for (int rounded = 0; rounded < (twice ? 2 : 1); ++rounded) {
                                double* R = rounded ? rref : ref; double* B = rounded ? rbound : bound;
                                if (bf) ref_kernel<<<rg, 128>>>((const __nv_bfloat16*)d.X, (const __nv_bfloat16*)d.W, d.off, p.gather ? d.gat : nullptr,
                                                                p.scale ? d.S : nullptr, p.G, p.T, p.K, p.N, nk, up, rounded, A, uo, sub, R, B);
                                else ref_kernel<<<rg, 128>>>((const __half*)d.X, (const __half*)d.W, d.off, p.gather ? d.gat : nullptr,
                                                             p.scale ? d.S : nullptr, p.G, p.T, p.K, p.N, nk, up, rounded, A, uo, sub, R, B);
                                CK(cudaGetLastError());
                            }
                            CK(cudaDeviceSynchronize());
                            std::string check;
                            for (size_t i = 0; i < paths.size(); ++i) {
                                CK(cudaMemset(d.Y, 0xff, ne * 2)); CK(cudaMemset(cnt, 0, 16));
                                paths[i](); CK(cudaDeviceSynchronize());
                                bool gr = names[i] == "grouped" && twice;
                                if (bf) compare_kernel<<<g_sms * 4, 256>>>((const __nv_bfloat16*)d.Y, gr ? rref : ref, gr ? rbound : bound, ne, cnt);
                                else compare_kernel<<<g_sms * 4, 256>>>((const __half*)d.Y, gr ? rref : ref, gr ? rbound : bound, ne, cnt);
                                unsigned long long c[2]; CK(cudaMemcpy(c, cnt, 16, cudaMemcpyDeviceToHost));
                                ++g_checks;
                                if (c[0] || c[1]) { ++g_fail; check += "X"; printf("FAIL %s %s: %llu of %zu outside the bound, %llu NaN/Inf\n", name, names[i].c_str(), c[0], ne, c[1]); }
                                else check += ".";
                            }
                            CK(cudaFree(ref)); CK(cudaFree(bound)); CK(cudaFree(rref)); CK(cudaFree(rbound)); CK(cudaFree(cnt));
                            // timing: warm-up, then interleaved repetitions, L2 flushed by a read before each
                            std::vector<std::vector<double>> t(paths.size());
                            double first = 0;
                            for (auto& f : paths) first += time_once(f);
                            int reps = first > 40000 ? 5 : first > 8000 ? 9 : 21;
                            for (int rep = 0; rep < reps; ++rep)
                                for (size_t i = 0; i < paths.size(); ++i) t[i].push_back(time_once(paths[i]));
                            std::vector<double> med(paths.size());
                            for (size_t i = 0; i < paths.size(); ++i) med[i] = median(t[i]);
                            double bytes = (double)active * p.K * p.N * 2 + (double)p.Xrows * p.K * 2 + (double)p.T * nout * 2 + 4.0 * (p.G + 1) + 4.0 * p.T;
                            double floor = std::max(bytes / (copyGBps * 1e3), 2.0 * p.T * p.K * (double)p.N / (tflops * 1e6));
                            size_t bi = 0; for (size_t i = 1; i < nc; ++i) if (med[i] < med[bi]) bi = i;
                            double loop = med[nc], grp = med[nc + 1];
                            char line[512]; int o = snprintf(line, sizeof line, "%-36s", name);
                            for (int i = 0; i < NVARS; ++i) {
                                auto it = std::find(vars.begin(), vars.end(), i);
                                if (it == vars.end()) o += snprintf(line + o, sizeof line - o, " %8s", "-");
                                else o += snprintf(line + o, sizeof line - o, " %8.1f", med[it - vars.begin()]);
                            }
                            snprintf(line + o, sizeof line - o, " %8.1f %8.1f %8.1f %5s %4.0f%% %6.2f %6.2f  %s (active %d, reps %d)", loop, grp, floor,
                                     names[bi].c_str(), 100 * floor / med[bi], loop / med[bi], grp / med[bi], check.c_str(), active, reps);
                            printf("%s\n", line); fflush(stdout);
                            table.push_back(line);
                        }
                        CK(cudaFree(d.X)); CK(cudaFree(d.Y)); CK(cudaFree(d.off)); CK(cudaFree(d.acc)); CK(cudaFree(d.ptrs));
                        if (d.gat) CK(cudaFree(d.gat)); if (d.Xg) CK(cudaFree(d.Xg)); if (d.S) CK(cudaFree(d.S));
                        d.X = d.Y = d.Xg = nullptr; d.S = d.acc = nullptr; d.off = d.gat = nullptr; d.ptrs = nullptr;
                    }
                CK(cudaFree(d.W));
            }
        }
    if (!profile) {
        printf("\n=== sweep (us, medians; floor = max(bytes / %.0f GB/s, flops / %.0f TFLOP/s); best = fastest custom variant) ===\n%s\n",
               copyGBps, tflops, hdr.c_str());
        for (auto& l : table) printf("%s\n", l.c_str());
    }
    CK(cudaFree(flush)); CK(cudaFree(sink));
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);  // line-buffered: a run cut by its time limit keeps what it printed
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); g_sms = prop.multiProcessorCount;
    g_smem_sm = prop.sharedMemPerMultiprocessor;
    int drv = 0, rt = 0; cudaDriverGetVersion(&drv); cudaRuntimeGetVersion(&rt);
    printf("%s, %d SMs, %zu B shared/SM, driver %d, runtime %d\n", prop.name, g_sms, g_smem_sm, drv, rt);
    cudaStream_t st; CK(cudaStreamCreate(&st));
    cublasHandle_t h; CB(cublasCreate(&h)); CB(cublasSetStream(h, st));
    int ver = 0; CB(cublasGetVersion(h, &ver)); printf("cuBLAS %d\n", ver);
    CK(cudaMallocHost(&g_pinned_off, 8192 * 4));
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "--profile") { sweep(h, st, true); return 0; }
    if (mode != "--no-check") correctness(h, st);
    if (mode != "--check-only") sweep(h, st, false);
    printf("TOTAL checks %d, failures %d\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
