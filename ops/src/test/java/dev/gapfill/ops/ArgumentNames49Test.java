package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.ops.GroupedGemm.WeightLayout;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Refusals that named the wrong argument, or none, before the forty-ninth session's review: each names the argument
 * the caller passed.
 */
class ArgumentNames49Test {
    private static final Device CPU = Device.CPU;
    private static final DeviceInfo H100 = DeviceInfo.h100ForTests();

    private static String argument(Runnable call) {
        return assertThrows(ArgumentException.class, call::run).argument();
    }

    @Test void theHeuristicsRefuseNullAndReferenceInsteadOfRunningAuto() {
        GroupedGemmHeuristics.Shape g = new GroupedGemmHeuristics.Shape(64, 512, 2048, 2048, true, DType.BF16, WeightLayout.KN);
        assertEquals("shape", argument(() -> GroupedGemmHeuristics.decide(null, H100, Backend.AUTO)));
        assertEquals("info", argument(() -> GroupedGemmHeuristics.decide(g, null, Backend.AUTO)));
        assertEquals("backend", argument(() -> GroupedGemmHeuristics.decide(g, H100, Backend.REFERENCE)));  // was an AUTO decision
        assertEquals("backend", argument(() -> GroupedGemmHeuristics.decide(g, H100, null)));
        Problem p = Problem.contiguous(1, 32, 8, 128, 4096, KvLayout.BHLD, DType.BF16);
        assertEquals("problem", argument(() -> GqaDecodeHeuristics.decide(null, H100, Backend.AUTO)));
        assertEquals("info", argument(() -> GqaDecodeHeuristics.decide(p, null, Backend.AUTO)));
        assertEquals("backend", argument(() -> GqaDecodeHeuristics.decide(p, H100, Backend.REFERENCE)));  // was an AUTO decision
        assertEquals("backend", argument(() -> GqaDecodeHeuristics.decide(p, H100, null)));  // was a NullPointerException
    }

    /** From the fiftieth session's review of gqaDecode: a paged problem names its page count, not the maxLen derived from it. */
    @Test void aPagedProblemNamesItsPageArguments() {
        assertEquals("maxPages", argument(() -> Problem.paged(1, 4, 4, 128, 16, 0, DType.F16)));  // was "maxLen"
        assertEquals("maxPages", argument(() -> Problem.paged(1, 4, 4, 128, 16, -3, DType.F16)));
        assertEquals("pageSize", argument(() -> Problem.paged(1, 4, 4, 128, 0, 8, DType.F16)));
        assertEquals("pageSize", argument(() -> Problem.paged(1, 4, 4, 128, 12, 8, DType.F16)));  // not a power of two
        // the vendor's longest length is refused naming the backend, as the class javadoc now says
        Problem longest = Problem.contiguous(1, 1, 1, 64, 1 << 30, KvLayout.BHLD, DType.F16);
        assertEquals("backend", argument(() -> GqaDecodeHeuristics.decide(longest, H100, Backend.VENDOR)));
    }

    @Test void aProblemReadFromTensorsNamesTheTensorNotTheRecordField() {
        Random rnd = new Random(5);
        try (Tensor q12 = Poison.random(CPU, DType.F16, rnd, 1, 8, 12); Tensor q6 = Poison.random(CPU, DType.F16, rnd, 1, 6, 64);
             Tensor k = Poison.random(CPU, DType.F16, rnd, 1, 4, 16, 64); Tensor v = Poison.random(CPU, DType.F16, rnd, 1, 4, 16, 64);
             Tensor k12 = Poison.random(CPU, DType.F16, rnd, 1, 4, 16, 12)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Problem.of(q12, KvCache.bhld(k12, k12)));
            assertEquals("q", e.argument(), "head dim 12 is q's last dimension; was \"headDim\"");
            assertEquals("q", argument(() -> Problem.of(q6, KvCache.bhld(k, v))), "6 q heads over 4 KV heads; was \"qHeads\"");
            assertEquals(true, e.getMessage().contains("headDim"), "the message still says which quantity: " + e.getMessage());
        }
    }

    @Test void aPlanRunWithAnotherWeightNamesW() {
        Random r = new Random(9);
        try (Tensor a = Poison.random(CPU, DType.I8, r, 2, 16); Tensor w = Poison.random(CPU, DType.I8, r, 3, 16);
             Tensor w5 = Poison.random(CPU, DType.I8, r, 5, 16); Tensor a4 = Poison.random(CPU, DType.I8, r, 4, 16);
             Tensor out = Tensor.empty(CPU, DType.I32, 2, 3); Tensor out5 = Tensor.empty(CPU, DType.I32, 2, 5);
             Tensor out43 = Tensor.empty(CPU, DType.I32, 4, 3);
             Int8Mm.Plan plan = Int8Mm.plan(a, w, Int8Mm.Options.int32(), null)) {
            plan.run(a, w, Int8Mm.Options.int32(), out);
            assertEquals("w", argument(() -> plan.run(a, w5, Int8Mm.Options.int32(), out5)), "N differs: W's rows; was \"a\"");
            assertEquals("a", argument(() -> plan.run(a4, w, Int8Mm.Options.int32(), out43)), "M differs: A's rows");
        }
    }
}
