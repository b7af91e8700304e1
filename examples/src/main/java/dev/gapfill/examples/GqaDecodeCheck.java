package dev.gapfill.examples;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.GqaDecode;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Options;
import dev.gapfill.ops.GqaDecodePlan;
import dev.gapfill.ops.reference.GqaDecodeReference;
import dev.gapfill.verify.AttentionTolerance;
import dev.gapfill.verify.GqaDecodeProblems;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * {@code gapfill verify} for gqa_decode: random problems (B ≤ 4, G ∈ {1, 2, 4, 7, 8}, D ∈ {64, 128, 256}, every
 * layout, lengths including 0 and maxLen) through the public API with poisoned outputs; o and lse against the fp64
 * reference under {@link AttentionTolerance}. On a GPU each case runs AUTO, CUSTOM and VENDOR; on the CPU the API runs
 * the reference backend, so the check exercises validation, the layouts and the reference itself.
 */
public final class GqaDecodeCheck implements OpChecks.OpCheck {
    @Override public String op() { return "gqa_decode"; }

    @Override public List<String> run(Device device, Random rnd, int firstCase, int cases, PrintWriter out, Stream stream) {
        List<String> failures = new ArrayList<>();
        int[] gs = {1, 2, 4, 7, 8};
        int[] ds = {64, 128, 256};
        for (int c = firstCase; c < firstCase + cases; c++) {
            DType dt = c % 2 == 0 ? DType.F16 : DType.BF16;
            int b = 1 + rnd.nextInt(4);
            int hkv = 1 + rnd.nextInt(2);
            int g = gs[rnd.nextInt(gs.length)];
            int d = ds[rnd.nextInt(ds.length)];
            int cap = 1 + rnd.nextInt(device.isCpu() ? 200 : 1200);
            KvLayout layout = KvLayout.values()[c % 3];
            int pageSize = new int[] {1, 16, 64}[rnd.nextInt(3)];
            int[] lens = new int[b];
            for (int i = 0; i < b; i++) {
                int r = rnd.nextInt(4);
                lens[i] = r == 0 ? 0 : r == 1 ? cap : rnd.nextInt(cap + 1);
            }
            String label = String.format("gqa_decode %s B=%d Hq=%d Hkv=%d D=%d cap=%d %s%s lens %s", dt, b, hkv * g, hkv, d, cap, layout,
                    layout == KvLayout.PAGED ? "/" + pageSize : "", Arrays.toString(lens));
            try (GqaDecodeProblems.HostCase host = GqaDecodeProblems.random(rnd, dt, hkv * g, hkv, d, cap, lens)) {
                KvCache hostCache = GqaDecodeProblems.relayout(host.k(), host.v(), layout, pageSize, rnd);
                KvCache cache = device.isCpu() ? hostCache : GqaDecodeProblems.to(hostCache, device);
                GqaDecodeReference.Exact ex = GqaDecodeReference.exact(host.q(), KvCache.bhld(host.k(), host.v()), lens, cap,
                        1 / Math.sqrt(d));
                Backend[] backends = device.isCpu() ? new Backend[] {Backend.AUTO} : new Backend[] {Backend.AUTO, Backend.CUSTOM, Backend.VENDOR};
                try (Tensor q = host.q().to(device); Tensor lt = Tensor.ofInts(device, lens, b);
                     Tensor o = Tensor.empty(device, dt, b, hkv * g, d); Tensor lse = Tensor.empty(device, DType.F32, b, hkv * g)) {
                    for (Backend be : backends) {
                        o.fillBytes(0xff);
                        lse.fillBytes(0xff);
                        try (GqaDecodePlan plan = GqaDecode.plan(GqaDecodeProblems.problem(q, cache, cap), device,
                                Options.defaults().withBackend(be), stream)) {
                            OpChecks.beforeOp(device, stream);
                            plan.run(q, cache, lt, o, lse, stream);
                            boolean pRounded = AttentionTolerance.roundsProbabilities(plan.decision().backend());
                            Verdict vo = Verifier.compare(o, ex.out(), ex.absTerms(), AttentionTolerance.output(dt, ex, d, pRounded), "reference");
                            Verdict vl = AttentionTolerance.compareLse(lse, ex, d);
                            if (!vo.pass() || !vl.pass()) {
                                failures.add(label + " " + plan.decision() + ": " + (vo.pass() ? vl : vo));
                            }
                        }
                    }
                } finally {
                    if (!device.isCpu()) {
                        GqaDecodeProblems.close(cache);
                    }
                    GqaDecodeProblems.close(hostCache);
                }
            } catch (RuntimeException e) {
                failures.add(OpChecks.error(label, e));
            }
        }
        return failures;
    }
}
