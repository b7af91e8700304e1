package dev.gapfill.examples;

import dev.gapfill.examples.bench.BenchRow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A full int8_mm sweep where one M ≤ 16 point has no custom time (the custom path did not run there): the report's
 * M ≤ 16 targets read "not met" and say how many such rows there were, where they used to read plain "met".
 */
class ReportTargetGapsTest {
    @TempDir Path tmp;

    private static Object int8(int m, Double custom) {
        // 14 µs vendor, 10 µs custom at an 8.5 µs floor: 85 % of the floor and 1.4× the vendor, every M ≤ 16 target held
        return new BenchRow("int8_mm", "I8->F16", BenchRow.shape("m", m, "k", 4096, "n", 4096), "skinny", 14.0, custom,
                custom != null ? custom : 14.0, custom != null ? "CUSTOM/gemv" : "VENDOR/cublaslt", 8.5, 0L, 0, Map.of(), Map.of(),
                new BenchRow.Check("vendor", true, 0, 0, true)).toJson();
    }

    /**
     * A row without a vendor time in an op with no vendor peer (moe_route, elementwise and host_overhead have such rows:
     * no vendor library routes). Since 6167c12 the report read the faster vendor time of such a row through a
     * conditional expression that unboxed the missing time, and stopped with a NullPointerException.
     */
    @Test void aRowWithoutAVendorTimeAndNoVendorPeerIsReportedNotThrown() throws Exception {
        Object noVendor = new BenchRow("int8_mm", "I8->I32", BenchRow.shape("m", 128, "k", 4096, "n", 4096), "mid", null, 30.0,
                30.0, "CUSTOM/mma", 20.0, 0L, 0, Map.of(), Map.of(), new BenchRow.Check("exact", true, 0, 0, true)).toJson();
        String md = ReportFixture.reportOf(tmp, "int8_mm", List.<Object>of(int8(1, 10.0), noVendor));
        assertTrue(md.contains("int8_mm"), md);
        assertEquals(null, BenchRow.fasterVendorUs("int8_mm", Map.of("custom_us", 30.0)));
        assertEquals(14.0, BenchRow.fasterVendorUs("int8_mm", Map.of("vendor_us", 14.0)));
        assertEquals(9.0, BenchRow.fasterVendorUs("grouped_gemm", Map.of("peers", Map.of("cublas_grouped_batched", 9.0))));
        assertEquals(9.0, BenchRow.fasterVendorUs("grouped_gemm", Map.of("vendor_us", 12.0, "peers", Map.of("cublas_grouped_batched", 9.0))));
    }

    @Test void anM16PointWithoutACustomTimeMakesTheM16TargetsNotMet() throws Exception {
        String md = ReportFixture.reportOf(tmp, "int8_mm", List.<Object>of(int8(1, 10.0), int8(4, null), int8(16, 10.0)));
        assertTrue(md.contains("| 2 of 2 rows (85–85 %); 1 row in range without a custom time | **not met** |"), md);
        assertTrue(md.contains("| 2 of 2 rows (1.40–1.40×); 1 row in range without a custom time | **not met** |"), md);
        for (String line : md.lines().toList()) {
            assertFalse(line.startsWith("| M ≤ 16") && line.endsWith("| met |"), "an M ≤ 16 target met without the M = 4 point: " + line);
        }
    }
}
