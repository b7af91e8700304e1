package dev.gapfill.examples;

import dev.gapfill.examples.bench.BenchRow;
import dev.gapfill.examples.bench.Json;
import dev.gapfill.examples.bench.JsonReader;
import dev.gapfill.examples.bench.ResumedRows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The benchmark files without a GPU: rows read back for {@code bench --resume}, and what the report says of them. */
class BenchFilesTest {
    private static BenchRow row(String dtype, int batch, int n, Double customUs) {
        Map<String, double[]> spread = new LinkedHashMap<>();
        spread.put("vendor", new double[] {9.5, 11.25});
        Map<String, Double> peers = new LinkedHashMap<>();
        peers.put("vendor_loop", 123.5);
        return new BenchRow("bmm", dtype, BenchRow.shape("batch", batch, "m", n, "n", n, "k", n, "shared_b", false), "tiny (<= 32)", 10.0,
                customUs, 7.5, "CUSTOM/team", 2.25, 1L << 33, 3.5e9, peers, spread,
                new BenchRow.Check("reference (custom 2/512 matrices)", false, 3, 1.5e-3, true));
    }

    @SuppressWarnings("unchecked")
    @Test void rowsSurviveTheirJsonRoundTrip() {
        for (BenchRow r : List.of(row("F16", 512, 16, 5.0), row("F32", 8192, 48, null))) {
            Map<String, Object> parsed = (Map<String, Object>) JsonReader.parse(Json.write(r.toJson()));
            BenchRow back = BenchRow.fromJson(parsed);
            assertEquals(Json.write(r.toJson()), Json.write(back.toJson()));
            assertEquals(r.customUs(), back.customUs());
            assertEquals(1L << 33, back.bytes());
        }
    }

    @SuppressWarnings("unchecked")
    @Test void aRowWhoseCheckMetANaNSurvivesItsJsonRoundTrip() {
        // the check of an output holding NaN has max_rel_err +Inf, written as null: bench --resume read it with an NPE
        BenchRow r = row("F16", 512, 16, 5.0);
        BenchRow failed = new BenchRow(r.op(), r.dtype(), r.shape(), r.regime(), r.vendorUs(), r.customUs(), r.autoUs(), r.autoBackend(),
                r.floorUs(), r.bytes(), r.flops(), r.peers(), r.spread(),
                new BenchRow.Check("reference", false, Long.MAX_VALUE, Double.POSITIVE_INFINITY, false));
        String json = Json.write(failed.toJson());
        assertTrue(json.replace(" ", "").contains("\"max_rel_err\":null"), json);
        BenchRow back = BenchRow.fromJson((Map<String, Object>) JsonReader.parse(json));
        assertEquals(Double.POSITIVE_INFINITY, back.check().maxRelErr());
        assertFalse(back.check().pass());
        assertEquals(json, Json.write(back.toJson()));
    }

    @SuppressWarnings("unchecked")
    @Test void resumedRowsAnswerByDtypeAndShapeValues() {
        ResumedRows done = new ResumedRows();
        List<BenchRow> earlier = List.of(row("F16", 512, 16, 5.0), row("BF16", 2048, 32, 6.0));
        // as a resumed run sees them: read back from the file, numbers as doubles
        done.put("bmm", earlier.stream().map(r -> BenchRow.fromJson((Map<String, Object>) JsonReader.parse(Json.write(r.toJson())))).toList());
        assertTrue(done.done("bmm", "F16", "batch", 512, "m", 16, "shared_b", false));
        assertTrue(done.done("bmm", "BF16", "batch", 2048L, "n", 32.0), "numbers compare by value");
        assertTrue(done.done("bmm", "F16"), "no keys: any row of the dtype");
        assertFalse(done.done("bmm", "F32", "batch", 512), "other dtype");
        assertFalse(done.done("bmm", "F16", "batch", 2048, "m", 16), "value differs");
        assertFalse(done.done("bmm", "F16", "batch", 512, "tokens", 1), "key the row lacks");
        assertFalse(done.done("int8_mm", "F16"), "other op");
        assertEquals(2, done.rows("bmm").size());
        assertThrows(IllegalArgumentException.class, () -> done.done("bmm", "F16", "batch"));
    }

    @Test void reportFlagsIncompleteSweepsAndListsEachFilesCommit(@TempDir Path dir) throws Exception {
        Path gpu = dir.resolve("h100");
        Files.createDirectories(gpu);
        write(gpu.resolve("bmm.json"), "aaaaaaaaaaaa1111", false);
        write(gpu.resolve("int8_mm.json"), "bbbbbbbbbbbb2222", true);
        Path out = dir.resolve("benchmarks.md");
        StringWriter sw = new StringWriter();
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(sw));
        assertEquals(0, cli.execute("report", "--root", dir.toString(), "--out", out.toString()), sw::toString);
        String md = Files.readString(out, StandardCharsets.UTF_8);
        assertTrue(md.contains("## Provenance"), md);
        assertTrue(md.contains("`aaaaaaaaaaaa`: h100/bmm.json"), md);
        assertTrue(md.contains("`bbbbbbbbbbbb`: h100/int8_mm.json"), md);
        String bmm = md.substring(md.indexOf("## bmm"), md.indexOf("## int8_mm"));
        assertTrue(bmm.contains("**Incomplete sweep**"), bmm);
        assertFalse(md.substring(md.indexOf("## int8_mm")).contains("**Incomplete sweep**"), md);
    }

    @Test void anUnknownOpIsAUsageErrorAndABenchWithoutAGpuDoesNotPass() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        assertEquals(2, cli.execute("bench", "--op", "bmm,gqa_decod"), out::toString);  // before: ran nothing, exit 0
        assertTrue(err.toString().contains("no sweep named 'gqa_decod'"), err::toString);
        org.junit.jupiter.api.Assumptions.assumeFalse(dev.gapfill.core.Gpu.available(), "a GPU host would run the sweep");
        assertEquals(3, cli.execute("bench", "--op", "elementwise"), out::toString);  // before: the CPU check's 0
        assertTrue(out.toString().contains("Nothing was benchmarked"), out::toString);
    }

    private static void write(Path f, String commit, boolean complete) throws Exception {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", 1);
        doc.put("gpu", "NVIDIA H100 80GB HBM3");
        doc.put("commit", commit);
        doc.put("complete", complete);
        doc.put("rows", List.of(row("F16", 512, 16, 5.0).toJson()));
        Files.writeString(f, Json.write(doc), StandardCharsets.UTF_8);
    }

    @Test void aBuildOfUnknownCommitNeverResumes(@TempDir Path out) throws Exception {
        // GAPFILL_COMMIT unset: two builds both say "unknown", so no earlier file may be taken as this build's (the
        // refusal comes before the GPU is asked anything, hence no BenchContext here)
        dev.gapfill.examples.bench.BenchSuite suite = new dev.gapfill.examples.bench.BenchSuite() {
            @Override public String op() { return "bmm"; }
            @Override public List<BenchRow> run(dev.gapfill.examples.bench.BenchContext ctx) { return List.of(); }
            @Override public boolean resumable() { return true; }
        };
        StringWriter text = new StringWriter();
        assertTrue(GapfillCli.resumeFrom(null, suite, new PrintWriter(text, true), out, "unknown"));
        assertTrue(text.toString().contains("commit is unknown"), text.toString());
    }

    /** A sweep resumes only from rows measured the same way: commit, GPU, dtypes, quick flag, repetitions and warm-up. */
    @Test void resumingNeedsTheSameSettings() {
        java.util.Map<String, Object> doc = new java.util.HashMap<>(java.util.Map.of("commit", "abc", "gpu", "H100",
                "dtypes", java.util.List.of(), "quick", false, "reps", 30.0, "warmup", 5.0));
        java.util.List<String> all = java.util.List.of();
        assertNull(GapfillCli.resumeRefusal(doc, "abc", "H100", all, false, 30, 5));
        assertTrue(GapfillCli.resumeRefusal(doc, "abd", "H100", all, false, 30, 5).contains("another commit"));
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H200", all, false, 30, 5).contains("another commit or GPU"));
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", java.util.List.of("F32"), false, 30, 5).contains("other dtypes"));
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", all, true, 30, 5).contains("other settings"), "a quick sweep resumed as a full one");
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", all, false, 5, 5).contains("other settings"));
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", all, false, 30, 2).contains("other settings"));
        doc.remove("reps");  // a file written before the settings were recorded
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", all, false, 30, 5).contains("other settings"));
        // rows of another driver or library version (another machine's host) are not merged into this run's file
        doc.put("reps", 30.0);
        doc.putAll(java.util.Map.of("driver", "13.0", "cublas", "13.1.0", "cudnn", "9.14.0"));
        assertNull(GapfillCli.resumeRefusal(doc, "abc", "H100", java.util.List.of("13.0", "13.1.0", "9.14.0"), all, false, 30, 5));
        assertTrue(GapfillCli.resumeRefusal(doc, "abc", "H100", java.util.List.of("13.0", "13.1.0", "9.13.1"), all, false, 30, 5)
                .contains("another driver or library"));
    }
}
