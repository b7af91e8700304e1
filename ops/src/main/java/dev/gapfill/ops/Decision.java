package dev.gapfill.ops;

/**
 * What an op's heuristics chose for a problem: the backend, the kernel variant (or vendor
 * configuration) and the reason, citing the benchmark rows behind the threshold.
 *
 * @param backend VENDOR, CUSTOM or REFERENCE (CPU tensors)
 * @param variant kernel or vendor configuration name, e.g. {@code "tiny_mma_64x64"}
 * @param reason  human-readable justification, loggable
 */
public record Decision(Backend backend, String variant, String reason) {
    public Decision {
        if (backend == Backend.AUTO) {
            throw new IllegalArgumentException("a decision names a concrete backend, not AUTO");
        }
    }

    public static Decision reference() {
        return new Decision(Backend.REFERENCE, "cpu_fp64", "tensors are on the CPU: the fp64 reference runs");
    }

    @Override public String toString() { return backend + "/" + variant + " (" + reason + ")"; }
}
