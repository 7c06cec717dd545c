/* gs_cuda_cub_32.cu - the cub variant's CUB calls on the 4-byte types
 * (gs_cuda_cub.cuh), beside gs_cuda_cub_64.cu. */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_I32)
GS_CUB_INSTANTIATE(GS_U32)
GS_CUB_INSTANTIATE(GS_F32)
