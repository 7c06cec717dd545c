/* gs_cuda_cub_u64.cu - the cub variant's CUB calls on u64 (gs_cuda_cub.cuh). */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_U64)
