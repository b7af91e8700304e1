package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;

import java.util.Locale;

/**
 * Which implementation runs an op. {@code AUTO} lets the op's heuristics pick; {@code VENDOR} forces
 * the cuBLAS/cuBLASLt/cuDNN path; {@code CUSTOM} forces Gapfill's kernels and throws
 * {@link dev.gapfill.core.UnsupportedShapeException} where they do not apply (never a silent fallback).
 * Tensors on the CPU always run the reference.
 *
 * <p>The system property {@code gapfill.backend} (auto, vendor, custom) overrides {@code AUTO} globally;
 * an explicit per-call VENDOR or CUSTOM wins over the property.
 */
public enum Backend {
    AUTO, VENDOR, CUSTOM, REFERENCE;

    /** Property that overrides AUTO for every call. */
    public static final String PROPERTY = "gapfill.backend";

    /** Applies the global override to a per-call request. */
    public static Backend resolve(Backend requested) {
        if (requested == null) {
            throw new ArgumentException("backend", "one of AUTO, VENDOR, CUSTOM", "null");
        }
        if (requested != AUTO) {
            return requested;
        }
        String p = System.getProperty(PROPERTY);
        if (p == null || p.isBlank()) {
            return AUTO;
        }
        Backend b;
        try {
            b = valueOf(p.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ArgumentException(PROPERTY, "one of auto, vendor, custom", p);
        }
        if (b == REFERENCE) {  // was read as AUTO without a word: the reference runs for CPU tensors only
            throw new ArgumentException(PROPERTY, "one of auto, vendor, custom (the reference runs for CPU tensors, whatever the backend)", p);
        }
        return b;
    }
}
