// One variant of decode_fc.cu per build (-DFC_V=0..6): kernels fc<V>_<t>_d<D> and the getters fc<V>_kernel,
// fc<V>_threads and fc<V>_smem (the launch configuration, taken from the same compile-time constants as the kernel).
//   0: SYNC 0, 4 warps: the shipped code through the WARPS-parameterised path (must equal A byte for byte)
//   1: SYNC 1 (thread 0 alone: fence.sc, atomicAdd, fence.sc if last)   2: SYNC 2 (thread 0 alone: atom.acq_rel.gpu)
//   3: SYNC 2 + EARLY_TABLE (paged, pages >= 16: first table entries requested with the length)
//   4: SYNC 3 (no ticket and no merge: wrong output with several active splits; timing bound only)
//   5: SYNC 2, 8 warps per block  (stages d64 4, d128 3, d256 1)
//   6: SYNC 2, 16 warps per block (stages d64 3, d128 1; no d256: one stage of 16 warps is 264 KiB)
#include "decode_fc.cu"
#include "kernels.h"

#ifndef FC_V
#error "build with -DFC_V=0..6"
#endif
#if FC_V == 0
#define FC_SYNC 0
#define FC_EARLY false
#define FC_WARPS 4
#elif FC_V == 1
#define FC_SYNC 1
#define FC_EARLY false
#define FC_WARPS 4
#elif FC_V == 2
#define FC_SYNC 2
#define FC_EARLY false
#define FC_WARPS 4
#elif FC_V == 3
#define FC_SYNC 2
#define FC_EARLY true
#define FC_WARPS 4
#elif FC_V == 4
#define FC_SYNC 3
#define FC_EARLY false
#define FC_WARPS 4
#elif FC_V == 5
#define FC_SYNC 2
#define FC_EARLY false
#define FC_WARPS 8
#elif FC_V == 6
#define FC_SYNC 2
#define FC_EARLY false
#define FC_WARPS 16
#else
#error "FC_V must be 0..6"
#endif
#define FC_D256 (FC_WARPS <= 8)  // d256 only where a block of one stage per warp fits
#define FC_CAT_(a, b, c) a##b##c
#define FC_CAT(a, b, c) FC_CAT_(a, b, c)
#define FC_N(s) FC_CAT(fc, FC_V, s)

FC_KERNEL(FC_N(_f16_d64), __half, 64, FC_SYNC, FC_EARLY, FC_WARPS)
FC_KERNEL(FC_N(_f16_d128), __half, 128, FC_SYNC, FC_EARLY, FC_WARPS)
FC_KERNEL(FC_N(_bf16_d64), __nv_bfloat16, 64, FC_SYNC, FC_EARLY, FC_WARPS)
FC_KERNEL(FC_N(_bf16_d128), __nv_bfloat16, 128, FC_SYNC, FC_EARLY, FC_WARPS)
#if FC_D256
FC_KERNEL(FC_N(_f16_d256), __half, 256, FC_SYNC, FC_EARLY, FC_WARPS)
FC_KERNEL(FC_N(_bf16_d256), __nv_bfloat16, 256, FC_SYNC, FC_EARLY, FC_WARPS)
#endif

// The launch configuration of these kernels: the Cfg the kernels instantiate (body's defaults: WARPS, and
// fit_stages<D, WARPS>() stages).
template <int D> using FcCfg = gqa_fc::Cfg<D, gqa_fc::fit_stages<D, FC_WARPS>(), FC_WARPS>;
static_assert(FC_WARPS == 4 || FC_WARPS == 8 || FC_WARPS == 16, "warps per block");
static_assert(FcCfg<64>::SMEM <= gqa_fc::kMaxSmem && FcCfg<128>::SMEM <= gqa_fc::kMaxSmem, "fits in 227 KiB");
static_assert(bool(FC_D256) == (gqa_fc::fit_stages<256, FC_WARPS>() >= 1), "d256 built exactly where it fits");
#if FC_WARPS == 4
static_assert(FcCfg<64>::SMEM == 67584 && FcCfg<128>::SMEM == 102400 && FcCfg<256>::SMEM == 139264,
              "4 warps: the shipped kernel's shared memory (66 / 100 / 136 KiB)");
#endif

const void* FC_N(_kernel)(bool bf16, int d) {
#if FC_D256
    if (d == 256) return bf16 ? (const void*)FC_N(_bf16_d256) : (const void*)FC_N(_f16_d256);
#else
    if (d == 256) return nullptr;
#endif
    if (bf16) return d == 64 ? (const void*)FC_N(_bf16_d64) : (const void*)FC_N(_bf16_d128);
    return d == 64 ? (const void*)FC_N(_f16_d64) : (const void*)FC_N(_f16_d128);
}
int FC_N(_threads)() { return 32 * FC_WARPS; }
int FC_N(_smem)(int d) {
#if FC_D256
    if (d == 256) return FcCfg<256>::SMEM;
#else
    if (d == 256) return 0;
#endif
    return d == 64 ? FcCfg<64>::SMEM : FcCfg<128>::SMEM;
}
int FC_N(_stages)(int d) { return d == 64 ? gqa_fc::fit_stages<64, FC_WARPS>() : d == 128 ? gqa_fc::fit_stages<128, FC_WARPS>()
                                                                                : gqa_fc::fit_stages<256, FC_WARPS>(); }
