# A/B variant B2 "fastact_cap" (README "Cheaper smooth activations"; not yet run on a GPU): variant_fastact.sed's fast
# forms without its out-of-range guard in nhwc.cu too (GAPFILL_FASTACT_NO_GUARD: no call left in the epilogue, about
# 5 instructions per output fewer), so ptxas would give the NHWC F16/BF16 s1 kernels 130/134 registers; those two are bounded to
# two blocks of 256 per SM instead (__launch_bounds__(256, 2): 124/126 registers, no spills here), as
# variant_nhwc_minb2.sed did at c2335e1 (NONE 0.93-0.96x there: the bound applies to every activation).
s/^\/\/ Transcendental activations in fp32 \(for F16\/BF16 outputs\)\.$/#include "dwconv_fastact.cuh"\n\n&/
s/^__device__ __forceinline__ float smooth_act_f32\(float v, int act\) \{$/&\n#if defined(GAPFILL_DWCONV_FAST_SMOOTH_ACT)\n    return fast_smooth_act_f32(v, act);\n}\nstatic __device__ __noinline__ float smooth_act_f32_slow(float v, int act) {\n#endif/
/^#include "depthwise_conv3x3.cuh"$/i\
#define GAPFILL_DWCONV_FAST_SMOOTH_ACT 1\
#define GAPFILL_FASTACT_NO_GUARD 1
s/^DW_NHWC\(__half, f16, 1, 4, 2, 1\)/DW_NHWC(__half, f16, 1, 4, 2, 2)/
s/^DW_NHWC\(__nv_bfloat16, bf16, 1, 4, 2, 1\)/DW_NHWC(__nv_bfloat16, bf16, 1, 4, 2, 2)/
