package dev.gapfill.examples.demo;

import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.Timing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Where the demo's layers run and how they are timed.
 *
 * @param device   cuda:0 or the CPU reference backend
 * @param stream   the stream every path runs on (null on the CPU)
 * @param bench    the GPU timing harness (CUDA events, L2 flush, interleaving, ceilings), null on the CPU
 * @param cpuReps  timed repetitions per path on the CPU
 * @param progress where progress lines go
 */
public record DemoEnv(Device device, Stream stream, BenchContext bench, int cpuReps, Consumer<String> progress) {
    /** Runs on {@code ctx}'s device and stream, timed by {@code ctx}. */
    public static DemoEnv gpu(BenchContext ctx) {
        return new DemoEnv(ctx.device(), ctx.stream(), ctx, 0, ctx::progress);
    }

    /** Runs on the CPU reference backend, timed by the wall clock. */
    public static DemoEnv cpu(int reps, Consumer<String> progress) {
        return new DemoEnv(Device.CPU, null, null, reps, progress);
    }

    public boolean onGpu() { return bench != null; }

    /** Waits for everything queued on the stream (nothing to wait for on the CPU). */
    public void sync() {
        if (stream != null) {
            stream.synchronize();
        }
    }

    /**
     * Runs every path round-robin, untimed, until each has run {@value #WARM_UP_CALLS} times or {@value #WARM_UP_MILLIS} ms
     * have passed (GPU only), then waits for the device: the host code that enqueues each path is then compiled by the
     * JIT, as in a service that has been running, instead of interpreted, as in a fresh process.
     */
    public void warmUp(LinkedHashMap<String, Runnable> paths) {
        if (bench == null) {
            return;
        }
        long deadline = System.nanoTime() + WARM_UP_MILLIS * 1_000_000L;
        for (int i = 0; i < WARM_UP_CALLS && System.nanoTime() < deadline; i++) {
            paths.values().forEach(Runnable::run);
            if (i % 16 == 15) {
                sync();  // keep the queue short
            }
        }
        sync();
    }

    /** Untimed calls per path before timing (the JVM compiles a method after a few hundred to a few thousand calls). */
    public static final int WARM_UP_CALLS = 500;
    /** The most time the warm-up of one row may take. */
    public static final long WARM_UP_MILLIS = 4000;

    /**
     * Times each path: on the GPU with {@link BenchContext#timeInterleaved} (CUDA events, L2 flushed before each run);
     * on the CPU by the wall clock, interleaved the same way after one untimed round.
     */
    public Map<String, Timing> time(LinkedHashMap<String, Runnable> paths) {
        if (bench != null) {
            return bench.timeInterleaved(paths);
        }
        List<String> names = new ArrayList<>(paths.keySet());
        names.forEach(n -> paths.get(n).run());
        double[][] us = new double[names.size()][cpuReps];
        for (int r = 0; r < cpuReps; r++) {
            for (int i = 0; i < names.size(); i++) {
                long t0 = System.nanoTime();
                paths.get(names.get(i)).run();
                us[i][r] = (System.nanoTime() - t0) / 1e3;
            }
        }
        Map<String, Timing> out = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            out.put(names.get(i), Timing.of(us[i]));
        }
        return out;
    }
}
