package dev.gapfill.examples.lessons;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmHeuristics;
import dev.gapfill.ops.BmmShape;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.reference.BmmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Lesson 02 — many small matrix products in one call: {@code C[b] = A[b] · B[b]}, A: [batch, m, k],
 * B: [batch, k, n], C: [batch, m, n].
 *
 * <ol>
 *   <li>Ask before running: {@link Bmm#decide} returns the {@link Decision} (backend, kernel variant, and the
 *   benchmark row behind it) without launching anything.</li>
 *   <li>Force a backend per call with {@code Options.backend(VENDOR | CUSTOM)}; forcing CUSTOM on a shape its
 *   kernels do not take throws {@link UnsupportedShapeException} instead of falling back silently.</li>
 *   <li>Check every path against the fp64 reference with verify's {@link Verifier}: the products are summed
 *   in an order cuBLAS and the tensor cores do not define, so the rule is the accumulation bound
 *   {@code Tolerance.accumulation(F16, k, 2)} (docs/verification.md), not bit equality.</li>
 *   <li>On a GPU, time each path with CUDA events ({@link EventTimer}: a lesson's stopwatch, not the benchmark
 *   method of docs/benchmarks.md).</li>
 * </ol>
 * The heuristics are pure functions of the shape and a {@link DeviceInfo}, so the lesson also asks what an H100
 * would run, which works without a GPU.
 */
public final class L02Bmm {
    private L02Bmm() {}

    /**
     * What the lesson checked and measured.
     *
     * @param device        where it ran
     * @param decision      what AUTO chose for the lesson's problem on this device
     * @param verdicts      each backend that ran, against the reference
     * @param microsPerCall CUDA-event time per call for each backend (empty on the CPU)
     * @param h100Small     AUTO on an H100 for the lesson's shape (pure heuristics)
     * @param h100Large     AUTO on an H100 for 160³ matrices, beyond the custom kernels' 128 limit
     * @param customRefusal the message of forcing CUSTOM on the 160³ shape
     */
    public record Result(Device device, Decision decision, Map<Backend, Verdict> verdicts, Map<Backend, Double> microsPerCall,
                         Decision h100Small, Decision h100Large, String customRefusal) {
        /** True when every backend that ran passed. */
        public boolean allPass() { return !verdicts.isEmpty() && verdicts.values().stream().allMatch(Verdict::pass); }
    }

    // The problem: 1024 independent 32x32 products, e.g. one per (sequence, head) of a small attention block.
    public static final DType DTYPE = DType.F16;
    public static final long BATCH = 1024;
    public static final long M = 32;
    public static final long N = 32;
    public static final long K = 32;

    public static void main(String[] args) {
        Result r = run(Device.best(), System.out);
        if (!r.allPass()) {
            throw new IllegalStateException("lesson check failed: " + r.verdicts());
        }
        System.out.println("02_bmm: OK");
    }

    public static Result run(Device dev, PrintStream out) {
        out.printf(Locale.ROOT, "02_bmm on %s%s: %s batch=%d m=%d n=%d k=%d%n", dev,
                dev.isCpu() ? " (CPU reference backend)" : "", DTYPE, BATCH, M, N, K);
        Random rnd = new Random(2);
        Map<Backend, Verdict> verdicts = new EnumMap<>(Backend.class);
        Map<Backend, Double> times = new EnumMap<>(Backend.class);
        Decision decision;
        // Inputs are made on the host (so the reference can read them), then copied to the device.
        try (Tensor hostA = Poison.random(Device.CPU, DTYPE, rnd, BATCH, M, K);
             Tensor hostB = Poison.random(Device.CPU, DTYPE, rnd, BATCH, K, N);
             Tensor a = hostA.to(dev); Tensor b = hostB.to(dev)) {
            // 1. What would AUTO run? On the CPU the answer is always the reference.
            decision = Bmm.decide(a, b, Bmm.Options.defaults());
            out.println("  AUTO decides: " + decision);

            // 2. The exact answer, and the rule a correct result must meet.
            BmmReference.Result ref = BmmReference.exact(hostA, hostB, false, false);
            Tolerance tol = Tolerance.accumulation(DTYPE, K, 2);

            // 3. Run AUTO, then each forced backend the shape allows, into an output poisoned with NaN.
            for (Backend backend : backendsToTry(dev, a, b)) {
                Bmm.Options opts = Bmm.Options.defaults().backend(backend);
                try (Tensor c = Poison.poisoned(dev, DTYPE, BATCH, M, N)) {
                    Bmm.bmm(a, b, c, opts, null);
                    Verdict v = Verifier.compare(c, ref.exact(), ref.absSum(), tol, "fp64 reference");
                    verdicts.put(backend, v);
                    out.println("  " + backend + ": " + v);
                    if (dev.isCuda()) {
                        double us = EventTimer.microsPerCall(dev, 5, 50, () -> Bmm.bmm(a, b, c, opts, null));
                        times.put(backend, us);
                        out.printf(Locale.ROOT, "    %.1f us per call, %.0f GFLOP/s (CUDA events, mean of 50; not the benchmark method)%n",
                                us, 2.0 * BATCH * M * N * K / us / 1e3);
                    }
                }
            }
        }
        if (dev.isCpu()) {
            out.println("  (on the CPU the op IS the reference: this checks the API, the rounding and the verifier; "
                    + "the GPU paths are checked the same way on a GPU host)");
        }

        // 4. The heuristics without a GPU: what an H100 would run, and what forcing CUSTOM past its limit does.
        DeviceInfo h100 = DeviceInfo.h100ForTests();
        Decision small = Bmm.decide(BmmShape.of(DTYPE, BATCH, M, N, K), h100, Backend.AUTO);
        BmmShape large = BmmShape.of(DTYPE, BATCH, 160, 160, 160);
        Decision big = Bmm.decide(large, h100, Backend.AUTO);
        out.println("  on an H100, AUTO would run " + small);
        out.println("  on an H100, 160^3 matrices go to " + big);
        String refusal = null;
        try {
            Bmm.decide(large, h100, Backend.CUSTOM);
        } catch (UnsupportedShapeException e) {
            refusal = e.getMessage();
            out.println("  forcing CUSTOM on 160^3 throws UnsupportedShapeException: " + refusal);
        }
        return new Result(dev, decision, verdicts, times, small, big, refusal);
    }

    /** AUTO always; on a GPU also VENDOR, and CUSTOM when the custom kernels take the shape on this device. */
    private static List<Backend> backendsToTry(Device dev, Tensor a, Tensor b) {
        List<Backend> list = new ArrayList<>(List.of(Backend.AUTO));
        if (dev.isCuda()) {
            list.add(Backend.VENDOR);
            BmmShape s = Bmm.validate(a, b, null, Bmm.Options.defaults());
            if (BmmHeuristics.customUnsupportedReason(s, Gpu.device(dev).info()) == null) {
                list.add(Backend.CUSTOM);
            }
        }
        return list;
    }
}
