package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.bench.HostTensors;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmHeuristics;
import dev.gapfill.ops.BmmShape;
import dev.gapfill.ops.reference.BmmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for bmm: random problems (sizes 1..160 so both sides of the custom kernels'
 * 128 limit appear, every dtype, transposes, shared B) through the public API with the output poisoned,
 * cycling AUTO, CUSTOM (where it applies) and VENDOR on a GPU; every element against the fp64 reference
 * with {@code Tolerance.accumulation(dtype, k, 2)} (tensor cores) or growth 1 (F32 FFMA). On the CPU the
 * API runs the reference itself, so the check covers validation and the reference.
 */
public final class BmmCheck implements OpChecks.OpCheck {
    @Override public String op() { return "bmm"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        DType[] dts = {DType.F16, DType.BF16, DType.F32};
        for (int c = firstCase; c < firstCase + cases; c++) {
            DType dt = dts[c % dts.length];
            int m = size(rnd);
            int n = size(rnd);
            int k = size(rnd);
            int batch = 1 + rnd.nextInt((int) Math.max(1, Math.min(64, 2_000_000L / ((long) m * n * k))));
            boolean ta = rnd.nextBoolean();
            boolean tb = rnd.nextBoolean();
            boolean shared = rnd.nextInt(4) == 0;
            Backend backend = new Backend[] {Backend.AUTO, Backend.CUSTOM, Backend.VENDOR}[(c / dts.length) % 3];
            BmmShape shape = BmmShape.of(dt, batch, m, n, k).withTransposes(ta, tb).withSharedB(shared);
            if (backend == Backend.CUSTOM && (device.isCpu()
                    || BmmHeuristics.customUnsupportedReason(shape, Gpu.device(device).info()) != null)) {
                backend = Backend.AUTO;
            }
            long[] aShape = ta ? new long[] {batch, k, m} : new long[] {batch, m, k};
            long[] bInner = tb ? new long[] {n, k} : new long[] {k, n};
            long[] bShape = shared ? bInner : new long[] {batch, bInner[0], bInner[1]};
            try (Tensor ha = random(dt, rnd, aShape); Tensor hb = random(dt, rnd, bShape);
                 Tensor a = ha.to(device); Tensor b = hb.to(device); Tensor o = Tensor.empty(device, dt, batch, m, n)) {
                o.fillBytes(0xff);
                Bmm.Options opts = Bmm.Options.defaults().transposes(ta, tb).backend(backend);
                OpChecks.beforeOp(device, stream);
                Bmm.bmm(a, b, o, opts, stream);
                BmmReference.Result ref = BmmReference.exact(ha, hb, ta, tb);
                Verdict v = Verifier.compare(o, ref.exact(), ref.absSum(), Tolerance.accumulation(dt, k, dt == DType.F32 ? 1 : 2), "reference");
                if (!v.pass()) {
                    failures.add("bmm " + shape + " " + backend + ": " + v);
                }
            }
        }
        return failures;
    }

    private static int size(Random rnd) {
        int[] edges = {1, 7, 16, 17, 32, 48, 64, 97, 128, 129};
        return rnd.nextInt(3) == 0 ? edges[rnd.nextInt(edges.length)] : 1 + rnd.nextInt(160);
    }

    private static Tensor random(DType dt, Random rnd, long... shape) {
        return HostTensors.uniform(dt, rnd, shape);
    }
}
