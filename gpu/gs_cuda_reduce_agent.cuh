/*
 * gs_cuda_reduce_agent.cuh - the reduction kernel: a persistent grid-stride
 * pass with 16-byte loads, several in flight per thread, after which the
 * last block to finish combines the block partials (the classic threadfence
 * pattern). One template serves every (type, op), the default reduction
 * and the second pass of the ladder's reductions; gs_reduce_launch
 * (gs_cuda_launch.cuh) sizes and queues it.
 */
#ifndef GS_CUDA_REDUCE_AGENT_CUH
#define GS_CUDA_REDUCE_AGENT_CUH

#include <stdint.h>
#include <type_traits>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"

/* Elements [0, head) and the tail after the last whole vector are read one
 * by one; the aligned middle as 16-byte vectors, UNROLL per thread in flight.
 * Each block writes its partial; the last block to finish (the classic
 * threadfence pattern) combines them into *result, with what *result held
 * before when `accumulate` is set. In is the element type, or reduce_t when
 * the kernel combines the partials another kernel left. */
template <class Tr, class In, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
gs_reduce_kernel(const In *in, int64_t n, int64_t head, typename Tr::reduce_t *partials,
                 gs_cuda_scalars *scalars, gs_acc *result, bool accumulate)
{
    using R = typename Tr::reduce_t;
    /* a thread's 32-bit integer sum is exact in 64 bits; partials are not */
    using A = std::conditional_t<std::is_same_v<In, typename Tr::in_t>, typename Tr::thread_t, R>;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = gs_vec<In>::count;
    __shared__ R warp_partials[BLOCK / 32];
    __shared__ bool is_last_block;

    const R identity = gs_from_acc<R>(gs_acc_identity(Tr::type, OP));
    const int64_t nvec = (n - head) / VEC;
    const gs_vec<In> *vin = reinterpret_cast<const gs_vec<In> *>(in + head);
    const int64_t thread = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * BLOCK;

    A acc = static_cast<A>(identity);
    int64_t i = thread;
    for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
        gs_vec<In> v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = gs_load_vec_nc(&vin[i + u * stride].e[0]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int k = 0; k < VEC; k++) acc = gs_combine<OP>(acc, static_cast<A>(v[u].e[k]));
    }
    for (; i < nvec; i += stride) {
        const gs_vec<In> v = gs_load_vec_nc(&vin[i].e[0]);
#pragma unroll
        for (int k = 0; k < VEC; k++) acc = gs_combine<OP>(acc, static_cast<A>(v.e[k]));
    }
    const int64_t tail = head + nvec * VEC;
    if (thread < head) acc = gs_combine<OP>(acc, static_cast<A>(in[thread]));
    if (thread < n - tail) acc = gs_combine<OP>(acc, static_cast<A>(in[tail + thread]));

    R block = gs_block_reduce<OP, BLOCK>(static_cast<R>(acc), identity, warp_partials);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block;
        __threadfence();   /* the partial is visible before the count says so */
        is_last_block = atomicAdd(&scalars->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last_block) return;

    __threadfence();
    R total = identity;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += BLOCK)
        total = gs_combine<OP>(total, gs_load_cg(&partials[b]));
    __syncthreads();   /* warp_partials is reused */
    total = gs_block_reduce<OP, BLOCK>(total, identity, warp_partials);
    if (threadIdx.x == 0) {
        if (accumulate) total = gs_combine<OP>(gs_from_acc<R>(*result), total);
        *result = gs_to_acc(total);
        scalars->blocks_done = 0;   /* ready for the next launch */
    }
}

#endif /* GS_CUDA_REDUCE_AGENT_CUH */
