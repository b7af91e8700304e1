package dev.gapfill.examples.bench;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode.KvCache;
import dev.gapfill.ops.GqaDecode.KvLayout;
import dev.gapfill.ops.GqaDecode.Problem;
import dev.gapfill.verify.GqaDecodeProblems;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The host copies of the sequences that the gqa_decode benchmark's check compares against (CPU tensors, no GPU needed). */
class GqaDecodeBenchTest {
    private static Tensor random(Random rnd, long... shape) {
        return GqaDecodeProblems.uniform(rnd, DType.F16, shape);
    }

    @Test void contiguousSequencesAreCopiedHeadByHeadInBhldOrder() {
        int b = 3, hkv = 3, lmax = 37, d = 8, len = 29;
        Random rnd = new Random(5);
        Problem p = Problem.contiguous(b, 6, hkv, d, lmax, KvLayout.BHLD, DType.F16);
        try (Tensor k = random(rnd, b, hkv, lmax, d); Tensor v = random(rnd, b, hkv, lmax, d);
             Tensor hk = Tensor.empty(Device.CPU, DType.F16, 1, hkv, len, d); Tensor hv = Tensor.empty(Device.CPU, DType.F16, 1, hkv, len, d)) {
            for (int seq : new int[] {0, b - 1}) {
                GqaDecodeBench.copySequence(KvCache.bhld(k, v), p, seq, len, hk, hv);
                for (int h = 0; h < hkv; h++) {
                    for (int l = 0; l < len; l++) {
                        for (int e = 0; e < d; e++) {
                            long src = (((long) seq * hkv + h) * lmax + l) * d + e;
                            long dst = ((long) h * len + l) * d + e;
                            assertEquals(k.getRawBits(src), hk.getRawBits(dst), "K seq" + seq + " h" + h + " l" + l + " e" + e);
                            assertEquals(v.getRawBits(src), hv.getRawBits(dst), "V seq" + seq + " h" + h + " l" + l + " e" + e);
                        }
                    }
                }
            }
        }
    }

    @Test void pagedSequencesFollowTheirBlockTableRows() {
        int hkv = 2, d = 8, ps = 4, maxPages = 3, len = 10;
        Random rnd = new Random(6);
        Problem p = Problem.paged(2, 4, hkv, d, ps, maxPages, DType.F16);
        int[] table = {4, 0, 2, 1, 5, 3};  // sequence 0 uses pages 4, 0, 2; sequence 1 pages 1, 5, 3
        try (Tensor k = random(rnd, 6, ps, hkv, d); Tensor v = random(rnd, 6, ps, hkv, d); Tensor t = Tensor.ofInts(Device.CPU, table, 2, maxPages);
             Tensor hk = Tensor.empty(Device.CPU, DType.F16, 1, hkv, len, d); Tensor hv = Tensor.empty(Device.CPU, DType.F16, 1, hkv, len, d)) {
            for (int seq : new int[] {0, 1}) {
                GqaDecodeBench.copySequence(KvCache.paged(k, v, t), p, seq, len, hk, hv);
                for (int l = 0; l < len; l++) {
                    for (int h = 0; h < hkv; h++) {
                        for (int e = 0; e < d; e++) {
                            long src = (((long) table[seq * maxPages + l / ps] * ps + l % ps) * hkv + h) * d + e;
                            long dst = ((long) h * len + l) * d + e;
                            assertEquals(k.getRawBits(src), hk.getRawBits(dst), "K seq" + seq);
                            assertEquals(v.getRawBits(src), hv.getRawBits(dst), "V seq" + seq);
                        }
                    }
                }
            }
        }
    }

    /** The checked sequences keep their lengths' ratio when scaled to the check's budget; short launches keep theirs. */
    @Test void checkedLengthsAreScaledNotCut() {
        int[] varied = {8192, 12000, 16384};
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {1024, 12000, 2048},
                GqaDecodeBench.checkedLengths(varied, new int[] {0, 2}));
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {2048, 16384, 2048},
                GqaDecodeBench.checkedLengths(new int[] {16384, 16384, 16384}, new int[] {0, 2}));
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {512, 1024},
                GqaDecodeBench.checkedLengths(new int[] {512, 1024}, new int[] {0, 1}), "within the budget: as they are");
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {1, 2048},
                GqaDecodeBench.checkedLengths(new int[] {1, 131072}, new int[] {0, 1}), "never below one key");
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {0, 2048},
                GqaDecodeBench.checkedLengths(new int[] {0, 131072}, new int[] {0, 1}), "an empty sequence stays empty");
    }
}
