package dev.gapfill.core;

/** A device allocation failed for lack of memory. The device stays usable; free tensors and retry. */
public class DeviceOutOfMemoryException extends CudaException {
    private static final long serialVersionUID = 1L;

    private final long requestedBytes;

    public DeviceOutOfMemoryException(Library library, int status, String statusName, String call, long requestedBytes,
                                      String detail) {
        super(library, status, statusName, call, detail);
        this.requestedBytes = requestedBytes;
    }

    public long requestedBytes() { return requestedBytes; }
}
