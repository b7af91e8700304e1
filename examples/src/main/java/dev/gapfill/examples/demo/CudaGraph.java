package dev.gapfill.examples.demo;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.GapfillException;
import dev.gapfill.core.Stream;
import org.bytedeco.cuda.cudart.CUgraphExec_st;
import org.bytedeco.cuda.cudart.CUgraph_st;
import org.bytedeco.cuda.global.cudart;

/**
 * A CUDA graph captured from the work one callback enqueues on a stream, instantiated once and launched many times.
 * The captured kernels keep the device addresses they were given, so a replay reads whatever those buffers hold at
 * launch time (that is how a decode step sees new lengths without being captured again).
 *
 * <p>Capture uses {@code cudaStreamCaptureModeThreadLocal}: only this thread's unsafe calls are refused. Run the work
 * once outside the capture first, on the same thread, so that lazily created handles and kernel modules exist.
 */
public final class CudaGraph implements AutoCloseable {
    private final CudaDevice device;
    private final CUgraph_st graph;
    private final CUgraphExec_st exec;
    private boolean closed;

    private CudaGraph(CudaDevice device, CUgraph_st graph, CUgraphExec_st exec) {
        this.device = device;
        this.graph = graph;
        this.exec = exec;
    }

    /**
     * Captures what {@code work} enqueues on {@code stream} and instantiates it.
     *
     * @throws GapfillException (a {@code CudaException}) naming the call that failed; when {@code work} itself throws,
     *                          the capture is ended (so the stream stays usable) and the exception propagates
     */
    public static CudaGraph capture(Stream stream, Runnable work) {
        CudaDevice cd = stream.cudaDevice();
        cd.activate();
        cd.check(cudart.cudaStreamBeginCapture(stream.handle(), cudart.cudaStreamCaptureModeThreadLocal),
                "cudaStreamBeginCapture(" + stream + ")");
        CUgraph_st graph = new CUgraph_st();
        try {
            work.run();
        } catch (RuntimeException | Error e) {  // an Error too: a stream left capturing could not be closed
            if (cudart.cudaStreamEndCapture(stream.handle(), graph) == 0 && !graph.isNull()) {
                cudart.cudaGraphDestroy(graph);
            }
            throw e;
        }
        cd.check(cudart.cudaStreamEndCapture(stream.handle(), graph), "cudaStreamEndCapture(" + stream + ")");
        CUgraphExec_st exec = new CUgraphExec_st();
        int rc = cudart.cudaGraphInstantiate(exec, graph, 0L);
        if (rc != 0) {
            cudart.cudaGraphDestroy(graph);
            cd.check(rc, "cudaGraphInstantiate");
        }
        return new CudaGraph(cd, graph, exec);
    }

    /** Enqueues one replay on {@code stream}. */
    public void launch(Stream stream) {
        if (closed) {
            throw new IllegalStateException("CUDA graph is closed");
        }
        device.activate();
        device.check(cudart.cudaGraphLaunch(exec, stream.handle()), "cudaGraphLaunch(" + stream + ")");
    }

    /** Destroys the executable graph and the graph (after the caller synchronised its replays). */
    @Override public void close() {
        if (closed) {
            throw new IllegalStateException("CUDA graph closed twice");
        }
        closed = true;
        if (device.stickyCause() == null) {
            device.check(cudart.cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
            device.check(cudart.cudaGraphDestroy(graph), "cudaGraphDestroy");
        }
    }
}
