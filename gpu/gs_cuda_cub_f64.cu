/* gs_cuda_cub_f64.cu - the cub variant's CUB calls on f64 (gs_cuda_cub.cuh). */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_F64)
