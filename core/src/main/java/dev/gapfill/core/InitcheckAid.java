package dev.gapfill.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A debug mode for running under {@code compute-sanitizer --tool initcheck}, off unless the JVM runs with
 * {@code -Dgapfill.debug.initcheck=true}.
 *
 * <p>On Hopper, initcheck does not record the stores of cuBLAS's GEMM kernels: a buffer a GEMM has just written in
 * full is reported as uninitialised when a kernel reads it or {@code cudaMemcpy} copies it out
 * ({@code cuda-native/dev/sanitizer/initcheck_cublas.cu} shows it for bf16, f16 and int8 GEMMs with a plain read
 * kernel and host-checked values; int8Mm's {@code cublasLtMatmul} output is treated the same way).
 * With this mode on, the vendor paths zero each buffer a vendor GEMM is about to write, on the call's stream, so the
 * tool knows the memory and its reports point at real uninitialised reads elsewhere. The same goes for any vendor kernel
 * the tool does not instrument (a run with a kernel filter that keeps Gapfill's kernels only): gqaDecode's vendor path
 * also zeroes the log-probabilities cuDNN's softmax writes, which its probs kernel then reads. It adds a memset per vendor call,
 * so it is never on in benchmarks; results are unchanged (the GEMM overwrites every element it is given, and the
 * tests without this mode poison outputs and compare every element).
 */
public final class InitcheckAid {
    private static final boolean ENABLED = Boolean.getBoolean("gapfill.debug.initcheck");
    private static final Logger LOG = LoggerFactory.getLogger(InitcheckAid.class);

    private InitcheckAid() {}

    public static boolean enabled() { return ENABLED; }

    /** In initcheck mode, zeroes {@code t} (contiguous, on the GPU) on {@code stream} before a vendor library writes it. */
    public static void beforeVendorWrite(Tensor t, Stream stream) {
        if (ENABLED && t != null && !t.device().isCpu()) {
            t.fillBytes(0, stream);
        }
    }

    /**
     * In initcheck mode, logs (INFO, this class's logger) the device address range of each named tensor handed to a
     * vendor call, so an address in a sanitizer report can be matched to an operand. {@code namesAndTensors}
     * alternates names and tensors; null tensors are skipped.
     */
    public static void describe(String call, Object... namesAndTensors) {
        if (!ENABLED || !LOG.isInfoEnabled()) {
            return;
        }
        StringBuilder sb = new StringBuilder(call).append(':');
        for (int i = 0; i + 1 < namesAndTensors.length; i += 2) {
            if (namesAndTensors[i + 1] instanceof Tensor) {
                Tensor t = (Tensor) namesAndTensors[i + 1];
                sb.append(' ').append(namesAndTensors[i]).append("=[0x").append(Long.toHexString(t.address())).append(", 0x")
                        .append(Long.toHexString(t.address() + t.byteSize())).append(')');
            }
        }
        LOG.info(sb.toString());
    }
}
