/*
 * gs_cuda_variant.cu - the kernel variants of gs_algo in place of the
 * default behind the handle's own entry points (gs_cuda_reduce*,
 * gs_cuda_scan*), so that gs_reduce, gs_scan and the streamed pipeline run
 * them like the default (`gpuscan reduce|scan --algo NAME`).
 *
 * The ladder's entry points replace a reduction's result, take a carry from
 * the memory they leave it in, and take their scratch from the caller. Here
 * a reduction that accumulates runs into a scratch partial and combines it
 * in; a scan's carry is put where its variant reads it; the scratch belongs
 * to the handle and only grows.
 */
#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_traits.cuh"

/* Scratch slots ahead of a variant's own scratch, each one gs_acc, kept
 * 256 bytes apart as cudaMalloc aligns. */
#define GS_VARIANT_SLOT 256

gs_status gs_cuda_set_variants(gs_cuda *g, gs_algo reduce, gs_algo scan)
{
    GS_CUDA_PASS(gs_cuda_check_algo(g, reduce, 0));
    GS_CUDA_PASS(gs_cuda_check_algo(g, scan, 1));
    g->reduce_algo = reduce;
    g->scan_algo = scan;
    return GS_OK;
}

/* The handle's scratch: `slots` gs_acc slots, then `bytes` for the variant. */
static gs_status reserve_work(gs_cuda *g, int slots, size_t bytes, char **work)
{
    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_variant_work, &g->variant_work_bytes,
                                 (size_t)slots * GS_VARIANT_SLOT + bytes, "kernel variant's scratch"));
    *work = static_cast<char *>(g->d_variant_work);
    return GS_OK;
}

template <class Tr>
__global__ void gs_combine_partial_kernel(gs_acc *result, const gs_acc *partial)
{
    using R = typename Tr::reduce_t;
    *result = gs_to_acc(gs_combine<Tr::op>(gs_from_acc<R>(*result), gs_from_acc<R>(*partial)));
}

gs_status gs_variant_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                            gs_acc *result, bool accumulate)
{
    const gs_algo algo = g->reduce_algo;
    size_t bytes = 0;
    GS_CUDA_PASS(gs_cuda_ladder_work_bytes(g, algo, 0, type, op, GS_INCLUSIVE, n, &bytes));
    char *work = nullptr;
    const int slots = accumulate ? 1 : 0;
    GS_CUDA_PASS(reserve_work(g, slots, bytes, &work));
    gs_acc *partial = accumulate ? reinterpret_cast<gs_acc *>(work) : result;
    GS_CUDA_PASS(gs_cuda_ladder_reduce(g, algo, type, op, d_in, n, partial, work + slots * GS_VARIANT_SLOT, bytes));
    if (!accumulate) return GS_OK;
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        gs_combine_partial_kernel<Tr><<<1, 1, 0, g->stream>>>(result, partial);
        GS_CUDA_CHECK(g, cudaGetLastError(), "combining the %s reduction's partial", gs_algo_name(algo));
        return GS_OK;
    });
}

/* Put the carry before element 0 at `dst`, in stream order. */
static gs_status place_carry(gs_cuda *g, const gs_scan_io &io, gs_acc *dst)
{
    if (io.carry_src == dst) return GS_OK;
    /* from pageable memory the copy is staged before cudaMemcpyAsync returns */
    if (io.carry_src)
        GS_CUDA_CHECK(g, cudaMemcpyAsync(dst, io.carry_src, sizeof *dst, cudaMemcpyDeviceToDevice, g->stream),
                      "placing the scan carry");
    else
        GS_CUDA_CHECK(g, cudaMemcpyAsync(dst, &io.carry_in, sizeof *dst, cudaMemcpyHostToDevice, g->stream),
                      "placing the scan carry");
    return GS_OK;
}

gs_status gs_variant_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io)
{
    const gs_algo algo = g->scan_algo;
    size_t bytes = 0;
    char *work = nullptr;
    if (algo == GS_ALGO_CUB) {
        /* CUB reads the carry and writes the next one in one kernel: the
         * carry in goes to a slot of its own */
        GS_CUDA_PASS(gs_cub_scan_carried(g, type, op, kind, d_in, d_out, n, nullptr, nullptr, nullptr, nullptr,
                                         &bytes));
        GS_CUDA_PASS(reserve_work(g, 1, bytes, &work));
        gs_acc *carry_in = reinterpret_cast<gs_acc *>(work);
        GS_CUDA_PASS(place_carry(g, io, carry_in));
        return gs_cub_scan_carried(g, type, op, kind, d_in, d_out, n, carry_in, io.carry_dst, io.overflow,
                                   work + GS_VARIANT_SLOT, &bytes);
    }
    /* the ladder's scans read the carry before their last kernel writes it */
    GS_CUDA_PASS(gs_cuda_ladder_work_bytes(g, algo, 1, type, op, kind, n, &bytes));
    GS_CUDA_PASS(reserve_work(g, 0, bytes, &work));
    GS_CUDA_PASS(place_carry(g, io, io.carry_dst));
    return gs_cuda_ladder_scan(g, algo, type, op, kind, d_in, d_out, n, io.carry_dst, io.overflow, work, bytes);
}
