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
    @Option(names = "--sanitizer", description = "tool=errors[:status], e.g. memcheck=0:ran") List<String> sanitizer;

    @Override public Integer call() throws Exception {
        long run = 0, failed = 0, skipped = 0;
        Map<String, Object> skippedReasons = new LinkedHashMap<>();
        List<File> files = new java.util.ArrayList<>();
        if (java.nio.file.Files.isDirectory(reports)) {
            try (java.util.stream.Stream<Path> w = java.nio.file.Files.walk(reports)) {
                w.filter(p -> p.toString().endsWith(".xml")).sorted().forEach(p -> files.add(p.toFile()));
            }
        }
        java.util.List<String> failures = new java.util.ArrayList<>();
        {
            for (File f : files) {
                Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(f);
                NodeList cases = doc.getElementsByTagName("testcase");
                for (int i = 0; i < cases.getLength(); i++) {
                    Element c = (Element) cases.item(i);
                    run++;
                    if (c.getElementsByTagName("failure").getLength() > 0 || c.getElementsByTagName("error").getLength() > 0) {
                        failed++;
                        failures.add(c.getAttribute("classname") + "." + c.getAttribute("name"));
                    } else if (c.getElementsByTagName("skipped").getLength() > 0) {
                        skipped++;
                        Element s = (Element) c.getElementsByTagName("skipped").item(0);
                        String why = s.getAttribute("message");
                        if (why == null || why.isEmpty()) {
                            why = s.getTextContent();
                        }
                        skippedReasons.put(c.getAttribute("classname") + "." + c.getAttribute("name"), why == null ? "" : why.trim());
                    }
                }
            }
        }
        Map<String, Object> rec = new LinkedHashMap<>();
        String slug = "cpu";
        if (Gpu.available()) {
            DeviceInfo d = Gpu.device(0).info();
            slug = d.slug();
            rec.put("gpu", d.name());
            rec.put("cc", d.ccMajor() + "." + d.ccMinor());
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
        if (!skippedReasons.isEmpty()) {
            rec.put("skipped_tests", skippedReasons);
        }
        if (sanitizer != null && !sanitizer.isEmpty()) {
            Map<String, Object> san = new LinkedHashMap<>();
            for (String s : sanitizer) {
                String[] kv = s.split("=", 2);
                String[] v = kv[1].split(":", 2);
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("errors", v[0].matches("[0-9]+") ? Long.valueOf(v[0]) : null);
                one.put("status", v.length > 1 ? v[1] : "ran");
                san.put(kv[0], one);
            }
            rec.put("sanitizer", san);
        }
        Files.createDirectories(out);
        Path file = out.resolve(slug + ".json");
        Files.writeString(file, Json.write(rec), StandardCharsets.UTF_8);
        spec.commandLine().getOut().println("validation record: " + file + " — tests " + tests);
        spec.commandLine().getOut().flush();
        return failed == 0 ? 0 : 1;
    }
}
