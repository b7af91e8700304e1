package dev.gapfill.examples.lessons;

import dev.gapfill.core.Device;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.arbitraries.ElementwiseProblem;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Lesson 08 — property-testing your own use of Gapfill with verify's arbitraries, the way a downstream
 * project would: draw problems (sizes biased to the ones that break kernels), run them through the
 * public API on the best device, and demand a passing {@link Verdict} against the fp64 reference.
 * In a JUnit project write the same as {@code @Property void ok(@ForAll("problems") ElementwiseProblem p)}
 * with {@code @Provide Arbitrary<ElementwiseProblem> problems()}; see verify's VerifierProperties.
 */
public final class L08PropertyTests {
    private L08PropertyTests() {}

    public static void main(String[] args) {
        Device dev = Device.best();
        Arbitrary<ElementwiseProblem> problems = GapfillArbitraries.elementwise(100_000);
        long[] passed = {0};
        problems.sampleStream().limit(50).forEach(p -> {
            Verdict v = p.check(dev);
            if (!v.pass()) {
                throw new IllegalStateException("property failed for " + p + ": " + v);
            }
            passed[0]++;
        });
        System.out.println("08_property_tests on " + dev + ": " + passed[0] + " random problems passed against the reference");
    }
}
