package dev.gapfill.examples.bench;

import java.util.ArrayList;
import java.util.List;

/** Every op's benchmark sweep, in the order {@code gapfill bench} runs them. */
public final class BenchSuites {
    private BenchSuites() {}

    public static List<BenchSuite> all() {
        List<BenchSuite> s = new ArrayList<>();
        s.add(new ElementwiseBench());
        s.add(new MoeRouteBench());
        s.add(new Int8MmBench());
        s.add(new BmmBench());
        s.add(new DepthwiseConv3x3Bench());
        s.add(new GqaDecodeBench());
        // op suites register here, one line each
        return s;
    }
}
