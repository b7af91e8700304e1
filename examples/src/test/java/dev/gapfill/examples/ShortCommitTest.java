package dev.gapfill.examples;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The report's and the chart's commit labels: a run without GAPFILL_COMMIT records "unknown", shorter than the label. */
class ShortCommitTest {
    @Test void aShortOrMissingCommitIsKeptWhole() {
        assertEquals("unknown", ChartCmd.shortCommit("unknown", 12));
        assertEquals("null", ChartCmd.shortCommit(null, 8));
        assertEquals("36017acb", ChartCmd.shortCommit("36017acbd72b1c91eb5cf9f5ccc207b9c9ec8dbd", 8));
        assertEquals("36017acbd72b", ChartCmd.shortCommit("36017acbd72b1c91eb5cf9f5ccc207b9c9ec8dbd", 12));
        // a dirty bundle's files (scripts/bundle-run.sh): the mark survives the shortening
        assertEquals("36017acbd72b-dirty", ChartCmd.shortCommit("36017acbd72b1c91eb5cf9f5ccc207b9c9ec8dbd-dirty", 12));
        assertEquals("unknown-dirty", ChartCmd.shortCommit("unknown-dirty", 12));
    }
}
