// Smooth activations for F32 outputs in fp32 arithmetic: silu(v), gelu_tanh(v) and gelu_erf(v) (the last at the
// end of this file) within 1 ulp of the exactly rounded value (the reference evaluates them in fp64 and rounds once),
// without fp64 instructions. Why: in fp64 (exp, erfc, IEEE division) they cost ~50-150 fp64 instructions per output.
// On the H100 (fp64 at half the fp32 rate) these forms run SILU at 1.14×, GELU_TANH at 0.95× and GELU_ERF at 1.29×
// the fp64 form's throughput (ab/f32act_check.cu);
// the A10, A40, L4, L40 and RTX parts run fp64 at 1/64 of the fp32 rate, where the fp64 forms would bound an F32
// layer. Which builds use which form: depthwise_conv3x3.cuh's finish<float> (GAPFILL_F32_GELU_TANH_DF).
//
// Both are v·σ(a) (silu: a = v; gelu_tanh: a = 2√(2/π)(v + 0.044715 v³), same sign as v), evaluated as
//   v / (1 + e)          for a ≥ 0,    v·e / (1 + e)    for a < 0,    e = e^−|a| ∈ (0, 1],
// so nothing cancels. Every quantity that feeds the one final rounding is carried as an unevaluated sum of two
// floats (hi + lo, "double-float"): a (gelu_tanh), the reduced argument of the exponential, e, 1 + e and the
// numerator; the quotient is one compensated division step. Error budget, relative to the exact v·σ(a):
//   e^r = 1 + r + r²·P(r), |r| ≤ ln2/2, P the Taylor polynomial of (e^r − 1 − r)/r² to degree 5 (truncation
//   ≤ 2^-31 of e^r); the fp32 evaluation of r²·P (≤ 0.061 of e^r) costs ≤ 3·2^-24 of that term: ≤ 2^-26 of
//   e^r; the reduction r = x − k·ln2 keeps ln2 in three pieces and x − k·L1 exact (L1 has 16 bits, |k| ≤ 174),
//   and carries r as r + rl: ≤ 2^-40;
//   1 + e and the numerator are exact double-float sums/products (TwoSum, fma); the division step leaves
//   ≤ 2^-44. So the value before the last rounding is within ~2^-25.9 relative of the exact one, below half an
//   ulp of the result, and the rounded result is within 1 ulp of the exactly rounded value (most are equal).
// Checked on every one of the 2^32 fp32 inputs against the fp64 forms of depthwise_conv3x3.cuh, on the GPU, from
// sm_90a SASS and from compute_80 PTX (cuda-native/dev/depthwise_conv3x3/ab/f32act_check.cu, results there).
// Outside |a| ≤ 120 the results are exact limits (v, or −0 for a < −120 where v·e^a is below the smallest
// subnormal); non-finite v goes to the caller's fp64 form.
// GAPFILL_F32ACT_HOST: the includer compiles these forms for the host (std::fma; rcp as the correctly rounded
// 1/x, inside rcp.approx's 1 ulp).
#pragma once

#if defined(GAPFILL_F32ACT_HOST)
#include <cmath>
#include <cstring>
#define GF32_FN static inline
namespace gapfill { namespace f32act {
GF32_FN float fma_(float a, float b, float c) { return std::fma(a, b, c); }
GF32_FN float add_(float a, float b) { return a + b; }
GF32_FN float mul_(float a, float b) { return a * b; }
GF32_FN float rcp_(float x) { return 1.f / x; }
GF32_FN float scale_(float x, int k) { return std::ldexp(x, k); }
GF32_FN int int_bits_(float x) { int i; std::memcpy(&i, &x, 4); return i; }
GF32_FN float pow2_(int k) { return std::ldexp(1.f, k); }
}}
#else
#define GF32_FN __device__ __forceinline__
namespace gapfill { namespace f32act {
GF32_FN float fma_(float a, float b, float c) { return __fmaf_rn(a, b, c); }
GF32_FN float add_(float a, float b) { return __fadd_rn(a, b); }
GF32_FN float mul_(float a, float b) { return __fmul_rn(a, b); }
// 1/x, ≤ 1 ulp (PTX rcp.approx; only called with x ∈ [1, 5.35]: normal inputs and results, so .ftz changes nothing)
GF32_FN float rcp_(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
GF32_FN int int_bits_(float x) { return __float_as_int(x); }
// 2^k for −126 ≤ k ≤ 127
GF32_FN float pow2_(int k) { return __int_as_float((k + 127) << 23); }
// x·2^k for −252 ≤ k ≤ 0, one rounding (the first factor 2^max(k, −126) is exact on normal results)
GF32_FN float scale_(float x, int k) {
    const int k1 = k < -126 ? -126 : k;
    const float a = __fmul_rn(x, __int_as_float((k1 + 127) << 23));
    return k1 == k ? a : __fmul_rn(a, __int_as_float((k - k1 + 127) << 23));
}
}}
#endif

namespace gapfill {
namespace f32act {

// hi + lo = a + b exactly (any magnitudes).
GF32_FN void two_sum(float a, float b, float& hi, float& lo) {
    hi = add_(a, b);
    const float bb = add_(hi, -a);
    lo = add_(add_(a, -add_(hi, -bb)), add_(b, -bb));
}
// hi + lo = a + b exactly, |a| ≥ |b|.
GF32_FN void fast_two_sum(float a, float b, float& hi, float& lo) {
    hi = add_(a, b);
    lo = add_(b, -add_(hi, -a));
}

// e^(xh + xl) = (eh + el)·2^k for −175 ≤ xh ≤ 0, |xl| ≤ 2^-20·|xh|; eh ∈ [0.70, 1.42].
GF32_FN void exp_df(float xh, float xl, float& eh, float& el, int& k) {
    const float L1 = 0x1.62e4p-1f;             // ln2 to 16 bits (0.693145751953125): k·L1 exact for |k| < 256
    const float L2 = 0x1.7f7d1cp-20f;          // the next 24 bits
    const float L3 = 0x1.ef357ap-45f;          // and the next (ln2 − L1 − L2 − L3 ≈ −1.3e-21)
    const float M = 0x1.8p23f;                 // adding it rounds to an integer, which its low bits then hold
    const float t = fma_(xh, 1.44269502f, M);  // k = rint(x·log2(e))
    const float kf = add_(t, -M);
    k = int_bits_(t) - int_bits_(M);
    const float r1 = fma_(-kf, L1, xh);        // exact (x and k·L1 agree to within |r| ≤ 0.35; 16-bit k·L1)
    const float r0 = fma_(-kf, L2, r1);        // r0 + rl = x − k·ln2 (r1 − r0 exact: they differ by ≤ 2.5e-4)
    float rl = fma_(-kf, L2, add_(r1, -r0));
    rl = fma_(-kf, L3, add_(rl, xl));
    float r;
    fast_two_sum(r0, rl, r, rl);               // |rl| ≤ ulp(r)/2 again (xl may be ~2^-18), so P(r) is P(x − k·ln2)
    float P = 1.98412698e-04f;                 // 1/7!
    P = fma_(P, r, 1.38888889e-03f);           // 1/6!
    P = fma_(P, r, 8.33333333e-03f);           // 1/5!
    P = fma_(P, r, 4.16666667e-02f);           // 1/4!
    P = fma_(P, r, 1.66666667e-01f);           // 1/3!
    P = fma_(P, r, 0.5f);                      // (e^r − 1 − r)/r²; the dropped terms: ≤ 2^-31 of e^r
    const float c = fma_(mul_(r, r), P, rl);   // r²·P + rl
    float h, l;
    fast_two_sum(1.f, r, h, l);                // 1 + r exactly
    fast_two_sum(h, add_(l, c), eh, el);
}

// (nh + nl) / (dh + dl) for dh ∈ [1, 2], |dl| ≤ 2^-23: one rounding after a compensated step.
GF32_FN float div_df(float nh, float nl, float dh, float dl) {
    const float R = rcp_(dh);
    const float q0 = mul_(nh, R);
    float rem = fma_(-q0, dh, nh);             // exact: q0 is within 2 ulp of nh/dh
    rem = fma_(-q0, dl, add_(rem, nl));
    return fma_(rem, R, q0);
}

// v·σ(ah + al) for finite v with a of v's sign, |ah| ≤ 120 (callers handle the rest).
GF32_FN float logistic_times_df(float v, float ah, float al) {
    const bool neg = ah < 0.f;
    float eh, el;
    int k;
    exp_df(neg ? ah : -ah, neg ? al : -al, eh, el, k);
    // 1 + e, e = (eh + el)·2^k ≤ 1; below 2^-126 (k clamped) e no longer moves 1 + e
    const float sc = pow2_(k < -126 ? -126 : k);
    float dh, dl;
    fast_two_sum(1.f, mul_(eh, sc), dh, dl);
    dl = fma_(el, sc, dl);
    // numerator v (a ≥ 0) or v·e = (nh + nl)·2^k (a < 0): both evaluated, one selected (no divergent branch)
    const float ph = mul_(v, eh);
    const float pl = fma_(v, el, fma_(v, eh, -ph));  // v·(eh + el) = ph + pl to 2^-46
    const float q = div_df(neg ? ph : v, neg ? pl : 0.f, dh, dl);
    return neg ? scale_(q, k) : q;
}

// silu(v) = v·σ(v); |v| > 120: v or −0 (the exactly rounded values); non-finite v: not handled here.
GF32_FN float silu_f32(float v) {
    if (v > 120.f) return v;
    if (v < -120.f) return -0.f;
    if (v == 0.f) return v;  // keeps the sign of zero
    return logistic_times_df(v, v, 0.f);
}

// gelu_tanh(v) = v·σ(2√(2/π)(v + 0.044715 v³)), the fp64 constants of the reference split in two floats;
// |v| > 20: v or −0. Non-finite v: not handled here.
GF32_FN float gelu_tanh_f32(float v) {
    if (v > 20.f) return v;
    if (v < -20.f) return -0.f;
    if (v == 0.f) return v;
    const float C1 = 0x1.6e4e26p-5f, C2 = 0x1.a9003ep-30f;   // 0.044715 (double) = C1 + C2 + 5e-17
    const float K1 = 0x1.988454p+0f, K2 = -0x1.857936p-25f;  // 2·0.79788456080286535588 (double) = K1 + K2 + 2e-16
    // as double-float: v² = s + se, v³ = m + me
    const float s = mul_(v, v), se = fma_(v, v, -s);
    const float m = mul_(s, v), me = fma_(se, v, fma_(s, v, -m));
    // u = v + 0.044715·v³
    const float c = mul_(C1, m), ce = fma_(C1, me, fma_(C2, m, fma_(C1, m, -c)));
    float uh, ul;
    two_sum(v, c, uh, ul);
    ul = add_(ul, ce);
    fast_two_sum(uh, ul, uh, ul);
    // a = K·u
    const float ah = mul_(K1, uh), al = fma_(K1, ul, fma_(K2, uh, fma_(K1, uh, -ah)));
    if (ah > 120.f) return v;
    if (ah < -120.f) return -0.f;
    return logistic_times_df(v, ah, al);
}

// ---- gelu_erf(v) = ½·v·erfc(−v/√2) ----
// With x = |v| and E(x) = ½·erfc(x/√2) (the Gaussian tail, ≤ ½): gelu_erf(v) = v·E(x) for v < 0 and v·(1 − E(x))
// for v ≥ 0, so nothing cancels (1 − E ≥ ½). E is factored as
//   E(x) = e^(−x²/2) · t · G(u),   t = 1/(1 + p·x), p = 0.3 (as a float), u = 2t − 1 ∈ (−0.63, 1],
// where G(u) = E(x)·e^(x²/2)/t is smooth and slowly varying over x ∈ [0, 14.5] (beyond 14.5, v·E(x) is below half
// the smallest subnormal: the results are −0 and v). G is a degree-12 polynomial in u, fitted by weighted least
// squares on the Chebyshev basis (cuda-native/dev/depthwise_conv3x3/ab/gelu_erf_fit.py; fit error ≤ 2^-31.9
// relative over the whole range, so no separate small-x region). Error budget, relative to the exact E:
//   x² = s + se exactly (fma), so the argument of e^ is −x²/2 as a double-float; exp_df above: ≤ 2^-26;
//   d = 1 + p·x = dh + dl exactly (TwoSum and fma), t = th + tl from rcp.approx and one compensated Newton step:
//   ~2^-44; u = 2t − 1 as a double-float (TwoSum);
//   G by Horner in fp32 from c12 down to c3, then the last three steps (c2, c1, c0 as float pairs) in double-float
//   with u's low part: ≤ 2^-27.8 (the fit included; the fp32 part enters scaled by u³·c3/c0 ≤ 0.13);
//   F = t·G and E = e^(−x²/2)·F as double-float products (fma): ~2^-44 each.
// So E is within ~2^-25.4 relative, below half an ulp of the result in both branches (v·(1 − E): the relative
// error of 1 − E is at most that of E since E ≤ 1 − E), and the rounded result is within 1 ulp of the exactly
// rounded value. Checked on all 2^32 fp32 inputs on an H100 from sm_90a SASS and compute_80 PTX: 7,885,436 results
// 1 ulp away, none further (ab/h100-d065f20-f32act.txt), and on the host every 7th input (f32act_host.cpp).
// Throughput there 1.29× the fp64 erfc form's, in both builds. Non-finite v: not handled here (the caller's fp64 form).

// (ah + al)·(bh + bl) = h + l to ~2^-46 relative.
GF32_FN void mul_df(float ah, float al, float bh, float bl, float& h, float& l) {
    h = mul_(ah, bh);
    l = fma_(ah, bl, fma_(al, bh, fma_(ah, bh, -h)));
}

// g ← c + u·g for double-floats c = ch + cl, u = uh + ul, g = gh + gl; renormalised.
GF32_FN void horner_step_df(float ch, float cl, float uh, float ul, float& gh, float& gl) {
    float ph, pl;
    mul_df(uh, ul, gh, gl, ph, pl);
    float sh, sl;
    two_sum(ch, ph, sh, sl);
    fast_two_sum(sh, add_(sl, add_(cl, pl)), gh, gl);
}

GF32_FN float gelu_erf_f32(float v) {
    // G(u) = Σ c_i·u^i: c0..c2 as float pairs (hi + lo), c3..c12 as floats
    const float C0H = 0x1.c69888p-3f, C0L = 0x1.00a2ccp-28f;
    const float C1H = 0x1.510f0cp-3f, C1L = 0x1.797e2ep-28f;
    const float C2H = 0x1.6281dep-4f, C2L = 0x1.c80ca6p-29f;
    const float C[10] = {0x1.c6d366p-6f,  0x1.dc57a0p-10f,  -0x1.3db4d6p-9f, -0x1.2da6dep-11f, 0x1.2966c8p-12f,
                         0x1.750152p-14f, -0x1.9d0704p-15f, -0x1.2592bap-17f, 0x1.2838c8p-17f, -0x1.683928p-20f};
    const float P = 0x1.333334p-2f;  // 0.3 as a float
    const float x = fabsf(v);
    if (x > 14.5f) return v > 0.f ? v : -0.f;
    if (v == 0.f) return v;  // keeps the sign of zero
    // t = 1/(1 + p·x) = th + tl
    const float m = mul_(P, x), me = fma_(P, x, -m);
    float dh, dl;
    two_sum(1.f, m, dh, dl);
    dl = add_(dl, me);
    const float R = rcp_(dh);
    const float th = R, tl = mul_(fma_(-R, dl, fma_(-R, dh, 1.f)), R);  // (1 − R·d)·R
    // u = 2t − 1 = uh + ul
    float uh, ul;
    two_sum(add_(th, th), -1.f, uh, ul);
    fast_two_sum(uh, add_(ul, add_(tl, tl)), uh, ul);
    // G(u)
    float h = C[9];
#pragma unroll
    for (int i = 8; i >= 0; --i) h = fma_(h, uh, C[i]);
    float gh = h, gl = 0.f;
    horner_step_df(C2H, C2L, uh, ul, gh, gl);
    horner_step_df(C1H, C1L, uh, ul, gh, gl);
    horner_step_df(C0H, C0L, uh, ul, gh, gl);
    // F = t·G; E = e^(−x²/2)·F = (Eh + El)·2^k
    float fh, fl;
    mul_df(th, tl, gh, gl, fh, fl);
    const float s = mul_(x, x), se = fma_(x, x, -s);
    float eh, el;
    int k;
    exp_df(mul_(-0.5f, s), mul_(-0.5f, se), eh, el, k);
    float Eh, El;
    mul_df(eh, el, fh, fl, Eh, El);
    if (v < 0.f) return scale_(fma_(v, Eh, mul_(v, El)), k);
    // v·(1 − E): below 2^-126 (k clamped) E no longer moves 1 − E
    const float sc = pow2_(k < -126 ? -126 : k);
    float oh, ol;
    fast_two_sum(1.f, -mul_(Eh, sc), oh, ol);
    ol = add_(ol, -mul_(El, sc));
    return fma_(v, oh, mul_(v, ol));
}

}  // namespace f32act
}  // namespace gapfill
