/*
 * gs_cuda_launch.cuh - the tuning of the default kernels and the launch
 * helpers that the default entry points (gs_cuda_reduce.cu,
 * gs_cuda_scan.cu) and the ladder (gs_cuda_ladder.cu) share: the reduction's
 * block size and loads in flight, the scan's tile shape, sizing and queuing
 * a reduction, and setting up a scan's kernel arguments. Host code over the
 * agents' kernel templates.
 */
#ifndef GS_CUDA_LAUNCH_CUH
#define GS_CUDA_LAUNCH_CUH

#include <stdint.h>
#include <string.h>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_reduce_agent.cuh"
#include "gs_cuda_scan_agent.cuh"
#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"

/* ---- tuning ------------------------------------------------------------------------ */

/* The default reduction's threads per block and 16-byte loads in flight
 * per thread. */
#define GS_REDUCE_BLOCK 256
#define GS_REDUCE_UNROLL 8

/* The default scan's shapes, every (type, op). Tiles of 12 vectors of 16
 * bytes a data thread (24 of 8 bytes for the 4-byte integer sums and
 * products, whose 8-byte outputs halve the elements per vector): 256 data
 * threads at four blocks per multiprocessor (48 KiB a tile), or 512 at two
 * (`wide_shape`, 96 KiB) where two of its blocks fit a multiprocessor and
 * there are enough tiles for every block slot of the GPU
 * GS_SCAN_WIDE_WAVES times over: half the tiles, half the look-backs, but
 * a longer tail of the last wave. Scans whose `shape` tiles would not
 * fill every block slot once take smaller tiles of 8 vectors (more tiles
 * in flight). Timings: docs/PERFORMANCE.md. */
template <class Tr> struct gs_scan_tuning {
    static constexpr int vector_bytes = Tr::scan_vec * (int)sizeof(typename Tr::in_t);
    using wide_shape = gs_scan_shape<512, 12 * 16 / vector_bytes, 2>;
    using shape = gs_scan_shape<256, 12 * 16 / vector_bytes, 4>;
    using small_shape = gs_scan_shape<256, 8, 4>;
};
#define GS_SCAN_WIDE_WAVES 8

/* ---- launches -------------------------------------------------------------------- */

/* Queue the default reduction of in[0..n), n > 0, on the compute stream:
 * *result = the partial, or combine(*result, partial) with `accumulate`.
 * In is the element type, or reduce_t for the partials of a ladder kernel. */
template <class Tr, class In, int BLOCK, int UNROLL>
gs_status gs_reduce_launch(gs_cuda *g, const In *in, int64_t n, gs_acc *result, bool accumulate)
{
    using R = typename Tr::reduce_t;
    constexpr int VEC = gs_vec<In>::count;
    const auto kernel = gs_reduce_kernel<Tr, In, BLOCK, UNROLL>;

    /* elements before the first 16-byte boundary */
    const int64_t misaligned = (int64_t)((uintptr_t)in % 16 / sizeof(In));
    const int64_t head = misaligned == 0 ? 0 : (VEC - misaligned < n ? VEC - misaligned : n);

    int blocks_per_sm;
    GS_CUDA_PASS(gs_cuda_occupancy(g, (const void *)kernel, BLOCK, 0, &blocks_per_sm));
    /* no more blocks than there are vectors to share out */
    const int64_t per_block = (int64_t)BLOCK * UNROLL * VEC;
    const int64_t wanted = (n + per_block - 1) / per_block;
    const int64_t resident = (int64_t)g->sm_count * blocks_per_sm;
    const unsigned blocks = (unsigned)(wanted < resident ? wanted : resident);

    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_partials, &g->partials_bytes, blocks * sizeof(R),
                                 "reduction partials"));
    kernel<<<blocks, BLOCK, 0, g->stream>>>(in, n, head, static_cast<R *>(g->d_partials),
                                            g->d_scalars, result, accumulate);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s %s reduction", gs_type_name(Tr::type),
                  gs_op_name(Tr::op));
    return GS_OK;
}

/* The kernel arguments of a scan of d_in[0..n), n > 0, in tiles of Shape,
 * and the number of tiles; GS_ERR_ARG past the grid's limit. */
template <class Tr, class Shape>
gs_status gs_scan_setup(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out, int64_t n,
                        const gs_scan_io &io, gs_scan_args<Tr> *args, unsigned *tiles)
{
    using T = typename Tr::in_t;
    using O = typename Tr::out_t;
    constexpr int VEC = Tr::scan_vec;
    constexpr int64_t TILE = gs_scan_tile_items<Tr, Shape>();
    memset(args, 0, sizeof *args);
    args->in = static_cast<const T *>(d_in);
    args->out = static_cast<O *>(d_out);
    args->n = n;
    args->shift = (int)((uintptr_t)d_in % (VEC * sizeof(T)) / sizeof(T));
    args->vector_out = ((uintptr_t)d_out - args->shift * sizeof(O)) % (VEC * sizeof(O)) == 0;
    args->exclusive = kind == GS_EXCLUSIVE;
    args->carry_in = gs_from_acc<typename Tr::scan_t>(io.carry_in);
    args->carry_src = io.carry_src;
    args->carry_dst = io.carry_dst;
    args->overflow = io.overflow;
    const int64_t count = (n + args->shift + TILE - 1) / TILE;
    if (count > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "a scan of %lld elements needs too many tiles",
                                   (long long)n);
    *tiles = (unsigned)count;
    return GS_OK;
}

/* Resident blocks per multiprocessor of the MODE scan kernel of Shape
 * (which also readies its shared memory for launches: gs_cuda_occupancy). */
template <class Tr, class Shape, int MODE> gs_status gs_scan_occupancy(gs_cuda *g, int *blocks_per_sm)
{
    return gs_cuda_occupancy(g, (const void *)gs_scan_kernel<Tr, Shape, MODE>, gs_scan_threads<Shape, MODE>(),
                             gs_scan_smem_bytes<Tr, Shape>(), blocks_per_sm);
}

/* Launch the MODE scan kernel of Shape over `tiles` tiles on the compute
 * stream; `what` names the pass in an error. */
template <class Tr, class Shape, int MODE>
gs_status gs_scan_launch(gs_cuda *g, unsigned tiles, const gs_scan_args<Tr> &args, const char *what)
{
    int blocks_per_sm;   /* not needed: the call readies the kernel */
    GS_CUDA_PASS((gs_scan_occupancy<Tr, Shape, MODE>(g, &blocks_per_sm)));
    gs_scan_kernel<Tr, Shape, MODE>
        <<<tiles, gs_scan_threads<Shape, MODE>(), gs_scan_smem_bytes<Tr, Shape>(), g->stream>>>(args);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s of a %s %s scan", what, gs_type_name(Tr::type),
                  gs_op_name(Tr::op));
    return GS_OK;
}

#endif /* GS_CUDA_LAUNCH_CUH */
