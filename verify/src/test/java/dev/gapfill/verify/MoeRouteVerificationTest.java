package dev.gapfill.verify;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The router-weight check on the CPU: the reference's own rounded weights pass; a weight off by far more than the bound, or unwritten, fails. */
class MoeRouteVerificationTest {
    @Test void theReferenceWeightsPassAndAWrongOrUnwrittenOneFails() {
        for (MoeRoute.Score score : MoeRoute.Score.values()) {
            MoeRoute.Options o = MoeRoute.Options.topK(4).withScore(score).withRenormalize(score == MoeRoute.Score.SIGMOID);
            try (Tensor logits = Poison.random(Device.CPU, DType.BF16, new Random(11), 37, 60);
                 MoeRoute.Routing r = MoeRoute.route(logits, o)) {
                Verdict ok = MoeRouteVerification.topkWeights(logits, o, r.topkWeights);
                assertTrue(ok.pass(), score + ": " + ok);
                float w = r.topkWeights.toFloatArray()[17];
                r.topkWeights.setDouble(17, w * (1 + 1e-3));
                assertFalse(MoeRouteVerification.topkWeights(logits, o, r.topkWeights).pass(), score + ": a weight 1e-3 off");
                r.topkWeights.setDouble(17, Float.NaN);
                assertFalse(MoeRouteVerification.topkWeights(logits, o, r.topkWeights).pass(), score + ": an unwritten (NaN) weight");
            }
        }
    }

    @Test void theLayoutCheckPassesTheReferenceAndNamesTheFirstDifference() {
        MoeRoute.Options o = MoeRoute.Options.topK(3);
        try (Tensor logits = Poison.random(Device.CPU, DType.F32, new Random(12), 25, 9);
             MoeRoute.Routing ref = MoeRoute.route(logits, o); MoeRoute.Routing got = MoeRoute.route(logits, o)) {
            assertNull(MoeRouteVerification.layoutMismatch(ref, got));
            int[] rowOf = got.rowOf.toIntArray();
            got.weights.setDouble(rowOf[7], got.weights.getDouble(rowOf[7]) * 0.5);
            assertTrue(MoeRouteVerification.layoutMismatch(ref, got).startsWith("weights[rowOf[7]"));
            got.gather.setRawBits(4, got.gather.getRawBits(4) + 1);
            assertTrue(MoeRouteVerification.layoutMismatch(ref, got).startsWith("gather[4]"));
            // a routing compared with itself matches whatever it holds: refused
            assertEquals("got", assertThrows(ArgumentException.class, () -> MoeRouteVerification.layoutMismatch(got, got)).argument());
        }
    }

    /** Bad arguments are named before the reference runs (no AIOOBE from k > E, no NPE from null options). */
    @Test void theWeightCheckNamesBadArguments() {
        try (Tensor logits = Poison.random(Device.CPU, DType.F32, new Random(13), 5, 4);
             MoeRoute.Routing r = MoeRoute.route(logits, MoeRoute.Options.topK(2))) {
            assertEquals("options.topK", assertThrows(ArgumentException.class,
                    () -> MoeRouteVerification.topkWeights(logits, MoeRoute.Options.topK(8), r.topkWeights)).argument());
            assertEquals("options", assertThrows(ArgumentException.class,
                    () -> MoeRouteVerification.topkWeights(logits, null, r.topkWeights)).argument());
            // the checked tensor itself: null, of another dtype, of another shape
            assertEquals("topkWeights", assertThrows(ArgumentException.class,
                    () -> MoeRouteVerification.topkWeights(logits, MoeRoute.Options.topK(2), null)).argument());
            try (Tensor half = Tensor.empty(Device.CPU, DType.F16, 5, 2); Tensor wide = Tensor.empty(Device.CPU, DType.F32, 5, 3)) {
                assertEquals("topkWeights", assertThrows(ArgumentException.class,
                        () -> MoeRouteVerification.topkWeights(logits, MoeRoute.Options.topK(2), half)).argument());
                assertEquals("topkWeights", assertThrows(ArgumentException.class,
                        () -> MoeRouteVerification.topkWeights(logits, MoeRoute.Options.topK(2), wide)).argument());
            }
        }
    }

    @Test void aNanOrInfiniteLogitElsewhereLeavesTheWeightBoundOfTheFiniteRowsAsItWas() {
        // row 1's spread is 71.3: the kernel's fp32 x - max (ulp 2^-17 there) puts up to ~64 u of relative error into
        // e^-71.3. A NaN in row 0 made the spread NaN and the bound dropped its spread term (k = 20, 41 u): a correct
        // weight failed. An infinite logit made the count overflow and the bound itself threw.
        float x0 = 8.308594f;
        float x1 = -63.01118f;
        for (float odd : new float[] {Float.NaN, Float.NEGATIVE_INFINITY, Float.POSITIVE_INFINITY}) {
            MoeRoute.Options o = MoeRoute.Options.topK(2);
            try (Tensor logits = Tensor.of(Device.CPU, DType.F32, new float[] {odd, 1f, x0, x1}, 2, 2);
                 MoeRoute.Routing r = MoeRoute.route(logits, o)) {
                float d = x1 - x0;  // as the kernel forms the argument, in fp32
                float tiny = (float) Math.exp(d);
                float w1 = tiny / (1f + tiny);
                r.topkWeights.setDouble(3, w1);  // row 1's second choice (expert 1), as the kernel would round it
                Verdict v = MoeRouteVerification.topkWeights(logits, o, r.topkWeights);
                assertTrue(v.pass(), odd + " in row 0: " + v);
                r.topkWeights.setDouble(3, w1 * (1 + 1e-3));
                assertFalse(MoeRouteVerification.topkWeights(logits, o, r.topkWeights).pass(), odd + " in row 0: a weight 1e-3 off");
            }
        }
    }
}
