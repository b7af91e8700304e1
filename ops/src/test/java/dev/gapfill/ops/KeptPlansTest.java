package dev.gapfill.ops;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bookkeeping of {@link KeptPlans} with stand-in plans (no device; no stream, which {@code find} matches only
 * with no stream): the plan and byte limits, least recently run first out, replacement, drop and release closing
 * what they remove, and the plans of ended threads. The GPU side (reuse, streams, capture) is
 * {@code OneShotPlansGpuTest}.
 */
class KeptPlansTest {
    record K(int device, int id) implements KeptPlans.Key {}

    static final class FakePlan implements AutoCloseable {
        final long bytes;
        final boolean failsToClose;
        int closes;

        FakePlan(long bytes) { this(bytes, false); }

        FakePlan(long bytes, boolean failsToClose) {
            this.bytes = bytes;
            this.failsToClose = failsToClose;
        }

        @Override public void close() {
            closes++;
            if (failsToClose) {
                throw new IllegalStateException("free failed (stand-in)");
            }
        }
    }

    private static KeptPlans<K, FakePlan> plans() {
        return new KeptPlans<>("test", 3, 1000, 1500, p -> p.bytes);
    }

    @Test void theLeastRecentlyRunPlanGoesFirstAndIsClosed() {
        KeptPlans<K, FakePlan>.Holder h = plans().detached();
        FakePlan a = new FakePlan(10), b = new FakePlan(10), c = new FakePlan(10), d = new FakePlan(10);
        assertTrue(h.keep(new K(0, 1), null, a));
        assertTrue(h.keep(new K(0, 2), null, b));
        assertTrue(h.keep(new K(0, 3), null, c));
        assertSame(a, h.find(new K(0, 1), null));  // run again: now the most recent
        assertTrue(h.keep(new K(0, 4), null, d));
        assertEquals(3, h.size(-1));
        assertNull(h.find(new K(0, 2), null), "the least recently run went");
        assertEquals(1, b.closes);
        assertEquals(0, a.closes + c.closes + d.closes);
    }

    @Test void theByteLimitHoldsAndAPlanOverItIsNotKept() {
        KeptPlans<K, FakePlan>.Holder h = plans().detached();
        FakePlan a = new FakePlan(600), b = new FakePlan(300), c = new FakePlan(200), huge = new FakePlan(1001);
        h.keep(new K(0, 1), null, a);
        h.keep(new K(0, 2), null, b);
        h.keep(new K(0, 3), null, c);  // 1100 bytes: a (least recent) goes
        assertEquals(1, a.closes);
        assertEquals(2, h.size(-1));
        assertFalse(h.keep(new K(0, 9), null, huge), "over the limit alone: not kept");
        assertEquals(0, huge.closes, "the caller runs and closes it");
        assertEquals(2, h.size(-1), "and nothing else was dropped for it");
    }

    @Test void theProcessWideLimitCountsEveryThreadsPlans() {
        KeptPlans<K, FakePlan> kp = plans();  // 1000 per thread, 1500 in all
        KeptPlans<K, FakePlan>.Holder one = kp.detached();
        KeptPlans<K, FakePlan>.Holder two = kp.detached();
        assertTrue(one.keep(new K(0, 1), null, new FakePlan(900)));
        assertTrue(two.keep(new K(0, 1), null, new FakePlan(500)));
        assertEquals(1400, kp.totalBytes());
        FakePlan over = new FakePlan(200);
        assertFalse(two.keep(new K(0, 2), null, over), "1600 in all: not kept");
        assertEquals(0, over.closes);
        FakePlan replacing = new FakePlan(550);  // replaces two's 500 for the same key: 1450 in all
        assertTrue(two.keep(new K(0, 1), null, replacing));
        assertEquals(1450, kp.totalBytes());
        two.drop(new K(0, 1));
        one.release(-1);
        assertEquals(0, kp.totalBytes());
    }

    @Test void zeroPlansPerThreadKeepsNone() {
        KeptPlans<K, FakePlan> off = new KeptPlans<>("off", 0, 1000, 1000, p -> p.bytes);
        assertFalse(off.detached().keep(new K(0, 1), null, new FakePlan(1)));
        assertEquals(0, off.size(-1));
    }

    @Test void replacingDroppingAndReleasingCloseWhatTheyRemove() {
        KeptPlans<K, FakePlan>.Holder h = plans().detached();
        FakePlan a = new FakePlan(1), a2 = new FakePlan(1), b = new FakePlan(1);
        h.keep(new K(0, 1), null, a);
        h.keep(new K(0, 1), null, a2);  // the same problem again (another stream, in the ops): the old plan closes
        assertEquals(1, a.closes);
        assertSame(a2, h.find(new K(0, 1), null));
        h.keep(new K(1, 2), null, b);
        h.drop(new K(0, 1));
        assertEquals(1, a2.closes);
        h.drop(new K(0, 1));  // absent: nothing
        assertEquals(0, h.release(0));
        assertEquals(1, h.size(1));
        assertEquals(1, h.release(-1));
        assertEquals(1, b.closes);
        assertEquals(0, h.size(-1));
    }

    @Test void theFirstUseOnANewThreadClosesThePlansOfEndedThreads() throws InterruptedException {
        KeptPlans<K, FakePlan> kp = plans();
        FakePlan p = new FakePlan(5);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                kp.mine().keep(new K(0, 1), null, p);
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.start();
        t.join();
        assertNull(failure.get());
        assertEquals(1, kp.size(-1), "the ended thread's plan is still kept");
        assertEquals(0, p.closes);
        Thread u = new Thread(kp::mine);
        u.start();
        u.join();
        assertEquals(1, p.closes, "a new thread's first use closed it");
        assertEquals(0, kp.size(-1));
    }

    @Test void releaseClosesEveryThreadsPlansOfTheDevice() {
        KeptPlans<K, FakePlan> kp = plans();
        FakePlan on0 = new FakePlan(1), on1 = new FakePlan(1);
        kp.mine().keep(new K(0, 1), null, on0);
        kp.mine().keep(new K(1, 1), null, on1);
        assertEquals(1, kp.release(0));
        assertEquals(1, on0.closes);
        assertEquals(0, on1.closes);
        assertEquals(1, kp.release(-1));
        assertEquals(0, kp.size(-1));
    }

    @Test void aFailedCloseStillForgetsAndClosesEveryOtherPlanOfTheRelease() {
        KeptPlans<K, FakePlan> kp = plans();
        KeptPlans<K, FakePlan>.Holder h = kp.detached();
        FakePlan bad = new FakePlan(10, true), b = new FakePlan(20), c = new FakePlan(30);
        h.keep(new K(0, 1), null, bad);
        h.keep(new K(0, 2), null, b);
        h.keep(new K(0, 3), null, c);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> h.release(-1));
        assertEquals("free failed (stand-in)", e.getMessage());
        assertEquals(1, bad.closes);
        assertEquals(1, b.closes, "closed although the close before it failed");
        assertEquals(1, c.closes);
        assertEquals(0, h.size(-1));
        assertEquals(0, kp.totalBytes(), "no bytes counted for plans no one holds");
    }

    @Test void aFailedCloseOfAReplacedPlanKeepsTheNewOneAndCountsItsBytes() {
        KeptPlans<K, FakePlan> kp = plans();
        KeptPlans<K, FakePlan>.Holder h = kp.detached();
        FakePlan bad = new FakePlan(100, true), fresh = new FakePlan(40);
        h.keep(new K(0, 1), null, bad);
        assertThrows(IllegalStateException.class, () -> h.keep(new K(0, 1), null, fresh));
        assertSame(fresh, h.find(new K(0, 1), null));
        assertEquals(40, kp.totalBytes());
        h.release(-1);
        assertEquals(1, fresh.closes);
        assertEquals(0, kp.totalBytes());
    }

    @Test void anEndedThreadsPlansAreAllClosedAndForgottenEvenWhenOneCloseFails() throws InterruptedException {
        KeptPlans<K, FakePlan> kp = plans();
        FakePlan bad = new FakePlan(10, true), b = new FakePlan(20), c = new FakePlan(30);
        Thread t = new Thread(() -> {
            kp.mine().keep(new K(0, 1), null, bad);
            kp.mine().keep(new K(0, 2), null, b);
            kp.mine().keep(new K(1, 3), null, c);
        });
        t.start();
        t.join();
        assertEquals(3, kp.size(-1));
        assertThrows(IllegalStateException.class, kp::releaseEndedThreads);
        assertEquals(1, bad.closes);
        assertEquals(1, b.closes, "closed although another close failed");
        assertEquals(1, c.closes);
        assertEquals(0, kp.size(-1), "nothing left that no thread could reach");
        assertEquals(0, kp.totalBytes());
        assertEquals(0, kp.release(-1), "and nothing for a later release");
    }

    @Test void threadsKeepingAtOnceStayWithinTheProcessWideLimit() throws Exception {
        int threads = 8;
        KeptPlans<K, FakePlan> kp = new KeptPlans<>("race", 4, 400, 1000, p -> p.bytes);
        for (int round = 0; round < 300; round++) {
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicInteger kept = new AtomicInteger();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> ts = new ArrayList<>();
            List<KeptPlans<K, FakePlan>.Holder> holders = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                holders.add(kp.detached());
            }
            for (int t = 0; t < threads; t++) {
                KeptPlans<K, FakePlan>.Holder h = holders.get(t);
                Thread th = new Thread(() -> {
                    try {
                        start.await();
                        if (h.keep(new K(0, 1), null, new FakePlan(300))) {  // 3 fit the 1000 of every thread together
                            kept.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            assertNull(failure.get(), () -> String.valueOf(failure.get()));
            assertEquals(300L * kept.get(), kp.totalBytes(), "round " + round + ": the count is the kept plans' bytes");
            assertTrue(kp.totalBytes() <= 1000, "round " + round + ": " + kept.get() + " plans kept, " + kp.totalBytes() + " bytes");
            assertEquals(3, kept.get(), "round " + round + ": as many as fit");
            for (KeptPlans<K, FakePlan>.Holder h : holders) {
                h.release(-1);
            }
            assertEquals(0, kp.totalBytes());
        }
    }
}
