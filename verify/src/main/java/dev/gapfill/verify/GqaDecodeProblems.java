package dev.gapfill.verify;

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

        @Override public void close() {
            q.close();
            k.close();
            v.close();
        }
    }

    /** Random q, K, V (never zeros) of the given shape on the CPU. */
    public static HostCase random(Random rnd, DType dt, int hq, int hkv, int d, int capacity, int[] lens) {
        int b = lens.length;
        return new HostCase(uniform(rnd, dt, b, hq, d), uniform(rnd, dt, b, hkv, capacity, d), uniform(rnd, dt, b, hkv, capacity, d),
                lens.clone());
    }

    /** Uniform values in [−1, 1) on the CPU, never 0 ({@link GapfillArbitraries#uniformNonZero}). */
    public static Tensor uniform(Random rnd, DType dt, long... shape) {
        long n = 1;
        for (long s : shape) {
            n *= s;
        }
        float[] f = new float[(int) n];
        for (int i = 0; i < f.length; i++) {
            f[i] = GapfillArbitraries.uniformNonZero(rnd, -1, 1);
        }
        return Tensor.of(Device.CPU, dt, f, shape);
    }

    /**
     * The BHLD cache {@code k, v} re-laid out on the CPU: BHLD (copies), BLHD, or PAGED with {@code pageSize} positions
     * per page, ceil(L / pageSize) pages per sequence, and the pages of all sequences in random order (unused page
     * slots are filled with random values too). Close the result with {@link #close(KvCache)}.
     */
    public static KvCache relayout(Tensor k, Tensor v, KvLayout layout, int pageSize, Random rnd) {
        int b = (int) k.dim(0);
        int hkv = (int) k.dim(1);
        int cap = (int) k.dim(2);
        int d = (int) k.dim(3);
        switch (layout) {
            case BHLD:
                return KvCache.bhld(copy(k), copy(v));
            case BLHD: {
                Tensor kk = Tensor.empty(Device.CPU, k.dtype(), b, cap, hkv, d);
                Tensor vv = Tensor.empty(Device.CPU, k.dtype(), b, cap, hkv, d);
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
                int maxPages = (cap + pageSize - 1) / pageSize;
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
                Tensor kp = uniform(rnd, k.dtype(), pages, pageSize, hkv, d);
                Tensor vp = uniform(rnd, k.dtype(), pages, pageSize, hkv, d);
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
                return KvCache.paged(kp, vp, Tensor.ofInts(Device.CPU, table, b, maxPages));
            }
        }
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

    /** The cache's tensors on {@code device} (copies; close with {@link #close(KvCache)}). */
    public static KvCache to(KvCache c, Device device) {
        return new KvCache(c.layout(), c.k().to(device), c.v().to(device), c.blockTable() == null ? null : c.blockTable().to(device));
    }

    /** Closes the tensors of a cache. */
    public static void close(KvCache c) {
        c.k().close();
        c.v().close();
        if (c.blockTable() != null) {
            c.blockTable().close();
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
        Arbitrary<Integer> batch = Arbitraries.integers().between(1, 4);
        Arbitrary<Integer> kv = Arbitraries.integers().between(1, 2);
        Arbitrary<Integer> g = Arbitraries.of(1, 2, 4, 7, 8, 12);
        Arbitrary<Integer> d = Arbitraries.of(64, 128, 256);
        Arbitrary<Integer> len = Arbitraries.integers().between(1, 300);
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
