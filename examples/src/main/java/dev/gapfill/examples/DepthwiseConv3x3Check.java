package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.bench.HostTensors;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Options;
import dev.gapfill.ops.DepthwiseConv3x3;
import dev.gapfill.verify.DepthwiseConv3x3Verification;
import dev.gapfill.verify.Verdict;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for depthwise_conv3x3: random problems (uneven sizes, every dtype, layout,
 * stride and activation, bias and residual on and off), outputs poisoned, through the public API; every
 * element against the reference. On a GPU each case runs AUTO, CUSTOM and VENDOR (custom: bit-exact
 * for NONE/RELU/RELU6, ≤ 1 ulp otherwise; vendor: the accumulation bound); on the CPU the API runs the
 * reference, so the check exercises validation and the reference.
 */
public final class DepthwiseConv3x3Check implements OpChecks.OpCheck {
    @Override public String op() { return "depthwise_conv3x3"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        DType[] dts = {DType.F32, DType.F16, DType.BF16};
        int[] odd = {1, 2, 7, 13, 17, 33, 97};
        for (int c = firstCase; c < firstCase + cases; c++) {
            DType dt = dts[c % dts.length];
            Layout layout = Layout.values()[(c / 3) % 2];
            Activation act = Activation.values()[rnd.nextInt(Activation.values().length)];
            int stride = 1 + rnd.nextInt(2);
            int n = 1 + rnd.nextInt(2);
            int ch = rnd.nextBoolean() ? odd[rnd.nextInt(odd.length)] : 8 * (1 + rnd.nextInt(8));
            int h = odd[rnd.nextInt(odd.length)];
            int w = rnd.nextBoolean() ? odd[rnd.nextInt(odd.length)] : 8 * (1 + rnd.nextInt(8));
            boolean withBias = rnd.nextBoolean();
            boolean withRes = rnd.nextBoolean();
            Options base = Options.builder().stride(stride).layout(layout).activation(act).build();
            long[] xs = layout == Layout.NCHW ? new long[] {n, ch, h, w} : new long[] {n, h, w, ch};
            long[] ys = DepthwiseConv3x3.outputShape(xs, base);
            try (Tensor hx = random(dt, rnd, xs); Tensor hw = random(dt, rnd, ch, 3, 3);
                 Tensor hb = withBias ? random(dt, rnd, ch) : null; Tensor hr = withRes ? random(dt, rnd, ys) : null;
                 Tensor x = hx.to(device); Tensor wt = hw.to(device); Tensor b = hb == null ? null : hb.to(device);
                 Tensor r = hr == null ? null : hr.to(device)) {
                Backend[] backends = device.isCpu() ? new Backend[] {Backend.AUTO} : new Backend[] {Backend.AUTO, Backend.CUSTOM, Backend.VENDOR};
                for (Backend be : backends) {
                    Options o = base.withBackend(be);
                    try (Tensor y = Tensor.empty(device, dt, ys)) {
                        y.fillBytes(0xff);  // on the CPU too: an empty CPU tensor is zeros, which a RELU output matches half the time
                        OpChecks.beforeOp(device, stream);
                        DepthwiseConv3x3.apply(x, wt, b, r, y, o, stream);
                        boolean vendorRan = device.isCuda()
                                && DepthwiseConv3x3.decide(x, wt, b, r, y, o).backend() == Backend.VENDOR;
                        Verdict v = vendorRan ? DepthwiseConv3x3Verification.checkVendor(y, hx, hw, hb, hr, o)
                                : DepthwiseConv3x3Verification.checkCustom(y, hx, hw, hb, hr, o);
                        if (!v.pass()) {
                            failures.add(String.format("depthwise_conv3x3 %s %s %s N=%d C=%d H=%d W=%d s=%d bias=%b res=%b: %s", be, dt, layout,
                                    n, ch, h, w, stride, withBias, withRes, v));
                        }
                    }
                }
            }
        }
        return failures;
    }

    private static Tensor random(DType dt, Random rnd, long... shape) {
        return HostTensors.uniform(dt, rnd, shape);
    }
}
