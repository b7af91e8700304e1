package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@code GroupedGemm.Options.hostOffsets} on the CPU: validated against G, copied in, and offsetsToHost's values. */
class GroupedGemmHostOffsetsTest {
    @Test void theHostCopyIsValidatedAndKeptAsGiven() {
        Random rnd = new Random(3);
        int[] off = {0, 3, 3, 7};
        try (Tensor x = Poison.random(Device.CPU, DType.F16, rnd, 7, 16); Tensor w = Poison.random(Device.CPU, DType.F16, rnd, 3, 16, 32);
             Tensor o = Tensor.ofInts(Device.CPU, off, 4)) {
            assertArrayEquals(off, GroupedGemm.offsetsToHost(o, null));
            int[] mine = off.clone();
            GroupedGemm.Options opt = GroupedGemm.Options.builder().hostOffsets(mine).build();
            mine[1] = 5;  // the caller's array changes after the options were built: they keep the values given
            assertArrayEquals(off, opt.hostOffsets());
            opt.hostOffsets()[2] = 9;  // nor can the accessor's array change them
            assertArrayEquals(off, opt.hostOffsets());
            try (Tensor y = GroupedGemm.run(x, w, o, opt)) {  // the CPU reference reads the device offsets either way
                assertEquals(7, y.dim(0));
            }
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> GroupedGemm.run(x, w, o, GroupedGemm.Options.defaults().withHostOffsets(new int[] {0, 7})));
            assertEquals("options.hostOffsets", e.argument(), e.getMessage());
            assertEquals("offsets", assertThrows(ArgumentException.class, () -> GroupedGemm.offsetsToHost(null, null)).argument());
        }
    }
}
