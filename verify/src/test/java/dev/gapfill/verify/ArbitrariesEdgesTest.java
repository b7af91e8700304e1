package dev.gapfill.verify;

import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The size arbitraries favour the edge cases their documentation promises: each is drawn several times as often as a
 * uniform draw would give it (a uniform draw alone, as before, makes every count below fail).
 */
class ArbitrariesEdgesTest {
    private static Map<Integer, Long> counts(List<Integer> values) {
        return values.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    }

    @Test void unevenSizesFavourNonPowerOfTwoTileMultiplesAndTheirNeighbours() {
        List<Integer> drawn = GapfillArbitraries.unevenSizes(256).sampleStream().limit(20_000).toList();
        Map<Integer, Long> c = counts(drawn);
        // half the draws are uniform over 256 values: about 39 each; the edges add about 0.5 / (their count) of the draws
        for (int v : new int[] {47, 48, 49, 79, 80, 81, 191, 192, 193}) {
            assertTrue(c.getOrDefault(v, 0L) > 100, v + " drawn " + c.getOrDefault(v, 0L) + " times in 20000");
        }
        assertTrue(drawn.stream().allMatch(v -> v >= 1 && v <= 256));
    }

    @Test void int8ProblemsFavourTheTileBoundariesOfEverySize() {
        List<Int8MmArbitraries.Problem> problems = Int8MmArbitraries.problems(64, 512, 64).sampleStream().limit(3_000).toList();
        Map<Integer, Long> m = counts(problems.stream().map(Int8MmArbitraries.Problem::m).toList());
        Map<Integer, Long> n = counts(problems.stream().map(Int8MmArbitraries.Problem::n).toList());
        Map<Integer, Long> k = counts(problems.stream().map(Int8MmArbitraries.Problem::k).toList());
        for (int v : new int[] {1, 17, 33, 63}) {  // uniform: about 47 of 3000
            assertTrue(m.getOrDefault(v, 0L) > 60, "M=" + v + ": " + m.getOrDefault(v, 0L));
        }
        for (int v : new int[] {1, 65, 129, 257}) {  // uniform: about 6 of 3000
            assertTrue(n.getOrDefault(v, 0L) > 35, "N=" + v + ": " + n.getOrDefault(v, 0L));
        }
        for (int v : new int[] {16, 16 * 9, 16 * 17}) {  // uniform: about 47 of 3000
            assertTrue(k.getOrDefault(v, 0L) > 80, "K=" + v + ": " + k.getOrDefault(v, 0L));
        }
        assertTrue(problems.stream().allMatch(p -> p.m() <= 64 && p.n() <= 512 && p.k() % 16 == 0 && p.k() <= 1024));
    }
}
