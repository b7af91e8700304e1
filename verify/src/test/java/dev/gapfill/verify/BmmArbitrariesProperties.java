package dev.gapfill.verify;

import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.BmmShape;
import dev.gapfill.ops.reference.BmmReference;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shipped bmm arbitraries give valid problems, and the CPU path passes the accumulation tolerance on them. */
class BmmArbitrariesProperties {
    @Provide
    Arbitrary<BmmShape> shapes() {
        return BmmArbitraries.shapes(40, 6, 200_000);
    }

    @Provide
    Arbitrary<BmmShape> tight() {
        return BmmArbitraries.shapes(129, 8, 5_000);  // m·n·k alone often exceeds the budget
    }

    @Property(tries = 300)
    void shapesKeepTheirDocumentedLimits(@ForAll("tight") BmmShape s) {
        assertTrue(s.batch() * s.m() * s.n() * s.k() <= 5_000, s.toString());
        assertTrue(s.m() >= 1 && s.n() >= 1 && s.k() >= 1 && s.batch() >= 1, s.toString());
        assertTrue(s.m() <= 129 && s.n() <= 129 && s.k() <= 129 && s.batch() <= 8, s.toString());
    }

    @Property(tries = 40)
    void cpuPathPassesTheTolerance(@ForAll("shapes") BmmShape s, @ForAll long seed) {
        Random rnd = new Random(seed);
        long[] aShape = s.transA() ? new long[] {s.batch(), s.k(), s.m()} : new long[] {s.batch(), s.m(), s.k()};
        long[] bInner = s.transB() ? new long[] {s.n(), s.k()} : new long[] {s.k(), s.n()};
        long[] bShape = s.sharedB() ? bInner : new long[] {s.batch(), bInner[0], bInner[1]};
        try (Tensor a = Poison.random(Device.CPU, s.dtype(), rnd, aShape); Tensor b = Poison.random(Device.CPU, s.dtype(), rnd, bShape);
             Tensor c = Bmm.bmm(a, b, Bmm.Options.defaults().transposes(s.transA(), s.transB()))) {
            BmmReference.Result r = BmmReference.exact(a, b, s.transA(), s.transB());
            Verdict v = Verifier.compare(c, r.exact(), r.absSum(), Tolerance.accumulation(s.dtype(), s.k(), 1), "reference");
            assertTrue(v.pass(), s + ": " + v);
            assertTrue(v.bitExact(), "the CPU path is the once-rounded reference: " + v);
        }
    }
}
