package dev.gapfill.core;

import org.bytedeco.javacpp.IntPointer;
import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerScope;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Gapfill's long-lived native host memory survives a {@code PointerScope} the caller had open when it was made (no
 * GPU: host memory only).
 */
class PointersTest {
    @Test void aPointerMadeToOutliveScopesKeepsItsMemoryWhenTheCallersScopeCloses() {
        LongPointer kept;
        LongPointer plain;
        try (PointerScope scope = new PointerScope()) {
            kept = Pointers.outliveScopes(new LongPointer(1));
            plain = new LongPointer(1);
            kept.put(0, 0x1234_5678_9abcL);
        }
        assertTrue(plain.isNull(), "the scope frees what it holds: the case the helper exists for");
        assertFalse(kept.isNull());
        assertEquals(0x1234_5678_9abcL, kept.get(0));
        kept.close();
        assertTrue(kept.isNull(), "close still frees it");
    }

    @Test void launchArgumentsFirstMadeInsideACallersScopeStillWorkAfterIt() throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                try (PointerScope scope = new PointerScope()) {
                    KernelArgs.begin().i32(1);  // this thread's buffers are made here, inside the scope
                }
                KernelArgs a = KernelArgs.begin().i32(42).i64(7L);
                assertEquals(2, a.count());
                assertFalse(a.params().isNull(), "the argument array outlived the scope");
                assertEquals(42, new IntPointer(a.params().get(0)).get());
                assertEquals(7L, new LongPointer(a.params().get(1)).get());
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join();
        assertNull(failure.get(), () -> String.valueOf(failure.get()));
    }
}
