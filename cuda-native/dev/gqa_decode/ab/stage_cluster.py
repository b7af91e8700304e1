#!/usr/bin/env python3
"""Stages the gqa decode kernel with its split merge inside a thread-block cluster (run.sh builds and runs it).

  A = B = decode_mma.cu as in the working tree (the shipped kernel: partials to global memory, a ticket per
      (sequence, KV head, head tile), the last split merges)
  C = the same kernel launched with a cluster of all `splits` blocks of a (KV head, head tile, sequence) when
      2 <= splits <= 16 (launch.h's GQA_AB_CLUSTER_LAUNCHER; plain launches otherwise, which take A's path): each
      split leaves its normalised partial o and base-2 lse in its own shared memory, the cluster synchronises, and
      every block merges a share of the outputs, reading the partials of all splits through distributed shared
      memory, with A's arithmetic (the weights by one warp per head with the same warp reductions, the same fma
      order over the splits), so C must equal A byte for byte. Splits past the sequence's end stay in the
      cluster (they hold lse = -inf) instead of exiting.
  D = C, run by main.cu with half the splits (or A's with GQA_AB_D_SPLITS=same: then D - C is timing noise)
No global partials, no fence, no ticket, no second pass over L2 on the clustered launches.

Why: issue 7's 3x target over B*L <= 32768 needs ~3 us less per small launch; stage_merge_cost.py measures how much
of that the merge is. sm_90 only (clusters); the shipped kernel stays the one for sm_80.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage_cluster.py [dest]   (default .carry/gqa-cluster); then on the
GPU host: bash <dest>/run.sh <dest>. Compiled here for sm_90a; not yet run on a GPU.
"""
from staging import HERE as here, SRC as src, destination, replace, shipped_kernel, write_variants

dst = destination(1, 'gqa-cluster')
shipped = shipped_kernel()

c = replace(shipped, '#include <math_constants.h>\n', '#include <math_constants.h>\n#include <cooperative_groups.h>\n')
# scratch for the cluster merge: this block's partial o [16][D] and lse [16], after the merge weights
c = replace(c, '''    static_assert(MERGE_BYTES <= kWarps * WARP_BYTES, "merge scratch fits in the rings");''',
            '''    static_assert(MERGE_BYTES <= kWarps * WARP_BYTES, "merge scratch fits in the rings");
    static constexpr int CLUSTER_BYTES = MERGE_BYTES + kRows * D * 4 + kRows * 4;
    static_assert(CLUSTER_BYTES <= kWarps * WARP_BYTES, "cluster merge scratch fits in the rings");''')
# an idle split (past the sequence's end) stays when its cluster merges
c = replace(c, '''    if (start >= len && !(split == 0 && len == 0)) {
        return;  // inactive split (split 0 stays for an empty sequence: it writes zeros and -inf)
    }
    const int active = len == 0 ? 1 : min(a.splits, (len + a.chunk - 1) / a.chunk);
''', '''    const int active = len == 0 ? 1 : min(a.splits, (len + a.chunk - 1) / a.chunk);
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    const bool cl = cluster.num_blocks() > 1;  // launched with a cluster of all the splits along x
    if (start >= len && !(split == 0 && len == 0) && (!cl || active == 1)) {
        return;  // inactive split (split 0 stays for an empty sequence: it writes zeros and -inf)
    }
''')
c = replace(c, '''    float* s_w = s_l + kWarps * kRows;                          // [16][kMaxSplits]
''', '''    float* s_w = s_l + kWarps * kRows;                          // [16][kMaxSplits]
    float* s_part = s_w + kRows * kMaxSplits;                   // [16][D] this split's normalised o (cluster merge)
    float* s_plse = s_part + kRows * D;                         // [16] its base-2 lse
''')
c = replace(c, '''            *reinterpret_cast<float4*>(part_o + (bh * a.splits + split) * D + d) =
                make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
            if (d == 0) part_lse[bh * a.splits + split] = mx + log2f(sum);  // sum > 0: an active split has keys
''', '''            const float4 po = make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
            const float pls = mx + log2f(sum);  // an idle cluster block: -inf + log2(0) = -inf, weight 0
            if (cl) {
                *reinterpret_cast<float4*>(s_part + r * D + d) = po;
                if (d == 0) s_plse[r] = pls;
            } else {
                *reinterpret_cast<float4*>(part_o + (bh * a.splits + split) * D + d) = po;
                if (d == 0) part_lse[bh * a.splits + split] = pls;  // sum > 0: an active split has keys
            }
''')
# The cluster merge reuses the shipped merge's text (weights, then the fma loop and the stores), with the
# partials read from the splits' shared memory instead of global memory, so the arithmetic is the same by
# construction.
def section(text, first, last):
    i = text.index(first)
    return text[i:text.index(last, i) + len(last)]


weights = section(shipped, '    for (int r = warp; r < rows; r += kWarps) {  // weights of the active splits',
                  '        if (lse != nullptr && lane == 0) lse[bh0 + r] = (mx + log2f(sum)) * kLn2;\n    }\n')
weights = replace(weights, '        const float* pl = part_lse + (bh0 + r) * a.splits;\n', '')
weights = weights.replace('__ldcg(pl + sp)', '*cluster.map_shared_rank(s_plse + r, sp)')
weights = replace(weights, 'if (lse != nullptr && lane == 0)', 'if (lse != nullptr && lane == 0 && split == 0)')
outputs = section(shipped, '    for (int idx = tid; idx < rows * (D / 4); idx += kThreads) {\n        const int r = idx / (D / 4);\n'
                  '        const int d = (idx % (D / 4)) * 4;\n        const float* po',
                  '        dst[3] = from_float<T>(acc.w);\n    }\n')
outputs = replace(outputs, 'for (int idx = tid; idx < rows * (D / 4); idx += kThreads) {',
                  'for (int idx = split * kThreads + tid; idx < rows * (D / 4); idx += kThreads * (int)gridDim.x) {')
outputs = replace(outputs, '        const float* po = part_o + (bh0 + r) * a.splits * D + d;\n', '')
outputs = replace(outputs, '__ldcg(reinterpret_cast<const float4*>(po + (size_t)sp * D))',
                  '*reinterpret_cast<const float4*>(cluster.map_shared_rank(s_part + r * D + d, sp))')
indent = lambda t: ''.join('    ' + l if l.strip() else l for l in t.splitlines(True))
c = replace(c, '''    // Split merge by the last active split of this (b, kv head, head tile).
''', '''    if (cl) {  // merge through distributed shared memory: cluster rank = split
        cluster.sync();  // every split's partial is in its shared memory
''' + indent(weights) + '''        __syncthreads();
''' + indent(outputs) + '''        cluster.sync();  // no block leaves while another still reads its shared memory
        return;
    }

    // Split merge by the last active split of this (b, kv head, head tile).
''')
write_variants(dst, src, here, (('a', shipped), ('b', shipped), ('c', c), ('d', c)),
               launchers={'c': 'GQA_AB_CLUSTER_LAUNCHER', 'd': 'GQA_AB_CLUSTER_LAUNCHER'})
print('staged A and B (shipped), C and D (split merge in a thread-block cluster; D at half the splits) into ' + dst)
