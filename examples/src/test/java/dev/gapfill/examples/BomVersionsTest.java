package dev.gapfill.examples;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The BOM users import is a standalone POM (no parent, so that importing it brings no build settings) and writes its
 * versions out: each must be the parent's, or a user would get another set than the one built and tested.
 */
class BomVersionsTest {
    private static String property(String pom, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</" + Pattern.quote(name) + ">").matcher(pom);
        assertTrue(m.find(), "the parent POM has no <" + name + ">");
        return m.group(1).trim();
    }

    @Test void everyVersionTheBomPinsIsTheBuildsOwn() throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        assumeTrue(Files.isRegularFile(root.resolve("bom/pom.xml")), "run from the examples module of a checkout");
        String parent = Files.readString(root.resolve("pom.xml"));
        String bom = Files.readString(root.resolve("bom/pom.xml"));
        Matcher v = Pattern.compile("<artifactId>gapfill-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(parent);
        assertTrue(v.find(), "the parent's own version");
        String[][] pins = {
            {"dev.gapfill", "gapfill-core", v.group(1)},
            {"dev.gapfill", "gapfill-cuda-native", v.group(1)},
            {"dev.gapfill", "gapfill-ops", v.group(1)},
            {"dev.gapfill", "gapfill-verify", v.group(1)},
            {"org.bytedeco", "javacpp", property(parent, "javacpp.version")},
            {"org.bytedeco", "cuda", property(parent, "cuda.presets.version")},
            {"org.bytedeco", "cuda-redist", property(parent, "cuda.presets.version")},
            {"net.jqwik", "jqwik", property(parent, "jqwik.version")},
            {"net.jqwik", "jqwik-api", property(parent, "jqwik.version")},
        };
        for (String[] p : pins) {
            Matcher m = Pattern.compile("<groupId>" + Pattern.quote(p[0]) + "</groupId><artifactId>" + Pattern.quote(p[1])
                    + "</artifactId><version>([^<]+)</version>").matcher(bom);
            int found = 0;
            while (m.find()) {
                found++;
                assertTrue(m.group(1).equals(p[2]), "the BOM pins " + p[1] + " " + m.group(1) + ", the build uses " + p[2]);
            }
            assertTrue(found > 0, "the BOM does not pin " + p[0] + ":" + p[1]);
        }
        Matcher own = Pattern.compile("<artifactId>gapfill-bom</artifactId>\\s*<version>([^<]+)</version>").matcher(bom);
        assertTrue(own.find() && own.group(1).equals(v.group(1)), "the BOM's own version is the parent's");
    }
}
