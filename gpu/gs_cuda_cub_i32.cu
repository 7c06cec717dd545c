/* gs_cuda_cub_i32.cu - the cub variant's CUB calls on i32 (gs_cuda_cub.cuh). */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_I32)
