package dev.gapfill.examples.bench;

import dev.gapfill.core.CudaDevice;
import dev.gapfill.core.DType;
import dev.gapfill.core.Device;
import dev.gapfill.core.DeviceInfo;
import dev.gapfill.core.DevicePointer;
import dev.gapfill.core.Event;
import dev.gapfill.core.Gpu;
import dev.gapfill.core.KernelArgs;
import dev.gapfill.core.KernelFunction;
import dev.gapfill.core.KernelModule;
import dev.gapfill.core.Stream;
import dev.gapfill.core.Tensor;
import dev.gapfill.core.VendorHandles;
import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.cuda.global.cublas;
import org.bytedeco.cuda.global.cudart;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The measuring side of every benchmark: CUDA-event timing on one stream, the L2 cache flushed before
 * every repetition (a read of 4× the L2 size, which also gives the host time to enqueue the op),
 * paths interleaved in a balanced order that changes every repetition ({@link #pathAt}), medians with p10/p90 spread; and the
 * device's measured ceilings
 * (device-to-device copy bandwidth, a large bf16 GEMM) from which each case's floor is computed.
 */
public final class BenchContext implements AutoCloseable {
    /** Measured ceilings of the device. */
    public record Ceilings(double copyGBps, double bf16GemmTflops) {}

    /**
     * The time of a plain streaming read of S bytes right after the L2 flush, fitted as {@code interceptUs + S / gbps}: what
     * any kernel that has to read S bytes pays under this benchmark's method (launch, DRAM ramp and tail included). The
     * issues' floors (bytes / copy bandwidth) leave the intercept out, so a floor target is out of every kernel's reach on
     * rows whose floor is small against it; the report counts those rows. H100 at c2335e1
     * (cuda-native/dev/timing/fixed_cost.cu): 3.96 µs + S / 3115 GB/s, TLB misses ruled out.
     */
    public record ReadLine(double interceptUs, double gbps) {}

    private final Device device;
    private final CudaDevice cuda;
    private final DeviceInfo info;
    private final Stream stream;
    private final Tensor flush;
    private final Tensor sink;
    private final KernelFunction flushKernel;
    private final int warmup;
    private final int reps;
    private final boolean quick;
    private java.util.Set<DType> dtypes = java.util.Set.of();
    private final Consumer<String> progress;
    private Ceilings ceilings;
    private ReadLine readLine;
    private boolean readLineTried;
    private BiConsumer<String, List<BenchRow>> checkpoint = (op, rows) -> { };
    private final ResumedRows resumed = new ResumedRows();
    private long checkpointIntervalNanos = 15_000_000_000L;
    /** Cases timed since the current suite began ({@link #rows(String)}): the first ones get a longer warm-up. */
    private int timedCasesInSuite;
    private boolean fixedReps;

    /**
     * The first {@value #COLD_CASES} cases of a suite warm up for at least {@value #COLD_WARMUP_MS} ms (at most
     * {@value #COLD_WARMUP_MAX_ROUNDS} rounds) on top of the {@code warmup} rounds. Seen on the H100 at ec71f28 with 2
     * warm-up rounds: the depthwise sweep's first cases (before the JVM had compiled the paths' Java code) had custom
     * medians up to 37.1 µs with a p10-p90 spread of 20.6-68.3 µs where a930cb5's run of the same rows had 8.4 µs, and
     * vendor medians 1.7-5x a930cb5's over its first 12 cases (part of that may be cuDNN's timing-based algorithm
     * choice); later cases agreed run to run within a few per cent. A slow host enqueue leaves the GPU idle between
     * the start event and the work, and the events count that idle time. 150 ms was not enough: the grouped_gemm sweep
     * at c2335e1 (whose vendor rounds take 1-6 ms, so ~30 rounds fit) still had its second case's custom median at
     * 184.0 µs (p10-p90 156.8-522.2) where AUTO, running the same kernel in the same interleaved repetitions, took
     * 148.0; from the fourth case on the two agreed within 1 %. Hence a second and at least ~200 rounds.
     */
    public static final int COLD_CASES = 12;
    public static final long COLD_WARMUP_MS = 1000;
    public static final int COLD_WARMUP_MAX_ROUNDS = 2000;

    /**
     * Cases whose fastest path's median over the first {@code reps} repetitions is under {@value #SHORT_CASE_US} µs get
     * {@value #SHORT_CASE_FACTOR}× as many repetitions (rounded up to whole periods of the order, {@link #repsFor}),
     * and their medians and spread are taken over all of them. Why: at these times a path's repetitions fall into two
     * modes about 0.2 µs apart, and a median of 30 lands in either. In the bmm sweep at a34d040 (H100), over the 24 rows
     * under 10 µs where AUTO runs the custom column's kernel, AUTO − custom was 0.11 to 0.29 µs either way on every
     * row, never near 0, the p10s mostly equal; TimingBiasProbe, timing the same kernels with 201 repetitions, put the twin columns within
     * 0.07 µs (docs/benchmarks/h100/timing-bias-probe.txt). Each extra repetition costs about one flush (~70 µs of GPU).
     * What it did, measured (bmm sweeps, H100): at e240d80 AUTO − custom over those rows had a median of +0.000 µs, but
     * at ea114de the same harness gave +0.232 µs after the GPU suite and sanitizers had run on the machine, and −0.160
     * and −0.168 µs in two sweeps without them; four more sweeps of the same kernels, one right after the same checks,
     * gave −0.26 to +0.00 µs. A gap that more repetitions do not remove comes and goes with something on the machine
     * not yet found (docs/ops/bmm.md, "Three sweeps of one commit, and four more").
     */
    public static final double SHORT_CASE_US = 20.0;
    public static final int SHORT_CASE_FACTOR = 5;

    public BenchContext(Device device, int warmup, int reps, boolean quick, Consumer<String> progress) {
        this.device = device;
        this.cuda = Gpu.device(device);
        if (cuda.profiled()) {
            // the L2 flush, the floors and the file names would describe another part than the one timed
            throw new dev.gapfill.core.GapfillException("benchmarks time the hardware: not while " + cuda.realInfo().name()
                    + " is described as another part (" + dev.gapfill.core.CudaDevice.DEVICE_AS + "); run the tests instead");
        }
        this.info = cuda.info();
        this.stream = Stream.create(device);
        this.flush = Tensor.empty(device, DType.I8, stream, Math.max(4 * info.l2Bytes(), 64L << 20));
        this.flush.fillBytes(0x5a, stream);
        this.sink = Tensor.empty(device, DType.I32, stream, 1);
        this.flushKernel = KernelModule.of("harness/l2_flush").function(cuda, "l2_flush_read");
        this.warmup = warmup;
        this.reps = reps;
        this.quick = quick;
        this.progress = progress;
    }

    public Device device() { return device; }

    public DeviceInfo info() { return info; }

    /** The stream every timed path must run on. */
    public Stream stream() { return stream; }

    public boolean quick() { return quick; }

    /**
     * Limits the sweeps to cases of these dtypes ({@code bench --dtype}; empty: all). A sweep's dtype is its inputs'
     * (int8Mm's: its output's); ops whose sweep has no dtype axis (moe_route, host_overhead) run whole. The result files
     * record the filter, and the report judges targets on such a file as on a quick one: "met on these rows" at most.
     */
    public BenchContext onlyDtypes(java.util.Set<DType> only) {
        this.dtypes = java.util.Set.copyOf(only);
        return this;
    }

    /** Whether the sweeps include cases of {@code dt} (see {@link #onlyDtypes}). */
    public boolean wants(DType dt) { return dtypes.isEmpty() || dtypes.contains(dt); }

    /** The dtype filter, sorted by name; empty when the sweeps are whole. */
    public java.util.List<String> dtypeFilter() { return dtypes.stream().map(DType::name).sorted().toList(); }

    /** Whether every case gets exactly {@code reps} repetitions ({@link #fixedReps()}). */
    public boolean hasFixedReps() { return fixedReps; }

    /**
     * Every case gets exactly {@code reps} repetitions, no {@link #SHORT_CASE_FACTOR} extension: for the demo and the
     * lessons, whose text names their count (one repetition per decode step), and for TimingBiasProbe.
     */
    public BenchContext fixedReps() {
        this.fixedReps = true;
        return this;
    }

    public int reps() { return reps; }

    /** Untimed rounds before the timed ones (--warmup). */
    public int warmup() { return warmup; }

    public void progress(String msg) { progress.accept(msg); }

    /**
     * Where a sweep's rows so far go while it runs (at most once per {@code interval}), so that a sweep cut off by a
     * time limit still leaves the rows it measured; the runner writes them marked incomplete.
     */
    public void onCheckpoint(BiConsumer<String, List<BenchRow>> sink, java.time.Duration interval) {
        this.checkpoint = sink;
        this.checkpointIntervalNanos = interval.toNanos();
    }

    /**
     * Rows of an incomplete sweep of {@code op} measured earlier at the same commit on this GPU: {@link #rows} starts from
     * them and {@link #done} reports their cases, so a resumable suite runs only the rest.
     */
    public void resume(String op, List<BenchRow> rows) {
        resumed.put(op, rows);
    }

    /** How many rows of {@code op} came from an earlier run ({@link #resume}). */
    public int resumedRows(String op) {
        return resumed.rows(op).size();
    }

    /** Whether an earlier run already measured the case (see {@link ResumedRows#done}). */
    public boolean done(String op, String dtype, Object... keyValues) {
        return resumed.done(op, dtype, keyValues);
    }

    /** The row list a suite fills (starting from the resumed rows): each added row may trigger a checkpoint of the rows so far. */
    public List<BenchRow> rows(String op) {
        timedCasesInSuite = 0;
        headStartCases = 0;
        List<BenchRow> earlier = resumed.rows(op);
        return new ArrayList<>(earlier) {
            private long last = System.nanoTime();

            @Override public boolean add(BenchRow row) {
                boolean r = super.add(row);
                maybeCheckpoint();
                return r;
            }

            @Override public boolean addAll(java.util.Collection<? extends BenchRow> more) {
                boolean r = super.addAll(more);
                maybeCheckpoint();
                return r;
            }

            private void maybeCheckpoint() {
                long now = System.nanoTime();
                if (now - last >= checkpointIntervalNanos) {
                    last = now;
                    checkpoint.accept(op, List.copyOf(this));
                }
            }
        };
    }

    /** Warm-up rounds whose host enqueue times decide a path's head start ({@link #extraFlushes}). */
    static final int ENQUEUE_SAMPLES = 16;
    /** A path whose enqueue takes more than this share of one flush's GPU time gets extra flushes before its start event. */
    public static final double HEAD_START_SHARE = 0.75;
    /**
     * At most this many extra flushes (~2.3 ms of GPU time on the H100), for the longest composition that only enqueues
     * (the demo's vendor decode step, gqa's paged composition on a slow host). A path that waits for the GPU while it
     * enqueues gets none ({@link #waitsForTheGpu}): the per-expert loop and the grouped-batched call copy the offsets to
     * the host first, so what they enqueue after that copy is timed at the host's pace whatever runs before.
     */
    public static final int MAX_EXTRA_FLUSHES = 32;
    /** Extra flushes per path of the case being timed (index as in {@link #timeInterleaved}'s names). */
    private int[] headStart = new int[0];
    private double flushUs = Double.NaN;
    /** Cases of the current suite in which some path got extra flushes. */
    private int headStartCases;

    /** Cases timed in the current suite ({@link #rows(String)}) in which some path got extra flushes ({@link #extraFlushes}). */
    public int headStartCases() { return headStartCases; }

    /** Whether {@link #flushUs()} has been measured in this run. */
    public boolean flushMeasured() { return !Double.isNaN(flushUs); }

    /**
     * Extra flushes to enqueue before a path's flush and start event, so that the host has queued the path's work before
     * the GPU reaches it. The events time the GPU from the start event on; where the host takes longer to enqueue a path
     * (a vendor composition of several library calls, on a slow host) than the GPU takes for the flush before it, the GPU
     * waits between the start event and the path's first kernel and that wait is timed as the path's. 0 where the
     * enqueue (median of the warm-up) is at most {@link #HEAD_START_SHARE} of a flush, else enough flushes to cover it
     * with that margin, at most {@link #MAX_EXTRA_FLUSHES}. The flush leaves L2 in the same state however often it runs.
     */
    static int extraFlushes(double enqueueUs, double flushUs) {
        if (!(flushUs > 0) || !(enqueueUs > HEAD_START_SHARE * flushUs)) {
            return 0;
        }
        return (int) Math.min(MAX_EXTRA_FLUSHES, Math.ceil(enqueueUs / (HEAD_START_SHARE * flushUs)) - 1);
    }

    /**
     * Whether a path waits for the GPU while it enqueues: behind a backlog of {@link #backlogFlushes} flushes its enqueue
     * takes at least half a flush longer than on an idle GPU (a path that only enqueues takes the same time either way).
     */
    static boolean waitsForTheGpu(double idleUs, double behindBacklogUs, double flushUs) {
        return flushUs > 0 && behindBacklogUs - idleUs > 0.5 * flushUs;
    }

    /**
     * How many flushes to queue ahead of a path when telling whether it waits for the GPU: enough to outlast its whole
     * enqueue on an idle GPU by one flush, at most {@link #MAX_EXTRA_FLUSHES} + 2. A path that waits at any point of its
     * enqueue then waits out the rest of that backlog, at least a flush longer than its idle enqueue; behind a single
     * flush, a path that reaches its wait later than the flush ends (the demo's vendor MoE loop at T = 16: ~60 µs of host
     * work before its offsets copy, 1606 µs of enqueue in all) took only ~10 µs longer, was taken for one that only
     * enqueues, and got 29 extra flushes it then waited out. 1 where the flush time or the idle enqueue is unknown.
     */
    static int backlogFlushes(double idleUs, double flushUs) {
        if (!(flushUs > 0) || !(idleUs >= 0) || Double.isInfinite(idleUs)) {
            return 1;
        }
        return (int) Math.min(MAX_EXTRA_FLUSHES + 2, 1 + Math.ceil(idleUs / flushUs));
    }

    /** The GPU time of one {@link #flushL2} (median of 9, measured once per run), µs. */
    public double flushUs() {
        if (Double.isNaN(flushUs)) {
            double[] t = new double[9];
            try (Event a = new Event(device); Event b = new Event(device)) {
                for (int i = 0; i < t.length; i++) {
                    flushL2();  // the start event behind a flush, so the time between them is the second flush's alone
                    a.record(stream);
                    flushL2();
                    b.record(stream);
                    t[i] = 1000.0 * b.elapsedMillisSince(a);
                }
            }
            flushUs = Timing.of(t).medianUs();
            progress(String.format(java.util.Locale.ROOT, "L2 flush: %.1f us of GPU time", flushUs));
        }
        return flushUs;
    }

    /**
     * Evicts the L2 cache by reading a buffer of 4× its size, in stream order. Reading (not a memset)
     * leaves clean lines, so the timed op's first loads do not pay for write-backs of the flush.
     */
    public void flushL2() {
        flushKernel.launch(stream, 4 * info.smCount(), 1, 1, 512, 1, 1, 0,
                KernelArgs.begin().ptr(flush).i64(flush.byteSize() / 16).ptr(sink));
    }

    /**
     * Times each path {@code reps} times ({@link #repsFor}: more for short cases unless {@link #fixedReps}), interleaved (for each repetition: flush, a path, flush, the next path, ...), in
     * an order that changes every repetition ({@link #pathAt}), after {@code warmup} untimed rounds. Every path must
     * enqueue its work on {@link #stream()}.
     *
     * <p>Why the rotation: with a fixed order (vendor, peers, custom, AUTO) a path's time depended on the one before it.
     * In the grouped_gemm sweep at 6d84317 (H100), on all 16 rows where AUTO ran the per-expert loop, the very path of
     * the vendor column, AUTO measured 0.6-8.1 % slower than that column (it always followed the custom kernel, the
     * heaviest path on those rows), and on the rows where AUTO ran the custom kernel it measured 0-2.3 % faster than the
     * custom column (which always followed the grouped-batched call). The flush between paths does not reset whatever
     * state a heavy kernel leaves behind (clocks and power are the likely part). The order now follows a Williams design
     * ({@link #pathAt}): every path takes every position and follows every other path equally often.
     */
    public Map<String, Timing> timeInterleaved(LinkedHashMap<String, Runnable> paths) {
        List<String> names = new ArrayList<>(paths.keySet());
        long warmStart = System.nanoTime();
        boolean cold = timedCasesInSuite++ < COLD_CASES;
        int p = names.size();
        double flush = flushUs();
        // Each path's host enqueue time in the warm-up rounds (the last ENQUEUE_SAMPLES of them), for its head start
        // below, taken twice: on an idle GPU with an empty queue (the host's own time), and right behind a backlog of
        // flushes longer than that time (backlogFlushes). A path that waits for the GPU as it enqueues (a device-to-host
        // copy of the offsets) waits out the backlog wherever in its enqueue the wait comes; it cannot be given a head
        // start (it would wait for the extra flushes too), so it gets none.
        double[][] idleUs = new double[p][ENQUEUE_SAMPLES];
        double[][] behindUs = new double[p][ENQUEUE_SAMPLES];
        int[] backlog = new int[p];
        int rounds = 0;
        for (int w = 0; w < warmup || cold && w < COLD_WARMUP_MAX_ROUNDS
                && System.nanoTime() - warmStart < COLD_WARMUP_MS * 1_000_000L; w++) {
            for (int i = 0; i < p; i++) {
                Runnable path = paths.get(names.get(i));
                stream.synchronize();
                long t0 = System.nanoTime();
                path.run();
                idleUs[i][w % ENQUEUE_SAMPLES] = (System.nanoTime() - t0) / 1e3;
                backlog[i] = backlogFlushes(idleUs[i][w % ENQUEUE_SAMPLES], flush);
                for (int f = 0; f < backlog[i]; f++) {
                    flushL2();
                }
                long t1 = System.nanoTime();
                path.run();
                behindUs[i][w % ENQUEUE_SAMPLES] = (System.nanoTime() - t1) / 1e3;
            }
            rounds++;
        }
        stream.synchronize();
        headStart = new int[p];
        for (int i = 0; i < p && rounds > 0; i++) {
            int n = Math.min(rounds, ENQUEUE_SAMPLES);
            double idle = Timing.of(Arrays.copyOf(idleUs[i], n)).medianUs();
            double behind = Timing.of(Arrays.copyOf(behindUs[i], n)).medianUs();
            boolean waits = waitsForTheGpu(idle, behind, flush);
            headStart[i] = waits ? 0 : extraFlushes(idle, flush);
            if (headStart[i] > 0 && Arrays.stream(headStart, 0, i).allMatch(x -> x == 0)) {
                headStartCases++;
            }
            if (headStart[i] > 0 || waits && idle > HEAD_START_SHARE * flush) {
                progress(String.format(java.util.Locale.ROOT, "  %s enqueues in %.1f us (%.1f behind %d flushes of %.1f us): %s", names.get(i), idle,
                        behind, backlog[i], flush, waits ? "it waits for the GPU, no head start (its time after the wait is the host's)"
                                : headStart[i] + " extra flush" + (headStart[i] == 1 ? "" : "es") + " before its start event"));
            }
        }
        double[][] us = new double[p][reps];
        Event[] start = new Event[p];
        Event[] end = new Event[p];
        int total = reps;
        try {
            for (int i = 0; i < p; i++) {
                start[i] = new Event(device);
                end[i] = new Event(device);
            }
            timeReps(paths, names, start, end, us, 0, reps);
            double fastest = Double.POSITIVE_INFINITY;
            for (int i = 0; i < p; i++) {
                fastest = Math.min(fastest, Timing.of(us[i]).medianUs());
            }
            total = fixedReps ? reps : repsFor(fastest, reps, p);
            if (total > reps) {
                for (int i = 0; i < p; i++) {
                    us[i] = Arrays.copyOf(us[i], total);
                }
                timeReps(paths, names, start, end, us, reps, total);
            }
        } finally {
            for (int i = 0; i < p; i++) {
                if (start[i] != null) {
                    start[i].close();
                }
                if (end[i] != null) {
                    end[i].close();
                }
            }
        }
        Map<String, Timing> out = new LinkedHashMap<>();
        for (int i = 0; i < p; i++) {
            out.put(names.get(i), Timing.of(us[i]));
        }
        return out;
    }

    /** Repetitions {@code from} (inclusive) to {@code to} of {@link #timeInterleaved}, into {@code us[path][rep]}. */
    private void timeReps(LinkedHashMap<String, Runnable> paths, List<String> names, Event[] start, Event[] end, double[][] us, int from, int to) {
        int p = names.size();
        for (int r = from; r < to; r++) {
            for (int slot = 0; slot < p; slot++) {
                int i = pathAt(r, slot, p);
                for (int e = 0; e < headStart[i]; e++) {
                    flushL2();
                }
                flushL2();
                start[i].record(stream);
                paths.get(names.get(i)).run();
                end[i].record(stream);
            }
            for (int i = 0; i < p; i++) {
                us[i][r] = 1000.0 * end[i].elapsedMillisSince(start[i]);
            }
        }
    }

    /**
     * How many repetitions a case gets in all: {@code reps}, or for a case whose fastest path's median over them is under
     * {@link #SHORT_CASE_US} µs, {@link #SHORT_CASE_FACTOR}·{@code reps}; either rounded up to whole periods of
     * {@link #pathAt}'s order, so that over all of them every path takes every position, and follows every other path,
     * equally often (30 repetitions of 4 paths were 7.5 periods: some positions and predecessors twice as often as others).
     */
    static int repsFor(double fastestMedianUs, int reps, int paths) {
        int period = period(paths);
        int want = fastestMedianUs < SHORT_CASE_US ? reps * SHORT_CASE_FACTOR : reps;
        return (want + period - 1) / period * period;
    }

    /** Repetitions in one period of {@link #pathAt}'s order: the path count if even, twice it if odd. */
    static int period(int paths) {
        return paths % 2 == 0 ? paths : 2 * paths;
    }

    /**
     * The path that runs in position {@code slot} of repetition {@code rep}: the rows of a Williams design, so that over
     * one period ({@code paths} repetitions for an even count, twice that for an odd one) every path takes every position
     * equally often and, within the repetitions, follows every other path equally often (once per period for an even
     * count, twice for an odd one) and never itself. Row 0 is 0, p−1, 1, p−2, 2, ...; row r adds r (mod p); the rows
     * of the second half of an odd period are reversed.
     */
    static int pathAt(int rep, int slot, int paths) {
        int row = rep % period(paths);
        int j = row < paths ? slot : paths - 1 - slot;
        int base = j % 2 == 0 ? j / 2 : paths - (j + 1) / 2;
        return (base + row) % paths;
    }

    /** The device's ceilings, measured once per run. */
    public Ceilings ceilings() {
        if (ceilings == null) {
            ceilings = new Ceilings(measureCopyGBps(), measureBf16Tflops());
            progress(String.format("ceilings: copy %.0f GB/s, bf16 GEMM %.0f TFLOP/s", ceilings.copyGBps(), ceilings.bf16GemmTflops()));
            readLine();
        }
        return ceilings;
    }

    /**
     * The read-after-flush line ({@link ReadLine}), measured once per run with the flush kernel itself reading the first
     * S bytes of the flush buffer (bytes the flush just pushed out of L2) for three sizes; null if it could not be
     * measured (the run goes on without it).
     */
    public ReadLine readLine() {
        if (!readLineTried) {
            readLineTried = true;
            try {
                readLine = measureReadLine();
                progress(String.format("read after the L2 flush: %.2f us + bytes / %.0f GB/s", readLine.interceptUs(), readLine.gbps()));
            } catch (RuntimeException e) {
                progress("read-after-flush line not measured: " + e.getMessage());
            }
        }
        return readLine;
    }

    private ReadLine measureReadLine() {
        // bytes the flush leaves out of L2: everything but its last ~L2 bytes (kept a 2x margin)
        long cold = flush.byteSize() - 2 * info.l2Bytes();
        long top = Math.min(128L << 20, cold) / 16 * 16;
        if (top < (8L << 20)) {
            throw new IllegalStateException("flush buffer of " + flush.byteSize() + " bytes leaves less than 8 MiB cold");
        }
        long[] sizes = {top / 16 / 16 * 16, top / 4 / 16 * 16, top};
        double[] us = new double[sizes.length];
        for (int i = 0; i < sizes.length; i++) {
            long n16 = sizes[i] / 16;
            LinkedHashMap<String, Runnable> p = new LinkedHashMap<>();
            p.put("read", () -> flushKernel.launch(stream, 4 * info.smCount(), 1, 1, 512, 1, 1, 0,
                    KernelArgs.begin().ptr(flush).i64(n16).ptr(sink)));
            us[i] = timeInterleaved(p).get("read").medianUs();
        }
        return fitReadLine(sizes, us);
    }

    /** Least-squares line t = c + S / bw through (S bytes, t µs); bw in GB/s. */
    static ReadLine fitReadLine(long[] bytes, double[] us) {
        int n = bytes.length;
        double mx = 0;
        double my = 0;
        for (int i = 0; i < n; i++) {
            mx += bytes[i] / 1e3;  // x in kB, so the slope is µs per kB = 1 / (GB/s)
            my += us[i];
        }
        mx /= n;
        my /= n;
        double sxy = 0;
        double sxx = 0;
        for (int i = 0; i < n; i++) {
            double dx = bytes[i] / 1e3 - mx;
            sxy += dx * (us[i] - my);
            sxx += dx * dx;
        }
        double slope = sxy / sxx;
        return new ReadLine(my - slope * mx, 1.0 / slope);
    }

    /** max(bytes / copy bandwidth, flops / rate) in µs; {@code flopRateTflops} is the unit that does the math. */
    public double floorUs(long bytes, double flops, double flopRateTflops) {
        double mem = bytes / (ceilings().copyGBps() * 1e3);
        double math = flopRateTflops > 0 ? flops / (flopRateTflops * 1e6) : 0;
        return Math.max(mem, math);
    }

    /** Floor with the measured bf16 tensor-core rate as the math ceiling. */
    public double floorUs(long bytes, double flops) {
        return floorUs(bytes, flops, ceilings().bf16GemmTflops());
    }

    private double measureCopyGBps() {
        long bytes = 1L << 30;
        try (Tensor a = Tensor.empty(device, DType.I8, stream, bytes); Tensor b = Tensor.empty(device, DType.I8, stream, bytes)) {
            a.fillBytes(1, stream);
            LinkedHashMap<String, Runnable> p = new LinkedHashMap<>();
            p.put("copy", () -> cuda.check(cudart.cudaMemcpyAsync(new DevicePointer(b.address()), new DevicePointer(a.address()),
                    bytes, cudart.cudaMemcpyDeviceToDevice, stream.handle()), "cudaMemcpyAsync(D2D)"));
            double us = timeInterleaved(p).get("copy").medianUs();
            return 2.0 * bytes / (us * 1e3);
        }
    }

    private double measureBf16Tflops() {
        int n = 8192;
        java.util.Random rnd = new java.util.Random(7);
        float[] data = new float[n * n];
        for (int i = 0; i < data.length; i++) {
            data[i] = rnd.nextFloat() - 0.5f;
        }
        try (Tensor a = Tensor.of(device, DType.BF16, data, n, n); Tensor b = Tensor.of(device, DType.BF16, data, n, n);
             Tensor c = Tensor.empty(device, DType.BF16, stream, n, n);
             FloatPointer one = new FloatPointer(1f); FloatPointer zero = new FloatPointer(0f)) {
            LinkedHashMap<String, Runnable> p = new LinkedHashMap<>();
            p.put("gemm", () -> VendorHandles.checkBlas(cuda, cublas.cublasGemmEx(VendorHandles.cublas(stream), cublas.CUBLAS_OP_N,
                    cublas.CUBLAS_OP_N, n, n, n, one, new DevicePointer(a.address()), cudart.CUDA_R_16BF, n,
                    new DevicePointer(b.address()), cudart.CUDA_R_16BF, n, zero, new DevicePointer(c.address()), cudart.CUDA_R_16BF, n,
                    cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT), "cublasGemmEx(bf16 8192^3)"));
            // the fast tail (p10), not the median: the rate is a ceiling, and the medians of eight H100 runs spread from 591
            // to 781 TFLOP/s (clocks under a dense GEMM's power), so that in one run the vendor beat a math floor (grouped
            // E = 8, T = 8192 down at 649 TFLOP/s against a 614 floor rate; floors audit, forty-ninth session)
            double us = timeInterleaved(p).get("gemm").p10Us();
            return 2.0 * n * n * (double) n / (us * 1e6);
        }
    }

    @Override public void close() {
        stream.synchronize();
        flush.close();
        sink.close();
        stream.close();
    }
}
