// Standalone validation and timing harness for cuda-native/src/main/cuda/gqa_decode (no Java).
//
// Build (from a folder holding harness.cu, split_kv.cu, vendor_glue.cu, split_kv_prefetch.cu, split_kv_mma.cu,
// gapfill_types.cuh):
//   nvcc -std=c++17 -O3 -arch=sm_90a -I. -o gqa_harness harness.cu -lcublas
// Parts:
//   1. correctness: custom (split 1 and the heuristic's split) and a cuBLAS composition against an fp64 CPU
//      reference, every output element and every lse, D ∈ {64,128,256}, G ∈ {1,4,7,8,12}, lengths with 0, 1, 17,
//      1000, all three layouts (paged with pages in random order) — paged/BLHD must equal BHLD bit for bit.
//   2. graph: the custom launch sequence captured once, replayed 100 times with device lengths changed between
//      replays, every output checked.
//   4. experiments for the next GPU slot: head tile 4 for G = 8, split_kv_mma.cu (tensor cores for the G heads) and
//      split_kv_prefetch.cu (register double buffer),
//      each checked for correctness first and then timed against the shipped kernel.
//   (h100-30c10a3.txt was produced at commit 30c10a3 with a 2·SM block target and without the head-tile parts.)
//   3. timing: custom vs cuBLAS composition (GEMM → mask+softmax kernel → GEMM; paged: + gather), L2 flushed before
//      every repetition, medians; a split-count sweep on a few shapes to calibrate GqaDecodeHeuristics.
#include "split_kv.cu"
#include "vendor_glue.cu"
#include "split_kv_prefetch.cu"  // experiment: register double buffer (dev only)
#include "split_kv_mma.cu"       // experiment: the G heads on tensor cores (dev only)

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(1); } } while (0)

enum Layout { BHLD = 0, BLHD = 1, PAGED = 2 };
static const char* kLayoutName[] = {"bhld", "blhd", "paged"};

static int g_sms = 132;

// ---- the split heuristic (mirrors dev.gapfill.ops.GqaDecodeHeuristics) ----
static int g_use_mma = 0;   // experiment: split_kv_mma.cu (16-head tiles on mma.sync) for D 64/128
static int g_use_pf = 0;    // experiment: the prefetching body of split_kv_prefetch.cu where it is compiled
static int g_max_tile = 0;  // experiment: cap the head tile (e.g. 4 for G = 8: two tiles, the second reading K/V from L2)
static int head_tile(int g) {
    const int t = g <= 1 ? 1 : g <= 2 ? 2 : g <= 4 ? 4 : 8;
    return g_max_tile > 0 ? std::min(t, g_max_tile) : t;
}
struct SplitChoice { int splits, chunk; };
static SplitChoice choose_splits(int B, int Hkv, int G, int maxLen, int sms, int forced) {
    const int tiles = (G + head_tile(G) - 1) / head_tile(G);
    const long long ctas = (long long)B * Hkv * tiles;
    int splits;
    if (forced > 0) {
        splits = forced;
    } else {
        const long long target = 4LL * sms;           // about four resident 128-thread blocks per SM
        splits = (int)std::min(256LL, std::max(1LL, (target + ctas - 1) / ctas));
        const int maxSplits = std::max(1, (maxLen + 127) / 128);  // at least 128 keys per split
        splits = std::min(splits, maxSplits);
    }
    int chunk = (maxLen + splits - 1) / splits;
    chunk = (chunk + 63) / 64 * 64;
    splits = std::max(1, (maxLen + chunk - 1) / chunk);
    return {splits, chunk};
}

// ---- dtype helpers on the host ----
template <typename T> float h2f(T x);
template <> float h2f<__half>(__half x) { return __half2float(x); }
template <> float h2f<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> T f2h(float x);
template <> __half f2h<__half>(float x) { return __float2half_rn(x); }
template <> __nv_bfloat16 f2h<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <typename T> double unit_roundoff();
template <> double unit_roundoff<__half>() { return std::ldexp(1.0, -11); }
template <> double unit_roundoff<__nv_bfloat16>() { return std::ldexp(1.0, -8); }

__global__ void fill_random_kernel(uint16_t* p, size_t n, uint32_t seed, int bf16) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        float f = (h & 0xffffff) / 8388608.0f - 1.0f;
        p[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(f)) : __half_as_ushort(__float2half_rn(f));
    }
}

// ---- the cuBLAS composition's softmax: one block per (b,h) row, masked past len, P in T, lse ----
template <typename T>
__global__ void softmax_rows(const float* s, const int* lens, T* p, float* lse, int hq, int max_len) {
    const int row = blockIdx.x;
    const int len = min(max(lens[row / hq], 0), max_len);
    __shared__ float red[32];
    float mx = -CUDART_INF_F;
    for (int j = threadIdx.x; j < len; j += blockDim.x) mx = fmaxf(mx, s[(size_t)row * max_len + j]);
    mx = warp_max(mx);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = mx;
    __syncthreads();
    if (threadIdx.x < 32) { float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : -CUDART_INF_F; v = warp_max(v); if (threadIdx.x == 0) red[0] = v; }
    __syncthreads();
    mx = red[0];
    __syncthreads();
    float sum = 0.f;
    for (int j = threadIdx.x; j < len; j += blockDim.x) sum += __expf(s[(size_t)row * max_len + j] - mx);
    sum = warp_sum(sum);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) { float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f; v = warp_sum(v); if (threadIdx.x == 0) red[0] = v; }
    __syncthreads();
    sum = red[0];
    for (int j = threadIdx.x; j < max_len; j += blockDim.x)
        p[(size_t)row * max_len + j] = from_float<T>(j < len ? __expf(s[(size_t)row * max_len + j] - mx) / sum : 0.f);
    if (threadIdx.x == 0 && lse) lse[row] = len > 0 ? mx + logf(sum) : -CUDART_INF_F;
}

// ---- problem on the device ----
template <typename T>
struct Problem {
    int B, Hq, Hkv, D, L, layout, page;  // L = maxLen = cache capacity
    int G, maxPages = 0, numPages = 0;
    std::vector<int> lens;
    T *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
    int *dlens = nullptr, *table = nullptr;
    float *lse = nullptr, *part_o = nullptr, *part_lse = nullptr;
    // vendor workspace
    float* scores = nullptr; T* probs = nullptr; T *gk = nullptr, *gv = nullptr;
    size_t kvElems = 0;
};

template <typename T>
static void launch_split(const Problem<T>& p, SplitChoice sc, cudaStream_t st) {
    const int gt = head_tile(p.G);
    const int tiles = (p.G + gt - 1) / gt;
    long long sb, sh, sl, ps = 0;
    if (p.layout == BHLD) { sb = (long long)p.Hkv * p.L * p.D; sh = (long long)p.L * p.D; sl = p.D; }
    else if (p.layout == BLHD) { sb = (long long)p.L * p.Hkv * p.D; sh = p.D; sl = (long long)p.Hkv * p.D; }
    else { sb = 0; sh = p.D; sl = (long long)p.Hkv * p.D; ps = (long long)p.page * p.Hkv * p.D; }
    int shift = 0; while ((1 << shift) < p.page) ++shift;
    const float scale_log2 = (float)(1.0 / std::sqrt((double)p.D) * 1.4426950408889634);
    dim3 grid(sc.splits, p.Hkv * tiles, p.B);
    const int* tab = p.layout == PAGED ? p.table : nullptr;
#define GQA_ARGS (const T*)p.q, (const T*)p.k, (const T*)p.v, tab, p.dlens, p.out, p.lse, p.part_o, p.part_lse, p.Hq, p.Hkv, p.G, tiles, sc.splits, sc.chunk, p.L, p.maxPages, shift, sb, sh, sl, ps, scale_log2
#define GQA_CASE(TN, DD, GG) if (p.D == DD && gt == GG) { gqa_split_kv_##TN##_d##DD##_g##GG<<<grid, 128, 0, st>>>(GQA_ARGS); }
    bool done = false;
    if (g_use_mma && (p.D == 64 || p.D == 128)) {
        const int mt = (p.G + 15) / 16;
        dim3 mg(sc.splits, p.Hkv * mt, p.B);
#define GQA_MMA_ARGS (const T*)p.q, (const T*)p.k, (const T*)p.v, tab, p.dlens, p.out, p.lse, p.part_o, p.part_lse, p.Hq, p.Hkv, p.G, mt, sc.splits, sc.chunk, p.L, p.maxPages, shift, sb, sh, sl, ps, scale_log2
        if constexpr (std::is_same<T, __half>::value) {
            if (p.D == 64) gqa_split_kv_mma_f16_d64<<<mg, 128, 0, st>>>(GQA_MMA_ARGS);
            else gqa_split_kv_mma_f16_d128<<<mg, 128, 0, st>>>(GQA_MMA_ARGS);
        } else {
            if (p.D == 64) gqa_split_kv_mma_bf16_d64<<<mg, 128, 0, st>>>(GQA_MMA_ARGS);
            else gqa_split_kv_mma_bf16_d128<<<mg, 128, 0, st>>>(GQA_MMA_ARGS);
        }
        done = true;
    }
    if (done) {
    } else if constexpr (std::is_same<T, __half>::value) {
        if (g_use_pf && (p.D == 64 || p.D == 128) && (gt == 4 || gt == 8)) {
#define GQA_PF(DD, GG) if (p.D == DD && gt == GG) { gqa_split_kv_pf_f16_d##DD##_g##GG<<<grid, 128, 0, st>>>(GQA_ARGS); }
            GQA_PF(64, 4) GQA_PF(128, 4) GQA_PF(64, 8) GQA_PF(128, 8)
            done = true;
        }
    }
    if (done) {
    } else if constexpr (std::is_same<T, __half>::value) {
        GQA_CASE(f16, 64, 1) GQA_CASE(f16, 64, 2) GQA_CASE(f16, 64, 4) GQA_CASE(f16, 64, 8)
        GQA_CASE(f16, 128, 1) GQA_CASE(f16, 128, 2) GQA_CASE(f16, 128, 4) GQA_CASE(f16, 128, 8)
        GQA_CASE(f16, 256, 1) GQA_CASE(f16, 256, 2) GQA_CASE(f16, 256, 4) GQA_CASE(f16, 256, 8)
    } else {
        GQA_CASE(bf16, 64, 1) GQA_CASE(bf16, 64, 2) GQA_CASE(bf16, 64, 4) GQA_CASE(bf16, 64, 8)
        GQA_CASE(bf16, 128, 1) GQA_CASE(bf16, 128, 2) GQA_CASE(bf16, 128, 4) GQA_CASE(bf16, 128, 8)
        GQA_CASE(bf16, 256, 1) GQA_CASE(bf16, 256, 2) GQA_CASE(bf16, 256, 4) GQA_CASE(bf16, 256, 8)
    }
    CK(cudaGetLastError());
    if (sc.splits > 1) {
        dim3 mg(p.Hq, p.B);
        if constexpr (std::is_same<T, __half>::value) gqa_merge_f16<<<mg, p.D, 0, st>>>(p.part_o, p.part_lse, p.dlens, p.out, p.lse, p.Hq, p.D, sc.splits, sc.chunk, p.L);
        else gqa_merge_bf16<<<mg, p.D, 0, st>>>(p.part_o, p.part_lse, p.dlens, p.out, p.lse, p.Hq, p.D, sc.splits, sc.chunk, p.L);
        CK(cudaGetLastError());
    }
}

// cuBLAS composition: [gather] → scores GEMM (fp32, batched over B·Hkv, m = L, n = G) → softmax → P·V GEMM.
template <typename T>
static void launch_vendor(const Problem<T>& p, cublasHandle_t h, cudaStream_t st) {
    const cudaDataType_t dt = std::is_same<T, __half>::value ? CUDA_R_16F : CUDA_R_16BF;
    const T* K = p.k; const T* V = p.v;
    int shift = 0; while ((1 << shift) < p.page) ++shift;
    if (p.layout == PAGED) {
        dim3 g((unsigned)(((long long)p.L * p.D / 8 + 255) / 256), p.Hkv, p.B);
        if constexpr (std::is_same<T, __half>::value) {
            gqa_gather_f16<<<g, 256, 0, st>>>(p.k, p.table, p.dlens, p.gk, p.Hkv, p.D, p.L, p.maxPages, shift);
            gqa_gather_f16<<<g, 256, 0, st>>>(p.v, p.table, p.dlens, p.gv, p.Hkv, p.D, p.L, p.maxPages, shift);
        } else {
            gqa_gather_bf16<<<g, 256, 0, st>>>(p.k, p.table, p.dlens, p.gk, p.Hkv, p.D, p.L, p.maxPages, shift);
            gqa_gather_bf16<<<g, 256, 0, st>>>(p.v, p.table, p.dlens, p.gv, p.Hkv, p.D, p.L, p.maxPages, shift);
        }
        K = p.gk; V = p.gv;
    }
    const float scale = (float)(1.0 / std::sqrt((double)p.D)), one = 1.f, zero = 0.f;
    CB(cublasSetStream(h, st));
    if (p.layout == BLHD) {  // batch over kv heads (stride D), loop over sequences
        for (int b = 0; b < p.B; ++b) {
            const size_t kb = (size_t)b * p.L * p.Hkv * p.D;
            CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p.L, p.G, p.D, &scale, K + kb, dt, p.Hkv * p.D, p.D,
                                          p.q + (size_t)b * p.Hq * p.D, dt, p.D, (long long)p.G * p.D, &zero,
                                          p.scores + (size_t)b * p.Hq * p.L, CUDA_R_32F, p.L, (long long)p.G * p.L, p.Hkv,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
    } else {
        CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p.L, p.G, p.D, &scale, K, dt, p.D, (long long)p.L * p.D,
                                      p.q, dt, p.D, (long long)p.G * p.D, &zero, p.scores, CUDA_R_32F, p.L,
                                      (long long)p.G * p.L, p.B * p.Hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    softmax_rows<T><<<p.B * p.Hq, 256, 0, st>>>(p.scores, p.dlens, p.probs, p.lse, p.Hq, p.L);
    CK(cudaGetLastError());
    if (p.layout == BLHD) {
        for (int b = 0; b < p.B; ++b) {
            const size_t kb = (size_t)b * p.L * p.Hkv * p.D;
            CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, p.D, p.G, p.L, &one, V + kb, dt, p.Hkv * p.D, p.D,
                                          p.probs + (size_t)b * p.Hq * p.L, dt, p.L, (long long)p.G * p.L, &zero,
                                          p.out + (size_t)b * p.Hq * p.D, dt, p.D, (long long)p.G * p.D, p.Hkv,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
    } else {
        CB(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, p.D, p.G, p.L, &one, V, dt, p.D, (long long)p.L * p.D,
                                      p.probs, dt, p.L, (long long)p.G * p.L, &zero, p.out, dt, p.D, (long long)p.G * p.D,
                                      p.B * p.Hkv, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
}

// Allocates and fills a problem. Host copies (logical BHLD order) are returned when want_host.
template <typename T>
static Problem<T> make_problem(int B, int Hq, int Hkv, int D, int L, int layout, int page, const std::vector<int>& lens,
                               uint32_t seed, bool vendor_ws, int max_splits, std::vector<T>* hq_out,
                               std::vector<T>* hk_bhld, std::vector<T>* hv_bhld) {
    Problem<T> p{};
    p.B = B; p.Hq = Hq; p.Hkv = Hkv; p.D = D; p.L = L; p.layout = layout; p.page = page; p.G = Hq / Hkv; p.lens = lens;
    const size_t qn = (size_t)B * Hq * D;
    p.kvElems = (size_t)B * Hkv * L * D;
    CK(cudaMalloc(&p.q, qn * sizeof(T)));
    CK(cudaMalloc(&p.out, qn * sizeof(T)));
    CK(cudaMalloc(&p.lse, (size_t)B * Hq * sizeof(float)));
    CK(cudaMalloc(&p.dlens, B * sizeof(int)));
    CK(cudaMemcpy(p.dlens, lens.data(), B * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMalloc(&p.part_o, (size_t)B * Hq * max_splits * D * sizeof(float)));
    CK(cudaMalloc(&p.part_lse, (size_t)B * Hq * max_splits * sizeof(float)));
    std::mt19937 rng(seed);
    if (layout == PAGED) {
        p.maxPages = (L + page - 1) / page;
        p.numPages = B * p.maxPages;
        std::vector<int> perm(p.numPages);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);  // pages in random order
        CK(cudaMalloc(&p.table, perm.size() * sizeof(int)));
        CK(cudaMemcpy(p.table, perm.data(), perm.size() * sizeof(int), cudaMemcpyHostToDevice));
        p.kvElems = (size_t)p.numPages * page * Hkv * D;
    }
    CK(cudaMalloc(&p.k, p.kvElems * sizeof(T)));
    CK(cudaMalloc(&p.v, p.kvElems * sizeof(T)));
    const int bf = std::is_same<T, __nv_bfloat16>::value;
    fill_random_kernel<<<1024, 256>>>((uint16_t*)p.q, qn, seed * 3 + 1, bf);
    fill_random_kernel<<<4096, 256>>>((uint16_t*)p.k, p.kvElems, seed * 3 + 2, bf);
    fill_random_kernel<<<4096, 256>>>((uint16_t*)p.v, p.kvElems, seed * 3 + 3, bf);
    CK(cudaGetLastError());
    if (vendor_ws) {
        CK(cudaMalloc(&p.scores, (size_t)B * Hq * L * sizeof(float)));
        CK(cudaMalloc(&p.probs, (size_t)B * Hq * L * sizeof(T)));
        if (layout == PAGED) {
            CK(cudaMalloc(&p.gk, (size_t)B * Hkv * L * D * sizeof(T)));
            CK(cudaMalloc(&p.gv, (size_t)B * Hkv * L * D * sizeof(T)));
            CK(cudaMemset(p.gk, 0, (size_t)B * Hkv * L * D * sizeof(T)));
            CK(cudaMemset(p.gv, 0, (size_t)B * Hkv * L * D * sizeof(T)));
        }
    }
    CK(cudaDeviceSynchronize());
    if (hq_out) {
        hq_out->resize(qn);
        CK(cudaMemcpy(hq_out->data(), p.q, qn * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<T> rk(p.kvElems), rv(p.kvElems);
        CK(cudaMemcpy(rk.data(), p.k, p.kvElems * sizeof(T), cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(rv.data(), p.v, p.kvElems * sizeof(T), cudaMemcpyDeviceToHost));
        std::vector<int> tab;
        if (layout == PAGED) {
            tab.resize(p.numPages);
            CK(cudaMemcpy(tab.data(), p.table, tab.size() * sizeof(int), cudaMemcpyDeviceToHost));
        }
        hk_bhld->assign((size_t)B * Hkv * L * D, f2h<T>(0.f));
        hv_bhld->assign((size_t)B * Hkv * L * D, f2h<T>(0.f));
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < Hkv; ++h)
                for (int pos = 0; pos < L; ++pos) {
                    size_t src;
                    if (layout == BHLD) src = (((size_t)b * Hkv + h) * L + pos) * D;
                    else if (layout == BLHD) src = (((size_t)b * L + pos) * Hkv + h) * D;
                    else src = (((size_t)tab[b * p.maxPages + pos / page] * page + pos % page) * Hkv + h) * D;
                    const size_t dst = (((size_t)b * Hkv + h) * L + pos) * D;
                    std::copy(rk.begin() + src, rk.begin() + src + D, hk_bhld->begin() + dst);
                    std::copy(rv.begin() + src, rv.begin() + src + D, hv_bhld->begin() + dst);
                }
    }
    return p;
}

template <typename T>
static void free_problem(Problem<T>& p) {
    cudaFree(p.q); cudaFree(p.k); cudaFree(p.v); cudaFree(p.out); cudaFree(p.lse); cudaFree(p.dlens); cudaFree(p.table);
    cudaFree(p.part_o); cudaFree(p.part_lse); cudaFree(p.scores); cudaFree(p.probs); cudaFree(p.gk); cudaFree(p.gv);
}

// fp64 reference for all (b, h): out, Σ p|v| (the bound's scale), lse, σ = max_j scale·Σ|q·k|.
struct Ref { std::vector<double> o, absPV, lse, sigma; };
template <typename T>
static Ref reference(const std::vector<T>& q, const std::vector<T>& k, const std::vector<T>& v, const std::vector<int>& lens,
                     int B, int Hq, int Hkv, int D, int L) {
    Ref r;
    const int G = Hq / Hkv;
    r.o.assign((size_t)B * Hq * D, 0); r.absPV.assign((size_t)B * Hq * D, 0);
    r.lse.assign((size_t)B * Hq, -INFINITY); r.sigma.assign((size_t)B * Hq, 0);
    const double scale = 1.0 / std::sqrt((double)D);
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < Hq; ++h) {
            const int kvh = h / G;
            const int len = std::min(std::max(lens[b], 0), L);
            if (len == 0) continue;
            std::vector<double> s(len);
            double mx = -INFINITY, sig = 0;
            for (int j = 0; j < len; ++j) {
                double acc = 0, aacc = 0;
                for (int d = 0; d < D; ++d) {
                    const double x = h2f(q[((size_t)b * Hq + h) * D + d]) * (double)h2f(k[(((size_t)b * Hkv + kvh) * L + j) * D + d]);
                    acc += x; aacc += std::fabs(x);
                }
                s[j] = acc * scale; mx = std::max(mx, s[j]); sig = std::max(sig, aacc * scale);
            }
            double sum = 0;
            for (int j = 0; j < len; ++j) sum += std::exp(s[j] - mx);
            for (int j = 0; j < len; ++j) {
                const double pj = std::exp(s[j] - mx) / sum;
                for (int d = 0; d < D; ++d) {
                    const double vv = h2f(v[(((size_t)b * Hkv + kvh) * L + j) * D + d]);
                    r.o[((size_t)b * Hq + h) * D + d] += pj * vv;
                    r.absPV[((size_t)b * Hq + h) * D + d] += pj * std::fabs(vv);
                }
            }
            r.lse[(size_t)b * Hq + h] = mx + std::log(sum);
            r.sigma[(size_t)b * Hq + h] = sig;
        }
    return r;
}

// |o − ref| ≤ u_T·|ref| + 2·γ_k·Σp|v| (+ u_T·Σp|v| when P is rounded to T), k = len + 2(D+8)·max(1,σ) + 64:
// the score error (D-term dot product in fp32, ≤ γ_{D+2}·σ), doubled by the normalisation, perturbs each p_j
// relatively; the fp32 accumulation of Σp·v and Σp over len terms adds γ_len; growth 2 covers exp2f's ulps.
static double bound(double ref, double absPV, double uT, int len, int D, double sigma, bool pRounded) {
    const double u32 = std::ldexp(1.0, -24);
    const double k = len + 2.0 * (D + 8) * std::max(1.0, sigma) + 64;
    const double gamma = k * u32 / (1 - k * u32);
    return uT * std::fabs(ref) + 2 * gamma * absPV + (pRounded ? uT * absPV : 0) + 1e-30;
}

template <typename T>
static int check(const char* what, const Problem<T>& p, const Ref& r, bool pRounded, std::vector<uint16_t>* bits) {
    std::vector<T> o((size_t)p.B * p.Hq * p.D);
    std::vector<float> lse((size_t)p.B * p.Hq);
    CK(cudaMemcpy(o.data(), p.out, o.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(lse.data(), p.lse, lse.size() * sizeof(float), cudaMemcpyDeviceToHost));
    int fails = 0; double worst = 0;
    for (int b = 0; b < p.B; ++b)
        for (int h = 0; h < p.Hq; ++h) {
            const size_t bh = (size_t)b * p.Hq + h;
            const int len = std::min(std::max(p.lens[b], 0), p.L);
            for (int d = 0; d < p.D; ++d) {
                const size_t i = bh * p.D + d;
                const double g = h2f(o[i]);
                const double tol = bound(r.o[i], r.absPV[i], unit_roundoff<T>(), len, p.D, r.sigma[bh], pRounded);
                const double err = std::fabs(g - r.o[i]);
                if (!(err <= tol)) { if (fails < 3) printf("  FAIL %s b=%d h=%d d=%d len=%d got %.6g ref %.6g tol %.3g\n", what, b, h, d, len, g, r.o[i], tol); ++fails; }
                worst = std::max(worst, err / tol);
            }
            const double lt = len == 0 ? 0 : 1e-6 * std::fabs(r.lse[bh]) + 4 * (p.D + 8 + len) * std::ldexp(1.0, -24) * std::max(1.0, r.sigma[bh]) + 1e-6;
            const bool ok = len == 0 ? (std::isinf(lse[bh]) && lse[bh] < 0) : std::fabs(lse[bh] - r.lse[bh]) <= lt;
            if (!ok) { if (fails < 3) printf("  FAIL %s lse b=%d h=%d len=%d got %.8g ref %.8g\n", what, b, h, len, lse[bh], r.lse[bh]); ++fails; }
        }
    if (bits) { bits->resize(o.size()); memcpy(bits->data(), o.data(), o.size() * 2); }
    (void)worst;
    return fails;
}

template <typename T>
static int correctness(int D, int Hq, int Hkv, int layout, int page, std::vector<int> lens, int L, uint32_t seed,
                       std::vector<uint16_t>* bits, cublasHandle_t h, const char* tname) {
    std::vector<T> hq, hk, hv;
    const int B = (int)lens.size();
    Problem<T> p = make_problem<T>(B, Hq, Hkv, D, L, layout, page, lens, seed, true, 64, &hq, &hk, &hv);
    Ref r = reference(hq, hk, hv, lens, B, Hq, Hkv, D, L);
    int fails = 0;
    char label[160];
    for (int mode = 0; mode < 3; ++mode) {
        SplitChoice sc = mode == 0 ? choose_splits(B, Hkv, p.G, L, g_sms, 1)
                       : mode == 1 ? choose_splits(B, Hkv, p.G, L, g_sms, 0) : SplitChoice{0, 0};
        if (mode == 1 && sc.splits == 1) sc = choose_splits(B, Hkv, p.G, L, g_sms, std::min(64, std::max(2, L / 64)));
        CK(cudaMemset(p.out, 0xff, (size_t)B * Hq * D * sizeof(T)));  // poison
        CK(cudaMemset(p.lse, 0xff, (size_t)B * Hq * sizeof(float)));
        if (mode < 2) launch_split(p, sc, 0); else launch_vendor(p, h, 0);
        CK(cudaDeviceSynchronize());
        snprintf(label, sizeof label, "%s D=%d Hq=%d Hkv=%d %s page=%d L=%d %s", tname, D, Hq, Hkv, kLayoutName[layout], page, L,
                 mode == 2 ? "cublas" : mode == 0 ? "custom s=1" : "custom split");
        int f = check(label, p, r, mode == 2 || (mode < 2 && g_use_mma && (D == 64 || D == 128)), mode == 1 ? bits : nullptr);
        if (mode == 1) { char s2[32]; snprintf(s2, sizeof s2, " s=%d", sc.splits); strncat(label, s2, sizeof label - strlen(label) - 1); }
        if (f) printf("%s: %d failures\n", label, f);
        fails += f;
    }
    free_problem(p);
    return fails;
}

// Graph capture: capture the custom sequence once, replay 100 times with new device lengths each time.
static int graph_test() {
    const int B = 4, Hq = 8, Hkv = 2, D = 128, L = 700;
    std::vector<int> lens0 = {700, 1, 0, 17};
    std::vector<__half> hq, hk, hv;
    Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, PAGED, 16, lens0, 99, false, 64, &hq, &hk, &hv);
    SplitChoice sc = choose_splits(B, Hkv, p.G, L, g_sms, 0);
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    launch_split(p, sc, st);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    std::mt19937 rng(5);
    int fails = 0;
    for (int it = 0; it < 100; ++it) {
        std::vector<int> lens(B);
        for (int b = 0; b < B; ++b) lens[b] = it % 10 == 0 ? 0 : (int)(rng() % (L + 1));
        p.lens = lens;
        CK(cudaMemcpyAsync(p.dlens, lens.data(), B * sizeof(int), cudaMemcpyHostToDevice, st));
        CK(cudaMemsetAsync(p.out, 0xff, (size_t)B * Hq * D * 2, st));
        CK(cudaMemsetAsync(p.lse, 0xff, (size_t)B * Hq * 4, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaStreamSynchronize(st));
        Ref r = reference(hq, hk, hv, lens, B, Hq, Hkv, D, L);
        fails += check("graph replay", p, r, false, nullptr);
    }
    cudaGraphExecDestroy(ge); cudaGraphDestroy(g); cudaStreamDestroy(st);
    free_problem(p);
    printf("graph: 100 replays with changing lengths (splits %d), %d failures\n", sc.splits, fails);
    return fails;
}

// ---- timing ----
static char* g_flush = nullptr; static size_t g_flush_bytes = 0;
template <typename F>
static std::vector<float> time_paths(std::vector<F>& paths, int reps, cudaStream_t st) {
    std::vector<std::vector<float>> t(paths.size());
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int w = 0; w < 2; ++w) for (auto& f : paths) f();
    for (int r = 0; r < reps; ++r)
        for (size_t i = 0; i < paths.size(); ++i) {
            CK(cudaMemsetAsync(g_flush, r & 0xff, g_flush_bytes, st));
            CK(cudaEventRecord(a, st)); paths[i](); CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            float ms; CK(cudaEventElapsedTime(&ms, a, b)); t[i].push_back(ms * 1000.f);
        }
    cudaEventDestroy(a); cudaEventDestroy(b);
    std::vector<float> med;
    for (auto& v : t) { std::sort(v.begin(), v.end()); med.push_back(v[v.size() / 2]); }
    return med;
}

struct Row { std::string name; double floor, custom, vendor; int splits; int bf, layout, var, B, L, hq, hkv, d; };

int main(int argc, char** argv) {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    printf("device %s, %d SMs, L2 %d MiB\n", prop.name, g_sms, prop.l2CacheSize >> 20);
    cublasHandle_t h; CB(cublasCreate(&h));
    g_flush_bytes = std::max<size_t>(4ull * prop.l2CacheSize, 256ull << 20);
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    const bool quick = argc > 1 && std::string(argv[1]) == "quick";

    // 1. correctness
    int fails = 0, cases = 0;
    for (int bf = 0; bf < 2; ++bf)
        for (int D : {64, 128, 256})
            for (int G : {1, 4, 7, 8, 12})
                for (int layout : {BHLD, BLHD, PAGED}) {
                    const int Hkv = (G == 7 || G == 12) ? 2 : 1;
                    std::vector<int> lens = {0, 1, 17, 1000, 333};
                    std::vector<uint16_t> bits;
                    const uint32_t seed = 1000 + D + G * 7 + bf * 13;  // same data for the three layouts
                    const int page = D == 64 ? 64 : 16;
                    if (bf) fails += correctness<__nv_bfloat16>(D, G * Hkv, Hkv, layout, page, lens, 1024, seed, &bits, h, "bf16");
                    else fails += correctness<__half>(D, G * Hkv, Hkv, layout, page, lens, 1024, seed, &bits, h, "f16");
                    ++cases;
                }
    // layout independence: same logical data in the three layouts gives identical bits.
    {
        const int B = 3, Hq = 16, Hkv = 2, D = 128, L = 1000;
        std::vector<int> lens = {1000, 17, 513};
        std::vector<std::vector<uint16_t>> outs;
        std::vector<__half> hq0, hk0, hv0;
        Problem<__half> base = make_problem<__half>(B, Hq, Hkv, D, L, BHLD, 16, lens, 7, false, 64, &hq0, &hk0, &hv0);
        SplitChoice sc = choose_splits(B, Hkv, 8, L, g_sms, 0);
        for (int layout : {BHLD, BLHD, PAGED}) {
            Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, layout, 16, lens, 8, false, 64, nullptr, nullptr, nullptr);
            // rewrite p's cache from the BHLD host copy so all three hold the same logical data
            std::vector<int> tab;
            if (layout == PAGED) { tab.resize(p.numPages); CK(cudaMemcpy(tab.data(), p.table, tab.size() * 4, cudaMemcpyDeviceToHost)); }
            std::vector<__half> rk(p.kvElems), rv(p.kvElems);
            for (int b = 0; b < B; ++b) for (int hh = 0; hh < Hkv; ++hh) for (int pos = 0; pos < L; ++pos) {
                size_t dst;
                if (layout == BHLD) dst = (((size_t)b * Hkv + hh) * L + pos) * D;
                else if (layout == BLHD) dst = (((size_t)b * L + pos) * Hkv + hh) * D;
                else dst = (((size_t)tab[b * p.maxPages + pos / 16] * 16 + pos % 16) * Hkv + hh) * D;
                const size_t src = (((size_t)b * Hkv + hh) * L + pos) * D;
                std::copy(hk0.begin() + src, hk0.begin() + src + D, rk.begin() + dst);
                std::copy(hv0.begin() + src, hv0.begin() + src + D, rv.begin() + dst);
            }
            CK(cudaMemcpy(p.k, rk.data(), rk.size() * 2, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(p.v, rv.data(), rv.size() * 2, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(p.q, hq0.data(), hq0.size() * 2, cudaMemcpyHostToDevice));
            launch_split(p, sc, 0); CK(cudaDeviceSynchronize());
            std::vector<uint16_t> o((size_t)B * Hq * D);
            CK(cudaMemcpy(o.data(), p.out, o.size() * 2, cudaMemcpyDeviceToHost));
            outs.push_back(o);
            free_problem(p);
        }
        free_problem(base);
        const bool same = outs[0] == outs[1] && outs[0] == outs[2];
        printf("layouts: BHLD, BLHD and paged(random pages) outputs bit-identical: %s\n", same ? "yes" : "NO");
        if (!same) ++fails;
    }
    // the head-tile-4 experiment must be correct too: G = 7, 8, 12 with tiles capped at 4
    g_max_tile = 4;
    for (int G : {7, 8, 12}) {
        std::vector<uint16_t> bits;
        fails += correctness<__half>(128, G * 2, 2, PAGED, 16, {0, 1, 17, 1000, 333}, 1024, 555 + G, &bits, h, "f16 tile4");
        fails += correctness<__nv_bfloat16>(64, G, 1, BHLD, 16, {0, 1, 17, 1000, 333}, 1024, 556 + G, &bits, h, "bf16 tile4");
        cases += 2;
    }
    g_max_tile = 0;
    // the prefetch experiment must be correct too: f16, D 64/128, G 4/7/8, every layout
    g_use_pf = 1;
    for (int D : {64, 128})
        for (int G : {4, 7, 8})
            for (int layout : {BHLD, BLHD, PAGED}) {
                std::vector<uint16_t> bits;
                fails += correctness<__half>(D, G, 1, layout, 16, {0, 1, 17, 1000, 333}, 1024, 777 + D + G, &bits, h, "f16 prefetch");
                ++cases;
            }
    g_use_pf = 0;
    // the tensor-core experiment: f16/bf16, D 64/128, G up to 20 (two 16-head tiles), every layout
    g_use_mma = 1;
    for (int bf = 0; bf < 2; ++bf)
        for (int D : {64, 128})
            for (int G : {1, 4, 7, 8, 12, 16, 20})
                for (int layout : {BHLD, BLHD, PAGED}) {
                    std::vector<uint16_t> bits;
                    const std::vector<int> lens = {0, 1, 17, 1000, 333};
                    if (bf) fails += correctness<__nv_bfloat16>(D, G, 1, layout, 16, lens, 1024, 888 + D + G, &bits, h, "bf16 mma");
                    else fails += correctness<__half>(D, G * 2, 2, layout, 64, lens, 1024, 889 + D + G, &bits, h, "f16 mma");
                    ++cases;
                }
    g_use_mma = 0;
    fails += graph_test();
    printf("correctness: %d configurations x (custom s=1, custom split, cuBLAS), %d failures\n", cases, fails);

    // 3. timing
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    // measured copy bandwidth
    double copyGBps;
    {
        size_t n = 1ull << 30; char *a, *b; CK(cudaMalloc(&a, n)); CK(cudaMalloc(&b, n));
        std::vector<std::function<void()>> ps = {[&] { CK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, st)); }};
        auto m = time_paths(ps, 10, st);
        copyGBps = 2.0 * n / (m[0] * 1e3);
        cudaFree(a); cudaFree(b);
        printf("copy bandwidth %.0f GB/s\n", copyGBps);
    }
    struct Heads { int hq, hkv, d; };
    std::vector<Heads> heads = {{32, 8, 128}, {64, 8, 128}, {32, 32, 128}, {28, 4, 128}, {16, 2, 64}};
    std::vector<int> Bs = {1, 4, 16, 64};
    std::vector<int> Ls = {512, 2048, 8192, 32768, 131072};
    std::vector<Row> rows;
    // split-count calibration on a few shapes
    printf("\nsplit sweep (f16 bhld, us):\n");
    for (auto cfg : std::vector<std::array<int, 5>>{{1, 32, 8, 128, 4096}, {1, 32, 8, 128, 32768}, {4, 32, 8, 128, 8192}, {16, 32, 8, 128, 2048}, {1, 32, 32, 128, 8192}, {64, 32, 8, 128, 512}}) {
        const int B = cfg[0], Hq = cfg[1], Hkv = cfg[2], D = cfg[3], L = cfg[4];
        std::vector<int> lens(B, L);
        Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, BHLD, 16, lens, 3, false, 256, nullptr, nullptr, nullptr);
        std::vector<int> ss = {1, 2, 4, 8, 16, 32, 64, 128, 256};
        std::vector<std::function<void()>> ps; std::vector<int> used;
        for (int s : ss) { SplitChoice sc = choose_splits(B, Hkv, p.G, L, g_sms, s); if (sc.splits > 256 || (!used.empty() && sc.splits == used.back())) continue; used.push_back(sc.splits); ps.push_back([&, sc] { launch_split(p, sc, st); }); }
        SplitChoice autoSc = choose_splits(B, Hkv, p.G, L, g_sms, 0);
        auto m = time_paths(ps, 15, st);
        printf("  B=%d Hq=%d Hkv=%d D=%d L=%d (heuristic s=%d):", B, Hq, Hkv, D, L, autoSc.splits);
        for (size_t i = 0; i < m.size(); ++i) printf(" s%d=%.1f", used[i], m[i]);
        printf("\n");
        free_problem(p);
    }
    // head tile experiment: G = 7..8 with one 8-head tile vs two 4-head tiles (splits re-chosen for the tile count)
    printf("\nhead tile sweep (f16 bhld, us):\n");
    for (auto cfg : std::vector<std::array<int, 5>>{{1, 64, 8, 128, 32768}, {4, 64, 8, 128, 8192}, {16, 64, 8, 128, 8192}, {16, 28, 4, 128, 8192}, {16, 16, 2, 64, 8192}, {64, 16, 2, 64, 2048}}) {
        const int B = cfg[0], Hq = cfg[1], Hkv = cfg[2], D = cfg[3], L = cfg[4];
        std::vector<int> lens(B, L);
        Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, BHLD, 16, lens, 5, false, 256, nullptr, nullptr, nullptr);
        float res[2]; int sp[2];
        for (int mt : {0, 4}) {
            g_max_tile = mt;
            SplitChoice sc = choose_splits(B, Hkv, p.G, L, g_sms, 0);
            std::vector<std::function<void()>> ps = {[&, sc] { launch_split(p, sc, st); }};
            res[mt ? 1 : 0] = time_paths(ps, 15, st)[0]; sp[mt ? 1 : 0] = sc.splits;
        }
        g_max_tile = 0;
        printf("  B=%d Hq=%d Hkv=%d D=%d L=%d: tile8 %.1f (s%d)  tile4x2 %.1f (s%d)\n", B, Hq, Hkv, D, L, res[0], sp[0], res[1], sp[1]);
        free_problem(p);
    }
    // tensor-core experiment: shipped body vs split_kv_mma.cu (f16 BHLD and paged16, lengths = L)
    printf("\nmma sweep (f16, us):\n");
    for (auto cfg : std::vector<std::array<int, 6>>{{1, 32, 8, 128, 4096, BHLD}, {1, 32, 8, 128, 32768, BHLD}, {4, 32, 8, 128, 8192, BHLD}, {16, 32, 8, 128, 8192, BHLD}, {64, 32, 8, 128, 2048, BHLD},
                                                    {16, 64, 8, 128, 8192, BHLD}, {4, 64, 8, 128, 32768, BHLD}, {16, 28, 4, 128, 8192, BHLD}, {16, 16, 2, 64, 8192, BHLD}, {64, 16, 2, 64, 8192, BHLD},
                                                    {16, 32, 32, 128, 8192, BHLD}, {16, 64, 8, 128, 8192, PAGED}, {1, 32, 8, 128, 512, BHLD}}) {
        const int B = cfg[0], Hq = cfg[1], Hkv = cfg[2], D = cfg[3], L = cfg[4], lay = cfg[5];
        std::vector<int> lens(B, L);
        Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, lay, 16, lens, 8, false, 256, nullptr, nullptr, nullptr);
        SplitChoice sc = choose_splits(B, Hkv, p.G, L, g_sms, 0);
        float r[2];
        for (int mm : {0, 1}) {
            g_use_mma = mm;
            std::vector<std::function<void()>> ps = {[&] { launch_split(p, sc, st); }};
            r[mm] = time_paths(ps, 15, st)[0];
        }
        g_use_mma = 0;
        const double floorUs = (2.0 * B * L * Hkv * D * 2 + 2.0 * B * Hq * D * 2) / (copyGBps * 1e3);
        printf("  %s B=%d Hq=%d Hkv=%d D=%d L=%d s=%d: shipped %.1f  mma %.1f  floor %.1f (%.0f%% -> %.0f%%)\n", kLayoutName[lay], B, Hq, Hkv, D, L, sc.splits, r[0], r[1], floorUs, 100 * floorUs / r[0], 100 * floorUs / r[1]);
        fflush(stdout);
        free_problem(p);
    }
    // prefetch experiment: shipped body vs register double buffer (f16 BHLD, lengths = L)
    printf("\nprefetch sweep (f16 bhld, us):\n");
    for (auto cfg : std::vector<std::array<int, 5>>{{1, 32, 8, 128, 4096}, {1, 32, 8, 128, 32768}, {16, 32, 8, 128, 8192}, {64, 32, 8, 128, 2048}, {16, 64, 8, 128, 8192}, {16, 16, 2, 64, 8192}, {4, 28, 4, 128, 32768}}) {
        const int B = cfg[0], Hq = cfg[1], Hkv = cfg[2], D = cfg[3], L = cfg[4];
        std::vector<int> lens(B, L);
        Problem<__half> p = make_problem<__half>(B, Hq, Hkv, D, L, BHLD, 16, lens, 6, false, 256, nullptr, nullptr, nullptr);
        SplitChoice sc = choose_splits(B, Hkv, p.G, L, g_sms, 0);
        float r[2];
        for (int pf : {0, 1}) {
            g_use_pf = pf;
            std::vector<std::function<void()>> ps = {[&] { launch_split(p, sc, st); }};
            r[pf] = time_paths(ps, 15, st)[0];
        }
        g_use_pf = 0;
        const double floorUs = (2.0 * B * L * Hkv * D * 2 + 2.0 * B * Hq * D * 2) / (copyGBps * 1e3);
        printf("  B=%d Hq=%d Hkv=%d D=%d L=%d s=%d: shipped %.1f  prefetch %.1f  (floor %.1f)\n", B, Hq, Hkv, D, L, sc.splits, r[0], r[1], floorUs);
        free_problem(p);
    }
    for (int bf = 0; bf < (quick ? 1 : 2); ++bf)
    for (auto hd : heads)
        for (int B : Bs)
            for (int L : Ls) {
                if (L == 131072 && B > 4) continue;
                if ((double)B * L > (quick ? 131072.0 * 4 : 2.0e6)) continue;
                const double kvBytes = 2.0 * B * L * hd.hkv * hd.d * 2;
                if (kvBytes > 12e9) continue;
                for (int layout : {BHLD, PAGED}) {
                    if (bf && layout == PAGED) continue;
                    for (int var = 0; var < (layout == BHLD && !bf ? 2 : 1); ++var) {
                        std::vector<int> lens(B, L);
                        std::mt19937 rng(B * 31 + L);
                        if (var) for (auto& x : lens) x = L / 2 + (int)(rng() % (L / 2 + 1));
                        const bool vendorOk = (double)B * hd.hq * L * 6 < 8e9;
                        double sumLen = std::accumulate(lens.begin(), lens.end(), 0.0);
                        const double bytes = 2.0 * sumLen * hd.hkv * hd.d * 2 + 2.0 * B * hd.hq * hd.d * 2;
                        const double floorUs = bytes / (copyGBps * 1e3);
                        auto run = [&](auto tag) {
                            using T = decltype(tag);
                            Problem<T> p = make_problem<T>(B, hd.hq, hd.hkv, hd.d, L, layout, 16, lens, 11, vendorOk, 256, nullptr, nullptr, nullptr);
                            SplitChoice sc = choose_splits(B, hd.hkv, p.G, L, g_sms, 0);
                            std::vector<std::function<void()>> ps = {[&] { launch_split(p, sc, st); }};
                            if (vendorOk) ps.push_back([&] { launch_vendor(p, h, st); });
                            auto m = time_paths(ps, quick ? 10 : 15, st);
                            char nm[128];
                            snprintf(nm, sizeof nm, "%s %s%s B=%d L=%d %d/%d d%d", bf ? "bf16" : "f16", kLayoutName[layout], var ? "-var" : "", B, L, hd.hq, hd.hkv, hd.d);
                            rows.push_back({nm, floorUs, m[0], vendorOk ? m[1] : NAN, sc.splits, bf, layout, var, B, L, hd.hq, hd.hkv, hd.d});
                            printf("%-44s floor %8.1f custom %8.1f cublas %8.1f  %3.0f%% of floor  %5.2fx  s=%d\n", nm, floorUs, m[0], vendorOk ? m[1] : NAN, 100 * floorUs / m[0], m[1] / m[0], sc.splits);
                            fflush(stdout);
                            free_problem(p);
                        };
                        if (bf) run(__nv_bfloat16{}); else run(__half{});
                    }
                }
            }
    // geometric means by regime, then the short table: f16, lengths = L, contiguous vs paged side by side
    double lsSmall = 0, lsAll = 0; int nSmall = 0, nAll = 0;
    double worst80 = 1e9, worst60 = 1e9; double worstPaged = 0;
    for (auto& r : rows) {
        if (std::isnan(r.vendor)) continue;
        const double sp = std::log(r.vendor / r.custom);
        lsAll += sp; ++nAll;
        if ((double)r.B * r.L <= 32768) { lsSmall += sp; ++nSmall; }
        if ((double)r.B * r.L >= 65536) worst80 = std::min(worst80, r.floor / r.custom);
        if ((double)r.B * r.L >= 8192) worst60 = std::min(worst60, r.floor / r.custom);
    }
    for (auto& a : rows) for (auto& b : rows)
        if (a.layout == BHLD && b.layout == PAGED && a.bf == b.bf && a.var == 0 && b.var == 0 && a.B == b.B && a.L == b.L && a.hq == b.hq && a.hkv == b.hkv)
            worstPaged = std::max(worstPaged, b.custom / a.custom);
    printf("\nf16, len = L            floor  bhld  paged16 cublas  %%floor  x cublas  s\n");
    for (auto& a : rows) {
        if (a.bf || a.layout != BHLD || a.var) continue;
        double pg = NAN;
        for (auto& b : rows) if (b.layout == PAGED && !b.bf && b.B == a.B && b.L == a.L && b.hq == a.hq && b.hkv == a.hkv) pg = b.custom;
        printf("%2d/%-2d d%-3d B=%-2d L=%-6d %7.1f %7.1f %7.1f %7.1f %5.0f%% %6.2f %4d\n", a.hq, a.hkv, a.d, a.B, a.L, a.floor, a.custom, pg, a.vendor, 100 * a.floor / a.custom, a.vendor / a.custom, a.splits);
    }
    printf("geomean speedup over cuBLAS composition: B*L<=32768 %.2fx (%d rows), all %.2fx (%d rows)\n", std::exp(lsSmall / std::max(1, nSmall)), nSmall, std::exp(lsAll / std::max(1, nAll)), nAll);
    printf("worst fraction of floor: B*L>=65536 %.0f%%, B*L>=8192 %.0f%%; worst paged/contiguous time ratio %.3f\n", 100 * worst80, 100 * worst60, worstPaged);
    printf("CORRECTNESS FAILURES: %d\n", fails);
    return fails ? 1 : 0;
}
