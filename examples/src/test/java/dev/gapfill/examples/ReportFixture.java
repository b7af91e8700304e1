package dev.gapfill.examples;

import dev.gapfill.examples.bench.Json;
import picocli.CommandLine;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The report of one complete, non-quick H100 benchmark file of {@code op} holding {@code rows}, for report tests. */
final class ReportFixture {
    private ReportFixture() {}

    static String reportOf(Path tmp, String op, List<Object> rows) throws Exception {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("gpu", "NVIDIA H100 80GB HBM3");
        doc.put("commit", "0123456789abcdef0123");
        doc.put("complete", true);
        doc.put("quick", false);
        doc.put("rows", rows);
        Path root = tmp.resolve("root");
        Files.createDirectories(root.resolve("h100"));
        Files.writeString(root.resolve("h100").resolve(op + ".json"), Json.write(doc), StandardCharsets.UTF_8);
        Path out = tmp.resolve("report.md");
        assertEquals(0, new CommandLine(new ReportCmd()).execute("--root", root.toString(), "--out", out.toString()));
        return Files.readString(out, StandardCharsets.UTF_8);
    }
}
