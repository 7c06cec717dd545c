/*
 * gs_cuda_scan.cu - the scan: one launch of the single-pass chained scan
 * with decoupled look-back (see gs_scan_kernel), one block per tile.
 *
 * Tile states live in a scratch array of the handle that only grows; each
 * launch takes a new epoch, so states left by earlier launches read as "not
 * yet" and the array is never cleared between scans.
 *
 * gs_cuda_scan_async reads the carry from device memory and writes it back
 * there, so scans queued one after another on the compute stream chain
 * through one carry with no host synchronisation; gs_cuda_scan runs the
 * same launch with the carry passed by value and fetches the results.
 */
#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_launch.cuh"
#include "gs_cuda_scan_agent.cuh"
#include "gs_cuda_traits.cuh"

/* Queue the scan of d_in[0..n), n > 0, on the compute stream. */
template <class Tr, class Shape>
static gs_status scan_launch(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out,
                             int64_t n, const gs_scan_io &io)
{
    gs_scan_args<Tr> args;
    unsigned tiles = 0;
    GS_CUDA_PASS((gs_scan_setup<Tr, Shape>(g, kind, d_in, d_out, n, io, &args, &tiles)));
    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_tiles, &g->tiles_bytes, tiles * sizeof(gs_tile_state),
                                 "scan tile states"));
    args.states = static_cast<gs_tile_state *>(g->d_tiles);
    args.epoch = ++g->scan_epoch;
    return gs_scan_launch<Tr, Shape, GS_TILE_LOOKBACK>(g, tiles, args, "single pass");
}

/* Whether at least `min_per_sm` blocks of the Shape scan kernel fit a
 * multiprocessor of the device and n elements make at least `waves` of its
 * tiles for every block slot of the GPU. Too few tiles for even
 * `min_per_sm` blocks answer before the occupancy query, which would load
 * the kernel that small scans never run. */
template <class Tr, class Shape>
static gs_status tiles_fill(gs_cuda *g, int64_t n, int waves, int min_per_sm, bool *yes)
{
    constexpr int64_t TILE = gs_scan_tile_items<Tr, Shape>();
    const int64_t tiles = (n + TILE - 1) / TILE, sm_waves = (int64_t)waves * g->sm_count;
    *yes = false;
    if (tiles < sm_waves * min_per_sm) return GS_OK;
    if (gs_scan_smem_bytes<Tr, Shape>() > g->smem_per_block) return GS_OK;   /* Turing: 64 KiB */
    int per_sm;
    GS_CUDA_PASS((gs_scan_occupancy<Tr, Shape, GS_TILE_LOOKBACK>(g, &per_sm)));
    *yes = per_sm >= min_per_sm && tiles >= sm_waves * per_sm;
    return GS_OK;
}

gs_status gs_scan_default(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io)
{
    GS_CUDA_PASS(gs_cuda_enter(g));
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        using Tuning = gs_scan_tuning<Tr>;
        /* the largest tiles there are enough of (gs_scan_tuning): fewer
         * tiles look back less, fewer than the block slots leave
         * multiprocessors idle; the wide ones only where their two blocks
         * fit a multiprocessor, as measured (Hopper's 228 KiB; an A100
         * holds one) */
        using Wide = typename Tuning::wide_shape;
        bool fill;
        GS_CUDA_PASS((tiles_fill<Tr, Wide>(g, n, GS_SCAN_WIDE_WAVES, Wide::min_blocks, &fill)));
        if (fill) return scan_launch<Tr, Wide>(g, kind, d_in, d_out, n, io);
        GS_CUDA_PASS((tiles_fill<Tr, typename Tuning::shape>(g, n, 1, 1, &fill)));
        if (fill) return scan_launch<Tr, typename Tuning::shape>(g, kind, d_in, d_out, n, io);
        return scan_launch<Tr, typename Tuning::small_shape>(g, kind, d_in, d_out, n, io);
    });
}

/* The handle's scan: the default, or the variant chosen for it. */
static gs_status scan_dispatch(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind,
                               const void *d_in, void *d_out, int64_t n, const gs_scan_io &io)
{
    if (g->scan_algo != GS_ALGO_DEFAULT) {
        GS_CUDA_PASS(gs_cuda_enter(g));
        return gs_variant_scan(g, type, op, kind, d_in, d_out, n, io);
    }
    return gs_scan_default(g, type, op, kind, d_in, d_out, n, io);
}

/* The arguments every scan entry point takes; `what` names the call. */
static gs_status check_scan(gs_cuda *g, const char *what, gs_type type, gs_op op,
                            gs_scan_kind kind, const void *d_in, const void *d_out, int64_t n)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, what, type, op, d_in, n));
    const gs_type out_type = gs_scan_output_type(type, op);
    GS_CUDA_PASS(gs_cuda_check_args(g, what, out_type, op, d_out, n));
    if (kind != GS_INCLUSIVE && kind != GS_EXCLUSIVE)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: invalid scan kind %d", what, (int)kind);
    if (n > 0 && d_in == d_out && gs_type_size(type) != gs_type_size(out_type))
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: a %s %s scan cannot run in place (%s output)",
                                   what, gs_type_name(type), gs_op_name(op), gs_type_name(out_type));
    return GS_OK;
}

gs_status gs_cuda_scan_async(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind,
                             const void *d_in, void *d_out, int64_t n, gs_acc *d_carry,
                             uint32_t *d_overflow)
{
    GS_CUDA_PASS(check_scan(g, "gs_cuda_scan_async", type, op, kind, d_in, d_out, n));
    if (!d_carry || !d_overflow)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_scan_async: NULL carry or overflow flag");
    if (n == 0) return GS_OK;   /* the carry passes through */
    gs_scan_io io;
    io.carry_in.w = 0;
    io.carry_src = d_carry;
    io.carry_dst = d_carry;
    io.overflow = d_overflow;
    return scan_dispatch(g, type, op, kind, d_in, d_out, n, io);
}

gs_status gs_cuda_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                       void *d_out, int64_t n, gs_acc carry_in, gs_acc *carry_out, int *overflow)
{
    GS_CUDA_PASS(check_scan(g, "gs_cuda_scan", type, op, kind, d_in, d_out, n));
    if (overflow) *overflow = 0;
    if (n == 0) {
        if (carry_out) *carry_out = carry_in;
        return GS_OK;
    }
    gs_scan_io io;
    io.carry_in = carry_in;
    io.carry_src = NULL;
    io.carry_dst = &g->d_scalars->result;
    io.overflow = &g->d_scalars->overflow;
    GS_CUDA_PASS(scan_dispatch(g, type, op, kind, d_in, d_out, n, io));
    GS_CUDA_PASS(gs_cuda_fetch_scalars(g));
    if (carry_out) *carry_out = g->h_scalars->result;
    if (g->h_scalars->overflow) {
        if (overflow) *overflow = 1;
        /* rare: clear the flag for the next scan, in stream order */
        GS_CUDA_CHECK(g, cudaMemsetAsync(&g->d_scalars->overflow, 0, sizeof(uint32_t), g->stream),
                      "clearing the overflow flag");
    }
    return GS_OK;
}
