package dev.gapfill.core.testing;

import dev.gapfill.core.Gpu;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/** JUnit Jupiter condition behind {@link GpuTest}. */
public final class RequiresGpu implements ExecutionCondition {
    @Override public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Gpu.Status s = Gpu.status();
        return s.available() ? ConditionEvaluationResult.enabled("GPU present")
                : ConditionEvaluationResult.disabled("GPU test skipped: " + s.reason());
    }
}
