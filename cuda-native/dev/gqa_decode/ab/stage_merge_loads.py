#!/usr/bin/env python3
"""Stages an A/B of the split merge's loads (run.sh builds and runs it).

  A = B = decode_mma.cu as committed at HEAD (B-A is the timing noise of identical code)
  C = decode_mma.cu as in the working tree with kMergeChunk 16: the merge issues this thread's first kMergeChunk
      partials before it computes the weights, reads each lse once (the weights go through shared memory), and loads
      later partials kMergeChunk splits at a time, where the kernel before read each lse twice from L2 and its
      partials 4 splits at a time
  D = the same with kMergeChunk 8 (what shipped, after this A/B: h100-merge-loads-ab.txt, run with HEAD = 31a0d8d)
C and D sum the splits in the same order with the same weights, so they must come out byte-identical to A.

Why: stage_merge_cost.py at 13a499e (h100-13a499e-merge-cost.txt) showed the ticket and the merge cost 2.3 to 6.7 us
per launch, growing with the split count (2.7 us at 8 splits, 3.2 to 5 us at 16, 6.7 us at 32), which is the L2 round
trips the last block waits on one after another.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage_merge_loads.py [dest]   (default .carry/gqa-loads); then on the
GPU host: bash <dest>/run.sh <dest>
"""
import subprocess

from staging import HERE as here, ROOT, SRC as src, destination, replace, shipped_kernel, write_variants

dst = destination(1, 'gqa-loads')
head = subprocess.run(['git', '-C', ROOT, 'show', 'HEAD:cuda-native/src/main/cuda/gqa_decode/decode_mma.cu'],
                      check=True, capture_output=True, text=True).stdout
tree = shipped_kernel()
if 'kMergeChunk' not in tree:
    raise SystemExit('staging: the working tree\'s decode_mma.cu has no kMergeChunk')


def chunk(text, n):
    """text with kMergeChunk set to n."""
    line = next(l for l in text.splitlines() if l.startswith('constexpr int kMergeChunk = '))
    return replace(text, line, 'constexpr int kMergeChunk = %d;' % n)


write_variants(dst, src, here, (('a', head), ('b', head), ('c', chunk(tree, 16)), ('d', chunk(tree, 8))))
print('staged A and B (HEAD), C (working tree, chunk 16), D (working tree, chunk 8) into ' + dst)
