package dev.gapfill.examples;

import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.Gpu;

/** The text {@code gapfill info} prints: one place with everything a bug report needs. */
public final class EnvironmentReport {
    private EnvironmentReport() {}

    public static String text() {
        StringBuilder sb = new StringBuilder();
        sb.append("Gapfill 0.1.0 on Java ").append(System.getProperty("java.version")).append(" (")
                .append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch")).append(")\n");
        Gpu.Status s = Gpu.status();
        if (!s.available()) {
            sb.append("GPU: none usable — ").append(s.reason()).append('\n');
            sb.append("Backend: every op runs on the CPU reference backend (fp64 accumulation, exact but slow).\n");
            sb.append("Kernels bundled: ").append(GapfillCli.modulesLine(null)).append('\n');
            return sb.toString();
        }
        for (DeviceInfo d : Gpu.devices()) {
            sb.append(String.format("GPU %d: %s, compute capability %d.%d, %d SMs, L2 %d MiB, %d KiB shared memory per SM "
                            + "(%d KiB per block opt-in), %.1f GiB%n", d.ordinal(), d.name(), d.ccMajor(), d.ccMinor(), d.smCount(),
                    d.l2Bytes() >> 20, d.smemPerSm() >> 10, d.smemPerBlockOptin() >> 10, d.totalMemBytes() / (double) (1L << 30)));
            sb.append(String.format("  driver (CUDA) %s, runtime %s, cuBLAS %s, cuDNN %s%n", d.driverString(), d.runtimeString(),
                    d.cublasString(), d.cudnnString()));
            dev.gapfill.core.CudaDevice cd = Gpu.device(d.ordinal());
            sb.append("  kernels: ").append(GapfillCli.modulesLine(cd.realInfo())).append('\n');
            if (cd.profiled()) {
                String jit = System.getenv("CUDA_FORCE_PTX_JIT");
                sb.append(String.format("  described as another part (%s): the heuristics choose for compute capability %d.%d on a %s"
                                + " (%d.%d); kernels from %s; correctness only, the times are this GPU's%n",
                        dev.gapfill.core.CudaDevice.DEVICE_AS, d.ccMajor(), d.ccMinor(), cd.realInfo().name(),
                        cd.realInfo().ccMajor(), cd.realInfo().ccMinor(),
                        "1".equals(jit) ? "the compute_80 PTX (CUDA_FORCE_PTX_JIT=1)" : "this GPU's own image"));
            }
        }
        return sb.toString();
    }
}
