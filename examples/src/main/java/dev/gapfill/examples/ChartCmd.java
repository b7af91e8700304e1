package dev.gapfill.examples;

import dev.gapfill.examples.bench.JsonReader;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

/**
 * Renders {@code <op>.png} beside each benchmark JSON: speedup of custom over vendor and fraction of
 * the floor reached, for every row of the sweep (one bar per row up to {@link #MAX_BAR_ROWS} rows; above
 * that, each ratio's distribution over the rows, sorted, so a 1068-row sweep stays a readable image of a
 * few hundred KB instead of a 23,000-pixel strip; the per-row values are in {@code <op>.md}). Needs no GPU
 * (run it where the JSON was copied).
 */
@Command(name = "chart", description = "Render <op>.png charts from docs/benchmarks/<gpu>/<op>.json (no GPU needed).")
final class ChartCmd implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;
    @Parameters(arity = "0..*", description = "benchmark JSON files or folders (default: docs/benchmarks)")
    List<Path> inputs = new ArrayList<>(List.of(Path.of("docs", "benchmarks")));

    @Override public Integer call() throws Exception {
        System.setProperty("java.awt.headless", "true");
        List<Path> files = new ArrayList<>();
        for (Path p : inputs) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> w = Files.walk(p)) {
                    w.filter(f -> f.toString().endsWith(".json")).sorted().forEach(files::add);
                }
            } else {
                files.add(p);
            }
        }
        for (Path f : files) {
            Path png = Path.of(f.toString().replaceAll("\\.json$", ".png"));
            render(f, png);
            spec.commandLine().getOut().println("chart: " + png);
        }
        spec.commandLine().getOut().flush();
        return 0;
    }

    @SuppressWarnings("unchecked")
    static void render(Path json, Path png) throws Exception {
        Map<String, Object> doc = (Map<String, Object>) JsonReader.parse(Files.readString(json, StandardCharsets.UTF_8));
        List<Map<String, Object>> rows = (List<Map<String, Object>>) doc.get("rows");
        List<String> labels = new ArrayList<>();
        List<Double> speedup = new ArrayList<>();
        List<Double> floorFrac = new ArrayList<>();
        int i = 0;
        for (Map<String, Object> r : rows) {
            String op = (String) r.get("op");
            Double v = op == null ? (Double) r.get("vendor_us") : dev.gapfill.examples.bench.BenchRow.fasterVendorUs(op, r);
            Double c = (Double) r.get("custom_us");
            Double a = (Double) r.get("auto_us");
            Double fl = (Double) r.get("floor_us");
            labels.add(label(++i, r));
            // a value the row lacks (no custom path, no floor) is left out of the chart, never drawn as a 0 ratio
            speedup.add(ratio(v, c));
            floorFrac.add(ratio(fl, c != null ? c : a));
        }
        String title = json.getFileName() + " on " + doc.get("gpu") + " @ " + shortCommit(doc.get("commit"), 8);
        if (rows.size() > MAX_BAR_ROWS) {
            renderDistribution(title, speedup, floorFrac, png);
            return;
        }
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(1100, 22 * rows.size())).height(640)
                .title(title)
                .xAxisTitle("case").yAxisTitle("ratio").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);  // never over a bar
        chart.getStyler().setXAxisLabelRotation(90);
        chart.getStyler().setOverlapped(false);
        chart.addSeries("speedup custom / vendor", labels, speedup);
        chart.addSeries("floor / custom (fraction of floor)", labels, floorFrac);
        BitmapEncoder.saveBitmap(chart, png.toString().replaceAll("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }

    /** Row {@code i}'s label: its number, dtype and shape, cut to {@link #MAX_LABEL} characters. */
    @SuppressWarnings("unchecked")
    static String label(int i, Map<String, Object> row) {
        StringBuilder sb = new StringBuilder(String.valueOf(i)).append(' ').append(row.get("dtype"));
        ((Map<String, Object>) row.get("shape")).forEach((k, x) -> sb.append(' ').append(k).append('=').append(fmt(x)));
        // long shapes (the demo's rows name a whole layer) are cut, so the labels leave the plot its height
        return sb.length() > MAX_LABEL ? sb.substring(0, MAX_LABEL - 1) + "\u2026" : sb.toString();
    }

    /** num / den, or null (not drawn) where the row lacks either. */
    static Double ratio(Double num, Double den) {
        // a floor of 0 is "no floor" (host_overhead's rows: host time has none), not a 0 % fraction
        return num != null && den != null && num > 0 && den > 0 ? num / den : null;
    }

    /** Characters of a row's label on the bar chart; the whole shape is in the row's line of {@code <op>.md}. */
    static final int MAX_LABEL = 44;

    /** Rows above which the chart shows distributions instead of one bar pair per row. */
    static final int MAX_BAR_ROWS = 200;

    /** Each ratio sorted ascending against the fraction of rows (0..1), with the 1.0 line for reference. */
    private static void renderDistribution(String title, List<Double> speedup, List<Double> floorFrac, Path png) throws Exception {
        XYChart chart = new XYChartBuilder().width(1400).height(620)
                .title(title + " (" + speedup.size() + " rows, each ratio sorted, log scale; per-row values in the .md)")
                .xAxisTitle("fraction of rows at or below the ratio").yAxisTitle("ratio").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setMarkerSize(3);
        chart.getStyler().setYAxisLogarithmic(true);  // speed-ups up to ~30 and floor fractions below 1 on one axis
        chart.getStyler().setXAxisDecimalPattern("0.0");
        addSorted(chart, "speedup custom / vendor", speedup);
        addSorted(chart, "floor / custom (fraction of floor)", floorFrac);
        chart.addSeries("1.0", new double[] {0, 1}, new double[] {1, 1});
        BitmapEncoder.saveBitmap(chart, png.toString().replaceAll("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void addSorted(XYChart chart, String name, List<Double> values) {
        double[] y = values.stream().filter(java.util.Objects::nonNull).mapToDouble(Double::doubleValue).sorted().toArray();
        if (y.length == 0) {
            return;  // no row has this ratio
        }
        double[] x = new double[y.length];
        for (int i = 0; i < y.length; i++) {
            x[i] = y.length == 1 ? 1 : (double) i / (y.length - 1);
        }
        chart.addSeries(name, x, y);
    }

    /** A JSON value as text, whole-number doubles (as the reader gives every number) without ".0". */
    static String fmt(Object x) {
        if (x instanceof Double && ((Double) x) == Math.rint((Double) x)) {
            return String.valueOf(((Double) x).longValue());
        }
        return String.valueOf(x);
    }

    /** The first {@code n} characters of a commit id, or all of it when shorter ("unknown" where none was set). */
    static String shortCommit(Object commit, int n) {
        String c = String.valueOf(commit);
        String dirty = c.endsWith("-dirty") ? "-dirty" : "";  // a bundle built from a modified tree (scripts/bundle-run.sh)
        c = c.substring(0, c.length() - dirty.length());
        return c.substring(0, Math.min(n, c.length())) + dirty;
    }
}
