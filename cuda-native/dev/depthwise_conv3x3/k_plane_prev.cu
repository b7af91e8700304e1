// A/B copy of the whole-plane kernel (nchw_plane_prev.cu, generated: see run_plane.sh) and its entry-point table.
#include "nchw_plane_prev.cu"
#include "harness.h"
#include "plane_table.h"

PLANE_TABLE(prev_plane_fn, prev_nchw_plane_)
