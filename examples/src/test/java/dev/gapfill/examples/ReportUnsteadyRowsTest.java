package dev.gapfill.examples;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report names rows whose timing was disturbed (a path's p90 over twice its p10), and only those. */
class ReportUnsteadyRowsTest {

    private static Map<String, Object> row(String shape, double vp10, double vp90, double cp10, double cp90) {
        Map<String, Object> spread = new LinkedHashMap<>();
        spread.put("vendor", List.of(vp10, vp90));
        spread.put("custom", List.of(cp10, cp90));
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("dtype", "F16");
        r.put("shape", Map.of("n", shape));
        r.put("spread_p10_p90_us", spread);
        return r;
    }

    @Test void disturbedRowsAreCountedAndNamed() {
        List<Map<String, Object>> rows = List.of(
                row("a", 10, 11, 5, 5.5),     // steady
                row("b", 26.2, 107.9, 35, 36), // the vendor disturbed (int8 call 1 at 01b7f8b)
                row("c", 10, 20, 5, 10),       // exactly 2x: not over
                row("d", 10, 11, 4, 9));       // the custom disturbed
        String s = ReportCmd.unsteadySentence(rows);
        assertTrue(s.startsWith(" 2 of 4 rows had a path whose p90 was over 2× its p10"), s);
        assertTrue(s.contains("{n=b} (vendor 26.2–107.9 µs)"), s);
        assertTrue(s.contains("{n=d} (custom 4.0–9.0 µs)"), s);
        assertTrue(!s.contains("{n=a}") && !s.contains("{n=c}"), s);
    }

    @Test void steadyFilesAndFilesWithoutSpreadsSayNothing() {
        assertEquals("", ReportCmd.unsteadySentence(List.of(row("a", 10, 11, 5, 5.5))));
        assertEquals("", ReportCmd.unsteadySentence(List.of(Map.of("dtype", "F16", "shape", Map.of()))));
    }
}
