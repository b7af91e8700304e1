// A/B of a Hopper bulk-copy (cp.async.bulk + mbarrier ring) design for the skinny int8 GEMM at M <= 16 (not shipped; a
// dev experiment, forty-fifth session): acc[m, n] = sum_k A[m, k] * W[n, k], A [M, K] int8 tokens, W [N, K] int8
// weights, both K-contiguous, I32 out. Question: does streaming the weights with bulk asynchronous copies into a
// shared-memory ring get closer to copy bandwidth than the shipped kernel's per-thread 16-byte loads?
//
// Kernel (bk::bulk_i8<MT, BN, BK, S, TMA>, sm_90a only: cp.async.bulk and mbarrier tx-counts are sm_90 features):
//   * Work: a "unit" = one BN-channel tile x one BK-wide k step; U = ceil(N/BN) * (K/BK) units, ordered tile-major
//     (the k steps of tile 0, then tile 1, ...). Persistent stream-K grid: G CTAs (G = resident CTAs per SM x SMs,
//     capped at U), CTA c owns units [floor(c*U/G), floor((c+1)*U/G)): every CTA streams the same number of bytes
//     (+-1 unit), no wave tail; a CTA's range may cross tile boundaries.
//   * CTA = BN/16 consumer warps + 1 producer warp. Shared memory: an S-stage ring; stage = BN weight rows + MT token
//     rows, each BK bytes at a row pitch of BK + 16 (the 16-byte skew makes every 8-row ldmatrix conflict-free);
//     full[S] (count 1 + tx bytes) and empty[S] (count BN/16) mbarriers.
//   * Producer warp: per unit, waits empty[slot] (from the second lap), lane 0 arms full[slot] with
//     mbarrier.arrive.expect_tx((BN + M) * BK bytes), then the 32 lanes issue one cp.async.bulk per row (BK contiguous
//     bytes of a weight row, rows past N clamped to row N-1, whose outputs are never stored; and of each token row
//     m < M), completing on full[slot]. Token rows M..MT-1 are zeroed once at start and never written by copies.
//   * TMA = true (variant v3): instead, lane 0 alone issues per 128 k two cp.async.bulk.tensor.2d copies, the
//     BN x 128 weight box and the MT x 128 token box (tensor maps from cuTensorMapEncodeTiled through the runtime's
//     driver entry point, 128-byte swizzle, rows past N or M zero-filled by the TMA unit and counted in the tx bytes);
//     the ldmatrix addresses apply the swizzle (chunk c of row r at c ^ (r & 7)). Tests whether one-lane, few-
//     instruction issue beats one bulk copy per row (cp.async.bulk takes uniform-register operands, so per-lane
//     addresses may cost ptxas a lane loop: see the UBLKCP counts printed by run_bulk_ab.sh).
//   * Consumer warp w owns channels [16w, 16w+16) of the tile: per 32 k, one ldmatrix.x4 of weights (the m16n8k32
//     A fragment in natural k order) and per 8-token group one ldmatrix (.x2) of tokens (the B fragment), one
//     mma.sync m16n8k32 s8 per 8 tokens. After a stage, __syncwarp and lane 0 arrives on empty[slot].
//   * Tile epilogue (at a tile's last k step or the CTA's last unit): contributors of the tile = CTAs
//     owner(first unit) .. owner(last unit). One contributor: store the I32 outputs directly. Several: int4 fragment
//     partial to the workspace at slot (c, which) (which = 0 if the tile is c's first, else 1; a CTA has at most two
//     partial pieces), __threadfence, consumer-only named barrier, one acq_rel ticket atomic per tile; the last
//     contributor adds the others' partials (__ldcg), stores, and re-arms the ticket to 0 (one launch, deterministic:
//     integer sums are exact in any order; counters zeroed once at allocation). The producer keeps prefetching the
//     next tile's stages during the merge.
//   * Limits of this dev kernel: 1 <= M <= MT (8 or 16), K % BK == 0 (host-checked; every shape here), any N,
//     A/W 16-byte aligned rows (K % 16 == 0).
// Variants: v0 b128k256s5 (BN 128, BK 256, 5 stages, 1 CTA/SM), v1 b64k256s4 (2 CTAs/SM), v2 b64k512s5 (512-byte
// copies), v3 tma128k256s5 (v0's tile through tensor copies).
// Status at commit: compiled only (nvcc 13.0, sm_90a, -Xptxas -v: no warnings, no spills, 48-61 registers); the SASS
// was not inspected (no cuobjdump on the writing machine: run_bulk_ab.sh prints the counts). First GPU run (H100, tree
// of 11cae10, h100-11cae10-bulk-ab.txt): exact everywhere, memcheck clean, slower than the shipped kernel (skinny /
// variant geomean v0 0.456, v1 0.666, v2 0.680, v3 0.909); racecheck: 5 hazards in v0 at MT = 8 (not investigated).
// Not shipped (docs/ops/int8_mm.md). The notes below were written before that run.
// Everything below (correctness of the mbarrier protocol, the ldmatrix fragment mapping, the stream-K merge, speed) is
// checked by the run itself: the outputs of every variant, at the plan grid and at forced grid sizes, are compared
// element by element with int64 host sums and with cuBLASLt.
// Harness: per shape and M in {1, 4, 8, 16}: checks first (outputs poisoned with 0xff before every launch), then timed
// (L2 flushed by a read of 4x its size before every launch, paths in rotating order, medians of REPS, default 31):
// a plain read of the K*N weight bytes, cuBLASLt int8 TN, the shipped skinny kernel at the Java plan, the bulk variants.
//   ./bulk_ab               checks + timing table (M = 1, 4, 8, 12, 16 x the six (K, N) and (2048, 5640): an N tail)
//   ./bulk_ab --check-only  checks only, one shape (K = 2048, N = 5640, an N tail), every M: for compute-sanitizer
// Build: see run_bulk_ab.sh (nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a ... -lcublasLt).
#include "../../src/main/cuda/int8_mm/skinny_mma.cu"
#include "ab_common.cuh"
#include "skinny_kernels.cuh"

#include <cuda.h>  // CUtensorMap (the TMA variant); the driver entry point comes through the runtime, no -lcuda
#include <cudaTypedefs.h>

#include <cmath>
#include <string>
#include <thread>

namespace bk {

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// Blocks until the phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}
// bytes (a multiple of 16) from global src to shared dst (both 16-byte aligned), completing tx on bar.
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(src),
                 "r"(bytes), "r"(bar)
                 : "memory");
}
// TMA: the 2-D box at (x = k, y = row) of the tensor map (a __grid_constant__ kernel parameter) to shared dst (1024-byte
// aligned for the 128-byte swizzle), completing tx on bar. Rows outside the tensor are zero-filled (and counted).
__device__ __forceinline__ void tma_2d(uint32_t dst, const CUtensorMap* map, int x, int y, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
                 : "memory");
}
__device__ __forceinline__ void ldsm_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr)
                 : "memory");
}
__device__ __forceinline__ void ldsm_x2(uint32_t addr, uint32_t& r0, uint32_t& r1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory");
}
__device__ __forceinline__ void mma_s8(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// Barrier 1 over the consumer warps only (the producer warp may have left).
template <int NTH> __device__ __forceinline__ void consumer_sync() { asm volatile("bar.sync 1, %0;\n" ::"n"(NTH) : "memory"); }

// TMA = false: one cp.async.bulk per row (row pitch BK + 16). TMA = true: per 128 k one tensor copy of the BN x 128 weight box
// and one of the MT x 128 token box, 128-byte swizzle (16-byte chunk c of row r stored at chunk c ^ (r & 7)); stage layout
// weights [BK/128][BN][128] then tokens [BK/128][MT][128]; the shared base is rounded up to 1024 bytes.
template <int MT, int BN, int BK, int S, bool TMA> struct Cfg {
    static_assert(MT == 8 || MT == 16, "token tile 8 or 16");
    static_assert(BN % 16 == 0 && BN >= 32 && BN <= 256, "BN: 16-channel warps");
    static_assert(BK % 128 == 0 && BK <= 1024, "BK multiple of 128 (row pitch = 16 mod 128 bytes)");
    static constexpr int NCW = BN / 16;                 // consumer warps
    static constexpr int THREADS = (NCW + 1) * 32;      // + producer warp
    static constexpr int PITCH = TMA ? 128 : BK + 16;   // bytes per shared row (of a 128-k sub-block for TMA)
    static constexpr int ROWS = BN + MT;                // weight rows then token rows
    static constexpr int STAGE = ROWS * (TMA ? BK : PITCH);  // bytes per ring stage
    static_assert(!TMA || STAGE % 1024 == 0, "TMA stages 1024-byte aligned");
    static constexpr int BAR_OFF = S * STAGE;           // full[S], empty[S], then the ticket word
    static constexpr int ALIGN_PAD = TMA ? 1024 : 0;    // the dynamic base rounded up to 1024 bytes
    static constexpr int SMEM = ALIGN_PAD + BAR_OFF + 2 * S * 8 + 16;
    static constexpr int NJ = MT / 8;                   // 8-token groups
};

// Owner CTA of unit u under the split [floor(c*U/G), floor((c+1)*U/G)).
__device__ __forceinline__ int owner(long long u, long long U, long long G) { return (int)(((u + 1) * G - 1) / U); }
__device__ __forceinline__ long long unit_begin(long long c, long long U, long long G) { return c * U / G; }

template <int MT, int BN, int BK, int S, bool TMA>
__global__ void __launch_bounds__(Cfg<MT, BN, BK, S, TMA>::THREADS, 1)
    bulk_i8(const int8_t* __restrict__ a, const int8_t* __restrict__ w, int* __restrict__ out, int4* __restrict__ ws,
            int* __restrict__ counters, int M, int N, int K, int U, const __grid_constant__ CUtensorMap tmW,
            const __grid_constant__ CUtensorMap tmA) {
    using C = Cfg<MT, BN, BK, S, TMA>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned char* smem = smem_raw;
    if (TMA) smem += (1024u - (smem_u32(smem_raw) & 1023u)) & 1023u;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int kS = K / BK;
    const int G = gridDim.x, c = blockIdx.x;
    const int uBeg = (int)unit_begin(c, U, G), uEnd = (int)unit_begin(c + 1, U, G);
    const uint32_t sBase = smem_u32(smem);
    const uint32_t fullBar = sBase + C::BAR_OFF, emptyBar = fullBar + 8 * S;
    int* sTicket = reinterpret_cast<int*>(smem + C::BAR_OFF + 16 * S);

    // Token rows M..MT-1 of every stage: zero once (bulk copies never write them; TMA zero-fills them itself).
    for (int i = tid; !TMA && i < S * (MT - M) * (BK / 16); i += C::THREADS) {
        const int s = i / ((MT - M) * (BK / 16)), r = i % ((MT - M) * (BK / 16));
        const int row = BN + M + r / (BK / 16), col = (r % (BK / 16)) * 16;
        *reinterpret_cast<uint4*>(smem + s * C::STAGE + row * C::PITCH + col) = make_uint4(0, 0, 0, 0);
    }
    if (tid == 0) {
        for (int s = 0; s < S; ++s) {
            mbar_init(fullBar + 8 * s, 1);
            mbar_init(emptyBar + 8 * s, C::NCW);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the zeroed rows, before any async-proxy access
    __syncthreads();

    if (warp == C::NCW) {
        // ------------------------------------------------------------------ producer warp
        const uint32_t txBytes = (uint32_t)(BN + (TMA ? MT : M)) * BK;  // TMA boxes count their zero-filled rows
        for (int u = uBeg, i = 0; u < uEnd; ++u, ++i) {
            const int slot = i % S;
            if (i >= S) mbar_wait(emptyBar + 8 * slot, ((i / S) - 1) & 1);
            const int tile = u / kS;
            const size_t kk = (size_t)(u - tile * kS) * BK;
            if (lane == 0) mbar_arrive_expect_tx(fullBar + 8 * slot, txBytes);
            __syncwarp();
            const uint32_t dst0 = sBase + slot * C::STAGE;
            if constexpr (TMA) {
                if (lane == 0)
#pragma unroll
                    for (int sb = 0; sb < BK / 128; ++sb) {
                        tma_2d(dst0 + sb * BN * 128, &tmW, (int)kk + sb * 128, tile * BN, fullBar + 8 * slot);
                        tma_2d(dst0 + BN * BK + sb * MT * 128, &tmA, (int)kk + sb * 128, 0, fullBar + 8 * slot);
                    }
            } else {
                for (int r = lane; r < BN + M; r += 32) {
                    const int8_t* src = r < BN ? w + (size_t)min(tile * BN + r, N - 1) * K + kk : a + (size_t)(r - BN) * K + kk;
                    bulk_g2s(dst0 + r * C::PITCH, src, BK, fullBar + 8 * slot);
                }
            }
        }
        return;
    }

    // ---------------------------------------------------------------------- consumer warps
    const int g = lane >> 2, t = lane & 3;
    // ldmatrix lane addresses (offsets inside a stage): weights x4 = (rows 0-7, k 0-15), (rows 8-15, k 0-15),
    // (rows 0-7, k 16-31), (rows 8-15, k 16-31) of the warp's 16 rows; tokens x2 = (tokens 8j..8j+7, k 0-15), (k 16-31).
    const int mi = lane >> 3, rr = lane & 7;
    const uint32_t wOff = (uint32_t)((warp * 16 + (mi & 1) * 8 + rr) * C::PITCH + (mi >> 1) * 16);
    const uint32_t tOff = (uint32_t)((BN + rr) * C::PITCH + (mi & 1) * 16);  // lanes 16-31 mirror 0-15 (x2 ignores them)
    // TMA layout: row r of a sub-block at r * 128, its 16-byte chunk c at ((c ^ (r & 7)) * 16); every row here has
    // r & 7 == rr. Weight chunk of k step kc: 2 * (kc % 4) + (mi >> 1); token chunk: 2 * (kc % 4) + (mi & 1).
    auto wAddr = [&](int kc) -> uint32_t {
        if (!TMA) return wOff + kc * 32;
        const int ch = 2 * (kc & 3) + (mi >> 1);
        return (uint32_t)((kc >> 2) * BN * 128 + (warp * 16 + (mi & 1) * 8 + rr) * 128 + ((ch ^ rr) << 4));
    };
    auto tAddr = [&](int kc, int j) -> uint32_t {
        if (!TMA) return tOff + j * 8 * C::PITCH + kc * 32;
        const int ch = 2 * (kc & 3) + (mi & 1);
        return (uint32_t)(BN * BK + (kc >> 2) * MT * 128 + (j * 8 + rr) * 128 + ((ch ^ rr) << 4));
    };
    int acc[C::NJ][4];
#pragma unroll
    for (int j = 0; j < C::NJ; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;

    for (int u = uBeg, i = 0; u < uEnd; ++u, ++i) {
        const int slot = i % S;
        mbar_wait(fullBar + 8 * slot, (i / S) & 1);
        const uint32_t st = sBase + slot * C::STAGE;
#pragma unroll
        for (int kc = 0; kc < BK / 32; ++kc) {
            uint32_t a0, a1, a2, a3;
            ldsm_x4(st + wAddr(kc), a0, a1, a2, a3);
#pragma unroll
            for (int j = 0; j < C::NJ; ++j) {
                uint32_t b0, b1;
                ldsm_x2(st + tAddr(kc, j), b0, b1);
                mma_s8(acc[j], a0, a1, a2, a3, b0, b1);
            }
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(emptyBar + 8 * slot);

        const int tile = u / kS;
        const int tileBeg = tile * kS, tileEnd = tileBeg + kS;
        if (u + 1 != tileEnd && u + 1 != uEnd) continue;
        // -------------------------------------------------------------- tile epilogue
        const int cFirst = owner(tileBeg, U, G), cLast = owner(tileEnd - 1, U, G);
        bool store = true;
        if (cFirst != cLast) {
            const int which = tile == uBeg / kS ? 0 : 1;
            int4* mine = ws + ((size_t)(c * 2 + which) * C::NCW * C::NJ) * 32;
#pragma unroll
            for (int j = 0; j < C::NJ; ++j) mine[(warp * C::NJ + j) * 32 + lane] = make_int4(acc[j][0], acc[j][1], acc[j][2], acc[j][3]);
            __threadfence();
            consumer_sync<C::NCW * 32>();
            if (tid == 0) {
                int old;
                asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(old) : "l"(counters + tile) : "memory");
                *sTicket = old;
            }
            consumer_sync<C::NCW * 32>();
            store = *sTicket == cLast - cFirst;
            if (store) {
                __threadfence();
                for (int cc = cFirst; cc <= cLast; ++cc) {
                    if (cc == c) continue;
                    const int whichCc = tile == (int)(unit_begin(cc, U, G) / kS) ? 0 : 1;
                    const int4* theirs = ws + ((size_t)(cc * 2 + whichCc) * C::NCW * C::NJ) * 32;
#pragma unroll
                    for (int j = 0; j < C::NJ; ++j) {
                        const int4 p = __ldcg(theirs + (warp * C::NJ + j) * 32 + lane);
                        acc[j][0] += p.x; acc[j][1] += p.y; acc[j][2] += p.z; acc[j][3] += p.w;
                    }
                }
                if (tid == 0) counters[tile] = 0;  // re-armed for the next launch (every contributor has arrived)
            }
        }
        if (store) {
#pragma unroll
            for (int j = 0; j < C::NJ; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int m = j * 8 + 2 * t + (q & 1), n = tile * BN + warp * 16 + g + 8 * (q >> 1);
                    if (m < M && n < N) out[(size_t)m * N + n] = acc[j][q];
                }
        }
#pragma unroll
        for (int j = 0; j < C::NJ; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;
    }
}

}  // namespace bk

// ------------------------------------------------------------------------------------------------ host side
typedef void (*BKernel)(const int8_t*, const int8_t*, int*, int4*, int*, int, int, int, int, const CUtensorMap, const CUtensorMap);
struct BCfg { int bn, bk, s; bool tma; const char* name; };
// The variants (index 0 is the candidate). Shared memory at MT = 16: 5*144*272 = 196 KB (1 CTA/SM), 4*80*272 = 87 KB
// (2 CTAs/SM), 5*80*528 = 211 KB (1 CTA/SM), TMA 5*144*256 + 1 KB = 181 KB (1 CTA/SM).
static const BCfg CFGS[] = {{128, 256, 5, false, "b128k256s5"}, {64, 256, 4, false, "b64k256s4"}, {64, 512, 5, false, "b64k512s5"},
                            {128, 256, 5, true, "tma128k256s5"}};
static const int NCFG = sizeof(CFGS) / sizeof(CFGS[0]);

template <int MT> static BKernel bkernel_mt(int cfg) {
    switch (cfg) {
        case 0: return bk::bulk_i8<MT, 128, 256, 5, false>;
        case 1: return bk::bulk_i8<MT, 64, 256, 4, false>;
        case 2: return bk::bulk_i8<MT, 64, 512, 5, false>;
        default: return bk::bulk_i8<MT, 128, 256, 5, true>;
    }
}
static BKernel bkernel(int mt, int cfg) { return mt == 8 ? bkernel_mt<8>(cfg) : bkernel_mt<16>(cfg); }
static int threads_of(int cfg) { return (CFGS[cfg].bn / 16 + 1) * 32; }
static size_t smem_of(int mt, int cfg) {
    const BCfg& b = CFGS[cfg];
    return b.tma ? 1024 + (size_t)b.s * (b.bn + mt) * b.bk + 2 * b.s * 8 + 16 : (size_t)b.s * (b.bn + mt) * (b.bk + 16) + 2 * b.s * 8 + 16;
}

// cuTensorMapEncodeTiled through the runtime's driver entry point (no -lcuda).
static PFN_cuTensorMapEncodeTiled_v12000 g_encode = nullptr;
// A 2-D int8 tensor [rows, cols] (row stride cols bytes) with a box of 128 bytes x boxRows, 128-byte swizzle, OOB zero.
static bool make_map(CUtensorMap* map, const int8_t* base, int rows, int cols, int boxRows) {
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)cols};
    const cuuint32_t box[2] = {128, (cuuint32_t)boxRows};
    const cuuint32_t estr[2] = {1, 1};
    const CUresult r = g_encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, (void*)base, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) std::printf("FAIL cuTensorMapEncodeTiled rows %d cols %d box %d: CUresult %d\n", rows, cols, boxRows, (int)r);
    return r == CUDA_SUCCESS;
}

struct BPlan { int cfg, mt, tiles, kS, U, G, bps; size_t smem; bool ok; CUtensorMap tmW, tmA; };
// G = resident CTAs per SM x SMs (occupancy API), capped at U; forced > 0: that G (capped at U).
static BPlan bplan(int m, int n, int k, int cfg, int sms, int forced) {
    BPlan p{};
    p.cfg = cfg;
    p.mt = m <= 8 ? 8 : 16;
    const BCfg& b = CFGS[cfg];
    p.ok = m >= 1 && m <= 16 && k % b.bk == 0;
    if (!p.ok) return p;
    p.tiles = (n + b.bn - 1) / b.bn;
    p.kS = k / b.bk;
    p.U = p.tiles * p.kS;
    p.smem = smem_of(p.mt, cfg);
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&p.bps, (const void*)bkernel(p.mt, cfg), threads_of(cfg), p.smem));
    if (p.bps < 1) { p.ok = false; return p; }
    p.G = std::min(p.U, forced > 0 ? forced : p.bps * sms);
    return p;
}
struct Dev { int8_t *a, *w; int *out, *ltOut, *counters; int4* ws; size_t wsBytes; };
// The plan with its tensor maps (TMA variants; zeroed maps otherwise, never read).
static BPlan bplan_maps(const Dev& dv, int m, int n, int k, int cfg, int sms, int forced) {
    BPlan p = bplan(m, n, k, cfg, sms, forced);
    std::memset(&p.tmW, 0, sizeof p.tmW);
    std::memset(&p.tmA, 0, sizeof p.tmA);
    if (p.ok && CFGS[cfg].tma) p.ok = make_map(&p.tmW, dv.w, n, k, CFGS[cfg].bn) && make_map(&p.tmA, dv.a, m, k, p.mt);
    return p;
}
static size_t ws_need(const BPlan& p) { return (size_t)p.G * 2 * CFGS[p.cfg].bn * p.mt * 4; }
static void launch_b(const Dev& dv, const BPlan& p, int m, int n, int k, int* o, cudaStream_t st) {
    bkernel(p.mt, p.cfg)<<<p.G, threads_of(p.cfg), p.smem, st>>>(dv.a, dv.w, o, dv.ws, dv.counters, m, n, k, p.U, p.tmW, p.tmA);
}

int main(int argc, char** argv) {
    const bool checkOnly = argc > 1 && !std::strcmp(argv[1], "--check-only");
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major < 9) { std::printf("FAIL needs sm_90 (cp.async.bulk); device is sm_%d%d\n", prop.major, prop.minor); return 1; }
    const int sms = prop.multiProcessorCount;
    {
        cudaDriverEntryPointQueryResult q{};
        void* fn = nullptr;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !fn) {
            std::printf("FAIL no cuTensorMapEncodeTiled entry point\n");
            return 1;
        }
        g_encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }
    const char* repsEnv = std::getenv("REPS");
    const int REPS = std::max(25, repsEnv ? std::atoi(repsEnv) : 31);
    const size_t flushBytes = 4 * (size_t)prop.l2CacheSize;
    const Probe pr = probe_setup(16, checkOnly ? 16 : flushBytes);
    cudaStream_t st = pr.st;
    for (int cfg = 0; cfg < NCFG; ++cfg)
        for (int mt : {8, 16}) {
            if (smem_of(mt, cfg) > prop.sharedMemPerBlockOptin) {
                std::printf("FAIL %s MT=%d needs %zu B of shared memory, opt-in limit %zu\n", CFGS[cfg].name, mt, smem_of(mt, cfg),
                            (size_t)prop.sharedMemPerBlockOptin);
                return 1;
            }
            CK(cudaFuncSetAttribute((const void*)bkernel(mt, cfg), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_of(mt, cfg)));
        }
    for (int tile : {8, 16, 32, 64})
        CK(cudaFuncSetAttribute((const void*)kernel_for(tile), cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
    cublasLtHandle_t lt; CB(cublasLtCreate(&lt));
    void* ltWs; const size_t ltWsBytes = 32u << 20; CK(cudaMalloc(&ltWs, ltWsBytes));

    // N = 5640 (not a multiple of 64 or 128) runs the N-tail paths: clamped or zero-filled weight rows, the n < N store
    // guard and a partial last tile; M = 12 the zeroed token rows of a 16-row tile (and a token box partly past A in v3)
    std::vector<std::pair<int, int>> shapes = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632},
                                               {2048, 5640}};
    if (checkOnly) shapes = {{2048, 5640}};
    const std::vector<int> ms = {1, 4, 8, 12, 16};
    size_t maxW = 0; int maxN = 0;
    for (auto& s : shapes) { maxW = std::max(maxW, (size_t)s.first * s.second); maxN = std::max(maxN, s.second); }
    const int MAXM = 16, MAXK = 14336;

    Dev dv{};
    int* skWs; const size_t skWsBytes = (size_t)64 << 20;
    dv.wsBytes = (size_t)128 << 20;  // G = U (every unit its own CTA) of v0 at 8192 x 28672 needs 117 MB
    CK(cudaMalloc(&dv.a, (size_t)MAXM * MAXK)); CK(cudaMalloc(&dv.w, maxW));
    CK(cudaMalloc(&dv.out, (size_t)MAXM * maxN * 4)); CK(cudaMalloc(&dv.ltOut, (size_t)MAXM * maxN * 4));
    CK(cudaMalloc(&dv.ws, dv.wsBytes)); CK(cudaMalloc(&dv.counters, 65536 * 4)); CK(cudaMemset(dv.counters, 0, 65536 * 4));
    CK(cudaMalloc(&skWs, skWsBytes));
    // full-range int8 (hash fill, never all zero); A is read as [M, K] with row stride K, so the first M*K bytes
    fill_i8<<<4 * sms, 256, 0, st>>>(dv.a, (long long)MAXM * MAXK, 7u);
    fill_i8<<<4 * sms, 256, 0, st>>>(dv.w, (long long)maxW, 11u);
    CK(cudaStreamSynchronize(st));
    std::vector<int8_t> hA((size_t)MAXM * MAXK), hW;
    CK(cudaMemcpy(hA.data(), dv.a, hA.size(), cudaMemcpyDeviceToHost));
    {
        long zeros = 0, lo = 0, hi = 0;
        for (int8_t v : hA) { zeros += v == 0; lo += v == -128; hi += v == 127; }
        std::printf("A fill: %zu bytes, %ld zero, %ld of -128, %ld of 127 (full int8 range)\n", hA.size(), zeros, lo, hi);
    }

    std::printf("GPU %s, %d SMs, REPS %d, mode %s\n", prop.name, sms, REPS, checkOnly ? "check-only" : "table");
    for (int cfg = 0; cfg < NCFG; ++cfg) {
        const BPlan p16 = bplan(16, 4096, 4096, cfg, sms, 0), p8 = bplan(8, 4096, 4096, cfg, sms, 0);
        std::printf("  v%d %-11s BN=%d BK=%d stages=%d threads=%d smem %zu/%zu B (MT 16/8), CTAs/SM %d/%d\n", cfg, CFGS[cfg].name,
                    CFGS[cfg].bn, CFGS[cfg].bk, CFGS[cfg].s, threads_of(cfg), smem_of(16, cfg), smem_of(8, cfg), p16.bps, p8.bps);
    }
    if (!checkOnly)
        std::printf("times in us (medians); floor = K*N bytes / 3.0 TB/s; frac = floor / time (target >= 0.80)\n"
                    "%-4s %5s %5s | %6s %6s | %7s %7s | %7s %7s %7s %7s | %5s %5s %5s %5s %5s %5s | %s\n",
                    "M", "K", "N", "read", "floor", "lt", "skinny", "v0", "v1", "v2", "v3", "read", "skin", "v0", "v1", "v2", "v3", "ok");
    long totalBad = 0;
    int rows = 0, skinny80 = 0, best80 = 0, read80 = 0;
    std::vector<double> logSkOverBest, logSkOverV[NCFG];
    for (auto& sh : shapes) {
        const int K = sh.first, N = sh.second;
        hW.resize((size_t)N * K);
        CK(cudaMemcpy(hW.data(), dv.w, hW.size(), cudaMemcpyDeviceToHost));
        std::vector<long long> ref;
        host_ref(hA, hW, MAXM, N, K, ref);
        for (int m : ms) {
            long bad = 0;
            const size_t outN = (size_t)m * N;
            const LtInt8 ltg(lt, ltWs, ltWsBytes, m, N, K);
            std::vector<int> ltH;
            if (ltg.ok) {
                CK(cudaMemset(dv.ltOut, 0xff, outN * 4));
                ltg.run(dv.a, dv.w, dv.ltOut, st);
                ltH = fetch(dv.ltOut, outN, st);
                bad += compare("cuBLASLt", ltH, ref, nullptr, m, N, K);
            } else {
                std::printf("note: cuBLASLt has no algorithm for M=%d K=%d N=%d (checks against int64 host sums only)\n", m, K, N);
            }
            const std::vector<int>* ltP = ltg.ok ? &ltH : nullptr;
            // the shipped skinny kernel at the Java plan
            const Plan jp = java_plan(m, N, K, sms, kernel_for);
            CK(cudaMemset(skWs, 0, skWsBytes));
            auto launchSkinny = [&](int* o) {
                kernel_for(jp.tile)<<<dim3(jp.tilesN, jp.splits), 128, jp.smem, st>>>(dv.a, dv.w, o, nullptr, 0, nullptr, 0, nullptr, skWs, m,
                                                                                      N, K, jp.ks);
            };
            CK(cudaMemset(dv.out, 0xff, outN * 4));
            launchSkinny(dv.out);
            bad += compare("skinny@plan", fetch(dv.out, outN, st), ref, ltP, m, N, K);
            // bulk variants: plan grid (twice: the tickets re-armed), then forced grids 1, 37, sms/2 + 1 and U (every unit
            // its own CTA: the most contributors per tile)
            std::vector<BPlan> plans(NCFG);
            for (int cfg = 0; cfg < NCFG; ++cfg) {
                plans[cfg] = bplan_maps(dv, m, N, K, cfg, sms, 0);
                const BPlan& p = plans[cfg];
                if (!p.ok || ws_need(p) > dv.wsBytes) { std::printf("FAIL no plan for %s M=%d K=%d N=%d\n", CFGS[cfg].name, m, K, N); ++bad; continue; }
                std::vector<BPlan> chk = {p, p};
                for (int f : {1, 37, sms / 2 + 1, p.U}) {
                    const BPlan q = bplan_maps(dv, m, N, K, cfg, sms, f);
                    if (q.ok && q.G != p.G && ws_need(q) <= dv.wsBytes && (checkOnly || f != 1 || (size_t)K * N <= ((size_t)64 << 20)))
                        chk.push_back(q);
                }
                for (const BPlan& q : chk) {
                    char what[64]; std::snprintf(what, sizeof what, "%s@G=%d", CFGS[cfg].name, q.G);
                    CK(cudaMemset(dv.out, 0xff, outN * 4));
                    launch_b(dv, q, m, N, K, dv.out, st);
                    const long b = compare(what, fetch(dv.out, outN, st), ref, ltP, m, N, K);
                    if (b) CK(cudaMemset(dv.counters, 0, 65536 * 4));  // a broken ticket must not spill into later checks
                    bad += b;
                }
            }
            totalBad += bad;
            if (checkOnly) {
                std::printf("M=%-2d K=%d N=%d: %s (cuBLASLt, skinny, %d bulk variants at their plan and forced grids)\n", m, K, N,
                            bad ? "FAIL" : "all outputs = int64 host sums = cuBLASLt", NCFG);
                continue;
            }
            // timing: plain read of the K*N weight bytes, cuBLASLt, skinny@plan, the bulk variants at their plans
            std::vector<std::function<void()>> paths;
            paths.push_back([&] { stream_read<0><<<4 * sms, 512, 0, st>>>((const uint4*)dv.w, (long long)K * N / 16, pr.sink); });
            paths.push_back([&] { if (ltg.ok) ltg.run(dv.a, dv.w, dv.ltOut, st); });
            paths.push_back([&] { launchSkinny(dv.out); });
            for (int cfg = 0; cfg < NCFG; ++cfg) {
                const BPlan q = plans[cfg];
                paths.push_back([&, q] { if (q.ok) launch_b(dv, q, m, N, K, dv.out, st); });
            }
            const std::vector<float> med = time_rotating(paths, pr, flushBytes, sms, REPS);
            const double floorUs = (double)K * N / 3.0e6;
            const float readUs = med[0], ltUs = med[1], skUs = med[2];
            float bestV = 1e30f;
            for (int cfg = 0; cfg < NCFG; ++cfg) if (plans[cfg].ok) bestV = std::min(bestV, med[3 + cfg]);
            std::printf("M=%-2d %5d %5d | %6.2f %6.2f | %7.2f %7.2f |", m, K, N, readUs, floorUs, ltg.ok ? ltUs : 0.f, skUs);
            for (int cfg = 0; cfg < NCFG; ++cfg) std::printf(" %7.2f", plans[cfg].ok ? med[3 + cfg] : 0.f);
            std::printf(" | %5.3f %5.3f", floorUs / readUs, floorUs / skUs);
            for (int cfg = 0; cfg < NCFG; ++cfg) std::printf(" %5.3f", plans[cfg].ok ? floorUs / med[3 + cfg] : 0.0);
            std::printf(" | %s\n", bad ? "FAIL" : "ok");
            ++rows;
            read80 += floorUs / readUs >= 0.8;
            skinny80 += floorUs / skUs >= 0.8;
            best80 += floorUs / bestV >= 0.8;
            logSkOverBest.push_back(std::log(skUs / bestV));
            for (int cfg = 0; cfg < NCFG; ++cfg) if (plans[cfg].ok) logSkOverV[cfg].push_back(std::log(skUs / med[3 + cfg]));
            std::fflush(stdout);
        }
    }
    if (!checkOnly) {
        auto gm = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return v.empty() ? 0.0 : std::exp(s / v.size()); };
        std::printf("rows at >= 80%% of the floor (of %d): read %d, skinny %d, best bulk variant %d\n", rows, read80, skinny80, best80);
        std::printf("geomean skinny_time / variant_time:");
        for (int cfg = 0; cfg < NCFG; ++cfg) std::printf(" v%d %s %.3f,", cfg, CFGS[cfg].name, gm(logSkOverV[cfg]));
        std::printf(" best-of-variants %.3f (> 1: the bulk kernel is faster)\n", gm(logSkOverBest));
    }
    std::printf("checks: %s\n", totalBad ? "FAILED (see FAIL lines)"
                                          : "every output (poisoned first) = int64 host sums element by element = cuBLASLt, every shape and M");
    return totalBad ? 1 : 0;
}
