package dev.gapfill.examples.bench;

import java.util.ArrayList;
import java.util.List;

/** Every op's benchmark sweep, in the order {@code gapfill bench} runs them. */
public final class BenchSuites {
    private BenchSuites() {}

    public static List<BenchSuite> all() {
        List<BenchSuite> s = new ArrayList<>();
        // the five ops in the issues' order, then the helpers
        s.add(new BmmBench());
        s.add(new DepthwiseConv3x3Bench());
        s.add(new Int8MmBench());
        s.add(new GroupedGemmBench());
        s.add(new GqaDecodeBench());
        s.add(new MoeRouteBench());
        s.add(new ElementwiseBench());
        s.add(new HostOverheadBench());
        return s;
    }
}
