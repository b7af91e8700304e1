package dev.gapfill.core;

/**
 * Runs every step of a cleanup even when one fails (a failed free must not leave the rest of a plan's memory and
 * descriptors behind); {@link #rethrow} throws the first failure with the later ones suppressed in it. Internal.
 */
public final class Cleanup {
    private RuntimeException failed;

    /** Runs {@code step}, keeping its failure for {@link #rethrow}. */
    public void run(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            record(e);
        }
    }

    /** Closes {@code c} if not null, keeping its failure (a checked one wrapped) for {@link #rethrow}. */
    public void close(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (RuntimeException e) {
            record(e);
        } catch (Exception e) {
            record(new IllegalStateException("closing " + c.getClass().getSimpleName() + " failed", e));
        }
    }

    /** Keeps {@code e} as a failure of this cleanup. */
    public void record(RuntimeException e) {
        if (failed == null) {
            failed = e;
        } else if (failed != e) {
            failed.addSuppressed(e);
        }
    }

    /** Throws the first failure, if any step failed. */
    public void rethrow() {
        if (failed != null) {
            throw failed;
        }
    }
}
