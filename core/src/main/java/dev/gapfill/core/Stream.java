package dev.gapfill.core;

import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;

/**
 * A CUDA stream. {@link #create(Device)} makes an owned non-blocking stream that {@link #close()}
 * synchronizes and destroys; {@link #perThread(Device)} is CUDA's per-thread default stream, which
 * every op uses when no stream is given, and which is never destroyed.
 */
public final class Stream implements AutoCloseable {
    private static final long PER_THREAD_HANDLE = 0x2; // cudaStreamPerThread / CU_STREAM_PER_THREAD
    private static final long LEGACY_HANDLE = 0x1;     // cudaStreamLegacy: ordered after the work of every blocking stream

    private final CudaDevice device;
    private final CUstream_st handle;
    private final boolean owned;
    private volatile boolean closed;
    /** Held by close() and by the library's own uses of an owned stream from other threads, so none sees it destroyed. */
    private final Object lifecycle = new Object();

    private Stream(CudaDevice device, CUstream_st handle, boolean owned) {
        this.device = device;
        this.handle = handle;
        this.owned = owned;
    }

    /** A new non-blocking stream on {@code device}. */
    public static Stream create(Device device) {
        CudaDevice d = Gpu.device(device);
        d.activate();
        CUstream_st h = new CUstream_st();
        d.check(cudart.cudaStreamCreateWithFlags(h, cudart.cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        return new Stream(d, h, true);
    }

    /** The calling thread's default stream on {@code device} (CUDA's per-thread stream). */
    public static Stream perThread(Device device) {
        CudaDevice d = Gpu.device(device);
        return new Stream(d, new CUstream_st(new DevicePointer(PER_THREAD_HANDLE)), false);
    }

    /**
     * CUDA's legacy default stream: work on it starts after the work already queued on every blocking stream (every
     * thread's per-thread stream included). Gapfill frees forgotten tensors on it, because the thread whose per-thread
     * stream last used them cannot be named from the cleaner. Internal.
     */
    static Stream legacy(Device device) {
        CudaDevice d = Gpu.device(device);
        return new Stream(d, new CUstream_st(new DevicePointer(LEGACY_HANDLE)), false);
    }

    public Device device() { return device.device(); }

    public CudaDevice cudaDevice() { return device; }

    /** The native handle; valid until {@link #close()}. */
    public CUstream_st handle() {
        if (closed) {
            throw new IllegalStateException("stream on " + device + " is closed");
        }
        return handle;
    }

    public boolean isPerThread() { return !owned; }

    public boolean isClosed() { return closed; }

    /** Blocks until all work queued on this stream finished; surfaces asynchronous errors. */
    public void synchronize() {
        device.activate();
        device.check(cudart.cudaStreamSynchronize(handle()), "cudaStreamSynchronize");
    }

    /** Makes later work on this stream wait for {@code event}. */
    public void waitFor(Event event) {
        device.activate();
        device.check(cudart.cudaStreamWaitEvent(handle(), event.handle(), 0), "cudaStreamWaitEvent");
    }

    /**
     * Synchronizes, then destroys an owned stream; a per-thread stream is only marked closed for this object. Holds the
     * stream's lifecycle lock, so the library's calls from other threads ({@link #freeIfOpen}, {@link #synchronizeIfOpen})
     * either finish before the stream is destroyed or find it closed.
     */
    @Override public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            try {
                if (owned && device.stickyCause() == null) {
                    synchronize();
                    device.check(cudart.cudaStreamDestroy(handle), "cudaStreamDestroy");
                }
            } finally {
                closed = true;
            }
        }
    }

    /**
     * Returns memory to the pool ordered on this stream, unless it is closed (false: then it was synchronized when it
     * closed, and the caller frees elsewhere). A tensor freed on one thread while another closes the stream it was last
     * used on must not reach a destroyed handle: checking {@link #isClosed()} first and then freeing would race.
     */
    boolean freeIfOpen(long address, long bytes) {
        synchronized (lifecycle) {
            if (closed) {
                return false;
            }
            device.free(address, bytes, this);
            return true;
        }
    }

    /** {@link #synchronize()} unless the stream is closed (then its work finished when it closed); same lock as close(). */
    void synchronizeIfOpen() {
        synchronized (lifecycle) {
            if (!closed) {
                synchronize();
            }
        }
    }

    @Override public String toString() {
        return owned ? "stream@" + Long.toHexString(handle.address()) + " on " + device : "per-thread stream on " + device;
    }
}
