package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;

import java.util.Locale;

/**
 * AUTO rule of {@link DepthwiseConv3x3}: pure function of the problem and the queried device.
 *
 * <p>Rules, from the H100 harness run of {@code cuda-native/dev/depthwise_conv3x3} (results in
 * {@code cuda-native/dev/depthwise_conv3x3/h100-results.txt}, cuDNN 9.14, bias on, no residual):
 * <ol>
 *   <li>No custom kernel (compute capability below 8.0, or a grid beyond the launch limits): VENDOR.</li>
 *   <li>F16, NHWC, stride 1, SILU or a GELU, with 4M ≤ N·C·H·W ≤ 16M elements: VENDOR. cuDNN's
 *   f16 NHWC grouped convolution is strong there and our NHWC kernel is latency-bound with an
 *   expensive epilogue: rows 8×96×112×112 (SiLU 75.5 µs cuDNN vs 95.6 custom; GELU 80.2 vs 109.3),
 *   32×512×28×28 (101.4 vs 112.5; 107.3 vs 123.3), 64×1024×14×14 (106.3 vs 122.6; 112.3 vs 138.2).
 *   Custom wins both sides of the band: 1×384×64×64 = 1.6M (29.5 vs 107.8) and 32×256×56×56 = 25.7M
 *   (186 vs 220; GELU a tie, 203.7 vs 203.3), 16×64×224×224 (337 vs 430). The band's edges are the
 *   midpoints between measured rows (provisional: a finer sweep moves them). BF16 is excluded because
 *   cuDNN's bf16 NHWC grouped convolution is 5-10× slower than the custom kernel in every row.</li>
 *   <li>Everything else: CUSTOM (1.2-12× faster than the cuDNN composition in the same run; the
 *   composition moves y at least twice more than the single fused pass).</li>
 * </ol>
 * The rule was measured on an H100 only; on other GPUs it is provisional.
 */
public final class DepthwiseConv3x3Heuristics {
    private DepthwiseConv3x3Heuristics() {}

    /** Oldest architecture the bundled fatbins carry SASS/PTX for (compute_80). */
    static final int MIN_CC = 80;

    /** Lower and upper edges (input elements) of the F16 NHWC smooth-activation band where cuDNN wins (rule 2). */
    static final long VENDOR_BAND_LO = 4L << 20;
    static final long VENDOR_BAND_HI = 16L << 20;

    /** The decision for {@code p} on {@code info}. */
    public static Decision decide(Problem p, DeviceInfo info) {
        String why = customUnsupported(p, info);
        if (why != null) {
            return new Decision(Backend.VENDOR, vendorVariant(p), "custom kernels do not apply: " + why);
        }
        if (p.dtype() == DType.F16 && p.layout() == Layout.NHWC && p.stride() == 1 && !p.act().isExact()
                && p.inputElements() >= VENDOR_BAND_LO && p.inputElements() <= VENDOR_BAND_HI) {
            return new Decision(Backend.VENDOR, vendorVariant(p),
                    "f16 NHWC stride-1 " + p.act() + " at " + p.inputElements() + " elements (band 4M..16M): cuDNN faster by 10-27% "
                            + "(H100 harness rows 8x96x112x112, 32x512x28x28, 64x1024x14x14)");
        }
        return new Decision(Backend.CUSTOM, customVariant(p),
                "one fused pass: 1.2-12x faster than cuDNN conv + bias/activation in the H100 harness run "
                        + "(geomean F32 3.9x, F16 2.8x, BF16 4.2x; anchor h100-pytorch-2026-11-22: cuDNN+SiLU 210/165 µs vs 34 µs floor)");
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
