package dev.gapfill.core;

/**
 * A CUDA, cuBLAS, cuBLASLt or cuDNN call returned an error status. Carries the library, the numeric
 * status, its name and the call that failed. CUDA reports kernel faults asynchronously, so an error
 * raised by one call may have been caused by earlier work on the same device.
 */
public class CudaException extends GapfillException {
    private static final long serialVersionUID = 1L;

    /** The library whose call failed. */
    public enum Library { CUDA_RUNTIME, CUDA_DRIVER, CUBLAS, CUBLASLT, CUDNN }

    private final Library library;
    private final int status;
    private final String statusName;
    private final String call;

    public CudaException(Library library, int status, String statusName, String call, String detail) {
        super(call + " failed: " + library + " status " + status + " (" + statusName + ")"
                + (detail == null || detail.isEmpty() ? "" : ": " + detail));
        this.library = library;
        this.status = status;
        this.statusName = statusName;
        this.call = call;
    }

    public Library library() { return library; }

    public int status() { return status; }

    public String statusName() { return statusName; }

    /** The API call (and Gapfill context) that failed, e.g. {@code cuLaunchKernel(bmm_f16_tiny)}. */
    public String call() { return call; }
}
