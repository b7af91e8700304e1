package dev.gapfill.ops;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.Device;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Resources;

import java.util.Iterator;
import java.util.Map;

/**
 * The per-shape caches of the ops, as {@link Resources.Cache} services (META-INF/services), so that
 * {@link Resources#release} empties them: the cuDNN plans of {@link DepthwiseConv3x3}'s vendor path
 * (descriptors and the chosen algorithm per shape) and the cuBLASLt algorithms of {@link Int8Mm} (descriptors
 * and heuristic result per shape), which hold host memory only, and the plans the one-shot calls of {@link Int8Mm#mm}
 * and {@link GqaDecode#decode(dev.gapfill.core.Tensor, GqaDecode.KvCache, dev.gapfill.core.Tensor, dev.gapfill.core.Tensor,
 * dev.gapfill.core.Tensor, GqaDecode.Options, dev.gapfill.core.Stream)} keep per thread, which hold device memory (their
 * workspaces), and the host arrays of {@link GroupedGemm}'s grouped-batched vendor calls (host memory and an event
 * each). All refill on demand. Internal.
 */
public final class OpCaches {
    private OpCaches() {}

    private static boolean matches(Device device, int ordinal) {
        return device == null || (device.isCuda() && device.ordinal() == ordinal);
    }

    /** {@link DepthwiseConv3x3}'s cuDNN plan cache. */
    public static final class DepthwiseCudnnPlans implements Resources.Cache {
        @Override public String name() { return "depthwise_conv3x3 cuDNN plans"; }

        @Override public int size(Device device) {
            int n = 0;
            for (DepthwiseConv3x3Cudnn.Key k : DepthwiseConv3x3Cudnn.PLANS.keySet()) {
                n += matches(device, k.device()) ? 1 : 0;
            }
            return n;
        }

        @Override public int release(Device device) {
            int n = 0;
            synchronized (DepthwiseConv3x3Cudnn.PLANS) {
                Iterator<Map.Entry<DepthwiseConv3x3Cudnn.Key, DepthwiseConv3x3Cudnn.Plan>> it = DepthwiseConv3x3Cudnn.PLANS.entrySet().iterator();
                while (it.hasNext()) {
                    Map.Entry<DepthwiseConv3x3Cudnn.Key, DepthwiseConv3x3Cudnn.Plan> e = it.next();
                    if (matches(device, e.getKey().device())) {
                        it.remove();
                        DepthwiseConv3x3Cudnn.destroy(e.getValue());
                        n++;
                    }
                }
            }
            return n;
        }
    }

    /**
     * Plans an op's one-shot calls keep per thread ({@link KeptPlans}; device memory: their workspaces). Releasing
     * closes them (frees ordered after their last runs) and waits for the devices, so that the pool's figures
     * afterwards are final.
     */
    abstract static class KeptPlansCache implements Resources.Cache {
        abstract KeptPlans<?, ?> plans();

        private static int ordinal(Device device) { return device == null ? -1 : device.ordinal(); }  // -1: every device

        @Override public int size(Device device) {
            return device != null && !device.isCuda() ? 0 : plans().size(ordinal(device));
        }

        @Override public int release(Device device) {
            if (device != null && !device.isCuda()) {
                return 0;
            }
            int n = plans().release(ordinal(device));
            if (n > 0) {  // only plans of CUDA devices are kept, so a GPU is there
                for (CudaDevice d : Gpu.usedDevices()) {  // a kept plan's device is a used one
                    if ((device == null || device.ordinal() == d.ordinal()) && d.stickyCause() == null) {
                        d.synchronize();
                    }
                }
            }
            return n;
        }
    }

    /** The plans {@link Int8Mm#mm}'s one-shot calls keep per thread. */
    public static final class Int8MmOneShotPlans extends KeptPlansCache {
        @Override public String name() { return "int8_mm one-shot plans"; }

        @Override KeptPlans<?, ?> plans() { return Int8Mm.KEPT; }
    }

    /** The plans {@link GqaDecode#decode}'s one-shot calls keep per thread. */
    public static final class GqaDecodeOneShotPlans extends KeptPlansCache {
        @Override public String name() { return "gqa_decode one-shot plans"; }

        @Override KeptPlans<?, ?> plans() { return GqaDecode.KEPT; }
    }

    /** The host arrays {@link GroupedGemm}'s grouped-batched vendor calls reuse ({@code GroupedGemm.ArraySlot}). */
    public static final class GroupedGemmArraySlots implements Resources.Cache {
        @Override public String name() { return "grouped_gemm grouped-batched host arrays"; }

        private static int ordinal(Device device) { return device == null ? -1 : device.ordinal(); }  // -1: every device

        @Override public int size(Device device) {
            return device != null && !device.isCuda() ? 0 : GroupedGemm.ArraySlot.pooled(ordinal(device));
        }

        @Override public int release(Device device) {
            return device != null && !device.isCuda() ? 0 : GroupedGemm.ArraySlot.release(ordinal(device));
        }
    }

    /** {@link Int8Mm}'s cuBLASLt algorithm cache (keys "ordinal/m/n/k"). */
    public static final class Int8MmLtAlgorithms implements Resources.Cache {
        @Override public String name() { return "int8_mm cuBLASLt algorithms"; }

        private static int ordinal(String key) { return Integer.parseInt(key.substring(0, key.indexOf('/'))); }

        @Override public int size(Device device) {
            int n = 0;
            for (String k : Int8Mm.LT_CACHE.keySet()) {
                n += matches(device, ordinal(k)) ? 1 : 0;
            }
            return n;
        }

        @Override public int release(Device device) {
            int n = 0;
            synchronized (Int8Mm.LT_CACHE) {
                Iterator<Map.Entry<String, Int8Mm.LtAlgo>> it = Int8Mm.LT_CACHE.entrySet().iterator();
                while (it.hasNext()) {
                    Map.Entry<String, Int8Mm.LtAlgo> e = it.next();
                    if (matches(device, ordinal(e.getKey()))) {
                        it.remove();
                        Int8Mm.evictLt(e.getValue());  // destroyed now, or when the last plan using it closes
                        n++;
                    }
                }
            }
            return n;
        }
    }
}
