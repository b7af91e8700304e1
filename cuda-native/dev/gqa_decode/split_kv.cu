// BASELINE (no longer shipped): the CUDA-core split-KV kernel that decode_mma.cu replaced, kept for the harness
// (cuda-native/dev/gqa_decode/harness.cu times it as "old"). Measured numbers: h100-decode_mma.txt.
// Grouped-query attention decode, split-KV (FlashDecoding style), contiguous or paged KV cache.
//
// Computes, for sequence b and query head h = kvh·G + g:
//   o[b,h] = softmax(scale · q[b,h] · K[b,kvh,:len_b]ᵀ) · V[b,kvh,:len_b],   lse[b,h] = log Σ_j exp(scale·q·k_j)
//
// Regime: decode (one query row per head), F16/BF16 cache, D ∈ {64, 128, 256}, any G = Hq/Hkv (heads are
// processed in tiles of GT ∈ {1, 2, 4, 8}; G > 8 uses ceil(G/8) head tiles, each re-reading its K/V range),
// sm_80 and sm_90a. Memory-bound by design: every K/V byte of the first len_b rows is read once per head tile.
// Floor: bytes = Σ_b len_b·Hkv·D·2 (K and V)·sizeof(T) + 2·B·Hq·D·sizeof(T) (q, o), over copy bandwidth.
//
// Structure:
//   gqa_split_kv_*: grid (split, kv head × head tile, b), 128 threads. The split's key range
//     [split·chunk, min((split+1)·chunk, len_b)) is walked by groups of TPR = D/8 threads; each thread owns 8
//     dims (one 16-byte load per K row and per V row) and all GT query heads of its kv head, so K and V are read
//     once for the whole group of heads. Each group takes U consecutive keys per step (U 16-byte K loads and U
//     V loads in flight per thread), reduces the GT·U partial dot products over its TPR lanes with butterfly
//     shuffles, and keeps an fp32 online softmax (running max m, sum l, accumulator o) in base-2 units
//     (scale·log2(e) is folded into q). At the end the groups of the block merge through shared memory.
//     splits == 1: the block writes o (rounded once to T) and lse directly. splits > 1: it writes the
//     normalised partial o and its base-2 lse to the fp32 workspace; empty splits exit at once.
//   gqa_merge_*: grid (Hq, B), D threads: combines the ceil(len_b/chunk) active splits of (b, h) with their
//     log-sum-exp weights and writes o and lse (natural log; -inf and zeros when len_b == 0).
//
// Lengths live on the device and are read by the kernels, so one launch sequence serves every length vector
// (CUDA-graph capturable): lengths are clamped to [0, maxLen] (the plan's maxLen, ≤ the cache capacity).
// Paged caches: pages [P, pageSize, Hkv, D], block table int32 [B, maxPages]; pageSize a power of two. Page
// numbers are trusted (not range-checked on the device).
//
// Registers (ptxas, sm_90a, f16): g1 78, g2 111, g4 153, g8 223; no spills; 16 KiB·GT/4 static shared memory.
// Measured (H100 80GB HBM3 SXM, 132 SMs, driver 580.159, copy 3002 GB/s, commit 30c10a3, harness
// cuda-native/dev/gqa_decode, output h100-30c10a3.txt; splits by a 2·SM block target: GqaDecodeHeuristics targets 4·SM after the split sweep):
//   G = 1 (32/32 d128, f16 BHLD): 85-86 % of the floor at B=16 L ≥ 8192, 81-82 % at B=64 L ≥ 2048, 0.85-1.09x the
//     cuBLAS composition (GEMM, fused mask+softmax, GEMM); paged16: 1.34-2.72x it (its gather dominates).
//   G = 4 (32/8 d128): 59-63 % of floor at B=16 L ≥ 8192; B=1 L=4096 29.9 µs (floor 5.6, PyTorch SDPA 31.6);
//     B=1 L=131072 402 µs = 1.77x cuBLAS; loses to cuBLAS (0.57-0.98x) for B·Hkv ≥ 32 contiguous.
//   G = 7..8 (64/8, 28/4, 16/2 d64): 19-32 % of floor: instruction- and latency-bound (per key and thread: GT·8
//     FMAs, GT·log2(TPR) shuffles, GT exp2 for q·k; 224 registers leave 8 warps per SM, and the loop waits on
//     its loads every step). 0.32-0.80x cuBLAS at B·Hkv ≥ 16 contiguous; up to 5x at B=1 L=131072 d64.
//   Small problems: ≥ 20 µs even at B=1 L=512 (two launches plus latency-bound steps), where cuBLAS takes 14-22 µs.
//   Paged (random page order) within 0-7 % of contiguous on most rows, worst 12.5 %.
// Next (all three wait in cuda-native/dev/gqa_decode, correctness-checked before timing, not yet measured):
// mma.sync for the G heads (split_kv_mma.cu), a register double buffer (split_kv_prefetch.cu), head tile 4 for G = 8.
// Limits: q/o/K/V 16-byte aligned (validated in Java); B ≤ 65535, Hkv·headTiles ≤ 65535 (grid y/z);
// q/o element counts < 2^31, cache offsets 64-bit.
#include "gapfill_types.cuh"

#include <math_constants.h>

using namespace gapfill;

namespace {

constexpr int kThreads = 128;                  // 4 warps per block
constexpr float kLn2 = 0.6931471805599453f;

// Everything the split kernel needs besides the pointers.
struct SplitArgs {
    int hq, hkv, g, head_tiles, splits, chunk, max_len, max_pages, page_shift;
    long long stride_b, stride_h, stride_l, page_stride;  // elements
    float scale_log2;                                     // scale · log2(e)
};

// Element offset of row `pos` of kv head `kvh` in sequence b (contiguous: strides; paged: via the table).
__device__ __forceinline__ long long kv_row(const int* __restrict__ table, int b, int kvh, int pos, const SplitArgs& a) {
    long long row;
    if (table != nullptr) {
        const int page = __ldg(table + (size_t)b * a.max_pages + (pos >> a.page_shift));
        row = (long long)page * a.page_stride + (long long)(pos & ((1 << a.page_shift) - 1)) * a.stride_l;
    } else {
        row = (long long)b * a.stride_b + (long long)pos * a.stride_l;
    }
    return row + (long long)kvh * a.stride_h;
}

template <typename T>
__device__ __forceinline__ void to_float8(const Vec16<T>& v, float (&f)[8]) {
#pragma unroll
    for (int e = 0; e < 8; ++e) f[e] = to_float(v.v[e]);
}

template <typename T, int D, int GT, int U>
__device__ __forceinline__ void split_kv_body(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                              const int* __restrict__ table, const int* __restrict__ lens,
                                              T* __restrict__ out, float* __restrict__ lse, float* __restrict__ part_o,
                                              float* __restrict__ part_lse, const SplitArgs a) {
    static_assert(sizeof(T) == 2, "K/V are 16-bit: 8 elements per 16-byte load");
    static_assert(D == 64 || D == 128 || D == 256, "head dim must be 64, 128 or 256");
    constexpr int TPR = D / 8;              // threads per K/V row, 8 dims each
    constexpr int KPW = 32 / TPR;           // groups (rows in flight) per warp
    constexpr int NW = kThreads / 32;       // warps per block
    constexpr int NG = kThreads / TPR;      // groups per block
    constexpr int STEP = NW * KPW * U;      // keys the block consumes per iteration
    static_assert(TPR <= 32 && 32 % TPR == 0, "a K row must map onto a power-of-two slice of one warp");

    __shared__ __align__(16) float s_o[NG * GT * D];  // [NG, GT, D] per-group accumulators
    __shared__ float s_m[NG * GT];                    // [NG, GT] running max (base 2)
    __shared__ float s_l[NG * GT];                    // [NG, GT] running sum

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int gw = lane / TPR;              // group inside the warp
    const int sub = lane % TPR;             // which 8 dims of the row
    const int group = warp * KPW + gw;
    const int split = blockIdx.x;
    const int kvh = blockIdx.y / a.head_tiles;
    const int tile = blockIdx.y % a.head_tiles;
    const int b = blockIdx.z;

    const int len = min(max(lens[b], 0), a.max_len);
    const int start = split * a.chunk;
    const int end = min(start + a.chunk, len);
    if (a.splits > 1 && start >= len) {
        return;  // inactive split: the merge kernel reads only the first ceil(len/chunk) splits
    }

    // q of the GT heads of this tile, pre-scaled by scale·log2(e): [GT, 8] in registers.
    float qf[GT][8];
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        const int gh = tile * GT + j;
        if (gh < a.g) {
            const Vec16<T> qv = load16(q + ((size_t)b * a.hq + (size_t)kvh * a.g + gh) * D + sub * 8);
#pragma unroll
            for (int e = 0; e < 8; ++e) qf[j][e] = to_float(qv.v[e]) * a.scale_log2;
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) qf[j][e] = 0.f;
        }
    }

    float m[GT], l[GT], o[GT][8];
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        m[j] = -CUDART_INF_F;
        l[j] = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) o[j][e] = 0.f;
    }

    // Warp-uniform loop: every lane iterates the same number of times, so full-mask shuffles are safe.
    for (int base = start + warp * KPW * U; base < end; base += STEP) {
        Vec16<T> kv[U], vv[U];
        bool valid[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {  // issue all 2·U loads before using any
            const int pos = base + gw * U + u;
            valid[u] = pos < end;
            if (valid[u]) {
                const long long row = kv_row(table, b, kvh, pos, a) + sub * 8;
                kv[u] = load16_stream(k + row);
                vv[u] = load16_stream(v + row);
            } else {
                kv[u].raw = make_uint4(0, 0, 0, 0);
                vv[u].raw = make_uint4(0, 0, 0, 0);
            }
        }
        // s[u][j] = q_j · k_u over this thread's 8 dims, then over the TPR lanes of the group.
        float s[U][GT];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            float kf[8];
            to_float8(kv[u], kf);
#pragma unroll
            for (int j = 0; j < GT; ++j) {
                float acc = 0.f;
#pragma unroll
                for (int e = 0; e < 8; ++e) acc = fmaf(qf[j][e], kf[e], acc);
                s[u][j] = acc;
            }
        }
#pragma unroll
        for (int off = TPR / 2; off > 0; off /= 2) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
#pragma unroll
                for (int j = 0; j < GT; ++j) s[u][j] += __shfl_xor_sync(0xffffffffu, s[u][j], off);
            }
        }
        // Online softmax: one rescale per U keys.
#pragma unroll
        for (int j = 0; j < GT; ++j) {
            float mx = m[j];
#pragma unroll
            for (int u = 0; u < U; ++u) mx = valid[u] ? fmaxf(mx, s[u][j]) : mx;
            const float corr = mx == -CUDART_INF_F ? 1.f : exp2f(m[j] - mx);  // exp2(-inf) = 0 on the first keys
            m[j] = mx;
            l[j] *= corr;
#pragma unroll
            for (int e = 0; e < 8; ++e) o[j][e] *= corr;
        }
#pragma unroll
        for (int u = 0; u < U; ++u) {
            float vf[8];
            to_float8(vv[u], vf);
#pragma unroll
            for (int j = 0; j < GT; ++j) {
                const float p = valid[u] ? exp2f(s[u][j] - m[j]) : 0.f;
                l[j] += p;
#pragma unroll
                for (int e = 0; e < 8; ++e) o[j][e] = fmaf(p, vf[e], o[j][e]);
            }
        }
    }

    // Merge the NG groups of the block: [NG, GT, D] partials in shared memory.
#pragma unroll
    for (int j = 0; j < GT; ++j) {
        float4* dst = reinterpret_cast<float4*>(s_o + (group * GT + j) * D + sub * 8);
        dst[0] = make_float4(o[j][0], o[j][1], o[j][2], o[j][3]);
        dst[1] = make_float4(o[j][4], o[j][5], o[j][6], o[j][7]);
    }
    if (sub == 0) {
#pragma unroll
        for (int j = 0; j < GT; ++j) {
            s_m[group * GT + j] = m[j];
            s_l[group * GT + j] = l[j];
        }
    }
    __syncthreads();

    for (int idx = tid; idx < GT * D; idx += kThreads) {
        const int j = idx / D;
        const int d = idx % D;
        const int gh = tile * GT + j;
        if (gh >= a.g) {
            continue;
        }
        float mx = -CUDART_INF_F;
#pragma unroll 4
        for (int gr = 0; gr < NG; ++gr) mx = fmaxf(mx, s_m[gr * GT + j]);
        float sum = 0.f, acc = 0.f;
        if (mx != -CUDART_INF_F) {
#pragma unroll 4
            for (int gr = 0; gr < NG; ++gr) {
                const float w = exp2f(s_m[gr * GT + j] - mx);  // empty groups: exp2(-inf) = 0
                sum = fmaf(s_l[gr * GT + j], w, sum);
                acc = fmaf(s_o[(gr * GT + j) * D + d], w, acc);
            }
        }
        const float res = sum > 0.f ? acc / sum : 0.f;
        const float lse2 = sum > 0.f ? mx + log2f(sum) : -CUDART_INF_F;  // base-2 log-sum-exp
        const size_t bh = (size_t)b * a.hq + (size_t)kvh * a.g + gh;
        if (a.splits == 1) {
            out[bh * D + d] = from_float<T>(res);
            if (lse != nullptr && d == 0) lse[bh] = sum > 0.f ? lse2 * kLn2 : -CUDART_INF_F;
        } else {
            part_o[(bh * a.splits + split) * D + d] = res;
            if (d == 0) part_lse[bh * a.splits + split] = lse2;
        }
    }
}

// Combines the active splits of (b, h): o = Σ_s w_s·o_s / Σ_s w_s with w_s = 2^(lse_s − max), one thread per dim.
template <typename T>
__device__ __forceinline__ void merge_body(const float* __restrict__ part_o, const float* __restrict__ part_lse,
                                           const int* __restrict__ lens, T* __restrict__ out, float* __restrict__ lse,
                                           int hq, int d_head, int splits, int chunk, int max_len) {
    const int h = blockIdx.x;
    const int b = blockIdx.y;
    const int d = threadIdx.x;
    const int len = min(max(lens[b], 0), max_len);
    const int active = len == 0 ? 0 : min(splits, (len + chunk - 1) / chunk);
    const size_t bh = (size_t)b * hq + h;
    const float* pl = part_lse + bh * splits;  // [splits] base-2 lse of each split
    float mx = -CUDART_INF_F;
    for (int s = 0; s < active; ++s) mx = fmaxf(mx, pl[s]);
    float sum = 0.f, acc = 0.f;
    if (mx != -CUDART_INF_F) {
        for (int s = 0; s < active; ++s) {
            const float w = exp2f(pl[s] - mx);
            sum += w;
            acc = fmaf(w, part_o[(bh * splits + s) * d_head + d], acc);
        }
    }
    out[bh * d_head + d] = from_float<T>(sum > 0.f ? acc / sum : 0.f);
    if (lse != nullptr && d == 0) lse[bh] = sum > 0.f ? (mx + log2f(sum)) * kLn2 : -CUDART_INF_F;
}

}  // namespace

// U keys per group step: 4 keeps 8 16-byte loads in flight per thread; the 8-head tile holds twice the
// registers for q and o, so it takes 2 keys per step to stay clear of spills.
#define GQA_SPLIT_KV(NAME, T, D, GT)                                                                              \
    extern "C" __global__ void __launch_bounds__(kThreads, 1) NAME(                                                  \
        const T* q, const T* k, const T* v, const int* table, const int* lens, T* out, float* lse, float* part_o,  \
        float* part_lse, int hq, int hkv, int g, int head_tiles, int splits, int chunk, int max_len,              \
        int max_pages, int page_shift, long long stride_b, long long stride_h, long long stride_l,                \
        long long page_stride, float scale_log2) {                                                                \
        const SplitArgs a{hq,       hkv,      g,        head_tiles, splits,      chunk,     max_len,               \
                          max_pages, page_shift, stride_b, stride_h,   stride_l,    page_stride, scale_log2};        \
        split_kv_body<T, D, GT, (GT >= 8 ? 2 : 4)>(q, k, v, table, lens, out, lse, part_o, part_lse, a);           \
    }

#define GQA_SPLIT_KV_ALL_G(TN, T, D)          \
    GQA_SPLIT_KV(gqa_split_kv_##TN##_d##D##_g1, T, D, 1) \
    GQA_SPLIT_KV(gqa_split_kv_##TN##_d##D##_g2, T, D, 2) \
    GQA_SPLIT_KV(gqa_split_kv_##TN##_d##D##_g4, T, D, 4) \
    GQA_SPLIT_KV(gqa_split_kv_##TN##_d##D##_g8, T, D, 8)

GQA_SPLIT_KV_ALL_G(f16, __half, 64)
GQA_SPLIT_KV_ALL_G(f16, __half, 128)
GQA_SPLIT_KV_ALL_G(f16, __half, 256)
GQA_SPLIT_KV_ALL_G(bf16, __nv_bfloat16, 64)
GQA_SPLIT_KV_ALL_G(bf16, __nv_bfloat16, 128)
GQA_SPLIT_KV_ALL_G(bf16, __nv_bfloat16, 256)

extern "C" __global__ void gqa_merge_f16(const float* part_o, const float* part_lse, const int* lens, __half* out,
                                         float* lse, int hq, int d_head, int splits, int chunk, int max_len) {
    merge_body(part_o, part_lse, lens, out, lse, hq, d_head, splits, chunk, max_len);
}
extern "C" __global__ void gqa_merge_bf16(const float* part_o, const float* part_lse, const int* lens,
                                          __nv_bfloat16* out, float* lse, int hq, int d_head, int splits, int chunk,
                                          int max_len) {
    merge_body(part_o, part_lse, lens, out, lse, hq, d_head, splits, chunk, max_len);
}
