package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * activate() asks the driver for the current context only on a virtual thread; a platform thread keeps the one
 * cudaGetDevice call per activation. On Java 17 to 20 there are no virtual threads.
 */
class VirtualThreadCheckTest {
    @Test void platformThreadsAreNotVirtualAndVirtualOnesAreWhereTheRuntimeHasThem() throws Exception {
        assertFalse(CudaDevice.isVirtual(Thread.currentThread()));
        Thread platform = new Thread(() -> { });
        assertFalse(CudaDevice.isVirtual(platform));
        java.lang.reflect.Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            return;  // Java 17 to 20
        }
        Object builder = ofVirtual.invoke(null);
        AtomicBoolean seen = new AtomicBoolean();
        Runnable probe = () -> seen.set(CudaDevice.isVirtual(Thread.currentThread()));
        // through the public interface: the builder's own class is not accessible
        Thread v = (Thread) Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class).invoke(builder, probe);
        v.join();
        assertTrue(seen.get(), "a virtual thread is told apart (Java 21+)");
    }
}
