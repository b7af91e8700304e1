package dev.gapfill.core;

import java.util.Objects;

/** Where a tensor lives: the host (the CPU reference backend) or one CUDA device by ordinal. */
public final class Device {
    /** Kind of device. */
    public enum Kind { CPU, CUDA }

    /** The host. */
    public static final Device CPU = new Device(Kind.CPU, -1);

    private final Kind kind;
    private final int ordinal;

    private Device(Kind kind, int ordinal) {
        this.kind = kind;
        this.ordinal = ordinal;
    }

    /** CUDA device {@code ordinal} (0-based, as {@code cudaSetDevice} numbers them). */
    public static Device cuda(int ordinal) {
        if (ordinal < 0) {
            throw new ArgumentException("ordinal", "a device ordinal >= 0", String.valueOf(ordinal));
        }
        return new Device(Kind.CUDA, ordinal);
    }

    /** The first CUDA device if a usable GPU is present, otherwise {@link #CPU} (see {@link Gpu#status()}). */
    public static Device best() {
        return Gpu.status().available() ? cuda(0) : CPU;
    }

    public Kind kind() { return kind; }

    /** CUDA ordinal; -1 for the CPU. */
    public int ordinal() { return ordinal; }

    public boolean isCuda() { return kind == Kind.CUDA; }

    public boolean isCpu() { return kind == Kind.CPU; }

    @Override public boolean equals(Object o) {
        return o instanceof Device && ((Device) o).kind == kind && ((Device) o).ordinal == ordinal;
    }

    @Override public int hashCode() { return Objects.hash(kind, ordinal); }

    @Override public String toString() { return isCpu() ? "cpu" : "cuda:" + ordinal; }
}
