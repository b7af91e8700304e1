package dev.gapfill.examples.bench;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.reference.GqaDecodeReference;
import dev.gapfill.verify.AttentionTolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The gqa_decode sweep of issue 7: B ∈ {1, 4, 16, 64} × L ∈ {512, 2048, 8192, 32768, 131072 (B ≤ 4)} × (Hq, Hkv, D) ∈
 * {(32, 8, 128), (64, 8, 128), (32, 32, 128), (28, 4, 128), (16, 2, 64)} × {F16, BF16} × {contiguous BHLD, paged 16,
 * paged 64 (pages in random order)} × {lengths = L, lengths drawn in [L/2, L]}. A case whose cache does not fit the
 * device's free memory is skipped with a {@code skip} line ({@link #admit}; caches up to 16 GiB always run).
 * The vendor composition, the custom kernel and AUTO are timed interleaved; floor = the K/V bytes actually read
 * (Σ_b len_b·Hkv·D·2·sizeof) + q and o, over the measured copy bandwidth.
 *
 * <p>Check: before timing, each path runs with the lengths of sequence 0 and of the last sequence scaled to at most 2048
 * keys ({@link #checkedLengths}: len·2048/longest where the longest exceeds 2048, so different lengths stay different) and
 * their outputs (all heads) are compared with the fp64 reference under {@link AttentionTolerance} (the last sequence
 * reads K/V at a nonzero batch offset or through its own block-table row); the row records the custom path's verdict
 * (vendor and AUTO failures are reported through progress and also fail the row). Cache values come from one random
 * block of 2^20 elements spread by {@link RandomFill}'s shifting copies, so sequences and heads hold different data.
 */
public final class GqaDecodeBench implements BenchSuite {
    private static final long ALWAYS_KV_BYTES = 16L << 30;
    private static final long HEADROOM_BYTES = 3L << 30;  // scores, the flush buffer, workspaces, the reference copies
    private static final double GIB = 1L << 30;
    private static final int CHECK_LEN = 2048;

    @Override public String op() { return "gqa_decode"; }

    @Override public boolean resumable() { return true; }

    private record Heads(int hq, int hkv, int d) {}

    @Override public List<BenchRow> run(BenchContext ctx) {
        List<BenchRow> rows = ctx.rows(op());
        List<Heads> heads = List.of(new Heads(32, 8, 128), new Heads(64, 8, 128), new Heads(32, 32, 128), new Heads(28, 4, 128),
                new Heads(16, 2, 64));
        int[] bs = {1, 4, 16, 64};
        int[] ls = {512, 2048, 8192, 32768, 131072};
        DType[] dts = {DType.F16, DType.BF16};
        int[] pageSizes = {0, 16, 64};
        if (ctx.quick()) {
            if (!ctx.wants(DType.F16)) {
                return rows;
            }
            for (int[] bl : new int[][] {{1, 8192}, {4, 2048}, {16, 8192}}) {
                for (int ps : new int[] {0, 16}) {
                    runShape(ctx, rows, heads.get(0), bl[0], bl[1], DType.F16, ps, new boolean[] {false});
                }
            }
            return rows;
        }
        for (DType dt : dts) {
            if (!ctx.wants(dt)) {
                continue;  // bench --dtype
            }
            for (Heads h : heads) {
                for (int b : bs) {
                    for (int l : ls) {
                        if (l == 131072 && b > 4) {
                            continue;
                        }
                        for (int ps : pageSizes) {
                            runShape(ctx, rows, h, b, l, dt, ps, new boolean[] {false, true});
                        }
                    }
                }
            }
        }
        return rows;
    }

    private void runShape(BenchContext ctx, List<BenchRow> rows, Heads h, int b, int l, DType dt, int pageSize, boolean[] variants) {
        long kvBytes = 2L * b * l * h.hkv() * h.d() * dt.bytes();
        String layoutName = pageSize == 0 ? "bhld" : "paged" + pageSize;
        List<Boolean> left = new ArrayList<>();  // the variants an earlier run of this commit did not measure (bench --resume)
        for (boolean varied : variants) {
            if (!ctx.done(op(), dt.name(), "B", b, "Hq", h.hq(), "Hkv", h.hkv(), "D", h.d(), "L", l, "layout",
                    pageSize == 0 ? "BHLD" : "PAGED", "page", pageSize, "lens", varied ? "[L/2,L]" : "L")) {
                left.add(varied);
            }
        }
        if (left.isEmpty()) {
            return;
        }
        variants = new boolean[left.size()];
        for (int i = 0; i < variants.length; i++) {
            variants[i] = left.get(i);
        }
        String skip = admit(Gpu.device(ctx.device()), kvBytes, pageSize);
        if (skip != null) {
            ctx.progress(String.format("gqa_decode skip %s B=%d L=%d %d/%d d%d %s: %s", dt, b, l, h.hq(), h.hkv(), h.d(), layoutName, skip));
            return;
        }
        try {
            measure(ctx, rows, h, b, l, dt, pageSize, variants, layoutName);
        } catch (dev.gapfill.core.DeviceOutOfMemoryException oom) {  // the estimate below was short: the case is skipped, not the sweep
            Gpu.device(ctx.device()).trim();
            ctx.progress(String.format("gqa_decode skip %s B=%d L=%d %d/%d d%d %s: out of device memory (%s); a variant measured "
                    + "before it keeps its row", dt, b, l, h.hq(), h.hkv(), h.d(), layoutName, oom.getMessage()));
        }
    }

    /**
     * Null when a case of {@code kvBytes} of K + V fits the device, else why not. Up to {@link #ALWAYS_KV_BYTES} (16 GiB) every
     * case runs; above it the pool is trimmed and the case needs its cache (twice for a paged cache: the vendor
     * composition gathers K and V into contiguous copies) and {@link #HEADROOM_BYTES} of the driver's free memory. On an
     * 80 GB H100 that admits the largest points (B = 64, L = 32 768, 32/32 heads: 32 GiB, 64 GiB paged), which
     * a fixed 16 GiB cap skipped until the forty-third session.
     */
    static String admit(dev.gapfill.core.CudaDevice cd, long kvBytes, int pageSize) {
        if (kvBytes <= ALWAYS_KV_BYTES) {
            return null;
        }
        cd.trim();
        long need = kvBytes * (pageSize == 0 ? 1 : 2) + HEADROOM_BYTES;
        long free = cd.memInfo()[0];
        return need <= free ? null : String.format("K+V %.1f GiB needs %.1f GiB, %.1f GiB free", kvBytes / GIB, need / GIB, free / GIB);
    }

    private void measure(BenchContext ctx, List<BenchRow> rows, Heads h, int b, int l, DType dt, int pageSize, boolean[] variants,
                         String layoutName) {
        Device dev = ctx.device();
        Stream s = ctx.stream();
        Random rnd = new Random(31L * b + l + h.hq());
        // the lengths of the [L/2, L] variant come from their own generator, so every layout of a shape reads the same
        // bytes and paged and contiguous rows compare like for like (rnd's draws depend on the layout)
        Random lenRnd = new Random(1_000_003L * b + 31L * l + 7L * h.hq() + h.hkv() + 13L * h.d());
        Problem p = pageSize == 0 ? Problem.contiguous(b, h.hq(), h.hkv(), h.d(), l, KvLayout.BHLD, dt)
                : Problem.paged(b, h.hq(), h.hkv(), h.d(), pageSize, (l + pageSize - 1) / pageSize, dt);
        long kvElems = pageSize == 0 ? (long) b * h.hkv() * l * h.d() : (long) b * p.maxPages() * pageSize * h.hkv() * h.d();
        Tensor table = null;
        try (Tensor q = Tensor.empty(dev, dt, s, b, h.hq(), h.d()); Tensor k = Tensor.empty(dev, dt, s, kvElems);
             Tensor v = Tensor.empty(dev, dt, s, kvElems); Tensor out = Tensor.empty(dev, dt, s, b, h.hq(), h.d());
             Tensor lse = Tensor.empty(dev, DType.F32, s, b, h.hq()); Tensor lens = Tensor.empty(dev, DType.I32, s, b)) {
            fillRandom(q, dt, rnd, s);
            fillRandom(k, dt, rnd, s);
            fillRandom(v, dt, rnd, s);
            KvCache cache;
            if (pageSize == 0) {
                cache = KvCache.bhld(k.reshape(b, h.hkv(), l, h.d()), v.reshape(b, h.hkv(), l, h.d()));
            } else {
                int pages = b * p.maxPages();
                List<Integer> perm = new ArrayList<>();
                for (int i = 0; i < pages; i++) {
                    perm.add(i);
                }
                Collections.shuffle(perm, rnd);
                int[] t = perm.stream().mapToInt(Integer::intValue).toArray();
                table = Tensor.ofInts(dev, t, b, p.maxPages());
                cache = KvCache.paged(k.reshape(pages, pageSize, h.hkv(), h.d()), v.reshape(pages, pageSize, h.hkv(), h.d()), table);
            }
            try (GqaDecodePlan vendor = GqaDecode.plan(p, dev, Options.defaults().withBackend(Backend.VENDOR), s);
                 GqaDecodePlan custom = GqaDecode.plan(p, dev, Options.defaults().withBackend(Backend.CUSTOM), s);
                 GqaDecodePlan auto = GqaDecode.plan(p, dev, Options.defaults(), s)) {
                // the fp64 references of the checked sequences (0 and B - 1), shared by the three paths of a variant and
                // by both variants where a sequence's checked length is the same
                int[] checked = b > 1 ? new int[] {0, b - 1} : new int[] {0};
                SeqReference[] refs = new SeqReference[checked.length];
                for (int i = 0; i < refs.length; i++) {
                    refs[i] = new SeqReference();
                }
                for (boolean varied : variants) {
                    int[] lv = new int[b];
                    for (int i = 0; i < b; i++) {
                        lv[i] = varied ? l / 2 + lenRnd.nextInt(l / 2 + 1) : l;
                    }
                    Verdict check = null;
                    boolean allPass = true;
                    for (GqaDecodePlan plan : new GqaDecodePlan[] {custom, vendor, auto}) {
                        Verdict vd = checkSequences(plan, q, cache, lens, out, lse, lv, s, checked, refs);
                        if (plan == custom) {
                            check = vd;
                        }
                        if (!vd.pass()) {
                            allPass = false;
                            ctx.progress("gqa_decode CHECK FAILED " + plan + ": " + vd);
                        }
                    }
                    s.synchronize();
                    lens.copyFrom(lv);
                    LinkedHashMap<String, Runnable> paths = new LinkedHashMap<>();
                    paths.put("vendor", () -> vendor.run(q, cache, lens, out, lse, s));
                    paths.put("custom", () -> custom.run(q, cache, lens, out, lse, s));
                    paths.put("auto", () -> auto.run(q, cache, lens, out, lse, s));
                    Map<String, Timing> t = ctx.timeInterleaved(paths);
                    long sumLen = 0;
                    for (int x : lv) {
                        sumLen += x;
                    }
                    long bytes = 2L * sumLen * h.hkv() * h.d() * dt.bytes() + 2L * b * h.hq() * h.d() * dt.bytes();
                    double flops = 4.0 * sumLen * h.hq() * h.d();
                    Map<String, double[]> spread = new LinkedHashMap<>();
                    t.forEach((name, tm) -> spread.put(name, new double[] {tm.p10Us(), tm.p90Us()}));
                    double floor = ctx.floorUs(bytes, flops);
                    String regime = custom.decision().variant();
                    Map<String, Object> shape = BenchRow.shape("B", b, "Hq", h.hq(), "Hkv", h.hkv(), "D", h.d(), "L", l, "layout",
                            pageSize == 0 ? "BHLD" : "PAGED", "page", pageSize, "lens", varied ? "[L/2,L]" : "L");
                    rows.add(new BenchRow(op(), dt.name(), shape, regime, t.get("vendor").medianUs(), t.get("custom").medianUs(),
                            t.get("auto").medianUs(), auto.decision().backend() + "/" + auto.decision().variant(), floor, bytes, flops,
                            Map.of(), spread, new BenchRow.Check("reference (seq 0 and B-1, len <= " + CHECK_LEN + ")", check.bitExact(),
                            check.maxUlp(), check.maxRelErr(), check.pass() && allPass)));
                    ctx.progress(String.format("gqa_decode %s B=%d L=%d %d/%d d%d %s%s: vendor %.1f custom %.1f auto %.1f (%s) floor %.1f us%s",
                            dt, b, l, h.hq(), h.hkv(), h.d(), layoutName, varied ? " var" : "", t.get("vendor").medianUs(),
                            t.get("custom").medianUs(), t.get("auto").medianUs(), auto.decision().backend(), floor,
                            allPass ? "" : " CHECK FAILED"));
                }
            }
        } finally {
            if (table != null) {
                table.close();
            }
        }
    }

    /**
     * The fp64 reference of one checked sequence at one checked length: the same for every path and variant of a shape
     * that checks that length (same q, cache and scale), so they share it instead of each copying the sequence to the
     * host and recomputing it; {@link #checkSequences} recomputes it when the length or the scale differs.
     */
    static final class SeqReference {
        private GqaDecodeReference.Exact exact;
        private double scale = Double.NaN;
        private int len = -1;
    }

    /**
     * The lengths of a checking run: {@code lv} with each sequence of {@code seqs} scaled to len·CHECK_LEN/longest where the
     * longest length exceeds CHECK_LEN. Scaled, not cut: sequences of different lengths stay different (L/2 and L are
     * checked at 1024 and 2048, not both at 2048), so the varied-length variant is checked as varied.
     */
    static int[] checkedLengths(int[] lv, int[] seqs) {
        int[] l = lv.clone();
        int longest = java.util.Arrays.stream(lv).max().orElse(0);
        for (int sq : seqs) {
            l[sq] = longest <= CHECK_LEN || l[sq] == 0 ? l[sq] : (int) Math.max(1, (long) l[sq] * CHECK_LEN / longest);
        }
        return l;
    }

    /**
     * Runs {@code plan} once with each sequence of {@code seqs} scaled to len·CHECK_LEN/longest where the launch's longest
     * sequence exceeds CHECK_LEN (else as it is), and compares their
     * outputs (all heads) and log-sum-exps with the fp64 reference; out and lse are poisoned first. Returns the first
     * failing verdict, else the passing verdicts combined (elements summed, bit-exact only if all are, the largest ulp
     * distance and relative error).
     */
    static Verdict checkSequences(GqaDecodePlan plan, Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, int[] lv,
                                  Stream s, int[] seqs, SeqReference[] refs) {
        Problem p = plan.problem();
        int[] l = checkedLengths(lv, seqs);
        s.synchronize();  // lens is written on the per-thread stream
        lens.copyFrom(l);
        out.fillBytes(0xff, s);
        lse.fillBytes(0xff, s);
        plan.run(q, cache, lens, out, lse, s);
        s.synchronize();
        int hq = p.qHeads();
        int d = p.headDim();
        int hkv = p.kvHeads();
        Verdict worst = null;
        for (int i = 0; i < seqs.length; i++) {
            int sq = seqs[i];
            SeqReference ref = refs[i];
            if (ref.exact == null || ref.len != l[sq] || ref.scale != plan.scale()) {
                long[] qs = {1, hq, d};
                try (Tensor hqs = q.strided(qs, Tensor.contiguousStrides(qs), (long) sq * hq * d).to(Device.CPU);
                     Tensor hk = Tensor.empty(Device.CPU, p.dtype(), 1, hkv, Math.max(l[sq], 1), d);
                     Tensor hv = Tensor.empty(Device.CPU, p.dtype(), 1, hkv, Math.max(l[sq], 1), d)) {
                    copySequence(cache, p, sq, l[sq], hk, hv);
                    ref.exact = GqaDecodeReference.exact(hqs, KvCache.bhld(hk, hv), new int[] {l[sq]}, l[sq], plan.scale());
                    ref.len = l[sq];
                    ref.scale = plan.scale();
                }
            }
            GqaDecodeReference.Exact ex = ref.exact;
            Tensor os = out.strided(new long[] {1, hq, d}, Tensor.contiguousStrides(new long[] {1, hq, d}), (long) sq * hq * d);
            boolean pRounded = AttentionTolerance.roundsProbabilities(plan.decision().backend());
            Verdict vo = Verifier.compare(os, ex.out(), ex.absTerms(), AttentionTolerance.output(p.dtype(), ex, d, pRounded), "reference");
            Tensor lses = lse.strided(new long[] {1, hq}, new long[] {hq, 1}, (long) sq * hq);
            Verdict vl = AttentionTolerance.compareLse(lses, ex, d);
            Verdict v = vl.pass() ? vo : vl;
            if (!v.pass()) {
                return v;
            }
            worst = worst == null ? v : new Verdict(worst.against(), worst.tolerance(), worst.elements() + v.elements(),
                    worst.bitExact() && v.bitExact(), worst.identical() + v.identical(), Math.max(worst.maxUlp(), v.maxUlp()),
                    Math.max(worst.maxRelErr(), v.maxRelErr()), 0, null, true);
        }
        return worst;
    }

    /** {@link #checkSequences} over sequence 0 alone (the probes' check). */
    static Verdict checkSequence0(GqaDecodePlan plan, Tensor q, KvCache cache, Tensor lens, Tensor out, Tensor lse, int[] lv, Stream s,
                                  SeqReference ref) {
        return checkSequences(plan, q, cache, lens, out, lse, lv, s, new int[] {0}, new SeqReference[] {ref});
    }

    /** K and V rows [0, len) of sequence {@code seq}, in BHLD order, into host tensors. */
    static void copySequence(KvCache cache, Problem p, int seq, int len, Tensor hk, Tensor hv) {
        if (len == 0) {
            return;
        }
        int hkv = p.kvHeads();
        int d = p.headDim();
        int[] table = null;
        if (p.layout() == KvLayout.PAGED) {
            try (Tensor row = cache.blockTable().strided(new long[] {p.maxPages()}, new long[] {1}, (long) seq * p.maxPages())
                    .to(Device.CPU)) {
                table = new int[p.maxPages()];
                for (int i = 0; i < table.length; i++) {
                    table[i] = (int) row.getDouble(i);
                }
            }
        }
        for (Tensor[] kv : new Tensor[][] {{cache.k(), hk}, {cache.v(), hv}}) {
            Tensor src = kv[0];
            Tensor dst = kv[1];
            if (p.layout() == KvLayout.BHLD) {
                long cap = src.dim(2);
                java.nio.ByteBuffer host = dst.hostBuffer();
                for (int h = 0; h < hkv; h++) {
                    try (Tensor part = src.strided(new long[] {len, d}, new long[] {d, 1}, ((long) seq * hkv + h) * cap * d).to(Device.CPU)) {
                        host.position((int) ((long) h * len * d * p.dtype().bytes()));
                        java.nio.ByteBuffer rows = part.hostBuffer();
                        rows.limit((int) ((long) len * d * p.dtype().bytes()));
                        host.put(rows);  // rows of head h, already in [len, d] order
                    }
                }
            } else {
                // one bulk copy per (token, head) row of d elements: page [ps][hkv][d] -> dst [hkv][len][d]
                int ps = p.pageSize();
                int rowBytes = d * p.dtype().bytes();
                java.nio.ByteBuffer host = dst.hostBuffer();
                for (int pg = 0; pg * ps < len; pg++) {
                    long base = (long) table[pg] * ps * hkv * d;
                    try (Tensor page = src.strided(new long[] {ps, hkv, d}, new long[] {(long) hkv * d, d, 1}, base).to(Device.CPU)) {
                        java.nio.ByteBuffer rows = page.hostBuffer();
                        for (int off = 0; off < ps && pg * ps + off < len; off++) {
                            for (int h = 0; h < hkv; h++) {
                                int from = (off * hkv + h) * rowBytes;
                                rows.limit(from + rowBytes).position(from);
                                host.position((int) (((long) h * len + pg * ps + off) * rowBytes));
                                host.put(rows);
                                rows.clear();
                            }
                        }
                    }
                }
            }
        }
    }

    /** Fills a device tensor with uniform [−1, 1) values: one random block of ≤ 2^20 elements, spread by {@link RandomFill}. */
    static void fillRandom(Tensor t, DType dt, Random rnd, Stream s) {
        if (t.dtype() != dt) {
            throw new IllegalArgumentException("fill of a " + t.dtype() + " tensor as " + dt);
        }
        RandomFill.fill(t, rnd, 1f, 1 << 20, s);
    }
}
