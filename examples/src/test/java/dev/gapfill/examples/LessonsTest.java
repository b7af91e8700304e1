package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.examples.lessons.L01Tensors;
import dev.gapfill.examples.lessons.L02Bmm;
import dev.gapfill.examples.lessons.L03DepthwiseConv;
import dev.gapfill.examples.lessons.L04Int8Linear;
import dev.gapfill.examples.lessons.L07Djl;
import dev.gapfill.examples.lessons.L08PropertyTests;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every lesson runs on whatever this host has (the CPU backend in CI, the GPU paths on a GPU host) and the test
 * asserts on what it reports: verdicts, decisions, errors and measurements, not only the absence of exceptions.
 * Tagged {@code gpu} (not {@code @GpuTest}, which would skip it without a GPU) so that the sanitizer step, which
 * selects that tag, runs the lessons' GPU paths too.
 */
@org.junit.jupiter.api.Tag("gpu")
class LessonsTest {
    private static String capture(Runnable r) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    /** Runs {@code lesson} on the best device with a captured stream; echoes the text for the test log. */
    private static <R> R runLesson(Function<PrintStream, R> lesson, StringBuilder text) {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        R r = lesson.apply(new PrintStream(buf, true, StandardCharsets.UTF_8));
        text.append(buf.toString(StandardCharsets.UTF_8));
        System.out.print(text);
        return r;
    }

    @Test void lesson01() {
        String out = capture(() -> L01Tensors.main(new String[0]));
        assertTrue(out.contains("01_tensors: OK"), out);
    }

    @Test void lesson02BmmChecksEveryPathAndExplainsTheDecision() {
        Device dev = Device.best();
        StringBuilder text = new StringBuilder();
        L02Bmm.Result r = runLesson(out -> L02Bmm.run(dev, out), text);
        assertTrue(r.allPass(), text::toString);
        if (dev.isCpu()) {
            assertEquals(Backend.REFERENCE, r.decision().backend(), text::toString);
            assertEquals(EnumSet.of(Backend.AUTO), r.verdicts().keySet());
            assertTrue(r.verdicts().get(Backend.AUTO).bitExact(), "the CPU op is the reference rounded once: " + text);
            assertTrue(r.microsPerCall().isEmpty());
        } else {
            assertTrue(r.verdicts().containsKey(Backend.VENDOR), text::toString);
            assertEquals(r.verdicts().keySet(), r.microsPerCall().keySet());
            r.microsPerCall().values().forEach(us -> assertTrue(us > 0 && us < 1e6, text::toString));
        }
        assertEquals(L02Bmm.BATCH * L02Bmm.M * L02Bmm.N, r.verdicts().get(Backend.AUTO).elements(), text::toString);
        // the pure heuristics, asked about an H100: beyond 128 only the vendor path exists, and forcing CUSTOM says so
        assertEquals(Backend.VENDOR, r.h100Large().backend(), text::toString);
        assertTrue(r.h100Small().backend() == Backend.CUSTOM || r.h100Small().backend() == Backend.VENDOR, text::toString);
        assertNotNull(r.customRefusal(), text::toString);
        assertTrue(r.customRefusal().contains("128"), r.customRefusal());
    }

    @Test void lesson03DepthwiseFusedLayoutsAndExactness() {
        Device dev = Device.best();
        StringBuilder text = new StringBuilder();
        L03DepthwiseConv.Result r = runLesson(out -> L03DepthwiseConv.run(dev, out), text);
        assertTrue(r.allPass(), text::toString);
        assertTrue(r.reluVerdict().bitExact(), "exact activation through the custom kernels or the reference: " + text);
        assertEquals(EnumSet.allOf(Layout.class), r.decisions().keySet());
        if (dev.isCpu()) {
            // the reference does the same fp32 arithmetic in either layout
            assertEquals(r.elements(), r.layoutsIdentical(), text::toString);
            r.siluVerdicts().values().forEach(v -> assertTrue(v.bitExact(), text::toString));
        }
        // fusing rounds once; rounding after each step changes some elements (most stay equal)
        assertTrue(r.unfusedDiffering() > 0 && r.unfusedDiffering() < r.elements() / 2, text::toString);
        assertTrue(r.unfusedMaxUlp() >= 1, text::toString);
        assertEquals(dev.isCuda() ? 2 : 0, r.microsPerCall().size());
    }

    @Test void lesson04Int8LinearSeparatesKernelAndQuantizationError() {
        Device dev = Device.best();
        StringBuilder text = new StringBuilder();
        L04Int8Linear.Result r = runLesson(out -> L04Int8Linear.run(dev, out), text);
        assertTrue(r.kernelVerdict().pass() && r.kernelVerdict().bitExact(), text::toString);
        assertEquals((long) r.m() * r.n(), r.kernelVerdict().elements());
        // W8A8 with per-channel / per-token scales: about 1 % on Gaussian data, coarser than F16, F16 coarser than F32
        assertTrue(r.int8RelError() > 1e-3 && r.int8RelError() < 3e-2, text::toString);
        assertTrue(r.f16RelError() < r.int8RelError() / 4, text::toString);
        assertTrue(r.f32RelError() < r.f16RelError() / 16, text::toString);
        if (dev.isCuda()) {
            assertTrue(r.int8Micros() > 0 && r.f16Micros() > 0 && r.f32Micros() > 0, text::toString);
        } else {
            assertTrue(Double.isNaN(r.int8Micros()), text::toString);
        }
    }

    @Test void lesson07DjlRoundTripsCallsAnOpAndMeasuresTheBoundary() {
        Device dev = Device.best();
        StringBuilder text = new StringBuilder();
        L07Djl.Result r = runLesson(out -> L07Djl.run(dev, out), text);
        assertTrue(r.ran(), "examples/pom.xml declares a DJL engine; none was found: " + text);
        assertTrue(r.engine().startsWith("OnnxRuntime"), text::toString);
        assertEquals(List.of(DType.values()), r.roundTrips(), text::toString);
        assertTrue(r.refusal().contains("float64") && r.refusal().contains("FLOAT32, FLOAT16, BFLOAT16, INT8, INT32"), r.refusal());
        assertTrue(r.bmmVerdict().pass(), text::toString);
        assertTrue(r.resultIntact(), text::toString);
        assertTrue(r.wrapsDirect(), "ONNX Runtime wraps direct native-order buffers in place (docs/djl.md relies on it): " + text);
        // timings on a shared CI machine are noisy: only that every size was measured, with finite positive times
        assertEquals(List.of(256L << 10, 4L << 20, 64L << 20), r.costs().stream().map(L07Djl.CopyCost::bytes).toList());
        for (L07Djl.CopyCost c : r.costs()) {
            for (double us : new double[] {c.toTensorMicros(), c.engineMicros(), c.toNDArrayMicros(), c.gapfillMicros(), c.allocMicros()}) {
                assertTrue(us > 0 && Double.isFinite(us), text::toString);
            }
        }
        assertFalse(text.toString().contains("NaN"), text::toString);
    }

    @Test void lesson08() {
        String out = capture(() -> L08PropertyTests.main(new String[0]));
        assertTrue(out.contains("50 random problems passed"), out);
    }

    @Test void cliInfoAndVerifyRunAnywhere() {
        assertEquals(0, GapfillCli.run("info"));
        assertEquals(0, GapfillCli.run("verify", "--cases", "6"));
    }
}
