package dev.gapfill.ops;

import dev.gapfill.core.Cleanup;
import dev.gapfill.core.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

/**
 * The plans an op's one-shot calls keep for the calling thread, so that the next call of the same problem on the same
 * native stream runs a plan made before instead of making and closing one (workspace allocations, zeroing, frees per
 * call). Per thread: at most {@code maxPlans} plans holding at most {@code maxBytes} of device memory together, the
 * least recently run dropped first (closed: its memory freed in stream order after its last run); a plan over
 * {@code maxBytes} alone is not kept, nor one that would take every thread's kept plans together over
 * {@code maxTotalBytes} (a service with many threads). The limits come from the system properties
 * {@value #PLANS_PER_THREAD}, {@value #BYTES_PER_THREAD} and {@value #BYTES_TOTAL}. A plan is kept with the stream it was made for and found only on that native
 * stream while it is open, so one workspace never serves two streams at once. {@link #release} closes the plans of
 * every thread (the op registers it as a {@link dev.gapfill.core.Resources.Cache}); a thread's first use closes those
 * of threads that have ended. Internal.
 *
 * @param <K> what a plan was made for; {@link Key#device()} names its device
 * @param <P> the plan
 */
final class KeptPlans<K extends KeptPlans.Key, P extends AutoCloseable> {
    private static final Logger LOG = LoggerFactory.getLogger(KeptPlans.class);

    /** A kept plan's key: the device ordinal and whatever else decides the plan. */
    interface Key {
        int device();
    }

    private record Entry<P>(P plan, Stream stream, long bytes) {}

    /** One thread's plans; guarded by itself (the owner, and release from another thread when no op runs). */
    final class Holder {
        final Thread owner = Thread.currentThread();
        // access order: the first entry is the least recently run
        private final LinkedHashMap<K, Entry<P>> plans = new LinkedHashMap<>(16, 0.75f, true);
        private long bytes;

        /** The plan kept for {@code key} if it was made for the native stream of {@code stream}, else null. */
        synchronized P find(K key, Stream stream) {
            Entry<P> e = plans.get(key);
            return e != null && sameOpenStream(e.stream(), stream) ? e.plan() : null;
        }

        /**
         * Keeps {@code plan} for {@code key} on {@code stream}, closing the one it replaces and the least recently run
         * ones over the limits; false (nothing kept, nothing closed) if it alone holds more than the byte limit, or
         * if it would take every thread's kept plans together over the process-wide limit. The process-wide bytes are
         * reserved before the plan is kept, so threads keeping at the same time cannot pass the limit together. If
         * closing a removed plan fails, the plan is still kept and every other removed plan still closed; the first
         * failure is thrown.
         */
        synchronized boolean keep(K key, Stream stream, P plan) {
            long b = bytesOf.applyAsLong(plan);
            if (maxPlans < 1 || b > maxBytes) {
                return false;
            }
            Entry<P> replaced = plans.get(key);
            long delta = b - (replaced == null ? 0 : replaced.bytes());
            if (delta > 0 && total.addAndGet(delta) > maxTotalBytes) {
                total.addAndGet(-delta);
                return false;  // every thread's kept plans together are at the process-wide limit
            }
            if (delta <= 0) {
                total.addAndGet(delta);
            }
            bytes += delta;
            plans.put(key, new Entry<>(plan, stream, b));
            Cleanup cleanup = new Cleanup();
            if (replaced != null && replaced.plan() != plan) {
                cleanup.close(replaced.plan());
            }
            Iterator<Map.Entry<K, Entry<P>>> it = plans.entrySet().iterator();
            while ((plans.size() > maxPlans || bytes > maxBytes) && it.hasNext()) {
                Entry<P> e = it.next().getValue();
                if (e.plan() != plan) {
                    it.remove();
                    forget(e.bytes());
                    cleanup.close(e.plan());
                }
            }
            cleanup.rethrow();
            return true;
        }

        private void forget(long b) {
            bytes -= b;
            total.addAndGet(-b);
        }

        /** Closes and forgets the plan kept for {@code key}, if any. */
        synchronized void drop(K key) {
            Entry<P> e = plans.remove(key);
            if (e != null) {
                forget(e.bytes());
                Cleanup cleanup = new Cleanup();
                cleanup.close(e.plan());
                cleanup.rethrow();
            }
        }

        /**
         * Closes the plans of device {@code ordinal} (-1: every device); returns how many. Every one of them is
         * forgotten and closed even where closing another failed; the first failure is thrown after.
         */
        synchronized int release(int ordinal) {
            int n = 0;
            Cleanup cleanup = new Cleanup();
            Iterator<Map.Entry<K, Entry<P>>> it = plans.entrySet().iterator();
            while (it.hasNext()) {
                Map.Entry<K, Entry<P>> e = it.next();
                if (ordinal < 0 || e.getKey().device() == ordinal) {
                    it.remove();
                    forget(e.getValue().bytes());
                    cleanup.close(e.getValue().plan());
                    n++;
                }
            }
            cleanup.rethrow();
            return n;
        }

        /** Plans kept for device {@code ordinal} (-1: every device). */
        synchronized int size(int ordinal) {
            int n = 0;
            for (K k : plans.keySet()) {
                n += ordinal < 0 || k.device() == ordinal ? 1 : 0;
            }
            return n;
        }
    }

    /** System property: plans each thread keeps per op (default 8; 0 keeps none: every one-shot call makes its own). */
    static final String PLANS_PER_THREAD = "gapfill.keptPlans.perThread";
    /** System property: device bytes one thread's kept plans of one op may hold (default 8 MiB). */
    static final String BYTES_PER_THREAD = "gapfill.keptPlans.bytesPerThread";
    /** System property: device bytes every thread's kept plans of one op may hold together (default 256 MiB). */
    static final String BYTES_TOTAL = "gapfill.keptPlans.bytesTotal";

    private final String op;
    private final int maxPlans;
    private final long maxBytes;
    private final long maxTotalBytes;
    private final ToLongFunction<P> bytesOf;
    private final AtomicLong total = new AtomicLong();
    private final Set<Holder> holders = ConcurrentHashMap.newKeySet();
    private final ThreadLocal<Holder> mine = ThreadLocal.withInitial(this::newHolder);

    /** Limits from the system properties above (read once), defaults 8 plans and 8 MiB per thread, 256 MiB in all. */
    KeptPlans(String op, ToLongFunction<P> bytesOf) {
        this(op, Integer.getInteger(PLANS_PER_THREAD, 8), Long.getLong(BYTES_PER_THREAD, 8L << 20),
                Long.getLong(BYTES_TOTAL, 256L << 20), bytesOf);
    }

    /**
     * @param op            the op's name, for logs
     * @param maxPlans      plans kept per thread (0: none)
     * @param maxBytes      device bytes the kept plans of one thread may hold together
     * @param maxTotalBytes device bytes the kept plans of every thread may hold together
     * @param bytesOf       the device bytes a plan holds
     */
    KeptPlans(String op, int maxPlans, long maxBytes, long maxTotalBytes, ToLongFunction<P> bytesOf) {
        this.op = op;
        this.maxPlans = maxPlans;
        this.maxBytes = maxBytes;
        this.maxTotalBytes = maxTotalBytes;
        this.bytesOf = bytesOf;
    }

    /** Device bytes every thread's kept plans hold now. */
    long totalBytes() { return total.get(); }

    /** The calling thread's plans. */
    Holder mine() { return mine.get(); }

    /** A holder not registered with any thread (tests). */
    Holder detached() { return new Holder(); }

    private Holder newHolder() {
        try {
            if (releaseEndedThreads() > 0) {
                dev.gapfill.core.Stream.releaseEndedThreads();  // the default streams those plans leased, free now
            }
        } catch (RuntimeException e) {  // another thread's leftovers must not fail this call; each was forgotten
            LOG.warn("{}: closing the kept plans of ended threads failed: {}", op, e.toString());
        }
        Holder h = new Holder();
        holders.add(h);
        return h;
    }

    /**
     * Closes the plans of threads that have ended (their runs are ordered on their streams before the frees) and
     * forgets their holders. Every such plan is closed even where closing another failed; the first failure is
     * thrown after.
     */
    int releaseEndedThreads() {
        int[] n = {0};
        Cleanup cleanup = new Cleanup();
        for (Holder h : holders) {
            if (!h.owner.isAlive()) {
                cleanup.run(() -> n[0] += h.release(-1));
                holders.remove(h);  // empty now: release forgets every plan, closed or not
            }
        }
        cleanup.rethrow();
        return n[0];
    }

    /**
     * Closes every thread's plans of device {@code ordinal} (-1: every device); returns how many. Every one is closed
     * even where closing another failed; the first failure is thrown after.
     */
    int release(int ordinal) {
        int[] n = {0};
        Cleanup cleanup = new Cleanup();
        for (Holder h : holders) {
            cleanup.run(() -> n[0] += h.release(ordinal));
            if (!h.owner.isAlive() && h.size(-1) == 0) {
                holders.remove(h);  // an ended thread's holder, now empty
            }
        }
        cleanup.rethrow();
        return n[0];
    }

    /** Plans kept by every thread for device {@code ordinal} (-1: every device). */
    int size(int ordinal) {
        return holders.stream().mapToInt(h -> h.size(ordinal)).sum();
    }

    /** Both the same open native stream, or both null (plans that run on no stream: tests). */
    private static boolean sameOpenStream(Stream kept, Stream asked) {
        return kept == null ? asked == null : !kept.isClosed() && kept.sameStreamAs(asked);
    }
}
