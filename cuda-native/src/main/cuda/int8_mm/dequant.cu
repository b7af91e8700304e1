// int8_mm vendor composition, second pass: out[m,n] = acc[m,n]·aScale[m]·wScale[n] (+ bias[n]) from the
// int32 matrix cuBLASLt wrote, with the same fp64 epilogue as the custom kernels (int8_mm.cuh), so the
// vendor and custom paths agree bit for bit.
// Regime: any M, N (the cuBLASLt path: M > 64, or forced VENDOR). Floor: M·N·(4 + sizeof(out)) bytes
// over the copy bandwidth. Measured (H100, with cuBLASLt before it): the F16/BF16 vendor rows are 1–4 µs
// slower than the I32 ones (e.g. 19.2 against 15.7 µs at M=1, K=N=4096). Limits: M·N < 2^31 (validated in Java).
#include "int8_mm.cuh"

using namespace gapfill;
using namespace gapfill::int8mm;

template <typename T>
__device__ __forceinline__ void dequant_body(const int* __restrict__ acc, T* __restrict__ out, const Dequant d, int M, int N) {
    const int total = M * N;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
        const int m = i / N;
        const int n = i - m * N;
        out[i] = dequantize<T>(__ldcs(acc + i), m, n, d);
    }
}

#define INT8_MM_DEQUANT(NAME, T)                                                                                   \
    extern "C" __global__ void NAME(const int* acc, T* out, const float* a_scale, int a_stride, const float* w_scale, \
                                    int w_stride, const float* bias, int M, int N) {                                \
        dequant_body<T>(acc, out, Dequant{a_scale, a_stride, w_scale, w_stride, bias}, M, N);                        \
    }
INT8_MM_DEQUANT(int8_mm_dequant_f32, float)
INT8_MM_DEQUANT(int8_mm_dequant_f16, __half)
INT8_MM_DEQUANT(int8_mm_dequant_bf16, __nv_bfloat16)
