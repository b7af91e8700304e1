// moeRoute: router logits [T, E] -> top-k experts per token -> the device-side layout a grouped GEMM
// consumes (per-expert offsets, row-gather index, router weights in expert order, inverse map).
// Regime: MoE routing for any T (decode T = 1..64 is the common case), E <= 512, k <= 32.
// Floor: T*E*sizeof(logit) read + ~20*T*k bytes written; latency-bound (two launches) below T ~ 10^4.
// Measured (H100 SXM, commit 5c6b53f, docs/benchmarks/h100/moe_route.json, both launches, L2 flushed): T=16 14.3 µs
//   (E=64/128 k=8), 13.6 (E=160 k=6), 10.4 (E=8 k=2); T=4096 115.1 µs (E=64 k=8), 123.7 (E=128), 97.6 (E=160 k=6),
//   24.7 (E=8 k=2): the one-block scatter sorting T·k entries is what grows with T.
// Order: rows inside an expert follow (token, choice) order, so the output is deterministic (no atomics
// decide positions). Top-k compares the raw logits (softmax and sigmoid are monotonic), ties to the
// lower expert index, so selection is bit-identical to the CPU reference.
// Limits: E <= 512 (shared-memory histogram of 16 warps x E), k <= min(E, 32), T*k < 2^31.
#include "gapfill_types.cuh"

using namespace gapfill;

namespace {

constexpr int kMaxExpertsPerLane = 16;  // E <= 512 = 32 lanes x 16

// One warp per token: softmax/sigmoid statistics, then k rounds of warp argmax.
template <typename T>
__device__ void topk_body(const T* __restrict__ logits, int tokens, int experts, int k, int sigmoid, int renormalize,
                          int* __restrict__ topk_ids, float* __restrict__ topk_w) {
    const int lane = threadIdx.x & 31;
    const int token = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (token >= tokens) return;
    const T* row = logits + (size_t)token * experts;
    float v[kMaxExpertsPerLane];  // lane owns experts lane, lane+32, ...
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kMaxExpertsPerLane; ++i) {
        const int e = lane + 32 * i;
        v[i] = e < experts ? to_float(row[e]) : -INFINITY;
        m = fmaxf(m, v[i]);
    }
    m = warp_max(m);
    float s = 0.f;
    if (!sigmoid) {
#pragma unroll
        for (int i = 0; i < kMaxExpertsPerLane; ++i) s += (lane + 32 * i < experts) ? expf(v[i] - m) : 0.f;
        s = warp_sum(s);
    }
    unsigned taken = 0;  // bit i: expert lane+32i already selected
    float picked_sum = 0.f;
    for (int j = 0; j < k; ++j) {
        float best = -INFINITY;
        int best_e = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < kMaxExpertsPerLane; ++i) {
            const int e = lane + 32 * i;
            const bool free_slot = e < experts && !((taken >> i) & 1u);
            if (free_slot && (v[i] > best || (v[i] == best && e < best_e))) { best = v[i]; best_e = e; }
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {  // argmax, ties to the lower expert index
            const float ob = __shfl_xor_sync(0xffffffffu, best, o);
            const int oe = __shfl_xor_sync(0xffffffffu, best_e, o);
            if (ob > best || (ob == best && oe < best_e)) { best = ob; best_e = oe; }
        }
        if ((best_e & 31) == lane) taken |= 1u << (best_e >> 5);
        const float p = sigmoid ? 1.f / (1.f + expf(-best)) : expf(best - m) / s;
        picked_sum += p;
        if (lane == 0) {
            topk_ids[(size_t)token * k + j] = best_e;
            topk_w[(size_t)token * k + j] = p;
        }
    }
    if (renormalize && lane == 0) {
        const float inv = 1.f / picked_sum;
        for (int j = 0; j < k; ++j) topk_w[(size_t)token * k + j] *= inv;
    }
}

constexpr int kScatterWarps = 16;

// One block: stable counting sort of the T*k (token, choice) entries by expert.
__device__ void scatter_body(const int* __restrict__ topk_ids, const float* __restrict__ topk_w, int entries, int k,
                             int experts, int* __restrict__ offsets, int* __restrict__ gather, float* __restrict__ weights,
                             int* __restrict__ row_of) {
    extern __shared__ int smem[];
    int* hist = smem;                                 // [kScatterWarps][experts]: per-warp counts, then bases
    int* start = smem + kScatterWarps * experts;      // [experts + 1]: offsets
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = threadIdx.x; i < kScatterWarps * experts; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    const int seg = (entries + kScatterWarps - 1) / kScatterWarps;
    const int lo = warp * seg, hi = min(entries, lo + seg);
    int* my = hist + warp * experts;
    const unsigned lt = (1u << lane) - 1u;
    // pass 1: per-warp histograms
    for (int base = lo; base < hi; base += 32) {
        const int e = base + lane;
        const bool valid = e < hi;
        const int x = valid ? topk_ids[e] : experts + lane;  // distinct sentinels for idle lanes
        const unsigned same = __match_any_sync(0xffffffffu, x);
        if (valid && (same & lt) == 0) my[x] += __popc(same);
        __syncwarp();
    }
    __syncthreads();
    // per expert: bases of each warp's run, in entry order, and the expert's count
    for (int x = threadIdx.x; x < experts; x += blockDim.x) {
        int run = 0;
        for (int w = 0; w < kScatterWarps; ++w) {
            const int c = hist[w * experts + x];
            hist[w * experts + x] = run;
            run += c;
        }
        start[x] = run;
    }
    __syncthreads();
    if (threadIdx.x == 0) {  // exclusive scan of counts (E <= 512)
        int acc = 0;
        for (int x = 0; x < experts; ++x) { const int c = start[x]; start[x] = acc; acc += c; }
        start[experts] = acc;
    }
    __syncthreads();
    for (int x = threadIdx.x; x <= experts; x += blockDim.x) offsets[x] = start[x];
    // pass 2: stable positions
    for (int base = lo; base < hi; base += 32) {
        const int e = base + lane;
        const bool valid = e < hi;
        const int x = valid ? topk_ids[e] : experts + lane;
        const unsigned same = __match_any_sync(0xffffffffu, x);
        int pos = 0;
        if (valid) pos = start[x] + my[x] + __popc(same & lt);
        __syncwarp();
        if (valid && (same & lt) == 0) my[x] += __popc(same);
        __syncwarp();
        if (valid) {
            gather[pos] = e / k;
            weights[pos] = topk_w[e];
            row_of[e] = pos;
        }
    }
}

}  // namespace

extern "C" __global__ void moe_topk_f32(const float* l, int t, int e, int k, int sg, int rn, int* ids, float* w) {
    topk_body(l, t, e, k, sg, rn, ids, w);
}
extern "C" __global__ void moe_topk_f16(const __half* l, int t, int e, int k, int sg, int rn, int* ids, float* w) {
    topk_body(l, t, e, k, sg, rn, ids, w);
}
extern "C" __global__ void moe_topk_bf16(const __nv_bfloat16* l, int t, int e, int k, int sg, int rn, int* ids, float* w) {
    topk_body(l, t, e, k, sg, rn, ids, w);
}
extern "C" __global__ void __launch_bounds__(kScatterWarps * 32, 1)
moe_scatter(const int* ids, const float* w, int entries, int k, int experts, int* offsets, int* gather, float* weights,
            int* row_of) {
    scatter_body(ids, w, entries, k, experts, offsets, gather, weights, row_of);
}
