package dev.gapfill.examples;

import dev.gapfill.core.Device;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The gqa_decode verify check on the CPU (reference backend): every layout, dtype and lengths with 0. */
class GqaDecodeCheckTest {
    @Test void passesOnTheCpu() {
        StringWriter sw = new StringWriter();
        List<String> failures = new GqaDecodeCheck().run(Device.CPU, new Random(42), 6, new PrintWriter(sw));
        assertTrue(failures.isEmpty(), failures.toString());
        assertEquals("gqa_decode", new GqaDecodeCheck().op());
    }
}
