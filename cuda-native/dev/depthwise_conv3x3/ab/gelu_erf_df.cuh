// Prototype (not shipped): F32 GELU_ERF in double-float fp32 arithmetic, the plan of README.md "Next: F32 GELU_ERF
// without fp64". gelu_erf(v) = v·E(|v|) for v < 0, v·(1 − E(v)) otherwise, E(x) = ½·erfc(x/√2) = e^(−x²/2)·t·G(u),
// t = 1/(1 + p·x), u = 2t − 1, G of degree 12 fitted by gelu_erf_fit.py. Built on f32_smooth_act.cuh's helpers;
// checked on the host by f32act_host.cpp (-DGAPFILL_GELU_ERF_PROTO); the GPU check of all 2^32 inputs is for the next session.
#pragma once
#include "f32_smooth_act.cuh"

namespace gapfill {
namespace f32act {

// (ah + al)·(bh + bl) as double-float, to ~2^-46.
GF32_FN void mul_df(float ah, float al, float bh, float bl, float& h, float& l) {
    h = mul_(ah, bh);
    l = fma_(ah, bl, fma_(al, bh, fma_(ah, bh, -h)));
}

// c + (uh + ul)·(gh + gl), c = ch + cl, as a renormalised double-float.
GF32_FN void horner_df(float ch, float cl, float uh, float ul, float& gh, float& gl) {
    float ph, pl;
    mul_df(uh, ul, gh, gl, ph, pl);
    float sh, sl;
    two_sum(ch, ph, sh, sl);
    fast_two_sum(sh, add_(sl, add_(cl, pl)), gh, gl);
}

// gelu_erf(v) for finite v (non-finite: the caller's fp64 form).
GF32_FN float gelu_erf_f32(float v) {
    const float C0H = 0x1.c698880000000p-3f, C0L = 0x1.00a2cc0000000p-28f;
    const float C1H = 0x1.510f0c0000000p-3f, C1L = 0x1.797e2e0000000p-28f;
    const float C2H = 0x1.6281de0000000p-4f, C2L = 0x1.c80ca60000000p-29f;
    const float CT[10] = {0x1.c6d3660000000p-6f, 0x1.dc57a00000000p-10f, -0x1.3db4d60000000p-9f, -0x1.2da6de0000000p-11f, 0x1.2966c80000000p-12f, 0x1.7501520000000p-14f, -0x1.9d07040000000p-15f, -0x1.2592ba0000000p-17f, 0x1.2838c80000000p-17f, -0x1.6839280000000p-20f};  // c3..c12
    const float P = 0x1.3333340000000p-2f;
    const float x = fabsf(v);
    if (x > 14.5f) return v > 0.f ? v : -0.f;
    if (v == 0.f) return v;
    // t = 1/(1 + p·x) as th + tl
    const float m = mul_(P, x), me = fma_(P, x, -m);
    float dh, dl;
    two_sum(1.f, m, dh, dl);
    dl = add_(dl, me);
    const float R = rcp_(dh);
    const float r = fma_(-R, dl, fma_(-R, dh, 1.f));   // 1 − R·d
    const float th = R, tl = mul_(r, R);
    // u = 2t − 1
    float uh, ul;
    two_sum(add_(th, th), -1.f, uh, ul);
    fast_two_sum(uh, add_(ul, add_(tl, tl)), uh, ul);
    // G(u): Horner in fp32 down to c3, then three double-float steps
    float h = CT[9];
#pragma unroll
    for (int i = 8; i >= 0; --i) h = fma_(h, uh, CT[i]);
    float gh = h, gl = 0.f;
    horner_df(C2H, C2L, uh, ul, gh, gl);
    horner_df(C1H, C1L, uh, ul, gh, gl);
    horner_df(C0H, C0L, uh, ul, gh, gl);
    // F = t·G, then E = e^(−x²/2)·F = (Eh + El)·2^k
    float fh, fl;
    mul_df(th, tl, gh, gl, fh, fl);
    const float s = mul_(x, x), se = fma_(x, x, -s);
    float eh, el;
    int k;
    exp_df(mul_(-0.5f, s), mul_(-0.5f, se), eh, el, k);
    float Eh, El;
    mul_df(eh, el, fh, fl, Eh, El);
    if (v < 0.f) return scale_(fma_(v, Eh, mul_(v, El)), k);
    // v·(1 − E), E ≤ ½
    const float sc = pow2_(k < -126 ? -126 : k);
    float oh, ol;
    fast_two_sum(1.f, -mul_(Eh, sc), oh, ol);
    ol = add_(ol, -mul_(El, sc));
    return fma_(v, oh, mul_(v, ol));
}

}  // namespace f32act
}  // namespace gapfill
