package dev.gapfill.core;

import org.bytedeco.javacpp.Pointer;

/**
 * Native host memory that must outlive the call that made it: the per-thread buffers of launches and allocations,
 * shared alpha/beta constants, a plan's scalars and cached vendor results. JavaCPP attaches every pointer it
 * allocates to the {@link org.bytedeco.javacpp.PointerScope} open on the calling thread, if any, and frees it when
 * that scope closes; an application that wraps its calls into Gapfill in a scope of its own would free Gapfill's
 * long-lived memory under it (later launches would write their arguments into freed memory). Internal.
 */
public final class Pointers {
    private Pointers() {}

    /**
     * Returns {@code p}, kept past any {@code PointerScope} now open on this thread (one more reference, which no
     * scope releases). {@link Pointer#close} still frees it, and so does the garbage collector once it is unreachable.
     */
    public static <P extends Pointer> P outliveScopes(P p) {
        p.retainReference();
        return p;
    }
}
