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
//   experts) and m64 (BM 64, BN 128, 2x2, 3 stages, 2 CTAs/SM: everything else). An m32 (BM 32, BN 64)
//   variant measured at commit 69d1975 was never faster than the better of these two (dev/grouped_gemm/).
// Floor: max(bytes(active experts' W + X rows read + Y written) / copy bandwidth, 2·T_total·K·N / bf16 rate).
// Measured (H100 SXM, bf16, kn, commit 69d1975, dev/grouped_gemm/h100-69d1975.txt; floor with 3.0 TB/s, 700 TFLOP/s):
//   E=64 top-8 H=2048 I=1024 gate-up: T=1 46 µs (49 % of floor), T=16 196 µs (76 %), T=128 219 µs (82 %),
//   T=512 295 µs (62 %), T=2048 833 µs (24 %; the cuBLAS loop 794 µs). E=160 top-6 H=5120 I=1536 T=512:
//   1880 µs (90 %). Per-expert cuBLAS loop: 1.1-2.2x slower for E >= 64, T <= 512. Loses to cuBLAS on the
//   coarse E=8 I=14336 config at T=2048 (5045 vs 1969 µs: mma.sync without wgmma is ~4x off the bf16 rate)
//   and at T=1 (199 vs 181 µs gate-up, 133 vs 101 µs down: too few tiles to cover the memory latency).
// Limits (validated in Java): K % 8 == 0, N % 8 == 0 (with SwiGLU N/2 % 8 == 0), 16-byte aligned X, W,
//   Y; T_total·max(K, N) < 2^31; G ≤ 4096 (the prefix sum lives in shared memory). Offsets are clamped to
//   [0, T_total] and gather entries outside [0, rows of X) read zeros, so malformed device data cannot make
//   the kernel access memory out of bounds (gapfill.debug.checkOffsets reports them on the host).
#include "gapfill_types.cuh"
#include "grouped_gemm_mma.cuh"

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

template <typename T, typename C>
__device__ __forceinline__ void grouped_gemm_body(const T* __restrict__ X, const T* __restrict__ W, T* __restrict__ Y,
                                                  const int* __restrict__ offsets, const int* __restrict__ gather,
                                                  const float* __restrict__ scale, int G, int T_total, int X_rows, int K, int N) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* sA = reinterpret_cast<T*>(smem);                                // [STAGES][BM][A_LD]
    T* sB = sA + C::STAGES * C::A_STAGE;                               // [STAGES][B_ROWS][B_LD]
    int* tile_start = reinterpret_cast<int*>(sB + C::STAGES * C::B_STAGE);  // [G + 1] prefix of tiles per group
    int* row_src = tile_start + (G + 1);                               // [BM] source row of X per tile row, -1 past the group
    __shared__ int warp_sums[C::THREADS / 32];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
    const int n_out = C::SWIGLU ? N / 2 : N;  // output columns
    const int col_blocks = (n_out + C::OUT_COLS - 1) / C::OUT_COLS;

    // ---- schedule: tile_start[g] = Σ_{h<g} rowBlocks(h) · colBlocks, built by every CTA from offsets ----
    {
        const int per = (G + C::THREADS - 1) / C::THREADS;  // contiguous chunk of groups per thread
        const int g0 = min(tid * per, G), g1 = min(g0 + per, G);
        int mine = 0;
        for (int g = g0; g < g1; ++g) {
            int s, e;
            group_rows(offsets, g, T_total, s, e);
            mine += (e - s + C::BM - 1) / C::BM * col_blocks;
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
            before += (e - s + C::BM - 1) / C::BM * col_blocks;
        }
        if (tid == C::THREADS - 1) tile_start[G] = before;  // the last thread's running sum is the total
        __syncthreads();
    }
    const int total_tiles = tile_start[G];
    const int k_tiles = (K + C::BK - 1) / C::BK;

    for (int tile = blockIdx.x; tile < total_tiles; tile += gridDim.x) {
        // ---- tile -> (group, row block, col block) ----
        int lo = 0, hi = G - 1;  // last g with tile_start[g] <= tile (empty groups precede their successor)
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (tile_start[mid] <= tile) lo = mid; else hi = mid - 1;
        }
        const int g = lo;
        int g_start, g_end;
        group_rows(offsets, g, T_total, g_start, g_end);
        const int row_blocks = (g_end - g_start + C::BM - 1) / C::BM;
        const int local = tile - tile_start[g];
        const int m0 = g_start + (local % row_blocks) * C::BM;  // first grouped row of the tile
        const int m_rows = min(C::BM, g_end - m0);               // valid rows of the tile
        const int n0 = (local / row_blocks) * C::OUT_COLS;       // first output column of the tile
        const T* Wg = W + (size_t)g * (size_t)K * (size_t)N;     // [K, N] or [N, K]

        __syncthreads();  // the previous tile's readers of row_src and of the stages are done
        if (tid < C::BM) {
            int src = -1;
            if (tid < m_rows) {
                src = gather != nullptr ? gather[m0 + tid] : m0 + tid;
                if (src < 0 || src >= X_rows) src = -2;  // out-of-range gather: reads zeros
            }
            row_src[tid] = src;
        }
        __syncthreads();

        // W column (kn) or row (nk) behind shared column c of the tile, and whether it exists.
        auto w_col = [&](int c, bool& valid) -> int {
            if (C::SWIGLU) {
                const bool up = c >= C::BN / 2;
                const int lc = up ? c - C::BN / 2 : c;
                valid = n0 + lc < n_out;
                return (up ? n_out : 0) + n0 + lc;
            }
            valid = n0 + c < N;
            return n0 + c;
        };

        auto load_stage = [&](int stage, int kt) {
            const int k0 = kt * C::BK;
            T* a = sA + stage * C::A_STAGE;
            T* b = sB + stage * C::B_STAGE;
            constexpr int KC = C::BK / 8;  // 16-byte chunks per row of BK
#pragma unroll
            for (int c = tid; c < C::BM * KC; c += C::THREADS) {  // A: [BM][BK], gathered rows
                const int r = c / KC, kc = (c % KC) * 8;
                const int src = row_src[r];
                const bool v = src >= 0 && k0 + kc < K;
                cp_async16(a + r * C::A_LD + kc, v ? X + (size_t)src * K + k0 + kc : X, v);
            }
            if (!C::W_NK) {  // B: W[g] rows k0..k0+BK, BN columns -> [BK][BN]
                constexpr int NC = C::BN / 8;
#pragma unroll
                for (int c = tid; c < C::BK * NC; c += C::THREADS) {
                    const int kr = c / NC, cc = (c % NC) * 8;
                    bool v;
                    const int col = w_col(cc, v);
                    v = v && k0 + kr < K;
                    cp_async16(b + kr * C::B_LD + cc, v ? Wg + (size_t)(k0 + kr) * N + col : W, v);
                }
            } else {  // B: W[g] rows (= output columns) of the tile, k0..k0+BK -> [BN][BK]
#pragma unroll
                for (int c = tid; c < C::BN * KC; c += C::THREADS) {
                    const int nr = c / KC, kc = (c % KC) * 8;
                    bool v;
                    const int row = w_col(nr, v);
                    v = v && k0 + kc < K;
                    cp_async16(b + nr * C::B_LD + kc, v ? Wg + (size_t)row * K + k0 + kc : W, v);
                }
            }
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
    }
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
