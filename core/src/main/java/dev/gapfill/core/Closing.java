package dev.gapfill.core;

/**
 * Closing tensors on failure paths, for Gapfill's modules: every tensor is closed even when closing one throws, and
 * the failure that matters is the one the caller sees.
 */
public final class Closing {
    private Closing() {}

    /**
     * Closes each non-null tensor that is still open after {@code failure} (an op's own exception, an
     * {@code OutOfMemoryError} included), adding any close failure to it as suppressed; the caller rethrows
     * {@code failure}.
     */
    public static void closeAfter(Throwable failure, Tensor... tensors) {
        for (Tensor t : tensors) {
            if (t == null || t.isClosed()) {
                continue;
            }
            try {
                t.close();
            } catch (RuntimeException closeFailure) {
                failure.addSuppressed(closeFailure);
            }
        }
    }

    /**
     * Closes each non-null tensor; the first close failure (a tensor closed twice included) is thrown after all were
     * tried, the others suppressed into it.
     */
    public static void closeAll(Tensor... tensors) {
        Cleanup c = new Cleanup();  // null entries skipped by Cleanup.close
        for (Tensor t : tensors) {
            c.close(t);
        }
        c.rethrow();
    }
}
