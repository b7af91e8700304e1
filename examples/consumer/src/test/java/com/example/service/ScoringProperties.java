package com.example.service;

import dev.gapfill.core.Device;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.arbitraries.ElementwiseProblem;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a user's service writes: a property over Gapfill's arbitraries, on whatever device the host has. */
class ScoringProperties {
    @Provide Arbitrary<ElementwiseProblem> problems() {
        return GapfillArbitraries.elementwise(10_000);
    }

    @Property(tries = 30)
    void blendMatchesTheReference(@ForAll("problems") ElementwiseProblem p) {
        Verdict v = p.check(Device.best());
        assertTrue(v.pass(), v.toString());
    }
}
