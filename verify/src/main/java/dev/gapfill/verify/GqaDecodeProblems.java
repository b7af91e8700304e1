package dev.gapfill.verify;

import dev.gapfill.core.Closing;
import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.verify.arbitraries.GapfillArbitraries;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * Test data for {@link GqaDecode}: random host problems, the same logical cache in every layout (paged with pages in
 * random order), and jqwik arbitraries of small shapes, so downstream code can property-test its own use.
 */
public final class GqaDecodeProblems {
    private GqaDecodeProblems() {}

    /**
     * A host problem: q {@code [B, Hq, D]}, K and V {@code [B, Hkv, L, D]} (BHLD) with uniform values in [−1, 1)
     * exactly representable in the dtype, and the lengths.
     */
    public record HostCase(Tensor q, Tensor k, Tensor v, int[] lens) implements AutoCloseable {
        public int batch() { return (int) q.dim(0); }

        public int capacity() { return (int) k.dim(2); }

        /** Closes q, k and v: all three, even where closing one throws (the first failure is rethrown). */
        @Override public void close() {
            Closing.closeAll(q, k, v);
        }
    }

    /**
     * Random q, K, V (never zeros) of the given shape on the CPU: q {@code [B, hq, d]}, K and V {@code [B, hkv,
     * capacity, d]} with B = lens.length. The lengths are kept as given (a length above the capacity is allowed: the op
     * clamps it).
     *
     * @throws ArgumentException before allocating anything: naming {@code rnd}, {@code dt} or {@code lens} where it is
     *                           null, {@code dt} where it is not a float dtype, {@code lens} where it is empty,
     *                           {@code hq}, {@code hkv}, {@code d} or {@code capacity} where it is below 1, and
     *                           {@code capacity} where K would exceed a CPU tensor's 2^31-1 bytes ({@code hq} for q)
     */
    public static HostCase random(Random rnd, DType dt, int hq, int hkv, int d, int capacity, int[] lens) {
        if (rnd == null) {
            throw new ArgumentException("rnd", "a random source", "null");
        }
        checkFloat("dt", dt);
        if (lens == null) {
            throw new ArgumentException("lens", "an array of B lengths", "null");
        }
        if (lens.length == 0) {
            throw new ArgumentException("lens", "at least one length (B >= 1)", "an empty array");
        }
        positive("hq", hq);
        positive("hkv", hkv);
        positive("d", d);
        positive("capacity", capacity);
        int b = lens.length;
        hostBytes("hq", "q [B, Hq, D]", dt, b, hq, d);
        hostBytes("capacity", "K and V [B, Hkv, L, D]", dt, b, hkv, capacity, d);
        Tensor[] made = new Tensor[3];
        try {
            made[0] = uniform(rnd, dt, b, hq, d);
            made[1] = uniform(rnd, dt, b, hkv, capacity, d);
            made[2] = uniform(rnd, dt, b, hkv, capacity, d);
            return new HostCase(made[0], made[1], made[2], lens.clone());
        } catch (Throwable t) {
            dev.gapfill.core.Closing.closeAfter(t, made);
            throw t;
        }
    }

    /**
     * Uniform values in [−1, 1) on the CPU, never 0 ({@link GapfillArbitraries#uniformNonZero}).
     *
     * @throws ArgumentException naming {@code rnd} or {@code shape} where it is null, {@code dt} where it is not a float
     *                           dtype, {@code shape} where a dim is below 1 or the tensor would exceed 2^31-1 bytes
     */
    public static Tensor uniform(Random rnd, DType dt, long... shape) {
        if (rnd == null) {
            throw new ArgumentException("rnd", "a random source", "null");
        }
        checkFloat("dt", dt);
        if (shape == null) {
            throw new ArgumentException("shape", "the dims of the tensor", "null");
        }
        for (long s : shape) {
            if (s < 1) {
                throw new ArgumentException("shape", "every dim >= 1", java.util.Arrays.toString(shape));
            }
        }
        long n = hostBytes("shape", "the tensor", dt, shape) / dt.bytes();
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        return Tensor.of(Device.CPU, dt, f, shape);
    }

    /**
     * The BHLD cache {@code k, v} re-laid out on the CPU: BHLD (copies), BLHD, or PAGED with {@code pageSize} positions
     * per page, ceil(L / pageSize) pages per sequence, and the pages of all sequences in random order (unused page
     * slots are filled with random values too). Close the result with {@link #close(KvCache)}. Every argument is checked
     * before anything is allocated, and what was allocated is closed again where a later step fails.
     *
     * @param k        keys, BHLD {@code [B, Hkv, L, D]} on the CPU, F32, F16 or BF16 (GqaDecode takes F16 and BF16)
     * @param v        values, the same shape and dtype as k, on the CPU
     * @param layout   the layout to build
     * @param pageSize PAGED: positions per page, a power of two (as GqaDecode requires); ignored otherwise
     * @param rnd      PAGED: the source of the page order and of the unused slots; ignored (may be null) otherwise
     * @throws ArgumentException naming {@code k} or {@code v} where it is null, closed, not on the CPU, not of rank 4,
     *                           not of a float dtype or with a dim below 1 (v: also where its shape or dtype differs from
     *                           k's); {@code layout} where it is null; for PAGED, {@code pageSize} where it is not a
     *                           power of two or the pages would exceed a CPU tensor's 2^31-1 bytes (or the block table
     *                           2^31-1 entries), and {@code rnd} where it is null
     */
    public static KvCache relayout(Tensor k, Tensor v, KvLayout layout, int pageSize, Random rnd) {
        checkBhld("k", k);
        checkBhld("v", v);
        if (v.dtype() != k.dtype()) {
            throw new ArgumentException("v", "dtype " + k.dtype() + " (k's)", v.dtype().toString());
        }
        if (!java.util.Arrays.equals(v.shape(), k.shape())) {
            throw new ArgumentException("v", "shape " + java.util.Arrays.toString(k.shape()) + " (k's, [B, Hkv, L, D])",
                    java.util.Arrays.toString(v.shape()));
        }
        if (layout == null) {
            throw new ArgumentException("layout", "one of BHLD, BLHD, PAGED", "null");
        }
        int b = (int) k.dim(0);
        int hkv = (int) k.dim(1);
        int cap = (int) k.dim(2);
        int d = (int) k.dim(3);
        if (layout == KvLayout.PAGED) {
            if (pageSize < 1 || Integer.bitCount(pageSize) != 1) {
                throw new ArgumentException("pageSize", "a power of two >= 1 (GqaDecode's paged layout)", String.valueOf(pageSize));
            }
            if (rnd == null) {
                throw new ArgumentException("rnd", "a random source (the page order and the unused slots of a PAGED cache)", "null");
            }
            long pagesPerSequence = ((long) cap + pageSize - 1) / pageSize;
            long pages = b * pagesPerSequence;
            if (pages > Integer.MAX_VALUE) {
                throw new ArgumentException("pageSize", "at most 2^31-1 block-table entries (B·ceil(L / pageSize))",
                        pageSize + ": " + pages + " entries");
            }
            hostBytes("pageSize", "the pages [P, pageSize, Hkv, D] (P = B·ceil(L / pageSize) = " + pages + ")", k.dtype(), pages, pageSize,
                    hkv, d);
        }
        Tensor[] made = new Tensor[3];
        try {
            switch (layout) {
                case BHLD:
                    made[0] = copy(k);
                    made[1] = copy(v);
                    return KvCache.bhld(made[0], made[1]);
                case BLHD: {
                    Tensor kk = made[0] = Tensor.empty(Device.CPU, k.dtype(), b, cap, hkv, d);
                    Tensor vv = made[1] = Tensor.empty(Device.CPU, k.dtype(), b, cap, hkv, d);
                    Rows rows = new Rows(k, v, kk, vv, d);
                    for (int i = 0; i < b; i++) {
                        for (int h = 0; h < hkv; h++) {
                            for (int pos = 0; pos < cap; pos++) {
                                long src = (((long) i * hkv + h) * cap + pos) * d;
                                long dst = (((long) i * cap + pos) * hkv + h) * d;
                                rows.copy(src, dst);
                            }
                        }
                    }
                    return KvCache.blhd(kk, vv);
                }
                default: {
                    int maxPages = (int) (((long) cap + pageSize - 1) / pageSize);
                    int pages = b * maxPages;
                    List<Integer> perm = new ArrayList<>();
                    for (int i = 0; i < pages; i++) {
                        perm.add(i);
                    }
                    Collections.shuffle(perm, rnd);
                    int[] table = new int[pages];
                    for (int i = 0; i < pages; i++) {
                        table[i] = perm.get(i);
                    }
                    Tensor kp = made[0] = uniform(rnd, k.dtype(), pages, pageSize, hkv, d);
                    Tensor vp = made[1] = uniform(rnd, k.dtype(), pages, pageSize, hkv, d);
                    Rows rows = new Rows(k, v, kp, vp, d);
                    for (int i = 0; i < b; i++) {
                        for (int pos = 0; pos < cap; pos++) {
                            long page = table[i * maxPages + pos / pageSize];
                            for (int h = 0; h < hkv; h++) {
                                long src = (((long) i * hkv + h) * cap + pos) * d;
                                long dst = ((page * pageSize + pos % pageSize) * hkv + h) * d;
                                rows.copy(src, dst);
                            }
                        }
                    }
                    made[2] = Tensor.ofInts(Device.CPU, table, b, maxPages);
                    return KvCache.paged(kp, vp, made[2]);
                }
            }
        } catch (Throwable t) {
            dev.gapfill.core.Closing.closeAfter(t, made);
            throw t;
        }
    }

    /** k or v of {@link #relayout}: an open CPU tensor [B, Hkv, L, D] of a float dtype, every dim in [1, 2^31). */
    private static void checkBhld(String name, Tensor t) {
        if (t == null) {
            throw new ArgumentException(name, "a CPU tensor [B, Hkv, L, D]", "null");
        }
        if (t.isClosed()) {
            throw new ArgumentException(name, "an open tensor", "a closed tensor");
        }
        if (!t.device().isCpu()) {
            throw new ArgumentException(name, "a tensor on the CPU", "a tensor on " + t.device());
        }
        if (t.rank() != 4) {
            throw new ArgumentException(name, "rank 4 [B, Hkv, L, D]", "rank " + t.rank() + " " + java.util.Arrays.toString(t.shape()));
        }
        if (!t.dtype().isFloating()) {
            throw new ArgumentException(name, "a float dtype (F32, F16, BF16; GqaDecode takes F16 and BF16)", t.dtype().toString());
        }
        for (int i = 0; i < 4; i++) {
            if (t.dim(i) < 1 || t.dim(i) > Integer.MAX_VALUE) {
                throw new ArgumentException(name, "every dim of [B, Hkv, L, D] in [1, 2^31)", java.util.Arrays.toString(t.shape()));
            }
        }
    }

    private static void checkFloat(String name, DType dt) {
        if (dt == null || !dt.isFloating()) {
            throw new ArgumentException(name, "a float dtype (F32, F16, BF16)", String.valueOf(dt));
        }
    }

    private static void positive(String name, int v) {
        if (v < 1) {
            throw new ArgumentException(name, "a value >= 1", String.valueOf(v));
        }
    }

    /**
     * The bytes of a CPU tensor of {@code dims} in {@code dt} (saturating at Long.MAX_VALUE), refused naming
     * {@code argument} where above 2^31-1 (a CPU tensor's limit).
     */
    private static long hostBytes(String argument, String what, DType dt, long... dims) {
        long bytes = dt.bytes();
        for (long x : dims) {
            bytes = x != 0 && bytes > Long.MAX_VALUE / x ? Long.MAX_VALUE : bytes * x;
        }
        if (bytes > Integer.MAX_VALUE) {
            throw new ArgumentException(argument, what + " within 2^31-1 bytes (a CPU tensor's limit)", java.util.Arrays.toString(dims) + " "
                    + dt + ": " + (bytes == Long.MAX_VALUE ? "over 2^63" : String.valueOf(bytes)) + " bytes");
        }
        return bytes;
    }

    /**
     * Copies rows of d elements from CPU tensors k, v into kOut, vOut (element offsets): by bytes where all four are
     * contiguous, element by element otherwise.
     */
    private static final class Rows {
        private final Tensor k, v, kOut, vOut;
        private final java.nio.ByteBuffer kb, vb, kOutB, vOutB;  // null unless all four are contiguous
        private final int d, elemBytes;

        Rows(Tensor k, Tensor v, Tensor kOut, Tensor vOut, int d) {
            this.k = k;
            this.v = v;
            this.kOut = kOut;
            this.vOut = vOut;
            this.d = d;
            this.elemBytes = k.dtype().bytes();
            boolean bytes = k.isContiguous() && v.isContiguous() && kOut.isContiguous() && vOut.isContiguous();
            this.kb = bytes ? k.hostBuffer() : null;
            this.vb = bytes ? v.hostBuffer() : null;
            this.kOutB = bytes ? kOut.hostBuffer() : null;
            this.vOutB = bytes ? vOut.hostBuffer() : null;
        }

        void copy(long src, long dst) {
            if (kb != null) {
                kOutB.put((int) (dst * elemBytes), kb, (int) (src * elemBytes), d * elemBytes);
                vOutB.put((int) (dst * elemBytes), vb, (int) (src * elemBytes), d * elemBytes);
                return;
            }
            for (int e = 0; e < d; e++) {
                kOut.setRawBits(dst + e, k.getRawBits(src + e));
                vOut.setRawBits(dst + e, v.getRawBits(src + e));
            }
        }
    }

    /**
     * The cache's tensors on {@code device} (copies; close with {@link #close(KvCache)}). Where one copy fails (the
     * device out of memory, say), the copies made before it are closed.
     *
     * @throws ArgumentException naming {@code c} where it or its layout is null, {@code c.k}, {@code c.v} or
     *                           {@code c.blockTable} (PAGED) where it is null or closed, and {@code device} where it is null
     */
    public static KvCache to(KvCache c, Device device) {
        checkCache(c);
        if (device == null) {
            throw new ArgumentException("device", "a target device", "null");
        }
        Tensor[] made = new Tensor[3];
        try {
            made[0] = c.k().to(device);
            made[1] = c.v().to(device);
            made[2] = c.blockTable() == null ? null : c.blockTable().to(device);
            return new KvCache(c.layout(), made[0], made[1], made[2]);
        } catch (Throwable t) {
            dev.gapfill.core.Closing.closeAfter(t, made);
            throw t;
        }
    }

    /**
     * Closes the tensors of a cache: all of them, even where closing one throws (a tensor closed twice); the first
     * failure is rethrown after.
     *
     * @throws ArgumentException naming {@code c} where it is null
     */
    public static void close(KvCache c) {
        if (c == null) {
            throw new ArgumentException("c", "a KV cache", "null");
        }
        Closing.closeAll(c.k(), c.v(), c.blockTable());
    }

    private static void checkCache(KvCache c) {
        if (c == null) {
            throw new ArgumentException("c", "a KV cache", "null");
        }
        if (c.layout() == null) {
            throw new ArgumentException("c", "a KV cache layout (BHLD, BLHD or PAGED)", "null");
        }
        openTensor("c.k", c.k());
        openTensor("c.v", c.v());
        if (c.layout() == KvLayout.PAGED || c.blockTable() != null) {
            openTensor("c.blockTable", c.blockTable());
        }
    }

    private static void openTensor(String name, Tensor t) {
        if (t == null) {
            throw new ArgumentException(name, "a tensor", "null");
        }
        if (t.isClosed()) {
            throw new ArgumentException(name, "an open tensor", "a closed tensor");
        }
    }

    /** The problem a cache built by {@link #relayout} describes, with the given maxLen. */
    public static GqaDecode.Problem problem(Tensor q, KvCache c, int maxLen) {
        GqaDecode.Problem p = GqaDecode.Problem.of(q, c);
        return new GqaDecode.Problem(p.batch(), p.qHeads(), p.kvHeads(), p.headDim(), maxLen, p.layout(), p.pageSize(), p.maxPages(),
                p.dtype());
    }

    /** Small problems every backend supports: B ≤ 4, G ∈ {1, 2, 4, 7, 8, 12}, D ∈ {64, 128, 256}, maxLen ≤ 300. */
    public static Arbitrary<GqaDecode.Problem> smallProblems() {
        return problems(4, 2, 300);
    }

    /**
     * As {@link #smallProblems()}, within these bounds: B in [1, maxBatch], Hkv in [1, maxKvHeads], maxLen in
     * [1, maxLen] (a decode cache of a real model: thousands of keys; the reference's cost grows with B·Hq·maxLen·D).
     *
     * @throws ArgumentException naming a bound below 1, or one that could draw a problem a backend refuses
     *     (maxBatch·12·maxKvHeads above 65 535, or times maxLen at 2^31 or more)
     */
    public static Arbitrary<GqaDecode.Problem> problems(int maxBatch, int maxKvHeads, int maxLen) {
        if (maxBatch < 1) {
            throw new ArgumentException("maxBatch", "at least 1", String.valueOf(maxBatch));
        }
        if (maxKvHeads < 1) {
            throw new ArgumentException("maxKvHeads", "at least 1", String.valueOf(maxKvHeads));
        }
        if (maxLen < 1) {
            throw new ArgumentException("maxLen", "at least 1", String.valueOf(maxLen));
        }
        // every backend takes every draw (as smallProblems promises): Hq = 12·Hkv at most, and the vendor composition's
        // score matrix B·Hq·maxLen and grid B·Hq stay within 32 bits and 65 535 (jqwik draws the range ends as edge cases)
        long hq = 12L * maxKvHeads;
        if ((long) maxBatch * hq > 65535) {
            throw new ArgumentException("maxKvHeads", "maxBatch·12·maxKvHeads at most 65 535 (the vendor grid's B·Hq)",
                    maxBatch + "·12·" + maxKvHeads);
        }
        if ((long) maxBatch * hq * maxLen > Integer.MAX_VALUE) {
            throw new ArgumentException("maxLen", "maxBatch·12·maxKvHeads·maxLen below 2^31 (the vendor composition's score matrix)",
                    maxBatch + "·12·" + maxKvHeads + "·" + maxLen);
        }
        Arbitrary<Integer> batch = Arbitraries.integers().between(1, maxBatch);
        Arbitrary<Integer> kv = Arbitraries.integers().between(1, maxKvHeads);
        Arbitrary<Integer> g = Arbitraries.of(1, 2, 4, 7, 8, 12);
        Arbitrary<Integer> d = Arbitraries.of(64, 128, 256);
        Arbitrary<Integer> len = Arbitraries.integers().between(1, maxLen);
        Arbitrary<KvLayout> layout = Arbitraries.of(KvLayout.class);
        Arbitrary<Integer> page = Arbitraries.of(1, 16, 64);
        Arbitrary<DType> dt = Arbitraries.of(DType.F16, DType.BF16);
        return Combinators.combine(batch, kv, g, d, len, layout, page, dt).as((bb, hkv, gg, dd, l, lay, ps, t) ->
                lay == KvLayout.PAGED
                        ? new GqaDecode.Problem(bb, hkv * gg, hkv, dd, l, lay, ps, (l + ps - 1) / ps, t)
                        : GqaDecode.Problem.contiguous(bb, hkv * gg, hkv, dd, l, lay, t));
    }

    private static Tensor copy(Tensor t) {
        return t.to(Device.CPU);
    }
}
