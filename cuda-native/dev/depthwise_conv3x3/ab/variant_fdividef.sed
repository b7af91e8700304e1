# A/B variant B (stage.sh's third argument), measured on the H100 (h100-a930cb5-fdividef.txt): the logistic's IEEE
# division (__fdiv_rn) made approximate (__fdividef, ≤ 2 ulps, divisor 1 + e in [1, 2]) in both layouts. NCHW
# 1.02-1.10x faster (shipped in ec71f28 for nchw.cu only), NHWC 0.70-0.75x: its F16/BF16 s=1 kernels went from
# 128 to 134/136 registers under __launch_bounds__(256, 1), one block per SM instead of two (variant_nhwc_minb2.sed).
s/return __fdiv_rn\(num, __fadd_rn\(1\.f, e\)\);/return __fdividef(num, __fadd_rn(1.f, e));/
