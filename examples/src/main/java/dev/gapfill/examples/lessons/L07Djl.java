package dev.gapfill.examples.lessons;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import dev.gapfill.examples.djl.DjlInterop;
import dev.gapfill.ops.Bmm;
import dev.gapfill.ops.reference.BmmReference;
import dev.gapfill.verify.Tolerance;
import dev.gapfill.verify.Verdict;
import dev.gapfill.verify.Verifier;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Lesson 07 — Gapfill ops on data that lives in DJL {@link NDArray}s.
 *
 * <ol>
 *   <li>{@link DjlInterop} maps dtypes and shapes and copies: NDArray → {@link Tensor} on any Gapfill device, and
 *   back. F32, F16, BF16, I8 and I32 round-trip bit for bit; other DJL dtypes are refused by name.</li>
 *   <li>A DJL-facing op: {@link #bmm(NDArray, NDArray, Device)} takes NDArrays, runs {@link Bmm} on the Gapfill
 *   device and returns an NDArray of the caller's manager; the result is checked against the fp64 reference.</li>
 *   <li>The boundary costs copies: the lesson checks whether the engine reads a direct buffer in place and
 *   measures each direction for a few sizes (docs/djl.md explains what each copy is and why there is no zero-copy
 *   path between a DJL engine's memory and Gapfill's device memory).</li>
 * </ol>
 * DJL needs an engine to create NDArrays. The examples module ships DJL's ONNX Runtime engine, whose native library
 * comes inside its Maven Central jar; any other engine works the same, since only DJL's engine-neutral API is used.
 */
public final class L07Djl {
    private L07Djl() {}

    /**
     * One size of boundary copy, medians of several repetitions.
     *
     * @param bytes           payload (F32 elements × 4)
     * @param toTensorMicros  NDArray → Tensor, all of {@link DjlInterop#toTensor}
     * @param engineMicros    of which the engine's {@link NDArray#toByteBuffer()} alone
     * @param toNDArrayMicros Tensor → NDArray, all of {@link DjlInterop#toNDArray}
     * @param gapfillMicros   of which Gapfill's {@link Tensor#toRaw()} alone
     * @param allocMicros     a fresh zeroed direct buffer of this size ({@code ByteBuffer.allocateDirect}), which both
     *                        directions pay once on the host side
     */
    public record CopyCost(long bytes, double toTensorMicros, double engineMicros, double toNDArrayMicros, double gapfillMicros,
                           double allocMicros) {
        /** GB/s of one direction (10^9 bytes per second). */
        public static double gbPerSecond(long bytes, double micros) { return bytes / micros / 1e3; }
    }

    /**
     * What the lesson checked and measured.
     *
     * @param device          the Gapfill device
     * @param engine          DJL engine name, or null when none is on the class path
     * @param roundTrips      dtypes that came back bit-identical from NDArray → Tensor → NDArray
     * @param refusal         the message for an unsupported dtype (FLOAT64)
     * @param bmmVerdict      Gapfill's bmm on DJL data against the fp64 reference
     * @param resultIntact    the NDArray handed back holds exactly the tensor's bytes
     * @param wrapsDirect     the engine's NDArray made from a direct buffer reads that buffer in place (no copy)
     * @param costs           boundary copy costs per size
     */
    public record Result(Device device, String engine, List<DType> roundTrips, String refusal, Verdict bmmVerdict,
                         boolean resultIntact, boolean wrapsDirect, List<CopyCost> costs) {
        public boolean ran() { return engine != null; }
    }

    static final long[] COPY_BYTES = {256L << 10, 4L << 20, 64L << 20};

    public static void main(String[] args) {
        Result r = run(Device.best(), System.out);
        if (r.ran() && !(r.bmmVerdict().pass() && r.resultIntact() && r.roundTrips().size() == 5)) {
            throw new IllegalStateException("lesson check failed: " + r);
        }
        System.out.println(r.ran() ? "07_djl: OK" : "07_djl: SKIPPED (no DJL engine)");
    }

    public static Result run(Device dev, PrintStream out) {
        if (Engine.getAllEngines().isEmpty()) {
            out.println("07_djl: no DJL engine on the class path, so DJL cannot create NDArrays. Add one, e.g. "
                    + "ai.djl.onnxruntime:onnxruntime-engine (its natives come inside the Maven Central jar) or "
                    + "ai.djl.pytorch:pytorch-engine; examples/pom.xml declares the first.");
            return new Result(dev, null, List.of(), null, null, false, false, List.of());
        }
        // The engine's name only: an engine adapter reports the native version it was built for, which need not be
        // the one on the class path (examples/pom.xml pins a newer ONNX Runtime than DJL's adapter names).
        String engineName = Engine.getInstance().getEngineName();
        out.println("07_djl: DJL " + Engine.getDjlVersion() + " with the " + engineName + " engine, Gapfill on " + dev);
        // DJL arrays on the host: the boundary below is host memory <-> Gapfill's device.
        try (NDManager manager = NDManager.newBaseManager(ai.djl.Device.cpu())) {
            // 1. Every dtype both sides hold round-trips bit for bit.
            List<DType> roundTrips = new ArrayList<>();
            Random rnd = new Random(7);
            for (DType dt : DType.values()) {
                ByteBuffer bytes = ByteBuffer.allocateDirect(3 * 5 * dt.bytes()).order(ByteOrder.nativeOrder());
                for (int i = 0; i < bytes.capacity(); i++) {
                    bytes.put(i, (byte) rnd.nextInt(256));
                }
                NDArray original = manager.create(bytes, new Shape(3, 5), DjlInterop.dataTypeOf(dt));
                try (Tensor t = DjlInterop.toTensor(original, dev); NDArray back = DjlInterop.toNDArray(t, manager)) {
                    if (back.getDataType() == original.getDataType() && back.getShape().equals(original.getShape())
                            && back.toByteBuffer().equals(original.toByteBuffer())) {
                        roundTrips.add(dt);
                    }
                }
                original.close();
            }
            // bytes coming back unchanged cannot tell F16 from BF16: read one value of each as a number
            for (DType dt : new DType[] {DType.F16, DType.BF16}) {
                ByteBuffer one = ByteBuffer.allocateDirect(2).order(ByteOrder.nativeOrder());
                one.putShort(0, (short) (dt == DType.F16 ? 0x3E00 : 0x3FC0));  // 1.5 in each format
                try (NDArray a15 = manager.create(one, new Shape(1), DjlInterop.dataTypeOf(dt));
                     Tensor t = DjlInterop.toTensor(a15, Device.CPU)) {
                    float v = t.toFloatArray()[0];
                    if (v != 1.5f) {
                        roundTrips.remove(dt);
                        out.println("  " + dt + ": 1.5 read back as " + v + " (the dtype mapping is wrong)");
                    }
                }
            }
            out.println("  NDArray -> Tensor on " + dev + " -> NDArray, bit-identical: " + roundTrips);
            String refusal;
            try (NDArray doubles = manager.create(new double[] {1, 2, 3}); Tensor t = DjlInterop.toTensor(doubles, dev)) {
                throw new IllegalStateException("FLOAT64 was accepted as " + t);
            } catch (ArgumentException e) {
                refusal = e.getMessage();
                out.println("  a FLOAT64 NDArray is refused: " + refusal);
            }

            // 2. A Gapfill op called from DJL code: 64 small F32 products whose inputs are NDArrays.
            float[] av = randomFloats(rnd, 64 * 16 * 24);
            float[] bv = randomFloats(rnd, 64 * 24 * 16);
            Verdict verdict;
            boolean intact;
            // the steps of bmm(a, b, dev) below, written out so that the NDArray handed back is compared with the tensor it
            // came from (against a copy of itself, a changed byte would go unseen)
            try (NDArray a = manager.create(av, new Shape(64, 16, 24)); NDArray b = manager.create(bv, new Shape(64, 24, 16));
                 Tensor ta = DjlInterop.toTensor(a, dev); Tensor tb = DjlInterop.toTensor(b, dev); Tensor tc = Bmm.bmm(ta, tb);
                 NDArray c = DjlInterop.toNDArray(tc, manager);
                 Tensor hostA = DjlInterop.toTensor(a, Device.CPU); Tensor hostB = DjlInterop.toTensor(b, Device.CPU);
                 Tensor hostC = DjlInterop.toTensor(c, Device.CPU)) {
                BmmReference.Result ref = BmmReference.exact(hostA, hostB, false, false);
                verdict = Verifier.compare(hostC, ref.exact(), ref.absSum(), Tolerance.accumulation(DType.F32, 24, 1), "fp64 reference");
                intact = c.getShape().equals(new Shape(64, 16, 16)) && c.getDataType() == DataType.FLOAT32 && DjlInterop.sameContents(c, tc);
                out.println("  bmm on NDArrays " + a.getShape() + " x " + b.getShape() + " -> " + c.getShape() + ": " + verdict);
            }

            // 3. Does the engine copy a direct buffer it is given, or read it in place? Write to the buffer afterwards
            //    and look through the NDArray. (In place means Tensor -> NDArray costs only Gapfill's copy.)
            boolean wraps;
            ByteBuffer probe = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
            try (NDArray view = manager.create(probe, new Shape(4), DataType.FLOAT32)) {
                probe.putFloat(0, 42f);
                wraps = view.toByteBuffer().getFloat(0) == 42f;
            }
            out.println("  the engine reads a direct buffer in place (no copy when Gapfill hands one over): " + wraps);

            // 4. What the boundary costs, per direction, for a few sizes.
            List<CopyCost> costs = new ArrayList<>();
            out.println("  boundary copies, F32, medians (" + (dev.isCpu()
                    ? "Gapfill on the CPU: host-to-host copies" : "Gapfill on " + dev + ": pageable host <-> device copies") + "):");
            out.println("      bytes   NDArray->Tensor (engine copy)       Tensor->NDArray (Gapfill copy)    new direct buffer");
            for (long bytes : COPY_BYTES) {
                CopyCost cc = measure(manager, dev, bytes);
                costs.add(cc);
                out.printf(Locale.ROOT, "  %9s   %8.1f us %6.2f GB/s (%8.1f us)   %8.1f us %6.2f GB/s (%8.1f us)   %8.1f us%n", size(bytes),
                        cc.toTensorMicros(), CopyCost.gbPerSecond(bytes, cc.toTensorMicros()), cc.engineMicros(),
                        cc.toNDArrayMicros(), CopyCost.gbPerSecond(bytes, cc.toNDArrayMicros()), cc.gapfillMicros(), cc.allocMicros());
            }
            return new Result(dev, engineName, roundTrips, refusal, verdict, intact, wraps, costs);
        }
    }

    /**
     * {@code C[b] = A[b]·B[b]} for DJL arrays (A: [batch, m, k], B: [batch, k, n]), computed by Gapfill on
     * {@code device}; the result is an NDArray of A's manager. Two copies in, one out: worth it when the op is
     * large or several Gapfill ops run between the copies.
     */
    public static NDArray bmm(NDArray a, NDArray b, Device device) {
        try (Tensor ta = DjlInterop.toTensor(a, device); Tensor tb = DjlInterop.toTensor(b, device); Tensor tc = Bmm.bmm(ta, tb)) {
            return DjlInterop.toNDArray(tc, a.getManager());
        }
    }

    /** Median times of the two directions and their parts for {@code bytes} of F32. */
    private static CopyCost measure(NDManager manager, Device dev, long bytes) {
        int reps = bytes >= (16L << 20) ? 7 : 21;
        long elements = bytes / 4;
        ByteBuffer data = ByteBuffer.allocateDirect((int) bytes).order(ByteOrder.nativeOrder());
        try (NDArray array = manager.create(data, new Shape(elements), DataType.FLOAT32);
             Tensor tensor = Tensor.empty(dev, DType.F32, elements)) {
            tensor.fillBytes(0); // initialised, so the device-to-host copies read defined memory
            return new CopyCost(bytes,
                    medianMicros(reps, () -> DjlInterop.toTensor(array, dev), Tensor::close),
                    medianMicros(reps, array::toByteBuffer, b -> requireBytes(b, bytes)),
                    medianMicros(reps, () -> DjlInterop.toNDArray(tensor, manager), NDArray::close),
                    medianMicros(reps, tensor::toRaw, b -> requireBytes(b, bytes)),
                    medianMicros(reps, () -> ByteBuffer.allocateDirect((int) bytes), b -> requireBytes(b, bytes)));
        }
    }

    /** Median wall-clock microseconds of {@code timed} over {@code reps} runs after one warm-up; {@code after} runs untimed. */
    private static <T> double medianMicros(int reps, Supplier<T> timed, Consumer<T> after) {
        double[] us = new double[reps];
        for (int r = -1; r < reps; r++) {
            long t0 = System.nanoTime();
            T value = timed.get();
            long t1 = System.nanoTime();
            after.accept(value);
            if (r >= 0) {
                us[r] = (t1 - t0) / 1e3;
            }
        }
        return median(us);
    }

    private static void requireBytes(ByteBuffer b, long bytes) {
        if (b.remaining() != bytes) {
            throw new IllegalStateException("expected " + bytes + " bytes, the copy holds " + b.remaining());
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    private static String size(long bytes) {
        return bytes >= (1L << 20) ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    private static float[] randomFloats(Random rnd, int n) {
        float[] f = new float[n];
        for (int i = 0; i < n; i++) {
            f[i] = rnd.nextFloat() * 2 - 1;
        }
        return f;
    }
}
