#!/usr/bin/env bash
# The validation record of scripts/record-x2.sh on a one-GPU host, in two calls of the same commit, for when no two-GPU
# host of the wanted kind comes (records are kept per GPU). The settings are record-x2.sh's; its tool processes are split
# as that script splits them over its two GPUs:
#   part 1: the suite, the stress and the processes record-x2.sh runs beside them on GPU 0 (the same load as there)
#   part 2: the processes of its GPU 1, with part 1's results merged into the record (REPORTS_FROM: the JUnit reports,
#           the validation-rule summary and the sanitizer results, taken only if part 1 tested this same commit)
# MultiGpuTest's two tests skip on one GPU, and the invalid-argument rules that need a second device are not checked.
# Usage on the GPU host, from the repository root, with the bundle carried:
#   scripts/record-x1.sh 1                   (writes $OUT/results.tgz as device-run.sh does)
#   scripts/record-x1.sh 2 <part 1's results.tgz, carried in the tree>
#   scripts/record-x1.sh print               (the two halves, one a line; no GPU needed)
set -u
here=$(dirname "$0")
RECORD_SOURCE_ONLY=1 . "$here/record-x2.sh"
unset SANITIZER_GPUS  # record-x2's device order "1,0" names a second GPU
part1="$gpu0" part2="$gpu1"
case ${1:-} in
  print) printf '%s\n%s\n' "$(echo $part1)" "$(echo $part2)" ;;
  1) export SANITIZER_TOOLS="$part1"; exec "$here/device-run.sh" info checks ;;
  2) from=$(mktemp -d); tar xzf "${2:?the results.tgz of part 1}" -C "$from" || exit 1
     export SANITIZER_TOOLS="$part2" REPORTS_FROM="$from"; exec "$here/device-run.sh" info sanitizer ;;
  *) echo "usage: $0 1 | 2 <the results.tgz of part 1> | print" >&2; exit 2 ;;
esac
