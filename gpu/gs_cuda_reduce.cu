/*
 * gs_cuda_reduce.cu - the tuned reduction: one persistent grid of as many
 * blocks as fit on the device at once, each thread striding through the
 * array in 16-byte vectors with several loads in flight, then one pass over
 * the block partials by the last block (see gs_reduce_kernel).
 */
#include "gs_cuda_kernels.cuh"

/* Threads per block and 16-byte loads in flight per thread. */
#define GS_REDUCE_BLOCK 256
#define GS_REDUCE_UNROLL 8

template <class Tr, int BLOCK, int UNROLL>
static gs_status reduce(gs_cuda *g, const void *d_in, int64_t n, gs_acc *partial)
{
    using T = typename Tr::in_t;
    using R = typename Tr::reduce_t;
    constexpr int VEC = gs_vec<T>::count;
    const auto kernel = gs_reduce_kernel<Tr, BLOCK, UNROLL>;

    const T *in = static_cast<const T *>(d_in);
    /* elements before the first 16-byte boundary */
    const int64_t misaligned = (int64_t)((uintptr_t)in % 16 / sizeof(T));
    const int64_t head = misaligned == 0 ? 0 : (VEC - misaligned < n ? VEC - misaligned : n);

    int blocks_per_sm;
    GS_CUDA_PASS(gs_cuda_occupancy(g, (const void *)kernel, BLOCK, &blocks_per_sm));
    /* no more blocks than there are vectors to share out */
    const int64_t per_block = (int64_t)BLOCK * UNROLL * VEC;
    const int64_t wanted = (n + per_block - 1) / per_block;
    const int64_t resident = (int64_t)g->sm_count * blocks_per_sm;
    const unsigned blocks = (unsigned)(wanted < resident ? wanted : resident);

    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_partials, &g->partials_bytes, blocks * sizeof(R),
                                 "reduction partials"));
    kernel<<<blocks, BLOCK, 0, g->stream>>>(in, n, head, static_cast<R *>(g->d_partials),
                                            g->d_scalars);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s %s reduction", gs_type_name(Tr::type),
                  gs_op_name(Tr::op));
    GS_CUDA_PASS(gs_cuda_fetch_scalars(g));
    *partial = g->h_scalars->result;
    return GS_OK;
}

gs_status gs_cuda_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                         gs_acc *partial)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_reduce", type, op, d_in, n));
    if (n == 0) {
        *partial = gs_acc_identity(type, op);
        return GS_OK;
    }
    GS_CUDA_PASS(gs_cuda_enter(g));
    return gs_dispatch(type, op, [&](auto traits) {
        return reduce<decltype(traits), GS_REDUCE_BLOCK, GS_REDUCE_UNROLL>(g, d_in, n, partial);
    });
}
