package dev.gapfill.examples.demo;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.demo.MoeLayer.Buffers;
import dev.gapfill.examples.demo.MoeLayer.Config;
import dev.gapfill.examples.demo.MoeLayer.Tokens;
import dev.gapfill.examples.demo.MoeLayer.Weights;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.ops.reference.GroupedGemmReference;
import dev.gapfill.ops.reference.MoeRouteReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verifier;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Checks every output of a MoE layer run, stage by stage, against the fp64 CPU references of the ops:
 * <ul>
 *   <li>routing ({@link MoeRouteReference}): offsets, gather, rowOf and topkIds bit-exact; weights and topkWeights
 *   within the fp32 softmax bound u·|w| + 2γ_K·|w|, K = E + k + 16 + ⌈max logit spread⌉ (docs/ops/moe_route.md);</li>
 *   <li>h and y ({@link GroupedGemmReference}, every row of every expert): {@code Tolerance.accumulation(dtype, K, 2)}
 *   carried through SwiGLU and the router scale by {@code Result.errorScale} (docs/ops/grouped_gemm.md), the down
 *   reference fed with the h and router weights this composition produced;</li>
 *   <li>out ({@link MoeCombine#reference}, fed with this composition's y): γ_k·Σ|y| + u·|out|.</li>
 * </ul>
 * Checking each op on its own inputs keeps every bound the op's derived one; the layer output is then correct to the
 * extent each stage is. The references run per expert in parallel (the weights are up to 768 MB).
 */
public final class MoeLayerCheck {
    private MoeLayerCheck() {}

    /** Exact values and per-element error scales of one grouped GEMM, [rows, nOut]. */
    private record Expected(double[] value, double[] scale, double[] scaleRounded) {
        /** The scale for a path that rounds the GEMM result to the dtype before its epilogue, or not. */
        double[] scale(boolean rounded) {
            return rounded ? scaleRounded : scale;
        }
    }

    /** Checks each composition's buffers (after {@link MoeLayer#forward} ran into them and the device finished). */
    public static List<LayerCheck> verify(Weights w, Tokens in, List<Buffers> paths) {
        Config c = w.config();
        List<LayerCheck> out = new ArrayList<>();
        try (MoeRoute.Routing ref = MoeRoute.route(in.hostLogits(), MoeRoute.Options.topK(c.topK()))) {
            int[] off = ref.offsets.toIntArray();
            int[] gather = ref.gather.toIntArray();
            Expected up = grouped(in.hostX(), w.hostGateUp(), off, gather, true, null, c.hidden(), 2 * c.inter(), c.dtype());
            Tolerance upTol = Tolerance.accumulation(c.dtype(), c.hidden(), 2);
            Tolerance downTol = Tolerance.accumulation(c.dtype(), c.inter(), 2);
            for (Buffers b : paths) {
                List<LayerCheck.Stage> stages = new ArrayList<>(routing(in, c, ref, b.routing));
                stages.add(new LayerCheck.Stage("h", Verifier.compare(b.h, up.value(), up.scale(b.composition.roundsBeforeEpilogue()), upTol,
                        "reference")));
                try (Tensor hostH = b.h.to(Device.CPU)) {
                    Expected down = grouped(hostH, w.hostDown(), off, null, false, MoeCombine.doubles(b.routing.weights), c.inter(),
                            c.hidden(), c.dtype());
                    stages.add(new LayerCheck.Stage("y", Verifier.compare(b.y, down.value(), down.scale(b.composition.roundsBeforeEpilogue()),
                            downTol, "reference")));
                }
                MoeCombine.Exact sum = MoeCombine.reference(MoeCombine.doubles(b.y), b.routing.rowOf.toIntArray(), in.count(), c.topK(),
                        c.hidden());
                stages.add(new LayerCheck.Stage("out", Verifier.compare(b.out, sum.value(), sum.absSum(),
                        MoeCombine.tolerance(c.dtype(), c.topK()), "reference")));
                out.add(new LayerCheck(b.composition.name().toLowerCase(java.util.Locale.ROOT), stages));
            }
        }
        return out;
    }

    /** The six routing outputs against the reference routing {@code ref} of the same logits. */
    private static List<LayerCheck.Stage> routing(Tokens in, Config c, MoeRoute.Routing ref, MoeRoute.Routing got) {
        List<LayerCheck.Stage> s = new ArrayList<>();
        Tolerance exact = Tolerance.bitExact();
        s.add(new LayerCheck.Stage("offsets", Verifier.compare(got.offsets, ref.offsets, exact, "reference")));
        s.add(new LayerCheck.Stage("gather", Verifier.compare(got.gather, ref.gather, exact, "reference")));
        s.add(new LayerCheck.Stage("rowOf", Verifier.compare(got.rowOf, ref.rowOf, exact, "reference")));
        s.add(new LayerCheck.Stage("topkIds", Verifier.compare(got.topkIds, ref.topkIds, exact, "reference")));
        int tk = in.count() * c.topK();
        int[] ids = new int[tk];
        double[] tokenOrder = MoeRouteReference.weights(in.hostLogits(), c.topK(), false, true, ids);
        int[] rowOf = ref.rowOf.toIntArray();
        double[] expertOrder = new double[tk];
        for (int i = 0; i < tk; i++) {
            expertOrder[rowOf[i]] = tokenOrder[i];
        }
        // as MoeRouteVerification.topkWeights bounds them: the spread of finite logits, counted up to 128
        long spread = (long) Math.ceil(Math.min(logitSpread(in, c), 128));
        Tolerance softmax = Tolerance.accumulation(DType.F32, c.experts() + c.topK() + 16 + spread, 2);
        s.add(new LayerCheck.Stage("weights", Verifier.compare(got.weights, expertOrder, abs(expertOrder), softmax, "reference")));
        s.add(new LayerCheck.Stage("topkWeights", Verifier.compare(got.topkWeights, tokenOrder, abs(tokenOrder), softmax, "reference")));
        return s;
    }

    /**
     * max over tokens of (largest − smallest finite logit): the exponent argument range of the softmax bound (NaN and
     * ±inf take no part, as in MoeRouteVerification).
     */
    private static double logitSpread(Tokens in, Config c) {
        double spread = 0;
        for (int t = 0; t < in.count(); t++) {
            double hi = Double.NEGATIVE_INFINITY;
            double lo = Double.POSITIVE_INFINITY;
            for (int e = 0; e < c.experts(); e++) {
                double v = in.hostLogits().getDouble((long) t * c.experts() + e);
                if (Double.isFinite(v)) {
                    hi = Math.max(hi, v);
                    lo = Math.min(lo, v);
                }
            }
            if (hi >= lo) {
                spread = Math.max(spread, hi - lo);
            }
        }
        return spread;
    }

    private static double[] abs(double[] v) {
        return Arrays.stream(v).map(Math::abs).toArray();
    }

    /**
     * The reference of one grouped GEMM (KN weights), expert by expert in parallel: rows [off[e], off[e+1]) read
     * x[gather[r]] (or x[r] without a gather) and W[e]. Each expert's weights are read through a view, not copied.
     */
    private static Expected grouped(Tensor hostX, Tensor hostW, int[] off, int[] gather, boolean swiglu, double[] rowScale, int k,
                                    int n, DType dt) {
        int experts = off.length - 1;
        int nOut = swiglu ? n / 2 : n;
        int rows = off[experts];
        double[] value = new double[rows * nOut];
        double[] scale = new double[rows * nOut];
        double[] scaleRounded = new double[rows * nOut];
        double accTerm = Tolerance.accumulation(dt, k, 2).accTerm();
        IntStream.range(0, experts).parallel().forEach(e -> {
            int r0 = off[e];
            int cnt = off[e + 1] - r0;
            if (cnt == 0) {
                return;
            }
            Tensor wE = hostW.strided(new long[] {1, k, n}, new long[] {(long) k * n, n, 1}, (long) e * k * n);
            Tensor xE = gather != null ? hostX : hostX.strided(new long[] {cnt, k}, new long[] {k, 1}, (long) r0 * k);
            GroupedGemmReference.Result r = GroupedGemmReference.compute(xE, wE, new int[] {0, cnt}, GroupedGemm.WeightLayout.KN,
                    gather == null ? null : Arrays.copyOfRange(gather, r0, r0 + cnt), swiglu,
                    rowScale == null ? null : Arrays.copyOfRange(rowScale, r0, r0 + cnt));
            System.arraycopy(r.value(), 0, value, r0 * nOut, cnt * nOut);
            System.arraycopy(r.errorScale(accTerm, dt, false), 0, scale, r0 * nOut, cnt * nOut);
            System.arraycopy(r.errorScale(accTerm, dt, true), 0, scaleRounded, r0 * nOut, cnt * nOut);
        });
        return new Expected(value, scale, scaleRounded);
    }
}
