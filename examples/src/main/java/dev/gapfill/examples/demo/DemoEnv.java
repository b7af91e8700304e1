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
