package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import static dev.gapfill.ops.ValidationRule.*;

/**
 * The GPU variants of the ops' validation properties: every rule of each op with the tensors on cuda:0 (real
 * device memory; misaligned and overlapping tensors are views of real allocations), plus the device-specific rules
 * (streams, forced backends without a kernel, the debug modes for device-side offsets and page numbers, kernel
 * clamps, graph capture). After every rejected call the valid call runs on the same device and the device is
 * synchronized, so a rejected call that had launched anything, or corrupted the device, fails the property.
 * Rules needing two GPUs are reported as skipped on one-GPU hosts. Few tries: the cases per try are many.
 */
@GpuTest
class OpsValidationGpuProperties {
    private static final Device GPU = Device.cuda(0);

    @Property(tries = 4)
    @Covers({BMM_OPTIONS_NULL, BMM_OPTIONS_PRECISION_NULL, BMM_OPTIONS_BACKEND_NULL, BMM_A_NULL, BMM_B_NULL, BMM_OUT_NULL,
            BMM_A_CLOSED, BMM_B_CLOSED, BMM_OUT_CLOSED, BMM_A_DTYPE, BMM_B_DTYPE, BMM_OUT_DTYPE, BMM_A_RANK, BMM_B_RANK,
            BMM_B_DEVICE, BMM_OUT_DEVICE, BMM_A_CONTIGUOUS, BMM_B_CONTIGUOUS, BMM_OUT_CONTIGUOUS, BMM_B_K, BMM_B_BATCH,
            BMM_OUT_SHAPE, BMM_TF32_DTYPE, BMM_A_INT32, BMM_B_INT32, BMM_OUT_INT32, BMM_OUT_OVERLAP, BMM_BACKEND_REFERENCE,
            BMM_CUSTOM_UNSUPPORTED, BMM_STREAM_CLOSED, BMM_STREAM_DEVICE})
    void bmm(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 1, max = 4) int batch, @ForAll @IntRange(min = 1, max = 40) int m,
             @ForAll @IntRange(min = 1, max = 40) int n, @ForAll @IntRange(min = 1, max = 40) int k, @ForAll boolean ta, @ForAll boolean tb,
             @ForAll boolean shared, @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            BmmValidationProperties.Problem p = BmmValidationProperties.Problem.on(f, new DType[] {DType.F32, DType.F16, DType.BF16}[dti], batch, m,
                    n, k, ta, tb, shared, Backend.AUTO);
            RuleCheck.run(f, BmmValidationProperties.cases(f, p), () -> Bmm.bmm(p.a(), p.b(), p.out(), p.o(), null), p.out());
        }
    }

    @Property(tries = 4)
    @Covers({EW_A_NULL, EW_B_NULL, EW_OUT_NULL, EW_A_CLOSED, EW_B_CLOSED, EW_OUT_CLOSED, EW_A_DTYPE, EW_B_DTYPE, EW_OUT_DTYPE,
            EW_B_SHAPE, EW_OUT_SHAPE, EW_B_DEVICE, EW_OUT_DEVICE, EW_A_CONTIGUOUS, EW_B_CONTIGUOUS, EW_OUT_CONTIGUOUS, EW_A_INT32,
            EW_OUT_OVERLAP, EW_A_GRID_INT32, EW_SCALARS_NONFINITE, EW_STREAM_CLOSED, EW_STREAM_DEVICE})
    void elementwise(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 1, max = 3) int rank,
                     @ForAll @IntRange(min = 1, max = 40) int d0, @ForAll @IntRange(min = 1, max = 40) int d1,
                     @ForAll @IntRange(min = 1, max = 40) int d2, @ForAll long seed) {
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[dti];
        long[] shape = TensorValidationProperties.shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(GPU, seed)) {
            Tensor a = f.random(dt, shape);
            Tensor b = f.random(dt, shape);
            Tensor out = f.poisoned(dt, shape);
            RuleCheck.run(f, ElementwiseValidationProperties.cases(f, dt, shape, a, b, out), () -> Elementwise.scaleAdd(a, b, 0.5f, 2f, out, null), out);
        }
    }

    @Property(tries = 3)
    @Covers({I8_OPTIONS_NULL, I8_OPTIONS_OUT_DTYPE, I8_OPTIONS_BACKEND_NULL, I8_A_NULL, I8_W_NULL, I8_OUT_NULL, I8_A_CLOSED,
            I8_W_CLOSED, I8_OUT_CLOSED, I8_A_DTYPE, I8_W_DTYPE, I8_OUT_DTYPE, I8_A_RANK, I8_W_RANK, I8_K_MULTIPLE, I8_K_MAX,
            I8_W_K, I8_W_DEVICE, I8_OUT_DEVICE, I8_A_CONTIGUOUS, I8_W_CONTIGUOUS, I8_OUT_CONTIGUOUS, I8_OUT_SHAPE, I8_A_INT32,
            I8_W_INT32, I8_OUT_INT32, I8_I32_ASCALE, I8_I32_WSCALE, I8_I32_BIAS, I8_ASCALE_NULL, I8_WSCALE_NULL, I8_ASCALE_CLOSED,
            I8_WSCALE_CLOSED, I8_BIAS_CLOSED, I8_ASCALE_DTYPE, I8_WSCALE_DTYPE, I8_BIAS_DTYPE, I8_ASCALE_RANK, I8_WSCALE_RANK,
            I8_BIAS_RANK, I8_ASCALE_LENGTH, I8_WSCALE_LENGTH, I8_BIAS_LENGTH, I8_ASCALE_CONTIGUOUS, I8_WSCALE_CONTIGUOUS,
            I8_BIAS_CONTIGUOUS, I8_ASCALE_DEVICE, I8_WSCALE_DEVICE, I8_BIAS_DEVICE, I8_A_ALIGN, I8_W_ALIGN, I8_OUT_ALIGN,
            I8_OUT_OVERLAP, I8_PLAN_MISMATCH, I8_PLAN_OUT_DTYPE, I8_DEQUANT_INT32, I8_PLAN_CLOSED, I8_CUSTOM_UNSUPPORTED,
            I8_BACKEND_REFERENCE, I8_STREAM_CLOSED, I8_STREAM_DEVICE})
    void int8Mm(@ForAll @IntRange(min = 1, max = 40) int m, @ForAll @IntRange(min = 1, max = 48) int n, @ForAll @IntRange(min = 1, max = 8) int k16,
                @ForAll @IntRange(min = 0, max = 3) int outi, @ForAll boolean perToken, @ForAll boolean withBias, @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            Int8MmValidationProperties.Problem p = Int8MmValidationProperties.Problem.on(f, m, n, 16 * k16,
                    new DType[] {DType.I32, DType.F32, DType.F16, DType.BF16}[outi], perToken, withBias, Backend.AUTO);
            RuleCheck.run(f, Int8MmValidationProperties.cases(f, p), () -> Int8Mm.mm(p.a(), p.w(), p.o(), p.out(), null), p.out(), p.outF(), p.outI());
        }
    }

    @Property(tries = 3)
    @Covers({DW_OPTIONS_NULL, DW_OPTIONS_STRIDE, DW_OPTIONS_LAYOUT_NULL, DW_OPTIONS_ACTIVATION_NULL, DW_OPTIONS_BACKEND, DW_X_NULL,
            DW_W_NULL, DW_OUT_NULL, DW_X_CLOSED, DW_W_CLOSED, DW_OUT_CLOSED, DW_BIAS_CLOSED, DW_RES_CLOSED, DW_X_RANK, DW_X_DTYPE,
            DW_W_RANK, DW_W_SHAPE, DW_W_DTYPE, DW_BIAS_RANK, DW_BIAS_SHAPE, DW_BIAS_DTYPE, DW_OUT_SHAPE, DW_OUT_DTYPE,
            DW_RES_SHAPE, DW_RES_DTYPE, DW_W_DEVICE, DW_BIAS_DEVICE, DW_RES_DEVICE, DW_OUT_DEVICE, DW_X_CONTIGUOUS,
            DW_W_CONTIGUOUS, DW_OUT_CONTIGUOUS, DW_BIAS_CONTIGUOUS, DW_RES_CONTIGUOUS, DW_X_INT32, DW_OUT_OVERLAP_X,
            DW_OUT_OVERLAP_W, DW_OUT_OVERLAP_BIAS, DW_OUT_OVERLAP_RES, DW_GELU_INT32, DW_OUTPUTSHAPE_X, DW_PROBLEM_SHAPE, DW_PROBLEM_STRIDE,
            DW_PROBLEM_DTYPE, DW_PROBLEM_LAYOUT, DW_PROBLEM_ACT, DW_STREAM_CLOSED, DW_STREAM_DEVICE})
    void depthwiseConv3x3(@ForAll @IntRange(min = 0, max = 2) int dti, @ForAll @IntRange(min = 0, max = 1) int li,
                          @ForAll @IntRange(min = 1, max = 2) int stride, @ForAll @IntRange(min = 1, max = 2) int n,
                          @ForAll @IntRange(min = 1, max = 24) int c, @ForAll @IntRange(min = 1, max = 17) int h,
                          @ForAll @IntRange(min = 1, max = 17) int w, @ForAll boolean w4, @ForAll boolean withBias,
                          @ForAll boolean withRes, @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            DepthwiseConv3x3ValidationProperties.Problem p = DepthwiseConv3x3ValidationProperties.Problem.on(f,
                    new DType[] {DType.F32, DType.F16, DType.BF16}[dti], DepthwiseConv3x3.Layout.values()[li], stride, n, c, h, w, w4, withBias, withRes);
            RuleCheck.run(f, DepthwiseConv3x3ValidationProperties.cases(f, p),
                    () -> DepthwiseConv3x3.apply(p.x(), p.w(), p.bias(), p.res(), p.out(), p.o(), null), p.out());
        }
    }

    @Property(tries = 3)
    @Covers({GG_OPTIONS_NULL, GG_OPTIONS_LAYOUT_NULL, GG_OPTIONS_BACKEND, GG_OPTIONS_VENDORPATH_NULL, GG_X_NULL, GG_W_NULL,
            GG_OFFSETS_NULL, GG_OUT_NULL, GG_X_CLOSED, GG_W_CLOSED, GG_OFFSETS_CLOSED, GG_GATHER_CLOSED, GG_ROWSCALE_CLOSED,
            GG_OUT_CLOSED, GG_X_RANK, GG_X_DTYPE, GG_X_CONTIGUOUS, GG_W_RANK, GG_W_DTYPE, GG_W_CONTIGUOUS, GG_W_DEVICE, GG_W_K,
            GG_OFFSETS_RANK, GG_OFFSETS_DTYPE, GG_OFFSETS_CONTIGUOUS, GG_OFFSETS_DEVICE, GG_OFFSETS_LENGTH, GG_GATHER_RANK,
            GG_GATHER_DTYPE, GG_GATHER_CONTIGUOUS, GG_GATHER_DEVICE, GG_SWIGLU_ODD_N, GG_ROWSCALE_DTYPE, GG_ROWSCALE_CONTIGUOUS,
            GG_ROWSCALE_DEVICE, GG_ROWSCALE_SHAPE, GG_OUT_DTYPE, GG_OUT_CONTIGUOUS, GG_OUT_DEVICE, GG_OUT_SHAPE, GG_OUT_ALIGN,
            GG_OUT_OVERLAP, GG_INT32, GG_GATHER_PASS_INT32, GG_EPILOGUE_PASS_INT32, GG_OFFSETS_VALUES, GG_OFFSETS_DEBUG, GG_GATHER_DEBUG, GG_OFFSETS_VENDOR, GG_OFFSETS_CLAMPED,
            GG_CUSTOM_UNSUPPORTED, GG_VENDOR_CAPTURE, GG_STREAM_CLOSED, GG_STREAM_DEVICE})
    void groupedGemm(@ForAll @IntRange(min = 1, max = 6) int groups, @ForAll @IntRange(min = 1, max = 40) int rows,
                     @ForAll @IntRange(min = 1, max = 20) int xRows, @ForAll @IntRange(min = 1, max = 4) int k8,
                     @ForAll @IntRange(min = 1, max = 4) int n8, @ForAll boolean nk, @ForAll boolean bf16, @ForAll boolean gather,
                     @ForAll boolean scale, @ForAll boolean swiglu, @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            GroupedGemmValidationProperties.Problem p = GroupedGemmValidationProperties.Problem.on(f, bf16 ? DType.BF16 : DType.F16, groups, rows,
                    xRows, 8 * k8, 8 * n8, nk ? GroupedGemm.WeightLayout.NK : GroupedGemm.WeightLayout.KN, gather, scale, swiglu, Backend.AUTO);
            RuleCheck.run(f, GroupedGemmValidationProperties.cases(f, p), () -> GroupedGemm.run(p.x(), p.w(), p.offsets(), p.o(), p.out(), null),
                    p.out());
        }
    }

    @Property(tries = 3)
    @Covers({GQ_PROBLEM_BATCH, GQ_PROBLEM_QHEADS, GQ_PROBLEM_KVHEADS, GQ_PROBLEM_HEADDIM, GQ_PROBLEM_MAXLEN, GQ_PROBLEM_LAYOUT,
            GQ_PROBLEM_DTYPE, GQ_PROBLEM_PAGESIZE, GQ_PROBLEM_MAXPAGES, GQ_PROBLEM_CONTIGUOUS_PAGING, GQ_OPTIONS_BACKEND,
            GQ_OPTIONS_SCALE, GQ_PLAN_PROBLEM_NULL, GQ_PLAN_DEVICE_NULL, GQ_PLAN_OPTIONS_NULL, GQ_DECIDE_INFO_NULL, GQ_OF_Q_NULL,
            GQ_OF_Q_CLOSED, GQ_OF_Q_RANK, GQ_OF_Q_DTYPE, GQ_OF_Q_INT32, GQ_OF_CACHE_NULL, GQ_OF_CACHE_LAYOUT, GQ_OF_K_NULL,
            GQ_OF_K_CLOSED, GQ_OF_K_RANK, GQ_OF_K_INT32, GQ_OF_TABLE_NULL, GQ_OF_TABLE_CLOSED, GQ_OF_TABLE_RANK, GQ_OF_TABLE_INT32,
            GQ_CUSTOM_UNSUPPORTED, GQ_VENDOR_UNSUPPORTED, GQ_NO_BACKEND, GQR_PLAN_CLOSED, GQR_Q_NULL, GQR_Q_CLOSED, GQR_Q_DTYPE,
            GQR_Q_SHAPE, GQR_Q_DEVICE, GQR_Q_CONTIGUOUS, GQR_CACHE_NULL, GQR_CACHE_LAYOUT, GQR_K_NULL, GQR_K_CLOSED, GQR_K_DTYPE,
            GQR_K_SHAPE, GQR_K_CAPACITY, GQR_K_DEVICE, GQR_K_CONTIGUOUS, GQR_V_NULL, GQR_V_CLOSED, GQR_V_DTYPE, GQR_V_SHAPE,
            GQR_V_DEVICE, GQR_V_CONTIGUOUS, GQR_TABLE_NULL, GQR_TABLE_CLOSED, GQR_TABLE_DTYPE, GQR_TABLE_SHAPE, GQR_TABLE_DEVICE,
            GQR_TABLE_CONTIGUOUS, GQR_TABLE_FOR_CONTIGUOUS, GQR_TABLE_PAGES, GQR_LENS_NULL, GQR_LENS_CLOSED, GQR_LENS_DTYPE,
            GQR_LENS_SHAPE, GQR_LENS_DEVICE, GQR_LENS_CONTIGUOUS, GQR_OUT_NULL, GQR_OUT_CLOSED, GQR_OUT_DTYPE, GQR_OUT_SHAPE,
            GQR_OUT_DEVICE, GQR_OUT_CONTIGUOUS, GQR_LSE_CLOSED, GQR_LSE_DTYPE, GQR_LSE_SHAPE, GQR_LSE_DEVICE, GQR_LSE_CONTIGUOUS,
            GQR_TABLE_PAGES_DEBUG, GQR_TABLE_CLAMPED, GQR_LENS_CLAMPED, GQR_Q_ALIGN, GQR_K_ALIGN, GQR_V_ALIGN, GQR_OUT_ALIGN, GQR_OUT_OVERLAP,
            GQR_LSE_OVERLAP, GQR_STREAM_CLOSED, GQR_STREAM_DEVICE})
    void gqaDecode(@ForAll boolean bf16, @ForAll @IntRange(min = 0, max = 2) int li, @ForAll @IntRange(min = 1, max = 3) int b,
                   @ForAll @IntRange(min = 1, max = 2) int hkv, @ForAll @IntRange(min = 1, max = 4) int g, @ForAll boolean d128,
                   @ForAll @IntRange(min = 1, max = 40) int len, @ForAll @IntRange(min = 0, max = 4) int pageShift, @ForAll boolean withLse,
                   @ForAll long seed) {
        try (Fixture f = new Fixture(GPU, seed)) {
            GqaDecodeValidationProperties.Step[] st = GqaDecodeValidationProperties.steps(f, bf16, li, b, hkv, g, d128, len, pageShift, withLse);
            java.util.List<Tensor> outs = new java.util.ArrayList<>();
            for (GqaDecodeValidationProperties.Step x : st) {
                outs.add(x.out());
                if (x.lse() != null) {
                    outs.add(x.lse());
                }
            }
            RuleCheck.run(f, GqaDecodeValidationProperties.cases(f, st[0], st[1], st[2]), st[0]::run, outs.stream().distinct().toArray(Tensor[]::new));
        }
    }

    @Property(tries = 4)
    @Covers({MR_LOGITS_NULL, MR_LOGITS_CLOSED, MR_LOGITS_RANK, MR_LOGITS_DTYPE, MR_LOGITS_CONTIGUOUS, MR_OPTIONS_NULL, MR_TOPK,
            MR_SCORE_NULL, MR_BACKEND, MR_VENDOR, MR_EXPERTS_MAX, MR_TOKENS_INT32, MR_OUT_NULL, MR_OFFSETS_CLOSED,
            MR_OFFSETS_DTYPE, MR_OFFSETS_DEVICE, MR_OFFSETS_CONTIGUOUS, MR_OFFSETS_SHAPE, MR_GATHER_CLOSED, MR_GATHER_DTYPE,
            MR_GATHER_DEVICE, MR_GATHER_CONTIGUOUS, MR_GATHER_SHAPE, MR_WEIGHTS_CLOSED, MR_WEIGHTS_DTYPE, MR_WEIGHTS_DEVICE,
            MR_WEIGHTS_CONTIGUOUS, MR_WEIGHTS_SHAPE, MR_ROWOF_CLOSED, MR_ROWOF_DTYPE, MR_ROWOF_DEVICE, MR_ROWOF_CONTIGUOUS,
            MR_ROWOF_SHAPE, MR_IDS_CLOSED, MR_IDS_DTYPE, MR_IDS_DEVICE, MR_IDS_CONTIGUOUS, MR_IDS_SHAPE, MR_TOPKW_CLOSED,
            MR_TOPKW_DTYPE, MR_TOPKW_DEVICE, MR_TOPKW_CONTIGUOUS, MR_TOPKW_SHAPE, MR_OFFSETS_OVERLAP, MR_GATHER_OVERLAP,
            MR_WEIGHTS_OVERLAP, MR_ROWOF_OVERLAP, MR_IDS_OVERLAP, MR_TOPKW_OVERLAP, MR_DECIDE_TOKENS, MR_DECIDE_TOKENS_INT32, MR_DECIDE_EXPERTS, MR_DECIDE_K,
            MR_ALLOC_DEVICE, MR_ALLOC_TOKENS, MR_ALLOC_EXPERTS, MR_ALLOC_K, MR_STREAM_CLOSED, MR_STREAM_DEVICE})
    void moeRoute(@ForAll @IntRange(min = 1, max = 64) int t, @ForAll @IntRange(min = 1, max = 64) int e, @ForAll @IntRange(min = 1, max = 8) int kk,
                  @ForAll @IntRange(min = 0, max = 2) int dti, @ForAll boolean sigmoid, @ForAll boolean renorm, @ForAll long seed) {
        int k = Math.min(kk, e);
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[dti];
        try (Fixture f = new Fixture(GPU, seed)) {
            Tensor logits = f.random(dt, t, e);
            MoeRoute.Options o = MoeRoute.Options.topK(k).withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX).withRenormalize(renorm);
            MoeRoute.Routing out = MoeRouteProperties.outputs(f, t, e, k);
            RuleCheck.run(f, MoeRouteProperties.cases(f, dt, logits, o, out), () -> MoeRoute.route(logits, o, out, null), MoeRouteProperties.all(out));
        }
    }
}
