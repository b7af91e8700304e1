#!/usr/bin/env bash
# Nothing is staged for the next session's device time. The last staged run (the stride-2 NHWC ring, twenty-eighth
# session) ran at 0bb8244 in the twenty-ninth: docs/ops/depthwise_conv3x3.md, "A stride-2 ring".
# Earlier staged runs: the grouped GEMM early-W variants (h100-early-w.txt, no gain), the u = 6 bmm_wg run
# (results-h100-c9031cc-u6.txt), the sixteenth's u = 4 widths, the fifteenth's mid96 and u5to9 runs.
echo "nothing staged" >&2
exit 2
