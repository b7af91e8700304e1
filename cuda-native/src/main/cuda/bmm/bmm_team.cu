// Batched matmul, team-streaming version: C[b] = op(A[b]) · op(B[b]), m, n, k <= 128, batch of many,
// every stored row a multiple of 16 bytes (F16/BF16: the stored column counts of A, B and n % 8 == 0;
// F32: % 4 == 0), A, B, C 16-byte aligned, B not shared. BmmHeuristics picks it over bmm_small.cu
// where it measured faster (see "Dispatch" in docs/ops/bmm.md); unaligned views run bmm_small.
// bmm_team8_*: the same kernel for F16/BF16 rows that are multiples of 8 bytes only (the stored column
// counts % 4 == 0, e.g. 100) with A, B, C 8-byte aligned: 8-byte cp.async chunks and C stores.
//
// Regime: n <= 32 (F16/BF16) and n <= 48 (F32) at batch >= 2048, where bmm_small's one-shot blocks
// leave DRAM idle between load and store. Floor: batch·(m·k + k·n + m·n)·sizeof(T) / copy bandwidth.
// Measured (H100 SXM, harness cuda-native/dev/bmm/bench_bmm.cu at 4de5ecd, read-based L2 flush,
// results-h100-4de5ecd.txt; shipped plan in parentheses): f16 8192 32^3 19.68 us vs bmm_small 23.20,
// cuBLAS 31.04 (w1 g1 s2 sc), 86 % of the copy floor; f16 2048 32^3 8.90 vs 9.09; f32 8192 32^3 38.40
// vs 40.99 (w1 g1 s2 dc); f32 2048 1x64x64 17.89 vs cuBLAS 21.73. Best configurations reach 81-93 % of
// the floor for F16 48^3..128^3 at batch 8192 but stay behind cuBLAS there (e.g. 128^3 290 vs 267 us).
// Limits: m, n, k <= 128; batch·m·k, batch·k·n, batch·m·n < 2^31; shared memory per team =
//   stages · mats · (A slot + B slot) + (direct_c ? 0 : mats · C slot), as BmmHeuristics.teamPlan computes.
//
// Design. A block is `teams` independent teams of W warps (W = 1: a single warp). Each team owns a
// ring of `stages` shared-memory stages and walks the groups g = team id, team id + all teams, ... of
// `mats` consecutive matrices; teams synchronise only among themselves (__syncwarp for one warp,
// named barrier 1 + team otherwise), so the warps of an SM drift apart and some team always has loads
// in flight, where block-wide barriers make all warps wait together (dev/bmm/bmm_stream.cu).
// The loader has no address arithmetic in its loop: A (and B, and C) of consecutive matrices is one
// contiguous range in global memory, so a thread's source address advances by a constant, and its
// shared-memory destination (rows padded to an odd number of 16-byte chunks, so ldmatrix stays
// conflict-free) follows by strength reduction: the (row, chunk) position of the thread's first chunk
// and of one step are divided out once per kernel (make_walk); the loop adds and wraps (two
// compares), no division, no multiplication. 16-byte cp.async throughout (sm_80 and sm_90 alike; 8-byte
// chunks in bmm_team8_*). C is either staged in shared memory and written with 16-byte (8-byte) stores by the same kind of walk
// (direct_c = 0), or written from registers as 4-byte pairs (F16/BF16) / float4 (F32) (direct_c = 1),
// which saves the staging area.
//   F16/BF16: each warp of the team takes 32x32 output tiles (16x16 sub-tiles past m or n skipped),
//     four ldmatrix.x4 feed eight mma.sync.m16n8k16 per k16 step (fp32 accumulation). The k padding of
//     every stage is zeroed once: the loader writes data positions only, and nothing else writes there.
//   F32: each thread of the team takes 4x4 tiles, k in order 0..k-1 with fmaf, so the result is bit for
//     bit the sequential fmaf sum (as bmm_small.cu; tests compare it exactly).
#include "gapfill_types.cuh"
#include "bmm_mma.cuh"
#include "bmm_ffma.cuh"

namespace gapfill_bmm_team {
using namespace gapfill;

__host__ __device__ constexpr int rup(int x, int m) { return (x + m - 1) / m * m; }

// Shared-memory slot of one operand stored [rows][cols]: rows and cols padded to P (16 for tensor
// cores, 4 for FFMA), row stride an odd number of 16-byte chunks.
template <typename T> struct Geo {
    static constexpr int P = sizeof(T) == 2 ? 16 : 4;
    static constexpr int V = 16 / sizeof(T);
    int rows, cols, rows_p, cols_p, stride;
    __device__ __forceinline__ Geo(int r, int c) : rows(r), cols(c) {
        rows_p = rup(r, P);
        cols_p = rup(c, P);
        stride = cols_p + (((cols_p / V) % 2 == 0) ? V : 0);
    }
    __device__ __forceinline__ int elems() const { return rows_p * stride; }
};

// One thread's walk over the CB-byte chunks (16, or 8 in bmm_team8_*) of V = CB / sizeof(T) elements of
// consecutive [rows][cols] matrices, chunk i = t, t + step, ...: global offset i·V elements; shared offset
// j·slot + r·stride + c·V for i = (j·rows + r)·cpr + c. Divided out once; the loop only adds.
struct Walk {
    int r0, c0, d0;  // first chunk: row within its matrix, chunk within the row, shared offset
    int qr, qc, dd;  // one step: rows (mod rows), chunks (mod cpr), shared offset (whole matrices included)
    int cpr, rows;
    int wrap_c, wrap_r;  // shared-offset corrections when the chunk, the row index wraps
};
template <typename T, int CB>
__device__ __forceinline__ Walk make_walk(const Geo<T>& o, int slot, int t, int step) {
    constexpr int V = CB / (int)sizeof(T);
    Walk w;
    w.cpr = o.cols / V;
    w.rows = o.rows;
    int R = t / w.cpr;
    w.c0 = t - R * w.cpr;
    int j = R / o.rows;
    w.r0 = R - j * o.rows;
    w.d0 = j * slot + w.r0 * o.stride + w.c0 * V;
    R = step / w.cpr;
    w.qc = step - R * w.cpr;
    j = R / o.rows;
    w.qr = R - j * o.rows;
    w.dd = j * slot + w.qr * o.stride + w.qc * V;
    w.wrap_c = o.stride - w.cpr * V;
    w.wrap_r = slot - o.rows * o.stride;
    return w;
}
__device__ __forceinline__ void walk_step(const Walk& w, int& r, int& c, int& d) {
    c += w.qc;
    r += w.qr;
    d += w.dd;
    if (c >= w.cpr) { c -= w.cpr; ++r; d += w.wrap_c; }
    if (r >= w.rows) { r -= w.rows; d += w.wrap_r; }
}

__device__ __forceinline__ void cp_async8(void* smem_dst, const void* gmem_src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_addr(smem_dst)), "l"(gmem_src) : "memory");
}
// Global -> shared: `total` chunks (nm matrices) from g.
template <typename T, int CB>
__device__ __forceinline__ void load_walk(T* s, const T* __restrict__ g, int total, const Walk& w, int t, int step) {
    constexpr int V = CB / (int)sizeof(T);
    int r = w.r0, c = w.c0, d = w.d0;
    const T* src = g + (size_t)t * V;
    const size_t sstep = (size_t)step * V;
    for (int i = t; i < total; i += step) {
        if constexpr (CB == 16) {
            cp_async16(s + d, src);
        } else {
            cp_async8(s + d, src);
        }
        src += sstep;
        walk_step(w, r, c, d);
    }
}
// Shared -> global (C staging): `total` chunks to g.
template <typename T, int CB>
__device__ __forceinline__ void store_walk(T* __restrict__ g, const T* s, int total, const Walk& w, int t, int step) {
    constexpr int V = CB / (int)sizeof(T);
    int r = w.r0, c = w.c0, d = w.d0;
    T* dst = g + (size_t)t * V;
    const size_t sstep = (size_t)step * V;
    for (int i = t; i < total; i += step) {
        if constexpr (CB == 16) {
            *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(s + d);
        } else {
            *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(s + d);
        }
        dst += sstep;
        walk_step(w, r, c, d);
    }
}

// Zeroes the k padding of nm slots (run once per kernel; divisions are fine here).
template <typename T>
__device__ __forceinline__ void zero_kpad(T* s, int nm, const Geo<T>& o, int slot, bool k_in_cols, int t, int step) {
    if (k_in_cols) {
        const int pad = o.cols_p - o.cols;
        const int total = nm * o.rows_p * pad;
        for (int i = t; i < total; i += step) {
            const int R = i / pad, c = o.cols + (i - R * pad);
            const int j = R / o.rows_p, r = R - j * o.rows_p;
            s[j * slot + r * o.stride + c] = from_float<T>(0.f);
        }
    } else {
        const int prow = o.rows_p - o.rows;
        const int cpr = o.stride / Geo<T>::V;
        const int total = nm * prow * cpr;
        for (int i = t; i < total; i += step) {
            const int R = i / cpr, c = i - R * cpr;
            const int j = R / prow, r = o.rows + (R - j * prow);
            *reinterpret_cast<uint4*>(s + j * slot + r * o.stride + c * Geo<T>::V) = make_uint4(0, 0, 0, 0);
        }
    }
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void cp_async_wait_pending(int pending) {  // 0 <= pending <= 4
    switch (pending) {
        case 0: cp_async_wait<0>(); break;
        case 1: cp_async_wait<1>(); break;
        case 2: cp_async_wait<2>(); break;
        case 3: cp_async_wait<3>(); break;
        default: cp_async_wait<4>(); break;
    }
}
// Barrier over one team: a warp needs only __syncwarp; larger teams use named barrier 1 + team.
__device__ __forceinline__ void team_sync(int team, int team_threads) {
    if (team_threads == 32) {
        __syncwarp();
    } else {
        asm volatile("bar.sync %0, %1;\n" ::"r"(team + 1), "r"(team_threads) : "memory");
    }
}

// ---------------------------------------------------------------- tensor cores (F16 / BF16)
// One group of nm matrices by one team: warp wt of W takes 32x32 tiles wt, wt + W, ...; results go to
// the C staging slots (Cg == nullptr) or straight to global memory Cg (4-byte pairs; n % 4 == 0).
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void mma_group(const T* sA, int aslot, const Geo<T>& ga, const T* sB, int bslot, const Geo<T>& gb,
                                          T* sC, int cslot, const Geo<T>& gc, T* __restrict__ Cg, int nm, int m, int n, int k,
                                          int wt, int W) {
    const int lane = threadIdx.x & 31;
    const int mtiles = rup(m, 16) / 16, ntiles = rup(n, 16) / 16;
    const int mt2n = (mtiles + 1) / 2, nt2n = (ntiles + 1) / 2;
    const int per_mat = mt2n * nt2n;
    const int ksteps = rup(k, 16) / 16;
    for (int u = wt; u < nm * per_mat; u += W) {  // warp-uniform
        const int j = u / per_mat, t = u - j * per_mat;
        const int mt0 = (t / nt2n) * 2, nt0 = (t - (t / nt2n) * nt2n) * 2;
        const bool m1 = mt0 + 1 < mtiles, n1 = nt0 + 1 < ntiles;
        const T* a = sA + j * aslot;
        const T* b = sB + j * bslot;
        float acc[2][4][4];
        mma_tile32<T, TA, TB>(a, ga.stride, b, gb.stride, mt0, nt0, m1, n1, ksteps, acc);
        // acc[i][h][0..1]: row (mt0+i)*16 + lane/4, cols nt0*16 + h*8 + 2*(lane%4) + {0,1}; [2..3]: row + 8.
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            if (i == 1 && !m1) break;
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                if (h >= 2 && !n1) break;
                const int row = (mt0 + i) * 16 + (lane >> 2);
                const int col = nt0 * 16 + h * 8 + 2 * (lane & 3);
                if (Cg == nullptr) {
                    T* c = sC + j * cslot;
                    *reinterpret_cast<uint32_t*>(c + row * gc.stride + col) = pack2<T>(acc[i][h][0], acc[i][h][1]);
                    *reinterpret_cast<uint32_t*>(c + (row + 8) * gc.stride + col) = pack2<T>(acc[i][h][2], acc[i][h][3]);
                } else if (col < n) {  // n even: col < n implies col + 1 < n
                    T* c = Cg + (size_t)j * m * n;
                    if (row < m) *reinterpret_cast<uint32_t*>(c + (size_t)row * n + col) = pack2<T>(acc[i][h][0], acc[i][h][1]);
                    if (row + 8 < m) *reinterpret_cast<uint32_t*>(c + (size_t)(row + 8) * n + col) = pack2<T>(acc[i][h][2], acc[i][h][3]);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- FFMA (F32, exact order)
template <bool TA, bool TB>
__device__ __forceinline__ void ffma_group(const float* sA, int aslot, const Geo<float>& ga, const float* sB, int bslot,
                                           const Geo<float>& gb, float* sC, int cslot, const Geo<float>& gc,
                                           float* __restrict__ Cg, int nm, int m, int n, int k, int t, int TT) {
    const int mt4 = rup(m, 4) / 4, nt4 = rup(n, 4) / 4;
    const int per_mat = mt4 * nt4;
    for (int u = t; u < nm * per_mat; u += TT) {
        const int j = u / per_mat, tt = u - j * per_mat;
        const int r0 = (tt / nt4) * 4, c0 = (tt - (tt / nt4) * nt4) * 4;
        const float* a = sA + j * aslot;
        const float* b = sB + j * bslot;
        float acc[4][4];
        ffma_tile4x4<TA, TB>(a, ga.stride, b, gb.stride, r0, c0, k, acc);
        if (Cg == nullptr) {
            float* c = sC + j * cslot;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                *reinterpret_cast<float4*>(c + (r0 + i) * gc.stride + c0) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        } else {  // n % 4 == 0: the 4 columns are all inside
            float* c = Cg + (size_t)j * m * n;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (r0 + i < m)
                    *reinterpret_cast<float4*>(c + (size_t)(r0 + i) * n + c0) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        }
    }
}

template <typename T, bool TA, bool TB, int CB>
__device__ __forceinline__ void bmm_team(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int batch, int m, int n,
                                         int k, int mats, int stages, int team_warps, int direct_c) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const Geo<T> ga(TA ? k : m, TA ? m : k), gb(TB ? n : k, TB ? k : n), gc(m, n);
    const int aslot = ga.elems(), bslot = gb.elems(), cslot = gc.elems();
    const int stage = mats * (aslot + bslot);
    const int team_elems = stages * stage + (direct_c ? 0 : mats * cslot);
    const int TT = team_warps * 32;
    const int team = threadIdx.x / TT, t = threadIdx.x - team * TT, wt = t >> 5;
    const int teams = blockDim.x / TT;
    T* const s0 = reinterpret_cast<T*>(smem_raw) + (size_t)team * team_elems;
    T* const sC = s0 + stages * stage;
    const int groups = (batch + mats - 1) / mats;
    const int tstep = gridDim.x * teams;
    const int g0 = blockIdx.x * teams + team;
    if (g0 >= groups) return;  // whole team: team barriers are per team
    if constexpr (sizeof(T) == 2) {  // the k16 steps read the k padding: zero it once, nothing else writes there
        if (k % 16 != 0)
            for (int s = 0; s < stages; ++s) {
                zero_kpad(s0 + s * stage, mats, ga, aslot, !TA, t, TT);
                zero_kpad(s0 + s * stage + mats * aslot, mats, gb, bslot, TB, t, TT);
            }
    }
    constexpr int V = CB / (int)sizeof(T);
    const Walk wa = make_walk<T, CB>(ga, aslot, t, TT), wb = make_walk<T, CB>(gb, bslot, t, TT), wc = make_walk<T, CB>(gc, cslot, t, TT);
    const int cchunks = m * (n / V);
    const int achunks = ga.rows * (ga.cols / V), bchunks = gb.rows * (gb.cols / V);
    auto load_group = [&](int s, int g) {
        const int b0 = g * mats, nm = min(mats, batch - b0);
        T* st = s0 + s * stage;
        load_walk<T, CB>(st, A + (size_t)b0 * m * k, nm * achunks, wa, t, TT);
        load_walk<T, CB>(st + mats * aslot, B + (size_t)b0 * k * n, nm * bchunks, wb, t, TT);
    };
    for (int s = 0; s < stages - 1; ++s) {
        const int g = g0 + s * tstep;
        if (g < groups) load_group(s, g);
        cp_async_commit();
    }
    int s = 0;
    for (int g = g0; g < groups; g += tstep) {
        cp_async_wait_pending(stages - 2);
        team_sync(team, TT);  // this group's copies have landed; the previous group's stage and C staging are free
        {
            const int gn = g + (stages - 1) * tstep;
            const int sn = s == 0 ? stages - 1 : s - 1;
            if (gn < groups) load_group(sn, gn);
            cp_async_commit();
        }
        const int b0 = g * mats, nm = min(mats, batch - b0);
        const T* sA = s0 + s * stage;
        const T* sB = sA + mats * aslot;
        T* Cg = direct_c ? C + (size_t)b0 * m * n : nullptr;
        if constexpr (sizeof(T) == 2) {
            mma_group<T, TA, TB>(sA, aslot, ga, sB, bslot, gb, sC, cslot, gc, Cg, nm, m, n, k, wt, team_warps);
        } else {
            ffma_group<TA, TB>(sA, aslot, ga, sB, bslot, gb, sC, cslot, gc, Cg, nm, m, n, k, t, TT);
        }
        if (!direct_c) {
            team_sync(team, TT);  // C staged
            store_walk<T, CB>(C + (size_t)b0 * m * n, sC, nm * cchunks, wc, t, TT);
        }
        s = s + 1 == stages ? 0 : s + 1;
    }
    cp_async_wait<0>();
}

}  // namespace gapfill_bmm_team

// Entry points: bmm_team_<dtype>_<a><b>. Block: teams of team_warps warps (blockDim.x a multiple of
// 32·team_warps, at most 256 threads, at most 15 teams when team_warps > 1); grid: persistent, at
// most ceil(ceil(batch / mats) / teams) blocks. Dynamic shared memory: teams · (stages · mats ·
// (A slot + B slot) + (direct_c ? 0 : mats · C slot)). Needs 2 <= stages <= 6, 16-byte rows, aligned
// pointers, B not shared (see the header); bmm_team8_*: 8-byte rows and pointers.
#define GAPFILL_BMM_TEAM_CB(NAME, T, TA, TB, CB)                                                                       \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* A, const T* B, T* C, int batch, int m, int n,   \
                                                              int k, int mats, int stages, int team_warps,           \
                                                              int direct_c) {                                         \
        gapfill_bmm_team::bmm_team<T, TA, TB, CB>(A, B, C, batch, m, n, k, mats, stages, team_warps, direct_c);        \
    }
#define GAPFILL_BMM_TEAM(NAME, T, TA, TB) GAPFILL_BMM_TEAM_CB(NAME, T, TA, TB, 16)

GAPFILL_BMM_TEAM(bmm_team_f16_nn, __half, false, false)
GAPFILL_BMM_TEAM(bmm_team_f16_nt, __half, false, true)
GAPFILL_BMM_TEAM(bmm_team_f16_tn, __half, true, false)
GAPFILL_BMM_TEAM(bmm_team_f16_tt, __half, true, true)
GAPFILL_BMM_TEAM(bmm_team_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_TEAM(bmm_team_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_TEAM(bmm_team_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_TEAM(bmm_team_bf16_tt, __nv_bfloat16, true, true)
GAPFILL_BMM_TEAM(bmm_team_f32_nn, float, false, false)
GAPFILL_BMM_TEAM(bmm_team_f32_nt, float, false, true)
GAPFILL_BMM_TEAM(bmm_team_f32_tn, float, true, false)
GAPFILL_BMM_TEAM(bmm_team_f32_tt, float, true, true)
GAPFILL_BMM_TEAM_CB(bmm_team8_f16_nn, __half, false, false, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_f16_nt, __half, false, true, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_f16_tn, __half, true, false, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_f16_tt, __half, true, true, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_bf16_nn, __nv_bfloat16, false, false, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_bf16_nt, __nv_bfloat16, false, true, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_bf16_tn, __nv_bfloat16, true, false, 8)
GAPFILL_BMM_TEAM_CB(bmm_team8_bf16_tt, __nv_bfloat16, true, true, 8)
