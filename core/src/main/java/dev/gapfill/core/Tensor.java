package dev.gapfill.core;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A strided n-dimensional array on the host or on a CUDA device.
 *
 * <p>A tensor either owns its memory (allocated from the device's stream-ordered pool, or a direct
 * buffer on the host) or borrows an external device pointer (interop with other libraries; the owner
 * keeps it alive). Close owned tensors: a cleaner thread frees forgotten ones once the garbage collector
 * finds them unreachable and logs the leak with the tensor's id; {@link #freeUnreachable()} does the same
 * synchronously on the calling thread (after a GC), so that memory accounting can be brought back to its
 * baseline deterministically ({@link Resources#release}). Closing twice throws {@link IllegalStateException}.
 * Device memory is freed in stream order after the work queued on every stream that used it
 * ({@link #recordStream}; up to 8 streams tracked; when a ninth is recorded the oldest is forgotten behind an event
 * recorded on it, which the free waits for too: no thread waits for another's stream), by
 * whichever thread frees it: on the stream it was last used on, even another thread's default stream, which first
 * waits for events recorded on the others, unless that stream is destroyed by then (it was synchronized first; the
 * freeing thread's default stream waits instead).
 *
 * <p>Accounting: {@link #liveOwnedTensors()} counts owned tensors whose memory is not yet freed (host and
 * device), {@link #hostBytesInUse()} the bytes of the host ones; device bytes are
 * {@link CudaDevice#bytesInUse()}.
 *
 * <p>Shapes and strides are in elements; the default layout is row-major contiguous.
 */
public final class Tensor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Tensor.class);
    private static final AtomicLong IDS = new AtomicLong();
    private static final AtomicLong LEAKS = new AtomicLong();
    private static final AtomicLong LIVE_OWNED = new AtomicLong();
    private static final AtomicLong HOST_BYTES = new AtomicLong();
    /** Owner references of every owned tensor whose memory is not freed yet. */
    private static final Set<OwnerRef> OWNED = ConcurrentHashMap.newKeySet();
    private static final ReferenceQueue<Tensor> UNREACHABLE = new ReferenceQueue<>();
    /** Frees the cleaner thread has taken from {@link #OWNED} and not finished (guarded by itself). */
    private static final int[] CLEANING = new int[1];
    /** How long {@link #freeUnreachable()} waits for the cleaner thread's frees in flight. */
    private static final long CLEANER_WAIT_NANOS = 30_000_000_000L;

    static {
        Thread t = new Thread(Tensor::cleanerLoop, "gapfill-tensor-cleaner");
        t.setDaemon(true);
        t.start();
    }

    private final long id;
    private final Device device;
    private final DType dtype;
    private final long[] shape;
    private final long[] strides;
    private final Storage storage;
    private final long offsetBytes;
    private final boolean view;
    private final Tensor parent; // keeps the owner reachable while a view lives

    /** Memory behind one or more tensors. */
    private static final class Storage implements Runnable {
        final long tensorId;
        final Device device;
        final long address;      // device address, or the host buffer's address
        final long bytes;
        final ByteBuffer host;   // non-null for CPU tensors
        final boolean owned;
        final String description;
        final AtomicBoolean freed = new AtomicBoolean();
        volatile boolean explicitClose;
        volatile Stream lastStream;
        private static final Stream[] NO_STREAMS = new Stream[0];
        private static final org.bytedeco.cuda.cudart.CUevent_st[] NO_EVENTS = new org.bytedeco.cuda.cudart.CUevent_st[0];
        static final int MAX_EARLIER = 8;
        /** Events of forgotten streams kept at most; past it the oldest is waited for on the host. */
        static final int MAX_FORGOTTEN = 32;
        // every native stream it was used on (lastStream's among them), at most MAX_EARLIER; copied on write under this
        private volatile Stream[] earlier = NO_STREAMS;
        // events recorded on streams forgotten past MAX_EARLIER, not yet known complete, one per native stream (its latest:
        // an earlier event of the same stream completes before it), with their streams at the same index; guarded by this
        private org.bytedeco.cuda.cudart.CUevent_st[] forgotten = NO_EVENTS;
        private Stream[] forgottenStreams = NO_STREAMS;

        Storage(long tensorId, Device device, long address, long bytes, ByteBuffer host, boolean owned, Stream stream,
                String description) {
            this.tensorId = tensorId;
            this.device = device;
            this.address = address;
            this.bytes = bytes;
            this.host = host;
            this.owned = owned;
            this.lastStream = stream;
            this.description = description;
        }

        /**
         * Records use on {@code stream}: it becomes the last stream, and the native streams used before stay known, so
         * the free is ordered after the work of every stream, not only the last (reads on two streams, then close).
         * The same stream as the last costs one volatile read (no lock); another stream seen before, a scan of at most
         * {@value #MAX_EARLIER} entries under this storage's lock (no allocation). A new stream past
         * {@value #MAX_EARLIER} has the oldest one forgotten behind an event recorded on it now (the work it queued so
         * far), which the free waits for like the streams' own; the last stream and {@code stream} are never the one
         * forgotten, nor a stream capturing a CUDA graph (an event recorded there would be a node of that graph). One
         * event is kept per native stream; those already complete are dropped on the way, and past
         * {@value #MAX_FORGOTTEN} the oldest is waited for on the host ({@link #keepForgotten}). A record after the free
         * does nothing.
         * Where recording or waiting throws, {@code stream} is recorded all the same (its work is queued already) and the
         * oldest is kept, so that the free still waits for its work; the failure is thrown after.
         *
         * <p>Until the fiftieth session the oldest stream was synchronized instead: a weight shared by a pool of more
         * than 8 threads, each on its own default stream, made almost every call wait for another thread's queued work
         * under this lock (serializing the pool), and failed where that stream was being captured.
         *
         * <p>Until the forty-ninth session a stream seen before was recorded without the lock: a thread that found its
         * stream among the earlier ones could return and launch on it while another thread, holding the lock,
         * synchronized that stream and forgot it, so the free was not ordered after that launch (a read-only review).
         * What remains: a thread whose stream is the last returns without the lock; its stream could only be forgotten
         * after {@value #MAX_EARLIER} other streams had recorded between its check and its launch.
         */
        void record(Stream stream) {
            Stream last = lastStream;
            if (last != null && last.sameStreamAs(stream)) {
                return;  // the common case: the same native stream again (a closed view of it frees there too)
            }
            synchronized (this) {
                if (freed.get()) {
                    return;  // a record after the free (a view used after its owner closed): nothing left to order
                }
                last = lastStream;
                if (last == null || last.sameStreamAs(stream) || known(earlier, stream)) {
                    lastStream = stream;
                    return;
                }
                java.util.ArrayList<Stream> e = new java.util.ArrayList<>(earlier.length + 2);
                for (Stream x : earlier) {  // the last stream and the new one go at the end: never the oldest, never dropped
                    if (!x.destroyed() && !x.sameStreamAs(last) && !x.sameStreamAs(stream)) {
                        e.add(x);
                    }
                }
                if (!last.destroyed()) {
                    e.add(last);
                }
                e.add(stream);
                try {
                    // more than one over after an earlier failure below; never the last two (the last stream, stream)
                    for (int i = 0; e.size() > MAX_EARLIER && i < e.size() - 2; ) {
                        Stream o = e.get(i);
                        // (a capture its owner begins between this check and the event's record below is not seen: the
                        // event is then a node of that graph; as with any use of a stream another thread captures on)
                        if (o.isCapturingIfOpen()) {
                            i++;  // kept: its own free-time event would be one of the graph's nodes as well
                            continue;
                        }
                        // the event before it is forgotten: a stream dropped first and then failing to record would
                        // leave the free unordered after its work (null: destroyed, so synchronized, its work done)
                        org.bytedeco.cuda.cudart.CUevent_st ev = o.markIfOpen();
                        e.remove(i);
                        if (ev != null) {
                            keepForgotten(o, ev);
                        }
                    }
                } finally {
                    earlier = e.toArray(NO_STREAMS);
                    lastStream = stream;
                }
            }
        }

        /**
         * Keeps the event of forgotten stream {@code o} (under this storage's lock), in place of an earlier one of the
         * same native stream (destroyed: it completes before the new one), so at most one per stream. Then drops those
         * already complete, and past {@value #MAX_FORGOTTEN} (as many streams) waits for the oldest on the host. The
         * queries and waits run in relaxed capture mode: in the default mode they are calls that invalidate a graph
         * being captured in global mode on any thread, or on this one. A failed query or wait keeps its event (the free
         * meets the error again) and throws.
         */
        private void keepForgotten(Stream o, org.bytedeco.cuda.cudart.CUevent_st ev) {
            int n = forgotten.length;
            java.util.ArrayList<org.bytedeco.cuda.cudart.CUevent_st> evs = new java.util.ArrayList<>(n + 1);
            java.util.ArrayList<Stream> sts = new java.util.ArrayList<>(n + 1);
            for (int i = 0; i < n; i++) {
                if (forgottenStreams[i].sameStreamAs(o)) {
                    cudart.cudaEventDestroy(forgotten[i]);
                } else {
                    evs.add(forgotten[i]);
                    sts.add(forgottenStreams[i]);
                }
            }
            evs.add(ev);
            sts.add(o);
            setForgotten(evs, sts);  // kept before anything below can throw
            CudaDevice d = Gpu.device(device);
            d.activate();
            int[] mode = {cudart.cudaStreamCaptureModeRelaxed};
            d.check(cudart.cudaThreadExchangeStreamCaptureMode(mode), "cudaThreadExchangeStreamCaptureMode(relaxed)");
            int failure = 0;
            try {
                for (int i = 0; i < evs.size() - 1 && failure == 0; ) {  // the new one is not complete yet, or soon
                    int rc = cudart.cudaEventQuery(evs.get(i));
                    if (rc == cudart.cudaSuccess) {
                        cudart.cudaEventDestroy(evs.remove(i));
                        sts.remove(i);
                    } else if (rc == cudart.cudaErrorNotReady) {
                        cudart.cudaGetLastError();  // not an error (as Event.isComplete)
                        i++;
                    } else {
                        failure = rc;
                    }
                }
                while (failure == 0 && evs.size() > MAX_FORGOTTEN) {  // that many streams: bound the events this holds
                    int rc = cudart.cudaEventSynchronize(evs.get(0));
                    if (rc != 0) {
                        failure = rc;
                    } else {
                        cudart.cudaEventDestroy(evs.remove(0));
                        sts.remove(0);
                    }
                }
            } finally {
                setForgotten(evs, sts);
                int restore = cudart.cudaThreadExchangeStreamCaptureMode(mode);  // mode holds the thread's previous one
                if (failure == 0) {
                    d.check(restore, "cudaThreadExchangeStreamCaptureMode(restore)");
                } else if (restore != 0) {
                    LOG.warn("restoring this thread's capture mode failed with status {} after a forgotten stream's event failed", restore);
                }
            }
            if (failure != 0) {
                d.check(failure, "cudaEventQuery/cudaEventSynchronize (a forgotten stream's event)");
            }
        }

        private void setForgotten(java.util.List<org.bytedeco.cuda.cudart.CUevent_st> evs, java.util.List<Stream> sts) {
            forgotten = evs.toArray(NO_EVENTS);
            forgottenStreams = sts.toArray(NO_STREAMS);
        }

        /** Takes the events of forgotten streams (the caller waits for and destroys them). */
        synchronized org.bytedeco.cuda.cudart.CUevent_st[] takeForgotten() {
            org.bytedeco.cuda.cudart.CUevent_st[] f = forgotten;
            forgotten = NO_EVENTS;
            forgottenStreams = NO_STREAMS;
            return f;
        }

        /**
         * Waits on the host for the events of forgotten streams (a host copy's wait); those complete are destroyed. It
         * takes them while it waits, so a free running at the same time (the owner closed during a view's host copy, a
         * misuse) does not wait for them.
         */
        private void awaitForgotten() {
            synchronized (this) {
                if (forgotten.length == 0) {
                    return;
                }
            }
            Gpu.device(device).activate();  // before the events are taken: a throw here loses none
            Stream[] sts;
            org.bytedeco.cuda.cudart.CUevent_st[] f;
            synchronized (this) {
                sts = forgottenStreams;
                f = takeForgotten();
            }
            int failure = 0;
            int i = 0;
            for (; i < f.length && failure == 0; i++) {
                failure = cudart.cudaEventSynchronize(f[i]);
                if (failure == 0) {
                    cudart.cudaEventDestroy(f[i]);
                }
            }
            if (failure != 0) {
                synchronized (this) {  // the failed one and those after it stay for the free, beside any kept meanwhile
                    java.util.ArrayList<org.bytedeco.cuda.cudart.CUevent_st> evs = new java.util.ArrayList<>(Arrays.asList(f).subList(i - 1, f.length));
                    java.util.ArrayList<Stream> ss = new java.util.ArrayList<>(Arrays.asList(sts).subList(i - 1, f.length));
                    evs.addAll(Arrays.asList(forgotten));
                    ss.addAll(Arrays.asList(forgottenStreams));
                    setForgotten(evs, ss);
                }
                Gpu.device(device).check(failure, "cudaEventSynchronize (a forgotten stream's event)");
            }
        }

        private static boolean known(Stream[] streams, Stream s) {
            for (Stream x : streams) {
                if (x.sameStreamAs(s)) {
                    return true;
                }
            }
            return false;
        }

        Stream[] earlierStreams() { return earlier; }

        /** Waits for the work queued on every stream this memory was used on other than {@code s}. */
        void awaitOtherStreams(Stream s) {
            awaitForgotten();
            Stream last = lastStream;
            if (last != null && !last.sameStreamAs(s)) {
                last.synchronizeIfOpen();
            }
            for (Stream o : earlierStreams()) {
                if (!o.sameStreamAs(s) && (last == null || !o.sameStreamAs(last))) {
                    o.synchronizeIfOpen();
                }
            }
        }

        /** Frees the memory once; runs from close() or from the Cleaner. */
        @Override public void run() {
            if (!freed.compareAndSet(false, true)) {
                return;
            }
            if (!owned || !device.isCuda()) {  // borrowed memory is not freed here: only the events of its forgotten streams
                Stream.destroyMarks(Arrays.asList(takeForgotten()));
            }
            if (owned) {
                LIVE_OWNED.decrementAndGet();
                if (host != null) {
                    HOST_BYTES.addAndGet(-Math.max(bytes, 1));
                }
            }
            if (!explicitClose) {
                LEAKS.incrementAndGet();
                LOG.warn("Leak: tensor #{} ({}) was never closed; freed by the cleaner", tensorId, description);
            }
            if (owned && device.isCuda()) {
                CudaDevice d = Gpu.device(device);
                Stream s = lastStream;
                java.util.List<org.bytedeco.cuda.cudart.CUevent_st> marks = java.util.List.of();
                try {
                    // Ordered after the last use's work on its stream (for a forgotten tensor: whichever thread's stream
                    // that was; streams are usable from any thread), and after the work queued so far on every other
                    // stream it was used on (events those streams record now, waited for by the freeing stream). A
                    // stream destroyed since then was synchronized first, so its work is done: free on this thread's
                    // default stream instead.
                    Stream[] others = earlierStreams();
                    // the events of streams forgotten past MAX_EARLIER are waited for like marks, and destroyed with them
                    org.bytedeco.cuda.cudart.CUevent_st[] forgottenEvents = takeForgotten();
                    if (forgottenEvents.length > 0) {
                        marks = new java.util.ArrayList<>(Arrays.asList(forgottenEvents));
                    }
                    if (d.stickyCause() != null && !marks.isEmpty()) {
                        Stream.destroyMarks(marks);  // the context is gone, its work with it: nothing to wait for
                        marks = java.util.List.of();
                    }
                    if (others.length > 0 && d.stickyCause() == null) {
                        marks = new java.util.ArrayList<>(marks);
                        for (Stream o : others) {
                            if (s != null && o.sameStreamAs(s)) {
                                continue;
                            }
                            try {
                                org.bytedeco.cuda.cudart.CUevent_st ev = o.markIfOpen();
                                if (ev != null) {
                                    marks.add(ev);
                                }
                            } catch (RuntimeException noEvent) {  // no event: wait on the host, unless the context is gone
                                if (d.stickyCause() == null) {
                                    try {
                                        o.synchronizeIfOpen();
                                    } catch (RuntimeException ignored) {  // latched on the device; the free still happens
                                        LOG.debug("tensor #{}: waiting for another stream failed: {}", tensorId, ignored.toString());
                                    }
                                }
                            }
                        }
                    }
                    if (s == null || !s.freeIfOpen(address, bytes, marks)) {
                        // after a sticky error free() only does the accounting: no stream is created or needed
                        Stream f = d.stickyCause() == null ? Stream.perThread(device) : null;
                        if (f != null) {
                            f.waitForMarksOrOnHost(marks);
                        }
                        d.free(address, bytes, f);
                    }
                } catch (RuntimeException e) {
                    if (!explicitClose) {
                        LOG.error("Cleaner could not free tensor #{}: {}", tensorId, e.getMessage());
                    } else {
                        throw e;
                    }
                } finally {
                    Stream.destroyMarks(marks);
                }
            }
        }
    }

    /**
     * Phantom reference from an owning tensor to its storage: enqueued (and cleared) by the GC once the tensor
     * is unreachable. {@link #clean()} frees the storage exactly once, from whichever of close(), the cleaner
     * thread or {@link #freeUnreachable()} gets there first.
     */
    private static final class OwnerRef extends PhantomReference<Tensor> {
        final Storage storage;

        OwnerRef(Tensor owner, Storage storage) {
            super(owner, UNREACHABLE);
            this.storage = storage;
            OWNED.add(this);
        }

        /** Frees the storage unless another caller took it first; true if this call freed it. */
        boolean clean() {
            if (OWNED.remove(this)) {
                storage.run();
                return true;
            }
            return false;
        }

        /** {@link #clean()} on the cleaner thread, counted so that {@link #freeUnreachable()} can wait for it. */
        void cleanOnCleanerThread() {
            synchronized (CLEANING) {  // taken from OWNED and counted at once: freeUnreachable sees one or the other
                if (!OWNED.remove(this)) {
                    return;
                }
                CLEANING[0]++;
            }
            try {
                storage.run();
            } finally {
                synchronized (CLEANING) {
                    if (--CLEANING[0] == 0) {
                        CLEANING.notifyAll();
                    }
                }
            }
        }
    }

    private static void cleanerLoop() {
        while (true) {
            try {
                ((OwnerRef) UNREACHABLE.remove()).cleanOnCleanerThread();
            } catch (InterruptedException e) {
                // daemon: keep serving
            } catch (Throwable t) {
                LOG.error("tensor cleaner: {}", t.toString());
            }
        }
    }

    private final OwnerRef ownerRef;
    private final long numel;
    /** Row-major contiguous layout, size-1 dims' strides aside (fixed at construction: shape and strides never change). */
    private final boolean contiguous;

    private Tensor(long id, Device device, DType dtype, long[] shape, long[] strides, Storage storage, long offsetBytes,
                   Tensor parent) {
        this.id = id;
        this.device = device;
        this.dtype = dtype;
        this.shape = shape;
        this.strides = strides;
        this.storage = storage;
        this.offsetBytes = offsetBytes;
        this.view = parent != null;
        this.parent = parent;
        this.numel = numel(shape);
        this.contiguous = denseRowMajor(shape, strides);
        if (parent == null && storage.owned) {
            LIVE_OWNED.incrementAndGet();
            if (storage.host != null) {
                HOST_BYTES.addAndGet(Math.max(storage.bytes, 1));
            }
            this.ownerRef = new OwnerRef(this, storage);
        } else {
            this.ownerRef = null;
        }
    }

    // ------------------------------------------------------------------ creation

    /** An uninitialised contiguous tensor, allocated on the per-thread stream for CUDA devices. */
    public static Tensor empty(Device device, DType dtype, long... shape) {
        checkDeviceAndDtype(device, dtype);
        checkShape(shape);
        return empty(device, dtype, device.isCuda() ? Stream.perThread(device) : null, shape);
    }

    /** An uninitialised contiguous tensor, allocated in stream order on {@code stream}. */
    public static Tensor empty(Device device, DType dtype, Stream stream, long... shape) {
        checkDeviceAndDtype(device, dtype);
        checkShape(shape);
        long numel = numel(shape);
        long bytes = byteCount(numel, dtype, shape);
        long id = IDS.incrementAndGet();
        String desc = describe(device, dtype, shape);
        Storage st;
        if (device.isCpu()) {
            if (bytes > Integer.MAX_VALUE) {
                throw new ArgumentException("shape", "at most 2^31-1 bytes for a CPU tensor", bytes + " bytes");
            }
            ByteBuffer buf = ByteBuffer.allocateDirect((int) Math.max(bytes, 1)).order(ByteOrder.LITTLE_ENDIAN);
            st = new Storage(id, device, 0, bytes, buf, true, null, desc);
        } else {
            if (stream == null) {
                throw new ArgumentException("stream", "a stream on " + device, "null");
            }
            if (stream.isClosed()) {
                throw new ArgumentException("stream", "an open stream on " + device, "a closed stream");
            }
            if (!stream.device().equals(device)) {
                throw new ArgumentException("stream", "a stream on " + device, "a stream on " + stream.device());
            }
            long addr = Gpu.device(device).allocate(bytes, stream);
            st = new Storage(id, device, addr, bytes, null, true, stream, desc);
        }
        return new Tensor(id, device, dtype, shape.clone(), contiguousStrides(shape), st, 0, null);
    }

    /** A tensor holding {@code data} (rounded to nearest even for F16/BF16), copied to {@code device}. */
    public static Tensor of(Device device, DType dtype, float[] data, long... shape) {
        checkDeviceAndDtype(device, dtype);
        checkShape(shape);
        checkData(data == null ? -1 : data.length, shape);
        if (!dtype.isFloating()) {
            throw new ArgumentException("dtype", "a floating dtype (F32, F16, BF16) for float data", dtype.toString());
        }
        hostBytes("data", data.length, dtype);  // before anything is allocated
        return filled(empty(device, dtype, shape), t -> t.copyFrom(data));
    }

    /**
     * The bytes {@code n} elements of {@code dt} take in one host buffer: at most 2^31-1 (a ByteBuffer's capacity),
     * else an ArgumentException naming {@code name} (the product in int would wrap).
     */
    static int hostBytes(String name, long n, DType dt) {
        long bytes = n * dt.bytes();
        if (bytes > Integer.MAX_VALUE) {
            throw new ArgumentException(name, "at most 2^31-1 bytes to stage through one host buffer",
                    n + " elements of " + dt + " = " + bytes + " bytes");
        }
        return (int) bytes;
    }

    /** An I8 tensor holding {@code data}. */
    public static Tensor ofBytes(Device device, byte[] data, long... shape) {
        checkDeviceAndDtype(device, DType.I8);
        checkShape(shape);
        checkData(data == null ? -1 : data.length, shape);
        return filled(empty(device, DType.I8, shape), t -> t.copyFromRaw(ByteBuffer.wrap(data)));
    }

    /** An I32 tensor holding {@code data}. */
    public static Tensor ofInts(Device device, int[] data, long... shape) {
        checkDeviceAndDtype(device, DType.I32);
        checkShape(shape);
        checkData(data == null ? -1 : data.length, shape);
        hostBytes("data", data.length, DType.I32);  // before anything is allocated
        return filled(empty(device, DType.I32, shape), t -> t.copyFrom(data));
    }

    /** {@code t} after {@code fill} ran on it; closed (and the failure rethrown) if {@code fill} throws. */
    private static Tensor filled(Tensor t, java.util.function.Consumer<Tensor> fill) {
        try {
            fill.accept(t);
        } catch (RuntimeException | Error e) {  // also OutOfMemoryError from the direct staging buffer: never left to the cleaner
            Closing.closeAfter(e, t);  // the fill's failure is the one the caller sees
            throw e;
        }
        return t;
    }

    /**
     * Borrows device memory owned elsewhere (another library's tensor). Gapfill never frees it; the
     * caller keeps it alive until Gapfill's work on it has finished.
     */
    public static Tensor borrow(Device device, DType dtype, long address, long[] shape, long[] strides) {
        checkDeviceAndDtype(device, dtype);
        checkShape(shape);
        if (!device.isCuda()) {
            throw new ArgumentException("device", "a CUDA device (borrowing takes a device pointer)", device.toString());
        }
        if (address == 0) {
            throw new ArgumentException("address", "a non-null device pointer", "0");
        }
        if (address % dtype.bytes() != 0) {
            throw new ArgumentException("address", "alignment to " + dtype.bytes() + " bytes for " + dtype,
                    "0x" + Long.toHexString(address));
        }
        long[] st = strides == null ? contiguousStrides(shape) : strides.clone();
        long bytes = spanBytes(shape, st, 0, dtype);
        long id = IDS.incrementAndGet();
        Storage s = new Storage(id, device, address, bytes, null, false, null, describe(device, dtype, shape));
        return new Tensor(id, device, dtype, shape.clone(), st, s, 0, null);
    }

    // ------------------------------------------------------------------ properties

    public long id() { return id; }

    public Device device() { return device; }

    public DType dtype() { return dtype; }

    public int rank() { return shape.length; }

    public long[] shape() { return shape.clone(); }

    public long dim(int i) { return shape[i < 0 ? shape.length + i : i]; }

    public long[] strides() { return strides.clone(); }

    public long stride(int i) { return strides[i < 0 ? strides.length + i : i]; }

    public long numel() { return numel; }

    /** Bytes covered by the elements (numel × element size for contiguous tensors). */
    public long byteSize() { return numel() * dtype.bytes(); }

    /**
     * Bytes from the first element to one past the last one the strides reach: {@link #byteSize()} for a contiguous
     * tensor, the strided extent for a view (what {@code [address(), address() + spanBytes())} may touch).
     */
    public long spanBytes() { return contiguous ? byteSize() : spanBytes(shape, strides, 0, dtype); }

    /**
     * Whether the elements sit where a row-major contiguous tensor's would: every dim of size other than 1 has its
     * row-major stride (a dim of size 1 is never stepped, so its stride may be anything, as in PyTorch).
     */
    public boolean isContiguous() { return contiguous; }

    public boolean isBorrowed() { return !storage.owned; }

    public boolean isView() { return view; }

    /** The tensor whose memory this view shares, or null. */
    public Tensor parent() { return parent; }

    /** True once this tensor, or a tensor whose memory it views (owned or borrowed), was closed. */
    public boolean isClosed() {
        if (storage.freed.get()) {
            return true;
        }
        // a loop, not a recursion: a view of a view of ... (a window re-viewed every step) may be thousands deep
        for (Tensor t = this; t != null; t = t.parent) {
            if (t.closedFlag) {
                return true;
            }
        }
        return false;
    }

    private volatile boolean closedFlag;

    /** Device address of element 0; throws if closed or on the CPU. */
    public long address() {
        ensureOpen("tensor");
        if (device.isCpu()) {
            throw new IllegalStateException("tensor #" + id + " lives on the CPU and has no device address");
        }
        return storage.address + offsetBytes;
    }

    /**
     * Whether this tensor's bytes and {@code other}'s overlap: device tensors by their ranges {@code [address(),
     * address() + spanBytes())} (one address space), host tensors by their byte ranges in the buffer both view (views
     * of one root tensor; tensors over different buffers, or on different kinds of device, never overlap).
     */
    public boolean overlaps(Tensor other) {
        ensureOpen("tensor");
        other.ensureOpen("other");
        if (device.isCuda() != other.device.isCuda() || (device.isCpu() && storage != other.storage)) {
            return false;
        }
        long a0 = byteStart();
        long b0 = other.byteStart();
        return a0 < b0 + other.spanBytes() && b0 < a0 + spanBytes();
    }

    /** Where the tensor's bytes start: its device address, or its offset in the host buffer it views. */
    long byteStart() {
        return device.isCuda() ? address() : offsetBytes;
    }

    /**
     * The host buffer of a CPU tensor, from element 0 to the end of the tensor's extent ({@link #spanBytes()}; a view
     * cannot write into the rest of its parent through it), little-endian.
     */
    public ByteBuffer hostBuffer() {
        ensureOpen("tensor");
        if (!device.isCpu()) {
            throw new IllegalStateException("tensor #" + id + " lives on " + device + "; copy it to the host first");
        }
        ByteBuffer b = storage.host.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.limit((int) (offsetBytes + spanBytes()));
        b.position((int) offsetBytes);
        return b.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Throws {@link ArgumentException} naming {@code argument} if the tensor was closed. */
    public void ensureOpen(String argument) {
        if (isClosed()) {
            throw new ArgumentException(argument, "an open tensor", "closed tensor #" + id);
        }
    }

    /**
     * Remembers that work on {@code stream} uses this tensor, so its memory is freed after that work, and after the work
     * of the other streams recorded before (a tensor read on two streams, then closed, is freed after both reads).
     */
    public void recordStream(Stream stream) {
        if (stream != null) {
            if (!stream.device().equals(device)) {
                // The memory is freed through the recorded stream's device: another device's would free it there.
                throw new ArgumentException("stream", "a stream on " + device, "a stream on " + stream.device());
            }
            storage.record(stream);
        }
    }

    // ------------------------------------------------------------------ views

    /** A contiguous view with a new shape over the same memory (the product of dims must match). */
    public Tensor reshape(long... newShape) {
        ensureOpen("tensor");
        checkShape(newShape);
        if (!isContiguous()) {
            throw new ArgumentException("tensor", "a contiguous tensor to reshape", "strides " + Arrays.toString(strides));
        }
        if (numel(newShape) != numel()) {
            throw new ArgumentException("shape", numel() + " elements", Arrays.toString(newShape) + " = " + numel(newShape));
        }
        return new Tensor(IDS.incrementAndGet(), device, dtype, newShape.clone(), contiguousStrides(newShape), storage,
                offsetBytes, this);
    }

    /**
     * A view of the same memory with explicit shape and strides (elements) starting {@code offset} elements in. It may
     * reach anywhere from this tensor's start to the end of its storage (as PyTorch's {@code as_strided}), so a view of a
     * view can reach past its parent view, never past the allocation.
     */
    public Tensor strided(long[] newShape, long[] newStrides, long offset) {
        ensureOpen("tensor");
        checkShape(newShape);
        if (newStrides == null) {
            throw new ArgumentException("strides", "strides of rank " + newShape.length, "null");
        }
        if (offset < 0) {
            throw new ArgumentException("offset", "an element offset >= 0", String.valueOf(offset));
        }
        byteCount(numel(newShape), dtype, newShape);  // byteSize() of a zero-stride view must not wrap (a read-only review)
        long span = spanBytes(newShape, newStrides, offset, dtype);
        if (span > storage.bytes - offsetBytes) {
            // bounded by the memory from this tensor's start to the end of its storage (as PyTorch's as_strided), not by
            // this tensor's own extent: a view of a view may reach past its parent view, never past the allocation
            throw new ArgumentException("strides", "a view inside the " + (storage.bytes - offsetBytes)
                    + " bytes of storage from this tensor's start",
                    "shape " + Arrays.toString(newShape) + " strides " + Arrays.toString(newStrides) + " offset " + offset);
        }
        return new Tensor(IDS.incrementAndGet(), device, dtype, newShape.clone(), newStrides.clone(), storage,
                offsetBytes + offset * dtype.bytes(), this);
    }

    // ------------------------------------------------------------------ copies

    /** Copies {@code data} in (converted to this tensor's float dtype, rounding to nearest even). */
    public void copyFrom(float[] data) {
        ensureOpen("tensor");
        requireFloating("copyFrom(float[])");
        checkLength(data);
        ByteBuffer b = ByteBuffer.allocateDirect(hostBytes("data", data.length, dtype)).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : data) {
            switch (dtype) {
                case F32: b.putFloat(f); break;
                case F16: b.putShort(HalfFloats.floatToHalf(f)); break;
                default: b.putShort(HalfFloats.floatToBf16(f)); break;
            }
        }
        b.flip();
        copyFromRaw(b);
    }

    /** Copies int32 {@code data} into an I32 tensor. */
    public void copyFrom(int[] data) {
        if (dtype != DType.I32) {
            throw new ArgumentException("tensor", "dtype I32 for copyFrom(int[])", dtype.toString());
        }
        ensureOpen("tensor");
        checkLength(data);
        ByteBuffer b = ByteBuffer.allocateDirect(hostBytes("data", data.length, DType.I32)).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(data);
        copyFromRaw(b);
    }

    /** Copies raw little-endian element bytes in (numel × element size bytes, contiguous tensors only). */
    public void copyFromRaw(ByteBuffer src) {
        ensureOpen("tensor");
        requireContiguous("copy");
        long n = byteSize();
        if (src == null) {
            throw new ArgumentException("src", n + " bytes", "null");
        }
        if (src.remaining() != n) {
            throw new ArgumentException("src", n + " bytes", src.remaining() + " bytes");
        }
        if (device.isCpu()) {
            hostBuffer().put(src.duplicate());
            return;
        }
        CudaDevice d = Gpu.device(device);
        d.activate();
        // The copy runs on the per-thread stream: work on another stream that still reads or writes this memory (an
        // op on a caller's stream, or the earlier owner of a block the pool handed out again on that stream) must
        // finish first, as toRaw() waits for it before reading.
        Stream s = Stream.perThread(device);
        storage.awaitOtherStreams(s);
        ByteBuffer direct = src.isDirect() ? src : ByteBuffer.allocateDirect((int) n).put(src.duplicate()).flip();
        try (BytePointer hp = new BytePointer(direct)) {
            d.check(cudart.cudaMemcpyAsync(new DevicePointer(address()), hp, n, cudart.cudaMemcpyHostToDevice, s.handle()),
                    "cudaMemcpyAsync(H2D, " + n + " bytes)");
            s.synchronize();
        } finally {  // a tensor never closed must not reach its cleaner while the copy writes its memory
            java.lang.ref.Reference.reachabilityFence(this);
        }
    }

    /** Raw little-endian element bytes of a contiguous tensor (synchronizes with the per-thread stream). */
    public ByteBuffer toRaw() {
        ensureOpen("tensor");
        requireContiguous("copy");
        long n = byteSize();
        if (n > Integer.MAX_VALUE) {
            throw new ArgumentException("tensor", "at most 2^31-1 bytes to copy to the host", n + " bytes");
        }
        ByteBuffer out = ByteBuffer.allocateDirect((int) n).order(ByteOrder.LITTLE_ENDIAN);
        if (device.isCpu()) {
            ByteBuffer h = hostBuffer();
            h.limit((int) n);
            out.put(h).flip();
            return out;
        }
        CudaDevice d = Gpu.device(device);
        d.activate();
        // Work on other streams that produced this tensor must be complete or ordered by the caller.
        Stream s = Stream.perThread(device);
        storage.awaitOtherStreams(s);
        try (BytePointer hp = new BytePointer(out)) {
            d.check(cudart.cudaMemcpyAsync(hp, new DevicePointer(address()), n, cudart.cudaMemcpyDefault, s.handle()),
                    "cudaMemcpyAsync(D2H, " + n + " bytes)");
            s.synchronize();
        } finally {  // a tensor never closed must not reach its cleaner while the copy reads its memory
            java.lang.ref.Reference.reachabilityFence(this);
        }
        return out.order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Elements as floats (F32/F16/BF16 widened exactly; I8/I32 converted). */
    public float[] toFloatArray() {
        ByteBuffer b = toRaw();
        int n = b.remaining() / dtype.bytes();
        float[] out = new float[n];
        for (int i = 0; i < n; i++) {
            out[i] = (float) readElement(b, i);
        }
        return out;
    }

    /**
     * Every element widened exactly to double, in row-major logical order (I32 stays exact: no detour through float).
     * A contiguous CPU tensor is read in place, a contiguous GPU tensor in one copy ({@link #toRaw()}: after the
     * per-thread stream's work); a strided view of a CPU tensor element by element, as {@link #getDouble} reads it. A
     * strided GPU view is refused, as by {@code toRaw()}.
     */
    public double[] toDoubleArray() {
        ensureOpen("tensor");
        if (numel > Integer.MAX_VALUE) {
            throw new ArgumentException("tensor", "at most 2^31-1 elements to copy to a double[]", String.valueOf(numel));
        }
        if (!contiguous && device.isCpu()) {
            double[] out = new double[(int) numel];
            for (int i = 0; i < out.length; i++) {
                out[i] = getDouble(i);
            }
            return out;
        }
        ByteBuffer b = device.isCpu() ? hostBuffer() : toRaw();  // toRaw refuses more than 2^31-1 bytes before out is sized
        double[] out = new double[(int) numel];
        for (int i = 0; i < out.length; i++) {
            out[i] = readElement(b, i);
        }
        return out;
    }

    /** Elements of an I32 tensor. */
    public int[] toIntArray() {
        ensureOpen("tensor");
        if (dtype != DType.I32) {
            throw new ArgumentException("tensor", "dtype I32 for toIntArray()", dtype.toString());
        }
        ByteBuffer raw = toRaw();  // refuses more than 2^31-1 bytes before anything is sized from the element count
        int[] out = new int[raw.remaining() / 4];
        raw.asIntBuffer().get(out);
        return out;
    }

    /** Elements of an I8 tensor. */
    public byte[] toByteArray() {
        ensureOpen("tensor");
        if (dtype != DType.I8) {
            throw new ArgumentException("tensor", "dtype I8 for toByteArray()", dtype.toString());
        }
        ByteBuffer raw = toRaw();
        byte[] out = new byte[raw.remaining()];
        raw.get(out);
        return out;
    }

    /** A contiguous copy of this tensor on {@code target}. */
    public Tensor to(Device target) {
        ensureOpen("tensor");
        if (target == null) {
            throw new ArgumentException("device", "a target device", "null");
        }
        Tensor src = this;
        Tensor tmp = null;
        if (!isContiguous()) {
            if (device.isCuda()) {
                throw new ArgumentException("tensor", "a contiguous tensor to copy between devices", "strides " + Arrays.toString(strides));
            }
            tmp = Tensor.empty(Device.CPU, dtype, shape);
            try {
                for (long i = 0; i < numel(); i++) {
                    tmp.setRawBits(i, getRawBits(i));
                }
            } catch (RuntimeException | Error e) {  // closed meanwhile, say: the temporary is not left to the cleaner
                Closing.closeAfter(e, tmp);
                throw e;
            }
            src = tmp;
        }
        try {
            Tensor out = Tensor.empty(target, dtype, shape);
            try {
                out.copyFromRaw(src.toRaw());
            } catch (RuntimeException | Error e) {  // also OutOfMemoryError from the direct staging buffer
                out.close();
                throw e;
            }
            return out;
        } finally {
            if (tmp != null) {
                tmp.close();  // also when the target cannot be allocated (no GPU, out of memory)
            }
        }
    }

    /**
     * Sets every byte of the tensor to {@code value} (0xFF poisons floats with NaN); stream-ordered on {@code stream}
     * only (the per-thread stream where null): unlike the host copies, it does not wait for work on other streams that
     * still reads or writes the tensor, so order those before it (an event, or the same stream).
     */
    public void fillBytes(int value, Stream stream) {
        ensureOpen("tensor");
        requireContiguous("fill");
        if (device.isCpu()) {
            ByteBuffer h = hostBuffer();
            for (int i = 0; i < byteSize(); i++) {
                h.put(i, (byte) value);
            }
            return;
        }
        if (stream != null && (stream.isClosed() || !stream.device().equals(device))) {
            throw new ArgumentException("stream", "an open stream on " + device,
                    stream.isClosed() ? "a closed stream" : "a stream on " + stream.device());
        }
        CudaDevice d = Gpu.device(device);
        d.activate();
        Stream s = stream == null ? Stream.perThread(device) : stream;
        d.check(cudart.cudaMemsetAsync(new DevicePointer(address()), value, byteSize(), s.handle()), "cudaMemsetAsync");
        recordStream(s);
    }

    /** {@link #fillBytes(int, Stream)} on the per-thread stream. */
    public void fillBytes(int value) { fillBytes(value, null); }

    // ------------------------------------------------------------------ element access (CPU tensors)

    /** Flat row-major index → byte offset inside the tensor's memory, honouring strides. */
    private long byteOffsetOf(long flat) {
        if (flat < 0 || flat >= numel) {
            throw new ArgumentException("index", "an element index in [0, " + numel + ")", String.valueOf(flat));
        }
        if (contiguous) {
            return flat * dtype.bytes();  // what the loop below gives for row-major strides, without its divisions
        }
        long off = 0;
        for (int i = shape.length - 1; i >= 0; i--) {
            long idx = flat % shape[i];
            flat /= shape[i];
            off += idx * strides[i];
        }
        return off * dtype.bytes();
    }

    /** Element {@code flat} (row-major logical index) of a CPU tensor, widened exactly to double. */
    public double getDouble(long flat) {
        ByteBuffer h = hostView();
        return readAt(h, (int) byteOffsetOf(flat));
    }

    /** Stores {@code v} at element {@code flat} of a CPU tensor, rounded once to the dtype (integers: must be exact). */
    public void setDouble(long flat, double v) {
        ByteBuffer h = hostView();
        int o = (int) byteOffsetOf(flat);
        if (!dtype.holdsExactly(v)) {
            throw new ArgumentException("value", "a whole number in the range of " + dtype, String.valueOf(v));
        }
        switch (dtype) {
            case F32: h.putFloat(o, (float) v); break;
            case F16: h.putShort(o, HalfFloats.doubleToHalf(v)); break;
            case BF16: h.putShort(o, HalfFloats.doubleToBf16(v)); break;
            case I8: h.put(o, (byte) v); break;
            default: h.putInt(o, (int) v); break;
        }
    }

    /** The raw bits of element {@code flat} of a CPU tensor (zero-extended). */
    public long getRawBits(long flat) {
        return rawAt(hostView(), (int) byteOffsetOf(flat));
    }

    /** The zero-extended raw bits of the element at byte offset {@code o} of {@code b}. */
    private long rawAt(ByteBuffer b, int o) {
        switch (dtype.bytes()) {
            case 1: return b.get(o) & 0xffL;
            case 2: return b.getShort(o) & 0xffffL;
            default: return b.getInt(o) & 0xffffffffL;
        }
    }

    /** Stores raw bits at element {@code flat} of a CPU tensor. */
    public void setRawBits(long flat, long bits) {
        ByteBuffer h = hostView();
        int o = (int) byteOffsetOf(flat);
        switch (dtype.bytes()) {
            case 1: h.put(o, (byte) bits); break;
            case 2: h.putShort(o, (short) bits); break;
            default: h.putInt(o, (int) bits); break;
        }
    }

    private ByteBuffer hostView() {
        ensureOpen("tensor");
        if (!device.isCpu()) {
            throw new IllegalStateException("element access needs a CPU tensor; tensor #" + id + " is on " + device);
        }
        ByteBuffer b = storage.host.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.position((int) offsetBytes);
        return b.slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    private double readElement(ByteBuffer contiguous, int i) {
        return readAt(contiguous, i * dtype.bytes());
    }

    private double readAt(ByteBuffer b, int o) {
        return dtype.valueOfBits(rawAt(b, o));
    }

    // ------------------------------------------------------------------ lifetime

    /**
     * Releases the memory (owned tensors; stream-ordered on the last stream that used it). A view or a
     * borrowed tensor is only marked closed. Closing twice throws {@link IllegalStateException}.
     */
    @Override public void close() {
        if (closedFlag) {
            throw new IllegalStateException("tensor #" + id + " (" + storage.description + ") closed twice");
        }
        closedFlag = true;
        if (!view && storage.owned) {
            storage.explicitClose = true;
            ownerRef.clean();
            ownerRef.clear();
        }
    }

    /** Number of tensors the cleaner had to free since start (leaks). */
    public static long leakCount() { return LEAKS.get(); }

    /** Owned tensors (host and device) whose memory is not freed yet: open ones, and forgotten ones not yet cleaned. */
    public static long liveOwnedTensors() { return LIVE_OWNED.get(); }

    /** Bytes of owned host tensors whose memory is not freed yet (device bytes: {@link CudaDevice#bytesInUse()}). */
    public static long hostBytesInUse() { return HOST_BYTES.get(); }

    /**
     * Frees, on the calling thread, every owned tensor that the garbage collector has already found unreachable
     * but the cleaner thread has not processed yet, and returns how many it freed (each is logged as a leak).
     * Call after {@link System#gc()} ({@link Resources#freeUnreachableTensors()} does both) to make the freeing
     * of forgotten tensors deterministic; device frees are stream-ordered as for {@link #close()}. Before it returns
     * it also waits (up to 30 s, then logs) for the frees the cleaner thread had already begun, which this thread no
     * longer finds among the owned tensors: so that every forgotten tensor found so far is freed when it returns.
     */
    public static int freeUnreachable() {
        int n = 0;
        for (OwnerRef r : OWNED) {
            if (r.refersTo(null) && r.clean()) {
                n++;
            }
        }
        long deadline = System.nanoTime() + CLEANER_WAIT_NANOS;
        synchronized (CLEANING) {
            while (CLEANING[0] > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn("freeUnreachable: {} free(s) of the cleaner thread still running after 30 s", CLEANING[0]);
                    break;
                }
                try {
                    CLEANING.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();  // the caller's interrupt: stop waiting, keep the flag
                    break;
                }
            }
        }
        return n;
    }

    // ------------------------------------------------------------------ helpers

    private void requireFloating(String what) {
        if (!dtype.isFloating()) {
            throw new ArgumentException("tensor", "a floating dtype (F32, F16, BF16) for " + what, dtype.toString());
        }
    }

    private void requireContiguous(String what) {
        if (!isContiguous()) {
            throw new ArgumentException("tensor", "a contiguous tensor to " + what, "strides " + Arrays.toString(strides));
        }
    }

    private void checkLength(Object data) {
        int n = data == null ? -1 : data instanceof float[] ? ((float[]) data).length : ((int[]) data).length;
        if (n != numel()) {
            throw new ArgumentException("data", numel() + " elements for shape " + Arrays.toString(shape),
                    n < 0 ? "null" : n + " elements");
        }
    }

    private static void checkData(int length, long[] shape) {
        long n = numel(shape);
        if (length != n) {
            throw new ArgumentException("data", n + " elements for shape " + Arrays.toString(shape),
                    length < 0 ? "null" : length + " elements");
        }
    }

    private static void checkDeviceAndDtype(Device device, DType dtype) {
        if (device == null) {
            throw new ArgumentException("device", "a device (Device.CPU or Device.cuda(n))", "null");
        }
        if (dtype == null) {
            throw new ArgumentException("dtype", "a dtype", "null");
        }
    }

    /** Every dimension >= 1 and the element count representable (< 2^63). */
    static void checkShape(long[] shape) {
        if (shape == null) {
            throw new ArgumentException("shape", "a shape", "null");
        }
        for (long d : shape) {
            if (d <= 0) {
                throw new ArgumentException("shape", "every dimension >= 1", Arrays.toString(shape));
            }
        }
        long n = 1;
        for (long d : shape) {
            try {
                n = Math.multiplyExact(n, d);
            } catch (ArithmeticException e) {
                throw new ArgumentException("shape", "an element count below 2^63", Arrays.toString(shape) + " overflows");
            }
        }
    }

    private static long byteCount(long numel, DType dtype, long[] shape) {
        try {
            return Math.multiplyExact(numel, (long) dtype.bytes());
        } catch (ArithmeticException e) {
            throw new ArgumentException("shape", "a byte count below 2^63", Arrays.toString(shape) + " of " + dtype + " overflows");
        }
    }

    /** Bytes from element 0 to one past the last element reached by (shape, strides) starting {@code offset} elements in. */
    private static long spanBytes(long[] shape, long[] strides, long offset, DType dtype) {
        if (strides.length != shape.length) {
            throw new ArgumentException("strides", "rank " + shape.length + " (the shape's)", "rank " + strides.length);
        }
        try {
            long span = Math.addExact(offset, 1);
            for (int i = 0; i < shape.length; i++) {
                if (strides[i] < 0) {
                    throw new ArgumentException("strides", "non-negative strides", Arrays.toString(strides));
                }
                span = Math.addExact(span, Math.multiplyExact(shape[i] - 1, strides[i]));
            }
            return Math.multiplyExact(span, (long) dtype.bytes());
        } catch (ArithmeticException e) {
            throw new ArgumentException("strides", "a span below 2^63 bytes",
                    "shape " + Arrays.toString(shape) + " strides " + Arrays.toString(strides) + " offset " + offset);
        }
    }

    static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /**
     * Whether elements laid out with these strides sit where row-major contiguous ones would: every dim of size other
     * than 1 has its row-major stride. A dim of size 1 is never stepped, so its stride does not matter (frameworks give
     * such dims various strides: a transposed column vector, an unsqueezed or sliced view).
     */
    static boolean denseRowMajor(long[] shape, long[] strides) {
        long[] dense = contiguousStrides(shape);
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] != 1 && strides[i] != dense[i]) {
                return false;
            }
        }
        return true;
    }

    /** Row-major strides (elements) of {@code shape}. */
    public static long[] contiguousStrides(long[] shape) {
        long[] s = new long[shape.length];
        long acc = 1;
        for (int i = shape.length - 1; i >= 0; i--) {
            s[i] = acc;
            acc *= shape[i];
        }
        return s;
    }

    private static String describe(Device d, DType t, long[] shape) {
        return t + Arrays.toString(shape) + " on " + d;
    }

    @Override public String toString() {
        return "Tensor#" + id + "(" + describe(device, dtype, shape) + (isContiguous() ? "" : ", strides " + Arrays.toString(strides))
                + (isBorrowed() ? ", borrowed" : "") + (view ? ", view" : "") + (isClosed() ? ", closed" : "") + ")";
    }
}
