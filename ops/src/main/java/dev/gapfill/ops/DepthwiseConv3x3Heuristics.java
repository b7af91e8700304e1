package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import dev.gapfill.ops.DepthwiseConv3x3.Problem;

/**
 * AUTO rule and launch geometry of {@link DepthwiseConv3x3}: pure functions of the problem and the
 * queried device.
 *
 * <p>Rules, from the H100 harness run of {@code cuda-native/dev/depthwise_conv3x3} (results in
 * {@code cuda-native/dev/depthwise_conv3x3/h100-results.txt}, cuDNN 9.14, bias on, no residual; the
 * vendor time of a row is the faster of cuDNN's fused conv+bias+activation call, where cuDNN accepts
 * it, and the composition, as {@link DepthwiseConv3x3Cudnn} keeps the faster):
 * <ol>
 *   <li>No custom kernel (compute capability below 8.0, or more threads than 32-bit indexing covers):
 *   VENDOR.</li>
 *   <li>Everything else: CUSTOM. The custom kernels were faster than the vendor in all 216 rows of
 *   the sweep (6 shapes, stride 2 for three, × NCHW/NHWC × F32/F16/BF16 × NONE/RELU/SILU/GELU_ERF):
 *   1.37× at the closest (f16 NHWC 8×96×112×112 s1 GELU_ERF: 60.6 µs custom vs 83.3 µs cuDNN; table in
 *   docs/ops/depthwise_conv3x3.md), geomean F32 4.4×, F16 2.8×, BF16 6.4×. The F16 NHWC band
 *   that went to cuDNN before (8×96×112×112, 32×512×28×28, 64×1024×14×14 with SILU/GELU) is custom now:
 *   53.4 vs 78.3, 64.3 vs 101.9, 63.6 vs 138.5 µs (SILU rows).</li>
 * </ol>
 * The Java sweep at {@code fcc850b} (ring kernel and fast activations shipped; docs/benchmarks/h100/depthwise_conv3x3.json)
 * has custom ahead in all 216 rows again: closest 1.32× (F16), geomean F16 3.18×, BF16 7.83×, F32 4.62×.
 * The rule was measured on an H100 only; on other GPUs it is provisional.
 */
public final class DepthwiseConv3x3Heuristics {
    private DepthwiseConv3x3Heuristics() {}

    /** Oldest architecture the bundled fatbins carry SASS/PTX for (compute_80). */
    static final int MIN_CC = 80;

    /** Threads per block of every depthwise kernel. */
    static final int BLOCK = 256;

    /**
     * Target output rows per thread strip (the kernels walk a strip's rows in a rolled loop): NCHW 8
     * (strips of ≤ 8 beat ≤ 16 by 5-11 % in the H100 run, e.g. f16 32×256×56×56 NONE 56.8 vs 63.0 µs,
     * 32×512×28×28 39.1 vs 43.9), except F32 stride 2, which runs half-width accesses with 16 (8-18 %
     * faster: f32 32×256×56×56 s2 NONE 59.9 vs 67.2 µs, SILU 62.3 vs 79.3); NHWC 16.
     */
    static final int NCHW_ROWS = 8;
    static final int NCHW_ROWS_F32_S2 = 16;
    static final int NHWC_ROWS = 16;

    /**
     * System property overriding nchw.cu's target rows per strip (a positive integer; {@link #NCHW_ROWS} and
     * {@link #NCHW_ROWS_F32_S2} otherwise), for measurements such as {@code DepthwiseKnobProbe}: any value gives the
     * same outputs, only the launch geometry changes.
     */
    public static final String NCHW_ROWS_PROPERTY = "gapfill.depthwise.nchwRows";

    /** Launch geometry: 1-D grid of {@link #BLOCK}-thread blocks, output rows per strip, NHWC channel-group chunk. */
    public record Grid(long blocks, int rowsPerStrip, int chunk, long threads) {}

    /** The decision for {@code p} on {@code info}. */
    public static Decision decide(Problem p, DeviceInfo info) {
        String why = customUnsupported(p, info);
        if (why != null) {
            return new Decision(Backend.VENDOR, vendorVariant(p), "custom kernels do not apply: " + why);
        }
        return new Decision(Backend.CUSTOM, customVariant(p),
                "one fused pass: faster than cuDNN conv + bias/activation in all 216 rows of the H100 sweeps "
                        + "(fcc850b: geomean F16 3.18x, BF16 7.83x, F32 4.62x; closest row 1.32x)");
    }

    /** Null if the custom kernels run {@code p} on {@code info}, else why not. */
    public static String customUnsupported(Problem p, DeviceInfo info) {
        if (info.cc() < MIN_CC) {
            return "needs compute capability >= 8.0, device is " + info.ccMajor() + "." + info.ccMinor();
        }
        if (useRing(p)) {
            return null;  // blocks ≤ N·H·W·C < 2^31 (validated): no launch limit to check
        }
        Grid g = p.layout() == Layout.NHWC ? nhwcGrid(p, info.smCount()) : nchwGrid(p, nchwVectorWidth(p), info.smCount());
        // the kernels index threads with 32-bit unsigned arithmetic; keep a signed margin
        if (g.blocks() < 1 || g.blocks() * BLOCK > Integer.MAX_VALUE) {
            return "more than 2^31 threads (" + g.threads() + ") for 32-bit indexing";
        }
        return null;
    }

    /**
     * nchw.cu's stride-1 row loop unrolled three times ({@code dwconv3x3_nchw_<f16|bf16>_s1_v8_u3}: the accumulator rows
     * and row buffers change roles by name instead of by register copies), for F16/BF16 at an access width {@code vw}
     * of 8 with an exact activation. H100 (dev/depthwise_conv3x3/nchw_u3_ab.cu at 8b0c8c5, bit-identical on every
     * element): RELU 0.86-0.94× the rolled loop's time (16×64×224×224 F16 101.6 → 87.5 µs), NONE with a residual
     * 0.97-0.99×; SiLU/GELU_ERF 1.01-1.05× and F32 1.09-1.37×, so those keep the rolled loop.
     * {@link #NCHW_UNROLL3_PROPERTY} turns it off ({@code false}) or on for every activation ({@code true}).
     */
    public static boolean useNchwUnroll3(Problem p, int vw) {
        if (p.layout() != Layout.NCHW || p.stride() != 1 || p.dtype() == DType.F32 || vw != 8) {
            return false;
        }
        String mode = System.getProperty(NCHW_UNROLL3_PROPERTY, "");
        return "true".equalsIgnoreCase(mode) || (!"false".equalsIgnoreCase(mode) && p.act().isExact());
    }

    /**
     * System property for {@link #useNchwUnroll3}: {@code false} keeps the rolled loop everywhere, {@code true} takes
     * the unrolled one for every F16/BF16 stride-1 NCHW problem at access width 8 (any activation); unset (or any other
     * value), exact activations only. Read at every call.
     */
    public static final String NCHW_UNROLL3_PROPERTY = "gapfill.depthwise.nchwUnroll3";

    /**
     * NCHW access width (output columns per thread, one access each): the widest power of two ≤
     * 16/sizeof(T) with W % VW == 0 (stride 1) or W == 2·W' and W' % VW == 0 (stride 2), so no access
     * crosses an image row; halved for F32 stride 2 (measured faster, see {@link #NCHW_ROWS}). The
     * launch narrows it further if a pointer is not VW·sizeof(T)-aligned.
     */
    public static int nchwVectorWidth(Problem p) {
        int wo = p.outW();
        int vw = 1;
        for (int v = 16 / p.dtype().bytes(); v >= 2; v /= 2) {
            boolean fits = p.stride() == 1 ? p.w() % v == 0 : p.w() == 2 * wo && wo % v == 0;
            if (fits) {
                vw = v;
                break;
            }
        }
        if (p.dtype() == DType.F32 && p.stride() == 2 && vw > 1) {
            vw /= 2;
        }
        return vw;
    }

    /** NHWC channels per thread of the compiled kernel (see nhwc.cu): 4 for F16/BF16 stride 1, else 2. */
    public static int nhwcChannelsPerThread(Problem p) {
        return p.dtype() != DType.F32 && p.stride() == 1 ? 4 : 2;
    }

    /** NHWC output columns per thread of the compiled kernel: 2 for F16/BF16 stride 1 and F32 stride 2, else 4. */
    public static int nhwcColumnsPerThread(Problem p) {
        boolean half = p.dtype() != DType.F32;
        return (half && p.stride() == 1) || (!half && p.stride() == 2) ? 2 : 4;
    }

    /**
     * Rows per strip: balanced over ceil(H'/target) strips, then halved (not below 2) while the grid
     * has fewer than 1024 threads per SM (the 1×384×64×64 row: strips of 2 rows).
     */
    static int rowsPerStrip(int ho, int target, long threadsPerStrip, int sms) {
        int strips = (int) ((ho + (long) target - 1) / target);  // long: H' may be up to 2^31 - 1
        int rps = (int) ((ho + (long) strips - 1) / strips);
        while (rps > 2 && threadsPerStrip * ((ho + (long) rps - 1) / rps) < 1024L * sms) {
            rps = (rps + 1) / 2;
        }
        return rps;
    }

    /** NCHW grid: threads (column vector, strip, plane), strips from the row target alone (no occupancy known). */
    public static Grid nchwGrid(Problem p, int vw, int sms) {
        return nchwGrid(p, vw, sms, 0);
    }

    /**
     * NCHW grid: threads (column vector, strip, plane). With {@code blocksPerSm} (the kernel's resident blocks of
     * {@link #BLOCK} threads per SM, from the occupancy calculator; 0 when unknown), stride 2 takes the strip height of
     * {@link #nchwStrideTwoRows}, except F32 with SiLU/GELU; stride 1, or {@link #NCHW_ROWS_PROPERTY} set, keeps the row
     * target's. F32 SiLU/GELU at stride 2: with the wave model's heights they took 1.028-1.072× the target's time on
     * 32×256×56×56 (SiLU, GELU_TANH, GELU_ERF) and 1.034× on 128×64×56×56 SiLU, 0.98-1.00× elsewhere (H100,
     * {@code docs/benchmark-runs/h100/depthwise-knob-probe-c8843ec-f32-smooth.txt}; the sweep at {@code c8843ec} the same): their
     * double-float epilogues, not the waves, set the time.
     */
    public static Grid nchwGrid(Problem p, int vw, int sms, int blocksPerSm) {
        long perStrip = (long) p.n() * p.c() * ((p.outW() + vw - 1) / vw);
        int target = nchwRowsTarget(p);
        int rps = rowsPerStrip(p.outH(), target, perStrip, sms);
        if (p.stride() == 2 && blocksPerSm > 0 && !(p.dtype() == DType.F32 && !p.act().isExact())
                && System.getProperty(NCHW_ROWS_PROPERTY) == null) {
            rps = nchwStrideTwoRows(p.outH(), rps, perStrip, (long) sms * blocksPerSm);
        }
        long threads = perStrip * ((p.outH() + (long) rps - 1) / rps);
        return new Grid((threads + BLOCK - 1) / BLOCK, rps, 0, threads);
    }

    /**
     * Stride-2 strip height by wave count: a block's time grows with its strip's input rows (2·rps + 1), and a grid
     * whose last wave of blocks is part-full takes about as long as a full one, so the cost of a height is modelled as
     * ceil(blocks / resident slots) · (2·rps + 1). From {@code rps} (the row target's height) down to 2, a balanced
     * height (one that ceil(H' / strips) gives for its strip count) replaces the current pick where its cost is at
     * least {@link #STRIDE_TWO_WAVE_MARGIN} lower. H100, {@code DepthwiseKnobProbe} at {@code 155083f}
     * ({@code docs/benchmark-runs/h100/depthwise-knob-probe-155083f.txt}): over 13 stride-2 NCHW cases and 5-7 heights
     * each, the model's cheapest measured height was the fastest or within 0.5 % of it on every case (F32
     * 8×96×112×112 NONE: 5 rows, 0.929× the time of 7; F16 32×256×56×56 NONE: 4 rows, 0.924× the time of 7), and the
     * row target's height was kept wherever it was fastest (F32 64×1024×28×28, where 4 rows took 1.19× its time); at
     * stride 1 the model does not hold (F16 8×96×112×112: 4 rows predicted 0.90×, measured 1.03×), so stride 1 keeps
     * the target's height.
     */
    static int nchwStrideTwoRows(int ho, int rps, long perStrip, long slots) {
        int best = rps;
        double bestCost = strideTwoCost(ho, rps, perStrip, slots);
        for (int r = rps - 1; r >= 2; r--) {
            int strips = (int) ((ho + (long) r - 1) / r);
            if ((ho + (long) strips - 1) / strips != r) {
                continue;  // not a balanced height: the same strip count gives a smaller one
            }
            double cost = strideTwoCost(ho, r, perStrip, slots);
            if (cost < bestCost * (1 - STRIDE_TWO_WAVE_MARGIN)) {
                best = r;
                bestCost = cost;
            }
        }
        return best;
    }

    /** Relative saving a stride-2 strip height must promise ({@link #nchwStrideTwoRows}) to replace a taller one. */
    static final double STRIDE_TWO_WAVE_MARGIN = 0.05;

    private static double strideTwoCost(int ho, int rps, long perStrip, long slots) {
        long blocks = (perStrip * ((ho + (long) rps - 1) / rps) + BLOCK - 1) / BLOCK;
        long waves = (blocks + slots - 1) / slots;
        return (double) waves * (2 * rps + 1);
    }

    /** nchw.cu's target rows per strip: {@link #NCHW_ROWS_PROPERTY} when set, else 16 for F32 stride 2 and 8 otherwise. */
    static int nchwRowsTarget(Problem p) {
        Integer rows = positiveRowsProperty(NCHW_ROWS_PROPERTY);
        if (rows != null) {
            return rows;
        }
        return p.dtype() == DType.F32 && p.stride() == 2 ? NCHW_ROWS_F32_S2 : NCHW_ROWS;
    }

    /**
     * A rows property ({@link #NCHW_ROWS_PROPERTY}, {@link #PLANE_BAND_ROWS_PROPERTY}): null when unset, else its
     * positive integer value; anything else is refused with the property's name rather than silently ignored.
     */
    static Integer positiveRowsProperty(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            return null;
        }
        int rows;
        try {
            rows = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            rows = 0;
        }
        if (rows < 1) {
            throw new ArgumentException(name, "a positive number of rows", v);
        }
        return rows;
    }

    /** NHWC channel groups per chunk: all of them up to 64, else the largest divisor in [16, 64], else 32. */
    static int nhwcChunk(long groups) {
        if (groups <= 64) {
            return (int) groups;
        }
        for (int d = 64; d >= 16; d--) {
            if (groups % d == 0) {
                return d;
            }
        }
        return 32;
    }

    /** NHWC grid: threads (channel group in chunk, column group, chunk, strip, image). */
    public static Grid nhwcGrid(Problem p, int sms) {
        int cpt = nhwcChannelsPerThread(p);
        int wc = nhwcColumnsPerThread(p);
        long groups = (p.c() + (long) cpt - 1) / cpt;  // in long: C = 2^31 − 1 wrapped
        int cb = nhwcChunk(groups);
        long perStrip = (long) p.n() * ((groups + cb - 1) / cb) * cb * ((p.outW() + (long) wc - 1) / wc);
        int rps = rowsPerStrip(p.outH(), NHWC_ROWS, perStrip, sms);
        long threads = perStrip * ((p.outH() + (long) rps - 1) / rps);
        return new Grid((threads + BLOCK - 1) / BLOCK, rps, cb, threads);
    }

    /**
     * Geometry of the shared-memory ring kernel ({@code nhwc_ring.cu}): blocks of {@code cgs × tws} threads, each
     * block one tile of {@code cgs·cpt} channels × {@code tws·wc} output columns ({@link #config}) × a strip of
     * {@code rowsPerStrip} output rows of one image; {@code smemBytes} of dynamic shared memory (a ring of
     * {@link #RING_SLOTS} input rows).
     */
    public record RingGrid(RingConfig config, int cgs, int tws, int colTiles, int chunks, int strips, int rowsPerStrip,
                           long blocks, int threads, int smemBytes, int blocksPerSm) {}

    /**
     * The ring kernel's thread geometries, as compiled in nhwc_ring.cu: channels and columns per thread, channel
     * groups per tile at most (128 channels: a tile of 256 threads still spans ≥ 8 columns), the register bound of
     * the entry point's launch bounds, and the symbol's infix.
     */
    public enum RingConfig {
        /** 4 channels × 2 columns, ≤ 128 registers (121-122 used): C > 128 with NONE, RELU, RELU6. */
        C4W2(4, 2, 128, 128, ""),
        /** 2 channels × 4 columns, ≤ 85 registers on sm_90 (80 used: 3 blocks of 256 per SM), ≤ 128 before: C ≤ 128. */
        C2W4(2, 4, 80, 128, "c2w4_"),
        /**
         * 2 channels × 2 columns, 64 registers on sm_90 (4 blocks per SM), 72 in the sm_80 image (launch bounds ≤ 85; 3
         * blocks of 256 per SM there: the bound's 85 had planned 2, underfilling small shapes on A100, RTX 30/40 and L4):
         * C > 128 with SILU, GELU.
         */
        C2W2(2, 2, 64, 72, "c2w2_"),
        /**
         * F32: 2 channels × 4 columns at ≤ 128 registers (120 used on sm_80 and sm_90, no spills: 2 blocks of 256 per SM,
         * as nhwc.cu's F32 kernel), every C and activation; F32's double-float SiLU/GELU spill at C2W4's 80 registers.
         */
        C2W4_F32(2, 4, 120, 128, "c2w4_"),
        /**
         * F32 SiLU/GELU below {@link #RING_F32_C2W2_MAX_OUTPUTS} outputs: 2 channels × 2 columns at ≤ 128 registers
         * (100 used on sm_90a, 96 on sm_80: 2 blocks of 256 per SM), fewer accumulators for the double-float epilogue.
         */
        C2W2_F32(2, 2, 100, 128, "c2w2_");

        final int cpt;
        final int wc;
        final int registersSm90;
        final int registersBefore;
        final String infix;

        RingConfig(int cpt, int wc, int registersSm90, int registersBefore, String infix) {
            this.cpt = cpt;
            this.wc = wc;
            this.registersSm90 = registersSm90;
            this.registersBefore = registersBefore;
            this.infix = infix;
        }

        /**
         * Registers per thread on a device: ptxas's count of the sm_90a image on sm_90, and before it of the sm_80 image
         * where that sets the occupancy apart from the launch bounds' ceiling (C2W2: 72 of ≤ 85), else the ceiling (the
         * others' counts, 96–128 in the sm_80 image, give the same blocks per SM as their ceilings).
         */
        int registers(DeviceInfo info) { return info.cc() >= 90 ? registersSm90 : registersBefore; }

        /** Channels per thread. */
        public int channelsPerThread() { return cpt; }

        /** Output columns per thread. */
        public int columnsPerThread() { return wc; }

        int maxGroups() { return 128 / cpt; }

        /** The kernel symbol for a dtype, e.g. {@code dwconv3x3_nhwc_ring_c2w4_f16_s1}. */
        public String symbol(DType t) {
            return "dwconv3x3_nhwc_ring_" + infix + t.name().toLowerCase(java.util.Locale.ROOT) + "_s1";
        }
    }

    static final int RING_SLOTS = 4;

    /** Channels per 16-byte copy of the ring kernel (8 for F16/BF16, 4 for F32): C a multiple of it runs the vector path. */
    public static int ringVectorChannels(Problem p) {
        return 16 / p.dtype().bytes();
    }

    /**
     * The ring geometry for {@code p} (H100, cuda-native/dev/depthwise_conv3x3/h100-241f285-ring-cpt2.txt, the
     * sweep's F16/BF16 stride-1 NHWC shapes, all three interleaved, every element bit-identical): C ≤ 128 → C2W4
     * (8x112x112x96 F16 NONE 24.5 vs 30.5 µs, SILU 30.3 vs 43.7; 16x224x224x64 SILU 112.7 vs 127.6, NONE 86.7 vs
     * 89.5); larger C with a smooth activation → C2W2 (32x56x56x256 SILU 65.2 vs 76.2 µs, 32x28x28x512 GELU 40.5 vs
     * 48.1); larger C with NONE/RELU/RELU6 → C4W2 (64x14x14x1024 NONE 31.1 against 34.3 for C2W2 and 33.3 for C2W4).
     * F32: C2W4_F32, and C2W2_F32 for SiLU/GELU below {@link #RING_F32_C2W2_MAX_OUTPUTS} outputs;
     * {@link #RING_F32_GEOMETRY_PROPERTY} forces either.
     */
    public static RingConfig ringConfig(Problem p) {
        if (p.dtype() == DType.F32) {
            String forced = System.getProperty(RING_F32_GEOMETRY_PROPERTY, "");
            if ("c2w2".equalsIgnoreCase(forced) || "c2w4".equalsIgnoreCase(forced)) {
                return "c2w2".equalsIgnoreCase(forced) ? RingConfig.C2W2_F32 : RingConfig.C2W4_F32;
            }
            return !p.act().isExact() && p.outputElements() < RING_F32_C2W2_MAX_OUTPUTS ? RingConfig.C2W2_F32 : RingConfig.C2W4_F32;
        }
        if (p.c() <= 128) {
            return RingConfig.C2W4;
        }
        return p.act().isExact() ? RingConfig.C4W2 : RingConfig.C2W2;  // exact: NONE, RELU, RELU6; else SILU/GELU
    }

    /**
     * Whether {@code p} runs the ring kernel: NHWC, stride 1 (F16/BF16: the H100 A/B against nhwc.cu's
     * register-pipelined kernel, cuda-native/dev/depthwise_conv3x3/h100-a91ff10-ring.txt: 1.13-1.46× faster on
     * NONE/RELU over the sweep's stride-1 shapes, bit-identical outputs; F32: {@link RingConfig#C2W4_F32}, the sweep at
     * 86a6729 with nhwc.cu timed beside it on every row (peer {@code nhwc_regs_us}): NONE/RELU 1.22-1.46× faster,
     * SiLU/GELU 0.99-1.45×; only where C is a multiple of 4, so the ring copies 16 bytes at a time, since nhwc.cu
     * vectorises F32 from C % 2). Stride 2: {@link #useRingS2}; {@link #RING_PROPERTY} turns the stride-1 ring off.
     */
    public static boolean useRing(Problem p) {
        return p.layout() == Layout.NHWC && p.stride() == 1 && (p.dtype() != DType.F32 || p.c() % ringVectorChannels(p) == 0)
                && !"false".equalsIgnoreCase(System.getProperty(RING_PROPERTY, "true"));
    }

    /**
     * System property that turns the ring kernel off ({@code false}): stride-1 NHWC then runs nhwc.cu's
     * register-pipelined kernel, as before the ring was measured. Read at every call.
     */
    public static final String RING_PROPERTY = "gapfill.depthwise.nhwcRing";

    /**
     * System property that forces F32 stride-1 NHWC's ring geometry: {@code c2w2} ({@link RingConfig#C2W2_F32}) or
     * {@code c2w4} ({@link RingConfig#C2W4_F32}); unset (or any other value), {@link #ringConfig}'s rule. Read at every
     * call.
     */
    public static final String RING_F32_GEOMETRY_PROPERTY = "gapfill.depthwise.nhwcRingF32Geometry";

    /**
     * Outputs (N·C·H·W) below which F32 stride-1 SiLU/GELU take the ring's 2 × 2 geometry: on the H100 at 17854af + the
     * staged patch it ran 0.84-0.97× the 2 × 4 kernel's time on 1x64x64x384 (1.6M outputs) and 8x112x112x96 (9.6M),
     * but 1.01-1.23× on the sweep's 12.8M-and-larger shapes but one (32x28x28x512 GELU_ERF, 0.93×).
     */
    public static final long RING_F32_C2W2_MAX_OUTPUTS = 10_000_000L;

    /**
     * System property that forces the stride-2 ring kernel on ({@code true}) or off ({@code false}) wherever C is a
     * multiple of 16 bytes of channels; unset (or any other value), {@link #useRingS2} decides. Read at every call.
     */
    public static final String RING_S2_PROPERTY = "gapfill.depthwise.nhwcRingS2";

    /**
     * Output elements (N·C·H′·W′) from which the stride-2 ring takes its 2 × 2 geometry for every dtype and activation,
     * and F32 SiLU/GELU take the ring at all: between the H100 sweep's 2.4M-element shape (8x112x112x96), where 2 × 4
     * stays ahead on NONE/RELU (1.01-1.02×) and nhwc.cu on F32 GELU_ERF (1.04×), and its 6.4M- and 12.8M-element
     * shapes, where 2 × 2 leads (5474511); sizes in between are not measured.
     */
    public static final long RING_S2_C2W2_MIN_OUTPUTS = 1L << 22;

    /**
     * Whether {@code p} runs the stride-2 ring kernel ({@code nhwc_ring.cu}'s {@code dw_ring_s2}, geometry
     * {@link #ringS2Config}): NHWC, stride 2, C a multiple of 16 bytes of channels, and F16/BF16 or an exact activation
     * (NONE/RELU/RELU6) or at least {@link #RING_S2_C2W2_MIN_OUTPUTS} outputs. The H100 sweeps timed it beside nhwc.cu on
     * all 36 stride-2 NHWC rows, every output checked: at 0bb8244 (2 × 4 only) F16/BF16 1.04-1.48× faster (8x112x112x96
     * F16 NONE 14.8 against 20.7 µs), F32 NONE/RELU 1.04-1.17×, F32 SiLU/GELU 0.79-0.97× (the double-float epilogue at
     * 127 registers); at 5474511 the 2 × 2 geometry ran F32 SiLU/GELU 1.07-1.17× faster than nhwc.cu on the two larger
     * shapes but 0.96-1.00× on the 2.4M-element one, which keeps nhwc.cu. {@link #RING_S2_PROPERTY} overrides the rule.
     */
    public static boolean useRingS2(Problem p) {
        if (p.layout() != Layout.NHWC || p.stride() != 2 || p.c() % ringVectorChannels(p) != 0) {
            return false;
        }
        String forced = System.getProperty(RING_S2_PROPERTY, "");
        if ("true".equalsIgnoreCase(forced)) {
            return true;
        }
        if ("false".equalsIgnoreCase(forced)) {
            return false;
        }
        return p.dtype() != DType.F32 || p.act().isExact() || p.outputElements() >= RING_S2_C2W2_MIN_OUTPUTS;
    }

    /**
     * System property that forces the stride-2 ring's thread geometry: {@code c2w4} (2 channels × 4 output columns per
     * thread) or {@code c2w2} (2 × 2); unset (or any other value), {@link #ringS2Config}'s rule. Read at every call.
     */
    public static final String RING_S2_GEOMETRY_PROPERTY = "gapfill.depthwise.nhwcRingS2Geometry";

    /**
     * The stride-2 ring's geometry for {@code p}: {@link RingConfig#C2W2} (70 registers for F16/BF16 on sm_90a, 3 blocks
     * of 256 per SM; 114 for F32, 2) for F16/BF16 SiLU/GELU and wherever there are at least
     * {@link #RING_S2_C2W2_MIN_OUTPUTS} outputs, else {@link RingConfig#C2W4} (108 and 127 registers, 2 blocks per SM).
     * The H100 sweep at 5474511 timed both on all 36 stride-2 NHWC rows, every output checked: 2 × 2 / 2 × 4 time on
     * 32x56x56x256 and 16x224x224x64 F16/BF16 0.86-0.90 (NONE/RELU) and 0.75-0.78 (SiLU/GELU; 32x56x56x256 F16 GELU_ERF
     * 41.3 → 30.9 µs), F32 NONE/RELU 0.98-0.99; on 8x112x112x96 F16/BF16 SiLU/GELU 0.90-0.96 but NONE/RELU 1.01-1.02 and
     * F32 NONE/RELU 1.02. {@link #RING_S2_GEOMETRY_PROPERTY} overrides the rule.
     */
    public static RingConfig ringS2Config(Problem p) {
        String forced = System.getProperty(RING_S2_GEOMETRY_PROPERTY, "");
        if ("c2w2".equalsIgnoreCase(forced)) {
            return RingConfig.C2W2;
        }
        if ("c2w4".equalsIgnoreCase(forced)) {
            return RingConfig.C2W4;
        }
        boolean halfSmooth = p.dtype() != DType.F32 && !p.act().isExact();
        return halfSmooth || p.outputElements() >= RING_S2_C2W2_MIN_OUTPUTS ? RingConfig.C2W2 : RingConfig.C2W4;
    }

    /** The stride-2 ring kernel's symbol, e.g. {@code dwconv3x3_nhwc_ring_c2w4_f16_s2}. */
    public static String ringS2Symbol(RingConfig cfg, DType t) {
        if (cfg != RingConfig.C2W4 && cfg != RingConfig.C2W2) {
            throw new IllegalArgumentException("no stride-2 ring kernel of geometry " + cfg);
        }
        return "dwconv3x3_nhwc_ring_c2w" + cfg.wc + "_" + t.name().toLowerCase(java.util.Locale.ROOT) + "_s2";
    }

    /**
     * ptxas's registers of the stride-2 ring kernels on sm_90a (c2w4: 108 F16/BF16, 127 F32; c2w2: 70 F16/BF16, 114
     * F32); elsewhere the launch bound's ceiling (128, and 85 for c2w2 F16/BF16).
     */
    static int ringS2Registers(RingConfig cfg, DType t, DeviceInfo info) {
        boolean c2w2 = cfg == RingConfig.C2W2;
        if (info.cc() >= 90) {
            return t == DType.F32 ? (c2w2 ? 114 : 127) : (c2w2 ? 70 : 108);
        }
        return c2w2 && t != DType.F32 ? 85 : 128;
    }

    /** The stride-2 ring kernel's geometry (the stride-1 rules over the output rows and columns, {@link #ringS2Config}). */
    public static RingGrid ringGridS2(Problem p, DeviceInfo info) {
        RingConfig cfg = ringS2Config(p);
        return ringGrid(p, info, cfg, ringS2Registers(cfg, p.dtype(), info), 2);
    }

    /**
     * Ring kernel geometry for {@code p} on {@code info}, in the {@link #ringConfig} geometry. Channels: all groups
     * of cpt channels in one tile up to 128 channels, else chunks of 128. Columns: the widest tile (≤ 256 threads)
     * that wastes the fewest columns of W, among widths down to half the widest. Strips: the strip count that minimises the busiest SM's input rows,
     * ceil(blocks / SMs) × (rows + 2 halo rows + ~4 rows of pipeline fill), among the counts that give every
     * resident block slot of the GPU a block (when the shape has that many).
     */
    public static RingGrid ringGrid(Problem p, DeviceInfo info) {
        RingConfig cfg = ringConfig(p);
        return ringGrid(p, info, cfg, cfg.registers(info), 1);
    }

    /**
     * The ring geometry of {@code stride} (1, or 2 for the {@link #useRingS2} kernel): column tiles over
     * the output columns, strips over the output rows; a tile row holds stride·TW + (3 − stride) input pixels.
     */
    private static RingGrid ringGrid(Problem p, DeviceInfo info, RingConfig cfg, int registers, int stride) {
        int cpt = cfg.cpt;
        int wcol = cfg.wc;
        int h = p.outH();
        int wd = p.outW();
        int groups = (int) ((p.c() + (long) cpt - 1) / cpt);  // in long: C = 2^31 − 1 wrapped
        int cgs = Math.min(groups, cfg.maxGroups());
        int chunks = (groups + cgs - 1) / cgs;
        int twsMax = (int) Math.max(1, Math.min(BLOCK / cgs, (wd + (long) wcol - 1) / wcol));
        int tws = twsMax;
        long colTiles = 0;
        long bestWaste = Long.MAX_VALUE;
        for (int t = twsMax; t >= Math.max(1, twsMax / 2); t--) {
            long tiles = (wd + (long) t * wcol - 1) / (t * wcol);  // long: W may be up to 2^31 - 1
            long waste = tiles * t * wcol - wd;
            if (waste < bestWaste) {
                bestWaste = waste;
                tws = t;
                colTiles = tiles;
            }
        }
        int threads = cgs * tws;
        int smem = RING_SLOTS * (stride * tws * wcol + 3 - stride) * cgs * cpt * p.dtype().bytes();
        int bps = Occupancy.blocksPerSm(threads, registers, smem, info);
        int sms = info.smCount();
        long perStrip = (long) colTiles * chunks * p.n();
        long need = Math.min((long) bps * sms, perStrip * h);
        // the cost grows with the strip count past the smallest that fills the GPU (more halo rows, more waves)
        // but for the rounding of waves and rows; a window above that count finds the minimum
        int sMin = (int) Math.min(h, (need + perStrip - 1) / perStrip);
        int sMax = (int) Math.min(h, 4L * sMin + 64);
        int rps = h;
        long best = -1;
        for (int st = Math.max(1, sMin); st <= sMax; st++) {
            int r = (int) ((h + (long) st - 1) / st);  // long: H' may be up to 2^31 - 1
            if ((h + (long) r - 1) / r != st || perStrip * st < need) {
                continue;  // same rows per strip as a smaller count, or too few blocks
            }
            long cost = (perStrip * st + sms - 1) / sms * (stride * r + 6);
            if (best < 0 || cost < best) {
                best = cost;
                rps = r;
            }
        }
        int strips = (int) ((h + (long) rps - 1) / rps);
        return new RingGrid(cfg, cgs, tws, (int) colTiles, chunks, strips, rps, perStrip * strips, threads, smem, bps);
    }

    // ------------------------------------------------------------------ NCHW whole-plane kernel (nchw_plane.cu)

    /**
     * System property that steers the whole-plane NCHW kernel: {@code auto} (default: {@link #usePlane}'s measured
     * rule), {@code false} (never: nchw.cu everywhere), {@code force} (wherever its geometry applies: stride 1, any
     * dtype, plane size and activation; for tests). Read at every call.
     */
    public static final String PLANE_PROPERTY = "gapfill.depthwise.nchwPlane";

    /** Largest H·W (input pixels per plane) for which F16/BF16 with an exact activation run the plane kernel: 56 × 56. */
    static final int PLANE_MAX_HALF_PIXELS = 56 * 56;

    /** Largest H·W for which F16/BF16 with a smooth activation (SiLU, GELU) run the plane kernel: 64 × 64. */
    static final int PLANE_MAX_HALF_PIXELS_SMOOTH = 64 * 64;

    /**
     * Smallest H·W from which F16/BF16 with an exact activation leave the plane kernel for nchw.cu's unrolled row loop,
     * where that loop runs ({@link #useNchwUnroll3}): 48 × 48.
     */
    static final int UNROLL3_OVER_PLANE_MIN_PIXELS = 48 * 48;

    /** Dynamic shared memory per block of the plane kernel at most: two per SM fit in the 228 KiB of sm_90 / 164 KiB of sm_80. */
    static final int PLANE_SMEM_CAP = 80 * 1024;

    /**
     * Threads per block the plane geometry aims for (planes per chunk = this / threads per plane, rounded); 16-bit types
     * whose planes fill less than 80 % of a 128-thread block aim for 256 instead (32×256×56×56 F16: 49 items a plane,
     * 2 planes = 98 of 128 threads; at 256, 5 planes = 245: 46.6 against 49.2 µs).
     */
    static final int PLANE_THREAD_TARGET = 128;
    static final int PLANE_THREAD_TARGET_WIDE = 256;

    /**
     * Whether {@code p} runs on the whole-plane NCHW kernel when {@link #planeGrid} applies to its tensors. Stride-1
     * NCHW only: F32 with NONE/RELU/RELU6 at any plane size the geometry takes (its SiLU/GELU evaluate in fp64 and
     * lose at the plane kernel's occupancy), F16/BF16 with every activation at H·W ≤ 56 × 56 (below: the bounds since
     * the unrolled row loop). Measured on the H100
     * (cuda-native/dev/depthwise_conv3x3/h100-plane-geo.txt, the shipped geometry in each row's best column: "plane"
     * where the outputs are staged, "dir128"/"dir256" where they leave as 16-byte row pieces; both kernels interleaved,
     * L2 flushed, every output bit-identical to nchw.cu's): 64×1024×14×14 F16/BF16 1.66-1.82× nchw.cu (F16 NONE 27.4
     * against 49.6 µs), 32×512×28×28 1.22-1.31×, 32×256×56×56 1.01-1.17× (F16 SILU 51.5 against 60.0), F32 NONE/RELU
     * 14×14 1.36×, 28×28 1.17×, 32×256×56×56 1.29× (74.6 against 96.3 µs), 1×384×64×64 1.20×. Not taken where it lost
     * or tied: F16/BF16 above 56×56 (1×384×64×64 BF16 NONE 0.98×, 8×96×112×112 F16 NONE 0.87×), F32 SiLU/GELU
     * (0.81-1.06×). Stride 2 has no plane kernel (a stride-2 build measured 0.5-1.0× nchw.cu). F32 planes of which two do
     * not fit {@link #PLANE_SMEM_CAP} (112 × 112 and up) take it in bands of rows since the thirty-third session
     * ({@link #planeBandGrid}; nchw.cu reached 0.71-0.74 of the floor there, the whole-plane kernel 0.91 at 56 × 56), and
     * there F32 SiLU too. {@code DepthwiseKnobProbe} on the H100 at 23dd688, every output checked
     * (docs/benchmark-runs/h100/depthwise-knob-probe-23dd688-bands.txt): bands against nchw.cu 0.80-0.81× the time for
     * NONE/RELU on 8×96×112×112 and 16×64×224×224 (28.7 against 35.8 µs, 148.7 against 183.0), SiLU 0.93× and 0.86×,
     * GELU_ERF 1.04-1.07× (kept on nchw.cu); F16/BF16 16×64×224×224 on bands NONE/RELU 1.19-1.22× the unrolled loop's
     * time, SiLU/GELU_ERF 0.99-1.04× nchw.cu's (the sweep at 7bd2477; kept).
     *
     * <p>Since nchw.cu's unrolled row loop ({@link #useNchwUnroll3}, F16/BF16 exact activations at access width 8), the
     * F16/BF16 bounds differ by activation. {@code DepthwisePlaneProbe} (examples/bench) on the H100, square planes,
     * every output checked first (docs/benchmarks/h100/depthwise-plane-probe.txt and
     * docs/benchmark-runs/h100/depthwise-plane-probe-1551d82.txt): exact activations take the unrolled loop from 48 × 48
     * (the unrolled loop's time against the plane kernel's, 48 and 56 wide: 0.78-0.96× at 1.6M and 4.7M-26M outputs,
     * 0.97-1.03× at 2.4M-3.2M, the worst 1.07× on 1×1024×48×48; 64-128 wide 0.78-1.04×); below 48 × 48 the plane kernel
     * stays, though there the unrolled loop wins or loses by total size without a monotone pattern (0.86-1.02× at 1.6M
     * and 6.1M-12.7M outputs, 0.99-1.11× at 2.4M-4.9M and 25.7M). SiLU/GELU take the plane kernel up to 64 × 64: there it
     * is 0.94-0.98× the rolled loop's time at 1.6M outputs and 0.76-0.85× at 26M (F16 32×200×64×64 SiLU 47.5 against
     * 62.2 µs); above, it loses on some sizes (96 × 96 at 1.6M up to 1.11×, 112 × 112 at 25.7M up to 1.09×).
     */
    public static boolean usePlane(Problem p) {
        return usePlane(p, nchwVectorWidth(p));
    }

    /**
     * {@link #usePlane(Problem)} where nchw.cu would run at access width {@code vw}: the launch narrows the shape's
     * width until every pointer is aligned to it, and below 8 the unrolled loop does not run, so exact activations keep
     * the plane kernel up to 56 × 56 there.
     */
    public static boolean usePlane(Problem p, int vw) {
        String mode = System.getProperty(PLANE_PROPERTY, "auto");
        if ("false".equalsIgnoreCase(mode) || p.layout() != Layout.NCHW || p.stride() != 1) {
            return false;  // (no stride-2 plane kernel)
        }
        if ("force".equalsIgnoreCase(mode)) {
            return true;
        }
        if (p.dtype() == DType.F32) {
            return p.act().isExact() || p.act() == DepthwiseConv3x3.Activation.SILU && planeNeedsBands(p);
        }
        long pixels = (long) p.h() * p.w();
        if (!p.act().isExact()) {
            return pixels <= PLANE_MAX_HALF_PIXELS_SMOOTH;
        }
        return pixels <= PLANE_MAX_HALF_PIXELS && !(pixels >= UNROLL3_OVER_PLANE_MIN_PIXELS && useNchwUnroll3(p, vw));
    }

    /**
     * Geometry of the whole-plane kernel: {@code seg} output columns × {@code rowsPerStrip} output rows per thread
     * item, {@code planesPerChunk} planes per chunk (one contiguous run of input bytes, a multiple of 16), {@code
     * threads} per block, {@code smemBytes} of dynamic shared memory (two input chunks, plus the chunk's outputs when
     * {@code stage}: they leave in 16-byte stores), {@code chunks} in all. The grid is min(chunks, resident blocks).
     */
    public record PlaneGrid(int seg, int lv, int rowsPerStrip, int planesPerChunk, int threads, int smemBytes, int chunks,
                            boolean stage, int bandRows) {
        /** Whether chunks are bands of {@link #bandRows} output rows of one plane (else whole planes: bandRows = H). */
        public boolean banded(Problem p) {
            return bandRows < p.h();
        }

        /**
         * The kernel symbol for {@code p}, e.g. {@code dwconv3x3_nchw_plane_f16_s1_g7_l1}; bands ({@link #banded}) run
         * the entry with {@code _band} appended.
         */
        public String symbol(Problem p) {
            return "dwconv3x3_nchw_plane_" + p.dtype().name().toLowerCase(java.util.Locale.ROOT) + "_s1_g" + seg + "_l" + lv
                    + (banded(p) ? "_band" : "");
        }

        /** Bytes of one output store when not staged (and of one residual load): y and the residual must be aligned to it for vector accesses. */
        public int storeBytes(DType t) {
            return Math.min((seg & -seg) * t.bytes(), 16);
        }
    }

    /** Output columns per thread of the plane kernel: 7 when W is a multiple of 7 up to 28, else the widest of 8 (16-bit types; 4 for F32), 4, 2, 1 dividing W. */
    static int planeSegment(Problem p) {
        int wo = p.w();
        if (wo % 7 == 0 && wo <= 28) {
            return 7;
        }
        for (int seg = p.dtype() == DType.F32 ? 4 : 8; seg > 1; seg /= 2) {
            if (wo % seg == 0) {
                return seg;
            }
        }
        return 1;
    }

    private static int gcd(long a, long b) {
        while (b != 0) {
            long t = a % b;
            a = b;
            b = t;
        }
        return (int) a;
    }

    /**
     * System property that makes the plane kernel stage bands of at most this many output rows (a positive integer)
     * wherever its band geometry applies, also for planes that fit whole; unset, bands only where two planes do not
     * fit {@link #PLANE_SMEM_CAP}. For probes and tests. Read at every call.
     */
    public static final String PLANE_BAND_ROWS_PROPERTY = "gapfill.depthwise.planeBandRows";

    /** Output rows per strip a band's geometry aims for (as whole planes: strips of at most 8 rows). */
    static final int PLANE_BAND_STRIP_ROWS = 8;

    /**
     * The plane kernel's geometry for {@code p}, or null where it does not apply: stride 2, x not 16-byte aligned, more
     * than 256 column segments per row, or not even the smallest chunk within {@link #PLANE_SMEM_CAP}. Outputs are
     * staged through shared memory when y is 16-byte aligned (a chunk's outputs are as many bytes as its inputs, a
     * multiple of 16) and a thread's row piece is narrower than 16 bytes. Planes of which two do not fit the cap (or any
     * plane, with {@link #PLANE_BAND_ROWS_PROPERTY}) go in bands of rows, one band a chunk, when a row is a multiple of 16
     * bytes ({@link #planeBandGrid}).
     */
    public static PlaneGrid planeGrid(Problem p, boolean xAligned16, boolean yAligned16) {
        if (p.stride() != 1 || !xAligned16) {
            return null;
        }
        int es = p.dtype().bytes();
        int h = p.h();
        int w = p.w();
        int seg = planeSegment(p);
        int nseg = w / seg;
        if (nseg > 256) {
            return null;
        }
        int strips = (int) Math.min((h + 7L) / 8, 256 / nseg);     // strips of <= 8 rows, balanced (long: H up to 2^31 - 1)
        int rps = (int) ((h + (long) strips - 1) / strips);
        strips = (int) ((h + (long) rps - 1) / rps);
        int perPlane = strips * nseg;
        long planeBytes = (long) h * w * es;
        Integer forcedBand = positiveRowsProperty(PLANE_BAND_ROWS_PROPERTY);
        if (forcedBand != null || planeNeedsBands(p)) {
            return planeBandGrid(p, yAligned16, forcedBand == null ? Integer.MAX_VALUE : forcedBand);
        }
        int unit = 16 / gcd(16, planeBytes % 16);   // planes per chunk: a multiple of this keeps chunks 16-byte aligned
        int target = PLANE_THREAD_TARGET;
        int busy = PLANE_THREAD_TARGET / perPlane * perPlane;  // threads whole planes keep busy at the 128 target
        if (es == 2 && busy > 0 && busy * 5 < Math.max(64, (busy + 31) / 32 * 32) * 4) {
            target = PLANE_THREAD_TARGET_WIDE;                 // 16-bit planes that fill < 80 % of the block
        }
        int planesPerChunk = Math.max(target, perPlane) / perPlane / unit * unit;
        if (planesPerChunk < unit && unit * perPlane <= 256) {
            planesPerChunk = unit;  // e.g. 15 x 13 F16 planes (390 bytes) go 8 to a chunk: 208 threads
        }
        // outputs staged through shared memory when a thread's row piece is narrower than 16 bytes (SEG = 7: 2-4 byte
        // stores scattered over a warp's rows); 16-byte pieces (SEG · sizeof(T) = 16) leave directly, as fast or faster
        boolean stage = yAligned16 && Math.min((seg & -seg) * es, 16) < 16;
        int buffers = stage ? 3 : 2;                  // two input chunks (+ the outputs when staged)
        while (planesPerChunk >= unit && buffers * planesPerChunk * planeBytes > PLANE_SMEM_CAP) {
            planesPerChunk -= unit;
        }
        if (planesPerChunk < unit) {
            return null;
        }
        int threads = Math.max(64, (planesPerChunk * perPlane + 31) / 32 * 32);
        int smem = (int) (buffers * planesPerChunk * planeBytes);
        long planes = (long) p.n() * p.c();
        int chunks = (int) ((planes + planesPerChunk - 1) / planesPerChunk);
        int lv = Math.min(seg & -seg, 16 / es);
        return new PlaneGrid(seg, lv, rps, planesPerChunk, threads, smem, chunks, stage, h);
    }

    /** Whether two of {@code p}'s input planes exceed {@link #PLANE_SMEM_CAP}: the plane kernel then stages bands of rows. */
    static boolean planeNeedsBands(Problem p) {
        return 2L * p.h() * p.w() * p.dtype().bytes() > PLANE_SMEM_CAP;
    }

    /**
     * The plane kernel's band geometry: one chunk is a band of output rows of one plane, staged with the input row above
     * and below it (both read again by the neighbouring bands: 2 rows in every band's). Needs W·sizeof(T) a multiple of
     * 16 (every band starts on a 16-byte boundary, as y's band of outputs when staged). The strips of a band are as many
     * as fill at most 256 threads with the row's column segments, each of at most {@link #PLANE_BAND_STRIP_ROWS} rows;
     * the band is as many rows as that gives (at most {@code maxRows}, within {@link #PLANE_SMEM_CAP}), balanced over the
     * plane's bands. Null where W·sizeof(T) is not a multiple of 16 or not even a one-row band fits.
     */
    static PlaneGrid planeBandGrid(Problem p, boolean yAligned16, int maxRows) {
        int es = p.dtype().bytes();
        int h = p.h();
        int w = p.w();
        if ((long) w * es % 16 != 0) {
            return null;
        }
        int seg = planeSegment(p);
        int nseg = w / seg;
        boolean stage = yAligned16 && Math.min((seg & -seg) * es, 16) < 16;
        long rowBytes = (long) w * es;
        // 2 input buffers of (rows + 2) rows, + rows of outputs when staged
        long fit = (PLANE_SMEM_CAP / rowBytes - 4) / (stage ? 3 : 2);
        int stripsPerBand = Math.max(1, 256 / nseg);
        long rows = Math.min(Math.min(maxRows, (long) stripsPerBand * PLANE_BAND_STRIP_ROWS), Math.min(fit, h));
        if (rows < 1) {
            return null;
        }
        int bands = (int) ((h + rows - 1) / rows);
        int br = (int) ((h + (long) bands - 1) / bands);       // balanced: the last band at most bands - 1 rows shorter
        int strips = Math.min(stripsPerBand, br);
        int rps = (int) ((br + (long) strips - 1) / strips);
        strips = (int) ((br + (long) rps - 1) / rps);
        int threads = Math.max(64, (strips * nseg + 31) / 32 * 32);
        int smem = (int) ((2L * (br + 2) + (stage ? br : 0)) * rowBytes);
        long chunks = (long) p.n() * p.c() * bands;
        if (chunks > Integer.MAX_VALUE) {
            return null;
        }
        int lv = Math.min(seg & -seg, 16 / es);
        return new PlaneGrid(seg, lv, rps, 1, threads, smem, (int) chunks, stage, br);
    }

    /**
     * Kernel variant: layout, access width, stride: {@code nchw_v<VW>[u3]_s<S>} (VW from the shape, u3: {@link #useNchwUnroll3}; the
     * launch narrows it for unaligned pointers) or {@code nhwc_c<CPT>w<WC>_<vec|scalar>_s<S>} (vector
     * accesses when C % CPT == 0 and the pointers are aligned, which the pool allocator gives).
     */
    public static String customVariant(Problem p) {
        if (usePlane(p)) {
            PlaneGrid g = planeGrid(p, true, true);  // with the pool's aligned allocations
            if (g != null) {
                return "nchw_plane_g" + g.seg() + (g.banded(p) ? "_b" + g.bandRows() : "") + "_s1";
            }
        }
        if (p.layout() == Layout.NCHW) {
            int vw = nchwVectorWidth(p);
            return "nchw_v" + vw + (useNchwUnroll3(p, vw) ? "u3" : "") + "_s" + p.stride();
        }
        if (useRingS2(p)) {
            RingConfig cfg = ringS2Config(p);
            return "nhwc_ring" + RING_SLOTS + "_c" + cfg.cpt + "w" + cfg.wc + "_vec_s2";
        }
        if (useRing(p)) {
            RingConfig cfg = ringConfig(p);
            return "nhwc_ring" + RING_SLOTS + "_c" + cfg.cpt + "w" + cfg.wc + (p.c() % ringVectorChannels(p) == 0 ? "_vec" : "_scalar") + "_s1";
        }
        int cpt = nhwcChannelsPerThread(p);
        return "nhwc_c" + cpt + "w" + nhwcColumnsPerThread(p) + (p.c() % cpt == 0 ? "_vec" : "_scalar") + "_s" + p.stride();
    }
    /**
     * {@link #customVariant(Problem)} for tensors at these device addresses ({@code resAddr} 0 without a residual): the
     * variant {@code DepthwiseConv3x3.launchCustom} runs, which narrows NCHW's access width until x, out and residual
     * are all aligned to it, takes the plane kernel only with x and out on 16 bytes, and turns the NHWC kernels' 16-byte
     * (ring) or channel-group (plain) accesses scalar where a pointer is off them. Keep the two in step.
     */
    public static String customVariant(Problem p, long xAddr, long outAddr, long resAddr) {
        int esz = p.dtype().bytes();
        if (p.layout() == Layout.NCHW) {
            int vw = nchwVectorWidth(p);
            while (vw > 1 && !(xAddr % (vw * esz) == 0 && outAddr % (vw * esz) == 0 && resAddr % (vw * esz) == 0)) {
                vw /= 2;
            }
            if (usePlane(p, vw)) {
                PlaneGrid g = planeGrid(p, xAddr % 16 == 0, outAddr % 16 == 0);
                if (g != null) {
                    return "nchw_plane_g" + g.seg() + (g.banded(p) ? "_b" + g.bandRows() : "") + "_s1";
                }
            }
            return "nchw_v" + vw + (useNchwUnroll3(p, vw) ? "u3" : "") + "_s" + p.stride();
        }
        if (useRingS2(p) || useRing(p)) {
            RingConfig cfg = useRingS2(p) ? ringS2Config(p) : ringConfig(p);
            int cptBytes = cfg.cpt * esz;
            boolean vec = (useRingS2(p) || p.c() % ringVectorChannels(p) == 0) && xAddr % 16 == 0 && outAddr % cptBytes == 0
                    && resAddr % cptBytes == 0;
            return "nhwc_ring" + RING_SLOTS + "_c" + cfg.cpt + "w" + cfg.wc + (vec ? "_vec" : "_scalar") + "_s" + p.stride();
        }
        int cpt = nhwcChannelsPerThread(p);
        int bytes = cpt * esz;
        boolean vec = p.c() % cpt == 0 && xAddr % bytes == 0 && outAddr % bytes == 0 && resAddr % bytes == 0;
        return "nhwc_c" + cpt + "w" + nhwcColumnsPerThread(p) + (vec ? "_vec" : "_scalar") + "_s" + p.stride();
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
