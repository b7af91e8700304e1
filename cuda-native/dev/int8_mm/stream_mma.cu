// EXPERIMENT, NOT SHIPPED (measured slower than the shipped skinny kernel; see docs/ops/int8_mm.md,
// "The stream experiment"). Kept with the harness so the result can be reproduced and the design revisited.
//
// int8_mm stream: acc[m,n] = Σ_k A[m,k]·W[n,k] for decode shapes (M ≤ 64), the weights streamed from DRAM
// exactly once through a per-warp cp.async ring, with the dequantizing epilogue fused.
//
// Regime: A [M,K] int8 and W [N,K] int8, both K-contiguous and 16-byte aligned, K a multiple of 16,
// 1 ≤ M ≤ 64, any N; sm_80+ (int8 mma.sync + cp.async), the same code on sm_90a.
// Floor: K·N weight bytes (+ M·K + M·N·sizeof(out)) over the copy bandwidth; the int8 math (2·M·N·K) stays
// under it for M ≤ 64.
// Measured (H100, h100-harness-run2.log): 0.97-1.56x SLOWER than int8_mm/skinny_mma.cu at M <= 16 (e.g. M=1
// K=N=4096: 14.2 vs 13.0 us; M=1 K=8192 N=28672: 111 vs 85.5 us); faster than it only at M = 64 with float
// outputs, where cuBLASLt is ~2x faster than both. ncu at M=1 K=N=4096: 12.0 us, 42 % of peak DRAM throughput,
// L2 traffic 47 MB for 16.8 MB read (the skinny kernel: 12.7 us, 40 %, 32 MB).
//
// Scheme (swap-AB): the weights are the mma's A operand (16 channels × 32 k), the tokens its B operand
// (32 k × 8 tokens), so M ≤ 8 wastes nothing. Integer sums are exact in any order, so the k order inside
// an mma is free: thread (g = lane/4, t = lane%4) supplies, for the 64-k step u of a 256-k block, the 16
// bytes k = 64u + 16t of channel rows g and g+8 (registers {x,y} feed one m16n8k32, {z,w} the next) and the
// same 16 bytes of token g. Each thread cp.asyncs exactly the weight bytes it later consumes into its own
// slots of a D-stage ring (one stage = RT·16 rows × 256 k = RT·4 KiB per warp), so the ring needs no barrier
// (cp.async.wait_group only) and D stages per warp stay in flight. A warp instruction reads 64 contiguous
// bytes of 8 rows (16 with h); the slot layout is lane-linear, so the shared reads are conflict-free.
//   CTA = WN × WK warps; warp (wn, wk) owns channel rows [wn·16·RT, +16·RT) of the CTA's BN = 16·RT·WN and
//   the 256-k blocks wk, wk+WK, ... of the CTA's k range; its partial sums are added across wk in shared
//   memory. grid = (ceil(N/BN), splits); CTA (x, y) covers k ∈ [y·ks, min(y·ks+ks, K)); its A slice
//   [M, ks] is cp.async'd to shared memory once, with the first weight stage (rows padded by 64 bytes).
//   splits > 1: every CTA writes its int32 tile to the workspace, the last CTA of a channel tile to arrive
//   (per-tile counter) adds the others' in registers, runs the epilogue and re-arms the counter to 0 —
//   deterministic (integer sums are exact), one launch, graph-safe, nothing allocated.
// Limits: M ≤ 8·MT of the variant, K ≤ 131056 (|acc| < 2^31, validated in Java), M·K and N·K < 2^31,
// pointers 16-byte aligned (validated in Java). Dynamic shared memory = ring + M·(ks + 64) (splan() in harness.cu).
#include "int8_mm.cuh"

using namespace gapfill;
using namespace gapfill::int8mm;

namespace i8stream {

// cp.async of 16 bytes global → shared (L2 only, 256-byte L2 prefetch hint); src_bytes = 0 writes 16 zero
// bytes and reads nothing. Completion is tracked per thread by commit/wait groups.
__device__ __forceinline__ void cp_async16(void* smem_dst, const void* gmem_src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(valid ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// The int8_mm.cuh epilogue contract from preloaded scales (aScale[m], wScale[n], bias[n] read as floats).
template <typename T>
__device__ __forceinline__ T dequantize_scaled(int acc, float a_scale, float w_scale, const float* bias_or_null, float bias) {
    const double s = __dmul_rn((double)a_scale, (double)w_scale);
    double v = __dmul_rn((double)acc, s);
    if (bias_or_null != nullptr) v = __dadd_rn(v, (double)bias);
    return round_from_double<T>(v);
}

constexpr int KBLK = 256;          // k per ring stage (4 steps of 64)
constexpr int A_ROW_PAD = 64;      // bytes added to each shared row of A: rows 1 apart differ by 64 mod 128

template <typename T> struct IsI32 { static constexpr bool value = false; };
template <> struct IsI32<int> { static constexpr bool value = true; };

template <int MT, int RT, int WN, int WK, int D> struct Cfg {
    static_assert(MT >= 1 && MT <= 16, "at most 128 tokens");
    static constexpr int WARPS = WN * WK;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int BN = 16 * RT * WN;                   // channels per CTA
    static constexpr int STAGE = RT * 16 * KBLK;              // bytes per warp and stage
    static constexpr int RING = WARPS * D * STAGE;            // bytes of the weight ring
    static_assert(RING >= WARPS * RT * MT * 4 * 32 * 4, "the ring is reused for the cross-warp reduction");
};

template <typename TOut, int MT, int RT, int WN, int WK, int D>
__device__ __forceinline__ void stream_body(const int8_t* __restrict__ a, const int8_t* __restrict__ w, TOut* __restrict__ out,
                                            const Dequant dq, int* __restrict__ workspace, int M, int N, int K, int ks) {
    using C = Cfg<MT, RT, WN, WK, D>;
    extern __shared__ uint4 smem_raw[];
    uint8_t* ring = reinterpret_cast<uint8_t*>(smem_raw);
    int8_t* a_smem = reinterpret_cast<int8_t*>(ring + C::RING);

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int wn = warp % WN;
    const int wk = warp / WN;
    const int g = lane >> 2;
    const int t = lane & 3;

    const int kb = blockIdx.y * ks;  // this CTA's k range [kb, ke)
    const int ke = min(kb + ks, K);
    const int ks_alloc = (ks + KBLK - 1) / KBLK * KBLK;
    const int a_stride = ks_alloc + A_ROW_PAD;
    const int nblk = (ke - kb + KBLK - 1) / KBLK;               // 256-k blocks of this CTA
    const int my_blocks = wk < nblk ? (nblk - wk + WK - 1) / WK : 0;
    const int n_warp = blockIdx.x * C::BN + wn * 16 * RT;       // first channel of this warp

    // Weight rows this thread streams: rows g and g+8 of each of the warp's RT row tiles.
    const int8_t* wrow[RT][2];
    bool row_ok[RT][2];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = n_warp + r * 16 + h * 8 + g;
            row_ok[r][h] = n < N;
            wrow[r][h] = w + (size_t)min(n, N - 1) * K + 16 * t;
        }
    uint8_t* my_ring = ring + (size_t)warp * D * C::STAGE + 16 * lane;  // + slot·STAGE + ((r·4 + u)·2 + h)·512

    auto issue = [&](int i, int slot) {  // the warp's i-th block into ring slot
        const int k0 = kb + (wk + i * WK) * KBLK;
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int u = 0; u < 4; ++u)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int k = k0 + 64 * u + 16 * t;
                    const bool ok = row_ok[r][h] && k < ke;
                    cp_async16(my_ring + slot * C::STAGE + ((r * 4 + u) * 2 + h) * 512, ok ? wrow[r][h] + (k - 16 * t) : w, ok);
                }
    };

    // Group 0: A's slice (all threads) and the warp's first weight block; groups 1..D-1: the next blocks.
    {
        const int chunks = ks_alloc / 16;
        for (int i = threadIdx.x; i < M * chunks; i += C::THREADS) {
            const int m = i / chunks;
            const int c = i - m * chunks;
            const int k = kb + 16 * c;
            cp_async16(a_smem + m * a_stride + 16 * c, k < ke ? a + (size_t)m * K + k : a, k < ke);
        }
    }
#pragma unroll
    for (int s = 0; s < D; ++s) {
        if (s < my_blocks) issue(s, s);
        cp_async_commit();
    }

    int acc[RT][MT][4];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[r][j][q] = 0;

    cp_async_wait<D - 1>();  // group 0 (A and block 0) of this thread
    __syncthreads();          // everyone's A chunks

    int slot = 0;
    for (int i = 0; i < my_blocks; ++i) {
        cp_async_wait<D - 1>();
        const uint8_t* st = my_ring + slot * C::STAGE;
        const int kblk = (wk + i * WK) * KBLK;  // offset of this block in the CTA's k range
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            uint4 lo[RT], hi[RT];
#pragma unroll
            for (int r = 0; r < RT; ++r) {
                lo[r] = *reinterpret_cast<const uint4*>(st + ((r * 4 + u) * 2 + 0) * 512);
                hi[r] = *reinterpret_cast<const uint4*>(st + ((r * 4 + u) * 2 + 1) * 512);
            }
#pragma unroll
            for (int j = 0; j < MT; ++j) {
                const int m = 8 * j + g;
                uint4 b = make_uint4(0u, 0u, 0u, 0u);
                if (m < M) b = *reinterpret_cast<const uint4*>(a_smem + m * a_stride + kblk + 64 * u + 16 * t);
#pragma unroll
                for (int r = 0; r < RT; ++r) {
                    mma_s8_16x8x32(acc[r][j], lo[r].x, hi[r].x, lo[r].y, hi[r].y, b.x, b.y);
                    mma_s8_16x8x32(acc[r][j], lo[r].z, hi[r].z, lo[r].w, hi[r].w, b.z, b.w);
                }
            }
        }
        // The mmas above consumed this slot's registers, so refilling it cannot overtake the reads.
        if (i + D < my_blocks) issue(i + D, slot);
        cp_async_commit();
        slot = slot + 1 == D ? 0 : slot + 1;
    }
    cp_async_wait<0>();

    if (WK > 1) {  // add the WK warps of each channel group in shared memory (the ring is free now)
        __syncthreads();
        int* red = reinterpret_cast<int*>(ring);
        auto at = [&](int kw, int r, int j, int q) { return ((((kw * WN + wn) * RT + r) * MT + j) * 4 + q) * 32 + lane; };
        if (wk > 0) {
#pragma unroll
            for (int r = 0; r < RT; ++r)
#pragma unroll
                for (int j = 0; j < MT; ++j)
#pragma unroll
                    for (int q = 0; q < 4; ++q) red[at(wk, r, j, q)] = acc[r][j][q];
        }
        __syncthreads();
        if (wk == 0) {
            for (int kw = 1; kw < WK; ++kw)
#pragma unroll
                for (int r = 0; r < RT; ++r)
#pragma unroll
                    for (int j = 0; j < MT; ++j)
#pragma unroll
                        for (int q = 0; q < 4; ++q) acc[r][j][q] += red[at(kw, r, j, q)];
        }
    }

    if (gridDim.y > 1) {
        // Workspace: int counters[gridDim.x] (padded to 64 ints), then
        // int4 partials[gridDim.x][gridDim.y][WN][RT][MT][32 lanes].
        int* counters = workspace;
        int4* partials = reinterpret_cast<int4*>(workspace + ((gridDim.x + 63) / 64) * 64);
        const size_t per_split = (size_t)WN * RT * MT * 32;
        auto slot_of = [&](int split, int r, int j) {
            return ((size_t)blockIdx.x * gridDim.y + split) * per_split + (((size_t)wn * RT + r) * MT + j) * 32 + lane;
        };
        if (wk == 0) {
#pragma unroll
            for (int r = 0; r < RT; ++r)
#pragma unroll
                for (int j = 0; j < MT; ++j)
                    __stcg(partials + slot_of(blockIdx.y, r, j), make_int4(acc[r][j][0], acc[r][j][1], acc[r][j][2], acc[r][j][3]));
        }
        __threadfence();
        __syncthreads();
        __shared__ int is_last;
        if (threadIdx.x == 0) is_last = atomicAdd(counters + blockIdx.x, 1) == (int)gridDim.y - 1;
        __syncthreads();
        if (!is_last) return;
        __threadfence();
        if (wk == 0) {
            for (int s = 0; s < (int)gridDim.y; ++s) {
                if (s == (int)blockIdx.y) continue;
                int4 p[RT][MT];
#pragma unroll
                for (int r = 0; r < RT; ++r)
#pragma unroll
                    for (int j = 0; j < MT; ++j) p[r][j] = __ldcg(partials + slot_of(s, r, j));
#pragma unroll
                for (int r = 0; r < RT; ++r)
#pragma unroll
                    for (int j = 0; j < MT; ++j) {
                        acc[r][j][0] += p[r][j].x;
                        acc[r][j][1] += p[r][j].y;
                        acc[r][j][2] += p[r][j].z;
                        acc[r][j][3] += p[r][j].w;
                    }
            }
        }
        if (threadIdx.x == 0) counters[blockIdx.x] = 0;  // re-armed for the next launch on this stream
    }
    if (wk != 0) return;

    // Epilogue. Fragment c[q]: channel n_warp + 16r + g (+8 for q ≥ 2), token 8j + 2t + (q & 1).
    if constexpr (IsI32<TOut>::value) {  // int32: the exact sums
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int j = 0; j < MT; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int n = n_warp + 16 * r + g + (q >> 1) * 8;
                    const int m = 8 * j + 2 * t + (q & 1);
                    if (n < N && m < M) reinterpret_cast<int*>(out)[(size_t)m * N + n] = acc[r][j][q];
                }
    } else {
        float wsc[RT][2], bia[RT][2];
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int n = min(n_warp + 16 * r + g + 8 * h, N - 1);
                wsc[r][h] = dq.w_scale[n * dq.w_stride];
                bia[r][h] = dq.bias != nullptr ? dq.bias[n] : 0.f;
            }
#pragma unroll
        for (int j = 0; j < MT; ++j) {
            float asc[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) asc[e] = dq.a_scale[min(8 * j + 2 * t + e, M - 1) * dq.a_stride];
#pragma unroll
            for (int r = 0; r < RT; ++r)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const int n = n_warp + 16 * r + g + (q >> 1) * 8;
                    const int m = 8 * j + 2 * t + (q & 1);
                    if (n < N && m < M)
                        out[(size_t)m * N + n] = dequantize_scaled<TOut>(acc[r][j][q], asc[q & 1], wsc[r][q >> 1], dq.bias, bia[r][q >> 1]);
                }
        }
    }
}

}  // namespace i8stream

// One extern "C" entry per (variant, output dtype). splan() in harness.cu mirrors
// MT, RT, WN, WK and D: threads = 32·WN·WK, BN = 16·RT·WN, ring = WN·WK·D·RT·4096 bytes.
#define INT8_MM_STREAM(NAME, TOUT, MT, RT, WN, WK, D)                                                                  \
    extern "C" __global__ void __launch_bounds__(32 * WN * WK) NAME(                                                  \
        const int8_t* a, const int8_t* w, TOUT* out, const float* a_scale, int a_stride, const float* w_scale,         \
        int w_stride, const float* bias, int* workspace, int M, int N, int K, int ks) {                              \
        i8stream::stream_body<TOUT, MT, RT, WN, WK, D>(a, w, out, Dequant{a_scale, a_stride, w_scale, w_stride, bias}, \
                                                       workspace, M, N, K, ks);                                        \
    }
#define INT8_MM_STREAM_ALL_OUT(NAME, MT, RT, WN, WK, D)                              \
    INT8_MM_STREAM(int8_mm_stream_##NAME##_i32, int, MT, RT, WN, WK, D)              \
    INT8_MM_STREAM(int8_mm_stream_##NAME##_f32, float, MT, RT, WN, WK, D)            \
    INT8_MM_STREAM(int8_mm_stream_##NAME##_f16, __half, MT, RT, WN, WK, D)           \
    INT8_MM_STREAM(int8_mm_stream_##NAME##_bf16, __nv_bfloat16, MT, RT, WN, WK, D)

#ifndef INT8_MM_STREAM_VARIANTS
//                      name   MT RT WN WK D
INT8_MM_STREAM_ALL_OUT(m8,     1, 1, 1, 8, 2)
INT8_MM_STREAM_ALL_OUT(m16,    2, 1, 1, 8, 2)
INT8_MM_STREAM_ALL_OUT(m32,    4, 2, 1, 4, 2)
INT8_MM_STREAM_ALL_OUT(m32w,   4, 2, 2, 2, 2)
INT8_MM_STREAM_ALL_OUT(m64,    8, 2, 2, 2, 2)
INT8_MM_STREAM_ALL_OUT(m64w,   8, 2, 4, 1, 2)
INT8_MM_STREAM_ALL_OUT(m128,  16, 1, 4, 1, 2)
#endif
