// Standalone validation and timing harness of the grouped GEMM kernels (no Java). Build and run on a GPU:
//   nvcc -std=c++17 -O3 -arch=sm_90a -I ../../src/main/cuda -I ../../src/main/cuda/common -o gg_harness harness.cu -lcublas && ./gg_harness
// Part 1 checks every element of the custom kernel (all variants, both weight layouts, gather, SwiGLU,
// row scale, empty groups, G = 1, one group holding every row, T_total = 1, K and N off the tile) and of
// the two cuBLAS paths against an fp64 CPU reference, outputs poisoned first; plus a CUDA-graph replay
// after the offsets were changed on the device. Part 2 times custom vs the cuBLAS per-expert loop vs
// cublasGemmGroupedBatchedEx on MoE shapes, L2 flushed before every repetition, medians of interleaved runs.
// h100-69d1975.txt is the output of the version at commit 69d1975 (with an m32 variant since removed). In that
// run cublasGemmGroupedBatchedEx refused fp32 C (status 15), so its "grouped" column there times only the
// gather and epilogue passes and is NOT a grouped-GEMM timing; this version uses C in the input dtype for that
// path (rounding twice, with the matching bound) but has not been run on a GPU yet.
#include "grouped_gemm/grouped_gemm.cu"
#include "grouped_gemm/vendor_passes.cu"

#include <cublas_v2.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(1); } } while (0)

static const double U32 = std::ldexp(1.0, -24);

struct Cfg { const char* name; int bm, bn, stages; };
static const Cfg CFGS[2] = {{"m16", 16, 64, 4}, {"m64", 64, 128, 3}};

static size_t smem_bytes(const Cfg& c, bool nk, int G) {
    size_t a = (size_t)c.bm * 72, b = nk ? (size_t)c.bn * 72 : (size_t)64 * (c.bn + 8);
    return c.stages * (a + b) * 2 + 4 * (size_t)(G + 1 + c.bm);
}

typedef const void* Kern;
static Kern kernel(const std::string& name);

#define K1(n) if (name == #n) return (Kern)n;
#define KL(cfg, tn) K1(gg_##cfg##_##tn##_kn_plain) K1(gg_##cfg##_##tn##_kn_swiglu) K1(gg_##cfg##_##tn##_nk_plain) K1(gg_##cfg##_##tn##_nk_swiglu)
static Kern kernel(const std::string& name) {
    KL(m16, f16) KL(m16, bf16) KL(m64, f16) KL(m64, bf16)
    printf("no kernel %s\n", name.c_str()); exit(1);
}

static float round_to(bool bf, float x) {
    if (bf) return __bfloat162float(__float2bfloat16_rn(x));
    return __half2float(__float2half_rn(x));
}
static std::vector<uint16_t> encode(bool bf, const std::vector<float>& v) {
    std::vector<uint16_t> o(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        if (bf) { __nv_bfloat16 h = __float2bfloat16_rn(v[i]); o[i] = *reinterpret_cast<uint16_t*>(&h); }
        else { __half h = __float2half_rn(v[i]); o[i] = *reinterpret_cast<uint16_t*>(&h); }
    }
    return o;
}
static float decode(bool bf, uint16_t b) {
    if (bf) { __nv_bfloat16 h; *reinterpret_cast<uint16_t*>(&h) = b; return __bfloat162float(h); }
    __half h; *reinterpret_cast<uint16_t*>(&h) = b; return __half2float(h);
}

struct Problem {
    int G, T, Xrows, K, N; bool nk, swiglu, gather, scale, bf;
    std::vector<float> X, W, S; std::vector<int> off, gat;
};

// Random routing: rows per group drawn with some groups empty.
static Problem make(std::mt19937& rng, int G, int T, int K, int N, bool nk, bool swiglu, bool gather, bool scale, bool bf,
                    int mode /*0 random, 1 all in one group*/) {
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

// fp64 reference and the per-element bound: |out − ref| ≤ u_out|ref| + A·E + c·u32·|ref|, A = 2·γ_K.
// rounded: the GEMM result was rounded to the dtype before the epilogue (the grouped-batched path)
static void reference(const Problem& p, std::vector<double>& ref, std::vector<double>& bound, bool rounded = false) {
    int nout = p.swiglu ? p.N / 2 : p.N;
    ref.assign((size_t)p.T * nout, 0); bound.assign(ref.size(), 0);
    double g = p.K * U32 / (1 - p.K * U32), A = 2 * g, uo = p.bf ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
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
            for (int j = 0; j < nout; ++j) {
                double v;
                const double sub = p.bf ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25);  // half the smallest subnormal spacing
                auto err = [&](int c) { double e = A * sab[c]; return rounded ? e * (1 + uo) + uo * std::fabs(acc[c]) : e; };
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

struct Dev {
    void *X = nullptr, *W = nullptr, *Y = nullptr, *Xg = nullptr; float *S = nullptr, *acc = nullptr; int *off = nullptr, *gat = nullptr;
    void** ptrs = nullptr;
};

static Dev upload(const Problem& p) {
    Dev d; auto xb = encode(p.bf, p.X), wb = encode(p.bf, p.W);
    int nout = p.swiglu ? p.N / 2 : p.N;
    CK(cudaMalloc(&d.X, xb.size() * 2)); CK(cudaMemcpy(d.X, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
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
    for (void* q : {d.X, d.W, d.Y, d.Xg, (void*)d.S, (void*)d.acc, (void*)d.off, (void*)d.gat, (void*)d.ptrs}) if (q) cudaFree(q);
}

static int g_sms = 132;
static void launch_custom(const Problem& p, Dev& d, const Cfg& c, cudaStream_t st) {
    std::string name = std::string("gg_") + c.name + (p.bf ? "_bf16" : "_f16") + (p.nk ? "_nk" : "_kn") + (p.swiglu ? "_swiglu" : "_plain");
    Kern k = kernel(name);
    size_t sm = smem_bytes(c, p.nk, p.G);
    CK(cudaFuncSetAttribute((const void*)k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
    int per = c.bm == 64 ? 2 : 4;
    int nout = p.swiglu ? p.N / 2 : p.N, oc = p.swiglu ? c.bn / 2 : c.bn;
    long ub = ((long)(p.T + c.bm - 1) / c.bm + p.G) * ((nout + oc - 1) / oc);
    int grid = (int)std::max(1L, std::min((long)g_sms * per, ub));
    const void* gp = p.gather ? (const void*)d.gat : nullptr; const void* sp = p.scale ? (const void*)d.S : nullptr;
    int G = p.G, T = p.T, XR = p.Xrows, K = p.K, N = p.N;
    void* args[] = {&d.X, &d.W, &d.Y, &d.off, &gp, &sp, &G, &T, &XR, &K, &N};
    CK(cudaLaunchKernel((const void*)k, dim3(grid), dim3(128), args, sm, st));
    CK(cudaGetLastError());
}

// cuBLAS paths: gather pass, then GEMMs (fp32 output when an epilogue follows), then the epilogue pass.
static void launch_vendor(const Problem& p, Dev& d, cublasHandle_t h, bool grouped, cudaStream_t st, bool f32out) {
    const void* x = d.X;
    if (p.gather) {
        if (p.bf) gg_gather_bf16<<<g_sms * 4, 256, 0, st>>>((const __nv_bfloat16*)d.X, d.gat, (__nv_bfloat16*)d.Xg, p.T, p.Xrows, p.K);
        else gg_gather_f16<<<g_sms * 4, 256, 0, st>>>((const __half*)d.X, d.gat, (__half*)d.Xg, p.T, p.Xrows, p.K);
        x = d.Xg;
    }
    bool epi = p.swiglu || p.scale || f32out;
    bool c32 = epi && !grouped;  // cublasGemmGroupedBatchedEx rejects fp32 C for 16-bit A/B (status 15, 69d1975)
    cudaDataType dt = p.bf ? CUDA_R_16BF : CUDA_R_16F, ct = c32 ? CUDA_R_32F : dt;
    size_t cel = c32 ? 4 : 2; void* C = epi ? (void*)d.acc : d.Y;
    float one = 1.f, zero = 0.f;
    cublasOperation_t ta = p.nk ? CUBLAS_OP_T : CUBLAS_OP_N; int lda = p.nk ? p.K : p.N;
    if (!grouped) {
        for (int g = 0; g < p.G; ++g) {
            int rows = p.off[g + 1] - p.off[g]; if (rows == 0) continue;
            CB(cublasGemmEx(h, ta, CUBLAS_OP_N, p.N, rows, p.K, &one, (const char*)d.W + (size_t)g * p.K * p.N * 2, dt, lda,
                            (const char*)x + (size_t)p.off[g] * p.K * 2, dt, p.K, &zero, (char*)C + (size_t)p.off[g] * p.N * cel, ct, p.N,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
    } else {
        std::vector<int> tA, tB, m, n, k, ldA, ldB, ldC, gs; std::vector<float> al, be; std::vector<void*> pa, pb, pc;
        for (int g = 0; g < p.G; ++g) {
            int rows = p.off[g + 1] - p.off[g]; if (rows == 0) continue;
            tA.push_back(ta); tB.push_back(CUBLAS_OP_N); m.push_back(p.N); n.push_back(rows); k.push_back(p.K);
            ldA.push_back(lda); ldB.push_back(p.K); ldC.push_back(p.N); gs.push_back(1); al.push_back(1.f); be.push_back(0.f);
            pa.push_back((char*)d.W + (size_t)g * p.K * p.N * 2); pb.push_back((char*)x + (size_t)p.off[g] * p.K * 2);
            pc.push_back((char*)C + (size_t)p.off[g] * p.N * cel);
        }
        int gc = (int)gs.size();
        if (gc > 0) {
            pa.insert(pa.end(), pb.begin(), pb.end()); pa.insert(pa.end(), pc.begin(), pc.end());
            static void** pinned = nullptr; static size_t cap = 0;  // pinned staging: the copy is truly async
            if (cap < pa.size()) { if (pinned) cudaFreeHost(pinned); cap = pa.size(); CK(cudaMallocHost(&pinned, cap * sizeof(void*))); }
            // callers synchronise between calls (compare() / the timing loop's event), so the staging buffer is free
            std::copy(pa.begin(), pa.end(), pinned);
            CK(cudaMemcpyAsync(d.ptrs, pinned, pa.size() * sizeof(void*), cudaMemcpyHostToDevice, st));
            cublasStatus_t gst = cublasGemmGroupedBatchedEx(h, (cublasOperation_t*)tA.data(), (cublasOperation_t*)tB.data(), m.data(), n.data(), k.data(),
                                          al.data(), (const void* const*)d.ptrs, dt, ldA.data(), (const void* const*)(d.ptrs + gc), dt,
                                          ldB.data(), be.data(), d.ptrs + 2 * gc, ct, ldC.data(), gc, gs.data(), CUBLAS_COMPUTE_32F);
            if (gst != CUBLAS_STATUS_SUCCESS) {
                static int reported = 0;
                if (reported++ < 3) printf("cublasGemmGroupedBatchedEx failed: status %d (Ctype %s)\n", (int)gst, epi ? "F32" : "in dtype");
            }
        }
    }
    if (epi) {
        const float* sp = p.scale ? d.S : nullptr;
        if (c32 && p.bf) gg_epilogue_bf16<<<g_sms * 4, 256, 0, st>>>(d.acc, sp, (__nv_bfloat16*)d.Y, p.T, p.N, p.swiglu);
        else if (c32) gg_epilogue_f16<<<g_sms * 4, 256, 0, st>>>(d.acc, sp, (__half*)d.Y, p.T, p.N, p.swiglu);
        else if (p.bf) gg_epilogue_bf16_from_bf16<<<g_sms * 4, 256, 0, st>>>((const __nv_bfloat16*)d.acc, sp, (__nv_bfloat16*)d.Y, p.T, p.N, p.swiglu);
        else gg_epilogue_f16_from_f16<<<g_sms * 4, 256, 0, st>>>((const __half*)d.acc, sp, (__half*)d.Y, p.T, p.N, p.swiglu);
    }
    CK(cudaGetLastError());
}

static int g_fail = 0, g_checks = 0;
static void compare(const Problem& p, Dev& d, const char* what, const std::vector<double>& ref, const std::vector<double>& bound) {
    CK(cudaDeviceSynchronize());
    int nout = p.swiglu ? p.N / 2 : p.N;
    std::vector<uint16_t> y((size_t)p.T * nout);
    CK(cudaMemcpy(y.data(), d.Y, y.size() * 2, cudaMemcpyDeviceToHost));
    long bad = 0; double worst = 0; size_t first = SIZE_MAX;
    for (size_t i = 0; i < y.size(); ++i) {
        double v = decode(p.bf, y[i]); double e = std::fabs(v - ref[i]);
        if (!(e <= bound[i] + 1e-30)) { if (first == SIZE_MAX) first = i; ++bad; }
        if (bound[i] > 0 && std::isfinite(e)) worst = std::max(worst, e / bound[i]);
    }
    ++g_checks;
    if (bad) {
        ++g_fail;
        printf("FAIL %-28s G=%d T=%d K=%d N=%d %s%s%s%s%s: %ld bad, first [%zu,%zu] got %g ref %g bound %g\n", what, p.G, p.T, p.K, p.N,
               p.bf ? "bf16" : "f16", p.nk ? " nk" : " kn", p.swiglu ? " swiglu" : "", p.gather ? " gather" : "", p.scale ? " scale" : "",
               bad, first / nout, first % nout, (double)decode(p.bf, y[first]), ref[first], bound[first]);
    } else if (g_checks % 16 == 0) {
        printf("ok   %-28s G=%d T=%d K=%d N=%d (worst err/bound %.3f)\n", what, p.G, p.T, p.K, p.N, worst);
    }
}

static void correctness(cublasHandle_t h, cudaStream_t st) {
    std::mt19937 rng(12345);
    struct Shape { int G, T, K, N, mode; };
    std::vector<Shape> shapes = {{5, 37, 72, 48, 0}, {1, 19, 64, 64, 0}, {4, 130, 136, 144, 1}, {7, 1, 72, 48, 0},
                                 {9, 203, 200, 272, 0}, {3, 70, 8, 16, 0}};
    for (const Shape& s : shapes)
        for (int bf = 0; bf < 2; ++bf)
            for (int nk = 0; nk < 2; ++nk)
                for (int sw = 0; sw < 2; ++sw)
                    for (int opt = 0; opt < 4; ++opt) {
                        bool ga = opt & 1, sc = opt & 2;
                        Problem p = make(rng, s.G, s.T, s.K, s.N, nk, sw, ga, sc, bf, s.mode);
                        std::vector<double> ref, bound; reference(p, ref, bound);
                        Dev d = upload(p);
                        int nout = sw ? s.N / 2 : s.N;
                        std::vector<double> rref, rbound; reference(p, rref, rbound, true);
                        for (const Cfg& c : CFGS) {
                            CK(cudaMemset(d.Y, 0xff, (size_t)p.T * nout * 2));
                            launch_custom(p, d, c, st);
                            compare(p, d, (std::string("custom ") + c.name).c_str(), ref, bound);
                        }
                        for (int gr = 0; gr < 2; ++gr) {
                            CK(cudaMemset(d.Y, 0xff, (size_t)p.T * nout * 2));
                            launch_vendor(p, d, h, gr, st, false);
                            bool twice = gr && (sw || sc);
                            compare(p, d, gr ? "cublas grouped" : "cublas loop", twice ? rref : ref, twice ? rbound : bound);
                        }
                        release(d);
                    }
    // K/N tails where N is not a multiple of 16 (plain only: SwiGLU needs N/2 % 8 == 0)
    {
        Problem p = make(rng, 6, 77, 72, 40, false, false, true, true, true, 0);
        std::vector<double> ref, bound; reference(p, ref, bound); Dev d = upload(p);
        for (const Cfg& c : CFGS) { CK(cudaMemset(d.Y, 0xff, (size_t)p.T * p.N * 2)); launch_custom(p, d, c, st); compare(p, d, "custom N=40", ref, bound); }
        release(d);
    }
    // Graph capture: capture once, change offsets (and so every group's rows) on the device, replay.
    for (const Cfg& c : CFGS) {
        Problem p = make(rng, 8, 150, 72, 48, true, true, true, true, true, 0);
        Dev d = upload(p);
        cudaGraph_t graph; cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeRelaxed));
        launch_custom(p, d, c, st);
        CK(cudaStreamEndCapture(st, &graph));
        CK(cudaGraphInstantiate(&exec, graph, 0));
        Problem q = p;  // new routing with the same T_total
        std::vector<int> cnt(q.G, 0); for (int r = 0; r < q.T; ++r) cnt[(r * 7 + 3) % 5]++;  // groups 5..7 empty now
        for (int g = 0; g < q.G; ++g) q.off[g + 1] = q.off[g] + cnt[g];
        CK(cudaMemcpy(d.off, q.off.data(), (q.G + 1) * 4, cudaMemcpyHostToDevice));
        CK(cudaMemset(d.Y, 0xff, (size_t)q.T * q.N / 2 * 2));
        CK(cudaGraphLaunch(exec, st));
        std::vector<double> ref, bound; reference(q, ref, bound);
        compare(q, d, (std::string("graph replay ") + c.name).c_str(), ref, bound);
        cudaGraphExecDestroy(exec); cudaGraphDestroy(graph); release(d);
    }
    printf("correctness: %d checks, %d failed\n", g_checks, g_fail);
}

// ---------------------------------------------------------------- timing
__global__ void init_bf16(__nv_bfloat16* w, size_t n, uint32_t seed, float amp) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ (uint32_t)(i >> 32) * 40503u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        w[i] = __float2bfloat16_rn(amp * ((h >> 8) * (1.0f / 8388608.0f) - 1.0f));
    }
}
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

static void timing(cublasHandle_t h, cudaStream_t st) {
    void* flush; size_t fbytes = 256u << 20; CK(cudaMalloc(&flush, fbytes));
    // copy bandwidth ceiling
    double copyGBps;
    {
        void *a, *b; size_t n = 1u << 30; CK(cudaMalloc(&a, n)); CK(cudaMalloc(&b, n));
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        std::vector<double> t;
        for (int i = 0; i < 6; ++i) { cudaEventRecord(e0, st); cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st); cudaEventRecord(e1, st);
            cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms); }
        copyGBps = 2.0 * n / (median(t) * 1e6); cudaFree(a); cudaFree(b);
    }
    const double bf16Tflops = 700;  // anchor ceiling (h100-pytorch-2026-11-22.json), not re-measured here
    printf("copy %.0f GB/s\n", copyGBps);
    struct Case { int E, topk, H, I, T; bool up; };
    std::vector<Case> cases;
    for (int T : {1, 16, 128, 512, 2048}) { cases.push_back({64, 8, 2048, 1024, T, true}); cases.push_back({64, 8, 2048, 1024, T, false}); }
    for (int T : {8, 128, 4096}) cases.push_back({128, 8, 2048, 768, T, true});
    for (int T : {8, 512}) cases.push_back({160, 6, 5120, 1536, T, true});
    for (int T : {1, 128, 2048}) { cases.push_back({8, 2, 4096, 14336, T, true}); cases.push_back({8, 2, 4096, 14336, T, false}); }
    std::mt19937 rng(7);
    printf("%-30s %9s %9s %9s %9s %9s %6s  %s\n", "case", "m16", "m64", "loop", "grouped", "floor", "%flr", "check");
    for (const Case& c : cases) {
        Problem p; p.bf = true; p.nk = false; p.G = c.E; p.T = c.T * c.topk;
        p.swiglu = c.up; p.gather = c.up; p.scale = !c.up; p.K = c.up ? c.H : c.I; p.N = c.up ? 2 * c.I : c.H; p.Xrows = c.up ? c.T : p.T;
        // routing: top-k of random logits per token
        std::vector<std::vector<int>> members(c.E);
        std::normal_distribution<float> nd;
        for (int t = 0; t < c.T; ++t) {
            std::vector<std::pair<float, int>> l(c.E); for (int e = 0; e < c.E; ++e) l[e] = {nd(rng), e};
            std::partial_sort(l.begin(), l.begin() + c.topk, l.end(), [](auto& a, auto& b) { return a.first > b.first; });
            for (int j = 0; j < c.topk; ++j) members[l[j].second].push_back(t);
        }
        p.off.assign(c.E + 1, 0); p.gat.clear();
        int active = 0;
        for (int e = 0; e < c.E; ++e) { p.off[e + 1] = p.off[e] + (int)members[e].size(); active += !members[e].empty();
                                         for (int t : members[e]) p.gat.push_back(t); }
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        p.X.resize((size_t)p.Xrows * p.K); for (auto& x : p.X) x = round_to(true, u(rng));
        if (p.scale) { p.S.resize(p.T); for (auto& x : p.S) x = u(rng); }
        // W is drawn on the device (up to 5 GB); the host keeps only the slices the check needs
        Problem hostp = p; hostp.W.clear(); hostp.G = 0;
        Dev d = upload(hostp); hostp.G = p.G;
        CK(cudaFree(d.off)); CK(cudaMalloc(&d.off, (p.G + 1) * 4)); CK(cudaMemcpy(d.off, p.off.data(), (p.G + 1) * 4, cudaMemcpyHostToDevice));
        CK(cudaFree(d.ptrs)); CK(cudaMalloc(&d.ptrs, 3 * (size_t)p.G * sizeof(void*)));
        size_t wn = (size_t)p.G * p.K * p.N; CK(cudaMalloc(&d.W, wn * 2));
        init_bf16<<<g_sms * 8, 256>>>((__nv_bfloat16*)d.W, wn, 0x1234u + c.T, 0.05f); CK(cudaDeviceSynchronize());
        int nout = p.swiglu ? p.N / 2 : p.N;
        // reference on the first two non-empty groups: a sub-problem with their W slices copied back
        Problem sub = p; sub.G = 0; sub.W.clear(); sub.off.assign(1, 0); sub.gat.clear(); sub.S.clear();
        std::vector<int> kept;
        for (int g = 0; g < p.G && kept.size() < 2; ++g) if (p.off[g + 1] > p.off[g]) kept.push_back(g);
        for (int g : kept) {
            std::vector<uint16_t> wb((size_t)p.K * p.N);
            CK(cudaMemcpy(wb.data(), (char*)d.W + (size_t)g * p.K * p.N * 2, wb.size() * 2, cudaMemcpyDeviceToHost));
            for (auto v : wb) sub.W.push_back(decode(true, v));
            for (int r = p.off[g]; r < p.off[g + 1]; ++r) { sub.gat.push_back(p.gather ? p.gat[r] : r); if (p.scale) sub.S.push_back(p.S[r]); }
            sub.off.push_back(sub.off.back() + p.off[g + 1] - p.off[g]); sub.G++;
        }
        sub.T = sub.off.back(); sub.gather = true;  // rows of the sub-problem name their X rows explicitly
        std::vector<double> ref, bound; reference(sub, ref, bound);
        std::vector<double> rref, rbound; reference(sub, rref, rbound, true);  // the grouped path rounds before its epilogue
        std::vector<std::function<void()>> paths;
        for (const Cfg& cf : CFGS) paths.push_back([&, cf] { launch_custom(p, d, cf, st); });
        paths.push_back([&] { launch_vendor(p, d, h, false, st, false); });
        paths.push_back([&] { launch_vendor(p, d, h, true, st, false); });
        std::string check;
        for (size_t i = 0; i < paths.size(); ++i) {
            CK(cudaMemset(d.Y, 0xff, (size_t)p.T * nout * 2)); paths[i](); CK(cudaDeviceSynchronize());
            std::vector<uint16_t> y((size_t)p.T * nout); CK(cudaMemcpy(y.data(), d.Y, y.size() * 2, cudaMemcpyDeviceToHost));
            long bad = 0;
            for (int gi = 0; gi < sub.G; ++gi)
                for (int r = sub.off[gi]; r < sub.off[gi + 1]; ++r)
                    for (int j = 0; j < nout; ++j) {
                        size_t q = (size_t)(p.off[kept[gi]] + r - sub.off[gi]) * nout + j, qr = (size_t)r * nout + j;
                        const std::vector<double>& bd = i == 3 ? rbound : bound;
                        if (!(std::fabs(decode(true, y[q]) - ref[qr]) <= bd[qr])) ++bad;
                    }
            long nan = 0; for (auto v : y) if (std::isnan(decode(true, v))) ++nan;
            check += (bad || nan) ? "X" : "."; if (bad || nan) ++g_fail;
        }
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        std::vector<std::vector<double>> t(paths.size());
        for (int rep = 0; rep < 15; ++rep)
            for (size_t i = 0; i < paths.size(); ++i) {
                CK(cudaMemsetAsync(flush, rep, fbytes, st));
                cudaEventRecord(e0, st); paths[i](); cudaEventRecord(e1, st); CK(cudaEventSynchronize(e1));
                float ms; cudaEventElapsedTime(&ms, e0, e1); t[i].push_back(ms * 1000);
            }
        double bytes = (double)active * p.K * p.N * 2 + (double)p.Xrows * p.K * 2 + (double)p.T * nout * 2 + (p.gather ? p.T * 4.0 : 0) + (p.scale ? p.T * 4.0 : 0);
        double flops = 2.0 * p.T * p.K * p.N;
        double floor = std::max(bytes / (copyGBps * 1e3), flops / (bf16Tflops * 1e6));
        double best = std::min(median(t[0]), median(t[1]));
        char name[64]; snprintf(name, sizeof name, "E%d k%d H%d I%d T%d %s", c.E, c.topk, c.H, c.I, c.T, c.up ? "up" : "down");
        printf("%-30s %9.1f %9.1f %9.1f %9.1f %9.1f %5.0f%%  %s\n", name, median(t[0]), median(t[1]), median(t[2]), median(t[3]),
               floor, 100 * floor / best, check.c_str());
        fflush(stdout);
        release(d);
    }
    cudaFree(flush);
}

int main(int argc, char** argv) {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0)); g_sms = prop.multiProcessorCount;
    printf("%s, %d SMs\n", prop.name, g_sms);
    cudaStream_t st; CK(cudaStreamCreate(&st));
    cublasHandle_t h; CB(cublasCreate(&h)); CB(cublasSetStream(h, st));
    correctness(h, st);
    if (argc < 2 || std::string(argv[1]) != "--no-timing") timing(h, st);
    printf("TOTAL failures: %d\n", g_fail);
    return g_fail ? 1 : 0;
}
