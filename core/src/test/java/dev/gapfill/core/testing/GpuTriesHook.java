package dev.gapfill.core.testing;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * jqwik hook behind {@link GpuTest}: with {@code -Dgapfill.test.gpuTriesScale=s} (0 &lt; s &le; 1) every GPU
 * property runs {@code ceil(tries · s)} tries (at least 1). For runs where each launch is slow, such as the GPU suite
 * under compute-sanitizer's racecheck and synccheck, which instrument every kernel: the same properties and edge
 * cases, fewer random tries. Unset (the default, and every recorded test run), tries are untouched.
 */
public final class GpuTriesHook implements AroundPropertyHook {
    static final String PROPERTY = "gapfill.test.gpuTriesScale";

    @Override public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        String scale = System.getProperty(PROPERTY);
        if (scale != null && !scale.isBlank()) {
            int tries = context.attributes().tries().orElse(1000);  // jqwik's default when a property names none
            context.attributes().setTries(scaledTries(tries, scale));
        }
        return property.execute();
    }

    @Override public PropagationMode propagateTo() { return PropagationMode.ALL_DESCENDANTS; }

    /**
     * True when {@code -Dgapfill.test.gpuTriesScale} asks for fewer than all tries. GPU tests whose fixed grids are too
     * slow under the sanitizer's racecheck and synccheck use it to keep a subset that still reaches every kernel
     * variant (each such test says which); an invalid value is an error naming the property.
     */
    public static boolean reduced() {
        String scale = System.getProperty(PROPERTY);
        return scale != null && !scale.isBlank() && parse(scale) < 1;
    }

    /** {@code ceil(tries · scale)}, at least 1; a scale outside (0, 1] is an error naming the property. */
    static int scaledTries(int tries, String scale) {
        return Math.max(1, (int) Math.ceil(tries * parse(scale)));
    }

    /** The scale, a number in (0, 1]; anything else is an error naming the property. */
    private static double parse(String scale) {
        double s;
        try {
            s = Double.parseDouble(scale.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(PROPERTY + ": expected a number in (0, 1], got '" + scale + "'", e);
        }
        if (!(s > 0 && s <= 1)) {
            throw new IllegalArgumentException(PROPERTY + ": expected a number in (0, 1], got " + scale);
        }
        return s;
    }
}
