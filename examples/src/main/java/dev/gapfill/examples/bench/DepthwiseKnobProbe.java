package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.SystemProperty;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;
import dev.gapfill.ops.reference.DepthwiseConv3x3Reference;
import dev.gapfill.verify.DepthwiseConv3x3Verification;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The forced custom depthwise path under several settings of its system properties (the knobs of
 * {@code DepthwiseConv3x3Heuristics}: strip rows, kernel and geometry switches), timed side by side: for each case, one
 * interleaved run ({@link BenchContext#timeInterleaved}, L2 flushed before each path, medians of {@code reps}) of the
 * custom path once per setting, every setting writing the same output tensor (where the output lies moves short
 * launches by a few per cent: docs/ops/depthwise_conv3x3.md).
 *
 * <p>Before timing, each setting's output (into a second tensor, poisoned first) is checked against the fp64 reference
 * with the custom tolerance (bit-exact for the exact activations); a failed check is printed on its row and the probe
 * ends with an exception after the table. Each row also names the kernel variant every setting ran.
 *
 * <p>Usage (GPU host): {@code java -cp ... dev.gapfill.examples.bench.DepthwiseKnobProbe reps cases settings}, where
 * {@code cases} is a comma-separated list of {@code DTYPE/LAYOUT/NxCxHxW/sSTRIDE/ACT} (e.g.
 * {@code F32/NCHW/8x96x112x112/s1/NONE}) and {@code settings} a comma-separated list of {@code label} or
 * {@code label:property=value[;property=value]} (e.g. {@code default,rows16:gapfill.depthwise.nchwRows=16}); the first
 * setting is the one the others are compared with. Prints a table to stdout.
 */
public final class DepthwiseKnobProbe {
    private DepthwiseKnobProbe() { }

    /** One problem of the probe, with a bias and no residual. */
    record Case(DType dtype, Layout layout, int n, int c, int h, int w, int stride, Activation act) {
        static Case parse(String spec) {
            String[] f = spec.trim().split("/");
            if (f.length != 5 || !f[3].startsWith("s")) {
                throw new IllegalArgumentException("case '" + spec + "': expected DTYPE/LAYOUT/NxCxHxW/sSTRIDE/ACT");
            }
            String[] d = f[2].split("x");
            if (d.length != 4) {
                throw new IllegalArgumentException("case '" + spec + "': expected NxCxHxW, got " + f[2]);
            }
            return new Case(DType.valueOf(f[0]), Layout.valueOf(f[1]), Integer.parseInt(d[0]), Integer.parseInt(d[1]),
                    Integer.parseInt(d[2]), Integer.parseInt(d[3]), Integer.parseInt(f[3].substring(1)), Activation.valueOf(f[4]));
        }

        Problem problem() {
            return new Problem(dtype, layout, n, c, h, w, stride, act, true, false);
        }

        String label() {
            return dtype + "/" + layout + "/" + n + "x" + c + "x" + h + "x" + w + "/s" + stride + "/" + act;
        }
    }

    /** A label and the system properties set while its path runs (none for the defaults). */
    record Setting(String label, Map<String, String> properties) {
        static Setting parse(String spec) {
            int colon = spec.indexOf(':');
            Map<String, String> props = new LinkedHashMap<>();
            if (colon >= 0) {
                for (String kv : spec.substring(colon + 1).split(";")) {
                    int eq = kv.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("setting '" + spec + "': expected property=value, got '" + kv + "'");
                    }
                    props.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
                }
            }
            return new Setting((colon >= 0 ? spec.substring(0, colon) : spec).trim(), props);
        }

        /** Runs {@code body} with this setting's properties set, each restored afterwards. */
        void run(Runnable body) {
            Runnable r = body;
            for (Map.Entry<String, String> e : properties.entrySet()) {
                Runnable inner = r;
                r = () -> SystemProperty.with(e.getKey(), e.getValue(), inner);
            }
            r.run();
        }
    }

    static List<Case> cases(String list) {
        List<Case> out = new ArrayList<>();
        for (String s : list.split(",")) {
            out.add(Case.parse(s));
        }
        return out;
    }

    static List<Setting> settings(String list) {
        List<Setting> out = new ArrayList<>();
        for (String s : list.split(",")) {
            out.add(Setting.parse(s));
        }
        return out;
    }

    /** Arguments: reps, cases, settings (see the class comment). */
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: DepthwiseKnobProbe reps cases settings");
        }
        run(Device.cuda(0), Integer.parseInt(args[0]), cases(args[1]), settings(args[2]), System.out);
    }

    static void run(Device dev, int reps, List<Case> cases, List<Setting> settings, PrintStream out) throws Exception {
        try (BenchContext ctx = new BenchContext(dev, 5, reps, false, m -> { }).fixedReps()) {
            out.printf("# DepthwiseKnobProbe: %s, forced custom path with a bias, %d repetitions per setting, rotating order, L2 flushed"
                    + " before each, one output tensor; median µs, and each setting's time over the first's%n", ctx.info().name(), reps);
            for (Setting s : settings) {
                out.printf("#   %s: %s%n", s.label(), s.properties().isEmpty() ? "the defaults" : s.properties());
            }
            StringBuilder head = new StringBuilder(String.format("%-34s %8s", "case", "floor"));
            for (Setting s : settings) {
                head.append(String.format(" %10s %6s", s.label(), "ratio"));
            }
            out.println(head.append("  fl/first  variants; check"));
            Random rnd = new Random(23);
            int failed = 0;
            for (Case k : cases) {
                Problem p = k.problem();
                try (Tensor hx = HostTensors.uniform(k.dtype(), rnd, p.inputShape()); Tensor hw = HostTensors.uniform(k.dtype(), rnd, k.c(), 3, 3);
                     Tensor hb = HostTensors.uniform(k.dtype(), rnd, k.c());
                     Tensor x = hx.to(dev); Tensor w = hw.to(dev); Tensor b = hb.to(dev);
                     Tensor y = Tensor.empty(dev, k.dtype(), ctx.stream(), p.outputShape());
                     Tensor yk = Tensor.empty(dev, k.dtype(), ctx.stream(), p.outputShape())) {
                    float[] pre = DepthwiseConv3x3Reference.preActivation(hx, hw, hb, null, k.stride(), k.layout());
                    double[] ref = new double[pre.length];
                    java.util.stream.IntStream.range(0, ref.length).parallel().forEach(i -> ref[i] = DepthwiseConv3x3Reference.activate(pre[i], k.act()));
                    Options custom = Options.builder().stride(k.stride()).layout(k.layout()).activation(k.act()).build().withBackend(Backend.CUSTOM);
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    List<String> notes = new ArrayList<>();
                    for (Setting s : settings) {
                        yk.fillBytes(0xff, ctx.stream());
                        String[] variant = new String[1];
                        s.run(() -> {
                            variant[0] = DepthwiseConv3x3.decide(x, w, b, null, yk, custom).variant();
                            DepthwiseConv3x3.apply(x, w, b, null, yk, custom, ctx.stream());
                        });
                        ctx.stream().synchronize();
                        Verdict v = Verifier.compare(yk, ref, null, DepthwiseConv3x3Verification.custom(k.act()), "reference");
                        boolean ok = v.pass() && (!k.act().isExact() || v.bitExact());
                        failed += ok ? 0 : 1;
                        notes.add(s.label() + " " + variant[0] + (ok ? "" : " CHECK FAILED: " + v));
                        paths.put(s.label(), () -> s.run(() -> DepthwiseConv3x3.apply(x, w, b, null, y, custom, ctx.stream())));
                    }
                    Map<String, Timing> t = ctx.timeInterleaved(paths);
                    double floor = ctx.floorUs(p.minBytes(), p.flops(), 0);
                    double first = t.get(settings.get(0).label()).medianUs();
                    StringBuilder row = new StringBuilder(String.format("%-34s %8.2f", k.label(), floor));
                    for (Setting s : settings) {
                        double us = t.get(s.label()).medianUs();
                        row.append(String.format(" %10.2f %6.3f", us, us / first));
                    }
                    out.println(row.append(String.format("  %8.3f  %s", floor / first, String.join(", ", notes))));
                }
            }
            if (failed > 0) {
                throw new IllegalStateException(failed + " settings failed their check (marked CHECK FAILED)");
            }
        }
    }
}
