package dev.gapfill.core.testing;

import net.jqwik.api.lifecycle.AddLifecycleHook;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a JUnit test or jqwik property (or a whole class) that needs a usable CUDA GPU. On a machine
 * without one it is reported as skipped, with the reason, in both engines. Tagged {@code gpu}. Its jqwik properties
 * honour {@code -Dgapfill.test.gpuTriesScale} ({@link GpuTriesHook}).
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@ExtendWith(RequiresGpu.class)
@AddLifecycleHook(RequiresGpuHook.class)
@AddLifecycleHook(GpuTriesHook.class)
public @interface GpuTest {}
