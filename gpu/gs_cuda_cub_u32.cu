/* gs_cuda_cub_u32.cu - the cub variant's CUB calls on u32 (gs_cuda_cub.cuh). */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_U32)
