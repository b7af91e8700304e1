package dev.gapfill.examples;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** A sweep's {@code machine_history}: parsed from the bundle's variable, and said in the report. */
class MachineHistoryTest {
    @Test void theVariableBecomesTheStepsInOrder() {
        assertNull(BenchRunner.machineHistory(null), "outside the bundle: no field");
        assertEquals(List.of(), BenchRunner.machineHistory(""), "a freshly started machine");
        assertEquals(List.of("t1 c checks: tests", "t2 c bench bmm:120"), BenchRunner.machineHistory("t1 c checks: tests; t2 c bench bmm:120;"));
    }

    @Test void theReportSaysWhatRanBefore() {
        assertEquals("", ReportCmd.machineHistorySentence(null));
        assertEquals("Ran on a freshly started machine. ", ReportCmd.machineHistorySentence(List.of()));
        assertEquals("Ran on a machine that had run before it: `a`; `b`. ", ReportCmd.machineHistorySentence(List.of("a", "b")));
        assertEquals("Ran on a machine that had run before it (last 3 of 4 steps): `b`; `c`; `d`. ",
                ReportCmd.machineHistorySentence(List.of("a", "b", "c", "d")));
    }
}
