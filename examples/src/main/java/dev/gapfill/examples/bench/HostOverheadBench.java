package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.Elementwise;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.Int8Mm;
import dev.gapfill.ops.MoeRoute;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What one call costs the calling thread: the host time to validate, decide and enqueue each op at a tiny shape (so the
 * GPU keeps up and never pushes back), per backend, after a JIT warm-up. At decode sizes a layer is a handful of such
 * calls on a few microseconds of GPU work each, so this time, not the kernels', can set the pace of an eager caller
 * (a CUDA graph replay removes it).
 *
 * <p>Method: {@value #WARM_CALLS} untimed calls per path, then {@value #BATCHES} rounds, each of one batch of {@value #BATCH}
 * calls per backend (interleaved, the first backend rotating from round to round), each batch timed on the host clock
 * from its first call to the return of its last (nothing waits for the GPU inside a batch,
 * except the vendor grouped GEMM, which copies the offsets to the host: its figure includes that wait), then a
 * synchronisation; the row gives the median batch's µs per call, p10/p90 in the spread. No floor: these are host
 * costs. Results are not checked here (the op's own sweep checks the same calls at the same shapes' paths).
 *
 * <p>One row is not an op but a step every op takes, several times per call: {@code CudaDevice.activate} (the sticky-error
 * check and {@code cudaGetDevice}, since {@code f1015ac} asked of cudart on every call rather than remembered), timed
 * the same way, so that its share of the rows above is measured on the machine that measured them. And {@code int8_mm_plan}
 * times the int8 row's call through an {@code Int8Mm.Plan} made once per backend, beside the one-shot {@code mm}; and
 * {@code gqa_decode_oneshot} the gqa row's step through the one-shot {@code GqaDecode.decode}, beside the held plans'
 * {@code run} (the one-shot forms keep their plans per thread since branch gpu-pending-host-rows).
 */
public final class HostOverheadBench implements BenchSuite {
    static final int WARM_CALLS = 3000;
    static final int BATCHES = 31;
    static final int BATCH = 100;

    /** The sweep file's {@code method}: host time, not the CUDA-event timing of the other sweeps. */
    public static final String METHOD = "host clock (System.nanoTime) per call of the calling thread: " + WARM_CALLS + " untimed calls per path, then "
            + BATCHES + " rounds of one batch of " + BATCH + " calls per backend, each batch timed from its first call to the return of its last,"
            + " then a synchronisation;"
            + " the median batch's us per call, p10/p90 in spread_p10_p90_us; the backends interleaved (each round one batch of every"
            + " backend, the first one rotating);"
            + " no floor (host costs); results not checked here (each op's own sweep checks the same paths)";

    @Override public String op() { return "host_overhead"; }

    /** One op at one tiny shape: what to call per backend, and the resources to close afterwards. */
    private record Case(String op, String dtype, Map<String, Object> shape, Function<Backend, Runnable> call, List<AutoCloseable> owned) {}

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        List<Case> cases = new ArrayList<>();
        try {
            cases.addAll(cases(ctx));
            for (Case c : cases) {
                rows.add(measure(ctx, c));
            }
        } finally {
            ctx.stream().synchronize();
            for (Case c : cases) {
                for (AutoCloseable a : c.owned()) {
                    try {
                        a.close();
                    } catch (Exception e) {
                        ctx.progress("host_overhead: closing " + c.op() + " failed: " + e);
                    }
                }
            }
        }
        return rows;
    }

    private static Tensor filled(BenchContext ctx, List<AutoCloseable> owned, DType dt, int pattern, long... shape) {
        Tensor t = Tensor.empty(ctx.device(), dt, ctx.stream(), shape);
        owned.add(t);
        t.fillBytes(pattern, ctx.stream());  // small finite non-zero values: the host cost does not depend on them
        return t;
    }

    /** Rows timed on one path only (no vendor form): the custom column holds the time. */
    private static final java.util.Set<String> ONE_PATH = java.util.Set.of("elementwise", "moe_route", "device_activate");

    private static List<Case> cases(BenchContext ctx) {
        Stream s = ctx.stream();
        Device dev = ctx.device();
        List<Case> l = new ArrayList<>();

        dev.gapfill.core.CudaDevice cd = Gpu.device(dev);
        l.add(new Case("device_activate", "-", BenchRow.shape("step", "CudaDevice.activate"), b -> cd::activate, new ArrayList<>()));

        List<AutoCloseable> ew = new ArrayList<>();
        Tensor ea = filled(ctx, ew, DType.BF16, 0x3c, 4096);
        Tensor eb = filled(ctx, ew, DType.BF16, 0x3c, 4096);
        Tensor eo = filled(ctx, ew, DType.BF16, 0, 4096);
        l.add(new Case("elementwise", "BF16", BenchRow.shape("n", 4096), b -> () -> Elementwise.scaleAdd(ea, eb, 1f, 1f, eo, s), ew));

        List<AutoCloseable> bm = new ArrayList<>();
        Tensor ba = filled(ctx, bm, DType.F16, 0x3c, 512, 16, 16);
        Tensor bb = filled(ctx, bm, DType.F16, 0x3c, 512, 16, 16);
        Tensor bo = filled(ctx, bm, DType.F16, 0, 512, 16, 16);
        l.add(new Case("bmm", "F16", BenchRow.shape("batch", 512, "m", 16, "n", 16, "k", 16),
                b -> () -> Bmm.bmm(ba, bb, bo, Bmm.Options.defaults().backend(b), s), bm));

        List<AutoCloseable> dw = new ArrayList<>();
        Tensor dx = filled(ctx, dw, DType.F16, 0x3c, 1, 64, 16, 16);
        Tensor dwt = filled(ctx, dw, DType.F16, 0x3c, 64, 3, 3);
        Tensor dbias = filled(ctx, dw, DType.F16, 0x3c, 64);
        Tensor dy = filled(ctx, dw, DType.F16, 0, 1, 64, 16, 16);
        l.add(new Case("depthwise_conv3x3", "F16", BenchRow.shape("N", 1, "C", 64, "H", 16, "W", 16, "act", "SILU"),
                b -> () -> DepthwiseConv3x3.apply(dx, dwt, dbias, null, dy,
                        DepthwiseConv3x3.Options.defaults().withActivation(DepthwiseConv3x3.Activation.SILU).withBackend(b), s), dw));

        List<AutoCloseable> i8 = new ArrayList<>();
        Tensor ia = filled(ctx, i8, DType.I8, 0x03, 1, 1024);
        Tensor iw = filled(ctx, i8, DType.I8, 0x05, 1024, 1024);
        Tensor io = filled(ctx, i8, DType.I32, 0, 1, 1024);
        l.add(new Case("int8_mm", "I8->I32", BenchRow.shape("m", 1, "k", 1024, "n", 1024),
                b -> () -> Int8Mm.mm(ia, iw, Int8Mm.Options.int32().withBackend(b), io, s), i8));
        // the same call through a plan made once per backend (what a decode loop holds): Plan.run allocates nothing,
        // where the one-shot mm above makes and closes a plan (workspace from the pool, counters zeroed) per call
        Map<Backend, Int8Mm.Plan> i8Plans = new LinkedHashMap<>();
        for (Backend b : new Backend[] {Backend.VENDOR, Backend.CUSTOM, Backend.AUTO}) {
            Int8Mm.Plan plan = Int8Mm.plan(ia, iw, Int8Mm.Options.int32().withBackend(b), s);
            i8.add(plan);
            i8Plans.put(b, plan);
        }
        l.add(new Case("int8_mm_plan", "I8->I32", BenchRow.shape("m", 1, "k", 1024, "n", 1024),
                b -> () -> i8Plans.get(b).run(ia, iw, Int8Mm.Options.int32().withBackend(b), io), new ArrayList<>()));

        // a decode-sized MoE step: E=64 experts, top-8, H=256 I=128, T=1 token routed to 8 experts
        int e = 64;
        int k = 8;
        int h = 256;
        int inter = 128;
        List<AutoCloseable> gg = new ArrayList<>();
        // distinct logits, so that top-k is well defined: expert i gets i/64
        float[] lv = new float[e];
        for (int i = 0; i < e; i++) {
            lv[i] = i / 64f;
        }
        Tensor logits = Tensor.of(dev, DType.BF16, lv, 1, e);
        gg.add(logits);
        MoeRoute.Routing rt = MoeRoute.Routing.allocate(dev, 1, e, k);
        gg.add(rt);
        MoeRoute.route(logits, MoeRoute.Options.topK(k), rt, s);  // valid offsets and gather for the grouped GEMM below
        l.add(new Case("moe_route", "BF16", BenchRow.shape("tokens", 1, "experts", e, "top_k", k),
                b -> () -> MoeRoute.route(logits, MoeRoute.Options.topK(k).withBackend(b), rt, s), gg));
        Tensor gx = filled(ctx, gg, DType.BF16, 0x3c, 1, h);
        Tensor gw = filled(ctx, gg, DType.BF16, 0x3c, e, h, 2L * inter);
        Tensor gy = filled(ctx, gg, DType.BF16, 0, k, inter);
        l.add(new Case("grouped_gemm", "BF16", BenchRow.shape("experts", e, "topk", k, "hidden", h, "inter", inter, "tokens", 1,
                "proj", "gate_up_swiglu"),
                b -> () -> GroupedGemm.run(gx, gw, rt.offsets, GroupedGemm.Options.builder().gather(rt.gather).swiglu(true).backend(b).build(),
                        gy, s), new ArrayList<>()));

        List<AutoCloseable> gq = new ArrayList<>();
        GqaDecode.Problem p = GqaDecode.Problem.contiguous(1, 32, 8, 128, 512, GqaDecode.KvLayout.BHLD, DType.BF16);
        Tensor q = filled(ctx, gq, DType.BF16, 0x3c, 1, 32, 128);
        Tensor kc = filled(ctx, gq, DType.BF16, 0x3c, 1, 8, 512, 128);
        Tensor vc = filled(ctx, gq, DType.BF16, 0x3c, 1, 8, 512, 128);
        Tensor out = filled(ctx, gq, DType.BF16, 0, 1, 32, 128);
        Tensor lens = Tensor.ofInts(dev, new int[] {512}, 1);
        gq.add(lens);
        GqaDecode.KvCache cache = GqaDecode.KvCache.bhld(kc, vc);
        Map<Backend, GqaDecodePlan> plans = new LinkedHashMap<>();
        for (Backend b : new Backend[] {Backend.VENDOR, Backend.CUSTOM, Backend.AUTO}) {
            GqaDecodePlan plan = GqaDecode.plan(p, dev, GqaDecode.Options.defaults().withBackend(b), s);
            gq.add(plan);
            plans.put(b, plan);
        }
        l.add(new Case("gqa_decode", "BF16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 512, "layout", "BHLD"),
                b -> () -> plans.get(b).run(q, cache, lens, out, s), gq));
        // the same step through the one-shot GqaDecode.decode (a plan per call before the kept plans; now the kept one)
        l.add(new Case("gqa_decode_oneshot", "BF16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 512, "layout", "BHLD"),
                b -> () -> GqaDecode.decode(q, cache, lens, out, null, GqaDecode.Options.defaults().withBackend(b), s), new ArrayList<>()));
        return l;
    }

    private BenchRow measure(BenchContext ctx, Case c) {
        Map<String, Timing> t = new LinkedHashMap<>();
        Map<String, Double> peers = new LinkedHashMap<>();
        boolean hasVendor = !ONE_PATH.contains(c.op());
        Backend[] backends = hasVendor ? new Backend[] {Backend.VENDOR, Backend.CUSTOM, Backend.AUTO} : new Backend[] {Backend.CUSTOM};
        Runnable[] calls = new Runnable[backends.length];
        for (int j = 0; j < backends.length; j++) {
            calls[j] = c.call().apply(backends[j]);
            for (int i = 0; i < WARM_CALLS; i++) {
                calls[j].run();
                if (i % BATCH == BATCH - 1) {
                    ctx.stream().synchronize();
                }
            }
            ctx.stream().synchronize();
        }
        // interleaved: each round times one batch of every backend, the first one rotating from round to round, so a
        // change of the host's pace during the row (another process, a clock step, a GC) lands on every backend alike
        double[][] perCall = new double[backends.length][BATCHES];
        for (int r = 0; r < BATCHES; r++) {
            for (int o = 0; o < backends.length; o++) {
                int j = (r + o) % backends.length;
                long t0 = System.nanoTime();
                for (int i = 0; i < BATCH; i++) {
                    calls[j].run();
                }
                perCall[j][r] = (System.nanoTime() - t0) / 1e3 / BATCH;
                ctx.stream().synchronize();
            }
        }
        for (int j = 0; j < backends.length; j++) {
            t.put(backends[j].name().toLowerCase(java.util.Locale.ROOT), Timing.of(perCall[j]));
        }
        Map<String, double[]> spread = new LinkedHashMap<>();
        t.forEach((name, x) -> spread.put(name, new double[] {x.p10Us(), x.p90Us()}));
        Timing custom = t.get("custom");
        Timing vendor = t.get("vendor");
        Timing auto = t.getOrDefault("auto", custom);
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("op", c.op());
        shape.putAll(c.shape());
        ctx.progress(String.format(java.util.Locale.ROOT, "host_overhead %s %s: %s us per call", c.op(), c.shape(),
                Arrays.toString(t.entrySet().stream().map(x -> x.getKey() + " " + String.format(java.util.Locale.ROOT, "%.2f",
                        x.getValue().medianUs())).toArray())));
        return new BenchRow(op(), c.dtype(), shape, "host enqueue", vendor == null ? null : vendor.medianUs(), custom.medianUs(),
                auto.medianUs(), hasVendor ? "AUTO" : "CUSTOM", 0, 0, 0, peers, spread, null);
    }
}
