package dev.gapfill.verify;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/record-x2.sh names Int8MmGpuTest's tests one by one (the grid shards and the property's own process), so a
 * test added to the class would silently miss racecheck in the record. This keeps the list and the class in step.
 */
class Int8MmRecordShardsTest {
    @Test void theRecordScriptNamesEveryTestOfInt8MmGpuTest() throws IOException {
        Path path = Path.of("..", "scripts", "record-x2.sh");
        assumeTrue(Files.exists(path), "needs a checkout (CI runs it; the GPU bundle has no scripts/)");
        String script = Files.readString(path);
        Set<String> named = new TreeSet<>();
        Matcher m = Pattern.compile("\\$i8#(\\w+)\\(").matcher(script);
        while (m.find()) {
            named.add(m.group(1));
        }
        Set<String> tests = Arrays.stream(Int8MmGpuTest.class.getDeclaredMethods())
                .filter(Int8MmRecordShardsTest::isTest).map(Method::getName).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(tests, named, "the test methods of Int8MmGpuTest and those record-x2.sh selects");
    }

    private static boolean isTest(Method method) {
        return method.isAnnotationPresent(Test.class)
                || method.isAnnotationPresent(org.junit.jupiter.params.ParameterizedTest.class)
                || method.isAnnotationPresent(net.jqwik.api.Property.class);
    }
}
