/*
 * gs_cuda_exact.cu - the launches of the exact sums (gs_cuda_exact_*agent.cuh):
 *   reduction  one grid of contiguous block ranges (gs_exact_sum_kernel),
 *              the block sums added to *acc, which the last block normalizes
 *   scan       one pass (gs_exact_scan_kernel), one tile per block, each
 *              tile's state published for the look-back of those after it;
 *              f64 tiles twice as long where the device has room for them
 */
#include "gs_cuda_exact.h"
#include "gs_cuda_exact_reduce_agent.cuh"
#include "gs_cuda_exact_scan_agent.cuh"
#include "gs_cuda_handle.cuh"

/* A block sums fewer than 2^27 elements per launch, so its threads' own
 * states cannot overflow (gs_cuda_exact_reduce_agent.cuh). */
#define GS_EXACT_BLOCK_MAX ((int64_t)1 << 27)

static gs_status check_exact(gs_cuda *g, const char *what, gs_type type, const void *d_in, int64_t n,
                             const void *state)
{
    if (type != GS_F32 && type != GS_F64)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: exact sums are of f32 or f64, not %s", what,
                                   gs_type_name(type));
    GS_CUDA_PASS(gs_cuda_check_args(g, what, type, GS_SUM, d_in, n));
    if (!state) return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: NULL exact state", what);
    return GS_OK;
}

/* Resident blocks of `kernel` on the whole device. */
static gs_status resident_blocks(gs_cuda *g, const void *kernel, int block, int64_t *blocks)
{
    int per_sm = 0;
    GS_CUDA_PASS(gs_cuda_occupancy(g, kernel, block, 0, &per_sm));
    *blocks = (int64_t)g->sm_count * (per_sm > 0 ? per_sm : 1);
    return GS_OK;
}

/* Elements per block for `blocks` blocks over n: a multiple of `unit`. */
static int64_t share(int64_t n, int64_t blocks, int64_t unit)
{
    const int64_t per = (n + blocks - 1) / blocks;
    return (per + unit - 1) / unit * unit;
}

template <class T> static gs_status reduce_exact(gs_cuda *g, const T *in, int64_t n, gs_exact *acc)
{
    constexpr int64_t VEC = 16 / sizeof(T);
    constexpr int64_t BLOCK = gs_exact_sum_block<T>();
    const auto kernel = gs_exact_sum_kernel<T>;
    int64_t resident;
    GS_CUDA_PASS(resident_blocks(g, (const void *)kernel, BLOCK, &resident));
    /* no more blocks than vectors to share out; pieces of at most a
     * resident grid of GS_EXACT_BLOCK_MAX each (keeps offsets aligned) */
    const int64_t piece_max = resident * (GS_EXACT_BLOCK_MAX - VEC);
    for (int64_t offset = 0; offset < n; offset += piece_max) {
        const int64_t m = n - offset < piece_max ? n - offset : piece_max;
        const int64_t wanted = (m + BLOCK * GS_EXACT_UNROLL * VEC - 1) / (BLOCK * GS_EXACT_UNROLL * VEC);
        const int64_t blocks0 = wanted < resident ? wanted : resident;
        const int64_t per_block = share(m, blocks0, VEC);
        const unsigned blocks = (unsigned)((m + per_block - 1) / per_block);
        kernel<<<blocks, BLOCK, 0, g->stream>>>(in + offset, m, per_block, acc, g->d_scalars);
        GS_CUDA_CHECK(g, cudaGetLastError(), "launching the exact %s reduction", gs_type_name(sizeof(T) == 4 ? GS_F32 : GS_F64));
    }
    return GS_OK;
}

/* The scan on tiles of VECS vectors a thread (gs_exact_tile_items). */
template <class T, int VECS>
static gs_status scan_exact(gs_cuda *g, gs_scan_kind kind, const T *in, T *out, int64_t n, gs_exact *carry)
{
    constexpr int64_t ITEMS = gs_exact_tile_items<T, VECS>();
    constexpr int DYNAMIC = gs_exact_dynamic_bytes<VECS>();
    const auto kernel = gs_exact_scan_kernel<T, VECS>;
    const char *name = gs_type_name(sizeof(T) == 4 ? GS_F32 : GS_F64);
    const int64_t tiles = (n + ITEMS - 1) / ITEMS;
    /* each tile: its state and two packed exact states (640 bytes) */
    const size_t per_tile = sizeof(gs_exact_tile) + 2 * sizeof(gs_exact_packed);
    size_t bytes;
    if (tiles > INT32_MAX || __builtin_mul_overflow((size_t)tiles, per_tile, &bytes))
        return gs_cuda_fail_status(g, GS_ERR_ARG, "an exact scan of %lld elements needs too many tiles", (long long)n);
    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_exact_tiles, &g->exact_tiles_bytes, bytes, "exact scan tile states"));
    if (DYNAMIC) {   /* the first call lets the kernel have its tile's bytes */
        int per_sm = 0;
        GS_CUDA_PASS(gs_cuda_occupancy(g, (const void *)kernel, GS_EXACT_BLOCK, DYNAMIC, &per_sm));
    }

    gs_exact_scan_args<T, VECS> args;
    args.in = in;
    args.out = out;
    args.n = n;
    args.carry = carry;
    /* the packed states lie past as many tile states as the reservation
     * holds, not past this launch's: a tile state then never lies where an
     * earlier launch of fewer tiles left a packed one, whose digits could
     * read as a state of this launch's epoch */
    args.tiles = static_cast<gs_exact_tile *>(g->d_exact_tiles);
    args.full = reinterpret_cast<gs_exact_packed *>(args.tiles + g->exact_tiles_bytes / per_tile);
    if (++g->exact_epoch == GS_EXACT_EPOCHS) {   /* a status keeps 8 bits of it: clear them before one repeats */
        GS_CUDA_CHECK(g, cudaMemsetAsync(g->d_exact_tiles, 0, g->exact_tiles_bytes, g->stream),
                      "clearing the exact scan tile states");
        g->exact_epoch = 1;
    }
    args.epoch = g->exact_epoch;
    args.exclusive = kind == GS_EXCLUSIVE;
    args.vector_io = (uintptr_t)in % 16 == 0 && (uintptr_t)out % 16 == 0;
    kernel<<<(unsigned)tiles, GS_EXACT_BLOCK, DYNAMIC, g->stream>>>(args);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the exact %s scan", name);
    return GS_OK;
}

/* The blocks of long f64 tiles that fit a multiprocessor of the device; 0
 * where a block may not have its 71 KiB (Turing's limit is 64). */
static gs_status long_tile_blocks(gs_cuda *g, int *per_sm)
{
    constexpr int DYNAMIC = gs_exact_dynamic_bytes<GS_EXACT_VECS_LONG>();
    const void *kernel = (const void *)gs_exact_scan_kernel<double, GS_EXACT_VECS_LONG>;
    cudaFuncAttributes attr;
    int per_block = 0;
    GS_CUDA_CHECK(g, cudaFuncGetAttributes(&attr, kernel), "attributes of the exact f64 scan kernel");
    GS_CUDA_CHECK(g, cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, g->device),
                  "shared memory per block of device %d", g->device);
    *per_sm = 0;
    if (attr.sharedSizeBytes + DYNAMIC <= (size_t)per_block)
        GS_CUDA_PASS(gs_cuda_occupancy(g, kernel, GS_EXACT_BLOCK, DYNAMIC, per_sm));
    return GS_OK;
}

/* Whether f64 scans take the long tiles (gs_cuda_set_exact_tiles): by
 * default where three of their blocks fit a multiprocessor (Hopper's 228
 * KiB of shared memory; measured faster there, docs/PERFORMANCE.md). AUTO
 * decides once per handle. */
static gs_status long_f64_tiles(gs_cuda *g, bool *yes)
{
    if (g->exact_tiles != GS_CUDA_EXACT_TILES_AUTO) {
        *yes = g->exact_tiles == GS_CUDA_EXACT_TILES_LONG;
        return GS_OK;
    }
    if (!g->exact_long_decided) {
        int per_sm;
        GS_CUDA_PASS(long_tile_blocks(g, &per_sm));
        g->exact_long = per_sm >= gs_exact_scan_blocks<GS_EXACT_VECS_LONG>();
        g->exact_long_decided = true;
    }
    *yes = g->exact_long;
    return GS_OK;
}

void gs_cuda_exact_epoch_to_wrap(gs_cuda *g) { g->exact_epoch = GS_EXACT_EPOCHS - 1; }

gs_status gs_cuda_set_exact_tiles(gs_cuda *g, gs_cuda_exact_tiles tiles)
{
    if (tiles != GS_CUDA_EXACT_TILES_AUTO && tiles != GS_CUDA_EXACT_TILES_SHORT && tiles != GS_CUDA_EXACT_TILES_LONG)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_set_exact_tiles: invalid choice %d", (int)tiles);
    if (tiles == GS_CUDA_EXACT_TILES_LONG) {
        GS_CUDA_PASS(gs_cuda_enter(g));
        int per_sm;
        GS_CUDA_PASS(long_tile_blocks(g, &per_sm));
        if (per_sm < 1)
            return gs_cuda_fail_status(g, GS_ERR_ARG, "long exact f64 tiles do not fit a block of device %d", g->device);
    }
    g->exact_tiles = tiles;
    return GS_OK;
}

gs_status gs_cuda_reduce_exact_async(gs_cuda *g, gs_type type, const void *d_in, int64_t n, gs_exact *d_acc)
{
    GS_CUDA_PASS(check_exact(g, "gs_cuda_reduce_exact_async", type, d_in, n, d_acc));
    if (n == 0) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    return type == GS_F32 ? reduce_exact(g, static_cast<const float *>(d_in), n, d_acc)
                          : reduce_exact(g, static_cast<const double *>(d_in), n, d_acc);
}

gs_status gs_cuda_scan_exact_async(gs_cuda *g, gs_type type, gs_scan_kind kind, const void *d_in,
                                   void *d_out, int64_t n, gs_exact *d_carry)
{
    const char *what = "gs_cuda_scan_exact_async";
    GS_CUDA_PASS(check_exact(g, what, type, d_in, n, d_carry));
    GS_CUDA_PASS(gs_cuda_check_args(g, what, type, GS_SUM, d_out, n));
    if (kind != GS_INCLUSIVE && kind != GS_EXCLUSIVE)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: invalid scan kind %d", what, (int)kind);
    if (n == 0) return GS_OK;   /* the carry passes through */
    GS_CUDA_PASS(gs_cuda_enter(g));
    if (type == GS_F32)
        return scan_exact<float, GS_EXACT_VECS>(g, kind, static_cast<const float *>(d_in), static_cast<float *>(d_out),
                                                n, d_carry);
    const double *in = static_cast<const double *>(d_in);
    double *out = static_cast<double *>(d_out);
    bool long_tiles;
    GS_CUDA_PASS(long_f64_tiles(g, &long_tiles));
    return long_tiles ? scan_exact<double, GS_EXACT_VECS_LONG>(g, kind, in, out, n, d_carry)
                      : scan_exact<double, GS_EXACT_VECS>(g, kind, in, out, n, d_carry);
}
