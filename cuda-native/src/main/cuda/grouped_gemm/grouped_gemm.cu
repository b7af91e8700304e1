// Grouped GEMM for mixture-of-experts layers: Y[rows of g] = epilogue(X[gather(rows of g)] · W[g]) for
// every group g in ONE persistent launch. Group g owns rows offsets[g] .. offsets[g+1] of the grouped
// problem; offsets live on the device, so nothing here needs the host to know the group sizes and the
// launch can be captured in a CUDA graph.
//
// Regime: fine-grained MoE (E = 8 .. 4096 experts, per-expert row counts from 0 to thousands), F16 and
//   BF16 inputs, fp32 accumulation, output in the input dtype. Weights W [G, K, N] (N-contiguous, "kn")
//   or [G, N, K] (K-contiguous, "nk"). sm_80 and newer (mma.sync m16n8k16, cp.async, ldmatrix).
// Schedule: every CTA reads offsets and builds, in shared memory, the prefix sum over groups of
//   rowBlocks(g) · colBlocks tiles; CTA b then walks the global tile index b, b + gridDim.x, ... and finds
//   (group, row block, col block) by binary search. Row block is the fastest index, so the row blocks of
//   one (group, col block) run side by side and share the weight tile through L2.
// Tile: BM rows x BN columns x BK = 64, STAGES-deep cp.async pipeline (16-byte copies, zero fill past
//   K, N and the group's last row); row gather through a per-tile row table in shared memory; epilogue
//   (per-row scale, SwiGLU over the two halves of N) on the fp32 accumulators, one rounding at the store.
//   With SwiGLU a CTA loads gate columns [n0, n0 + BN/2) and up columns [I + n0, I + n0 + BN/2), so each
//   thread holds matching gate and up accumulators.
// Variants: m16 (BM 16, BN 64, 4 warps 1x4, 4 stages, 4 CTAs/SM: few tiles, i.e. decode on few active
//   experts), m64 (BM 64, BN 128, 2x2, 3 stages, 2 CTAs/SM: everything else) and d16, the decode tile
//   further down (operands swapped: 64 W columns on the mma's m16 side, 16 rows on its n8 side, an 8-stage
//   ring that runs across a CTA's tiles, 2 CTAs/SM). m32 (69d1975) and d32 / d16w (s2/gg harness runs)
//   were never more than a few % faster than the shipped three (dev/grouped_gemm/).
//   Hopper (sm_90a SASS only): w64 (64 x 128, one warpgroup, 2 CTAs/SM), w64s6 (the same tile with 6 stages,
//   1 CTA/SM) and w128n2 (128 x 256, two warpgroups, 1 CTA/SM), the same schedule, gather and epilogue with
//   wgmma.mma_async from 128-byte-swizzled shared tiles. On sm_90 they run every regime but decode with fewer
//   64x128 tiles than half the SMs (m16): w64s6 where the tiles fit one wave of one CTA per SM, w64 up to 64 rows
//   per active expert, w128n2 above (GroupedGemmHeuristics). Measured: dev/grouped_gemm/h100-wgmma-sweep.txt,
//   h100-decode-w64.txt.
// Floor: max(bytes(active experts' W + X rows read + Y written) / copy bandwidth, 2·T_total·K·N / bf16 rate).
// Measured (H100 SXM, dev/grouped_gemm/h100-run2.txt: F16/BF16, copy 3032 GB/s, cuBLAS bf16 814 TFLOP/s):
//   E=64 top-8 H=2048 I=1024 bf16: gate-up KN T=1 m16 35.2 µs (63 % of floor), NK d16 31.3 (71 %), T=8 m64 149
//   (86 %), T=128 m64 210 (85 %); down T=1 d16 18.2 (61 %), T=8 d16 73.7 (83 %), T=32 d16 100 (86 %). Per-expert
//   cuBLAS loop (offsets to the host inside the timing) 3.6-7.2x slower, cublasGemmGroupedBatchedEx 1.2-3.5x
//   slower at T <= 128. At T >= 2048 with big per-expert GEMMs cuBLAS wins (mma.sync without wgmma is ~4x off
//   the bf16 rate) and AUTO sends those there. d16 loses to m16/m64 on SwiGLU with KN weights (E=64 T=8: 215 vs
//   149 µs; neither the 16-byte-copy order nor BNW = 128 changed it; the gate and up column strips of KN
//   weights are what differ), so it is used for the down projection and for NK weights.
// Limits (validated in Java): K % 8 == 0, N % 8 == 0 (with SwiGLU N/2 % 8 == 0), 16-byte aligned X, W,
//   Y; T_total·max(K, N) < 2^31; G ≤ 4096 (the prefix sum lives in shared memory). Offsets are clamped to
//   [0, T_total] and gather entries outside [0, rows of X) read zeros, so malformed device data cannot make
//   the kernel access memory out of bounds (gapfill.debug.checkOffsets reports them on the host).
#include "gapfill_types.cuh"
#include "grouped_gemm_mma.cuh"
#include "wgmma.cuh"

using namespace gapfill;
using namespace gapfill::gg;

namespace {


template <int BM_, int BN_, int WARPS_M_, int WARPS_N_, int STAGES_, bool W_NK_, bool SWIGLU_>
struct Config {
    static constexpr int BM = BM_, BN = BN_, BK = 64;
    static constexpr int WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
    static constexpr bool W_NK = W_NK_, SWIGLU = SWIGLU_;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile
    static constexpr int MI = WM / 16, NI = WN / 8;              // mma tiles per warp
    static constexpr int OUT_COLS = SWIGLU ? BN / 2 : BN;        // output columns per tile
    static constexpr int A_LD = BK + 8;                          // [BM][A_LD] in shared, padded against bank conflicts
    static constexpr int B_ROWS = W_NK ? BN : BK;                // kn: [BK][BN + 8]; nk: [BN][BK + 8]
    static constexpr int B_LD = W_NK ? BK + 8 : BN + 8;
    static constexpr int A_STAGE = BM * A_LD, B_STAGE = B_ROWS * B_LD;  // elements per stage
    static_assert(BM % (16 * WARPS_M) == 0, "warp rows must be whole m16 tiles");
    static_assert(BN % (8 * WARPS_N) == 0, "warp cols must be whole n8 tiles");
    static_assert(!SWIGLU || (NI % 2 == 0 && (WN / 2) % 8 == 0), "SwiGLU needs matching gate and up n8 tiles per warp");
    static_assert(BM <= THREADS, "one thread per row of the gather table");
    static_assert((A_LD * 2) % 16 == 0 && (B_LD * 2) % 16 == 0, "shared rows must stay 16-byte aligned for cp.async/ldmatrix");
    static_assert(STAGES >= 2, "a pipeline needs two stages");
};

// Rows of group g, with offsets clamped into [0, T_total] so bad device data stays in bounds.
__device__ __forceinline__ void group_rows(const int* __restrict__ offsets, int g, int T_total, int& start, int& end) {
    start = min(max(offsets[g], 0), T_total);
    end = min(max(offsets[g + 1], start), T_total);
}

// The tile schedule of both kernel families: tile_start[g] = Σ_{h<g} ⌈rows(h) / ROWS⌉ · col_blocks and
// tile_start[G] = the total, built from offsets by every CTA (a chunk of groups per thread, a warp scan); with
// gbeg and gend non-null it also stores each group's clamped rows. Ends with a barrier.
template <int THREADS, int ROWS>
__device__ __forceinline__ void build_schedule(const int* __restrict__ offsets, int G, int T_total, int col_blocks, int* tile_start,
                                               int* gbeg, int* gend) {
    __shared__ int warp_sums[THREADS / 32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int per = (G + THREADS - 1) / THREADS;  // contiguous chunk of groups per thread
    const int g0 = min(tid * per, G), g1 = min(g0 + per, G);
    int mine = 0;
    for (int g = g0; g < g1; ++g) {
        int s, e;
        group_rows(offsets, g, T_total, s, e);
        if (gbeg != nullptr) {
            gbeg[g] = s;
            gend[g] = e;
        }
        mine += (e - s + ROWS - 1) / ROWS * col_blocks;
    }
    int incl = mine;  // inclusive scan within the warp
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
    }
    if (lane == 31) warp_sums[warp] = incl;
    __syncthreads();
    int before = incl - mine;
    for (int w = 0; w < warp; ++w) before += warp_sums[w];
    for (int g = g0; g < g1; ++g) {
        tile_start[g] = before;
        int s, e;
        group_rows(offsets, g, T_total, s, e);
        before += (e - s + ROWS - 1) / ROWS * col_blocks;
    }
    if (tid == THREADS - 1) tile_start[G] = before;  // the last thread's running sum is the total
    __syncthreads();
}

// tile -> (group, first grouped row, valid rows, first output column) of the mma and wgmma tiles: the last g with
// tile_start[g] <= tile (empty groups precede their successor), row blocks fastest.
struct MTile { int g, m0, rows, n0; };
template <int BM, int OUT_COLS>
__device__ __forceinline__ MTile map_mma_tile(int tile, const int* tile_start, const int* __restrict__ offsets, int G, int T_total) {
    int lo = 0, hi = G - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (tile_start[mid] <= tile) lo = mid; else hi = mid - 1;
    }
    int g_start, g_end;
    group_rows(offsets, lo, T_total, g_start, g_end);
    const int row_blocks = (g_end - g_start + BM - 1) / BM;
    const int local = tile - tile_start[lo];
    MTile t;
    t.g = lo;
    t.m0 = g_start + (local % row_blocks) * BM;
    t.rows = min(BM, g_end - t.m0);
    t.n0 = (local / row_blocks) * OUT_COLS;
    return t;
}

// Row table of an mma tile: row_src[r] = the X row behind tile row r (through the gather), -1 past the group's rows,
// -2 for an out-of-range gather entry (both read zeros). Threads below BM write it; the caller syncs.
template <int BM>
__device__ __forceinline__ void fill_row_src(int* row_src, int tid, int m0, int m_rows, const int* __restrict__ gather, int X_rows) {
    if (tid < BM) {
        int src = -1;
        if (tid < m_rows) {
            src = gather != nullptr ? gather[m0 + tid] : m0 + tid;
            if (src < 0 || src >= X_rows) src = -2;  // out-of-range gather: reads zeros
        }
        row_src[tid] = src;
    }
}

// W column (kn) or row (nk) behind shared column c of a tile starting at output column n0, and whether it exists:
// with SwiGLU the first BN/2 shared columns are gate columns n0.., the rest the matching up columns n_out + n0...
template <bool SWIGLU, int BN>
__device__ __forceinline__ int tile_w_col(int c, int n0, int n_out, int N, bool& valid) {
    if (SWIGLU) {
        const bool up = c >= BN / 2;
        const int lc = up ? c - BN / 2 : c;
        valid = n0 + lc < n_out;
        return (up ? n_out : 0) + n0 + lc;
    }
    valid = n0 + c < N;
    return n0 + c;
}

// One stage's 16-byte copies of an mma or wgmma tile (BK = 64): A = BM gathered X rows x 64 k, B = W[g] as 64 k rows
// x BN columns (kn) or BN rows x 64 k (nk). The sources are resolved once per tile (resolve: the row table, the W column
// map, the group's weights) and a k tile then costs an add, a compare and the cp.async per copy (issue). Thread tid
// copies chunk tid % 8 of rows tid / 8 + i·THREADS/8 (A, nk) and, for kn, columns (tid % (BN/8))·8.. of k rows
// tid / (BN/8) + i·THREADS/(BN/8). Null sources zero-fill. The caller's a_off(row, chunk) and b_off(row, column or
// chunk) give the byte offsets in its shared layout.
template <typename T, int BM, int BN, int THREADS, bool W_NK, bool SWIGLU>
struct TileCopies {
    static constexpr int A_I = BM * 8 / THREADS, B_I = BN * 8 / THREADS;
    static constexpr int ROW_STEP = THREADS / 8, KN_COLS = BN / 8, KN_STEP = THREADS / KN_COLS;
    static_assert((BM * 8) % THREADS == 0 && (BN * 8) % THREADS == 0 && THREADS % KN_COLS == 0 && THREADS % 8 == 0,
                  "whole 16-byte copies per thread, the same columns in every pass");
    const T* a_src[A_I];
    const T* b_src[W_NK ? B_I : 1];

    __device__ __forceinline__ void resolve(int tid, const int* row_src, const T* X, int K, const T* Wg, int N, int n0, int n_out) {
#pragma unroll
        for (int i = 0; i < A_I; ++i) {
            const int src = row_src[(tid >> 3) + i * ROW_STEP];
            a_src[i] = src >= 0 ? X + (size_t)src * K + (tid & 7) * 8 : nullptr;
        }
        if (W_NK) {
#pragma unroll
            for (int i = 0; i < (W_NK ? B_I : 1); ++i) {
                bool v;
                const int row = tile_w_col<SWIGLU, BN>((tid >> 3) + i * ROW_STEP, n0, n_out, N, v);
                b_src[i] = v ? Wg + (size_t)row * K + (tid & 7) * 8 : nullptr;
            }
        } else {
            bool v;
            const int col = tile_w_col<SWIGLU, BN>((tid % KN_COLS) * 8, n0, n_out, N, v);
            b_src[0] = v ? Wg + (size_t)(tid / KN_COLS) * N + col : nullptr;
        }
    }

    template <typename AOff, typename BOff>
    __device__ __forceinline__ void issue(int tid, int k0, int K, int N, const T* X, const T* W, unsigned char* a, unsigned char* b,
                                          AOff a_off, BOff b_off) const {
        const int kc = tid & 7;
        const bool k_in = k0 + kc * 8 < K;
#pragma unroll
        for (int i = 0; i < A_I; ++i) {
            const bool v = a_src[i] != nullptr && k_in;
            cp_async16(a + a_off((tid >> 3) + i * ROW_STEP, kc), v ? a_src[i] + k0 : X, v);
        }
        if (!W_NK) {
            const int n = (tid % KN_COLS) * 8;
#pragma unroll
            for (int i = 0; i < B_I; ++i) {
                const int kr = tid / KN_COLS + i * KN_STEP;
                const bool v = b_src[0] != nullptr && k0 + kr < K;
                cp_async16(b + b_off(kr, n), v ? b_src[0] + (size_t)(k0 + i * KN_STEP) * N : W, v);
            }
        } else {
#pragma unroll
            for (int i = 0; i < (W_NK ? B_I : 1); ++i) {
                const bool v = b_src[i] != nullptr && k_in;
                cp_async16(b + b_off((tid >> 3) + i * ROW_STEP, kc), v ? b_src[i] + k0 : W, v);
            }
        }
    }
};

// The persistent tile loop of the mma and wgmma tiles: every CTA builds the schedule (tile_start[g] = Σ_{h<g}
// rowBlocks(h) · colBlocks) from offsets, then walks tiles blockIdx.x, blockIdx.x + gridDim.x, ...: maps each to
// (group, rows, columns), fills the row table once the previous tile's readers are done, and runs body(tile).
template <typename C, typename Body>
__device__ __forceinline__ void for_each_mma_tile(const int* __restrict__ offsets, const int* __restrict__ gather, int G, int T_total,
                                                  int X_rows, int n_out, int* tile_start, int* row_src, Body&& body) {
    const int col_blocks = (n_out + C::OUT_COLS - 1) / C::OUT_COLS;
    build_schedule<C::THREADS, C::BM>(offsets, G, T_total, col_blocks, tile_start, nullptr, nullptr);
    const int total_tiles = tile_start[G];
    for (int tile = blockIdx.x; tile < total_tiles; tile += gridDim.x) {
        const MTile mt = map_mma_tile<C::BM, C::OUT_COLS>(tile, tile_start, offsets, G, T_total);
        __syncthreads();  // the previous tile's readers of row_src and of the stages are done
        fill_row_src<C::BM>(row_src, threadIdx.x, mt.m0, mt.rows, gather, X_rows);
        __syncthreads();
        body(mt);
    }
}

template <typename T, typename C>
__device__ __forceinline__ void grouped_gemm_body(const T* __restrict__ X, const T* __restrict__ W, T* __restrict__ Y,
                                                  const int* __restrict__ offsets, const int* __restrict__ gather,
                                                  const float* __restrict__ scale, int G, int T_total, int X_rows, int K, int N) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* sA = reinterpret_cast<T*>(smem);                                // [STAGES][BM][A_LD]
    T* sB = sA + C::STAGES * C::A_STAGE;                               // [STAGES][B_ROWS][B_LD]
    int* tile_start = reinterpret_cast<int*>(sB + C::STAGES * C::B_STAGE);  // [G + 1] prefix of tiles per group
    int* row_src = tile_start + (G + 1);                               // [BM] source row of X per tile row, -1 past the group

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
    const int n_out = C::SWIGLU ? N / 2 : N;  // output columns
    const int k_tiles = (K + C::BK - 1) / C::BK;

    for_each_mma_tile<C>(offsets, gather, G, T_total, X_rows, n_out, tile_start, row_src, [&](const MTile& mt) {
        const int m0 = mt.m0, m_rows = mt.rows, n0 = mt.n0;
        const T* Wg = W + (size_t)mt.g * (size_t)K * (size_t)N;  // [K, N] or [N, K]
        TileCopies<T, C::BM, C::BN, C::THREADS, C::W_NK, C::SWIGLU> copies;
        copies.resolve(tid, row_src, X, K, Wg, N, n0, n_out);
        auto load_stage = [&](int stage, int kt) {  // A [BM][A_LD], B [BK][B_LD] (kn) or [BN][B_LD] (nk), elements
            copies.issue(tid, kt * C::BK, K, N, X, W, reinterpret_cast<unsigned char*>(sA + stage * C::A_STAGE),
                         reinterpret_cast<unsigned char*>(sB + stage * C::B_STAGE),
                         [](int r, int kc) { return (r * C::A_LD + kc * 8) * (int)sizeof(T); },
                         [](int r, int c) { return (r * C::B_LD + (C::W_NK ? c * 8 : c)) * (int)sizeof(T); });
        };

        // shared column of the warp's n8 tile j: SwiGLU puts gate tiles first and up tiles second
        auto tile_col = [&](int j) -> int {
            if (C::SWIGLU) {
                const int half = j / (C::NI / 2), jj = j % (C::NI / 2);
                return half * (C::BN / 2) + wn * (C::WN / 2) + jj * 8;
            }
            return wn * C::WN + j * 8;
        };

        float acc[C::MI][C::NI][4];
#pragma unroll
        for (int i = 0; i < C::MI; ++i)
#pragma unroll
            for (int j = 0; j < C::NI; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

        // ---- STAGES-deep pipeline over K ----
#pragma unroll
        for (int s = 0; s < C::STAGES - 1; ++s) {
            if (s < k_tiles) load_stage(s, s);
            cp_async_commit();
        }
#pragma unroll 1
        for (int kt = 0; kt < k_tiles; ++kt) {
            cp_async_wait<C::STAGES - 2>();  // stage kt has landed (for this thread) ...
            __syncthreads();                 // ... and for every thread; stage kt-1 is free again
            const int next = kt + C::STAGES - 1;
            if (next < k_tiles) load_stage(next % C::STAGES, next);
            cp_async_commit();

            const T* a = sA + (kt % C::STAGES) * C::A_STAGE;
            const T* b = sB + (kt % C::STAGES) * C::B_STAGE;
#pragma unroll
            for (int kk = 0; kk < C::BK; kk += 16) {
                uint32_t af[C::MI][4];
#pragma unroll
                for (int i = 0; i < C::MI; ++i) {  // [16 rows][16 k] per mma tile
                    const int r = wm * C::WM + i * 16 + (lane & 15);
                    ldmatrix_x4(af[i], a + r * C::A_LD + kk + (lane >> 4) * 8);
                }
#pragma unroll
                for (int j = 0; j < C::NI; ++j) {  // [16 k][8 cols] per mma tile
                    const int nb = tile_col(j);
                    const int l = lane & 15;
                    uint32_t bf[2];
                    if (!C::W_NK) {
                        ldmatrix_x2_trans(bf, b + (kk + l) * C::B_LD + nb);
                    } else {
                        ldmatrix_x2(bf, b + (nb + (l & 7)) * C::B_LD + kk + (l >> 3) * 8);
                    }
#pragma unroll
                    for (int i = 0; i < C::MI; ++i) mma_16816<T>(acc[i][j], af[i], bf);
                }
            }
        }
        cp_async_wait<0>();  // only empty groups remain; nothing may land in a stage the next tile reuses

        // ---- epilogue: scale, SwiGLU, one rounding, 4-byte stores of column pairs ----
        const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
        for (int i = 0; i < C::MI; ++i) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = wm * C::WM + i * 16 + gid + h * 8;
                if (r >= m_rows) continue;
                const int row = m0 + r;
                const float s = scale != nullptr ? scale[row] : 1.0f;
                T* y = Y + (size_t)row * n_out;
                if (C::SWIGLU) {
#pragma unroll
                    for (int j = 0; j < C::NI / 2; ++j) {
                        const int col = n0 + wn * (C::WN / 2) + j * 8 + tig * 2;
                        if (col >= n_out) continue;
                        const float* gt = acc[i][j];
                        const float* up = acc[i][j + C::NI / 2];
                        const float v0 = silu(gt[h * 2]) * up[h * 2] * s;
                        const float v1 = silu(gt[h * 2 + 1]) * up[h * 2 + 1] * s;
                        *reinterpret_cast<uint32_t*>(y + col) = pack2<T>(v0, v1);
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < C::NI; ++j) {
                        const int col = n0 + wn * C::WN + j * 8 + tig * 2;
                        if (col >= N) continue;
                        *reinterpret_cast<uint32_t*>(y + col) = pack2<T>(acc[i][j][h * 2] * s, acc[i][j][h * 2 + 1] * s);
                    }
                }
            }
        }
    });
}


// ------------------------------------------------------------------------------------------------------
// Decode (streaming) variants d<BT>: few rows per expert, so the weights are the stream and the rows are
// the narrow side. Operands swapped: the mma's m16 side is 16 W columns (output features), its n8 side is
// 8 rows (tokens), so a row block of BT = 16 rows wastes at most 15/16 of a tile instead of 15/16 of a
// 64-row tile, and W is read exactly once per (group, row block). Tile: BNW W columns x BT rows x full K,
// warps split the W columns (each warp BNW / 4 columns, all BT rows), STAGES-deep cp.async ring of BK = 64
// (W and X together; ~56 KB of W in flight per CTA, 2 CTAs per SM). With SwiGLU each m16 tile holds 8 gate
// columns in rows 0..7 and the matching 8 up columns in rows 8..15, so a thread owns matching gate and up
// accumulators and tiles stay BNW = 64 wide. The ring runs across the tiles of a CTA without draining:
// the producer moves on to the CTA's next tile while the consumer finishes the last stages of the current
// one, and the next tile's gather indices are loaded one tile ahead. Epilogue straight from registers;
// neighbouring lanes swap values so every store writes two adjacent columns (4 bytes).
template <int BT_, int BNW_, int STAGES_, bool W_NK_, bool SWIGLU_>
struct DecodeConfig {
    static constexpr int BT = BT_, BNW = BNW_, BK = 64, STAGES = STAGES_;
    static constexpr bool W_NK = W_NK_, SWIGLU = SWIGLU_;
    static constexpr int THREADS = 128, WARPS = 4;
    static constexpr int WNW = BNW / WARPS;               // W columns per warp
    static constexpr int MI = WNW / 16, NT = BT / 8;      // m16 tiles (W columns) and n8 tiles (rows) per warp
    static constexpr int OUT_COLS = SWIGLU ? BNW / 2 : BNW;
    static constexpr int KC = BK / 8;                     // 16-byte chunks per BK
    static constexpr int X_LD = BK + 8;                   // [BT][X_LD], padded against bank conflicts
    static constexpr int W_ROWS = W_NK ? BNW : BK;        // nk: [BNW][BK + 8]; kn: [BK][BNW + 8]
    static constexpr int W_LD = W_NK ? BK + 8 : BNW + 8;
    static constexpr int X_STAGE = BT * X_LD, W_STAGE = W_ROWS * W_LD, STAGE = X_STAGE + W_STAGE;
    static constexpr int X_CHUNKS = BT * KC, W_CHUNKS = BNW * KC;  // 16-byte copies per stage
    static constexpr int XI = X_CHUNKS / THREADS;                   // X copies per thread per stage
    static_assert(WNW % 16 == 0, "warp columns must be whole m16 tiles");
    static_assert(NT % 2 == 0, "rows are loaded two n8 tiles per ldmatrix.x4");
    static_assert(X_CHUNKS % THREADS == 0 && W_CHUNKS % THREADS == 0, "whole copies per thread");
    static_assert(THREADS % KC == 0, "each thread copies the same X row in every stage");
    static_assert(STAGES >= 3, "a ring needs three stages to run across tiles");
    static_assert((X_LD * 2) % 16 == 0 && (W_LD * 2) % 16 == 0, "shared rows must stay 16-byte aligned");
};

struct DTile { int g, m0, rows, n0; };

// tile -> (group, first row, valid rows, first output column); tile < total tiles.
template <int BT, int OUT_COLS>
__device__ __forceinline__ DTile decode_tile(int tile, const int* tile_start, const int* gbeg, const int* gend, int G) {
    int lo = 0, hi = G - 1;  // last g with tile_start[g] <= tile (empty groups precede their successor)
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (tile_start[mid] <= tile) lo = mid; else hi = mid - 1;
    }
    DTile t;
    t.g = lo;
    const int row_blocks = (gend[lo] - gbeg[lo] + BT - 1) / BT;
    const int local = tile - tile_start[lo];
    t.m0 = gbeg[lo] + (local % row_blocks) * BT;
    t.rows = min(BT, gend[lo] - t.m0);
    t.n0 = (local / row_blocks) * OUT_COLS;
    return t;
}

template <typename T, typename C>
__device__ __forceinline__ void grouped_gemm_decode_body(const T* __restrict__ X, const T* __restrict__ W, T* __restrict__ Y,
                                                         const int* __restrict__ offsets, const int* __restrict__ gather,
                                                         const float* __restrict__ scale, int G, int T_total, int X_rows, int K,
                                                         int N) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* ring = reinterpret_cast<T*>(smem);                                   // [STAGES][X stage | W stage]
    int* tile_start = reinterpret_cast<int*>(ring + C::STAGES * C::STAGE);  // [G + 1]
    int* gbeg = tile_start + (G + 1);                                       // [G] first row of each group (clamped)
    int* gend = gbeg + G;                                                   // [G] end row of each group (clamped)

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int n_out = C::SWIGLU ? N / 2 : N;
    const int col_blocks = (n_out + C::OUT_COLS - 1) / C::OUT_COLS;

    // ---- schedule: group rows and the prefix of rowBlocks(g) · colBlocks tiles, in shared memory ----
    build_schedule<C::THREADS, C::BT>(offsets, G, T_total, col_blocks, tile_start, gbeg, gend);
    const int total_tiles = tile_start[G];
    if ((int)blockIdx.x >= total_tiles) return;
    const int k_tiles = max(1, (K + C::BK - 1) / C::BK);  // K = 0: one zero-filled k tile, the epilogue writes zeros
    const int my_tiles = (total_tiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1;
    const int total_it = my_tiles * k_tiles;
    auto tile_of = [&](int t) { return decode_tile<C::BT, C::OUT_COLS>(t, tile_start, gbeg, gend, G); };

    // Source row of X for this thread's X copies (row tid / KC + i·THREADS / KC of the tile); -1: zeros.
    const int xr0 = tid / C::KC;
    auto raw_src = [&](const DTile& t, int i) -> int {  // issues the gather load; checked later by to_src
        const int r = xr0 + i * (C::THREADS / C::KC);
        if (r >= t.rows) return -1;
        return gather != nullptr ? __ldg(gather + t.m0 + r) : t.m0 + r;
    };
    auto to_src = [&](const DTile& t, int i, int raw) -> int {
        const int r = xr0 + i * (C::THREADS / C::KC);
        return (r < t.rows && raw >= 0 && raw < X_rows) ? raw : -1;
    };

    // ---- producer state: the tile being loaded, its k tile, its X sources; the next tile's raw sources ----
    int p_it = 0, p_kt = 0, p_tile = blockIdx.x;
    DTile pt = tile_of(p_tile);
    int p_raw[C::XI], n_raw[C::XI];  // raw gather values, checked only when the X copy is issued
#pragma unroll
    for (int i = 0; i < C::XI; ++i) p_raw[i] = raw_src(pt, i);
    DTile nt = pt;
#pragma unroll
    for (int i = 0; i < C::XI; ++i) n_raw[i] = -1;
    if (p_tile + (int)gridDim.x < total_tiles) {
        nt = tile_of(p_tile + gridDim.x);
#pragma unroll
        for (int i = 0; i < C::XI; ++i) n_raw[i] = raw_src(nt, i);
    }

    // shared W column c of a tile -> W column (kn) or row (nk), and whether it exists
    auto w_col = [&](int c, bool& valid) -> int {
        if (C::SWIGLU) {  // blocks of 16: 8 gate columns, then the same 8 up columns
            const int out = pt.n0 + (c >> 4) * 8 + (c & 7);
            valid = out < n_out;
            return ((c & 8) ? n_out : 0) + out;
        }
        valid = pt.n0 + c < N;
        return pt.n0 + c;
    };

    auto produce = [&]() {
        if (p_it < total_it) {
            T* xs = ring + (p_it % C::STAGES) * C::STAGE;
            T* ws = xs + C::X_STAGE;
            const int k0 = p_kt * C::BK;
            const T* Wg = W + (size_t)pt.g * (size_t)K * (size_t)N;
#pragma unroll
            for (int j = 0; j < C::W_CHUNKS / C::THREADS; ++j) {  // W first: it does not wait for the gather
                const int c = tid + j * C::THREADS;
                if (!C::W_NK) {  // [BK][BNW]: row k, 8 columns
                    const int kr = c / (C::BNW / 8), q = c % (C::BNW / 8);
                    // SwiGLU: the row's first BNW/16 copies take the gate columns and the rest the up columns, so
                    // neighbouring threads read contiguous global bytes; shared column cc keeps the 8-gate/8-up blocks
                    const int cc = C::SWIGLU ? (q % (C::BNW / 16)) * 16 + (q / (C::BNW / 16)) * 8 : q * 8;
                    bool v;
                    const int col = w_col(cc, v);
                    v = v && k0 + kr < K;
                    cp_async16(ws + kr * C::W_LD + cc, v ? Wg + (size_t)(k0 + kr) * N + col : W, v);
                } else {  // [BNW][BK]: W row (= output column), 8 k
                    const int nr = c / C::KC, kc = (c % C::KC) * 8;
                    bool v;
                    const int row = w_col(nr, v);
                    v = v && k0 + kc < K;
                    cp_async16(ws + nr * C::W_LD + kc, v ? Wg + (size_t)row * K + k0 + kc : W, v);
                }
            }
#pragma unroll
            for (int i = 0; i < C::XI; ++i) {
                const int c = tid + i * C::THREADS;
                const int r = c / C::KC, kc = (c % C::KC) * 8;
                const int src = to_src(pt, i, p_raw[i]);
                const bool v = src >= 0 && k0 + kc < K;
                cp_async16(xs + r * C::X_LD + kc, v ? X + (size_t)src * K + k0 + kc : X, v);
            }
            ++p_it;
            if (++p_kt == k_tiles) {  // on to the CTA's next tile
                p_kt = 0;
                p_tile += gridDim.x;
                if (p_tile < total_tiles) {
                    pt = nt;
#pragma unroll
                    for (int i = 0; i < C::XI; ++i) p_raw[i] = n_raw[i];
                    if (p_tile + (int)gridDim.x < total_tiles) {
                        nt = tile_of(p_tile + gridDim.x);
#pragma unroll
                        for (int i = 0; i < C::XI; ++i) n_raw[i] = raw_src(nt, i);
                    }
                }
            }
        }
        cp_async_commit();  // always, so the group count stays in step with the stages
    };

    float acc[C::MI][C::NT][4];
#pragma unroll
    for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
    for (int s = 0; s < C::STAGES - 1; ++s) produce();

    const int gid = lane >> 2, tig = lane & 3;
    int c_kt = 0, c_tile = blockIdx.x;
#pragma unroll 1
    for (int it = 0; it < total_it; ++it) {
        cp_async_wait<C::STAGES - 2>();  // stage it has landed (this thread's copies) ...
        __syncthreads();                 // ... and everyone's; the slot of stage it-1 is free again
        produce();

        const T* xs = ring + (it % C::STAGES) * C::STAGE;
        const T* ws = xs + C::X_STAGE;
#pragma unroll
        for (int kk = 0; kk < C::BK; kk += 16) {
            uint32_t a[C::MI][4];
#pragma unroll
            for (int i = 0; i < C::MI; ++i) {
                const int cb = warp * C::WNW + i * 16;
                if (C::W_NK) {
                    ldmatrix_x4(a[i], ws + (cb + (lane & 15)) * C::W_LD + kk + (lane >> 4) * 8);
                } else {
                    ldmatrix_x4_trans(a[i], ws + (kk + (lane & 7) + ((lane >> 4) << 3)) * C::W_LD + cb + ((lane >> 3) & 1) * 8);
                }
            }
#pragma unroll
            for (int jp = 0; jp < C::NT / 2; ++jp) {
                uint32_t b[4];
                ldmatrix_x4(b, xs + (jp * 16 + (lane & 7) + ((lane >> 4) << 3)) * C::X_LD + kk + ((lane >> 3) & 1) * 8);
                const uint32_t b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
#pragma unroll
                for (int i = 0; i < C::MI; ++i) {
                    mma_16816<T>(acc[i][2 * jp], a[i], b0);
                    mma_16816<T>(acc[i][2 * jp + 1], a[i], b1);
                }
            }
        }

        if (++c_kt == k_tiles) {  // tile done: epilogue from the accumulators, then start the next
            c_kt = 0;
            const DTile ct = tile_of(c_tile);
            c_tile += gridDim.x;
#pragma unroll
            for (int j = 0; j < C::NT; ++j) {
                const int t0 = j * 8 + tig * 2;  // this thread's rows t0, t0 + 1 of the tile
                const float s0 = (scale != nullptr && t0 < ct.rows) ? scale[ct.m0 + t0] : 1.0f;
                const float s1 = (scale != nullptr && t0 + 1 < ct.rows) ? scale[ct.m0 + t0 + 1] : 1.0f;
#pragma unroll
                for (int i = 0; i < C::MI; ++i) {
                    const int cb = warp * C::WNW + i * 16;
                    float* c = acc[i][j];
                    // (value at row t0, value at row t0 + 1) for up to two columns of this lane
                    float v[2][2];
                    int col[2];
                    int ncols;
                    if (C::SWIGLU) {
                        v[0][0] = silu(c[0]) * c[2] * s0;
                        v[0][1] = silu(c[1]) * c[3] * s1;
                        col[0] = ct.n0 + (cb >> 4) * 8 + gid;
                        ncols = 1;
                    } else {
                        v[0][0] = c[0] * s0;
                        v[0][1] = c[1] * s1;
                        v[1][0] = c[2] * s0;
                        v[1][1] = c[3] * s1;
                        col[0] = ct.n0 + cb + gid;
                        col[1] = col[0] + 8;
                        ncols = 2;
                    }
#pragma unroll
                    for (int q = 0; q < 2; ++q) {
                        if (q >= ncols) break;
                        // lanes gid and gid ^ 1 hold neighbouring columns: the even one stores row t0, the odd one row t0 + 1
                        const bool odd = gid & 1;
                        const float recv = __shfl_xor_sync(0xffffffffu, odd ? v[q][0] : v[q][1], 4);
                        const int row = t0 + (odd ? 1 : 0);
                        const int c0 = col[q] - (odd ? 1 : 0);
                        const float lo = odd ? recv : v[q][0], hi = odd ? v[q][1] : recv;
                        if (row < ct.rows && c0 < n_out) {
                            *reinterpret_cast<uint32_t*>(Y + (size_t)(ct.m0 + row) * n_out + c0) = pack2<T>(lo, hi);
                        }
                    }
#pragma unroll
                    for (int e = 0; e < 4; ++e) c[e] = 0.f;
                }
            }
        }
    }
    cp_async_wait<0>();  // nothing may still land in shared memory when the CTA exits
}


// ------------------------------------------------------------------------------------------------------
// Hopper variants w<BM> (sm_90a SASS only): the mma tiles above with warpgroup MMA. WGS warpgroups of 128
// threads each own 64 rows of a BM = 64·WGS row tile; the tile is BN = 128·NB W columns (NB m64n128k16
// instructions per k16 step); every thread also copies (16-byte cp.async, zero fill past K, N and the group's
// rows, gather through row_src) into a STAGES-deep ring of 128-byte-swizzled stages, PREFETCH = STAGES - 2 k
// tiles ahead, so the stage being overwritten was read by a wgmma group every warpgroup has waited for. A
// (gathered X rows) is K-major; W[g] is K-major as [N, K] (nk) and MN-major as [K, N] (kn, transposed by the
// instruction). Epilogue from the accumulators as in the mma tiles (common/wgmma.cuh has the layouts).
template <int WGS_, int NB_, int STAGES_, bool W_NK_, bool SWIGLU_, bool WIDE_ = false>
struct WConfig {
    static constexpr bool WIDE = WIDE_;  // NB = 2 as one m64n256k16 instead of two m64n128k16
    static constexpr int WGS = WGS_, NB = NB_, STAGES = STAGES_;
    static constexpr int BM = 64 * WGS, BN = 128 * NB, BK = 64;
    static constexpr bool W_NK = W_NK_, SWIGLU = SWIGLU_;
    static constexpr int THREADS = 128 * WGS;
    static constexpr int OUT_COLS = SWIGLU ? BN / 2 : BN;
    static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128, STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int PREFETCH = STAGES - 2;
    static_assert(STAGES >= 3, "the ring needs a stage in flight beyond the two wgmma may read");
    static_assert(BM <= THREADS, "one thread per row of the gather table");
    static_assert(!WIDE || NB == 2, "the wide instruction covers 256 columns");
};

template <typename T, typename C>
__device__ __forceinline__ void grouped_gemm_wgmma_body(const T* __restrict__ X, const T* __restrict__ W, T* __restrict__ Y,
                                                        const int* __restrict__ offsets, const int* __restrict__ gather,
                                                        const float* __restrict__ scale, int G, int T_total, int X_rows, int K, int N) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t raw = smem_u32(smem);
    unsigned char* ring = smem + (((raw + 1023u) & ~1023u) - raw);  // swizzle atoms need 1024-byte alignment
    const uint32_t ring_u32 = smem_u32(ring);
    int* tile_start = reinterpret_cast<int*>(ring + C::STAGES * C::STAGE_BYTES);  // [G + 1]
    int* row_src = tile_start + (G + 1);                                          // [BM]

    const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, wwarp = (tid >> 5) & 3;
    const int n_out = C::SWIGLU ? N / 2 : N;
    const int k_tiles = (K + C::BK - 1) / C::BK;

    for_each_mma_tile<C>(offsets, gather, G, T_total, X_rows, n_out, tile_start, row_src, [&](const MTile& mt) {
        const int m0 = mt.m0, m_rows = mt.rows, n0 = mt.n0;
        const T* Wg = W + (size_t)mt.g * (size_t)K * (size_t)N;  // [K, N] or [N, K]

        TileCopies<T, C::BM, C::BN, C::THREADS, C::W_NK, C::SWIGLU> copies;
        copies.resolve(tid, row_src, X, K, Wg, N, n0, n_out);
        auto load_stage = [&](int stage, int kt) {  // 128-byte-swizzled rows (common/wgmma.cuh)
            unsigned char* a = ring + stage * C::STAGE_BYTES;
            copies.issue(tid, kt * C::BK, K, N, X, W, a, a + C::A_BYTES, [](int r, int kc) { return r * 128 + ((kc ^ (r & 7)) << 4); },
                         [](int r, int c) {
                             return C::W_NK ? r * 128 + ((c ^ (r & 7)) << 4)  // nk: W row r, chunk c
                                            : (c >> 6) * (64 * 128) + r * 128 + ((((c >> 3) & 7) ^ (r & 7)) << 4);  // kn: k row r, column c
                         });
        };

        float acc[C::NB][64];
#pragma unroll
        for (int h = 0; h < C::NB; ++h)
#pragma unroll
            for (int e = 0; e < 64; ++e) acc[h][e] = 0.f;

#pragma unroll
        for (int s = 0; s < C::PREFETCH; ++s) {
            if (s < k_tiles) load_stage(s, s);
            cp_async_commit();
        }
#pragma unroll 1
        for (int kt = 0; kt < k_tiles; ++kt) {
            cp_async_wait<C::PREFETCH - 1>();  // tile kt has landed (this thread's copies) ...
            fence_proxy_async_smem();          // ... is visible to the async proxy ...
            __syncthreads();                   // ... for every thread; every group has waited for tile kt - 2's wgmma
            const int next = kt + C::PREFETCH;
            if (next < k_tiles) load_stage(next % C::STAGES, next);
            cp_async_commit();

            const uint32_t a_u32 = ring_u32 + (kt % C::STAGES) * C::STAGE_BYTES + wg * (64 * 128);
            const uint32_t b_u32 = ring_u32 + (kt % C::STAGES) * C::STAGE_BYTES + C::A_BYTES;
#pragma unroll
            for (int h = 0; h < C::NB; ++h)
#pragma unroll
                for (int e = 0; e < 64; ++e) wgmma_pin(acc[h][e]);
            wgmma_fence();
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const uint64_t da = wgmma_desc(a_u32 + j * 32, 16, 1024);
                if constexpr (C::WIDE) {  // all 256 columns in one instruction: acc[0..1] are its 128 registers in order
                    float(&acc2)[128] = *reinterpret_cast<float(*)[128]>(&acc[0][0]);
                    if (C::W_NK) {
                        wgmma_n256<T, 0>(acc2, da, wgmma_desc(b_u32 + j * 32, 16, 1024));
                    } else {
                        wgmma_n256<T, 1>(acc2, da, wgmma_desc(b_u32 + j * 2048, 64 * 128, 1024));
                    }
                } else {
#pragma unroll
                    for (int h = 0; h < C::NB; ++h) {
                        if (C::W_NK) {
                            wgmma_n128<T, 0>(acc[h], da, wgmma_desc(b_u32 + h * (128 * 128) + j * 32, 16, 1024));
                        } else {
                            const uint32_t addr = b_u32 + h * (2 * 64 * 128) + j * 2048;
                            wgmma_n128<T, 1>(acc[h], da, wgmma_desc(addr, 64 * 128, 1024));
                        }
                    }
                }
            }
            wgmma_commit();
#pragma unroll
            for (int h = 0; h < C::NB; ++h)
#pragma unroll
                for (int e = 0; e < 64; ++e) wgmma_pin(acc[h][e]);
            wgmma_wait<1>();
        }
        wgmma_wait<0>();
#pragma unroll
        for (int h = 0; h < C::NB; ++h)
#pragma unroll
            for (int e = 0; e < 64; ++e) wgmma_pin(acc[h][e]);
        cp_async_wait<0>();

        // ---- epilogue: scale, SwiGLU, one rounding, 4-byte stores of column pairs ----
        const int gid = lane >> 2, tig = lane & 3;
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
            const int r = wg * 64 + wwarp * 16 + gid + hr * 8;
            if (r >= m_rows) continue;
            const int row = m0 + r;
            const float s = scale != nullptr ? scale[row] : 1.0f;
            T* y = Y + (size_t)row * n_out;
            if (C::SWIGLU) {
#pragma unroll
                for (int gi = 0; gi < C::BN / 16; ++gi) {  // gate n8 block gi, up block gi + BN / 16
                    const int cg = gi * 8, cu = cg + C::BN / 2;
                    const int col = n0 + cg + tig * 2;
                    if (col >= n_out) continue;
                    const float* gt = &acc[cg / 128][((cg % 128) / 8) * 4];
                    const float* up = &acc[cu / 128][((cu % 128) / 8) * 4];
                    const float v0 = silu(gt[hr * 2]) * up[hr * 2] * s;
                    const float v1 = silu(gt[hr * 2 + 1]) * up[hr * 2 + 1] * s;
                    *reinterpret_cast<uint32_t*>(y + col) = pack2<T>(v0, v1);
                }
            } else {
#pragma unroll
                for (int bi = 0; bi < C::BN / 8; ++bi) {
                    const int col = n0 + bi * 8 + tig * 2;
                    if (col >= N) continue;
                    const float* c = &acc[bi / 16][(bi % 16) * 4];
                    *reinterpret_cast<uint32_t*>(y + col) = pack2<T>(c[hr * 2] * s, c[hr * 2 + 1] * s);
                }
            }
        }
    });
#else
    __trap();  // built into the sm_90a SASS only; GroupedGemmHeuristics never picks it on another architecture
#endif
}

}  // namespace

// Shared memory of a launch = the pipeline stages of the config + 4·(G + 1 + BM) bytes of schedule and row
// table (GroupedGemmHeuristics.Variant.smemBytes mirrors it). Block: 128 threads. Symbols:
// gg_<m16|m64>_<f16|bf16>_<kn|nk>_<plain|swiglu>. MINB (CTAs per SM) caps registers at 65536 / (128·MINB).
#define GG_KERNEL(NAME, T, BM, BN, WM, WN, ST, NK, SW, MINB)                                                      \
    extern "C" __global__ void __launch_bounds__(32 * WM * WN, MINB)                                              \
        NAME(const T* X, const T* W, T* Y, const int* offsets, const int* gather, const float* scale, int G,      \
             int T_total, int X_rows, int K, int N) {                                                             \
        grouped_gemm_body<T, Config<BM, BN, WM, WN, ST, NK, SW>>(X, W, Y, offsets, gather, scale, G, T_total,     \
                                                                 X_rows, K, N);                                   \
    }
#define GG_LAYOUTS(CFG, T, TN, BM, BN, WM, WN, ST, MINB)                                 \
    GG_KERNEL(gg_##CFG##_##TN##_kn_plain, T, BM, BN, WM, WN, ST, false, false, MINB)  \
    GG_KERNEL(gg_##CFG##_##TN##_kn_swiglu, T, BM, BN, WM, WN, ST, false, true, MINB)  \
    GG_KERNEL(gg_##CFG##_##TN##_nk_plain, T, BM, BN, WM, WN, ST, true, false, MINB)   \
    GG_KERNEL(gg_##CFG##_##TN##_nk_swiglu, T, BM, BN, WM, WN, ST, true, true, MINB)
#define GG_CONFIG(CFG, BM, BN, WM, WN, ST, MINB)                    \
    GG_LAYOUTS(CFG, __half, f16, BM, BN, WM, WN, ST, MINB)          \
    GG_LAYOUTS(CFG, __nv_bfloat16, bf16, BM, BN, WM, WN, ST, MINB)

//         name BM  BN   warps  stages CTAs/SM
GG_CONFIG(m16, 16, 64, 1, 4, 4, 4)
GG_CONFIG(m64, 64, 128, 2, 2, 3, 2)

// Decode variants: shared memory = STAGES·(BT·72 + W stage)·2 + 4·(3G + 1) bytes, W stage = BNW·72 (nk) or
// 64·(BNW + 8) (kn) elements. Symbols gg_<name>_<f16|bf16>_<kn|nk>_<plain|swiglu>; 128 threads, 2 CTAs/SM.
#define GGD_KERNEL(NAME, T, BT, BNW, ST, NK, SW)                                                                 \
    extern "C" __global__ void __launch_bounds__(128, 2)                                                          \
        NAME(const T* X, const T* W, T* Y, const int* offsets, const int* gather, const float* scale, int G,      \
             int T_total, int X_rows, int K, int N) {                                                             \
        grouped_gemm_decode_body<T, DecodeConfig<BT, BNW, ST, NK, SW>>(X, W, Y, offsets, gather, scale, G,        \
                                                                       T_total, X_rows, K, N);                    \
    }
#define GGD_LAYOUTS(CFG, T, TN, BT, BNW, ST)                                   \
    GGD_KERNEL(gg_##CFG##_##TN##_kn_plain, T, BT, BNW, ST, false, false)     \
    GGD_KERNEL(gg_##CFG##_##TN##_kn_swiglu, T, BT, BNW, ST, false, true)     \
    GGD_KERNEL(gg_##CFG##_##TN##_nk_plain, T, BT, BNW, ST, true, false)      \
    GGD_KERNEL(gg_##CFG##_##TN##_nk_swiglu, T, BT, BNW, ST, true, true)
#define GGD_CONFIG(CFG, BT, BNW, ST)                          \
    GGD_LAYOUTS(CFG, __half, f16, BT, BNW, ST)                \
    GGD_LAYOUTS(CFG, __nv_bfloat16, bf16, BT, BNW, ST)

//          name  BT  BNW stages
GGD_CONFIG(d16, 16, 64, 8)
#ifdef GG_EXPERIMENTAL  // harness-only variants (cuda-native/dev/grouped_gemm/harness.cu)
GGD_CONFIG(d32, 32, 64, 7)
GGD_CONFIG(d16w, 16, 128, 5)
#endif

// Hopper variants: shared memory = 1024 (alignment) + STAGES·(BM + BN)·128 + 4·(G + 1 + BM) bytes; block
// 128·WGS threads, one CTA per SM unless the ring leaves room for two. Symbols gg_<name>_<f16|bf16>_<kn|nk>_<...>.
#define GGW_KERNEL(NAME, T, WGS, NB, ST, NK, SW, MINB, WIDE)                                                     \
    extern "C" __global__ void __launch_bounds__(128 * WGS, MINB)                                                 \
        NAME(const T* X, const T* W, T* Y, const int* offsets, const int* gather, const float* scale, int G,      \
             int T_total, int X_rows, int K, int N) {                                                             \
        grouped_gemm_wgmma_body<T, WConfig<WGS, NB, ST, NK, SW, WIDE>>(X, W, Y, offsets, gather, scale, G,        \
                                                                       T_total, X_rows, K, N);                    \
    }
#define GGW_LAYOUTS(CFG, T, TN, WGS, NB, ST, MINB, WIDE)                                   \
    GGW_KERNEL(gg_##CFG##_##TN##_kn_plain, T, WGS, NB, ST, false, false, MINB, WIDE)     \
    GGW_KERNEL(gg_##CFG##_##TN##_kn_swiglu, T, WGS, NB, ST, false, true, MINB, WIDE)     \
    GGW_KERNEL(gg_##CFG##_##TN##_nk_plain, T, WGS, NB, ST, true, false, MINB, WIDE)      \
    GGW_KERNEL(gg_##CFG##_##TN##_nk_swiglu, T, WGS, NB, ST, true, true, MINB, WIDE)
#define GGW_CONFIG(CFG, WGS, NB, ST, MINB, WIDE)                    \
    GGW_LAYOUTS(CFG, __half, f16, WGS, NB, ST, MINB, WIDE)          \
    GGW_LAYOUTS(CFG, __nv_bfloat16, bf16, WGS, NB, ST, MINB, WIDE)

//          name    WGS NB stages CTAs/SM wide
GGW_CONFIG(w64,      1, 1, 4, 2, false)  // 64 x 128 tiles, two CTAs per SM: up to ~64 rows per expert
GGW_CONFIG(w128n2,   2, 2, 4, 1, true)   // 128 x 256 tiles, one m64n256k16 per warpgroup and k16 step
GGW_CONFIG(w64s6,    1, 1, 6, 1, false)  // w64 with six stages, one CTA per SM: decode when the tiles fit one wave
#ifdef GG_EXPERIMENTAL  // harness-only (cuda-native/dev/grouped_gemm/h100-wgmma-sweep.txt)
GGW_CONFIG(w128,     2, 1, 4, 1, false)  // 128 x 128 tiles
GGW_CONFIG(w128t,    2, 2, 4, 1, false)  // w128n2 as two m64n128k16 per k16 step (3333a77's w128n2)
GGW_CONFIG(w64n2,    1, 2, 4, 1, false)  // 64 x 256 tiles
GGW_CONFIG(w64w,     1, 2, 4, 1, true)   // w64n2 with one m64n256k16 per k16 step
GGW_CONFIG(w128s6,   2, 1, 6, 1, false)  // w128 with two more stages (four k tiles ahead)
GGW_CONFIG(w64n2s5,  1, 2, 5, 1, false)  // w64n2 with a fifth stage
GGW_CONFIG(w64s3,    1, 1, 3, 3, false)  // w64 with three stages, three CTAs per SM (decode: more CTAs in flight)
GGW_CONFIG(w64s8,    1, 1, 8, 1, false)  // w64 with eight stages, one CTA per SM (decode: six k tiles ahead)
#endif
