package dev.gapfill.examples.bench;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Int8Mm;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.FloatPointer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * int8_mm sweep (issue 5): M ∈ {1, 2, 4, 8, 16, 32, 64, 128} × (K, N) ∈ {(4096, 4096), (4096, 14336),
 * (14336, 4096), (8192, 8192), (8192, 28672), (2048, 5632)} × output ∈ {I32, F16, BF16}. Paths, interleaved:
 * VENDOR (cuBLASLt int8 TN, + the scaling pass for F16/BF16), CUSTOM (M ≤ 64), AUTO, and the peer
 * {@code f16_cublas}: cublasGemmEx with F16 inputs of the same shape, fp32 compute, F16 output — what a user
 * without int8 runs (its operands are filled with a constant, which does not change a memory-bound time).
 * Every path runs from a plan made before timing, so no timed call allocates. Floor: (K·N + M·K + M·N·out)
 * bytes over the measured copy bandwidth.
 *
 * <p>Check before timing: CUSTOM (or AUTO where no custom applies) against VENDOR, every element, bit-exact;
 * and VENDOR's int32 sums against exact int64 sums on 64 sampled elements (a full CPU reference of the large
 * shapes would take minutes; the GPU suite covers the full reference on smaller shapes).
 */
public final class Int8MmBench implements BenchSuite {
    private static final int[][] KN = {{4096, 4096}, {4096, 14336}, {14336, 4096}, {8192, 8192}, {8192, 28672}, {2048, 5632}};
    private static final int[] MS = {1, 2, 4, 8, 16, 32, 64, 128};

    @Override public String op() { return "int8_mm"; }

    @Override public boolean resumable() { return true; }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        Random rnd = new Random(5);
        Device dev = ctx.device();
        int[][] kns = ctx.quick() ? new int[][] {{4096, 4096}} : KN;
        int[] ms = ctx.quick() ? new int[] {1, 16, 64, 128} : MS;
        // bench --dtype filters the output dtype. The sweep has I32, F16 and BF16; F32 outputs run only when the
        // filter names F32 (bench --dtype F32), an A/B of AUTO's float rule for that output
        java.util.List<DType> outList = new java.util.ArrayList<>(ctx.quick() ? java.util.List.of(DType.I32, DType.F16)
                : java.util.List.of(DType.I32, DType.F16, DType.BF16));
        if (!ctx.dtypeFilter().isEmpty() && ctx.wants(DType.F32)) {
            outList.add(DType.F32);
        }
        DType[] outs = outList.stream().filter(ctx::wants).toArray(DType[]::new);
        if (outs.length == 0) {
            return rows;
        }
        for (int[] kn : kns) {
            int k = kn[0];
            int n = kn[1];
            byte[] hw = randomBytes(rnd, (long) n * k);
            try (Tensor w = Tensor.ofBytes(dev, hw, n, k); Tensor wh = Tensor.empty(dev, DType.F16, ctx.stream(), n, k);
                 Tensor ws = positive(dev, rnd, n); Tensor bias = positive(dev, rnd, n)) {
                wh.fillBytes(0x2c, ctx.stream()); // F16 0x2c2c ≈ 0.065 everywhere
                for (int m : ms) {
                    byte[] ha = randomBytes(rnd, (long) m * k);
                    try (Tensor a = Tensor.ofBytes(dev, ha, m, k); Tensor ah = Tensor.empty(dev, DType.F16, ctx.stream(), m, k);
                         Tensor ch = Tensor.empty(dev, DType.F16, ctx.stream(), m, n); Tensor as = positive(dev, rnd, m)) {
                        ah.fillBytes(0x2c, ctx.stream());
                        for (DType out : outs) {
                            if (ctx.done(op(), "I8->" + out.name(), "m", m, "k", k, "n", n)) {
                                continue;  // measured by an earlier run of this commit (bench --resume)
                            }
                            Int8Mm.Options o = out == DType.I32 ? Int8Mm.Options.int32() : Int8Mm.Options.dequantized(out, as, ws).withBias(bias);
                            rows.add(row(ctx, a, w, ah, wh, ch, ha, hw, o, m, n, k));
                        }
                    }
                }
            }
        }
        return rows;
    }

    private BenchRow row(BenchContext ctx, Tensor a, Tensor w, Tensor ah, Tensor wh, Tensor ch, byte[] ha, byte[] hw, Int8Mm.Options o,
                         int m, int n, int k) {
        DType out = o.out();
        boolean custom = m <= 64;
        try (Tensor vOut = Tensor.empty(ctx.device(), out, ctx.stream(), m, n); Tensor cOut = Tensor.empty(ctx.device(), out, ctx.stream(), m, n);
             Tensor aOut = Tensor.empty(ctx.device(), out, ctx.stream(), m, n);
             Int8Mm.Plan vendor = Int8Mm.plan(a, w, o.withBackend(Backend.VENDOR), ctx.stream());
             Int8Mm.Plan cust = custom ? Int8Mm.plan(a, w, o.withBackend(Backend.CUSTOM), ctx.stream()) : null;
             Int8Mm.Plan auto = Int8Mm.plan(a, w, o.withBackend(Backend.AUTO), ctx.stream());
             FloatPointer one = new FloatPointer(1f); FloatPointer zero = new FloatPointer(0f)) {
            // ---- correctness first: outputs poisoned, custom (or auto) vs vendor bit-exact, vendor vs exact sums
            int poison = vOut.dtype() == DType.I32 ? 0x80 : 0xff;  // NaN; for I32 -2139062144, which no int8 sum reaches (-1 can be one)
            vOut.fillBytes(poison, ctx.stream());
            cOut.fillBytes(poison, ctx.stream());
            aOut.fillBytes(poison, ctx.stream());
            vendor.run(a, w, o, vOut);
            auto.run(a, w, o, aOut);
            if (cust != null) {
                cust.run(a, w, o, cOut);
            }
            ctx.stream().synchronize();
            double[] vendorValues = vOut.toDoubleArray(); // exact: I32 read as ints, floats widened
            Verdict v = Verifier.compare(cust != null ? cOut : aOut, vendorValues, null, Tolerance.bitExact(), "vendor");
            Verdict va = Verifier.compare(aOut, vendorValues, null, Tolerance.bitExact(), "vendor");
            // the vendor's result against exact sums on 64 sampled elements, for every output dtype: above M = 64 AUTO runs the
            // vendor path itself, so the comparison above is the vendor with itself and this is the row's only check; a
            // float output still holding the NaN poison anywhere fails too (two NaNs compare as equal above)
            boolean sampled = out == DType.I32 ? sampledSumsMatch(vOut, ha, hw, m, n, k)
                    : noNaN(vendorValues) && sampledDequantMatch(vendorValues, out, ha, hw, o.aScale().toDoubleArray(),
                            o.wScale().toDoubleArray(), o.bias() == null ? null : o.bias().toDoubleArray(), m, n, k);
            boolean pass = v.pass() && va.pass() && sampled;

            // ---- timing, interleaved; vendor, custom and AUTO all write vOut (checked above into their own tensors), so
            // their columns differ only in the path, not in where the output lies (depthwise's sweep saw one kernel's
            // median move by up to 6 % with the output's address alone: docs/ops/depthwise_conv3x3.md)
            CudaDevice cd = Gpu.device(ctx.device());
            LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
            paths.put("vendor", () -> vendor.run(a, w, o, vOut));
            if (cust != null) {
                paths.put("custom", () -> cust.run(a, w, o, vOut));
            }
            paths.put("auto", () -> auto.run(a, w, o, vOut));
            paths.put("f16_cublas", () -> VendorHandles.checkBlas(cd, cublas.cublasGemmEx(VendorHandles.cublas(ctx.stream()), cublas.CUBLAS_OP_T,
                    cublas.CUBLAS_OP_N, n, m, k, one, new DevicePointer(wh.address()), cudart.CUDA_R_16F, k, new DevicePointer(ah.address()),
                    cudart.CUDA_R_16F, k, zero, new DevicePointer(ch.address()), cudart.CUDA_R_16F, n, cublas.CUBLAS_COMPUTE_32F,
                    cublas.CUBLAS_GEMM_DEFAULT), "cublasGemmEx(f16 peer)"));
            Map<String, Timing> t = ctx.timeInterleaved(paths);
            long bytes = (long) k * n + (long) m * k + (long) m * n * out.bytes();
            double flops = 2.0 * m * n * k;
            double floor = ctx.floorUs(bytes, flops, 0);
            Map<String, double[]> spread = new LinkedHashMap<>();
            t.forEach((name, tm) -> spread.put(name, new double[] {tm.p10Us(), tm.p90Us()}));
            Double customUs = cust != null ? t.get("custom").medianUs() : null;
            String regime = m <= 8 ? "m<=8" : m <= 16 ? "m<=16" : m <= 64 ? "m<=64" : "m>64";
            BenchRow row = new BenchRow(op(), "I8->" + out.name(), BenchRow.shape("m", m, "k", k, "n", n), regime, t.get("vendor").medianUs(),
                    customUs, t.get("auto").medianUs(), auto.decision().backend() + "/" + auto.decision().variant(), floor, bytes, flops,
                    Map.of("f16_cublas", t.get("f16_cublas").medianUs()), spread,
                    new BenchRow.Check(out == DType.I32 ? "vendor+sampled-exact-sums" : "vendor+sampled-exact-sums-scaled", v.bitExact() && va.bitExact(),
                            Math.max(v.maxUlp(), va.maxUlp()), Math.max(v.maxRelErr(), va.maxRelErr()), pass));
            ctx.progress(String.format("int8_mm M=%d K=%d N=%d %s: vendor %.1f, custom %s, auto %.1f (%s), f16 %.1f, floor %.1f us, check %s", m, k, n,
                    out, t.get("vendor").medianUs(), customUs == null ? "-" : String.format("%.1f", customUs), t.get("auto").medianUs(),
                    auto.decision().backend(), t.get("f16_cublas").medianUs(), floor, pass ? "pass" : "FAIL"));
            return row;
        }
    }

    /** The vendor's int32 result against exact int64 dot products on 64 sampled elements. */
    private static boolean sampledSumsMatch(Tensor vOut, byte[] ha, byte[] hw, int m, int n, int k) {
        int[] got = vOut.toIntArray();
        Random r = new Random(m * 31L + n);
        for (int s = 0; s < 64; s++) {
            int i = r.nextInt(m);
            int j = r.nextInt(n);
            long sum = exactSum(ha, hw, i, j, k);
            if (sum != got[i * n + j]) {
                return false;
            }
        }
        return true;
    }

    /** The exact dot product of row {@code i} of A and row {@code j} of W (both [·, k], int8). */
    private static long exactSum(byte[] ha, byte[] hw, int i, int j, int k) {
        long sum = 0;
        for (int q = 0; q < k; q++) {
            sum += ha[i * k + q] * hw[(int) ((long) j * k + q)];
        }
        return sum;
    }

    /** Whether no element is NaN (the float outputs' poison). */
    static boolean noNaN(double[] v) {
        for (double x : v) {
            if (Double.isNaN(x)) {
                return false;
            }
        }
        return true;
    }

    /**
     * A float output against exact int64 sums scaled in fp64 on 64 sampled elements: |got − exact| within
     * (2u + 8·2^-24)·(|sum·aScale·wScale| + |bias|) plus half the smallest subnormal of {@code out}, u its unit roundoff
     * (the kernels scale in fp64 and round once to {@code out}; the bound would hold for scaling in fp32 too). A scale
     * of one element applies to every row (aScale) or column (wScale); an exact value beyond {@code out}'s range must come out as the infinity of its sign (either
     * is taken within that bound of the overflow threshold).
     * A wrong row, column or scale is off by far more.
     */
    static boolean sampledDequantMatch(double[] got, DType out, byte[] ha, byte[] hw, double[] aScale, double[] wScale, double[] bias,
                                       int m, int n, int k) {
        double u = out == DType.F16 ? 0x1p-11 : out == DType.BF16 ? 0x1p-8 : 0x1p-24;
        double rel = 2 * u + 8 * 0x1p-24;
        double abs = out == DType.F16 ? 0x1p-25 : out == DType.BF16 ? 0x1p-134 : 0x1p-150;  // subnormal results round absolutely
        // where rounding to out overflows: its largest finite value plus half an ulp of it
        double overflow = out == DType.F16 ? 65520.0 : out == DType.BF16 ? 0x1.ffp127 : 0x1.ffffffp127;
        Random r = new Random(m * 31L + n);
        for (int s = 0; s < 64; s++) {
            int i = r.nextInt(m);
            int j = r.nextInt(n);
            long sum = exactSum(ha, hw, i, j, k);
            double prod = sum * aScale[aScale.length == 1 ? 0 : i] * wScale[wScale.length == 1 ? 0 : j];
            double b = bias == null ? 0 : bias[j];
            double exact = prod + b;
            double g = got[i * n + j];
            double tol = rel * (Math.abs(prod) + Math.abs(b)) + abs;
            boolean ok = Double.isInfinite(g)
                    ? g == Math.copySign(Double.POSITIVE_INFINITY, exact) && Math.abs(exact) + tol >= overflow
                    : Math.abs(g - exact) <= tol && Math.abs(exact) - tol < overflow;
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    private static byte[] randomBytes(Random r, long n) {
        byte[] b = new byte[Math.toIntExact(n)];
        r.nextBytes(b);
        return b;
    }

    private static Tensor positive(Device d, Random r, long n) {
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = 1e-3f + 5e-2f * r.nextFloat();
        }
        return Tensor.of(d, DType.F32, f, n);
    }
}
