# A/B variant B of common/depthwise_conv3x3.cuh (stage.sh's third argument): the logistic's IEEE division
# (__fdiv_rn) made approximate (__fdividef, ≤ 2 ulps, divisor 1 + e in [1, 2]); expf stays accurate and no
# branch is added. (666a786's __expf with an accurate fallback below -64 measured 1-7 % slower: it doubled the
# inlined epilogue code; h100-666a786-expf-fast.txt.)
s/return __fdiv_rn\(num, __fadd_rn\(1\.f, e\)\);/return __fdividef(num, __fadd_rn(1.f, e));/
