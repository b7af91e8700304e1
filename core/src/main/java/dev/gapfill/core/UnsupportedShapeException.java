package dev.gapfill.core;

/**
 * The caller forced a backend (e.g. {@code CUSTOM}) that has no kernel for this problem. Gapfill never
 * silently falls back from a forced backend; the message says which shapes the backend supports.
 */
public class UnsupportedShapeException extends ArgumentException {
    private static final long serialVersionUID = 1L;

    public UnsupportedShapeException(String argument, String expected, String received) {
        super(argument, expected, received);
    }
}
