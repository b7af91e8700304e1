#!/usr/bin/env bash
# The one-GPU checks of the current commit in two calls of the same machine (the one-call form took 591 s of the
# 600 s call limit at e86bf38; split at 6ef909e: 559 s and 58 s; the verify module's JVM is faster since 75a419a, 226 s
# beside the whole two-GPU record at 7b1c2fa, so one call may fit again).
# Next session (after the fiftieth): the whole record of 6167c12 ran on two H200s (only H200 kinds were lent): 682 tests
# 0 failed, 416/416 rules, stress 147,608 ops 0 wrong, 21 of 24 tool processes clean (racecheck/bv and racecheck/x as
# always; memcheck/r's 4 API errors came from GpuRuntimeTest's stream-close refusal test, tagged expected-api-error at
# b3aeac1, so the next record should read 22 of 24). Every new GPU test after 6d3a01b passed (vendorPathsTakeTheCallers-
# HostOffsets, groupedBatchedCallsInFlight..., capturedVendorStepReplaysWithChangingLengths). H200 sweeps at 6167c12:
# int8_mm and grouped_gemm (docs/benchmarks/h200). The H200 demo of 6167c12 is NOT valid: a racecheck JVM outlived its
# sanitizer step and shared the GPU (docs/reliability/leftover-tool-jvm-h200-6167c12.txt); b3aeac1 ends such JVMs and
# makes bench/demo wait for a GPU without other compute processes (CPU-tested with fake tools: its first GPU call should
# show "at its start" notes only if something else was on the GPU). First next session: bundle HEAD; on an H100 if lent,
# timeout 590 scripts/device-run.sh info tests (docs/validation/h100.json is still 6226dfb), then the demo
# (DEMO_TIMEOUT=150: HEAD's vendor compositions have no clean measurement) and BENCH_OPS="int8_mm:90 grouped_gemm:400"
# (int8's K > 6144 rule at 9 <= M <= 16 is unmeasured on an H100, and on the H200 it picked the slower path on 3 rows by
# 6-8 %: decide per GPU only with both GPUs' sweeps of one code). Keep sanitizer probes out of a call that times anything.
# CPU-tested after 6167c12 (GPU code changed): core's Tensor forgets a ninth stream behind an event instead of
# synchronizing it (new RuntimeOrderingGpuTest.aTensorUsedOnMoreThanEightStreamsWaitsForNoneAndIsFreedAfterEvery; the
# stress runs 9 streams on shared tensors), a free whose waits fail keeps its block, and depthwise's vendor GELU pass adds
# the bias (vendor_gelu.cu; new DepthwiseConv3x3GpuTest.vendorGeluAddsTheBiasInItsOwnPassOnEveryBranch): so the suite and
# the whole record first, then depthwise_conv3x3:345 (its GELU rows' vendor times should drop ~20 %) beside the demo.
# Also new and never run: GqaDecodeGpuTest.aPlanIsRefusedOnACapturingStreamAndTheCaptureStaysValid and
# VendorHandleCaptureGpuTest (a fresh thread's first vendor call under capture refused naming the stream; if cuBLAS's
# capture of the later call fails instead, the refusal itself still holds: read which step failed). Strengthened and
# never run: MoeRouteGpuTest.nanLogitsAreReadAsMinusInfinity now checks the weights (finite poison), and the tests of
# the allocating overloads prime the pool with poison (Poison.primePool): a failure there may be a real unwritten output.
# The fiftieth session could not get device time after 6167c12 (133 s left, too little to start a machine): the suite,
# the whole record and the sweeps above are all due on HEAD. Left from its last read of the change: Tensor's forgotten
# events repeat Event's NotReady and relaxed-capture handling (one raw-event helper in Event, a record for the
# (stream, event) pairs); Int8Mm.plan has the allocation-under-capture hazard GqaDecode.plan now refuses.
# Pre-Hopper paths, never run on a GPU (core's DeviceInfo.asProfile): first without the JIT, every GPU class with its
# vendor paths: GAPFILL_JOPTS=-Dgapfill.debug.deviceAs=a100 TESTS_CLASSES='.*GpuTest' timeout 590 scripts/device-run.sh
# info tests (the heuristics' pre-Hopper choices, run from this GPU's sm_90a image; launches over the profile's 163 KiB
# are refused; bench and demo refuse a profile). Then the same with CUDA_FORCE_PTX_JIT=1 (the compute_80 PTX): cuDNN
# ships no PTX, so depthwise's and gqa's VENDOR cases fail there, and cuBLAS(Lt) may too (bmm, grouped, int8 vendor):
# read those failures by path, the custom ones are the finding; the JIT of every module may take minutes. Records are
# validation/<gpu>-as-a100.json (real_gpu, real_cc, cuda_force_ptx_jit inside): keep them under docs/reliability, never
# docs/validation; REPORTS_FROM refuses to merge runs of another profile (reports/PROFILE). Then deviceAs=rtx3090 (99 KiB).
# Next session (after the forty-ninth): HEAD's library code is NOT GPU-validated. The full suite ran at 6226dfb on one
# H100 (654 tests, 0 failed, 364 s for "info tests"); 6d3a01b (the grouped-batched vendor path without its second
# synchronization: host arrays in pooled slots behind an ordering event, Event.isComplete) ran only the GroupedGemm
# classes (36 of 36) with a BF16 grouped sweep and the demo; after it, CPU-tested only: every op's Error paths and
# argument names, depthwise's cuDNN path composing an aliased residual always, cuDNN activation descriptors, the pool
# as an op cache (Resources.release), the report's verdict gaps. First: bundle HEAD, timeout 590 scripts/device-run.sh
# info tests (one H100) -> docs/validation/h100.json; then the whole record on two GPUs (nvidia-h100-x2 or h200-x2, two
# calls: info tests, then SUITE_FROM=.bundle/suite.tgz record-x2.sh; last whole record eff73a2); then the full grouped
# sweep (grouped_gemm:400, ~350 s: its F16 rows still have the old grouped-batched path's times, 2e80d17) and the demo.
# Sweeps now: bmm, int8, host_overhead, moe_route at 6226dfb; grouped at 2e80d17 (+ BF16 at 6d3a01b in
# docs/benchmark-runs); demo at 6d3a01b; depthwise/gqa/elementwise at eff73a2. New GPU tests never run:
# GroupedGemmGpuTest.vendorPathsTakeTheCallersHostOffsets (Options.hostOffsets) and .groupedBatchedCallsInFlight... (its
# Resources.release check), GqaDecodeGpuTest.capturedVendorStepReplaysWithChangingLengths (a VENDOR plan in a graph: if
# cuBLAS refuses the capture, GqaDecode's "every plan is capturable" is wrong and the demo's decode step must go back to
# an eager vendor), and the tighter attention lse bound in every GqaDecodeGpuTest case. The demo's vendor layers changed
# (one offsets copy per MoE layer; the decode vendor plan captured): rerun the demo and expect lower MoE/decode ratios.
# int8's AUTO rule changed (9 <= M <= 16 float, K > 6144 -> cuBLASLt): rerun int8_mm (~30 s). Open from the baseline
# review, not started: depthwise GELU's vendor bias in the GELU pass (vendor_gelu.cu), the grouped loop's fp32
# intermediate, cuDNN's legacy Find on BF16/F32 NHWC (docs/ops/depthwise_conv3x3.md, grouped_gemm.md).
# Open from the core concurrency review (docs/reliability.md, "After 6d3a01b"): a tensor on more than 8 streams
# synchronizes the oldest under its lock (serializes a >8-thread pool sharing a weight; fails under capture); a new
# thread's first vendor call destroys ended threads' handles (cublasDestroy synchronizes the device; under capture).
# Core changed after 6d3a01b too (Tensor's stream record under the storage lock; KernelFunction re-activates after its
# monitor): RuntimeOrderingGpuTest and the stress exercise them; the whole record is due.
# Evidence scripts (after 6d3a01b): reports merge only from the same GPUs (reports/GPUS), untracked files mark a bundle
# dirty, fatbins rebuild on a build-stamp change, a TESTS_CLASSES run's record names its filter (tests_filter). bench --resume
# refuses rows of another driver/cuBLAS/cuDNN. Open from that review: cuda-native/dev A/B scripts label swapped fatbins as
# the clean commit. (A call whose REPORTS_FROM merge is refused now exits 1.)
# Next session (after the forty-eighth): the whole record of eff73a2 ran on two H200s (two calls: tests, then
# SUITE_FROM record-x2.sh; 637 tests 0 failed, 22 of 24 tool processes clean, the usual two), and the depthwise, gqa
# and elementwise sweeps on one H100 at eff73a2 (gqa needed a --resume call: 984 rows in 216 s, so give it 260 s;
# elementwise takes ~120 s, its 134M-element rows ~25 s each on the host). Still at older commits: the H100 suite
# (885a506), grouped_gemm (64bb3cb: grouped_gemm:380 alone), demo (b428e5f), bmm/int8/host_overhead/moe_route (885a506).
# After eff73a2, CPU-tested only: core's stream-release fixes (c6e5f8e, dbbe7fb: Stream.close/releaseEndedThreads/
# Storage.record keep an unsynchronized stream; new GPU test GpuRuntimeTest.aStreamWhoseCloseIsRefusedByAForeignGlobal-
# CaptureStaysOpen), activate()'s cuCtxGetDevice check (virtual threads only since 44f4f9f), cuDNN
# 4004, the alpha/beta constants moved to HostConstants (7de7412: every vendor path's first call), KernelModule reading
# through the class loader (b8291b3), depthwise's 2^31 - 1 arithmetic (b6844eb), the new GPU test
# GroupedGemmGpuTest.manyGroupsAsInFineGrainedMoe (256 and 4096 groups); harness: int8 float checks against exact scaled
# sums, head-start flushes (up to 32, none for a path that waits for the GPU, e.g. grouped's vendor paths; the log names
# each path given one), host_overhead interleaved.
# First: bundle HEAD, timeout 590 scripts/device-run.sh info tests on one H100 (docs/validation/h100.json), then the
# grouped sweep, host_overhead and int8 (first runs of the harness changes) and the demo. Device time: 1800 s; the x2 record took 337 + 460 s on H200s.
# Next session (after the forty-seventh): HEAD is not GPU-validated: after 885a506, f7c0e87 moved the capture query into
# Stream.isCapturing (core; the ops call it), verify and the harness changed (CPU-tested); the device time ran out (192 s,
# no machine could start). First: bundle HEAD, timeout 590 scripts/device-run.sh info tests (one H100), commit the record.
# The suite ran at 885a506 on one H100 (626 tests, 1 failed: the CPU chart test
# without java.desktop in the bundle, fixed to skip at a706d31; every GPU test passed), with the bmm, int8, host_overhead
# and moe_route sweeps of the same code. The tools and the stress last ran at be0282d (two H100s; 22 of 24 clean, stress
# 101,505 ops 0 wrong), before the kernel-parameter check of every launch (cafec4b), Stream.close under capture
# (654c0bd), the Tensor/Event refusals (0f48c46) and verify's lse bound (f701906): so first the whole record at HEAD.
# scripts/record-x2.sh no longer fits one call on two H100s (cut at 595 s at be0282d: the verify module's suite beside
# the 24 tool processes; it fit on two H200s at 464 s). On two H100s (nvidia-h100-x2), two calls of the same warm
# machine: (1) timeout 590 scripts/device-run.sh info tests (~400 s, both GPUs visible: MultiGpuTest and the 9 two-GPU
# rules run); copy its results.tgz into the tree (e.g. .bundle/suite.tgz, and carry it); (2) SUITE_FROM=.bundle/suite.tgz
# timeout 595 scripts/record-x2.sh (the tools and the stress, ~450 s; the record takes call 1's reports). record-x1.sh's
# part 1 carries record-x2's GPU-0 load with the suite and will not fit an H100 call either. Then the sweeps still at
# 64bb3cb (depthwise_conv3x3:345 gqa_decode:230 elementwise in one call; grouped_gemm:380 alone) and the demo
# (b428e5f), at HEAD. The next sweeps are the first GPU runs of the harness changes after 885a506 (RandomFill's
# non-repeating inputs, the gqa check's scaled lengths, repetitions in whole periods, resume settings): expect the same
# timings and every check to pass; a failing check there is a finding, not noise.
# Next session (after the forty-sixth): HEAD's bmm row-chunk entries (36017ac: bmm_frag_*_nn_rows,
# bmm_frag32_*_nn_rows_w*, picked by BmmHeuristics.fragRows) have run only the bmm sweep (every row checked); the suite
# ran at b428e5f (one H100, 602 tests 0 failed), where the same bodies sat inside the NN kernels, and the whole record
# at 2ecbe9d (two H200s). First call (nvidia-h100-x1): bundle HEAD, then timeout 590 scripts/device-run.sh info tests
# (~420 s; BmmGpuTest's new NN shapes 12x12x10, 6x12x16, 17x24x10 reach the _rows entries); then the whole record
# (timeout 595 scripts/record-x2.sh, nvidia-h100-x2) so that racecheck/bn runs the _rows entries. Open question: the
# 8^3 bmm rows read 0.2-0.4 us slower since 64bb3cb with their kernel unchanged (docs/ops/bmm.md, "Where it stands").
# New GPU tests never run (all from CPU-only work after the device time ran out): BmmGpuTest.rowChunkEntriesAndTheir-
# FallbackOnBAndCViews, GpuRuntimeTest.aFreshThreadWhoseFirstCallIsALaunchRunsIt (a launch from a thread with no CUDA
# call before it), DepthwiseConv3x3GpuTest.vendorFirstCallUnderCaptureIsRefused-
# AndTheCaptureStaysValid; the whole record's stress now draws random cases (expect different op mixes and counts).
# For one class only (e.g. when little device time is left): TESTS_CLASSES='.*verify\.BmmGpuTest' scripts/device-run.sh
# tests (the run.sh tests step with its per-test feed, so a cut call still shows what ran; at 36017ac a bare launcher
# call with --details=tree was cut at 150 s and printed nothing).
# Session after the forty-fifth: every sweep but the demo is 64bb3cb's (one H100), the H100 suite is 64bb3cb's
# (594 tests, 0 failed), the whole record b7efe08's (two H200s, 22 of 24 tool processes clean, the usual two). After
# 64bb3cb, CPU-tested only: verify's bounds refuse a factor at which a zeroed result passes (1e180cc), the report's
# per-row reach, and the ops review fixes (f31eb98, 48ff1b1, 60bd071, 4118b71: refusals before allocation, int8's
# 16-byte cuBLASLt algorithm with the new Int8MmGpuTest.vendorRunsOnViewsOn16BytesOnly, gqa's vendor maxLen, depthwise
# strip arithmetic in long, rule 416 MR_DECIDE_TOKENS_INT32). Then: GqaDecodePlan ordering (an event after setup,
# waited on by a run on another stream, not under capture) with a GPU test.
# Calls: (1, nvidia-h100-x1) rebuild the bundle at HEAD, then DEMO_TIMEOUT=200 scripts/device-run.sh info tests demo
# (~380 s + the demo); (2, warm) a host A/B of depthwise's enqueue (11.28 us at 64bb3cb against 4.59-9.20 before);
# (3) bash cuda-native/dev/int8_mm/run_bulk_ab.sh: the bulk-copy int8 A/B at M <= 16, compiled only, never run (its
# own hang guard; worst case ~480 s, so give it a call of its own, OUT=$OUT/bulk to bring the logs back);
# (4) OUT=$OUT/frag bash cuda-native/dev/bmm/run_frag_ab.sh: the bmm frag/frag32 NN variants for the n <= 32 rows
# (16-byte operand and C moves, other warp plans), compiled only, never run (about a minute, sanitizers included).
# Next session (after the forty-second): main's library code is d68937c's, recorded on one H100 (529 tests, 0 failed) and
# whole on two H200s (529 tests 0 failed, stress 183,520 ops 0 wrong, 22 of 24 tool processes clean, the usual two).
# Sweeps at d68937c: grouped_gemm, host_overhead, demo, int8_mm, depthwise_conv3x3. Older (same kernels): bmm,
# gqa_decode, moe_route (bc4379b), elementwise (5db87f2).
# Waiting (host code, CPU-tested only): branch gpu-pending-kept-fixes, from reviews of the host code after d68937c:
# KeptPlans reserves the process-wide bytes atomically and closes every plan when one close fails; Int8Mm.Plan and
# GqaDecodePlan free every part when one free fails; Int8Mm.ltAlgo destroys its descriptors on failure; long-lived
# native host memory outlives a caller's PointerScope (KernelArgs, the allocation slot, alpha/beta constants);
# Resources.release touches only used GPUs and runs every step; gqaDecode refuses maxLen > 2^30 (null-workspace write);
# a tensor used on several streams is freed after all of them (new RuntimeOrderingGpuTest case); ops record their
# stream before the first launch; an Int8Mm plan made without a stream leases its maker's default stream (new
# OneShotPlansGpuTest case); verify: the router-weight bound ignores NaN/inf logits, the ulp rule refuses overflows,
# the arbitraries draw the edges they document (Int8MmGpuTest's random property draws new sizes); ops fence their
# tensors until every launch is queued; moeRoute caps T*k at 2^31 - 1025; the demo's MoeCombine refuses overlaps (new
# DemoTest GPU assertion); Tensor.hostBuffer ends with the view; depthwise's cuDNN plan build frees its descriptors on
# failure; gqaDecode validates before allocating (also under capture) and refuses scales that are inf/0 in fp32;
# moeRoute checks logits before allocating; frees always reach their bookkeeping, alternating streams stay lock-free
# (cd46386). One call
# (nvidia-h100-x1) from the branch's clean bundle: cuda-native/dev/run_next.sh kf
# (suite, memcheck over the changed classes' GPU tests; ~500 s). Green: fast-forward main, then the whole record at
# the merged HEAD (timeout 595 scripts/record-x2.sh), then host_overhead (the frees' and records' host cost).
# Forty-second session's plan (done): main's shipped code was bc4379b's, recorded on one H100 (suite 514, 0 failed).
# Stale against it: the depthwise_conv3x3 and grouped_gemm sweeps (a35d849; same kernels), the demo (01b7f8b), and the
# whole record with sanitizers and stress (5db87f2 on two H200s; host code changed since, no kernel). In this order
# (all four do not fit one session's 1800 s with their ~65 s starts):
# call 1 (nvidia-h100-x1): the branch below, run_next.sh hr (~450 s); green: fast-forward main;
# call 2 (nvidia-h100-x2 or the two H200s that come): timeout 595 scripts/record-x2.sh at the merged HEAD (the whole
# record, ~460 s; its shard r runs the new OneShotPlansGpuTest under all four tools);
# call 3 (nvidia-h100-x1): BENCH_OPS="grouped_gemm:330 host_overhead:60" DEMO_TIMEOUT=150 scripts/device-run.sh info
# bench demo (grouped ran out of 280 s at 97 of 112 rows on a slow host at 01b7f8b: its vendor loop is host-bound);
# call 4, if the time is there: BENCH_OPS="depthwise_conv3x3:340" scripts/device-run.sh info bench.
# Call 1's branch, gpu-pending-host-rows (host code): the one-shot Int8Mm.mm and GqaDecode.decode keep their plans
# per thread (KeptPlans: up to 8 plans, 8 MiB; a repeated problem on the same stream allocates nothing; under graph
# capture a plan of its own; Resources.release closes them), a vendor int8 plan held across Resources.release keeps its
# cuBLASLt descriptors (they were destroyed under it), and a host_overhead row int8_mm_plan. If only the gqa part fails,
# main can take the branch up to 1b82dba plus f24ecbd (int8 only) instead. One call (nvidia-h100-x1), after bundling the branch's
# clean tip and cuda-native/dev/host_ab/base_jars.sh main, carry [".bundle/gapfill-gpu.tar.xz", ".bundle/base-jars"]:
# cuda-native/dev/run_next.sh hr (suite with the new OneShotPlansGpuTest, memcheck over it, host_overhead, then the
# A/B against main; ~450 s). Green: fast-forward main; the A/B's int8_mm custom/auto rows say what the kept plans save.
# Forty-first session (ran 01b7f8b: suite green, int8 AUTO 144 of 144; then bc4379b: lazy decision reasons, grouped
# enqueue 14.3 -> 6.0 us; main took both). Its first choice was: branch gpu-pending-int8-m1 (host dispatch only: int8Mm AUTO runs custom at M = 1 with I32
# output and K*N < 16Mi, the row AUTO missed at a35d849 and 5db87f2). One call (nvidia-h100-x1):
# cuda-native/dev/run_next.sh i8 (the suite, the int8 sweep, host_overhead; ~350 s). Green and AUTO 144 of 144 (or the
# M = 1 row within 5 %): fast-forward main. The branch also gives the host_overhead sweep a device_activate row (the
# per-call cudaGetDevice since f1015ac, timed on the machine that times the ops), which the 5db87f2 sweep lacked.
# And the int8 and grouped-loop vendor paths take alpha/beta from shared constants (no native allocations per call):
# compare host_overhead's int8_mm and grouped_gemm vendor columns with the 5db87f2 file (another machine: the
# device_activate row and the custom columns say how far the machines differ).
# And three host-cost changes, each its own commit so a failure can be bisected: error messages built only on failure
# (every launch, every free, the vendor calls), cudaMallocAsync into a per-thread slot, kernel lookup without a key
# string. The suite is their correctness check (every GPU test launches and allocates through them); host_overhead
# their measure. Before the call: bash cuda-native/dev/host_ab/base_jars.sh main (builds main's core, ops, examples jars
# into .bundle/base-jars, 1.5 min), then carry [".bundle/gapfill-gpu.tar.xz", ".bundle/base-jars"]: after the suite
# the call runs host_ab/run.sh, host_overhead with main's jars and the branch's alternately, three rounds each, on one
# machine (host_ab/summary.txt in the results): the clean measure of the host changes.
# Fortieth session (run at f1015ac, 567 s and 253 s, all green, paged 712 of 712; main took it): branch gpu-pending-page-clamp = the gqa clamp below, GroupedGemmGpuTest through
# SystemProperty.with, and CudaDevice.activate asking cudart for the current device on every call (another library may
# have moved it; MultiGpuTest's new test moves it behind Gapfill's back). Call 1 (nvidia-h100-x1): run_next.sh gq as
# below. Call 2 (nvidia-h100-x2, or the two H200s that come): run_next.sh x2 (the suite with both GPUs visible, so
# MultiGpuTest runs, and memcheck and racecheck over shard c; ~300 s). Green on both: fast-forward main.
# The gqa clamp (both GPU paths clamp block-table entries into [0, P)):
# Its first form (cae2d96) ran once, 571 s: one failure, a test bug in the GQR_TABLE_CLAMPED case (fixed since), the
# new GPU case and memcheck over GqaDecodeGpuTest clean, and seven B = 1-4, L = 512 paged pairs 0.4-0.7 us slower
# (the clamp now sits at the tile's use, not the load). Again: cuda-native/dev/run_next.sh gq (suite, memcheck over
# GqaDecodeGpuTest, the gqa sweep; ~570 s of the 600), then compare its paged-against-contiguous pairs with
# docs/benchmark-runs/h100/gqa_decode-cae2d96.json.xz and docs/benchmarks/h100/gqa_decode.json (402b926: 712 of 712).
# Thirty-ninth session, second bundle (run at 26a0aad, 417 s, all green; main took it): branch gpu-pending-limit32 (host only: the one launch up to T = 32 where E <= 64,
# from the aac060f probe; the moe_route sweep gains T = 32): one call, cuda-native/dev/run_next.sh all.
# Thirty-ninth session, first bundle (run at aac060f, 427 s, all green; main took it): branch gpu-pending-route-pairs = gpu-pending-moe-tests below + route_block selecting 17-32
# tokens two per warp in lockstep (select_rows<SLOTS, 2>; host limit still 16, raised for the GPU test through
# gapfill.debug.moeRouteOneLaunchMaxTokens). Calls 1 and 2 as below, then OUT=$OUT bash
# cuda-native/dev/moe_route/run_stage_times.sh: its one-vs-two table at T = 17-32 (the 7b0a9b9 figures: two launches
# 9.0-17.0 us at T = 24 and 32, the one launch in turn 7.5-18.8) says whether to raise MoeRoute.ONE_LAUNCH_MAX_TOKENS to 32, which is a
# host change to run once more (suite, tools over MoeRouteGpuTest, moe_route sweep) before main takes it.
# Next session: branch gpu-pending-moe-tests (MoeRouteGpuTest's review cases: NaN rows through the one launch, k = E,
# rows of one value, each dtype meeting each kind of logits; no kernel or host change): call 1 cuda-native/dev/run_next.sh
# (suite and stress), call 2 cuda-native/dev/run_next.sh .bundle/prev-results.tgz (the four tools over MoeRouteGpuTest,
# shard m). Green: fast-forward main to the branch. The bundle is 36 MB since 4ac91c3 (jars stored; first bundle of
# that form, so call 1 is also its first run on a GPU host); with the 20 MB tree it fits the 64 MiB a call carries
# (the 46 MB bundle did not: this session moved docs/benchmark-runs out of the tree for its last calls).
# Thirty-eighth session, third bundle (the chunked sort from 4096 entries where E >= 64; host dispatch only): one call,
# cuda-native/dev/run_next.sh all (suite, stress, the four tools over MoeRouteGpuTest, the moe_route sweep; then
# OUT=$OUT bash cuda-native/dev/moe_route/run_stage_times.sh).
# Thirty-eighth session, second bundle: branch gpu-pending-route-block (moeRoute's argmax rounds by redux.sync; T <= 16
# in one launch). Call 1 the suite and the stress; call 2 the four tools over MoeRouteGpuTest (its new test compares the
# one launch with the reference and, bit for bit, with the two launches); call 3 BENCH_OPS="moe_route:60 bmm:150
# int8_mm:90 grouped_gemm:200 elementwise:60 host_overhead:60" scripts/device-run.sh info bench, then
# OUT=$OUT bash cuda-native/dev/moe_route/run_stage_times.sh; call 4 BENCH_OPS="depthwise_conv3x3:340" DEMO_TIMEOUT=200
# scripts/device-run.sh info bench demo; call 5 (if time) the gqa sweep. All green: fast-forward main to the branch.
# The first bundle of this session (402b926, gpu-pending-next: sized top-k, Tensor.isContiguous, the gqa check on two
# sequences) ran calls of 375, 72, 21 and 194 s; docs/reliability/suite-h100-402b926.txt.
# Thirty-seventh session (run at bc77c1c): memcheck, synccheck and initcheck over the eight classes the review fixes
# changed (144 tests; 142, 129, 172 s), racecheck over the three new ones (73 s) and over GqaDecodeGpuTest (165 s).
# The thirty-sixth session's call 2 ran the four tools over GqaDecodeGpuTest (shard gq=.*\.GqaDecodeGpuTest, every
# kernel; 62, 146, 63, 63 s; 151 s wall) after GqaDecodeHeuristics.oneSplit.
# The thirty-fifth session (the int8 m16 tile, db81ef8) ran them over Int8MmGpuTest: shard i8=.*\.Int8MmGpuTest, tools
# memcheck/i8 synccheck/i8 initcheck/i8, racecheck over the grid in four slices (-Dgapfill.test.slice=K/4, Gapfill's
# kernels only) and over the random property (93 s).
# The thirty-fourth session's calls (the depthwise band entries, shipped at bab3bae) ran the tools over
# DepthwiseConv3x3GpuTest instead: SANITIZER_SHARDS dw=.*\.DepthwiseConv3x3GpuTest, tools memcheck/dw racecheck/dw
# synccheck/dw initcheck/dw, initcheck/dw Gapfill's kernels only (376, 81 and 327 s with the depthwise sweep).
# Usage on the device, bundle carried as .bundle/gapfill-gpu.tar.xz:
#   call 1: cuda-native/dev/run_next.sh             (info tests stress; its results.tgz comes back)
#   call 2: cuda-native/dev/run_next.sh <tgz>       (carry call 1's results.tgz as <tgz> under .bundle/; runs the
#           tools over the classes the review fixes changed and merges call 1's JUnit reports into one record)
#   call 3: the op's sweep on its own (above)
# The machine goes back after 30 s idle: copy the results.tgz and start call 2 at once.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh
unset SANITIZER_GPUS SANITIZER_JOPTS
# shard m (MoeRouteGpuTest) is the record's own
export SANITIZER_TOOLS="memcheck/m synccheck/m initcheck/m racecheck/m" \
  SANITIZER_GAPFILL_ONLY="" \
  SANITIZER_TIMEOUT=300 SANITIZER_TEST_TIMEOUT=290s STRESS_SECONDS=60
if [ "${1:-}" = x2 ]; then
  SANITIZER_TOOLS="memcheck/c racecheck/c" timeout 590 scripts/device-run.sh info tests sanitizer
elif [ "${1:-}" = gq ]; then
  export SANITIZER_SHARDS="$SANITIZER_SHARDS gq=.*\.GqaDecodeGpuTest" SANITIZER_TOOLS="memcheck/gq"
  BENCH_OPS="gqa_decode:240" timeout 590 scripts/device-run.sh info tests sanitizer bench
elif [ "${1:-}" = kf ]; then
  export SANITIZER_SHARDS="$SANITIZER_SHARDS kf=.*\.(OneShotPlans|GqaDecode|Int8Mm|RuntimeOrdering|MemoryBaseline)GpuTest" \
    SANITIZER_TOOLS="memcheck/kf"
  timeout 560 scripts/device-run.sh info tests sanitizer
elif [ "${1:-}" = hr ]; then
  export SANITIZER_SHARDS="$SANITIZER_SHARDS os=.*\.OneShotPlansGpuTest" SANITIZER_TOOLS="memcheck/os"
  BENCH_OPS="host_overhead:60" timeout 480 scripts/device-run.sh info tests sanitizer bench
  [ -d .bundle/base-jars ] && ROUNDS=5 OUT=$OUT timeout 110 bash cuda-native/dev/host_ab/run.sh
elif [ "${1:-}" = i8 ]; then
  BENCH_OPS="int8_mm:90 host_overhead:60" timeout 500 scripts/device-run.sh info tests bench
  # the host-cost A/B against main's jars (carry .bundle/base-jars, from cuda-native/dev/host_ab/base_jars.sh)
  [ -d .bundle/base-jars ] && OUT=$OUT timeout 85 bash cuda-native/dev/host_ab/run.sh
elif [ "${1:-}" = all ]; then
  BENCH_OPS="moe_route:60" timeout 560 scripts/device-run.sh info tests stress sanitizer bench
elif [ $# -eq 0 ]; then
  timeout 590 scripts/device-run.sh info tests stress
else
  prev=/tmp/gapfill-prev; rm -rf "$prev"; mkdir -p "$prev"; tar xzf "$1" -C "$prev" || exit 2
  REPORTS_FROM=$prev timeout 590 scripts/device-run.sh info sanitizer
fi
