#!/usr/bin/env bash
# Staged for the next session with device time (no bundle, about a minute), from the repo root:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# Next: bmm_team's width on partial-tile shapes with u = 4 by batch. At 48^3 two-warp teams beat the shipped four at
# 4096 and 8192 (23.55 / 44.96 against 24.42 / 46.91 us) and lose at 2048 (15.68 against 15.01), while at 64^3 (full
# tiles) four stay ahead at 8192 (73.06 against w2 75.71): results-h100-e4b8c63-u5to9.txt, -ab53e1c-mid96.txt. These
# shapes tell whether the partial tiles or the size decide it, before a rule changes (8192 48^3 is at 78 % of the floor).
# Earlier in the fifteenth session the script ran BMM_SHAPES="96x96x96,96x96x96@8192,48x48x48,48x48x48@8192,64x64x64@8192"
# (results-h100-ab53e1c-mid96.txt, 8 warps from u = 9) and "64x96x64,96x64x64,128x64x64,64x128x96,80x80x80,
# 128x96x64@8192,48x48x48@4096,48x48x48@8192" (results-h100-e4b8c63-u5to9.txt, 8 warps above u = 4); in the fourteenth
# it staged run_mid.sh's own list (results-h100-f673558-mid.txt, 2 stages everywhere). Before that: the thirteenth
# session's two experiments at 199face (grouped_gemm/gemv/h100-199face.txt, gqa_decode/ab/h100-199face-pdl.txt, both
# negative) and the eighth session's two ncu profiles at af8bb1d.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/bmm-mid"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
BMM_SHAPES=${BMM_SHAPES:-40x40x40@8192,48x48x48@2048,48x48x48@8192,56x56x56@8192,40x48x56@8192,64x64x64@4096,48x64x48@8192,64x48x64@8192} \
  OUT=$OUT/bmm-mid timeout 400 bash "$here/bmm/run_mid.sh"; echo "bmm-mid rc=$?"
