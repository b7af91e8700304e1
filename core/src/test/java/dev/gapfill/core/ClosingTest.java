package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ClosingTest {
    @Test void everyOpenTensorIsClosedAndNullsAndClosedOnesAreSkipped() {
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 4);
        Tensor b = Tensor.empty(Device.CPU, DType.F32, 4);
        Tensor c = Tensor.empty(Device.CPU, DType.F32, 4);
        c.close();
        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> Closing.closeAll(a, null, c, b));
        assertTrue(a.isClosed() && b.isClosed(), "every tensor tried before the second close's failure is thrown: " + twice);
        Tensor d = Tensor.empty(Device.CPU, DType.F32, 4);
        OutOfMemoryError failure = new OutOfMemoryError("after the allocation");
        Closing.closeAfter(failure, null, d, c);  // cleanup after a failure skips the closed c
        assertTrue(d.isClosed());
        assertEquals(0, failure.getSuppressed().length, "no close failed");
    }
}
