package dev.gapfill.examples;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.Timing;
import dev.gapfill.examples.demo.DecodeStep;
import dev.gapfill.examples.demo.Demo;
import dev.gapfill.examples.demo.DemoEnv;
import dev.gapfill.examples.demo.DemoRow;
import dev.gapfill.examples.demo.DemoTable;
import dev.gapfill.examples.demo.Floors;
import dev.gapfill.examples.demo.LayerCheck;
import dev.gapfill.examples.demo.MoeCombine;
import dev.gapfill.examples.demo.MoeLayer;
import dev.gapfill.examples.demo.MoeLayerCheck;
import dev.gapfill.examples.lessons.L05MoeLayer;
import dev.gapfill.examples.lessons.L06DecodeStep;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.MoeRoute;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * {@code gapfill demo} and lessons 05/06 on the CPU reference backend (what CI has), the demo's helpers on their own,
 * proof that its checks fail on a wrong result, and the demo's GPU rows at a small size where a GPU is present.
 */
class DemoTest {
    private static final MoeLayer.Config SMALL_MOE = new MoeLayer.Config(8, 2, 64, 32, DType.BF16);
    private static final DecodeStep.Config SMALL_DECODE = new DecodeStep.Config(2, 128, 8, 2, 64, 16, DType.BF16);

    /** What {@code body} prints to System.out. */
    private static String stdout(Runnable body) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream saved = System.out;
        try (PrintStream p = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            System.setOut(p);
            body.run();
        } finally {
            System.setOut(saved);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ the command and the lessons

    @Test void demoCommandRunsBothLayersOnTheCpuAndVerifiesThem() {
        assumeFalse(Gpu.available(), "with a GPU the demo is the full GPU run (`gapfill demo`), not a unit test");
        int[] rc = new int[1];
        String out = stdout(() -> rc[0] = GapfillCli.run("demo"));
        assertEquals(0, rc[0], out);
        assertTrue(out.contains("No usable GPU"), out);
        assertTrue(out.contains("demo: every output of both compositions verified against the fp64 reference"), out);
        for (String layer : new String[] {"moe_layer    E=8 k=2 H=64 I=32 BF16 T=1", "moe_layer    E=8 k=2 H=64 I=32 BF16 T=5",
                "decode_step  B=1 L=128", "decode_step  B=3 L=128"}) {
            assertTrue(out.contains(layer), "row " + layer + " missing:\n" + out);
        }
        assertTrue(out.contains("offsets, gather, rowOf, topkIds, weights, topkWeights, h, y, out"), out);
        assertTrue(out.contains("out@0, lse@0, out@31, lse@31, out@63, lse@63, out+lse written@0..63"), out);
        assertFalse(out.contains("FAIL"), out);
        assertTrue(out.contains("≥3×: n/a (CPU reference backend)") && out.contains("≥2×: n/a (CPU reference backend)"), out);
    }

    @Test void lesson05ChecksAndTimesTheMoeLayer() {
        String out = stdout(() -> L05MoeLayer.main(new String[0]));
        assertTrue(out.contains("gapfill: checked offsets, gather, rowOf, topkIds, weights, topkWeights, h, y, out against the fp64 "
                + "reference: pass"), out);
        assertTrue(out.contains("vendor: checked offsets, gather, rowOf, topkIds, weights, topkWeights, h, y, out against the fp64 "
                + "reference: pass"), out);
        assertTrue(out.contains("measured (") && out.contains("vendor composition"), out);
        assertTrue(out.contains("05_moe_layer: OK"), out);
    }

    @Test void lesson06ChecksAndTimesTheDecodeStep() {
        String out = stdout(() -> L06DecodeStep.main(new String[0]));
        assertTrue(out.contains("ran 64 steps"), out);
        assertTrue(out.contains("gapfill: checked out@0, lse@0, out@31, lse@31, out@63, lse@63, out+lse written@0..63: pass"), out);
        assertTrue(out.contains("vendor: checked out@0, lse@0, out@31, lse@31, out@63, lse@63, out+lse written@0..63: pass"), out);
        assertTrue(out.contains("measured per step") && out.contains("06_decode_step: OK"), out);
    }

    // ------------------------------------------------------------------ the combine (scatter-add back)

    /** The reference (a gather over rowOf) against the scatter form of the same sum: every row r adds into token gather[r]. */
    @Test void combineReferenceEqualsTheScatterForm() {
        Random rnd = new Random(3);
        int tokens = 7;
        int experts = 6;
        int k = 3;
        int hidden = 5;
        try (Tensor logits = Poison.random(Device.CPU, DType.F32, rnd, tokens, experts);
             MoeRoute.Routing r = MoeRoute.route(logits, MoeRoute.Options.topK(k))) {
            int[] gather = r.gather.toIntArray();
            double[] y = new double[tokens * k * hidden];
            for (int i = 0; i < y.length; i++) {
                y[i] = HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(rnd.nextFloat() * 2 - 1));
            }
            double[] scatter = new double[tokens * hidden];
            double[] scatterAbs = new double[tokens * hidden];
            for (int row = 0; row < tokens * k; row++) {
                for (int c = 0; c < hidden; c++) {
                    scatter[gather[row] * hidden + c] += y[row * hidden + c];
                    scatterAbs[gather[row] * hidden + c] += Math.abs(y[row * hidden + c]);
                }
            }
            MoeCombine.Exact e = MoeCombine.reference(y, r.rowOf.toIntArray(), tokens, k, hidden);
            // three bf16 terms add exactly in fp64, so the order does not matter
            assertArrayEquals(scatter, e.value(), 0.0);
            assertArrayEquals(scatterAbs, e.absSum(), 0.0);
        }
    }

    @Test void combineOnTheCpuRoundsTheExactSumOnceAndSkipsRowsOutOfRange() {
        float[] y = {1, 2, 3, 0.5f, 0.25f, -1, 7, 8, 9, 100, 100, 100, 100, 100, 100, -0.5f, 0.75f, 2};  // 6 rows, H = 3
        int[] rowOf = {0, 2, -1, 1, 6, 5};  // token 0: rows 0 + 2 (-1 skipped); token 1: rows 1 + 5 (6 = T·k is out of range)
        try (Tensor ty = Tensor.of(Device.CPU, DType.BF16, y, 6, 3); Tensor tr = Tensor.ofInts(Device.CPU, rowOf, 2, 3);
             Tensor out = Poison.poisoned(Device.CPU, DType.BF16, 2, 3)) {
            MoeCombine.run(ty, tr, out, null);
            assertArrayEquals(new float[] {8, 10, 12, 0, 1, 1}, out.toFloatArray());
        }
        try (Tensor ty = Tensor.of(Device.CPU, DType.BF16, new float[] {1, 0x1p-9f, 0x1p-9f, 0x1p-9f}, 4, 1);
             Tensor tr = Tensor.ofInts(Device.CPU, new int[] {0, 1, 2, 3}, 1, 4); Tensor out = Tensor.empty(Device.CPU, DType.BF16, 1, 1)) {
            MoeCombine.run(ty, tr, out, null);
            // 1 + 3·2^-9 rounds once to 1 + 2^-7 (bf16 spacing at 1); rounding after every add would stay at 1
            assertEquals(1 + 0x1p-7f, out.toFloatArray()[0]);
        }
    }

    @Test void combineValidationNamesTheArgument() {
        try (Tensor y = Tensor.empty(Device.CPU, DType.BF16, 6, 4); Tensor rowOf = Tensor.empty(Device.CPU, DType.I32, 3, 2);
             Tensor bad = Tensor.empty(Device.CPU, DType.BF16, 3, 5); Tensor f32 = Tensor.empty(Device.CPU, DType.F32, 3, 4)) {
            ArgumentException shape = assertThrows(ArgumentException.class, () -> MoeCombine.run(y, rowOf, bad, null));
            assertTrue(shape.getMessage().contains("out"), shape.getMessage());
            ArgumentException dtype = assertThrows(ArgumentException.class, () -> MoeCombine.run(y, rowOf, f32, null));
            assertTrue(dtype.getMessage().contains("out"), dtype.getMessage());
            try (Tensor rows = Tensor.empty(Device.CPU, DType.BF16, 5, 4)) {
                ArgumentException y5 = assertThrows(ArgumentException.class, () -> MoeCombine.run(rows, rowOf, f32, null));
                assertTrue(y5.getMessage().contains("y"), y5.getMessage());
            }
        }
    }

    // ------------------------------------------------------------------ floors and the table

    @Test void floorsMatchTheirWorkedExamples() {
        MoeLayer.Config moe = new MoeLayer.Config(64, 8, 2048, 1024, DType.BF16);
        assertEquals(100_671_616L, Floors.moeBytes(moe, 1, 8));
        assertEquals(2.0 * 8 * (2048.0 * 2048 + 1024.0 * 2048), Floors.moeFlops(moe, 1));
        DecodeStep.Config dec = new DecodeStep.Config(1, 4096, 32, 8, 128, 16, DType.BF16);
        assertEquals(16_400_384L, Floors.decodeBytes(dec, 4000L * 64, 64));
        assertEquals(4.0 * 4000 * 32 * 128, Floors.decodeFlops(dec, 4000L * 64, 64));
    }

    @Test void targetColumnSaysWhetherTheTargetHoldsAndWhereItApplies() {
        DemoRow fast = row(300, 100, 3.0);
        DemoRow slow = row(250, 100, 3.0);
        assertEquals("≥3×: met", DemoTable.target(fast, DeviceInfo.h100ForTests()));
        assertEquals("≥3×: NOT met", DemoTable.target(slow, DeviceInfo.h100ForTests()));
        assertTrue(DemoTable.target(fast, DeviceInfo.a100ForTests()).contains("target stated for Hopper; this is sm_80"));
        assertEquals("≥3×: n/a (CPU reference backend)", DemoTable.target(fast, null));
        String table = DemoTable.render(List.of(fast, slow), DeviceInfo.h100ForTests());
        assertTrue(table.contains("3.00×") && table.contains("2.50×") && table.contains("pass, max 0 ulp"), table);
    }

    private static DemoRow row(double vendorUs, double gapfillUs, double target) {
        Verdict ok = new Verdict("reference", "bit-exact", 1, true, 1, 0, 0, 0, null, true);
        LayerCheck c = new LayerCheck("gapfill", List.of(new LayerCheck.Stage("out", ok)));
        return new DemoRow("moe_layer", "test", new Timing(vendorUs, vendorUs, vendorUs, 1), new Timing(gapfillUs, gapfillUs, gapfillUs, 1),
                List.of(c), target, "test", null);
    }

    // ------------------------------------------------------------------ the checks fail when they should

    @Test void moeCheckFailsOnTheStageThatIsWrong() {
        try (MoeLayer.Weights w = MoeLayer.Weights.random(SMALL_MOE, Device.CPU, 1);
             MoeLayer.Tokens in = MoeLayer.Tokens.random(SMALL_MOE, 5, Device.CPU, 2);
             MoeLayer.Buffers ours = new MoeLayer.Buffers(SMALL_MOE, 5, MoeLayer.Composition.GAPFILL, Device.CPU);
             MoeLayer.Buffers theirs = new MoeLayer.Buffers(SMALL_MOE, 5, MoeLayer.Composition.VENDOR, Device.CPU)) {
            MoeLayer.forward(w, in, ours, null);
            MoeLayer.forward(w, in, theirs, null);
            ours.out.setDouble(17, ours.out.getDouble(17) + 0.5);  // one wrong element of the layer output
            theirs.h.setDouble(3, Double.NaN);                      // one unwritten element of an intermediate
            List<LayerCheck> checks = MoeLayerCheck.verify(w, in, List.of(ours, theirs));
            assertFalse(checks.get(0).pass());
            assertEquals(1, checks.get(0).failures().size(), checks.get(0).failures().toString());
            assertTrue(checks.get(0).failures().get(0).startsWith("gapfill out:"), checks.get(0).failures().toString());
            assertFalse(checks.get(1).pass());
            assertTrue(checks.get(1).failures().get(0).startsWith("vendor h:"), checks.get(1).failures().toString());
        }
    }

    @Test void decodeCheckFailsOnAWrongOrUnwrittenStep() {
        try (DecodeStep d = DecodeStep.random(SMALL_DECODE, Device.CPU, 4);
             Tensor out = Tensor.empty(Device.CPU, DType.BF16, 2, 8, 64); Tensor lse = Tensor.empty(Device.CPU, DType.F32, 2, 8);
             GqaDecodePlan plan = GqaDecode.plan(SMALL_DECODE.problem(), Device.CPU)) {
            int[] calls = {0};
            LayerCheck wrong = d.verify("wrong", () -> {
                plan.run(d.q, d.cache, d.lens, out, lse, null);
                if (calls[0]++ == DecodeStep.STEPS - 1) {
                    out.setDouble(5, out.getDouble(5) + 0.25);  // the last step is off in one element
                }
            }, out, lse, null, plan.scale(), false);
            assertEquals(List.of("out@63"), wrong.stages().stream().filter(s -> !s.verdict().pass()).map(LayerCheck.Stage::output).toList());
            LayerCheck idle = d.verify("idle", () -> { }, out, lse, null, plan.scale(), false);
            assertTrue(idle.failures().stream().anyMatch(f -> f.startsWith("idle out+lse written@0..63")), idle.failures().toString());
        }
    }

    @Test void decodeLengthsGrowByOneEveryStepInsideTheCache() {
        try (DecodeStep d = DecodeStep.random(SMALL_DECODE, Device.CPU, 9)) {
            for (int s = 0; s + 1 < DecodeStep.STEPS; s++) {
                for (int b = 0; b < SMALL_DECODE.batch(); b++) {
                    assertEquals(d.lengths(s)[b] + 1, d.lengths(s + 1)[b]);
                }
            }
            for (int b = 0; b < SMALL_DECODE.batch(); b++) {
                assertTrue(d.lengths(0)[b] >= 1 && d.lengths(DecodeStep.STEPS - 1)[b] <= SMALL_DECODE.capacity());
            }
            d.setStep(40, null);
            assertArrayEquals(d.lengths(40), d.lens.toIntArray());
        }
        assertThrows(ArgumentException.class, () -> new DecodeStep.Config(1, 120, 8, 2, 64, 16, DType.BF16));  // not whole pages
        assertThrows(ArgumentException.class, () -> new DecodeStep.Config(1, 64, 8, 2, 64, 16, DType.BF16));   // 64 steps do not fit
    }

    // ------------------------------------------------------------------ the demo's GPU rows, small, where a GPU is present

    @GpuTest @Test void demoRowsVerifyOnTheGpuAtASmallSize() {
        Consumer<String> quiet = m -> { };
        try (BenchContext ctx = new BenchContext(Device.cuda(0), 1, 8, true, quiet);
             MoeLayer.Weights w = MoeLayer.Weights.random(SMALL_MOE, ctx.device(), 1)) {
            DemoEnv env = DemoEnv.gpu(ctx);
            DemoRow moe = Demo.moeLayer(env, w, 5);
            assertTrue(moe.verified(), DemoTable.render(List.of(moe), ctx.info()));
            // the Gapfill layer is timed as a graph replay, and that replay's own outputs were checked
            assertTrue(moe.choice().contains("in a CUDA graph"), moe.choice());
            assertTrue(moe.checks().stream().anyMatch(c -> c.path().equals("gapfill_graph") && !c.stages().isEmpty()), moe.checks()::toString);
            assertTrue(moe.bench().peers().containsKey("gapfill_eager"), moe.bench().peers()::toString);
            DemoRow dec = Demo.decodeStep(env, SMALL_DECODE);
            assertTrue(dec.verified(), DemoTable.render(List.of(dec), ctx.info()));
            assertTrue(dec.choice().contains("in a CUDA graph"), dec.choice());
        }
    }

    @GpuTest @Test void combineKernelMatchesTheReference() {
        Random rnd = new Random(11);
        int tokens = 37;
        int k = 8;
        int hidden = 300;  // not a multiple of the block: the last block is partial
        int[] rowOf = new int[tokens * k];
        for (int i = 0; i < rowOf.length; i++) {
            rowOf[i] = i % 29 == 5 ? -1 : rnd.nextInt(tokens * k);  // a few out-of-range indices contribute zero
        }
        Device gpu = Device.cuda(0);
        try (Tensor hy = Poison.random(Device.CPU, DType.F16, rnd, (long) tokens * k, hidden); Tensor y = hy.to(gpu);
             Tensor r = Tensor.ofInts(gpu, rowOf, tokens, k); Tensor out = Poison.poisoned(gpu, DType.F16, tokens, hidden)) {
            MoeCombine.run(y, r, out, null);
            double[] yv = new double[(int) hy.numel()];
            for (int i = 0; i < yv.length; i++) {
                yv[i] = hy.getDouble(i);
            }
            MoeCombine.Exact e = MoeCombine.reference(yv, rowOf, tokens, k, hidden);
            Verdict v = Verifier.compare(out, e.value(), e.absSum(), MoeCombine.tolerance(DType.F16, k), "reference");
            assertTrue(v.pass(), v.toString());
            // out over y's first rows: block t would overwrite rows other blocks still read through rowOf
            Tensor yRows = y.strided(new long[] {tokens, hidden}, new long[] {hidden, 1}, 0);
            ArgumentException overlap = assertThrows(ArgumentException.class, () -> MoeCombine.run(y, r, yRows, null));
            assertEquals("out", overlap.argument(), overlap.getMessage());
        }
    }
}
