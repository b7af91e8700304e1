// The entry-point table of a whole-plane kernel build: PLANE_TABLE(name, prefix) defines
// const void* name(int dt, int seg) returning prefix<dtype>_s1_g<SEG>_l<LV> (nullptr for F32 SEG 8, not compiled).
#pragma once
#define PLANE_TABLE_FN(PFX, TN, SEG, LV) ((const void*)PFX##TN##_s1_g##SEG##_l##LV)
#define PLANE_TABLE_DT(PFX, TN, G8)                                                                                 \
    switch (seg) {                                                                                                  \
        case 1: return PLANE_TABLE_FN(PFX, TN, 1, 1);                                                               \
        case 2: return PLANE_TABLE_FN(PFX, TN, 2, 2);                                                               \
        case 4: return PLANE_TABLE_FN(PFX, TN, 4, 4);                                                               \
        case 7: return PLANE_TABLE_FN(PFX, TN, 7, 1);                                                               \
        default: return G8;                                                                                         \
    }
#define PLANE_TABLE(NAME, PFX)                                                                                      \
    const void* NAME(int dt, int seg) {                                                                             \
        if (dt == F32) { PLANE_TABLE_DT(PFX, f32, nullptr) }                                                        \
        if (dt == F16) { PLANE_TABLE_DT(PFX, f16, PLANE_TABLE_FN(PFX, f16, 8, 8)) }                                 \
        PLANE_TABLE_DT(PFX, bf16, PLANE_TABLE_FN(PFX, bf16, 8, 8))                                                  \
    }
