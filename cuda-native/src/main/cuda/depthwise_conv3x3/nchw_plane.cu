// depthwise_conv3x3/nchw_plane: NCHW with whole (n, c) planes staged in shared memory,
// y[n,c,i,j] = act(bias[c] + Σ_{p,q} w[c,p,q]·x[n, c, i+p−1, j+q−1] (+ res[n,c,i,j])), zero padding 1,
// stride 1 (stride 2 stays in nchw.cu: this kernel measured 0.5-1.0x its time there on the H100).
//
// Bands (BR < H): a plane of which two do not fit (F32 112×112 and up) is staged in bands of BR output rows, one band
// of one plane a chunk (P = 1), each with the input row above and below it (read again by the neighbouring bands);
// rows are a multiple of 16 bytes there, so every band starts 16-byte aligned. BR >= H: whole planes, P a chunk.
// Measured (H100, 7bd2477's sweep, nchw.cu timed beside it): F32 8×96×112×112 NONE 28.9 µs against 35.6 (0.88 of the
// floor), 16×64×224×224 NONE 148.8 against 183.1 (0.91); SiLU 0.86-0.93× nchw.cu; GELU_ERF and F16/BF16 lose there.
// Regime: stride-1 NCHW planes small enough that two chunks of them fit in 80 KiB of shared memory, sm_80+ (cp.async);
// AUTO takes it for F16/BF16 up to 56×56 and for F32 with NONE/RELU/RELU6, in bands where two planes do not fit, and
// F32 SiLU in bands (DepthwiseConv3x3Heuristics.usePlane, from the H100 A/Bs in
// cuda-native/dev/depthwise_conv3x3/h100-plane-*.txt and docs/benchmark-runs/h100/depthwise-knob-probe-23dd688-bands.txt). The planes of consecutive (n, c) are
// contiguous in memory, so a chunk of P planes is one contiguous run of bytes.
// Why: nchw.cu gives each thread VW output columns (VW = the widest access that divides W) and keeps two input
// rows in flight in registers; at W = 14 and 28 that is 4- and 8-byte accesses and ~16 KiB in flight per SM,
// and the kernel is latency-bound (f16 64×1024×14×14 NONE at 34 % of the floor at 349817d). Here a block copies a
// whole chunk of P planes with 16-byte cp.async (every byte read once, fully coalesced, double-buffered: the next
// chunk's copies are in flight while the current one is computed), then computes from shared memory.
// Floor: (|x| + |y| (+ |res|) + |w| + |bias|) bytes / copy bandwidth.
//
// Block: a persistent loop over chunks k = blockIdx.x, blockIdx.x + gridDim.x, …; chunk k is planes
// [k·P, min((k+1)·P, planes)). Thread t owns one item of every chunk: plane t / (strips·nseg) of the chunk,
// output rows [i0, i0 + R) of it (strip), output columns [j0, j0 + SEG) (segment); threads past P·strips·nseg
// only copy. It walks its strip's input rows top to bottom (R + 2 of them), reading the SEG + 2 input
// columns it needs of each row from shared memory once (LV-wide loads for the columns inside the segment, one
// scalar per halo column; zero outside the image), converting each once to fp32, and adds the row into the ≤ 3
// output rows that use it (a rolling window of three accumulator rows, as nchw.cu). Taps in the reference's order
// (p-major, then q), each one fp32 fma from acc = +0 (the fma also runs on padding zeros); then + bias,
// + residual, the activation, one rounding (common/depthwise_conv3x3.cuh's functions). Same operations in the
// same order as nchw.cu, so the same bits for every activation.
// Outputs: with stage = 1 each thread writes its rounded outputs into a third shared buffer, and after a barrier
// the block stores the chunk's outputs (contiguous in y) with 16-byte streaming stores: a thread's own row pieces
// narrower than 16 bytes, stored directly, scatter over many sectors per warp instruction (H100: 3-4x slower at
// SEG = 7 and 14). stage = 0 (16-byte row pieces, which store as fast directly, or y not 16-byte aligned): direct
// stores, SEG-wide pieces when vecOut, else per element.
// The walk is compiled once per activation class (NONE/RELU/RELU6 together, SILU, GELU_ERF, GELU_TANH), so the
// code a launch runs holds one epilogue: with every epilogue inlined per row the i-cache misses (as nchw.cu's
// unrolled predecessor did).
// Requirements (DepthwiseConv3x3Heuristics.planeGrid checks them and otherwise keeps nchw.cu): W % SEG == 0; LV
// divides SEG; x 16-byte aligned and P·H·W·sizeof(T) a multiple of 16 (every chunk starts on a 16-byte boundary;
// the last chunk's tail of < 16 bytes is copied per element); stage only with y 16-byte aligned (a chunk's outputs
// are as many bytes);
// vecOut only with y and res aligned to the store piece (the largest power of two dividing SEG, ≤ 16 bytes).
// Dynamic shared memory: 2·P·H·W·sizeof(T) (+ P·H·W·sizeof(T) when stage) bytes; bands 2·(BR + 2)·W·sizeof(T)
// (+ BR·W·sizeof(T)). Limits: N·C·H·W < 2^31
// (validated in Java).
#include "depthwise_conv3x3.cuh"

using namespace gapfill;
using namespace gapfill::dwconv;

namespace {

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void cp16(unsigned dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_wait1() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

// elems input elements from x + off → dst (16-byte copies, then a tail of < 16 bytes per element: only the last
// whole-plane chunk has one).
template <typename T>
__device__ __forceinline__ void copy_span(const T* __restrict__ x, T* dst, size_t off, size_t elems) {
    const T* src = x + off;
    const int n16 = (int)(elems * sizeof(T) / 16);
    const unsigned d = smem_addr(dst);
    for (int q = (int)threadIdx.x; q < n16; q += (int)blockDim.x)
        cp16(d + 16u * (unsigned)q, reinterpret_cast<const char*>(src) + 16 * (size_t)q);
    const int done = n16 * (16 / (int)sizeof(T));
    const int tail = (int)elems - done;
    if ((int)threadIdx.x < tail) dst[done + threadIdx.x] = src[done + threadIdx.x];
}

// What chunk k covers: planes [plane0, plane0 + pc) and, of each, output rows [r0, r1). Whole planes (BR >= H): P
// planes, rows [0, H). Bands (BR < H, P = 1): band k % bands of plane k / bands, rows [r0, min(r0 + BR, H)).
struct Span {
    int plane0, pc, r0, r1;
};
__device__ __forceinline__ Span chunk_span(int k, int P, int planes, int H, int BR, int bands) {
    if (bands == 1) return Span{k * P, min(P, planes - k * P), 0, H};
    const int pl = k / bands, r0 = (k - pl * bands) * BR;
    return Span{pl, 1, r0, min(r0 + BR, H)};
}

// Chunk k's input → buf: whole planes as they lie in x; a band's rows r0 − 1 … r1 (those inside the image), input row
// r at buf + (r − r0 + 1)·W (slot 0 holds the row above the band).
template <typename T>
__device__ __forceinline__ void copy_chunk(const T* __restrict__ x, T* buf, const Span& c, int H, int W, int bands) {
    const size_t planeIn = (size_t)H * W;
    if (bands == 1) {
        copy_span(x, buf, (size_t)c.plane0 * planeIn, (size_t)c.pc * planeIn);
        return;
    }
    const int lo = max(c.r0 - 1, 0), hi = min(c.r1 + 1, H);
    copy_span(x, buf + (size_t)(lo - c.r0 + 1) * W, ((size_t)c.plane0 * H + lo) * W, (size_t)(hi - lo) * W);
}

// The SEG + 2 input columns j0 − 1 … j0 + SEG of the input row at rp (rp points at column j0) in fp32 (in[0] the
// left halo, in[1 …] the segment's own columns, in[SEG + 1] the right halo); zero for a row outside the image
// (valid = false) and for halo columns outside it.
template <typename T, int SEG, int LV>
__device__ __forceinline__ void row_in(const T* rp, bool valid, bool left, bool right, float (&in)[SEG + 2]) {
#pragma unroll
    for (int e = 0; e < SEG + 2; ++e) in[e] = 0.f;
    if (!valid) return;
#pragma unroll
    for (int v = 0; v < SEG / LV; ++v) {
        Pack<T, LV> q;
        q.raw = *reinterpret_cast<const typename RawBits<LV * (int)sizeof(T)>::type*>(rp + v * LV);
#pragma unroll
        for (int e = 0; e < LV; ++e) in[1 + v * LV + e] = to_float(q.v[e]);
    }
    if (left) in[0] = to_float(rp[-1]);
    if (right) in[SEG + 1] = to_float(rp[SEG]);
}

// Elements per store: the largest power of two that divides SEG, at most 16 bytes.
template <typename T, int SEG> struct StoreWidth {
    static constexpr int pow2 = (SEG & -SEG);
    static constexpr int value = pow2 * (int)sizeof(T) <= 16 ? pow2 : 16 / (int)sizeof(T);
};

// Activation classes the walk is compiled for: the exact ones (NONE, RELU, RELU6: the act argument picks) and each
// smooth one on its own, so the code a launch runs holds one activation's epilogue.
enum ActClass : int { AC_EXACT = -1 };

// One output row piece: bias, residual, activation, one rounding, and the SEG outputs written to dst (shared memory
// when the block stages its outputs, else y itself: streaming stores) in pieces of SV elements. Every flag is tested
// once per row, outside the element loops (ncu: the per-element form cost ~44 instructions per output at SEG = 7).
// shared is block-uniform (a runtime flag rather than a template parameter: one copy of the walk per activation class
// keeps the fatbin small).
template <typename T, int SEG, int AC>
__device__ __forceinline__ void finish_seg(const T* __restrict__ res, T* dst, bool shared, size_t o, size_t ro, float b,
                                           bool hasBias, int act, bool vec, const float (&acc)[SEG]) {
    constexpr int SV = StoreWidth<T, SEG>::value;
    using R = typename RawBits<SV * (int)sizeof(T)>::type;
    float v[SEG];
#pragma unroll
    for (int e = 0; e < SEG; ++e) v[e] = acc[e];
    if (hasBias) {
#pragma unroll
        for (int e = 0; e < SEG; ++e) v[e] = __fadd_rn(v[e], b);
    }
    if (res != nullptr) {
#pragma unroll
        for (int g = 0; g < SEG / SV; ++g)
            add_residual<T, SV>(res + ro + g * SV, vec, SV, *reinterpret_cast<float(*)[SV]>(&v[g * SV]));
    }
    Pack<T, SV> q[SEG / SV];
    if (AC == AC_EXACT) {
        if (act == ACT_RELU) {
#pragma unroll
            for (int e = 0; e < SEG; ++e) v[e] = relu(v[e]);
        } else if (act == ACT_RELU6) {
#pragma unroll
            for (int e = 0; e < SEG; ++e) v[e] = relu6(v[e]);
        }
#pragma unroll
        for (int e = 0; e < SEG; ++e) q[e / SV].v[e % SV] = from_float<T>(v[e]);
    } else {
#pragma unroll
        for (int e = 0; e < SEG; ++e) q[e / SV].v[e % SV] = finish<T>(v[e], AC);
    }
    T* d = dst + o;
    if (shared) {
#pragma unroll
        for (int g = 0; g < SEG / SV; ++g) reinterpret_cast<R*>(d)[g] = q[g].raw;
    } else if (vec) {
#pragma unroll
        for (int g = 0; g < SEG / SV; ++g) __stcs(reinterpret_cast<R*>(d) + g, q[g].raw);
    } else {
#pragma unroll
        for (int e = 0; e < SEG; ++e) d[e] = q[e / SV].v[e % SV];
    }
}

// Where a thread's walk stands: the input row at rp (index r) is next; o and ro index the next output row to finish
// in dst and in the residual.
template <typename T> struct WalkPos {
    const T* rp;
    int r;
    size_t o, ro;
};

// Step t of the walk: input row i0−1+t goes into output rows i0+t−2 (p=2, then finished), i0+t−1 (p=1) and i0+t
// (p=0, fresh); p2, p1, p0 are those rows' accumulators.
template <typename T, int SEG, int LV, int AC>
__device__ __forceinline__ void walk_step(WalkPos<T>& k, int t, int rows, int H, int W, bool left, bool right,
                                          const float (&wr)[9], float b, bool hasBias, const T* __restrict__ res, T* dst,
                                          bool shared, int act, bool vec, float (&p2)[SEG], float (&p1)[SEG], float (&p0)[SEG]) {
    constexpr int K = SEG + 2;
    float in[K];
    row_in<T, SEG, LV>(k.rp, k.r >= 0 && k.r < H, left, right, in);
    if (t >= 2) {
        taps<1, SEG, K>(wr, 2, in, p2, false);
        finish_seg<T, SEG, AC>(res, dst, shared, k.o, k.ro, b, hasBias, act, vec, p2);
        k.o += (size_t)W;
        k.ro += (size_t)W;
    }
    if (t >= 1 && t - 1 < rows) taps<1, SEG, K>(wr, 1, in, p1, false);
    if (t < rows) taps<1, SEG, K>(wr, 0, in, p0, true);
    k.rp += W;
    ++k.r;
}

// One thread's item of one chunk: output rows [i0, i0 + rows) × columns [j0, j0 + SEG) of a plane whose input row
// i0 − 1, column j0, is at rp (shared memory; rows outside the image are not read), written to dst at index o (+ W per
// row); the residual at global index ro (+ W per row). One step per loop
// iteration, the accumulator rows rotated by copies: unrolling by three (roles rotating instead) was within ±3 % on the
// H100 (cuda-native/dev/depthwise_conv3x3/h100-plane-ab2.txt, "plane" against "roll") for more registers and code.
template <typename T, int SEG, int LV, int AC>
__device__ __forceinline__ void walk(const T* rp, int i0, int j0, int rows, int H, int W, const float (&wr)[9], float b,
                                     bool hasBias, const T* __restrict__ res, T* dst, bool shared, size_t o, size_t ro, int act,
                                     bool vec) {
    const bool left = j0 > 0, right = j0 + SEG < W;
    float a0[SEG] = {}, a1[SEG] = {}, a2[SEG] = {};
    WalkPos<T> k{rp, i0 - 1, o, ro};
#pragma unroll 1
    for (int t = 0; t < rows + 2; ++t) {
        walk_step<T, SEG, LV, AC>(k, t, rows, H, W, left, right, wr, b, hasBias, res, dst, shared, act, vec, a0, a1, a2);
#pragma unroll
        for (int e = 0; e < SEG; ++e) { a0[e] = a1[e]; a1[e] = a2[e]; }
    }
}

template <typename T, int SEG, int LV>
__device__ __forceinline__ void walk_act(const T* rp, int i0, int j0, int rows, int H, int W, const float (&wr)[9], float b,
                                         bool hasBias, const T* __restrict__ res, T* dst, bool shared, size_t o, size_t ro,
                                         int act, bool vec) {
    if (act == ACT_SILU) walk<T, SEG, LV, ACT_SILU>(rp, i0, j0, rows, H, W, wr, b, hasBias, res, dst, shared, o, ro, act, vec);
    else if (act == ACT_GELU_ERF) walk<T, SEG, LV, ACT_GELU_ERF>(rp, i0, j0, rows, H, W, wr, b, hasBias, res, dst, shared, o, ro, act, vec);
    else if (act == ACT_GELU_TANH) walk<T, SEG, LV, ACT_GELU_TANH>(rp, i0, j0, rows, H, W, wr, b, hasBias, res, dst, shared, o, ro, act, vec);
    else walk<T, SEG, LV, AC_EXACT>(rp, i0, j0, rows, H, W, wr, b, hasBias, res, dst, shared, o, ro, act, vec);
}

// BANDED (BR < H) is a template parameter, one entry point each, so that the whole-plane entries compile close to how
// they did before bands (every band branch folded away; the same index arithmetic; registers as at 644f67f on 19 of
// 28 entries, 7 with a runtime band count): at 7bd2477, with the band count a runtime value, the F32 7-column
// whole-plane rows took 1.013-1.020× their 644f67f time.
template <typename T, int SEG, int LV, bool BANDED>
__device__ __forceinline__ void dw_plane(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                         const T* __restrict__ res, T* __restrict__ y, int planes, int C, int H, int W,
                                         int P, int R, int BR, int act, int vecOut, int stage) {
    static_assert(SEG % LV == 0, "LV-wide loads tile the segment's columns");
    extern __shared__ __align__(16) unsigned char smem[];
    const int planeIn = H * W;                     // < 2^31 (validated); the output plane is as large
    const int bands = BANDED ? (H + BR - 1) / BR : 1;
    const int chunkRows = BANDED ? BR : H;         // output rows of a plane one chunk covers at most
    const int nseg = W / SEG, strips = (chunkRows + R - 1) / R, perPlane = nseg * strips;
    const int tid = (int)threadIdx.x;
    const int pl = tid / perPlane, rem = tid - pl * perPlane;
    const int strip = rem / nseg, seg = rem - strip * nseg;
    const int j0 = seg * SEG;
    const bool worker = pl < P;
    const int nchunks = BANDED ? planes * bands : (planes + P - 1) / P;
    // whole planes: P planes a buffer; bands: BR + 2 input rows (W·sizeof(T) a multiple of 16 there, checked on the host)
    const size_t bufIn = BANDED ? (size_t)(BR + 2) * W : (size_t)P * planeIn;
    T* buf0 = reinterpret_cast<T*>(smem);
    T* buf1 = buf0 + bufIn;                        // P·H·W·sizeof(T) is a multiple of 16: aligned
    T* obuf = buf1 + bufIn;                        // the chunk's outputs when stage != 0
    const bool hasBias = bias != nullptr;
    const bool vec = vecOut != 0;

    // whole planes (BANDED false): the index arithmetic as before bands, term for term
    auto copy = [&](T* dst, int kk) {
        if constexpr (BANDED) {
            copy_chunk(x, dst, chunk_span(kk, P, planes, H, BR, bands), H, W, bands);
        } else {
            copy_span(x, dst, (size_t)kk * P * planeIn, (size_t)min(P, planes - kk * P) * planeIn);
        }
    };
    int k = (int)blockIdx.x;
    if (k >= nchunks) return;
    copy(buf0, k);
    cp_commit();
    int cur = 0;
    for (; k < nchunks; k += (int)gridDim.x) {
        const int next = k + (int)gridDim.x;
        if (next < nchunks) copy(cur ? buf0 : buf1, next);
        cp_commit();
        // this chunk's weights and bias do not depend on shared memory: load them while its copies land
        const Span c = chunk_span(k, P, planes, H, BR, bands);
        const int plane = c.plane0 + pl;
        const int i0 = c.r0 + strip * R;
        const bool live = BANDED ? worker && i0 < c.r1 : worker && plane < planes;
        float wr[9];
        float b = 0.f;
        if (live) {
            const int ch = plane % C;
#pragma unroll
            for (int t = 0; t < 9; ++t) wr[t] = to_float(__ldg(w + (size_t)ch * 9 + t));
            if (hasBias) b = to_float(__ldg(bias + ch));
        }
        cp_wait1();  // chunk k's group has landed (the next one may still be in flight)
        __syncthreads();
        if (live) {
            const T* in = cur ? buf1 : buf0;
            // input row i0 − 1: whole planes hold row r of plane pl at pl·H·W + r·W (row −1 is never read); a band
            // holds row r at (r − r0 + 1)·W
            const T* rp = BANDED ? in + (size_t)(i0 - c.r0) * W + j0 : in + (size_t)pl * planeIn + (i0 - 1) * W + j0;
            const size_t og = ((size_t)plane * H + i0) * W + j0;  // global output index of (i0, j0)
            const size_t ob = BANDED ? (size_t)(i0 - c.r0) * W + j0 : ((size_t)pl * H + i0) * W + j0;
            const bool shared = stage != 0;
            walk_act<T, SEG, LV>(rp, i0, j0, min(R, c.r1 - i0), H, W, wr, b, hasBias, res, shared ? obuf : y, shared,
                                 shared ? ob : og, og, act, vec);
        }
        __syncthreads();  // the chunk's input is no longer read (its buffer takes chunk k + 2·gridDim.x next), obuf is full
        if (stage) {
            // the chunk's outputs are contiguous in y: 16-byte streaming stores, then the < 16-byte tail per element
            const size_t elems = BANDED ? (size_t)(c.r1 - c.r0) * W : (size_t)min(P, planes - k * P) * planeIn;
            T* dst = BANDED ? y + ((size_t)c.plane0 * H + c.r0) * W : y + (size_t)k * P * planeIn;
            const int n16 = (int)(elems * sizeof(T) / 16);
            for (int q = tid; q < n16; q += (int)blockDim.x)
                __stcs(reinterpret_cast<uint4*>(dst) + q, reinterpret_cast<const uint4*>(obuf)[q]);
            const int done = n16 * (16 / (int)sizeof(T));
            if (tid < (int)elems - done) dst[done + tid] = obuf[done + tid];
        }
        cur ^= 1;
    }
}

}  // namespace

// Entry points: dwconv3x3_nchw_plane_<dtype>_s1_g<SEG>_l<LV> (whole planes; BR is not read) and the same name with
// _band (bands of BR < H rows), SEG ∈ {1, 2, 4, 7, 8} output columns per thread (8 for 16-bit types), LV = the largest
// power of two dividing SEG, at most 16 / sizeof(T) (with SEG | W every LV-wide shared load is aligned).
// DepthwiseConv3x3Heuristics.planeSegment picks SEG, PlaneGrid.symbol the entry.
#define DW_PLANE_ENTRY(T, NAME, SEG, LV, BANDED)                                                                     \
    extern "C" __global__ void __launch_bounds__(256, 2) NAME(const T* x, const T* w, const T* bias, const T* res,  \
        T* y, int planes, int C, int H, int W, int P, int R, int BR, int act, int vecOut, int stage) {               \
        dw_plane<T, SEG, LV, BANDED>(x, w, bias, res, y, planes, C, H, W, P, R, BR, act, vecOut, stage);            \
    }
#define DW_PLANE(T, TN, SEG, LV)                                                                                     \
    DW_PLANE_ENTRY(T, dwconv3x3_nchw_plane_##TN##_s1_g##SEG##_l##LV, SEG, LV, false)                                 \
    DW_PLANE_ENTRY(T, dwconv3x3_nchw_plane_##TN##_s1_g##SEG##_l##LV##_band, SEG, LV, true)

DW_PLANE(float, f32, 1, 1) DW_PLANE(float, f32, 2, 2) DW_PLANE(float, f32, 4, 4) DW_PLANE(float, f32, 7, 1)
DW_PLANE(__half, f16, 1, 1) DW_PLANE(__half, f16, 2, 2) DW_PLANE(__half, f16, 4, 4) DW_PLANE(__half, f16, 7, 1)
DW_PLANE(__half, f16, 8, 8)
DW_PLANE(__nv_bfloat16, bf16, 1, 1) DW_PLANE(__nv_bfloat16, bf16, 2, 2) DW_PLANE(__nv_bfloat16, bf16, 4, 4)
DW_PLANE(__nv_bfloat16, bf16, 7, 1) DW_PLANE(__nv_bfloat16, bf16, 8, 8)
