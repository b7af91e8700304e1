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

    @Test void sharedAlphaBetaConstantsOutliveScopes() {
        // the vendor calls' alpha/beta (Bmm, DepthwiseConv3x3Cudnn, GroupedGemm, Int8Mm), in a class of their own so
        // that the op classes initialize without JavaCPP's native library (scripts/no-natives-check.sh)
        assertOutlivesScopes(HostConstants.ONE_F32, "HostConstants.ONE_F32");
        assertOutlivesScopes(HostConstants.ZERO_F32, "HostConstants.ZERO_F32");
        assertOutlivesScopes(HostConstants.ONE_I32, "HostConstants.ONE_I32");
        assertOutlivesScopes(HostConstants.ZERO_I32, "HostConstants.ZERO_I32");
    }

    @Test void theOpClassesHoldNoNativeStaticOfTheirOwn() {
        // a static native field initializes with its class, and fails where JavaCPP's library is absent
        for (Class<?> c : new Class<?>[] {Bmm.class, DepthwiseConv3x3Cudnn.class, GroupedGemm.class, Int8Mm.class, GqaDecode.class,
                GqaDecodePlan.class, MoeRoute.class, Elementwise.class, DepthwiseConv3x3.class}) {
            for (Field f : c.getDeclaredFields()) {
                int mod = f.getModifiers();  // a static final one is made with the class (a lazily set one, e.g. a cuDNN descriptor, is not)
                if (java.lang.reflect.Modifier.isStatic(mod) && java.lang.reflect.Modifier.isFinal(mod)) {
                    assertFalse(Pointer.class.isAssignableFrom(f.getType()), c.getSimpleName() + "." + f.getName() + " is a static JavaCPP pointer");
                }
            }
        }
    }

    @Test void theCaptureStatusOutParameterOutlivesScopes() throws ReflectiveOperationException {
        ThreadLocal<?> status = (ThreadLocal<?>) field(dev.gapfill.core.Stream.class, "CAPTURE_STATUS");
        assertOutlivesScopes((Pointer) status.get(), "Stream.CAPTURE_STATUS");
    }
}
