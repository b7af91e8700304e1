package dev.gapfill.examples.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a target's range holds beyond the rows it can judge: points the custom path did not run, rows without the vendor
 * time a speedup needs, rows whose check failed, and rows without a shape field the range reads (not in it). Each
 * case here read "met" (or threw) before the targets counted them.
 */
class IssueTargetsGapsTest {
    /** A row as a benchmark file holds it (written by {@link Json}, read back by {@link JsonReader}); {@code pass} null: no check. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> row(String op, String dtype, Map<String, Object> shape, Double vendor, Double custom, double floor,
                                           Map<String, Double> peers, Boolean pass) {
        BenchRow b = new BenchRow(op, dtype, shape, "regime", vendor, custom, custom != null ? custom : vendor, "AUTO", floor, 0, 0, peers,
                Map.of(), pass == null ? null : new BenchRow.Check("reference", true, 0, 0, pass));
        return (Map<String, Object>) JsonReader.parse(Json.write(b.toJson()));
    }

    private static Map<String, Object> int8(long m, Double vendor, Double custom) {
        return row("int8_mm", "I8->F16", BenchRow.shape("m", m, "k", 4096, "n", 4096), vendor, custom, 8.5, Map.of(), true);
    }

    private static IssueTargets.Result target(List<IssueTargets.Result> t, String startsWith) {
        return t.stream().filter(r -> r.target().startsWith(startsWith)).findFirst().orElseThrow();
    }

    @Test void anInt8PointInRangeWithoutACustomTimeIsAMissNotARowLeftOut() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(int8(1, 14.0, 10.0));   // 85 % of the floor, 1.4x the vendor
        rows.add(int8(16, 14.0, 10.0));
        rows.add(int8(4, 14.0, null));   // M = 4: the custom path did not run
        List<IssueTargets.Result> t = IssueTargets.evaluate("int8_mm", rows);
        IssueTargets.Result floor = target(t, "M ≤ 16");
        assertEquals("2 of 2 rows (85–85 %); 1 row in range without a custom time", floor.measured());
        assertFalse(floor.met());
        assertEquals("**not met**", floor.status(true));
        IssueTargets.Result speedup = target(t, "… custom ≥ 1.3× the vendor at every point");
        assertEquals("2 of 2 rows (1.40–1.40×); 1 row in range without a custom time", speedup.measured());
        assertEquals("**not met**", speedup.status(false), "never \"met on these rows\" either");
        assertNull(target(t, "32 ≤ M ≤ 64").met(), "the M = 4 row is not in the 32 ≤ M ≤ 64 range");
        // a range whose every point lacks a custom time is a miss, not "no rows"
        IssueTargets.Result none = target(IssueTargets.evaluate("int8_mm", List.of(int8(4, 14.0, null))), "M ≤ 16");
        assertEquals("no row in range can be judged; 1 row in range without a custom time", none.measured());
        assertFalse(none.met());
    }

    @Test void aFastGroupedRowWhoseCheckFailedIsAMiss() {
        Map<String, Object> ok = row("grouped_gemm", "BF16", BenchRow.shape("experts", 64, "tokens", 1), 200.0, 35.0, 30.0, Map.of(), true);
        Map<String, Object> fastWrong = row("grouped_gemm", "BF16", BenchRow.shape("experts", 64, "tokens", 8), 400.0, 20.0, 18.0, Map.of(),
                false);
        Map<String, Object> unchecked = row("grouped_gemm", "F16", BenchRow.shape("experts", 64, "tokens", 1), 200.0, 35.0, 30.0, Map.of(),
                null);
        List<IssueTargets.Result> t = IssueTargets.evaluate("grouped_gemm", List.of(ok, fastWrong));
        IssueTargets.Result loop = target(t, "E ≥ 64: custom ≥ 5×");
        assertEquals("10.69× over 2 rows (5.71–20.00×); a kernel at every row's floor would be 12.17×; 1 row in range failed its check",
                loop.measured());
        assertFalse(loop.met());
        IssueTargets.Result floor = target(t, "T ≤ 512");
        assertTrue(floor.measured().endsWith("; 1 row in range failed its check"), floor.measured());
        assertFalse(floor.met());
        // a row without a check keeps the speed targets' old reading; the results row counts it
        List<IssueTargets.Result> u = IssueTargets.evaluate("grouped_gemm", List.of(ok, unchecked));
        assertTrue(target(u, "E ≥ 64: custom ≥ 5×").met(), target(u, "E ≥ 64: custom ≥ 5×").measured());
        assertEquals("1 of 2 rows passed, 1 without a check", target(u, "results:").measured());
    }

    @Test void aGqaRowWrittenTwiceIsOnePoint() {
        Map<String, Object> a = row("gqa_decode", "F16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 512, "layout", "BHLD",
                "page", 0, "lens", "L"), 30.0, 10.0, 9.0, Map.of(), true);
        Map<String, Object> sameReordered = row("gqa_decode", "F16", BenchRow.shape("Hq", 32, "B", 1, "Hkv", 8, "D", 128, "L", 512,
                "layout", "BHLD", "page", 0, "lens", "L"), 31.0, 10.5, 9.0, Map.of(), true);
        Map<String, Object> otherDtype = row("gqa_decode", "BF16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 512,
                "layout", "BHLD", "page", 0, "lens", "L"), 30.0, 10.0, 9.0, Map.of(), true);
        assertEquals(2, IssueTargets.issuePointsIn("gqa_decode", List.of(a, a, sameReordered, otherDtype)));
    }

    @Test void aRowWithoutAShapeFieldItsRangeReadsIsNotInThatRange() {
        // bmm: a row without n is no sweep point, so neither its slow time nor its missing custom time counts
        Map<String, Object> good = row("bmm", "F16", BenchRow.shape("batch", 2048, "m", 16, "n", 16, "k", 16, "shared_b", false), 12.0, 4.0,
                1.0, Map.of(), true);
        Map<String, Object> noN = row("bmm", "F16", BenchRow.shape("batch", 2048, "m", 16, "k", 16, "shared_b", false), 12.0, 100.0, 1.0,
                Map.of(), true);
        Map<String, Object> noNUntimed = row("bmm", "BF16", BenchRow.shape("batch", 2048, "m", 16, "k", 16, "shared_b", false), 12.0, null,
                1.0, Map.of(), true);
        assertFalse(IssueTargets.bmmIssuePoint(noN));
        List<IssueTargets.Result> t = IssueTargets.evaluate("bmm", List.of(good, noN, noNUntimed));
        assertEquals("1 of 1 rows (3.00–3.00×)", target(t, "… never below 1.5×").measured());
        assertTrue(target(t, "n ≤ 32, F16/BF16").met());
        assertEquals(1, IssueTargets.issuePointsIn("bmm", List.of(good, noN, noNUntimed)));
        // int8: a row without m read as M = 0 and fell under "M ≤ 16"
        Map<String, Object> noM = row("int8_mm", "I8->F16", BenchRow.shape("k", 4096, "n", 4096), 14.0, 100.0, 8.5, Map.of(), true);
        Map<String, Object> noMUntimed = row("int8_mm", "I8->I32", BenchRow.shape("k", 4096, "n", 4096), 14.0, null, 8.5, Map.of(), true);
        IssueTargets.Result floor = target(IssueTargets.evaluate("int8_mm", List.of(int8(1, 14.0, 10.0), noM, noMUntimed)), "M ≤ 16");
        assertEquals("1 of 1 rows (85–85 %)", floor.measured());
        assertTrue(floor.met());
        // grouped: a row without tokens read as T = 0 and fell under "T ≤ 512"
        Map<String, Object> fine = row("grouped_gemm", "BF16", BenchRow.shape("experts", 64, "tokens", 1), 200.0, 35.0, 30.0, Map.of(), true);
        Map<String, Object> noTokens = row("grouped_gemm", "BF16", BenchRow.shape("experts", 8), 200.0, 350.0, 30.0, Map.of(), true);
        IssueTargets.Result small = target(IssueTargets.evaluate("grouped_gemm", List.of(fine, noTokens)), "T ≤ 512");
        assertEquals("1 of 1 rows (86–86 %)", small.measured());
        assertTrue(small.met());
    }

    @Test void aRowWithoutAVendorTimeGivesNoRatioAndIsCountedWithoutACrash() {
        // int8: the floor target needs no vendor time; the speedup at every point cannot be judged on this row
        List<IssueTargets.Result> t = IssueTargets.evaluate("int8_mm", List.of(int8(1, null, 10.0)));
        assertTrue(target(t, "M ≤ 16").met());
        IssueTargets.Result speedup = target(t, "… custom ≥ 1.3× the vendor at every point");
        assertEquals("no row in range can be judged; 1 row in range without a vendor time", speedup.measured());
        assertFalse(speedup.met());
        // bmm's F32 mean over a row without a vendor time, beside one with it
        Map<String, Object> f32 = row("bmm", "F32", BenchRow.shape("batch", 2048, "m", 32, "n", 32, "k", 32, "shared_b", false), 16.0, 10.0,
                8.0, Map.of(), true);
        Map<String, Object> f32NoVendor = row("bmm", "F32", BenchRow.shape("batch", 512, "m", 32, "n", 32, "k", 32, "shared_b", false), null,
                10.0, 8.0, Map.of(), true);
        IssueTargets.Result mean = target(IssueTargets.evaluate("bmm", List.of(f32, f32NoVendor)), "n ≤ 32, F32");
        assertEquals("1.60× over 1 rows (1.60–1.60×); a kernel at every row's floor would be 2.00×; 1 row in range without a vendor time",
                mean.measured());
        assertFalse(mean.met());
    }

    @Test void aPagedPairWhoseContiguousRowHasNoCustomTimeIsAMiss() {
        Map<String, Object> contiguous = row("gqa_decode", "F16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192,
                "layout", "BHLD", "page", 0, "lens", "L"), 38.0, null, 11.0, Map.of(), true);
        Map<String, Object> paged = row("gqa_decode", "F16", BenchRow.shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192,
                "layout", "PAGED", "page", 16, "lens", "L"), 61.0, 20.0, 11.0, Map.of(), true);
        List<IssueTargets.Result> t = IssueTargets.evaluate("gqa_decode", List.of(contiguous, paged));
        IssueTargets.Result pair = target(t, "paged within 10 %");
        assertEquals("no row in range can be judged; 1 row in range without a custom time", pair.measured());
        assertFalse(pair.met());
        IssueTargets.Result never = target(t, "custom never slower");
        assertEquals("1 of 1 rows (3.05–3.05×); 1 row in range without a custom time", never.measured());
        assertFalse(never.met());
    }
}
