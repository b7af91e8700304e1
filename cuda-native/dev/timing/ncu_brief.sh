#!/usr/bin/env bash
# A short ncu profile of the kernels whose names match a regex, for telling memory-bound, issue-bound and
# latency-bound apart: SpeedOfLight (DRAM and SM throughput), Occupancy, LaunchStats, WarpStateStats, plus the
# instruction count, the issue-active fraction and the per-reason stall ratios (metrics by regex, so a name that
# differs between ncu versions drops out instead of failing the run).
# Usage (GPU host): bash cuda-native/dev/timing/ncu_brief.sh <kernel-regex> <launch-count> <binary> [args...]
#   e.g. bash cuda-native/dev/timing/ncu_brief.sh 'dwconv3x3_nchw' 6 /tmp/dw_ab
# Not yet run. Clocks are left alone (--clock-control none), as in every timing here.
set -u
re=${1:?kernel regex}; n=${2:?launch count}; shift 2
ncu --clock-control none -k "regex:$re" --launch-count "$n" \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics 'smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:^smsp__average_warps?_issue_stalled_[a-z_]+_per_issue_active\.ratio$' \
  "$@" 2>&1 | grep -vE "^\s*$|^    -+|OPT |INF |WRN " | sed -E 's/ {2,}/  /g'
