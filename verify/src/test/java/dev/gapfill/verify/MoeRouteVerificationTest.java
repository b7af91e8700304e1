package dev.gapfill.verify;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.MoeRoute;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertFalse;
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
        }
    }
}
