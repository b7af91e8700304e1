package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Int8Mm;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for int8_mm: random shapes (M up to 130, across the custom/vendor boundary at 64; N
 * up to 300; K a multiple of 16 up to 1024), random output dtype, scale kind, bias and backend, outputs
 * poisoned; every element against exact int64 sums and the fp64 dequantization computed here, bit-exact
 * (docs/ops/int8_mm.md gives the policy). On the CPU the public API runs the reference backend.
 */
public final class Int8MmCheck implements OpChecks.OpCheck {
    @Override public String op() { return "int8_mm"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        DType[] outs = {DType.I32, DType.F32, DType.F16, DType.BF16};
        for (int c = firstCase; c < firstCase + cases; c++) {
            int m = 1 + rnd.nextInt(130);
            int n = 1 + rnd.nextInt(300);
            int k = 16 * (1 + rnd.nextInt(64));
            DType dt = outs[c % outs.length];
            boolean perToken = rnd.nextBoolean();
            boolean withBias = rnd.nextBoolean();
            Backend be = m <= 64 ? new Backend[] {Backend.AUTO, Backend.VENDOR, Backend.CUSTOM}[rnd.nextInt(3)]
                    : rnd.nextBoolean() ? Backend.AUTO : Backend.VENDOR;
            byte[] av = bytes(rnd, m * k);
            byte[] wv = bytes(rnd, n * k);
            float[] as = floats(rnd, perToken ? m : 1);
            float[] ws = floats(rnd, perToken ? n : 1);
            float[] bs = new float[n];
            for (int j = 0; j < n; j++) {
                bs[j] = rnd.nextFloat() * 20 - 10;
            }
            try (Tensor a = Tensor.ofBytes(device, av, m, k); Tensor w = Tensor.ofBytes(device, wv, n, k);
                 Tensor tAs = Tensor.of(device, DType.F32, as, as.length); Tensor tWs = Tensor.of(device, DType.F32, ws, ws.length);
                 Tensor tB = Tensor.of(device, DType.F32, bs, n); Tensor o = Tensor.empty(device, dt, m, n)) {
                o.fillBytes(dt == DType.I32 ? 0x80 : 0xff);  // NaN; for I32 -2139062144, below any int8 sum (-1 is one)
                Int8Mm.Options opt = dt == DType.I32 ? Int8Mm.Options.int32()
                        : withBias ? Int8Mm.Options.dequantized(dt, tAs, tWs).withBias(tB) : Int8Mm.Options.dequantized(dt, tAs, tWs);
                OpChecks.beforeOp(device, stream);
                Int8Mm.mm(a, w, opt.withBackend(be), o, stream);
                double[] exact = new double[m * n];
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        long s = 0;
                        for (int q = 0; q < k; q++) {
                            s += av[i * k + q] * wv[j * k + q];
                        }
                        if (dt == DType.I32) {
                            exact[i * n + j] = s;
                        } else {
                            double v = s * ((double) as[perToken ? i : 0] * (double) ws[perToken ? j : 0]);
                            exact[i * n + j] = withBias ? v + bs[j] : v;
                        }
                    }
                }
                Verdict v = Verifier.compare(o, exact, null, Tolerance.bitExact(), "reference");
                if (!v.pass()) {
                    failures.add("int8_mm " + be + " M=" + m + " N=" + n + " K=" + k + " " + dt + (perToken ? " per-token" : " scalar")
                            + (withBias ? "+bias" : "") + ": " + v);
                }
            } catch (RuntimeException e) {
                failures.add(OpChecks.error("int8_mm " + be + " M=" + m + " N=" + n + " K=" + k + " " + dt, e));
            }
        }
        return failures;
    }

    private static byte[] bytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private static float[] floats(Random r, int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = 1e-3f + 5e-2f * r.nextFloat();
        }
        return f;
    }
}
