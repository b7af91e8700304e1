#!/usr/bin/env python3
"""Stages the paged-cache A/B for Hq/Hkv = 16/2, D = 64 (run.sh builds and runs it): why pages of 16 positions run
10-28 % behind the contiguous cache there (issue 7's only paged misses, docs/benchmarks/h100/gqa_decode.json at
c7982e3), while pages of 64 stay within ~8 %.

Variants of decode_mma.cu (all byte-identical in their outputs; main64.cu checks it), default:
  A = C = the kernel at HEAD (or at --base REV), B = D = the working tree's (A - C and B - D: the run-to-run noise of
  identical code). The table-prefetch run (h100-636e12d-prefetch.txt) used --base 75b08a6, the kernel before 636e12d.
With --l2 (the first run, h100-75b08a6.txt, HEAD = 75b08a6):
  A = as shipped: each 16-byte cp.async without a prefetch size
  B = every K/V cp.async with .L2::256B: L2 fetches the aligned 256 bytes around each request. A 16/2 D=64 cache row
      of one position is 256 bytes (two heads of 128), and each block reads only its head's half; with B, one DRAM
      access brings both halves, so the other head's block can find its half in L2.
  C = .L2::128B (control: the qualifier without a wider fetch)
  D = A again (the run-to-run noise of identical code)
The harness times each on five layouts of the same cache: contiguous [B, Hkv, L, D] (the target's reference) and
[B, L, Hkv, D] (heads interleaved like the pages, but in order), pages of 16 in random and in identity order, pages
of 64 in random order. So it separates the cost of the interleaved heads, of 4 KB random pages, and of the page size.

Usage: python3 cuda-native/dev/gqa_decode/paged/stage_paged.py [--l2] [--base REV] [dest]   (default .carry/gqa-paged); then on the
GPU host: bash <dest>/run.sh <dest>
"""
import os
import subprocess
import sys

L2 = '--l2' in sys.argv
if L2:
    sys.argv.remove('--l2')
BASE = 'HEAD'
if '--base' in sys.argv:
    i = sys.argv.index('--base')
    BASE = sys.argv[i + 1]
    del sys.argv[i:i + 2]

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ab'))
from staging import ROOT, SRC as src, destination, replace, shipped_kernel, write_variants  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
dst = destination(1, 'gqa-paged')
CP = 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\\n"'
tree = shipped_kernel()


def prefetch(text, size):
    return replace(text, CP, CP.replace('global [', 'global.L2::%s [' % size))


if L2:
    variants = (('a', tree), ('b', prefetch(tree, '256B')), ('c', prefetch(tree, '128B')), ('d', tree))
    what = 'A (shipped), B (.L2::256B), C (.L2::128B), D (shipped again)'
else:
    head = subprocess.run(['git', '-C', ROOT, 'show', BASE + ':cuda-native/src/main/cuda/gqa_decode/decode_mma.cu'],
                          check=True, capture_output=True, text=True).stdout
    variants = (('a', head), ('b', tree), ('c', head), ('d', tree))
    what = 'A and C (%s), B and D (working tree)' % BASE
write_variants(dst, src, here, variants, launchers={v: 'GQA_AB_LAUNCHER_D64' for v in 'abcd'}, kernel='f16_d64',
               main=os.path.join(here, 'main64.cu'))
print('staged ' + what + ' into ' + dst)
