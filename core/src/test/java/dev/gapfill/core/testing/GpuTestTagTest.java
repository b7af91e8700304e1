package dev.gapfill.core.testing;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.engine.JqwikTestEngine;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.engine.JupiterTestEngine;
import org.junit.platform.engine.ConfigurationParameters;
import org.junit.platform.engine.DiscoveryFilter;
import org.junit.platform.engine.DiscoverySelector;
import org.junit.platform.engine.EngineDiscoveryRequest;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.TestEngine;
import org.junit.platform.engine.TestTag;
import org.junit.platform.engine.UniqueId;
import org.junit.platform.engine.discovery.ClassSelector;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.MethodSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both test engines see {@link GpuTest}'s {@code gpu} tag on every test they discover in a {@code @GpuTest} class, so
 * that a run filtered by the tag (the bundle's sanitizer step) gets the jqwik properties as well as the JUnit tests.
 * Until this was checked, jqwik saw no tag and the sanitizer runs left every GPU property out.
 */
class GpuTestTagTest {
    /** Discovered here, never run: the name matches no test pattern and it needs a GPU. */
    @GpuTest
    static class Sample {
        @Property(tries = 1) void aProperty(@ForAll int x) {
        }

        @Example void anExample() {
        }

        @Test void aJupiterTest() {
        }
    }

    @Test void jqwikSeesTheGpuTagOnPropertiesAndExamples() {
        Map<String, Set<TestTag>> tags = discoveredTags(new JqwikTestEngine());
        assertEquals(Set.of("aProperty", "anExample"), tags.keySet());
        tags.forEach((method, t) -> assertTrue(t.contains(TestTag.create("gpu")), method + ": " + t));
    }

    @Test void jupiterSeesTheGpuTagOnItsTests() {
        Map<String, Set<TestTag>> tags = discoveredTags(new JupiterTestEngine());
        assertEquals(Set.of("aJupiterTest"), tags.keySet());
        assertTrue(tags.get("aJupiterTest").contains(TestTag.create("gpu")), tags.toString());
    }

    /** Method name to tags of every test the engine discovers in {@link Sample}. */
    private static Map<String, Set<TestTag>> discoveredTags(TestEngine engine) {
        TestDescriptor root = engine.discover(new SampleRequest(), UniqueId.forEngine(engine.getId()));
        Map<String, Set<TestTag>> tags = new HashMap<>();
        for (TestDescriptor d : root.getDescendants()) {
            Optional<MethodSource> source = d.getSource().filter(MethodSource.class::isInstance).map(MethodSource.class::cast);
            source.ifPresent(m -> tags.put(m.getMethodName(), d.getTags()));
        }
        return tags;
    }

    /** A discovery request for {@link Sample} alone, with no filters and no configuration. */
    private static final class SampleRequest implements EngineDiscoveryRequest {
        @Override public <T extends DiscoverySelector> List<T> getSelectorsByType(Class<T> type) {
            return type.isAssignableFrom(ClassSelector.class) ? List.of(type.cast(DiscoverySelectors.selectClass(Sample.class))) : List.of();
        }

        @Override public <T extends DiscoveryFilter<?>> List<T> getFiltersByType(Class<T> type) {
            return List.of();
        }

        @Override public ConfigurationParameters getConfigurationParameters() {
            return new ConfigurationParameters() {
                @Override public Optional<String> get(String key) {
                    return Optional.empty();
                }

                @Override public Optional<Boolean> getBoolean(String key) {
                    return Optional.empty();
                }

                @Override public <T> Optional<T> get(String key, Function<String, T> transformer) {
                    return Optional.empty();
                }

                @SuppressWarnings("deprecation")
                @Override public int size() {
                    return 0;
                }

                @Override public Set<String> keySet() {
                    return Set.of();
                }
            };
        }
    }
}
