package dev.gapfill.examples;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The Losses table lists every row where custom is slower than a vendor path, grouped_gemm's grouped-batched call included. */
class ReportLossesTest {
    private static Map<String, Object> row(double vendor, double custom, Double grouped) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("dtype", "BF16");
        r.put("shape", Map.of("experts", 128));
        r.put("vendor_us", vendor);
        r.put("custom_us", custom);
        r.put("peers", grouped == null ? Map.of() : Map.of("cublas_grouped_batched", grouped));
        return r;
    }

    @Test void aGroupedRowSlowerThanTheGroupedBatchedCallIsALoss() {
        String line = ReportCmd.lossLine("h100", "grouped_gemm", row(300.0, 120.0, 100.0));  // beats the loop, loses to grouped
        assertTrue(line != null && line.contains("vs vendor (cublasGemmGroupedBatchedEx) 100.0 µs (0.83×)"), String.valueOf(line));
        assertNull(ReportCmd.lossLine("h100", "grouped_gemm", row(300.0, 90.0, 100.0)));   // beats both
        assertNull(ReportCmd.lossLine("h100", "grouped_gemm", row(300.0, 250.0, 400.0)));  // the loop is the faster vendor, beaten
        String loop = ReportCmd.lossLine("h100", "grouped_gemm", row(100.0, 120.0, 400.0));
        assertTrue(loop != null && loop.contains("custom 120.0 µs vs vendor 100.0 µs (0.83×)"), String.valueOf(loop));
    }

    @Test void otherOpsCompareWithTheirVendorColumnOnly() {
        assertNull(ReportCmd.lossLine("h100", "bmm", row(10.0, 8.0, 5.0)));  // a peer of another op is not its vendor path
        assertEquals("| h100 | bmm | BF16 {experts=128} | custom 12.0 µs vs vendor 10.0 µs (0.83×) |\n".replace("\n", System.lineSeparator()),
                ReportCmd.lossLine("h100", "bmm", row(10.0, 12.0, null)));
        Map<String, Object> vendorOnly = row(10.0, 1.0, null);
        vendorOnly.remove("custom_us");  // a vendor-only row (no custom path at that shape) is no loss
        assertNull(ReportCmd.lossLine("h100", "bmm", vendorOnly));
    }

    /** AUTO counts only where it was timed as a path of its own, never where a sweep copied the custom median into it. */
    @Test void autoCountsOnlyWhereItWasTimed() {
        Map<String, Object> copied = new LinkedHashMap<>(Map.of("custom_us", 7.25, "auto_us", 7.25,
                "spread_p10_p90_us", Map.of("custom", java.util.List.of(7.0, 7.5))));
        assertEquals(false, ReportCmd.autoTimed(copied));
        Map<String, Object> timed = new LinkedHashMap<>(Map.of("custom_us", 4.128, "auto_us", 4.128,
                "spread_p10_p90_us", Map.of("custom", java.util.List.of(4.0, 4.3), "auto", java.util.List.of(4.0, 4.4))));
        assertTrue(ReportCmd.autoTimed(timed), "the same median by chance, but timed");
        Map<String, Object> differs = new LinkedHashMap<>(Map.of("custom_us", 7.2, "auto_us", 7.6));
        assertTrue(ReportCmd.autoTimed(differs), "a median of its own (host_overhead's AUTO rows)");
        Map<String, Object> none = new LinkedHashMap<>(Map.of("custom_us", 7.2));
        assertEquals(false, ReportCmd.autoTimed(none));
    }
}
