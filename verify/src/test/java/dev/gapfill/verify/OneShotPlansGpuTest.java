package dev.gapfill.verify;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Resources;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.Int8Mm;
import dev.gapfill.ops.Int8MmHeuristics;
import dev.gapfill.ops.reference.Int8MmReference;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plans the one-shot calls keep per thread ({@code Int8Mm.mm}, {@code GqaDecode.decode}). int8: a repeated problem allocates nothing and stays exact (the
 * split-K counters re-armed by the kernel between runs), alternating problems and streams stay exact and bounded, a
 * CUDA graph captures a plan of its own, and {@link Resources#release} gives every byte back. I32 outputs, compared
 * element by element with the exact CPU accumulation, outputs poisoned before every call.
 */
@GpuTest
class OneShotPlansGpuTest {
    private static final Device GPU = Device.cuda(0);
    private static final String CACHE = "int8_mm one-shot plans";
    private static final String GQA_CACHE = "gqa_decode one-shot plans";

    private long baselineBytes;

    @BeforeEach void releaseFirst() {
        Resources.release(GPU);
        baselineBytes = Gpu.device(GPU).bytesInUse();
    }

    @AfterEach void releaseAfter() {
        Resources.release(GPU);
        assertEquals(0, kept(), "kept plans after release");
        assertEquals(0, Resources.cacheSizes(GPU).get(GQA_CACHE), "kept gqa plans after release");
        assertEquals(baselineBytes, Gpu.device(GPU).bytesInUse(), "device bytes back to the baseline");
    }

    private static int kept() { return Resources.cacheSizes(GPU).get(CACHE); }

    private static Tensor randomI8(Random r, long rows, long cols) {
        byte[] v = new byte[(int) (rows * cols)];
        for (int i = 0; i < v.length; i++) {
            v[i] = (byte) (r.nextInt(256) - 128);
        }
        return Tensor.ofBytes(Device.CPU, v, rows, cols);
    }

    /** Runs the one-shot call on {@code s} into a poisoned output and checks every element against the CPU sums. */
    private static void checkOnce(Tensor ha, Tensor hw, Backend backend, Stream s, String what) {
        try (Tensor a = ha.to(GPU); Tensor w = hw.to(GPU); Tensor out = Poison.poisoned(GPU, DType.I32, ha.dim(0), hw.dim(0))) {
            Int8Mm.mm(a, w, Int8Mm.Options.int32().withBackend(backend), out, s);
            long[] acc = Int8MmReference.accumulate(ha, hw);
            int[] got = out.toIntArray();
            for (int i = 0; i < acc.length; i++) {
                assertEquals(acc[i], got[i], what + ": element " + i);
            }
        }
    }

    @Test void aRepeatedProblemRunsTheKeptPlanAndItsSplitKCountersStayArmed() {
        int m = 1, n = 1024, k = 4096;
        assertTrue(Int8MmHeuristics.skinnyPlan(m, n, k, Gpu.device(GPU).info()).splits() > 1, "the case must run split-K");
        Random r = new Random(11);
        CudaDevice d = Gpu.device(GPU);
        try (Tensor hw = randomI8(r, n, k); Tensor w = hw.to(GPU); Tensor out = Tensor.empty(GPU, DType.I32, m, n)) {
            for (int it = 0; it < 6; it++) {
                try (Tensor ha = randomI8(r, m, k); Tensor a = ha.to(GPU)) {
                    Poison.fill(out);
                    long before = d.liveAllocations();
                    Int8Mm.mm(a, w, Int8Mm.Options.int32().withBackend(Backend.CUSTOM), out, null);
                    long made = d.liveAllocations() - before;
                    if (it == 0) {
                        assertEquals(1, made, "the first call makes the plan and keeps its split-K workspace");
                    } else {
                        assertEquals(0, made, "call " + it + " allocates nothing and frees nothing");
                    }
                    long[] acc = Int8MmReference.accumulate(ha, hw);
                    int[] got = out.toIntArray();
                    for (int i = 0; i < acc.length; i++) {
                        assertEquals(acc[i], got[i], "call " + it + ", element " + i);
                    }
                }
            }
            assertEquals(1, kept());
        }
    }

    @Test void alternatingProblemsBackendsAndStreamsStayExactAndBounded() {
        Random r = new Random(12);
        int[][] shapes = {{1, 1024, 4096}, {3, 257, 1024}, {8, 4096, 512}, {16, 640, 2048}, {40, 96, 256}, {1, 4099, 64},
                {5, 64, 16}, {2, 2048, 2048}, {9, 128, 4096}, {64, 512, 512}};
        try (Stream own = Stream.create(GPU)) {
            for (int round = 0; round < 3; round++) {
                for (int[] sh : shapes) {
                    Backend be = (round + sh[0]) % 3 == 0 ? Backend.VENDOR : (round + sh[1]) % 3 == 1 ? Backend.CUSTOM : Backend.AUTO;
                    Stream s = (round + sh[2]) % 2 == 0 ? own : null;
                    try (Tensor ha = randomI8(r, sh[0], sh[2]); Tensor hw = randomI8(r, sh[1], sh[2])) {
                        checkOnce(ha, hw, be, s, "round " + round + " " + sh[0] + "x" + sh[1] + "x" + sh[2] + " " + be
                                + (s == null ? " default stream" : " own stream"));
                    }
                    assertTrue(kept() <= 8, "at most 8 plans kept per thread, " + kept() + " now");
                }
            }
            try (Tensor ha = randomI8(r, 1, 4096); Tensor hw = randomI8(r, 1024, 4096)) {
                checkOnce(ha, hw, Backend.CUSTOM, own, "kept on the own stream");
            }
        }
        // the own stream is closed: the same problem on the default stream drops that plan, makes its own, stays exact
        try (Tensor ha = randomI8(r, 1, 4096); Tensor hw = randomI8(r, 1024, 4096)) {
            checkOnce(ha, hw, Backend.CUSTOM, null, "after the own stream closed");
        }
    }

    @Test void aCapturedCallOwnsItsPlanAndReplaysExactly() {
        int m = 2, n = 1024, k = 4096;
        Random r = new Random(13);
        CUgraph_st graph = new CUgraph_st();
        CUgraphExec_st exec = new CUgraphExec_st();
        var cuda = Gpu.device(GPU);
        try (Stream s = Stream.create(GPU); Tensor ha = randomI8(r, m, k); Tensor hw = randomI8(r, n, k); Tensor a = ha.to(GPU);
             Tensor w = hw.to(GPU); Tensor out = Poison.poisoned(GPU, DType.I32, m, n)) {
            Int8Mm.Options o = Int8Mm.Options.int32().withBackend(Backend.CUSTOM);
            Int8Mm.mm(a, w, o, out, s);  // kept before the capture
            s.synchronize();
            int keptBefore = kept();
            cuda.check(cudart.cudaStreamBeginCapture(s.handle(), cudart.cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
            Int8Mm.mm(a, w, o, out, s);
            cuda.check(cudart.cudaStreamEndCapture(s.handle(), graph), "cudaStreamEndCapture");
            cuda.check(cudart.cudaGraphInstantiate(exec, graph, 0L), "cudaGraphInstantiate");
            assertEquals(keptBefore, kept(), "the capture neither used nor added a kept plan");
            long[] acc = Int8MmReference.accumulate(ha, hw);
            for (int it = 0; it < 5; it++) {
                Poison.fill(out, s);
                cuda.check(cudart.cudaGraphLaunch(exec, s.handle()), "cudaGraphLaunch");
                Int8Mm.mm(a, w, o, out, s);  // the kept plan between replays: separate counters
                Poison.fill(out, s);
                cuda.check(cudart.cudaGraphLaunch(exec, s.handle()), "cudaGraphLaunch");
                s.synchronize();
                int[] got = out.toIntArray();
                for (int i = 0; i < acc.length; i++) {
                    assertEquals(acc[i], got[i], "replay " + it + ", element " + i);
                }
            }
        } finally {
            cudart.cudaGraphExecDestroy(exec);
            cudart.cudaGraphDestroy(graph);
        }
    }

    @Test void aVendorPlanHeldAcrossAReleaseKeepsWorking() {
        int m = 33, n = 512, k = 1024;
        Random r = new Random(15);
        try (Tensor ha = randomI8(r, m, k); Tensor hw = randomI8(r, n, k); Tensor a = ha.to(GPU); Tensor w = hw.to(GPU);
             Tensor out = Poison.poisoned(GPU, DType.I32, m, n);
             Int8Mm.Plan plan = Int8Mm.plan(a, w, Int8Mm.Options.int32().withBackend(Backend.VENDOR), null)) {
            long[] acc = Int8MmReference.accumulate(ha, hw);
            for (int it = 0; it < 3; it++) {
                // the release evicts the cached cuBLASLt descriptors this plan uses; they must live until it closes
                Resources.release(GPU);
                Poison.fill(out);
                plan.run(a, w, Int8Mm.Options.int32(), out);
                int[] got = out.toIntArray();
                for (int i = 0; i < acc.length; i++) {
                    assertEquals(acc[i], got[i], "run " + it + " after a release, element " + i);
                }
            }
        }
    }

    /**
     * Two caches: on sm_90 the shorter one's plan merges its splits inside a thread-block cluster (no workspace), the
     * longer one's through a global workspace (partials and counters), so both kinds of kept plan are run again.
     */
    @Test void aRepeatedDecodeRunsTheKeptPlanAndMatchesAHeldPlanBitForBit() {
        boolean sawWorkspace = false;
        for (int cap : new int[] {1500, 8192}) {
            sawWorkspace |= repeatedDecode(cap, new Random(16 + cap));
            Resources.release(GPU);
        }
        assertTrue(sawWorkspace, "one of the two plans holds a workspace (the global merge was exercised)");
    }

    /** Runs decode five times on one problem; returns whether its plan holds device workspace. */
    private static boolean repeatedDecode(int cap, Random r) {
        int b = 2, hq = 8, hkv = 2, d = 128;
        CudaDevice dev = Gpu.device(GPU);
        GqaDecode.Options o = GqaDecode.Options.defaults().withBackend(Backend.CUSTOM);
        try (Tensor q = Poison.random(GPU, DType.F16, r, b, hq, d); Tensor k = Poison.random(GPU, DType.F16, r, b, hkv, cap, d);
             Tensor v = Poison.random(GPU, DType.F16, r, b, hkv, cap, d); Tensor lens = Tensor.ofInts(GPU, new int[] {cap, 1}, b);
             Tensor got = Poison.poisoned(GPU, DType.F16, b, hq, d); Tensor want = Poison.poisoned(GPU, DType.F16, b, hq, d)) {
            GqaDecode.KvCache cache = GqaDecode.KvCache.bhld(k, v);
            GqaDecode.Problem problem = GqaDecode.Problem.of(q, cache);
            long beforeHeld = dev.liveAllocations();
            try (GqaDecodePlan held = GqaDecode.plan(problem, GPU, o, null)) {
                long planAllocations = dev.liveAllocations() - beforeHeld;
                assertEquals(held.workspaceBytes() > 0, planAllocations > 0,
                        "cap " + cap + ": a plan allocates exactly when it holds workspace (" + held.workspaceBytes() + " B)");
                for (int it = 0; it < 5; it++) {
                    int[] l = {1 + r.nextInt(cap), it == 2 ? 0 : 1 + r.nextInt(cap)};
                    lens.copyFrom(l);
                    Poison.fill(got);
                    Poison.fill(want);
                    long before = dev.liveAllocations();
                    GqaDecode.decode(q, cache, lens, got, null, o, null);
                    long made = dev.liveAllocations() - before;
                    if (it == 0) {
                        assertEquals(planAllocations, made, "cap " + cap + ": the first call makes a plan like the held one");
                        assertEquals(1, (int) Resources.cacheSizes(GPU).get(GQA_CACHE), "cap " + cap + ": the first call keeps its plan");
                    } else {
                        assertEquals(0, made, "cap " + cap + ", call " + it + " allocates nothing and frees nothing");
                    }
                    held.run(q, cache, lens, want, null);
                    assertTrue(java.util.Arrays.equals(bytes(want), bytes(got)), "cap " + cap + ", call " + it + " lens "
                            + java.util.Arrays.toString(l) + ": the kept plan's output equals the held plan's, bit for bit");
                    assertTrue(!Poison.isPoisoned(got), "cap " + cap + ", call " + it + " wrote its output");
                }
                assertEquals(1, (int) Resources.cacheSizes(GPU).get(GQA_CACHE));
                return held.workspaceBytes() > 0;
            }
        }
    }

    private static byte[] bytes(Tensor t) {
        java.nio.ByteBuffer raw = t.toRaw();
        byte[] out = new byte[raw.limit()];
        raw.get(0, out);
        return out;
    }

    @Test void threadsThatEndLeaveTheirPlansToRelease() throws InterruptedException {
        Random r = new Random(14);
        try (Tensor ha = randomI8(r, 4, 1024); Tensor hw = randomI8(r, 512, 1024)) {
            Thread[] threads = new Thread[3];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            // every thread has run before any ends (a new thread's first call closes the plans of ended ones)
            CyclicBarrier allRan = new CyclicBarrier(threads.length);
            for (int t = 0; t < threads.length; t++) {
                threads[t] = new Thread(() -> {
                    try {
                        checkOnce(ha, hw, Backend.CUSTOM, null, Thread.currentThread().getName());
                        allRan.await();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                        allRan.reset();
                    }
                }, "one-shot-" + t);
                threads[t].start();
            }
            for (Thread t : threads) {
                t.join();
            }
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            assertTrue(kept() >= threads.length, "each ended thread left its plan: " + kept());
        }
        // releaseAfter: Resources.release closes them and the bytes come back
    }

    @Test void aPlanMadeWithoutAStreamRunsFromAnotherThreadAfterItsMakerEnded() throws InterruptedException {
        Random r = new Random(17);
        int m = 4, n = 512, k = 1024;
        try (Tensor ha = randomI8(r, m, k); Tensor hw = randomI8(r, n, k); Tensor a = ha.to(GPU); Tensor w = hw.to(GPU);
             Tensor out = Poison.poisoned(GPU, DType.I32, m, n)) {
            long[] acc = Int8MmReference.accumulate(ha, hw);
            Stream.releaseEndedThreads();
            int ended = Stream.endedThreadDefaultStreams();
            AtomicReference<Int8Mm.Plan> made = new AtomicReference<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread maker = new Thread(() -> {
                try {  // bound to the maker's default stream (no stream given)
                    made.set(Int8Mm.plan(a, w, Int8Mm.Options.int32().withBackend(Backend.CUSTOM), null));
                } catch (Throwable e) {
                    failure.set(e);
                }
            }, "plan-maker");
            maker.start();
            maker.join();
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            Stream.releaseEndedThreads();  // what the next new thread's first call does
            assertEquals(ended + 1, Stream.endedThreadDefaultStreams(), "the plan keeps its ended maker's default stream");
            try (Int8Mm.Plan plan = made.get()) {
                for (int it = 0; it < 2; it++) {
                    Poison.fill(out);
                    Stream.perThread(GPU).synchronize();  // the poison is written before the plan's stream runs
                    plan.run(a, w, Int8Mm.Options.int32(), out);
                    int[] got = out.toIntArray();
                    for (int i = 0; i < acc.length; i++) {
                        assertEquals(acc[i], got[i], "run " + it + " on the ended maker's stream, element " + i);
                    }
                }
            }
            Stream.releaseEndedThreads();
            assertEquals(ended, Stream.endedThreadDefaultStreams(), "the plan closed: its stream is released");
        }
    }
}
