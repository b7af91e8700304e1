// Experimental NHWC depthwise 3x3 kernel, F16/BF16, stride 1 (README.md in this folder says why and what
// it should gain): the input rows go through a shared-memory ring filled by cp.async, so the bytes in
// flight no longer live in registers and each value is loaded with one 16-byte access. The arithmetic is
// the shipped nhwc.cu's (taps in the reference's order, p-major then q, each one fp32 fma from acc = +0;
// then + bias, + residual, the shared epilogue of common/depthwise_conv3x3.cuh, one rounding), so every
// output of configurations ring4/ring8 should be bit-identical to the shipped kernel's, smooth activations
// included; ring4f (variant_nhwc_ring_fdiv.cu) differs only in the logistic's division.
//
// Block = one tile: TC = cgs·CPT channels × TW = tws·WC output columns × a strip of rps output rows of
// one image. Per input row of the strip (rps + 2 of them, top to bottom) the block copies the row's
// TW + 2 pixels × TC channels (runs of TC contiguous channels, 16-byte cp.async, zero-filled outside
// the image) into one slot of an NS-slot ring, NS − 1 rows ahead of the row it computes. Thread (cg, jg)
// owns CPT channels × WC columns: it reads the WC + 2 pixels it needs from the slot (one CPT-wide shared
// load each; the column halo is its neighbours' pixels, already there), converts each value to fp32
// once, and adds the row into the output rows that use it (rolling window as in nhwc.cu, here two
// accumulator sets whose roles alternate, so no register copies); an output row is finished right after
// its last input row. One __syncthreads per input row: after it, everyone's copies of row k have landed
// and nobody reads row k − 1 any more, so its slot takes row k + NS − 1.
// C % 8 != 0 or unaligned pointers: the same kernel with per-element copies into the ring and
// per-element stores (correct, not fast).
// RING_EMULATION (variant_emu.cpp): the kernel body only, compiled for the host with emulated cp.async,
// shared memory and barrier, to check it without a GPU.
#include "depthwise_conv3x3.cuh"
#include "harness.h"
#include "variant.h"

#include <algorithm>

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

#if !defined(RING_EMULATION)
#define RING_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// 16 bytes global → shared, bypassing L1; src_bytes = 0 writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void cp16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
#endif

// acc[k][e] (+)= Σ_q w[p][q][e]·in[k+q][e] in q order; fresh starts from +0 like the reference.
template <int CPT, int WC, int KC>
__device__ __forceinline__ void taps(const float (&wr)[9][CPT], int p, const float (&in)[KC][CPT], float (&acc)[WC][CPT],
                                     bool fresh) {
#pragma unroll
    for (int k = 0; k < WC; ++k)
#pragma unroll
        for (int e = 0; e < CPT; ++e) {
            float a = fresh ? 0.f : acc[k][e];
#pragma unroll
            for (int q = 0; q < 3; ++q) a = __fmaf_rn(wr[p * 3 + q][e], in[k + q][e], a);
            acc[k][e] = a;
        }
}

template <typename T, int CPT, int WC, int NS>
__device__ __forceinline__ void dw_ring(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int H, int W, int C, int cgs, int tws,
                                        int colTiles, int chunks, int strips, int rps, int act, int vec) {
    static_assert(NS >= 2, "ring of at least two rows");
    RING_SMEM(ring);
    constexpr int KC = WC + 2;                               // input pixels a thread reads per row
    constexpr int EPC = 16 / (int)sizeof(T);                 // elements per 16-byte copy
    constexpr int MAXCP = ((WC + 2) * CPT + EPC - 1) / EPC;  // copies per thread per row (any tws ≥ 1)
    using R = typename RawBits<CPT * (int)sizeof(T)>::type;
    const int nthr = cgs * tws, tid = (int)threadIdx.x;
    const int TC = cgs * CPT, KP = tws * WC + 2;             // tile channels, tile input pixels per row
    const unsigned slotBytes = (unsigned)(KP * TC) * sizeof(T);
    // block → (column tile, channel chunk, strip, image); every quantity here is block-uniform
    unsigned bid = blockIdx.x;
    const int ct = (int)(bid % (unsigned)colTiles); bid /= (unsigned)colTiles;
    const int chk = (int)(bid % (unsigned)chunks); bid /= (unsigned)chunks;
    const int i0 = (int)(bid % (unsigned)strips) * rps;
    const int n = (int)(bid / (unsigned)strips);
    const int nin = min(rps, H - i0) + 2;                    // input rows i0−1 … i0+rows, trip count of the loop
    const int pxBase = ct * tws * WC - 1, cBase = chk * TC;  // tile's first input column and channel
    // thread → (channel group, column group)
    const int cg = tid % cgs, jg = tid / cgs;
    const int c0 = cBase + cg * CPT, nch = min(CPT, C - c0); // nch ≤ 0: channels past C (compute, never store)
    const int jt = pxBase + 1 + jg * WC;                     // first output column
    const size_t rowElems = (size_t)W * C;
    const T* img = x + (size_t)n * H * rowElems;

    float wr[9][CPT], br[CPT];
#pragma unroll
    for (int e = 0; e < CPT; ++e) {
#pragma unroll
        for (int t = 0; t < 9; ++t) wr[t][e] = e < nch ? to_float(__ldg(w + (size_t)(c0 + e) * 9 + t)) : 0.f;
        br[e] = (bias != nullptr && e < nch) ? to_float(__ldg(bias + c0 + e)) : 0.f;
    }

    // this thread's share of a row copy: chunk i = tid + m·nthr of the KP × TC/EPC chunks (pixel-major),
    // all row-independent except the row itself (hoisted out of the row loop)
    const unsigned ringBase = smem_addr(ring);
    const T* src[MAXCP];      // chunk's first element in image row 0 (the image's first element if zero-filled)
    unsigned gbytes[MAXCP];   // 16, or 0: pixel outside the image or channels past C (zero-fill)
    unsigned dst[MAXCP];      // shared address in slot 0; ~0u: this thread has no chunk m
    const int cpp = vec ? TC / EPC : 1;  // chunks per pixel (TC % EPC == 0 whenever vec)
#pragma unroll
    for (int m = 0; m < MAXCP; ++m) {
        const int i = tid + m * nthr, k = i / cpp, ch = cBase + (i % cpp) * EPC, col = pxBase + k;
        const bool ok = col >= 0 && col < W && ch < C;
        src[m] = img + (ok ? (size_t)col * C + ch : 0);
        gbytes[m] = ok ? 16u : 0u;
        dst[m] = i < KP * cpp ? ringBase + (unsigned)(k * TC + (i % cpp) * EPC) * (unsigned)sizeof(T) : ~0u;
    }
    // input row r of the strip (image row i0 − 1 + r) into slot `slot`
    auto copy_row = [&](int r, int slot) {
        const int row = i0 - 1 + r;
        const bool rowOk = row >= 0 && row < H;
        if (vec) {
            const size_t rowOff = rowOk ? (size_t)row * rowElems : 0;
            const unsigned so = (unsigned)slot * slotBytes;
#pragma unroll
            for (int m = 0; m < MAXCP; ++m)
                if (dst[m] != ~0u) cp16(dst[m] + so, src[m] + rowOff, rowOk ? gbytes[m] : 0u);
        } else {
            T* s = reinterpret_cast<T*>(ring + (size_t)slot * slotBytes);
            for (int i = tid; i < KP * TC; i += nthr) {
                const int col = pxBase + i / TC, ch = cBase + i % TC;
                s[i] = (rowOk && col >= 0 && col < W && ch < C) ? img[(size_t)row * rowElems + (size_t)col * C + ch]
                                                                 : from_float<T>(0.f);
            }
        }
    };

    // prologue: rows 0 … NS−2 in flight, one commit group per row (empty groups keep the count)
#pragma unroll
    for (int r = 0; r < NS - 1; ++r) {
        if (r < nin) copy_row(r, r);
        cp_commit();
    }
    const unsigned rd = (unsigned)(jg * WC * TC + cg * CPT) * sizeof(T);  // thread's first pixel in a slot
    const unsigned pxBytes = (unsigned)TC * sizeof(T);
    const size_t o0 = (((size_t)n * H + i0) * W + jt) * C + c0;           // output (i0, jt, c0)
    T* yo = y + o0;                                                       // output row being finished
    const T* ro = res != nullptr ? res + o0 : nullptr;
    const bool hasBias = bias != nullptr;
    // Accumulators of two consecutive output rows; the roles alternate with the row parity, so nothing
    // is copied between iterations: at iteration k the set `fin` holds output row i0+k−2 (gets p=2, is
    // finished, then restarts from p=0 as row i0+k) and `mid` holds row i0+k−1 (gets p=1).
    float X[WC][CPT], Y[WC][CPT];
    int slot = 0;  // slot of row k
    // iteration k consumes input row i0−1+k
#pragma unroll 1
    for (int k = 0; k < nin; ++k) {
        cp_wait<NS - 2>();  // this thread's copies of row k have landed …
        __syncthreads();    // … everyone's have, and row k−1's slot is free
        if (k + NS - 1 < nin) copy_row(k + NS - 1, slot == 0 ? NS - 1 : slot - 1);
        cp_commit();
        float in[KC][CPT];
        const unsigned char* sp = ring + (size_t)slot * slotBytes + rd;
#pragma unroll
        for (int kk = 0; kk < KC; ++kk) {
            Pack<T, CPT> q;
            q.raw = *reinterpret_cast<const R*>(sp + kk * pxBytes);
#pragma unroll
            for (int e = 0; e < CPT; ++e) in[kk][e] = to_float(q.v[e]);
        }
        float v[WC][CPT];  // output row i0+k−2 before the epilogue: taps + bias
        auto step = [&](float (&fin)[WC][CPT], float (&mid)[WC][CPT]) {
            if (k >= 2) {
                taps<CPT, WC, KC>(wr, 2, in, fin, false);
#pragma unroll
                for (int kk = 0; kk < WC; ++kk)
#pragma unroll
                    for (int e = 0; e < CPT; ++e) v[kk][e] = hasBias ? __fadd_rn(fin[kk][e], br[e]) : fin[kk][e];
            }
            if (k >= 1) taps<CPT, WC, KC>(wr, 1, in, mid, false);
            taps<CPT, WC, KC>(wr, 0, in, fin, true);
        };
        if (k & 1) step(Y, X);
        else step(X, Y);
        if (k >= 2) {  // residual, activation, one rounding, CPT-wide store per column
#pragma unroll
            for (int kk = 0; kk < WC; ++kk) {
                if (jt + kk >= W || nch <= 0) break;
                if (ro != nullptr) add_residual<T, CPT>(ro + kk * C, vec != 0, nch, v[kk]);
                act_store<T, CPT>(yo + kk * C, act, vec != 0, nch, v[kk]);
            }
            yo += rowElems;
            if (ro != nullptr) ro += rowElems;
        }
        slot = slot + 1 == NS ? 0 : slot + 1;
    }
}

}  // namespace

#if !defined(RING_FDIV)
// ---------------------------------------------------------------- host: geometry (pure but for the occupancy)
namespace {
constexpr int kCpt = 4, kWc = 2, kMaxThreads = 256, kMaxGroupsPerBlock = 32;
int ringSlots(int cfg) { return cfg == 1 ? 8 : 4; }
bool aligned(const void* p, int bytes) { return p == nullptr || (uintptr_t)p % bytes == 0; }
int blocksPerSM(int cfg, int dt, int threads, size_t smem);  // cudaOccupancyMaxActiveBlocksPerMultiprocessor (below)
int smCount();                                               // (below; stubs in variant_emu.cpp)
}  // namespace

const char* ring_name(int cfg) { return cfg == 0 ? "ring4" : cfg == 1 ? "ring8" : "ring4f"; }

RingGeo ring_geometry(int cfg, int dt, const void* x, const void* y, const void* r, int n, int h, int wd, int c, int rpsOverride) {
    RingGeo g{};
    const int groups = (c + kCpt - 1) / kCpt;
    g.cgs = std::min(groups, kMaxGroupsPerBlock);  // ≤ 128 channels per tile: TW ≥ 16 columns, halo ≤ 2/16
    g.chunks = (groups + g.cgs - 1) / g.cgs;
    g.vec = c % 8 == 0 && aligned(x, 16) && aligned(y, kCpt * 2) && aligned(r, kCpt * 2);
    // columns: the widest tile (≤ 256 threads) that wastes the fewest columns of W
    const int twsMax = std::max(1, std::min(kMaxThreads / g.cgs, (wd + kWc - 1) / kWc));
    int bestWaste = 1 << 30;
    for (int t = twsMax; t >= std::max(1, twsMax / 2); --t) {
        const int tiles = (wd + t * kWc - 1) / (t * kWc), waste = tiles * t * kWc - wd;
        if (waste < bestWaste) { bestWaste = waste; g.tws = t; g.colTiles = tiles; }
    }
    g.threads = g.cgs * g.tws;
    g.smem = (size_t)ringSlots(cfg) * (g.tws * kWc + 2) * g.cgs * kCpt * 2;
    g.blocksPerSM = blocksPerSM(cfg, dt, g.threads, g.smem);
    // strips: minimise the busiest SM's rows, ceil(blocks / SMs) × (rps + 2 halo rows + ~4 rows of pipeline
    // fill), over the strip counts that fill every block slot of the GPU once (when the shape allows)
    const int sms = smCount();
    const long long perStrip = (long long)g.colTiles * g.chunks * n;
    const long long need = std::min((long long)std::max(1, g.blocksPerSM) * sms, perStrip * h);
    long long best = -1;
    for (int s = 1; s <= h; ++s) {
        const int rps = (h + s - 1) / s;
        if ((h + rps - 1) / rps != s || perStrip * s < need) continue;  // same rps as a smaller s, or too few blocks
        const long long cost = (perStrip * s + sms - 1) / sms * (rps + 6);
        if (best < 0 || cost < best) { best = cost; g.rps = rps; }
    }
    if (rpsOverride > 0) g.rps = std::min(rpsOverride, h);
    g.strips = (h + g.rps - 1) / g.rps;
    g.blocks = perStrip * g.strips;
    return g;
}
#endif

#if !defined(RING_EMULATION)
// ---------------------------------------------------------------- kernels and launch
#define DW_RING(T, TN, NAME, CPT, WC, NS)                                                                            \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME##_##TN(                                                \
        const T* x, const T* w, const T* bias, const T* res, T* y, int H, int W, int C, int cgs, int tws,          \
        int colTiles, int chunks, int strips, int rps, int act, int vec) {                                           \
        dw_ring<T, CPT, WC, NS>(x, w, bias, res, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, act, vec);     \
    }
#define RING_LAUNCH(T, K) K<<<(unsigned)g.blocks, g.threads, g.smem, st>>>((const T*)x, (const T*)w, (const T*)b,   \
        (const T*)r, (T*)y, h, wd, c, g.cgs, g.tws, g.colTiles, g.chunks, g.strips, g.rps, act, g.vec ? 1 : 0)

#if defined(RING_FDIV)
// variant_nhwc_ring_fdiv.cu: this source again, with the header's logistic division approximated
DW_RING(__half, f16, ring4f, 4, 2, 4)
DW_RING(__nv_bfloat16, bf16, ring4f, 4, 2, 4)
const void* ring4f_kernel(int dt) { return dt == F16 ? (const void*)ring4f_f16 : (const void*)ring4f_bf16; }
void ring4f_run(int dt, const RingGeo& g, const void* x, const void* w, const void* b, const void* r, void* y, int h, int wd,
                int c, int act, cudaStream_t st) {
    if (dt == F16) RING_LAUNCH(__half, ring4f_f16);
    else RING_LAUNCH(__nv_bfloat16, ring4f_bf16);
}
#else
DW_RING(__half, f16, ring4, 4, 2, 4)
DW_RING(__nv_bfloat16, bf16, ring4, 4, 2, 4)
DW_RING(__half, f16, ring8, 4, 2, 8)
DW_RING(__nv_bfloat16, bf16, ring8, 4, 2, 8)
const void* ring4f_kernel(int dt);
void ring4f_run(int dt, const RingGeo& g, const void* x, const void* w, const void* b, const void* r, void* y, int h, int wd,
                int c, int act, cudaStream_t st);

namespace {
int blocksPerSM(int cfg, int dt, int threads, size_t smem) {
    const void* k = cfg == 2 ? ring4f_kernel(dt)
                  : dt == F16 ? (cfg == 0 ? (const void*)ring4_f16 : (const void*)ring8_f16)
                              : (cfg == 0 ? (const void*)ring4_bf16 : (const void*)ring8_bf16);
    int nb = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, threads, smem);
    return nb;
}
int smCount() {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms;
}
}  // namespace

void ring_run(int cfg, int dt, const RingGeo& g, const void* x, const void* w, const void* b, const void* r, void* y, int h,
              int wd, int c, int act, cudaStream_t st) {
    if (cfg == 2) ring4f_run(dt, g, x, w, b, r, y, h, wd, c, act, st);
    else if (dt == F16) { if (cfg == 0) RING_LAUNCH(__half, ring4_f16); else RING_LAUNCH(__half, ring8_f16); }
    else { if (cfg == 0) RING_LAUNCH(__nv_bfloat16, ring4_bf16); else RING_LAUNCH(__nv_bfloat16, ring8_bf16); }
}
#endif
#endif
