package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;

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

    /** Records that the tensors are used on {@code stream} (stream-ordered freeing). */
    public static void record(Stream stream, Tensor... tensors) {
        for (Tensor t : tensors) {
            if (t != null) {
                t.recordStream(stream);
            }
        }
    }
}
