package dev.gapfill.core;

/**
 * Properties read from a CUDA device. Heuristics take this record, never assumed constants.
 *
 * @param ordinal               CUDA ordinal
 * @param name                  marketing name, e.g. "NVIDIA H100 80GB HBM3"
 * @param ccMajor               compute capability, major
 * @param ccMinor               compute capability, minor
 * @param smCount               streaming multiprocessors
 * @param l2Bytes               L2 cache size
 * @param smemPerBlockOptin     largest dynamic shared memory a block may opt into
 * @param smemPerSm             shared memory per SM
 * @param totalMemBytes         device memory
 * @param driverVersion         CUDA driver version as an integer (13000 = 13.0)
 * @param runtimeVersion        CUDA runtime version as an integer
 * @param cublasVersion         cuBLAS version as an integer (e.g. 130100), or -1 if not loaded
 * @param cudnnVersion          cuDNN version as an integer (e.g. 91400), or -1 if not available
 */
public record DeviceInfo(int ordinal, String name, int ccMajor, int ccMinor, int smCount, long l2Bytes,
                         long smemPerBlockOptin, long smemPerSm, long totalMemBytes,
                         int driverVersion, int runtimeVersion, int cublasVersion, long cudnnVersion) {

    /** Compute capability as major*10+minor, e.g. 90 for Hopper. */
    public int cc() { return ccMajor * 10 + ccMinor; }

    /**
     * A short lowercase slug for file names, e.g. {@code h100} or {@code h200}; the name, sanitised, otherwise. A device
     * described {@linkplain #asProfile as another} reads {@code <its slug>-as-<profile>}, so that its results never land
     * in the real device's files.
     */
    public String slug() {
        int as = name.indexOf(PROFILE_MARK);
        if (as >= 0) {
            String profile = name.substring(as + PROFILE_MARK.length(), name.length() - 1);
            return withName(name.substring(0, as)).slug() + "-as-" + profile;
        }
        String n = name.toLowerCase(java.util.Locale.ROOT);
        // longer names first where one contains another (a GH200 must not read as an H200)
        for (String known : new String[] {"gh200", "h100", "h200", "h800", "a100", "a10g", "l40s", "l4", "b200", "rtx 4090"}) {
            if (n.contains(known)) {
                return known.replace(' ', '-');
            }
        }
        return n.replaceAll("^nvidia ", "").replaceAll("[^a-z0-9]+", "-").replaceAll("(^-|-$)", "");
    }

    /** A synthetic description for CPU-side unit tests of heuristics (an H100 SXM as measured). */
    public static DeviceInfo h100ForTests() {
        return synthetic("NVIDIA H100 80GB HBM3", 9, 0, 132, 50L << 20, 227L << 10, 228L << 10, 80L << 30);
    }

    /** A synthetic A100 description for CPU-side unit tests of heuristics. */
    public static DeviceInfo a100ForTests() {
        return synthetic("NVIDIA A100-SXM4-80GB", 8, 0, 108, 40L << 20, 163L << 10, 164L << 10, 80L << 30);
    }

    /**
     * A synthetic RTX 3090 (GA102, compute capability 8.6) for CPU-side unit tests of heuristics: 82 SMs, 6 MiB L2, 99 KiB
     * (101 376 B) of opt-in dynamic shared memory per block and 100 KiB per SM, as on every sm_86 part (A10, A40).
     */
    public static DeviceInfo rtx3090ForTests() {
        return synthetic("NVIDIA GeForce RTX 3090", 8, 6, 82, 6L << 20, 99L << 10, 100L << 10, 24L << 30);
    }

    /**
     * A synthetic L4 (AD104, compute capability 8.9) for CPU-side unit tests of heuristics: 58 SMs, 48 MiB L2, 99 KiB of
     * opt-in dynamic shared memory per block and 100 KiB per SM, as on every sm_89 part (L40S: 142 SMs).
     */
    public static DeviceInfo l4ForTests() {
        return synthetic("NVIDIA L4", 8, 9, 58, 48L << 20, 99L << 10, 100L << 10, 22L << 30);
    }

    private static final String PROFILE_MARK = " [as ";

    /** The profiles {@link #asProfile} takes. */
    public static final java.util.List<String> PROFILES = java.util.List.of("a100", "rtx3090", "l4");

    /**
     * This device described as a pre-Hopper part, for testing the code paths that part would run on the hardware at
     * hand: compute capability, SM count, L2 and shared-memory limits of {@code profile} ({@code a100}: sm_80;
     * {@code rtx3090}: sm_86; {@code l4}: sm_89), every other field this device's, and the name marked
     * {@code "<name> [as <profile>]"} (see {@link #slug}). The heuristics then choose what they would on that part; the
     * kernels run from this device's image (the compute_80 PTX where the driver is told to JIT it,
     * {@code CUDA_FORCE_PTX_JIT=1}). Correctness only: the times are this device's. Set through the system property
     * {@code gapfill.debug.deviceAs} ({@link CudaDevice#info}).
     *
     * @throws ArgumentException if {@code profile} is not one of {@link #PROFILES}
     */
    public DeviceInfo asProfile(String profile) {
        if (name.contains(PROFILE_MARK)) {
            throw new ArgumentException("gapfill.debug.deviceAs", "a device described as itself", name);
        }
        DeviceInfo p = switch (profile == null ? "" : profile) {
            case "a100" -> a100ForTests();
            case "rtx3090" -> rtx3090ForTests();
            case "l4" -> l4ForTests();
            default -> throw new ArgumentException("gapfill.debug.deviceAs", "one of " + PROFILES, String.valueOf(profile));
        };
        return new DeviceInfo(ordinal, name + PROFILE_MARK + profile + "]", p.ccMajor, p.ccMinor, p.smCount, p.l2Bytes,
                p.smemPerBlockOptin, p.smemPerSm, totalMemBytes, driverVersion, runtimeVersion, cublasVersion, cudnnVersion);
    }

    private DeviceInfo withName(String n) {
        return new DeviceInfo(ordinal, n, ccMajor, ccMinor, smCount, l2Bytes, smemPerBlockOptin, smemPerSm, totalMemBytes,
                driverVersion, runtimeVersion, cublasVersion, cudnnVersion);
    }

    /** Device 0 with the given hardware and the project's library versions (CUDA 13.0, cuBLAS 13.1, cuDNN 9.14). */
    private static DeviceInfo synthetic(String name, int ccMajor, int ccMinor, int sms, long l2, long optin, long perSm,
                                        long memory) {
        return new DeviceInfo(0, name, ccMajor, ccMinor, sms, l2, optin, perSm, memory, 13000, 13000, 130100, 91400);
    }

    static String versionString(long v, boolean cudnn) {
        if (v < 0) {
            return "unavailable";
        }
        if (cudnn) {
            return (v / 10000) + "." + (v % 10000) / 100 + "." + (v % 100);
        }
        if (v >= 10000 && v < 100000) {
            return (v / 1000) + "." + (v % 1000) / 10;
        }
        return (v / 10000) + "." + (v % 10000) / 100 + "." + (v % 100);
    }

    public String driverString() { return versionString(driverVersion, false); }

    public String runtimeString() { return versionString(runtimeVersion, false); }

    public String cublasString() { return versionString(cublasVersion, false); }

    public String cudnnString() { return versionString(cudnnVersion, true); }

    @Override public String toString() {
        return String.format("cuda:%d %s (sm_%d%d, %d SMs, %d MiB L2, %d GiB, driver %s, runtime %s, cuBLAS %s, cuDNN %s)",
                ordinal, name, ccMajor, ccMinor, smCount, l2Bytes >> 20, totalMemBytes >> 30,
                driverString(), runtimeString(), cublasString(), cudnnString());
    }
}
