package dev.gapfill.examples.demo;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.reference.GqaDecodeReference;
import dev.gapfill.verify.AttentionTolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;
import org.bytedeco.cuda.global.cudart;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * The attention of {@value #STEPS} consecutive decode steps over a paged KV cache: B sequences whose lengths grow by one
 * position per step, their pages scattered over the cache in random order.
 *
 * <p>Legend: B sequences, L capacity (positions per sequence), Hq query heads, Hkv KV heads, D head dim, page positions
 * per page. Tensors: q {@code [B, Hq, D]}, K and V pages {@code [B·L/page, page, Hkv, D]}, block table
 * {@code [B, L/page]} I32, lengths {@code [B]} I32 on the device. Step s uses {@code len_b = base_b + s} with base_b
 * drawn in [L − {@value #STEPS} − L/4, L − {@value #STEPS}], so every step attends over nearly the whole cache.
 *
 * <p>{@link #setStep} writes step s's lengths into the lengths tensor on the device, in stream order (a 4·B-byte copy
 * from a table of all steps' lengths): the same buffer a captured plan reads at every replay.
 */
public final class DecodeStep implements AutoCloseable {
    /** Steps of one decode run. */
    public static final int STEPS = 64;
    /** Steps whose outputs are compared with the fp64 reference (every step is checked for unwritten outputs). */
    static final int[] CHECKED = {0, STEPS / 2 - 1, STEPS - 1};

    /**
     * The shape of the decode step.
     *
     * @param batch    B
     * @param capacity L (a multiple of pageSize)
     * @param qHeads   Hq
     * @param kvHeads  Hkv
     * @param headDim  D
     * @param pageSize positions per page
     * @param dtype    F16 or BF16 for q, K, V and the output
     */
    public record Config(int batch, int capacity, int qHeads, int kvHeads, int headDim, int pageSize, DType dtype) {
        public Config {
            if (capacity % pageSize != 0) {
                throw new ArgumentException("capacity", "a multiple of pageSize=" + pageSize, String.valueOf(capacity));
            }
            if (capacity < STEPS + capacity / 4 + 1) {
                int least = STEPS + 1;
                while (least < STEPS + least / 4 + 1) {
                    least++;  // the smallest capacity the condition admits (86 for 64 steps)
                }
                throw new ArgumentException("capacity", "at least " + least + " so that " + STEPS
                        + " growing lengths fit", String.valueOf(capacity));
            }
        }

        /** The plan's problem: maxLen = L. */
        public GqaDecode.Problem problem() {
            return GqaDecode.Problem.paged(batch, qHeads, kvHeads, headDim, pageSize, capacity / pageSize, dtype);
        }

        /** {@code B=1 L=4096 Hq=32 Hkv=8 D=128 page=16 BF16}. */
        public String text() {
            return "B=" + batch + " L=" + capacity + " Hq=" + qHeads + " Hkv=" + kvHeads + " D=" + headDim + " page=" + pageSize + " "
                    + dtype;
        }
    }

    public final Config config;
    /** q and the paged cache on the host, read by the reference. */
    public final Tensor hostQ;
    public final KvCache hostCache;
    /** The same values on the device. */
    public final Tensor q;
    public final KvCache cache;
    /** The lengths the next step reads, I32 [B], on the device. */
    public final Tensor lens;
    private final int[][] steps;
    private final Tensor lensTable;
    private final Map<Integer, GqaDecodeReference.Exact> references = new ConcurrentHashMap<>();

    private DecodeStep(Config config, Tensor hostQ, KvCache hostCache, Tensor q, KvCache cache, int[][] steps, Tensor lensTable,
                       Tensor lens) {
        this.config = config;
        this.hostQ = hostQ;
        this.hostCache = hostCache;
        this.q = q;
        this.cache = cache;
        this.steps = steps;
        this.lensTable = lensTable;
        this.lens = lens;
    }

    /** Random q, K and V in [−1, 1), pages in random order, the lengths of every step; copied to {@code device}. */
    public static DecodeStep random(Config c, Device device, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        int maxPages = c.capacity() / c.pageSize();
        int pages = c.batch() * maxPages;
        List<Integer> perm = new ArrayList<>(IntStream.range(0, pages).boxed().toList());
        Collections.shuffle(perm, new java.util.Random(rnd.nextLong()));
        int[][] steps = new int[STEPS][c.batch()];
        int[] flat = new int[STEPS * c.batch()];
        for (int b = 0; b < c.batch(); b++) {
            int base = c.capacity() - STEPS - rnd.nextInt(c.capacity() / 4 + 1);
            for (int s = 0; s < STEPS; s++) {
                steps[s][b] = base + s;
                flat[s * c.batch() + b] = base + s;
            }
        }
        List<Tensor> made = new ArrayList<>();
        try {
            Tensor hq = keep(made, RandomData.uniform(rnd, c.dtype(), 1, c.batch(), c.qHeads(), c.headDim()));
            Tensor hk = keep(made, RandomData.uniform(rnd, c.dtype(), 1, pages, c.pageSize(), c.kvHeads(), c.headDim()));
            Tensor hv = keep(made, RandomData.uniform(rnd, c.dtype(), 1, pages, c.pageSize(), c.kvHeads(), c.headDim()));
            Tensor ht = keep(made, Tensor.ofInts(Device.CPU, perm.stream().mapToInt(Integer::intValue).toArray(), c.batch(), maxPages));
            KvCache dev = KvCache.paged(keep(made, hk.to(device)), keep(made, hv.to(device)), keep(made, ht.to(device)));
            return new DecodeStep(c, hq, KvCache.paged(hk, hv, ht), keep(made, hq.to(device)), dev,
                    steps, keep(made, Tensor.ofInts(device, flat, STEPS, c.batch())), keep(made, Tensor.ofInts(device, steps[0], c.batch())));
        } catch (RuntimeException e) {
            made.forEach(Tensor::close);
            throw e;
        }
    }

    private static Tensor keep(List<Tensor> made, Tensor t) {
        made.add(t);
        return t;
    }

    /** The lengths of step {@code s}. */
    public int[] lengths(int s) {
        return steps[s].clone();
    }

    /** Writes step {@code s}'s lengths into {@link #lens}, in order on {@code stream} (ignored for CPU tensors). */
    public void setStep(int s, Stream stream) {
        if (lens.device().isCpu()) {
            lens.copyFrom(steps[s]);
            return;
        }
        CudaDevice cd = Gpu.device(lens.device());
        long bytes = 4L * config.batch();
        cd.check(cudart.cudaMemcpyAsync(new DevicePointer(lens.address()), new DevicePointer(lensTable.address() + s * bytes), bytes,
                cudart.cudaMemcpyDeviceToDevice, stream.handle()), "cudaMemcpyAsync(D2D, lengths of step " + s + ")");
        lens.recordStream(stream);
        lensTable.recordStream(stream);
    }

    /**
     * A runnable that writes the next step's lengths (0, 1, ..., {@value #STEPS} − 1, then 0 again) and then runs
     * {@code step}: one decode step of a growing sequence, as a timed path.
     */
    public Runnable advancing(Stream stream, Runnable step) {
        int[] next = {0};
        return () -> {
            setStep(next[0], stream);
            next[0] = (next[0] + 1) % STEPS;
            step.run();
        };
    }

    /** The fp64 reference of step {@code s} (computed once; the reference runs its (sequence, KV head) pairs in parallel). */
    public GqaDecodeReference.Exact reference(int s, double scale) {
        return references.computeIfAbsent(s, x -> GqaDecodeReference.exact(hostQ, hostCache, steps[s], config.capacity(), scale));
    }

    /**
     * Runs the {@value #STEPS} steps in order through {@code step} (which must read {@link #lens} and write {@code out}
     * and {@code lse}), with both outputs poisoned before every step; checks that every step wrote every element, and
     * compares steps 0, 31 and 63 element by element with the fp64 reference under {@link AttentionTolerance}.
     *
     * @param roundsP     the bound of a path that rounds the probabilities to the cache dtype before P·V (both GPU paths,
     *                    {@code AttentionTolerance.roundsProbabilities}; the CPU reference does not)
     */
    public LayerCheck verify(String path, Runnable step, Tensor out, Tensor lse, Stream stream, double scale, boolean roundsP) {
        List<LayerCheck.Stage> stages = new ArrayList<>();
        long unwritten = 0;
        String first = null;
        int next = 0;
        for (int s = 0; s < STEPS; s++) {
            setStep(s, stream);
            out.fillBytes(0xff, stream);
            lse.fillBytes(0xff, stream);
            step.run();
            if (stream != null) {
                stream.synchronize();
            }
            long nan = countNaN(out.toFloatArray()) + countNaN(lse.toFloatArray());
            if (nan > 0 && first == null) {
                first = "step " + s + ": " + nan + " elements of out/lse still hold the poison";
            }
            unwritten += nan;
            if (next < CHECKED.length && CHECKED[next] == s) {
                next++;
                GqaDecodeReference.Exact ex = reference(s, scale);
                Verdict vo = Verifier.compare(out, ex.out(), ex.absTerms(),
                        AttentionTolerance.output(config.dtype(), ex, config.headDim(), roundsP), "reference");
                stages.add(new LayerCheck.Stage("out@" + s, vo));
                stages.add(new LayerCheck.Stage("lse@" + s, AttentionTolerance.compareLse(lse, ex, config.headDim())));
            }
        }
        long elements = (long) STEPS * (out.numel() + lse.numel());
        stages.add(new LayerCheck.Stage("out+lse written@0.." + (STEPS - 1), new Verdict("poison", "no element left unwritten",
                elements, false, 0, 0, 0, unwritten, first, unwritten == 0)));
        return new LayerCheck(path, stages);
    }

    private static long countNaN(float[] v) {
        long n = 0;
        for (float x : v) {
            n += Float.isNaN(x) ? 1 : 0;
        }
        return n;
    }

    /** Σ_b len_b over the {@value #STEPS} steps: the key positions read, in total. */
    public long totalPositions() {
        long n = 0;
        for (int[] s : steps) {
            for (int l : s) {
                n += l;
            }
        }
        return n;
    }

    @Override public void close() {
        for (Tensor t : new Tensor[] {hostQ, hostCache.k(), hostCache.v(), hostCache.blockTable(), q, cache.k(), cache.v(),
                cache.blockTable(), lensTable, lens}) {
            t.close();
        }
    }
}
