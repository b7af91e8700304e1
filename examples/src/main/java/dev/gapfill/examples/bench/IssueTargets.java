package dev.gapfill.examples.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The speed targets of the op issues (3: bmm, 4: depthwise_conv3x3, 5: int8_mm, 6: grouped_gemm, 7: gqa_decode) and of
 * the end-to-end issue (8: {@code gapfill demo}'s MoE layer and decode step),
 * evaluated on the rows of one benchmark file, so that {@code gapfill report} states where each target stands from
 * the measurements themselves. Each target is read as its issue words it; where the wording leaves a choice, the
 * stricter reading is taken and named in the target's text (e.g. the F16/BF16 geometric means of issue 4 are taken
 * per dtype). A target over rows the file does not have says so instead of a verdict; a target met on an incomplete
 * or quick sweep says "met on these rows", never plain "met". A target is judged on the rows of its range (its shape and
 * dtype selection; a row without a shape field the range reads is not in it) that have the times it compares, and a row
 * of its range that cannot be judged so, or whose check failed, keeps it from being met ({@link Gaps}).
 */
public final class IssueTargets {
    private IssueTargets() {}

    /** One target: its wording, what the rows show, and {@code met} (null when the file has no row it applies to). */
    public record Result(String target, String measured, Boolean met) {
        /** "met", "met on these rows", "not met" or "no rows". */
        public String status(boolean fullSweep) {
            if (met == null) {
                return "no rows";
            }
            return met ? (fullSweep ? "met" : "met on these rows") : "**not met**";
        }
    }

    /** The issue that defines {@code op}'s targets, or 0 when none does. */
    public static int issue(String op) {
        switch (op) {
            case "bmm": return 3;
            case "depthwise_conv3x3": return 4;
            case "int8_mm": return 5;
            case "grouped_gemm": return 6;
            case "gqa_decode": return 7;
            case "demo": return 8;
            default: return 0;
        }
    }

    /**
     * Points of the issue's sweep grid where a file of {@code op} must hold at least that many rows to be the full sweep,
     * or 0 where the report does not count them. gqa_decode: B ∈ {1, 4, 16, 64} × L ∈ {512, 2048, 8192, 32768, and
     * 131072 for B ≤ 4} (18 pairs) × 5 head configurations × 2 dtypes × 3 layouts × 2 length modes = 1080; its sweep
     * skips the cases the device's free memory cannot hold (GqaDecodeBench.admit), so a file can be complete and still
     * not the full sweep. bmm: 3 dtypes × (3 batches × 9 square n + 5 (m, n, k) shapes + the shared B) = 99, counted by
     * {@link #issuePointsIn} (BmmBench's own extra rows are not points).
     */
    public static int issueGridPoints(String op) {
        switch (op) {
            case "gqa_decode": return 1080;
            case "bmm": return 99;  // per dtype: 3 batches x 9 square n, 5 (m, n, k) shapes and the shared B; 3 dtypes
            default: return 0;
        }
    }

    /**
     * How many of {@code op}'s issue sweep points {@code rows} hold (a bench's own extra rows do not count): distinct
     * points, so a row written twice (a resumed sweep that measured a point again) does not stand in for a missing one.
     */
    public static int issuePointsIn(String op, List<Map<String, Object>> rows) {
        if (op.equals("bmm")) {
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (Map<String, Object> r : rows) {
                if (bmmIssuePoint(r)) {
                    seen.add(r.get("dtype") + "|" + shape(r, "batch") + "|" + shape(r, "m") + "|" + shape(r, "n") + "|" + shape(r, "k")
                            + "|" + Boolean.TRUE.equals(shapeMap(r).get("shared_b")));
                }
            }
            return seen.size();
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (Map<String, Object> r : rows) {  // (dtype, shape), the shape's fields in any order
            seen.add(r.get("dtype") + "|" + new java.util.TreeMap<>(shapeMap(r)));
        }
        return seen.size();
    }

    /** The targets of {@code op}'s issue over {@code rows} (the JSON rows of a benchmark file); empty for other ops. */
    public static List<Result> evaluate(String op, List<Map<String, Object>> rows) {
        return evaluate(op, rows, Map.of());
    }

    /**
     * As {@link #evaluate(String, List)}, with the file's {@code ceilings}: where they hold the read-after-flush line
     * ({@code read_after_flush_us}, {@code read_after_flush_GBps}), each floor-fraction target also counts the rows
     * it is out of every kernel's reach on (a plain read of the row's bytes after the flush already takes longer than
     * the target allows).
     */
    public static List<Result> evaluate(String op, List<Map<String, Object>> rows, Map<String, Object> ceilings) {
        Double c = ceilings == null ? null : num(ceilings, "read_after_flush_us");
        Double bw = ceilings == null ? null : num(ceilings, "read_after_flush_GBps");
        double[] line = c != null && bw != null && bw > 0 ? new double[] {c, bw} : null;  // {intercept µs, GB/s}
        List<Result> out = new ArrayList<>();
        switch (op) {
            case "bmm": bmm(rows, out, line); break;
            case "depthwise_conv3x3": depthwise(rows, out, line); break;
            case "int8_mm": int8(rows, out, line, ceilings == null ? null : num(ceilings, "copy_GBps")); break;
            case "grouped_gemm": grouped(rows, out, line); break;
            case "gqa_decode": gqa(rows, out, line); break;
            case "demo": demo(rows, out); break;
            default: break;
        }
        if (!out.isEmpty()) {
            out.add(checksPassed(rows));
        }
        return out;
    }

    /**
     * The issues' "results" targets (issue 3: "within the tolerance policy against the fp64 reference, for both paths";
     * issue 8: both compositions verified), read over every row: met when every row has a check and every check says
     * {@code pass} (each sweep checks the paths it times before timing them; the row's {@code against} says what it
     * compared). Rows without a check are counted apart from failed ones, and either keeps it from being met. The speed
     * targets count only the failed checks of their own range ({@link Gaps}); this row is where every row's check shows,
     * those without one included.
     */
    static Result checksPassed(List<Map<String, Object>> rows) {
        int passed = 0;
        int unchecked = 0;
        for (Map<String, Object> r : rows) {
            Object c = r.get("check");
            if (!(c instanceof Map<?, ?> m) || !m.containsKey("pass")) {
                unchecked++;
            } else if (Boolean.TRUE.equals(m.get("pass"))) {
                passed++;
            }
        }
        int failed = rows.size() - passed - unchecked;
        String measured = String.format(Locale.ROOT, "%d of %d rows passed", passed, rows.size())
                + (failed > 0 ? String.format(Locale.ROOT, ", %d failed", failed) : "")
                + (unchecked > 0 ? String.format(Locale.ROOT, ", %d without a check", unchecked) : "");
        return new Result("results: every row checked, every check passed", measured, rows.isEmpty() ? null : passed == rows.size());
    }

    // ---------------------------------------------------------------- issue 3

    /** The issue's bmm sweep: square n at batch 512, 2048, 8192; at batch 2048 five (m, n, k) shapes and a shared B. */
    private static final java.util.Set<Long> BMM_SQUARE_N = java.util.Set.of(8L, 16L, 32L, 48L, 64L, 96L, 128L, 192L, 256L);
    private static final java.util.Set<java.util.List<Long>> BMM_EXTRA_MNK = java.util.Set.of(java.util.List.of(17L, 33L, 9L),
            java.util.List.of(100L, 100L, 100L), java.util.List.of(1L, 64L, 64L), java.util.List.of(64L, 1L, 64L),
            java.util.List.of(32L, 128L, 64L));

    /**
     * Whether a row is one of issue 3's sweep points: its square n, its extra (m, n, k) shapes or its shared-B case
     * (BmmBench's own extra rows, such as 60³ or 36 × 44 × 52, are not).
     */
    static boolean bmmIssuePoint(Map<String, Object> r) {
        if (!has(r, "batch", "m", "n", "k")) {
            return false;
        }
        long m = shape(r, "m"), n = shape(r, "n"), k = shape(r, "k"), batch = shape(r, "batch");
        boolean shared = Boolean.TRUE.equals(shapeMap(r).get("shared_b"));
        if (shared) {  // the issue names "a shared-B case"; BmmBench's is 64³ at batch 2048
            return batch == 2048 && m == 64 && n == 64 && k == 64;
        }
        if (m == n && n == k && BMM_SQUARE_N.contains(n) && (batch == 512 || batch == 2048 || batch == 8192)) {
            return true;
        }
        return batch == 2048 && BMM_EXTRA_MNK.contains(java.util.List.of(m, n, k));
    }

    private static void bmm(List<Map<String, Object>> rows, List<Result> out, double[] line) {
        // "n" is the issue's n of C [batch, m, n], over every sweep point: the square ones and the (m, n, k) extras, so
        // (64, 1, 64) is an n ≤ 32 point and (1, 64, 64), (32, 128, 64) and the shared-B 64³ are 48 ≤ n ≤ 128 points
        // (the stricter reading: before the forty-third session only the square points counted)
        Predicate<Map<String, Object>> point = IssueTargets::bmmIssuePoint;
        Predicate<Map<String, Object>> half = r -> "F16".equals(r.get("dtype")) || "BF16".equals(r.get("dtype"));
        List<Map<String, Object>> tinyHalf = select(rows, point.and(half).and(r -> shape(r, "n") <= 32));
        out.add(judge(tinyHalf, NEEDS_VENDOR, j -> speedupGeomean(
                "n ≤ 32, F16/BF16 (the issue's sweep points, square and (m, n, k)): custom ≥ 2.0× the vendor (geometric mean)",
                j, IssueTargets::vendor, 2.0, line)));
        out.add(judge(tinyHalf, NEEDS_VENDOR, j -> speedupAtEveryRow("… never below 1.5×", j, 1.5, line)));
        out.add(judge(select(rows, point.and(r -> "F32".equals(r.get("dtype")) && shape(r, "n") <= 32)), NEEDS_VENDOR,
                j -> speedupGeomean("n ≤ 32, F32: custom ≥ 1.5× the vendor (geometric mean)", j, IssueTargets::vendor, 1.5, line)));
        out.add(judge(select(rows, point.and(half).and(r -> shape(r, "n") >= 48 && shape(r, "n") <= 128 && shape(r, "batch") >= 2048)),
                CUSTOM_ONLY, j -> floorAtEveryRow("48 ≤ n ≤ 128 at batch ≥ 2048, F16/BF16 (the issue's sweep points): floor / custom ≥ 0.8",
                        j, 0.8, line)));
        out.add(autoWithin(rows, false));
    }

    // ---------------------------------------------------------------- issue 4

    private static void depthwise(List<Map<String, Object>> rows, List<Result> out, double[] line) {
        for (String dt : new String[] {"F16", "BF16"}) {
            out.add(judge(select(rows, r -> dt.equals(r.get("dtype"))), NEEDS_VENDOR, j -> speedupGeomean(
                    dt + ": custom ≥ 3.0× the vendor composition (geometric mean; F16 and BF16 taken one by one)",
                    j, IssueTargets::vendor, 3.0, line)));
        }
        out.add(judge(select(rows, r -> "F32".equals(r.get("dtype"))), NEEDS_VENDOR,
                j -> speedupGeomean("F32: custom ≥ 2.0× the vendor composition (geometric mean)", j, IssueTargets::vendor, 2.0, line)));
        // a floor fraction needs no vendor time (before, a case without one was left out of this target)
        out.add(judge(select(rows, r -> num(r, "bytes") != null && num(r, "bytes") >= 32e6), CUSTOM_ONLY,
                j -> floorAtEveryRow("every case moving ≥ 32 MB (10⁶ bytes): floor / custom ≥ 0.75", j, 0.75, line)));
        out.add(autoWithin(rows, false));
    }

    // ---------------------------------------------------------------- issue 5

    private static void int8(List<Map<String, Object>> rows, List<Result> out, double[] line, Double copyGBps) {
        Predicate<Map<String, Object>> skinny = r -> has(r, "m", "k", "n") && shape(r, "m") <= 16
                && (double) shape(r, "k") * shape(r, "n") >= 16.0 * (1 << 20);
        List<Map<String, Object>> s = select(rows, skinny);
        // the issue's floor is the weight read alone: K·N bytes over the copy bandwidth of the run that measured the row
        // (Int8MmBench's floor column is A, W and the output over it, so the row's own bandwidth is bytes / floor; a row
        // kept from an earlier run by --resume keeps its run's bandwidth, not this file's ceilings)
        out.add(judge(s, CUSTOM_ONLY, j -> floorAtEveryRow(
                "M ≤ 16, K·N ≥ 16Mi: floor / custom ≥ 0.8 (weight-read floor: K·N bytes / the copy bandwidth of the run that measured the row)",
                weightFloorRows(j, copyGBps), 0.8, line)));
        out.add(judge(s, NEEDS_VENDOR, j -> speedupAtEveryRow("… custom ≥ 1.3× the vendor at every point", j, 1.3, line)));
        // the peer's range is the rows that timed it (files from before the peer have none)
        out.add(judge(select(s, r -> peer(r, "f16_cublas") != null), CUSTOM_ONLY, j -> every("… custom ≥ 2× the F16 cuBLAS peer", j,
                r -> peer(r, "f16_cublas") / num(r, "custom_us"), 2.0, "×")));
        out.add(judge(select(rows, r -> has(r, "m") && shape(r, "m") >= 32 && shape(r, "m") <= 64), NEEDS_VENDOR,
                j -> speedupGeomean("32 ≤ M ≤ 64: custom ≥ 1.3× the vendor (geometric mean)", j, IssueTargets::vendor, 1.3, line)));
        out.add(autoWithin(rows, false));
    }

    /**
     * Copies of int8 rows whose floor and bytes are the weight read alone: K·N bytes at the bandwidth of the row's own
     * floor column (its bytes / its floor, both from the run that measured it), or at {@code copyGBps} for a row without
     * those columns; a row with neither keeps its floor column.
     */
    static List<Map<String, Object>> weightFloorRows(List<Map<String, Object>> rows, Double copyGBps) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            Map<String, Object> c = new java.util.LinkedHashMap<>(r);
            double kn = (double) shape(r, "k") * shape(r, "n");
            Double floor = num(r, "floor_us");
            Double bytes = num(r, "bytes");
            if (floor != null && floor > 0 && bytes != null && bytes > 0) {
                c.put("floor_us", floor * kn / bytes);
            } else if (copyGBps != null && copyGBps > 0) {
                c.put("floor_us", kn / (copyGBps * 1e3));
            } else {
                out.add(c);
                continue;
            }
            c.put("bytes", kn);
            c.put("written_bytes", 0.0);  // the bytes above are the weights alone: plainRead subtracts no output from them
            out.add(c);
        }
        return out;
    }

    // ---------------------------------------------------------------- issue 6

    private static void grouped(List<Map<String, Object>> rows, List<Result> out, double[] line) {
        // vendor_us is the per-expert loop, the peer cublas_grouped_batched the grouped-batched call (GroupedGemmBench)
        List<Map<String, Object>> fine = select(rows, r -> has(r, "experts") && shape(r, "experts") >= 64);
        out.add(judge(fine, NEEDS_VENDOR,
                j -> speedupGeomean("E ≥ 64: custom ≥ 5× the per-expert loop (geometric mean)", j, IssueTargets::vendor, 5.0, line)));
        out.add(judge(select(fine, r -> peer(r, "cublas_grouped_batched") != null), CUSTOM_ONLY,
                j -> speedupGeomean("E ≥ 64: custom ≥ 1.3× cublasGemmGroupedBatchedEx (geometric mean)", j,
                        r -> peer(r, "cublas_grouped_batched"), 1.3, line)));
        out.add(judge(select(rows, r -> has(r, "tokens") && shape(r, "tokens") <= 512), CUSTOM_ONLY,
                j -> floorAtEveryRow("T ≤ 512: floor / custom ≥ 0.75", j, 0.75, line)));
        out.add(autoWithin(rows, true));
    }

    // ---------------------------------------------------------------- issue 7

    private static void gqa(List<Map<String, Object>> rows, List<Result> out, double[] line) {
        Predicate<Map<String, Object>> timed = r -> num(r, "custom_us") != null;
        Predicate<Map<String, Object>> sized = r -> has(r, "B", "L");
        ToDoubleFunction<Map<String, Object>> bl = r -> (double) shape(r, "B") * shape(r, "L");
        out.add(judge(select(rows, sized.and(r -> bl.applyAsDouble(r) >= 65536)), CUSTOM_ONLY,
                j -> floorAtEveryRow("B·L ≥ 65,536: floor / custom ≥ 0.8 (KV-read floor)", j, 0.8, line)));
        out.add(judge(select(rows, sized.and(r -> bl.applyAsDouble(r) >= 8192)), CUSTOM_ONLY,
                j -> floorAtEveryRow("B·L ≥ 8,192: floor / custom ≥ 0.6", j, 0.6, line)));
        out.add(judge(select(rows, sized.and(r -> bl.applyAsDouble(r) <= 32768)), NEEDS_VENDOR,
                j -> speedupGeomean("B·L ≤ 32,768: custom ≥ 3× the vendor composition (geometric mean)", j, IssueTargets::vendor, 3.0, line)));
        out.add(judge(rows, NEEDS_VENDOR, j -> every("custom never slower than the vendor composition", j, IssueTargets::speedup, 1.0, "×")));
        // paged against the contiguous BHLD row of the same dtype, heads, D, B, L and length mode. Rows with lengths
        // drawn in [L/2, L] measured before the draw was made independent of the layout (GqaDecodeBench) read different
        // byte counts, so the times are compared per µs of each row's floor: custom_p/floor_p over custom_c/floor_c,
        // which is the plain time ratio whenever the two rows read the same bytes.
        // A pair is in range when both rows exist; it misses a custom time, or failed its check, where either row does.
        Map<String, Map<String, Object>> contiguous = new HashMap<>();
        for (Map<String, Object> r : select(rows, r -> "BHLD".equals(shapeMap(r).get("layout")))) {
            contiguous.merge(pairKey(r), r, (had, next) -> timed.test(next) ? next : had);  // a timed row first, the last one
        }
        List<Map<String, Object>> paged = select(rows, r -> "PAGED".equals(shapeMap(r).get("layout")) && contiguous.containsKey(pairKey(r)));
        int untimedPairs = 0;
        int failedPairs = 0;
        for (Map<String, Object> p : paged) {
            Map<String, Object> c = contiguous.get(pairKey(p));
            untimedPairs += timed.test(p) && timed.test(c) ? 0 : 1;
            failedPairs += failedCheck(p) || failedCheck(c) ? 1 : 0;
        }
        Gaps pairGaps = new Gaps(untimedPairs, 0, failedPairs);
        Result pagedRes = within("paged within 10 % of contiguous (BHLD) at the same shape (time per µs of floor)",
                select(paged, timed.and(r -> timed.test(contiguous.get(pairKey(r))))), r -> {
                    Map<String, Object> c = contiguous.get(pairKey(r));
                    return (num(r, "custom_us") / num(r, "floor_us")) / (num(c, "custom_us") / num(c, "floor_us"));
                }, 1.10);
        out.add(pairGaps.on(pagedRes));
        out.add(autoWithin(rows, false));  // the issue's "everywhere: AUTO within 5 % of the faster of the two paths"
    }

    // ---------------------------------------------------------------- issue 8

    private static void demo(List<Map<String, Object>> rows, List<Result> out) {
        out.add(judge(select(rows, r -> "moe_layer".equals(r.get("op")) && has(r, "tokens") && shape(r, "tokens") <= 64), NEEDS_VENDOR,
                j -> every("MoE layer, T ≤ 64 tokens: Gapfill ≥ 3× the vendor composition (every such row)", j, IssueTargets::speedup, 3.0, "×")));
        out.add(judge(select(rows, r -> "decode_step".equals(r.get("op")) && has(r, "B", "L") && shape(r, "B") <= 8 && shortestLength(r) >= 4096),
                NEEDS_VENDOR, j -> every("decode step, B ≤ 8, L ≥ 4096 (every sequence's length, not the cache's capacity): Gapfill ≥ 2× "
                        + "the vendor composition (every such row)", j, IssueTargets::speedup, 2.0, "×")));
    }

    /**
     * The shortest sequence length a decode-step row runs: the demo's lengths are drawn in [L − 64 − L/4, L − 64] and
     * grow by one per step ({@code lens} "[L-64-L/4, L-64] + step"), so its L = 4096 rows run 3008–4095 and are no
     * L ≥ 4096 case under the stricter reading; a row without that recipe runs at L.
     */
    static long shortestLength(Map<String, Object> r) {
        long l = shape(r, "L");
        java.util.regex.Matcher m = LENS.matcher(String.valueOf(shapeMap(r).get("lens")));
        return m.matches() ? l - Long.parseLong(m.group(1)) - l / Long.parseLong(m.group(2)) : l;
    }

    /** The demo's length recipe, "[L-S-L/Q, L-S] + step" (S = its step count, Demo.java). */
    private static final java.util.regex.Pattern LENS = java.util.regex.Pattern.compile("\\[L-(\\d+)-L/(\\d+), L-\\d+\\] \\+ step");

    private static String pairKey(Map<String, Object> r) {
        Map<String, Object> s = shapeMap(r);
        return r.get("dtype") + "|" + s.get("B") + "|" + s.get("Hq") + "|" + s.get("Hkv") + "|" + s.get("D") + "|" + s.get("L") + "|"
                + s.get("lens");
    }

    // ---------------------------------------------------------------- shared

    /** {@link #judge}'s choice: the target compares custom with the vendor column, or looks at custom alone (a floor, a peer). */
    private static final boolean NEEDS_VENDOR = true;
    private static final boolean CUSTOM_ONLY = false;

    /**
     * {@code target} over the rows of {@code inRange} (its shape and dtype selection) that have the times it compares
     * (custom, and the vendor where {@code needsVendor}), then the {@link Gaps} of the range added to it. The selectors
     * used to ask for the times themselves, so a point of the range the custom path did not run dropped out unseen and a
     * target worded "at every point" could read met without it.
     */
    private static Result judge(List<Map<String, Object>> inRange, boolean needsVendor,
                                java.util.function.Function<List<Map<String, Object>>, Result> target) {
        List<Map<String, Object>> judged = select(inRange, r -> num(r, "custom_us") != null && (!needsVendor || num(r, "vendor_us") != null));
        return Gaps.of(inRange, needsVendor).on(target.apply(judged));
    }

    /**
     * Rows of a target's range that its numbers leave out or cannot vouch for: without a custom time (the custom path did
     * not run there: unsupported), with one but without the vendor time a speedup needs (no ratio), or whose check
     * failed (a kernel that skips work is fast and wrong; a row without a check is left to the results target). Any of
     * them makes the target not met, and the text counts them; the numbers stay those of the rows with the times.
     */
    record Gaps(int noCustom, int noVendor, int failed) {
        static Gaps of(List<Map<String, Object>> inRange, boolean needsVendor) {
            int noCustom = 0;
            int noVendor = 0;
            int failed = 0;
            for (Map<String, Object> r : inRange) {
                boolean custom = num(r, "custom_us") != null;
                noCustom += custom ? 0 : 1;
                noVendor += custom && needsVendor && num(r, "vendor_us") == null ? 1 : 0;
                failed += failedCheck(r) ? 1 : 0;
            }
            return new Gaps(noCustom, noVendor, failed);
        }

        /** {@code res} with the gaps counted in its text and its verdict "not met" where there are any. */
        Result on(Result res) {
            if (noCustom + noVendor + failed == 0) {
                return res;
            }
            String text = (res.met() == null ? "no row in range can be judged" : res.measured())
                    + count(noCustom, "in range without a custom time")
                    + count(noVendor, "in range without a vendor time")
                    + count(failed, failed == 1 ? "in range failed its check" : "in range failed their check");
            return new Result(res.target(), text, false);
        }

        private static String count(int n, String what) {
            return n == 0 ? "" : String.format(Locale.ROOT, "; %d row%s %s", n, n == 1 ? "" : "s", what);
        }
    }

    /** Whether the row's check ran and failed ({@code check.pass} false); a row without a check has not failed one. */
    static boolean failedCheck(Map<String, Object> r) {
        return r.get("check") instanceof Map<?, ?> c && Boolean.FALSE.equals(c.get("pass"));
    }

    /** AUTO within 5 % of the faster path (with {@code withPeers}, of the fastest of vendor, custom and the peers). */
    private static Result autoWithin(List<Map<String, Object>> rows, boolean withPeers) {
        List<Map<String, Object>> r = select(rows, x -> num(x, "auto_us") != null && Double.isFinite(best(x, withPeers)));
        Result res = within("AUTO within 5 % of the " + (withPeers ? "fastest path (peers included)" : "faster path") + " everywhere", r,
                x -> num(x, "auto_us") / best(x, withPeers), 1.05);
        // A miss whose AUTO ran the path that measured fastest is the same work timed twice: a measurement effect, not a
        // wrong choice (run-to-run spread, or in files timed in a fixed path order the order itself: BenchContext.pathAt).
        // The verdict stays strict; the count is added so a reader can tell the two apart.
        int samePath = 0;
        for (Map<String, Object> x : r) {
            if (num(x, "auto_us") > 1.05 * best(x, withPeers)) {
                Double ran = autoPathUs(x, withPeers);
                samePath += ran != null && ran <= best(x, withPeers) ? 1 : 0;
            }
        }
        String what = withPeers ? "path" : "backend";
        return samePath == 0 ? res : new Result(res.target(), res.measured() + "; " + samePath
                + " of the misses ran the " + what + " that measured " + (withPeers ? "fastest" : "faster")
                + " (the same work timed twice: a measurement effect, not a wrong choice)", res.met());
    }

    /**
     * The row's own measurement of the path AUTO ran, from its {@code auto_backend} ("CUSTOM/…" → custom_us,
     * "VENDOR/name" → the peer whose key starts with name, e.g. {@code cublas_grouped} → {@code cublas_grouped_batched},
     * else vendor_us); with peers left out ({@code withPeers} false) any VENDOR choice is the vendor column.
     */
    private static Double autoPathUs(Map<String, Object> r, boolean withPeers) {
        String ab = String.valueOf(r.get("auto_backend"));
        if (ab.startsWith("CUSTOM/")) {
            return num(r, "custom_us");
        }
        if (!ab.startsWith("VENDOR/")) {
            return null;
        }
        String name = ab.substring("VENDOR/".length());
        if (withPeers && !name.isEmpty() && r.get("peers") instanceof Map<?, ?> p) {
            for (Map.Entry<?, ?> e : p.entrySet()) {
                String key = String.valueOf(e.getKey());
                if (key.startsWith(name) && isTime(key) && e.getValue() instanceof Number n) {
                    return n.doubleValue();
                }
            }
        }
        return num(r, "vendor_us");
    }

    private static double best(Map<String, Object> r, boolean withPeers) {
        double b = Double.POSITIVE_INFINITY;
        for (String k : new String[] {"vendor_us", "custom_us"}) {
            if (num(r, k) != null) {
                b = Math.min(b, num(r, k));
            }
        }
        if (withPeers && r.get("peers") instanceof Map<?, ?> p) {
            for (Map.Entry<?, ?> e : p.entrySet()) {
                if (isTime(String.valueOf(e.getKey())) && e.getValue() instanceof Number n) {
                    b = Math.min(b, n.doubleValue());
                }
            }
        }
        return b;
    }

    /**
     * Whether a peer entry is a time: peers hold times under a path's name ({@code cublas_grouped_batched},
     * {@code f16_cublas}, {@code nchw_rows_us}) and, in the depthwise files, checks beside them
     * ({@code <path>_check_pass}, {@code vendor_identical_fraction}, {@code vendor_max_ulp}), which are not.
     */
    static boolean isTime(String peerKey) {
        return !(peerKey.endsWith("_check_pass") || peerKey.endsWith("_fraction") || peerKey.endsWith("_ulp"));
    }

    private static Result geomean(String target, List<Map<String, Object>> rows, ToDoubleFunction<Map<String, Object>> f, double need) {
        if (rows.isEmpty()) {
            return new Result(target, "no row of this file applies", null);
        }
        double log = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = 0;
        for (Map<String, Object> r : rows) {
            double v = f.applyAsDouble(r);
            log += Math.log(v);
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        double g = Math.exp(log / rows.size());
        // two decimals, or three where two would round a miss up to the target (1.497× is not 1.50×)
        String gs = String.format(Locale.ROOT, "%.2f", g);
        if (g < need && Double.parseDouble(gs) >= need) {
            gs = String.format(Locale.ROOT, "%.3f", g);
        }
        return new Result(target, String.format(Locale.ROOT, "%s× over %d rows (%.2f–%.2f×)", gs, rows.size(), min, max), g >= need);
    }

    /**
     * The geometric mean of reference / custom ≥ {@code need}, with the ceiling of that mean: what a kernel running at every
     * row's floor would reach against the same reference times (geometric mean of reference / floor), and, with the file's
     * read-after-flush line, what one would reach that takes no less than a plain read of each row's bytes after the flush
     * (reference / max(floor, intercept + bytes / bandwidth)). Where that ceiling is below {@code need} the target is out of
     * any kernel's reach on these rows; the verdict stays the measured one.
     */
    private static Result speedupGeomean(String target, List<Map<String, Object>> rows, ToDoubleFunction<Map<String, Object>> reference,
                                         double need, double[] line) {
        Result res = geomean(target, rows, r -> reference.applyAsDouble(r) / num(r, "custom_us"), need);
        if (rows.isEmpty() || rows.stream().anyMatch(r -> num(r, "floor_us") == null || num(r, "floor_us") <= 0)) {
            return res;
        }
        double atFloor = 0;
        double atRead = 0;
        boolean read = line != null && rows.stream().allMatch(r -> num(r, "bytes") != null && num(r, "bytes") > 0);
        for (Map<String, Object> r : rows) {
            double fl = num(r, "floor_us");
            atFloor += Math.log(reference.applyAsDouble(r) / fl);
            if (read) {
                atRead += Math.log(reference.applyAsDouble(r) / Math.max(fl, plainRead(r, line)));
            }
        }
        double ceiling = Math.exp(atFloor / rows.size());
        String text = String.format(Locale.ROOT, "; a kernel at every row's floor would be %.2f×", ceiling);
        double reach = ceiling;
        if (read) {
            reach = Math.exp(atRead / rows.size());
            text += String.format(Locale.ROOT, " (%.2f× if none is faster than a plain read of its input bytes after the flush)", reach);
        }
        return new Result(res.target(), res.measured() + text + (reach < need ? ", so out of any kernel's reach" : ""), res.met());
    }

    /**
     * Every row's custom speedup over the vendor ≥ {@code need}, and how many rows no kernel could bring there: where the
     * vendor is already within {@code need}× of the row's floor, {@code need}× its speed would be faster than the floor;
     * with the file's read-after-flush line ({@code line}, may be null), also where it is within {@code need}× of a plain
     * read of the row's input bytes after the flush (the floor's rows among them).
     */
    static Result speedupAtEveryRow(String target, List<Map<String, Object>> rows, double need, double[] line) {
        Result res = every(target, rows, IssueTargets::speedup, need, "×");
        int beyondFloor = 0;
        int beyondRead = 0;
        for (Map<String, Object> r : rows) {
            Double fl = num(r, "floor_us");
            double goal = num(r, "vendor_us") / need;
            beyondFloor += fl != null && goal < fl ? 1 : 0;
            if (line != null && num(r, "bytes") != null) {  // as floorAtEveryRow counts them
                double read = plainRead(r, line);
                beyondRead += goal < (fl != null ? Math.max(fl, read) : read) ? 1 : 0;
            }
        }
        if (beyondFloor == 0 && beyondRead == 0) {
            return res;
        }
        String text = String.format(Locale.ROOT, "; out of any kernel's reach in %d of them (the vendor is within %.2f× of the floor there)",
                beyondFloor, need);
        if (beyondRead > beyondFloor) {
            text += String.format(Locale.ROOT, "; in %d if none is faster than a plain read of its input bytes after the flush (%.2f µs + bytes / %.0f GB/s)",
                    beyondRead, line[0], line[1]);
        }
        return new Result(res.target(), res.measured() + text, res.met());
    }

    /**
     * Every row's floor / custom ≥ {@code need}; with the file's read-after-flush line, also how many rows no kernel could
     * bring there: a plain read of the row's bytes after the flush (intercept + bytes / bandwidth) already takes longer
     * than floor / {@code need}.
     */
    private static Result floorAtEveryRow(String target, List<Map<String, Object>> rows, double need, double[] line) {
        Result res = every(target, rows, IssueTargets::floorFraction, need, "%");
        if (line == null || rows.isEmpty()) {
            return res;
        }
        int outOfReach = 0;
        for (Map<String, Object> r : rows) {
            Double fl = num(r, "floor_us");
            Double bytes = num(r, "bytes");
            if (fl != null && bytes != null && fl / Math.max(fl, plainRead(r, line)) < need) {
                outOfReach++;
            }
        }
        return new Result(res.target(), res.measured() + String.format(Locale.ROOT,
                "; out of any kernel's reach in %d of them (a plain read of their input bytes after the flush takes %.2f µs + bytes / %.0f GB/s)",
                outOfReach, line[0], line[1]), res.met());
    }

    /**
     * The time of a plain read of the row's input bytes after the flush ({@code line}: intercept µs, GB/s): no kernel
     * can be faster, since the flush leaves none of them in L2. The output bytes are left out: the flush leaves clean
     * lines, so an output that fits in L2 can stay there, written back after the end event (in the H100 files, bmm and
     * elementwise rows ran faster than the read line of their inputs plus outputs; no read-only op did).
     */
    static double plainRead(Map<String, Object> r, double[] line) {
        return line[0] + Math.max(0, num(r, "bytes") - writtenBytes(r)) / (line[1] * 1e3);
    }

    /**
     * Bytes the row's op writes, from its op, dtype and shape, as the sweeps count them into {@code bytes}: bmm C,
     * int8_mm's output, gqa_decode's o, grouped_gemm's Y, depthwise_conv3x3's y. 0 for an op not listed here (all its
     * bytes count as read, as before).
     */
    static double writtenBytes(Map<String, Object> r) {
        if (r.get("written_bytes") instanceof Number given) {  // a row whose bytes were replaced (int8's weight-floor rows)
            return given.doubleValue();
        }
        Object op = r.get("op");
        Object sh = r.get("shape");
        if (!(op instanceof String) || !(sh instanceof Map)) {
            return 0;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> s = (Map<String, Object>) sh;
        String dt = String.valueOf(r.get("dtype"));
        double e;
        try {  // the output's dtype: "I8->F16" writes F16
            e = dev.gapfill.core.DType.valueOf(dt.contains("->") ? dt.substring(dt.indexOf("->") + 2) : dt).bytes();
        } catch (IllegalArgumentException unknown) {
            return 0;
        }
        double w;
        switch ((String) op) {
            case "bmm": w = dim(s, "batch") * dim(s, "m") * dim(s, "n") * e; break;
            case "int8_mm": w = dim(s, "m") * dim(s, "n") * e; break;
            case "gqa_decode": w = dim(s, "B") * dim(s, "Hq") * dim(s, "D") * e; break;
            case "grouped_gemm":
                w = dim(s, "t_total") * dim(s, "n") * (String.valueOf(s.get("proj")).startsWith("gate_up") ? 0.5 : 1) * e;
                break;
            case "depthwise_conv3x3":
                double st = dim(s, "stride");
                w = dim(s, "N") * dim(s, "C") * Math.ceil(dim(s, "H") / st) * Math.ceil(dim(s, "W") / st) * e;
                break;
            default: w = 0;
        }
        return Double.isNaN(w) ? 0 : w;  // a shape without one of the fields: every byte counts as read
    }

    private static double dim(Map<String, Object> shape, String key) {
        Double v = num(shape, key);
        return v == null ? Double.NaN : v;
    }

    /** Every row's ratio ≤ {@code limit} (a time over the time it is held to); reports the worst excess. */
    private static Result within(String target, List<Map<String, Object>> rows, ToDoubleFunction<Map<String, Object>> f, double limit) {
        if (rows.isEmpty()) {
            return new Result(target, "no row of this file applies", null);
        }
        int ok = 0;
        double worst = Double.NEGATIVE_INFINITY;
        for (Map<String, Object> r : rows) {
            double v = f.applyAsDouble(r);
            ok += v <= limit ? 1 : 0;
            worst = Math.max(worst, v);
        }
        return new Result(target, String.format(Locale.ROOT, "%d of %d rows (worst %+.1f %%)", ok, rows.size(), 100 * (worst - 1)),
                ok == rows.size());
    }

    /** Every row's value ≥ {@code need}; unit "%" prints fractions as percentages. */
    private static Result every(String target, List<Map<String, Object>> rows, ToDoubleFunction<Map<String, Object>> f, double need,
                                String unit) {
        if (rows.isEmpty()) {
            return new Result(target, "no row of this file applies", null);
        }
        int ok = 0;
        double min = Double.POSITIVE_INFINITY;
        double max = Double.NEGATIVE_INFINITY;
        for (Map<String, Object> r : rows) {
            double v = f.applyAsDouble(r);
            ok += v >= need ? 1 : 0;
            min = Math.min(min, v);
            max = Math.max(max, v);
        }
        String range = "%".equals(unit)
                ? String.format(Locale.ROOT, "%.0f–%.0f %%", 100 * min, 100 * max)
                : String.format(Locale.ROOT, "%.2f–%.2f×", min, max);
        return new Result(target, String.format(Locale.ROOT, "%d of %d rows (%s)", ok, rows.size(), range), ok == rows.size());
    }

    private static double speedup(Map<String, Object> r) {
        return num(r, "vendor_us") / num(r, "custom_us");
    }

    private static double vendor(Map<String, Object> r) {
        return num(r, "vendor_us");
    }

    private static double floorFraction(Map<String, Object> r) {
        return num(r, "floor_us") / num(r, "custom_us");
    }

    private static List<Map<String, Object>> select(List<Map<String, Object>> rows, Predicate<Map<String, Object>> p) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            if (p.test(r)) {
                out.add(r);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> shapeMap(Map<String, Object> r) {
        Object s = r.get("shape");
        return s instanceof Map<?, ?> ? (Map<String, Object>) s : Map.of();
    }

    /** A numeric shape field (0 when absent: a range asks {@link #has} first, so that a missing field is out of it). */
    private static long shape(Map<String, Object> r, String key) {
        Object v = shapeMap(r).get(key);
        return v instanceof Number n ? n.longValue() : 0;
    }

    /** Whether the row's shape holds every one of {@code keys} as a number. */
    private static boolean has(Map<String, Object> r, String... keys) {
        for (String k : keys) {
            if (!(shapeMap(r).get(k) instanceof Number)) {
                return false;
            }
        }
        return true;
    }

    private static Double num(Map<String, Object> r, String key) {
        Object v = r.get(key);
        return v instanceof Number n ? n.doubleValue() : null;
    }

    private static Double peer(Map<String, Object> r, String key) {
        return r.get("peers") instanceof Map<?, ?> p && p.get(key) instanceof Number n ? n.doubleValue() : null;
    }
}
