package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.Tensor;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Validation and the CPU backend of the elementwise op (runs everywhere). */
class ElementwiseValidationProperties {
    @Property(tries = 50)
    void cpuBackendIsTheReference(@ForAll @IntRange(min = 1, max = 500) int n, @ForAll float alpha) {
        float[] x = new float[n];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i * 0.25f - 3;
            y[i] = 1.5f - i;
        }
        float a = Float.isFinite(alpha) ? Math.max(-1e3f, Math.min(1e3f, alpha)) : 1f;
        try (Tensor ta = Tensor.of(Device.CPU, DType.F32, x, n); Tensor tb = Tensor.of(Device.CPU, DType.F32, y, n);
             Tensor out = Elementwise.scaleAdd(ta, tb, a, 2f)) {
            for (int i = 0; i < n; i++) {
                assertEquals((float) ((double) a * x[i] + 2.0 * y[i]), out.toFloatArray()[i]);
            }
        }
    }

    @Property(tries = 30)
    void mismatchedShapesAreRejected(@ForAll @IntRange(min = 1, max = 50) int n, @ForAll @IntRange(min = 1, max = 50) int m) {
        if (n == m) {
            return;
        }
        try (Tensor a = Tensor.empty(Device.CPU, DType.F16, n); Tensor b = Tensor.empty(Device.CPU, DType.F16, m)) {
            ArgumentException e = assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1));
            assertEquals("b", e.argument());
        }
    }

    @Test void wrongDtypesAndClosedTensorsAreRejected() {
        try (Tensor a = Tensor.empty(Device.CPU, DType.I32, 4); Tensor b = Tensor.empty(Device.CPU, DType.I32, 4)) {
            assertEquals("a", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1)).argument());
        }
        Tensor a = Tensor.empty(Device.CPU, DType.F32, 4);
        Tensor b = Tensor.empty(Device.CPU, DType.F32, 4);
        b.close();
        assertEquals("b", assertThrows(ArgumentException.class, () -> Elementwise.scaleAdd(a, b, 1, 1)).argument());
        a.close();
    }

    @Test void backendPropertyOverridesAuto() {
        System.setProperty(Backend.PROPERTY, "vendor");
        try {
            assertEquals(Backend.VENDOR, Backend.resolve(Backend.AUTO));
            assertEquals(Backend.CUSTOM, Backend.resolve(Backend.CUSTOM));
            System.setProperty(Backend.PROPERTY, "nonsense");
            assertEquals(Backend.PROPERTY, assertThrows(ArgumentException.class, () -> Backend.resolve(Backend.AUTO)).argument());
        } finally {
            System.clearProperty(Backend.PROPERTY);
        }
        assertEquals(Backend.AUTO, Backend.resolve(Backend.AUTO));
    }
}
