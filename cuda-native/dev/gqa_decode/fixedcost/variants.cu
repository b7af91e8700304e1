// One variant of decode_fc.cu per build (-DFC_V=1|2|3|4): kernels fc<V>_<t>_d<D> and the getter fc<V>_kernel.
//   1: SYNC 1 (thread 0 alone: fence.sc, atomicAdd, fence.sc if last)   2: SYNC 2 (thread 0 alone: atom.acq_rel.gpu)
//   3: SYNC 2 + EARLY_TABLE (paged, pages >= 16: first table entries requested with the length)
//   4: SYNC 3 (no ticket and no merge: wrong output with several active splits; timing bound only)
#include "decode_fc.cu"
#include "kernels.h"

#ifndef FC_V
#error "build with -DFC_V=1, 2 or 3"
#endif
#if FC_V == 1
#define FC_SYNC 1
#define FC_EARLY false
#elif FC_V == 2
#define FC_SYNC 2
#define FC_EARLY false
#elif FC_V == 3
#define FC_SYNC 2
#define FC_EARLY true
#else
#define FC_SYNC 3
#define FC_EARLY false
#endif
#define FC_CAT_(a, b, c) a##b##c
#define FC_CAT(a, b, c) FC_CAT_(a, b, c)
#define FC_N(s) FC_CAT(fc, FC_V, s)

FC_KERNEL(FC_N(_f16_d64), __half, 64, FC_SYNC, FC_EARLY)
FC_KERNEL(FC_N(_f16_d128), __half, 128, FC_SYNC, FC_EARLY)
FC_KERNEL(FC_N(_f16_d256), __half, 256, FC_SYNC, FC_EARLY)
FC_KERNEL(FC_N(_bf16_d64), __nv_bfloat16, 64, FC_SYNC, FC_EARLY)
FC_KERNEL(FC_N(_bf16_d128), __nv_bfloat16, 128, FC_SYNC, FC_EARLY)
FC_KERNEL(FC_N(_bf16_d256), __nv_bfloat16, 256, FC_SYNC, FC_EARLY)

static_assert(gqa_fc::Cfg<64>::SMEM > 0, "same shared memory as the shipped kernel (ship_smem)");

const void* FC_N(_kernel)(bool bf16, int d) {
    if (bf16) return d == 64 ? (const void*)FC_N(_bf16_d64) : d == 128 ? (const void*)FC_N(_bf16_d128) : (const void*)FC_N(_bf16_d256);
    return d == 64 ? (const void*)FC_N(_f16_d64) : d == 128 ? (const void*)FC_N(_f16_d128) : (const void*)FC_N(_f16_d256);
}
