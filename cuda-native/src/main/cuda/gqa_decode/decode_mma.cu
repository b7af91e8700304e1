// Grouped-query attention decode on tensor cores: split-KV, cp.async ring per warp, fused split merge.
//
// Computes, for sequence b and query head h = kvh·G + g:
//   o[b,h] = softmax(scale · q[b,h] · K[b,kvh,:len_b]ᵀ) · V[b,kvh,:len_b],   lse[b,h] = log Σ_j exp(scale·q·k_j)
//
// Regime: decode (one query row per head), F16/BF16 cache, D ∈ {64, 128, 256}, any G = Hq/Hkv (query heads in tiles
// of 16: G > 16 uses ceil(G/16) tiles, each re-reading its K/V range; G < 16 pads the tile with zero rows), sm_80 and
// sm_90a (mma.sync, ldmatrix, cp.async only). Memory-bound by design: every K/V byte of the first len_b rows is read
// once per head tile. Floor: bytes = Σ_b len_b·Hkv·D·2 (K and V)·sizeof(T) + 2·B·Hq·D·sizeof(T), over copy bandwidth.
//
// Structure (gqa_decode_mma_<t>_d<D>): grid (split, kv head × head tile, b), 128 threads = 4 warps, dynamic shared
// memory = the q tile [16, D] + per warp a ring of NST stages of one 16-key K tile and one V tile ([16, D] each).
// gqa_decode_mma_w8_<t>_d64 is the same code with 8 warps (256 threads; the block walks 128 keys at a time, the warp
// merge runs over 8 entries), which GqaDecodeHeuristics.splits runs at D = 64 where the 4-warp plan splits into chunks
// of at most 4096 keys: with half its splits where its chunk is at most 256 keys, with the same splits above.
//   * The split's key range [split·chunk, min((split+1)·chunk, len_b)) is cut into 16-key tiles, dealt round-robin
//     (chunk: the plan's, ceil(maxLen / splits) rounded up to 64; a launch whose longest length is at most
//     maxLen / 2^(k+1) takes the plan's fitted chunk of that level instead, chosen on the device: see body)
//     to the 4 warps (so the block walks 64 consecutive keys at a time). Each warp runs its own cp.async ring
//     (NST−1 tiles in flight while it computes one; only __syncwarp, no block barrier in the loop). Rows past the
//     split end are zero-filled (src-size 0), never read. Paged caches: the tile start is a multiple of 16, so for
//     pageSize ≥ 16 one block-table entry serves the whole tile, and each lane advances one source pointer per pass;
//     the warp reads the entries of its next 32 tiles one batch ahead (a register per lane, handed out by shuffle),
//     the first batch before the sequence length arrives.
//     Smaller pages look the entry up per row.
//   * Per tile and warp: S[16 heads × 16 keys] = Q·Kᵀ with D/16 × 2 mma.sync m16n8k16 (fp32 accumulate), operands
//     by ldmatrix from XOR-swizzled rows (16-byte chunk c of row r stored at chunk c ^ (r & 7): conflict-free);
//     online softmax in fp32, base 2 (scores × scale·log2 e after the mma, so q is not re-rounded), one rescale per
//     tile; P is rounded to T and O[16 × D] += P·V with D/8 mma (V fragments by ldmatrix.trans); the running sum l
//     adds the unrounded p.
//   * The 4 warps merge through shared memory. If the sequence has one active split (len_b ≤ chunk, or splits = 1)
//     the block writes o (rounded once to T) and lse. Otherwise it writes the normalised partial o and its base-2
//     lse to the fp32 workspace [B, Hq, splits, D] / [B, Hq, splits], then takes a ticket from the counter of its
//     (b, kv head, head tile) in the int32 workspace; the last of the active splits merges them (weights
//     2^(lse_s − max) / Σ) and resets the counter to 0, so the counters are zero between launches (zeroed once at
//     plan time) and one launch is the whole step: capturable in a CUDA graph while lengths change on the device.
// Lengths are clamped to [0, maxLen]; len_b = 0 gives zeros and lse = −inf (split 0 writes them).
// Page numbers are trusted (not range-checked on the device). Limits: q/o/K/V 16-byte aligned; B ≤ 65535,
// Hkv·ceil(G/16) ≤ 65535; splits ≤ 256; q/o element counts < 2^31, cache offsets 64-bit.
// Registers (ptxas, sm_90a, nvcc 13.0): d64 95, d128 124, d256 222, w8 d64 104, no spills; dynamic shared memory 66 / 100 /
// 136 KiB, w8 d64 130 KiB (H100: 3 / 2 / 1 blocks per SM, w8 1). The split count (GqaDecodeHeuristics.splits) aims at an even number of keys per SM.
// Measured (H100 80GB HBM3 SXM, 132 SMs, driver 580.159, copy 3031 GB/s, L2 flushed by a read before every
// repetition; harness cuda-native/dev/gqa_decode, output h100-decode_mma.txt; the load addressing
// changed since, see ab/h100-*-issue.txt, which kept every output bit for bit):
//   ≥ 90 % of the KV-read floor for 32/8, 64/8, 32/32, 28/4 d128 once the floor is above ~90 µs (B=16 L=8192 32/8:
//   179 µs, floor 177; B=1 L=131072: 182 µs, 97 %); small problems pay ~9 µs of fixed latency (B=1 L=512: 9.6 µs).
//   Faster than the cuBLAS composition on all 288 rows (1.07x-14x) and than split_kv.cu (CUDA cores: 1.5-4.1x for G >= 4).
//   Paged (pages of 16 and 64, random page order) within 2.7 % of contiguous (median) and 9.2 % at worst (16/2 d64,
//   pages of 16) in the Java sweep at 7b05661, since the block-table entries are read a batch ahead; before, one table
//   load per tile left 16/2 d64 with pages of 16 up to 28 % behind (paged/h100-*.txt).
#include "gapfill_types.cuh"

#include <math_constants.h>

namespace gqa_mma {

using namespace gapfill;

constexpr int kThreads = 128;  // 4 warps
constexpr int kWarps = kThreads / 32;
constexpr int kRows = 16;      // query heads per tile (mma M)
constexpr int kKeys = 16;      // keys per warp tile
constexpr int kFitLevels = 7;   // GqaDecodeHeuristics.FIT_LEVELS: fitted chunks for longest lengths down to maxLen / 128
constexpr int kMaxSplits = 256;
constexpr int kMergeChunk = 8;  // partials of one thread's 4 dims in flight at once in the split merge
constexpr float kLn2 = 0.6931471805599453f;

// Stages of each warp's ring: 4 × 4 KiB (D=64), 3 × 8 KiB (D=128), 2 × 16 KiB (D=256) of K+V per warp.
template <int D> __host__ __device__ constexpr int default_stages() { return D == 64 ? 4 : D == 128 ? 3 : 2; }
// WARPS: warps per block (4; 8 for the d64 wide kernels, GqaDecodeHeuristics.splits says where).
template <int D, int STAGES = default_stages<D>(), int WARPS = kWarps> struct Cfg {
    static_assert(STAGES >= 2, "a ring needs two stages (one in flight while one is computed)");
    static constexpr int NST = STAGES;
    static constexpr int CPR = D / 8;                      // 16-byte chunks per row
    static constexpr int TILE_BYTES = kKeys * D * 2;       // one K (or V) tile
    static constexpr int Q_BYTES = kRows * D * 2;
    static constexpr int STAGE_BYTES = 2 * TILE_BYTES;     // K then V
    static constexpr int WARP_BYTES = NST * STAGE_BYTES;
    static constexpr int SMEM = Q_BYTES + WARPS * WARP_BYTES;
    // merge scratch, reusing the rings: o [warps][16][D] f32, m and l [warps][16], split weights [16][kMaxSplits]
    static constexpr int MERGE_O = WARPS * kRows * D * 4;
    static constexpr int MERGE_BYTES = MERGE_O + 2 * WARPS * kRows * 4 + kRows * kMaxSplits * 4;
    static_assert(MERGE_BYTES <= WARPS * WARP_BYTES, "merge scratch fits in the rings");
    static_assert(SMEM <= 163 * 1024, "fits an A100's opt-in shared memory per block (the least of sm_80+)");
};

struct Args {
    int hq, hkv, g, head_tiles, splits, chunk, max_len, max_pages, page_shift;
    int num_pages;  // P: pages of the paged cache (1 for contiguous caches, which read no table)
    int fit[kFitLevels];  // fit[k]: the chunk of a launch whose longest length is at most max_len >> (k + 1); 0: none
    long long stride_b, stride_h, stride_l, page_stride;  // elements
    float scale_log2;                                     // scale · log2(e)
};

// A block-table entry as a page number in [0, P): entries below a sequence's length must already be there (the
// contract; -Dgapfill.debug.checkBlockTable checks it on the host), so this changes nothing for valid tables and keeps
// a malformed one (a serving engine's bug) from sending the cp.async outside the cache: such an entry reads the
// nearest page. Entries past the length are read ahead and never used as an address. Pages >= 16 clamp at the tile's
// use of its entry (issue), so the entries requested ahead stay plain loads that nothing waits for.
__device__ __forceinline__ int clamp_page(int entry, int num_pages) { return min(max(entry, 0), num_pages - 1); }

// Byte offset of 16-byte chunk `ch` of row `r` in a [rows, D] tile with XOR swizzle (conflict-free ldmatrix).
template <int D>
__device__ __forceinline__ uint32_t swz(int r, int ch) {
    return (uint32_t)(r * D * 2 + ((ch ^ (r & 7)) << 4));
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

template <typename T> struct Mma;
template <> struct Mma<__half> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    }
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
};
template <> struct Mma<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t pack(float lo, float hi) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    }
    static __device__ __forceinline__ void run(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
};

// acc += w · x, per component (the split merges' weighted sum, in split order).
__device__ __forceinline__ void fma4(float4& acc, const float4& x, float w) {
    acc.x = fmaf(x.x, w, acc.x);
    acc.y = fmaf(x.y, w, acc.y);
    acc.z = fmaf(x.z, w, acc.z);
    acc.w = fmaf(x.w, w, acc.w);
}
// Four consecutive o elements, each rounded once to T.
template <typename T>
__device__ __forceinline__ void store4(T* dst, const float4& v) {
    dst[0] = from_float<T>(v.x);
    dst[1] = from_float<T>(v.y);
    dst[2] = from_float<T>(v.z);
    dst[3] = from_float<T>(v.w);
}

// The split merge inside a thread-block cluster (sm_90; CLUSTER blocks = the splits of one (b, kv head, head tile),
// launched as one cluster): every block has left its normalised partial o [rows][D] and base-2 lse [rows] in its own
// shared memory. After a cluster barrier (release / acquire: the partials are visible), each block combines every
// CLUSTER-th (head, 4 dims) item, reading the CLUSTER partials of it through distributed shared memory (one round trip
// for all of them), and writes o and lse; a second barrier keeps every block's shared memory alive until all have
// read it. No partial goes through global memory and no ticket is taken: the global merge's chain (partial stores,
// the ticket's round trip, the last block's loads) becomes two cluster barriers and one shared-memory round trip.
// Weights as the global merge: 2^(lse_s - max) / Σ, summed over the splits in order.
template <typename T, int D, int CLUSTER, int THREADS>
__device__ __forceinline__ void cluster_merge(const float* s_p, const float* s_pl, T* __restrict__ out, float* __restrict__ lse,
                                              size_t bh0, int rows, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
    const uint32_t p_local = smem_u32(s_p), pl_local = smem_u32(s_pl);
    uint32_t p_rem[CLUSTER], pl_rem[CLUSTER];
#pragma unroll
    for (int s = 0; s < CLUSTER; ++s) {
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(p_rem[s]) : "r"(p_local), "r"(s));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(pl_rem[s]) : "r"(pl_local), "r"(s));
    }
    const int items = rows * (D / 4);
    for (int idx = (int)rank + CLUSTER * tid; idx < items; idx += CLUSTER * THREADS) {
        const int r = idx / (D / 4);
        const int d = (idx % (D / 4)) * 4;
        float l[CLUSTER];
        float4 x[CLUSTER];
#pragma unroll
        for (int s = 0; s < CLUSTER; ++s) {
            asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(l[s]) : "r"(pl_rem[s] + 4u * (uint32_t)r) : "memory");
            asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                         : "=f"(x[s].x), "=f"(x[s].y), "=f"(x[s].z), "=f"(x[s].w)
                         : "r"(p_rem[s] + 4u * (uint32_t)(r * D + d))
                         : "memory");
        }
        float mx = -CUDART_INF_F;
#pragma unroll
        for (int s = 0; s < CLUSTER; ++s) mx = fmaxf(mx, l[s]);  // finite: more than one split is active
        float e[CLUSTER];
        float sum = 0.f;
#pragma unroll
        for (int s = 0; s < CLUSTER; ++s) {
            e[s] = exp2f(l[s] - mx);  // an inactive block: exp2(-inf) = 0, and its o is 0
            sum += e[s];
        }
        const float inv = 1.f / sum;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int s = 0; s < CLUSTER; ++s) fma4(acc, x[s], e[s] * inv);
        store4<T>(out + (bh0 + r) * D + d, acc);
        if (lse != nullptr && d == 0) lse[bh0 + r] = (mx + log2f(sum)) * kLn2;
    }
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

template <typename T, int D, int WARPS = kWarps, int STAGES = default_stages<D>(), int CLUSTER = 0>
__device__ __forceinline__ void body(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                                     const int* __restrict__ table, const int* __restrict__ lens, T* __restrict__ out,
                                     float* __restrict__ lse, float* __restrict__ part_o, float* __restrict__ part_lse,
                                     int* __restrict__ counters, const Args a) {
    static_assert(sizeof(T) == 2, "K/V are 16-bit");
    static_assert(D == 64 || D == 128 || D == 256, "head dim must be 64, 128 or 256");
    // This block's warps and threads. They shadow the namespace's defaults (4 warps), so every use below (q load,
    // tile dealing, table batches, warp merge, split merge) follows WARPS.
    constexpr int kWarps = WARPS;
    constexpr int kThreads = 32 * WARPS;
    using C = Cfg<D, STAGES, WARPS>;
    constexpr int NST = C::NST;
    constexpr int CPR = C::CPR;
    constexpr int KS = D / 16;   // k-steps of S = Q·Kᵀ, and n8-tile pairs of O
    constexpr int NT = D / 8;    // n8 tiles of O
    constexpr int LD_ITERS = kKeys * CPR / 32;  // 16-byte chunks per lane per K (or V) tile

    extern __shared__ __align__(128) unsigned char smem[];
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int split = blockIdx.x;
    const int kvh = blockIdx.y / a.head_tiles;
    const int tile = blockIdx.y % a.head_tiles;
    const int b = blockIdx.z;

    // q tile [16, D] (rows ≥ G zero) into registers first, so its latency overlaps the length read and the first
    // K/V requests; it goes to shared memory after the ring is primed.
    constexpr int QN = kRows * CPR;                     // 16-byte chunks of the q tile
    constexpr int QV = (QN + kThreads - 1) / kThreads;  // per thread
    static_assert(QN % kThreads == 0 || QN < kThreads, "q tile split evenly over the block, or at most one chunk per thread");
    const int rows = min(kRows, a.g - tile * kRows);  // real heads in this tile
    const size_t bh0 = (size_t)b * a.hq + (size_t)kvh * a.g + (size_t)tile * kRows;  // first head of the tile
    uint4 qv[QV];
#pragma unroll
    for (int j = 0; j < QV; ++j) {
        const int i = j * kThreads + tid;
        const int r = i / CPR, ch = i % CPR;
        qv[j] = r < rows ? *reinterpret_cast<const uint4*>(q + (bh0 + r) * D + ch * 8) : make_uint4(0, 0, 0, 0);
    }
    // Pages ≥ 16: the block-table entries of this warp's first 32 tiles of the full chunk, requested before the
    // length arrives. An entry's index does not depend on len_b, and the row [max_pages] is in bounds whatever the
    // length; entries past the sequence's end are read but never used. Otherwise the first K/V address waited for
    // two dependent round trips after the L2 flush (length, then entry) against one for a contiguous cache.
    const int* tab_b = table != nullptr ? table + (size_t)b * a.max_pages : nullptr;
    const int off_first = (warp + lane * kWarps) * kKeys;  // first key of tile `lane` of this warp in its split
    auto first_entry = [&](int from, int keys) {            // entry of that tile in a split [from, from + keys)
        const int idx = (from + off_first) >> a.page_shift;
        return off_first < keys && idx < a.max_pages ? __ldg(tab_b + idx) : 0;
    };
    int pg_first = 0;
    if (tab_b != nullptr && a.page_shift >= 4) pg_first = first_entry(split * a.chunk, a.chunk);
    const int len = min(max(lens[b], 0), a.max_len);
    // The launch's chunk. The plan's, ceil(maxLen / splits), gives every split of the longest sequence equal work, so
    // no block finishes early and leaves a tail with few loads in flight. But a plan made once for the longest context
    // (and captured in a graph) also runs steps whose sequences are all much shorter: at the plan's chunk only their
    // first splits have keys, and the few busy SMs cannot draw the bandwidth. So when the launch's longest length is at
    // most maxLen / 2^(k+1), it takes fit[k], the chunk GqaDecodeHeuristics gives a plan of that maxLen (within these
    // splits; 0: no entry, so all 0 keeps the plan's chunk). Every block computes the same longest length (warp-wide
    // reads of lens, no barrier), so the splits of a sequence agree on its active count. A fitted chunk is a multiple
    // of 64 (a paged tile stays inside one page of >= 16 positions) and below the plan's, so the workspace holds every
    // split. Only a sequence that is itself that short needs the longest length.
    int chunk = a.chunk;
    if (a.fit[0] > 0 && len <= (a.max_len >> 1)) {
        int longest = 0;
        for (int i = lane; i < (int)gridDim.z; i += 32) longest = max(longest, __ldg(lens + i));
        longest = min(max(__reduce_max_sync(0xffffffffu, longest), 0), a.max_len);
#pragma unroll
        for (int k = 0; k < kFitLevels; ++k)
            if (a.fit[k] > 0 && longest <= (a.max_len >> (k + 1))) chunk = a.fit[k];
    }
    const int start = split * chunk;
    const int end = min(start + chunk, len);
    const int active = len == 0 ? 1 : min(a.splits, (len + chunk - 1) / chunk);
    if (start >= len && !(split == 0 && len == 0)) {
        // Inactive split (split 0 stays for an empty sequence: it writes zeros and -inf). In a cluster every block
        // takes part in the merge's barriers while more than one split is active (all blocks of a cluster compute the
        // same `active`): this one walks no tiles and offers a partial of weight 0 (o = 0, lse = -inf).
        if (CLUSTER == 0 || active == 1) return;
    }
    if (chunk != a.chunk && tab_b != nullptr && a.page_shift >= 4) pg_first = first_entry(start, chunk);  // fitted split

    unsigned char* s_q = smem;
    unsigned char* s_ring = smem + C::Q_BYTES + warp * C::WARP_BYTES;
    const uint32_t q_base = smem_u32(s_q);
    const uint32_t ring_base = smem_u32(s_ring);

    // This warp's tiles: t = warp, warp + 4, ... of the split's ceil((end − start) / 16) tiles.
    const int ntiles = end > start ? (end - start + kKeys - 1) / kKeys : 0;
    const int my_n = ntiles > warp ? (ntiles - warp + kWarps - 1) / kWarps : 0;
    const long long head_off = (long long)kvh * a.stride_h;
    const long long seq_off = (long long)b * a.stride_b + head_off;
    const int page_mask = (1 << a.page_shift) - 1;

    // Load addressing. A warp-wide pass of 16-byte chunks covers RPI rows of a tile: lane → row r0 + it·RPI, chunk
    // ch. Contiguous caches and pages of ≥ 16 positions keep a tile in one memory run of stride_l per row, so the
    // lane's source is one pointer per tile advanced by RPI rows per pass (the 64-bit row offsets and the paged
    // branch would otherwise cost ~55 instructions per pass: at a91ff10 the 8 passes of a d128 tile were ~450 SASS
    // instructions against ~250 for its mma and softmax). Smaller pages look the page up per row.
    constexpr int RPI = 32 / CPR;
    static_assert(RPI * CPR == 32 && LD_ITERS * RPI == kKeys, "a pass covers whole rows");
    const int r0 = lane / CPR, ch = lane % CPR;
    const bool uniform_page = tab_b == nullptr || a.page_shift >= 4;
    const long long lane_off = (long long)r0 * a.stride_l + ch * 8;
    const long long pass_step = (long long)RPI * a.stride_l;

    // Block-table entries of this warp's tiles (pages ≥ 16: one per tile), 32 tiles at a time: lane j holds the entry
    // of tile 32·c + j. The next 32 are requested when the current ones come into use, so a tile's address never waits
    // for a table load; read per tile, each new 128-byte line of the table stalled the warp's ring for an L2 round
    // trip (pages of 16 with 16/2 heads and D = 64: 10-22 % behind the same cache read contiguously,
    // cuda-native/dev/gqa_decode/paged/h100-75b08a6.txt).
    int pg_blk = -1, pg_cur = 0, pg_nxt = 0;
    auto page_entries = [&](int blk) {  // entries of tiles 32·blk .. 32·blk + 31, one per lane (0 past the last tile)
        const int t = blk * 32 + lane;
        return t < my_n ? __ldg(tab_b + ((start + (warp + t * kWarps) * kKeys) >> a.page_shift)) : 0;
    };

    auto issue = [&](int i) {  // tile i of this warp into slot i % NST (called by the whole warp, i increasing)
        const int base = start + (warp + i * kWarps) * kKeys;
        const uint32_t kdst = ring_base + (i % NST) * C::STAGE_BYTES;
        const uint32_t vdst = kdst + C::TILE_BYTES;
        if (uniform_page) {
            long long off = lane_off;
            if (tab_b == nullptr) {
                off += seq_off + (long long)base * a.stride_l;
            } else {
                if ((i >> 5) != pg_blk) {
                    pg_cur = pg_blk >= 0 ? pg_nxt : pg_first;  // the first call is tile 0: batch 0
                    pg_blk = i >> 5;
                    pg_nxt = page_entries(pg_blk + 1);
                }
                // clamped where the tile uses it, not where the batch is loaded: cae2d96 clamped at the load and
                // ran paged L = 512 steps 0.4-0.7 us slower (likely the first entry's round trip then waited before
                // the length's instead of beside it)
                const int page = clamp_page(__shfl_sync(0xffffffffu, pg_cur, i & 31), a.num_pages);
                off += (long long)page * a.page_stride + head_off + (long long)(base & page_mask) * a.stride_l;
            }
            const T* ks = k + off;
            const T* vs = v + off;
#pragma unroll
            for (int it = 0; it < LD_ITERS; ++it) {
                const int r = it * RPI + r0;
                const bool ok = base + r < end;
                cp_async16(kdst + swz<D>(r, ch), ok ? ks : k, ok);
                cp_async16(vdst + swz<D>(r, ch), ok ? vs : v, ok);
                ks += pass_step;
                vs += pass_step;
            }
        } else {
#pragma unroll
            for (int it = 0; it < LD_ITERS; ++it) {
                const int r = it * RPI + r0;
                const int pos = base + r;
                const bool ok = pos < end;
                const int page = ok ? clamp_page(__ldg(tab_b + (pos >> a.page_shift)), a.num_pages) : 0;
                const long long off =
                    (long long)page * a.page_stride + head_off + (long long)(pos & page_mask) * a.stride_l + ch * 8;
                cp_async16(kdst + swz<D>(r, ch), ok ? k + off : k, ok);
                cp_async16(vdst + swz<D>(r, ch), ok ? v + off : v, ok);
            }
        }
    };

#pragma unroll
    for (int i = 0; i < NST - 1; ++i) {
        if (i < my_n) issue(i);
        cp_async_commit();
    }
#pragma unroll
    for (int j = 0; j < QV; ++j) {
        const int i = j * kThreads + tid;
        if (QN % kThreads == 0 || i < QN)  // more threads than q chunks: the rest store nothing (their qv is 0)
            *reinterpret_cast<uint4*>(s_q + swz<D>(i / CPR, i % CPR)) = qv[j];
    }
    __syncthreads();  // the q tile is visible to every warp

    const int gq = lane >> 2;  // fragment row (head) gq and gq + 8; key/dim column pair 2·cq
    const int cq = lane & 3;
    const int lm = lane >> 3;  // ldmatrix: which 8×8 matrix this lane addresses
    const int lr = lane & 7;   // ldmatrix: which row of it

    float o[NT][4];
#pragma unroll
    for (int j = 0; j < NT; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    float m0 = -CUDART_INF_F, m1 = -CUDART_INF_F;  // running max (base 2) of rows gq, gq + 8
    float l0 = 0.f, l1 = 0.f;                      // this lane's part of the running sums

    for (int i = 0; i < my_n; ++i) {
        cp_async_wait<NST - 2>();
        __syncwarp();  // tile i landed for every lane; every lane is done with tile i − 1's slot
        if (i + NST - 1 < my_n) issue(i + NST - 1);
        cp_async_commit();

        const uint32_t kb = ring_base + (i % NST) * C::STAGE_BYTES;
        const uint32_t vb = kb + C::TILE_BYTES;
        const int base = start + (warp + i * kWarps) * kKeys;

        // S = Q·Kᵀ: s[n][..] for keys base + 8n + 2cq + {0,1}, rows gq (0,1) and gq + 8 (2,3).
        float s[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) {
            uint32_t a0, a1, a2, a3, b0, b1, b2, b3;
            ldsm_x4(q_base + swz<D>((lm & 1) * 8 + lr, 2 * ks + (lm >> 1)), a0, a1, a2, a3);
            ldsm_x4(kb + swz<D>((lm >> 1) * 8 + lr, 2 * ks + (lm & 1)), b0, b1, b2, b3);
            Mma<T>::run(s[0], a0, a1, a2, a3, b0, b1);
            Mma<T>::run(s[1], a0, a1, a2, a3, b2, b3);
        }
        const bool partial = base + kKeys > end;
#pragma unroll
        for (int n = 0; n < 2; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                s[n][e] *= a.scale_log2;
                if (partial && base + 8 * n + 2 * cq + (e & 1) >= end) s[n][e] = -CUDART_INF_F;
            }
        float x0 = fmaxf(fmaxf(s[0][0], s[0][1]), fmaxf(s[1][0], s[1][1]));
        float x1 = fmaxf(fmaxf(s[0][2], s[0][3]), fmaxf(s[1][2], s[1][3]));
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 1));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 1));
        x0 = fmaxf(x0, __shfl_xor_sync(0xffffffffu, x0, 2));
        x1 = fmaxf(x1, __shfl_xor_sync(0xffffffffu, x1, 2));
        const float n0 = fmaxf(m0, x0), n1 = fmaxf(m1, x1);  // finite: every tile holds at least one valid key
        const float c0 = exp2f(m0 - n0), c1 = exp2f(m1 - n1);  // exp2(-inf) = 0 on the first tile
        m0 = n0;
        m1 = n1;
        float p[2][4];
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            p[n][0] = exp2f(s[n][0] - n0);
            p[n][1] = exp2f(s[n][1] - n0);
            p[n][2] = exp2f(s[n][2] - n1);
            p[n][3] = exp2f(s[n][3] - n1);
        }
        l0 = l0 * c0 + (p[0][0] + p[0][1]) + (p[1][0] + p[1][1]);
        l1 = l1 * c1 + (p[0][2] + p[0][3]) + (p[1][2] + p[1][3]);
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            o[j][0] *= c0;
            o[j][1] *= c0;
            o[j][2] *= c1;
            o[j][3] *= c1;
        }
        // P (C layout of two n8 tiles) is the A operand (m16 × k16 keys) of O += P·V.
        const uint32_t pa0 = Mma<T>::pack(p[0][0], p[0][1]);
        const uint32_t pa1 = Mma<T>::pack(p[0][2], p[0][3]);
        const uint32_t pa2 = Mma<T>::pack(p[1][0], p[1][1]);
        const uint32_t pa3 = Mma<T>::pack(p[1][2], p[1][3]);
#pragma unroll
        for (int jp = 0; jp < KS; ++jp) {
            uint32_t b0, b1, b2, b3;
            ldsm_x4_t(vb + swz<D>((lm & 1) * 8 + lr, 2 * jp + (lm >> 1)), b0, b1, b2, b3);
            Mma<T>::run(o[2 * jp], pa0, pa1, pa2, pa3, b0, b1);
            Mma<T>::run(o[2 * jp + 1], pa0, pa1, pa2, pa3, b2, b3);
        }
    }
    cp_async_wait<0>();
    l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
    l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
    l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
    __syncthreads();  // every warp is done with the rings: reuse them as merge scratch

    float* s_o = reinterpret_cast<float*>(smem + C::Q_BYTES);   // [warps][16][D]
    float* s_m = s_o + kWarps * kRows * D;                      // [warps][16]
    float* s_l = s_m + kWarps * kRows;                          // [warps][16]
    float* s_w = s_l + kWarps * kRows;                          // [16][kMaxSplits]
    float* s_p = s_w + kRows * kMaxSplits;                      // cluster: this block's partial o [16][D]
    float* s_pl = s_p + kRows * D;                              // cluster: and its base-2 lse [16]
    static_assert(CLUSTER == 0 || C::MERGE_BYTES + (kRows * D + kRows) * 4 <= WARPS * C::WARP_BYTES,
                  "the cluster partial fits in the rings behind the merge scratch");
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        float* r0 = s_o + (warp * kRows + gq) * D + 8 * j + 2 * cq;
        float* r1 = r0 + 8 * D;
        *reinterpret_cast<float2*>(r0) = make_float2(o[j][0], o[j][1]);
        *reinterpret_cast<float2*>(r1) = make_float2(o[j][2], o[j][3]);
    }
    if (cq == 0) {
        s_m[warp * kRows + gq] = m0;
        s_m[warp * kRows + gq + 8] = m1;
        s_l[warp * kRows + gq] = l0;
        s_l[warp * kRows + gq + 8] = l1;
    }
    __syncthreads();

    // Combine the warps: 4 dims per thread.
    for (int idx = tid; idx < rows * (D / 4); idx += kThreads) {
        const int r = idx / (D / 4);
        const int d = (idx % (D / 4)) * 4;
        float mx = -CUDART_INF_F;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, s_m[w * kRows + r]);
        float sum = 0.f;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        if (mx != -CUDART_INF_F) {
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
                const float wt = exp2f(s_m[w * kRows + r] - mx);  // warps without keys: exp2(-inf) = 0
                const float4 x = *reinterpret_cast<const float4*>(s_o + (w * kRows + r) * D + d);
                sum = fmaf(s_l[w * kRows + r], wt, sum);
                acc.x = fmaf(x.x, wt, acc.x);
                acc.y = fmaf(x.y, wt, acc.y);
                acc.z = fmaf(x.z, wt, acc.z);
                acc.w = fmaf(x.w, wt, acc.w);
            }
        }
        const float inv = sum > 0.f ? 1.f / sum : 0.f;
        const size_t bh = bh0 + r;
        if (active == 1) {
            T* dst = out + bh * D + d;
            dst[0] = from_float<T>(acc.x * inv);
            dst[1] = from_float<T>(acc.y * inv);
            dst[2] = from_float<T>(acc.z * inv);
            dst[3] = from_float<T>(acc.w * inv);
            if (lse != nullptr && d == 0) lse[bh] = sum > 0.f ? (mx + log2f(sum)) * kLn2 : -CUDART_INF_F;
        } else if (CLUSTER > 0) {
            *reinterpret_cast<float4*>(s_p + r * D + d) = make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
            if (d == 0) s_pl[r] = sum > 0.f ? mx + log2f(sum) : -CUDART_INF_F;  // an inactive block: weight 0
        } else {
            *reinterpret_cast<float4*>(part_o + (bh * a.splits + split) * D + d) =
                make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
            if (d == 0) part_lse[bh * a.splits + split] = mx + log2f(sum);  // sum > 0: an active split has keys
        }
    }
    if (active == 1) {
        return;
    }
    if constexpr (CLUSTER > 0) {
        cluster_merge<T, D, CLUSTER, kThreads>(s_p, s_pl, out, lse, bh0, rows, tid);
        return;
    }

    // Split merge by the last active split of this (b, kv head, head tile).
    // The ticket: after the barrier, thread 0 alone takes it with one acq_rel atomic at gpu scope. Release: the
    // barrier orders every thread's partial stores before it, and the release is cumulative, so they are visible to
    // whichever block acquires the counter later. Acquire: the last block's loads of the others' partials come after
    // it (second barrier). No sequentially consistent fence (membar.gl) in any thread: on an H100 this ticket took
    // 0.981x the time of the one with every thread's __threadfence() over 30 small split rows, with o and lse
    // byte-identical on 5,866 runs (cuda-native/dev/gqa_decode/fixedcost/h100-628f148.txt, variant S2).
    __shared__ int s_last;
    int* counter = counters + ((size_t)b * a.hkv + kvh) * a.head_tiles + tile;
    __syncthreads();
    if (tid == 0) {
        int old;
        asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
        s_last = old == active - 1;
    }
    __syncthreads();
    if (!s_last) {
        return;
    }
    // The merge waits on L2 round trips in a row, so it keeps them few: this thread's first partials (up to
    // kMergeChunk splits of its first 4 dims) are loaded before the weights are computed, each lse is read once, and
    // later partials come kMergeChunk splits at a time. The sum runs over the splits in order, as before. (H100 A/B,
    // cuda-native/dev/gqa_decode/ab/h100-merge-loads-ab.txt: 8 splits 3.0 %, 16 splits 2.4 %, 32 splits 8.3 % faster;
    // a chunk of 16 was 1.1 / 3.1 / 8.3 %.)
    const int items = rows * (D / 4);
    float4 x[kMergeChunk];
    if (tid < items) {
        const float* po = part_o + (bh0 + tid / (D / 4)) * a.splits * D + (tid % (D / 4)) * 4;
#pragma unroll
        for (int i = 0; i < kMergeChunk; ++i)
            if (i < active) x[i] = __ldcg(reinterpret_cast<const float4*>(po + (size_t)i * D));
    }
    for (int r = warp; r < rows; r += kWarps) {  // weights of the active splits, one warp per head
        const float* pl = part_lse + (bh0 + r) * a.splits;
        float* w = s_w + r * kMaxSplits;
        float mx = -CUDART_INF_F;
        for (int sp = lane; sp < active; sp += 32) {
            const float v = __ldcg(pl + sp);
            w[sp] = v;
            mx = fmaxf(mx, v);
        }
        mx = warp_max(mx);
        float sum = 0.f;
        for (int sp = lane; sp < active; sp += 32) {
            const float e = exp2f(w[sp] - mx);
            w[sp] = e;
            sum += e;
        }
        sum = warp_sum(sum);
        const float inv = 1.f / sum;
        for (int sp = lane; sp < active; sp += 32) w[sp] *= inv;
        if (lse != nullptr && lane == 0) lse[bh0 + r] = (mx + log2f(sum)) * kLn2;
    }
    __syncthreads();
    for (int idx = tid; idx < items; idx += kThreads) {
        const int r = idx / (D / 4);
        const int d = (idx % (D / 4)) * 4;
        const float* po = part_o + (bh0 + r) * a.splits * D + d;
        const float* w = s_w + r * kMaxSplits;
        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int s0 = 0; s0 < active; s0 += kMergeChunk) {
            if (idx != tid || s0 != 0) {  // the first chunk of the first item is already in x
#pragma unroll
                for (int i = 0; i < kMergeChunk; ++i)
                    if (s0 + i < active) x[i] = __ldcg(reinterpret_cast<const float4*>(po + (size_t)(s0 + i) * D));
            }
#pragma unroll
            for (int i = 0; i < kMergeChunk; ++i) {
                if (s0 + i < active) fma4(acc, x[i], w[s0 + i]);
            }
        }
        store4<T>(out + (bh0 + r) * D + d, acc);
    }
    if (tid == 0) *counter = 0;  // every active split has taken its ticket: ready for the next launch
}

}  // namespace gqa_mma

// The kernels' parameter list (GqaDecodePlan passes it in this order) and its Args.
#define GQA_MMA_PARAMS(T)                                                                                            \
    const T *q, const T *k, const T *v, const int *table, const int *lens, T *out, float *lse, float *part_o,       \
        float *part_lse, int *counters, int hq, int hkv, int g, int head_tiles, int splits, int chunk, int max_len,  \
        int max_pages, int page_shift, int num_pages, int fit1, int fit2, int fit3, int fit4, int fit5, int fit6,  \
        int fit7,                                                                                                    \
        long long stride_b, long long stride_h, long long stride_l, long long page_stride, float scale_log2
#define GQA_MMA_ARGS                                                                                                 \
    const gqa_mma::Args a{hq,        hkv,        g,          head_tiles, splits,                                   \
                          chunk,     max_len,    max_pages,  page_shift, num_pages,                            \
                          {fit1, fit2, fit3, fit4, fit5, fit6, fit7},                                             \
                          stride_b,  stride_h,   stride_l,   page_stride, scale_log2};
#define GQA_MMA_KERNEL(NAME, T, D, WARPS)                                                                            \
    extern "C" __global__ void __launch_bounds__(32 * (WARPS)) NAME(GQA_MMA_PARAMS(T)) {                            \
        GQA_MMA_ARGS                                                                                                 \
        gqa_mma::body<T, D, WARPS>(q, k, v, table, lens, out, lse, part_o, part_lse, counters, a);                 \
    }

GQA_MMA_KERNEL(gqa_decode_mma_f16_d64, __half, 64, 4)
GQA_MMA_KERNEL(gqa_decode_mma_f16_d128, __half, 128, 4)
GQA_MMA_KERNEL(gqa_decode_mma_f16_d256, __half, 256, 4)
GQA_MMA_KERNEL(gqa_decode_mma_bf16_d64, __nv_bfloat16, 64, 4)
GQA_MMA_KERNEL(gqa_decode_mma_bf16_d128, __nv_bfloat16, 128, 4)
GQA_MMA_KERNEL(gqa_decode_mma_bf16_d256, __nv_bfloat16, 256, 4)
// 2 stages at D = 128 (69 632 B of shared memory instead of 102 400): the D = 128 block on GPUs whose opt-in shared
// memory per block is 99 KiB (sm_86, sm_89: A10, A40, RTX 30/40, L4, L40S), where the 3-stage block does not fit
// (GqaDecodeHeuristics.stages(int, DeviceInfo)). The same loads, mma and merge in the same order as the 3-stage entries,
// so the same bits; only fewer tiles are in flight per warp. gapfill.debug.gqaTwoStages runs them on any GPU (tests).
#define GQA_MMA_KERNEL_STAGES(NAME, T, D, WARPS, STAGES)                                                             \
    extern "C" __global__ void __launch_bounds__(32 * (WARPS)) NAME(GQA_MMA_PARAMS(T)) {                            \
        GQA_MMA_ARGS                                                                                                 \
        gqa_mma::body<T, D, WARPS, STAGES>(q, k, v, table, lens, out, lse, part_o, part_lse, counters, a);         \
    }
GQA_MMA_KERNEL_STAGES(gqa_decode_mma_s2_f16_d128, __half, 128, 4, 2)
GQA_MMA_KERNEL_STAGES(gqa_decode_mma_s2_bf16_d128, __nv_bfloat16, 128, 4, 2)
// 8 warps (256 threads, 130 KiB of shared memory: one block per SM) at D = 64 (GqaDecodeHeuristics.splits): with half
// the splits, more of the merge happens inside the block and fewer partials cross the global ticket.
GQA_MMA_KERNEL(gqa_decode_mma_w8_f16_d64, __half, 64, 8)
GQA_MMA_KERNEL(gqa_decode_mma_w8_bf16_d64, __nv_bfloat16, 64, 8)

// Cluster kernels (sm_90 only): the grid's x dimension (the splits) is one cluster of CL blocks, so a launch needs
// splits == CL; the splits merge through distributed shared memory (cluster_merge) instead of the global ticket. The
// sm_80 images hold a trap (no clusters there); GqaDecodeHeuristics takes these kernels only on compute capability 9.0.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define GQA_CLUSTER_DIMS(CL)
#define GQA_CLUSTER_BODY(T, D, CL) (void)a; __trap();
#else
#define GQA_CLUSTER_DIMS(CL) __cluster_dims__(CL, 1, 1)
#define GQA_CLUSTER_BODY(T, D, CL) gqa_mma::body<T, D, gqa_mma::kWarps, gqa_mma::default_stages<D>(), CL>(q, k, v, table, lens, out, lse, \
                                                                                                       part_o, part_lse, counters, a);
#endif
#define GQA_MMA_CLUSTER_KERNEL(NAME, T, D, CL)                                                                     \
    extern "C" __global__ void GQA_CLUSTER_DIMS(CL) __launch_bounds__(gqa_mma::kThreads) NAME(GQA_MMA_PARAMS(T)) {   \
        GQA_MMA_ARGS                                                                                                 \
        GQA_CLUSTER_BODY(T, D, CL)                                                                                   \
    }
#define GQA_MMA_CLUSTER_ALL(CL)                                                               \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_f16_d64, __half, 64, CL)                    \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_f16_d128, __half, 128, CL)                  \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_f16_d256, __half, 256, CL)                  \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_bf16_d64, __nv_bfloat16, 64, CL)            \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_bf16_d128, __nv_bfloat16, 128, CL)          \
    GQA_MMA_CLUSTER_KERNEL(gqa_decode_mma_c##CL##_bf16_d256, __nv_bfloat16, 256, CL)
GQA_MMA_CLUSTER_ALL(2)
GQA_MMA_CLUSTER_ALL(4)
GQA_MMA_CLUSTER_ALL(8)
