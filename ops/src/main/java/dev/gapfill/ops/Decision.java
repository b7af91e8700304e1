package dev.gapfill.ops;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * What an op's heuristics chose for a problem: the backend, the kernel variant (or vendor
 * configuration) and the reason, citing the benchmark rows behind the threshold.
 *
 * <p>Every op call decides, and most calls never read the reason, so a rule whose reason takes formatting (numbers
 * with a fixed precision, several measured figures) hands it over as a {@link #lazy} supplier: the text is built the
 * first time {@link #reason()} is asked for and kept. Two decisions are equal when backend, variant and reason text are.
 */
public final class Decision {
    private final Backend backend;
    private final String variant;
    private Supplier<String> pending;  // null once the reason is built (or when it was given as text)
    private volatile String reason;

    /**
     * @param backend VENDOR, CUSTOM or REFERENCE (CPU tensors)
     * @param variant kernel or vendor configuration name, e.g. {@code "tiny_mma_64x64"}
     * @param reason  human-readable justification, loggable
     */
    public Decision(Backend backend, String variant, String reason) {
        this(backend, variant, null, Objects.requireNonNull(reason, "reason"));
    }

    private Decision(Backend backend, String variant, Supplier<String> pending, String reason) {
        if (backend == Backend.AUTO) {
            throw new IllegalArgumentException("a decision names a concrete backend, not AUTO");
        }
        this.backend = Objects.requireNonNull(backend, "backend");
        this.variant = Objects.requireNonNull(variant, "variant");
        this.pending = pending;
        this.reason = reason;
    }

    /** A decision whose reason is built from {@code reason} when first read (never, on most calls). */
    public static Decision lazy(Backend backend, String variant, Supplier<String> reason) {
        return new Decision(backend, variant, Objects.requireNonNull(reason, "reason"), null);
    }

    public static Decision reference() {
        return new Decision(Backend.REFERENCE, "cpu_fp64", "tensors are on the CPU: the fp64 reference runs");
    }

    /** VENDOR, CUSTOM or REFERENCE (CPU tensors). */
    public Backend backend() { return backend; }

    /** Kernel or vendor configuration name, e.g. {@code "tiny_mma_64x64"}. */
    public String variant() { return variant; }

    /** Human-readable justification, loggable (built on the first call where the rule gave a supplier). */
    public String reason() {
        String r = reason;
        if (r == null) {
            synchronized (this) {
                r = reason;
                if (r == null) {
                    r = Objects.requireNonNull(pending.get(), "reason");
                    reason = r;
                    pending = null;
                }
            }
        }
        return r;
    }

    @Override public boolean equals(Object o) {
        return o instanceof Decision d && backend == d.backend && variant.equals(d.variant) && reason().equals(d.reason());
    }

    @Override public int hashCode() { return Objects.hash(backend, variant, reason()); }

    @Override public String toString() { return backend + "/" + variant + " (" + reason() + ")"; }
}
