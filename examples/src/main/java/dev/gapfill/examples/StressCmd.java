package dev.gapfill.examples;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Resources;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.examples.bench.Json;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Concurrency stress: N threads, each on its own per-thread stream, issue random ops (every op's
 * {@code gapfill verify} check: random shapes, poisoned outputs, every element against the reference)
 * for the given time; plus N threads sharing one explicit stream. Reports ops, wrong results (a result that differs from the reference), errors (an op whose case threw)
 * and memory at three points: the baseline before the run, after the run (caches and forgotten tensors
 * still held), and after {@link Resources#release} (unreachable tensors freed, op caches emptied, the
 * ended threads' vendor handles destroyed, device synchronized). The last must equal the baseline.
 */
@Command(name = "stress", description = "Multi-threaded random-op stress with every result checked; writes a JSON report.")
final class StressCmd implements java.util.concurrent.Callable<Integer> {
    /**
     * First cases are drawn from [0, CASE_CYCLE): a multiple of every check's cycle of dtypes, backends and layouts
     * (bmm 3 × 3, depthwise 3 × 2, gqa 2 and 3, grouped and int8 their lists), so each combination comes up equally often.
     */
    static final int CASE_CYCLE = 360;
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    @Option(names = "--seconds", description = "duration of each phase (default 60)") int seconds = 60;
    @Option(names = "--threads", description = "threads (default 8)") int threads = 8;
    @Option(names = "--out", description = "JSON report file") Path out;

    @Override public Integer call() throws Exception {
        PrintWriter o = spec.commandLine().getOut();
        if (!Gpu.available()) {
            o.println("No usable GPU (" + Gpu.status().reason() + "): the stress test needs one.");
            o.flush();
            return 1;
        }
        Map<String, Object> report = run(Device.cuda(0), seconds, threads, o);
        if (out != null) {
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, Json.write(report), StandardCharsets.UTF_8);
        }
        o.println(Json.write(report));
        o.flush();
        return ((Number) report.get("ops")).longValue() > 0  // a run that checked nothing (--seconds 0, --threads 0) proves nothing
                && ((Number) report.get("wrong_results")).longValue() == 0 && ((Number) report.get("errors")).longValue() == 0
                && Boolean.TRUE.equals(report.get("memory_back_to_baseline")) ? 0 : 1;
    }

    static Map<String, Object> run(Device gpu, int seconds, int threads, PrintWriter log) throws InterruptedException {
        CudaDevice dev = Gpu.device(gpu);
        Resources.release(gpu);  // the baseline: what the process holds with nothing left to release
        Map<String, Object> before = memory(dev);
        AtomicLong ops = new AtomicLong();
        AtomicLong wrong = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicLong sharedOps = new AtomicLong();
        List<String> firstProblems = java.util.Collections.synchronizedList(new ArrayList<>());
        long t0 = System.nanoTime();
        // Phase 1: each thread on its own (per-thread default) stream, every registered op check.
        phase(threads, seconds, (rnd, deadline) -> {
            List<OpChecks.OpCheck> checks = OpChecks.all();
            while (System.nanoTime() < deadline) {
                OpChecks.OpCheck c = checks.get(rnd.nextInt(checks.size()));
                // a random first case: each case index picks the dtype, backend or layout (case 0 alone was one of each)
                List<String> f = runCounted(c, gpu, rnd, null, errors, firstProblems, "");
                ops.incrementAndGet();
                count(f, wrong, errors, firstProblems, "");
            }
        }, errors, firstProblems);
        // Phase 2: threads sharing one explicit stream: every registered op check again, each op enqueued on the shared
        // stream (inputs prepared on the thread's own stream first), so ops of different threads interleave on it.
        try (Stream shared = Stream.create(gpu)) {
            phase(threads, Math.max(1, seconds / 2), (rnd, deadline) -> {
                List<OpChecks.OpCheck> checks = OpChecks.all();
                while (System.nanoTime() < deadline) {
                    OpChecks.OpCheck c = checks.get(rnd.nextInt(checks.size()));
                    List<String> f = runCounted(c, gpu, rnd, shared, errors, firstProblems, "shared stream: ");
                    ops.incrementAndGet();
                    sharedOps.incrementAndGet();
                    count(f, wrong, errors, firstProblems, "shared stream: ");
                }
            }, errors, firstProblems);
        }
        double elapsed = (System.nanoTime() - t0) / 1e9;
        dev.synchronize();
        Map<String, Object> afterRun = memory(dev);
        Resources.Report released = Resources.release(gpu);
        Map<String, Object> afterRelease = memory(dev);
        boolean baseline = afterRelease.get("gapfill_bytes_in_use").equals(before.get("gapfill_bytes_in_use"))
                && afterRelease.get("pool_used_bytes").equals(before.get("pool_used_bytes"))
                && afterRelease.get("live_owned_tensors").equals(before.get("live_owned_tensors"))
                && ((Number) afterRelease.get("dead_thread_handles")).longValue() == 0
                && ((Number) afterRelease.get("op_cache_entries")).longValue() == 0
                && released.unreachableTensorsFreed() == 0;  // a leaked tensor freed by the release is not a baseline
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("gpu", dev.info().name());
        r.put("commit", System.getenv().getOrDefault("GAPFILL_COMMIT", "unknown"));
        r.put("threads", threads);
        r.put("seconds", elapsed);
        r.put("ops", ops.get());
        r.put("ops_on_shared_stream", sharedOps.get());
        r.put("wrong_results", wrong.get());
        r.put("errors", errors.get());
        r.put("checks", OpChecks.all().stream().map(OpChecks.OpCheck::op).toList());
        Map<String, Object> mem = new LinkedHashMap<>();
        mem.put("before", before);
        mem.put("after_run", afterRun);
        mem.put("after_release", afterRelease);
        Map<String, Object> rel = new LinkedHashMap<>();
        rel.put("unreachable_tensors_freed", released.unreachableTensorsFreed());
        rel.put("op_cache_entries_released", released.cacheEntriesReleased());
        rel.put("dead_thread_handles_destroyed", released.deadThreadHandles());
        rel.put("cublaslt_handles_destroyed", released.cublasLtHandles());
        mem.put("release", rel);
        mem.put("criterion", "before is taken after a release; after_release equals before in gapfill_bytes_in_use, pool_used_bytes and live_owned_tensors, "
                + "with no dead-thread handle and no op-cache entry left, and the release freed no forgotten tensor (a leak); "
                + "driver_used_bytes is informational (context, "
                + "loaded modules and the live threads' handles)");
        r.put("memory", mem);
        r.put("memory_back_to_baseline", baseline);
        r.put("problems", firstProblems);
        log.flush();
        return r;
    }

    /** What Gapfill holds on {@code dev} now, and what the driver reports in use. */
    static Map<String, Object> memory(CudaDevice dev) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("gapfill_bytes_in_use", dev.bytesInUse());
        m.put("gapfill_live_allocations", dev.liveAllocations());
        m.put("pool_used_bytes", dev.poolUsedBytes());
        m.put("pool_reserved_bytes", dev.poolReservedBytes());
        m.put("live_owned_tensors", Tensor.liveOwnedTensors());
        m.put("per_thread_vendor_handles", VendorHandles.perThreadHandles());
        m.put("dead_thread_handles", VendorHandles.deadThreadHandles());
        m.put("op_cache_entries", Resources.cacheSizes(dev.device()).values().stream().mapToInt(Integer::intValue).sum());
        long[] info = dev.memInfo();
        m.put("driver_used_bytes", info[1] - info[0]);
        return m;
    }

    /**
     * Counts one op's failures: an op whose case threw ({@link OpChecks#isError}) is an error, one whose result differs
     * from the reference a wrong result (an op with both counts as wrong: its result was judged and differed).
     */
    static void count(List<String> failures, AtomicLong wrong, AtomicLong errors, List<String> problems, String prefix) {
        if (failures.isEmpty()) {
            return;
        }
        if (failures.stream().allMatch(OpChecks::isError)) {
            errors.incrementAndGet();
        } else {
            wrong.incrementAndGet();
        }
        note(problems, prefix + failures.get(0));
    }

    /** Keeps the first five problems (threads add at once: the check and the add under the list's lock). */
    static void note(List<String> problems, String problem) {
        synchronized (problems) {
            if (problems.size() < 5) {
                problems.add(problem);
            }
        }
    }

    /**
     * One op check; what it throws is counted as an error of that op and the thread goes on (a read-only review,
     * fiftieth session: a check that threw ended its thread for the rest of the phase, the report still naming every
     * thread, so later failures on it were never tried). Returns the check's failures, none where it threw.
     */
    static List<String> runCounted(OpChecks.OpCheck c, Device gpu, Random rnd, Stream stream, AtomicLong errors,
                                   List<String> problems, String prefix) {
        try {
            return c.run(gpu, new Random(rnd.nextLong()), rnd.nextInt(CASE_CYCLE), 1, new PrintWriter(new StringWriter()), stream);
        } catch (Throwable e) {
            errors.incrementAndGet();
            note(problems, prefix + c.op() + ": " + e);
            return List.of();
        }
    }

    interface Body {
        void run(Random rnd, long deadlineNanos) throws Exception;
    }

    private static void phase(int threads, int seconds, Body body, AtomicLong errors, List<String> problems) throws InterruptedException {
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        List<Thread> ts = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 1000L + t;
            Thread th = new Thread(() -> {
                try {
                    body.run(new Random(seed), deadline);
                } catch (Throwable e) {
                    errors.incrementAndGet();
                    note(problems, e.toString());
                }
            }, "gapfill-stress-" + t);
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
    }
}
