// Paged-cache A/B/C/D of the gqa_decode tensor-core kernel (stage_paged.py): F16, D = 64, Hq/Hkv = 16/2, the config
// whose pages of 16 run 10-28 % behind the contiguous cache in issue 7's sweep. One logical cache per shape, written
// into five layouts: contiguous [B, Hkv, L, D] ("bhld") and [B, L, Hkv, D] ("blhd"), pages of 16 in random order
// ("p16rand") and in identity order ("p16ident"), pages of 64 in random order ("p64rand"); lengths = L or drawn in
// [L/2, L]. Every cache row past a sequence's length holds NaN. Per shape and layout: each variant runs on poisoned
// outputs (0xFF); its o and lse must equal variant A's on the contiguous layout byte for byte (same arithmetic, same
// logical cache), and A must have no NaN. Then A, B, C, D are timed interleaved, the L2 flushed by a 256 MiB read
// before every launch, CUDA events, median of 31. Split counts and chunks as GqaDecodeHeuristics picks for the sweep.
#include "harness.h"
#include "launch.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

void a_launch(const GqaAbArgs& x, cudaStream_t st);
void b_launch(const GqaAbArgs& x, cudaStream_t st);
void c_launch(const GqaAbArgs& x, cudaStream_t st);
void d_launch(const GqaAbArgs& x, cudaStream_t st);

constexpr int D = 64;

__device__ __forceinline__ float hash_value(unsigned long long i, unsigned seed) {
    unsigned x = (unsigned)i * 0x9E3779B9u ^ (unsigned)(i >> 32) * 0x27D4EB2Fu ^ seed * 0x85EBCA6Bu;
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
}
__global__ void fill_q(__half* p, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        p[i] = __float2half(hash_value(i, 1));
}
// The logical element (b, h, l, d) of K and V, written at its place in the layout; NaN at and past len_b.
__global__ void fill_cache(__half* k, __half* v, const int* lens, const int* table, int batch, int hkv, int lmax, int mp,
                           int page_shift, long long sb, long long sh, long long sl, long long ps) {
    const long long n = (long long)batch * hkv * lmax * D;
    const __half nan = __ushort_as_half(0x7e00);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        const int d = (int)(i % D);
        const int l = (int)((i / D) % lmax);
        const int h = (int)((i / ((long long)D * lmax)) % hkv);
        const int b = (int)(i / ((long long)D * lmax * hkv));
        const long long off = table == nullptr ? b * sb + h * sh + l * sl + d
                                               : (long long)table[b * mp + (l >> page_shift)] * ps + h * sh + (l & ((1 << page_shift) - 1)) * sl + d;
        const bool dead = l >= lens[b];
        k[off] = dead ? nan : __float2half(hash_value(i, 2));
        v[off] = dead ? nan : __float2half(hash_value(i, 3));
    }
}
enum Layout { BHLD, BLHD, P16RAND, P16IDENT, P64RAND, NLAYOUT };
static const char* kLayoutName[NLAYOUT] = {"bhld", "blhd", "p16rand", "p16ident", "p64rand"};

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    cudaStream_t st; CK(cudaStreamCreate(&st));
    const double copy_gbps = copy_rate_gbps(st);
    printf("GPU %s, %d SMs, copy %.0f GB/s\n", prop.name, sms, copy_gbps);
    AbTimer timer(st, sms);

    const int hq = 16, hkv = 2, g = hq / hkv, tiles = 1;
    const int shapes[][3] = {{16, 32768, 4}, {4, 131072, 16}, {64, 8192, 1}, {16, 8192, 4}, {1, 131072, 64}, {64, 2048, 1}};
    printf("%-26s %-9s %6s %4s | %8s %8s %8s %8s | %5s %5s %5s | %6s %5s | %s\n", "shape", "layout", "floor", "s", "A us", "B us", "C us",
           "D us", "B/A", "C/A", "D/A", "A/bhld", "fl/A", "o and lse of A, B, C, D vs A on bhld; NaN in A");
    int bad = 0;
    std::mt19937 rng(7);
    for (auto& s : shapes)
        for (int varied = 0; varied < 2; ++varied) {
            const int B = s[0], L = s[1], splits = s[2];
            std::vector<int> lens(B);
            for (int i = 0; i < B; ++i) lens[i] = varied ? L / 2 + (int)(rng() % (unsigned)(L / 2 + 1)) : L;
            long long sum_len = 0;
            for (int x_ : lens) sum_len += x_;
            const double floor_us = (2.0 * sum_len * hkv * D * 2 + 2.0 * B * hq * D * 2) / (copy_gbps * 1e3);
            __half* q; int* dlens;
            CK(cudaMalloc(&q, (size_t)B * hq * D * 2)); fill_q<<<sms * 8, 256, 0, st>>>(q, (long long)B * hq * D);
            CK(cudaMalloc(&dlens, B * 4)); CK(cudaMemcpy(dlens, lens.data(), B * 4, cudaMemcpyHostToDevice));
            const size_t out_b = (size_t)B * hq * D * 2, lse_b = (size_t)B * hq * 4;
            std::vector<unsigned char> ref_o, ref_l;
            double a_bhld = 0;
            for (int lay = 0; lay < NLAYOUT; ++lay) {
                const int page = lay == P64RAND ? 64 : (lay == P16RAND || lay == P16IDENT) ? 16 : 0;
                const int mp = page ? (L + page - 1) / page : 0;
                const long long kv_elems = page ? (long long)B * mp * page * hkv * D : (long long)B * hkv * L * D;
                __half *k, *v; int* dtable = nullptr;
                CK(cudaMalloc(&k, kv_elems * 2)); CK(cudaMalloc(&v, kv_elems * 2));
                CK(cudaMemset(k, 0, kv_elems * 2)); CK(cudaMemset(v, 0, kv_elems * 2));
                GqaAbArgs x{};
                if (page) {
                    std::vector<int> perm(B * mp);
                    for (int i = 0; i < (int)perm.size(); ++i) perm[i] = i;
                    if (lay != P16IDENT) std::shuffle(perm.begin(), perm.end(), rng);
                    CK(cudaMalloc(&dtable, perm.size() * 4)); CK(cudaMemcpy(dtable, perm.data(), perm.size() * 4, cudaMemcpyHostToDevice));
                    x.stride_b = 0; x.stride_h = D; x.stride_l = (long long)hkv * D; x.page_stride = (long long)page * hkv * D;
                    x.max_pages = mp; x.page_shift = page == 64 ? 6 : 4;
                } else if (lay == BHLD) {
                    x.stride_b = (long long)hkv * L * D; x.stride_h = (long long)L * D; x.stride_l = D;
                } else {
                    x.stride_b = (long long)L * hkv * D; x.stride_h = D; x.stride_l = (long long)hkv * D;
                }
                fill_cache<<<sms * 16, 256, 0, st>>>(k, v, dlens, dtable, B, hkv, L, mp, x.page_shift, x.stride_b, x.stride_h, x.stride_l,
                                                     x.page_stride);
                CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                x.q = q; x.k = k; x.v = v; x.table = dtable; x.lens = dlens;
                x.batch = B; x.hq = hq; x.hkv = hkv; x.g = g; x.head_tiles = tiles; x.splits = splits;
                x.chunk = ((L + splits - 1) / splits + 63) / 64 * 64; x.max_len = L;
                x.scale_log2 = (float)(1.0 / std::sqrt((double)D) * 1.4426950408889634);
                constexpr int NV = 4;
                void (*launch[NV])(const GqaAbArgs&, cudaStream_t) = {a_launch, b_launch, c_launch, d_launch};
                GqaAbArgs xs[NV];
                std::string verdict;
                for (int i = 0; i < NV; ++i) {
                    xs[i] = x;
                    void* o; float *l, *po, *pl; int* cnt;
                    CK(cudaMalloc(&o, out_b)); CK(cudaMalloc(&l, lse_b));
                    CK(cudaMalloc(&po, (size_t)B * hq * splits * D * 4)); CK(cudaMalloc(&pl, (size_t)B * hq * splits * 4));
                    CK(cudaMalloc(&cnt, (size_t)B * hkv * tiles * 4)); CK(cudaMemset(cnt, 0, (size_t)B * hkv * tiles * 4));
                    xs[i].out = o; xs[i].lse = l; xs[i].part_o = po; xs[i].part_lse = pl; xs[i].counters = cnt;
                    CK(cudaMemset(o, 0xff, out_b)); CK(cudaMemset(l, 0xff, lse_b));
                    launch[i](xs[i], st);
                    CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
                    std::vector<unsigned char> ho(out_b), hl(lse_b);
                    CK(cudaMemcpy(ho.data(), o, out_b, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(hl.data(), l, lse_b, cudaMemcpyDeviceToHost));
                    if (lay == BHLD && i == 0) {
                        ref_o = ho; ref_l = hl;
                        long nan_a = 0;
                        for (size_t e = 0; e < out_b / 2; ++e) {
                            uint16_t h; memcpy(&h, ho.data() + 2 * e, 2);
                            nan_a += (h & 0x7c00) == 0x7c00;
                        }
                        if (nan_a) { ++bad; verdict += " NaN:" + std::to_string(nan_a); }
                    }
                    const bool same = ho == ref_o && hl == ref_l;
                    bad += !same;
                    verdict += same ? " =" : " DIFFERENT";
                }
                double med[NV];
                timer.medians(launch, xs, true, med);
                if (lay == BHLD) a_bhld = med[0];
                char name[64];
                snprintf(name, sizeof name, "B=%d L=%d 16/2%s", B, L, varied ? " var" : "");
                printf("%-26s %-9s %6.1f %4d | %8.2f %8.2f %8.2f %8.2f | %5.3f %5.3f %5.3f | %6.3f %5.2f |%s\n", name, kLayoutName[lay], floor_us,
                       splits, med[0], med[1], med[2], med[3], med[1] / med[0], med[2] / med[0], med[3] / med[0], med[0] / a_bhld,
                       floor_us / med[0], verdict.c_str());
                fflush(stdout);
                for (int i = 0; i < NV; ++i) {
                    CK(cudaFree(xs[i].out)); CK(cudaFree(xs[i].lse)); CK(cudaFree(xs[i].part_o)); CK(cudaFree(xs[i].part_lse));
                    CK(cudaFree(xs[i].counters));
                }
                CK(cudaFree(k)); CK(cudaFree(v));
                if (dtable) CK(cudaFree(dtable));
            }
            CK(cudaFree(q)); CK(cudaFree(dlens));
        }
    printf("%s: %d problems (outputs different from A on bhld, or NaN in A)\n", bad ? "FAILED" : "ok", bad);
    return bad ? 1 : 0;
}
