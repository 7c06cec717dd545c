/*
 * gs_cuda_generate.cuh - the generator kernel: elements of gs_gen.h's
 * counter-based array, each from its index alone, so any slice of the array
 * comes out the same on any device, in any grid (gs_cuda_generate in
 * gs_cuda_device.cu launches it).
 */
#ifndef GS_CUDA_GENERATE_CUH
#define GS_CUDA_GENERATE_CUH

#include <stdint.h>

#include "gs_cuda_traits.cuh"
#include "gs_gen.h"

GS_DEV int32_t gs_gen_element(uint64_t seed, uint64_t i, int32_t *) { return gs_gen_i32(seed, i); }
GS_DEV int64_t gs_gen_element(uint64_t seed, uint64_t i, int64_t *) { return gs_gen_i64(seed, i); }
GS_DEV uint32_t gs_gen_element(uint64_t seed, uint64_t i, uint32_t *) { return gs_gen_u32(seed, i); }
GS_DEV uint64_t gs_gen_element(uint64_t seed, uint64_t i, uint64_t *) { return gs_gen_u64(seed, i); }
GS_DEV float gs_gen_element(uint64_t seed, uint64_t i, float *) { return gs_gen_f32(seed, i); }
GS_DEV double gs_gen_element(uint64_t seed, uint64_t i, double *) { return gs_gen_f64(seed, i); }

template <class T>
__global__ void gs_generate_kernel(uint64_t seed, int64_t start, int64_t n, T *out)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = gs_gen_element(seed, (uint64_t)(start + i), (T *)nullptr);
}

#endif /* GS_CUDA_GENERATE_CUH */
