// Glue kernels of the vendor composition of GQA decode (cuBLAS GEMM → mask → cuDNN log-softmax → probs → cuBLAS
// GEMM). They do only what the vendor libraries cannot: gather a paged cache to contiguous, mask scores past each
// sequence's device-side length, and turn log-probabilities into F16/BF16 probabilities (plus the log-sum-exp).
//
// Regime: the vendor path of every gqa_decode shape (any D multiple of 8, F16/BF16).
// Floor: memory-bound passes: gather 2·Σ_b len_b·Hkv·D·sizeof(T) read + written; mask ≤ B·Hq·maxLen·4 written;
// probs B·Hq·maxLen·(4 + sizeof(T)) (+4 for the first score of each row).
// Measured: not yet measured (timed only as part of the vendor composition).
// Limits: B ≤ 65535 (grid z / y), Hkv ≤ 65535; pageSize a power of two; page numbers trusted.
#include "gapfill_types.cuh"

#include <math_constants.h>

using namespace gapfill;

namespace {

// dst[b, kvh, pos, :] = pages[table[b, pos / pageSize], pos % pageSize, kvh, :] for pos < len_b. Rows past len_b
// are left as they are (the plan zeroes the buffer once, and stale rows hold finite old data), so the gather moves
// only the live rows; the masked scores give those rows probability exactly 0.
template <typename T>
__device__ __forceinline__ void gather_body(const T* __restrict__ pages, const int* __restrict__ table,
                                            const int* __restrict__ lens, T* __restrict__ dst, int hkv, int d_head,
                                            int max_len, int max_pages, int page_shift, int num_pages) {
    const int kvh = blockIdx.y;
    const int b = blockIdx.z;
    const int vec_per_row = d_head / 8;  // 16-byte vectors per row
    const int len = min(max(lens[b], 0), max_len);
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)len * vec_per_row) {
        return;
    }
    const int pos = (int)(idx / vec_per_row);
    const int c = (int)(idx % vec_per_row);
    // a page number outside [0, P) (a malformed table; see decode_mma.cu's clamp_page) reads the nearest page
    const int page = min(max(table[(size_t)b * max_pages + (pos >> page_shift)], 0), num_pages - 1);
    const long long page_size = 1LL << page_shift;
    const T* src = pages + ((long long)page * page_size + (pos & (page_size - 1))) * hkv * d_head + (long long)kvh * d_head + c * 8;
    T* out = dst + (((long long)b * hkv + kvh) * max_len + pos) * d_head + c * 8;
    store16(out, load16_stream(src));
}

// p[b, h, j] = exp(logp[b, h, j]) for j < len_b, else 0 (rows with len_b == 0 are all zeros: cuDNN returns NaN
// for an all −inf row). lse[b, h] = scores[b, h, 0] − logp[b, h, 0] (−inf when len_b == 0).
template <typename T>
__device__ __forceinline__ void probs_body(const float* __restrict__ logp, const float* __restrict__ scores,
                                           const int* __restrict__ lens, T* __restrict__ p, float* __restrict__ lse,
                                           int hq, int max_len) {
    const int row = blockIdx.y;  // b·Hq + h
    const int b = row / hq;
    const int len = min(max(lens[b], 0), max_len);
    const size_t base = (size_t)row * max_len;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < max_len; j += gridDim.x * blockDim.x) {
        p[base + j] = from_float<T>(j < len ? __expf(logp[base + j]) : 0.f);
    }
    if (lse != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
        lse[row] = len > 0 ? scores[base] - logp[base] : -CUDART_INF_F;
    }
}

}  // namespace

// scores[b·Hq + h, j] = −inf for j ≥ len_b (grid (ceil(maxLen/256), B·Hq), 256 threads).
extern "C" __global__ void gqa_mask_scores(float* scores, const int* lens, int hq, int max_len) {
    const int row = blockIdx.y;
    const int len = min(max(lens[row / hq], 0), max_len);
    for (int j = len + blockIdx.x * blockDim.x + threadIdx.x; j < max_len; j += gridDim.x * blockDim.x) {
        scores[(size_t)row * max_len + j] = -CUDART_INF_F;
    }
}

extern "C" __global__ void gqa_gather_f16(const __half* pages, const int* table, const int* lens, __half* dst, int hkv,
                                          int d_head, int max_len, int max_pages, int page_shift, int num_pages) {
    gather_body(pages, table, lens, dst, hkv, d_head, max_len, max_pages, page_shift, num_pages);
}
extern "C" __global__ void gqa_gather_bf16(const __nv_bfloat16* pages, const int* table, const int* lens,
                                           __nv_bfloat16* dst, int hkv, int d_head, int max_len, int max_pages,
                                           int page_shift, int num_pages) {
    gather_body(pages, table, lens, dst, hkv, d_head, max_len, max_pages, page_shift, num_pages);
}
extern "C" __global__ void gqa_probs_f16(const float* logp, const float* scores, const int* lens, __half* p,
                                         float* lse, int hq, int max_len) {
    probs_body(logp, scores, lens, p, lse, hq, max_len);
}
extern "C" __global__ void gqa_probs_bf16(const float* logp, const float* scores, const int* lens, __nv_bfloat16* p,
                                          float* lse, int hq, int max_len) {
    probs_body(logp, scores, lens, p, lse, hq, max_len);
}
