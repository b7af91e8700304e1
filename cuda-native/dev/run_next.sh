#!/usr/bin/env bash
# Staged for the next session with device time (no bundle, about a minute, ~40 s of device time), from the repo root:
#   OUT=$OUT bash cuda-native/dev/run_next.sh
# Next (twenty-seventh session's open gap): bmm_wg against bmm_team8 with rows in 8-byte (not 16-byte) multiples at u = 6
# warp tiles, the only tile count between 4 (team8 ahead: 60^3) and 8 (bmm_wg ahead on all four shapes,
# cuda-native/dev/bmm/results-h100-wg-u5to8.txt). If bmm_wg wins them, BmmHeuristics.WG_EIGHT_BYTE_MIN_WARP_TILES goes to 6.
# Every shape below is bmm_wg's (m·k, k·n, m·n multiples of 8; stored columns multiples of 4, not all of 8).
# Earlier staged runs: the sixteenth session's u = 4 widths (results-h100-998b26e-u4.txt), the fifteenth's mid96 and u5to9
# runs, the thirteenth's two experiments at 199face, the eighth's ncu profiles at af8bb1d.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}; mkdir -p "$OUT/bmm-u6"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
BMM_SHAPES=${BMM_SHAPES:-76x60x36,60x76x44,92x52x100,52x92x60,76x60x36@512,76x60x36@8192} \
  OUT=$OUT/bmm-u6 timeout 400 bash "$here/bmm/run_wg.sh"; echo "bmm-u6 rc=$?"
