// Elementwise passes around the cuBLAS paths of the grouped GEMM (the work cuBLAS cannot fuse):
//   gg_gather_<dt>:   Xg[r, :] = X[gather[r], :]   (rows outside [0, X_rows) become zeros, like the custom kernel)
//   gg_epilogue_<dt>: Y[r, j] = s_r · silu(A[r, j]) · A[r, I + j]   (SwiGLU, I = N/2)   or   s_r · A[r, j]
//                     from the fp32 GEMM result A [T_total, N], one rounding to the output dtype — the same
//                     fp32 formula as the custom kernel's epilogue, so both paths share one error bound.
//   gg_epilogue_<dt>_from_<dt>: the same from a GEMM result already rounded to the dtype (A in the input
//                     dtype): cublasGemmGroupedBatchedEx returns CUBLAS_STATUS_NOT_SUPPORTED (15) for fp32 C with
//                     f16/bf16 A and B (H100, cuBLAS 13, measured at 69d1975), so that path rounds twice.
// Regime: bandwidth-bound passes, any K and N. Floor: bytes read + written over copy bandwidth.
// Measured: not yet measured. Limits: T_total·max(K, N) < 2^31 (validated in Java).
#include "gapfill_types.cuh"
#include "grouped_gemm_mma.cuh"

using namespace gapfill;

template <typename T>
__device__ __forceinline__ void gather_body(const T* __restrict__ X, const int* __restrict__ gather, T* __restrict__ Xg,
                                            int T_total, int X_rows, int K) {
    const int stride = gridDim.x * blockDim.x;
    const bool vec = K % Vec16<T>::N == 0 && aligned16(X) && aligned16(Xg);
    if (vec) {
        const int kv = K / Vec16<T>::N;  // 16-byte vectors per row
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < T_total * kv; i += stride) {
            const int r = i / kv, c = i % kv;
            const int src = gather[r];
            Vec16<T> v;
            if (src >= 0 && src < X_rows) {
                v = load16(X + (size_t)src * K + (size_t)c * Vec16<T>::N);
            } else {
                v.raw = make_uint4(0, 0, 0, 0);
            }
            store16(Xg + (size_t)r * K + (size_t)c * Vec16<T>::N, v);
        }
    } else {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < T_total * K; i += stride) {
            const int r = i / K, c = i % K;
            const int src = gather[r];
            Xg[i] = (src >= 0 && src < X_rows) ? X[(size_t)src * K + c] : from_float<T>(0.f);
        }
    }
}

template <typename TA, typename T>
__device__ __forceinline__ void epilogue_body(const TA* __restrict__ A, const float* __restrict__ scale, T* __restrict__ Y,
                                              int T_total, int N, int swiglu) {
    const int n_out = swiglu ? N / 2 : N;
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < T_total * n_out; i += stride) {
        const int r = i / n_out, j = i % n_out;
        const TA* a = A + (size_t)r * N;
        const float s = scale != nullptr ? scale[r] : 1.0f;
        const float v = swiglu ? gg::silu(to_float(a[j])) * to_float(a[n_out + j]) * s : to_float(a[j]) * s;
        Y[i] = from_float<T>(v);
    }
}

extern "C" __global__ void gg_gather_f16(const __half* X, const int* gather, __half* Xg, int T_total, int X_rows, int K) {
    gather_body(X, gather, Xg, T_total, X_rows, K);
}
extern "C" __global__ void gg_gather_bf16(const __nv_bfloat16* X, const int* gather, __nv_bfloat16* Xg, int T_total, int X_rows,
                                          int K) {
    gather_body(X, gather, Xg, T_total, X_rows, K);
}
extern "C" __global__ void gg_epilogue_f16(const float* A, const float* scale, __half* Y, int T_total, int N, int swiglu) {
    epilogue_body(A, scale, Y, T_total, N, swiglu);
}
extern "C" __global__ void gg_epilogue_bf16(const float* A, const float* scale, __nv_bfloat16* Y, int T_total, int N,
                                            int swiglu) {
    epilogue_body(A, scale, Y, T_total, N, swiglu);
}
extern "C" __global__ void gg_epilogue_f16_from_f16(const __half* A, const float* scale, __half* Y, int T_total, int N,
                                                    int swiglu) {
    epilogue_body(A, scale, Y, T_total, N, swiglu);
}
extern "C" __global__ void gg_epilogue_bf16_from_bf16(const __nv_bfloat16* A, const float* scale, __nv_bfloat16* Y,
                                                      int T_total, int N, int swiglu) {
    epilogue_body(A, scale, Y, T_total, N, swiglu);
}
