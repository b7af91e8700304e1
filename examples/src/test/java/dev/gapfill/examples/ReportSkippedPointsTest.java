package dev.gapfill.examples;

import dev.gapfill.examples.bench.BenchRow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A complete gqa_decode sweep that skipped some of the issue's 1080 points (caches it does not allocate) is not the
 * full sweep: the report says how many points it holds and judges a target "met on these rows" at most.
 */
class ReportSkippedPointsTest {
    @TempDir Path tmp;

    private static Object row(int b) {
        // custom 3x faster than the composition and within 10 % of the floor: every target this row falls under holds
        BenchRow r = new BenchRow("gqa_decode", "F16", BenchRow.shape("B", b, "Hq", 32, "Hkv", 8, "D", 128, "L", 512, "layout", "BHLD",
                "page", 0, "lens", "L"), "decode", 60.0, 10.0, 10.0, "CUSTOM/decode", 9.5, 1_000_000L, 1e6, Map.of(), Map.of(),
                new BenchRow.Check("reference", false, 1, 0, true));
        return r.toJson();
    }

    @Test void aCompleteFileWithFewerRowsThanTheIssuesGridIsJudgedOnItsRowsOnly() throws Exception {
        List<Object> rows = new ArrayList<>();
        rows.add(row(1));
        rows.add(row(4));
        String md = ReportFixture.reportOf(tmp, "gqa_decode", rows);
        assertTrue(md.contains("The file holds 2 of the issue's 1080 sweep points"), md);
        assertTrue(md.contains("| met on these rows |"), md);
        for (String line : md.lines().toList()) {
            assertFalse(line.startsWith("| ") && line.endsWith("| met |"), "plain \"met\" on a file short of the grid: " + line);
        }
    }
}
