package dev.gapfill.core.testing;

import dev.gapfill.core.Gpu;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/** jqwik hook behind {@link GpuTest}: skips properties (and containers) without a GPU. */
public final class RequiresGpuHook implements SkipExecutionHook {
    @Override public SkipResult shouldBeSkipped(LifecycleContext context) {
        Gpu.Status s = Gpu.status();
        return s.available() ? SkipResult.doNotSkip() : SkipResult.skip("GPU test skipped: " + s.reason());
    }
}
