package dev.gapfill.examples;

import dev.gapfill.core.Device;
import dev.gapfill.core.testing.GpuTest;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A short stress run: every result right, no error, and memory back to the baseline after the release. */
@GpuTest
class StressCmdTest {
    @Test @SuppressWarnings("unchecked")
    void shortRunIsCorrectAndReturnsMemoryToTheBaseline() throws InterruptedException {
        Map<String, Object> r = StressCmd.run(Device.cuda(0), 2, 3, new PrintWriter(new StringWriter()));
        assertEquals(0L, ((Number) r.get("wrong_results")).longValue(), String.valueOf(r.get("problems")));
        assertEquals(0L, ((Number) r.get("errors")).longValue(), String.valueOf(r.get("problems")));
        assertTrue(((Number) r.get("ops")).longValue() > 0);
        assertTrue(((Number) r.get("ops_on_shared_stream")).longValue() > 0, "the shared-stream phase ran op checks");
        Map<String, Object> mem = (Map<String, Object>) r.get("memory");
        assertEquals(Boolean.TRUE, r.get("memory_back_to_baseline"), String.valueOf(mem));
        Map<String, Object> before = (Map<String, Object>) mem.get("before");
        Map<String, Object> after = (Map<String, Object>) mem.get("after_release");
        assertEquals(before.get("gapfill_bytes_in_use"), after.get("gapfill_bytes_in_use"));
        assertEquals(before.get("pool_used_bytes"), after.get("pool_used_bytes"));
    }
}
