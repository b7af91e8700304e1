package dev.gapfill.ops.reference;

import dev.gapfill.core.Tensor;
import dev.gapfill.ops.GqaDecode;

/**
 * CPU reference of {@link GqaDecode}: fp64 scores, softmax and accumulation, one rounding to the output dtype.
 * Works on CPU tensors in any {@link GqaDecode.KvLayout}; lengths are clamped to [0, maxLen] as the kernels do.
 */
public final class GqaDecodeReference {
    private GqaDecodeReference() {}

    /**
     * Exact results of sequences [b0, b1), row-major over (b − b0, h, d).
     *
     * @param out      o in fp64, {@code [(b1−b0)·Hq·D]}
     * @param absTerms Σ_j p_j·|v_j| per output element: the magnitude the error bound scales with
     * @param lse      log-sum-exp per (b, h) in natural-log units, −inf for an empty sequence
     * @param sigma    max_j scale·Σ_d |q_d·k_jd| per (b, h): the largest score magnitude the dot products could reach
     * @param lens     the clamped length of each sequence of the range
     */
    public record Exact(double[] out, double[] absTerms, double[] lse, double[] sigma, int[] lens) {
        public int maxLen() {
            int m = 0;
            for (int l : lens) {
                m = Math.max(m, l);
            }
            return m;
        }

        public double maxSigma() {
            double m = 0;
            for (double s : sigma) {
                m = Math.max(m, s);
            }
            return m;
        }
    }

    /** Exact results for every sequence. */
    public static Exact exact(Tensor q, GqaDecode.KvCache cache, int[] lens, int maxLen, double scale) {
        return exact(q, cache, lens, maxLen, scale, 0, (int) q.dim(0));
    }

    /** Exact results for sequences [b0, b1) (CPU tensors; {@code lens} host copy of all B lengths). */
    public static Exact exact(Tensor q, GqaDecode.KvCache cache, int[] lens, int maxLen, double scale, int b0, int b1) {
        int hq = (int) q.dim(1);
        int d = (int) q.dim(2);
        Tensor k = cache.k();
        Tensor v = cache.v();
        int hkv;
        int cap;
        switch (cache.layout()) {
            case BHLD: hkv = (int) k.dim(1); cap = (int) k.dim(2); break;
            case BLHD: hkv = (int) k.dim(2); cap = (int) k.dim(1); break;
            default: hkv = (int) k.dim(2); cap = 0; break;
        }
        int g = hq / hkv;
        int nb = b1 - b0;
        double[] out = new double[nb * hq * d];
        double[] abs = new double[nb * hq * d];
        double[] lse = new double[nb * hq];
        double[] sigma = new double[nb * hq];
        int[] clamped = new int[nb];
        for (int b = b0; b < b1; b++) {
            clamped[b - b0] = Math.min(Math.max(lens[b], 0), maxLen);
        }
        // one task per (sequence, KV head): each writes only its own query group's entries, in the same order as a
        // sequential loop, so the result does not depend on the parallelism
        java.util.stream.IntStream.range(0, nb * hkv).parallel().forEach(t -> {
            int b = b0 + t / hkv;
            int h = t % hkv;
            int len = clamped[b - b0];
            double[] krow = new double[d];
            double[] vrow = new double[d];
            double[][] qs = new double[g][d];
            for (int i = 0; i < g; i++) {
                for (int e = 0; e < d; e++) {
                    qs[i][e] = q.getDouble(((long) b * hq + (long) h * g + i) * d + e);
                }
            }
            double[][] s = new double[g][len];
            double[] mx = new double[g];
            java.util.Arrays.fill(mx, Double.NEGATIVE_INFINITY);
            for (int j = 0; j < len; j++) {
                long row = rowOffset(cache, b, h, j, hkv, cap, d);
                for (int e = 0; e < d; e++) {
                    krow[e] = k.getDouble(row + e);
                }
                for (int i = 0; i < g; i++) {
                    double acc = 0;
                    double aacc = 0;
                    for (int e = 0; e < d; e++) {
                        double x = qs[i][e] * krow[e];
                        acc += x;
                        aacc += Math.abs(x);
                    }
                    s[i][j] = acc * scale;
                    mx[i] = Math.max(mx[i], s[i][j]);
                    int bh = (b - b0) * hq + h * g + i;
                    sigma[bh] = Math.max(sigma[bh], aacc * Math.abs(scale));
                }
            }
            double[] sum = new double[g];
            for (int i = 0; i < g; i++) {
                for (int j = 0; j < len; j++) {
                    s[i][j] = Math.exp(s[i][j] - mx[i]);
                    sum[i] += s[i][j];
                }
            }
            for (int j = 0; j < len; j++) {
                long row = rowOffset(cache, b, h, j, hkv, cap, d);
                for (int e = 0; e < d; e++) {
                    vrow[e] = v.getDouble(row + e);
                }
                for (int i = 0; i < g; i++) {
                    double p = s[i][j] / sum[i];
                    int base = ((b - b0) * hq + h * g + i) * d;
                    for (int e = 0; e < d; e++) {
                        out[base + e] += p * vrow[e];
                        abs[base + e] += p * Math.abs(vrow[e]);
                    }
                }
            }
            for (int i = 0; i < g; i++) {
                lse[(b - b0) * hq + h * g + i] = len == 0 ? Double.NEGATIVE_INFINITY : mx[i] + Math.log(sum[i]);
            }
        });
        return new Exact(out, abs, lse, sigma, clamped);
    }

    /** Flat element offset of row {@code pos} of KV head {@code h} of sequence {@code b} (element d = 0). */
    private static long rowOffset(GqaDecode.KvCache cache, int b, int h, int pos, int hkv, int cap, int d) {
        switch (cache.layout()) {
            case BHLD: return (((long) b * hkv + h) * cap + pos) * d;
            case BLHD: return (((long) b * cap + pos) * hkv + h) * d;
            default: {
                Tensor table = cache.blockTable();
                int ps = (int) cache.k().dim(1);
                long maxPages = table.dim(1);
                long page = (long) table.getDouble(b * maxPages + pos / ps);
                if (page < 0 || page >= cache.k().dim(0)) {
                    throw new dev.gapfill.core.ArgumentException("cache.blockTable", "page numbers in [0, " + cache.k().dim(0) + ")",
                            page + " at [" + b + ", " + pos / ps + "]");
                }
                return ((page * ps + pos % ps) * hkv + h) * d;
            }
        }
    }

    /** Decodes CPU tensors: {@code out} rounded once from fp64, {@code lse} (may be null) rounded once to F32. */
    public static void decode(Tensor q, GqaDecode.KvCache cache, Tensor lens, Tensor out, Tensor lse, int maxLen, double scale) {
        int b = (int) q.dim(0);
        int[] l = new int[b];
        for (int i = 0; i < b; i++) {
            l[i] = (int) lens.getDouble(i);
        }
        Exact e = exact(q, cache, l, maxLen, scale);
        for (int i = 0; i < e.out().length; i++) {
            out.setDouble(i, e.out()[i]);
        }
        if (lse != null) {
            for (int i = 0; i < e.lse().length; i++) {
                lse.setDouble(i, e.lse()[i]);
            }
        }
    }
}
