package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.GpuTest;
import dev.gapfill.core.testing.Poison;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GPU smoke suite of the kernel path: the bundled fatbin loads, the kernel launches, and every element
 * matches the CPU reference on random inputs with the output poisoned first (unaligned views included,
 * which take the scalar path).
 */
@GpuTest
class ElementwiseGpuTest {
    @Property(tries = 40)
    void scaleAddMatchesTheReference(@ForAll @IntRange(min = 1, max = 200_000) int n, @ForAll @IntRange(min = 0, max = 2) int dtIndex,
                                     @ForAll @IntRange(min = 0, max = 3) int offset, @ForAll long seed) {
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16}[dtIndex];
        Random rnd = new Random(seed);
        Device gpu = Device.cuda(0);
        float alpha = rnd.nextFloat() * 4 - 2;
        float beta = rnd.nextFloat() * 4 - 2;
        try (Tensor ha = Poison.random(Device.CPU, dt, rnd, n + offset); Tensor hb = Poison.random(Device.CPU, dt, rnd, n + offset);
             Tensor ga = ha.to(gpu); Tensor gb = hb.to(gpu); Tensor out = Poison.poisoned(gpu, dt, n + offset);
             Stream s = Stream.create(gpu)) {
            // offset views make the pointers unaligned for 16-byte vectors when offset > 0
            Tensor va = ga.strided(new long[] {n}, new long[] {1}, offset);
            Tensor vb = gb.strided(new long[] {n}, new long[] {1}, offset);
            Tensor vo = out.strided(new long[] {n}, new long[] {1}, offset);
            Elementwise.scaleAdd(va, vb, alpha, beta, vo, s);
            s.synchronize();
            Tensor hva = ha.strided(new long[] {n}, new long[] {1}, offset);
            Tensor hvb = hb.strided(new long[] {n}, new long[] {1}, offset);
            float[] got = out.toFloatArray();
            for (int i = 0; i < n; i++) {
                double exact = alpha * hva.getDouble(i) + beta * hvb.getDouble(i);
                float g = got[i + offset];
                assertTrue(!Float.isNaN(g), "element " + i + " unwritten (poison)");
                // The kernel rounds beta*b to fp32, then fma(alpha, a, .) rounds once more, then the
                // result is rounded to the dtype: |g - exact| <= u_out*|exact| + u_f32*(|alpha*a| + |beta*b|)*(1 + u_f32)
                // + half the dtype's subnormal spacing (rounding below the normal range is absolute).
                double scale = Math.abs(alpha * hva.getDouble(i)) + Math.abs(beta * hvb.getDouble(i));
                double subnormal = dt == DType.F16 ? 0x1p-25 : dt == DType.BF16 ? 0x1p-134 : 0x1p-150;
                double bound = dt.unitRoundoff() * Math.abs(exact) + 0x1p-24 * scale * (1 + 0x1p-24) + subnormal;
                assertTrue(Math.abs(g - exact) <= bound * (1 + 1e-12) + Double.MIN_VALUE,
                        dt + " element " + i + ": got " + g + ", exact " + exact + ", bound " + bound);
            }
            for (int i = 0; i < offset; i++) {
                assertTrue(Float.isNaN(got[i]), "element before the view was written");
            }
        }
    }

    @org.junit.jupiter.api.Test
    void perThreadStreamDefaultWorks() {
        Device gpu = Device.cuda(0);
        try (Tensor a = Tensor.of(gpu, DType.F32, new float[] {1, 2, 3}, 3); Tensor b = Tensor.of(gpu, DType.F32, new float[] {10, 20, 30}, 3);
             Tensor c = Elementwise.scaleAdd(a, b, 2f, 0.5f)) {
            float[] r = c.toFloatArray();
            assertEquals(7f, r[0]);
            assertEquals(14f, r[1]);
            assertEquals(21f, r[2]);
        }
    }
}
