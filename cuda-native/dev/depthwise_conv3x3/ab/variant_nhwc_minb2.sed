# A/B variant B (run at c2335e1: h100-c2335e1-nhwc_minb2.txt; NHWC SILU and GELU_TANH 1.03-1.05x faster, NONE
# 0.93-0.96x and GELU_ERF 0.94-0.98x slower, NCHW unchanged: mixed, not shipped): __fdividef in the logistic for both layouts (as nchw.cu since
# ec71f28) AND the F16/BF16 s=1 NHWC kernels bounded to 2 blocks per SM (__launch_bounds__(256, 2), a 128-register
# cap). ptxas (CUDA 13.0, sm_90a) here: 124 (f16) / 126 (bf16) registers, no spills, where the __fdividef version
# under the shipped bound of 1 block per SM took 134/136 registers and measured 0.70-0.75x. Compare with A = HEAD.
s/^#if defined\(GAPFILL_DWCONV_APPROX_LOGISTIC_DIV\)$/#if 1/
s/^DW_NHWC\(__half, f16, 1, 4, 2, 1\)/DW_NHWC(__half, f16, 1, 4, 2, 2)/
s/^DW_NHWC\(__nv_bfloat16, bf16, 1, 4, 2, 1\)/DW_NHWC(__nv_bfloat16, bf16, 1, 4, 2, 2)/
