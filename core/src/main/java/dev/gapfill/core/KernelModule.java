package dev.gapfill.core;

import org.bytedeco.javacpp.BytePointer;
import org.bytedeco.cuda.cudart.CUfunc_st;
import org.bytedeco.cuda.cudart.CUmod_st;
import org.bytedeco.cuda.global.cudart;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A fatbin bundled in the jar ({@code /dev/gapfill/cuda/<op>/<file>.fatbin}), loaded lazily per device
 * with {@code cuModuleLoadData}; its functions are looked up once and cached.
 */
public final class KernelModule {
    /**
     * Where the kernel build puts the fatbins, .params and INDEX (in gapfill-cuda-native's jar). Read through the class
     * loader, not {@code KernelModule.class.getResource}: on the module path that searches core's own module only, and
     * every kernel would be missing.
     */
    private static final String ROOT = "dev/gapfill/cuda/";
    private static final Map<String, KernelModule> MODULES = new ConcurrentHashMap<>();

    private final String name;
    private volatile byte[] image;
    /** Entry name to parameter sizes in bytes, from {@code <name>.params} (written by the kernel build); empty if absent. */
    private volatile Map<String, int[]> params;
    private final Map<Integer, CUmod_st> loaded = new ConcurrentHashMap<>();
    // per device ordinal, then per symbol: the lookup on every launch builds no key string
    private final Map<Integer, Map<String, KernelFunction>> functions = new ConcurrentHashMap<>();

    private KernelModule(String name) {
        this.name = name;
    }

    /** The module {@code <op>/<file>} (without {@code .fatbin}), e.g. {@code "elementwise/scale_add"}. */
    public static KernelModule of(String name) {
        return MODULES.computeIfAbsent(name, KernelModule::new);
    }

    /** True if the fatbin resource is present in the jar (it always is in a correct build). */
    public static boolean isBundled(String name) {
        return resource(ROOT + name + ".fatbin") != null;
    }

    private static ClassLoader loader() {
        ClassLoader l = KernelModule.class.getClassLoader();
        return l != null ? l : ClassLoader.getSystemClassLoader();
    }

    private static java.net.URL resource(String path) {
        return loader().getResource(path);
    }

    private static InputStream stream(String path) {
        return loader().getResourceAsStream(path);
    }

    public String name() { return name; }

    /** Names of every module bundled in the jar, from the index the kernel build writes. */
    public static java.util.List<String> bundled() {
        try (InputStream in = stream(ROOT + "INDEX")) {
            if (in == null) {
                return java.util.List.of();
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
                    .map(String::trim).filter(l -> !l.isEmpty()).toList();
        } catch (IOException e) {
            throw new GapfillException("could not read the kernel index", e);
        }
    }

    private byte[] image() {
        byte[] img = image;
        if (img == null) {
            try (InputStream in = stream(ROOT + name + ".fatbin")) {
                if (in == null) {
                    throw new GapfillException("kernel image /" + ROOT + name + ".fatbin is missing from the classpath: "
                            + "gapfill-cuda-native must be on the classpath (built with nvcc)");
                }
                img = in.readAllBytes();
            } catch (IOException e) {
                throw new GapfillException("could not read kernel image " + name, e);
            }
            image = img;
        }
        return img;
    }

    /**
     * The parameter sizes of every entry of the module, from the {@code .params} resource the kernel build writes beside
     * the fatbin (lines "entry 8 8 4"); an empty map where the resource is absent (launches then go unchecked).
     */
    Map<String, int[]> parameterSizes() {
        Map<String, int[]> p = params;
        if (p == null) {
            p = new java.util.HashMap<>();
            try (InputStream in = stream(ROOT + name + ".params")) {
                if (in != null) {
                    for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                        String[] f = line.trim().split("\\s+");
                        if (f.length == 0 || f[0].isEmpty()) {
                            continue;
                        }
                        int[] sizes = new int[f.length - 1];
                        for (int i = 1; i < f.length; i++) {
                            sizes[i - 1] = Integer.parseInt(f[i]);
                        }
                        p.put(f[0], sizes);
                    }
                }
            } catch (IOException | NumberFormatException e) {
                throw new GapfillException("could not read the kernel parameter list /" + ROOT + name + ".params", e);
            }
            p = java.util.Collections.unmodifiableMap(p);
            params = p;
        }
        return p;
    }

    private static final java.util.Set<String> UNCHECKED_WARNED = ConcurrentHashMap.newKeySet();

    private CUmod_st module(CudaDevice device) {
        CUmod_st m = loaded.get(device.ordinal());
        if (m == null) {
            synchronized (this) {
                m = loaded.get(device.ordinal());
                if (m == null) {
                    byte[] img = image();
                    m = new CUmod_st();
                    // cuModuleLoadData copies the image, so the native buffer may be released afterwards.
                    try (BytePointer data = new BytePointer(img.length + 1L)) {
                        data.put(img, 0, img.length).put(img.length, (byte) 0);
                        // set right before the load: a virtual thread that parked in the resource read above may resume on
                        // another carrier, where another device's context is current (a read-only review, fiftieth session)
                        device.activate();
                        device.checkDriver(cudart.cuModuleLoadData(m, data), "cuModuleLoadData(" + name + ")");
                    }
                    loaded.put(device.ordinal(), m);
                }
            }
        }
        return m;
    }

    /** The kernel {@code symbol} (an {@code extern "C"} name) on {@code device}. */
    public KernelFunction function(CudaDevice device, String symbol) {
        Map<String, KernelFunction> onDevice = functions.computeIfAbsent(device.ordinal(), o -> new ConcurrentHashMap<>());
        KernelFunction f = onDevice.get(symbol);
        if (f == null) {
            CUmod_st m = module(device);
            device.activate();  // the lookup and the function's attribute query are driver calls: this thread's context current
            CUfunc_st h = new CUfunc_st();
            device.checkDriver(cudart.cuModuleGetFunction(h, m, symbol), "cuModuleGetFunction(" + name + ":" + symbol + ")");
            int[] sizes = parameterSizes().get(symbol);
            if (sizes == null && UNCHECKED_WARNED.add(name + ":" + symbol)) {
                // a stale or mixed native jar (the build writes every entry's sizes): say that its launches go unchecked
                org.slf4j.LoggerFactory.getLogger(KernelModule.class).warn("{}:{} has no parameter list in /{}{}.params: its"
                        + " launches' arguments are not checked (a native jar from another build?)", name, symbol, ROOT, name);
            }
            f = new KernelFunction(device, name + ":" + symbol, h, sizes);
            KernelFunction prev = onDevice.putIfAbsent(symbol, f);
            if (prev != null) {
                f = prev;
            }
        }
        return f;
    }
}
