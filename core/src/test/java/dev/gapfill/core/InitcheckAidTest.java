package dev.gapfill.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;

class InitcheckAidTest {
    @Test void offUnlessTheJvmAsksForIt() {
        // The build never sets -Dgapfill.debug.initcheck: the vendor paths must not pay a memset per call.
        assertFalse(InitcheckAid.enabled());
    }
}
