package dev.gapfill.core;

import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.global.cudart;

/** A CUDA event with timing enabled: record on a stream, wait on it, or time between two. */
public final class Event implements AutoCloseable {
    private final CudaDevice device;
    private final CUevent_st handle = new CUevent_st();
    private boolean closed;

    public Event(Device device) {
        this.device = Gpu.device(device);
        this.device.activate();
        this.device.check(cudart.cudaEventCreateWithFlags(handle, 0), "cudaEventCreateWithFlags");
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

    /** Milliseconds between {@code start} and this event, both recorded and complete. */
    public float elapsedMillisSince(Event start) {
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
