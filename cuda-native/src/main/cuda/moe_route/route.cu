// moeRoute: router logits [T, E] -> top-k experts per token -> the device-side layout a grouped GEMM
// consumes (per-expert offsets, row-gather index, router weights in expert order, inverse map).
// Regime: MoE routing for any T (decode T = 1..64 is the common case), E <= 512, k <= 32.
// Floor: T*E*sizeof(logit) read + ~20*T*k bytes written; latency-bound (two launches, four from T*k = 8192).
// Measured (H100 SXM, docs/benchmarks/h100/moe_route.json, every launch, L2 flushed): at 5c6b53f, one block sorting
//   every entry, T=16 14.3 µs (E=64/128 k=8), 13.6 (E=160 k=6), 10.4 (E=8 k=2), T=4096 115.1 µs (E=64 k=8), growing
//   with T*k; at ccdd3d0, the sort over chunks from T*k = 8192 (counts, bases, scatter, as many blocks as chunks):
//   T=4096 32.8 µs (E=64 k=8), 33.6 (E=128), 30.8 (E=160 k=6), 21.8 (E=8 k=2); T=16384 74.6, 76.1, 65.2, 36.9.
// Order: rows inside an expert follow (token, choice) order, so the output is deterministic (no atomics
// decide positions). Top-k compares the raw logits (softmax and sigmoid are monotonic), ties to the
// lower expert index, so selection is bit-identical to the CPU reference.
// Limits: E <= 512 (shared-memory histogram of 16 warps x E), k <= min(E, 32), T*k < 2^31.
#include "gapfill_types.cuh"

using namespace gapfill;

namespace {

// One warp per token: softmax/sigmoid statistics, then k rounds of warp argmax. Each lane owns SLOTS logits (experts
// lane, lane + 32, ...): SLOTS = the power of two >= ceil(E / 32), chosen by the host (MoeRoute.topkSlots), so the
// per-round scan walks only the slots that can hold an expert (E = 64: 2 of them, not 16). Same comparisons and sums
// in the same order whatever SLOTS, so the same results.
template <int SLOTS, typename T>
__device__ void topk_body(const T* __restrict__ logits, int tokens, int experts, int k, int sigmoid, int renormalize,
                          int* __restrict__ topk_ids, float* __restrict__ topk_w) {
    const int lane = threadIdx.x & 31;
    const int token = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (token >= tokens) return;
    const T* row = logits + (size_t)token * experts;
    float v[SLOTS];  // lane owns experts lane, lane+32, ...
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < SLOTS; ++i) {
        const int e = lane + 32 * i;
        // NaN logits are unsupported, but they must not index out of bounds: a NaN compares false with every
        // candidate, so the argmax below could end on no expert at all. Read as -inf, they order like -inf (ties to
        // the lower index) and every lane of the warp agrees on the choice.
        const float x = e < experts ? to_float(row[e]) : -INFINITY;
        v[i] = isnan(x) ? -INFINITY : x;
        m = fmaxf(m, v[i]);
    }
    m = warp_max(m);
    float s = 0.f;
    if (!sigmoid) {
#pragma unroll
        for (int i = 0; i < SLOTS; ++i) s += (lane + 32 * i < experts) ? expf(v[i] - m) : 0.f;
        s = warp_sum(s);
    }
    unsigned taken = 0;  // bit i: expert lane+32i already selected
    float picked_sum = 0.f;
    int my_id = 0;
    float my_w = 0.f;
    for (int j = 0; j < k; ++j) {
        float best = -INFINITY;
        int best_e = 0x7fffffff;
#pragma unroll
        for (int i = 0; i < SLOTS; ++i) {
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
        if (lane == j) { my_id = best_e; my_w = p; }  // choice j stays in lane j's registers (k <= 32)
    }
    // One coalesced store of the k choices, renormalised in registers (the same product as before, so the same bits):
    // lane 0 storing each round and then re-reading its k weights to scale them left a chain of dependent global
    // round trips per token.
    if (lane < k) {
        topk_ids[(size_t)token * k + lane] = my_id;
        topk_w[(size_t)token * k + lane] = renormalize ? my_w * (1.f / picked_sum) : my_w;
    }
}

constexpr int kScatterWarps = 16;

// Exclusive scan of a[0..n) in place by warp 0 (n <= 512: each lane owns a run of ceil(n/32) elements);
// a[n] receives the total. The caller synchronises the block before and after.
__device__ void warp0_exclusive_scan(int* a, int n) {
    if (threadIdx.x >= 32) return;
    const int lane = threadIdx.x;
    const int per = (n + 31) / 32, lo = min(n, lane * per), hi = min(n, lo + per);
    int sum = 0;
    for (int i = lo; i < hi; ++i) sum += a[i];
    int incl = sum;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    int run = incl - sum;
    for (int i = lo; i < hi; ++i) { const int c = a[i]; a[i] = run; run += c; }
    if (lane == 31) a[n] = incl;
}

// One block sorts the entries [begin, end) by expert, stably: each of its warps takes a contiguous segment, counts
// it (pass 1), and places its entries after the earlier warps' (pass 2). Alone (bases == nullptr) the block owns
// every entry: it scans the counts into the offsets. One chunk of many (bases != nullptr): bases[x] is where the
// chunk's first entry of expert x goes (moe_chunk_bases); bases points into row_of at the chunk's own first entries,
// so it is read before the block writes any row_of (the __syncthreads after pass 1 orders them).
__device__ void sort_entries(const int* __restrict__ topk_ids, const float* __restrict__ topk_w, int begin, int end, int k,
                             int experts, const int* bases, int* __restrict__ offsets, int* __restrict__ gather,
                             float* __restrict__ weights, int* row_of) {
    extern __shared__ int smem[];
    int* hist = smem;                                 // [kScatterWarps][experts]: per-warp counts, then bases
    int* start = smem + kScatterWarps * experts;      // [experts + 1]: where each expert's rows of this block begin
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = threadIdx.x; i < kScatterWarps * experts; i += blockDim.x) hist[i] = 0;
    if (bases != nullptr) {
        for (int x = threadIdx.x; x < experts; x += blockDim.x) start[x] = bases[x];
    }
    __syncthreads();
    const int seg = (end - begin + kScatterWarps - 1) / kScatterWarps;
    const int lo = begin + warp * seg, hi = min(end, lo + seg);
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
    // per expert: bases of each warp's run, in entry order, and the expert's count in this block
    for (int x = threadIdx.x; x < experts; x += blockDim.x) {
        int run = 0;
        for (int w = 0; w < kScatterWarps; ++w) {
            const int c = hist[w * experts + x];
            hist[w * experts + x] = run;
            run += c;
        }
        if (bases == nullptr) start[x] = run;
    }
    __syncthreads();
    if (bases == nullptr) {
        warp0_exclusive_scan(start, experts);
        __syncthreads();
        for (int x = threadIdx.x; x <= experts; x += blockDim.x) offsets[x] = start[x];
    }
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

// Chunks of the multi-block sort: chunk c holds entries [c·chunk, (c+1)·chunk), the last one also the remainder
// (chunks = entries / chunk, chunk >= experts), so every chunk has room for its E counts at its own first entries of
// row_of, which nothing else reads or writes until the chunk's own sort block overwrites them.
__device__ __forceinline__ int chunk_begin(int c, int chunk) { return c * chunk; }
__device__ __forceinline__ int chunk_end(int c, int chunk, int chunks, int entries) {
    return c == chunks - 1 ? entries : (c + 1) * chunk;
}

}  // namespace

#define GAPFILL_MOE_TOPK(NAME, T, SLOTS)                                                                            \
    extern "C" __global__ void NAME(const T* l, int t, int e, int k, int sg, int rn, int* ids, float* w) {          \
        topk_body<SLOTS>(l, t, e, k, sg, rn, ids, w);                                                                \
    }
#define GAPFILL_MOE_TOPK_SLOTS(DT, T)                                                                                \
    GAPFILL_MOE_TOPK(moe_topk_##DT##_s1, T, 1)                                                                       \
    GAPFILL_MOE_TOPK(moe_topk_##DT##_s2, T, 2)                                                                       \
    GAPFILL_MOE_TOPK(moe_topk_##DT##_s4, T, 4)                                                                       \
    GAPFILL_MOE_TOPK(moe_topk_##DT##_s8, T, 8)                                                                       \
    GAPFILL_MOE_TOPK(moe_topk_##DT##_s16, T, 16)
GAPFILL_MOE_TOPK_SLOTS(f32, float)
GAPFILL_MOE_TOPK_SLOTS(f16, __half)
GAPFILL_MOE_TOPK_SLOTS(bf16, __nv_bfloat16)

// One block sorts every entry (small T·k: two launches in all).
extern "C" __global__ void __launch_bounds__(kScatterWarps * 32, 1)
moe_scatter(const int* ids, const float* w, int entries, int k, int experts, int* offsets, int* gather, float* weights,
            int* row_of) {
    sort_entries(ids, w, 0, entries, k, experts, nullptr, offsets, gather, weights, row_of);
}

// Multi-block sort, step 1 of 3: block c counts its chunk's entries per expert into row_of[chunk_begin(c) + x].
extern "C" __global__ void moe_chunk_counts(const int* __restrict__ ids, int entries, int chunk, int chunks, int experts,
                                            int* __restrict__ row_of) {
    extern __shared__ int cnt[];
    const int c = blockIdx.x;
    for (int x = threadIdx.x; x < experts; x += blockDim.x) cnt[x] = 0;
    __syncthreads();
    const int end = chunk_end(c, chunk, chunks, entries);
    for (int e = chunk_begin(c, chunk) + threadIdx.x; e < end; e += blockDim.x) atomicAdd(&cnt[ids[e]], 1);
    __syncthreads();
    for (int x = threadIdx.x; x < experts; x += blockDim.x) row_of[chunk_begin(c, chunk) + x] = cnt[x];
}

// Step 2 of 3, one block of 1024 threads: the expert offsets, and in place of each chunk's counts the position of
// its first entry of each expert (the total of the experts before, plus the same expert's count in earlier chunks).
// Thread (part p, expert x) walks a strip of consecutive chunks for expert x.
extern "C" __global__ void __launch_bounds__(1024, 1)
moe_chunk_bases(int entries, int chunk, int chunks, int experts, int* __restrict__ offsets, int* __restrict__ row_of) {
    extern __shared__ int sm[];
    const int parts = max(1, (int)blockDim.x / experts);
    int* part = sm;                      // [parts][experts]: strip sums, then each strip's base within its expert
    int* start = sm + parts * experts;   // [experts + 1]
    const int x = threadIdx.x % experts, p = threadIdx.x / experts;
    const bool active = p < parts;
    const int per = (chunks + parts - 1) / parts;
    const int c0 = min(chunks, p * per), c1 = min(chunks, c0 + per);
    if (active) {
        int sum = 0;
        for (int c = c0; c < c1; ++c) sum += row_of[chunk_begin(c, chunk) + x];
        part[p * experts + x] = sum;
    }
    __syncthreads();
    for (int y = threadIdx.x; y < experts; y += blockDim.x) {
        int run = 0;
        for (int q = 0; q < parts; ++q) { const int v = part[q * experts + y]; part[q * experts + y] = run; run += v; }
        start[y] = run;
    }
    __syncthreads();
    warp0_exclusive_scan(start, experts);
    __syncthreads();
    for (int y = threadIdx.x; y <= experts; y += blockDim.x) offsets[y] = start[y];
    if (active) {
        int run = start[x] + part[p * experts + x];
        int c = c0;
        for (; c + 4 <= c1; c += 4) {  // four loads in flight before the four stores
            int v[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) v[i] = row_of[chunk_begin(c + i, chunk) + x];
#pragma unroll
            for (int i = 0; i < 4; ++i) { row_of[chunk_begin(c + i, chunk) + x] = run; run += v[i]; }
        }
        for (; c < c1; ++c) {
            const int v = row_of[chunk_begin(c, chunk) + x];
            row_of[chunk_begin(c, chunk) + x] = run;
            run += v;
        }
    }
}

// Step 3 of 3: block c sorts its chunk from the bases step 2 left at its first entries of row_of.
extern "C" __global__ void __launch_bounds__(kScatterWarps * 32, 1)
moe_chunk_scatter(const int* ids, const float* w, int entries, int chunk, int chunks, int k, int experts, int* gather,
                  float* weights, int* row_of) {
    const int c = blockIdx.x, begin = chunk_begin(c, chunk);
    sort_entries(ids, w, begin, chunk_end(c, chunk, chunks, entries), k, experts, row_of + begin, nullptr, gather,
                 weights, row_of);
}
