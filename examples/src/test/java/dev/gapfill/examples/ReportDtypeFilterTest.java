package dev.gapfill.examples;

import dev.gapfill.examples.bench.Json;
import dev.gapfill.examples.bench.JsonReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A sweep limited to some dtypes ({@code gapfill bench --dtype}) is not the sweep: the report must say which
 * dtypes ran and judge a target on it "met on these rows" at most, never plain "met". Built from the checkout's depthwise
 * file (whose F32 target, ≥ 2× the cuDNN composition, is met on the full sweep): once whole, once as an F32-only file.
 */
class ReportDtypeFilterTest {
    @TempDir Path tmp;

    @Test
    @SuppressWarnings("unchecked")
    void aDtypeLimitedSweepIsJudgedLikeAQuickOne() throws Exception {
        Path src = Path.of("..", "docs", "benchmarks", "h100", "depthwise_conv3x3.json").toAbsolutePath().normalize();
        assumeTrue(Files.isRegularFile(src), "run from the examples module of a checkout");
        Map<String, Object> doc = (Map<String, Object>) JsonReader.parse(Files.readString(src, StandardCharsets.UTF_8));
        assumeTrue(Boolean.TRUE.equals(doc.get("complete")) && Boolean.FALSE.equals(doc.get("quick")), "the checkout's file is a full sweep");

        String whole = report(doc, "whole");
        String f32Target = "| F32: custom ≥ 2.0× the vendor composition";
        assertEquals("met", status(whole, f32Target), whole);
        assertFalse(whole.contains("`bench --dtype`).\n\n"), "a whole sweep names no dtype filter");

        Map<String, Object> f32 = new LinkedHashMap<>(doc);
        List<Object> rows = new ArrayList<>();
        for (Object r : (List<Object>) doc.get("rows")) {
            if ("F32".equals(((Map<String, Object>) r).get("dtype"))) {
                rows.add(r);
            }
        }
        assertTrue(rows.size() > 0);
        f32.put("rows", rows);
        f32.put("dtypes", List.of("F32"));
        String limited = report(f32, "f32");
        assertTrue(limited.contains("Only the cases of [F32] were run (`bench --dtype`)."), limited);
        assertEquals("met on these rows", status(limited, f32Target), limited);
        for (String line : limited.lines().toList()) {
            assertFalse(line.startsWith("| ") && line.endsWith("| met |"), "plain \"met\" on a dtype-limited sweep: " + line);
        }
    }

    private String report(Map<String, Object> doc, String name) throws Exception {
        Path root = tmp.resolve(name);
        Files.createDirectories(root.resolve("h100"));
        Files.writeString(root.resolve("h100").resolve("depthwise_conv3x3.json"), Json.write(doc), StandardCharsets.UTF_8);
        Path out = tmp.resolve(name + ".md");
        int rc = new CommandLine(new ReportCmd()).execute("--root", root.toString(), "--out", out.toString());
        assertEquals(0, rc);
        return Files.readString(out, StandardCharsets.UTF_8);
    }

    /** The last cell of the target table's line that starts with {@code prefix}. */
    private static String status(String md, String prefix) {
        for (String line : md.lines().toList()) {
            if (line.startsWith(prefix)) {
                String[] cells = line.split("\\|");
                return cells[cells.length - 1].trim().isEmpty() ? cells[cells.length - 2].trim() : cells[cells.length - 1].trim();
            }
        }
        throw new AssertionError("no line starting with " + prefix + " in\n" + md);
    }
}
