#!/usr/bin/env python3
"""Stages a measurement of what the split merge costs the small gqa decode launches (run.sh builds and runs it).

  A = B = decode_mma.cu as in the working tree (the shipped kernel; B-A is the timing noise of identical code)
  C = A without the ticket and the merge: every split stores its fp32 partial and exits (no __threadfence, no
      atomic, no last-block reads). Its o is left unwritten (poison) wherever a sequence has several splits.
  D = C with every split storing its own o (rounded) and lse as a one-split launch does, instead of the fp32
      partial: a launch with no merge traffic at all. Run with A's split counts (GQA_AB_D_SPLITS=same).
C and D compute wrong outputs on purpose; main.cu reports them as different from A (so the run ends 'FAILED'),
and the timing columns are what this is for: A - C is the fence, ticket and merge; C - D the partial stores.

Why: at 241f285 the small problems (B=1 L=512 32/8 d128, 8 splits) take ~9.4 us against ~3.2 us for an empty
launch, and issue 7's 3x target over B*L <= 32768 needs ~3 us less per launch. A merge inside a thread-block
cluster (the splits of one KV head exchanging partials through distributed shared memory on sm_90) would remove
A - C; this measures whether that is worth building.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage_merge_cost.py [dest]   (default .carry/gqa-merge); then on
the GPU host: GQA_AB_D_SPLITS=same bash <dest>/run.sh <dest>
"""
from staging import HERE as here, SRC as src, destination, replace, shipped_kernel, write_variants

dst = destination(1, 'gqa-merge')
shipped = shipped_kernel()


NO_MERGE_OLD = """    if (active == 1) {
        return;
    }
"""
NO_MERGE_NEW = """    if (active >= 1) {
        return;  // staged: no ticket, no merge
    }
"""
c = replace(shipped, NO_MERGE_OLD, NO_MERGE_NEW)
d = replace(c, """        const size_t bh = bh0 + r;
        if (active == 1) {""", """        const size_t bh = bh0 + r;
        if (active >= 1) {  // staged: every split stores o as a one-split launch does""")
write_variants(dst, src, here, (('a', shipped), ('b', shipped), ('c', c), ('d', d)))
print('staged A and B (shipped), C (no ticket or merge), D (no merge traffic at all) into ' + dst)
