package dev.gapfill.examples.demo;

import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.examples.BenchRunner;
import dev.gapfill.examples.bench.BenchContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code gapfill demo}: a MoE layer and a decode step end to end, verified, vendor versus Gapfill times. On a GPU it
 * writes {@code <out>/demo.json} (and {@code demo.md}); without one it runs both layers on the CPU reference backend at
 * a small size and writes nothing. Exit status 1 when any output fails its check.
 */
@Command(name = "demo", description = "Run a MoE layer and a decode step end to end: verified, vendor vs Gapfill times, "
        + "docs/benchmarks/<gpu>/demo.json (CPU reference backend at a small size without a GPU).")
public final class DemoCmd implements Callable<Integer> {
    /** Untimed rounds before the timed ones. */
    static final int WARMUP = 3;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    @Option(names = "--out", description = "directory for demo.json and demo.md (default: docs/benchmarks/<gpu>)") Path out;
    @Option(names = "--quick", description = "fewer shapes: MoE T in {1, 64}; decode (B, L) in {(1, 4096), (8, 4096)}") boolean quick;
    @Option(names = "--commit", description = "git commit the code was built from (default: $GAPFILL_COMMIT)")
    String commit = System.getenv().getOrDefault("GAPFILL_COMMIT", "unknown");

    @Override public Integer call() throws Exception {
        PrintWriter o = spec.commandLine().getOut();
        List<DemoRow> rows;
        if (!Gpu.available()) {
            o.println("No usable GPU (" + Gpu.status().reason() + "): running both layers on the CPU reference backend at a small "
                    + "size; times are CPU times and no JSON is written.");
            o.flush();
            rows = Demo.run(DemoEnv.cpu(DecodeStep.STEPS, m -> { }), Demo.Plan.cpu());
            o.println(DemoTable.render(rows, null));
        } else {
            // every timed path runs STEPS times: one repetition per decode step of the growing-length run
            try (BenchContext ctx = new BenchContext(Device.cuda(0), WARMUP, DecodeStep.STEPS, quick, m -> {
                o.println("  " + m);
                o.flush();
            }).fixedReps()) {
                o.println("Demo on " + ctx.info());
                ctx.ceilings();
                rows = Demo.run(DemoEnv.gpu(ctx), Demo.Plan.gpu(quick));
                Path dir = out != null ? out : Path.of("docs", "benchmarks", ctx.info().slug());
                BenchRunner.writeResultsTo(dir, ctx, "demo", rows.stream().map(DemoRow::bench).toList(), commit);
                o.println(DemoTable.render(rows, ctx.info()));
                o.println("wrote " + dir.resolve("demo.json") + " and demo.md");
            }
        }
        long failed = rows.stream().filter(r -> !r.verified()).count();
        o.println(failed == 0 ? "demo: every output of both compositions verified against the fp64 reference"
                : "demo: " + failed + " of " + rows.size() + " rows FAILED verification");
        o.flush();
        return failed == 0 ? 0 : 1;
    }
}
