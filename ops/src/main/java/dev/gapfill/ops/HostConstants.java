package dev.gapfill.ops;

import dev.gapfill.core.Pointers;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.IntPointer;

/**
 * The host-side alpha and beta constants the vendor calls read (cuBLAS, cuBLASLt and cuDNN with host pointer mode):
 * native memory that lives as long as the process and outlives any caller's {@code PointerScope}. In a class of their
 * own, created on the first vendor call: as static fields of the op classes they made those classes fail to initialize
 * (ExceptionInInitializerError) where JavaCPP's native library is absent, a host other than Linux x86-64, so the CPU
 * reference the ops promise there was unreachable for {@link Bmm}, {@link Int8Mm} and {@link GroupedGemm}, and
 * {@code Resources.cacheSizes} failed through the depthwise cuDNN plan cache.
 */
final class HostConstants {
    private HostConstants() {}

    static final FloatPointer ONE_F32 = Pointers.outliveScopes(new FloatPointer(1f));
    static final FloatPointer ZERO_F32 = Pointers.outliveScopes(new FloatPointer(0f));
    static final IntPointer ONE_I32 = Pointers.outliveScopes(new IntPointer(new int[] {1}));
    static final IntPointer ZERO_I32 = Pointers.outliveScopes(new IntPointer(new int[] {0}));
}
