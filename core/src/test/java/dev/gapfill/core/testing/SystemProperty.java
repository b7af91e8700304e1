package dev.gapfill.core.testing;

/** Runs test code with a system property set, and puts the property back as it was (absent or its old value). */
public final class SystemProperty {
    private SystemProperty() {}

    /** Runs {@code body} with {@code name} = {@code value}; afterwards the property is restored, also on a throw. */
    public static void with(String name, String value, Runnable body) {
        String before = System.getProperty(name);
        try {
            System.setProperty(name, value);
            body.run();
        } finally {
            if (before == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, before);
            }
        }
    }
}
