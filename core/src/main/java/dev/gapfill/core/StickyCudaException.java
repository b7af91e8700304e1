package dev.gapfill.core;

/**
 * The CUDA context of a device is corrupted (illegal address, kernel assertion, launch failure...).
 * CUDA cannot recover such a context inside this process: every later Gapfill call on that device
 * fails fast with this exception and the original cause. Restart the process to use the device again.
 */
public class StickyCudaException extends CudaException {
    private static final long serialVersionUID = 1L;

    public StickyCudaException(Library library, int status, String statusName, String call, String detail) {
        super(library, status, statusName, call, detail);
    }
}
