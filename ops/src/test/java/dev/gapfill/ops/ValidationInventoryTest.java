package dev.gapfill.ops;

import dev.gapfill.core.testing.GpuTest;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.net.URL;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The coverage gate of the validation inventory: every rule of {@link ValidationRule} is covered by a property
 * ({@link Covers}) — device-independent rules by a CPU property, device-specific ones by a GPU property — and every
 * entry point has rules. Runs on every host (it reads annotations; it needs no GPU).
 */
class ValidationInventoryTest {

    /** Every class of this test package (the test-classes folder or the bundle's test folder). */
    static List<Class<?>> testClasses() throws ClassNotFoundException, URISyntaxException {
        String pkg = ValidationInventoryTest.class.getPackageName();
        URL url = ValidationInventoryTest.class.getResource(ValidationInventoryTest.class.getSimpleName() + ".class");
        assertTrue(url != null && "file".equals(url.getProtocol()), "test classes must be a folder on the class path: " + url);
        File dir = new File(url.toURI()).getParentFile();
        List<Class<?>> out = new ArrayList<>();
        File[] files = dir.listFiles((d, n) -> n.endsWith(".class"));
        for (File f : files == null ? new File[0] : files) {
            out.add(Class.forName(pkg + "." + f.getName().substring(0, f.getName().length() - 6), false,
                    ValidationInventoryTest.class.getClassLoader()));
        }
        return out;
    }

    /** Rule → properties covering it, split by whether the property is a GPU test. */
    static Map<ValidationRule, Set<String>> coverage(boolean gpu) throws Exception {
        Map<ValidationRule, Set<String>> m = new EnumMap<>(ValidationRule.class);
        for (Class<?> c : testClasses()) {
            boolean gpuClass = c.isAnnotationPresent(GpuTest.class);
            for (Method method : c.getDeclaredMethods()) {
                Covers cov = method.getAnnotation(Covers.class);
                if (cov == null || (gpuClass || method.isAnnotationPresent(GpuTest.class)) != gpu) {
                    continue;
                }
                for (ValidationRule r : cov.value()) {
                    m.computeIfAbsent(r, k -> new TreeSet<>()).add(c.getSimpleName() + "." + method.getName());
                }
            }
        }
        return m;
    }

    @Test void everyRuleHasAProperty() throws Exception {
        Map<ValidationRule, Set<String>> cpu = coverage(false);
        Map<ValidationRule, Set<String>> gpu = coverage(true);
        List<String> missing = new ArrayList<>();
        for (ValidationRule r : ValidationRule.values()) {
            if (r.where() == ValidationRule.Where.ANY && !cpu.containsKey(r)) {
                missing.add(r + " (device-independent) has no CPU property");
            }
            if (r.where() != ValidationRule.Where.ANY && !gpu.containsKey(r)) {
                missing.add(r + " (" + r.where() + ") has no GPU property");
            }
            if (r.where() != ValidationRule.Where.ANY && cpu.containsKey(r)) {
                missing.add(r + " is device-specific but a CPU property claims it: " + cpu.get(r));
            }
        }
        assertEquals(List.of(), missing);
    }

    @Test void everyDeviceIndependentRuleAlsoHasAGpuVariant() throws Exception {
        Map<ValidationRule, Set<String>> gpu = coverage(true);
        Set<ValidationRule> without = EnumSet.noneOf(ValidationRule.class);
        for (ValidationRule r : ValidationRule.values()) {
            if (!gpu.containsKey(r)) {
                without.add(r);
            }
        }
        assertEquals(Set.of(), without, "rules without a GPU variant");
    }

    @Test void everyEntryPointHasRulesAndRulesAreWellFormed() {
        for (ValidationRule.Entry e : ValidationRule.Entry.values()) {
            assertTrue(java.util.Arrays.stream(ValidationRule.values()).anyMatch(r -> r.entry() == e), e + " has no rules");
        }
        for (ValidationRule r : ValidationRule.values()) {
            assertFalse(r.argument().isBlank(), r.name());
            assertFalse(r.what().isBlank(), r.name());
            if (r.kind() == ValidationRule.Kind.ARG || r.kind() == ValidationRule.Kind.UNSUPPORTED) {
                assertFalse(r.argument().equals("-"), r + ": ARG and UNSUPPORTED rules name an argument");
            }
        }
    }
}
