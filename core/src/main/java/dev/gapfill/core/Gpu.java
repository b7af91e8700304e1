package dev.gapfill.core;

import org.bytedeco.javacpp.Loader;
import org.bytedeco.cuda.global.cudart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Discovers CUDA devices. Never throws on a machine without a GPU or without CUDA libraries: it
 * records why no GPU is usable, logs one WARN line, and the ops run on the CPU reference backend.
 * Set {@code -Dgapfill.device=cpu} to force the CPU backend.
 */
public final class Gpu {
    private static final Logger LOG = LoggerFactory.getLogger(Gpu.class);

    /**
     * Result of probing for a GPU.
     *
     * @param available   at least one CUDA device is usable
     * @param deviceCount number of CUDA devices
     * @param reason      why no GPU is usable (null when available)
     */
    public record Status(boolean available, int deviceCount, String reason) {}

    private static volatile Status status;
    private static final ConcurrentHashMap<Integer, CudaDevice> DEVICES = new ConcurrentHashMap<>();

    private Gpu() {}

    /** Probes once and caches the answer. */
    public static Status status() {
        Status s = status;
        if (s == null) {
            synchronized (Gpu.class) {
                if (status == null) {
                    status = probe();
                    if (!status.available()) {
                        LOG.warn("No usable GPU ({}); Gapfill runs every op on the CPU reference backend.", status.reason());
                    } else {
                        LOG.debug("CUDA devices: {}", status.deviceCount());
                    }
                }
                s = status;
            }
        }
        return s;
    }

    private static Status probe() {
        String forced = System.getProperty("gapfill.device", "").trim();
        if (forced.equalsIgnoreCase("cpu")) {
            return new Status(false, 0, "CPU backend forced by -Dgapfill.device=cpu");
        }
        if (!forced.isEmpty()) {  // a value the library does not read must not pass for one it does
            LOG.warn("-Dgapfill.device={} is not read (the one value is \"cpu\"); the GPU is probed as usual", forced);
        }
        try {
            Loader.load(cudart.class);
        } catch (Throwable t) {
            return new Status(false, 0, "CUDA runtime library not loadable (install the NVIDIA driver and the CUDA 13 "
                    + "libraries, or add org.bytedeco:cuda-redist:13.1-9.19-1.5.13:linux-x86_64 for the runtime): " + rootMessage(t));
        }
        int[] driver = {0};
        try {
            cudart.cudaDriverGetVersion(driver);
        } catch (Throwable t) {
            return new Status(false, 0, "cudaDriverGetVersion failed: " + rootMessage(t));
        }
        if (driver[0] == 0) {
            return new Status(false, 0, "no NVIDIA driver installed (libcuda.so not found)");
        }
        int[] count = {0};
        int rc = cudart.cudaGetDeviceCount(count);
        if (rc == 35) {
            return new Status(false, 0, "NVIDIA driver " + DeviceInfo.versionString(driver[0], false)
                    + " is older than the CUDA runtime requires (cudaErrorInsufficientDriver)");
        }
        if (rc == 100 || (rc == 0 && count[0] == 0)) {
            return new Status(false, 0, "no CUDA device present (driver " + DeviceInfo.versionString(driver[0], false) + ")");
        }
        if (rc != 0) {
            return new Status(false, 0, "cudaGetDeviceCount failed: " + CudaErrors.runtimeError(rc, "cudaGetDeviceCount", -1).getMessage());
        }
        return new Status(true, count[0], null);
    }

    private static String rootMessage(Throwable t) {
        Throwable r = t;
        while (r.getCause() != null && r.getCause() != r) {
            r = r.getCause();
        }
        return r.getClass().getSimpleName() + ": " + r.getMessage();
    }

    /** True if at least one CUDA device is usable. */
    public static boolean available() { return status().available(); }

    /** Number of usable CUDA devices (0 without a GPU). */
    public static int deviceCount() { return status().available() ? status().deviceCount() : 0; }

    /** Runtime state of CUDA device {@code ordinal}; throws {@link GpuUnavailableException} without a GPU. */
    public static CudaDevice device(int ordinal) {
        Status s = status();
        if (!s.available()) {
            throw new GpuUnavailableException("no usable GPU: " + s.reason());
        }
        if (ordinal < 0 || ordinal >= s.deviceCount()) {
            throw new ArgumentException("device", "a CUDA ordinal in [0, " + s.deviceCount() + ")", String.valueOf(ordinal));
        }
        return DEVICES.computeIfAbsent(ordinal, CudaDevice::new);
    }

    /**
     * The devices this process has used so far (whose runtime state exists), by ordinal. Unlike {@link #device(int)}
     * it creates no CUDA context: releasing resources must not initialise GPUs the process never touched.
     */
    public static List<CudaDevice> usedDevices() {
        return DEVICES.values().stream().sorted(java.util.Comparator.comparingInt(CudaDevice::ordinal)).toList();
    }

    /** Runtime state of a CUDA {@link Device}. */
    public static CudaDevice device(Device d) {
        if (d == null) {
            throw new ArgumentException("device", "a CUDA device", "null");
        }
        if (!d.isCuda()) {
            throw new ArgumentException("device", "a CUDA device", d.toString());
        }
        return device(d.ordinal());
    }

    /** Properties of every usable device (empty without a GPU). */
    public static List<DeviceInfo> devices() {
        int n = deviceCount();
        java.util.ArrayList<DeviceInfo> out = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(device(i).info());
        }
        return out;
    }
}
