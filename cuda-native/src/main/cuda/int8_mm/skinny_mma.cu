// int8_mm skinny: acc[m,n] = Σ_k A[m,k]·W[n,k] for decode shapes, M ≤ 64, with the dequantizing
// epilogue fused (the int32 result reaches memory only as the I32 output or, with split-K, as a
// partial in the workspace).
//
// Regime: A [M,K] int8 and W [N,K] int8, both K-contiguous and 16-byte aligned, K a multiple of 16,
// 1 ≤ M ≤ 64, any N; sm_80+ (int8 mma.sync), the same code on sm_90a.
// Floor: K·N weight bytes (+ M·K + M·N·sizeof(out)) over the measured copy bandwidth; the math
// (2·M·N·K int8 ops on the tensor cores) is far below it for M ≤ 64.
// Measured (H100 SXM, cuBLASLt 13.1, kernel code of commit 2399f88, cuda-native/dev/int8_mm/harness.cu run 2,
// L2 evicted by a read before every repetition; docs/ops/int8_mm.md):
//   M = 1: 13.0 µs at K=N=4096 (42 % of the 5.5 µs weight-read floor, 1.10× cuBLASLt), 28.4 µs F16 at K=14336
//   N=4096 (1.31×), 85.5 µs at K=8192 N=28672 (91 %, 1.05×); M ≤ 8: 0.90–1.32× cuBLASLt, 1.0–2.0× the F16
//   cuBLAS GEMM; ≈ 7.4 µs fixed + K·N / 3.0 TB/s; M = 16: 0.76–1.03×; M = 32: 0.79×; M = 64: 0.57× (AUTO takes
//   the vendor from M = 9).
//   Every element bit-exact against the CPU reference and cuBLASLt.
// Scheme (swap-AB): the weights are the mma's A operand (16 channels × 32 k), the tokens its B operand
// (32 k × 8 tokens). Integer sums are exact in any order, so the k order inside an mma is free: each
// thread loads 16 contiguous bytes of a weight row straight into the four registers that two
// m16n8k32 mmas need (no shuffles, no shared memory for W), and reads the same 16 k of each token
// from shared memory. Per thread and iteration RT·2·U loads of 16 bytes are in flight, and the next
// iteration's loads are issued before the current one's mmas.
//   CTA = 4 warps; warp w owns RT row tiles of 16 channels; grid = (ceil(N/BN), splits).
//   CTA (x, y) covers channels [x·BN, x·BN+BN) and k ∈ [y·ks, min(y·ks+ks, K)); its A slice
//   [M, ks] is copied to shared memory once (rows padded by 64 bytes: conflict-free 16-byte reads).
//   splits > 1: every CTA writes its int32 fragments to the workspace, the last CTA of a channel tile to
//   arrive (per-tile counter) adds the others' in registers and runs the epilogue, then re-arms the
//   counter to 0 — deterministic (integer sums are exact), one launch, nothing allocated.
// Limits: M ≤ 64 (M > 64 goes to cuBLASLt), K ≤ 131056 (|acc| < 2^31, validated in Java), M·K and
// N·K < 2^31, pointers 16-byte aligned (validated in Java).
#include "int8_mm.cuh"

#include <type_traits>

using namespace gapfill;
using namespace gapfill::int8mm;

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int SMEM_ROW_PAD = 64;  // bytes added to each shared row of A: rows 8 apart differ by 64 mod 128

// MT: token tiles of 8 (M ≤ 8·MT); RT: 16-channel row tiles per warp; U: 64-k steps per iteration.
template <int MT, int RT, int U> struct Config {
    static_assert(MT >= 1 && MT <= 8, "at most 64 tokens");
    static constexpr int BN = WARPS * 16 * RT;  // channels per CTA
    static constexpr int STEP = 64 * U;         // k per iteration (4 threads × 16 bytes × U)
};

template <typename TOut, int MT, int RT, int U>
__device__ __forceinline__ void skinny_body(const int8_t* __restrict__ a, const int8_t* __restrict__ w, TOut* __restrict__ out,
                                            const Dequant dq, int* __restrict__ workspace, int M, int N, int K, int ks) {
    using C = Config<MT, RT, U>;
    extern __shared__ uint4 smem_raw[];
    int8_t* a_smem = reinterpret_cast<int8_t*>(smem_raw);  // [M, ks_alloc + 64]

    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int g = lane >> 2;  // mma group: channel row g and g+8, token column g
    const int t = lane & 3;   // thread in group: 16-byte k chunk t of each 64-k step

    const int kb = blockIdx.y * ks;                 // this CTA's k range [kb, ke)
    const int ke = min(kb + ks, K);
    const int ks_alloc = (ks + C::STEP - 1) / C::STEP * C::STEP;
    const int row_stride = ks_alloc + SMEM_ROW_PAD;
    const int n_warp = blockIdx.x * C::BN + warp * 16 * RT;  // first channel of this warp

    // Weight rows this thread streams: [RT][2] rows (g, g+8 of each row tile).
    const int8_t* wrow[RT][2];
    bool row_ok[RT][2];
#pragma unroll
    for (int r = 0; r < RT; ++r) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = n_warp + r * 16 + h * 8 + g;
            row_ok[r][h] = n < N;
            wrow[r][h] = w + (size_t)min(n, N - 1) * K + kb + 16 * t;
        }
    }

    // [RT][U][2] 16-byte weight chunks of one iteration, loaded before the A slice is staged.
    uint4 cur[RT][U][2];
    auto load_iter = [&](uint4 (&dst)[RT][U][2], int k_local) {
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int k = kb + k_local + 64 * u + 16 * t;
                    dst[r][u][h] = load_weights16(wrow[r][h] + k_local + 64 * u, row_ok[r][h] && k < ke);
                }
    };
    load_iter(cur, 0);

    // Stage A[:, kb : kb + ks_alloc) in shared memory, zero past K.
    const int chunks_per_row = ks_alloc / 16;
    for (int i = threadIdx.x; i < M * chunks_per_row; i += THREADS) {
        const int m = i / chunks_per_row;
        const int c = i - m * chunks_per_row;
        const int k = kb + 16 * c;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (k < ke) v = *reinterpret_cast<const uint4*>(a + (size_t)m * K + k);
        *reinterpret_cast<uint4*>(a_smem + m * row_stride + 16 * c) = v;
    }
    __syncthreads();

    int acc[RT][MT][4];
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) acc[r][j][q] = 0;

    for (int k_local = 0; k_local < ks_alloc; k_local += C::STEP) {
        uint4 nxt[RT][U][2];
        const bool more = k_local + C::STEP < ks_alloc;
        if (more) load_iter(nxt, k_local + C::STEP);
#pragma unroll
        for (int u = 0; u < U; ++u) {
#pragma unroll
            for (int j = 0; j < MT; ++j) {
                const int m = 8 * j + g;  // token of this thread's B fragment
                uint4 b = make_uint4(0u, 0u, 0u, 0u);
                if (m < M) b = *reinterpret_cast<const uint4*>(a_smem + m * row_stride + k_local + 64 * u + 16 * t);
#pragma unroll
                for (int r = 0; r < RT; ++r) {
                    const uint4 lo = cur[r][u][0];  // channel row g:   k 16t .. 16t+15 of this step
                    const uint4 hi = cur[r][u][1];  // channel row g+8
                    mma_s8_16x8x32(acc[r][j], lo.x, hi.x, lo.y, hi.y, b.x, b.y);
                    mma_s8_16x8x32(acc[r][j], lo.z, hi.z, lo.w, hi.w, b.z, b.w);
                }
            }
        }
        if (more) {
#pragma unroll
            for (int r = 0; r < RT; ++r)
#pragma unroll
                for (int u = 0; u < U; ++u)
#pragma unroll
                    for (int h = 0; h < 2; ++h) cur[r][u][h] = nxt[r][u][h];
        }
    }

    if (gridDim.y > 1) {
        // Workspace: int counters[gridDim.x] (padded to 64 ints), then
        // int4 partials[gridDim.x][gridDim.y][WARPS][RT][MT][32 lanes].
        int* counters = workspace;
        int4* partials = reinterpret_cast<int4*>(workspace + ((gridDim.x + 63) / 64) * 64);
        const size_t per_split = (size_t)WARPS * RT * MT * 32;
        auto slot = [&](int split, int r, int j) {
            return ((size_t)blockIdx.x * gridDim.y + split) * per_split + (((size_t)warp * RT + r) * MT + j) * 32 + lane;
        };
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int j = 0; j < MT; ++j)
                __stcg(partials + slot(blockIdx.y, r, j), make_int4(acc[r][j][0], acc[r][j][1], acc[r][j][2], acc[r][j][3]));
        // The ticket: after the barrier, thread 0 alone takes it with one acq_rel atomic at gpu scope. Release: the
        // barrier orders every thread's partial stores before it, and the release is cumulative, so they are visible to
        // whichever CTA acquires the counter later. Acquire: the last CTA's loads of the others' partials come after it
        // (second barrier). No sequentially consistent fence (membar.gl) in any thread (the pattern gqa_decode's
        // decode_mma.cu ships since 3e2769d, measured there at 0.98x the time with byte-identical outputs).
        __shared__ int is_last;
        __syncthreads();
        if (threadIdx.x == 0) {
            int old;
            asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(counters + blockIdx.x) : "memory");
            is_last = old == (int)gridDim.y - 1;
        }
        __syncthreads();
        if (!is_last) return;
        for (int s = 0; s < (int)gridDim.y; ++s) {
            if (s == (int)blockIdx.y) continue;
#pragma unroll
            for (int r = 0; r < RT; ++r)
#pragma unroll
                for (int j = 0; j < MT; ++j) {
                    const int4 p = __ldcg(partials + slot(s, r, j));
                    acc[r][j][0] += p.x;
                    acc[r][j][1] += p.y;
                    acc[r][j][2] += p.z;
                    acc[r][j][3] += p.w;
                }
        }
        if (threadIdx.x == 0) counters[blockIdx.x] = 0;  // re-armed for the next launch on this stream
    }

    // Epilogue. Fragment c[q]: channel n_warp + 16r + g (+8 for q ≥ 2), token 8j + 2t + (q & 1).
    // Float outputs: the scales and bias of this thread's 2·RT channels and 2·MT tokens are loaded once and all at
    // once. Read per element, each load waited behind the previous element's store (out is __restrict__, the scales
    // are not, so the compiler may not move a load above a store): on an H100 the F16 output of M = 64, K = N = 4096
    // took 29.1 µs on the GPU against 20.0 µs for I32 (ncu, docs/ops/int8_mm.md).
    constexpr bool kDequant = !std::is_same<TOut, int>::value;
    float ws[RT][2], bs[RT][2], as[MT][2];
    const bool has_bias = dq.bias != nullptr;
    if constexpr (kDequant) {
#pragma unroll
        for (int r = 0; r < RT; ++r)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int n = n_warp + 16 * r + g + 8 * h;
                ws[r][h] = n < N ? dq.w_scale[n * dq.w_stride] : 0.f;
                bs[r][h] = has_bias && n < N ? dq.bias[n] : 0.f;
            }
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int m = 8 * j + 2 * t + e;
                as[j][e] = m < M ? dq.a_scale[m * dq.a_stride] : 0.f;
            }
    }
#pragma unroll
    for (int r = 0; r < RT; ++r)
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int n = n_warp + 16 * r + g + (q >> 1) * 8;
                const int m = 8 * j + 2 * t + (q & 1);
                if (n < N && m < M) {
                    if constexpr (kDequant) {
                        out[(size_t)m * N + n] = dequantize_with<TOut>(acc[r][j][q], as[j][q & 1], ws[r][q >> 1], has_bias, bs[r][q >> 1]);
                    } else {
                        out[(size_t)m * N + n] = acc[r][j][q];
                    }
                }
            }
}

}  // namespace

// One extern "C" entry per (tokens tile, output dtype). Java (Int8MmHeuristics) mirrors BN, STEP and the registers:
//   m8: RT=1, U=4 → BN=64, STEP=256;  m16: the same with MT=2, held to 5 CTAs per SM (its BOUNDS);
//   m32/m64: RT=2, U=2 → BN=128, STEP=128.
// m16 was RT=2, U=2 until the thirty-fifth session: cuda-native/dev/int8_mm/tile_sweep.cu (h100-tile-sweep.txt, one
// H100) timed it against RT=1 with U ∈ {2, 4} at M = 12 and 16 on the six sweep shapes, every output bit-identical;
// at the plans of Int8MmHeuristics.skinnyPlan RT=1, U=4 held to 5 CTAs per SM took 0.967× the time at M = 16 and
// 0.937× at M = 12 (geometric means; per row 0.90–1.00× on F16, 0.92–1.01× on I32), and held so every output type
// stays at ≤ 96 registers, like m8.
#define INT8_MM_SKINNY(NAME, TOUT, MT, RT, U, BOUNDS)                                                               \
    extern "C" __global__ void __launch_bounds__ BOUNDS NAME(                                                      \
        const int8_t* a, const int8_t* w, TOUT* out, const float* a_scale, int a_stride, const float* w_scale,        \
        int w_stride, const float* bias, int* workspace, int M, int N, int K, int ks) {                             \
        skinny_body<TOUT, MT, RT, U>(a, w, out, Dequant{a_scale, a_stride, w_scale, w_stride, bias}, workspace, M, N, \
                                     K, ks);                                                                          \
    }
#define INT8_MM_SKINNY_ALL_OUT(TOKENS, MT, RT, U, BOUNDS)                                        \
    INT8_MM_SKINNY(int8_mm_skinny_m##TOKENS##_i32, int, MT, RT, U, BOUNDS)                       \
    INT8_MM_SKINNY(int8_mm_skinny_m##TOKENS##_f32, float, MT, RT, U, BOUNDS)                     \
    INT8_MM_SKINNY(int8_mm_skinny_m##TOKENS##_f16, __half, MT, RT, U, BOUNDS)                    \
    INT8_MM_SKINNY(int8_mm_skinny_m##TOKENS##_bf16, __nv_bfloat16, MT, RT, U, BOUNDS)

INT8_MM_SKINNY_ALL_OUT(8, 1, 1, 4, (THREADS))
INT8_MM_SKINNY_ALL_OUT(16, 2, 1, 4, (THREADS, 5))
INT8_MM_SKINNY_ALL_OUT(32, 4, 2, 2, (THREADS))
INT8_MM_SKINNY_ALL_OUT(64, 8, 2, 2, (THREADS))
