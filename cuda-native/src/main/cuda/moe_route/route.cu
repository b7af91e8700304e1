// moeRoute: router logits [T, E] -> top-k experts per token -> the device-side layout a grouped GEMM
// consumes (per-expert offsets, row-gather index, router weights in expert order, inverse map).
// Regime: MoE routing for any T (decode T = 1..64 is the common case), E <= 512, k <= 32.
// Floor: T*E*sizeof(logit) read + ~20*T*k bytes written; latency-bound (one launch up to T = 16, two below T*k = 8192
// (4096 where E >= 64), four from there).
// Measured (H100 SXM, docs/benchmarks/h100/moe_route.json, every launch, L2 flushed): at 5c6b53f, one block sorting
//   every entry, T=16 14.3 µs (E=64/128 k=8), 13.6 (E=160 k=6), 10.4 (E=8 k=2), T=4096 115.1 µs (E=64 k=8), growing
//   with T*k; at ccdd3d0, the sort over chunks from T*k = 8192 (counts, bases, scatter, as many blocks as chunks):
//   T=4096 32.8 µs (E=64 k=8), 33.6 (E=128), 30.8 (E=160 k=6), 21.8 (E=8 k=2); T=16384 74.6, 76.1, 65.2, 36.9.
//   At 402b926 (top-k sized to E, choices stored once): T=16 10.6 µs (E=64 k=8), T=4096 22.9, T=16384 37.8.
// Order: rows inside an expert follow (token, choice) order, so the output is deterministic (no atomics
// decide positions). Top-k compares the raw logits (softmax and sigmoid are monotonic), ties to the
// lower expert index, so selection is bit-identical to the CPU reference.
// Limits: E <= 512 (shared-memory histogram of 16 warps x E), k <= min(E, 32), T*k < 2^31.
#include "gapfill_types.cuh"

using namespace gapfill;

namespace {

// Order-preserving 32-bit key of a logit (never NaN: read as -inf): a larger key is a larger float, and -0 reads as +0,
// so keys tie exactly where the float comparison does. Key 0 is below every logit (it would be a negative NaN), so it
// marks "no candidate".
__device__ __forceinline__ unsigned order_key(float x) {
    const unsigned u = __float_as_uint(x == 0.f ? 0.f : x);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float from_order_key(unsigned key) {
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// Lane's logits of one token row: SLOTS per lane (experts lane, lane + 32, ...), -inf past E. SLOTS = the power of two
// >= ceil(E / 32), chosen by the host (MoeRoute.topkSlots), so the per-round scan walks only the slots that can hold an
// expert (E = 64: 2 of them, not 16).
template <int SLOTS, typename T>
__device__ __forceinline__ void load_row(const T* __restrict__ row, int experts, int lane, float (&v)[SLOTS]) {
#pragma unroll
    for (int i = 0; i < SLOTS; ++i) {
        const int e = lane + 32 * i;
        // NaN logits are unsupported, but they must not index out of bounds: a NaN compares false with every
        // candidate, so the argmax below could end on no expert at all. Read as -inf, they order like -inf (ties to
        // the lower index) and every lane of the warp agrees on the choice.
        const float x = e < experts ? to_float(row[e]) : -INFINITY;
        v[i] = isnan(x) ? -INFINITY : x;
    }
}

// One warp selects one token's k experts: softmax/sigmoid statistics, then k rounds of warp argmax. Choice j ends in
// lane j's registers (k <= 32), its weight renormalised there. Each round is two warp reductions (redux.sync, sm_80+):
// the largest key, then the lowest expert among the lanes holding it, which is the float argmax with ties to the lower
// index; the shuffle butterfly of value and index it replaces took ten dependent shuffles a round. Same selection,
// same sums in the same order, so the same bits.
// NT rows in lockstep (NT tokens of one warp): the same per-row arithmetic as NT = 1, each row's chain interleaved with
// the others', so a warp's second token overlaps its first one's reduction latency instead of following it.
template <int SLOTS, int NT>
__device__ __forceinline__ void select_rows(const float (&v)[NT][SLOTS], int experts, int k, int sigmoid,
                                            int renormalize, int lane, int (&my_id)[NT], float (&my_w)[NT]) {
    unsigned key[NT][SLOTS];  // 0 once taken or past E
    float m[NT], s[NT], picked_sum[NT];
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        unsigned top = 0u;
#pragma unroll
        for (int i = 0; i < SLOTS; ++i) {
            key[n][i] = lane + 32 * i < experts ? order_key(v[n][i]) : 0u;
            top = max(top, key[n][i]);
        }
        // the row's maximum: -0 and +0 give the same exp(v - m) bits, so the key's +0 changes nothing
        m[n] = from_order_key(__reduce_max_sync(0xffffffffu, top));
    }
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        s[n] = 0.f;
        if (!sigmoid) {
#pragma unroll
            for (int i = 0; i < SLOTS; ++i) s[n] += (lane + 32 * i < experts) ? expf(v[n][i] - m[n]) : 0.f;
            s[n] = warp_sum(s[n]);
        }
        picked_sum[n] = 0.f;
        my_id[n] = 0;
        my_w[n] = 0.f;
    }
    for (int j = 0; j < k; ++j) {
#pragma unroll
        for (int n = 0; n < NT; ++n) {
            unsigned best = 0u;
            unsigned best_e = 0xffffffffu;
#pragma unroll
            for (int i = 0; i < SLOTS; ++i) {  // slots ascend in expert index: strictly larger keeps the lower one
                if (key[n][i] > best) { best = key[n][i]; best_e = lane + 32 * i; }
            }
            const unsigned kmax = __reduce_max_sync(0xffffffffu, best);
            const int chosen = (int)__reduce_min_sync(0xffffffffu, best == kmax ? best_e : 0xffffffffu);
            if ((chosen & 31) == lane) {
#pragma unroll
                for (int i = 0; i < SLOTS; ++i) key[n][i] = (chosen >> 5) == i ? 0u : key[n][i];
            }
            const float x = from_order_key(kmax);  // the chosen logit (+0 for -0: same exp bits)
            const float p = sigmoid ? 1.f / (1.f + expf(-x)) : expf(x - m[n]) / s[n];
            picked_sum[n] += p;
            if (lane == j) { my_id[n] = chosen; my_w[n] = p; }
        }
    }
#pragma unroll
    for (int n = 0; n < NT; ++n) {
        if (renormalize) my_w[n] = my_w[n] * (1.f / picked_sum[n]);
    }
}

// One warp per token. One coalesced store of the k choices (lane 0 storing each round and then re-reading its k
// weights to scale them left a chain of dependent global round trips per token).
template <int SLOTS, typename T>
__device__ void topk_body(const T* __restrict__ logits, int tokens, int experts, int k, int sigmoid, int renormalize,
                          int* __restrict__ topk_ids, float* __restrict__ topk_w) {
    const int lane = threadIdx.x & 31;
    const int token = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (token >= tokens) return;
    float v[1][SLOTS];
    load_row<SLOTS>(logits + (size_t)token * experts, experts, lane, v[0]);
    int id[1];
    float w[1];
    select_rows<SLOTS, 1>(v, experts, k, sigmoid, renormalize, lane, id, w);
    if (lane < k) {
        topk_ids[(size_t)token * k + lane] = id[0];
        topk_w[(size_t)token * k + lane] = w[0];
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

// Small T in one launch: one block of kScatterWarps warps selects every token (17 to 32 tokens: warp w takes w and
// w + 16 in lockstep; otherwise tokens w, w + 16, ... one after the other, the next row's logits loaded before the
// current row's rounds) and then sorts the entries, which it keeps in shared memory beside the sort's histograms. The
// two-launch path paid a second launch and a global round trip between them.
template <int SLOTS, typename T>
__device__ void route_block(const T* __restrict__ logits, int tokens, int experts, int k, int sigmoid, int renormalize,
                            int* __restrict__ topk_ids, float* __restrict__ topk_w, int* __restrict__ offsets,
                            int* __restrict__ gather, float* __restrict__ weights, int* __restrict__ row_of) {
    extern __shared__ int smem[];
    const int entries = tokens * k;
    int* s_ids = smem + kScatterWarps * experts + experts + 1;  // after sort_entries' hist and start
    float* s_w = reinterpret_cast<float*>(s_ids + entries);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    // up to two tokens per warp: selected in lockstep (select_rows), the second row a copy of the first where the warp
    // has one token only (computed, not stored)
    auto store = [&](int tok, int id, float w) {
        if (lane < k) {
            const int at = tok * k + lane;
            topk_ids[at] = id;
            topk_w[at] = w;
            s_ids[at] = id;
            s_w[at] = w;
        }
    };
    if (tokens > kScatterWarps && tokens <= 2 * kScatterWarps) {
        const int t1 = warp + kScatterWarps;
        float rows[2][SLOTS];
        load_row<SLOTS>(logits + (size_t)warp * experts, experts, lane, rows[0]);
        load_row<SLOTS>(logits + (size_t)(t1 < tokens ? t1 : warp) * experts, experts, lane, rows[1]);
        int id[2];
        float w[2];
        select_rows<SLOTS, 2>(rows, experts, k, sigmoid, renormalize, lane, id, w);
        store(warp, id[0], w[0]);
        if (t1 < tokens) store(t1, id[1], w[1]);
    } else {
        float v[1][SLOTS], next[SLOTS];
        if (warp < tokens) load_row<SLOTS>(logits + (size_t)warp * experts, experts, lane, v[0]);
        for (int tok = warp; tok < tokens; tok += kScatterWarps) {
            const int after = tok + kScatterWarps;
            if (after < tokens) load_row<SLOTS>(logits + (size_t)after * experts, experts, lane, next);
            int id[1];
            float w[1];
            select_rows<SLOTS, 1>(v, experts, k, sigmoid, renormalize, lane, id, w);
            store(tok, id[0], w[0]);
#pragma unroll
            for (int i = 0; i < SLOTS; ++i) v[0][i] = next[i];
        }
    }
    __syncthreads();
    sort_entries(s_ids, s_w, 0, entries, k, experts, nullptr, offsets, gather, weights, row_of);
}

}  // namespace

// Per dtype and logits-per-lane count: the top-k kernel (one warp per token) and, for small T, the one-launch route
// (route_block: selection and sort in one block; dynamic shared memory: the sort's (kScatterWarps·E + E + 1) ints, then
// T·k ids and T·k weights).
#define GAPFILL_MOE_SLOTS(DT, T, SLOTS)                                                                             \
    extern "C" __global__ void moe_topk_##DT##_s##SLOTS(const T* l, int t, int e, int k, int sg, int rn, int* ids,   \
                                                        float* w) {                                                  \
        topk_body<SLOTS>(l, t, e, k, sg, rn, ids, w);                                                                \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(kScatterWarps * 32, 1)                                              \
    moe_route_block_##DT##_s##SLOTS(const T* l, int t, int e, int k, int sg, int rn, int* ids, float* w,             \
                                    int* offsets, int* gather, float* weights, int* row_of) {                        \
        route_block<SLOTS>(l, t, e, k, sg, rn, ids, w, offsets, gather, weights, row_of);                            \
    }
#define GAPFILL_MOE_DTYPE(DT, T)                                                                                     \
    GAPFILL_MOE_SLOTS(DT, T, 1) GAPFILL_MOE_SLOTS(DT, T, 2) GAPFILL_MOE_SLOTS(DT, T, 4) GAPFILL_MOE_SLOTS(DT, T, 8)  \
    GAPFILL_MOE_SLOTS(DT, T, 16)
GAPFILL_MOE_DTYPE(f32, float)
GAPFILL_MOE_DTYPE(f16, __half)
GAPFILL_MOE_DTYPE(bf16, __nv_bfloat16)

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
