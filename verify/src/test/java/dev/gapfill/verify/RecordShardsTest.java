package dev.gapfill.verify;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * scripts/record-x2.sh names some GPU classes' tests one by one: Int8MmGpuTest's (the grid shards and the property's
 * own process) and BmmGpuTest's (racecheck over the vendor split-K test alone and over the rest). A test added to either
 * class would silently miss racecheck in the record, so this keeps the lists and the classes in step; and
 * scripts/record-x1.sh's two calls must run every process of record-x2.sh.
 */
class RecordShardsTest {
    @Test void theRecordScriptNamesEveryTestOfInt8MmGpuTest() throws IOException {
        assertEquals(tests(Int8MmGpuTest.class), named("\\$i8#(\\w+)\\("), "the test methods of Int8MmGpuTest and those record-x2.sh selects");
    }

    /** bn's list: the property and a loop over the other names; bv: the vendor test. */
    @Test void theRecordScriptNamesEveryTestOfBmmGpuTest() throws IOException {
        Set<String> named = named("\\$bm#(\\w+)\\(");
        String script = script();
        Matcher loop = Pattern.compile("for t in ([\\w\\s\\\\]+); do bn=").matcher(script);
        assertEquals(true, loop.find(), "record-x2.sh's loop over BmmGpuTest's tests");
        for (String name : loop.group(1).split("[\\s\\\\]+")) {
            if (!name.isEmpty()) {
                named.add(name);
            }
        }
        assertEquals(tests(BmmGpuTest.class), named, "the test methods of BmmGpuTest and those record-x2.sh selects");
    }

    /** record-x1.sh's two calls run every tool process of record-x2.sh, each once. */
    @Test void theOneGpuRecordRunsEveryProcessOfTheTwoGpuRecordOnce() throws IOException, InterruptedException {
        script();  // skips without a checkout
        List<String> halves = bash("scripts/record-x1.sh print");
        assertEquals(2, halves.size(), "record-x1.sh print: two lines, " + halves);
        List<String> all = bash("RECORD_SOURCE_ONLY=1 . scripts/record-x2.sh; echo $SANITIZER_TOOLS");
        List<String> expected = new ArrayList<>(List.of(all.get(0).trim().split("\\s+")));
        List<String> got = new ArrayList<>(List.of(halves.get(0).trim().split("\\s+")));
        got.addAll(List.of(halves.get(1).trim().split("\\s+")));
        assertEquals(24, expected.size(), "record-x2.sh's tool processes: " + expected);
        Collections.sort(expected);
        Collections.sort(got);
        assertEquals(expected, got, "the two parts of record-x1.sh against record-x2.sh");
    }

    private static List<String> bash(String command) throws IOException, InterruptedException {
        Path bash = Path.of("/bin/bash");
        assumeTrue(Files.isExecutable(bash), "needs bash");
        Process p = new ProcessBuilder(bash.toString(), "-c", command).directory(Path.of("..").toFile())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), command + ": " + out);
        return out.lines().filter(l -> !l.isBlank()).collect(Collectors.toList());
    }

    private static String script() throws IOException {
        Path path = Path.of("..", "scripts", "record-x2.sh");
        assumeTrue(Files.exists(path), "needs a checkout (CI runs it; the GPU bundle has no scripts/)");
        return Files.readString(path);
    }

    private static Set<String> named(String regex) throws IOException {
        Set<String> named = new TreeSet<>();
        Matcher m = Pattern.compile(regex).matcher(script());
        while (m.find()) {
            named.add(m.group(1));
        }
        return named;
    }

    private static Set<String> tests(Class<?> type) {
        return Arrays.stream(type.getDeclaredMethods()).filter(RecordShardsTest::isTest).map(Method::getName)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static boolean isTest(Method method) {
        return method.isAnnotationPresent(Test.class)
                || method.isAnnotationPresent(org.junit.jupiter.params.ParameterizedTest.class)
                || method.isAnnotationPresent(net.jqwik.api.Property.class);
    }
}
