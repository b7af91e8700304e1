// moe_combine: the last step of a MoE layer, the scatter-add of the expert-ordered rows back to tokens.
//   out[t, c] = sum_{j = 0..k-1} y[row_of[t, j], c]
// row_of is moeRoute's inverse map (row of token t's j-th choice), y the down projection's output (already scaled
// by the router weight). The k terms are added in fp32 in the fixed order j = 0..k-1 and rounded once, so the result
// is deterministic (no atomics) and within gamma_k * sum|y| + u_T * |out| of the exact sum.
// Regime: decode-sized layers (T up to a few thousand tokens, k <= 32, hidden <= 65535 * 256), F16/BF16.
// Floor: (T*k*H + T*H) * sizeof(T) bytes read and written + 4*T*k index bytes, over copy bandwidth
//        (T=64, k=8, H=2048, bf16: 2.4 MB, about 0.8 us on an H100); latency-bound at decode sizes.
// Measured: not yet measured.
// Limits: rows of row_of outside [0, rows) contribute zero, so a malformed index cannot read out of bounds.
// Grid: (T, ceil(H / 256)), 256 threads; one thread per output element, coalesced along the hidden dimension.
#include "gapfill_types.cuh"

using namespace gapfill;

namespace {

template <typename T>
__device__ __forceinline__ void combine_body(const T* __restrict__ y, const int* __restrict__ row_of, T* __restrict__ out,
                                             int k, int hidden, int rows) {
    const int t = blockIdx.x;                                // token
    const int c = blockIdx.y * blockDim.x + threadIdx.x;     // hidden column
    if (c >= hidden) return;
    const int* rows_of_t = row_of + (size_t)t * k;           // [k]: the same k indices for the whole block
    float acc = 0.f;
    for (int j = 0; j < k; ++j) {                            // fixed order: deterministic
        const int r = rows_of_t[j];
        if (r >= 0 && r < rows) acc += to_float(y[(size_t)r * hidden + c]);
    }
    out[(size_t)t * hidden + c] = from_float<T>(acc);
}

}  // namespace

extern "C" __global__ void moe_combine_f16(const __half* y, const int* row_of, __half* out, int k, int hidden, int rows) {
    combine_body(y, row_of, out, k, hidden, rows);
}
extern "C" __global__ void moe_combine_bf16(const __nv_bfloat16* y, const int* row_of, __nv_bfloat16* out, int k, int hidden,
                                            int rows) {
    combine_body(y, row_of, out, k, hidden, rows);
}
