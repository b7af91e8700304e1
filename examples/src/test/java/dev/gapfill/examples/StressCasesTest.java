package dev.gapfill.examples;

import dev.gapfill.core.Device;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stress command runs one case at a time from a random first case: the cycle it draws from must hold every check's
 * cycle of dtypes, backends and layouts (bmm 3 × 3, depthwise 3 × 2, gqa 2 and 3, int8 4 outputs, grouped 3 backends,
 * elementwise 3 dtypes), and a check must run the case it is given.
 */
class StressCasesTest {
    @Test void theCaseCycleHoldsEveryChecksCycle() {
        for (int cycle : new int[] {9, 6, 2, 3, 4}) {
            assertEquals(0, StressCmd.CASE_CYCLE % cycle, "cycle " + cycle);
        }
    }

    @Test void checksRunFromTheFirstCaseTheyAreGiven() {
        for (OpChecks.OpCheck c : OpChecks.all()) {
            for (int first : new int[] {1, 5, StressCmd.CASE_CYCLE - 1}) {
                List<String> f = c.run(Device.CPU, new Random(first), first, 1, new PrintWriter(new StringWriter()), null);
                assertTrue(f.isEmpty(), c.op() + " case " + first + ": " + f);
            }
        }
    }

    /** An op whose case threw counts as an error, one whose result differed as a wrong result, a clean op as neither. */
    @Test void exceptionsAreErrorsAndDifferingResultsWrongResults() {
        java.util.concurrent.atomic.AtomicLong wrong = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicLong errors = new java.util.concurrent.atomic.AtomicLong();
        List<String> problems = new java.util.ArrayList<>();
        StressCmd.count(List.of(), wrong, errors, problems, "");
        StressCmd.count(List.of(OpChecks.error("int8_mm CUSTOM M=1", new IllegalStateException("boom"))), wrong, errors, problems, "");
        assertEquals(0, wrong.get());
        assertEquals(1, errors.get());
        StressCmd.count(List.of("bmm F16 CUSTOM: 3 of 64 elements differ"), wrong, errors, problems, "shared stream: ");
        assertEquals(1, wrong.get());
        assertEquals(1, errors.get());
        assertEquals(List.of("error: int8_mm CUSTOM M=1: java.lang.IllegalStateException: boom",
                "shared stream: bmm F16 CUSTOM: 3 of 64 elements differ"), problems);
        assertTrue(OpChecks.isError(problems.get(0)));
    }
}
