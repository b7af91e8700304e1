#!/usr/bin/env python3
"""Stages an A/B of the split merge as a second kernel (run.sh builds and runs it).

  A = B = decode_mma.cu as in the working tree (B-A is the timing noise of identical code)
  C = the split kernel without its ticket and merge, which lets its dependents start at once
      (griddepcontrol.launch_dependents), then the merge as a programmatic dependent launch: a kernel of grid
      (KV heads x head tiles, sequences) that waits for the split grid's memory (griddepcontrol.wait) and runs the
      shipped merge code unchanged
  D = the same two kernels as two ordinary launches (no PDL attribute: griddepcontrol.wait returns at once, the
      stream orders them)
The merge code, its order of summation and its weights are the shipped ones, so C and D must be byte-identical to A
(run with GQA_AB_D_SPLITS=same so that D keeps A's split counts).

Why: at 13a499e the fence, the ticket and the last block's merge cost 2.3-2.7 us per launch at 4-8 splits
(h100-13a499e-merge-cost.txt); after b6b11de's fewer round trips, the fence and the atomic are what is left, about
2 us. A dependent launch replaces them by the end of the split grid and the wake-up of the merge grid. D says what
an ordinary second launch costs instead.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage_pdl.py [dest]   (default .carry/gqa-pdl); then on the GPU host:
GQA_AB_D_SPLITS=same bash <dest>/run.sh <dest>
"""
from staging import HERE as here, SRC as src, destination, replace, shipped_kernel, write_variants

dst = destination(1, 'gqa-pdl')
shipped = shipped_kernel()

MERGE_START = '    __threadfence();\n    // The merge waits on L2 round trips'
MERGE_END = '    if (tid == 0) *counter = 0;'
merge_code = shipped[shipped.index(MERGE_START):shipped.index(MERGE_END)]

MERGE_KERNEL = '''
// Staged: the split merge as its own kernel, one block per (KV head, head tile) and sequence, after the split grid.
template <typename T, int D>
__device__ __forceinline__ void merge_body(const int* __restrict__ lens, T* __restrict__ out, float* __restrict__ lse,
                                           const float* __restrict__ part_o, const float* __restrict__ part_lse,
                                           const Args a) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    __shared__ float s_w[kRows * kMaxSplits];
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int kvh = blockIdx.x / a.head_tiles;
    const int tile = blockIdx.x % a.head_tiles;
    const int b = blockIdx.y;
    const int rows = min(kRows, a.g - tile * kRows);
    const size_t bh0 = (size_t)b * a.hq + (size_t)kvh * a.g + (size_t)tile * kRows;
    const int len = min(max(lens[b], 0), a.max_len);
    const int active = len == 0 ? 1 : min(a.splits, (len + a.chunk - 1) / a.chunk);
    if (active == 1) {
        return;  // the split kernel wrote o and lse itself
    }
''' + merge_code + '''}

}  // namespace gqa_mma
'''

c = replace(shipped, '''    if (active == 1) {
        return;
    }

    // Split merge by the last active split''', '''    return;  // staged: the merge is the second kernel

    // Split merge by the last active split''')
c = replace(c, '''    const int b = blockIdx.z;
''', '''    const int b = blockIdx.z;
    asm volatile("griddepcontrol.launch_dependents;");  // staged: the merge grid may start; it waits for our memory
''')
c = replace(c, '\n}  // namespace gqa_mma\n', MERGE_KERNEL)
c += '''
extern "C" __global__ void __launch_bounds__(gqa_mma::kThreads) gqa_decode_mma_merge_f16_d128(
    const int* lens, __half* out, float* lse, const float* part_o, const float* part_lse, int hq, int hkv, int g,
    int head_tiles, int splits, int chunk, int max_len) {
    const gqa_mma::Args a{hq, hkv, g, head_tiles, splits, chunk, max_len, 0, 0, 0, 0, 0, 0, 0.f};
    gqa_mma::merge_body<__half, 128>(lens, out, lse, part_o, part_lse, a);
}
namespace gqa_mma {
inline constexpr auto merge_f16_d128 = &gqa_decode_mma_merge_f16_d128;
}
'''
write_variants(dst, src, here, (('a', shipped), ('b', shipped), ('c', c), ('d', c)),
               launchers={'c': 'GQA_AB_PDL_LAUNCHER', 'd': 'GQA_AB_TWO_LAUNCHER'})
print('staged A and B (shipped), C (merge as a programmatic dependent launch), D (as a second ordinary launch) into '
      + dst)
