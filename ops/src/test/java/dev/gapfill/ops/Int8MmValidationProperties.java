package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.HalfFloats;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.reference.Int8MmReference;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Validation of {@link Int8Mm} and its CPU backend (the reference), on the CPU. */
class Int8MmValidationProperties {
    private static Tensor i8(Random r, long... shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        byte[] b = new byte[(int) n];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (r.nextInt(256) - 128);
        }
        return Tensor.ofBytes(Device.CPU, b, shape);
    }

    private static Tensor f32(Random r, float lo, float hi, long n) {
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = lo + (hi - lo) * r.nextFloat();
        }
        return Tensor.of(Device.CPU, DType.F32, f, n);
    }

    @Property(tries = 60)
    void int32OutputIsTheExactSum(@ForAll @IntRange(min = 1, max = 9) int m, @ForAll @IntRange(min = 1, max = 13) int n,
                                  @ForAll @IntRange(min = 1, max = 6) int k16, @ForAll long seed) {
        Random r = new Random(seed);
        int k = 16 * k16;
        try (Tensor a = i8(r, m, k); Tensor w = i8(r, n, k); Tensor out = Int8Mm.mm(a, w)) {
            byte[] av = a.toByteArray();
            byte[] wv = w.toByteArray();
            int[] got = out.toIntArray();
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    int s = 0;
                    for (int q = 0; q < k; q++) {
                        s += av[i * k + q] * wv[j * k + q];
                    }
                    assertEquals(s, got[i * n + j], "acc[" + i + "," + j + "]");
                }
            }
        }
    }

    @Property(tries = 60)
    void dequantizedOutputsRoundTheFp64ValueOnce(@ForAll @IntRange(min = 1, max = 7) int m, @ForAll @IntRange(min = 1, max = 11) int n,
                                                 @ForAll @IntRange(min = 1, max = 4) int k16, @ForAll @IntRange(min = 0, max = 2) int dt,
                                                 @ForAll boolean perToken, @ForAll boolean withBias, @ForAll long seed) {
        DType out = new DType[] {DType.F32, DType.F16, DType.BF16}[dt];
        Random r = new Random(seed);
        int k = 16 * k16;
        try (Tensor a = i8(r, m, k); Tensor w = i8(r, n, k); Tensor as = f32(r, 1e-3f, 5e-2f, perToken ? m : 1);
             Tensor ws = f32(r, 1e-3f, 5e-2f, perToken ? n : 1); Tensor b = f32(r, -10f, 10f, n)) {
            Int8Mm.Options o = Int8Mm.Options.dequantized(out, as, ws);
            if (withBias) {
                o = o.withBias(b);
            }
            try (Tensor got = Int8Mm.mm(a, w, o)) {
                long[] acc = Int8MmReference.accumulate(a, w);
                for (int i = 0; i < m; i++) {
                    for (int j = 0; j < n; j++) {
                        double s = (double) (float) as.getDouble(perToken ? i : 0) * (float) ws.getDouble(perToken ? j : 0);
                        double v = acc[i * n + j] * s + (withBias ? (float) b.getDouble(j) : 0.0);
                        long bits = got.getRawBits((long) i * n + j);
                        long want = out == DType.F32 ? Float.floatToRawIntBits((float) v) & 0xffffffffL
                                : (out == DType.F16 ? HalfFloats.doubleToHalf(v) : HalfFloats.doubleToBf16(v)) & 0xffffL;
                        assertEquals(want, bits, out + " [" + i + "," + j + "] of " + v);
                    }
                }
            }
        }
    }

    @Property(tries = 40)
    void kThatIsNotAMultipleOf16NamesA(@ForAll @IntRange(min = 1, max = 300) int k) {
        if (k % 16 == 0) {
            return;
        }
        Random r = new Random(k);
        try (Tensor a = i8(r, 2, k); Tensor w = i8(r, 3, k)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w));
            assertEquals("a", e.argument());
            assertEquals(true, e.getMessage().contains("multiple of 16"), e.getMessage());
        }
    }

    @Property(tries = 30)
    void mismatchedKNamesW(@ForAll @IntRange(min = 1, max = 8) int k16, @ForAll @IntRange(min = 1, max = 8) int kw16) {
        if (k16 == kw16) {
            return;
        }
        Random r = new Random(k16 * 31L + kw16);
        try (Tensor a = i8(r, 2, 16L * k16); Tensor w = i8(r, 3, 16L * kw16)) {
            assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w)).argument());
        }
    }

    @Test void wrongDtypesScalesAndOutputsAreNamed() {
        Random r = new Random(1);
        try (Tensor a = i8(r, 4, 32); Tensor w = i8(r, 5, 32); Tensor af = Tensor.empty(Device.CPU, DType.F16, 4, 32);
             Tensor as = f32(r, 1, 2, 4); Tensor ws = f32(r, 1, 2, 5); Tensor ws3 = f32(r, 1, 2, 3); Tensor b = f32(r, 1, 2, 4);
             Tensor out = Tensor.empty(Device.CPU, DType.F16, 4, 6); Tensor outI = Tensor.empty(Device.CPU, DType.F32, 4, 5)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(af, w)).argument());
            assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, af)).argument());
            Tensor transposed = w.strided(new long[] {5, 16}, new long[] {1, 5}, 0); // [N, K] view, not K-contiguous
            try (Tensor a16 = i8(r, 4, 16)) {
                assertEquals("w", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a16, transposed)).argument());
            }
            assertEquals("aScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, new Int8Mm.Options(DType.F16, null, ws, null, Backend.AUTO))).argument());
            assertEquals("wScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws3))).argument());
            assertEquals("bias", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws).withBias(b))).argument());
            assertEquals("aScale", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, new Int8Mm.Options(DType.I32, as, null, null, Backend.AUTO))).argument());
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws), out, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class,
                    () -> Int8Mm.mm(a, w, Int8Mm.Options.dequantized(DType.F16, as, ws), outI, null)).argument());
            assertEquals("out", assertThrows(ArgumentException.class, () -> new Int8Mm.Options(DType.I8, null, null, null, Backend.AUTO)).argument());
            assertEquals("backend", assertThrows(ArgumentException.class, () -> Int8Mm.Options.int32().withBackend(null)).argument());
        }
    }

    @Test void closedTensorsAndOverflowingKAreRejected() {
        Random r = new Random(2);
        Tensor a = i8(r, 2, 32);
        try (Tensor w = i8(r, 3, 32)) {
            a.close();
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(a, w)).argument());
        }
        long k = Int8Mm.MAX_K + 16;
        try (Tensor big = Tensor.empty(Device.CPU, DType.I8, 1, k); Tensor w = Tensor.empty(Device.CPU, DType.I8, 1, k)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Int8Mm.mm(big, w)).argument());
        }
    }

    @Test void theExtremeKHasNoOverflow() {
        // every product (-128)·(-128) at the largest K: the sum stays below 2^31
        long k = Int8Mm.MAX_K;
        byte[] v = new byte[(int) k];
        java.util.Arrays.fill(v, (byte) -128);
        try (Tensor a = Tensor.ofBytes(Device.CPU, v, 1, k); Tensor w = Tensor.ofBytes(Device.CPU, v, 1, k); Tensor out = Int8Mm.mm(a, w)) {
            assertArrayEquals(new int[] {(int) (16384L * k)}, out.toIntArray());
            assertEquals(16384L * k, (long) out.toIntArray()[0]);
        }
    }

    @Test void cpuTensorsDecideReferenceAndPlansRunIt() {
        Random r = new Random(3);
        try (Tensor a = i8(r, 3, 48); Tensor w = i8(r, 7, 48); Tensor out = Tensor.empty(Device.CPU, DType.I32, 3, 7)) {
            assertEquals(Backend.REFERENCE, Int8Mm.decide(a, w, Int8Mm.Options.int32().withBackend(Backend.CUSTOM)).backend());
            try (Int8Mm.Plan p = Int8Mm.plan(a, w, Int8Mm.Options.int32(), null)) {
                assertEquals(0, p.workspaceBytes());
                p.run(a, w, Int8Mm.Options.int32(), out);
            }
            long[] acc = Int8MmReference.accumulate(a, w);
            int[] got = out.toIntArray();
            for (int i = 0; i < acc.length; i++) {
                assertEquals(acc[i], got[i]);
            }
        }
    }
}
