package dev.gapfill.core;

/** A GPU path was requested but no usable GPU (or a needed vendor library) is present; the message says why. */
public class GpuUnavailableException extends GapfillException {
    private static final long serialVersionUID = 1L;

    public GpuUnavailableException(String message) { super(message); }

    public GpuUnavailableException(String message, Throwable cause) { super(message, cause); }
}
