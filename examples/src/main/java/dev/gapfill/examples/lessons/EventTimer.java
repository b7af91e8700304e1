package dev.gapfill.examples.lessons;

import dev.gapfill.core.Device;
import dev.gapfill.core.Event;
import dev.gapfill.core.Stream;

/**
 * The lessons' stopwatch: CUDA events around {@code reps} back-to-back calls on the calling thread's default
 * stream, after {@code warmup} calls, giving the mean time per call. This is NOT the benchmark method: no L2
 * flush, no interleaving of paths, no spread, and host launch gaps count. docs/benchmarks.md describes how the
 * published numbers are measured ({@code gapfill bench}).
 */
final class EventTimer {
    private EventTimer() {}

    /** Mean microseconds per call of {@code call}, which must enqueue its work on the per-thread stream. */
    static double microsPerCall(Device device, int warmup, int reps, Runnable call) {
        if (!device.isCuda()) {
            throw new IllegalArgumentException("CUDA-event timing needs a CUDA device, got " + device);
        }
        for (int i = 0; i < warmup; i++) {
            call.run();
        }
        Stream s = Stream.perThread(device);
        try (Event start = new Event(device); Event end = new Event(device)) {
            start.record(s);
            for (int i = 0; i < reps; i++) {
                call.run();
            }
            end.record(s);
            return 1000.0 * end.elapsedMillisSince(start) / reps;
        }
    }
}
