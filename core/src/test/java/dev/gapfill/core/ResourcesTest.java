package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Accounting of owned tensors and the deterministic freeing of forgotten ones (CPU tensors; runs everywhere). */
class ResourcesTest {

    /** Allocates {@code n} host tensors of {@code elems} floats and drops them without closing. */
    private static void forget(int n, int elems) {
        for (int i = 0; i < n; i++) {
            Tensor.empty(Device.CPU, DType.F32, elems);
        }
    }

    @Test void liveCountsFollowAllocationsClosesAndViews() {
        long live = Tensor.liveOwnedTensors();
        long host = Tensor.hostBytesInUse();
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 10);
        Tensor b = Tensor.empty(Device.CPU, DType.I8, 3, 5);
        assertEquals(live + 2, Tensor.liveOwnedTensors());
        assertEquals(host + 40 + 15, Tensor.hostBytesInUse());
        Tensor v = a.reshape(2, 5);
        Tensor s = a.strided(new long[] {5}, new long[] {2}, 0);
        assertEquals(live + 2, Tensor.liveOwnedTensors(), "views own nothing");
        v.close();
        s.close();
        assertEquals(live + 2, Tensor.liveOwnedTensors(), "closing a view frees nothing");
        a.close();
        assertEquals(live + 1, Tensor.liveOwnedTensors());
        assertEquals(host + 15, Tensor.hostBytesInUse());
        assertTrue(v.isClosed() && s.isClosed());
        b.close();
        assertEquals(live, Tensor.liveOwnedTensors());
        assertEquals(host, Tensor.hostBytesInUse());
    }

    @Test void unreachableTensorsAreFreedOnTheCallingThreadAfterAGc() {
        Resources.freeUnreachableTensors();  // whatever earlier tests forgot
        long live = Tensor.liveOwnedTensors();
        long host = Tensor.hostBytesInUse();
        long leaks = Tensor.leakCount();
        List<Tensor> kept = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            kept.add(Tensor.empty(Device.CPU, DType.F16, 64));
        }
        forget(30, 256);
        assertEquals(live + 35, Tensor.liveOwnedTensors());
        int freed = Resources.freeUnreachableTensors();
        // the cleaner thread may have taken some of the 30 first; together they freed all of them, once each
        assertTrue(freed <= 30, "freed " + freed);
        assertEquals(live + 5, Tensor.liveOwnedTensors(), "every forgotten tensor is freed, no kept one");
        assertEquals(host + 5 * 128, Tensor.hostBytesInUse());
        assertEquals(leaks + 30, Tensor.leakCount(), "each forgotten tensor is counted (and logged) once");
        for (Tensor t : kept) {
            assertTrue(!t.isClosed());
            t.close();
        }
        assertEquals(live, Tensor.liveOwnedTensors());
        assertEquals(host, Tensor.hostBytesInUse());
        assertEquals(0, Resources.freeUnreachableTensors(), "closed tensors are not freed again");
        assertEquals(leaks + 30, Tensor.leakCount());
    }

    @Test void aViewKeepsItsOwnerReachable() {
        Resources.freeUnreachableTensors();
        long live = Tensor.liveOwnedTensors();
        Tensor view = Tensor.of(Device.CPU, DType.F32, new float[] {1, 2, 3, 4}, 4).reshape(2, 2);
        Resources.freeUnreachableTensors();
        assertEquals(live + 1, Tensor.liveOwnedTensors(), "the owner is reachable through its view");
        assertEquals(4f, (float) view.getDouble(3));
        view.parent().close();
        assertEquals(live, Tensor.liveOwnedTensors());
    }

    @Test void releaseOnTheCpuFreesForgottenTensors() {
        Resources.freeUnreachableTensors();
        long live = Tensor.liveOwnedTensors();
        forget(7, 16);
        Resources.Report r = Resources.release(Device.CPU);
        assertEquals(live, Tensor.liveOwnedTensors());
        assertTrue(r.unreachableTensorsFreed() <= 7);
        assertEquals(0, r.bytesInUseBefore());
        assertEquals(0, r.bytesInUseAfter());
    }
}
