package dev.gapfill.examples.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Moves tensors between DJL {@link NDArray}s and Gapfill {@link Tensor}s through host memory, using only
 * DJL's engine-neutral API ({@link NDArray#toByteBuffer()}, {@link NDManager#create(java.nio.Buffer, Shape, DataType)}),
 * so it works with any DJL engine.
 *
 * <p>Dtypes: FLOAT32 ↔ F32, FLOAT16 ↔ F16, BFLOAT16 ↔ BF16, INT8 ↔ I8, INT32 ↔ I32; any other DJL dtype is
 * refused with an {@link ArgumentException} listing these. Shapes map one to one (row-major in both libraries).
 *
 * <p>Costs (docs/djl.md has the measurements): NDArray → Tensor is the engine's copy into a Java buffer
 * ({@code toByteBuffer}), then Gapfill's copy into its memory: into the tensor's host buffer on the CPU; on a GPU
 * into a temporary direct buffer when the engine's buffer is on the Java heap (ONNX Runtime's is), then a
 * synchronous host-to-device copy from that pageable memory. Tensor → NDArray is one copy into a new direct buffer
 * ({@link Tensor#toRaw()}; on a GPU a synchronous device-to-host copy), which the engine may wrap without copying
 * again (ONNX Runtime does). Nothing is shared between the two sides afterwards.
 */
public final class DjlInterop {
    private DjlInterop() {}

    /** The Gapfill dtype of a DJL data type; throws for the ones Gapfill has no kernel for. */
    public static DType dtypeOf(DataType t) {
        if (t == null) {
            throw new ArgumentException("dataType", "a DJL data type", "null");
        }
        switch (t) {
            case FLOAT32: return DType.F32;
            case FLOAT16: return DType.F16;
            case BFLOAT16: return DType.BF16;
            case INT8: return DType.I8;
            case INT32: return DType.I32;
            default:
                throw new ArgumentException("array", "a DJL data type Gapfill holds (FLOAT32, FLOAT16, BFLOAT16, INT8, INT32)",
                        t.toString());
        }
    }

    /** The DJL data type of a Gapfill dtype. */
    public static DataType dataTypeOf(DType t) {
        switch (t) {
            case F32: return DataType.FLOAT32;
            case F16: return DataType.FLOAT16;
            case BF16: return DataType.BFLOAT16;
            case I8: return DataType.INT8;
            case I32: return DataType.INT32;
            default: throw new IllegalStateException("DType " + t + " has no DJL data type mapping");
        }
    }

    /**
     * A new Gapfill tensor on {@code device} holding a copy of {@code array} (same shape and dtype). The copy is
     * complete when this returns; close the tensor when done.
     */
    public static Tensor toTensor(NDArray array, Device device) {
        requireLittleEndianHost();
        if (array == null) {
            throw new ArgumentException("array", "an NDArray", "null");
        }
        DType dt = dtypeOf(array.getDataType());
        long[] shape = array.getShape().getShape();
        if (shape.length == 0) {
            throw new ArgumentException("array", "an NDArray of rank >= 1 (Gapfill tensors have at least one dimension)",
                    "a scalar");
        }
        ByteBuffer bytes = array.toByteBuffer();      // the engine's copy, in native (little-endian) order
        Tensor t = Tensor.empty(device, dt, shape);   // ArgumentException here names a zero dimension
        try {
            t.copyFromRaw(bytes.duplicate().order(ByteOrder.LITTLE_ENDIAN));
        } catch (RuntimeException e) {
            t.close();
            throw e;
        }
        return t;
    }

    /**
     * A new NDArray of {@code manager} holding a copy of {@code tensor} (contiguous; any device). Waits for the
     * work queued on the tensor's stream, like {@link Tensor#toRaw()}.
     */
    public static NDArray toNDArray(Tensor tensor, NDManager manager) {
        requireLittleEndianHost();
        if (tensor == null) {
            throw new ArgumentException("tensor", "a tensor", "null");
        }
        if (manager == null) {
            throw new ArgumentException("manager", "an NDManager", "null");
        }
        ByteBuffer raw = tensor.toRaw();              // a new direct buffer: device-to-host, or a host copy
        return manager.create(raw, new Shape(tensor.shape()), dataTypeOf(tensor.dtype()));
    }

    /** Byte-for-byte equality of an NDArray's and a tensor's elements (same dtype and shape required). */
    public static boolean sameContents(NDArray array, Tensor tensor) {
        if (dtypeOf(array.getDataType()) != tensor.dtype() || !Arrays.equals(array.getShape().getShape(), tensor.shape())) {
            return false;
        }
        ByteBuffer a = array.toByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer b = tensor.toRaw();
        return a.remaining() == b.remaining() && a.equals(b);
    }

    /** Gapfill's raw bytes are little-endian and DJL's are in native order: they agree only on little-endian hosts. */
    private static void requireLittleEndianHost() {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN) {
            throw new IllegalStateException("DJL interop needs a little-endian host (DJL buffers are in native order, "
                    + "Gapfill's are little-endian); this host is " + ByteOrder.nativeOrder());
        }
    }
}
