package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Elementwise;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The foundation's harness check: scale_add at bandwidth-bound sizes. Its floor is 3·n·size bytes, so
 * fraction-of-floor near 1 proves the harness, the loader and the launch path add nothing.
 */
public final class ElementwiseBench implements BenchSuite {
    @Override public String op() { return "elementwise"; }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        Random rnd = new Random(1);
        long[] sizes = ctx.quick() ? new long[] {1L << 24} : new long[] {1L << 20, 1L << 24, 1L << 27};
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            if (!ctx.wants(dt)) {
                continue;  // bench --dtype
            }
            for (long n : sizes) {
                float[] hostA = new float[(int) n];
                float[] hostB = new float[(int) n];
                for (int i = 0; i < hostA.length; i++) {
                    hostA[i] = rnd.nextFloat() * 2 - 1;
                    hostB[i] = rnd.nextFloat() * 2 - 1;
                }
                try (Tensor a = Tensor.of(ctx.device(), dt, hostA, n); Tensor b = Tensor.of(ctx.device(), dt, hostB, n);
                     Tensor out = Tensor.empty(ctx.device(), dt, ctx.stream(), n)) {
                    out.fillBytes(0xff, ctx.stream());
                    Elementwise.scaleAdd(a, b, 0.5f, -2f, out, ctx.stream());
                    ctx.stream().synchronize();
                    Verdict v = checkAgainstReference(a, b, out);
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("custom", () -> Elementwise.scaleAdd(a, b, 0.5f, -2f, out, ctx.stream()));
                    Map<String, Timing> t = ctx.timeInterleaved(paths);
                    long bytes = 3 * n * dt.bytes();
                    Timing c = t.get("custom");
                    Map<String, double[]> spread = new LinkedHashMap<>();
                    spread.put("custom", new double[] {c.p10Us(), c.p90Us()});
                    rows.add(new BenchRow(op(), dt.name(), BenchRow.shape("n", n), "streaming", null, c.medianUs(), c.medianUs(),
                            "CUSTOM/vec16", ctx.floorUs(bytes, 2.0 * n, 0), bytes, 2.0 * n, Map.of(), spread,
                            new BenchRow.Check("reference", v.bitExact(), v.maxUlp(), v.maxRelErr(), v.pass())));
                    ctx.progress(String.format("elementwise %s n=%d: %.1f us (floor %.1f)", dt, n, c.medianUs(), ctx.floorUs(bytes, 0, 0)));
                }
            }
        }
        return rows;
    }

    /** Every element against the fp64 reference, with the bound of two fp32 roundings and one to the dtype. */
    static Verdict checkAgainstReference(Tensor a, Tensor b, Tensor out) {
        try (Tensor ha = a.to(Device.CPU); Tensor hb = b.to(Device.CPU)) {
            double[] ref = new double[(int) a.numel()];
            double[] scale = new double[ref.length];
            for (int i = 0; i < ref.length; i++) {
                ref[i] = 0.5 * ha.getDouble(i) - 2.0 * hb.getDouble(i);
                scale[i] = Math.abs(0.5 * ha.getDouble(i)) + Math.abs(2.0 * hb.getDouble(i));
            }
            return Verifier.compare(out, ref, scale, Tolerance.accumulation(out.dtype(), 2, 1), "reference");
        }
    }
}
