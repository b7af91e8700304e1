package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Device;
import dev.gapfill.core.Pointers;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import org.bytedeco.cuda.global.cudart;
import org.bytedeco.javacpp.IntPointer;

/** Stream plumbing shared by the op facades. Internal. */
public final class OpStreams {
    private OpStreams() {}

    /** The stream to run on: {@code stream} if given (must be on {@code device}), else the per-thread stream. */
    public static Stream pick(Device device, Stream stream) {
        if (stream == null) {
            return Stream.perThread(device);
        }
        if (stream.isClosed()) {
            throw new ArgumentException("stream", "an open stream", "a closed stream");
        }
        if (!stream.device().equals(device)) {
            throw new ArgumentException("stream", "a stream on " + device + " (where the tensors are)", "a stream on " + stream.device());
        }
        return stream;
    }

    // the calling thread's out-parameter of cudaStreamIsCapturing (no native allocation per query)
    private static final ThreadLocal<IntPointer> CAPTURE_STATUS = ThreadLocal.withInitial(() -> Pointers.outliveScopes(new IntPointer(1)));

    /** Whether {@code stream} is being captured into a CUDA graph (work enqueued now becomes graph nodes). */
    public static boolean isCapturing(Stream stream) {
        IntPointer status = CAPTURE_STATUS.get();
        stream.cudaDevice().check(cudart.cudaStreamIsCapturing(stream.handle(), status), "cudaStreamIsCapturing");
        return status.get() != cudart.cudaStreamCaptureStatusNone;
    }

    /** Records that the tensors are used on {@code stream} (stream-ordered freeing). */
    public static void record(Stream stream, Tensor... tensors) {
        for (Tensor t : tensors) {
            if (t != null) {
                t.recordStream(stream);
            }
        }
    }
}
