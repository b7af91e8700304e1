package dev.gapfill.examples.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One benchmark case, in the schema of {@code docs/benchmarks/<gpu>/<op>.json} (schema 1).
 *
 * @param op          op name as in the file name (bmm, int8_mm, ...)
 * @param dtype       input dtype (and output, where it differs: "I8->F16")
 * @param shape       problem dimensions, ordered
 * @param regime      the heuristics' label for this shape
 * @param vendorUs    vendor path median
 * @param customUs    custom path median, null where no custom kernel applies
 * @param autoUs      AUTO median
 * @param autoBackend what AUTO chose (VENDOR or CUSTOM) and the variant
 * @param floorUs     fewest bytes over measured bandwidth, or flops over measured rate, whichever is larger
 * @param bytes       the fewest bytes the op must move
 * @param flops       arithmetic of the op
 * @param peers       other paths timed in the same run, median µs by name
 * @param spread      p10/p90 of each timed path, µs
 * @param check       correctness of the custom path (or the vendor path where no custom applies)
 */
public record BenchRow(String op, String dtype, Map<String, Object> shape, String regime, Double vendorUs, Double customUs,
                       Double autoUs, String autoBackend, double floorUs, long bytes, double flops, Map<String, Double> peers,
                       Map<String, double[]> spread, Check check) {

    /** Correctness of the timed result. */
    public record Check(String against, boolean bitExact, long maxUlp, double maxRelErr, boolean pass) {}

    /** Shape helper preserving order: {@code shape("batch", 512, "m", 16)}. */
    public static Map<String, Object> shape(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /**
     * The op's other vendor path timed as a peer, whose time the faster-vendor figures take where it is the faster:
     * grouped_gemm's {@code cublas_grouped_batched} (its {@code vendor_us} is the per-expert loop; issue 6 calls the
     * better of the two "the vendor path"). Null for the other ops, whose peers are not vendor paths (int8's F16 cuBLAS
     * peer computes something else; depthwise's peers are custom variants).
     */
    public static String vendorPeer(String op) {
        return "grouped_gemm".equals(op) ? "cublas_grouped_batched" : null;
    }

    /** The faster of the vendor paths in a JSON row of {@code op} ({@code vendor_us} and {@link #vendorPeer}), or null. */
    public static Double fasterVendorUs(String op, Map<String, Object> row) {
        String peer = vendorPeer(op);
        Object g = peer != null && row.get("peers") instanceof Map<?, ?> pm ? pm.get(peer) : null;
        return faster(row.get("vendor_us") instanceof Number n ? n.doubleValue() : null, g instanceof Number p ? p.doubleValue() : null);
    }

    /** Speedup of custom over the faster vendor path ({@link #fasterVendorUs}), or NaN. */
    public double speedup() {
        String peer = vendorPeer(op);
        Double v = faster(vendorUs, peer != null && peers != null ? peers.get(peer) : null);
        return v == null || customUs == null ? Double.NaN : v / customUs;
    }

    private static Double faster(Double vendor, Double peer) {
        // no nested conditional expression: with Math.min's double in it, Java unboxes a null vendor and throws
        if (peer == null) {
            return vendor;
        }
        if (vendor == null) {
            return peer;
        }
        return Math.min(vendor, peer);
    }

    /** floor / custom (or floor / auto where no custom). */
    public double fractionOfFloor() {
        Double t = customUs != null ? customUs : autoUs;
        return t == null || !(floorUs > 0) ? Double.NaN : floorUs / t;  // a floor of 0: none (host_overhead's host times)
    }

    /** This row as a JSON object in the schema-1 layout. */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", op);
        m.put("dtype", dtype);
        m.put("shape", shape);
        m.put("regime", regime);
        m.put("vendor_us", vendorUs);
        m.put("custom_us", customUs);
        m.put("auto_us", autoUs);
        m.put("auto_backend", autoBackend);
        m.put("floor_us", floorUs);
        m.put("bytes", bytes);
        m.put("flops", flops);
        m.put("peers", peers);
        Map<String, Object> sp = new LinkedHashMap<>();
        spread.forEach((k, v) -> sp.put(k, new double[] {v[0], v[1]}));
        m.put("spread_p10_p90_us", sp);
        Map<String, Object> c = new LinkedHashMap<>();
        if (check != null) {
            c.put("against", check.against());
            c.put("bit_exact", check.bitExact());
            c.put("max_ulp", check.maxUlp());
            c.put("max_rel_err", check.maxRelErr());
            c.put("pass", check.pass());
        }
        m.put("check", c);
        return m;
    }

    /** A row read back from a benchmark file (the inverse of {@link #toJson}; JSON numbers come back as doubles). */
    @SuppressWarnings("unchecked")
    public static BenchRow fromJson(Map<String, Object> m) {
        Map<String, Object> shape = new LinkedHashMap<>((Map<String, Object>) m.get("shape"));
        Map<String, Double> peers = new LinkedHashMap<>();
        Object p = m.get("peers");
        if (p instanceof Map<?, ?> pm) {
            pm.forEach((k, v) -> peers.put((String) k, v == null ? null : ((Number) v).doubleValue()));
        }
        Map<String, double[]> spread = new LinkedHashMap<>();
        Object sp = m.get("spread_p10_p90_us");
        if (sp instanceof Map<?, ?> spm) {
            spm.forEach((k, v) -> {
                List<Object> l = (List<Object>) v;
                spread.put((String) k, new double[] {((Number) l.get(0)).doubleValue(), ((Number) l.get(1)).doubleValue()});
            });
        }
        Check check = null;
        Object c = m.get("check");
        if (c instanceof Map<?, ?> cm && !cm.isEmpty()) {
            // a check that met a NaN or an infinity has max_rel_err +Inf (and may have max_ulp Long.MAX_VALUE), which the JSON
            // writes as null: read back as those values, not as a NullPointerException that stopped bench --resume
            Object ulp = cm.get("max_ulp");
            Object rel = cm.get("max_rel_err");
            check = new Check((String) cm.get("against"), Boolean.TRUE.equals(cm.get("bit_exact")),
                    ulp == null ? Long.MAX_VALUE : ((Number) ulp).longValue(),
                    rel == null ? Double.POSITIVE_INFINITY : ((Number) rel).doubleValue(), Boolean.TRUE.equals(cm.get("pass")));
        }
        return new BenchRow((String) m.get("op"), (String) m.get("dtype"), shape, (String) m.get("regime"), num(m.get("vendor_us")),
                num(m.get("custom_us")), num(m.get("auto_us")), (String) m.get("auto_backend"), ((Number) m.get("floor_us")).doubleValue(),
                ((Number) m.get("bytes")).longValue(), ((Number) m.get("flops")).doubleValue(), peers, spread, check);
    }

    private static Double num(Object o) {
        return o == null ? null : ((Number) o).doubleValue();
    }
}
