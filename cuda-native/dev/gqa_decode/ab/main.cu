// A/B/C/D timing of the gqa_decode tensor-core kernel (stage.py): F16, D = 128, the small-problem rows of issue 7's
// sweep where the kernel runs 4-5 µs above a plain read of the same bytes, plus a few large ones as controls.
// Contiguous (BHLD) and paged (page 16, pages in random order) caches; lengths = L, or drawn in [L/2, L]. Every cache
// row past a sequence's length holds NaN, so a variant that reads such a row without masking it shows it.
// Per shape: each variant runs on poisoned outputs (0xFF) and its o and lse are compared with A's byte for byte
// (B and C keep A's arithmetic order, so they must be identical; D splits the keys differently, so its o must be
// within 2 F16 ulps of A's and its lse within 1e-5 relative); then A, B, C, D are timed interleaved, the L2
// flushed by a 256 MiB read before every launch, CUDA events, median of 31. Split counts and chunks are those of
// GqaDecodeHeuristics (the regimes recorded in docs/benchmarks/h100/gqa_decode.json at c2335e1).
#include "harness.h"
#include "launch.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

void a_launch(const GqaAbArgs& x, cudaStream_t st);
void b_launch(const GqaAbArgs& x, cudaStream_t st);
void c_launch(const GqaAbArgs& x, cudaStream_t st);
void d_launch(const GqaAbArgs& x, cudaStream_t st);

// F16 bits as an ordered integer: the distance of two of them is their distance in ulps (same or opposite sign).
static int ordered(uint16_t h) { return (h & 0x8000) ? -(int)(h & 0x7fff) : (int)h; }

__global__ void fill_random(__half* p, long long n, unsigned seed) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 0x9E3779B9u ^ (unsigned)(i >> 32) ^ seed * 0x85EBCA6Bu;
        x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
        p[i] = __float2half((float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f);  // [-1, 1)
    }
}
// NaN into every row at or past its sequence's length. Contiguous: row (b, h, l) at b·sb + h·sh + l·sl. Paged: the
// position l of sequence b lives in page table[b·mp + l/16] at slot l % 16.
__global__ void poison_tail(__half* k, __half* v, const int* lens, const int* table, int batch, int hkv, int lmax, int mp,
                            long long sb, long long sh, long long sl, long long ps) {
    const long long rows = (long long)batch * hkv * lmax;
    const __half nan = __ushort_as_half(0x7e00);
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x) {
        const int l = (int)(r % lmax);
        const int h = (int)((r / lmax) % hkv);
        const int b = (int)(r / ((long long)lmax * hkv));
        if (l < lens[b]) continue;
        long long off = table == nullptr ? b * sb + h * sh + l * sl : (long long)table[b * mp + (l >> 4)] * ps + h * sh + (l & 15) * sl;
        for (int d = 0; d < 128; ++d) { k[off + d] = nan; v[off + d] = nan; }
    }
}
struct Shape { int b, l, hq, hkv; bool paged, varied; int splits; };

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    cudaStream_t st; CK(cudaStreamCreate(&st));
    const double copy_gbps = copy_rate_gbps(st);
    printf("GPU %s, %d SMs, copy %.0f GB/s\n", prop.name, sms, copy_gbps);
    AbTimer timer(st, sms);

    const char* d_env = getenv("GQA_AB_D_SPLITS");
    const bool d_same_splits = d_env != nullptr && strcmp(d_env, "same") == 0;
    std::vector<Shape> shapes;
    const int base[][5] = {{1, 8192, 32, 8, 16}, {4, 2048, 32, 8, 4}, {16, 512, 32, 8, 1}, {1, 2048, 32, 8, 16}, {1, 512, 32, 8, 8},
                           {1, 8192, 64, 8, 16}, {1, 8192, 28, 4, 32}, {4, 2048, 28, 4, 8}, {1, 8192, 32, 32, 4},
                           {1, 32768, 32, 8, 16}, {4, 8192, 32, 8, 4}, {16, 8192, 32, 8, 1}, {1, 131072, 32, 8, 16}};
    for (auto& s : base)
        for (int paged = 0; paged < 2; ++paged)
            for (int varied = 0; varied < 2; ++varied) shapes.push_back({s[0], s[1], s[2], s[3], (bool)paged, (bool)varied, s[4]});

    printf("%-34s %6s %4s | %8s %8s %8s %8s | %6s %6s %6s | %s\n", "shape", "floor", "s", "A us", "B us", "C us", "D us", "B/A", "C/A", "D/A",
           "B, C vs A (o and lse bytes); D vs A (max ulp of o, max rel of lse); NaN in A");
    int bad = 0;
    std::mt19937 rng(11);
    for (const Shape& sh : shapes) {
        const int D = 128, g = sh.hq / sh.hkv, tiles = (g + 15) / 16, mp = (sh.l + 15) / 16;
        std::vector<int> lens(sh.b);
        for (int i = 0; i < sh.b; ++i) lens[i] = sh.varied ? sh.l / 2 + (int)(rng() % (unsigned)(sh.l / 2 + 1)) : sh.l;
        const long long kv_elems = sh.paged ? (long long)sh.b * mp * 16 * sh.hkv * D : (long long)sh.b * sh.hkv * sh.l * D;
        __half *q, *k, *v; int *dlens, *dtable = nullptr;
        CK(cudaMalloc(&q, (size_t)sh.b * sh.hq * D * 2)); CK(cudaMalloc(&k, kv_elems * 2)); CK(cudaMalloc(&v, kv_elems * 2));
        CK(cudaMalloc(&dlens, sh.b * 4)); CK(cudaMemcpy(dlens, lens.data(), sh.b * 4, cudaMemcpyHostToDevice));
        fill_random<<<sms * 8, 256, 0, st>>>(q, (long long)sh.b * sh.hq * D, 1);
        fill_random<<<sms * 8, 256, 0, st>>>(k, kv_elems, 2);
        fill_random<<<sms * 8, 256, 0, st>>>(v, kv_elems, 3);
        GqaAbArgs x{};
        if (sh.paged) {
            std::vector<int> perm(sh.b * mp);
            for (int i = 0; i < (int)perm.size(); ++i) perm[i] = i;
            std::shuffle(perm.begin(), perm.end(), rng);
            CK(cudaMalloc(&dtable, perm.size() * 4)); CK(cudaMemcpy(dtable, perm.data(), perm.size() * 4, cudaMemcpyHostToDevice));
            x.stride_b = 0; x.stride_h = D; x.stride_l = (long long)sh.hkv * D; x.page_stride = 16LL * sh.hkv * D;
            x.max_pages = mp; x.page_shift = 4;
        } else {
            x.stride_b = (long long)sh.hkv * sh.l * D; x.stride_h = (long long)sh.l * D; x.stride_l = D; x.page_stride = 0;
            x.max_pages = 0; x.page_shift = 0;
        }
        poison_tail<<<sms * 8, 256, 0, st>>>(k, v, dlens, dtable, sh.b, sh.hkv, sh.l, mp, x.stride_b, x.stride_h, x.stride_l, x.page_stride);
        CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
        x.q = q; x.k = k; x.v = v; x.table = dtable; x.lens = dlens;
        x.batch = sh.b; x.hq = sh.hq; x.hkv = sh.hkv; x.g = g; x.head_tiles = tiles; x.splits = sh.splits;
        x.chunk = ((sh.l + sh.splits - 1) / sh.splits + 63) / 64 * 64; x.max_len = sh.l;
        x.scale_log2 = (float)(1.0 / std::sqrt(128.0) * 1.4426950408889634);
        constexpr int NV = 4;
        void (*launch[NV])(const GqaAbArgs&, cudaStream_t) = {a_launch, b_launch, c_launch, d_launch};
        GqaAbArgs xs[NV];
        const size_t out_b = (size_t)sh.b * sh.hq * D * 2, lse_b = (size_t)sh.b * sh.hq * 4;
        std::vector<unsigned char> host_o[NV], host_l[NV];
        for (int i = 0; i < NV; ++i) {
            xs[i] = x;
            if (i == 3 && !d_same_splits) {  // D: half the splits (GQA_AB_D_SPLITS=same keeps A's)
                xs[i].splits = std::max(1, sh.splits / 2);
                xs[i].chunk = ((sh.l + xs[i].splits - 1) / xs[i].splits + 63) / 64 * 64;
            }
            void* o; float *l, *po, *pl; int* cnt;
            CK(cudaMalloc(&o, out_b)); CK(cudaMalloc(&l, lse_b));
            CK(cudaMalloc(&po, (size_t)sh.b * sh.hq * xs[i].splits * D * 4)); CK(cudaMalloc(&pl, (size_t)sh.b * sh.hq * xs[i].splits * 4));
            CK(cudaMalloc(&cnt, (size_t)sh.b * sh.hkv * tiles * 4)); CK(cudaMemset(cnt, 0, (size_t)sh.b * sh.hkv * tiles * 4));
            xs[i].out = o; xs[i].lse = l; xs[i].part_o = po; xs[i].part_lse = pl; xs[i].counters = cnt;
            CK(cudaMemset(o, 0xff, out_b)); CK(cudaMemset(l, 0xff, lse_b));
            launch[i](xs[i], st);
            CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            host_o[i].resize(out_b); host_l[i].resize(lse_b);
            CK(cudaMemcpy(host_o[i].data(), o, out_b, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(host_l[i].data(), l, lse_b, cudaMemcpyDeviceToHost));
        }
        long nan_a = 0;
        for (size_t e = 0; e < out_b / 2; ++e) {
            uint16_t h; memcpy(&h, host_o[0].data() + 2 * e, 2);
            nan_a += (h & 0x7c00) == 0x7c00;
        }
        const bool same_b = host_o[1] == host_o[0] && host_l[1] == host_l[0];
        const bool same_c = host_o[2] == host_o[0] && host_l[2] == host_l[0];
        int ulp_d = 0;
        double rel_l = 0;
        for (size_t e = 0; e < out_b / 2; ++e) {
            uint16_t ha, hd; memcpy(&ha, host_o[0].data() + 2 * e, 2); memcpy(&hd, host_o[3].data() + 2 * e, 2);
            ulp_d = std::max(ulp_d, std::abs(ordered(ha) - ordered(hd)));
        }
        for (size_t e = 0; e < lse_b / 4; ++e) {
            float la, ld; memcpy(&la, host_l[0].data() + 4 * e, 4); memcpy(&ld, host_l[3].data() + 4 * e, 4);
            rel_l = std::max(rel_l, (double)std::fabs(la - ld) / std::max(1e-30, (double)std::fabs(la)));
        }
        const bool ok_d = ulp_d <= 2 && rel_l <= 1e-5;
        bad += !same_b + !same_c + !ok_d + (nan_a > 0);
        double med[NV];
        timer.medians(launch, xs, false, med);
        long long sum_len = 0;
        for (int x_ : lens) sum_len += x_;
        const double floor_us = (2.0 * sum_len * sh.hkv * D * 2 + 2.0 * sh.b * sh.hq * D * 2) / (copy_gbps * 1e3);
        char name[64];
        snprintf(name, sizeof name, "B=%d L=%d %d/%d %s%s", sh.b, sh.l, sh.hq, sh.hkv, sh.paged ? "paged16" : "bhld", sh.varied ? " var" : "");
        printf("%-34s %6.1f %4d | %8.2f %8.2f %8.2f %8.2f | %5.3f %5.3f %5.3f | %s, %s; D %d ulp, lse %.1e%s; %ld\n", name, floor_us, sh.splits,
               med[0], med[1], med[2], med[3], med[1] / med[0], med[2] / med[0], med[3] / med[0], same_b ? "identical" : "DIFFERENT",
               same_c ? "identical" : "DIFFERENT", ulp_d, rel_l, ok_d ? "" : " OUT OF BOUND", nan_a);
        fflush(stdout);
        for (int i = 0; i < NV; ++i) {
            CK(cudaFree(xs[i].out)); CK(cudaFree(xs[i].lse)); CK(cudaFree(xs[i].part_o)); CK(cudaFree(xs[i].part_lse)); CK(cudaFree(xs[i].counters));
        }
        CK(cudaFree(q)); CK(cudaFree(k)); CK(cudaFree(v)); CK(cudaFree(dlens));
        if (dtable) CK(cudaFree(dtable));
    }
    printf("%s: %d problems (outputs different from A, or NaN in A)\n", bad ? "FAILED" : "ok", bad);
    return bad ? 1 : 0;
}
