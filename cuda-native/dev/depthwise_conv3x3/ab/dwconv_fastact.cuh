// A/B variant "fastact" (variant_fastact*.sed; README "Cheaper smooth activations"): SILU, GELU_TANH and GELU_ERF
// for F16/BF16 outputs from the fp32 pre-activation v, in the reference's cancellation-free forms, with the
// PTX approximations ex2.approx.ftz.f32 (≤ 2 ulp from the correctly rounded 2^x) and rcp.approx.ftz.f32
// (≤ 1 ulp) in place of expf, erfcf and the IEEE division (error bounds: PTX ISA, ex2 and rcp). The README proves
// |ŷ − y| ≤ ε·|y| + δ with ε ≤ 2^-14.2 and δ ≤ 2^-142 for every fp32 v, inside what keeps the one rounding to
// F16 (ε ≤ 2^-13, δ < 2^-25) or BF16 (ε ≤ 2^-10, δ < 2^-134) within 1 ulp of the exactly rounded value;
// fastact_check.cpp sweeps it on the CPU with both approximations at their documented error bounds. F32
// outputs never get here.
//   silu(v)      = v·e/(1+e) for v < 0, v/(1+e) otherwise, e = e^−|v|
//   gelu_tanh(v) = the same with a = 2√(2/π)(v + 0.044715 v³) in e (the factor stays v)
//   gelu_erf(v)  = v·E for v < 0, v·(1 − E) otherwise, E = ½·erfc(|v|/√2)
// e is (2^h)², h = −|a|·log2(e)/2, so ex2's flush to zero starts only at e < 2^-252 and v·e keeps its bits
// down to the BF16 subnormals (a plain ex2.ftz of −|a|·log2 e gives 0 from |a| > 87.3, where silu(−90) ≈ −7e−38
// is still a normal BF16). E = t·(2^h)², t = 1/(1 + q|v|), h = −v²·log2(e)/4 + P(t), P of degree 7 fitted
// minimax (fastact_fit.py: LP on 1500 Chebyshev nodes of t ∈ [0, 1], coefficients rounded to fp32 one by one
// from the top, the rest refitted) to ½·log2(½·erfc(x)·e^(x²)·(1 + q|v|)), x = |v|/√2: |P − that| ≤ 1.08e-6 on
// all of [0, 1] (t → 0 is |v| → ∞), q = 0.36875916 minimising it.
//
// A fragment (stage.sh copies it next to B's header): B's header includes it inside namespace gapfill::dwconv
// just before smooth_act_f32, which returns fast_smooth_act_f32 where GAPFILL_DWCONV_FAST_SMOOTH_ACT is defined
// (both of B's kernel files); the shipped body of smooth_act_f32 then becomes smooth_act_f32_slow (__noinline__).

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
    return fast_logistic_times(v, __fmul_rn(fabsf(v), -0.72134751f), v < 0.f);  // log2(e)/2
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

#if !defined(GAPFILL_FASTACT_HOST_EMULATION)
// The shipped forms (expf, erfcf, IEEE division), a call. Out of the fast forms' range (|v| ≥ 2^64, ±inf, NaN)
// they give the shipped bits; the call they leave in the kernel also keeps ptxas at the shipped NHWC F16/BF16
// s1 kernels' 128 registers: with no call in the kernel at all it allocates 130/134 (one block of 256 threads
// per SM instead of two), as the shipped kernels got 134/136 with __fdividef in place of __fdiv_rn, whose
// slow path is their call (ab/h100-a930cb5-fdividef.txt: 0.70-0.75x). Costs about 5 instructions per output
// (FSETP, BSSY, BRA, BSYNC, a MOV); GAPFILL_FASTACT_NO_GUARD drops it (B: nchw.cu; B2: both, NHWC s1 capped).
static __device__ __noinline__ float smooth_act_f32_slow(float v, int act);

__device__ __forceinline__ float fast_smooth_act_f32(float v, int act) {
    float r = act == ACT_SILU ? fast_silu_f32(v) : act == ACT_GELU_ERF ? fast_gelu_erf_f32(v) : fast_gelu_tanh_f32(v);
#if !defined(GAPFILL_FASTACT_NO_GUARD)
    if (!(fabsf(v) < 0x1p64f)) r = smooth_act_f32_slow(v, act);
#endif
    return r;
}
#endif
