package dev.gapfill.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The parameter lists the kernel build writes beside each fatbin (read from the PTX), against which every launch's
 * arguments are checked. Needs no GPU: the resources come from gapfill-cuda-native, a dependency of this module.
 */
class KernelParameterListTest {
    @Test void everyBundledModuleListsItsEntriesWithFourOrEightByteParameters() {
        List<String> modules = KernelModule.bundled();
        assertTrue(modules.size() >= 20, modules.toString());
        for (String m : modules) {
            Map<String, int[]> p = KernelModule.of(m).parameterSizes();
            assertFalse(p.isEmpty(), m + ": no parameter list (a launch of its kernels would go unchecked)");
            p.forEach((entry, sizes) -> {
                for (int s : sizes) {
                    // KernelArgs passes only 4- and 8-byte values: another size could never be launched correctly
                    assertTrue(s == 4 || s == 8, m + ":" + entry + " has a parameter of " + s + " bytes");
                }
                assertTrue(sizes.length <= KernelArgs.MAX, m + ":" + entry + " takes " + sizes.length + " parameters");
            });
        }
    }

    @Test void theListMatchesKnownSignatures() {
        // l2_flush_read(const uint4*, long long, unsigned*); scale_add_f16(const __half*, const __half*, __half*, int, float, float)
        assertArrayEquals(new int[] {8, 8, 8}, KernelModule.of("harness/l2_flush").parameterSizes().get("l2_flush_read"));
        assertArrayEquals(new int[] {8, 8, 8, 4, 4, 4}, KernelModule.of("elementwise/scale_add").parameterSizes().get("scale_add_f16"));
        assertArrayEquals(new int[] {8}, KernelModule.of("elementwise/scale_add").parameterSizes().get("fault_for_tests"));
    }
}
