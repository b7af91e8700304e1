package dev.gapfill.examples.bench;

import java.util.Arrays;

/**
 * Medians and spread of one path's repetitions, in microseconds.
 *
 * @param medianUs median
 * @param p10Us    10th percentile
 * @param p90Us    90th percentile
 * @param reps     repetitions timed
 */
public record Timing(double medianUs, double p10Us, double p90Us, int reps) {
    /** Median, p10 and p90 of repetitions given in µs. */
    public static Timing of(double[] us) {
        double[] s = us.clone();
        Arrays.sort(s);
        int n = s.length;
        double med = n % 2 == 1 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
        return new Timing(med, s[(int) Math.floor(0.1 * (n - 1))], s[(int) Math.ceil(0.9 * (n - 1))], n);
    }
}
