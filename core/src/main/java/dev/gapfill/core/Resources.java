package dev.gapfill.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Gives back what Gapfill holds beyond the tensors its caller has open: forgotten tensors that the garbage
 * collector found unreachable, per-shape caches of the ops (cuDNN plans, cuBLASLt algorithms, one-shot plans), the vendor
 * handles and default streams of threads that have ended, the shared cuBLASLt handle, and the pool's unused reserve.
 *
 * <p>What is held, and why: Gapfill keeps device memory only in tensors (open, or forgotten and not yet
 * cleaned) — {@link CudaDevice#bytesInUse()} counts exactly those; the ops' caches hold some of them (the one-shot calls
 * of the int8 GEMM and of attention decode keep their plans' workspaces per thread, up to 8 MiB each). cuBLAS and cuDNN keep their own device
 * workspaces per handle (not in that count, and not in the pool); the other caches keep host-side descriptors.
 * {@link #release} brings {@code bytesInUse} back to what the caller's open tensors hold, destroys the
 * handles and default streams of ended threads and empties the caches (they refill on demand).
 *
 * <p>Ops modules contribute their caches through {@link ServiceLoader} ({@link Cache}).
 */
public final class Resources {
    private static final Logger LOG = LoggerFactory.getLogger(Resources.class);

    private Resources() {}

    /** A cache an ops module keeps; registered as a {@link ServiceLoader} service of this interface. */
    public interface Cache {
        /** Short name for reports, e.g. "depthwise_conv3x3 cuDNN plans". */
        String name();

        /** Entries the cache holds now for {@code device} (null: all devices). */
        int size(Device device);

        /** Destroys the entries of {@code device} (null: all devices); returns how many. Called with no work in flight. */
        int release(Device device);
    }

    /**
     * What {@link #release} did.
     *
     * @param unreachableTensorsFreed forgotten tensors freed (each also logged as a leak)
     * @param cacheEntriesReleased    op cache entries destroyed
     * @param deadThreadHandles       cuBLAS/cuDNN handles of ended threads destroyed
     * @param cublasLtHandles         cuBLASLt handles destroyed
     * @param bytesInUseBefore        {@link CudaDevice#bytesInUse()} when called (0 for the CPU)
     * @param bytesInUseAfter         the same after the release and a synchronisation
     * @param poolUsedBytesAfter      {@link CudaDevice#poolUsedBytes()} after (0 for the CPU)
     * @param endedThreadStreams      default streams of ended threads synchronized and destroyed ({@link Stream#perThread})
     */
    public record Report(int unreachableTensorsFreed, int cacheEntriesReleased, int deadThreadHandles, int cublasLtHandles,
                         long bytesInUseBefore, long bytesInUseAfter, long poolUsedBytesAfter, int endedThreadStreams) {}

    /**
     * Runs the garbage collector and frees, on the calling thread, every owned tensor it found unreachable (two
     * rounds, so that tensors reachable only from other unreachable objects are found too); returns how many.
     * Without this, forgotten tensors are freed by the cleaner thread at some later time.
     */
    public static int freeUnreachableTensors() {
        int n = 0;
        for (int round = 0; round < 2; round++) {
            System.gc();
            n += Tensor.freeUnreachable();
        }
        return n;
    }

    /**
     * Releases everything Gapfill holds for {@code device} (null: every device this process has used; a device it
     * never used is not initialised for this) beyond the caller's open tensors: frees unreachable tensors,
     * synchronizes, empties the op caches, destroys the vendor handles and default streams of ended threads and the
     * cuBLASLt handle, and trims the pool. Every step runs even where an earlier one failed; the first failure is
     * thrown after the last step. The caller's live threads keep their handles
     * ({@link VendorHandles#releaseCurrentThread()} releases the calling thread's).
     *
     * <p>Call it when no other thread is running Gapfill work on the device (between phases, before shutdown):
     * caches and the cuBLASLt handle are shared, and an op running concurrently could be using them.
     */
    public static Report release(Device device) {
        List<CudaDevice> devices = new ArrayList<>();
        for (CudaDevice d : Gpu.usedDevices()) {  // a device this process never used holds nothing: no context made for it
            if (device == null || (device.isCuda() && device.ordinal() == d.ordinal())) {
                devices.add(d);
            }
        }
        long before = 0;
        for (CudaDevice d : devices) {
            before += d.bytesInUse();
        }
        // every step runs even where one before it failed (a latent fault surfacing in a synchronize, a cache's close);
        // the first failure is thrown at the end
        Cleanup cleanup = new Cleanup();
        int[] counts = new int[5];  // tensors, entries, dead-thread handles, ended-thread streams, cuBLASLt handles
        cleanup.run(() -> counts[0] = freeUnreachableTensors());
        for (CudaDevice d : devices) {
            if (d.stickyCause() == null) {
                cleanup.run(d::synchronize);
            }
        }
        for (Cache c : ServiceLoader.load(Cache.class, Resources.class.getClassLoader())) {
            cleanup.run(() -> {
                int n = c.release(device);
                counts[1] += n;
                if (n > 0) {
                    LOG.debug("released {} entries of {}", n, c.name());
                }
            });
        }
        if (Gpu.available()) {
            cleanup.run(() -> counts[2] = VendorHandles.releaseDeadThreads());
            cleanup.run(() -> counts[3] = Stream.releaseEndedThreads());  // after their handles, which may be bound to them
            cleanup.run(() -> counts[4] = VendorHandles.releaseCublasLt(device));
        }
        long after = 0;
        long pool = 0;
        for (CudaDevice d : devices) {
            if (d.stickyCause() == null) {
                cleanup.run(d::trim);
            }
            if (d.stickyCause() == null) {  // re-read: the trim may have latched one
                long[] used = {0};
                cleanup.run(() -> used[0] = d.poolUsedBytes());
                pool += used[0];
            }
            after += d.bytesInUse();
        }
        cleanup.rethrow();
        return new Report(counts[0], counts[1], counts[2], counts[4], before, after, pool, counts[3]);
    }

    /** Entries every registered op cache holds now for {@code device} (null: all), by cache name. */
    public static java.util.Map<String, Integer> cacheSizes(Device device) {
        java.util.Map<String, Integer> m = new java.util.LinkedHashMap<>();
        for (Cache c : ServiceLoader.load(Cache.class, Resources.class.getClassLoader())) {
            m.put(c.name(), c.size(device));
        }
        return m;
    }
}
