package dev.gapfill.examples;

import dev.gapfill.core.DeviceInfo;
import dev.gapfill.examples.bench.BenchContext;
import dev.gapfill.examples.bench.BenchRow;
import dev.gapfill.examples.bench.BenchSuite;
import dev.gapfill.examples.bench.Json;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Runs benchmark suites and writes {@code <out>/<gpu-slug>/<op>.json} and {@code <op>.md}. */
public final class BenchRunner {
    private BenchRunner() {}

    public static void writeResults(Path outRoot, BenchContext ctx, BenchSuite suite, List<BenchRow> rows, String commit)
            throws IOException {
        writeResultsTo(outRoot.resolve(ctx.info().slug()), ctx, suite.op(), rows, commit, true);
    }

    /**
     * The steps the offline bundle ran on this machine before the sweep, oldest first, from {@code
     * GAPFILL_MACHINE_HISTORY} ("time commit step" entries separated by ';'); empty on a freshly started machine, null
     * when the variable is not set (a sweep run outside the bundle).
     */
    static List<String> machineHistory(String env) {
        if (env == null) {
            return null;
        }
        List<String> lines = new ArrayList<>();
        for (String part : env.split(";")) {
            if (!part.isBlank()) {
                lines.add(part.trim());
            }
        }
        return lines;
    }

    /** Writes {@code <dir>/<op>.json} and {@code <op>.md} (the directory is taken as given, no GPU slug added). */
    public static void writeResultsTo(Path dir, BenchContext ctx, String op, List<BenchRow> rows, String commit) throws IOException {
        writeResultsTo(dir, ctx, op, rows, commit, true);
    }

    /**
     * As above; {@code complete = false} marks a checkpoint of a sweep still running (or cut off by a time limit):
     * the file says so ({@code "complete": false}) and its Markdown heading too.
     */
    public static void writeResultsTo(Path dir, BenchContext ctx, String op, List<BenchRow> rows, String commit, boolean complete)
            throws IOException {
        DeviceInfo info = ctx.info();
        Files.createDirectories(dir);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("schema", 1);
        doc.put("gpu", info.name());
        doc.put("cc", info.ccMajor() + "." + info.ccMinor());
        doc.put("driver", info.driverString());
        doc.put("cuda_runtime", info.runtimeString());
        doc.put("cublas", info.cublasString());
        doc.put("cudnn", info.cudnnString());
        doc.put("commit", commit);
        doc.put("complete", complete);
        doc.put("reps", ctx.reps());      // a resumed sweep keeps only rows of the same reps, warm-up and quick flag
        doc.put("warmup", ctx.warmup());
        doc.put("quick", ctx.quick());  // a short subset of the sweep (--quick): the report then judges targets on these rows only
        if (!ctx.dtypeFilter().isEmpty()) {
            doc.put("dtypes", ctx.dtypeFilter());  // only these dtypes' cases (--dtype): judged like a quick sweep
        }
        List<String> history = machineHistory(System.getenv("GAPFILL_MACHINE_HISTORY"));
        if (history != null) {
            doc.put("machine_history", history);  // what the bundle ran on this machine before this sweep (scripts/bundle-run.sh)
        }
        if (ctx.resumedRows(op) > 0) {
            doc.put("resumed_rows", ctx.resumedRows(op));  // rows kept from an earlier run of this commit (bench --resume)
        }
        Map<String, Object> ceil = new LinkedHashMap<>();
        ceil.put("copy_GBps", ctx.ceilings().copyGBps());
        ceil.put("bf16_gemm_TFLOPs", ctx.ceilings().bf16GemmTflops());
        if (ctx.flushMeasured()) {
            ceil.put("flush_us", ctx.flushUs());  // one L2 flush's GPU time, what a path's host enqueue must fit in (BenchContext.extraFlushes)
        }
        if (ctx.readLine() != null) {  // a plain read of S bytes after the flush: intercept + S / bandwidth (BenchContext.ReadLine)
            ceil.put("read_after_flush_us", ctx.readLine().interceptUs());
            ceil.put("read_after_flush_GBps", ctx.readLine().gbps());
        }
        doc.put("ceilings", ceil);
        if ("host_overhead".equals(op)) {
            doc.put("method", dev.gapfill.examples.bench.HostOverheadBench.METHOD);
        } else {
            doc.put("method", "CUDA events on one stream; L2 flushed (a read of 4x L2, leaving clean lines) before every repetition; paths interleaved in a balanced order that changes every repetition (Williams design: each path follows every other equally often); "
                    + (ctx.hasFixedReps() ? ctx.reps() + " repetitions in every case (fixed: not extended for short cases, not rounded to periods of the order), after the warm-up rounds (the first cases of each suite warm up for at least "
                        + dev.gapfill.examples.bench.BenchContext.COLD_WARMUP_MS + " ms); medians over them,"
                    : ctx.reps() + " repetitions, rounded up to whole periods of the order, after the warm-up rounds (the first cases of each suite warm up for at least "
                    + dev.gapfill.examples.bench.BenchContext.COLD_WARMUP_MS + " ms), " + dev.gapfill.examples.bench.BenchContext.SHORT_CASE_FACTOR
                    + "x as many (whole periods of the order) where the fastest path's median over the first ones is under "
                    + dev.gapfill.examples.bench.BenchContext.SHORT_CASE_US + " us (short cases time in two modes ~0.2 us apart); medians over all of them,")
                    + " p10/p90 in spread_p10_p90_us; large random inputs: one random block spread by shifting copies (RandomFill), not repeated as is;"
                    + " a path whose host enqueue (median of the warm-up) exceeds " + Math.round(100 * dev.gapfill.examples.bench.BenchContext.HEAD_START_SHARE)
                    + " % of one flush's GPU time (ceilings.flush_us) gets up to " + dev.gapfill.examples.bench.BenchContext.MAX_EXTRA_FLUSHES
                    + " extra flushes before its start event, so that its work is queued before the GPU reaches it (cases_with_head_start counts them),"
                    + " unless its enqueue behind a backlog of flushes that outlasts its idle enqueue by a flush takes half a flush longer (it waits for the GPU)");
            if (ctx.headStartCases() > 0) {
                doc.put("cases_with_head_start", ctx.headStartCases());
            }
        }
        List<Object> jr = new ArrayList<>();
        for (BenchRow r : rows) {
            jr.add(r.toJson());
        }
        doc.put("rows", jr);
        Files.writeString(dir.resolve(op + ".json"), Json.write(doc), StandardCharsets.UTF_8);
        String md = markdown(op, info, commit, rows);
        if (!complete) {
            md = md.replaceFirst("\n", "\n\n**Incomplete:** the sweep stopped (time limit) after " + rows.size() + " rows.\n");
        }
        Files.writeString(dir.resolve(op + ".md"), md, StandardCharsets.UTF_8);
    }

    /** A Markdown table of the rows: shape, times, speedup, fraction of floor, check. */
    public static String markdown(String op, DeviceInfo info, String commit, List<BenchRow> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append("# ").append(op).append(" on ").append(info.name()).append("\n\n");
        sb.append("Commit `").append(commit).append("`, driver ").append(info.driverString()).append(", cuBLAS ")
                .append(info.cublasString()).append(", cuDNN ").append(info.cudnnString()).append(". Times are medians in µs.\n\n");
        if (BenchRow.vendorPeer(op) != null) {
            sb.append("`vendor` is the ").append(op).append(" bench's vendor column; `speedup` is custom over the faster vendor path, that or the peer `")
                    .append(BenchRow.vendorPeer(op)).append("` (in the JSON).\n\n");
        }
        sb.append("| dtype | shape | regime | vendor | custom | auto (choice) | floor | speedup | floor/custom | check |\n");
        sb.append("|---|---|---|---:|---:|---|---:|---:|---:|---|\n");
        for (BenchRow r : rows) {
            sb.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s |\n", r.dtype(), shapeText(r.shape()),
                    r.regime(), fmt(r.vendorUs()), fmt(r.customUs()), fmt(r.autoUs()), r.autoBackend(), r.floorUs() > 0 ? fmt(r.floorUs()) : "–",
                    Double.isNaN(r.speedup()) ? "–" : String.format(Locale.ROOT, "%.2f×", r.speedup()),
                    Double.isNaN(r.fractionOfFloor()) ? "–" : String.format(Locale.ROOT, "%.0f %%", 100 * r.fractionOfFloor()),
                    r.check() == null ? "–" : (r.check().pass() ? "pass" : "FAIL") + (r.check().bitExact() ? ", bit-exact" : "")));
        }
        return sb.toString();
    }

    private static String fmt(Double v) {
        return v == null ? "–" : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String shapeText(Map<String, Object> s) {
        StringBuilder sb = new StringBuilder();
        s.forEach((k, v) -> sb.append(sb.length() == 0 ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }
}
