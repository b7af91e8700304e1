package dev.gapfill.examples.bench;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import org.bytedeco.cuda.global.cudart;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Fills large device tensors with random values from one random block uploaded once, without making the tensor
 * periodic. A block repeated as is (or by plain doubling copies) makes every slab whose size is a multiple of the block
 * hold the same data: the sequences and KV heads of a gqa cache at L·D a multiple of 2^20, the experts of a grouped
 * GEMM at K·N a multiple of 2^24, bmm matrices a block apart; a kernel reading another sequence's, head's or expert's
 * data would then pass the sweeps' checks. Here each copy takes its source from an offset that changes from copy to
 * copy, so the content at a position depends on the whole copy history, not on the position modulo the block.
 */
public final class RandomFill {
    private RandomFill() {}

    /** One device-to-device copy of {@code count} elements from element {@code src} to element {@code dst} of the tensor. */
    record Copy(long dst, long src, long count) {}

    /**
     * The copies that fill elements [block, n) from the first {@code block} elements: each from an offset s ≥ 1 into what
     * is already filled (s + count ≤ the filled length), s changing from copy to copy; the counts nearly double.
     */
    static List<Copy> plan(long n, long block) {
        if (block < 1 || n < block) {
            throw new IllegalArgumentException("block " + block + " for " + n + " elements");
        }
        List<Copy> copies = new ArrayList<>();
        long done = block;
        for (int k = 0; done < n; k++) {
            long shift = done < 2 ? 0 : 1 + Math.floorMod(7919L * (k + 1), done / 2);  // in [1, done/2]: a copy of ≥ done/2
            long count = Math.min(done - shift, n - done);
            copies.add(new Copy(done, shift, count));
            done += count;
        }
        return copies;
    }

    /**
     * Fills {@code t} (contiguous, on a GPU) with {@code scale}·uniform[−1, 1) values, never 0 before they are rounded to
     * {@code t}'s dtype (F16 flushes the few below its subnormals to 0 at a small scale): a random block of up to {@code maxBlock} elements from {@code rnd}, then the copies of {@link #plan}, ordered
     * on {@code s}; returns after they completed.
     */
    public static void fill(Tensor t, Random rnd, float scale, int maxBlock, Stream s) {
        long n = t.numel();
        int block = (int) Math.min(n, maxBlock);
        float[] f = new float[block];
        for (int i = 0; i < block; i++) {
            float v = rnd.nextFloat() * 2 - 1;
            f[i] = (v == 0f ? 0.5f : v) * scale;
        }
        DType dt = t.dtype();
        long eb = dt.bytes();
        CudaDevice cd = Gpu.device(t.device());
        try (Tensor seed = Tensor.of(t.device(), dt, f, block)) {
            s.synchronize();  // t's allocation and earlier work on s before the copies (Tensor.of returns with its upload done)
            cd.check(cudart.cudaMemcpyAsync(new DevicePointer(t.address()), new DevicePointer(seed.address()), block * eb,
                    cudart.cudaMemcpyDeviceToDevice, s.handle()), "cudaMemcpyAsync(fill block)");
            for (Copy c : plan(n, block)) {
                cd.check(cudart.cudaMemcpyAsync(new DevicePointer(t.address() + c.dst() * eb), new DevicePointer(t.address() + c.src() * eb),
                        c.count() * eb, cudart.cudaMemcpyDeviceToDevice, s.handle()), "cudaMemcpyAsync(fill copy)");
            }
            s.synchronize();
        }
    }
}
