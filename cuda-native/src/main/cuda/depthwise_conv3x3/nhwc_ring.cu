// depthwise_conv3x3/nhwc_ring: the stride-1 NHWC kernels, y[n,i,j,c] = act(bias[c] +
// Σ_{p,q} w[c,p,q]·x[n, i+p−1, j+q−1, c] (+ res[n,i,j,c])) in one pass, zero padding 1.
//
// Regime: NHWC, stride 1, sm_80+ (cp.async): F16/BF16 in three thread geometries, F32 (C a multiple of 4) in one
// (channels × columns per thread; entry points at the end of the file). Stride 2 stays in nhwc.cu.
// Why a second NHWC kernel: nhwc.cu keeps two input rows in flight in registers and is latency-bound at
// 128 registers (16 warps per SM). Here the input rows go through a shared-memory ring filled by
// cp.async, so the bytes in flight no longer take registers (120-128, two blocks of ≤ 256 threads per
// SM) and each value is loaded with one 16-byte access. Measured (H100, cuda-native/dev/depthwise_conv3x3
// run_variant.sh, dev/depthwise_conv3x3/h100-a91ff10-ring.txt, against nhwc.cu, interleaved, L2 flushed):
// NONE/RELU 1.13-1.46× faster over the sweep's stride-1 shapes, every output bit-identical.
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
//
// Block = one tile: TC = cgs·CPT channels × TW = tws·WC output columns × a strip of rps output rows of one
// image. Per input row of the strip (rps + 2 of them, top to bottom) the block copies the row's TW + 2
// pixels × TC channels (runs of TC contiguous channels, 16-byte cp.async, zero-filled outside the image)
// into one slot of an NS-slot ring, NS − 1 rows ahead of the row it computes. Thread (cg, jg) owns CPT
// channels × WC columns: it reads the WC + 2 pixels it needs from the slot (one CPT-wide shared load each;
// the column halo is its neighbours' pixels, already there), converts each value to fp32 once, and adds
// the row into the output rows that use it (two accumulator sets whose roles alternate with the row
// parity, so nothing is copied). Taps in the reference's order (p-major, then q), each one fp32 fma from
// acc = +0; then + bias, + residual, the activation, one rounding (common/depthwise_conv3x3.cuh's forms), with
// every flag (residual, activation, vector stores) tested once per output row rather than once per column piece:
// H100, dev/depthwise_conv3x3/h100-c4fcc3c-ring-rowepi.txt (run_variant.sh, interleaved, L2 flushed, 77,616 odd
// launches and every sweep row bit-identical to the per-column epilogue): 0.79-0.92× the time on NONE/RELU,
// 0.94-1.00× on SILU/GELU over the sweep's F16/BF16 stride-1 shapes, no row slower.
// An output row is finished right after its last input row. One __syncthreads per input row: after it,
// everyone's copies of row k have landed and nobody reads row k − 1 any more, so its slot takes row
// k + NS − 1.
// vec = 0 (C not a multiple of 16 bytes of channels, or x not 16-byte / y, res not CPT-element aligned): the same kernel with per-element
// copies into the ring and per-element stores (correct, not fast).
// Geometry (cgs, tws, colTiles, chunks, strips, rps) comes from DepthwiseConv3x3Heuristics.ringGrid; the
// grid is colTiles·chunks·strips·N blocks of cgs·tws threads with NS·(tws·WC + 2)·cgs·CPT·sizeof(T) bytes
// of dynamic shared memory. Limits: N·H·W·C < 2^31 (validated in Java); weights and bias in x's dtype.
//
// ptxas spill allowance: 16 bytes per kernel: the 2-channel geometries at their sm_90 register bounds (80 and 64)
// spill 4 bytes (stores) and 4-12 bytes (loads) since the row epilogue; measured as above, they are faster with it.
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// 16 bytes global → shared, bypassing L1; src_bytes = 0 writes 16 zero bytes and reads nothing.
__device__ __forceinline__ void cp16(unsigned dst, const void* src, unsigned src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// Filter taps and bias of a thread's CPT channels c0 … c0 + nch − 1, widened to fp32 once (channels past C: zeros).
template <typename T, int CPT>
__device__ __forceinline__ void load_filter(const T* __restrict__ w, const T* __restrict__ bias, int c0, int nch,
                                            float (&wr)[9][CPT], float (&br)[CPT]) {
#pragma unroll
    for (int e = 0; e < CPT; ++e) {
#pragma unroll
        for (int t = 0; t < 9; ++t) wr[t][e] = e < nch ? to_float(__ldg(w + (size_t)(c0 + e) * 9 + t)) : 0.f;
        br[e] = (bias != nullptr && e < nch) ? to_float(__ldg(bias + c0 + e)) : 0.f;
    }
}

// A thread's share of copying one tile row (KP pixels from column pxBase × TC channels from cBase, pixel-major) of
// image row `row` into a ring slot: chunk i = tid + m·nthr of the KP × TC/EPC 16-byte chunks; everything but the row
// is resolved once (init). vec = 0: per-element copies of the whole slot by all threads instead.
template <typename T, int MAXCP>
struct RowCopies {
    static constexpr int EPC = 16 / (int)sizeof(T);  // elements per 16-byte copy
    const T* src[MAXCP];      // chunk's first element in image row 0 (the image's first element if zero-filled)
    unsigned gbytes[MAXCP];   // 16, or 0: pixel outside the image or channels past C (zero-fill)
    unsigned dst[MAXCP];      // shared address in slot 0; ~0u: this thread has no chunk m

    __device__ __forceinline__ void init(int tid, int nthr, int cpp, int KP, int TC, int pxBase, int cBase, int W, int C,
                                         const T* img, unsigned ringBase) {
#pragma unroll
        for (int m = 0; m < MAXCP; ++m) {
            const int i = tid + m * nthr, k = i / cpp, ch = cBase + (i % cpp) * EPC, col = pxBase + k;
            const bool ok = col >= 0 && col < W && ch < C;
            src[m] = img + (ok ? (size_t)col * C + ch : 0);
            gbytes[m] = ok ? 16u : 0u;
            dst[m] = i < KP * cpp ? ringBase + (unsigned)(k * TC + (i % cpp) * EPC) * (unsigned)sizeof(T) : ~0u;
        }
    }

    __device__ __forceinline__ void copy(int row, int H, unsigned char* ring, int slot, unsigned slotBytes, size_t rowElems, int vec,
                                         int tid, int nthr, int KP, int TC, int pxBase, int cBase, int W, int C, const T* img) const {
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
    }
};

// A finished output row of a thread (taps + bias in v): + residual, the activation, one rounding, CPT-wide stores of
// its ncol columns (per element where vec = 0); each flag tested once per row, not per column piece.
template <typename T, int CPT, int WC>
__device__ __forceinline__ void store_row(float (&v)[WC][CPT], const T* __restrict__ ro, T* __restrict__ yo, int C, int ncol, int nch, int vec, int act) {
    using R = typename RawBits<CPT * (int)sizeof(T)>::type;
    if (ro != nullptr) {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
            if (kk < ncol) add_residual<T, CPT>(ro + kk * C, vec != 0, nch, v[kk]);
    }
    Pack<T, CPT> o[WC];
    if (act == ACT_NONE) {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
#pragma unroll
            for (int e = 0; e < CPT; ++e) o[kk].v[e] = from_float<T>(v[kk][e]);
    } else if (act == ACT_RELU) {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
#pragma unroll
            for (int e = 0; e < CPT; ++e) o[kk].v[e] = from_float<T>(relu(v[kk][e]));
    } else if (act == ACT_RELU6) {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
#pragma unroll
            for (int e = 0; e < CPT; ++e) o[kk].v[e] = from_float<T>(relu6(v[kk][e]));
    } else {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
#pragma unroll
            for (int e = 0; e < CPT; ++e) o[kk].v[e] = finish<T>(v[kk][e], act);
    }
    if (vec) {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
            if (kk < ncol) __stcs(reinterpret_cast<R*>(yo + kk * C), o[kk].raw);
    } else {
#pragma unroll
        for (int kk = 0; kk < WC; ++kk)
#pragma unroll
            for (int e = 0; e < CPT; ++e)
                if (kk < ncol && e < nch) yo[kk * C + e] = o[kk].v[e];
    }
}

template <typename T, int CPT, int WC, int NS>
__device__ __forceinline__ void dw_ring(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                        const T* __restrict__ res, T* __restrict__ y, int H, int W, int C, int cgs, int tws,
                                        int colTiles, int chunks, int strips, int rps, int act, int vec) {
    static_assert(NS >= 2, "ring of at least two rows");
    extern __shared__ __align__(16) unsigned char ring[];
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
    load_filter<T, CPT>(w, bias, c0, nch, wr, br);

    // this thread's share of a row copy, all row-independent except the row itself (hoisted out of the row loop)
    const int cpp = vec ? TC / EPC : 1;  // chunks per pixel (TC % EPC == 0 whenever vec)
    RowCopies<T, MAXCP> cps;
    cps.init(tid, nthr, cpp, KP, TC, pxBase, cBase, W, C, img, smem_addr(ring));
    // input row r of the strip (image row i0 − 1 + r) into slot `slot`
    auto copy_row = [&](int r, int slot) {
        cps.copy(i0 - 1 + r, H, ring, slot, slotBytes, rowElems, vec, tid, nthr, KP, TC, pxBase, cBase, W, C, img);
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
    // Accumulators of two consecutive output rows; the roles alternate with the row parity: at iteration k
    // the set `fin` holds output row i0+k−2 (gets p=2, is finished, then restarts from p=0 as row i0+k) and
    // `mid` holds row i0+k−1 (gets p=1).
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
                accumulate_tap_row<1, CPT, WC, KC>(wr, 2, in, fin, false);
#pragma unroll
                for (int kk = 0; kk < WC; ++kk)
#pragma unroll
                    for (int e = 0; e < CPT; ++e) v[kk][e] = hasBias ? __fadd_rn(fin[kk][e], br[e]) : fin[kk][e];
            }
            if (k >= 1) accumulate_tap_row<1, CPT, WC, KC>(wr, 1, in, mid, false);
            accumulate_tap_row<1, CPT, WC, KC>(wr, 0, in, fin, true);
        };
        if (k & 1) step(Y, X);
        else step(X, Y);
        if (k >= 2) {  // residual, activation, one rounding, CPT-wide store per column; each flag tested once per row
            const int ncol = nch > 0 ? min(WC, W - jt) : 0;  // columns of this row the thread stores
            store_row<T, CPT, WC>(v, ro, yo, C, ncol, nch, vec, act);
            yo += rowElems;
            if (ro != nullptr) ro += rowElems;
        }
        slot = slot + 1 == NS ? 0 : slot + 1;
    }
}

// Stride 2 (DepthwiseConv3x3Heuristics.useRingS2; gapfill.depthwise.nhwcRingS2 forces it on or off): the same ring,
// tile and epilogue with output row i reading input rows 2i−1 … 2i+1 and output column j input columns 2j−1 … 2j+1.
// A block's strip of rps output rows walks its 2·rows + 1 input rows once; input row k of the strip
// (image row 2·i0 − 1 + k) gives p = 1 to output row i0 + k/2 when k is odd, and when k is even p = 2 to output row
// i0 + k/2 − 1 (which it finishes) and p = 0 to output row i0 + k/2 (which it starts), so one accumulator set
// suffices and every output gets its taps in the reference's order (p-major, q within accumulate_tap_row). A thread
// owns CPT channels × WC output columns and reads its 2·WC + 1 input pixels per row from the slot; a tile row holds
// 2·TW + 1 input pixels.
template <typename T, int CPT, int WC, int NS>
__device__ __forceinline__ void dw_ring_s2(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                           const T* __restrict__ res, T* __restrict__ y, int H, int W, int C, int cgs, int tws,
                                           int colTiles, int chunks, int strips, int rps, int act, int vec) {
    static_assert(NS >= 2, "ring of at least two rows");
    extern __shared__ __align__(16) unsigned char ring[];
    constexpr int KC = 2 * WC + 1;                           // input pixels a thread reads per row
    constexpr int EPC = 16 / (int)sizeof(T);                 // elements per 16-byte copy
    constexpr int MAXCP = (KC * CPT + EPC - 1) / EPC;        // copies per thread per row (any tws ≥ 1)
    using R = typename RawBits<CPT * (int)sizeof(T)>::type;
    const int Ho = (H + 1) / 2, Wo = (W + 1) / 2;
    const int nthr = cgs * tws, tid = (int)threadIdx.x;
    const int TC = cgs * CPT, KP = 2 * tws * WC + 1;         // tile channels, tile input pixels per row
    const unsigned slotBytes = (unsigned)(KP * TC) * sizeof(T);
    unsigned bid = blockIdx.x;
    const int ct = (int)(bid % (unsigned)colTiles); bid /= (unsigned)colTiles;
    const int chk = (int)(bid % (unsigned)chunks); bid /= (unsigned)chunks;
    const int i0 = (int)(bid % (unsigned)strips) * rps;      // first output row of the strip
    const int n = (int)(bid / (unsigned)strips);
    const int nin = 2 * min(rps, Ho - i0) + 1;               // input rows 2·i0−1 … 2·(i0+rows−1)+1
    const int pxBase = 2 * ct * tws * WC - 1, cBase = chk * TC;
    const int cg = tid % cgs, jg = tid / cgs;
    const int c0 = cBase + cg * CPT, nch = min(CPT, C - c0);
    const int jt = ct * tws * WC + jg * WC;                  // first output column
    const size_t rowElems = (size_t)W * C, outRowElems = (size_t)Wo * C;
    const T* img = x + (size_t)n * H * rowElems;

    float wr[9][CPT], br[CPT];
    load_filter<T, CPT>(w, bias, c0, nch, wr, br);
    const int cpp = vec ? TC / EPC : 1;
    RowCopies<T, MAXCP> cps;
    cps.init(tid, nthr, cpp, KP, TC, pxBase, cBase, W, C, img, smem_addr(ring));
    auto copy_row = [&](int r, int slot) {  // input row r of the strip: image row 2·i0 − 1 + r
        cps.copy(2 * i0 - 1 + r, H, ring, slot, slotBytes, rowElems, vec, tid, nthr, KP, TC, pxBase, cBase, W, C, img);
    };

#pragma unroll
    for (int r = 0; r < NS - 1; ++r) {
        if (r < nin) copy_row(r, r);
        cp_commit();
    }
    const unsigned rd = (unsigned)(jg * 2 * WC * TC + cg * CPT) * sizeof(T);  // thread's first input pixel in a slot
    const unsigned pxBytes = (unsigned)TC * sizeof(T);
    const size_t o0 = (((size_t)n * Ho + i0) * Wo + jt) * C + c0;
    T* yo = y + o0;
    const T* ro = res != nullptr ? res + o0 : nullptr;
    const bool hasBias = bias != nullptr;
    const int ncol = nch > 0 ? max(0, min(WC, Wo - jt)) : 0;  // columns this thread stores
    float A[WC][CPT];  // the output row being accumulated
    int slot = 0;
#pragma unroll 1
    for (int k = 0; k < nin; ++k) {
        cp_wait<NS - 2>();
        __syncthreads();
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
        if (k & 1) {
            accumulate_tap_row<2, CPT, WC, KC>(wr, 1, in, A, false);
        } else {
            if (k >= 2) {  // finish output row i0 + k/2 − 1: p = 2, + bias, residual, activation, one rounding, store
                accumulate_tap_row<2, CPT, WC, KC>(wr, 2, in, A, false);
                float v[WC][CPT];
#pragma unroll
                for (int kk = 0; kk < WC; ++kk)
#pragma unroll
                    for (int e = 0; e < CPT; ++e) v[kk][e] = hasBias ? __fadd_rn(A[kk][e], br[e]) : A[kk][e];
                store_row<T, CPT, WC>(v, ro, yo, C, ncol, nch, vec, act);
                yo += outRowElems;
                if (ro != nullptr) ro += outRowElems;
            }
            if (k + 1 < nin) accumulate_tap_row<2, CPT, WC, KC>(wr, 0, in, A, true);  // start output row i0 + k/2
        }
        slot = slot + 1 == NS ? 0 : slot + 1;
    }
}

}  // namespace

// Three geometries of the same template, a ring of NS 4 rows each (8 rows measured within 2 % of 4, with twice the
// shared memory); DepthwiseConv3x3Heuristics.ringConfig picks one and ringGrid must use the same CPT and WC:
//   c4w2: CPT 4 channels × WC 2 columns per thread, ≤ 128 registers (2 blocks of 256 threads per SM): C > 128 with
//         NONE/RELU/RELU6
//   c2w4: 2 × 4, ≤ 85 registers on sm_90 (3 per SM; 80 used): C ≤ 128
//   c2w2: 2 × 2, ≤ 64 registers on sm_90 (4 per SM): C > 128 with SILU/GELU
// H100, cuda-native/dev/depthwise_conv3x3/h100-241f285-ring-cpt2.txt (interleaved, L2 flushed, every element
// bit-identical across the three): c2w4 against c4w2 on 8x112x112x96 F16 NONE 24.5 vs 30.5 µs, SILU 30.3 vs
// 43.7 µs; c2w2 on 32x56x56x256 SILU 65.2 vs 76.2 µs; c4w2 stays ahead on 64x14x14x1024 NONE (31.1 vs 34.3 µs).
// Blocks per SM the 2-channel geometries are compiled for: on sm_80/86/89 ptxas needs a few more registers than
// 85 (c2w4) and 64 (c2w2) and would spill, so those get one block per SM less (at most 128 and 85 registers).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define DW_RING_MINB_C2W4 2
#define DW_RING_MINB_C2W2 3
#else
#define DW_RING_MINB_C2W4 3
#define DW_RING_MINB_C2W2 4
#endif
#define DW_RING(T, NAME, CPT, WC, MINB)                                                                                \
    extern "C" __global__ void __launch_bounds__(256, MINB) NAME(                                                      \
        const T* x, const T* w, const T* bias, const T* res, T* y, int H, int W, int C, int cgs, int tws,            \
        int colTiles, int chunks, int strips, int rps, int act, int vec) {                                             \
        dw_ring<T, CPT, WC, 4>(x, w, bias, res, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, act, vec);       \
    }

DW_RING(__half, dwconv3x3_nhwc_ring_f16_s1, 4, 2, 2)
DW_RING(__nv_bfloat16, dwconv3x3_nhwc_ring_bf16_s1, 4, 2, 2)
DW_RING(__half, dwconv3x3_nhwc_ring_c2w4_f16_s1, 2, 4, DW_RING_MINB_C2W4)
DW_RING(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w4_bf16_s1, 2, 4, DW_RING_MINB_C2W4)
DW_RING(__half, dwconv3x3_nhwc_ring_c2w2_f16_s1, 2, 2, DW_RING_MINB_C2W2)
DW_RING(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w2_bf16_s1, 2, 2, DW_RING_MINB_C2W2)
// F32: c2w4 at ≤ 128 registers (120 used on sm_80 and sm_90, 2 blocks per SM, as nhwc.cu's F32 kernel); at the 80 and 64
// of the half-precision 2-channel geometries, and at c4w2's 128, F32's double-float SiLU/GELU spill (sm_90a: 72/180,
// 52/132, 16/32 bytes of spill stores/loads).
DW_RING(float, dwconv3x3_nhwc_ring_c2w4_f32_s1, 2, 4, 2)
// F32 2 × 2 (DepthwiseConv3x3Heuristics.ringConfig: SiLU/GELU below 10M outputs): 100 registers on sm_90a at a bound of
// 128 (2 blocks of 256 per SM, as 2 × 4; at 85 it spills 28/68 bytes there), fewer accumulators for the double-float
// epilogue. H100 at 17854af + this kernel: 0.84-0.97× the 2 × 4 kernel's time on 1x64x64x384 and 8x112x112x96
// SiLU/GELU_ERF, 1.01-1.23× on NONE/RELU and on the larger shapes but one.
DW_RING(float, dwconv3x3_nhwc_ring_c2w2_f32_s1, 2, 2, 2)

// Stride 2 (DepthwiseConv3x3Heuristics.useRingS2 and ringS2Config pick the kernel and geometry), a ring of 4 input rows.
// 2 channels × 4 output columns per thread: ≤ 128 registers (ptxas: 106-108 F16/BF16, 127-128 F32, no spills; 2 blocks
// of 256 per SM); H100 at 0bb8244: 1.04-1.48× nhwc.cu's stride-2 kernel on F16/BF16, 1.04-1.17× on F32 NONE/RELU,
// F32 SiLU/GELU 0.79-0.97×.
#define DW_RING_S2(T, NAME, CPT, WC, MINB)                                                                             \
    extern "C" __global__ void __launch_bounds__(256, MINB) NAME(                                                      \
        const T* x, const T* w, const T* bias, const T* res, T* y, int H, int W, int C, int cgs, int tws,            \
        int colTiles, int chunks, int strips, int rps, int act, int vec) {                                             \
        dw_ring_s2<T, CPT, WC, 4>(x, w, bias, res, y, H, W, C, cgs, tws, colTiles, chunks, strips, rps, act, vec);    \
    }

DW_RING_S2(__half, dwconv3x3_nhwc_ring_c2w4_f16_s2, 2, 4, 2)
DW_RING_S2(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w4_bf16_s2, 2, 4, 2)
DW_RING_S2(float, dwconv3x3_nhwc_ring_c2w4_f32_s2, 2, 4, 2)
// 2 channels × 2 output columns (larger shapes, and F16/BF16 SiLU/GELU): F16/BF16 at ≤ 85 registers (70 on sm_90a:
// 3 blocks of 256 per SM; at 64, 4 blocks, they spill), F32 at ≤ 128 (114; its double-float SiLU/GELU spill at 85).
// H100 at 5474511: 0.75-0.90× the 2 × 4 kernel's time on F16/BF16 from 6.4M outputs, F32 SiLU/GELU 1.07-1.17× nhwc.cu.
DW_RING_S2(__half, dwconv3x3_nhwc_ring_c2w2_f16_s2, 2, 2, 3)
DW_RING_S2(__nv_bfloat16, dwconv3x3_nhwc_ring_c2w2_bf16_s2, 2, 2, 3)
DW_RING_S2(float, dwconv3x3_nhwc_ring_c2w2_f32_s2, 2, 2, 2)
