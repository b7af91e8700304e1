// Shared pieces of the depthwise_conv3x3 kernels: the activation codes (same numbering as the Java
// enum dev.gapfill.ops.DepthwiseConv3x3.Activation) and the epilogue that turns an fp32 pre-activation
// into the output element with ONE rounding.
//
// Numerics contract (defined by ops/reference/DepthwiseConv3x3Reference.java):
//  - NONE, RELU, RELU6 are exact in fp32, so the result is bit-exact with the reference.
//  - SILU, GELU_ERF, GELU_TANH: F16/BF16 outputs evaluate the function in fp32 (the custom kernels with
//    ex2/rcp approximations and an erfc fit, the vendor composition's pass with expf, erfcf; both below)
//    then round once to the output (≤ 1 ulp of the output format); F32 outputs evaluate SILU and GELU_ERF (and
//    GELU_TANH where the architecture's fp64 rate is low, below) in double-float fp32 arithmetic
//    (f32_smooth_act.cuh), GELU_TANH otherwise in fp64 (exp) from the fp32 pre-activation, and round once to fp32
//    (≤ 1 ulp of fp32).
//  - The forms are the cancellation-free ones the reference uses:
//      silu(v)      = v / (1 + e^-v)            (v·e^v / (1 + e^v) for v < 0: no overflow)
//      gelu_erf(v)  = ½·v·erfc(−v/√2)                  (= ½v(1+erf(v/√2)), no cancellation for v ≪ 0)
//      gelu_tanh(v) = v / (1 + e^(−2t)), t = √(2/π)(v + 0.044715 v³)   (= ½v(1+tanh t))
#pragma once
#include "gapfill_types.cuh"
#include "fast_smooth_act.cuh"
#include "f32_smooth_act.cuh"

namespace gapfill {
namespace dwconv {

enum Act : int { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU6 = 2, ACT_SILU = 3, ACT_GELU_ERF = 4, ACT_GELU_TANH = 5 };

// Exact activations (NaN propagates: NaN < 0 is false).
__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }
__device__ __forceinline__ float relu6(float v) { return v < 0.f ? 0.f : (v > 6.f ? 6.f : v); }

// v · σ(a) = v / (1 + e^−a) without overflow: for a < 0 it is evaluated as v·e^a / (1 + e^a), so
// e^|a| never overflows (v / (1 + inf) would give −0 where the true value, e.g. silu(−90) ≈ −7e−38,
// is still a normal BF16 number). Either branch is a few fp32 ulps from the exact value, far below
// the half-ulp of the 16-bit output.
__device__ __forceinline__ float logistic_times(float v, float a) {
    const float e = expf(-fabsf(a));
    const float num = a >= 0.f ? v : __fmul_rn(v, e);
    return __fdiv_rn(num, __fadd_rn(1.f, e));
}

// Transcendental activations in fp32 (for F16/BF16 outputs), the exact forms: expf, erfcf, IEEE division.
// The vendor composition's elementwise pass (vendor_gelu.cu) uses them; the custom kernels use the fast
// forms below, which round to the same 16-bit output within the same 1 ulp.
__device__ __forceinline__ float smooth_act_exact_f32(float v, int act) {
    if (act == ACT_SILU) {
        return logistic_times(v, v);
    }
    if (act == ACT_GELU_ERF) {
        return __fmul_rn(__fmul_rn(0.5f, v), erfcf(__fmul_rn(-v, 0.7071067811865476f)));
    }
    // GELU_TANH
    const float t = __fmul_rn(0.7978845608028654f, __fmaf_rn(__fmul_rn(0.044715f, v), __fmul_rn(v, v), v));
    return logistic_times(v, __fmul_rn(2.f, t));
}

// ---- Smooth activations of the custom kernels: fast_smooth_act.cuh's forms ----
// Out of range (|v| ≥ 2^64, ±inf, NaN) the fast forms give the exact forms' results too (e, E → 0; NaN
// propagates); a translation unit that defines GAPFILL_DWCONV_FASTACT_GUARD still sends those v through a
// call to the exact forms: nhwc.cu does, because the call keeps ptxas at 128 registers for the F16/BF16 s1
// kernels (with no call it allocates 130/134: one block of 256 threads per SM instead of two).

#if defined(GAPFILL_DWCONV_FASTACT_GUARD)
static __device__ __noinline__ float smooth_act_exact_call(float v, int act) { return smooth_act_exact_f32(v, act); }
#endif

// The smooth activations of the F16/BF16 epilogue: the fast forms, or the exact ones where a translation
// unit defines GAPFILL_DWCONV_EXACT_SMOOTH_ACT (vendor_gelu.cu: the vendor composition's pass).
__device__ __forceinline__ float smooth_act_f32(float v, int act) {
#if defined(GAPFILL_DWCONV_EXACT_SMOOTH_ACT)
    return smooth_act_exact_f32(v, act);
#else
    float r = act == ACT_SILU ? fast_silu_f32(v) : act == ACT_GELU_ERF ? fast_gelu_erf_f32(v) : fast_gelu_tanh_f32(v);
#if defined(GAPFILL_DWCONV_FASTACT_GUARD)
    if (!(fabsf(v) < 0x1p64f)) r = smooth_act_exact_call(v, act);
#endif
    return r;
#endif
}

// Transcendental activations in fp64 (for F32 outputs), from the fp32 pre-activation.
__device__ __forceinline__ double smooth_act_f64(float vf, int act) {
    const double v = vf;
    if (act == ACT_SILU) {
        return __ddiv_rn(v, __dadd_rn(1.0, exp(-v)));
    }
    if (act == ACT_GELU_ERF) {
        return __dmul_rn(__dmul_rn(0.5, v), erfc(__dmul_rn(-v, 0.70710678118654752440)));
    }
    const double t = __dmul_rn(0.79788456080286535588, __fma_rn(__dmul_rn(0.044715, v), __dmul_rn(v, v), v));
    return __ddiv_rn(v, __dadd_rn(1.0, exp(__dmul_rn(-2.0, t))));
}

// fp32 pre-activation → output element, one rounding.
template <typename T> __device__ __forceinline__ T finish(float v, int act) {
    if (act == ACT_RELU) return from_float<T>(relu(v));
    if (act == ACT_RELU6) return from_float<T>(relu6(v));
    if (act == ACT_NONE) return from_float<T>(v);
    return from_float<T>(smooth_act_f32(v, act));
}
// F32 outputs: SILU and GELU_ERF always, and GELU_TANH where GAPFILL_F32_GELU_TANH_DF is 1, in double-float fp32
// arithmetic (f32_smooth_act.cuh: within 1 ulp of the exactly rounded fp64 form on all 2^32 inputs); the other
// GELU_TANH builds and non-finite v in fp64. Measured on the H100 (fp64 at half the fp32 rate; ab/f32act_check.cu,
// compute only): the double-float SILU at 1.12-1.14× the fp64 form's throughput, GELU_ERF at 1.29×, GELU_TANH at
// 0.94-0.95× (h100-2425e89-f32act.txt, h100-d065f20-f32act.txt); the A10, A40, L4, L40 and RTX parts run fp64 at
// 1/64 of the fp32 rate, where the fp64 forms would bound the layer. So the sm_90a SASS (H100, H200) keeps
// GELU_TANH in fp64, and the sm_80 SASS and compute_80 PTX (A100 and every other Ampere, Ada and newer part)
// evaluate it in double-float too. A translation unit may set GAPFILL_F32_GELU_TANH_DF itself.
#if !defined(GAPFILL_F32_GELU_TANH_DF)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define GAPFILL_F32_GELU_TANH_DF 0
#else
#define GAPFILL_F32_GELU_TANH_DF 1
#endif
#endif

// One branch per form, and one fp64 form for GELU_TANH (where not double-float) and non-finite v, so that each
// form's code appears once per output element (a form nested in another's branch may be duplicated by the compiler).
template <> __device__ __forceinline__ float finish<float>(float v, int act) {
    if (act == ACT_RELU) return relu(v);
    if (act == ACT_RELU6) return relu6(v);
    if (act == ACT_NONE) return v;
    const bool finite = fabsf(v) <= 3.40282347e38f;
    if (finite && act == ACT_SILU) return f32act::silu_f32(v);
    if (finite && act == ACT_GELU_ERF) return f32act::gelu_erf_f32(v);
    if (finite && GAPFILL_F32_GELU_TANH_DF && act == ACT_GELU_TANH) return f32act::gelu_tanh_f32(v);
    return __double2float_rn(smooth_act_f64(v, act));
}

// One input row's taps for WC neighbouring output columns: acc[k][e] (+)= Σ_q w[p][q][e]·in[S·k+q][e] in q
// order (the reference's order within a row, p-major overall), each one fp32 fma; fresh starts from +0 like the
// reference. in holds the S·(WC−1)+3 input columns the outputs need, widened to fp32.
template <int S, int CPT, int WC, int KC>
__device__ __forceinline__ void accumulate_tap_row(const float (&wr)[9][CPT], int p, const float (&in)[KC][CPT],
                                                   float (&acc)[WC][CPT], bool fresh) {
#pragma unroll
    for (int k = 0; k < WC; ++k)
#pragma unroll
        for (int e = 0; e < CPT; ++e) {
            float a = fresh ? 0.f : acc[k][e];
#pragma unroll
            for (int q = 0; q < 3; ++q) a = __fmaf_rn(wr[p * 3 + q][e], in[S * k + q][e], a);
            acc[k][e] = a;
        }
}

// One input row's taps for N neighbouring output columns of one channel (the NCHW kernels): acc[e] (+)= Σ_q
// w[p][q]·in[S·e+q] in q order, each one fp32 fma; fresh starts from +0 like the reference. in holds the input
// columns S·j0−1 … the outputs need, widened to fp32.
template <int S, int N, int K>
__device__ __forceinline__ void taps(const float (&wr)[9], int p, const float (&in)[K], float (&acc)[N], bool fresh) {
#pragma unroll
    for (int e = 0; e < N; ++e) {
        float a = fresh ? 0.f : acc[e];
#pragma unroll
        for (int q = 0; q < 3; ++q) a = __fmaf_rn(wr[p * 3 + q], in[S * e + q], a);
        acc[e] = a;
    }
}

// ---- N-element accesses (N·sizeof(T) ∈ {2, 4, 8, 16} bytes) used by both layouts ----
template <int B> struct RawBits;
template <> struct RawBits<16> { using type = uint4; };
template <> struct RawBits<8> { using type = uint2; };
template <> struct RawBits<4> { using type = unsigned int; };
template <> struct RawBits<2> { using type = unsigned short; };

// N elements of T in one register-sized access.
template <typename T, int N> union Pack {
    typename RawBits<N * (int)sizeof(T)>::type raw;
    T v[N];
};

// Every element of M packs set to +0 (the value of padding and of rows that are not loaded).
template <typename T, int N, int M> __device__ __forceinline__ void zero_packs(Pack<T, N> (&p)[M]) {
    const T zero = from_float<T>(0.f);
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int e = 0; e < N; ++e) p[m].v[e] = zero;
}

// N elements at p (N·sizeof(T)-aligned) widened exactly to fp32, through L1 (neighbours re-read them).
template <typename T, int N> __device__ __forceinline__ void load_f32(const T* p, float (&out)[N]) {
    using R = typename RawBits<N * (int)sizeof(T)>::type;
    Pack<T, N> q;
    q.raw = __ldg(reinterpret_cast<const R*>(p));
#pragma unroll
    for (int e = 0; e < N; ++e) out[e] = to_float(q.v[e]);
}

// The first nvalid (≤ N) elements at p, one by one, zero past them (any alignment).
template <typename T, int N> __device__ __forceinline__ void load_f32_masked(const T* p, int nvalid, float (&out)[N]) {
#pragma unroll
    for (int e = 0; e < N; ++e) out[e] = e < nvalid ? to_float(__ldg(p + e)) : 0.f;
}

// v += residual, read once (streaming): one access if vec, else the first nvalid elements.
template <typename T, int N>
__device__ __forceinline__ void add_residual(const T* __restrict__ res, bool vec, int nvalid, float (&v)[N]) {
    if (vec) {
        using R = typename RawBits<N * (int)sizeof(T)>::type;
        Pack<T, N> q;
        q.raw = __ldcs(reinterpret_cast<const R*>(res));
#pragma unroll
        for (int e = 0; e < N; ++e) v[e] = __fadd_rn(v[e], to_float(q.v[e]));
    } else {
#pragma unroll
        for (int e = 0; e < N; ++e)
            if (e < nvalid) v[e] = __fadd_rn(v[e], to_float(res[e]));
    }
}

// Epilogue shared by both layouts: activation, ONE rounding, and the store of N outputs (one
// streaming access if vec, else the first nvalid elements). The activation switch is outside the
// element loop so the exact activations cost a compare or two per element.
template <typename T, int N>
__device__ __forceinline__ void act_store(T* __restrict__ y, int act, bool vec, int nvalid, const float (&v)[N]) {
    Pack<T, N> o;
    if (act == ACT_NONE) {
#pragma unroll
        for (int e = 0; e < N; ++e) o.v[e] = from_float<T>(v[e]);
    } else if (act == ACT_RELU) {
#pragma unroll
        for (int e = 0; e < N; ++e) o.v[e] = from_float<T>(relu(v[e]));
    } else if (act == ACT_RELU6) {
#pragma unroll
        for (int e = 0; e < N; ++e) o.v[e] = from_float<T>(relu6(v[e]));
    } else {
#pragma unroll
        for (int e = 0; e < N; ++e) o.v[e] = finish<T>(v[e], act);
    }
    if (vec) {
        using R = typename RawBits<N * (int)sizeof(T)>::type;
        __stcs(reinterpret_cast<R*>(y), o.raw);
    } else {
#pragma unroll
        for (int e = 0; e < N; ++e)
            if (e < nvalid) y[e] = o.v[e];
    }
}

// One output row piece of WC columns (column stride C elements) × N channels: the activation of class A
// (ACT_NONE, ACT_RELU, ACT_RELU6 as themselves; any smooth one as ACT_SILU, then act picks which), one rounding,
// and the first ncols columns stored (one N-wide streaming store each if vec, else the first nvalid elements).
// The class is a template argument so that a row's stores test no flag; same operations as act_store.
template <int A, typename T, int N, int WC>
__device__ __forceinline__ void store_row_as(T* __restrict__ y, int C, int act, bool vec, int ncols, int nvalid,
                                             const float (&v)[WC][N]) {
    using R = typename RawBits<N * (int)sizeof(T)>::type;
#pragma unroll
    for (int k = 0; k < WC; ++k) {
        if (k >= ncols) break;
        Pack<T, N> o;
#pragma unroll
        for (int e = 0; e < N; ++e) {
            if (A == ACT_NONE) o.v[e] = from_float<T>(v[k][e]);
            else if (A == ACT_RELU) o.v[e] = from_float<T>(relu(v[k][e]));
            else if (A == ACT_RELU6) o.v[e] = from_float<T>(relu6(v[k][e]));
            else o.v[e] = finish<T>(v[k][e], act);
        }
        if (vec) {
            __stcs(reinterpret_cast<R*>(y + (size_t)k * C), o.raw);
        } else {
#pragma unroll
            for (int e = 0; e < N; ++e)
                if (e < nvalid) y[(size_t)k * C + e] = o.v[e];
        }
    }
}

}  // namespace dwconv
}  // namespace gapfill
