// Standalone device harness for the bmm kernels: bmm_small.cu (one load/compute/store pass per
// block, the launch plan of BmmHeuristics.plan) and bmm_stream.cu (persistent, cp.async ring of
// stages, the plan of BmmHeuristics.streamPlan plus alternative (mats, stages) configurations), against
// cuBLAS (cublasGemmStridedBatchedEx; one folded cublasGemmEx for a shared B with A as stored, as
// dev.gapfill.ops.Bmm does).
//
// Correctness: inputs drawn on the device from a hash (fresh seed per case), outputs poisoned with
// 0xFF before every run, every element of every variant compared on the device with an fp64
// reference computed on the device (|out - ref| <= u_out·|ref| + growth·γ_k·Σ|a·b| + half the output's
// subnormal spacing, growth 2 for tensor cores, 1 for F32; F32 custom must equal the in-order fmaf sum bit for bit). The device
// reference itself is checked against a CPU fp64 computation on the first, middle and last matrix.
// Timing: CUDA events around each launch, a 256 MiB memset before every repetition (L2 flush),
// vendor and every custom configuration interleaved, median of REPS.
//
// Build (device, from cuda-native/dev/bmm): nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I. \
//   -I../../src/main/cuda/common -I../../src/main/cuda/bmm bench_bmm.cu -lcublas -o bench
// Run: ./bench corr   (odd shapes, layouts, offsets, forced small grids; exit 1 on any failure)
//      ./bench sweep  (the issue's sweep; BMM_SKIP=stream or small leaves a kernel out)
#include "bmm_small.cu"
#include "bmm_frag.cu"         // m, n, k <= 16 loaded straight into mma fragments (kind 5), bmm_frag32 up to 32 (kind 6)
#include "bmm_stream.cu"
#include "bmm_team.cu"
#include "bmm_team_flat.cu"  // experiment: bmm_team8 with 16-byte global accesses through a flat shared buffer (cb = 9)
#include "bmm_wg.cu"         // src/main/cuda/bmm: wgmma per matrix on sm_90a (kind 7; the dev variant with three C modes is in git at fc2e312)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dev_harness.h"  // ../common: CK, l2_flush_read (the flush by a read: it leaves clean lines in L2, so the timed
                          // kernel pays no write-back of the flush's data, which a memset flush leaves dirty), copy_rate_gbps
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { printf("cuBLAS %d at %s:%d\n", (int)s_, __FILE__, __LINE__); exit(2); } } while (0)

enum Dt { F16, BF16, F32 };
static const char* dtname[] = {"f16", "bf16", "f32"};
static int dtbytes(Dt d) { return d == F32 ? 4 : 2; }
static int rupi(long x, long m) { return (int)((x + m - 1) / m * m); }
static long cdiv(long a, long b) { return (a + b - 1) / b; }

struct Dev { int sms; long smem_sm, smem_optin; };

// ---------------------------------------------------------------- plans (mirrors of BmmHeuristics)
static long operand_elems(Dt d, int rows, int cols) {
    int P = d == F32 ? 4 : 16, V = 16 / dtbytes(d);
    int rp = rupi(rows, P), cp = rupi(cols, P);
    int stride = cp + (((cp / V) % 2 == 0) ? V : 0);
    return (long)rp * stride;
}
struct Cfg { int kind; int mats, threads, grid, stages; long smem; int W = 1, direct = 0, tpb = 1, cb = 16; };  // kind 0 vendor, 1 small, 2 stream, 3 team, 5 frag (4 was the widened-FFMA experiment, results-h100-c9ae2e4-hffma.txt)
// BmmHeuristics.plan (bmm_small)
static Cfg small_plan(Dt d, int batch, int m, int n, int k, bool ta, bool tb, bool shared, const Dev& dv) {
    long a = operand_elems(d, ta ? k : m, ta ? m : k) * dtbytes(d);
    long b = operand_elems(d, tb ? n : k, tb ? k : n) * dtbytes(d);
    long units = d == F32 ? cdiv(m, 4) * cdiv(n, 4) : cdiv(m, 16) * cdiv(n, 16);
    long target = d == F32 ? 512 : 16;
    long g = std::max(1L, target / units);
    g = std::min(g, std::max(1L, (long)batch / (2L * dv.sms)));
    while (g > 1 && g * a + (shared ? 1 : g) * b > 48 * 1024) g--;
    Cfg p{1, (int)g, 0, 0, 1, 0};
    long work = g * units;
    p.threads = d == F32 ? (int)std::min(256L, std::max(32L, (work + 31) / 32 * 32)) : (int)(32 * std::min(8L, work));
    p.grid = (int)cdiv(batch, g);
    p.smem = g * a + (shared ? 1 : g) * b;
    return p;
}
// bmm_frag: `mpw` matrices per warp, `threads` per block, a grid covering the batch once (no dynamic shared memory).
// F32 (bmm_frag_f32_nn_s<S>_w<MPW>): A and B as stored only; S = 8 where m, n, k <= 8 (1, 2 or 4 per warp), else 16 (1 or 2).
static bool frag_ok(Dt d, int m, int n, int k, bool ta = false, bool tb = false) {
    return m <= 16 && n <= 16 && k <= 16 && (d != F32 || (!ta && !tb));
}
static bool frag_f32_mpw_ok(int m, int n, int k, int mpw) { return std::max({m, n, k}) <= 8 || mpw <= 2; }
// bmm_frag32 (kind 6): F16/BF16 with m, n, k <= 32, W warps per matrix (1, 2 or 4), `threads` per block.
static bool frag32_ok(Dt d, int m, int n, int k) { return d != F32 && std::max({m, n, k}) <= 32; }
static Cfg frag32_plan(int batch, int W, int threads) {
    Cfg p{6, W, threads, 0, 1, 0};
    p.grid = (int)cdiv((long)batch * W, threads / 32);
    return p;
}
static Cfg frag_plan(int batch, int mpw, int threads) {
    Cfg p{5, mpw, threads, 0, 1, 0};
    p.grid = (int)cdiv(cdiv(batch, mpw), threads / 32);
    return p;
}
// The default, as BmmHeuristics.fragPlan: one matrix per warp below 32 warps per SM, else four; 128 threads.
static Cfg frag_default(int batch, const Dev& dv) {
    long warps_per_sm = cdiv(batch, dv.sms);
    return frag_plan(batch, warps_per_sm >= 32 ? 4 : 1, 128);  // BmmHeuristics.fragPlan (from results-h100-dcc8ffc-frag.txt)
}
// BmmHeuristics.streamPlan (bmm_stream); g_force / s_force > 0 override mats / stages (alternatives).
static const long STREAM_REGS = 128;  // __launch_bounds__(256, 2): at most 128 registers per thread
static Cfg stream_plan(Dt d, int batch, int m, int n, int k, bool ta, bool tb, bool shared, const Dev& dv, int g_force = 0, int s_force = 0) {
    const int sz = dtbytes(d);
    long a = operand_elems(d, ta ? k : m, ta ? m : k) * sz;
    long b = operand_elems(d, tb ? n : k, tb ? k : n) * sz;
    long c = operand_elems(d, m, n) * sz;
    long units = d == F32 ? cdiv(m, 4) * cdiv(n, 4) : cdiv(cdiv(m, 16), 2) * cdiv(cdiv(n, 16), 2);
    long target = d == F32 ? 256 : 8;  // one 4x4 tile per thread / one 32x32 tile per warp of a full block
    long g = std::max(1L, target / units);
    g = std::min(g, std::max(1L, (long)batch / (2L * dv.sms)));
    if (g_force > 0) g = g_force;
    g = std::min(g, (long)batch);
    long stage, extra, s;
    for (;;) {
        stage = g * (a + (shared ? 0 : b));
        extra = g * c + (shared ? b : 0);
        long two_per_sm = dv.smem_sm / 2 - 1024;
        s = std::min(4L, (two_per_sm - extra) / stage);
        if (s < 2) s = std::min(3L, (dv.smem_optin - extra) / stage);
        if (s_force > 0) s = s_force;
        if (s >= 2 && s * stage + extra <= dv.smem_optin) break;
        if (g == 1) return Cfg{-1, 0, 0, 0, 0, 0};
        g--;
    }
    Cfg p{2, (int)g, 0, 0, (int)s, s * stage + extra};
    long work = g * units;
    p.threads = d == F32 ? (int)std::min(256L, std::max(32L, (work + 31) / 32 * 32)) : (int)(32 * std::min(8L, work));
    long per_sm = std::min({dv.smem_sm / (p.smem + 1024), 2048L / p.threads, 65536L / (p.threads * STREAM_REGS), 32L});
    long groups = cdiv(batch, g);
    long resident = std::max(1L, per_sm) * dv.sms;
    long iters = cdiv(groups, resident);
    p.grid = (int)cdiv(groups, iters);
    return p;
}

typedef void (*KernS)(const void*, const void*, void*, int, int, int, int, int, int);
typedef void (*KernP)(const void*, const void*, void*, int, int, int, int, int, int, int);
static KernS kern_small(Dt d, bool ta, bool tb) {
    static KernS ks[3][4] = {
        {(KernS)bmm_small_f16_nn, (KernS)bmm_small_f16_nt, (KernS)bmm_small_f16_tn, (KernS)bmm_small_f16_tt},
        {(KernS)bmm_small_bf16_nn, (KernS)bmm_small_bf16_nt, (KernS)bmm_small_bf16_tn, (KernS)bmm_small_bf16_tt},
        {(KernS)bmm_small_f32_nn, (KernS)bmm_small_f32_nt, (KernS)bmm_small_f32_tn, (KernS)bmm_small_f32_tt}};
    return ks[d][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static KernS kern_frag(Dt d, bool ta, bool tb, int m = 16, int n = 16, int k = 16, int mpw = 1) {
    if (d == F32) {
        static KernS s8[3] = {(KernS)bmm_frag_f32_nn_s8_w1, (KernS)bmm_frag_f32_nn_s8_w2, (KernS)bmm_frag_f32_nn_s8_w4};
        static KernS s16[2] = {(KernS)bmm_frag_f32_nn_s16_w1, (KernS)bmm_frag_f32_nn_s16_w2};
        return std::max({m, n, k}) <= 8 ? s8[mpw == 4 ? 2 : mpw - 1] : s16[mpw - 1];
    }
    static KernS ks[2][4] = {
        {(KernS)bmm_frag_f16_nn, (KernS)bmm_frag_f16_nt, (KernS)bmm_frag_f16_tn, (KernS)bmm_frag_f16_tt},
        {(KernS)bmm_frag_bf16_nn, (KernS)bmm_frag_bf16_nt, (KernS)bmm_frag_bf16_tn, (KernS)bmm_frag_bf16_tt}};
    return ks[d == BF16 ? 1 : 0][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static KernS kern_frag32(Dt d, bool ta, bool tb, int W) {
#define F32K(dt, l) {(KernS)bmm_frag32_##dt##_##l##_w1, (KernS)bmm_frag32_##dt##_##l##_w2, (KernS)bmm_frag32_##dt##_##l##_w4}
    static KernS ks[2][4][3] = {{F32K(f16, nn), F32K(f16, nt), F32K(f16, tn), F32K(f16, tt)},
                                {F32K(bf16, nn), F32K(bf16, nt), F32K(bf16, tn), F32K(bf16, tt)}};
#undef F32K
    return ks[d == BF16 ? 1 : 0][(ta ? 2 : 0) + (tb ? 1 : 0)][W == 4 ? 2 : W - 1];
}
static KernP kern_stream(Dt d, bool ta, bool tb) {
    static KernP ks[3][4] = {
        {(KernP)bmm_stream_f16_nn, (KernP)bmm_stream_f16_nt, (KernP)bmm_stream_f16_tn, (KernP)bmm_stream_f16_tt},
        {(KernP)bmm_stream_bf16_nn, (KernP)bmm_stream_bf16_nt, (KernP)bmm_stream_bf16_tn, (KernP)bmm_stream_bf16_tt},
        {(KernP)bmm_stream_f32_nn, (KernP)bmm_stream_f32_nt, (KernP)bmm_stream_f32_tn, (KernP)bmm_stream_f32_tt}};
    return ks[d][(ta ? 2 : 0) + (tb ? 1 : 0)];
}

typedef void (*KernT)(const void*, const void*, void*, int, int, int, int, int, int, int, int);
static KernT kern_team(Dt d, bool ta, bool tb) {
    static KernT ks[3][4] = {
        {(KernT)bmm_team_f16_nn, (KernT)bmm_team_f16_nt, (KernT)bmm_team_f16_tn, (KernT)bmm_team_f16_tt},
        {(KernT)bmm_team_bf16_nn, (KernT)bmm_team_bf16_nt, (KernT)bmm_team_bf16_tn, (KernT)bmm_team_bf16_tt},
        {(KernT)bmm_team_f32_nn, (KernT)bmm_team_f32_nt, (KernT)bmm_team_f32_tn, (KernT)bmm_team_f32_tt}};
    return ks[d][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static KernT kern_team8(Dt d, bool ta, bool tb) {  // 8-byte chunks, F16/BF16 only
    static KernT ks[2][4] = {
        {(KernT)bmm_team8_f16_nn, (KernT)bmm_team8_f16_nt, (KernT)bmm_team8_f16_tn, (KernT)bmm_team8_f16_tt},
        {(KernT)bmm_team8_bf16_nn, (KernT)bmm_team8_bf16_nt, (KernT)bmm_team8_bf16_tn, (KernT)bmm_team8_bf16_tt}};
    return ks[d == BF16 ? 1 : 0][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static KernT kern_team8f(Dt d, bool ta, bool tb) {  // bmm_team_flat.cu, F16/BF16 only
    static KernT ks[2][4] = {
        {(KernT)bmm_team8f_f16_nn, (KernT)bmm_team8f_f16_nt, (KernT)bmm_team8f_f16_tn, (KernT)bmm_team8f_f16_tt},
        {(KernT)bmm_team8f_bf16_nn, (KernT)bmm_team8f_bf16_nt, (KernT)bmm_team8f_bf16_tn, (KernT)bmm_team8f_bf16_tt}};
    return ks[d == BF16 ? 1 : 0][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static KernT kern_team_cb(Dt d, bool ta, bool tb, int cb) { return cb == 9 ? kern_team8f(d, ta, tb) : cb == 8 ? kern_team8(d, ta, tb) : kern_team(d, ta, tb); }
typedef void (*KernW)(const void*, const void*, void*, int, int, int, int);
static KernW kern_wg(Dt d, bool ta, bool tb) {  // bmm_wg.cu, F16/BF16, sm_90a
    static KernW ks[2][4] = {{(KernW)bmm_wg_f16_nn, (KernW)bmm_wg_f16_nt, (KernW)bmm_wg_f16_tn, (KernW)bmm_wg_f16_tt},
                             {(KernW)bmm_wg_bf16_nn, (KernW)bmm_wg_bf16_nt, (KernW)bmm_wg_bf16_tn, (KernW)bmm_wg_bf16_tt}};
    return ks[d == BF16 ? 1 : 0][(ta ? 2 : 0) + (tb ? 1 : 0)];
}
static bool wg_ok(Dt d, int m, int n, int k, bool ta, bool tb, bool shared) {  // BmmHeuristics.wgTakes
    if (d == F32 || shared || m > 128 || n > 128 || k > 128) return false;
    return (ta ? m : k) % 4 == 0 && (tb ? k : n) % 4 == 0 && n % 4 == 0 && (m * k) % 8 == 0 && (k * n) % 8 == 0 && (m * n) % 8 == 0;
}
// bmm_wg's plan: 256 threads, persistent grid from the occupancy API
static Cfg wg_plan(Dt d, int batch, int m, int n, int k, bool ta, bool tb, const Dev& dv, int max_grid = 0) {  // BmmHeuristics.wgPlan
    long fl = ((long)m * k + (long)k * n) * 2;
    Cfg p{7, 1, 256, 0, 1, 1024 + 2 * 32768 + fl, 1, 0, 1};
    int occ = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern_wg(d, ta, tb), p.threads, p.smem));
    if (occ < 1) return Cfg{-1, 0, 0, 0, 0, 0};
    p.grid = (int)std::min<long>(batch, (long)occ * dv.sms);
    if (max_grid > 0) p.grid = std::min(p.grid, max_grid);
    return p;
}
// bmm_team8f (flat loader): 8-byte rows and every group's ranges 16-byte multiples
static bool flat_ok(Dt d, int m, int n, int k, bool ta, bool tb, bool shared, int direct) {
    if (d == F32 || shared) return false;
    return (ta ? m : k) % 4 == 0 && (tb ? k : n) % 4 == 0 && n % 4 == 0 && (m * k) % 8 == 0 && (k * n) % 8 == 0 && (direct || (m * n) % 8 == 0);
}
// bmm_team: does it take the problem (rows of A, B, C as stored a multiple of cb bytes, B not shared; cb = 8 for
// bmm_team8, F16/BF16 only)? Pointers are checked at launch.
static bool team_ok(Dt d, int m, int n, int k, bool ta, bool tb, bool shared, int cb = 16) {
    if (cb == 8 && d == F32) return false;
    const int V = cb / dtbytes(d);
    return !shared && (ta ? m : k) % V == 0 && (tb ? k : n) % V == 0 && n % V == 0;
}
// bmm_team's plan (BmmHeuristics.teamPlan): W warps per team, nm matrices per group, stages, C staged or
// direct; teams per block as many as fit 8 warps (at most 4) and the opt-in shared memory; persistent grid
// from the occupancy API (BmmHeuristics: the same bound computed from shared memory, threads and 128
// registers). W, nm, stages <= 0: the shipped rule (mirrors teamPlan at 7666243). Returns kind -1 when it does not fit. (At 4de5ecd
// the default was 3 stages where 8 warps per SM still fit, C always staged; the shipped rule, 2 stages
// and direct C for F32, came from that run's alternatives.)
static Cfg team_plan(Dt d, int batch, int m, int n, int k, bool ta, bool tb, const Dev& dv, int W, int nm, int stages, int direct, int cb = 16) {
    const int sz = dtbytes(d);
    long a = operand_elems(d, ta ? k : m, ta ? m : k) * sz;
    long b = operand_elems(d, tb ? n : k, tb ? k : n) * sz;
    long c = operand_elems(d, m, n) * sz;
    long real = (long)(m * k + k * n + m * n) * sz;  // bytes a matrix moves
    long units = d == F32 ? cdiv(m, 4) * cdiv(n, 4) : cdiv(m, 32) * cdiv(n, 32);  // thread tiles (F32) / warp tiles
    if (nm <= 0) nm = (int)std::max(1L, std::min(16L, 4096L / real));           // >= ~4 KB moved per group
    nm = (int)std::min<long>(nm, batch);
    // F16/BF16 above 32 (since 7666243): u warps up to u = 4, 8 warps above, u = ceil(m/32)·ceil(n/32) (runs 4de5ecd,
    // ab53e1c and e4b8c63: w8 ahead of w4 at u = 6, 8 and 9); 2 stages everywhere since run f673558 had 2 ahead of 3 at every u <= 4 row.
    const bool mid = d != F32 && std::max({m, n, k}) > 32;
    const bool shipped_width = W <= 0;
    if (W <= 0) W = d == F32 ? (int)std::min(4L, std::max(1L, cdiv(nm * units, 64)))
                  : mid ? (units > 4 ? 8 : (int)std::min(4L, units)) : (int)std::min(4L, std::max(1L, nm * units / 4));
    // two warps at u = 4 with m, n, k <= 48 from 24 matrices per SM (run 998b26e: 40^3 and 48^3 at 8192, 48^3 at 4096 in e4b8c63)
    if (shipped_width && mid && units == 4 && std::max({m, n, k}) <= 48 && batch >= 24L * dv.sms) W = 2;
    if (stages <= 0) stages = 2;
    if (cb == 9) stages = 1;  // flat loader: one padded stage and the flat buffer
    long team = (long)stages * nm * (a + b) + (direct ? 0 : nm * c) + (cb == 9 ? (long)nm * (m * k + k * n) * sz : 0);
    int tpb = std::max(1, std::min(4, 8 / W));
    while (tpb > 1 && tpb * team > dv.smem_optin) tpb--;
    if (team > dv.smem_optin) return Cfg{-1, 0, 0, 0, 0, 0};
    Cfg p{3, nm, tpb * W * 32, 0, stages, tpb * team, W, direct, tpb};
    int occ = 0;
    p.cb = cb;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern_team_cb(d, ta, tb, cb), p.threads, p.smem));
    if (occ < 1) return Cfg{-1, 0, 0, 0, 0, 0};
    long groups = cdiv(batch, nm), resident = (long)occ * dv.sms * tpb;
    long iters = cdiv(groups, resident);
    p.grid = (int)cdiv(cdiv(groups, iters), tpb);
    return p;
}

struct Case { Dt d; int batch, m, n, k; bool ta, tb, shared; int offA = 0, offB = 0, offC = 0; int checkb = 0; };  // checkb: matrices checked (0: all)
// F32, as BmmHeuristics.fragPlan: two matrices per warp for m, n, k <= 8 from 32 warps per SM on, else one; 128 threads
// (results-h100-frag32.txt: 8192 8^3 w2 5.76 / w1 5.95 us; 16^3 w2 loses everywhere, 8192: 15.36 / 12.74).
static Cfg frag_default(const Case& c, const Dev& dv) {
    if (c.d != F32) return frag_default(c.batch, dv);
    const bool s8 = std::max({c.m, c.n, c.k}) <= 8;
    return frag_plan(c.batch, s8 && cdiv(c.batch, dv.sms) >= 32 ? 2 : 1, 128);
}

static cudaDataType cudt(Dt d) { return d == F16 ? CUDA_R_16F : d == BF16 ? CUDA_R_16BF : CUDA_R_32F; }
static void vendor(cublasHandle_t h, const Case& c, const void* A, const void* B, void* C) {
    const float one = 1.f, zero = 0.f;
    cublasOperation_t opB = c.tb ? CUBLAS_OP_T : CUBLAS_OP_N, opA = c.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    int ldb = c.tb ? c.k : c.n, lda = c.ta ? c.m : c.k;
    if (c.shared && !c.ta) {
        CB(cublasGemmEx(h, opB, CUBLAS_OP_N, c.n, c.batch * c.m, c.k, &one, B, cudt(c.d), ldb, A, cudt(c.d), c.k, &zero, C, cudt(c.d), c.n,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        return;
    }
    CB(cublasGemmStridedBatchedEx(h, opB, opA, c.n, c.m, c.k, &one, B, cudt(c.d), ldb, c.shared ? 0 : (long long)c.k * c.n, A, cudt(c.d), lda,
                                  (long long)c.m * c.k, &zero, C, cudt(c.d), c.n, (long long)c.m * c.n, c.batch, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
}
static void launch(const Cfg& p, const Case& c, const void* A, const void* B, void* C, cublasHandle_t h, cudaStream_t st) {
    if (p.kind == 0) vendor(h, c, A, B, C);
    else if (p.kind == 1) kern_small(c.d, c.ta, c.tb)<<<p.grid, p.threads, p.smem, st>>>(A, B, C, c.batch, c.m, c.n, c.k, p.mats, c.shared);
    else if (p.kind == 5) kern_frag(c.d, c.ta, c.tb, c.m, c.n, c.k, p.mats)<<<p.grid, p.threads, 0, st>>>(A, B, C, c.batch, c.m, c.n, c.k, p.mats, c.shared);
    else if (p.kind == 6) kern_frag32(c.d, c.ta, c.tb, p.mats)<<<p.grid, p.threads, 0, st>>>(A, B, C, c.batch, c.m, c.n, c.k, 1, c.shared);
    else if (p.kind == 2) kern_stream(c.d, c.ta, c.tb)<<<p.grid, p.threads, p.smem, st>>>(A, B, C, c.batch, c.m, c.n, c.k, p.mats, p.stages, c.shared);
    else if (p.kind == 7) kern_wg(c.d, c.ta, c.tb)<<<p.grid, p.threads, p.smem, st>>>(A, B, C, c.batch, c.m, c.n, c.k);
    else kern_team_cb(c.d, c.ta, c.tb, p.cb)<<<p.grid, p.threads, p.smem, st>>>(A, B, C, c.batch, c.m, c.n, c.k, p.mats, p.stages, p.W, p.direct);
}

// ---------------------------------------------------------------- device data and reference
__host__ __device__ inline float hval(unsigned long long i, unsigned seed) {
    unsigned x = (unsigned)i ^ (unsigned)(i >> 32) * 0x9E3779B9u ^ seed * 0x85EBCA6Bu;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
}
template <typename T> __global__ void gen(T* p, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = gapfill::from_float<T>(hval(i, seed));
}
template <typename T>
__global__ void ref_kernel(const T* A, const T* B, int batch, int m, int n, int k, bool ta, bool tb, bool shared, double* ref, double* abssum,
                           float* seq) {
    long long total = (long long)batch * m * n;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        const int j = (int)(e % n); const long long t = e / n; const int i = (int)(t % m); const long long b = t / m;
        const T* a = A + b * m * k;
        const T* bb = B + (shared ? 0 : b * k * n);
        double s = 0, sa = 0; float f = 0.f;
        for (int kk = 0; kk < k; ++kk) {
            float x = gapfill::to_float(a[ta ? (long long)kk * m + i : (long long)i * k + kk]);
            float y = gapfill::to_float(bb[tb ? (long long)j * k + kk : (long long)kk * n + j]);
            s += (double)x * y; sa += fabs((double)x * y); f = fmaf(x, y, f);
        }
        ref[e] = s; abssum[e] = sa; seq[e] = f;
    }
}
struct Counts { unsigned long long fails, inexact, first; };
template <typename T>
__global__ void check_kernel(const T* out, long long total, const double* ref, const double* abssum, const float* seq, double uout, double gam,
                             double growth, double eta, Counts* cnt) {
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
        const float g = gapfill::to_float(out[e]);
        const double diff = fabs((double)g - ref[e]);
        const bool ok = isfinite(g) && diff <= uout * fabs(ref[e]) + growth * gam * abssum[e] + eta;
        if (!ok) { atomicAdd(&cnt->fails, 1ull); atomicMin(&cnt->first, (unsigned long long)e); }
        if (__float_as_uint(g) != __float_as_uint(seq[e])) atomicAdd(&cnt->inexact, 1ull);
    }
}
static float h2f(uint16_t v) { __half h; memcpy(&h, &v, 2); return __half2float(h); }
static float b2f(uint16_t v) { __nv_bfloat16 h; memcpy(&h, &v, 2); return __bfloat162float(h); }
static float host_val(Dt d, const unsigned char* raw, long long i) {
    if (d == F32) { float f; memcpy(&f, raw + 4 * i, 4); return f; }
    uint16_t v; memcpy(&v, raw + 2 * i, 2);
    return d == F16 ? h2f(v) : b2f(v);
}

struct Bufs {
    void *A = 0, *B = 0, *C = 0; double *ref = 0, *abss = 0; float* seq = 0; Counts* cnt = 0;
    size_t abytes = 0, bbytes = 0, cbytes = 0; long long outs = 0;
};
static void prepare(const Case& c, Bufs& u, unsigned seed, cudaStream_t st) {
    const int sz = dtbytes(c.d);
    long long na = (long long)c.batch * c.m * c.k + c.offA, nb = (long long)(c.shared ? 1 : c.batch) * c.k * c.n + c.offB;
    const int cb = c.checkb > 0 ? std::min(c.checkb, c.batch) : c.batch;
    u.outs = (long long)cb * c.m * c.n;
    u.abytes = na * sz; u.bbytes = nb * sz; u.cbytes = ((long long)c.batch * c.m * c.n + c.offC) * sz;
    CK(cudaMalloc(&u.A, u.abytes)); CK(cudaMalloc(&u.B, u.bbytes)); CK(cudaMalloc(&u.C, u.cbytes));
    CK(cudaMalloc(&u.ref, u.outs * 8)); CK(cudaMalloc(&u.abss, u.outs * 8)); CK(cudaMalloc(&u.seq, u.outs * 4)); CK(cudaMalloc(&u.cnt, sizeof(Counts)));
    if (c.d == F16) { gen<<<1024, 256, 0, st>>>((__half*)u.A, na, seed); gen<<<1024, 256, 0, st>>>((__half*)u.B, nb, seed + 1); }
    else if (c.d == BF16) { gen<<<1024, 256, 0, st>>>((__nv_bfloat16*)u.A, na, seed); gen<<<1024, 256, 0, st>>>((__nv_bfloat16*)u.B, nb, seed + 1); }
    else { gen<<<1024, 256, 0, st>>>((float*)u.A, na, seed); gen<<<1024, 256, 0, st>>>((float*)u.B, nb, seed + 1); }
    const void* A = (const char*)u.A + (size_t)c.offA * sz; const void* B = (const char*)u.B + (size_t)c.offB * sz;
    if (c.d == F16) ref_kernel<<<2048, 256, 0, st>>>((const __half*)A, (const __half*)B, cb, c.m, c.n, c.k, c.ta, c.tb, c.shared, u.ref, u.abss, u.seq);
    else if (c.d == BF16) ref_kernel<<<2048, 256, 0, st>>>((const __nv_bfloat16*)A, (const __nv_bfloat16*)B, cb, c.m, c.n, c.k, c.ta, c.tb, c.shared, u.ref, u.abss, u.seq);
    else ref_kernel<<<2048, 256, 0, st>>>((const float*)A, (const float*)B, cb, c.m, c.n, c.k, c.ta, c.tb, c.shared, u.ref, u.abss, u.seq);
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    // the device reference against the CPU on the first, middle and last checked matrix
    long long mn = (long long)c.m * c.n, mk = (long long)c.m * c.k, kn = (long long)c.k * c.n;
    std::vector<unsigned char> ha(mk * sz), hb(kn * sz);
    std::vector<double> r(mn), sa(mn); std::vector<float> sq(mn);
    for (int b : {0, cb / 2, cb - 1}) {
        CK(cudaMemcpy(ha.data(), (const char*)A + (size_t)b * mk * sz, mk * sz, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hb.data(), (const char*)B + (size_t)(c.shared ? 0 : b) * kn * sz, kn * sz, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(r.data(), u.ref + b * mn, mn * 8, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(sa.data(), u.abss + b * mn, mn * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(sq.data(), u.seq + b * mn, mn * 4, cudaMemcpyDeviceToHost));
        for (int i = 0; i < c.m; ++i)
            for (int j = 0; j < c.n; ++j) {
                double s = 0, s2 = 0; float f = 0.f;
                for (int kk = 0; kk < c.k; ++kk) {
                    float x = host_val(c.d, ha.data(), c.ta ? (long long)kk * c.m + i : (long long)i * c.k + kk);
                    float y = host_val(c.d, hb.data(), c.tb ? (long long)j * c.k + kk : (long long)kk * c.n + j);
                    s += (double)x * y; s2 += std::fabs((double)x * y); f = std::fmaf(x, y, f);
                }
                long long e = (long long)i * c.n + j;
                if (std::fabs(s - r[e]) > 1e-12 * s2 + 1e-300 || std::fabs(s2 - sa[e]) > 1e-12 * s2 + 1e-300 || memcmp(&f, &sq[e], 4) != 0) {
                    printf("REFERENCE MISMATCH %s b=%d i=%d j=%d cpu %.17g gpu %.17g\n", dtname[c.d], b, i, j, s, r[e]);
                    exit(3);
                }
            }
    }
}
static void release(Bufs& u) {
    cudaFree(u.A); cudaFree(u.B); cudaFree(u.C); cudaFree(u.ref); cudaFree(u.abss); cudaFree(u.seq); cudaFree(u.cnt);
    u = Bufs{};
}
// Runs one variant on a poisoned output and checks every element; returns "ok"/"ok,exact" or a failure description.
static std::string run_check(const Cfg& p, const Case& c, Bufs& u, cublasHandle_t h, cudaStream_t st, bool* pass) {
    const int sz = dtbytes(c.d);
    const void* A = (const char*)u.A + (size_t)c.offA * sz; const void* B = (const char*)u.B + (size_t)c.offB * sz;
    void* C = (char*)u.C + (size_t)c.offC * sz;
    CK(cudaMemsetAsync(u.C, 0xff, u.cbytes, st));
    launch(p, c, A, B, C, h, st);
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    Counts z{0, 0, ~0ull}; CK(cudaMemcpy(u.cnt, &z, sizeof z, cudaMemcpyHostToDevice));
    const double uacc = std::ldexp(1.0, -24), uout = c.d == F32 ? uacc : (c.d == F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8));
    const double gam = c.k * uacc / (1 - c.k * uacc), growth = c.d == F32 ? 1.0 : 2.0;
    // half the output's subnormal spacing: rounding into the gradual-underflow range (as Tolerance in verify/)
    const double eta = std::ldexp(1.0, c.d == F16 ? -25 : c.d == BF16 ? -134 : -150);
    if (c.d == F16) check_kernel<<<2048, 256, 0, st>>>((const __half*)C, u.outs, u.ref, u.abss, u.seq, uout, gam, growth, eta, u.cnt);
    else if (c.d == BF16) check_kernel<<<2048, 256, 0, st>>>((const __nv_bfloat16*)C, u.outs, u.ref, u.abss, u.seq, uout, gam, growth, eta, u.cnt);
    else check_kernel<<<2048, 256, 0, st>>>((const float*)C, u.outs, u.ref, u.abss, u.seq, uout, gam, growth, eta, u.cnt);
    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
    Counts r; CK(cudaMemcpy(&r, u.cnt, sizeof r, cudaMemcpyDeviceToHost));
    // the poison around the output must be untouched (offset prefix)
    bool guard = true;
    if (c.offC > 0) {
        std::vector<unsigned char> pre((size_t)c.offC * sz);
        CK(cudaMemcpy(pre.data(), u.C, pre.size(), cudaMemcpyDeviceToHost));
        for (unsigned char x : pre) guard &= x == 0xff;
    }
    const bool need_exact = c.d == F32 && p.kind != 0;
    *pass = r.fails == 0 && guard && (!need_exact || r.inexact == 0);
    char buf[200];
    if (*pass) snprintf(buf, sizeof buf, "ok%s", c.d == F32 && r.inexact == 0 ? ",exact" : "");
    else snprintf(buf, sizeof buf, "FAIL(%llu bad, %llu inexact, first %llu%s)", r.fails, r.inexact, r.first, guard ? "" : ", wrote before out");
    return buf;
}

static std::string cfgname(const Cfg& p) {
    char b[64];
    if (p.kind == 0) return "cublas";
    if (p.kind == 1) snprintf(b, sizeof b, "small g%d t%d", p.mats, p.threads);
    else if (p.kind == 5) snprintf(b, sizeof b, "frag w%d t%d", p.mats, p.threads);
    else if (p.kind == 6) snprintf(b, sizeof b, "frag32 w%d t%d", p.mats, p.threads);
    else if (p.kind == 7) snprintf(b, sizeof b, "wg t%d x%d", p.threads, p.grid);
    else if (p.kind == 3) snprintf(b, sizeof b, "team%s w%d g%d s%d %s t%d x%d", p.cb == 9 ? "8f" : p.cb == 8 ? "8" : "", p.W, p.mats, p.stages, p.direct ? "dc" : "sc", p.threads, p.grid);
    else snprintf(b, sizeof b, "stream g%d s%d t%d x%d", p.mats, p.stages, p.threads, p.grid);
    return b;
}

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "sweep";
    const char* skip = getenv("BMM_SKIP");
    bool use_small = !(skip && strstr(skip, "small")), use_stream = !(skip && strstr(skip, "stream")), use_team = !(skip && strstr(skip, "team"));
    bool use_frag = !(skip && strstr(skip, "frag"));
    bool use_wg = !(skip && strstr(skip, "wg"));
    const int max_n = getenv("BMM_MAXN") ? atoi(getenv("BMM_MAXN")) : 1 << 30;  // sweep: only cases with max(m, n, k) <= BMM_MAXN
    Dev dv; int v;
    if (mode == "plans") {  // no device needed: the plans for the H100 (132 SMs, 228/227 KiB)
        Dev h{132, 228 * 1024, 227 * 1024};
        for (Dt d : {F16, F32})
            for (int b : {512, 2048, 8192})
                for (int n : {8, 16, 32, 48, 64, 96, 128}) {
                    Cfg p = stream_plan(d, b, n, n, n, false, false, false, h), q = small_plan(d, b, n, n, n, false, false, false, h);
                    printf("%s %d %d: %s smem %ld | %s smem %ld\n", dtname[d], b, n, cfgname(p).c_str(), p.smem, cfgname(q).c_str(), q.smem);
                }
        return 0;
    }
    CK(cudaDeviceGetAttribute(&dv.sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, 0)); dv.smem_sm = v;
    CK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0)); dv.smem_optin = v;
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs, smem/SM %ld, optin %ld\n", prop.name, dv.sms, dv.smem_sm, dv.smem_optin);
    for (int d = 0; d < 3; ++d)
        for (int t = 0; t < 4; ++t) {
            CK(cudaFuncSetAttribute(kern_small((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
            CK(cudaFuncSetAttribute(kern_stream((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
            CK(cudaFuncSetAttribute(kern_team((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
            if (d != F32) CK(cudaFuncSetAttribute(kern_team8((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
            if (d != F32) CK(cudaFuncSetAttribute(kern_team8f((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
            if (d != F32) CK(cudaFuncSetAttribute(kern_wg((Dt)d, t & 2, t & 1), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dv.smem_optin));
        }
    {
        cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, (const void*)bmm_stream_f16_nn));
        int occ; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, bmm_stream_f16_nn, 256, 100 * 1024));
        printf("bmm_stream_f16_nn: %d registers; 256 threads with 100 KiB: %d blocks/SM\n", fa.numRegs, occ);
        CK(cudaFuncGetAttributes(&fa, (const void*)bmm_stream_f32_nn));
        printf("bmm_stream_f32_nn: %d registers\n", fa.numRegs);
        CK(cudaFuncGetAttributes(&fa, (const void*)bmm_team_f16_nn)); printf("bmm_team_f16_nn: %d registers\n", fa.numRegs);
        CK(cudaFuncGetAttributes(&fa, (const void*)bmm_team_f32_nn)); printf("bmm_team_f32_nn: %d registers\n", fa.numRegs);
    }
    cublasHandle_t h; CB(cublasCreate(&h));
    cudaStream_t st; CK(cudaStreamCreate(&st)); CB(cublasSetStream(h, st));

    if (mode == "corr" || mode == "mini") {  // mini: a few cases, for compute-sanitizer
        std::vector<Case> cs;
        int shapes[][3] = {{17, 33, 9}, {97, 7, 128}, {1, 1, 1}, {128, 128, 97}, {16, 8, 24}, {100, 100, 100}, {64, 1, 64},
                           {1, 64, 64}, {128, 128, 128}, {8, 8, 8}, {48, 48, 48}, {33, 17, 40}, {2, 3, 5},
                           // bmm_team shapes (16-byte rows): k not a multiple of 16, m, n not multiples of 16 or 32
                           {24, 40, 8}, {40, 24, 56}, {96, 32, 64}, {8, 128, 8}, {120, 8, 72}, {32, 32, 32}, {64, 64, 64},
                           // bmm_frag shapes (m, n, k <= 16): each 8-block present or absent, odd edges, odd row lengths
                           {16, 16, 16}, {9, 15, 7}, {16, 8, 16}, {8, 16, 9}, {3, 11, 16}, {13, 1, 2}, {1, 16, 1},
                           // bmm_frag32 shapes (m, n, k <= 32): partial m16 / n8 / k16 tiles, odd row lengths, one warp's half empty
                           {24, 32, 18}, {32, 20, 30}, {31, 17, 25}, {18, 26, 32}, {32, 8, 32}, {1, 32, 32}, {20, 12, 24}};
        for (int d = 0; d < 3; ++d)
            for (int t = 0; t < 8; ++t)
                for (auto& s : shapes) cs.push_back({(Dt)d, (s[0] * s[1] * s[2] > 100000) ? 23 : 301, s[0], s[1], s[2], (bool)(t & 2), (bool)(t & 1), (bool)(t & 4)});
        for (int d = 0; d < 3; ++d) {  // unaligned views: A, B, C one element (and 4, 2 elements) off their allocation
            cs.push_back({(Dt)d, 77, 32, 32, 32, false, false, false, 1, 4, 2});
            cs.push_back({(Dt)d, 77, 24, 40, 16, true, false, false, 2, 1, 1});
            cs.push_back({(Dt)d, 77, 64, 64, 64, false, true, true, 4, 2, 4});
            cs.push_back({(Dt)d, 77, 16, 12, 8, false, false, false, 1, 3, 2});  // frag shapes on unaligned views
            cs.push_back({(Dt)d, 301, 8, 8, 8, false, false, true, 2, 1, 1});
            cs.push_back({(Dt)d, 301, 16, 16, 16, false, false, false, 4, 4, 4});  // 16-byte aligned views, not on an allocation
        }
        if (getenv("BMM_FLAT_CORR")) {  // the flat loader's and bmm_wg's shapes (8-byte rows, 16-byte group ranges), every layout
            cs.clear();
            int fs[][3] = {{100, 100, 100}, {60, 76, 36}, {124, 36, 60}, {4, 8, 12}, {76, 76, 76}, {36, 44, 52}, {100, 100, 36}, {12, 4, 20},
                           {128, 128, 128}, {96, 96, 96}, {72, 40, 120}, {128, 8, 64}, {68, 124, 100}};  // the last five: bmm_wg only
            for (int d = 0; d < 2; ++d)
                for (int t = 0; t < 4; ++t)
                    for (auto& f : fs) cs.push_back({(Dt)d, (f[0] * f[1] * f[2] > 100000) ? 37 : 301, f[0], f[1], f[2], (bool)(t & 2), (bool)(t & 1), false});
            use_small = use_stream = use_frag = false;
        }
        if (mode == "mini") {
            cs = {{F16, 301, 17, 33, 9, false, false, false}, {BF16, 23, 48, 48, 48, true, true, false}, {F32, 301, 17, 33, 9, true, false, false},
                  {F16, 77, 24, 40, 16, true, false, true, 2, 1, 1}};
            use_small = false;
        }
        int fails = 0, runs = 0;
        unsigned seed = 7;
        for (auto& c : cs) {
            Bufs u; prepare(c, u, seed += 2, st);
            std::vector<Cfg> cfgs{{0, 0, 0, 0, 0, 0}};
            if (use_small) cfgs.push_back(small_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv));
            if (use_frag && frag_ok(c.d, c.m, c.n, c.k, c.ta, c.tb)) {  // every matrices-per-warp count, with a partial last warp and block
                cfgs.push_back(frag_default(c, dv));
                for (int w : {1, 2, 4})  // F16/BF16 compile 1 and 4 per warp only
                    if (c.d == F32 ? frag_f32_mpw_ok(c.m, c.n, c.k, w) : w != 2) cfgs.push_back(frag_plan(c.batch, w, w == 2 ? 256 : 128));
            }
            if (use_frag && frag32_ok(c.d, c.m, c.n, c.k))  // every warps-per-matrix count, with a partial last block
                for (int w : {1, 2, 4}) cfgs.push_back(frag32_plan(c.batch, w, w == 2 ? 256 : 96));
            if (use_stream) {
                Cfg p = stream_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv);
                if (p.kind == 2) {
                    cfgs.push_back(p);
                    Cfg q = p; q.grid = std::min(q.grid, 3); cfgs.push_back(q);                  // several groups per block
                }
                Cfg r = stream_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv, 3, 3);   // 3 matrices, 3 stages
                if (r.kind == 2) { r.grid = std::min(r.grid, 2); cfgs.push_back(r); }
                Cfg w = stream_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv, 2, 2);
                if (w.kind == 2) { w.threads = 64; w.grid = 1; cfgs.push_back(w); }                // one block, two warps
            }
            const int sz = dtbytes(c.d);
            const bool aligned = (c.offA * sz) % 16 == 0 && (c.offB * sz) % 16 == 0 && (c.offC * sz) % 16 == 0;
            if (use_team && aligned && team_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared)) {
                for (int W : {0, 1, 2, 4, 8})
                    for (int direct : {0, 1}) {
                        Cfg q = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, W, 0, 0, direct);
                        if (q.kind != 3) continue;
                        cfgs.push_back(q);
                        Cfg r2 = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, W, 3, W == 2 ? 4 : 2, direct);  // several matrices, other depth
                        if (r2.kind == 3) { r2.grid = std::min(r2.grid, 2); cfgs.push_back(r2); }  // many groups per team
                    }
            }
            if (use_team && aligned && team_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared, 8))
                for (int W : {0, 2, 4, 8})
                    for (int direct : {0, 1}) {
                        if (!flat_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared, direct)) continue;
                        Cfg q = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, W, 0, 0, direct, 9);
                        if (q.kind != 3) continue;
                        cfgs.push_back(q);
                        Cfg r2 = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, W, 3, 0, direct, 9);  // several matrices per group
                        if (r2.kind == 3) { r2.grid = std::min(r2.grid, 2); cfgs.push_back(r2); }  // many groups per team
                    }
            if (use_wg && aligned && wg_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared)) {
                Cfg q = wg_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv);
                if (q.kind == 7) {
                    cfgs.push_back(q);
                    cfgs.push_back(wg_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, 3));  // many matrices per block
                }
            }
            for (auto& p : cfgs) {
                bool pass; std::string r = run_check(p, c, u, h, st, &pass);
                ++runs;
                if (!pass) {
                    ++fails;
                    printf("FAIL %s b=%d %dx%dx%d %c%c%c off %d/%d/%d %s: %s\n", dtname[c.d], c.batch, c.m, c.n, c.k, c.ta ? 'T' : 'N', c.tb ? 'T' : 'N',
                           c.shared ? 'S' : '-', c.offA, c.offB, c.offC, cfgname(p).c_str(), r.c_str());
                }
            }
            release(u);
        }
        printf("correctness: %zu cases, %d runs, %d failing\n", cs.size(), runs, fails);
        return fails ? 1 : 0;
    }

    // ---------------------------------------------------------------- sweep
    const int REPS = 25;
    size_t flush_bytes = 256u << 20; void* flush; CK(cudaMalloc(&flush, flush_bytes));
    const double copy_gbps = copy_rate_gbps(st);
    cudaEvent_t ev0, ev1; CK(cudaEventCreate(&ev0)); CK(cudaEventCreate(&ev1));
    const char* fenv = getenv("BMM_FLUSH");
    const bool memset_flush = fenv && !strcmp(fenv, "memset");
    unsigned* sink; CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(flush, 0x5a, flush_bytes));
    auto do_flush = [&](int r, bool ms) {
        if (ms) CK(cudaMemsetAsync(flush, r & 0xff, flush_bytes, st));
        else l2_flush_read<<<4 * dv.sms, 512, 0, st>>>((const uint4*)flush, (long long)(flush_bytes / 16), sink);
    };
    for (bool ms : {false, true}) {  // what an empty launch costs under either flush
        std::vector<float> t;
        for (int r = 0; r < 25; ++r) {
            do_flush(r, ms); CK(cudaEventRecord(ev0, st));
            kern_stream(F16, false, false)<<<1, 32, 4096, st>>>(nullptr, nullptr, nullptr, 0, 1, 1, 1, 1, 2, 0);
            CK(cudaEventRecord(ev1, st)); CK(cudaEventSynchronize(ev1)); float ms_; CK(cudaEventElapsedTime(&ms_, ev0, ev1)); t.push_back(ms_ * 1000);
        }
        std::sort(t.begin(), t.end());
        printf("copy %.0f GB/s; empty launch (batch 0) %.2f us after a %s flush%s\n", copy_gbps, t[12], ms ? "memset" : "read",
               ms == memset_flush ? " (the sweep's)" : "");
    }

    std::vector<Case> cases;
    for (int b : {512, 2048, 8192})
        for (int n : {8, 16, 32, 48, 64, 96, 128})
            for (Dt d : {F16, BF16, F32}) cases.push_back({d, b, n, n, n, false, false, false, 0, 0, 0, n > 128 ? 64 : 0});
    for (Dt d : {F16, BF16, F32}) {
        int sp[5][3] = {{17, 33, 9}, {100, 100, 100}, {1, 64, 64}, {64, 1, 64}, {32, 128, 64}};
        for (auto& s : sp) cases.push_back({d, 2048, s[0], s[1], s[2], false, false, false});
        cases.push_back({d, 2048, 64, 64, 64, false, false, true});
        cases.push_back({d, 2048, 32, 32, 32, false, false, true});
        cases.push_back({d, 2048, 32, 32, 32, true, true, false});
        cases.push_back({d, 8192, 64, 64, 64, false, false, true});
        if (d == F32) {  // F32 frag-eligible odd sizes and a shared B
            cases.push_back({d, 2048, 16, 16, 16, false, false, true});
            cases.push_back({d, 2048, 12, 12, 12, false, false, false});
            cases.push_back({d, 8192, 9, 15, 7, false, false, false});
            cases.push_back({d, 2048, 8, 16, 8, false, false, false});
        }
        if (d != F32) {  // frag-eligible (m, n, k <= 16) layouts, shared B and odd sizes
            cases.push_back({d, 2048, 16, 16, 16, true, true, false});
            cases.push_back({d, 8192, 8, 8, 8, true, false, false});
            cases.push_back({d, 2048, 16, 16, 16, false, false, true});
            cases.push_back({d, 2048, 12, 12, 12, false, false, false});
            cases.push_back({d, 8192, 9, 15, 7, false, false, false});
        }
    }
    cases.erase(std::remove_if(cases.begin(), cases.end(), [&](const Case& c) { return std::max({c.m, c.n, c.k}) > max_n; }), cases.end());
    if (const char* list = getenv("BMM_SHAPES")) {  // "MxNxK[@BATCH],...": only these, F16 and BF16 as A·B (batch 2048 if not given)
        cases.clear();
        for (const char* q = list; *q;) {
            int m = 0, n = 0, k = 0, b = 2048, used = 0;
            const int got = sscanf(q, "%dx%dx%d%n", &m, &n, &k, &used);
            if (got != 3 || m < 1 || n < 1 || k < 1) { printf("BMM_SHAPES: cannot read \"%s\"\n", q); return 2; }
            q += used;
            if (*q == '@') { ++q; b = (int)strtol(q, (char**)&q, 10); }
            for (Dt d : {F16, BF16}) cases.push_back({d, b, m, n, k, false, false, false});
            if (*q == ',') ++q;
        }
    }
    printf("%-4s %5s %3s %3s %3s %-3s | %8s %8s %8s %8s %8s %8s | %6s %6s %6s | %s\n", "dt", "batch", "m", "n", "k", "lay", "floor", "cublas", "small",
           "stream", "team", "tbest", "v/sm", "v/tm", "fl/tb", "configs (us) and checks");
    struct Row { Case c; double floor_us, tv, ts, tp, tt, ttb, tbest; std::string best, tbname; bool ok; double tf = NAN, tfb = NAN; std::string tfbname; };
    std::vector<Row> rows;
    unsigned seed = 1000;
    for (auto& c : cases) {
        Bufs u; prepare(c, u, seed += 2, st);
        const bool custom_ok = c.m <= 128 && c.n <= 128 && c.k <= 128;
        std::vector<Cfg> cfgs{{0, 0, 0, 0, 0, 0}};
        int i_small = -1, i_stream = -1;
        if (custom_ok && use_small) { i_small = (int)cfgs.size(); cfgs.push_back(small_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv)); }
        int i_frag = -1, i_frag0 = (int)cfgs.size(), i_frag1 = i_frag0;
        if (use_frag && frag_ok(c.d, c.m, c.n, c.k, c.ta, c.tb)) {
            Cfg f0 = frag_default(c, dv);
            i_frag = (int)cfgs.size(); cfgs.push_back(f0);
            for (int w : {1, 2, 4})
                for (int th : {32, 64, 128, 256})
                    if (!(w == f0.mats && th == f0.threads) && (c.d == F32 ? frag_f32_mpw_ok(c.m, c.n, c.k, w) : w != 2)) cfgs.push_back(frag_plan(c.batch, w, th));
            i_frag1 = (int)cfgs.size();
        } else if (use_frag && frag32_ok(c.d, c.m, c.n, c.k)) {  // bmm_frag32 where bmm_frag does not reach (17..32)
            i_frag = (int)cfgs.size(); cfgs.push_back(frag32_plan(c.batch, 1, 128));
            for (int w : {1, 2, 4})
                for (int th : {64, 128, 256})
                    if (!(w == 1 && th == 128)) cfgs.push_back(frag32_plan(c.batch, w, th));
            i_frag1 = (int)cfgs.size();
        }
        Cfg p = stream_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv);
        if (custom_ok && use_stream && p.kind == 2) {
            i_stream = (int)cfgs.size(); cfgs.push_back(p);
            if (getenv("BMM_STREAM_ALT"))
            for (int g : {std::max(1, p.mats / 2), p.mats, p.mats * 2, p.mats * 4})
                for (int s : {2, 3, 4, 6}) {
                    Cfg q = stream_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, dv, g, s);
                    if (q.kind != 2) continue;
                    bool dup = false;
                    for (auto& o : cfgs) dup |= o.kind == 2 && o.mats == q.mats && o.stages == q.stages;
                    if (!dup) cfgs.push_back(q);
                }
        }
        int i_team = -1, i_team0 = (int)cfgs.size();
        // bmm_team8 (8-byte chunks) where only 8-byte rows hold; where 16-byte rows hold too, its shipped plan beside
        // bmm_team's (the cost of the smaller chunks)
        const bool t16 = team_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared), t8 = team_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared, 8);
        if (custom_ok && use_team && (t16 || t8)) {
            const int D = c.d == F32 ? 1 : 0;  // shipped: F32 stores C from registers
            const int CB = t16 ? 16 : 8;
            Cfg t0 = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, 0, 0, 0, D);
            t0.cb = CB;
            if (t16 && t8 && t0.kind == 3) { Cfg q = t0; q.cb = 8; cfgs.push_back(q); }
            if (t0.kind == 3) {
                i_team = (int)cfgs.size(); cfgs.push_back(t0);
                const int W = t0.W, nm = t0.mats, S = t0.stages, os = S == 3 ? 2 : 3;
                int alt[][4] = {{W, nm, S, 1 - D}, {W, nm, os, D}, {W, nm, os, 1 - D}, {W, nm, 4, D}, {W * 2, nm, 0, D}, {W * 2, nm, 0, 1 - D},
                                {std::max(1, W / 2), nm, 0, D}, {W, nm * 2, 0, D}, {W, nm * 2, 0, 1 - D}, {W, std::max(1, nm / 2), 0, D},
                                {W * 2, nm * 2, 0, D}, {W * 4, nm, 0, D}};
                for (auto& a : alt) {
                    if (a[0] > 8) continue;
                    Cfg q = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, a[0], a[1], a[2], a[3]);
                    if (q.kind != 3) continue;
                    q.cb = CB;
                    bool dup = false;
                    for (auto& o : cfgs) dup |= o.kind == 3 && o.cb == q.cb && o.W == q.W && o.mats == q.mats && o.stages == q.stages && o.direct == q.direct;
                    if (!dup) cfgs.push_back(q);
                }
            }
        }
        if (custom_ok && use_team && t8 && !t16) {  // the flat loader beside team8 (experiment)
            const bool o16 = (c.offA * dtbytes(c.d)) % 16 == 0 && (c.offB * dtbytes(c.d)) % 16 == 0 && (c.offC * dtbytes(c.d)) % 16 == 0;
            for (int W : {0, 4, 8})
                for (int direct : {0, 1})
                    for (int nm : {0, 2}) {
                        if (!o16 || !flat_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared, direct)) continue;
                        Cfg q = team_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv, W, nm, 0, direct, 9);
                        if (q.kind != 3) continue;
                        bool dup = false;
                        for (auto& o : cfgs) dup |= o.kind == 3 && o.cb == q.cb && o.W == q.W && o.mats == q.mats && o.direct == q.direct;
                        if (!dup) cfgs.push_back(q);
                    }
        }
        if (custom_ok && use_wg) {  // bmm_wg (experiment) beside the team kernels
            const bool o16 = (c.offA * dtbytes(c.d)) % 16 == 0 && (c.offB * dtbytes(c.d)) % 16 == 0 && (c.offC * dtbytes(c.d)) % 16 == 0;
            if (o16 && wg_ok(c.d, c.m, c.n, c.k, c.ta, c.tb, c.shared)) {
                Cfg q = wg_plan(c.d, c.batch, c.m, c.n, c.k, c.ta, c.tb, dv);
                if (q.kind == 7) cfgs.push_back(q);
            }
        }
        if (const char* only = getenv("BMM_ONLY")) {  // keep the vendor and the configurations whose name starts with one of "a|b|..."
            std::vector<Cfg> kept{cfgs[0]};
            for (size_t i = 1; i < cfgs.size(); ++i) {
                const std::string nm = cfgname(cfgs[i]);
                for (const char* q = only; *q;) {
                    const char* e = strchr(q, '|');
                    const size_t len = e ? (size_t)(e - q) : strlen(q);
                    if (nm.compare(0, len, q, len) == 0) { kept.push_back(cfgs[i]); break; }
                    q += len + (e ? 1 : 0);
                }
            }
            cfgs = kept;
            i_small = i_stream = i_team = i_frag = -1;
            i_team0 = 1;
            i_frag0 = i_frag1 = 0;
        }
        std::vector<std::string> chk(cfgs.size()); std::vector<bool> pass(cfgs.size());
        bool allok = true;
        for (size_t i = 0; i < cfgs.size(); ++i) { bool p; chk[i] = run_check(cfgs[i], c, u, h, st, &p); pass[i] = p; allok &= p; }
        const int sz = dtbytes(c.d);
        std::vector<std::vector<float>> t(cfgs.size());
        for (int r = -3; r < REPS; ++r)
            for (size_t i = 0; i < cfgs.size(); ++i) {
                do_flush(r, memset_flush);
                CK(cudaEventRecord(ev0, st));
                launch(cfgs[i], c, u.A, u.B, u.C, h, st);
                CK(cudaEventRecord(ev1, st));
                CK(cudaEventSynchronize(ev1)); CK(cudaGetLastError());
                float ms; CK(cudaEventElapsedTime(&ms, ev0, ev1));
                if (r >= 0) t[i].push_back(ms * 1000);
            }
        std::vector<double> med(cfgs.size());
        for (size_t i = 0; i < cfgs.size(); ++i) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][REPS / 2]; }
        double bytes = ((double)c.batch * c.m * c.k + (double)(c.shared ? 1 : c.batch) * c.k * c.n + (double)c.batch * c.m * c.n) * sz;
        double flops = 2.0 * c.batch * c.m * c.n * c.k;
        double rate = c.d == F32 ? 51.7e12 : 707e12;
        double floor_us = std::max(bytes / (copy_gbps * 1e3), flops / rate * 1e6);
        int best = -1, tbest = -1;
        for (size_t i = 1; i < cfgs.size(); ++i) {
            if (pass[i] && (best < 0 || med[i] < med[best])) best = (int)i;
            if (pass[i] && (int)i >= i_team0 && (tbest < 0 || med[i] < med[tbest])) tbest = (int)i;
        }
        Row row{c, floor_us, med[0], i_small >= 0 ? med[i_small] : NAN, i_stream >= 0 ? med[i_stream] : NAN, i_team >= 0 ? med[i_team] : NAN,
                tbest >= 0 ? med[tbest] : NAN, best >= 0 ? med[best] : NAN, best >= 0 ? cfgname(cfgs[best]) : "-",
                tbest >= 0 ? cfgname(cfgs[tbest]) : "-", allok};
        if (i_frag >= 0 && pass[i_frag]) row.tf = med[i_frag];
        for (int i = i_frag0; i < i_frag1; ++i)
            if (pass[i] && (std::isnan(row.tfb) || med[i] < row.tfb)) { row.tfb = med[i]; row.tfbname = cfgname(cfgs[i]); }
        rows.push_back(row);
        char lay[4] = {c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', c.shared ? 'S' : '-', 0};
        printf("%-4s %5d %3d %3d %3d %-3s | %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f | %5.2fx %5.2fx %5.0f%% |", dtname[c.d], c.batch, c.m, c.n, c.k, lay,
               floor_us, row.tv, row.ts, row.tp, row.tt, row.ttb, row.tv / row.ts, row.tv / row.tt, 100 * floor_us / row.ttb);
        for (size_t i = 0; i < cfgs.size(); ++i) printf(" [%s %.2f %s]", cfgname(cfgs[i]).c_str(), med[i], chk[i].c_str());
        printf("\n");
        fflush(stdout);
        release(u);
    }
    // compact table
    printf("\nSUMMARY (us; ratios vendor/custom; floor%% = floor/custom; team = bmm_team's default plan, tbest = its fastest config)\n");
    printf("%-4s %5s %-11s %-3s %8s %8s %8s %8s %8s %8s %7s %7s %7s %5s %5s %s\n", "dt", "batch", "mxnxk", "lay", "cublas", "small", "stream", "team",
           "tbest", "floor", "v/small", "v/team", "v/tbest", "fl/tm", "fl/tb", "tbest config");
    // geomeans over the n <= 32 square rows: [class][small, stream, team, tbest, min(small, team), best of all]
    double lg[2][6] = {}; int cnt[2] = {};
    auto nz = [](double x, double alt) { return std::isnan(x) ? alt : x; };
    for (auto& r : rows) {
        char shape[24]; snprintf(shape, sizeof shape, "%dx%dx%d", r.c.m, r.c.n, r.c.k);
        char lay[4] = {r.c.ta ? 'T' : 'N', r.c.tb ? 'T' : 'N', r.c.shared ? 'S' : '-', 0};
        printf("%-4s %5d %-11s %-3s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %6.2fx %6.2fx %6.2fx %4.0f%% %4.0f%% %s%s\n", dtname[r.c.d], r.c.batch, shape, lay,
               r.tv, r.ts, r.tp, r.tt, r.ttb, r.floor_us, r.tv / r.ts, r.tv / r.tt, r.tv / r.ttb, 100 * r.floor_us / r.tt, 100 * r.floor_us / r.ttb,
               r.tbname.c_str(), r.ok ? "" : " CHECK-FAIL");
        if (r.c.m == r.c.n && r.c.n == r.c.k && r.c.n <= 32 && !r.c.ta && !r.c.tb && !r.c.shared) {
            int cl = r.c.d == F32 ? 1 : 0;
            double v[6] = {r.ts, nz(r.tp, r.ts), nz(r.tt, r.ts), nz(r.ttb, r.ts), std::min(r.ts, nz(r.tt, r.ts)), r.tbest};
            for (int q = 0; q < 6; ++q) lg[cl][q] += std::log(r.tv / v[q]);
            cnt[cl]++;
        }
    }
    for (int fcl = 0; fcl < 2; ++fcl) {  // the frag experiment: square n <= 16 rows (8^3, 16^3), and the n <= 32 geomean with frag where it applies
        double l0 = 0, l1 = 0, l2 = 0; int cn = 0;
        for (auto& r : rows)
            if ((r.c.d == F32) == (fcl == 1) && r.c.m == r.c.n && r.c.n == r.c.k && r.c.n <= 32 && !r.c.ta && !r.c.tb && !r.c.shared) {
                const double f = std::isnan(r.tf) ? r.ts : std::min(r.ts, r.tf), fb = std::isnan(r.tfb) ? r.ts : std::min(r.ts, r.tfb);
                if (!std::isnan(r.tf))
                    printf("frag %-4s %5d %3d: cublas %8.2f small %8.2f team %8.2f frag %8.2f best frag %8.2f (%s) (frag/small %.2f, v/best frag %.2fx)\n",
                           dtname[r.c.d], r.c.batch, r.c.n, r.tv, r.ts, r.tt, r.tf, r.tfb, r.tfbname.c_str(), r.tf / r.ts, r.tv / r.tfb);
                l0 += std::log(r.tv / r.ts); l1 += std::log(r.tv / f); l2 += std::log(r.tv / fb); cn++;
            }
        if (cn) printf("n<=32 square %s (%d rows) geomean vendor/custom: small %.2fx, min(small, frag) %.2fx, min(small, best frag) %.2fx\n",
                       fcl ? "F32" : "F16/BF16", cn, std::exp(l0 / cn), std::exp(l1 / cn), std::exp(l2 / cn));
        for (auto& r : rows)  // other frag-eligible rows (odd shapes, layouts, shared B)
            if ((r.c.d == F32) == (fcl == 1) && !std::isnan(r.tf) && !(r.c.m == r.c.n && r.c.n == r.c.k && !r.c.ta && !r.c.tb && !r.c.shared))
                printf("frag %-4s %5d %dx%dx%d %c%c%c: cublas %8.2f small %8.2f frag %8.2f best frag %8.2f (%s)\n", dtname[r.c.d], r.c.batch, r.c.m,
                       r.c.n, r.c.k, r.c.ta ? 'T' : 'N', r.c.tb ? 'T' : 'N', r.c.shared ? 'S' : '-', r.tv, r.ts, r.tf, r.tfb, r.tfbname.c_str());
    }
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {0, 0, 0};  // floor% of F16/BF16 48..128 square at batch >= 2048: stream, team, team best
    for (auto& r : rows)
        if (r.c.d != F32 && r.c.batch >= 2048 && r.c.m == r.c.n && r.c.n == r.c.k && r.c.n >= 48 && r.c.n <= 128 && !r.c.shared) {
            double v[3] = {100 * r.floor_us / r.tp, 100 * r.floor_us / r.tt, 100 * r.floor_us / r.ttb};
            for (int q = 0; q < 3; ++q) { lo[q] = std::min(lo[q], v[q]); hi[q] = std::max(hi[q], v[q]); }
        }
    printf("F16/BF16 48..128 square, batch >= 2048: floor/custom stream %.0f..%.0f %%, team %.0f..%.0f %%, team best %.0f..%.0f %%\n", lo[0], hi[0],
           lo[1], hi[1], lo[2], hi[2]);
    for (int cl = 0; cl < 2; ++cl)
        if (cnt[cl])
            printf("n<=32 square %s (%d rows) geomean vendor/custom: small %.2fx, stream %.2fx, team %.2fx, team best %.2fx, min(small,team) %.2fx, "
                   "best of all %.2fx\n", cl ? "F32" : "F16/BF16", cnt[cl], std::exp(lg[cl][0] / cnt[cl]), std::exp(lg[cl][1] / cnt[cl]),
                   std::exp(lg[cl][2] / cnt[cl]), std::exp(lg[cl][3] / cnt[cl]), std::exp(lg[cl][4] / cnt[cl]), std::exp(lg[cl][5] / cnt[cl]));
    return 0;
}
