// Batched matrix-vector products: bmm with m = 1 or n = 1, where each matrix is one vector times one matrix.
//
// Regime: C[b] = op(A[b])·op(B[b]) with m = 1 (a row vector times a k×n matrix) or n = 1 (an m×k matrix times a
//   column vector), 16 < max(m, n, k) <= 128 (bmm_frag keeps m, n, k <= 16), batch of many. All the bytes are the
//   matrix operand's; the math is 2 flops per matrix element. The tile kernels (bmm_small, bmm_team, bmm_frag32)
//   and cuBLAS's strided-batched GEMM pad the unit dimension to a whole tile (16 or more rows of zeros per real
//   one) and stage the matrix through shared memory; the H100 sweep at ca6d8ea (docs/benchmark-runs/h100) had
//   f16 2048 64x1x64 at 12.9 us custom (bmm_small) and 11.8 us cuBLAS against a 5.7 us floor, 1x64x64 13.1 / 12.5.
// Floor: batch·(m·k + k·n + m·n)·sizeof(T) / copy bandwidth (the matrix operand dominates).
// Measured (H100 80GB HBM3, harness cuda-native/dev/bmm/results-h100-gemv.txt, cuBLAS strided batched interleaved, L2
//   flushed by a read, medians; "read" = a plain read of the matrix operand after the flush): f16 2048 64x1x64 cuBLAS
//   12.03 / gemv 11.52 / read 9.47 us; 2048 32x1x32 11.74 / 6.02; 2048 48x1x48 11.84 / 9.12; 512 64x1x64 7.33 / 6.21;
//   8192 64x1x64 31.52 / 29.82 (BF16 within 0.3 us, three later machines within 0.4 us); 128x1x128 27.23 / 32.61 (a
//   loss). The axpy warp kernel: 2048 1x32x32 11.68 / 6.27-7.1, but 2048 1x64x64 10.46 once and 13.4-13.7 on three later
//   machines against cuBLAS's 11.8 (results-h100-gemv-forms.txt), 1x128x128 a loss. So AUTO takes the dot form (n = 1)
//   for F16/BF16 up to 64 (BmmHeuristics.HALF_GEMV_AUTO_MAX_DIM), and the m = 1 shapes its earlier rules already sent to
//   CUSTOM. F32 (in-order sums): 2048 1x64x64 21.79 / 17.66, 64x1x64 19.46 / 21.34 (a loss), 8192 64x1x64 151.42 /
//   60.29, 512 1x64x64 8.06 / 12.48 (a loss: 512·16 threads under-fill the GPU); AUTO's F32 rules are unchanged (rule
//   4b's m = 1 shapes now run it, tied with bmm_team: 17.66 against 17.89). Java sweep: docs/benchmarks/<gpu>/bmm.json,
//   rows (1,64,64) and (64,1,64).
// Limits: chosen by BmmHeuristics.useGemv: m = 1 or n = 1 with 16 < max(m, n, k) <= 128; A, B and C on 16 bytes;
//   the matrix operand's contiguous dimension (k for a "dot" matrix, the output length for an "axpy" one) a multiple
//   of 16 bytes; batch·R < 2^31 threads (validated: batch·m·n < 2^31). Offsets into the batch are 64-bit.
//
// Design. Let R be the output length per matrix (m when n = 1, n when m = 1), M the matrix operand (R×k) and v the
// vector (k). Two storage forms of M:
//   dot:  M stored [R][k] (A as stored with n = 1, or m = n = 1; B transposed with m = 1): y[r] = Σ_kk M[r][kk]·v[kk];
//   axpy: M stored [k][R] (A transposed with n = 1; B as stored with m = 1): y = Σ_kk v[kk]·M[kk][:].
// Kernels:
//   dot_lane: one thread per output row, k in order with fmaf, 16-byte loads along the row, several in flight (a
//     warp's load touches 32 rows; the other chunks of those lines are hit in L1 by the next loads). Tried and
//     dropped: a warp per matrix with lanes splitting k (f16 2048 64x1x64 15.55 us) and a grid-strided flat list of
//     rows (14.98): both coalesced, both slower.
//   axpy_lane: one thread per 16 bytes of outputs, k in order, consecutive threads on consecutive chunks.
//   axpy_warp (F16/BF16, the output row 1, 2, 4, 8, 16 or 32 chunks of 16 bytes): one warp per matrix, each load of
//     the warp one contiguous run of 512 bytes (several values of k); the lanes of one output chunk add their partial
//     sums through shuffles at the end (a fixed tree: results do not depend on timing).
//   F32 takes the lane kernels only: each output is the in-order fmaf sum of the reference
//   (BmmReference.sequentialFmaF32), bit for bit, as for every F32 custom bmm kernel. F16/BF16: fp32 accumulation,
//   one rounding to the output type.
#include "gapfill_types.cuh"

using namespace gapfill;

namespace {

constexpr int kDefaultUnroll = 8;  // 16-byte loads each thread issues before it consumes the first

// acc + Σ m[i]·v[i] over one 16-byte chunk, in element order.
template <typename T>
__device__ __forceinline__ float dot_chunk(const Vec16<T>& m, const Vec16<T>& v, float acc) {
#pragma unroll
    for (int i = 0; i < Vec16<T>::N; i++) acc = fmaf(to_float(m.v[i]), to_float(v.v[i]), acc);
    return acc;
}

template <typename T>
__device__ __forceinline__ Vec16<T> round16(const float (&acc)[Vec16<T>::N]) {
    Vec16<T> o;
#pragma unroll
    for (int i = 0; i < Vec16<T>::N; i++) o.v[i] = from_float<T>(acc[i]);
    return o;
}

// dot, one thread per output row, k in order.
template <typename T, int kUnroll = kDefaultUnroll>
__device__ __forceinline__ void gemv_dot_lane(const T* __restrict__ M, const T* __restrict__ V, T* __restrict__ Y,
                                              int batch, int R, int K, long long m_stride, long long v_stride) {
    constexpr int N = Vec16<T>::N;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)batch * R) return;
    const long long b = t / R;
    const int r = (int)(t - b * R);
    const T* row = M + b * m_stride + (long long)r * K;
    const T* vec = V + b * v_stride;
    const int chunks = K / N;
    float acc = 0.f;
    for (int c0 = 0; c0 < chunks; c0 += kUnroll) {
        Vec16<T> mv[kUnroll], vv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            if (c0 + u < chunks) {
                mv[u] = load16_stream(row + (c0 + u) * N);
                vv[u] = load16(vec + (c0 + u) * N);
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            if (c0 + u < chunks) acc = dot_chunk(mv[u], vv[u], acc);
        }
    }
    Y[b * R + r] = from_float<T>(acc);
}

// acc[i] += M[kk][i]·v[kk] for kk = k_first, k_first + k_step, ... below K, in that order, with kUnroll 16-byte
// loads of M in flight; `mat` points at this thread's 16 bytes of row 0, rows R elements apart. The trip count is the
// same for every thread (a warp's lanes with different k_first stay together). kInOrder: rows past K are skipped, so
// the sum is exactly the in-order fmaf chain (F32); otherwise they are zeros and every fmaf runs (the warp kernel in
// that form took 7.26 us at f16 512 1x64x64 in the harness, against 8.86 in a form with skips and a trip count per lane).
template <typename T, int kUnroll, bool kInOrder>
__device__ __forceinline__ void axpy_rows(float (&acc)[Vec16<T>::N], const T* __restrict__ mat, const T* __restrict__ vec, int R,
                                          int K, int k_first, int k_step) {
    for (int base = 0; base < K; base += kUnroll * k_step) {
        Vec16<T> mv[kUnroll];
        float vs[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            const int kk = base + u * k_step + k_first;
            if (kk < K) {
                mv[u] = load16_stream(mat + (long long)kk * R);
                vs[u] = to_float(vec[kk]);
            } else if (!kInOrder) {
                mv[u].raw = make_uint4(0u, 0u, 0u, 0u);
                vs[u] = 0.f;
            }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            if (!kInOrder || base + u * k_step + k_first < K) {
#pragma unroll
                for (int i = 0; i < Vec16<T>::N; i++) acc[i] = fmaf(to_float(mv[u].v[i]), vs[u], acc[i]);
            }
        }
    }
}

// axpy, one thread per 16 bytes of outputs, k in order.
template <typename T, int kUnroll = kDefaultUnroll>
__device__ __forceinline__ void gemv_axpy_lane(const T* __restrict__ M, const T* __restrict__ V, T* __restrict__ Y,
                                               int batch, int R, int K, long long m_stride, long long v_stride) {
    constexpr int N = Vec16<T>::N;
    const int C = R / N;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (long long)batch * C) return;
    const long long b = t / C;
    const int c = (int)(t - b * C);
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = 0.f;
    axpy_rows<T, kUnroll, true>(acc, M + b * m_stride + (long long)c * N, V + b * v_stride, R, K, 0, 1);
    store16(Y + b * R + (long long)c * N, round16<T>(acc));
}

// axpy, one warp per matrix: 2^log2c lanes cover a row of M (16 bytes of outputs each), 32 >> log2c rows (values
// of k) per step, so each load of the warp is one contiguous run; the lanes of one output chunk add their partial
// sums at the end.
template <typename T, int kUnroll = kDefaultUnroll>
__device__ __forceinline__ void gemv_axpy_warp(const T* __restrict__ M, const T* __restrict__ V, T* __restrict__ Y,
                                               int batch, int R, int K, long long m_stride, long long v_stride, int log2c) {
    constexpr int N = Vec16<T>::N;
    const long long b = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (b >= batch) return;  // whole warps: the shuffles below see all 32 lanes
    const int lane = threadIdx.x & 31;
    const int chunk = lane & ((1 << log2c) - 1);
    const int slot = lane >> log2c;
    float acc[N];
#pragma unroll
    for (int i = 0; i < N; i++) acc[i] = 0.f;
    axpy_rows<T, kUnroll, false>(acc, M + b * m_stride + chunk * N, V + b * v_stride, R, K, slot, 32 >> log2c);
#pragma unroll
    for (int i = 0; i < N; i++) {
        for (int o = 1 << log2c; o < 32; o <<= 1) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], o);
    }
    if (slot == 0) store16(Y + b * R + chunk * N, round16<T>(acc));
}

}  // namespace

// Entry points: bmm_gemv_<dtype>_<dot|axpy>_lane and, F16/BF16, bmm_gemv_<dtype>_axpy_warp; F32 has the lane kernels
// only (in-order sums). M: the matrix operand (batch stride m_stride elements, 0 when shared), V: the vector (v_stride,
// 0 when shared), Y: C, R outputs per matrix. Grids: one thread per output row (dot_lane), per 16 bytes of outputs
// (axpy_lane) or one warp per matrix (axpy_warp), 256 threads per block. Loads in flight per thread: dot_lane F16/BF16
// 4 and F32 8 (the macro's U), axpy_warp 4, axpy_lane kDefaultUnroll (8) in every dtype (harness
// results-h100-gemv.txt: f16 2048 64x1x64 dot_lane 11.52 us with 4, 12.22 with 8; 1x64x64 axpy_warp 10.46 with 4, 13.47
// with 8; the 8-deep half kernels hold 74 to 78 registers, three blocks per SM).
#define GAPFILL_GEMV_LANE(T, NAME, U)                                                                                \
    extern "C" __global__ void __launch_bounds__(256) bmm_gemv_##NAME##_dot_lane(                                   \
        const T* M, const T* V, T* Y, int batch, int R, int K, long long m_stride, long long v_stride) {             \
        gemv_dot_lane<T, U>(M, V, Y, batch, R, K, m_stride, v_stride);                                               \
    }                                                                                                                \
    extern "C" __global__ void __launch_bounds__(256) bmm_gemv_##NAME##_axpy_lane(                                  \
        const T* M, const T* V, T* Y, int batch, int R, int K, long long m_stride, long long v_stride) {             \
        gemv_axpy_lane<T>(M, V, Y, batch, R, K, m_stride, v_stride);                                                 \
    }
#define GAPFILL_GEMV_WARP(T, NAME)                                                                                   \
    extern "C" __global__ void __launch_bounds__(256) bmm_gemv_##NAME##_axpy_warp(                                  \
        const T* M, const T* V, T* Y, int batch, int R, int K, long long m_stride, long long v_stride, int log2c) {  \
        gemv_axpy_warp<T, 4>(M, V, Y, batch, R, K, m_stride, v_stride, log2c);                                       \
    }

GAPFILL_GEMV_LANE(float, f32, 8)
GAPFILL_GEMV_LANE(__half, f16, 4)
GAPFILL_GEMV_LANE(__nv_bfloat16, bf16, 4)
GAPFILL_GEMV_WARP(__half, f16)
GAPFILL_GEMV_WARP(__nv_bfloat16, bf16)
