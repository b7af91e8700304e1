// The shipped kernel, included from the tree as it is (variant A of main.cu).
#include "decode_mma.cu"
#include "kernels.h"

const void* ship_kernel(bool bf16, int d) {
    if (bf16) return d == 64 ? (const void*)gqa_decode_mma_bf16_d64 : d == 128 ? (const void*)gqa_decode_mma_bf16_d128
                                                                               : (const void*)gqa_decode_mma_bf16_d256;
    return d == 64 ? (const void*)gqa_decode_mma_f16_d64 : d == 128 ? (const void*)gqa_decode_mma_f16_d128
                                                                    : (const void*)gqa_decode_mma_f16_d256;
}
int ship_smem(int d) {
    return d == 64 ? gqa_mma::Cfg<64>::SMEM : d == 128 ? gqa_mma::Cfg<128>::SMEM : gqa_mma::Cfg<256>::SMEM;
}
int ship_threads() { return gqa_mma::kThreads; }
int ship_stages(int d) { return d == 64 ? gqa_mma::Cfg<64>::NST : d == 128 ? gqa_mma::Cfg<128>::NST : gqa_mma::Cfg<256>::NST; }
