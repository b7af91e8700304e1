package dev.gapfill.examples;

import dev.gapfill.examples.bench.JsonReader;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
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
 * the floor reached, for every row of the sweep. Needs no GPU (run it where the JSON was copied).
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
            Double v = (Double) r.get("vendor_us");
            Double c = (Double) r.get("custom_us");
            Double a = (Double) r.get("auto_us");
            Double fl = (Double) r.get("floor_us");
            StringBuilder sb = new StringBuilder(String.valueOf(++i)).append(' ').append(r.get("dtype"));
            ((Map<String, Object>) r.get("shape")).forEach((k, x) -> sb.append(' ').append(k).append('=').append(fmt(x)));
            labels.add(sb.toString());
            speedup.add(v != null && c != null ? v / c : 0.0);
            Double t = c != null ? c : a;
            floorFrac.add(t != null && fl != null ? fl / t : 0.0);
        }
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(900, 22 * rows.size())).height(560)
                .title(json.getFileName() + " on " + doc.get("gpu") + " @ " + String.valueOf(doc.get("commit")).substring(0, 8))
                .xAxisTitle("case").yAxisTitle("ratio").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setXAxisLabelRotation(90);
        chart.getStyler().setOverlapped(false);
        chart.addSeries("speedup custom / vendor", labels, speedup);
        chart.addSeries("floor / custom (fraction of floor)", labels, floorFrac);
        BitmapEncoder.saveBitmap(chart, png.toString().replaceAll("\\.png$", ""), BitmapEncoder.BitmapFormat.PNG);
    }

    private static String fmt(Object x) {
        if (x instanceof Double && ((Double) x) == Math.rint((Double) x)) {
            return String.valueOf(((Double) x).longValue());
        }
        return String.valueOf(x);
    }
}
