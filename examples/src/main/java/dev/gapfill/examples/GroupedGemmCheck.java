package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.bench.HostTensors;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GroupedGemm.Options;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.reference.GroupedGemmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for the grouped GEMM: random MoE-like problems (random routing with empty groups,
 * gather, SwiGLU, row scale, both weight layouts, F16/BF16) through the public API, the backend cycling
 * AUTO, CUSTOM, VENDOR on a GPU, outputs poisoned, every element against the fp64 reference with
 * {@code Tolerance.accumulation(dtype, K, 2)} carried through the epilogue by {@code Result.errorScale}.
 */
public final class GroupedGemmCheck implements OpChecks.OpCheck {
    @Override public String op() { return "grouped_gemm"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        Backend[] backends = {Backend.AUTO, Backend.CUSTOM, Backend.VENDOR};
        for (int c = firstCase; c < firstCase + cases; c++) {
            DType dt = rnd.nextBoolean() ? DType.F16 : DType.BF16;
            WeightLayout layout = rnd.nextBoolean() ? WeightLayout.KN : WeightLayout.NK;
            int groups = 1 + rnd.nextInt(16);
            int rows = 1 + rnd.nextInt(300);
            int k = 8 * (1 + rnd.nextInt(32));
            int n = 16 * (1 + rnd.nextInt(16));
            boolean swiglu = rnd.nextBoolean();
            boolean gather = rnd.nextBoolean();
            boolean scaled = rnd.nextBoolean();
            Backend backend = device.isCpu() ? Backend.AUTO : backends[c % backends.length];
            int xRows = gather ? 1 + rnd.nextInt(rows + 5) : rows;
            int[] off = new int[groups + 1];
            int[] cnt = new int[groups];
            for (int r = 0; r < rows; r++) {
                cnt[rnd.nextInt(Math.max(1, groups - groups / 3))]++;  // the last third of the groups stays empty
            }
            for (int g = 0; g < groups; g++) {
                off[g + 1] = off[g] + cnt[g];
            }
            int[] gi = null;
            if (gather) {
                gi = new int[rows];
                for (int r = 0; r < rows; r++) {
                    gi[r] = rnd.nextInt(xRows);
                }
            }
            float[] sc = null;
            double[] scd = null;
            if (scaled) {
                sc = new float[rows];
                scd = new double[rows];
                for (int r = 0; r < rows; r++) {
                    sc[r] = rnd.nextFloat() * 2 - 1;
                    scd[r] = sc[r];
                }
            }
            long[] wShape = layout == WeightLayout.KN ? new long[] {groups, k, n} : new long[] {groups, n, k};
            try (Tensor hx = random(rnd, dt, xRows, k); Tensor hw = random(rnd, dt, wShape);
                 Tensor x = hx.to(device); Tensor w = hw.to(device); Tensor o = Tensor.ofInts(device, off, groups + 1);
                 Tensor g = gi == null ? null : Tensor.ofInts(device, gi, rows);
                 Tensor s = sc == null ? null : Tensor.of(device, DType.F32, sc, rows);
                 Tensor y = Tensor.empty(device, dt, rows, swiglu ? n / 2 : n)) {
                y.fillBytes(0xff);
                Options opt = Options.builder().layout(layout).gather(g).swiglu(swiglu).rowScale(s).backend(backend).build();
                OpChecks.beforeOp(device, stream);
                GroupedGemm.run(x, w, o, opt, y, stream);
                GroupedGemmReference.Result ref = GroupedGemmReference.compute(hx, hw, off, layout, gi, swiglu, scd);
                Tolerance tol = Tolerance.accumulation(dt, k, 2);
                Verdict v = Verifier.compare(y, ref.value(), ref.errorScale(tol.accTerm(), dt, false), tol, "reference");
                if (!v.pass()) {
                    failures.add(String.format("grouped_gemm %s G=%d T=%d K=%d N=%d %s %s%s%s%s: %s", backend, groups, rows, k, n, dt, layout,
                            swiglu ? " swiglu" : "", gather ? " gather" : "", scaled ? " scale" : "", v));
                }
            } catch (RuntimeException e) {
                failures.add(OpChecks.error("grouped_gemm " + backend + " G=" + groups + " T=" + rows + " K=" + k + " N=" + n, e));
            }
        }
        return failures;
    }

    private static Tensor random(Random rnd, DType dt, long... shape) {
        return HostTensors.uniform(dt, rnd, shape);
    }
}
