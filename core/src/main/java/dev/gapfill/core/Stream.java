package dev.gapfill.core;

import org.bytedeco.cuda.cudart.CUevent_st;
import org.bytedeco.cuda.cudart.CUstream_st;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A CUDA stream. {@link #create(Device)} makes an owned non-blocking stream that {@link #close()} synchronizes and
 * destroys. {@link #perThread(Device)} is the calling thread's default stream, which every op uses when no stream is
 * given.
 *
 * <p>The default stream is a stream Gapfill creates for the thread (blocking, so, like CUDA's per-thread default
 * stream, it is ordered with CUDA's legacy default stream), not CUDA's implicit per-thread stream: a thread that ends
 * with work still queued on CUDA's per-thread stream stalled every later device synchronization of the process on a
 * busy H100 (docs/reliability.md), and a Java thread cannot be made to drain its stream when it ends. A thread's
 * default stream outlives the thread; once the thread has ended it is synchronized and destroyed by the next thread
 * that creates a default stream, or by {@link Resources#release}, unless a {@link #lease} holds it (a plan made on it). Code that wants CUDA's implicit per-thread stream
 * passes its own stream instead.
 */
public final class Stream implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Stream.class);
    /** A thread's default stream on one device, shared by every {@link #perThread} view of it. */
    private static final class ThreadDefault {
        final Thread owner;
        final CudaDevice device;
        final CUstream_st handle;
        final Life life = new Life();
        /** Set (under {@code life}) once a release found this stream unsynchronizable: later retries log at debug level. */
        boolean syncFailed;

        ThreadDefault(Thread owner, CudaDevice device, CUstream_st handle) {
            this.owner = owner;
            this.device = device;
            this.handle = handle;
        }
    }

    /** Whether the native stream is destroyed, and the lock that close and the library's cross-thread uses share. */
    private static final class Life {
        volatile boolean destroyed;
        int leases;  // open Leases; guarded by this
    }

    /**
     * A hold on the native stream behind a view ({@link #lease}): while one is open, an ended thread's default stream
     * is not destroyed. Closing it twice does nothing.
     */
    public static final class Lease implements AutoCloseable {
        private final Life life;
        private boolean closed;  // guarded by life

        private Lease(Life life) { this.life = life; }

        @Override public void close() {
            synchronized (life) {
                if (!closed) {
                    closed = true;
                    life.leases--;
                }
            }
        }
    }

    private static final ThreadLocal<ThreadDefault[]> DEFAULTS = ThreadLocal.withInitial(() -> new ThreadDefault[0]);
    private static final Set<ThreadDefault> ALL_DEFAULTS = ConcurrentHashMap.newKeySet();

    private final CudaDevice device;
    private final CUstream_st handle;
    private final boolean owned;
    /** This object closed (for a default-stream view: only this view; the native stream lives on). */
    private volatile boolean closed;
    /** Held by close() and by the library's own uses of a stream from other threads, so none sees it destroyed. */
    private final Life life;

    private Stream(CudaDevice device, CUstream_st handle, boolean owned, Life life) {
        this.device = device;
        this.handle = handle;
        this.owned = owned;
        this.life = life;
    }

    /** A new non-blocking stream on {@code device}. */
    public static Stream create(Device device) {
        CudaDevice d = Gpu.device(device);
        d.activate();
        CUstream_st h = new CUstream_st();
        d.check(cudart.cudaStreamCreateWithFlags(h, cudart.cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        return new Stream(d, h, true, new Life());
    }

    /**
     * The calling thread's default stream on {@code device}: created on first use (this also reaps the default streams
     * of ended threads), then the same native stream for every call on this thread. Each call returns a new view;
     * closing a view closes only that view.
     */
    public static Stream perThread(Device device) {
        CudaDevice d = Gpu.device(device);
        ThreadDefault[] mine = DEFAULTS.get();
        int ordinal = d.ordinal();
        ThreadDefault td = ordinal < mine.length ? mine[ordinal] : null;
        if (td == null) {
            releaseEndedThreads();
            d.activate();
            CUstream_st h = new CUstream_st();
            d.check(cudart.cudaStreamCreateWithFlags(h, cudart.cudaStreamDefault), "cudaStreamCreateWithFlags(default stream)");
            td = new ThreadDefault(Thread.currentThread(), d, h);
            if (ordinal >= mine.length) {
                mine = java.util.Arrays.copyOf(mine, ordinal + 1);
                DEFAULTS.set(mine);
            }
            mine[ordinal] = td;
            ALL_DEFAULTS.add(td);
        }
        return new Stream(d, td.handle, false, td.life);
    }

    /**
     * Synchronizes and destroys the default streams of threads that have ended (their work completes first), after
     * destroying those threads' vendor handles, which may still be bound to them. Returns how many streams it destroyed.
     * Safe at any time: an ended thread cannot queue more work. A failure found in an ended thread's work (a fault
     * it left on its stream, possibly on another device than the caller's) does not fail the caller: it is latched on
     * that device as usual (sticky errors make the device fail fast from then on), logged, and the other streams are
     * still released. A stream is destroyed only once synchronized: one whose synchronization failed without a sticky
     * error (another thread captures a graph in global mode) may still have work queued, so it is kept, still usable
     * by the frees ordered on it, and a later call retries it; after a sticky error it is forgotten, not destroyed (its
     * context is gone).
     */
    public static int releaseEndedThreads() {
        if (ALL_DEFAULTS.stream().allMatch(td -> td.owner.isAlive())) {
            return 0;
        }
        VendorHandles.releaseDeadThreads();
        int n = 0;
        for (ThreadDefault td : ALL_DEFAULTS) {
            if (td.owner.isAlive()) {
                continue;
            }
            synchronized (td.life) {
                // a leased stream (a held plan runs on it) stays until its leases close; a later call releases it
                if (td.life.leases != 0 || !ALL_DEFAULTS.contains(td)) {
                    continue;  // leased, or released by a concurrent call
                }
                if (td.device.stickyCause() == null) {
                    boolean capturing = false;
                    try {
                        td.device.activate();
                        org.bytedeco.javacpp.IntPointer status = CAPTURE_STATUS.get();
                        td.device.check(cudart.cudaStreamIsCapturing(td.handle, status), "cudaStreamIsCapturing(an ended thread's default stream)");
                        capturing = status.get() != cudart.cudaStreamCaptureStatusNone;
                        if (capturing) {
                            // the thread ended inside a capture of its own stream: no other thread can end that capture,
                            // so the stream can never be synchronized or destroyed; forget it (its native stream leaks)
                            LOG.warn("the default stream of ended thread '{}' on {} is still capturing a CUDA graph; forgotten without"
                                    + " being destroyed", td.owner.getName(), td.device.device());
                        } else {
                            td.device.check(cudart.cudaStreamSynchronize(td.handle), "cudaStreamSynchronize(an ended thread's default stream)");
                        }
                    } catch (CudaException e) {
                        if (td.device.stickyCause() == null) {
                            // its work may not be done: destroying it would let the frees ordered on it run early. Warned
                            // once per stream: every thread's first perThread call retries it
                            if (!td.syncFailed) {
                                td.syncFailed = true;
                                LOG.warn("the default stream of ended thread '{}' on {} could not be synchronized; kept for a later release",
                                        td.owner.getName(), td.device.device(), e);
                            } else {
                                LOG.debug("the default stream of ended thread '{}' on {} still could not be synchronized: {}",
                                        td.owner.getName(), td.device.device(), e.toString());
                            }
                            continue;
                        }
                        LOG.warn("the default stream of ended thread '{}' on {} reported an error; releasing it",
                                td.owner.getName(), td.device.device(), e);
                    }
                    if (!capturing && td.device.stickyCause() == null) {
                        int rc = cudart.cudaStreamDestroy(td.handle);
                        if (rc != 0) {
                            LOG.warn("cudaStreamDestroy(an ended thread's default stream) on {}: status {}", td.device.device(), rc);
                        }
                    }
                }
                ALL_DEFAULTS.remove(td);
                td.life.destroyed = true;
                n++;
            }
        }
        return n;
    }

    /** Default streams of threads that have ended, not yet released ({@link #releaseEndedThreads}; leased ones included). */
    public static int endedThreadDefaultStreams() {
        return (int) ALL_DEFAULTS.stream().filter(td -> !td.owner.isAlive()).count();
    }

    public Device device() { return device.device(); }

    public CudaDevice cudaDevice() { return device; }

    /** The native handle; valid until {@link #close()}. */
    public CUstream_st handle() {
        if (isClosed()) {
            throw new IllegalStateException("stream on " + device + " is closed");
        }
        return handle;
    }

    /** The native handle without the closed check: for the library's frees under {@link #freeIfOpen}. */
    CUstream_st rawHandle() { return handle; }

    /** Whether this is a view of a thread's default stream ({@link #perThread}). */
    public boolean isPerThread() { return !owned; }

    /** Whether both objects use the same native stream. */
    public boolean sameStreamAs(Stream other) { return other != null && other.life == life; }

    public boolean isClosed() { return closed || life.destroyed; }

    /** Blocks until all work queued on this stream finished; surfaces asynchronous errors. */
    public void synchronize() {
        device.activate();
        device.check(cudart.cudaStreamSynchronize(handle()), "cudaStreamSynchronize");
    }

    /** Makes later work on this stream wait for {@code event}. */
    public void waitFor(Event event) {
        if (event == null) {
            throw new ArgumentException("event", "an event", "null");
        }
        device.activate();
        device.check(cudart.cudaStreamWaitEvent(handle(), event.handle(), 0), "cudaStreamWaitEvent");
    }

    /**
     * Synchronizes, then destroys an owned stream; a default-stream view is only marked closed (the thread's default
     * stream lives on). Holds the stream's lifecycle lock, so the library's calls from other threads
     * ({@link #freeIfOpen}, {@link #synchronizeIfOpen}) either finish before the stream is destroyed or find it closed.
     * An owned stream that is being captured into a CUDA graph is not closed: a {@link GapfillException} says to end the
     * capture first, and the stream and its capture stay as they were. An owned stream is marked closed only once its
     * work is done and it is destroyed, or once its device has a sticky error (the context, its work with it, is gone;
     * the error is thrown after): where the synchronization or the destruction fails otherwise (another thread captures
     * a graph in global mode, {@code cudaErrorStreamCaptureImplicit}), the error is thrown and the stream stays open and
     * usable, so that close() can be called again later; until then the memory of tensors last used on it is freed in
     * its order, after its work.
     */
    @Override public void close() {
        synchronized (life) {
            if (closed) {
                return;
            }
            if (owned && !life.destroyed && device.stickyCause() == null) {
                try {
                    if (isCapturing()) {
                        // synchronizing would invalidate the caller's capture and fail: refuse, leaving the capture valid
                        // and the stream open
                        throw new GapfillException("cannot close " + this + " while it is capturing a CUDA graph: end the"
                                + " capture (cudaStreamEndCapture) first, then close the stream");
                    }
                    synchronize();
                    device.check(cudart.cudaStreamDestroy(handle), "cudaStreamDestroy");
                } catch (RuntimeException e) {
                    if (device.stickyCause() != null) {
                        markClosed();  // nothing left to wait for or to destroy
                    } else {
                        cudart.cudaGetLastError();  // a refused sync's status, not left for the next caller of cudaGetLastError
                    }
                    throw e;  // otherwise its work may not be done: it stays open for a later close()
                }
            }
            markClosed();
        }
    }

    /** Marks this object closed, and an owned stream destroyed; under the lifecycle lock. */
    private void markClosed() {
        closed = true;
        if (owned) {
            life.destroyed = true;
        }
    }

    // the calling thread's out-parameter of cudaStreamIsCapturing (no native allocation per query)
    private static final ThreadLocal<org.bytedeco.javacpp.IntPointer> CAPTURE_STATUS =
            ThreadLocal.withInitial(() -> Pointers.outliveScopes(new org.bytedeco.javacpp.IntPointer(1)));

    /**
     * Whether this stream is being captured into a CUDA graph (work enqueued now becomes graph nodes), or holds a capture
     * that was invalidated and not ended. Legal during any capture: it never invalidates one.
     */
    public boolean isCapturing() {
        org.bytedeco.javacpp.IntPointer status = CAPTURE_STATUS.get();
        device.check(cudart.cudaStreamIsCapturing(handle(), status), "cudaStreamIsCapturing");
        return status.get() != cudart.cudaStreamCaptureStatusNone;
    }

    /**
     * Returns memory to the pool ordered on this stream, unless the native stream is destroyed (false: then it was
     * synchronized when it was destroyed, and the caller frees elsewhere). A tensor freed on one thread while another
     * closes the stream it was last used on must not reach a destroyed handle: checking {@link #isClosed()} first and
     * then freeing would race. A closed default-stream view still frees on the live stream behind it.
     */
    boolean freeIfOpen(long address, long bytes) {
        return freeIfOpen(address, bytes, List.of());
    }

    /**
     * As {@link #freeIfOpen(long, long)}, ordered also after {@code marks} (events of the other streams the memory was
     * used on, {@link #markIfOpen}).
     */
    boolean freeIfOpen(long address, long bytes, List<CUevent_st> marks) {
        synchronized (life) {
            if (life.destroyed) {
                return false;
            }
            waitForMarksOrOnHost(marks);
            device.free(address, bytes, this);
            return true;
        }
    }

    /**
     * A timing-free event after the work queued on this stream so far, for another stream to wait for; null if the
     * native stream is destroyed (it was synchronized then, so its work is done). Same lock as close(). The caller
     * destroys it ({@link #destroyMarks}) once the waits on it are queued.
     */
    CUevent_st markIfOpen() {
        synchronized (life) {
            if (life.destroyed) {
                return null;
            }
            device.activate();
            CUevent_st ev = new CUevent_st();
            device.check(cudart.cudaEventCreateWithFlags(ev, cudart.cudaEventDisableTiming), "cudaEventCreateWithFlags");
            int rc = cudart.cudaEventRecord(ev, handle);
            if (rc != 0) {
                cudart.cudaEventDestroy(ev);
                device.check(rc, "cudaEventRecord");
            }
            return ev;
        }
    }

    /**
     * Whether the native stream is capturing a CUDA graph now; false once it is destroyed. Same lock as close(), so a
     * stream being closed by another thread is never queried through a destroyed handle; a closed default-stream view
     * answers for its live stream (as {@link #markIfOpen} records on it).
     */
    boolean isCapturingIfOpen() {
        synchronized (life) {
            if (life.destroyed) {
                return false;
            }
            device.activate();
            // the raw handle: a closed default-stream view still stands for its live native stream
            org.bytedeco.javacpp.IntPointer status = CAPTURE_STATUS.get();
            device.check(cudart.cudaStreamIsCapturing(handle, status), "cudaStreamIsCapturing");
            return status.get() != cudart.cudaStreamCaptureStatusNone;
        }
    }

    /** Makes later work on this stream (open: the caller's own, or under its lock) wait for {@code marks}. */
    void waitForMarks(List<CUevent_st> marks) {
        if (marks.isEmpty()) {
            return;
        }
        device.activate();
        for (CUevent_st ev : marks) {
            device.check(cudart.cudaStreamWaitEvent(handle, ev, 0), "cudaStreamWaitEvent");
        }
    }

    /**
     * As {@link #waitForMarks}, for frees: where the stream cannot queue the waits it waits for the events on the host
     * instead, and after a sticky error not at all (the context is gone, and with it the work). Where the host wait
     * fails too without a sticky error, it throws, so that the caller does not free memory whose other streams' work
     * may still run (the block then stays allocated and counted; until the fiftieth session the failure was ignored and
     * the free went ahead, from a read-only review).
     */
    void waitForMarksOrOnHost(List<CUevent_st> marks) {
        if (marks.isEmpty()) {
            return;
        }
        try {
            waitForMarks(marks);
        } catch (RuntimeException e) {
            int failure = 0;
            if (device.stickyCause() == null) {
                for (CUevent_st ev : marks) {
                    int rc = cudart.cudaEventSynchronize(ev);
                    failure = failure == 0 ? rc : failure;
                }
            }
            if (failure != 0 && device.stickyCause() == null) {
                CudaException f = CudaErrors.runtimeError(failure, "cudaEventSynchronize (a free's wait for another stream, after "
                        + e.getMessage() + ")", -1);
                device.latch(f);
                f.addSuppressed(e);
                throw f;
            }
            LOG.debug("a free waited for its other streams on the host: {}", e.toString());
        }
    }

    /** Destroys events of {@link #markIfOpen} (CUDA releases each once the work waiting for it no longer needs it). */
    static void destroyMarks(List<CUevent_st> marks) {
        for (CUevent_st ev : marks) {
            cudart.cudaEventDestroy(ev);
        }
    }

    /**
     * Keeps the native stream behind this view from being destroyed as an ended thread's default stream while the
     * lease is open: for an object that keeps a default-stream view to run on later, perhaps from other threads after
     * the view's thread ended (a held {@code Int8Mm} plan made with no stream). An owned stream is closed by its
     * owner, lease or not.
     *
     * @throws IllegalStateException if the native stream is already destroyed
     */
    public Lease lease() {
        synchronized (life) {
            if (life.destroyed) {
                throw new IllegalStateException("stream on " + device + " is closed");
            }
            life.leases++;
            return new Lease(life);
        }
    }

    /** Whether the native stream is destroyed (a closed default-stream view's stream is not). */
    boolean destroyed() { return life.destroyed; }

    /** Synchronizes unless the native stream is destroyed (then its work finished before); same lock as close(). */
    void synchronizeIfOpen() {
        synchronized (life) {
            if (!life.destroyed) {
                device.activate();
                device.check(cudart.cudaStreamSynchronize(handle), "cudaStreamSynchronize");
            }
        }
    }

    @Override public String toString() {
        return owned ? "stream@" + Long.toHexString(handle.address()) + " on " + device : "default stream@" + Long.toHexString(handle.address()) + " of a thread on " + device;
    }
}
