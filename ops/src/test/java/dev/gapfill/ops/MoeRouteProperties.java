package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.Poison;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reference's invariants (the layout grouped GEMM relies on) and validation. CPU only. */
class MoeRouteProperties {
    @Property(tries = 80)
    void layoutIsConsistent(@ForAll @IntRange(min = 1, max = 300) int t, @ForAll @IntRange(min = 1, max = 130) int e,
                            @ForAll @IntRange(min = 1, max = 8) int kk, @ForAll boolean sigmoid, @ForAll long seed) {
        int k = Math.min(kk, e);
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[(int) Math.floorMod(seed, 3L)];
        try (Tensor logits = Poison.random(Device.CPU, dt, new Random(seed), t, e);
             MoeRoute.Routing r = MoeRoute.route(logits, MoeRoute.Options.topK(k).withScore(sigmoid ? MoeRoute.Score.SIGMOID : MoeRoute.Score.SOFTMAX))) {
            int[] off = r.offsets.toIntArray();
            int[] gather = r.gather.toIntArray();
            int[] rowOf = r.rowOf.toIntArray();
            int[] ids = r.topkIds.toIntArray();
            float[] w = r.weights.toFloatArray();
            float[] tw = r.topkWeights.toFloatArray();
            assertEquals(0, off[0]);
            assertEquals(t * k, off[e]);
            boolean[] used = new boolean[t * k];
            for (int tok = 0; tok < t; tok++) {
                double sum = 0;
                for (int j = 0; j < k; j++) {
                    int row = rowOf[tok * k + j];
                    int x = ids[tok * k + j];
                    assertTrue(off[x] <= row && row < off[x + 1], "row inside its expert's range");
                    assertEquals(tok, gather[row]);
                    assertEquals(tw[tok * k + j], w[row]);
                    assertTrue(!used[row]);
                    used[row] = true;
                    sum += tw[tok * k + j];
                    for (int j2 = 0; j2 < j; j2++) {
                        assertTrue(ids[tok * k + j2] != x, "distinct experts per token");
                        assertTrue(logits.getDouble((long) tok * e + ids[tok * k + j2]) >= logits.getDouble((long) tok * e + x), "descending");
                    }
                }
                assertEquals(1.0, sum, 1e-5, "renormalised weights sum to 1");
            }
            for (int x = 0; x < e; x++) {
                for (int row = off[x] + 1; row < off[x + 1]; row++) {
                    assertTrue(gather[row - 1] <= gather[row], "token order inside an expert");
                }
            }
        }
    }

    @Test void validationNamesTheArgument() {
        try (Tensor logits = Tensor.of(Device.CPU, DType.F32, new float[12], 3, 4)) {
            assertEquals("options.topK", assertThrows(ArgumentException.class, () -> MoeRoute.route(logits, MoeRoute.Options.topK(5))).argument());
            assertEquals("options.topK", assertThrows(ArgumentException.class, () -> MoeRoute.route(logits, MoeRoute.Options.topK(0))).argument());
            assertThrows(UnsupportedShapeException.class, () -> MoeRoute.route(logits, MoeRoute.Options.topK(2).withBackend(Backend.VENDOR)));
            try (MoeRoute.Routing wrong = MoeRoute.Routing.allocate(Device.CPU, 3, 5, 2)) {
                assertEquals("out.offsets", assertThrows(ArgumentException.class,
                        () -> MoeRoute.route(logits, MoeRoute.Options.topK(2), wrong, null)).argument());
            }
        }
        try (Tensor big = Tensor.empty(Device.CPU, DType.F32, 1, 513)) {
            assertEquals("logits", assertThrows(ArgumentException.class, () -> MoeRoute.route(big, MoeRoute.Options.topK(2))).argument());
        }
    }
}
