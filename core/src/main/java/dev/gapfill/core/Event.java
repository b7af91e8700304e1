package dev.gapfill.core;

import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.global.cudart;

/** A CUDA event: record on a stream, wait on it, or (timing events) time between two. */
public final class Event implements AutoCloseable {
    private final CudaDevice device;
    private final CUevent_st handle = new CUevent_st();
    private boolean closed;
    private final boolean timing;

    /** An event with timing enabled. */
    public Event(Device device) {
        this(device, 0);
    }

    private Event(Device device, int flags) {
        if (device == null) {
            throw new ArgumentException("device", "a GPU device", "null");
        }
        this.device = Gpu.device(device);
        this.timing = (flags & cudart.cudaEventDisableTiming) == 0;
        this.device.activate();
        this.device.check(cudart.cudaEventCreateWithFlags(handle, flags), "cudaEventCreateWithFlags");
    }

    /** An event for ordering only (no timestamps: cheaper to record and to wait on); {@link #elapsedMillisSince} refuses it. */
    public static Event forOrdering(Device device) {
        return new Event(device, cudart.cudaEventDisableTiming);
    }

    CUevent_st handle() {
        if (closed) {
            throw new IllegalStateException("event is closed");
        }
        return handle;
    }

    /** Records the event after the work queued on {@code stream} so far. */
    public Event record(Stream stream) {
        if (stream == null) {
            throw new ArgumentException("stream", "a stream on " + device.device(), "null");
        }
        if (!stream.device().equals(device.device())) {
            throw new ArgumentException("stream", "a stream on the event's device " + device.device(), "a stream on " + stream.device());
        }
        device.activate();
        device.check(cudart.cudaEventRecord(handle(), stream.handle()), "cudaEventRecord");
        return this;
    }

    public void synchronize() {
        device.check(cudart.cudaEventSynchronize(handle()), "cudaEventSynchronize");
    }

    /**
     * Whether the work queued before the event's last {@link #record} has completed, without blocking: true also for
     * an event never recorded. An error of that work (or of any earlier asynchronous work of the device) is thrown as
     * for the other calls.
     */
    public boolean isComplete() {
        CUevent_st h = handle();
        device.activate();
        int rc = cudart.cudaEventQuery(h);
        if (rc == cudart.cudaErrorNotReady) {
            cudart.cudaGetLastError();  // not an error: clear it, so a caller's later cudaGetLastError does not read it
            return false;
        }
        device.check(rc, "cudaEventQuery");
        return true;
    }

    /**
     * Blocks the calling thread until the event completed, also while this thread captures a CUDA graph in global or
     * thread-local mode (where a blocking call would invalidate the capture): the wait runs in relaxed capture mode,
     * and the thread's mode is restored after it. The event must have been recorded outside any capture.
     */
    public void synchronizeDuringCapture() {
        CUevent_st h = handle();  // refuses a closed event before the mode changes
        device.activate();
        int[] mode = {cudart.cudaStreamCaptureModeRelaxed};
        device.check(cudart.cudaThreadExchangeStreamCaptureMode(mode), "cudaThreadExchangeStreamCaptureMode(relaxed)");
        int rc = cudart.cudaEventSynchronize(h);
        int restore = cudart.cudaThreadExchangeStreamCaptureMode(mode);  // mode now holds the thread's previous mode
        device.check(rc, "cudaEventSynchronize");
        device.check(restore, "cudaThreadExchangeStreamCaptureMode(restore)");
    }

    /** Milliseconds between {@code start} and this event, both recorded and complete. */
    public float elapsedMillisSince(Event start) {
        if (start == null) {
            throw new ArgumentException("start", "a timing event recorded before this one", "null");
        }
        if (!start.timing || !timing) {
            throw new ArgumentException(start.timing ? "this event" : "start", "an event with timing (new Event(device))",
                    "an ordering-only event (Event.forOrdering)");
        }
        if (start.device != device) {
            throw new ArgumentException("start", "an event on " + device.device(), "an event on " + start.device.device());
        }
        synchronize();
        float[] ms = new float[1];
        device.check(cudart.cudaEventElapsedTime(ms, start.handle(), handle()), "cudaEventElapsedTime");
        return ms[0];
    }

    @Override public void close() {
        if (closed) {
            throw new IllegalStateException("event closed twice");
        }
        closed = true;
        if (device.stickyCause() == null) {
            device.check(cudart.cudaEventDestroy(handle), "cudaEventDestroy");
        }
    }
}
