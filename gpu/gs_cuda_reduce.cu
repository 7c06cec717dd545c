/*
 * gs_cuda_reduce.cu - the tuned reduction: one persistent grid of as many
 * blocks as fit on the device at once, each thread striding through the
 * array in 16-byte vectors with several loads in flight, then one pass over
 * the block partials by the last block (see gs_reduce_kernel).
 *
 * gs_cuda_reduce_async leaves the partial in device memory, combined into
 * what is there; gs_cuda_reduce runs the same launch into the handle's
 * scalars and copies the partial back.
 */
#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_launch.cuh"
#include "gs_cuda_traits.cuh"

gs_status gs_reduce_default(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n, gs_acc *result,
                            bool accumulate)
{
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        using T = typename Tr::in_t;
        return gs_reduce_launch<Tr, T, GS_REDUCE_BLOCK, GS_REDUCE_UNROLL>(
            g, static_cast<const T *>(d_in), n, result, accumulate);
    });
}

static gs_status reduce_dispatch(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                                 gs_acc *result, bool accumulate)
{
    GS_CUDA_PASS(gs_cuda_enter(g));
    if (g->reduce_algo != GS_ALGO_DEFAULT) return gs_variant_reduce(g, type, op, d_in, n, result, accumulate);
    return gs_reduce_default(g, type, op, d_in, n, result, accumulate);
}

gs_status gs_cuda_reduce_async(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                               gs_acc *d_acc)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_reduce_async", type, op, d_in, n));
    if (!d_acc)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_reduce_async: NULL accumulator");
    if (n == 0) return GS_OK;   /* combining with the identity changes nothing */
    return reduce_dispatch(g, type, op, d_in, n, d_acc, true);
}

gs_status gs_cuda_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                         gs_acc *partial)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_reduce", type, op, d_in, n));
    if (n == 0) {
        *partial = gs_acc_identity(type, op);
        return GS_OK;
    }
    GS_CUDA_PASS(reduce_dispatch(g, type, op, d_in, n, &g->d_scalars->result, false));
    GS_CUDA_PASS(gs_cuda_fetch_scalars(g));
    *partial = g->h_scalars->result;
    return GS_OK;
}
