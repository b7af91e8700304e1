package dev.gapfill.examples.demo;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;
import dev.gapfill.ops.Backend;
import dev.gapfill.ops.Decision;
import dev.gapfill.ops.GroupedGemm;
import dev.gapfill.ops.MoeRoute;

import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * A mixture-of-experts feed-forward layer, composed from Gapfill ops:
 *
 * <pre>
 *   logits [T, E] ─ MoeRoute ─▶ offsets [E+1], gather [T·k], weights [T·k], rowOf [T, k]      (top-k + softmax, on the device)
 *   x [T, H] ─ GroupedGemm(gather, SwiGLU) with W_gate_up [E, H, 2I] ─▶ h [T·k, I]           (rows in expert order)
 *   h ─ GroupedGemm(row scale = weights) with W_down [E, I, H] ─▶ y [T·k, H]
 *   y ─ MoeCombine(rowOf) ─▶ out [T, H]                                                       (Σ over each token's k rows)
 * </pre>
 *
 * Legend: T tokens, E experts, k experts per token, H hidden size, I expert intermediate size. Weights are KN
 * ({@code [E, K, N]}). {@link Composition#GAPFILL} runs the grouped GEMMs with {@code Backend.AUTO} (one custom kernel
 * per projection, offsets read on the device); {@link Composition#VENDOR} runs them with {@code Backend.VENDOR}: offsets
 * copied to the host once for both projections (a synchronisation; once per projection until the forty-ninth session),
 * one cuBLAS GEMM per non-empty expert or one grouped-batched call, separate gather and epilogue passes. Routing and the combine are the same in both (no vendor library routes).
 */
public final class MoeLayer {
    private MoeLayer() {}

    /**
     * The layer's sizes.
     *
     * @param experts E
     * @param topK    k
     * @param hidden  H
     * @param inter   I (the expert's intermediate size; gate-up has 2·I columns)
     * @param dtype   F16 or BF16 for activations and weights
     */
    public record Config(int experts, int topK, int hidden, int inter, DType dtype) {
        /** {@code E=64 k=8 H=2048 I=1024 BF16}. */
        public String text() {
            return "E=" + experts + " k=" + topK + " H=" + hidden + " I=" + inter + " " + dtype;
        }
    }

    /** Which backend (and, for the vendor, which cuBLAS formulation) the grouped GEMMs use. */
    public enum Composition {
        /** Gapfill: {@code Backend.AUTO} (the custom grouped kernel at decode sizes). */
        GAPFILL(Backend.AUTO, GroupedGemm.VendorPath.LOOP),
        /** What a user without Gapfill writes: offsets to the host, a cuBLAS GEMM per expert. */
        VENDOR(Backend.VENDOR, GroupedGemm.VendorPath.LOOP),
        /** The other vendor formulation: offsets to the host, one {@code cublasGemmGroupedBatchedEx} for all experts. */
        VENDOR_GROUPED(Backend.VENDOR, GroupedGemm.VendorPath.GROUPED_BATCHED);

        final Backend backend;
        final GroupedGemm.VendorPath vendorPath;

        Composition(Backend backend, GroupedGemm.VendorPath vendorPath) {
            this.backend = backend;
            this.vendorPath = vendorPath;
        }

        /** The GEMM result is rounded to the dtype before the epilogue (cuBLAS's grouped-batched call). */
        public boolean roundsBeforeEpilogue() {
            return this == VENDOR_GROUPED;
        }
    }

    /**
     * Expert weights on the host (what the reference reads) and on the device (the same values).
     *
     * @param gateUp W_gate_up [E, H, 2I] (gate columns first, up columns second)
     * @param down   W_down [E, I, H]
     */
    public record Weights(Config config, Tensor hostGateUp, Tensor hostDown, Tensor gateUp, Tensor down) implements AutoCloseable {
        /** Uniform random weights in ±1/√K (K the projection's reduction length), copied to {@code device}. */
        public static Weights random(Config c, Device device, long seed) {
            SplittableRandom rnd = new SplittableRandom(seed);
            Tensor[] t = withDeviceCopies(device,
                    () -> RandomData.uniform(rnd, c.dtype(), 1 / Math.sqrt(c.hidden()), c.experts(), c.hidden(), 2L * c.inter()),
                    () -> RandomData.uniform(rnd, c.dtype(), 1 / Math.sqrt(c.inter()), c.experts(), c.inter(), c.hidden()));
            return new Weights(c, t[0], t[1], t[2], t[3]);
        }

        @Override public void close() { closeAll(hostGateUp, hostDown, gateUp, down); }
    }

    /**
     * One batch of T tokens on the host and on the device.
     *
     * @param count  T
     * @param x      activations [T, H]
     * @param logits router logits [T, E]
     */
    public record Tokens(int count, Tensor hostX, Tensor hostLogits, Tensor x, Tensor logits) implements AutoCloseable {
        /** Uniform random x and logits in [−1, 1) (never zeros), copied to {@code device}. */
        public static Tokens random(Config c, int tokens, Device device, long seed) {
            Random rnd = new Random(seed);
            Tensor[] t = withDeviceCopies(device, () -> Poison.random(Device.CPU, c.dtype(), rnd, tokens, c.hidden()),
                    () -> Poison.random(Device.CPU, c.dtype(), rnd, tokens, c.experts()));
            return new Tokens(tokens, t[0], t[1], t[2], t[3]);
        }

        @Override public void close() { closeAll(hostX, hostLogits, x, logits); }
    }

    /** Two host tensors and their copies on {@code device}, {a, b, a', b'}; what was made is closed if a step fails. */
    private static Tensor[] withDeviceCopies(Device device, Supplier<Tensor> a, Supplier<Tensor> b) {
        Tensor[] t = new Tensor[4];
        try {
            t[0] = a.get();
            t[1] = b.get();
            t[2] = t[0].to(device);
            t[3] = t[1].to(device);
            return t;
        } catch (RuntimeException e) {
            closeAll(t);
            throw e;
        }
    }

    /** Everything one composition writes: the routing, h [T·k, I], y [T·k, H] and the layer output [T, H]. */
    public static final class Buffers implements AutoCloseable {
        public final Composition composition;
        public final MoeRoute.Routing routing;
        public final Tensor h;
        public final Tensor y;
        public final Tensor out;

        /** Allocates (uninitialised) buffers for T tokens on {@code device}. */
        public Buffers(Config c, int tokens, Composition composition, Device device) {
            this.composition = composition;
            long rows = (long) tokens * c.topK();
            MoeRoute.Routing r = null;
            Tensor hh = null;
            Tensor yy = null;
            Tensor oo = null;
            try {  // what was made is closed when a later allocation fails (the caller never gets the object to close)
                r = MoeRoute.Routing.allocate(device, tokens, c.experts(), c.topK());
                hh = Tensor.empty(device, c.dtype(), rows, c.inter());
                yy = Tensor.empty(device, c.dtype(), rows, c.hidden());
                oo = Tensor.empty(device, c.dtype(), tokens, c.hidden());
                if (device.isCuda()) {
                    Stream.perThread(device).synchronize();  // allocated in order on this thread's stream; used on the caller's
                }
            } catch (RuntimeException e) {
                for (AutoCloseable a : new AutoCloseable[] {oo, yy, hh, r}) {
                    if (a != null) {
                        try {
                            a.close();
                        } catch (Exception suppressed) {
                            e.addSuppressed(suppressed);
                        }
                    }
                }
                throw e;
            }
            this.routing = r;
            this.h = hh;
            this.y = yy;
            this.out = oo;
        }

        /** Fills every output with 0xFF bytes (NaN, −1) on {@code stream}, so anything left unwritten shows. */
        public void poison(Stream stream) {
            for (Tensor t : new Tensor[] {routing.offsets, routing.gather, routing.weights, routing.rowOf, routing.topkIds,
                    routing.topkWeights, h, y, out}) {
                t.fillBytes(0xff, stream);
            }
        }

        @Override public void close() {
            routing.close();
            closeAll(h, y, out);
        }
    }

    /**
     * The layer, enqueued on {@code stream} (null: the per-thread stream; CPU tensors run the reference backend).
     * Nothing here waits for the GPU except the vendor composition, which copies the offsets to the host once and hands
     * that copy to both grouped GEMMs ({@code GroupedGemm.Options.hostOffsets}), as a hand-written cuBLAS layer would;
     * until the forty-ninth session each projection copied them again, one host round trip more per layer.
     */
    public static void forward(Weights w, Tokens in, Buffers b, Stream stream) {
        Config c = w.config();
        MoeRoute.route(in.logits(), MoeRoute.Options.topK(c.topK()), b.routing, stream);
        GroupedGemm.Options up = gateUpOptions(b);
        GroupedGemm.Options down = downOptions(b);
        if (b.composition.backend == Backend.VENDOR && b.routing.offsets.device().isCuda()) {
            int[] off = GroupedGemm.offsetsToHost(b.routing.offsets, stream);
            up = up.withHostOffsets(off);
            down = down.withHostOffsets(off);
        }
        GroupedGemm.run(in.x(), w.gateUp(), b.routing.offsets, up, b.h, stream);
        GroupedGemm.run(b.h, w.down(), b.routing.offsets, down, b.y, stream);
        MoeCombine.run(b.y, b.routing.rowOf, b.out, stream);
    }

    /** Gate-up: rows gathered from the tokens, SwiGLU over the two halves of 2·I columns. */
    static GroupedGemm.Options gateUpOptions(Buffers b) {
        return GroupedGemm.Options.builder().gather(b.routing.gather).swiglu(true).backend(b.composition.backend)
                .vendorPath(b.composition.vendorPath).build();
    }

    /** Down: each row scaled by its router weight in the epilogue. */
    static GroupedGemm.Options downOptions(Buffers b) {
        return GroupedGemm.Options.builder().rowScale(b.routing.weights).backend(b.composition.backend)
                .vendorPath(b.composition.vendorPath).build();
    }

    /** What the two grouped GEMMs run for these buffers (routing must have run: AUTO reads only shapes). */
    public static String decisions(Weights w, Tokens in, Buffers b) {
        Decision up = GroupedGemm.decide(in.x(), w.gateUp(), b.routing.offsets, gateUpOptions(b));
        Decision down = GroupedGemm.decide(b.h, w.down(), b.routing.offsets, downOptions(b));
        return "gate_up " + up.backend() + "/" + up.variant() + ", down " + down.backend() + "/" + down.variant();
    }

    private static void closeAll(Tensor... ts) {
        for (Tensor t : ts) {
            if (t != null && !t.isClosed()) {
                t.close();
            }
        }
    }
}
