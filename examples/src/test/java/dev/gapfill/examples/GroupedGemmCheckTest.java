package dev.gapfill.examples;

import dev.gapfill.core.Device;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The grouped GEMM's {@code gapfill verify} check on the CPU (the public API runs the reference there). */
class GroupedGemmCheckTest {
    @Test void cpuCasesPass() {
        GroupedGemmCheck check = new GroupedGemmCheck();
        assertEquals("grouped_gemm", check.op());
        List<String> failures = check.run(Device.CPU, new Random(42), 6, new PrintWriter(new StringWriter()));
        assertTrue(failures.isEmpty(), failures.toString());
    }
}
