package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Host-side tensor behaviour (runs everywhere). */
class TensorTest {
    @Test void copiesRoundTripOnTheHost() {
        float[] v = {1f, -2.5f, 3.25f, 0.1f, 7f, -0f};
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, v, 2, 3)) {
            assertArrayEquals(v, t.toFloatArray());
            assertEquals(3.25, t.getDouble(2));
            assertArrayEquals(new long[] {3, 1}, t.strides());
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.BF16, v, 6)) {
            assertEquals(HalfFloats.bf16ToFloat(HalfFloats.floatToBf16(0.1f)), t.toFloatArray()[3]);
        }
        try (Tensor t = Tensor.ofInts(Device.CPU, new int[] {1, -7, 9}, 3)) {
            assertArrayEquals(new int[] {1, -7, 9}, t.toIntArray());
        }
    }

    /** Integer elements take whole numbers in range only: a cast would truncate, wrap (I8), saturate (I32) or turn NaN into 0. */
    @Test void setDoubleRefusesWhatAnIntegerDtypeCannotHold() {
        try (Tensor b = Tensor.empty(Device.CPU, DType.I8, 2); Tensor i = Tensor.empty(Device.CPU, DType.I32, 2)) {
            b.setDouble(0, -128);
            b.setDouble(1, 127);
            assertArrayEquals(new byte[] {-128, 127}, b.toByteArray());
            i.setDouble(0, Integer.MIN_VALUE);
            i.setDouble(1, Integer.MAX_VALUE);
            assertArrayEquals(new int[] {Integer.MIN_VALUE, Integer.MAX_VALUE}, i.toIntArray());
            for (double bad : new double[] {128, -129, 2.5, Double.NaN, Double.POSITIVE_INFINITY}) {
                ArgumentException e = assertThrows(ArgumentException.class, () -> b.setDouble(0, bad), "I8 " + bad);
                assertTrue(e.getMessage().contains("value"), e.getMessage());
            }
            for (double bad : new double[] {2147483648.0, -2147483649.0, 0.5, Double.NaN, Double.NEGATIVE_INFINITY}) {
                assertThrows(ArgumentException.class, () -> i.setDouble(1, bad), "I32 " + bad);
            }
            assertArrayEquals(new int[] {Integer.MIN_VALUE, Integer.MAX_VALUE}, i.toIntArray(), "a refused value writes nothing");
        }
    }

    @Test void toDoubleArrayWidensEveryDtypeExactlyAndReadsViewsElementByElement() {
        float[] v = {1f, -2.5f, 3.25f, 0.1f, 65504f, -0f, 1e-7f, -3.3e38f};
        for (DType dt : new DType[] {DType.F32, DType.F16, DType.BF16}) {
            try (Tensor t = Tensor.of(Device.CPU, dt, v, 2, 4)) {
                double[] d = t.toDoubleArray();
                for (int i = 0; i < v.length; i++) {
                    assertEquals(Double.doubleToRawLongBits(t.getDouble(i)), Double.doubleToRawLongBits(d[i]), dt + " element " + i);
                }
                Tensor tr = t.strided(new long[] {4, 2}, new long[] {1, 4}, 0);  // the transpose: not contiguous
                double[] dtr = tr.toDoubleArray();
                for (int i = 0; i < 8; i++) {
                    assertEquals(d[(i % 2) * 4 + i / 2], dtr[i], dt + " transposed element " + i);
                }
            }
        }
        try (Tensor t = Tensor.ofInts(Device.CPU, new int[] {16_777_217, -7, Integer.MIN_VALUE}, 3)) {
            assertArrayEquals(new double[] {16_777_217, -7, Integer.MIN_VALUE}, t.toDoubleArray());  // exact beyond 2^24
        }
        try (Tensor t = Tensor.ofBytes(Device.CPU, new byte[] {-128, 0, 127}, 3)) {
            assertArrayEquals(new double[] {-128, 0, 127}, t.toDoubleArray());
        }
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, v, 8)) {
            Tensor tail = t.strided(new long[] {3}, new long[] {1}, 5);  // contiguous view at an element offset
            assertArrayEquals(new double[] {-0.0, 1e-7f, -3.3e38f}, tail.toDoubleArray());
            Tensor mid = t.strided(new long[] {2}, new long[] {1}, 2);
            assertEquals(8, mid.hostBuffer().limit(), "a view's host buffer ends with the view, not with its parent");
            assertThrows(IndexOutOfBoundsException.class, () -> mid.hostBuffer().putFloat(8, 1f));
            assertEquals((double) v[4], t.getDouble(4), "the parent's next element is untouched");
        }
        Tensor closed = Tensor.empty(Device.CPU, DType.F32, 2);
        closed.close();
        assertThrows(ArgumentException.class, closed::toDoubleArray);
    }

    @Test void closingTwiceIsAnError() {
        Tensor t = Tensor.empty(Device.CPU, DType.F16, 4);
        t.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, t::close);
        assertTrue(e.getMessage().contains("closed twice"), e.getMessage());
    }

    @Test void closedTensorIsRejectedByName() {
        Tensor t = Tensor.empty(Device.CPU, DType.F32, 4);
        t.close();
        ArgumentException e = assertThrows(ArgumentException.class, () -> Checks.open("x", t));
        assertEquals("x", e.argument());
        assertTrue(e.getMessage().startsWith("x: expected an open tensor, got closed tensor #"), e.getMessage());
    }

    /**
     * A dim of size 1 is never stepped, so its stride does not make a view non-contiguous (a transposed column vector,
     * an unsqueezed or sliced view, as frameworks hand them over); any other dim off its row-major stride does.
     */
    @Test void sizeOneDimsMayCarryAnyStride() {
        float[] data = {1, 2, 3, 4, 5, 6};
        try (Tensor col = Tensor.of(Device.CPU, DType.F32, data, 6, 1)) {
            Tensor row = col.strided(new long[] {1, 6}, new long[] {1, 1}, 0);      // the column transposed
            Tensor mid = col.strided(new long[] {2, 1, 3}, new long[] {3, 7, 1}, 0);  // an unsqueeze with an odd stride
            Tensor one = col.strided(new long[] {1, 1}, new long[] {5, 9}, 2);        // one element
            Tensor gap = col.strided(new long[] {2, 2}, new long[] {3, 1}, 0);        // rows 3 apart: not dense
            assertTrue(row.isContiguous());
            assertTrue(mid.isContiguous());
            assertTrue(one.isContiguous());
            assertTrue(!gap.isContiguous());
            assertArrayEquals(data, row.toFloatArray());
            assertArrayEquals(data, mid.reshape(6).toFloatArray());
            assertArrayEquals(new float[] {3}, one.toFloatArray());
            assertEquals(row.byteSize(), row.spanBytes());
            assertThrows(ArgumentException.class, () -> gap.reshape(4));
        }
    }

    @Test void viewsShareMemoryAndDieWithTheirParent() {
        Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {0, 1, 2, 3, 4, 5}, 2, 3);
        Tensor tr = t.strided(new long[] {3, 2}, new long[] {1, 3}, 0); // transpose
        assertEquals(4.0, tr.getDouble(3)); // [1][1] of the transpose = [1][1] of t
        Tensor r = t.reshape(3, 2);
        assertEquals(5.0, r.getDouble(5));
        t.close();
        assertTrue(tr.isClosed() && r.isClosed());
    }

    @Test void aFailedCopyToAnotherDeviceFreesItsStagingCopy() {
        // A strided host view is staged in a contiguous host tensor first; when the target cannot be allocated (no GPU
        // here, or an ordinal no host has), that staging tensor must still be freed.
        long before = Tensor.liveOwnedTensors();  // only the cleaner of other tests' forgotten tensors can lower it
        try (Tensor t = Tensor.of(Device.CPU, DType.F32, new float[] {0, 1, 2, 3, 4, 5}, 2, 3)) {
            Tensor tr = t.strided(new long[] {3, 2}, new long[] {1, 3}, 0);
            for (int i = 0; i < 50; i++) {
                assertThrows(RuntimeException.class, () -> tr.to(Device.cuda(63)));
            }
        }
        assertTrue(Tensor.liveOwnedTensors() <= before, "owned tensors " + before + " -> " + Tensor.liveOwnedTensors());
    }

    @Test void badShapesNameTheArgument() {
        ArgumentException e = assertThrows(ArgumentException.class, () -> Tensor.empty(Device.CPU, DType.F32, 3, 0));
        assertEquals("shape", e.argument());
        assertThrows(ArgumentException.class, () -> Tensor.of(Device.CPU, DType.F32, new float[5], 2, 3));
        assertThrows(ArgumentException.class, () -> Tensor.ofInts(Device.CPU, new int[6], 2, 3).copyFrom(new float[6]));
    }

    @Test void forgottenTensorIsFreedAndLogged() throws InterruptedException {
        long before = Tensor.leakCount();
        for (int i = 0; i < 20; i++) {
            Tensor.empty(Device.CPU, DType.F32, 1024); // never closed
        }
        for (int i = 0; i < 50 && Tensor.leakCount() < before + 20; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertTrue(Tensor.leakCount() >= before + 20, "cleaner freed " + (Tensor.leakCount() - before) + " of 20");
    }

    @Test void checksDescribeExpectedAndReceived() {
        try (Tensor t = Tensor.empty(Device.CPU, DType.F32, 4, 32, 64)) {
            ArgumentException e = assertThrows(ArgumentException.class,
                    () -> Checks.shape("b", t, "batch, k, n", 4096, 64, -1));
            assertEquals("b: expected shape [batch=4096, k=64, n=*], got [4, 32, 64]", e.getMessage());
            assertThrows(ArgumentException.class, () -> Checks.dtype("b", t, DType.F16));
            assertThrows(ArgumentException.class, () -> Checks.rank("b", t, 2));
        }
    }
    @Test void hostStagingRefusesMoreThanOneBufferHoldsInsteadOfWrapping() {
        // 600M floats are 2.4 GB: the int product wrapped negative (allocateDirect's "capacity < 0"), and 1.1G floats
        // wrapped to a small positive buffer that overflowed partway through the copy
        assertEquals(2_000_000_000, Tensor.hostBytes("data", 500_000_000L, DType.F32));
        for (long n : new long[] {600_000_000L, 1_100_000_000L}) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Tensor.hostBytes("data", n, DType.F32));
            assertEquals("data", e.argument());
        }
        assertEquals(Integer.MAX_VALUE, Tensor.hostBytes("data", Integer.MAX_VALUE, DType.I8));
        assertThrows(ArgumentException.class, () -> Tensor.hostBytes("data", 1L << 30, DType.F16));  // 2^31 bytes
    }

    /**
     * A view re-viewed every step (a window moved along a sequence) may be deeper than a thread's stack holds frames:
     * asking whether it is closed walks its ancestors in a loop (a recursion overflowed 1 MB of stack at about 39,000).
     * Checked on a thread of 128 KB of stack, with a chain 12,000 deep (every view creation walks the chain once).
     */
    @Test void deepChainsOfViewsKnowWhenAnAncestorClosed() throws Exception {
        Tensor base = Tensor.empty(Device.CPU, DType.F32, 4);
        Tensor[] chain = new Tensor[12_001];
        chain[0] = base;
        for (int i = 1; i < chain.length; i++) {
            chain[i] = chain[i - 1].reshape(4);
        }
        Tensor last = chain[chain.length - 1];
        boolean[] seen = new boolean[4];
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(null, () -> {
            try {
                seen[0] = last.isClosed();
                chain[6_000].close();
                seen[1] = last.isClosed();
                seen[2] = base.isClosed();
                base.close();
                seen[3] = last.isClosed();
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "small-stack", 128 << 10);
        t.start();
        t.join();
        if (failure[0] != null) {
            throw new AssertionError("isClosed on a deep chain failed: " + failure[0], failure[0]);
        }
        assertFalse(seen[0]);
        assertTrue(seen[1], "a view of a closed view is closed");
        assertFalse(seen[2]);
        assertTrue(seen[3]);
    }
}
