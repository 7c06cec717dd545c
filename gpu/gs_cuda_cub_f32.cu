/* gs_cuda_cub_f32.cu - the cub variant's CUB calls on f32 (gs_cuda_cub.cuh). */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_F32)
