package dev.gapfill.examples;

import dev.gapfill.examples.bench.JsonReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The validation record's sanitizer entries: per tool errors, status, scope and the tests that ran under it. */
class ValidationRecordCmdTest {
    private static void report(Path dir, String name, int passed, int failed, int skipped) throws Exception {
        Files.createDirectories(dir);
        StringBuilder sb = new StringBuilder("<testsuite name=\"" + name + "\">");
        for (int i = 0; i < passed; i++) {
            sb.append("<testcase classname=\"").append(name).append("\" name=\"ok").append(i).append("\"/>");
        }
        for (int i = 0; i < failed; i++) {
            sb.append("<testcase classname=\"").append(name).append("\" name=\"bad").append(i).append("\"><failure message=\"x\"/></testcase>");
        }
        for (int i = 0; i < skipped; i++) {
            sb.append("<testcase classname=\"").append(name).append("\" name=\"skip").append(i).append("\"><skipped message=\"no gpu\"/></testcase>");
        }
        Files.writeString(dir.resolve("TEST-" + name + ".xml"), sb.append("</testsuite>").toString(), StandardCharsets.UTF_8);
    }

    /** A run of some classes (TESTS_CLASSES; run.sh writes reports/FILTER) says so in its record; a whole run does not. */
    @Test @SuppressWarnings("unchecked")
    void aRecordOfSomeClassesNamesItsFilter(@TempDir Path tmp) throws Exception {
        report(tmp.resolve("reports/verify"), "GroupedGemmGpuTest", 2, 0, 0);
        Files.writeString(tmp.resolve("reports/FILTER"), ".*(verify|ops)\\.GroupedGemm.*\n");
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(new StringWriter()));
        assertEquals(0, cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("out").toString()));
        Map<String, Object> rec = (Map<String, Object>) JsonReader.parse(Files.readString(onlyRecord(tmp.resolve("out"))));
        assertEquals(".*(verify|ops)\\.GroupedGemm.*", rec.get("tests_filter"));
        Files.delete(tmp.resolve("reports/FILTER"));
        assertEquals(0, cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("out2").toString()));
        rec = (Map<String, Object>) JsonReader.parse(Files.readString(onlyRecord(tmp.resolve("out2"))));
        assertNull(rec.get("tests_filter"), "the whole suite: no filter");
    }

    @Test @SuppressWarnings("unchecked")
    void sanitizerEntriesCarryErrorsStatusScopeAndTests(@TempDir Path tmp) throws Exception {
        report(tmp.resolve("reports/ops"), "A", 3, 0, 1);
        report(tmp.resolve("san-memcheck"), "A", 2, 0, 0);
        report(tmp.resolve("san-racecheck"), "B", 1, 1, 0);
        Path rules = tmp.resolve("validation-rules-ops.json");
        Files.writeString(rules, "{\"rules_in_inventory\": 10, \"rules_checked\": 9, \"rules_skipped_on_this_host\": 1, \"cases_total\": 99}");
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(new StringWriter()));
        int rc = cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("out").toString(),
                "--sanitizer", "memcheck=errors=0;status=ok;exit=0;seconds=12;scope=core+ops+verify;reports=" + tmp.resolve("san-memcheck"),
                "--sanitizer", "racecheck=errors=?;status=timeout-300s;exit=124;seconds=300;scope=core+ops+verify;reports=" + tmp.resolve("san-racecheck"),
                "--sanitizer", "synccheck=2:exit-0",
                "--validation-rules", rules.toString());
        assertEquals(0, rc);
        Map<String, Object> rec = (Map<String, Object>) JsonReader.parse(Files.readString(onlyRecord(tmp.resolve("out"))));
        Map<String, Object> san = (Map<String, Object>) rec.get("sanitizer");
        Map<String, Object> mem = (Map<String, Object>) san.get("memcheck");
        assertEquals(0L, ((Number) mem.get("errors")).longValue());
        assertEquals("ok", mem.get("status"));
        assertEquals("core+ops+verify", mem.get("scope"));
        assertEquals(2L, ((Number) ((Map<String, Object>) mem.get("tests")).get("run")).longValue());
        Map<String, Object> race = (Map<String, Object>) san.get("racecheck");
        assertNull(race.get("errors"), "an unfinished run has unknown errors, never 0");
        assertEquals("timeout-300s", race.get("status"));
        assertEquals(1L, ((Number) ((Map<String, Object>) race.get("tests")).get("failed")).longValue());
        assertEquals(java.util.List.of("B.bad0"), race.get("failed_tests"));
        Map<String, Object> sync = (Map<String, Object>) san.get("synccheck");
        assertEquals(2L, ((Number) sync.get("errors")).longValue());
        assertEquals("exit-0", sync.get("status"));
        assertEquals(99L, ((Number) ((Map<String, Object>) rec.get("validation_rules")).get("cases_total")).longValue());
        Map<String, Object> tests = (Map<String, Object>) rec.get("tests");
        assertEquals(4L, ((Number) tests.get("run")).longValue());
        assertEquals(1L, ((Number) tests.get("skipped")).longValue());
    }

    /**
     * A module whose launcher exited non-zero (a timeout) or left no report, and a tool process that reported "0
     * errors" over no test, are named in the record and fail the command; a record without any test fails too.
     */
    @Test @SuppressWarnings("unchecked")
    void unfinishedModulesAndToolRunsWithoutTestsAreNotClean(@TempDir Path tmp) throws Exception {
        report(tmp.resolve("reports/core"), "A", 3, 0, 0);
        Files.writeString(tmp.resolve("reports/core/EXIT"), "0\n");
        report(tmp.resolve("reports/verify"), "B", 5, 0, 0);  // what the module wrote before it was stopped
        Files.writeString(tmp.resolve("reports/verify/EXIT"), "124\n");
        Files.createDirectories(tmp.resolve("reports/ops"));
        Files.writeString(tmp.resolve("reports/ops/EXIT"), "0\n");
        Files.createDirectories(tmp.resolve("san-empty"));
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(new StringWriter()));
        int rc = cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("out").toString(),
                "--sanitizer", "memcheck=errors=0;status=ok;exit=0;seconds=3;scope=core;reports=" + tmp.resolve("san-empty"));
        assertEquals(1, rc, "an unfinished module fails the record");
        Map<String, Object> rec = (Map<String, Object>) JsonReader.parse(Files.readString(onlyRecord(tmp.resolve("out"))));
        Map<String, Object> incomplete = (Map<String, Object>) rec.get("incomplete_modules");
        assertEquals(124L, ((Number) incomplete.get("verify")).longValue());
        assertEquals("no reports", incomplete.get("ops"));
        assertNull(incomplete.get("core"));
        Map<String, Object> mem = (Map<String, Object>) ((Map<String, Object>) rec.get("sanitizer")).get("memcheck");
        assertEquals("no-tests", mem.get("status"));
        // no test at all
        Path none = tmp.resolve("none");
        Files.createDirectories(none);
        assertEquals(1, cli.execute("validation-record", "--reports", none.toString(), "--out", tmp.resolve("out2").toString()));
    }

    /**
     * From a read-only review (fiftieth session): a record whose every test was skipped fails; a tool entry that names
     * no reports is never "ok"; reports of another commit make no record; a validation summary of another commit is
     * left out.
     */
    @Test @SuppressWarnings("unchecked")
    void aRecordNeverOverstatesWhatRan(@TempDir Path tmp) throws Exception {
        CommandLine cli = new CommandLine(new GapfillCli());
        cli.setOut(new PrintWriter(new StringWriter()));
        cli.setErr(new PrintWriter(new StringWriter()));
        report(tmp.resolve("skipped/core"), "A", 0, 0, 3);
        assertEquals(1, cli.execute("validation-record", "--reports", tmp.resolve("skipped").toString(), "--out", tmp.resolve("o1").toString()),
                "three skipped tests are not a passing record");
        report(tmp.resolve("reports/core"), "A", 2, 0, 0);
        Path rules = tmp.resolve("validation-rules-ops.json");
        Files.writeString(rules, "{\"commit\": \"0ld\", \"rules_in_inventory\": 10, \"rules_checked\": 9, \"cases_total\": 9}");
        assertEquals(0, cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("o2").toString(),
                "--commit", "n3w", "--sanitizer", "racecheck=0:ok", "--validation-rules", rules.toString()));
        Map<String, Object> rec = (Map<String, Object>) JsonReader.parse(Files.readString(onlyRecord(tmp.resolve("o2"))));
        assertEquals("no-tests", ((Map<String, Object>) ((Map<String, Object>) rec.get("sanitizer")).get("racecheck")).get("status"));
        assertNull(rec.get("validation_rules"), "a summary of another commit is left out");
        Files.writeString(tmp.resolve("reports/COMMIT"), "0ld\n");
        assertEquals(2, cli.execute("validation-record", "--reports", tmp.resolve("reports").toString(), "--out", tmp.resolve("o3").toString(),
                "--commit", "n3w"));
        assertEquals(false, Files.exists(tmp.resolve("o3")), "no record of another commit's reports");
    }

    /** The one record the command wrote: named after this host's GPU slug (cpu.json without a GPU, h100.json on an H100). */
    private static Path onlyRecord(Path dir) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            java.util.List<Path> json = files.filter(p -> p.toString().endsWith(".json")).toList();
            assertEquals(1, json.size(), "records written: " + json);
            return json.get(0);
        }
    }
}
