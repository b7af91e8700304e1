// Fast smooth activations for F16/BF16 outputs (the depthwise_conv3x3 custom kernels, through
// depthwise_conv3x3.cuh's smooth_act_f32).
// The same cancellation-free forms, with the PTX approximations ex2.approx.ftz.f32 (≤ 2 ulp from the
// correctly rounded 2^x) and rcp.approx.ftz.f32 (≤ 1 ulp) in place of expf, erfcf and the IEEE division
// (error bounds: PTX ISA, ex2 and rcp):
//   silu(v)      = v·e/(1+e) for v < 0, v/(1+e) otherwise, e = e^−|v|
//   gelu_tanh(v) = the same with a = 2√(2/π)(v + 0.044715 v³) in e (the factor stays v)
//   gelu_erf(v)  = v·E for v < 0, v·(1 − E) otherwise, E = ½·erfc(|v|/√2)
// Each result is within ε·|y| + δ of the exact value, ε ≤ 2^-14.2 and δ ≤ 2^-142 for every fp32 v, inside
// what keeps the one rounding to F16 (ε ≤ 2^-13) or BF16 (ε ≤ 2^-10) within 1 ulp of the exactly rounded
// value (proof and CPU sweep: cuda-native/dev/depthwise_conv3x3/README.md "Cheaper smooth activations",
// ab/fastact_check.cpp; device check of every output: ab/run_fastact.sh). F32 outputs never get here.
// e = (2^h)², h = −|a|·log2(e)/2, so ex2's flush to zero starts only at e < 2^-252 and v·e keeps its bits
// down to the BF16 subnormals. E = t·(2^h)², t = 1/(1 + q|v|), h = −v²·log2(e)/4 + P(t), P of degree 7
// fitted minimax (ab/fastact_fit.py) to ½·log2(½·erfc(x)·e^(x²)·(1 + q|v|)), x = |v|/√2: |P − that| ≤
// 1.08e-6 on all of t ∈ [0, 1], q = 0.36875916.
// GAPFILL_FASTACT_HOST_EMULATION: the includer (cuda-native/dev/depthwise_conv3x3/ab/fastact_check.cpp) defines
// fa_ex2 and fa_rcp on the host, emulated at their documented error bounds, and checks these forms against the
// exactly rounded values.
#pragma once

namespace gapfill {
namespace dwconv {

#if !defined(GAPFILL_FASTACT_HOST_EMULATION)
// 2^x, ≤ 2 ulp from the correctly rounded value; subnormal inputs and results flushed to zero.
__device__ __forceinline__ float fa_ex2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
// 1/x, ≤ 1 ulp; subnormal inputs and results flushed to zero (only called with x ≥ 1 here).
__device__ __forceinline__ float fa_rcp(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
#endif

// v·σ(a) = v·e/(1+e) (a < 0) or v/(1+e) (a ≥ 0), e = e^−|a| = (2^h)², h = −|a|·log2(e)/2 given, neg = (a < 0).
__device__ __forceinline__ float fast_logistic_times(float v, float h, bool neg) {
    const float e2 = fa_ex2(h);
    const float e = __fmul_rn(e2, e2);  // fp32-subnormal below 2^-126: ≤ 2^-150 absolute
    const float num = neg ? __fmul_rn(v, e) : v;
    return __fmul_rn(num, fa_rcp(__fadd_rn(1.f, e)));  // 1 + e ∈ [1, 2]
}

__device__ __forceinline__ float fast_silu_f32(float v) {
    return fast_logistic_times(v, __fmul_rn(fabsf(v), -0.72134751f), v < 0.f);  // −log2(e)/2
}

// a = 2√(2/π)·t', t' = v + 0.044715 v³ (same sign as v): h = −|t'|·√(2/π)·log2 e.
__device__ __forceinline__ float fast_gelu_tanh_f32(float v) {
    const float tp = __fmaf_rn(__fmul_rn(0.044715f, v), __fmul_rn(v, v), v);
    return fast_logistic_times(v, __fmul_rn(fabsf(tp), -1.15110409f), v < 0.f);
}

__device__ __forceinline__ float fast_gelu_erf_f32(float v) {
    const float t = fa_rcp(__fmaf_rn(fabsf(v), 0.368759155f, 1.f));  // q = 0x3ebcce00
    float p = -0.132709548f;
    p = __fmaf_rn(p, t, 0.494919300f);
    p = __fmaf_rn(p, t, -0.581569016f);
    p = __fmaf_rn(p, t, 0.110099435f);
    p = __fmaf_rn(p, t, 0.00385718886f);
    p = __fmaf_rn(p, t, 0.266711116f);
    p = __fmaf_rn(p, t, 0.721188128f);
    p = __fmaf_rn(p, t, -1.38249767f);
    const float h = __fmaf_rn(__fmul_rn(v, -0.360673755f), v, p);  // −v²·log2(e)/4 + P(t)
    const float e2 = fa_ex2(h);
    const float eh = __fmul_rn(__fmul_rn(t, e2), e2);  // ½·erfc(|v|/√2)
    return __fmul_rn(v, v < 0.f ? eh : __fadd_rn(1.f, -eh));
}

}  // namespace dwconv
}  // namespace gapfill
