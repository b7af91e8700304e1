package dev.gapfill.examples.bench;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The issue targets judged on hand-made rows, written and read back as a benchmark file holds them. */
class IssueTargetsTest {
    /** A row as a benchmark file holds it: a {@link BenchRow} written by {@link Json} and read back by {@link JsonReader}. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> row(String dtype, Map<String, Object> shape, Double vendor, Double custom, Double auto, double floor,
                                           long bytes, Map<String, Double> peers) {
        BenchRow b = new BenchRow("op", dtype, shape, "regime", vendor, custom, auto, "AUTO", floor, bytes, 0, peers, Map.of(),
                new BenchRow.Check("reference", true, 0, 0, true));
        return (Map<String, Object>) JsonReader.parse(Json.write(b.toJson()));
    }

    private static Map<String, Object> row(String dtype, Map<String, Object> shape, Double vendor, Double custom, Double auto, double floor) {
        return row(dtype, shape, vendor, custom, auto, floor, 0, Map.of());
    }

    private static Map<String, Object> shape(Object... kv) {
        return BenchRow.shape(kv);
    }

    private static Map<String, Object> bmm(String dt, int batch, int n, double vendor, double custom, double auto, double floor) {
        return row(dt, shape("batch", batch, "m", n, "n", n, "k", n, "shared_b", false), vendor, custom, auto, floor);
    }

    @Test void bmmGeomeanMinimumFloorAndAuto() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(bmm("F16", 2048, 16, 12.0, 4.0, 4.0, 1.0));   // 3.0×
        rows.add(bmm("BF16", 512, 32, 7.0, 5.0, 5.0, 1.0));    // 1.4×: geomean 2.05, but below the 1.5× minimum
        rows.add(bmm("F32", 2048, 32, 16.0, 10.0, 10.0, 8.0)); // 1.6×
        rows.add(bmm("F16", 2048, 64, 18.0, 20.0, 18.0, 16.0)); // floor 80 %
        rows.add(bmm("F16", 8192, 128, 260.0, 400.0, 300.0, 260.0)); // floor 65 %; AUTO 300 > 1.05 · 260
        // not a sweep point of the n <= 32 targets: a shared B at batch 512 (the issue's is at 2048), and n = 33
        rows.add(row("F16", shape("batch", 512, "m", 32, "n", 32, "k", 32, "shared_b", true), 1.0, 100.0, 1.0, 1.0));
        rows.add(row("F16", shape("batch", 2048, "m", 17, "n", 33, "k", 9, "shared_b", false), 1.0, 100.0, 1.0, 1.0));
        List<IssueTargets.Result> t = IssueTargets.evaluate("bmm", rows);
        assertEquals(6, t.size());
        assertEquals("7 of 7 rows passed", t.get(5).measured());  // every hand-made row passed its check
        assertTrue(t.get(5).met());
        assertTrue(t.get(0).met(), t.get(0).toString());
        assertTrue(t.get(0).measured().startsWith("2.05× over 2 rows"), t.get(0).measured());
        assertFalse(t.get(1).met(), t.get(1).toString());
        assertEquals("1 of 2 rows (1.40–3.00×)", t.get(1).measured());
        assertTrue(t.get(2).met(), t.get(2).toString());
        assertFalse(t.get(3).met());
        assertEquals("1 of 2 rows (65–80 %)", t.get(3).measured());
        assertFalse(t.get(4).met());
        assertEquals("6 of 7 rows (worst +15.4 %)", t.get(4).measured());
        assertEquals("**not met**", t.get(4).status(true));
        assertEquals("met on these rows", t.get(0).status(false));
        assertEquals("met", t.get(0).status(true));
    }

    @Test void theBmmFloorTargetTakesTheIssuesSweepPointsOnly() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(bmm("F16", 2048, 48, 20.0, 16.0, 16.0, 10.0));   // 62.5 %: the issue's point
        rows.add(bmm("BF16", 2048, 100, 90.0, 50.0, 50.0, 45.0)); // 90 %: the issue's extra 100³
        rows.add(bmm("F16", 2048, 60, 30.0, 30.0, 30.0, 20.0));   // BmmBench's own 60³: not counted
        rows.add(bmm("F16", 8192, 76, 90.0, 90.0, 90.0, 60.0));   // and 76³
        IssueTargets.Result floor = IssueTargets.evaluate("bmm", rows).get(3);
        assertFalse(floor.met());
        assertEquals("1 of 2 rows (63–90 %)", floor.measured());
    }

    @Test void theBmmTargetsTakeTheIssuesNonSquarePointsByTheirN() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(bmm("F16", 2048, 16, 12.0, 4.0, 4.0, 1.0));  // 3.0×
        rows.add(row("F16", shape("batch", 2048, "m", 64, "n", 1, "k", 64, "shared_b", false), 11.7, 13.0, 11.7, 5.7));  // n = 1: 0.9×
        rows.add(row("F16", shape("batch", 2048, "m", 1, "n", 64, "k", 64, "shared_b", false), 11.8, 13.2, 11.8, 5.7));  // n = 64: 43 %
        rows.add(row("BF16", shape("batch", 2048, "m", 64, "n", 64, "k", 64, "shared_b", true), 14.0, 32.0, 14.0, 11.0)); // shared B: 34 %
        rows.add(row("F16", shape("batch", 2048, "m", 36, "n", 44, "k", 52, "shared_b", false), 27.0, 18.0, 18.0, 17.0)); // BmmBench's own
        List<IssueTargets.Result> t = IssueTargets.evaluate("bmm", rows);
        assertTrue(t.get(0).measured().startsWith("1.64× over 2 rows"), t.get(0).measured());
        assertFalse(t.get(0).met());
        assertEquals("1 of 2 rows (0.90–3.00×)", t.get(1).measured());
        assertEquals("0 of 2 rows (34–43 %)", t.get(3).measured());
        assertTrue(IssueTargets.bmmIssuePoint(rows.get(1)));
        assertFalse(IssueTargets.bmmIssuePoint(rows.get(4)));
    }

    @Test void aRowWhoseCheckFailedMakesTheResultsTargetNotMet() {
        Map<String, Object> failed = bmm("F16", 2048, 16, 12.0, 4.0, 4.0, 1.0);
        ((Map<String, Object>) failed.get("check")).put("pass", false);
        Map<String, Object> unchecked = bmm("BF16", 2048, 16, 12.0, 4.0, 4.0, 1.0);
        unchecked.remove("check");
        List<IssueTargets.Result> t = IssueTargets.evaluate("bmm", List.of(failed, unchecked, bmm("F16", 512, 8, 8.0, 4.0, 4.0, 1.0)));
        IssueTargets.Result results = t.get(t.size() - 1);
        assertTrue(results.target().startsWith("results:"), results.target());
        assertEquals("1 of 3 rows passed, 1 failed, 1 without a check", results.measured());
        assertFalse(results.met());
        // a speed target counts the failed check of its range and is not met; the row without a check is left to the results row
        assertFalse(t.get(0).met(), t.get(0).toString());
        assertTrue(t.get(0).measured().endsWith("; 1 row in range failed its check"), t.get(0).measured());
        assertTrue(IssueTargets.evaluate("moe_route", List.of(failed)).isEmpty(), "no issue targets, no results row");
    }

    @Test void writtenBytesTakesARowsOwnCountFirst() {
        Map<String, Object> r = row("I8->F16", shape("m", 16, "k", 4096, "n", 4096), 12.0, 7.0, 7.0, 5.70, 16_908_288, Map.of());
        r.put("op", "int8_mm");
        assertEquals(16 * 4096 * 2, IssueTargets.writtenBytes(r), 0);
        r.put("written_bytes", 0.0);
        assertEquals(0, IssueTargets.writtenBytes(r), 0);
    }

    @Test void aDecodeRowCountsForLAtLeast4096OnlyWhenEverySequenceIsThatLong() {
        Map<String, Object> capacity4096 = row("BF16", shape("B", 1, "L", 4096, "lens", "[L-64-L/4, L-64] + step"), 42.0, 30.0, 30.0, 5.0);
        capacity4096.put("op", "decode_step");
        Map<String, Object> long16k = row("BF16", shape("B", 8, "L", 16384, "lens", "[L-64-L/4, L-64] + step"), 580.0, 165.0, 165.0, 150.0);
        long16k.put("op", "decode_step");
        assertEquals(3008, IssueTargets.shortestLength(capacity4096));
        Map<String, Object> otherSteps = row("BF16", shape("B", 1, "L", 4096, "lens", "[L-32-L/8, L-32] + step"), 42.0, 30.0, 30.0, 5.0);
        assertEquals(4096 - 32 - 512, IssueTargets.shortestLength(otherSteps));
        IssueTargets.Result decode = IssueTargets.evaluate("demo", List.of(capacity4096, long16k)).get(1);
        assertEquals("1 of 1 rows (3.52–3.52×)", decode.measured());  // the 1.4× row at capacity 4096 is not an L ≥ 4096 case
        assertTrue(decode.met());
    }

    @Test void aBmmFileIsCountedAgainstTheIssuesNinetyNinePoints() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(bmm("F16", 512, 8, 8.0, 4.0, 4.0, 1.0));
        rows.add(bmm("F16", 512, 8, 8.0, 4.0, 4.0, 1.0));    // the same point twice counts once
        rows.add(bmm("F16", 2048, 60, 30.0, 30.0, 30.0, 20.0));  // BmmBench's own 60³: not an issue point
        rows.add(row("BF16", shape("batch", 2048, "m", 64, "n", 1, "k", 64, "shared_b", false), 11.7, 13.0, 11.7, 5.7));
        assertEquals(99, IssueTargets.issueGridPoints("bmm"));
        assertEquals(2, IssueTargets.issuePointsIn("bmm", rows));
        assertEquals(3, IssueTargets.issuePointsIn("depthwise_conv3x3", rows));  // other ops count distinct (dtype, shape) points
    }

    @Test void theInt8FloorTargetIsTheWeightReadAtTheCopyBandwidthOfTheRunThatMeasuredTheRow() {
        // A, W and out: 16,908,288 bytes. Measured at 3000 GB/s its floor column is 5.636 µs and the weight read alone
        // (K·N = 16 Mi bytes) 5.592 µs: 7.0 µs is 79.9 %, a miss, where the floor column would pass it at 80.5 %.
        long bytes = 16_908_288;
        double kn = 4096.0 * 4096;
        Map<String, Object> here = row("I8->F16", shape("m", 16, "k", 4096, "n", 4096), 12.0, 7.0, 7.0, bytes / 3000e3, bytes, Map.of());
        IssueTargets.Result weight = IssueTargets.evaluate("int8_mm", List.of(here), Map.of("copy_GBps", 3000.0)).get(0);
        assertFalse(weight.met(), weight.toString());
        assertTrue(weight.target().contains("K·N bytes / the copy bandwidth of the run that measured the row"), weight.target());
        assertEquals("0 of 1 rows (80–80 %)", weight.measured());
        // a row kept by --resume from a run that measured 2000 GB/s keeps that run's bandwidth, whatever this file's
        // ceilings say: its weight floor is 8.389 µs, not the 5.592 µs of this run's 3000 GB/s
        Map<String, Object> resumed = row("I8->F16", shape("m", 16, "k", 4096, "n", 4096), 12.0, 10.0, 10.0, bytes / 2000e3, bytes, Map.of());
        List<Map<String, Object>> w = IssueTargets.weightFloorRows(List.of(resumed), 3000.0);
        assertEquals(kn / 2000e3, (Double) w.get(0).get("floor_us"), 1e-4);  // the JSON keeps 6 digits of the floor
        assertTrue(IssueTargets.evaluate("int8_mm", List.of(resumed), Map.of("copy_GBps", 3000.0)).get(0).met());  // 83.9 %
        // a row without floor or bytes takes the file's copy bandwidth
        Map<String, Object> bare = new java.util.LinkedHashMap<>(here);
        bare.remove("floor_us");
        bare.remove("bytes");
        assertEquals(kn / 3000e3, (Double) IssueTargets.weightFloorRows(List.of(bare), 3000.0).get(0).get("floor_us"), 1e-9);
    }

    @Test void aGeomeanJustShortOfItsTargetIsNotRoundedUpToIt() {
        List<Map<String, Object>> rows = List.of(bmm("F32", 2048, 8, 14.97, 10.0, 10.0, 1.0));
        IssueTargets.Result f32 = IssueTargets.evaluate("bmm", rows).get(2);
        assertFalse(f32.met());
        assertTrue(f32.measured().startsWith("1.497× over 1 rows"), f32.measured());
    }

    @Test void anAutoMissOnTheFasterBackendIsCountedAsNoiseButStillAMiss() {
        Map<String, Object> wrongChoice = bmm("F32", 8192, 96, 575.0, 543.0, 575.0, 300.0);   // AUTO ran the vendor, custom was faster
        wrongChoice.put("auto_backend", "VENDOR/cublas_strided_batched_fp32");
        Map<String, Object> noise = bmm("F16", 2048, 64, 15.5, 20.0, 16.4, 10.0);           // AUTO ran the vendor, the faster one
        noise.put("auto_backend", "VENDOR/cublas_strided_batched");
        IssueTargets.Result auto = IssueTargets.evaluate("bmm", List.of(wrongChoice, noise)).get(4);
        assertFalse(auto.met());
        assertEquals("0 of 2 rows (worst +5.9 %); 1 of the misses ran the backend that measured faster (the same work timed twice: a measurement effect, not a wrong choice)",
                auto.measured());
    }

    @Test void aPerRowSpeedupTargetCountsTheRowsWhereItWouldBeatTheFloor() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(row("I8->I32", shape("m", 1, "k", 8192, "n", 28672), 85.3, 82.0, 82.0, 77.0));  // 85.3 / 1.3 = 65.6 < 77: unreachable
        rows.add(row("I8->I32", shape("m", 1, "k", 4096, "n", 4096), 14.0, 12.3, 12.3, 5.5));   // reachable, missed
        IssueTargets.Result r = IssueTargets.evaluate("int8_mm", rows).get(1);
        assertFalse(r.met());
        assertEquals("0 of 2 rows (1.04–1.14×); out of any kernel's reach in 1 of them (the vendor is within 1.30× of the floor there)",
                r.measured());
    }

    @Test void aPerRowSpeedupTargetAlsoCountsTheRowsWhereItWouldBeatAPlainRead() {
        double[] line = {4.0, 3000.0};  // a plain read after the flush: 4 µs + bytes / 3000 GB/s
        List<Map<String, Object>> rows = new ArrayList<>();
        // bmm writes C (512·32·32·2 = 1 MiB) of its 3 MiB: the read of its inputs is 4 + 2 MiB / 3000 GB/s = 4.70 µs,
        // below 7.2 / 1.5 = 4.8, so reachable (with C counted as read it would be 5.05 µs, beyond)
        rows.add(opRow("bmm", "F16", shape("batch", 512, "m", 32, "n", 32, "k", 32, "shared_b", false), 7.2, 5.0, 5.0, 1.0, 3L << 20));
        // a floor (9 µs) above its read (4.0 µs): 12 / 1.5 = 8 is beyond both, the read taken no lower than the floor
        rows.add(opRow("op", "F16", shape("case", 2), 12.0, 11.0, 11.0, 9.0, 1000L));
        // an op writing nothing by writtenBytes: read 4 + 3 MB / 3000 GB/s = 5.0 µs > 4.8, beyond the read, not the floor
        rows.add(opRow("op", "F16", shape("case", 3), 7.2, 4.0, 4.0, 1.0, 3_000_000L));
        IssueTargets.Result r = IssueTargets.speedupAtEveryRow("t", rows, 1.5, line);
        assertFalse(r.met());
        assertEquals("1 of 3 rows (1.09–1.80×); out of any kernel's reach in 1 of them (the vendor is within 1.50× of the floor there);"
                + " in 2 if none is faster than a plain read of its input bytes after the flush (4.00 µs + bytes / 3000 GB/s)", r.measured());
        // without a read line, or when the read adds no row, the text is the floor's alone
        assertEquals("1 of 3 rows (1.09–1.80×); out of any kernel's reach in 1 of them (the vendor is within 1.50× of the floor there)",
                IssueTargets.speedupAtEveryRow("t", rows, 1.5, null).measured());
        assertEquals("2 of 2 rows (1.80–3.00×)", IssueTargets.speedupAtEveryRow("t",
                List.of(rows.get(2), opRow("op", "F16", shape("case", 4), 30.0, 10.0, 10.0, 1.0, 1000L)), 1.5, null).measured());
    }

    @Test void int8CountsOnlyTheSkinnyLargeRowsAndThePeer() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(row("I8->I32", shape("m", 1, "k", 4096, "n", 4096), 14.0, 10.0, 10.0, 8.0, 0, Map.of("f16_cublas", 21.0)));
        rows.add(row("I8->I32", shape("m", 1, "k", 2048, "n", 5632), 10.0, 30.0, 10.0, 3.8)); // K·N < 16Mi: not counted
        rows.add(row("I8->I32", shape("m", 64, "k", 4096, "n", 4096), 14.0, 10.0, 10.0, 6.0));
        rows.add(row("I8->I32", shape("m", 128, "k", 4096, "n", 4096), 14.0, null, 14.0, 6.0));
        List<IssueTargets.Result> t = IssueTargets.evaluate("int8_mm", rows);
        assertTrue(t.get(0).met());   // 8 / 10 = 80 %
        assertTrue(t.get(1).met());   // 1.4×
        assertTrue(t.get(2).met());   // 2.1× the peer
        assertTrue(t.get(3).met());   // M = 64: 1.4×
        assertEquals("1.40× over 1 rows (1.40–1.40×); a kernel at every row's floor would be 2.33×", t.get(3).measured());
        assertTrue(t.get(4).met());   // AUTO: M = 128 has no custom, its best is the vendor
        assertEquals("4 of 4 rows (worst +0.0 %)", t.get(4).measured());
    }

    @Test void gqaPairsPagedWithContiguousAndSaysWhenNoRowApplies() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(row("F16", shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "BHLD", "page", 0, "lens", "L"), 38.0, 20.0, 20.0, 11.0));
        rows.add(row("F16", shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "PAGED", "page", 16, "lens", "L"), 61.0, 23.0, 23.0, 11.0));
        List<IssueTargets.Result> t = IssueTargets.evaluate("gqa_decode", rows);
        assertNull(t.get(0).met(), "no row has B·L >= 65536");
        assertEquals("no rows", t.get(0).status(true));
        assertFalse(t.get(1).met());  // 55 % and 48 % of the floor
        assertFalse(t.get(2).met());  // geomean of 1.9× and 2.65×
        assertTrue(t.get(3).met());
        assertFalse(t.get(4).met(), "paged 23 µs is 15 % over contiguous 20 µs");
        assertEquals("0 of 1 rows (worst +15.0 %)", t.get(4).measured());
    }

    @Test void floorTargetsCountTheRowsAPlainReadAfterTheFlushAlreadyMisses() {
        List<Map<String, Object>> rows = new ArrayList<>();
        // read line 4 µs + bytes / 3000 GB/s: 15 MB reads in 9 µs, so a 5 µs floor caps the fraction at 56 % (< 60 %);
        // 60 MB reads in 24 µs against a 20 µs floor: 83 %, within reach
        rows.add(row("F16", shape("B", 1, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "BHLD", "page", 0, "lens", "L"), 30.0, 12.0, 12.0,
                5.0, 15_000_000L, Map.of()));
        rows.add(row("F16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "BHLD", "page", 0, "lens", "L"), 60.0, 40.0, 40.0,
                20.0, 60_000_000L, Map.of()));
        Map<String, Object> ceilings = Map.of("copy_GBps", 3000.0, "read_after_flush_us", 4.0, "read_after_flush_GBps", 3000.0);
        List<IssueTargets.Result> t = IssueTargets.evaluate("gqa_decode", rows, ceilings);
        assertEquals("0 of 2 rows (42–50 %); out of any kernel's reach in 1 of them (a plain read of their input bytes after the flush takes "
                + "4.00 µs + bytes / 3000 GB/s)", t.get(1).measured());
        assertFalse(t.get(1).met(), "the verdict stays strict: an unreachable row is still a miss");
        // without the line (files measured before it existed) the text is the plain count
        assertEquals("0 of 2 rows (42–50 %)", IssueTargets.evaluate("gqa_decode", rows).get(1).measured());
    }

    @Test void theReachTestReadsTheInputsOnlySinceAnOutputCanStayInL2() {
        // F16 bmm 2048 x 48^3 as the H100 sweep holds it: A and B 18,874,368 bytes, C 9,437,184; floor at 3031 GB/s 9.34 µs,
        // so 80 % needs 11.68 µs. Reading every byte along the line (3.8 µs + 28.3 MB / 3128 GB/s = 12.85 µs) called it
        // out of reach; the inputs alone read in 9.83 µs, and cuBLAS rows of that sweep ran below the all-bytes line.
        Map<String, Object> r = opRow("bmm", "F16", shape("batch", 2048, "m", 48, "n", 48, "k", 48, "shared_b", false), 20.0, 14.0, 14.0,
                9.34, 28_311_552L);
        assertEquals(9_437_184.0, IssueTargets.writtenBytes(r));
        Map<String, Object> ceilings = Map.of("copy_GBps", 3031.0, "read_after_flush_us", 3.8, "read_after_flush_GBps", 3128.0);
        IssueTargets.Result floor = IssueTargets.evaluate("bmm", List.of(r), ceilings).stream()
                .filter(x -> x.target().startsWith("48 ≤ n ≤ 128")).findFirst().orElseThrow();
        assertEquals("0 of 1 rows (67–67 %); out of any kernel's reach in 0 of them (a plain read of their input bytes after the flush "
                + "takes 3.80 µs + bytes / 3128 GB/s)", floor.measured());
        // each op's output as its sweep counts it
        assertEquals(4.0 * 16 * 4096, IssueTargets.writtenBytes(opRow("int8_mm", "I8->I32", shape("m", 16, "k", 4096, "n", 4096), 1.0, 1.0,
                1.0, 1.0, 1L)));
        assertEquals(2.0 * 4 * 32 * 128, IssueTargets.writtenBytes(opRow("gqa_decode", "BF16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128,
                "L", 512, "layout", "BHLD", "page", 0, "lens", "L"), 1.0, 1.0, 1.0, 1.0, 1L)));
        assertEquals(2.0 * 64 * 1024, IssueTargets.writtenBytes(opRow("grouped_gemm", "F16", shape("t_total", 64, "k", 2048, "n", 2048,
                "proj", "gate_up_swiglu"), 1.0, 1.0, 1.0, 1.0, 1L)));
        assertEquals(4.0 * 8 * 96 * 56 * 56, IssueTargets.writtenBytes(opRow("depthwise_conv3x3", "F32", shape("N", 8, "C", 96, "H", 111,
                "W", 111, "stride", 2), 1.0, 1.0, 1.0, 1.0, 1L)));
        assertEquals(0.0, IssueTargets.writtenBytes(opRow("moe_route", "F16", shape("tokens", 1), 1.0, 1.0, 1.0, 1.0, 1L)));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> opRow(String op, String dtype, Map<String, Object> shape, Double vendor, Double custom, Double auto,
                                             double floor, long bytes) {
        BenchRow b = new BenchRow(op, dtype, shape, "regime", vendor, custom, auto, "AUTO", floor, bytes, 0, Map.of(), Map.of(),
                new BenchRow.Check("reference", true, 0, 0, true));
        return (Map<String, Object>) JsonReader.parse(Json.write(b.toJson()));
    }

    @Test void gqaPagedRowsWhoseDrawnLengthsDifferAreComparedPerFloor() {
        List<Map<String, Object>> rows = new ArrayList<>();
        // lengths drawn in [L/2, L]: the paged row read 20 % more bytes (floor 12 vs 10 µs) and took 20 % longer
        rows.add(row("F16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "BHLD", "page", 0, "lens", "[L/2,L]"),
                40.0, 20.0, 20.0, 10.0));
        rows.add(row("F16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "PAGED", "page", 64, "lens", "[L/2,L]"),
                48.0, 24.0, 24.0, 12.0));
        // same lengths, same floor: a real 12 % loss stays a loss
        rows.add(row("F16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "BHLD", "page", 0, "lens", "L"),
                40.0, 25.0, 25.0, 12.0));
        rows.add(row("F16", shape("B", 4, "Hq", 32, "Hkv", 8, "D", 128, "L", 8192, "layout", "PAGED", "page", 16, "lens", "L"),
                48.0, 28.0, 28.0, 12.0));
        List<IssueTargets.Result> t = IssueTargets.evaluate("gqa_decode", rows);
        assertFalse(t.get(4).met());
        assertEquals("1 of 2 rows (worst +12.0 %)", t.get(4).measured());
    }

    @Test void groupedComparesWithTheLoopAndTheGroupedPeer() {
        // the grouped-batched peer is faster than custom here
        Map<String, Object> r = row("BF16", shape("experts", 64, "tokens", 1), 200.0, 35.0, 35.0, 22.0, 0, Map.of("cublas_grouped_batched", 30.0));
        List<IssueTargets.Result> t = IssueTargets.evaluate("grouped_gemm", List.of(r));
        assertTrue(t.get(0).met());   // 5.7× the loop
        assertFalse(t.get(1).met());  // 0.86× the grouped call
        assertFalse(t.get(2).met());  // 63 % of the floor
        assertFalse(t.get(3).met(), "AUTO 35 µs against the peer's 30 µs");
        // the ceilings: the loop at 200 µs over a 22 µs floor (9.09×), the peer at 30 µs over it (1.36×)
        assertEquals("5.71× over 1 rows (5.71–5.71×); a kernel at every row's floor would be 9.09×", t.get(0).measured());
        assertEquals("0.86× over 1 rows (0.86–0.86×); a kernel at every row's floor would be 1.36×", t.get(1).measured());
    }

    @Test void aPeersCheckFlagsAndUlpsAreNotTakenForTimes() {
        // a check flag of 1.0 and a max ulp of 0 beside the peer's time: AUTO at 35 µs is within 5 % of the 34 µs peer
        Map<String, Object> r = row("BF16", shape("experts", 64, "tokens", 1), 200.0, 36.0, 35.0, 22.0, 0,
                Map.of("cublas_grouped_batched", 34.0, "cublas_grouped_batched_check_pass", 1.0, "vendor_max_ulp", 0.0,
                        "vendor_identical_fraction", 0.5));
        r.put("auto_backend", "VENDOR/cublas_grouped");
        IssueTargets.Result auto = IssueTargets.evaluate("grouped_gemm", List.of(r)).get(3);
        assertTrue(auto.met(), auto.measured());
        assertTrue(IssueTargets.isTime("nchw_rows_us") && IssueTargets.isTime("f16_cublas"));
        assertFalse(IssueTargets.isTime("nchw_rows_check_pass") || IssueTargets.isTime("vendor_max_ulp"));
    }

    @Test void aSpeedupTargetAboveWhatTheFloorsAllowIsSaidToBeOutOfReachAndStaysAMiss() {
        // loop / floor = 4.0× on both rows: no kernel, however close to its floor, makes 5× their geometric mean
        List<Map<String, Object>> rows = List.of(
                row("BF16", shape("experts", 64, "tokens", 8), 400.0, 110.0, 110.0, 100.0, 0, Map.of()),
                row("BF16", shape("experts", 64, "tokens", 32), 800.0, 220.0, 220.0, 200.0, 0, Map.of()));
        IssueTargets.Result loop = IssueTargets.evaluate("grouped_gemm", rows).get(0);
        assertFalse(loop.met());
        assertEquals("3.64× over 2 rows (3.64–3.64×); a kernel at every row's floor would be 4.00×, so out of any kernel's reach",
                loop.measured());
        // with the read-after-flush line (4 µs + bytes / 3000 GB/s) a 30 MB row cannot take less than 14 µs: against a
        // 10 µs floor the ceiling of a 100 µs loop drops from 10× to 7.14×
        List<Map<String, Object>> small = List.of(row("BF16", shape("experts", 64, "tokens", 1), 100.0, 25.0, 25.0, 10.0, 30_000_000L, Map.of()));
        Map<String, Object> ceilings = Map.of("copy_GBps", 3000.0, "read_after_flush_us", 4.0, "read_after_flush_GBps", 3000.0);
        assertEquals("4.00× over 1 rows (4.00–4.00×); a kernel at every row's floor would be 10.00× (7.14× if none is faster than a plain "
                + "read of its input bytes after the flush)", IssueTargets.evaluate("grouped_gemm", small, ceilings).get(0).measured());
        // a row without a floor leaves the ceiling out rather than guessing it
        Map<String, Object> noFloor = row("BF16", shape("experts", 64, "tokens", 1), 200.0, 35.0, 35.0, 0.0, 0, Map.of());
        assertEquals("5.71× over 1 rows (5.71–5.71×)", IssueTargets.evaluate("grouped_gemm", List.of(noFloor)).get(0).measured());
    }

    @Test void aGroupedAutoMissOnTheFastestVendorCallIsCountedAsNoiseButStillAMiss() {
        // AUTO named the grouped-batched call, which measured fastest in its own column: one call timed twice
        Map<String, Object> noise = row("BF16", shape("experts", 160, "tokens", 2048), 2007.0, 1839.0, 1656.0, 900.0, 0,
                Map.of("cublas_grouped_batched", 1567.0));
        noise.put("auto_backend", "VENDOR/cublas_grouped");
        // AUTO named the loop (the vendor column), which measured fastest
        Map<String, Object> loop = row("BF16", shape("experts", 8, "tokens", 2048), 2207.0, 5876.0, 2319.0, 900.0, 0,
                Map.of("cublas_grouped_batched", 5253.0));
        loop.put("auto_backend", "VENDOR/cublas_loop");
        // AUTO named the grouped-batched call, custom measured fastest: a choice, not noise
        Map<String, Object> choice = row("F16", shape("experts", 128, "tokens", 2048), 1807.0, 688.0, 753.0, 300.0, 0,
                Map.of("cublas_grouped_batched", 723.0));
        choice.put("auto_backend", "VENDOR/cublas_grouped");
        IssueTargets.Result auto = IssueTargets.evaluate("grouped_gemm", List.of(noise, loop, choice)).get(3);
        assertFalse(auto.met());
        assertEquals("0 of 3 rows (worst +9.4 %); 2 of the misses ran the path that measured fastest (the same work timed twice: a measurement effect, not a wrong choice)",
                auto.measured());
    }

    @Test void demoHoldsEveryDecodeSizedRowToItsTarget() {
        Map<String, Object> moe1 = row("BF16", shape("experts", 64, "tokens", 1), 280.0, 64.0, 64.0, 33.0);
        Map<String, Object> moe16 = row("BF16", shape("experts", 64, "tokens", 16), 555.0, 296.0, 296.0, 232.0);
        Map<String, Object> moe512 = row("BF16", shape("experts", 64, "tokens", 512), 100.0, 100.0, 100.0, 50.0);  // not decode-sized
        Map<String, Object> step = row("BF16", shape("B", 8, "L", 4096), 162.0, 53.0, 53.0, 36.0);
        Map<String, Object> shortStep = row("BF16", shape("B", 8, "L", 2048), 10.0, 10.0, 10.0, 5.0);  // L < 4096: not counted
        moe1.put("op", "moe_layer");
        moe16.put("op", "moe_layer");
        moe512.put("op", "moe_layer");
        step.put("op", "decode_step");
        shortStep.put("op", "decode_step");
        List<IssueTargets.Result> t = IssueTargets.evaluate("demo", List.of(moe1, moe16, moe512, step, shortStep));
        assertFalse(t.get(0).met(), "T = 16 is 1.9x");
        assertEquals("1 of 2 rows (1.88–4.38×)", t.get(0).measured());
        assertTrue(t.get(1).met());
        assertEquals("1 of 1 rows (3.06–3.06×)", t.get(1).measured());
        assertEquals(8, IssueTargets.issue("demo"));
    }

    @Test void depthwiseTakesF16AndBf16OneByOne() {
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(row("F16", shape("N", 32, "C", 256, "H", 56, "W", 56), 200.0, 50.0, 50.0, 34.0, 51_400_000, Map.of()));
        rows.add(row("BF16", shape("N", 1, "C", 384, "H", 64, "W", 64), 20.0, 10.0, 10.0, 2.0, 6_300_000, Map.of()));
        List<IssueTargets.Result> t = IssueTargets.evaluate("depthwise_conv3x3", rows);
        assertTrue(t.get(0).met());   // F16 4×
        assertFalse(t.get(1).met());  // BF16 2× (a combined geomean would be 2.8×)
        assertNull(t.get(2).met());   // no F32 row
        assertFalse(t.get(3).met());  // 68 % on the only case >= 32 MB; the small case does not count
        assertEquals("0 of 1 rows (68–68 %)", t.get(3).measured());
        assertTrue(IssueTargets.evaluate("elementwise", rows).isEmpty());
    }
}
