package dev.gapfill.core;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.javacpp.Pointer;
import org.bytedeco.cuda.cublas.cublasContext;
import org.bytedeco.cuda.cublas.cublasLtContext;
import org.bytedeco.cuda.cudnn.cudnnContext;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudnn;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.WeakReference;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * cuBLAS, cuBLASLt and cuDNN handles. cuBLAS and cuDNN handles are kept per (thread, device) — they
 * are not safe to share across threads — and bound to the caller's stream on every use. cuBLASLt
 * handles are thread-safe and kept per device.
 *
 * <p>Lifetime: every per-thread handle is also recorded with a weak reference to its thread. Handles of
 * threads that have ended are destroyed (with the device memory cuBLAS/cuDNN hold for them) whenever a new
 * per-thread handle is created, and by {@link #releaseDeadThreads()} / {@link Resources#release}; so a
 * service whose threads come and go does not keep device memory for threads that no longer exist.
 * {@link #releaseCurrentThread()} destroys the calling thread's handles (e.g. before a pool thread retires).
 */
public final class VendorHandles {
    private static final Logger LOG = LoggerFactory.getLogger(VendorHandles.class);
    private static final ThreadLocal<Map<Integer, cublasContext>> CUBLAS = ThreadLocal.withInitial(HashMap::new);
    private static final ThreadLocal<Map<Integer, cudnnContext>> CUDNN = ThreadLocal.withInitial(HashMap::new);
    private static final Map<Integer, cublasLtContext> LT = new ConcurrentHashMap<>();

    /**
     * The math mode of every cuBLAS handle Gapfill creates: cuBLAS's default, except that reductions stay in the compute
     * type. By default cuBLAS may reduce split-K partials of F16/BF16 GEMMs in the output type, rounding each partial to
     * 16 bits: on an H200 a BF16 bmm with a shared B (6 rows of 10 and 30 k) came back 1 BF16 ulp off the rounded result
     * and 73 ulps off near zero, outside the bmm tolerance policy (validation record at 190f262, initcheck over
     * BmmGpuTest). Ops that set the math mode per call (bmm) set this value.
     */
    public static final int CUBLAS_MATH_MODE = cublas.CUBLAS_DEFAULT_MATH | cublas.CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;

    /** One per-thread handle: its thread (weakly), device and library. */
    private static final class Owned {
        final WeakReference<Thread> owner;
        final int ordinal;
        final boolean dnn;
        final Pointer handle;

        Owned(Thread owner, int ordinal, boolean dnn, Pointer handle) {
            this.owner = new WeakReference<>(owner);
            this.ordinal = ordinal;
            this.dnn = dnn;
            this.handle = handle;
        }

        boolean ownerDead() {
            Thread t = owner.get();
            return t == null || !t.isAlive();
        }
    }

    private static final java.util.Set<Owned> OWNED = ConcurrentHashMap.newKeySet();
    private static volatile Throwable cudnnLoadFailure;
    private static volatile boolean cudnnLoaded;

    private VendorHandles() {}

    /** The calling thread's cuBLAS handle for the stream's device, bound to {@code stream}. */
    public static cublasContext cublas(Stream stream) {
        CudaDevice d = stream.cudaDevice();
        d.activate();
        cublasContext h = CUBLAS.get().get(d.ordinal());
        if (h == null) {
            refuseCreationUnderCapture(stream, "cuBLAS");
            releaseDeadThreads();
            d.activate();
            h = new cublasContext();
            checkBlas(d, cublas.cublasCreate_v2(h), "cublasCreate");
            try {
                checkBlas(d, cublas.cublasSetMathMode(h, CUBLAS_MATH_MODE), "cublasSetMathMode");
            } catch (RuntimeException e) {
                cublas.cublasDestroy_v2(h);  // not yet in the thread's map nor in OWNED: nothing else would free it
                throw e;
            }
            CUBLAS.get().put(d.ordinal(), h);
            OWNED.add(new Owned(Thread.currentThread(), d.ordinal(), false, h));
        }
        checkBlas(d, cublas.cublasSetStream_v2(h, stream.handle()), "cublasSetStream");
        return h;
    }

    /** The device's cuBLASLt handle (thread-safe; the stream is passed per call). */
    public static cublasLtContext cublasLt(CudaDevice d) {
        d.activate();
        return LT.computeIfAbsent(d.ordinal(), k -> {
            cublasLtContext h = new cublasLtContext();
            checkBlas(d, cublas.cublasLtCreate(h), "cublasLtCreate");
            return h;
        });
    }

    /** The calling thread's cuDNN handle for the stream's device, bound to {@code stream}. */
    public static cudnnContext cudnn(Stream stream) {
        ensureCudnn();
        CudaDevice d = stream.cudaDevice();
        d.activate();
        cudnnContext h = CUDNN.get().get(d.ordinal());
        if (h == null) {
            refuseCreationUnderCapture(stream, "cuDNN");
            releaseDeadThreads();
            d.activate();
            h = new cudnnContext();
            checkDnn(d, cudnn.cudnnCreate(h), "cudnnCreate");
            CUDNN.get().put(d.ordinal(), h);
            OWNED.add(new Owned(Thread.currentThread(), d.ordinal(), true, h));
        }
        checkDnn(d, cudnn.cudnnSetStream(h, stream.handle()), "cudnnSetStream");
        return h;
    }

    /**
     * A thread's first handle is not made while {@code stream} is being captured: its creation allocates device memory
     * and the destruction of ended threads' handles before it synchronizes the device, either of which invalidates the
     * capture with a raw CUDA error (a read-only review, fiftieth session: bmm's vendor path reached it). Refused before
     * any of it, naming the stream, so the capture stays valid; a vendor call of the op once outside the capture, on
     * this thread, makes the handle.
     */
    private static void refuseCreationUnderCapture(Stream stream, String library) {
        if (stream.isCapturing()) {
            throw new ArgumentException("stream", "a thread whose " + library + " handle exists before the capture (run the op's"
                    + " vendor path once outside the capture on this thread), or the CUSTOM path", "a capturing stream on a thread"
                    + " without a " + library + " handle");
        }
    }

    /** Per-thread cuBLAS and cuDNN handles that exist now (all threads, all devices). */
    public static int perThreadHandles() { return OWNED.size(); }

    /** Per-thread handles whose thread has ended and that are not destroyed yet. */
    public static int deadThreadHandles() {
        int n = 0;
        for (Owned o : OWNED) {
            n += o.ownerDead() ? 1 : 0;
        }
        return n;
    }

    /** cuBLASLt handles that exist now (one per device used). */
    public static int cublasLtHandles() { return LT.size(); }

    /**
     * Destroys the cuBLAS and cuDNN handles of threads that have ended; returns how many. Safe at any time:
     * a thread that has ended cannot be using its handles. (Destroying a handle synchronizes its device.)
     */
    public static int releaseDeadThreads() {
        int n = 0;
        for (Owned o : OWNED) {
            if (o.ownerDead() && OWNED.remove(o)) {
                destroy(o);
                n++;
            }
        }
        return n;
    }

    /** Destroys the calling thread's cuBLAS and cuDNN handles (recreated on its next vendor call); returns how many. */
    public static int releaseCurrentThread() {
        Thread me = Thread.currentThread();
        int n = 0;
        for (Owned o : OWNED) {
            if (o.owner.get() == me && OWNED.remove(o)) {
                destroy(o);
                n++;
            }
        }
        CUBLAS.get().clear();
        CUDNN.get().clear();
        return n;
    }

    /**
     * Destroys the cuBLASLt handle of {@code device} (null: every device); returns how many. Only while no
     * other thread runs Gapfill work on that device: the handle is shared by all threads (recreated on demand).
     */
    public static int releaseCublasLt(Device device) {
        int n = 0;
        for (Map.Entry<Integer, cublasLtContext> e : LT.entrySet()) {
            if ((device == null || (device.isCuda() && device.ordinal() == e.getKey())) && LT.remove(e.getKey(), e.getValue())) {
                CudaDevice d = Gpu.device(e.getKey());
                if (d.stickyCause() == null) {
                    d.activate();
                    int st = cublas.cublasLtDestroy(e.getValue());
                    if (st != 0) {
                        LOG.warn("cublasLtDestroy on {} returned {}", d, blasStatusName(st));
                    }
                }
                n++;
            }
        }
        return n;
    }

    private static void destroy(Owned o) {
        CudaDevice d = Gpu.device(o.ordinal);
        if (d.stickyCause() != null) {
            return; // the context is unusable; its memory goes with it
        }
        d.activate();
        int st = o.dnn ? cudnn.cudnnDestroy((cudnnContext) o.handle) : cublas.cublasDestroy_v2((cublasContext) o.handle);
        if (st != 0) {
            LOG.warn("{} of an ended thread's handle on {} returned status {}", o.dnn ? "cudnnDestroy" : "cublasDestroy", d, st);
        }
    }

    private static void ensureCudnn() {
        if (cudnnLoaded) {
            return;
        }
        synchronized (VendorHandles.class) {
            if (cudnnLoaded) {
                return;
            }
            if (cudnnLoadFailure == null) {
                try {
                    Loader.load(cudnn.class);
                    cudnnLoaded = true;
                    return;
                } catch (Throwable t) {
                    cudnnLoadFailure = t;
                }
            }
            throw new GpuUnavailableException("cuDNN 9 is not loadable (install libcudnn9 for CUDA 13 and put it on the "
                    + "library path; no Maven jar carries it for these presets): " + cudnnLoadFailure, cudnnLoadFailure);
        }
    }

    /** cuDNN version as an integer (e.g. 91400), or -1 if cuDNN cannot be loaded. */
    public static long cudnnVersion() {
        try {
            ensureCudnn();
            return cudnn.cudnnGetVersion();
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** cuBLAS version as an integer (e.g. 130100), or -1 if cuBLAS cannot be loaded. */
    static int cublasVersion(CudaDevice d) {
        try {
            Loader.load(cublas.class);
            return (int) cublas.cublasLtGetVersion();
        } catch (Throwable t) {
            return -1;
        }
    }

    /** Checks a cuBLAS / cuBLASLt status. */
    public static void checkBlas(CudaDevice d, int status, String call) {
        if (status != 0) {
            if (status == 14 /* CUBLAS_STATUS_INTERNAL_ERROR */ || status == 13 /* EXECUTION_FAILED */) {
                throwIfSticky(d, call);
            }
            throw blasError(status, call + " on " + d);
        }
    }

    /** The exception for a failed cuBLAS status: out of memory where the library could not allocate (the device stays usable). */
    static CudaException blasError(int status, String where) {
        String name = blasStatusName(status);
        if (status == 3 /* CUBLAS_STATUS_ALLOC_FAILED */) {
            return new DeviceOutOfMemoryException(CudaException.Library.CUBLAS, status, name, where, -1,
                    "cuBLAS could not allocate device memory");
        }
        return new CudaException(CudaException.Library.CUBLAS, status, name, where, "");
    }

    /** A vendor call that failed in execution is often the symptom of an earlier sticky fault: let the runtime say so. */
    private static void throwIfSticky(CudaDevice d, String call) {
        int rt = org.bytedeco.cuda.global.cudart.cudaGetLastError();
        if (CudaErrors.isSticky(rt)) {
            CudaException sticky = CudaErrors.runtimeError(rt, call + " on " + d, -1);
            d.latch(sticky);
            throw sticky;
        }
    }

    /** Checks a cuDNN status. */
    public static void checkDnn(CudaDevice d, int status, String call) {
        if (status != 0) {
            String name;
            try {
                name = cudnn.cudnnGetErrorString(status).getString();
            } catch (Throwable t) {
                name = "cudnnStatus " + status;
            }
            // cuDNN 9 statuses come in classes of 1000 with sub-codes: 4xxx internal errors, 5xxx execution failures.
            if (status / 1000 == 4 || status / 1000 == 5) {
                throwIfSticky(d, call);
            }
            throw dnnError(status, name, call + " on " + d);
        }
    }

    /**
     * The exception for a failed cuDNN status: out of memory where the library could not allocate device memory. cuDNN 9
     * splits allocation failures: 4004 is device memory, 4003 host memory (CUDNN_STATUS_ALLOC_FAILED is a deprecated
     * alias of 4003), which freeing tensors does not help.
     */
    static CudaException dnnError(int status, String name, String where) {
        if (status == 4004 /* CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED */) {
            return new DeviceOutOfMemoryException(CudaException.Library.CUDNN, status, name, where, -1,
                    "cuDNN could not allocate device memory");
        }
        if (status == 4003 /* CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED */) {
            return new CudaException(CudaException.Library.CUDNN, status, name, where, "cuDNN could not allocate host memory");
        }
        return new CudaException(CudaException.Library.CUDNN, status, name, where, "");
    }

    static String blasStatusName(int s) {
        switch (s) {
            case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
            case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
            case 7: return "CUBLAS_STATUS_INVALID_VALUE";
            case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
            case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
            case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
            case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
            case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
            case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
            default: return "cublasStatus " + s;
        }
    }
}
