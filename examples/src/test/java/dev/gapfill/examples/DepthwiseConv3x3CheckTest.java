package dev.gapfill.examples;

import dev.gapfill.core.Device;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The op check runs on the CPU (validation + reference through the public API). */
class DepthwiseConv3x3CheckTest {
    @Test void cpuCasesPass() {
        DepthwiseConv3x3Check check = new DepthwiseConv3x3Check();
        assertEquals("depthwise_conv3x3", check.op());
        List<String> f = check.run(Device.CPU, new Random(42), 12, new PrintWriter(new StringWriter()));
        assertTrue(f.isEmpty(), String.join("\n", f));
    }
}
