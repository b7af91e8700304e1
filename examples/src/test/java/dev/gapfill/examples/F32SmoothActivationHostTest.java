package dev.gapfill.examples;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The double-float F32 SiLU, GELU_TANH and GELU_ERF of {@code cuda-native/src/main/cuda/common/f32_smooth_act.cuh}, compiled for
 * the host (its {@code GAPFILL_F32ACT_HOST} mode: the same fp32 operations, {@code std::fma}, an exactly rounded 1/x in
 * place of {@code rcp.approx}) by {@code cuda-native/dev/depthwise_conv3x3/ab/f32act_host.cpp}, and checked against the
 * fp64 forms the reference defines: no result may be more than 1 ulp away. Every 1,009th fp32 bit pattern (4,240,030
 * finite inputs per function, every exponent), so CI catches an edit of the shipped header that breaks its error
 * budget without a GPU; the GPU checks all 2^32 inputs (ab/f32act_check.cu).
 */
class F32SmoothActivationHostTest {
    @TempDir Path tmp;

    @Test
    void doubleFloatFormsStayWithinOneUlpOfTheFp64Forms() throws Exception {
        Path root = Path.of("..").toAbsolutePath().normalize();
        Path source = root.resolve("cuda-native/dev/depthwise_conv3x3/ab/f32act_host.cpp");
        Path headers = root.resolve("cuda-native/src/main/cuda/common");
        assumeTrue(Files.isRegularFile(source), "run from the examples module of a checkout");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/g++")), "needs g++ (CI has it beside nvcc)");
        Path exe = tmp.resolve("f32act_host");
        String compiled = run(List.of("/usr/bin/g++", "-O2", "-ffp-contract=off", "-std=c++17", "-I", headers.toString(),
                source.toString(), "-o", exe.toString()), 0);
        assertTrue(Files.isExecutable(exe), compiled);
        String out = run(List.of(exe.toString(), "1009"), 0);
        List<String> lines = out.lines().filter(l -> l.contains(" inputs, ")).toList();
        assertEquals(3, lines.size(), out);
        for (String l : lines) {
            assertTrue(l.contains(">1 ulp 0,"), l);
            assertTrue(l.contains("4240030 inputs"), l);
        }
    }

    private static String run(List<String> cmd, int expectedExit) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "timed out: " + cmd);
        assertEquals(expectedExit, p.exitValue(), cmd + "\n" + out);
        return out;
    }
}
