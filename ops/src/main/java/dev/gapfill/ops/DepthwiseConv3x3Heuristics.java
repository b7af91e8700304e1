package dev.gapfill.ops;

import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;

import java.util.Locale;

/**
 * AUTO rule of {@link DepthwiseConv3x3}: pure function of the problem and the queried device.
 *
 * <p>Rule (provisional until the sweep in {@code docs/benchmarks/<gpu>/depthwise_conv3x3.json} is
 * recorded from a committed tree): CUSTOM wherever its kernels exist (sm_80 or newer, grid within
 * limits), VENDOR otherwise. Origin: the anchor measurement {@code h100-pytorch-2026-11-22}, depthwise
 * rows: f16 32×256×56×56 + SiLU, cuDNN conv + separate SiLU 210 µs (NCHW) and 165 µs (NHWC) against a
 * 34 µs floor — the vendor composition moves y at least three times (conv write, activation read and
 * write) where the fused pass moves it once, so it cannot win at any size where bandwidth matters; at
 * tiny sizes both are launch-bound and the single launch wins too. No case in the anchors contradicts
 * it; a threshold enters here only with the benchmark row it comes from.
 */
public final class DepthwiseConv3x3Heuristics {
    private DepthwiseConv3x3Heuristics() {}

    /** Oldest architecture the bundled fatbins carry SASS/PTX for (compute_80). */
    static final int MIN_CC = 80;

    /** The decision for {@code p} on {@code info}. */
    public static Decision decide(Problem p, DeviceInfo info) {
        String why = customUnsupported(p, info);
        if (why != null) {
            return new Decision(Backend.VENDOR, vendorVariant(p), "custom kernels do not apply: " + why);
        }
        return new Decision(Backend.CUSTOM, customVariant(p),
                "one fused pass moves x and y once; cuDNN conv + bias/activation passes move y ≥ 3 times "
                        + "(provisional, anchors h100-pytorch-2026-11-22: cuDNN+SiLU 210/165 µs vs 34 µs floor at f16 32x256x56x56)");
    }

    /** Null if the custom kernels run {@code p} on {@code info}, else why not. */
    public static String customUnsupported(Problem p, DeviceInfo info) {
        if (info.cc() < MIN_CC) {
            return "needs compute capability >= 8.0, device is " + info.ccMajor() + "." + info.ccMinor();
        }
        int v = 16 / p.dtype().bytes();
        int th = DepthwiseConv3x3.rowsPerThread(p.stride());
        long rowBlocks = (p.outH() + th - 1) / th;
        if (p.layout() == Layout.NHWC) {
            int cv = (p.c() + v - 1) / v;
            int lanes = DepthwiseConv3x3.nhwcLanes(cv);
            long gy = (cv + lanes - 1) / lanes;
            long gx = p.n() * rowBlocks * ((p.outW() + 256 / lanes - 1) / (256 / lanes));
            if (gy > 65535) {
                return "C <= " + 65535L * lanes * v + " in NHWC (grid.y)";
            }
            if (gx > Integer.MAX_VALUE) {
                return "N·ceil(H'/" + th + ")·ceil(W'/" + 256 / lanes + ") < 2^31 blocks";
            }
        }
        return null;
    }

    /**
     * Kernel variant: layout, access width, stride. {@code vec16} where the vector dimension (C for
     * NHWC, W and W' for NCHW) is a multiple of 16/sizeof(T) — the kernel also needs 16-byte aligned
     * pointers, which the pool allocator gives, and falls back to its scalar path inside the launch
     * otherwise.
     */
    public static String customVariant(Problem p) {
        int v = 16 / p.dtype().bytes();
        boolean vec = p.layout() == Layout.NHWC ? p.c() % v == 0 : p.w() % v == 0 && p.outW() % v == 0;
        return p.layout().name().toLowerCase(Locale.ROOT) + (vec ? "_vec16" : "_scalar") + "_s" + p.stride();
    }

    /** The vendor composition for {@code p}, as the VENDOR path runs it. */
    public static String vendorVariant(Problem p) {
        String act;
        switch (p.act()) {
            case NONE: act = ""; break;
            case RELU: act = "+relu"; break;
            case RELU6: act = "+clipped_relu(6)"; break;
            case SILU: act = "+swish"; break;
            default: act = "+gelu_pass"; break;
        }
        return "cudnn_grouped_conv" + (p.bias() ? "+bias" : "") + (p.residual() ? "+residual" : "") + act;
    }
}
