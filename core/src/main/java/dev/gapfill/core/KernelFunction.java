package dev.gapfill.core;

import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUlaunchConfig;
import org.bytedeco.cuda.global.cudart;

/** A loaded kernel. Launch with {@link #launch}; every launch's status is checked. */
public final class KernelFunction {
    private static final boolean SYNC_DEBUG = Boolean.getBoolean("gapfill.debug.sync");

    private final CudaDevice device;
    private final String name;
    private final CUfunc_st handle;
    /** The kernel's parameter sizes in bytes, in order (see the constructor); null if the module lists none. */
    private final int[] paramSizes;
    private volatile int maxDynamicSmemSet;  // the driver's current limit for this function (see the constructor)
    private final java.util.concurrent.ConcurrentHashMap<Long, Integer> residentBlocks = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> activeClusters = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * {@code paramSizes}: the kernel's parameter sizes in bytes, in order, as the kernel build read them from the PTX
     * ({@link KernelModule}); null where the module has none (then launches go unchecked). A launch whose arguments
     * differ from them in count or size would make the kernel read other bytes than the host wrote (an i32 where the
     * kernel takes a 64-bit value reads 4 bytes of another slot; a missing argument reads whatever the buffer held):
     * never a CUDA error, only wrong results or a fault somewhere else, so {@link #launch} refuses it.
     */
    KernelFunction(CudaDevice device, String name, CUfunc_st handle, int[] paramSizes) {
        this.device = device;
        this.name = name;
        this.handle = handle;
        // without an opt-in the limit is 48 KiB minus the function's static shared memory, not 48 KiB: a launch between
        // the two would fail with a bare invalid-value error, so start from what the driver says
        int[] v = new int[1];
        device.checkDriver(cudart.cuFuncGetAttribute(v, cudart.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, handle),
                "cuFuncGetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + name + ")");
        this.maxDynamicSmemSet = v[0];
        this.paramSizes = paramSizes;
    }

    /** Null if {@code args} match the kernel's parameters in count and size (or the module lists none), else what differs. */
    String argumentMismatch(KernelArgs args) {
        int[] p = paramSizes;
        if (p == null) {
            return null;
        }
        boolean same = p.length == args.count();
        for (int i = 0; same && i < p.length; i++) {
            same = p[i] == args.size(i);
        }
        return same ? null : name + " takes " + p.length + " parameters of " + java.util.Arrays.toString(p) + " bytes; the launch passed "
                + args.count() + " of " + args.describeSizes();
    }

    public String name() { return name; }

    /**
     * Blocks of {@code blockThreads} threads with {@code smemBytes} of dynamic shared memory that fit on one SM at once
     * (the driver's occupancy calculator: this function's registers, shared memory and the per-SM limits), at least 1.
     * Cached per (threads, shared memory); used to size persistent grids.
     */
    public int residentBlocksPerSm(int blockThreads, int smemBytes) {
        long key = ((long) blockThreads << 32) | (smemBytes & 0xffffffffL);
        Integer cached = residentBlocks.get(key);
        if (cached != null) {
            return cached;
        }
        device.activate();
        allowDynamicSmem(smemBytes);
        int[] n = new int[1];
        device.checkDriver(cudart.cuOccupancyMaxActiveBlocksPerMultiprocessor(n, handle, blockThreads, smemBytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor(" + name + ", " + blockThreads + " threads, smem " + smemBytes + ")");
        int v = Math.max(1, n[0]);
        residentBlocks.put(key, v);
        return v;
    }

    /**
     * Thread-block clusters of this function (compiled with {@code __cluster_dims__}) with blocks of {@code blockThreads}
     * threads and {@code smemBytes} of dynamic shared memory that the device can hold at once (the driver's
     * {@code cuOccupancyMaxActiveClusters} for a grid of {@code gridX × gridY × gridZ}); 0 where not one cluster fits,
     * e.g. on a GPU partition whose GPCs lack the SMs for it. Cached per (grid, threads, shared memory).
     */
    public int maxActiveClusters(int gridX, int gridY, int gridZ, int blockThreads, int smemBytes) {
        String key = gridX + "x" + gridY + "x" + gridZ + "/" + blockThreads + "/" + smemBytes;
        Integer cached = activeClusters.get(key);
        if (cached != null) {
            return cached;
        }
        device.activate();
        allowDynamicSmem(smemBytes);
        int[] n = new int[1];
        try (CUlaunchConfig cfg = new CUlaunchConfig()) {
            cfg.gridDimX(gridX).gridDimY(gridY).gridDimZ(gridZ).blockDimX(blockThreads).blockDimY(1).blockDimZ(1)
                    .sharedMemBytes(smemBytes).hStream(null).attrs(null).numAttrs(0);
            device.checkDriver(cudart.cuOccupancyMaxActiveClusters(n, handle, cfg),
                    "cuOccupancyMaxActiveClusters(" + name + ", grid " + key + ")");
        }
        int v = Math.max(0, n[0]);
        activeClusters.put(key, v);
        return v;
    }

    /**
     * Opts the function into {@code smemBytes} of dynamic shared memory above its current limit (48 KiB minus its static
     * shared memory until the first opt-in; once per size increase). One function serves every thread, so the limit only ever rises: two threads asking for 100 and 64 KiB
     * at once must not leave the driver at 64 KiB while the field says 100 (the 100 KiB launches would then fail).
     */
    private void allowDynamicSmem(int smemBytes) {
        if (smemBytes <= maxDynamicSmemSet) {
            return;
        }
        if (device.profiled() && smemBytes > device.info().smemPerBlockOptin()) {
            // a device described as a smaller part (gapfill.debug.deviceAs) refuses what that part would refuse
            throw new GapfillException(name + " asks for " + smemBytes + " bytes of dynamic shared memory, over the "
                    + device.info().smemPerBlockOptin() + " a block gets on " + device.info().name());
        }
        synchronized (this) {
            // A virtual thread that waited for this monitor may resume on another carrier thread (JDK 24 and later, JEP 491),
            // where the device's context need not be current: set it again, here and for the caller's next driver call
            // (its launch), which would otherwise fail with an invalid context (a read-only review)
            device.activate();
            if (smemBytes > maxDynamicSmemSet) {
                device.checkDriver(cudart.cuFuncSetAttribute(handle, cudart.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smemBytes),
                        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES=" + smemBytes + ", " + name + ")");
                maxDynamicSmemSet = smemBytes;
            }
        }
        device.activate();
    }

    /**
     * Launches on {@code stream}. Dynamic shared memory above the function's default limit is opted into once per size.
     * With {@code -Dgapfill.debug.sync=true} each launch is followed by a stream synchronisation so that
     * a fault is reported by the launch that caused it.
     */
    public void launch(Stream stream, int gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ, int smemBytes,
                       KernelArgs args) {
        if (!stream.device().equals(device.device())) {
            throw new ArgumentException("stream", "a stream on " + device, "a stream on " + stream.device());
        }
        if (gridX <= 0 || gridY <= 0 || gridZ <= 0 || gridY > 65535 || gridZ > 65535) {
            throw new GapfillException("internal: bad grid " + gridX + "x" + gridY + "x" + gridZ + " for " + name);
        }
        String mismatch = argumentMismatch(args);
        if (mismatch != null) {
            throw new GapfillException("internal: kernel arguments do not match the kernel: " + mismatch);
        }
        device.activate();
        allowDynamicSmem(smemBytes);
        int rc = cudart.cuLaunchKernel(handle, gridX, gridY, gridZ, blockX, blockY, blockZ, smemBytes, stream.handle(),
                args.params(), null);
        if (rc != 0) {  // the message is built only on failure: every launch passes here
            device.checkDriver(rc, "cuLaunchKernel(" + name + ", grid " + gridX + "x" + gridY + "x" + gridZ + ", block "
                    + blockX + "x" + blockY + "x" + blockZ + ", smem " + smemBytes + ")");
        }
        if (SYNC_DEBUG) {
            device.check(cudart.cudaStreamSynchronize(stream.handle()), "cudaStreamSynchronize after " + name);
        }
    }
}
