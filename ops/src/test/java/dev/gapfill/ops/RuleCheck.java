package dev.gapfill.ops;

import dev.gapfill.core.ArgumentException;
import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.UnsupportedShapeException;
import dev.gapfill.core.testing.Poison;
import org.junit.jupiter.api.function.Executable;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs the invalid-argument cases of one property try and counts them.
 *
 * <p>Every case must throw its rule's exception ({@link ArgumentException} — not a subclass — naming the rule's
 * argument; {@link UnsupportedShapeException} naming it; or {@link IllegalStateException}) before any work: the
 * caller's output tensors keep their poison, and no tensor or device memory stays allocated (allocating overloads
 * close their output on failure). After every case the property's valid call must succeed on the same device.
 *
 * <p>The cases of a try must be exactly the rules in the property's {@link Covers} (a rule that cannot run on this
 * host, e.g. one needing two GPUs, is reported by {@link Cases#skip} and counted as skipped). Counts go to a JSON
 * summary at JVM exit: {@code -Dgapfill.validationSummary=<file>}, default {@code target/validation-rules.json}
 * when {@code target/} exists.
 */
final class RuleCheck {
    private RuleCheck() {}

    /** One invalid call: the rule it breaks and the overload it goes through. */
    record Case(ValidationRule rule, String overload, Executable call) {}

    /** The cases of one try. */
    static final class Cases {
        private final List<Case> cases = new ArrayList<>();
        private final Map<ValidationRule, String> skipped = new EnumMap<>(ValidationRule.class);

        Cases add(ValidationRule rule, String overload, Executable call) {
            cases.add(new Case(rule, overload, call));
            return this;
        }

        /** The rule cannot be checked on this host (e.g. it needs two GPUs); counted as skipped. */
        Cases skip(ValidationRule rule, String why) {
            skipped.put(rule, why);
            return this;
        }

        /**
         * A rule about a non-contiguous tensor of {@code shape}: {@code addCase} adds its cases where the shape has a
         * non-contiguous view ({@link Fixture#stridable}); an all-ones shape has none, so the rule is skipped.
         */
        Cases whereStridable(ValidationRule rule, Runnable addCase, long... shape) {
            if (Fixture.stridable(shape)) {
                addCase.run();
            } else {
                skip(rule, Fixture.ALL_ONES);
            }
            return this;
        }

        List<Case> list() { return cases; }
    }

    /**
     * Runs every case, then after each the valid call. {@code untouched}: output tensors of the valid problem that
     * invalid calls may be given; they must keep their poison ({@link Poison#byteOf}) (they are re-poisoned after each valid call).
     */
    static void run(Fixture f, Cases cases, Executable valid, Tensor... untouched) {
        Method property = callingProperty();
        Set<ValidationRule> declared = EnumSet.noneOf(ValidationRule.class);
        declared.addAll(Arrays.asList(property.getAnnotation(Covers.class).value()));
        Set<ValidationRule> built = EnumSet.noneOf(ValidationRule.class);
        for (Case c : cases.cases) {
            built.add(c.rule());
        }
        built.addAll(cases.skipped.keySet());
        assertEquals(declared, built, "the cases built by " + property.getName() + " differ from its @Covers");
        String name = property.getDeclaringClass().getSimpleName() + "." + property.getName();
        Stats.tried(name, f.gpu() ? "gpu" : "cpu");
        for (Map.Entry<ValidationRule, String> s : cases.skipped.entrySet()) {
            Stats.skipped(s.getKey(), s.getValue());
        }
        CudaDevice cuda = f.gpu() ? Gpu.device(f.device) : null;
        for (Case c : cases.cases) {
            long live = Tensor.liveOwnedTensors();
            long leaks = Tensor.leakCount();
            long bytes = cuda == null ? 0 : cuda.bytesInUse();
            Throwable thrown = null;
            try {
                c.call().execute();
            } catch (Throwable t) {
                thrown = t;
            }
            String what = c.rule() + " via " + c.overload();
            checkThrown(c.rule(), thrown, what);
            if (cuda != null && c.rule().kind() == ValidationRule.Kind.CLAMPED) {
                cuda.synchronize();  // a fault would surface here (and latch the device, failing every later call)
            }
            long cleaned = Tensor.leakCount() - leaks;
            assertEquals(live - cleaned, Tensor.liveOwnedTensors(), what + ": a tensor allocated by the failed call stayed allocated");
            if (cuda != null && cleaned == 0) {
                assertEquals(bytes, cuda.bytesInUse(), what + ": device memory allocated by the failed call stayed allocated");
            }
            for (Tensor t : untouched) {
                assertPoisoned(t, what);
            }
            try {
                valid.execute();
                if (cuda != null) {
                    cuda.synchronize();
                }
            } catch (Throwable t) {
                throw new AssertionError("the valid call right after " + what + " failed: " + t, t);
            }
            for (Tensor t : untouched) {
                Poison.fill(t);
            }
            Stats.ran(c.rule(), c.overload(), name);
        }
    }

    private static void checkThrown(ValidationRule rule, Throwable thrown, String what) {
        if (rule.kind() == ValidationRule.Kind.CLAMPED) {
            if (thrown != null) {
                throw new AssertionError(what + ": expected the call to complete (device-side values clamped), got " + thrown, thrown);
            }
            return;
        }
        if (thrown == null) {
            fail(what + ": no exception (expected " + rule.kind() + " naming '" + rule.argument() + "')");
        }
        switch (rule.kind()) {
            case STATE:
                if (!(thrown instanceof IllegalStateException)) {
                    throw new AssertionError(what + ": expected IllegalStateException, got " + thrown, thrown);
                }
                return;
            case UNSUPPORTED:
                if (!(thrown instanceof UnsupportedShapeException)) {
                    throw new AssertionError(what + ": expected UnsupportedShapeException, got " + thrown, thrown);
                }
                break;
            default:
                if (!(thrown instanceof ArgumentException) || thrown instanceof UnsupportedShapeException) {
                    throw new AssertionError(what + ": expected ArgumentException, got " + thrown, thrown);
                }
                break;
        }
        assertEquals(rule.argument(), ((ArgumentException) thrown).argument(), what + ": " + thrown.getMessage());
    }

    private static void assertPoisoned(Tensor t, String what) {
        if (!Poison.isPoisoned(t)) {
            fail(what + ": an output was written (" + t + ") before the argument was rejected");
        }
    }

    /** The @Covers property method on the calling stack. */
    private static Method callingProperty() {
        return StackWalker.getInstance(StackWalker.Option.RETAIN_CLASS_REFERENCE).walk(frames -> frames
                .map(fr -> {
                    for (Method m : fr.getDeclaringClass().getDeclaredMethods()) {
                        if (m.getName().equals(fr.getMethodName()) && m.isAnnotationPresent(Covers.class)) {
                            return m;
                        }
                    }
                    return null;
                })
                .filter(m -> m != null)
                .findFirst()
                .orElseThrow(() -> new AssertionError("RuleCheck.run must be called from a property annotated with @Covers")));
    }

    /** Counters of this JVM, written as JSON at exit. */
    static final class Stats {
        private static final Map<String, AtomicLong> TRIES = new ConcurrentHashMap<>();
        private static final Map<String, AtomicLong> CASES_BY_PROPERTY = new ConcurrentHashMap<>();
        private static final Map<ValidationRule, AtomicLong> CASES = new ConcurrentHashMap<>();
        private static final Map<ValidationRule, Set<String>> OVERLOADS = new ConcurrentHashMap<>();
        private static final Map<ValidationRule, String> SKIPPED = new ConcurrentHashMap<>();
        private static final Map<String, String> WHERE = new ConcurrentHashMap<>();

        static {
            Runtime.getRuntime().addShutdownHook(new Thread(Stats::write, "validation-summary"));
        }

        private Stats() {}

        static void tried(String property, String where) {
            TRIES.computeIfAbsent(property, k -> new AtomicLong()).incrementAndGet();
            WHERE.put(property, where);
        }

        static void ran(ValidationRule rule, String overload, String property) {
            CASES.computeIfAbsent(rule, k -> new AtomicLong()).incrementAndGet();
            OVERLOADS.computeIfAbsent(rule, k -> ConcurrentHashMap.newKeySet()).add(overload);
            CASES_BY_PROPERTY.computeIfAbsent(property, k -> new AtomicLong()).incrementAndGet();
        }

        static void skipped(ValidationRule rule, String why) {
            SKIPPED.putIfAbsent(rule, why);
        }

        private static Path target() {
            String p = System.getProperty("gapfill.validationSummary");
            if (p != null && !p.isBlank()) {
                return Path.of(p);
            }
            return Files.isDirectory(Path.of("target")) ? Path.of("target", "validation-rules.json") : null;
        }

        static void write() {
            Path out = target();
            if (out == null || TRIES.isEmpty()) {
                return;
            }
            StringBuilder sb = new StringBuilder("{\n");
            String host = Gpu.available() ? Gpu.device(0).info().name() + " (" + Gpu.deviceCount() + " GPU" + (Gpu.deviceCount() > 1 ? "s" : "")
                    + ")" : "cpu only (" + Gpu.status().reason() + ")";
            sb.append("  \"host\": ").append(q(host)).append(",\n");
            sb.append("  \"commit\": ").append(q(System.getenv().getOrDefault("GAPFILL_COMMIT", "unknown"))).append(",\n");
            sb.append("  \"rules_in_inventory\": ").append(ValidationRule.values().length).append(",\n");
            sb.append("  \"rules_checked\": ").append(CASES.size()).append(",\n");
            sb.append("  \"rules_skipped_on_this_host\": ").append(SKIPPED.keySet().stream().filter(r -> !CASES.containsKey(r)).count()).append(",\n");
            sb.append("  \"cases_total\": ").append(CASES.values().stream().mapToLong(AtomicLong::get).sum()).append(",\n");
            sb.append("  \"entry_points\": {\n");
            List<String> entries = new ArrayList<>();
            for (ValidationRule.Entry e : ValidationRule.Entry.values()) {
                List<ValidationRule> rules = Arrays.stream(ValidationRule.values()).filter(r -> r.entry() == e).toList();
                long cases = rules.stream().mapToLong(r -> CASES.getOrDefault(r, new AtomicLong()).get()).sum();
                long checked = rules.stream().filter(CASES::containsKey).count();
                long cpu = rules.stream().filter(r -> r.where() == ValidationRule.Where.ANY).count();
                entries.add("    " + q(e.name()) + ": {\"methods\": " + q(e.methods()) + ", \"rules\": " + rules.size()
                        + ", \"device_independent\": " + cpu + ", \"device_specific\": " + (rules.size() - cpu)
                        + ", \"checked_here\": " + checked + ", \"cases\": " + cases + "}");
            }
            sb.append(String.join(",\n", entries)).append("\n  },\n");
            sb.append("  \"properties\": {\n");
            List<String> props = new ArrayList<>();
            for (String p : new TreeSet<>(TRIES.keySet())) {
                props.add("    " + q(p) + ": {\"ran_on\": " + q(WHERE.get(p)) + ", \"tries\": " + TRIES.get(p).get() + ", \"cases\": "
                        + CASES_BY_PROPERTY.getOrDefault(p, new AtomicLong()).get() + "}");
            }
            sb.append(String.join(",\n", props)).append("\n  },\n");
            sb.append("  \"rules\": {\n");
            List<String> rules = new ArrayList<>();
            for (ValidationRule r : ValidationRule.values()) {
                AtomicLong n = CASES.get(r);
                String extra = n != null ? "\"cases\": " + n.get() + ", \"overloads\": "
                        + OVERLOADS.get(r).stream().sorted().map(RuleCheck::q).collect(Collectors.joining(", ", "[", "]"))
                        : SKIPPED.containsKey(r) ? "\"cases\": 0, \"skipped\": " + q(SKIPPED.get(r)) : "\"cases\": 0";
                rules.add("    " + q(r.name()) + ": {\"entry\": " + q(r.entry().name()) + ", \"argument\": " + q(r.argument())
                        + ", \"kind\": " + q(r.kind().name()) + ", \"where\": " + q(r.where().name()) + ", " + extra + "}");
            }
            sb.append(String.join(",\n", rules)).append("\n  }\n}\n");
            try {
                if (out.toAbsolutePath().getParent() != null) {
                    Files.createDirectories(out.toAbsolutePath().getParent());
                }
                Files.writeString(out, sb.toString(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                System.err.println("validation summary not written: " + e);
            }
        }

        /** Cases run per rule so far (for tests of the counting itself). */
        static Map<ValidationRule, Long> casesSoFar() {
            Map<ValidationRule, Long> m = new TreeMap<>();
            CASES.forEach((k, v) -> m.put(k, v.get()));
            return m;
        }
    }

    static String q(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** Closes a tensor an overload returned (a call expected to throw that returned instead). */
    static void discard(AutoCloseable c) throws Exception {
        if (c != null) {
            c.close();
        }
    }

    /**
     * The two stream rules of an entry point, through each overload ({@code call} builds the call for a stream): a closed
     * stream, and a stream of another GPU (skipped on one-GPU hosts). GPU fixtures only.
     */
    static void streamCases(Cases c, Fixture f, ValidationRule closed, ValidationRule otherDevice,
                            Map<String, java.util.function.Function<dev.gapfill.core.Stream, Executable>> call) {
        dev.gapfill.core.Stream cs = f.closedStream();
        call.forEach((overload, fn) -> c.add(closed, overload, fn.apply(cs)));
        if (Fixture.gpus() >= 2) {
            dev.gapfill.core.Stream os = f.otherDeviceStream();
            call.forEach((overload, fn) -> c.add(otherDevice, overload, fn.apply(os)));
        } else {
            c.skip(otherDevice, "needs 2 GPUs");
        }
    }

    /** Runs {@code e} with the system property {@code key} set to "true" (a debug mode), then clears it. */
    static void withProperty(String key, Executable e) throws Throwable {
        System.setProperty(key, "true");
        try {
            e.execute();
        } finally {
            System.clearProperty(key);
        }
    }
}
