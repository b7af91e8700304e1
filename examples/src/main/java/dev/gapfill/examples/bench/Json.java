package dev.gapfill.examples.bench;

import java.util.Collection;
import java.util.Map;

/** Minimal JSON writer for benchmark and validation files (maps, lists, arrays, numbers, strings, null). */
public final class Json {
    private Json() {}

    public static String write(Object o) {
        StringBuilder sb = new StringBuilder();
        write(sb, o, 0);
        return sb.append('\n').toString();
    }

    private static void write(StringBuilder sb, Object o, int indent) {
        if (o == null) {
            sb.append("null");
        } else if (o instanceof String) {
            quote(sb, (String) o);
        } else if (o instanceof Boolean) {
            sb.append(o);
        } else if (o instanceof Double || o instanceof Float) {
            double d = ((Number) o).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                sb.append("null");
            } else if (d == Math.rint(d) && Math.abs(d) < 1e15) {
                sb.append((long) d);
            } else {
                sb.append(String.format(java.util.Locale.ROOT, "%.6g", d));
            }
        } else if (o instanceof Number) {
            sb.append(o);
        } else if (o instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) o;
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "" : ",");
                first = false;
                newline(sb, indent + 1);
                quote(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                write(sb, e.getValue(), indent + 1);
            }
            if (!m.isEmpty()) {
                newline(sb, indent);
            }
            sb.append('}');
        } else if (o instanceof Collection) {
            sb.append('[');
            boolean first = true;
            for (Object x : (Collection<?>) o) {
                sb.append(first ? "" : ",");
                first = false;
                newline(sb, indent + 1);
                write(sb, x, indent + 1);
            }
            if (!((Collection<?>) o).isEmpty()) {
                newline(sb, indent);
            }
            sb.append(']');
        } else if (o instanceof double[]) {
            double[] a = (double[]) o;
            sb.append('[');
            for (int i = 0; i < a.length; i++) {
                sb.append(i == 0 ? "" : ", ");
                write(sb, a[i], indent);
            }
            sb.append(']');
        } else {
            quote(sb, o.toString());
        }
    }

    private static void newline(StringBuilder sb, int indent) {
        sb.append('\n');
        for (int i = 0; i < indent; i++) {
            sb.append("  ");
        }
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
