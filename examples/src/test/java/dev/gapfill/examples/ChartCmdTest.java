package dev.gapfill.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ChartCmdTest {
    @Test void aMissingValueIsNotARatioOfZero() {
        assertNull(ChartCmd.ratio(null, 2.0));
        assertNull(ChartCmd.ratio(3.0, null));
        assertEquals(1.5, ChartCmd.ratio(3.0, 2.0));
        assertNull(ChartCmd.ratio(0.0, 7.6), "a floor of 0 (host_overhead) is no floor, not 0 %");
    }

    @Test void longShapesAreCutAndShortOnesKept() {
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("m", 8.0);
        Map<String, Object> row = new LinkedHashMap<>(Map.of("dtype", "F16", "shape", shape));
        assertEquals("3 F16 m=8", ChartCmd.label(3, row));
        for (String k : new String[] {"experts", "topk", "hidden", "inter", "tokens"}) {
            shape.put(k, 2048.0);
        }
        String cut = ChartCmd.label(12, row);
        assertEquals(ChartCmd.MAX_LABEL, cut.length());
        assertTrue(cut.startsWith("12 F16 m=8 experts=2048") && cut.endsWith("\u2026"), cut);
    }

    /** A sweep whose rows lack the vendor, the custom path or the floor still renders, as bars and as distributions. */
    @Test void sweepsWithMissingValuesRender(@TempDir Path dir) throws Exception {
        // charts are drawn where the JSON is copied to (AWT): the offline bundle's jlink'd runtime leaves java.desktop out
        // (at 885a506 this test failed there with NoClassDefFoundError: java/awt/Shape); CI and a JDK have it
        Assumptions.assumeTrue(ModuleLayer.boot().findModule("java.desktop").isPresent(),
                "needs the java.desktop module (the offline bundle's runtime has none; CI runs it)");
        System.setProperty("java.awt.headless", "true");
        for (int rows : new int[] {3, ChartCmd.MAX_BAR_ROWS + 1}) {
            StringBuilder json = new StringBuilder("{\"gpu\": \"test\", \"commit\": \"abc\", \"rows\": [");
            for (int i = 0; i < rows; i++) {
                String vendor = i % 3 == 0 ? "null" : "2.5";
                String custom = i % 3 == 1 ? "null" : "1.25";
                json.append(i == 0 ? "" : ",").append("{\"dtype\": \"F16\", \"shape\": {\"n\": ").append(i)
                        .append("}, \"vendor_us\": ").append(vendor).append(", \"custom_us\": ").append(custom)
                        .append(", \"auto_us\": 1.5, \"floor_us\": ").append(i % 2 == 0 ? "null" : "1.0").append("}");
            }
            Path f = dir.resolve("op" + rows + ".json");
            Files.writeString(f, json.append("]}").toString());
            Path png = dir.resolve("op" + rows + ".png");
            ChartCmd.render(f, png);
            assertTrue(Files.size(png) > 1000, png + " " + Files.size(png));
        }
    }
}
