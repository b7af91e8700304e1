package dev.gapfill.ops;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Paths;

/** For tests that run a case in a child JVM (its own heap limits, its own sticky device state). */
final class ChildJvm {
    private ChildJvm() {}

    /** This JVM's class path plus every URL of {@code test}'s class loaders (surefire may hand it over in a manifest jar). */
    static String classPath(Class<?> test) {
        StringBuilder sb = new StringBuilder(System.getProperty("java.class.path"));
        for (ClassLoader cl = test.getClassLoader(); cl != null; cl = cl.getParent()) {
            if (cl instanceof URLClassLoader) {
                for (URL u : ((URLClassLoader) cl).getURLs()) {
                    try {
                        sb.append(File.pathSeparator).append(Paths.get(u.toURI()));
                    } catch (java.net.URISyntaxException | IllegalArgumentException e) {
                        sb.append(File.pathSeparator).append(u.getPath());
                    }
                }
            }
        }
        return sb.toString();
    }
}
