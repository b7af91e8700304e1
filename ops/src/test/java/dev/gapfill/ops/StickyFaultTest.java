package dev.gapfill.ops;

import dev.gapfill.core.testing.GpuTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A kernel fault turns the context sticky: the typed fatal exception is thrown with a clear message,
 * later calls fail fast with the same cause, and the JVM does not crash. Runs the fault in a child JVM
 * (the fault would poison this one). Tagged so sanitizer runs leave the intended fault out.
 */
@GpuTest
@Tag("expected-api-error")
class StickyFaultTest {
    @Test void faultIsStickyTypedAndTheJvmSurvives() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(ChildJvm.classPath(StickyFaultTest.class));
        cmd.add(StickyFaultChild.class.getName());
        java.nio.file.Path log = java.nio.file.Files.createTempFile("gapfill-fault", ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean finished = p.waitFor(120, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = java.nio.file.Files.readString(log, StandardCharsets.UTF_8);
        java.nio.file.Files.deleteIfExists(log);
        assertTrue(finished, "child JVM did not finish within 120 s after the fault:\n" + out);
        assertEquals(0, p.exitValue(), "child JVM exited abnormally:\n" + out);
        assertTrue(out.contains("BEFORE ok 2.0"), out);
        assertTrue(out.contains("STICKY 700"), "expected cudaErrorIllegalAddress as StickyCudaException:\n" + out);
        assertTrue(out.contains("FAILFAST 700") && out.contains("unusable since an earlier failure"),
                "later calls must fail fast with the first cause:\n" + out);
        assertTrue(out.contains("EXIT clean"), out);
    }
}
