package dev.gapfill.core.testing;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@AddLifecycleHook(GpuTriesHook.class)
class GpuTriesHookTest {
    private static final AtomicInteger RUNS = new AtomicInteger();
    private static String saved;

    @BeforeContainer static void scaleToAQuarter() {
        saved = System.getProperty(GpuTriesHook.PROPERTY);
        System.setProperty(GpuTriesHook.PROPERTY, "0.25");
    }

    @AfterContainer static void restoreAndCount() {
        if (saved == null) {
            System.clearProperty(GpuTriesHook.PROPERTY);
        } else {
            System.setProperty(GpuTriesHook.PROPERTY, saved);
        }
        // 40 tries scaled by 0.25: the property body ran exactly 10 times
        assertEquals(10, RUNS.get());
    }

    @Property(tries = 40) void runsAQuarterOfItsTries(@ForAll int x) {
        RUNS.incrementAndGet();
    }

    @Example void reducedFollowsTheProperty() {
        // the container set the property to 0.25
        org.junit.jupiter.api.Assertions.assertTrue(GpuTriesHook.reduced());
        String before = System.getProperty(GpuTriesHook.PROPERTY);
        try {
            System.setProperty(GpuTriesHook.PROPERTY, "1");
            org.junit.jupiter.api.Assertions.assertFalse(GpuTriesHook.reduced());
            System.clearProperty(GpuTriesHook.PROPERTY);
            org.junit.jupiter.api.Assertions.assertFalse(GpuTriesHook.reduced());
            System.setProperty(GpuTriesHook.PROPERTY, "2");
            assertThrows(IllegalArgumentException.class, GpuTriesHook::reduced);
        } finally {
            System.setProperty(GpuTriesHook.PROPERTY, before);
        }
    }

    @Example void roundsUpAndKeepsAtLeastOneTry() {
        assertEquals(30, GpuTriesHook.scaledTries(120, "0.25"));
        assertEquals(4, GpuTriesHook.scaledTries(15, "0.25"));
        assertEquals(1, GpuTriesHook.scaledTries(3, "0.01"));
        assertEquals(60, GpuTriesHook.scaledTries(60, "1"));
    }

    @Example void rejectsScalesOutsideTheUnitInterval() {
        for (String bad : new String[] {"0", "-0.5", "1.5", "NaN", "quarter"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuTriesHook.scaledTries(40, bad));
            assertEquals(true, e.getMessage().startsWith(GpuTriesHook.PROPERTY), e.getMessage());
        }
    }
}
