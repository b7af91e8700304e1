package dev.gapfill.examples;

import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;
import dev.gapfill.examples.bench.Json;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Writes {@code docs/validation/<gpu-slug>.json} from the JUnit XML reports of a GPU run and the
 * compute-sanitizer summaries: the evidence that the GPU code works at a commit.
 */
@Command(name = "validation-record", description = "Write the validation record of a GPU test run (used by the bundle's run.sh).")
final class ValidationRecordCmd implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    @Option(names = "--reports", required = true, description = "folder of JUnit XML reports") Path reports;
    @Option(names = "--out", required = true, description = "output folder; the record goes to <out>/<gpu-slug>.json") Path out;
    @Option(names = "--commit", defaultValue = "unknown") String commit;
    @Option(names = "--dirty", arity = "1", defaultValue = "false") boolean dirty;
    @Option(names = "--sanitizer", description = "tool=errors=N;status=S;exit=E;seconds=T;scope=M;reports=DIR (or the older tool=errors[:status])")
    List<String> sanitizer;
    @Option(names = "--validation-rules", description = "the validation summary the GPU test run wrote (validation-rules-ops.json)")
    Path validationRules;

    /** Test cases of the JUnit XML reports below a folder. */
    static final class Counts {
        long run;
        long failed;
        long skipped;
        final Map<String, Object> skippedReasons = new LinkedHashMap<>();
        final List<String> failures = new java.util.ArrayList<>();
        final List<File> files = new java.util.ArrayList<>();
    }

    static Counts count(Path dir) throws Exception {
        Counts c = new Counts();
        if (Files.isDirectory(dir)) {
            try (java.util.stream.Stream<Path> w = Files.walk(dir)) {
                w.filter(p -> p.toString().endsWith(".xml")).sorted().forEach(p -> c.files.add(p.toFile()));
            }
        }
        for (File f : c.files) {
            Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(f);
            NodeList cases = doc.getElementsByTagName("testcase");
            for (int i = 0; i < cases.getLength(); i++) {
                Element e = (Element) cases.item(i);
                c.run++;
                if (e.getElementsByTagName("failure").getLength() > 0 || e.getElementsByTagName("error").getLength() > 0) {
                    c.failed++;
                    c.failures.add(e.getAttribute("classname") + "." + e.getAttribute("name"));
                } else if (e.getElementsByTagName("skipped").getLength() > 0) {
                    c.skipped++;
                    Element s = (Element) e.getElementsByTagName("skipped").item(0);
                    String why = s.getAttribute("message");
                    if (why == null || why.isEmpty()) {
                        why = s.getTextContent();
                    }
                    c.skippedReasons.put(e.getAttribute("classname") + "." + e.getAttribute("name"), why == null ? "" : why.trim());
                }
            }
        }
        return c;
    }

    @Override public Integer call() throws Exception {
        // reports of another commit or tree (a reused output folder, an earlier call's leftovers) never make this record
        Path reportsCommit = reports.resolve("COMMIT");
        if (Files.isRegularFile(reportsCommit) && !"unknown".equals(commit)) {
            String was = Files.readString(reportsCommit, StandardCharsets.UTF_8).trim();
            Path dirtyFile = reports.resolve("DIRTY");
            String wasDirty = Files.isRegularFile(dirtyFile) ? Files.readString(dirtyFile, StandardCharsets.UTF_8).trim() : String.valueOf(dirty);
            if (!was.equals(commit) || !wasDirty.equals(String.valueOf(dirty))) {
                spec.commandLine().getErr().println("validation record: the reports in " + reports + " are of commit " + was
                        + " (dirty " + wasDirty + "), not " + commit + " (dirty " + dirty + "): no record written");
                return 2;
            }
        }
        Counts all = count(reports);
        long run = all.run, failed = all.failed, skipped = all.skipped;
        Map<String, Object> skippedReasons = all.skippedReasons;
        List<String> failures = all.failures;
        List<File> files = all.files;
        Map<String, Object> rec = new LinkedHashMap<>();
        String slug = "cpu";
        if (Gpu.available()) {
            DeviceInfo d = Gpu.device(0).info();
            slug = d.slug();
            rec.put("gpu", d.name());
            rec.put("cc", d.ccMajor() + "." + d.ccMinor());
            if (Gpu.device(0).profiled()) {  // gapfill.debug.deviceAs: say what the hardware was and which image ran
                DeviceInfo real = Gpu.device(0).realInfo();
                rec.put("device_profile", System.getProperty(dev.gapfill.core.CudaDevice.DEVICE_AS));
                rec.put("real_gpu", real.name());
                rec.put("real_cc", real.ccMajor() + "." + real.ccMinor());
                rec.put("cuda_force_ptx_jit", "1".equals(System.getenv("CUDA_FORCE_PTX_JIT")));
            }
            rec.put("driver", d.driverString());
            rec.put("cuda_runtime", d.runtimeString());
            rec.put("cublas", d.cublasString());
            rec.put("cudnn", d.cudnnString());
        } else {
            rec.put("gpu", null);
            rec.put("reason", Gpu.status().reason());
        }
        rec.put("commit", commit);
        rec.put("dirty", dirty);
        Map<String, Object> tests = new LinkedHashMap<>();
        tests.put("run", run);
        tests.put("passed", run - failed - skipped);
        tests.put("failed", failed);
        tests.put("skipped", skipped);
        rec.put("tests", tests);
        rec.put("failed_tests", failures);
        rec.put("suites", files.stream().map(f -> f.getParentFile().getName()).distinct().toList());
        // run.sh writes each module's launcher exit status into reports/<module>/EXIT: a module that timed out or whose
        // launcher failed outside a test case (its XML may be missing or partial) must not vanish from the record
        Map<String, Object> incomplete = incompleteModules(reports);
        if (!incomplete.isEmpty()) {
            rec.put("incomplete_modules", incomplete);
        }
        // run.sh writes reports/FILTER when TESTS_CLASSES chose the classes: a record of some classes must say so, or it
        // reads as the whole suite with fewer tests
        Path filter = reports.resolve("FILTER");
        if (java.nio.file.Files.isRegularFile(filter)) {
            rec.put("tests_filter", java.nio.file.Files.readString(filter).trim());
        }
        if (!skippedReasons.isEmpty()) {
            rec.put("skipped_tests", skippedReasons);
        }
        if (sanitizer != null && !sanitizer.isEmpty()) {
            Map<String, Object> san = new LinkedHashMap<>();
            for (String s : sanitizer) {
                String[] kv = s.split("=", 2);
                Map<String, Object> one = new LinkedHashMap<>();
                if (kv[1].startsWith("errors=")) {
                    Map<String, String> f = new LinkedHashMap<>();
                    for (String part : kv[1].split(";")) {
                        String[] p = part.split("=", 2);
                        f.put(p[0], p.length > 1 ? p[1] : "");
                    }
                    String errors = f.getOrDefault("errors", "?");
                    one.put("errors", errors.matches("[0-9]+") ? Long.valueOf(errors) : null);
                    one.put("status", f.getOrDefault("status", "unknown"));
                    if (f.containsKey("exit")) {
                        one.put("exit", Integer.valueOf(f.get("exit")));
                    }
                    if (f.containsKey("seconds")) {
                        one.put("seconds", Long.valueOf(f.get("seconds")));
                    }
                    one.put("scope", f.getOrDefault("scope", ""));
                    if (f.containsKey("reports")) {
                        Counts c = count(Path.of(f.get("reports")));
                        if ("ok".equals(one.get("status")) && (one.get("errors") == null || c.run == 0 || c.run - c.failed - c.skipped == 0)) {
                            // "0 errors" over no test (a shard that matched nothing, every GPU test disabled) or with no
                            // summary from the tool proves nothing
                            one.put("status", one.get("errors") == null ? "no-summary" : "no-tests");
                        }
                        Map<String, Object> t = new LinkedHashMap<>();
                        t.put("run", c.run);
                        t.put("passed", c.run - c.failed - c.skipped);
                        t.put("failed", c.failed);
                        t.put("skipped", c.skipped);
                        one.put("tests", t);
                        if (!c.failures.isEmpty()) {
                            one.put("failed_tests", c.failures);
                        }
                    }
                } else {
                    String[] v = kv[1].split(":", 2);
                    one.put("errors", v[0].matches("[0-9]+") ? Long.valueOf(v[0]) : null);
                    one.put("status", v.length > 1 ? v[1] : "ran");
                }
                if (!one.containsKey("tests") && ("ok".equals(one.get("status")) || "ran".equals(one.get("status")))) {
                    one.put("status", "no-tests");  // no reports name the tests that ran under the tool: nothing is shown clean
                }
                san.put(kv[0], one);
            }
            rec.put("sanitizer", san);
        }
        if (validationRules != null && Files.isRegularFile(validationRules)) {
            @SuppressWarnings("unchecked")
            Map<String, Object> v = (Map<String, Object>) dev.gapfill.examples.bench.JsonReader.parse(
                    Files.readString(validationRules, StandardCharsets.UTF_8));
            Object rulesCommit = v.get("commit");
            if (rulesCommit != null && !"unknown".equals(rulesCommit) && !"unknown".equals(commit) && !commit.equals(rulesCommit)) {
                // a summary left by an earlier run of another commit (a JVM killed before its shutdown hook wrote one)
                spec.commandLine().getErr().println("validation record: " + validationRules + " is of commit " + rulesCommit
                        + ", not " + commit + ": left out");
            } else {
                Map<String, Object> vr = new LinkedHashMap<>();
                for (String k : new String[] {"rules_in_inventory", "rules_checked", "rules_skipped_on_this_host", "cases_total"}) {
                    vr.put(k, v.get(k));
                }
                vr.put("file", validationRules.getFileName().toString());
                rec.put("validation_rules", vr);
            }
        }
        Files.createDirectories(out);
        Path file = out.resolve(slug + ".json");
        Files.writeString(file, Json.write(rec), StandardCharsets.UTF_8);
        spec.commandLine().getOut().println("validation record: " + file + " — tests " + tests);
        spec.commandLine().getOut().flush();
        return failed == 0 && incomplete.isEmpty() && run - failed - skipped > 0 ? 0 : 1;  // some test must have executed
    }


    /**
     * Modules under {@code reports} whose EXIT file (run.sh) holds a non-zero status, or that have an EXIT file but no
     * JUnit XML: module name to its status (or "no reports").
     */
    static Map<String, Object> incompleteModules(Path reports) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        if (!Files.isDirectory(reports)) {
            return out;
        }
        try (java.util.stream.Stream<Path> dirs = Files.list(reports)) {
            for (Path m : dirs.filter(Files::isDirectory).sorted().toList()) {
                Path exit = m.resolve("EXIT");
                if (!Files.isRegularFile(exit)) {
                    continue;  // reports from before EXIT files, or a folder run.sh did not write
                }
                String status = Files.readString(exit, StandardCharsets.UTF_8).trim();
                if (!"0".equals(status)) {
                    out.put(m.getFileName().toString(), status.matches("-?[0-9]+") ? Integer.valueOf(status) : status);
                } else if (count(m).files.isEmpty()) {
                    out.put(m.getFileName().toString(), "no reports");
                }
            }
        }
        return out;
    }
}
