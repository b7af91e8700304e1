package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.testing.Poison;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tensors of one validation-property try, all on one device, closed together.
 *
 * <p>Rules that only device tensors have (alignment, overlap by address, 32-bit index overflow of huge shapes)
 * are checked on the CPU with <em>fake</em> tensors: borrowed on {@link #NOWHERE}, an ordinal no host has, at
 * addresses nothing is ever read from. Validation rejects them before touching the device; if a regression let
 * such a call through, its first device access would fail on the missing device (an ArgumentException naming
 * "device", so the property fails) instead of reading memory. A GPU fixture uses real device memory for those
 * rules (except huge shapes, which stay fake).
 */
final class Fixture implements AutoCloseable {
    /** A CUDA ordinal no host has: fake tensors live there. */
    static final Device NOWHERE = Device.cuda(63);
    private static final AtomicLong NEXT_FAKE = new AtomicLong(1L << 40);

    final Device device;
    final Random rnd;
    private final boolean fake;
    private final List<Tensor> tensors = new ArrayList<>();
    private final List<AutoCloseable> others = new ArrayList<>();
    private Fixture fakeTwin;

    Fixture(Device device, long seed) {
        this(device, new Random(seed), false);
    }

    private Fixture(Device device, Random rnd, boolean fake) {
        this.device = device;
        this.rnd = rnd;
        this.fake = fake;
    }

    /** True for a fixture on a real GPU. */
    boolean gpu() { return device.isCuda() && !fake; }

    /** Number of GPUs of this host (0 without one). */
    static int gpus() { return Gpu.deviceCount(); }

    /**
     * The fixture for device-only rules: this one on a GPU; on the CPU a twin whose tensors are fake (on
     * {@link #NOWHERE}), sharing the random source and closed with this one.
     */
    Fixture deviceSide() {
        if (gpu() || fake) {
            return this;
        }
        if (fakeTwin == null) {
            fakeTwin = new Fixture(NOWHERE, rnd, true);
            others.add(fakeTwin);
        }
        return fakeTwin;
    }

    /** A fixture whose tensors are all fake, for huge shapes on any host. */
    Fixture fakes() {
        if (fake) {
            return this;
        }
        Fixture twin = new Fixture(NOWHERE, rnd, true);
        others.add(twin);
        return twin;
    }

    private Tensor track(Tensor t) {
        tensors.add(t);
        return t;
    }

    <T extends AutoCloseable> T track(T c) {
        others.add(c);
        return c;
    }

    /** Random values in [-1, 1) (integers: small) of this shape. */
    Tensor random(DType dt, long... shape) {
        return fake ? fake(dt, shape) : track(Poison.random(device, dt, rnd, shape));
    }

    Tensor empty(DType dt, long... shape) {
        return fake ? fake(dt, shape) : track(Tensor.empty(device, dt, shape));
    }

    /** Poisoned ({@link Poison#byteOf}: NaN floats, -2139062144 I32), so any write shows. */
    Tensor poisoned(DType dt, long... shape) {
        return fake ? fake(dt, shape) : track(Poison.poisoned(device, dt, shape));
    }

    Tensor ints(int[] values, long... shape) {
        return fake ? fake(DType.I32, shape) : track(Tensor.ofInts(device, values, shape));
    }

    Tensor floats(float[] values, long... shape) {
        return fake ? fake(DType.F32, shape) : track(Tensor.of(device, DType.F32, values, shape));
    }

    /** A borrowed tensor on {@link #NOWHERE} at a fresh 256-byte aligned address. */
    Tensor fake(DType dt, long... shape) {
        return track(Tensor.borrow(NOWHERE, dt, nextFake(dt, shape), shape, null));
    }

    private static long nextFake(DType dt, long... shape) {
        long n = dt.bytes();
        for (long d : shape) {
            n *= d;
        }
        return NEXT_FAKE.getAndAdd((n + 511) / 256 * 256);
    }

    /**
     * A closed tensor of this shape, closed one of four ways: an owner closed; a view of a closed owner; a borrowed
     * tensor closed; a view of a closed borrowed tensor (borrowed: fake on the CPU, real device memory on a GPU).
     */
    Tensor closed(DType dt, long... shape) {
        int way = rnd.nextInt(4);
        if (way < 2 && !fake) {
            Tensor owner = Tensor.empty(device, dt, shape);
            Tensor view = owner.reshape(shape);
            owner.close();
            return way == 0 ? owner : view;
        }
        Tensor b;
        if (gpu()) {
            Tensor backing = empty(dt, shape);
            b = Tensor.borrow(device, dt, backing.address(), shape, null);
        } else {
            b = Tensor.borrow(NOWHERE, dt, nextFake(dt, shape), shape, null);
        }
        Tensor view = b.reshape(shape);
        b.close();
        return way % 2 == 0 ? b : view;
    }

    /** Why a rule about non-contiguous tensors is skipped for an all-ones shape ({@link #stridable}). */
    static final String ALL_ONES = "an all-ones shape has no non-contiguous view (a dim of size 1 is never stepped)";

    /**
     * Whether some view of this shape is non-contiguous: a dim of size other than 1 (a dim of size 1 is never
     * stepped, so its stride does not make a tensor non-contiguous; {@code Tensor.isContiguous}).
     */
    static boolean stridable(long... shape) {
        for (long d : shape) {
            if (d != 1) {
                return true;
            }
        }
        return false;
    }

    /**
     * A non-contiguous view of this shape (every stride doubled over a parent twice as large). The shape needs a dim
     * of size other than 1 ({@link #stridable}): otherwise every view is contiguous.
     */
    Tensor strided(DType dt, long... shape) {
        if (!stridable(shape)) {
            throw new IllegalArgumentException(ALL_ONES + ": " + java.util.Arrays.toString(shape));
        }
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        Tensor parent = random(dt, 2 * n);
        long[] st = Tensor.contiguousStrides(shape);
        for (int i = 0; i < st.length; i++) {
            st[i] *= 2;
        }
        return parent.strided(shape, st, 0);
    }

    /**
     * A contiguous tensor of this shape whose address is not a multiple of {@code alignment} bytes (device-side
     * fixtures: a view one element into a larger allocation, or a fake address). Needs dt.bytes() &lt; alignment.
     */
    Tensor misaligned(DType dt, int alignment, long... shape) {
        if (!device.isCuda()) {
            throw new IllegalStateException("misaligned tensors are device-side; use deviceSide()");
        }
        if (fake) {
            return track(Tensor.borrow(NOWHERE, dt, nextFake(dt, shape) + dt.bytes(), shape, null));
        }
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        Tensor parent = random(dt, n + alignment);
        return parent.strided(shape, Tensor.contiguousStrides(shape), 1);
    }

    /**
     * Two contiguous tensors of these shapes whose memory overlaps by one element (views of one allocation, so a
     * call that ignored the overlap would still stay inside it). Device-side fixtures.
     */
    Tensor[] overlapping(DType dt, long[] first, long[] second) {
        long n1 = 1;
        for (long d : first) {
            n1 *= d;
        }
        long n2 = 1;
        for (long d : second) {
            n2 *= d;
        }
        Tensor parent = random(dt, n1 + n2);
        return new Tensor[] {parent.strided(first, Tensor.contiguousStrides(first), 0),
                parent.strided(second, Tensor.contiguousStrides(second), n1 - 1)};
    }

    /**
     * Two contiguous tensors of their own dtypes and shapes whose memory overlaps: the second starts
     * {@code shiftBytes} into the first ({@code 0 <= shiftBytes <} the first's bytes, a multiple of the second's element
     * size). Borrowed views of one allocation on a GPU, fake addresses on the CPU side (both 256-byte aligned at the
     * first). Device-side fixtures.
     */
    Tensor[] overlappingBytes(DType dt1, long[] first, DType dt2, long[] second, long shiftBytes) {
        if (!device.isCuda()) {
            throw new IllegalStateException("overlapping tensors are device-side; use deviceSide()");
        }
        long b1 = dt1.bytes() * numel(first);
        long b2 = dt2.bytes() * numel(second);
        if (shiftBytes < 0 || shiftBytes >= b1 || shiftBytes % dt2.bytes() != 0) {
            throw new IllegalArgumentException("shift " + shiftBytes + " outside the first tensor's " + b1 + " bytes or misaligned");
        }
        long total = Math.max(b1, shiftBytes + b2);
        long base = fake ? nextFake(DType.I8, total) : empty(DType.I8, total).address();
        return new Tensor[] {track(Tensor.borrow(device, dt1, base, first, null)), track(Tensor.borrow(device, dt2, base + shiftBytes, second, null))};
    }

    /** A random multiple of {@code unit} bytes in [0, bytes) (0 when bytes &lt;= unit): a shift for {@link #overlappingBytes}. */
    long shiftWithin(long bytes, long unit) {
        long slots = Math.max(1, (bytes + unit - 1) / unit);
        return unit * (long) rnd.nextInt((int) Math.min(slots, 1 << 20));
    }

    static long numel(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /**
     * A tensor on another device than this fixture's: fake (on {@link #NOWHERE}) for the CPU; on a GPU a CPU tensor,
     * or a tensor on the next GPU when the host has two.
     */
    Tensor elsewhere(DType dt, long... shape) {
        if (!gpu()) {
            return fake(dt, shape);
        }
        if (gpus() >= 2 && rnd.nextBoolean()) {
            return track(Poison.random(Device.cuda((device.ordinal() + 1) % gpus()), dt, rnd, shape));
        }
        return track(Poison.random(Device.CPU, dt, rnd, shape));
    }

    /** A closed stream on this (GPU) fixture's device. */
    Stream closedStream() {
        Stream s = Stream.create(device);
        s.close();
        return s;
    }

    /** An open stream on another GPU (hosts with two GPUs). */
    Stream otherDeviceStream() {
        return track(Stream.create(Device.cuda((device.ordinal() + 1) % gpus())));
    }

    @Override public void close() {
        for (int i = others.size() - 1; i >= 0; i--) {
            try {
                others.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        for (Tensor t : tensors) {
            if (!t.isClosed()) {
                t.close();
            }
        }
    }
}
