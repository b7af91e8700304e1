#!/usr/bin/env python3
"""Stages the A/B of the tile-load addressing in the gqa_decode tensor-core kernel (run.sh builds and runs it).

  A = decode_mma.cu at a git revision (default HEAD): each 16-byte chunk's source computed from the row in 64-bit
      arithmetic, with the paged-or-not branch inside the pass loop (~450 SASS instructions per d128 tile at a91ff10)
  B = decode_mma.cu in the working tree: one source pointer per tile and lane, advanced by a constant per pass, for
      contiguous caches and pages of >= 16 positions; the per-row lookup kept for smaller pages
  C = B again (the B-C spread is the timing noise of identical code)
  D = B launched by main.cu with half the splits
B and C load the same bytes into the same shared-memory slots and keep A's arithmetic, so main.cu requires their
o and lse to equal A's byte for byte, with NaN in every cache row past each length.

Why: ncu at af8bb1d (B=1 L=512 32/8 d128, 8 splits): 1217 warp instructions per warp at 6.8 cycles each, one warp per
scheduler; the load addressing of one tile is ~40 % of what a warp executes on the small problems.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage_issue.py [rev] [dest]   (default HEAD, .carry/gqa-issue); then
on the GPU host: bash <dest>/run.sh <dest>
"""
import os
import subprocess
import sys

from staging import HERE as here, ROOT as root, SRC as src, destination, write_variants

rev = sys.argv[1] if len(sys.argv) > 1 else 'HEAD'
dst = destination(2, 'gqa-issue')

rel = 'cuda-native/src/main/cuda/gqa_decode/decode_mma.cu'
old = subprocess.run(['git', '-C', root, 'show', rev + ':' + rel], check=True, capture_output=True, text=True).stdout
new = open(os.path.join(root, rel)).read()
if old == new:
    raise SystemExit('stage_issue.py: the working tree has the same decode_mma.cu as ' + rev)

write_variants(dst, src, here, (('a', old), ('b', new), ('c', new), ('d', new)))
print('staged A (%s), B and C (working tree), D (working tree, half the splits) into %s' % (rev, dst))
