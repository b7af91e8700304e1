#!/usr/bin/env python3
"""Stages an A/B/C timing of the gqa_decode tensor-core kernel (run.sh builds and runs it on the GPU host).

  A = cuda-native/src/main/cuda/gqa_decode/decode_mma.cu as in the working tree (the shipped kernel)
  B = A with the split merge reading its partials 16 at a time (MU float4 loads in flight per thread before their
      FMAs; the shipped loop has 4). The FMA order per output element is unchanged, so B must equal A bit for bit.
  C = B plus, for contiguous caches, the first ring stages requested before the sequence length arrives
      (bounded by max_len, which the cache holds). V rows past the length are zeroed in shared memory before use,
      as A's zero-fill leaves them, so C must also equal A bit for bit, even with NaN in the cache past each length.
  D = C with 8 warps per block, launched with half of A's splits (at least 1): half the partials to merge, and
      each block keeps twice the K/V bytes in flight. Its split boundaries differ from A's, so its output is
      compared with A's within a tolerance instead of bit for bit.

Why: at 33.5 MB of K/V (B=1 L=8192 32/8 d128) the Java sweep at c2335e1 times the kernel at 16.8 µs with 1 split,
19.0 with 4 and 19.9 with 16, against 14.6 µs for a plain read of the same bytes after the L2 flush
(cuda-native/dev/timing/h100-fixed_cost.txt). So the split merge costs 2-3 µs, and the prologue is the next
suspect. In the merge, one block reads all partials from L2 with 4 loads in flight per thread, which makes
about 16 dependent L2 round trips at 16 splits.

Usage: python3 cuda-native/dev/gqa_decode/ab/stage.py [dest]   (default .carry/gqa-ab); then on the GPU host:
bash <dest>/run.sh <dest>
"""
from staging import HERE as here, SRC as src, destination, replace, shipped_kernel, write_variants

dst = destination(1, 'gqa-ab')
shipped = shipped_kernel()


MERGE_OLD = """        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
        for (int sp = 0; sp < active; ++sp) {
            const float4 x = __ldcg(reinterpret_cast<const float4*>(po + (size_t)sp * D));
            const float wt = w[sp];
            acc.x = fmaf(x.x, wt, acc.x);
            acc.y = fmaf(x.y, wt, acc.y);
            acc.z = fmaf(x.z, wt, acc.z);
            acc.w = fmaf(x.w, wt, acc.w);
        }
"""
MERGE_NEW = """        float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
        constexpr int MU = 16;  // partials in flight per thread: all of them up to 16 splits
        for (int sp0 = 0; sp0 < active; sp0 += MU) {
            float4 xs[MU];
#pragma unroll
            for (int u = 0; u < MU; ++u)
                xs[u] = sp0 + u < active ? __ldcg(reinterpret_cast<const float4*>(po + (size_t)(sp0 + u) * D))
                                         : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
            for (int u = 0; u < MU; ++u) {
                if (sp0 + u < active) {  // the same order of FMAs as the shipped loop
                    const float wt = w[sp0 + u];
                    acc.x = fmaf(xs[u].x, wt, acc.x);
                    acc.y = fmaf(xs[u].y, wt, acc.y);
                    acc.z = fmaf(xs[u].z, wt, acc.z);
                    acc.w = fmaf(xs[u].w, wt, acc.w);
                }
            }
        }
"""

PRO_OLD = """    const int len = min(max(lens[b], 0), a.max_len);
    const int start = split * a.chunk;
    const int end = min(start + a.chunk, len);
    if (start >= len && !(split == 0 && len == 0)) {
        return;  // inactive split (split 0 stays for an empty sequence: it writes zeros and -inf)
    }
    const int active = len == 0 ? 1 : min(a.splits, (len + a.chunk - 1) / a.chunk);

    unsigned char* s_q = smem;
    unsigned char* s_ring = smem + C::Q_BYTES + warp * C::WARP_BYTES;
    const uint32_t q_base = smem_u32(s_q);
    const uint32_t ring_base = smem_u32(s_ring);

    // This warp's tiles: t = warp, warp + 4, ... of the split's ceil((end − start) / 16) tiles.
    const int ntiles = end > start ? (end - start + kKeys - 1) / kKeys : 0;
    const int my_n = ntiles > warp ? (ntiles - warp + kWarps - 1) / kWarps : 0;
    const long long head_off = (long long)kvh * a.stride_h;
"""
PRO_NEW = """    const int len_raw = lens[b];  // contiguous caches request their first tiles while this load is in flight
    const int start = split * a.chunk;
    const bool spec = table == nullptr;
    int end = min(start + a.chunk, a.max_len);  // until the length arrives: the rows the cache holds

    unsigned char* s_q = smem;
    unsigned char* s_ring = smem + C::Q_BYTES + warp * C::WARP_BYTES;
    const uint32_t q_base = smem_u32(s_q);
    const uint32_t ring_base = smem_u32(s_ring);

    // This warp's tiles: t = warp, warp + 4, ... of the split's ceil((end − start) / 16) tiles.
    int ntiles = end > start ? (end - start + kKeys - 1) / kKeys : 0;
    int my_n = ntiles > warp ? (ntiles - warp + kWarps - 1) / kWarps : 0;
    const long long head_off = (long long)kvh * a.stride_h;
"""

PRIME_OLD = """#pragma unroll
    for (int i = 0; i < NST - 1; ++i) {
        if (i < my_n) issue(i);
        cp_async_commit();
    }
"""
PRIME_NEW = """    if (spec) {
#pragma unroll
        for (int i = 0; i < NST - 1; ++i) {
            if (i < my_n) issue(i);
            cp_async_commit();
        }
    }
    const int len = min(max(len_raw, 0), a.max_len);
    end = min(start + a.chunk, len);
    if (start >= len && !(split == 0 && len == 0)) {
        cp_async_wait<0>();  // nothing may land in shared memory after the block exits
        return;  // inactive split (split 0 stays for an empty sequence: it writes zeros and -inf)
    }
    const int active = len == 0 ? 1 : min(a.splits, (len + a.chunk - 1) / a.chunk);
    ntiles = end > start ? (end - start + kKeys - 1) / kKeys : 0;
    my_n = ntiles > warp ? (ntiles - warp + kWarps - 1) / kWarps : 0;
    if (!spec) {
#pragma unroll
        for (int i = 0; i < NST - 1; ++i) {
            if (i < my_n) issue(i);
            cp_async_commit();
        }
    }
"""

LOOP_OLD = """        cp_async_wait<NST - 2>();
        __syncwarp();  // tile i landed for every lane; every lane is done with tile i − 1's slot
"""
LOOP_NEW = """        cp_async_wait<NST - 2>();
        __syncwarp();  // tile i landed for every lane; every lane is done with tile i − 1's slot
        if (spec && i < NST - 1) {  // requested before the length was known: V rows past the end hold cache data
            const int valid = end - (start + (warp + i * kWarps) * kKeys);  // >= 1, as tile i < my_n
            if (valid < kKeys) {
                const uint32_t vz = ring_base + (i % NST) * C::STAGE_BYTES + C::TILE_BYTES;
                for (int idx = lane; idx < (kKeys - valid) * CPR; idx += 32) {
                    asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\\n" ::"r"(vz + swz<D>(valid + idx / CPR, idx % CPR)), "r"(0));
                }
                __syncwarp();
            }
        }
"""

b = replace(shipped, MERGE_OLD, MERGE_NEW)
c = replace(b, PRO_OLD, PRO_NEW)
c = replace(c, PRIME_OLD, PRIME_NEW)
c = replace(c, LOOP_OLD, LOOP_NEW)
# D = C with 8 warps per block (196 KiB of rings at D=128: one block per SM, the same warps per SM as two blocks of 4),
# run with half the splits, so the merge has half the partials to read; D=128 only (the q-tile split of D=64 needs
# 16·8 chunks per 256 threads).
d = replace(c, 'constexpr int kThreads = 128;  // 4 warps', 'constexpr int kThreads = 256;  // 8 warps')
for line in ('GQA_MMA_KERNEL(gqa_decode_mma_f16_d64, __half, 64)', 'GQA_MMA_KERNEL(gqa_decode_mma_f16_d256, __half, 256)',
             'GQA_MMA_KERNEL(gqa_decode_mma_bf16_d64, __nv_bfloat16, 64)', 'GQA_MMA_KERNEL(gqa_decode_mma_bf16_d128, __nv_bfloat16, 128)',
             'GQA_MMA_KERNEL(gqa_decode_mma_bf16_d256, __nv_bfloat16, 256)'):
    d = replace(d, line + '\n', '')

write_variants(dst, src, here, (('a', shipped), ('b', b), ('c', c), ('d', d)))
print('staged A (shipped), B (batched merge), C (B + early ring prime for contiguous caches), D (C with 8 warps, half the splits) into '
      + dst)
