// Batched matmul for many small matrices: C[b] = op(A[b]) · op(B[b]), m, n, k <= 128.
//
// Regime: batch >= 512 of matrices small enough that cuBLAS's strided-batched kernels under-fill the
// GPU (one launch, tiles of 64+ rows wasted on 8..64-row matrices). F16/BF16 with fp32 accumulation
// on tensor cores (mma.sync m16n8k16, sm_80+), F32 with exact FFMA in a fixed k order. sm_80 and
// sm_90a SASS from the same source (mma.sync runs on Hopper; no wgmma).
// Floor: max((batch·(m·k + k·n + m·n) · sizeof(T)) / copy bandwidth, 2·batch·m·n·k / math rate)
//   (shared B counts k·n once).
// Measured (H100 SXM, commit 71656b2, cuda-native/dev/bmm/results-h100-71656b2.txt, vs cuBLAS strided
//   batched, L2 flushed): F16 batch 8192 8^3 9.5 us = 3.35x cuBLAS; batch 2048 16^3 6.5 us = 1.96x;
//   batch 8192 32^3 29.0 us = 1.17x at 58 % of the floor; loses from 48^3 (batch >= 2048) and 64^3 up
//   (batch 8192 64^3: 87.3 us, 77 % of floor, cuBLAS 74.6 us). F32 exact: batch 8192 8^3 4.56x,
//   48^3 1.28x, loses from 64^3 (128^3 at 39-43 % of the FFMA floor). All of it in docs/ops/bmm.md.
// Limits: m, n, k <= 128 (checked in Java: BmmHeuristics.customUnsupportedReason); batch·m·k, batch·k·n and
//   batch·m·n < 2^31 elements; dynamic shared memory as planned by BmmHeuristics.plan (<= 135 KiB).
//
// Design. One thread block owns G consecutive matrices (G from the Java plan: several per block for
// tiny sizes). It stages every operand whole in shared memory, in the operand's global layout
// (row-major [rows][cols], transposed operands as stored), with the rows and columns padded with
// zeros to the tile multiple, then computes from shared memory and writes C straight from registers
// with masks. Rows whose length is a multiple of 16 bytes are copied with 16-byte cp.async; other
// row lengths (odd k or n) use element loads in the same loop, so odd sizes never fall back.
//   F16/BF16: every warp takes 16x16 output tiles (two m16n8k16 MMAs per k16 step), fragments by
//     ldmatrix (.trans where the stored layout is the other major); smem row stride = cols16 + 8
//     elements, which keeps ldmatrix conflict-free.
//   F32: every thread takes 4x4 output tiles, 16 FFMAs per k step read through 128-bit shared loads;
//     k runs 0, 1, ..., k-1 in order for every element (acc = fmaf(a, b, acc), acc starts at 0), so
//     the result is defined bit for bit and tests compare it exactly.
#include "gapfill_types.cuh"
#include "bmm_mma.cuh"
#include "bmm_ffma.cuh"

using namespace gapfill;

namespace {

__host__ __device__ constexpr int round_up(int x, int m) { return (x + m - 1) / m * m; }

// Tile granularity of the padded shared-memory operands: 16 for tensor cores (m16, n16, k16), 4 for FFMA.
template <typename T> struct Tile { static constexpr int P = 16; };
template <> struct Tile<float> { static constexpr int P = 4; };

// Shared-memory image of one operand as stored in global memory: [rows][cols] padded to Tile::P,
// row stride chosen so that 8 consecutive rows start in 8 different 16-byte bank groups.
template <typename T> struct SmemOperand {
    int rows, cols;      // logical (as stored in global memory)
    int rows_p, cols_p;  // padded with zeros to Tile<T>::P
    int stride;          // elements between rows in shared memory
    __device__ __forceinline__ SmemOperand(int r, int c) : rows(r), cols(c) {
        constexpr int V = 16 / sizeof(T);  // elements per 16 bytes
        rows_p = round_up(r, Tile<T>::P);
        cols_p = round_up(c, Tile<T>::P);
        stride = cols_p + (((cols_p / V) % 2 == 0) ? V : 0);  // odd number of 16-byte chunks
    }
    __device__ __forceinline__ int elements() const { return rows_p * stride; }
};

// Copies `slots` matrices (b0, b0+1, ...; or one shared matrix when mat_stride == 0) of `op` into
// shared memory, zero-filling the padding and any matrix past `batch`.
template <typename T>
__device__ __forceinline__ void load_operand(T* __restrict__ s, const T* __restrict__ g, long long mat_stride,
                                             int b0, int slots, int batch, const SmemOperand<T>& op) {
    constexpr int V = 16 / sizeof(T);
    const int chunks_per_row = op.cols_p / V;  // cols_p is a multiple of V
    const int total = slots * op.rows_p * chunks_per_row;
    const bool vec = (op.cols % V == 0) && aligned16(g);  // every row starts 16-byte aligned
    for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
        const int cv = idx % chunks_per_row;
        const int t = idx / chunks_per_row;
        const int r = t % op.rows_p;
        const int j = t / op.rows_p;
        const int b = b0 + j;
        const int c = cv * V;
        T* dst = s + ((size_t)j * op.rows_p + r) * op.stride + c;  // 16-byte aligned
        const bool row_in = b < batch && r < op.rows;
        const T* src = g + (size_t)b * mat_stride + (size_t)r * op.cols + c;
        if (row_in && vec && c + V <= op.cols) {
            cp_async16(dst, src);
        } else {
            Vec16<T> v;
#pragma unroll
            for (int e = 0; e < V; ++e) v.v[e] = (row_in && c + e < op.cols) ? src[e] : from_float<T>(0.f);
            store16(dst, v);
        }
    }
}

template <typename T> __device__ __forceinline__ void store_pair(T* p, float x, float y);
template <> __device__ __forceinline__ void store_pair<__half>(__half* p, float x, float y) {
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
}
template <> __device__ __forceinline__ void store_pair<__nv_bfloat16>(__nv_bfloat16* p, float x, float y) {
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
}

// ---------------------------------------------------------------- tensor cores (F16 / BF16)
// One warp computes the 16x16 tile (mt, nt) of one matrix: acc[h] is the m16n8 accumulator of
// columns nt*16 + h*8 .. +7.
template <typename T, bool TA, bool TB>
__device__ __forceinline__ void mma_tile(const T* sA, const SmemOperand<T>& a, const T* sB, const SmemOperand<T>& bo,
                                         int mt, int nt, int k, float (&acc)[2][4]) {
    const int lane = threadIdx.x & 31;
    const int q = lane >> 3;   // which 8x8 matrix this lane addresses
    const int rr = lane & 7;   // which row of it
    const int ksteps = round_up(k, 16) / 16;
#pragma unroll 2
    for (int ks = 0; ks < ksteps; ++ks) {
        uint32_t af[4], bf[4];
        // A fragment [16 m, 16 k]: matrices (m0-7,k0-7), (m8-15,k0-7), (m0-7,k8-15), (m8-15,k8-15)
        if (!TA) {  // sA: [m][k]
            ldmatrix_x4(af, sA + (mt * 16 + (q & 1) * 8 + rr) * a.stride + ks * 16 + (q >> 1) * 8);
        } else {    // sA: [k][m], transposed by ldmatrix
            ldmatrix_x4_trans(af, sA + (ks * 16 + (q >> 1) * 8 + rr) * a.stride + mt * 16 + (q & 1) * 8);
        }
        // B fragments [16 k, 16 n]: matrices (n0-7,k0-7), (n0-7,k8-15), (n8-15,k0-7), (n8-15,k8-15)
        if (!TB) {  // sB: [k][n], transposed by ldmatrix
            ldmatrix_x4_trans(bf, sB + (ks * 16 + (q & 1) * 8 + rr) * bo.stride + nt * 16 + (q >> 1) * 8);
        } else {    // sB: [n][k]
            ldmatrix_x4(bf, sB + (nt * 16 + (q >> 1) * 8 + rr) * bo.stride + ks * 16 + (q & 1) * 8);
        }
        MmaOp<T>::run(acc[0], af, bf[0], bf[1]);
        MmaOp<T>::run(acc[1], af, bf[2], bf[3]);
    }
}

template <typename T, bool TA, bool TB>
__device__ __forceinline__ void bmm_small_mma(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                              int batch, int m, int n, int k, int mats, int b_shared) {
    static_assert(sizeof(T) == 2, "tensor-core path takes 16-bit inputs");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const SmemOperand<T> a(TA ? k : m, TA ? m : k);
    const SmemOperand<T> bo(TB ? n : k, TB ? k : n);
    T* sA = reinterpret_cast<T*>(smem_raw);                // [mats][a.rows_p][a.stride]
    T* sB = sA + (size_t)mats * a.elements();              // [b_slots][bo.rows_p][bo.stride]
    const int b0 = blockIdx.x * mats;
    load_operand(sA, A, (long long)m * k, b0, mats, batch, a);
    load_operand(sB, B, b_shared ? 0LL : (long long)k * n, b_shared ? 0 : b0, b_shared ? 1 : mats, batch, bo);
    cp_async_wait_all();
    __syncthreads();

    const int warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5, lane = threadIdx.x & 31;
    const int mtiles = round_up(m, 16) / 16, ntiles = round_up(n, 16) / 16;
    const int per_mat = mtiles * ntiles;
    const bool pairs = (n % 2 == 0) && ((reinterpret_cast<uintptr_t>(C) & 3) == 0);
    for (int u = warp; u < mats * per_mat; u += nwarps) {  // warp-uniform loop
        const int j = u / per_mat, mt = (u % per_mat) / ntiles, nt = u % ntiles;
        const int b = b0 + j;
        if (b >= batch) break;  // tiles are ordered by matrix: the rest are past the batch too
        float acc[2][4] = {};
        mma_tile<T, TA, TB>(sA + (size_t)j * a.elements(), a, sB + (b_shared ? 0 : (size_t)j * bo.elements()), bo, mt, nt,
                            k, acc);
        // acc[h][0..1]: row lane/4, cols 2*(lane%4)+{0,1}; acc[h][2..3]: row lane/4 + 8
        T* Cb = C + (size_t)b * m * n;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int col = nt * 16 + h * 8 + 2 * (lane & 3);
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = mt * 16 + (lane >> 2) + half * 8;
                if (row >= m) continue;
                T* p = Cb + (size_t)row * n + col;
                const float x = acc[h][2 * half], y = acc[h][2 * half + 1];
                if (pairs && col + 1 < n) {
                    store_pair<T>(p, x, y);
                } else {
                    if (col < n) p[0] = from_float<T>(x);
                    if (col + 1 < n) p[1] = from_float<T>(y);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- FFMA (F32, exact order)
template <bool TA, bool TB>
__device__ __forceinline__ void bmm_small_ffma(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                               int batch, int m, int n, int k, int mats, int b_shared) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const SmemOperand<float> a(TA ? k : m, TA ? m : k);
    const SmemOperand<float> bo(TB ? n : k, TB ? k : n);
    float* sA = reinterpret_cast<float*>(smem_raw);        // [mats][a.rows_p][a.stride]
    float* sB = sA + (size_t)mats * a.elements();          // [b_slots][bo.rows_p][bo.stride]
    const int b0 = blockIdx.x * mats;
    load_operand(sA, A, (long long)m * k, b0, mats, batch, a);
    load_operand(sB, B, b_shared ? 0LL : (long long)k * n, b_shared ? 0 : b0, b_shared ? 1 : mats, batch, bo);
    cp_async_wait_all();
    __syncthreads();

    const int mt4 = round_up(m, 4) / 4, nt4 = round_up(n, 4) / 4;
    const int per_mat = mt4 * nt4;
    const bool vec_out = (n % 4 == 0) && aligned16(C);
    for (int u = threadIdx.x; u < mats * per_mat; u += blockDim.x) {
        const int j = u / per_mat, r0 = ((u % per_mat) / nt4) * 4, c0 = (u % nt4) * 4;
        const int b = b0 + j;
        if (b >= batch) break;
        const float* sAj = sA + (size_t)j * a.elements();
        const float* sBj = sB + (b_shared ? 0 : (size_t)j * bo.elements());
        float acc[4][4];
        ffma_tile4x4<TA, TB>(sAj, a.stride, sBj, bo.stride, r0, c0, k, acc);
        float* Cb = C + (size_t)b * m * n;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = r0 + i;
            if (row >= m) break;
            float* p = Cb + (size_t)row * n + c0;
            if (vec_out && c0 + 3 < n) {
                *reinterpret_cast<float4*>(p) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
            } else {
#pragma unroll
                for (int jj = 0; jj < 4; ++jj)
                    if (c0 + jj < n) p[jj] = acc[i][jj];
            }
        }
    }
}

}  // namespace

// Entry points: bmm_small_<dtype>_<a><b>, a/b = n (as is) or t (transposed). Grid: ceil(batch / mats)
// blocks of any multiple of 32 threads; dynamic shared memory from BmmHeuristics.plan.
#define GAPFILL_BMM_MMA(NAME, T, TA, TB)                                                                          \
    extern "C" __global__ void NAME(const T* A, const T* B, T* C, int batch, int m, int n, int k, int mats,      \
                                    int b_shared) {                                                               \
        bmm_small_mma<T, TA, TB>(A, B, C, batch, m, n, k, mats, b_shared);                                        \
    }
#define GAPFILL_BMM_FFMA(NAME, TA, TB)                                                                              \
    extern "C" __global__ void NAME(const float* A, const float* B, float* C, int batch, int m, int n, int k,      \
                                    int mats, int b_shared) {                                                       \
        bmm_small_ffma<TA, TB>(A, B, C, batch, m, n, k, mats, b_shared);                                            \
    }

GAPFILL_BMM_MMA(bmm_small_f16_nn, __half, false, false)
GAPFILL_BMM_MMA(bmm_small_f16_nt, __half, false, true)
GAPFILL_BMM_MMA(bmm_small_f16_tn, __half, true, false)
GAPFILL_BMM_MMA(bmm_small_f16_tt, __half, true, true)
GAPFILL_BMM_MMA(bmm_small_bf16_nn, __nv_bfloat16, false, false)
GAPFILL_BMM_MMA(bmm_small_bf16_nt, __nv_bfloat16, false, true)
GAPFILL_BMM_MMA(bmm_small_bf16_tn, __nv_bfloat16, true, false)
GAPFILL_BMM_MMA(bmm_small_bf16_tt, __nv_bfloat16, true, true)
GAPFILL_BMM_FFMA(bmm_small_f32_nn, false, false)
GAPFILL_BMM_FFMA(bmm_small_f32_nt, false, true)
GAPFILL_BMM_FFMA(bmm_small_f32_tn, true, false)
GAPFILL_BMM_FFMA(bmm_small_f32_tt, true, true)
