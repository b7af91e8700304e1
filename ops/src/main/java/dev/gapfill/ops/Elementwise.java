package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.Checks;
import dev.gapfill.core.Closing;
import dev.gapfill.core.DType;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.ops.reference.ElementwiseReference;

import java.util.EnumSet;
import java.util.Set;

/**
 * Elementwise ops; the foundation's end-to-end example of an op (validation, CPU reference, bundled
 * kernel, stream).
 *
 * <p>{@code out[i] = alpha · a[i] + beta · b[i]}; a, b, out: same shape, same float dtype (F32, F16,
 * BF16), contiguous; computed in fp32 with one rounding to the output dtype on the GPU (the reference
 * computes in fp64 and rounds once). On a GPU, out may be a or b itself (in place) but must not partly overlap
 * either.
 */
public final class Elementwise {
    private static final Set<DType> DTYPES = EnumSet.of(DType.F32, DType.F16, DType.BF16);
    private static final KernelModule MODULE = KernelModule.of("elementwise/scale_add");
    private static final int THREADS = 256;

    private Elementwise() {}

    /** {@code alpha·a + beta·b} into a new tensor, on the per-thread stream. */
    public static Tensor scaleAdd(Tensor a, Tensor b, float alpha, float beta) {
        checkInputs(a, b, alpha, beta);  // before allocating the output
        if (!a.device().isCpu()) {
            checkedBlocks(a.numel(), a.dtype(), Gpu.device(a.device()).info().smCount());  // the kernel's 32-bit indexing, too
        }
        Tensor out = Tensor.empty(a.device(), a.dtype(), a.shape());
        try {
            scaleAdd(a, b, alpha, beta, out, null);
        } catch (RuntimeException | Error e) {  // an Error too (JavaCPP's or the heap's OutOfMemoryError): no leaked output
            Closing.closeAfter(e, out);
            throw e;
        }
        return out;
    }

    /**
     * {@code out = alpha·a + beta·b} on {@code stream} (null: the per-thread stream).
     *
     * @throws ArgumentException on a closed tensor, dtype/shape/device mismatch, non-contiguous input, out partly
     *                           overlapping a or b, or too many elements for the kernel's 32-bit indexing
     */
    public static void scaleAdd(Tensor a, Tensor b, float alpha, float beta, Tensor out, Stream stream) {
        checkInputs(a, b, alpha, beta);
        Checks.open("out", out);
        Checks.dtype("out", out, a.dtype());
        Checks.shape("out", out, "", a.shape());
        Checks.sameDevice("out", out, a.device());
        Checks.contiguous("out", out);
        // scale_add.cu reads a[i] and b[i] before it writes out[i], at the same index in the same thread: out may be
        // a or b exactly (in place), never a partial overlap (another thread's element would be read after its write)
        Checks.noPartialOverlap("out", out, "a", a);
        Checks.noPartialOverlap("out", out, "b", b);
        if (a.device().isCpu()) {
            ElementwiseReference.scaleAdd(a, b, alpha, beta, out);
            return;
        }
        Stream s = OpStreams.pick(a.device(), stream);
        int n = (int) a.numel();
        String symbol = "scale_add_" + a.dtype().name().toLowerCase(java.util.Locale.ROOT);
        int blocks = checkedBlocks(a.numel(), a.dtype(), Gpu.device(a.device()).info().smCount());
        MODULE.function(s.cudaDevice(), symbol).launch(s, blocks, 1, 1, THREADS, 1, 1, 0,
                KernelArgs.begin().ptr(a).ptr(b).ptr(out).i32(n).f32(alpha).f32(beta));
        OpStreams.record(s, a, b, out);
    }

    /**
     * Blocks of the scale_add launch for {@code n} elements on {@code sms} SMs, checked against 32-bit index wrap-around
     * ({@link #vectorGridBlocks}; ArgumentException naming "a").
     */
    static int checkedBlocks(long n, DType dt, int sms) {
        return vectorGridBlocks("a", "elements of the scale_add loop", n, dt, sms);
    }

    /**
     * Blocks of a vectorised grid-stride pass over {@code n} elements ({@value #THREADS} threads, 16 bytes per thread and
     * iteration, at most 16 blocks per SM: scale_add.cu, and depthwise's vendor GELU pass, vendor_gelu.cu), after checking
     * that its 32-bit index cannot wrap: the tail loop starts at {@code done + tid} (done ≤ n) and steps by the grid, so
     * n + blocks·threads must stay at most 2^31-1 ({@link Checks#gridStrideIndexable}, naming {@code name}).
     */
    static int vectorGridBlocks(String name, String what, long n, DType dt, int sms) {
        long perBlock = (long) THREADS * (16 / dt.bytes());
        int blocks = (int) Math.max(1, Math.min((n + perBlock - 1) / perBlock, (long) sms * 16));
        Checks.gridStrideIndexable(name, what, n, blocks, THREADS);
        return blocks;
    }
    private static void checkInputs(Tensor a, Tensor b, float alpha, float beta) {
        Checks.open("a", a);
        Checks.open("b", b);
        Checks.dtype("a", a, DTYPES);
        Checks.dtype("b", b, a.dtype());
        Checks.shape("b", b, "", a.shape());
        Checks.sameDevice("b", b, a.device());
        Checks.contiguous("a", a);
        Checks.contiguous("b", b);
        Checks.int32Indexable("a", a);
        if (!Float.isFinite(alpha) || !Float.isFinite(beta)) {
            throw new ArgumentException("alpha/beta", "finite scalars", alpha + ", " + beta);
        }
    }
}
