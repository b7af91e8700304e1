// variant_nhwc_ring.cu compiled again with the logistic's division of SiLU/GELU_TANH approximated
// (__fdividef, ≤ 2 ulps, divisor in [1, 2]: the choice nchw.cu ships, see common/depthwise_conv3x3.cuh),
// as configuration 2 "ring4f". Everything else is the same source.
#define GAPFILL_DWCONV_APPROX_LOGISTIC_DIV 1
#define RING_FDIV 1
#include "variant_nhwc_ring.cu"
