#!/usr/bin/env bash
# Staged for the next session with device time (no bundle, about a minute), from the repo root:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# Fifteenth session: BMM_SHAPES="96x96x96,96x96x96@8192,48x48x48,48x48x48@8192,64x64x64@8192" (the mid rows still under
# 80 % of the floor, with their team alternatives; results-h100-ab53e1c-mid96.txt), then
# BMM_SHAPES="64x96x64,96x64x64,128x64x64,64x128x96,80x80x80,128x96x64@8192,48x48x48@4096,48x48x48@8192" (u = 5 to 9,
# where the rule of 1e4456c keeps 4 warps up to u = 8 unmeasured against 8, and 48^3 by batch; results-h100-<commit>-u5to9.txt).
# bmm/run_mid.sh: bmm_team's configurations on the F16/BF16 mid shapes whose shipped plan (7666243) was never timed
# (u < 4 warp tiles: 1-2 warp teams with 3 stages), with u = 4 and 16 rows as controls (docs/ops/bmm.md, "The sweep at
# 7666243"). Staged in the fourteenth session, compiled here against a stub cuBLAS header only.
# (Before this, the script ran the thirteenth session's two experiments at 199face: grouped_gemm/gemv/h100-199face.txt
# and gqa_decode/ab/h100-199face-pdl.txt, both negative; and the eighth session's two ncu profiles at af8bb1d.)
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/bmm-mid"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
OUT=$OUT/bmm-mid timeout 400 bash "$here/bmm/run_mid.sh"; echo "bmm-mid rc=$?"
