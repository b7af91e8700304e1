package dev.gapfill.examples;

import picocli.CommandLine.Command;

import java.util.concurrent.Callable;

/** Renders benchmark charts from the JSON files (runs on any machine; needs no GPU). */
@Command(name = "chart", description = "Render docs/benchmarks/<gpu>/<op>.png from the benchmark JSON.")
final class ChartCmd implements Callable<Integer> {
    @Override public Integer call() {
        throw new UnsupportedOperationException("chart rendering is not implemented yet");
    }
}
