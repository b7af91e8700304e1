package dev.gapfill.ops;

import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Resources;
import dev.gapfill.core.Tensor;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An Error thrown after an allocating overload allocated its output (here the heap's OutOfMemoryError in the CPU
 * reference, or the direct-memory one while Routing.allocate allocates its second tensor) closes what was allocated
 * before it propagates: nothing is left to the tensor cleaner (no leak counted, no owned tensor left). Runs in a child
 * JVM with a 64 MiB heap and 512 MiB of direct memory, so the error is real and this JVM is not starved.
 * Elementwise.scaleAdd has no such seam on the CPU (its reference allocates nothing) and is not covered here.
 */
class OpsReview49AllocationFailureTest {
    @Test void anErrorAfterTheOutputIsAllocatedLeaksNothing() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx64m");
        cmd.add("-XX:MaxDirectMemorySize=512m");
        cmd.add("-cp");
        cmd.add(ChildJvm.classPath(OpsReview49AllocationFailureTest.class));
        cmd.add(Child.class.getName());
        Path log = Files.createTempFile("gapfill-review49", ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        boolean finished = p.waitFor(180, TimeUnit.SECONDS);
        if (!finished) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        assertTrue(finished, "child JVM did not finish within 180 s:\n" + out);
        assertEquals(0, p.exitValue(), "child JVM exited abnormally:\n" + out);
        // heap OOM (in the reference, after the direct-memory output was allocated) for the ops; direct OOM at tensor 1
        for (String s : new String[] {"bmm heap", "depthwise heap", "moeRoute heap", "allocate direct"}) {
            assertTrue(out.contains("SCENARIO " + s + " thrown=java.lang.OutOfMemoryError freed=0 leaks=0 live=0"),
                    s + ": the allocated output(s) must be closed before the Error propagates:\n" + out);
        }
        assertTrue(out.contains("EXIT clean"), out);
    }

    /** The child JVM: each scenario's thrown error and what was left to the cleaner. */
    public static final class Child {
        public static void main(String[] args) {
            Device cpu = Device.CPU;
            try (Tensor a = Tensor.empty(cpu, DType.F16, 1, 4096, 1); Tensor b = Tensor.empty(cpu, DType.F16, 1, 1, 4096)) {
                // out [1, 4096, 4096] F16: 32 MiB of direct memory; the reference's fp64 result: 128 MiB of heap
                scenario("bmm heap", "Java heap space", () -> Bmm.bmm(a, b));
            }
            try (Tensor x = Tensor.empty(cpu, DType.F16, 1, 1, 4096, 4096); Tensor w = Tensor.empty(cpu, DType.F16, 1, 3, 3)) {
                // out 32 MiB of direct memory; the reference's fp32 copy of x: 64 MiB of heap
                scenario("depthwise heap", "Java heap space", () -> DepthwiseConv3x3.apply(x, w, null, DepthwiseConv3x3.Options.defaults()));
            }
            try (Tensor logits = Tensor.empty(cpu, DType.F16, 1 << 23, 1)) {
                // six outputs, 160 MiB of direct memory; the reference's ids and fp64 weights: 96 MiB of heap
                scenario("moeRoute heap", "Java heap space", () -> MoeRoute.route(logits, MoeRoute.Options.topK(1)));
            }
            // offsets (8 bytes) allocated, then gather: 1 GiB over the 512 MiB of direct memory
            scenario("allocate direct", "direct buffer memory", () -> MoeRoute.Routing.allocate(cpu, 1 << 28, 1, 1));
            System.out.println("EXIT clean");
        }

        private static void scenario(String name, String expectedMessage, Supplier<Object> call) {
            long live = Tensor.liveOwnedTensors();
            long leaks = Tensor.leakCount();
            Throwable thrown = null;
            Object result = null;
            try {
                result = call.get();
            } catch (Throwable t) {
                thrown = t;
            }
            int freed = Resources.freeUnreachableTensors();
            String what = thrown == null ? "nothing (" + result + ")"
                    : thrown.getMessage() != null && thrown.getMessage().contains(expectedMessage) ? thrown.getClass().getName()
                    : thrown + " (expected one saying \"" + expectedMessage + "\")";
            System.out.println("SCENARIO " + name + " thrown=" + what + " freed=" + freed + " leaks=" + (Tensor.leakCount() - leaks)
                    + " live=" + (Tensor.liveOwnedTensors() - live));
        }
    }
}
