package dev.gapfill.core;

/** Root of Gapfill's unchecked exceptions for runtime failures (argument errors are {@link ArgumentException}). */
public class GapfillException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GapfillException(String message) { super(message); }

    public GapfillException(String message, Throwable cause) { super(message, cause); }
}
