package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bookkeeping of the plans the one-shot {@code Int8Mm.mm} keeps per thread, with CPU plans (no device memory):
 * at most {@link Int8Mm#KEPT_PLANS}, the least recently run dropped and closed first, drop and release close what
 * they remove. The GPU side (reuse, streams, capture, bytes) is {@code Int8MmOneShotGpuTest}.
 */
class Int8MmOneShotTest {

    private static Int8Mm.Plan cpuPlan(int n) {
        try (Tensor a = Tensor.empty(Device.CPU, DType.I8, 1, 16); Tensor w = Tensor.empty(Device.CPU, DType.I8, n, 16)) {
            return Int8Mm.plan(a, w, Int8Mm.Options.int32(), null);
        }
    }

    private static Int8Mm.PlanKey key(int n) {
        return new Int8Mm.PlanKey(0, new Int8Mm.Shape(1, n, 16), DType.I32, Backend.AUTO);
    }

    private static boolean closed(Int8Mm.Plan p) {
        try (Tensor a = Tensor.empty(Device.CPU, DType.I8, 1, 16); Tensor w = Tensor.empty(Device.CPU, DType.I8, 1, 16);
             Tensor out = Tensor.empty(Device.CPU, DType.I32, 1, 1)) {
            p.run(a, w, Int8Mm.Options.int32(), out);
            return false;
        } catch (IllegalStateException e) {
            return true;
        } catch (RuntimeException e) {
            return false;  // open, and refused the probe's other shape
        }
    }

    @Test void theLeastRecentlyRunPlansAreDroppedAndClosedFirst() {
        Int8Mm.OneShot h = new Int8Mm.OneShot();
        List<Int8Mm.Plan> plans = new ArrayList<>();
        for (int i = 1; i <= Int8Mm.KEPT_PLANS; i++) {
            Int8Mm.Plan p = cpuPlan(i);
            plans.add(p);
            assertTrue(h.keep(key(i), p));
        }
        assertSame(plans.get(0), h.get(key(1)));  // run again: now the most recent
        Int8Mm.Plan ninth = cpuPlan(100);
        Int8Mm.Plan tenth = cpuPlan(101);
        assertTrue(h.keep(key(100), ninth));
        assertTrue(h.keep(key(101), tenth));
        assertEquals(Int8Mm.KEPT_PLANS, h.size(-1));
        assertNull(h.get(key(2)), "the least recently run went first");
        assertNull(h.get(key(3)));
        assertTrue(closed(plans.get(1)) && closed(plans.get(2)), "dropped plans are closed");
        assertSame(plans.get(0), h.get(key(1)), "the one run again stayed");
        assertFalse(closed(plans.get(0)));
        assertSame(tenth, h.get(key(101)));
    }

    @Test void dropAndReleaseCloseWhatTheyRemove() {
        Int8Mm.OneShot h = new Int8Mm.OneShot();
        Int8Mm.Plan a = cpuPlan(1);
        Int8Mm.Plan b = cpuPlan(2);
        h.keep(key(1), a);
        h.keep(new Int8Mm.PlanKey(1, new Int8Mm.Shape(1, 2, 16), DType.I32, Backend.AUTO), b);
        h.drop(key(1));
        assertTrue(closed(a));
        assertEquals(0, h.size(0));
        assertEquals(1, h.size(-1));
        assertEquals(0, h.release(0), "nothing kept for device 0 now");
        assertEquals(1, h.release(-1));
        assertTrue(closed(b));
        assertEquals(0, h.size(-1));
        h.drop(key(9));  // absent: nothing to do
    }

    @Test void aClosedPlanRefusesToRun() {
        Int8Mm.Plan p = cpuPlan(1);
        p.close();
        try (Tensor a = Tensor.empty(Device.CPU, DType.I8, 1, 16); Tensor w = Tensor.empty(Device.CPU, DType.I8, 1, 16);
             Tensor out = Tensor.empty(Device.CPU, DType.I32, 1, 1)) {
            assertThrows(IllegalStateException.class, () -> p.run(a, w, Int8Mm.Options.int32(), out));
        }
    }
}
