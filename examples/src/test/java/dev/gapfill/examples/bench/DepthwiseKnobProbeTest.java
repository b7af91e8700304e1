package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.ops.DepthwiseConv3x3.Activation;
import dev.gapfill.ops.DepthwiseConv3x3.Layout;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The probe's case and setting lists, parsed on the CPU. */
class DepthwiseKnobProbeTest {
    @Test void casesParseEveryFieldAndNameThemselvesTheSameWay() {
        List<DepthwiseKnobProbe.Case> cs = DepthwiseKnobProbe.cases("F32/NCHW/8x96x112x112/s1/NONE, BF16/NHWC/32x256x56x56/s2/GELU_ERF");
        assertEquals(new DepthwiseKnobProbe.Case(DType.F32, Layout.NCHW, 8, 96, 112, 112, 1, Activation.NONE), cs.get(0));
        assertEquals(new DepthwiseKnobProbe.Case(DType.BF16, Layout.NHWC, 32, 256, 56, 56, 2, Activation.GELU_ERF), cs.get(1));
        assertEquals("BF16/NHWC/32x256x56x56/s2/GELU_ERF", cs.get(1).label());
        assertEquals(8L * 96 * 112 * 112, cs.get(0).problem().outputElements());
        assertThrows(IllegalArgumentException.class, () -> DepthwiseKnobProbe.Case.parse("F32/NCHW/8x96x112/s1/NONE"));
        assertThrows(IllegalArgumentException.class, () -> DepthwiseKnobProbe.Case.parse("F32/NCHW/8x96x112x112/1/NONE"));
    }

    @Test void settingsSetTheirPropertiesOnlyWhileTheirPathRuns() {
        List<DepthwiseKnobProbe.Setting> ss = DepthwiseKnobProbe.settings("default,rows16:gapfill.test.knobA=16;gapfill.test.knobB=x");
        assertEquals("default", ss.get(0).label());
        assertTrue(ss.get(0).properties().isEmpty());
        assertEquals(Map.of("gapfill.test.knobA", "16", "gapfill.test.knobB", "x"), ss.get(1).properties());
        String[] seen = new String[2];
        ss.get(1).run(() -> {
            seen[0] = System.getProperty("gapfill.test.knobA");
            seen[1] = System.getProperty("gapfill.test.knobB");
        });
        assertEquals("16", seen[0]);
        assertEquals("x", seen[1]);
        assertNull(System.getProperty("gapfill.test.knobA"));
        assertNull(System.getProperty("gapfill.test.knobB"));
        assertThrows(IllegalArgumentException.class, () -> DepthwiseKnobProbe.Setting.parse("bad:noequals"));
    }
}
