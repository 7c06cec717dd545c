/* gs_cuda_cub_64.cu - the cub variant's CUB calls on the 8-byte types
 * (gs_cuda_cub.cuh), beside gs_cuda_cub_32.cu. */
#include "gs_cuda_cub.cuh"

GS_CUB_INSTANTIATE(GS_I64)
GS_CUB_INSTANTIATE(GS_U64)
GS_CUB_INSTANTIATE(GS_F64)
