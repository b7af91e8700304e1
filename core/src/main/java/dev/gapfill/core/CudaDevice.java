package dev.gapfill.core;

import org.bytedeco.javacpp.LongPointer;
import org.bytedeco.javacpp.PointerPointer;
import org.bytedeco.cuda.cudart.CUmemPoolHandle_st;
import org.bytedeco.cuda.cudart.cudaDeviceProp;
import org.bytedeco.cuda.global.cudart;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Per-device runtime state: properties, the stream-ordered memory pool and its statistics, and the
 * sticky-error latch. Obtain through {@link Gpu#device(int)}.
 */
public final class CudaDevice {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(CudaDevice.class);
    /** What activate() and free() keep per thread: one lookup per call. */
    private static final class ThreadState {
        /** cudaGetDevice's out-parameter (no native allocation per call). */
        final int[] current = new int[1];
        /**
         * A virtual thread (Java 21+): only then can the OS thread under it change between calls, so only then does
         * activate() ask the driver which context is current ({@link #contextCurrent}); a platform thread skips that call.
         */
        final boolean virtual = isVirtual(Thread.currentThread());
        /** cuCtxGetDevice's out-parameter, for virtual threads. */
        final org.bytedeco.javacpp.IntPointer contextDevice = virtual ? Pointers.outliveScopes(new org.bytedeco.javacpp.IntPointer(1)) : null;
        /**
         * Bit d set once this thread has called cudaSetDevice(d) (ordinals below 64; higher ones call it every time):
         * cudaGetDevice answers 0 on a fresh thread without making any context current, and the driver-API launches and
         * module loads then fail with an invalid context, so a thread's first activation of a device always sets it.
         * For a virtual thread the bit is the virtual thread's, but the current context is its carrier's (an OS thread
         * it may have left since), so there a set bit is trusted only while a context of the device is current.
         */
        long contextSet;
    }

    private static final ThreadLocal<ThreadState> THREAD = ThreadLocal.withInitial(ThreadState::new);

    /** {@code Thread.isVirtual()} where the runtime has it (Java 21+; this library targets 17), else null. */
    private static final java.lang.invoke.MethodHandle IS_VIRTUAL = isVirtualHandle();

    private static java.lang.invoke.MethodHandle isVirtualHandle() {
        try {
            return java.lang.invoke.MethodHandles.publicLookup().findVirtual(Thread.class, "isVirtual",
                    java.lang.invoke.MethodType.methodType(boolean.class));
        } catch (ReflectiveOperationException e) {
            return null;  // Java 17 to 20: no virtual threads
        }
    }

    static boolean isVirtual(Thread t) {
        if (IS_VIRTUAL == null) {
            return false;
        }
        try {
            return (boolean) IS_VIRTUAL.invokeExact(t);
        } catch (Throwable e) {
            return false;
        }
    }

    private final int ordinal;
    private volatile DeviceInfo info;
    private volatile CudaException stickyCause;
    private final AtomicLong bytesInUse = new AtomicLong();
    private final AtomicLong peakBytes = new AtomicLong();
    private final AtomicLong liveAllocations = new AtomicLong();
    private final CUmemPoolHandle_st pool = new CUmemPoolHandle_st();

    CudaDevice(int ordinal) {
        this.ordinal = ordinal;
        activate();
        CudaErrors.check(cudart.cudaFree(null), "cudaFree(null) [context init on cuda:" + ordinal + "]");
        CudaErrors.check(cudart.cudaDeviceGetDefaultMemPool(pool, ordinal), "cudaDeviceGetDefaultMemPool(" + ordinal + ")");
        // Keep freed blocks in the pool: returning them to the driver at every synchronisation makes
        // cudaMallocAsync slow. trim() gives them back on request.
        try (LongPointer threshold = new LongPointer(1)) {
            threshold.put(0, Long.MAX_VALUE);
            CudaErrors.check(cudart.cudaMemPoolSetAttribute(pool, cudart.cudaMemPoolAttrReleaseThreshold, threshold),
                    "cudaMemPoolSetAttribute(ReleaseThreshold)");
        }
    }

    public int ordinal() { return ordinal; }

    public Device device() { return Device.cuda(ordinal); }

    /**
     * Makes this device current on the calling thread and fails fast if an earlier sticky error corrupted its context.
     * It asks the runtime which device is current on every call (a thread-local read inside cudart) rather than
     * remembering what it set last: another library on the same thread (ONNX Runtime's CUDA provider, PyTorch, the
     * caller's own {@code cudaSetDevice}) may have moved it since, and a launch into another device's context fails.
     * It sets the device when it differs, and on a thread's first activation of it (a fresh thread reads device 0 with
     * no context current), and leaves it current afterwards. On a virtual thread it makes the device current on the
     * carrier thread it runs on now (CUDA's current context belongs to the OS thread); a virtual thread that blocks
     * between this call and its CUDA calls may resume on another carrier, so activate again after blocking.
     */
    public void activate() {
        CudaException sticky = stickyCause;
        if (sticky != null) {
            StickyCudaException again = new StickyCudaException(sticky.library(), sticky.status(), sticky.statusName(),
                    "cuda:" + ordinal + " is unusable since an earlier failure in " + sticky.call(),
                    "restart the process to use this device again");
            again.initCause(sticky);  // the first failure's stack: where the device was lost
            throw again;
        }
        ThreadState t = THREAD.get();
        check(cudart.cudaGetDevice(t.current), "cudaGetDevice");
        long bit = ordinal < 64 ? 1L << ordinal : 0;
        if (t.current[0] != ordinal || (t.contextSet & bit) == 0 || t.virtual && !contextCurrent(t)) {
            check(cudart.cudaSetDevice(ordinal), "cudaSetDevice(" + ordinal + ")");  // makes its primary context current
            t.contextSet |= bit;
        }
    }

    /**
     * Whether a context of this device is current on the OS thread running the caller: a virtual thread that set the
     * device on one carrier may now run on another, where no context (cudaGetDevice then answers 0) is current. Any
     * failure (no context: CUDA_ERROR_INVALID_CONTEXT) answers false, and the caller sets the device.
     */
    private boolean contextCurrent(ThreadState t) {
        return cudart.cuCtxGetDevice(t.contextDevice) == 0 && t.contextDevice.get() == ordinal;
    }

    /**
     * Runs a status check and latches sticky errors so that later calls fail fast. A failure that is not sticky is also
     * cleared from the thread's last-error state: several callers catch it and go on (a host wait instead of a stream
     * wait), and a caller's own {@code cudaGetLastError} must not read it later (a read-only review, fiftieth session).
     */
    public void check(int status, String call) {
        if (status != 0) {
            CudaException e = CudaErrors.runtimeError(status, call + " on cuda:" + ordinal, -1);
            latch(e);
            if (!(e instanceof StickyCudaException)) {
                cudart.cudaGetLastError();
            }
            throw e;
        }
    }

    /** Driver-API variant of {@link #check}. */
    public void checkDriver(int status, String call) {
        if (status == 0) {
            return;  // no message built for a success
        }
        try {
            CudaErrors.checkDriver(status, call + " on cuda:" + ordinal);
        } catch (CudaException e) {
            latch(e);
            throw e;
        }
    }

    /** Records a sticky failure; later calls on this device throw {@link StickyCudaException} at once. */
    public void latch(CudaException e) {
        if (e instanceof StickyCudaException && stickyCause == null) {
            synchronized (this) {  // the first sticky failure stays the cause; a second one racing it does not replace it
                if (stickyCause == null) {
                    stickyCause = e;
                }
            }
        }
    }

    /** The sticky failure that made this device unusable, or null. */
    public CudaException stickyCause() { return stickyCause; }

    /** System property naming a {@link DeviceInfo#asProfile profile} this device is described as (tests only). */
    public static final String DEVICE_AS = "gapfill.debug.deviceAs";

    private volatile DeviceInfo realInfo;

    /** {@code real} described as {@code profile} ({@link DeviceInfo#asProfile}); {@code real} itself for an empty one. */
    static DeviceInfo applyDeviceAs(DeviceInfo real, String profile) {
        return profile == null || profile.isEmpty() ? real : real.asProfile(profile);
    }

    /** The properties as the hardware reports them, whatever {@link #DEVICE_AS} says. */
    public DeviceInfo realInfo() {
        info();
        return realInfo;
    }

    /** Whether {@link #info()} describes this device as another part ({@link #DEVICE_AS}). */
    public boolean profiled() {
        return info() != realInfo();
    }

    /** Properties read from the device (cached after the first call); see {@link #DEVICE_AS}. */
    public DeviceInfo info() {
        DeviceInfo i = info;
        if (i == null) {
            activate();
            try (cudaDeviceProp p = new cudaDeviceProp()) {
                check(cudart.cudaGetDeviceProperties(p, ordinal), "cudaGetDeviceProperties");
                int[] v = new int[1];
                check(cudart.cudaDriverGetVersion(v), "cudaDriverGetVersion");
                int driver = v[0];
                check(cudart.cudaRuntimeGetVersion(v), "cudaRuntimeGetVersion");
                int runtime = v[0];
                int optin = attr(cudart.cudaDevAttrMaxSharedMemoryPerBlockOptin);
                i = new DeviceInfo(ordinal, p.name().getString(), p.major(), p.minor(), p.multiProcessorCount(),
                        attr(cudart.cudaDevAttrL2CacheSize), optin, p.sharedMemPerMultiprocessor(), p.totalGlobalMem(),
                        driver, runtime, VendorHandles.cublasVersion(this), VendorHandles.cudnnVersion());
            }
            realInfo = i;
            DeviceInfo real = i;
            i = applyDeviceAs(i, System.getProperty(DEVICE_AS, ""));
            if (i != real) {  // testing only: the heuristics choose for a pre-Hopper part on this hardware
                LOG.warn("{} is described as {} ({}): the heuristics choose for that part; a setting for tests, not for use",
                        real, i, DEVICE_AS);
            } else if (i.cc() >= 90 && "1".equals(System.getenv("CUDA_FORCE_PTX_JIT"))) {
                // the sm_90a-only families (wgmma tiles, clusters) exist only as SASS; their PTX bodies trap, and a trap
                // is a sticky error (a read-only review, fiftieth session)
                LOG.warn("{}: CUDA_FORCE_PTX_JIT=1 runs the compute_80 PTX, where Gapfill's Hopper-only kernels trap (a sticky"
                        + " error); unset it, or describe the device as a pre-Hopper part with -D{}=a100", i, DEVICE_AS);
            }
            info = i;
        }
        return i;
    }

    private int attr(int attribute) {
        int[] v = new int[1];
        check(cudart.cudaDeviceGetAttribute(v, attribute, ordinal), "cudaDeviceGetAttribute(" + attribute + ")");
        return v[0];
    }

    /** Allocates {@code bytes} from the device's stream-ordered pool, ordered on {@code stream}. */
    long allocate(long bytes, Stream stream) {
        activate();
        long size = Math.max(bytes, 1);
        AllocScratch out = ALLOC_SCRATCH.get();
        int rc = cudart.cudaMallocAsync(out.ptr, size, stream.handle());
        if (rc != 0) {
            cudart.cudaGetLastError(); // clear the non-sticky OOM so the next call does not see it
            CudaException e = CudaErrors.runtimeError(rc, "cudaMallocAsync(" + size + " bytes) on cuda:" + ordinal, size);
            if (rc == 2) {
                throw new DeviceOutOfMemoryException(e.library(), rc, e.statusName(), e.call(), size,
                        "could not allocate " + size + " bytes (in use by Gapfill: " + bytesInUse.get() + ")");
            }
            latch(e);
            throw e;
        }
        long addr = out.slot.get(0);
        long now = bytesInUse.addAndGet(size);
        liveAllocations.incrementAndGet();
        peakBytes.accumulateAndGet(now, Math::max);
        return addr;
    }

    /**
     * The calling thread's out-parameter for {@code cudaMallocAsync}: one native slot, seen as the {@code void**} the call
     * writes, so that an allocation allocates nothing on the host (a new PointerPointer and the Pointer of its result
     * were two JavaCPP objects, one with native memory, per tensor).
     */
    private static final class AllocScratch {
        final LongPointer slot = Pointers.outliveScopes(new LongPointer(1));
        final PointerPointer<?> ptr = new PointerPointer<>(slot);  // shares slot's reference count
    }

    private static final ThreadLocal<AllocScratch> ALLOC_SCRATCH = ThreadLocal.withInitial(AllocScratch::new);

    /** Returns memory to the pool, ordered after the work already queued on {@code stream}. */
    void free(long address, long bytes, Stream stream) {
        long size = Math.max(bytes, 1);
        if (stickyCause == null) {  // else the context is gone, and the memory with it
            int[] cur = THREAD.get().current;
            int step = 0;  // which call failed, so that the message is built only on failure: 0 get, 1 set, 2 free
            int rc = cudart.cudaGetDevice(cur);
            if (rc == 0 && cur[0] != ordinal) {  // as in activate(): another library may have moved the current device
                step = 1;
                rc = cudart.cudaSetDevice(ordinal);
            }
            if (rc == 0) {
                step = 2;
                rc = cudart.cudaFreeAsync(new DevicePointer(address), stream.rawHandle());
            }
            if (rc != 0) {
                String call = step == 0 ? "cudaGetDevice to free memory"
                        : step == 1 ? "cudaSetDevice(" + ordinal + ") to free memory" : "cudaFreeAsync on cuda:" + ordinal;
                CudaException e = CudaErrors.runtimeError(rc, call, -1);
                latch(e);
                if (e instanceof StickyCudaException) {
                    bytesInUse.addAndGet(-size);  // gone with the context
                    liveAllocations.decrementAndGet();
                }
                throw e;  // otherwise not freed: it stays counted as in use
            }
        }
        bytesInUse.addAndGet(-size);
        liveAllocations.decrementAndGet();
    }

    /** Bytes currently allocated through Gapfill on this device. */
    public long bytesInUse() { return bytesInUse.get(); }

    /** Largest {@link #bytesInUse()} seen since start or the last {@link #resetPeak()}. */
    public long peakBytes() { return peakBytes.get(); }

    /** Number of live Gapfill allocations on this device. */
    public long liveAllocations() { return liveAllocations.get(); }

    public void resetPeak() { peakBytes.set(bytesInUse.get()); }

    /** Bytes the pool hands out right now (all users of the default pool, Gapfill included). */
    public long poolUsedBytes() {
        activate();
        try (LongPointer v = new LongPointer(1)) {
            check(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrUsedMemCurrent, v), "cudaMemPoolGetAttribute(UsedMemCurrent)");
            return v.get(0);
        }
    }

    /** Bytes the pool has reserved from the driver. */
    public long poolReservedBytes() {
        activate();
        try (LongPointer v = new LongPointer(1)) {
            check(cudart.cudaMemPoolGetAttribute(pool, cudart.cudaMemPoolAttrReservedMemCurrent, v), "cudaMemPoolGetAttribute(ReservedMemCurrent)");
            return v.get(0);
        }
    }

    /** Synchronizes the device, then returns the pool's unused memory to the driver. */
    public void trim() {
        synchronize();
        check(cudart.cudaMemPoolTrimTo(pool, 0), "cudaMemPoolTrimTo");
    }

    /** Waits for all work on the device. */
    public void synchronize() {
        activate();
        check(cudart.cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }

    /** Free and total device memory as the driver reports them. */
    public long[] memInfo() {
        activate();
        try (org.bytedeco.javacpp.SizeTPointer free = new org.bytedeco.javacpp.SizeTPointer(1);
             org.bytedeco.javacpp.SizeTPointer total = new org.bytedeco.javacpp.SizeTPointer(1)) {
            check(cudart.cudaMemGetInfo(free, total), "cudaMemGetInfo");
            return new long[] {free.get(0), total.get(0)};
        }
    }

    @Override public String toString() { return "cuda:" + ordinal; }
}
