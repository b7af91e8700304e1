package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Elementwise;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify}: each op on random problems (random data, poisoned outputs) through the
 * public API, every element against the fp64 reference. On the CPU the public API runs the reference
 * backend, so these checks exercise validation and the reference itself.
 */
public final class OpChecks {
    /** One op's random checks; returns descriptions of failures. */
    public interface OpCheck {
        String op();

        /** Cases 0 .. cases - 1 on the per-thread stream. */
        default List<String> run(Device device, Random rnd, int cases, PrintWriter out) {
            return run(device, rnd, 0, cases, out, null);
        }

        /** Cases 0 .. cases - 1 on {@code stream} (see the six-argument form). */
        default List<String> run(Device device, Random rnd, int cases, PrintWriter out, Stream stream) {
            return run(device, rnd, 0, cases, out, stream);
        }

        /**
         * Cases {@code firstCase} .. {@code firstCase + cases - 1} (a case's index picks its dtype, backend or layout
         * cyclically, so a caller running one case at a time passes a varying first case to reach them all), with the op
         * enqueued on {@code stream} (null: the per-thread stream), which other threads may share: inputs and poisoned
         * outputs are prepared on this thread's per-thread stream, which is drained before the op; reading an output back
         * waits for the stream the op ran on.
         */
        List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream);
    }

    /** Orders what this thread prepared on its per-thread stream before an op enqueued on {@code stream}. */
    static void beforeOp(Device device, Stream stream) {
        if (stream != null && device.isCuda()) {
            Stream.perThread(device).synchronize();
        }
    }

    private OpChecks() {}

    /** Prefix of a failure that is an exception thrown by a case, not a result that differs from the reference. */
    static final String ERROR = "error: ";

    /** The failure line of a case that threw {@code e} (the stress counts these as errors, not wrong results). */
    static String error(String what, RuntimeException e) {
        return ERROR + what + ": " + e;
    }

    /** Whether a failure line is an exception ({@link #error}) rather than a wrong result. */
    static boolean isError(String failure) {
        return failure.startsWith(ERROR);
    }

    static List<OpCheck> all() {
        List<OpCheck> l = new ArrayList<>();
        l.add(new ElementwiseCheck());
        l.add(new MoeRouteCheck());
        l.add(new Int8MmCheck());
        l.add(new BmmCheck());
        l.add(new DepthwiseConv3x3Check());
        l.add(new GqaDecodeCheck());
        l.add(new GroupedGemmCheck());
        // op checks register here, one line each
        return l;
    }

    static List<String> runAll(Device d, int cases, PrintWriter out) {
        List<String> failures = new ArrayList<>();
        for (OpCheck c : all()) {
            List<String> f = c.run(d, new Random(42), cases, out);
            out.println(String.format("  %-20s %d cases, %s", c.op(), cases, f.isEmpty() ? "pass" : f.size() + " FAILED"));
            out.flush();
            failures.addAll(f);
        }
        return failures;
    }

    static final class ElementwiseCheck implements OpCheck {
        @Override public String op() { return "elementwise"; }

        @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
            List<String> failures = new ArrayList<>();
            DType[] dts = {DType.F32, DType.F16, DType.BF16};
            for (int c = firstCase; c < firstCase + cases; c++) {
                DType dt = dts[c % dts.length];
                long n = 1 + rnd.nextInt(100_000);
                float[] x = new float[(int) n];
                float[] y = new float[(int) n];
                for (int i = 0; i < n; i++) {  // never exactly 0, nor a coefficient near 0: each operand counts
                    x[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
                    y[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
                }
                float alpha = (rnd.nextBoolean() ? 1 : -1) * (0.25f + rnd.nextFloat() * 3.75f);
                float beta = (rnd.nextBoolean() ? 1 : -1) * (0.25f + rnd.nextFloat() * 3.75f);
                try (Tensor a = Tensor.of(device, dt, x, n); Tensor b = Tensor.of(device, dt, y, n);
                     Tensor o = Tensor.empty(device, dt, n);
                     Tensor ha = Tensor.of(Device.CPU, dt, x, n); Tensor hb = Tensor.of(Device.CPU, dt, y, n)) {
                    o.fillBytes(0xff);
                    beforeOp(device, stream);
                    Elementwise.scaleAdd(a, b, alpha, beta, o, stream);
                    double[] exact = new double[(int) n];
                    double[] scale = new double[(int) n];
                    for (int i = 0; i < n; i++) {
                        exact[i] = alpha * ha.getDouble(i) + beta * hb.getDouble(i);
                        scale[i] = Math.abs(alpha * ha.getDouble(i)) + Math.abs(beta * hb.getDouble(i));
                    }
                    // two fp32 roundings before the output's: the accumulation bound with k = 2
                    Verdict v = Verifier.compare(o, exact, scale, Tolerance.accumulation(dt, 2, 1), "reference");
                    if (!v.pass()) {
                        failures.add("elementwise " + dt + " n=" + n + ": " + v);
                    }
                }
            }
            return failures;
        }
    }
}
