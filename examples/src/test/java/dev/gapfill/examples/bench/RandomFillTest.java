package dev.gapfill.examples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The copy plan of the sweeps' random fills, simulated on the host with each seed element's index as its value. */
class RandomFillTest {
    /** Runs the plan on an array whose first {@code block} elements are 0..block-1. */
    private static int[] simulate(int n, int block) {
        int[] a = new int[n];
        Arrays.fill(a, -1);
        for (int i = 0; i < block; i++) {
            a[i] = i;
        }
        long filled = block;
        for (RandomFill.Copy c : RandomFill.plan(n, block)) {
            assertEquals(filled, c.dst(), "copies fill in order, without gaps");
            assertTrue(c.src() >= 0 && c.src() + c.count() <= c.dst(), "the source is filled already and does not overlap: " + c);
            assertTrue(c.count() >= 1, c.toString());
            System.arraycopy(a, (int) c.src(), a, (int) c.dst(), (int) c.count());
            filled += c.count();
        }
        assertEquals(n, filled);
        return a;
    }

    @Test void everyElementIsFilledFromTheBlock() {
        for (int[] nb : new int[][] {{1, 1}, {2, 1}, {7, 7}, {8, 3}, {1000, 16}, {65_536, 1024}, {100_003, 1024}}) {
            int[] a = simulate(nb[0], nb[1]);
            for (int v : a) {
                assertTrue(v >= 0 && v < nb[1], "every element comes from the block");
            }
        }
        assertThrows(IllegalArgumentException.class, () -> RandomFill.plan(10, 0));
        assertThrows(IllegalArgumentException.class, () -> RandomFill.plan(10, 11));
    }

    /** Slabs whose size is a multiple of the block (sequences, heads, experts) hold different data, unlike a repeated block. */
    @Test void slabsAMultipleOfTheBlockApartDiffer() {
        int block = 1024;
        int n = 1 << 18;
        int[] a = simulate(n, block);
        for (int slab : new int[] {block, 2 * block, 3 * block, 8 * block}) {
            int[] first = Arrays.copyOfRange(a, 0, slab);
            int same = 0;
            for (int off = slab; off + slab <= n; off += slab) {
                same += Arrays.equals(first, Arrays.copyOfRange(a, off, off + slab)) ? 1 : 0;
            }
            assertEquals(0, same, "slabs of " + slab + " equal to the first");
        }
        // the last slab against the first, as the gqa check compares sequence B - 1 with sequence 0
        assertFalse(Arrays.equals(Arrays.copyOfRange(a, 0, block), Arrays.copyOfRange(a, n - block, n)));
    }

    @Test void theCopiesStayFew() {
        List<RandomFill.Copy> copies = RandomFill.plan(17L << 30, 1 << 20);  // a 34 GB F16 cache from a 2^20 block
        assertTrue(copies.size() < 40, copies.size() + " copies");
    }
}
