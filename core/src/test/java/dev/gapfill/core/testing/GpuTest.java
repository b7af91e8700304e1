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
 * without one it is reported as skipped, with the reason, in both engines. Tagged {@code gpu} in both engines: Jupiter
 * reads {@code org.junit.jupiter.api.Tag} and jqwik only its own {@code net.jqwik.api.Tag}, so without the second a tag
 * filter such as the sanitizer step's {@code --include-tag gpu} leaves every jqwik property out ({@link GpuTestTagTest}).
 * Its jqwik properties honour {@code -Dgapfill.test.gpuTriesScale} ({@link GpuTriesHook}).
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Tag("gpu")
@net.jqwik.api.Tag("gpu")
@ExtendWith(RequiresGpu.class)
@AddLifecycleHook(RequiresGpuHook.class)
@AddLifecycleHook(GpuTriesHook.class)
public @interface GpuTest {}
