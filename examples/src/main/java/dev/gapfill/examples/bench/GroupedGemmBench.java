package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.GroupedGemm.Options;
import dev.gapfill.ops.GroupedGemm.VendorPath;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import dev.gapfill.ops.reference.GroupedGemmReference;
import dev.gapfill.verify.GroupedGemmVerification;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The MoE sweep of issue 6: (E, top-k, hidden, expert-intermediate) ∈ {(64,8,2048,1024), (128,8,2048,768),
 * (160,6,5120,1536), (8,2,4096,14336)} × tokens T ∈ {1, 8, 32, 128, 512, 2048, 8192} × {gate-up with SwiGLU
 * (K = hidden, N = 2·I, rows gathered from the T tokens), down with the router scale (K = I, N = hidden)} ×
 * {F16, BF16}; routing = top-k of random logits per token, router weights = softmax over the chosen logits.
 *
 * <p>Paths, interleaved: {@code vendor} = the per-expert cublasGemmEx loop (VENDOR/LOOP), peer
 * {@code cublas_grouped_batched} (VENDOR/GROUPED_BATCHED), {@code custom} (CUSTOM), {@code auto}. Both vendor
 * paths copy offsets to the host and synchronise inside the timed region: that is their cost as called from
 * Gapfill. Floor: max((W bytes of the ACTIVE experts + X bytes read + Y bytes written + index/scale bytes) /
 * measured copy bandwidth, 2·T_total·K·N / measured bf16 GEMM rate). Every path's output is checked against
 * the fp64 reference on (up to 64) rows of two non-empty experts, and for NaN poison everywhere, before timing.
 */
public final class GroupedGemmBench implements BenchSuite {
    /** One MoE layer configuration. */
    record Moe(int experts, int topk, int hidden, int inter) {}

    static final Moe[] CONFIGS = {new Moe(64, 8, 2048, 1024), new Moe(128, 8, 2048, 768), new Moe(160, 6, 5120, 1536), new Moe(8, 2, 4096, 14336)};
    static final int[] TOKENS = {1, 8, 32, 128, 512, 2048, 8192};

    @Override public String op() { return "grouped_gemm"; }

    /** Routing of T tokens: grouped rows per expert, the token of each grouped row, its router weight. */
    record Routing(int[] offsets, int[] token, float[] weight) {}

    static Routing route(Random rnd, int tokens, int experts, int topk) {
        List<List<Integer>> members = new ArrayList<>();
        List<List<Float>> weights = new ArrayList<>();
        for (int e = 0; e < experts; e++) {
            members.add(new ArrayList<>());
            weights.add(new ArrayList<>());
        }
        double[] logit = new double[experts];
        Integer[] idx = new Integer[experts];
        for (int t = 0; t < tokens; t++) {
            for (int e = 0; e < experts; e++) {
                logit[e] = rnd.nextGaussian();
                idx[e] = e;
            }
            java.util.Arrays.sort(idx, (a, b) -> Double.compare(logit[b], logit[a]));
            double z = 0;
            for (int j = 0; j < topk; j++) {
                z += Math.exp(logit[idx[j]]);
            }
            for (int j = 0; j < topk; j++) {
                members.get(idx[j]).add(t);
                weights.get(idx[j]).add((float) (Math.exp(logit[idx[j]]) / z));
            }
        }
        int[] off = new int[experts + 1];
        int[] token = new int[tokens * topk];
        float[] w = new float[tokens * topk];
        int r = 0;
        for (int e = 0; e < experts; e++) {
            for (int i = 0; i < members.get(e).size(); i++) {
                token[r] = members.get(e).get(i);
                w[r] = weights.get(e).get(i);
                r++;
            }
            off[e + 1] = r;
        }
        return new Routing(off, token, w);
    }

    @Override public boolean resumable() { return true; }

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        Random rnd = new Random(6);
        Moe[] configs = ctx.quick() ? new Moe[] {CONFIGS[0]} : CONFIGS;
        int[] tokens = ctx.quick() ? new int[] {1, 128} : TOKENS;
        DType[] dtypes = ctx.quick() ? new DType[] {DType.BF16} : new DType[] {DType.F16, DType.BF16};
        for (Moe m : configs) {
            for (DType dt : dtypes) {
                if (!ctx.wants(dt)) {
                    continue;  // bench --dtype
                }
                for (boolean gateUp : new boolean[] {true, false}) {
                    int k = gateUp ? m.hidden() : m.inter();
                    int n = gateUp ? 2 * m.inter() : m.hidden();
                    String proj = gateUp ? "gate_up_swiglu" : "down_scale";
                    java.util.function.IntPredicate done = t -> ctx.done(op(), dt.name(), "experts", m.experts(), "topk", m.topk(), "hidden",
                            m.hidden(), "inter", m.inter(), "tokens", t, "proj", proj);  // measured by an earlier run (bench --resume)
                    if (java.util.Arrays.stream(tokens).allMatch(done)) {
                        continue;
                    }
                    try (Tensor w = randomDevice(ctx, dt, rnd, (long) m.experts() * k * n, m.experts(), k, n)) {
                        for (int t : tokens) {
                            if (done.test(t)) {
                                continue;
                            }
                            rows.add(runCase(ctx, rnd, m, dt, gateUp, t, w, k, n));
                        }
                    }
                }
            }
        }
        return rows;
    }

    private BenchRow runCase(BenchContext ctx, Random rnd, Moe m, DType dt, boolean gateUp, int t, Tensor w, int k, int n) {
        Routing rt = route(rnd, t, m.experts(), m.topk());
        int tTotal = t * m.topk();
        int xRows = gateUp ? t : tTotal;
        int nOut = gateUp ? n / 2 : n;
        float[] hostX = new float[xRows * k];
        for (int i = 0; i < hostX.length; i++) {
            hostX[i] = rnd.nextFloat() * 2 - 1;
        }
        Device dev = ctx.device();
        try (Tensor x = Tensor.of(dev, dt, hostX, xRows, k); Tensor off = Tensor.ofInts(dev, rt.offsets(), m.experts() + 1);
             Tensor gather = gateUp ? Tensor.ofInts(dev, rt.token(), tTotal) : null;
             Tensor scale = gateUp ? null : Tensor.of(dev, DType.F32, rt.weight(), tTotal);
             Tensor out = Tensor.empty(dev, dt, ctx.stream(), tTotal, nOut)) {
            Options base = Options.builder().layout(WeightLayout.KN).gather(gather).swiglu(gateUp).rowScale(scale).build();
            // the paths in timing order, each with the options it runs
            LinkedHashMap<String, Options> options = new LinkedHashMap<>();
            options.put("vendor", base.withBackend(Backend.VENDOR));
            options.put("cublas_grouped_batched", Options.builder().layout(WeightLayout.KN).gather(gather).swiglu(gateUp).rowScale(scale)
                    .backend(Backend.VENDOR).vendorPath(VendorPath.GROUPED_BATCHED).build());
            options.put("custom", base.withBackend(Backend.CUSTOM));
            options.put("auto", base);
            LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
            options.forEach((name, o) -> paths.put(name, () -> GroupedGemm.run(x, w, off, o, out, ctx.stream())));
            // correctness of every path before timing
            List<Slice> slices = reference(m, dt, gateUp, rt, hostX, w, k, n);
            Verdict customVerdict = null;
            boolean allPass = true;
            for (Map.Entry<String, Runnable> p : paths.entrySet()) {
                out.fillBytes(0xff, ctx.stream());
                p.getValue().run();
                ctx.stream().synchronize();
                // the bound follows the path each option actually runs (AUTO and VENDOR may pick the grouped-batched call)
                Verdict v = check(slices, dt, out, k, nOut, GroupedGemmVerification.roundsBeforeEpilogue(x, w, off, options.get(p.getKey())));
                allPass &= v.pass();
                if (!v.pass()) {
                    ctx.progress("grouped_gemm CHECK FAILED " + p.getKey() + ": " + v);
                }
                if (p.getKey().equals("custom")) {
                    customVerdict = v;
                }
            }
            Map<String, Timing> tm = ctx.timeInterleaved(paths);
            Decision auto = GroupedGemm.decide(x, w, off, base);
            long active = 0;
            for (int e = 0; e < m.experts(); e++) {
                active += rt.offsets()[e + 1] > rt.offsets()[e] ? 1 : 0;
            }
            long bytes = active * k * n * dt.bytes() + (long) xRows * k * dt.bytes() + (long) tTotal * nOut * dt.bytes()
                    + 4L * (m.experts() + 1) + 4L * tTotal;
            double flops = 2.0 * tTotal * k * n;
            double floor = ctx.floorUs(bytes, flops);
            Map<String, double[]> spread = new LinkedHashMap<>();
            tm.forEach((name, tt) -> spread.put(name, new double[] {tt.p10Us(), tt.p90Us()}));
            Map<String, Double> peers = new LinkedHashMap<>();
            peers.put("cublas_grouped_batched", tm.get("cublas_grouped_batched").medianUs());
            double rowsPerGroup = (double) tTotal / m.experts();
            String regime = rowsPerGroup < 4 ? "decode" : rowsPerGroup < 128 ? "mid" : "prefill";
            ctx.progress(String.format("grouped_gemm E=%d k=%d H=%d I=%d T=%d %s %s: loop %.1f, grouped %.1f, custom %.1f, auto %.1f (%s), floor %.1f us",
                    m.experts(), m.topk(), m.hidden(), m.inter(), t, gateUp ? "gate_up" : "down", dt, tm.get("vendor").medianUs(),
                    tm.get("cublas_grouped_batched").medianUs(), tm.get("custom").medianUs(), tm.get("auto").medianUs(),
                    auto.backend() + "/" + auto.variant(), floor));
            return new BenchRow(op(), dt.name(), BenchRow.shape("experts", m.experts(), "topk", m.topk(), "hidden", m.hidden(), "inter", m.inter(),
                    "tokens", t, "proj", gateUp ? "gate_up_swiglu" : "down_scale", "t_total", tTotal, "k", k, "n", n, "active_experts", active),
                    regime, tm.get("vendor").medianUs(), tm.get("custom").medianUs(), tm.get("auto").medianUs(),
                    auto.backend() + "/" + auto.variant(), floor, bytes, flops, peers, spread,
                    new BenchRow.Check("reference (custom; vendor, grouped-batched and auto checked too)", customVerdict.bitExact(),
                            customVerdict.maxUlp(), customVerdict.maxRelErr(), allPass && customVerdict.pass()));
        }
    }

    /** The reference for the rows of one expert that the check compares. */
    record Slice(int firstRow, int rows, GroupedGemmReference.Result ref) {}

    /** Rows checked per expert: the fp64 reference of a 64-row slice of E=160 gate-up is already 10^9 multiply-adds. */
    static final int CHECK_ROWS = 64;

    /** The reference on (up to {@link #CHECK_ROWS} rows of) the first two non-empty experts, their W slices copied back. */
    static List<Slice> reference(Moe m, DType dt, boolean gateUp, Routing rt, float[] hostX, Tensor w, int k, int n) {
        List<Slice> slices = new ArrayList<>();
        for (int e = 0; e < m.experts() && slices.size() < 2; e++) {
            int r0 = rt.offsets()[e];
            int cnt = Math.min(CHECK_ROWS, rt.offsets()[e + 1] - r0);
            if (cnt == 0) {
                continue;
            }
            float[] xs = new float[cnt * k];
            double[] sc = gateUp ? null : new double[cnt];
            for (int i = 0; i < cnt; i++) {
                int src = gateUp ? rt.token()[r0 + i] : r0 + i;
                System.arraycopy(hostX, src * k, xs, i * k, k);
                if (sc != null) {
                    sc[i] = rt.weight()[r0 + i];
                }
            }
            long wBytes = (long) k * n * dt.bytes();
            try (Tensor hx = Tensor.of(Device.CPU, dt, xs, cnt, k);
                 Tensor wView = Tensor.borrow(w.device(), dt, w.address() + e * wBytes, new long[] {1, k, n}, null);
                 Tensor hw = wView.to(Device.CPU)) {
                slices.add(new Slice(r0, cnt, GroupedGemmReference.compute(hx, hw, new int[] {0, cnt}, WeightLayout.KN, null, gateUp, sc)));
            }
        }
        return slices;
    }

    /**
     * No poison left anywhere in the output, and every element of the reference slices within the bound
     * ({@code roundedIntermediate} for the grouped-batched path, which rounds before its epilogue).
     */
    static Verdict check(List<Slice> slices, DType dt, Tensor out, int k, int nOut, boolean roundedIntermediate) {
        float[] all = out.toFloatArray();
        for (int i = 0; i < all.length; i++) {
            if (Float.isNaN(all[i])) {
                return new Verdict("reference", "no poison", all.length, false, 0, Long.MAX_VALUE, Double.POSITIVE_INFINITY, 1,
                        "element " + i + " unwritten (NaN poison)", false);
            }
        }
        Verdict worst = null;
        Tolerance tol = Tolerance.accumulation(dt, k, 2);
        for (Slice sl : slices) {
            Tensor rowsView = out.strided(new long[] {sl.rows(), nOut}, new long[] {nOut, 1}, (long) sl.firstRow() * nOut);
            Verdict v = Verifier.compare(rowsView, sl.ref().value(), sl.ref().errorScale(tol.accTerm(), dt, roundedIntermediate), tol,
                    "reference");
            if (worst == null || (worst.pass() && (!v.pass() || v.maxRelErr() > worst.maxRelErr()))) {
                worst = v;  // the first failure, else the largest error
            }
        }
        return worst;
    }

    /**
     * A device tensor of {@code count} random values in ±0.05: a 16M-element random block spread by {@link RandomFill}
     * (W can exceed 2^31 elements; repeated as is, the experts of K·N a multiple of 2^24 had the same weights).
     */
    static Tensor randomDevice(BenchContext ctx, DType dt, Random rnd, long count, long... shape) {
        Tensor t = Tensor.empty(ctx.device(), dt, ctx.stream(), shape);
        try {
            if (t.numel() != count) {
                throw new IllegalArgumentException(count + " values for a tensor of " + t.numel());
            }
            RandomFill.fill(t, rnd, 0.05f, 1 << 24, ctx.stream());
        } catch (RuntimeException ex) {
            t.close();
            throw ex;
        }
        return t;
    }
}
