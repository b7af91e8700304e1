package dev.gapfill.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bulk reads of a CPU tensor agree with its element reads: {@link Tensor#toDoubleArray()} with {@link
 * Tensor#getDouble} (bit for bit, every dtype) on contiguous tensors, contiguous views at an element offset, and
 * permuted (strided) views of them.
 */
class TensorReadProperties {
    @Property(tries = 200)
    void toDoubleArrayMatchesGetDoubleOnEveryViewAndDtype(@ForAll @IntRange(min = 1, max = 5) int d0,
                                                          @ForAll @IntRange(min = 1, max = 6) int d1,
                                                          @ForAll @IntRange(min = 1, max = 7) int d2,
                                                          @ForAll @IntRange(min = 0, max = 4) int dtype,
                                                          @ForAll @IntRange(min = 0, max = 3) int offset,
                                                          @ForAll @IntRange(min = 0, max = 5) int permutation,
                                                          @ForAll long seed) {
        DType dt = new DType[] {DType.F32, DType.F16, DType.BF16, DType.I32, DType.I8}[dtype];
        Random rnd = new Random(seed);
        long n = (long) d0 * d1 * d2 + offset;
        try (Tensor base = filled(dt, n, rnd)) {
            long[] shape = {d0, d1, d2};
            Tensor view = base.strided(shape, Tensor.contiguousStrides(shape), offset);
            int[][] perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
            int[] p = perms[permutation];
            long[] strides = Tensor.contiguousStrides(shape);
            Tensor permuted = base.strided(new long[] {shape[p[0]], shape[p[1]], shape[p[2]]},
                    new long[] {strides[p[0]], strides[p[1]], strides[p[2]]}, offset);
            for (Tensor t : new Tensor[] {base, view, permuted}) {
                double[] all = t.toDoubleArray();
                assertEquals(t.numel(), all.length);
                for (int i = 0; i < all.length; i++) {
                    assertEquals(Double.doubleToRawLongBits(t.getDouble(i)), Double.doubleToRawLongBits(all[i]),
                            dt + " " + java.util.Arrays.toString(t.shape()) + " strides " + java.util.Arrays.toString(t.strides())
                                    + " element " + i);
                }
            }
        }
    }

    private static Tensor filled(DType dt, long n, Random rnd) {
        int len = (int) n;
        if (dt == DType.I8) {
            byte[] b = new byte[len];
            rnd.nextBytes(b);
            return Tensor.ofBytes(Device.CPU, b, n);
        }
        if (dt == DType.I32) {
            int[] v = new int[len];
            for (int i = 0; i < len; i++) {
                v[i] = rnd.nextInt();  // the whole int range: exact in a double, not in a float
            }
            return Tensor.ofInts(Device.CPU, v, n);
        }
        float[] f = new float[len];
        for (int i = 0; i < len; i++) {
            f[i] = (float) ((rnd.nextDouble() * 2 - 1) * Math.pow(2, rnd.nextInt(40) - 20));
        }
        return Tensor.of(Device.CPU, dt, f, n);
    }
}
