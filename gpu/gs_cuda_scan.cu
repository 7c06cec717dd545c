/*
 * gs_cuda_scan.cu - the scan: one launch of the single-pass chained scan
 * with decoupled look-back (see gs_scan_kernel), one block per tile.
 *
 * Tile states live in a scratch array of the handle that only grows; each
 * launch takes a new epoch, so states left by earlier launches read as "not
 * yet" and the array is never cleared between scans.
 */
#include "gs_cuda_kernels.cuh"

/* Threads per block and 16-byte input vectors per thread: 32 KiB of input
 * per tile, whatever the element size. Measured on an H200 at 2^30 f32 (and
 * 2^29 f64): 8 vectors beat 4 by 12%; persistent blocks that prefetched the
 * next tile with cp.async ran at half the speed of either. */
#define GS_SCAN_BLOCK 256
#define GS_SCAN_VECS 8

template <class Tr, int BLOCK, int VECS>
static gs_status scan(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out, int64_t n,
                      gs_acc carry_in, gs_acc *carry_out, int *overflow)
{
    using T = typename Tr::in_t;
    using S = typename Tr::scan_t;
    using O = typename Tr::out_t;
    constexpr int64_t TILE = (int64_t)BLOCK * VECS * gs_vec<T>::count;

    gs_scan_args<Tr> args;
    args.in = static_cast<const T *>(d_in);
    args.out = static_cast<O *>(d_out);
    args.n = n;
    args.shift = (int)((uintptr_t)d_in % 16 / sizeof(T));
    args.vector_out = ((uintptr_t)d_out - args.shift * sizeof(O)) % 16 == 0;
    args.exclusive = kind == GS_EXCLUSIVE;
    args.carry_in = gs_from_acc<S>(carry_in);
    args.epoch = ++g->scan_epoch;
    args.scalars = g->d_scalars;

    const int64_t tiles = (n + args.shift + TILE - 1) / TILE;
    if (tiles > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_scan: %lld elements are too many",
                                   (long long)n);
    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_tiles, &g->tiles_bytes, tiles * sizeof(gs_tile_state),
                                 "scan tile states"));
    args.states = static_cast<gs_tile_state *>(g->d_tiles);

    gs_scan_kernel<Tr, BLOCK, VECS><<<(unsigned)tiles, BLOCK, 0, g->stream>>>(args);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s %s scan", gs_type_name(Tr::type),
                  gs_op_name(Tr::op));
    GS_CUDA_PASS(gs_cuda_fetch_scalars(g));
    if (carry_out) *carry_out = g->h_scalars->result;
    if (overflow) *overflow = g->h_scalars->overflow_epoch == args.epoch;
    return GS_OK;
}

gs_status gs_cuda_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                       void *d_out, int64_t n, gs_acc carry_in, gs_acc *carry_out, int *overflow)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_scan", type, op, d_in, n));
    const gs_type out_type = gs_scan_output_type(type, op);
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_scan (output)", out_type, op, d_out, n));
    if (kind != GS_INCLUSIVE && kind != GS_EXCLUSIVE)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_scan: invalid scan kind %d", (int)kind);
    if (n > 0 && d_in == d_out && gs_type_size(type) != gs_type_size(out_type))
        return gs_cuda_fail_status(g, GS_ERR_ARG,
                                   "gs_cuda_scan: a %s %s scan cannot run in place (%s output)",
                                   gs_type_name(type), gs_op_name(op), gs_type_name(out_type));
    if (overflow) *overflow = 0;
    if (n == 0) {
        if (carry_out) *carry_out = carry_in;
        return GS_OK;
    }
    GS_CUDA_PASS(gs_cuda_enter(g));
    return gs_dispatch(type, op, [&](auto traits) {
        return scan<decltype(traits), GS_SCAN_BLOCK, GS_SCAN_VECS>(g, kind, d_in, d_out, n, carry_in,
                                                                   carry_out, overflow);
    });
}
