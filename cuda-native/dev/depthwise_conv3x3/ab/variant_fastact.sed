# A/B variant B "fastact" (README "Cheaper smooth activations"; not yet run on a GPU): SILU, GELU_TANH and GELU_ERF
# for F16/BF16 outputs through ex2.approx.ftz / rcp.approx.ftz and an own erfc fit (dwconv_fastact.cuh, which
# stage.sh copies next to B's header), ≤ 1 ulp against the exactly rounded value by the README's proof and
# fastact_check.cpp. Where GAPFILL_DWCONV_FAST_SMOOTH_ACT is defined (both of B's kernel files) smooth_act_f32
# (F16/BF16 only; F32 keeps smooth_act_f64) returns fast_smooth_act_f32, and its shipped body becomes
# smooth_act_f32_slow, a __noinline__ fallback for |v| >= 2^64, inf and NaN, in nhwc.cu only (its call keeps the
# F16/BF16 s1 kernels at 128 registers; nchw.cu, 52-93 registers, drops it with GAPFILL_FASTACT_NO_GUARD). Kernels
# and launch bounds unchanged. Run: run_fastact.sh (stages, builds, checks every output against the exact rounding
# of its fp32 pre-activation, times A against B and B2 = variant_fastact_cap.sed).
s/^\/\/ Transcendental activations in fp32 \(for F16\/BF16 outputs\)\.$/#include "dwconv_fastact.cuh"\n\n&/
s/^__device__ __forceinline__ float smooth_act_f32\(float v, int act\) \{$/&\n#if defined(GAPFILL_DWCONV_FAST_SMOOTH_ACT)\n    return fast_smooth_act_f32(v, act);\n}\nstatic __device__ __noinline__ float smooth_act_f32_slow(float v, int act) {\n#endif/
/^#include "depthwise_conv3x3.cuh"$/i\
#define GAPFILL_DWCONV_FAST_SMOOTH_ACT 1
s/^#define GAPFILL_DWCONV_APPROX_LOGISTIC_DIV 1$/&\n#define GAPFILL_FASTACT_NO_GUARD 1/
