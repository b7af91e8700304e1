package dev.gapfill.examples.demo;

/**
 * The least work each demo layer must do, from which {@code BenchContext.floorUs} makes a floor in µs
 * (max(bytes / measured copy bandwidth, flops / measured bf16 GEMM rate)).
 */
public final class Floors {
    private Floors() {}

    /**
     * Bytes a MoE layer must move at least: the weights of the experts that received a token (gate-up H·2I and down
     * I·H each), the activations read and the output written (T·H each), and the router logits (T·E). Intermediates
     * (h, y) are not counted: a fused layer could keep them on chip.
     *
     * <p>Example: E=64, k=8, H=2048, I=1024, bf16, T=1 with 8 active experts: 8·(2048·2048 + 1024·2048)·2
     * + 2·2048·2 + 64·2 = 100 671 616 bytes, about 33 µs at 3 TB/s.
     */
    public static long moeBytes(MoeLayer.Config c, int tokens, int activeExperts) {
        long eb = c.dtype().bytes();
        long perExpert = ((long) c.hidden() * 2 * c.inter() + (long) c.inter() * c.hidden()) * eb;
        return activeExperts * perExpert + 2L * tokens * c.hidden() * eb + (long) tokens * c.experts() * eb;
    }

    /** Multiply-adds ×2 of the two projections over the T·k routed rows: 2·T·k·(H·2I + I·H). */
    public static double moeFlops(MoeLayer.Config c, int tokens) {
        return 2.0 * tokens * c.topK() * ((double) c.hidden() * 2 * c.inter() + (double) c.inter() * c.hidden());
    }

    /**
     * Bytes one decode step must move at least, averaged over the steps: the K and V rows it attends over
     * (Σ_b len_b·Hkv·D·2·size, averaged) plus q read and o written (B·Hq·D·size each).
     *
     * <p>Example: B=1, Hq=32, Hkv=8, D=128, bf16, lengths averaging 4000: 4000·8·128·2·2 + 2·32·128·2 = 16 400 384 bytes,
     * about 5.5 µs at 3 TB/s.
     *
     * @param totalPositions Σ over the steps of Σ_b len_b
     * @param steps          number of steps
     */
    public static long decodeBytes(DecodeStep.Config c, long totalPositions, int steps) {
        long eb = c.dtype().bytes();
        return totalPositions * c.kvHeads() * c.headDim() * 2 * eb / steps + 2L * c.batch() * c.qHeads() * c.headDim() * eb;
    }

    /** q·Kᵀ and P·V per step, averaged: 4·Σ_b len_b·Hq·D. */
    public static double decodeFlops(DecodeStep.Config c, long totalPositions, int steps) {
        return 4.0 * totalPositions * c.qHeads() * c.headDim() / steps;
    }
}
