// The I32 skinny kernel of each token tile (8, 16, 32, 64), for the dev programs that include skinny_mma.cu first
// (split_sweep.cu, stage_ab.cu, cluster_ab.cu).
#pragma once
typedef void (*Kernel)(const int8_t*, const int8_t*, int*, const float*, int, const float*, int, const float*, int*, int, int,
                       int, int);
static Kernel kernel_for(int tile) {
    return tile == 8 ? int8_mm_skinny_m8_i32 : tile == 16 ? int8_mm_skinny_m16_i32 : tile == 32 ? int8_mm_skinny_m32_i32
                                                                                                : int8_mm_skinny_m64_i32;
}
