// Device helpers of the int8_mm op (W8A8 GEMM): the int8 tensor-core mma, 16-byte streaming loads of
// the weights, and the dequantizing epilogue shared by the custom kernels and the vendor path's
// scaling pass, so that both produce the same bits.
//
// Epilogue contract (also what ops/reference/Int8MmReference computes on the CPU):
//   s   = (double) aScale[m] * (double) wScale[n]      exact (24-bit × 24-bit significands fit in 53)
//   v   = (double) acc * s                             one fp64 rounding
//   v   = v + (double) bias[n]                          one fp64 rounding (only with a bias)
//   out = round-to-nearest-even(v) to the output dtype (directly from fp64: one rounding)
// The operations are the IEEE ones in this order with no contraction (__dmul_rn/__dadd_rn), so the GPU
// result is bit-identical to the Java reference that performs the same three double operations.
#pragma once
#include "gapfill_types.cuh"

namespace gapfill {
namespace int8mm {

// D[16×8] += A[16×32] · B[32×8], s8·s8 → s32. a: 4 regs of 4 int8 (row-major A fragment), b: 2 regs
// (column-major B fragment), c: 4 s32 accumulators. Integer products and sums are exact.
__device__ __forceinline__ void mma_s8_16x8x32(int (&c)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                               uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// 16 bytes of weights, read once: evict-first in L2, not kept in L1. Zero when !pred.
__device__ __forceinline__ uint4 load_weights16(const int8_t* p, bool pred) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (pred) v = __ldcs(reinterpret_cast<const uint4*>(p));
    return v;
}

// fp64 → float with round-to-odd: the float keeps a sticky bit, so one later round-to-nearest to a
// format with at least two fewer significand bits (f16: 11, bf16: 8) equals rounding the double once.
__device__ __forceinline__ float to_float_round_odd(double x) {
    float f = __double2float_rz(x);
    if ((double)f != x && !isinf(f)) f = __int_as_float(__float_as_int(f) | 1);
    return f;
}

template <typename T> __device__ __forceinline__ T round_from_double(double v);
template <> __device__ __forceinline__ float round_from_double<float>(double v) { return __double2float_rn(v); }
template <> __device__ __forceinline__ __half round_from_double<__half>(double v) {
    return __float2half_rn(to_float_round_odd(v));
}
template <> __device__ __forceinline__ __nv_bfloat16 round_from_double<__nv_bfloat16>(double v) {
    return __float2bfloat16_rn(to_float_round_odd(v));
}

// Per-row/per-column scale and bias access; a stride of 0 broadcasts one scalar.
struct Dequant {
    const float* a_scale;  // [M] or [1]
    int a_stride;          // 1 or 0
    const float* w_scale;  // [N] or [1]
    int w_stride;          // 1 or 0
    const float* bias;     // [N] F32, or nullptr
};

// out element from the exact int32 accumulator and its token's and channel's scales (and bias), per the contract above.
template <typename T>
__device__ __forceinline__ T dequantize_with(int acc, float a_scale, float w_scale, bool has_bias, float bias) {
    const double s = __dmul_rn((double)a_scale, (double)w_scale);
    double v = __dmul_rn((double)acc, s);
    if (has_bias) v = __dadd_rn(v, (double)bias);
    return round_from_double<T>(v);
}

// The same, reading the scales and bias of out[m, n].
template <typename T>
__device__ __forceinline__ T dequantize(int acc, int m, int n, const Dequant& d) {
    return dequantize_with<T>(acc, d.a_scale[m * d.a_stride], d.w_scale[n * d.w_stride], d.bias != nullptr,
                              d.bias != nullptr ? d.bias[n] : 0.f);
}

}  // namespace int8mm
}  // namespace gapfill
