package dev.gapfill.ops;

import org.bytedeco.javacpp.Pointer;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ops' shared native constants (alpha/beta of the vendor calls) and per-thread out-parameters hold a reference
 * of their own, so a {@code PointerScope} open when they were made cannot free them ({@code Pointers.outliveScopes}).
 * A JavaCPP pointer made outside any scope has no references, so each assertion fails without the helper.
 */
class LongLivedPointersTest {
    private static Object field(Class<?> c, String name) throws ReflectiveOperationException {
        Field f = c.getDeclaredField(name);
        f.setAccessible(true);
        return f.get(null);
    }

    private static void assertOutlivesScopes(Pointer p, String what) {
        assertFalse(p.isNull(), what);
        assertTrue(p.referenceCount() >= 1, what + " holds a reference of its own: " + p.referenceCount());
    }

    @Test void sharedAlphaBetaConstantsOutliveScopes() throws ReflectiveOperationException {
        for (Class<?> c : new Class<?>[] {Bmm.class, DepthwiseConv3x3Cudnn.class, GroupedGemm.class}) {
            assertOutlivesScopes((Pointer) field(c, "ONE"), c.getSimpleName() + ".ONE");
            assertOutlivesScopes((Pointer) field(c, "ZERO"), c.getSimpleName() + ".ZERO");
        }
        assertOutlivesScopes((Pointer) field(Int8Mm.class, "ONE_I32"), "Int8Mm.ONE_I32");
        assertOutlivesScopes((Pointer) field(Int8Mm.class, "ZERO_I32"), "Int8Mm.ZERO_I32");
    }

    @Test void theCaptureStatusOutParameterOutlivesScopes() throws ReflectiveOperationException {
        ThreadLocal<?> status = (ThreadLocal<?>) field(dev.gapfill.core.Stream.class, "CAPTURE_STATUS");
        assertOutlivesScopes((Pointer) status.get(), "Stream.CAPTURE_STATUS");
    }
}
