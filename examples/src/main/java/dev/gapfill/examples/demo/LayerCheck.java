package dev.gapfill.examples.demo;

import dev.gapfill.verify.Verdict;

import java.util.ArrayList;
import java.util.List;

/**
 * The verdicts of one composition's run of a layer: one per output it wrote, each compared element by element with the
 * fp64 CPU reference of the op that wrote it, fed with the inputs that op actually received.
 *
 * @param path   which composition ("gapfill", "vendor")
 * @param stages one verdict per checked output, in the order the layer writes them
 */
public record LayerCheck(String path, List<Stage> stages) {
    /** One checked output. */
    public record Stage(String output, Verdict verdict) {}

    public LayerCheck {
        stages = List.copyOf(stages);
    }

    /** Every stage passed. */
    public boolean pass() {
        return stages.stream().allMatch(s -> s.verdict().pass());
    }

    /**
     * The stages that check the layer's output: {@code out}, or {@code out@<step>} for a decode run. (Intermediate
     * stages can sit many ulps, and a large relative error, from their reference where a sum cancels, within their
     * bound; their verdicts carry their own numbers.)
     */
    public List<Stage> outputStages() {
        return stages.stream().filter(s -> s.output().equals("out") || s.output().startsWith("out@")).toList();
    }

    /** The largest distance of the layer's output from its reference, in units in the last place of its dtype. */
    public long outputUlp() {
        return outputStages().stream().mapToLong(s -> s.verdict().maxUlp()).max().orElse(0);
    }

    /** The largest relative error of the layer's output. */
    public double outputRelErr() {
        return outputStages().stream().mapToDouble(s -> s.verdict().maxRelErr()).max().orElse(0);
    }

    /** The layer's output is bit-identical to the rounded reference. */
    public boolean outputBitExact() {
        return outputStages().stream().allMatch(s -> s.verdict().bitExact());
    }

    /** The failed stages, as "output: verdict" lines. */
    public List<String> failures() {
        List<String> f = new ArrayList<>();
        for (Stage s : stages) {
            if (!s.verdict().pass()) {
                f.add(path + " " + s.output() + ": " + s.verdict());
            }
        }
        return f;
    }

    /** The checked outputs' names, e.g. "offsets, gather, ..., out". */
    public String outputs() {
        return String.join(", ", stages.stream().map(Stage::output).toList());
    }
}
