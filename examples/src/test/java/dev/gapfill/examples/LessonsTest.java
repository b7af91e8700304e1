package dev.gapfill.examples;

import dev.gapfill.examples.lessons.L01Tensors;
import dev.gapfill.examples.lessons.L08PropertyTests;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every lesson runs on whatever this host has (the CPU backend in CI) and prints what it checked. */
class LessonsTest {
    private static String capture(Runnable r) {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
        try {
            r.run();
        } finally {
            System.setOut(old);
        }
        return buf.toString(StandardCharsets.UTF_8);
    }

    @Test void lesson01() {
        String out = capture(() -> L01Tensors.main(new String[0]));
        assertTrue(out.contains("01_tensors: OK"), out);
    }

    @Test void lesson08() {
        String out = capture(() -> L08PropertyTests.main(new String[0]));
        assertTrue(out.contains("50 random problems passed"), out);
    }

    @Test void cliInfoAndVerifyRunAnywhere() {
        assertEquals(0, GapfillCli.run("info"));
        assertEquals(0, GapfillCli.run("verify", "--cases", "6"));
    }
}
