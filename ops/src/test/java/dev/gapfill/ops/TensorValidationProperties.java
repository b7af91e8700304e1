package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.nio.ByteBuffer;

import static dev.gapfill.ops.ValidationRule.*;

/**
 * Invalid arguments to Tensor's factories, views and copies, Device and Backend: every rule of those entry points
 * ({@link ValidationRule}), on random shapes and dtypes, each with the valid call right after. CPU; the GPU variant
 * is {@link TensorValidationGpuProperties}.
 */
class TensorValidationProperties {
    static final DType[] ALL = DType.values();

    static long[] shape(int rank, int d0, int d1, int d2) {
        long[] all = {d0, d1, d2};
        long[] s = new long[rank];
        System.arraycopy(all, 0, s, 0, rank);
        return s;
    }

    static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    // ------------------------------------------------------------------ factories

    /** The factory cases on {@code f}'s device; GPU-only rules only on a GPU fixture. */
    static RuleCheck.Cases factoryCases(Fixture f, DType dt, long[] shape) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        Device dev = f.gpu() ? f.device : Device.CPU;
        Device devSide = f.deviceSide().device;
        int n = (int) numel(shape);
        float[] floats = new float[n];
        byte[] bytes = new byte[n];
        int[] ints = new int[n];
        long addr = 1L << 20;
        DType fdt = dt.isFloating() ? dt : DType.F32;
        c.add(T_DEVICE_NULL, "empty(device, dtype, shape)", () -> Tensor.empty(null, dt, shape));
        c.add(T_DEVICE_NULL, "empty(device, dtype, stream, shape)", () -> Tensor.empty(null, dt, (Stream) null, shape));
        c.add(T_DEVICE_NULL, "of", () -> Tensor.of(null, fdt, floats, shape));
        c.add(T_DEVICE_NULL, "ofBytes", () -> Tensor.ofBytes(null, bytes, shape));
        c.add(T_DEVICE_NULL, "ofInts", () -> Tensor.ofInts(null, ints, shape));
        c.add(T_DEVICE_NULL, "borrow", () -> Tensor.borrow(null, dt, addr, shape, null));
        c.add(T_DTYPE_NULL, "empty(device, dtype, shape)", () -> Tensor.empty(dev, null, shape));
        c.add(T_DTYPE_NULL, "empty(device, dtype, stream, shape)", () -> Tensor.empty(dev, null, (Stream) null, shape));
        c.add(T_DTYPE_NULL, "of", () -> Tensor.of(dev, null, floats, shape));
        c.add(T_DTYPE_NULL, "borrow", () -> Tensor.borrow(devSide, null, addr, shape, null));
        long[] bad = shape.clone();
        bad[f.rnd.nextInt(bad.length)] = -f.rnd.nextInt(3);   // 0, -1 or -2
        long[] huge = {1L << 32, 1L << 32};
        for (long[] s : new long[][] {null, bad, huge}) {
            ValidationRule r = s == null ? T_SHAPE_NULL : s == bad ? T_SHAPE_NONPOSITIVE : T_SHAPE_OVERFLOW;
            c.add(r, "empty(device, dtype, shape)", () -> Tensor.empty(dev, dt, s));
            c.add(r, "empty(device, dtype, stream, shape)", () -> Tensor.empty(dev, dt, (Stream) null, s));
            c.add(r, "of", () -> Tensor.of(dev, fdt, floats, s));
            c.add(r, "ofBytes", () -> Tensor.ofBytes(dev, bytes, s));
            c.add(r, "ofInts", () -> Tensor.ofInts(dev, ints, s));
            c.add(r, "borrow", () -> Tensor.borrow(devSide, dt, addr, s, null));
        }
        long[] overflowBytes = {1L << 31, 1L << 31};  // 2^62 elements: the count fits, the bytes of F32 do not
        c.add(T_BYTES_OVERFLOW, "empty(device, dtype, shape)", () -> Tensor.empty(dev, DType.F32, overflowBytes));
        c.add(T_BYTES_OVERFLOW, "empty(device, dtype, stream, shape)", () -> Tensor.empty(dev, DType.F32, (Stream) null, overflowBytes));
        long tooMany = (Integer.MAX_VALUE / dt.bytes()) + 1 + f.rnd.nextInt(1000);
        c.add(T_CPU_TOO_LARGE, "empty(device, dtype, shape)", () -> Tensor.empty(Device.CPU, dt, tooMany));
        c.add(T_CPU_TOO_LARGE, "empty(device, dtype, stream, shape)", () -> Tensor.empty(Device.CPU, dt, (Stream) null, tooMany));
        c.add(T_DATA_NULL, "of", () -> Tensor.of(dev, fdt, null, shape));
        c.add(T_DATA_NULL, "ofBytes", () -> Tensor.ofBytes(dev, null, shape));
        c.add(T_DATA_NULL, "ofInts", () -> Tensor.ofInts(dev, null, shape));
        int wrong = n + 1 + f.rnd.nextInt(3);
        c.add(T_DATA_LENGTH, "of", () -> Tensor.of(dev, fdt, new float[wrong], shape));
        c.add(T_DATA_LENGTH, "ofBytes", () -> Tensor.ofBytes(dev, new byte[n - 1], shape));
        c.add(T_DATA_LENGTH, "ofInts", () -> Tensor.ofInts(dev, new int[wrong], shape));
        c.add(T_OF_INTEGER_DTYPE, "of", () -> Tensor.of(dev, f.rnd.nextBoolean() ? DType.I8 : DType.I32, floats, shape));
        c.add(T_STREAM_NULL, "empty(device, dtype, stream, shape)", () -> Tensor.empty(devSide, dt, (Stream) null, shape));
        if (f.gpu()) {
            RuleCheck.streamCases(c, f, T_STREAM_CLOSED, T_STREAM_DEVICE, java.util.Map.of(
                    "empty(device, dtype, stream, shape)", st -> () -> Tensor.empty(f.device, dt, st, shape)));
            c.add(T_ORDINAL_ABSENT, "Gpu.device(ordinal)", () -> Gpu.device(Gpu.deviceCount() + f.rnd.nextInt(4)));
            c.add(T_ORDINAL_ABSENT, "Gpu.device(Device)", () -> Gpu.device(Device.cuda(Gpu.deviceCount() + f.rnd.nextInt(4))));
        }
        c.add(T_BORROW_ON_CPU, "borrow", () -> Tensor.borrow(Device.CPU, dt, addr, shape, null));
        c.add(T_BORROW_ADDRESS_NULL, "borrow", () -> Tensor.borrow(devSide, dt, 0, shape, null));
        DType wide = dt.bytes() > 1 ? dt : DType.F16;
        c.add(T_BORROW_ADDRESS_MISALIGNED, "borrow", () -> Tensor.borrow(devSide, wide, addr + 1 + f.rnd.nextInt(wide.bytes() - 1), shape, null));
        long[] st = Tensor.contiguousStrides(shape);
        long[] longer = new long[shape.length + 1];
        c.add(T_BORROW_STRIDES_RANK, "borrow", () -> Tensor.borrow(devSide, dt, addr, shape, longer));
        long[] neg = st.clone();
        neg[f.rnd.nextInt(neg.length)] = -1 - f.rnd.nextInt(5);
        c.add(T_BORROW_STRIDES_NEGATIVE, "borrow", () -> Tensor.borrow(devSide, dt, addr, shape, neg));
        c.add(T_BORROW_SPAN_OVERFLOW, "borrow", () -> Tensor.borrow(devSide, dt, addr, new long[] {3, 2}, new long[] {Long.MAX_VALUE / 2, 1}));
        c.add(T_ORDINAL_NEGATIVE, "Device.cuda", () -> Device.cuda(-1 - f.rnd.nextInt(100)));
        return c;
    }

    static void validFactories(Fixture f, DType dt, long[] shape) {
        Device dev = f.gpu() ? f.device : Device.CPU;
        int n = (int) numel(shape);
        Tensor.empty(dev, dt, shape).close();
        Tensor.of(dev, dt.isFloating() ? dt : DType.F32, new float[n], shape).close();
        Tensor.ofBytes(dev, new byte[n], shape).close();
        Tensor.ofInts(dev, new int[n], shape).close();
        Tensor.borrow(Fixture.NOWHERE, dt, 1L << 20, shape, null).close();
    }

    @Property(tries = 40)
    @Covers({T_DEVICE_NULL, T_DTYPE_NULL, T_SHAPE_NULL, T_SHAPE_NONPOSITIVE, T_SHAPE_OVERFLOW, T_BYTES_OVERFLOW, T_CPU_TOO_LARGE,
            T_DATA_NULL, T_DATA_LENGTH, T_OF_INTEGER_DTYPE, T_STREAM_NULL, T_BORROW_ON_CPU, T_BORROW_ADDRESS_NULL,
            T_BORROW_ADDRESS_MISALIGNED, T_BORROW_STRIDES_RANK, T_BORROW_STRIDES_NEGATIVE, T_BORROW_SPAN_OVERFLOW, T_ORDINAL_NEGATIVE})
    void factoriesRejectInvalidArguments(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank,
                                         @ForAll @IntRange(min = 1, max = 6) int d0, @ForAll @IntRange(min = 1, max = 6) int d1,
                                         @ForAll @IntRange(min = 1, max = 6) int d2, @ForAll long seed) {
        DType dt = ALL[dti];
        long[] s = shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            RuleCheck.run(f, factoryCases(f, dt, s), () -> validFactories(f, dt, s));
        }
    }

    // ------------------------------------------------------------------ views

    static RuleCheck.Cases viewCases(Fixture f, DType dt, long[] shape) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        Tensor t = f.random(dt, shape);
        long n = numel(shape);
        long[] st = Tensor.contiguousStrides(shape);
        Tensor closed = f.closed(dt, shape);
        c.add(V_CLOSED, "reshape", () -> closed.reshape(n));
        c.add(V_CLOSED, "strided", () -> closed.strided(shape, st, 0));
        long[] bad = shape.clone();
        bad[f.rnd.nextInt(bad.length)] = -f.rnd.nextInt(3);
        c.add(V_RESHAPE_SHAPE, "reshape", () -> t.reshape((long[]) null));
        c.add(V_RESHAPE_SHAPE, "reshape", () -> t.reshape(bad));
        c.add(V_RESHAPE_NUMEL, "reshape", () -> t.reshape(n + 1 + f.rnd.nextInt(5)));
        c.whereStridable(V_RESHAPE_NONCONTIGUOUS, () -> {
            Tensor strided = f.strided(dt, shape);
            c.add(V_RESHAPE_NONCONTIGUOUS, "reshape", () -> strided.reshape(n));
        }, shape);
        c.add(V_STRIDED_SHAPE, "strided", () -> t.strided(null, st, 0));
        c.add(V_STRIDED_SHAPE, "strided", () -> t.strided(bad, st, 0));
        c.add(V_STRIDED_STRIDES_NULL, "strided", () -> t.strided(shape, null, 0));
        c.add(V_STRIDED_STRIDES_RANK, "strided", () -> t.strided(shape, new long[shape.length + 1], 0));
        long[] neg = st.clone();
        neg[f.rnd.nextInt(neg.length)] = -1 - f.rnd.nextInt(4);
        c.add(V_STRIDED_STRIDES_NEGATIVE, "strided", () -> t.strided(shape, neg, 0));
        c.add(V_STRIDED_OFFSET_NEGATIVE, "strided", () -> t.strided(shape, st, -1 - f.rnd.nextInt(10)));
        c.add(V_STRIDED_OUT_OF_BOUNDS, "strided", () -> t.strided(shape, st, 1 + f.rnd.nextInt(3)));
        long[] far = st.clone();
        far[0] = st[0] + 1;
        c.add(V_STRIDED_OUT_OF_BOUNDS, "strided", () -> t.strided(shape, shape[0] > 1 ? far : st, shape[0] > 1 ? 0 : 1));
        c.add(V_STRIDED_SPAN_OVERFLOW, "strided", () -> t.strided(new long[] {4}, new long[] {Long.MAX_VALUE / 2}, 0));
        return c;
    }

    static void validViews(Fixture f, DType dt, long[] shape) {
        try (Tensor t = Tensor.empty(f.device, dt, shape)) {
            t.reshape(numel(shape));
            t.strided(shape, Tensor.contiguousStrides(shape), 0);
        }
    }

    @Property(tries = 40)
    @Covers({V_CLOSED, V_RESHAPE_SHAPE, V_RESHAPE_NUMEL, V_RESHAPE_NONCONTIGUOUS, V_STRIDED_SHAPE, V_STRIDED_STRIDES_NULL,
            V_STRIDED_STRIDES_RANK, V_STRIDED_STRIDES_NEGATIVE, V_STRIDED_OFFSET_NEGATIVE, V_STRIDED_OUT_OF_BOUNDS, V_STRIDED_SPAN_OVERFLOW})
    void viewsRejectInvalidArguments(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank,
                                     @ForAll @IntRange(min = 1, max = 6) int d0, @ForAll @IntRange(min = 1, max = 6) int d1,
                                     @ForAll @IntRange(min = 1, max = 6) int d2, @ForAll long seed) {
        DType dt = ALL[dti];
        long[] s = shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            RuleCheck.run(f, viewCases(f, dt, s), () -> validViews(f, dt, s));
        }
    }

    // ------------------------------------------------------------------ copies

    static RuleCheck.Cases copyCases(Fixture f, DType dt, long[] shape) {
        RuleCheck.Cases c = new RuleCheck.Cases();
        int n = (int) numel(shape);
        DType fdt = dt.isFloating() ? dt : DType.F32;
        Tensor closed = f.closed(dt, shape);
        Tensor closedI32 = f.closed(DType.I32, shape);
        Tensor closedF = f.closed(fdt, shape);
        Tensor closedI8 = f.closed(DType.I8, shape);
        Tensor closedHost = Tensor.empty(Device.CPU, dt, shape);
        closedHost.close();
        c.add(C_CLOSED, "copyFrom(float[])", () -> closedF.copyFrom(new float[n]));
        c.add(C_CLOSED, "copyFrom(int[])", () -> closedI32.copyFrom(new int[n]));
        c.add(C_CLOSED, "copyFromRaw", () -> closed.copyFromRaw(ByteBuffer.allocate(n * dt.bytes())));
        c.add(C_CLOSED, "toRaw", closed::toRaw);
        c.add(C_CLOSED, "toFloatArray", closed::toFloatArray);
        c.add(C_CLOSED, "toIntArray", closedI32::toIntArray);
        c.add(C_CLOSED, "toByteArray", closedI8::toByteArray);
        c.add(C_CLOSED, "to", () -> closed.to(Device.CPU));
        c.add(C_CLOSED, "fillBytes", () -> closed.fillBytes(0));
        c.add(C_CLOSED, "address", closed::address);
        c.add(C_CLOSED, "getDouble", () -> closedHost.getDouble(0));
        c.add(C_CLOSED, "setDouble", () -> closedHost.setDouble(0, 1));
        c.add(C_CLOSED, "getRawBits", () -> closedHost.getRawBits(0));
        c.add(C_CLOSED, "setRawBits", () -> closedHost.setRawBits(0, 1));
        c.add(C_CLOSED, "hostBuffer", closedHost::hostBuffer);
        Tensor ints = f.random(f.rnd.nextBoolean() ? DType.I8 : DType.I32, shape);
        c.add(C_FLOAT_DTYPE, "copyFrom(float[])", () -> ints.copyFrom(new float[n]));
        Tensor notI32 = f.random(new DType[] {DType.F32, DType.F16, DType.BF16, DType.I8}[f.rnd.nextInt(4)], shape);
        Tensor notI8 = f.random(new DType[] {DType.F32, DType.F16, DType.BF16, DType.I32}[f.rnd.nextInt(4)], shape);
        c.add(C_INTEGER_DTYPE, "copyFrom(int[])", () -> notI32.copyFrom(new int[n]));
        c.add(C_INTEGER_DTYPE, "toIntArray", notI32::toIntArray);
        c.add(C_INTEGER_DTYPE, "toByteArray", notI8::toByteArray);
        Tensor fl = f.random(fdt, shape);
        Tensor i32 = f.random(DType.I32, shape);
        Tensor t = f.random(dt, shape);
        c.add(C_DATA_NULL, "copyFrom(float[])", () -> fl.copyFrom((float[]) null));
        c.add(C_DATA_NULL, "copyFrom(int[])", () -> i32.copyFrom((int[]) null));
        c.add(C_DATA_LENGTH, "copyFrom(float[])", () -> fl.copyFrom(new float[n + 1 + f.rnd.nextInt(4)]));
        c.add(C_DATA_LENGTH, "copyFrom(int[])", () -> i32.copyFrom(new int[n - 1]));
        c.add(C_SRC_NULL, "copyFromRaw", () -> t.copyFromRaw(null));
        c.add(C_SRC_LENGTH, "copyFromRaw", () -> t.copyFromRaw(ByteBuffer.allocate(n * dt.bytes() + 1 + f.rnd.nextInt(8))));
        c.whereStridable(C_NONCONTIGUOUS, () -> {
            Tensor nc = f.strided(dt, shape);
            Tensor ncf = f.strided(fdt, shape);
            c.add(C_NONCONTIGUOUS, "copyFromRaw", () -> nc.copyFromRaw(ByteBuffer.allocate(n * dt.bytes())));
            c.add(C_NONCONTIGUOUS, "copyFrom(float[])", () -> ncf.copyFrom(new float[n]));
            c.add(C_NONCONTIGUOUS, "toRaw", nc::toRaw);
            c.add(C_NONCONTIGUOUS, "toFloatArray", nc::toFloatArray);
            c.add(C_NONCONTIGUOUS, "fillBytes", () -> nc.fillBytes(0));
        }, shape);
        c.whereStridable(C_TO_NONCONTIGUOUS_DEVICE, () -> {
            Tensor ncDevice = f.deviceSide().strided(dt, shape);
            c.add(C_TO_NONCONTIGUOUS_DEVICE, "to", () -> ncDevice.to(Device.CPU));
        }, shape);
        c.add(C_TO_DEVICE_NULL, "to", () -> t.to(null));
        Tensor host = f.gpu() ? f.track(Tensor.empty(Device.CPU, dt, shape)) : t;
        long[] out = {-1 - f.rnd.nextInt(3), n + f.rnd.nextInt(3)};
        for (long i : out) {
            c.add(C_INDEX_RANGE, "getDouble", () -> host.getDouble(i));
            c.add(C_INDEX_RANGE, "setDouble", () -> host.setDouble(i, 0));
            c.add(C_INDEX_RANGE, "getRawBits", () -> host.getRawBits(i));
            c.add(C_INDEX_RANGE, "setRawBits", () -> host.setRawBits(i, 0));
        }
        Tensor twice = Tensor.empty(f.device, dt, shape);
        twice.close();
        c.add(C_CLOSE_TWICE, "close", twice::close);
        Tensor dev = f.deviceSide().random(dt, shape);
        c.add(C_WRONG_SIDE, "getDouble", () -> dev.getDouble(0));
        c.add(C_WRONG_SIDE, "setRawBits", () -> dev.setRawBits(0, 0));
        c.add(C_WRONG_SIDE, "hostBuffer", dev::hostBuffer);
        c.add(C_WRONG_SIDE, "address", host::address);
        if (f.gpu()) {
            RuleCheck.streamCases(c, f, C_FILL_STREAM_CLOSED, C_FILL_STREAM_DEVICE, java.util.Map.of(
                    "fillBytes(value, stream)", st -> () -> t.fillBytes(0xff, st)));
        }
        return c;
    }

    static void validCopies(Fixture f, DType dt, long[] shape) {
        int n = (int) numel(shape);
        try (Tensor t = Tensor.empty(f.device, dt, shape)) {
            t.copyFromRaw(ByteBuffer.allocate(n * dt.bytes()));
            t.toRaw();
            t.fillBytes(1);
            try (Tensor h = t.to(Device.CPU)) {
                h.getDouble(n - 1);
                h.setRawBits(0, 0);
            }
        }
    }

    @Property(tries = 40)
    @Covers({C_CLOSED, C_FLOAT_DTYPE, C_INTEGER_DTYPE, C_DATA_NULL, C_DATA_LENGTH, C_SRC_NULL, C_SRC_LENGTH, C_NONCONTIGUOUS,
            C_TO_DEVICE_NULL, C_TO_NONCONTIGUOUS_DEVICE, C_INDEX_RANGE, C_CLOSE_TWICE, C_WRONG_SIDE})
    void copiesRejectInvalidArguments(@ForAll @IntRange(min = 0, max = 4) int dti, @ForAll @IntRange(min = 1, max = 3) int rank,
                                      @ForAll @IntRange(min = 1, max = 6) int d0, @ForAll @IntRange(min = 1, max = 6) int d1,
                                      @ForAll @IntRange(min = 1, max = 6) int d2, @ForAll long seed) {
        DType dt = ALL[dti];
        long[] s = shape(rank, d0, d1, d2);
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            RuleCheck.run(f, copyCases(f, dt, s), () -> validCopies(f, dt, s));
        }
    }

    // ------------------------------------------------------------------ backend

    /** The backend cases: null, and a -Dgapfill.backend value no backend has (built from {@code len} random letters). */
    static RuleCheck.Cases backendCases(Fixture f, int len) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            sb.append((char) ('a' + f.rnd.nextInt(26)));
        }
        String name = sb.toString();
        boolean known = java.util.Arrays.stream(Backend.values()).anyMatch(b -> b.name().equalsIgnoreCase(name));
        String unknown = known ? name + "x" : name;
        RuleCheck.Cases c = new RuleCheck.Cases();
        c.add(B_NULL, "Backend.resolve", () -> Backend.resolve(null));
        c.add(B_PROPERTY, "Backend.resolve(AUTO) with -Dgapfill.backend", () -> {
            System.setProperty(Backend.PROPERTY, unknown);
            try {
                Backend.resolve(Backend.AUTO);
            } finally {
                System.clearProperty(Backend.PROPERTY);
            }
        });
        return c;
    }

    @Property(tries = 20)
    @Covers({B_NULL, B_PROPERTY})
    void backendResolutionRejectsNullAndUnknownNames(@ForAll @IntRange(min = 1, max = 12) int len, @ForAll long seed) {
        try (Fixture f = new Fixture(Device.CPU, seed)) {
            RuleCheck.run(f, backendCases(f, len), () -> Backend.resolve(Backend.AUTO));
        }
    }
}
