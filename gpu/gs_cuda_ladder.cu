/*
 * gs_cuda_ladder.cu - every variant of gpuscan.h's gs_algo, for `gpuscan
 * ladder` and the tests: the classic reduction steps, the block scans under
 * a recursive multi-kernel driver, reduce-then-scan, and the defaults and
 * CUB through their own entry points. One template per variant serves every
 * (type, op) through gs_traits, with the semantics of the defaults.
 *
 * Reductions: a ladder kernel leaves one reduce_t partial per block in the
 * caller's scratch, and the default reduction combines those partials.
 *
 * Hierarchical scans (Hillis-Steele, Blelloch, multi-kernel): each level
 * scans blocks of its input into block-local inclusive prefixes and writes
 * the blocks' totals; the totals are scanned the same way, recursively; then
 * gs_ladder_add_kernel adds each block's prefix back. At the bottom level the
 * locals are kept in scan_t where the output type would round them (float
 * sums and products of f32), else in the output itself. The add-back forms
 * every final element from its predecessor and its own input (the
 * difference of adjacent locals), so integer overflow is caught exactly
 * where it happens, as in the default; the carry out is formed once the
 * add-back is done.
 */
#include <stdint.h>
#include <type_traits>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_launch.cuh"
#include "gs_cuda_scan_agent.cuh"
#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"

/* Threads per block of every ladder kernel, and what one block covers. */
#define GS_LADDER_BLOCK 256
/* Elements per thread of the multi-kernel scan's block scan. */
#define GS_LADDER_ITEMS 8

/* Elements of one block of a hierarchical scan level. */
__host__ __device__ constexpr int gs_ladder_tile(int algo)
{
    return GS_LADDER_BLOCK * (algo == GS_ALGO_HILLIS_STEELE ? 1 : algo == GS_ALGO_BLELLOCH ? 2
                                                                                        : GS_LADDER_ITEMS);
}

/* ---- reductions: the classic steps ------------------------------------------------- */

/* The last 64 partials of sdata, by the first warp alone: warp-synchronous,
 * with the __syncwarp() between steps that Volta and later need (the
 * slides' volatile version relies on lockstep execution, which is gone). */
template <gs_op OP, class A> __device__ __forceinline__ void gs_warp_tail(A *sdata, unsigned tid)
{
    A v = sdata[tid];
#pragma unroll
    for (unsigned s = 32; s > 0; s >>= 1) {
        v = gs_combine<OP>(v, sdata[tid + s]);
        __syncwarp();
        sdata[tid] = v;
        __syncwarp();
    }
}

/*
 * The reduction ladder as one kernel whose steps differ only where ALGO
 * says, so that each step's change stands out as it does on the slides.
 * Steps 1-5 take the block size at run time (blockDim.x), steps 6-7 as the
 * template parameter BLOCK. Each block writes its partial to partials[].
 * Partials of up to 2 * BLOCK elements are exact in thread_t; the
 * grid-stride step's are not, so it works in reduce_t.
 */
template <class Tr, int ALGO, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
gs_ladder_reduce_kernel(const typename Tr::in_t *in, int64_t n, typename Tr::reduce_t *partials)
{
    using R = typename Tr::reduce_t;
    using A = std::conditional_t<ALGO == GS_ALGO_GRID_STRIDE, R, typename Tr::thread_t>;
    constexpr gs_op OP = Tr::op;
    __shared__ A sdata[BLOCK];
    const unsigned tid = threadIdx.x;
    const A identity = static_cast<A>(gs_from_acc<R>(gs_acc_identity(Tr::type, OP)));

    /* the load: one element per thread (1-3), two (4-6), many (7) */
    if constexpr (ALGO <= GS_ALGO_SEQUENTIAL) {
        const int64_t i = (int64_t)blockIdx.x * blockDim.x + tid;
        sdata[tid] = i < n ? static_cast<A>(in[i]) : identity;
    } else if constexpr (ALGO <= GS_ALGO_UNROLL_LAST_WARP) {
        const int64_t i = (int64_t)blockIdx.x * (blockDim.x * 2) + tid;
        A v = i < n ? static_cast<A>(in[i]) : identity;
        if (i + blockDim.x < n) v = gs_combine<OP>(v, static_cast<A>(in[i + blockDim.x]));
        sdata[tid] = v;
    } else {
        const int64_t grid = (int64_t)BLOCK * 2 * (ALGO == GS_ALGO_GRID_STRIDE ? gridDim.x : 1);
        A v = identity;
        for (int64_t i = (int64_t)blockIdx.x * (BLOCK * 2) + tid; i < n; i += grid) {
            v = gs_combine<OP>(v, static_cast<A>(in[i]));
            if (i + BLOCK < n) v = gs_combine<OP>(v, static_cast<A>(in[i + BLOCK]));
            if (ALGO != GS_ALGO_GRID_STRIDE) break;   /* step 6: one pair per thread */
        }
        sdata[tid] = v;
    }
    __syncthreads();

    /* the tree */
    if constexpr (ALGO == GS_ALGO_DIVERGENT) {
        for (unsigned s = 1; s < blockDim.x; s *= 2) {
            if (tid % (2 * s) == 0) sdata[tid] = gs_combine<OP>(sdata[tid], sdata[tid + s]);
            __syncthreads();
        }
    } else if constexpr (ALGO == GS_ALGO_STRIDED) {
        for (unsigned s = 1; s < blockDim.x; s *= 2) {
            const unsigned index = 2 * s * tid;
            if (index < blockDim.x) sdata[index] = gs_combine<OP>(sdata[index], sdata[index + s]);
            __syncthreads();
        }
    } else if constexpr (ALGO == GS_ALGO_SEQUENTIAL || ALGO == GS_ALGO_FIRST_ADD) {
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] = gs_combine<OP>(sdata[tid], sdata[tid + s]);
            __syncthreads();
        }
    } else if constexpr (ALGO == GS_ALGO_UNROLL_LAST_WARP) {
        for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
            if (tid < s) sdata[tid] = gs_combine<OP>(sdata[tid], sdata[tid + s]);
            __syncthreads();
        }
        if (tid < 32) gs_warp_tail<OP>(sdata, tid);
    } else {
#pragma unroll
        for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
            if (tid < s) sdata[tid] = gs_combine<OP>(sdata[tid], sdata[tid + s]);
            __syncthreads();
        }
        if (tid < 32) gs_warp_tail<OP>(sdata, tid);
    }
    if (tid == 0) partials[blockIdx.x] = static_cast<R>(sdata[0]);
}

/* Blocks of a classic reduction step over n elements. */
template <class Tr, int ALGO>
static gs_status ladder_reduce_blocks(gs_cuda *g, int64_t n, int64_t *blocks)
{
    const int64_t per_block = ALGO <= GS_ALGO_SEQUENTIAL ? GS_LADDER_BLOCK : 2 * GS_LADDER_BLOCK;
    *blocks = (n + per_block - 1) / per_block;
    if (ALGO == GS_ALGO_GRID_STRIDE) {
        int per_sm;
        GS_CUDA_PASS(gs_cuda_occupancy(g, (const void *)gs_ladder_reduce_kernel<Tr, ALGO, GS_LADDER_BLOCK>,
                                       GS_LADDER_BLOCK, 0, &per_sm));
        const int64_t resident = (int64_t)g->sm_count * per_sm;
        if (*blocks > resident) *blocks = resident;
    }
    if (*blocks > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED, "the %s reduction takes fewer than %lld elements",
                                   gs_algo_name((gs_algo)ALGO), (long long)INT32_MAX * per_block);
    return GS_OK;
}

template <class Tr, int ALGO>
static gs_status ladder_reduce(gs_cuda *g, const void *d_in, int64_t n, gs_acc *d_result, void *work,
                               size_t work_bytes)
{
    using T = typename Tr::in_t;
    using R = typename Tr::reduce_t;
    int64_t blocks;
    GS_CUDA_PASS((ladder_reduce_blocks<Tr, ALGO>(g, n, &blocks)));
    if (work_bytes < (size_t)blocks * sizeof(R))
        return gs_cuda_fail_status(g, GS_ERR_ARG, "the %s reduction needs %zu bytes of scratch, not %zu",
                                   gs_algo_name((gs_algo)ALGO), (size_t)blocks * sizeof(R), work_bytes);
    R *partials = static_cast<R *>(work);
    gs_ladder_reduce_kernel<Tr, ALGO, GS_LADDER_BLOCK><<<(unsigned)blocks, GS_LADDER_BLOCK, 0, g->stream>>>(
        static_cast<const T *>(d_in), n, partials);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s %s %s reduction", gs_algo_name((gs_algo)ALGO),
                  gs_type_name(Tr::type), gs_op_name(Tr::op));
    return gs_reduce_launch<Tr, R, GS_REDUCE_BLOCK, GS_REDUCE_UNROLL>(g, partials, blocks, d_result, false);
}

/* ---- scans: block scans under a recursive driver ------------------------------------ */

/* Blelloch's padding: one slot more every 128 bytes, so that the tree's
 * strided accesses spread over the banks. */
template <class S> __device__ __forceinline__ int gs_pad(int i) { return i + i / (128 / (int)sizeof(S)); }

/*
 * One level of a hierarchical scan: block b scans its gs_ladder_tile(ALGO)
 * elements of `in` into block-local inclusive prefixes in `local` and
 * writes its total to sums[b]. The block scan is the variant's: Hillis-
 * Steele over a double buffer (one element per thread), Blelloch's up- and
 * down-sweep over a padded array (two per thread), or warp-shuffle scans
 * of GS_LADDER_ITEMS warp-striped elements per thread chained through each
 * warp, then across the warps (multi-kernel). In and L are the element and
 * local types at the bottom level, scan_t above.
 */
template <class Tr, class In, class L, int ALGO>
__global__ void __launch_bounds__(GS_LADDER_BLOCK)
gs_ladder_level_kernel(const In *in, L *local, int64_t n, typename Tr::scan_t *sums)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    constexpr int B = GS_LADDER_BLOCK;
    const int tid = threadIdx.x;
    const int64_t base = (int64_t)blockIdx.x * gs_ladder_tile(ALGO);
    const S identity = gs_scan_identity<Tr>();

    if constexpr (ALGO == GS_ALGO_HILLIS_STEELE) {
        __shared__ S buf[2][B];
        const int64_t i = base + tid;
        buf[0][tid] = i < n ? static_cast<S>(in[i]) : identity;
        __syncthreads();
        int cur = 0;
        for (int offset = 1; offset < B; offset *= 2) {
            const S mine = buf[cur][tid];
            buf[1 - cur][tid] = tid >= offset ? gs_combine<OP>(buf[cur][tid - offset], mine) : mine;
            cur = 1 - cur;
            __syncthreads();
        }
        if (i < n) local[i] = static_cast<L>(buf[cur][tid]);
        if (tid == B - 1) sums[blockIdx.x] = buf[cur][tid];
    } else if constexpr (ALGO == GS_ALGO_BLELLOCH) {
        constexpr int N2 = 2 * B;
        __shared__ S temp[N2 + N2 / (128 / sizeof(S))];
        const int ai = tid, bi = tid + B;
        const S xa = base + ai < n ? static_cast<S>(in[base + ai]) : identity;
        const S xb = base + bi < n ? static_cast<S>(in[base + bi]) : identity;
        temp[gs_pad<S>(ai)] = xa;
        temp[gs_pad<S>(bi)] = xb;
        int offset = 1;
        for (int d = N2 / 2; d > 0; d /= 2) {   /* up-sweep */
            __syncthreads();
            if (tid < d) {
                const int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
                temp[gs_pad<S>(b)] = gs_combine<OP>(temp[gs_pad<S>(a)], temp[gs_pad<S>(b)]);
            }
            offset *= 2;
        }
        if (tid == 0) {
            sums[blockIdx.x] = temp[gs_pad<S>(N2 - 1)];
            temp[gs_pad<S>(N2 - 1)] = identity;
        }
        for (int d = 1; d < N2; d *= 2) {   /* down-sweep: exclusive prefixes */
            offset /= 2;
            __syncthreads();
            if (tid < d) {
                const int a = offset * (2 * tid + 1) - 1, b = offset * (2 * tid + 2) - 1;
                const S left = temp[gs_pad<S>(a)];
                temp[gs_pad<S>(a)] = temp[gs_pad<S>(b)];
                temp[gs_pad<S>(b)] = gs_combine<OP>(temp[gs_pad<S>(b)], left);
            }
        }
        __syncthreads();
        if (base + ai < n) local[base + ai] = static_cast<L>(gs_combine<OP>(temp[gs_pad<S>(ai)], xa));
        if (base + bi < n) local[base + bi] = static_cast<L>(gs_combine<OP>(temp[gs_pad<S>(bi)], xb));
    } else {
        /* warp-striped: item k of lane l is element k * 32 + l of the warp's
         * segment, so that every load and store is coalesced */
        constexpr int WARPS = B / 32;
        __shared__ S warp_totals[WARPS];
        const int lane = tid % 32, warp = tid / 32;
        const int64_t segment = base + (int64_t)warp * 32 * GS_LADDER_ITEMS;
        S x[GS_LADDER_ITEMS];
        S warp_total = identity;
#pragma unroll
        for (int k = 0; k < GS_LADDER_ITEMS; k++) {
            const int64_t i = segment + k * 32 + lane;
            const S incl = gs_warp_scan<OP>(i < n ? static_cast<S>(in[i]) : identity);
            x[k] = gs_combine<OP>(warp_total, incl);
            warp_total = gs_combine<OP>(warp_total, gs_shfl_idx(incl, 31));
        }
        if (lane == 0) warp_totals[warp] = warp_total;
        __syncthreads();
        S before = identity, total = identity;
        for (int w = 0; w < WARPS; w++) {
            if (w == warp) before = total;
            total = gs_combine<OP>(total, warp_totals[w]);
        }
#pragma unroll
        for (int k = 0; k < GS_LADDER_ITEMS; k++) {
            const int64_t i = segment + k * 32 + lane;
            if (i < n) local[i] = static_cast<L>(gs_combine<OP>(before, x[k]));
        }
        if (tid == 0) sums[blockIdx.x] = total;
    }
}

/*
 * The add-back of one level: element i of block b becomes P (+) local[i],
 * P = carry (+) the inclusive scan of the level's block sums up to b - 1
 * (`scanned`; unused for a single block). Thread t takes elements t,
 * t + BLOCK, ... of its block (coalesced), and reads every local it needs
 * (its own and the one before each) before any is written, since `out` may
 * be `local` itself. At the bottom level (io set) the carry comes from
 * device memory, exclusive scans shift by one, and integer sums are checked
 * element by element: input i is the difference of locals i and i - 1. The
 * carry out is left to gs_ladder_carry_kernel, since blocks that finish
 * early would otherwise overwrite the carry others still read.
 */
template <class Tr, class L, class Out, int ITEMS>
__global__ void __launch_bounds__(GS_LADDER_BLOCK)
gs_ladder_add_kernel(const L *local, Out *out, int64_t n, const typename Tr::scan_t *scanned,
                     const gs_scan_io io, bool exclusive)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    const S identity = gs_scan_identity<Tr>();
    const int64_t block_base = (int64_t)blockIdx.x * GS_LADDER_BLOCK * ITEMS;

    S l[ITEMS], before[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const int64_t i = block_base + k * GS_LADDER_BLOCK + threadIdx.x;
        l[k] = i < n ? static_cast<S>(local[i]) : identity;
        before[k] = i > block_base && i < n ? static_cast<S>(local[i - 1]) : identity;
    }
    __syncthreads();   /* every local is read before any is overwritten */

    S prefix = io.carry_src ? gs_from_acc<S>(*io.carry_src) : gs_from_acc<S>(io.carry_in);
    if (blockIdx.x > 0) prefix = gs_combine<OP>(prefix, scanned[blockIdx.x - 1]);
    bool overflow = false;
#pragma unroll
    for (int k = 0; k < ITEMS; k++) {
        const int64_t i = block_base + k * GS_LADDER_BLOCK + threadIdx.x;
        if (i >= n) break;
        const S prev = gs_combine<OP>(prefix, before[k]);
        const S next = gs_combine<OP>(prefix, l[k]);
        if constexpr (Tr::is_int_sum) {
            const S x = l[k] - before[k];   /* wraps back to the input exactly */
            overflow |= Tr::is_signed ? gs_add_i64_overflows((int64_t)prev, (int64_t)x, (int64_t)next)
                                      : gs_add_u64_overflows(prev, next);
        }
        out[i] = static_cast<Out>(exclusive ? prev : next);
    }
    if (overflow && io.overflow) *io.overflow = 1;
}

/* The carry after the last element, once every block has read the carry
 * before the first: carry (+) the total of all blocks. */
template <class Tr>
__global__ void gs_ladder_carry_kernel(const typename Tr::scan_t *total, const gs_scan_io io)
{
    using S = typename Tr::scan_t;
    const S carry = io.carry_src ? gs_from_acc<S>(*io.carry_src) : gs_from_acc<S>(io.carry_in);
    *io.carry_dst = gs_to_acc(gs_combine<Tr::op>(carry, *total));
}

/* Scan in[0..n) into out at one level of ALGO and below: the level's
 * locals, the recursive scan of its block sums (sums, then the levels above
 * in the scratch after them), and the add-back. */
template <class Tr, int ALGO, class In, class L, class Out>
static gs_status ladder_levels(gs_cuda *g, const In *in, L *local, Out *out, int64_t n,
                               typename Tr::scan_t *sums, const gs_scan_io &io, bool exclusive)
{
    using S = typename Tr::scan_t;
    constexpr int TILE = gs_ladder_tile(ALGO);
    const int64_t blocks = (n + TILE - 1) / TILE;
    if (blocks > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED, "the %s scan takes fewer than %lld elements",
                                   gs_algo_name((gs_algo)ALGO), (long long)INT32_MAX * TILE);
    gs_ladder_level_kernel<Tr, In, L, ALGO><<<(unsigned)blocks, GS_LADDER_BLOCK, 0, g->stream>>>(in, local, n, sums);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching a level of the %s %s %s scan",
                  gs_algo_name((gs_algo)ALGO), gs_type_name(Tr::type), gs_op_name(Tr::op));
    if (blocks > 1) {
        /* the block sums become their inclusive scan, in place */
        gs_scan_io above;
        above.carry_in = gs_to_acc(gs_scan_identity<Tr>());
        above.carry_src = NULL;
        above.carry_dst = NULL;
        above.overflow = NULL;
        GS_CUDA_PASS((ladder_levels<Tr, ALGO, S, S, S>(g, sums, sums, sums, blocks, sums + blocks, above, false)));
    }
    gs_ladder_add_kernel<Tr, L, Out, TILE / GS_LADDER_BLOCK><<<(unsigned)blocks, GS_LADDER_BLOCK, 0, g->stream>>>(
        local, out, n, sums, io, exclusive);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the add-back of the %s %s %s scan",
                  gs_algo_name((gs_algo)ALGO), gs_type_name(Tr::type), gs_op_name(Tr::op));
    if (io.carry_dst) {
        /* sums[blocks - 1]: the total of every block, scanned or alone */
        gs_ladder_carry_kernel<Tr><<<1, 1, 0, g->stream>>>(sums + blocks - 1, io);
        GS_CUDA_CHECK(g, cudaGetLastError(), "launching the carry of the %s %s %s scan",
                      gs_algo_name((gs_algo)ALGO), gs_type_name(Tr::type), gs_op_name(Tr::op));
    }
    return GS_OK;
}

/* Where a hierarchical scan keeps its bottom-level locals: in scan_t where
 * the output type would round them, else in the output. */
template <class Tr> using gs_local_t =
    std::conditional_t<Tr::is_float && !Tr::is_min_max && sizeof(typename Tr::out_t) < sizeof(typename Tr::scan_t),
                       typename Tr::scan_t, typename Tr::out_t>;

/* Scratch of a hierarchical scan: the block sums of every level, then the
 * locals when they do not live in the output. */
template <class Tr, int ALGO> static size_t ladder_levels_bytes(int64_t n)
{
    using S = typename Tr::scan_t;
    size_t bytes = 0;
    for (int64_t m = n; m > 1;) {
        m = (m + gs_ladder_tile(ALGO) - 1) / gs_ladder_tile(ALGO);
        bytes += (size_t)m * sizeof(S);
    }
    if (!std::is_same_v<gs_local_t<Tr>, typename Tr::out_t>) bytes += (size_t)n * sizeof(S);
    return bytes + 16;
}

template <class Tr, int ALGO>
static gs_status ladder_hierarchical(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out,
                                     int64_t n, const gs_scan_io &io, void *work, size_t work_bytes)
{
    using S = typename Tr::scan_t;
    using O = typename Tr::out_t;
    using L = gs_local_t<Tr>;
    const size_t need = ladder_levels_bytes<Tr, ALGO>(n);
    if (work_bytes < need)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "the %s scan needs %zu bytes of scratch, not %zu",
                                   gs_algo_name((gs_algo)ALGO), need, work_bytes);
    S *sums = static_cast<S *>(work);
    O *out = static_cast<O *>(d_out);
    L *local;
    if constexpr (std::is_same_v<L, O>) local = out;
    else local = reinterpret_cast<L *>(static_cast<char *>(work) + need - 16 - (size_t)n * sizeof(S));
    return ladder_levels<Tr, ALGO>(g, static_cast<const typename Tr::in_t *>(d_in), local, out, n, sums, io,
                                   kind == GS_EXCLUSIVE);
}

/* ---- scans: reduce-then-scan --------------------------------------------------------- */

/* The default's tiles, three passes: their totals, the exclusive scan of
 * the totals from the carry (one block), and the tiles scanned from it. */
template <class Tr>
static gs_status ladder_reduce_then_scan(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out,
                                         int64_t n, const gs_scan_io &io, void *work, size_t work_bytes)
{
    using Shape = typename gs_scan_tuning<Tr>::shape;
    gs_scan_args<Tr> args;
    unsigned tiles = 0;
    GS_CUDA_PASS((gs_scan_setup<Tr, Shape>(g, kind, d_in, d_out, n, io, &args, &tiles)));
    if (work_bytes < (size_t)tiles * sizeof(typename Tr::scan_t))
        return gs_cuda_fail_status(g, GS_ERR_ARG, "reduce-then-scan needs %zu bytes of scratch, not %zu",
                                   (size_t)tiles * sizeof(typename Tr::scan_t), work_bytes);
    args.sums = static_cast<typename Tr::scan_t *>(work);
    GS_CUDA_PASS((gs_scan_launch<Tr, Shape, GS_TILE_REDUCE>(g, tiles, args, "tile totals")));
    gs_scan_sums_kernel<Tr, 1024, 8><<<1, 1024, 0, g->stream>>>(args, tiles);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the scan of the tile totals of a %s %s scan",
                  gs_type_name(Tr::type), gs_op_name(Tr::op));
    return gs_scan_launch<Tr, Shape, GS_TILE_PREFIXED>(g, tiles, args, "tiles");
}

template <class Tr> static size_t ladder_reduce_then_scan_bytes(int64_t n)
{
    using Shape = typename gs_scan_tuning<Tr>::shape;
    constexpr int64_t TILE = gs_scan_tile_items<Tr, Shape>();
    return (size_t)((n + Tr::scan_vec + TILE - 1) / TILE) * sizeof(typename Tr::scan_t);
}

/* ---- the C interface ------------------------------------------------------------------ */

gs_status gs_cuda_check_algo(gs_cuda *g, gs_algo algo, int scan)
{
    if ((unsigned)algo >= GS_ALGO_COUNT || !gs_algo_serves(algo, scan))
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s is no %s variant",
                                   (unsigned)algo < GS_ALGO_COUNT ? gs_algo_name(algo) : "an unknown algorithm",
                                   scan ? "scan" : "reduction");
    return GS_OK;
}

/* fn(std::integral_constant<int, ALGO>) for a run-time reduction step. */
template <class Fn> static gs_status reduce_step(gs_algo algo, Fn &&fn)
{
    switch (algo) {
    case GS_ALGO_DIVERGENT: return fn(std::integral_constant<int, GS_ALGO_DIVERGENT>{});
    case GS_ALGO_STRIDED: return fn(std::integral_constant<int, GS_ALGO_STRIDED>{});
    case GS_ALGO_SEQUENTIAL: return fn(std::integral_constant<int, GS_ALGO_SEQUENTIAL>{});
    case GS_ALGO_FIRST_ADD: return fn(std::integral_constant<int, GS_ALGO_FIRST_ADD>{});
    case GS_ALGO_UNROLL_LAST_WARP: return fn(std::integral_constant<int, GS_ALGO_UNROLL_LAST_WARP>{});
    case GS_ALGO_UNROLL_ALL: return fn(std::integral_constant<int, GS_ALGO_UNROLL_ALL>{});
    default: return fn(std::integral_constant<int, GS_ALGO_GRID_STRIDE>{});
    }
}

/* fn(std::integral_constant<int, ALGO>) for a run-time hierarchical scan. */
template <class Fn> static gs_status scan_hierarchy(gs_algo algo, Fn &&fn)
{
    switch (algo) {
    case GS_ALGO_HILLIS_STEELE: return fn(std::integral_constant<int, GS_ALGO_HILLIS_STEELE>{});
    case GS_ALGO_BLELLOCH: return fn(std::integral_constant<int, GS_ALGO_BLELLOCH>{});
    default: return fn(std::integral_constant<int, GS_ALGO_MULTI_KERNEL>{});
    }
}

gs_status gs_cuda_ladder_work_bytes(gs_cuda *g, gs_algo algo, int scan, gs_type type, gs_op op,
                                    gs_scan_kind kind, int64_t n, size_t *bytes)
{
    *bytes = 0;
    GS_CUDA_PASS(gs_cuda_check_algo(g, algo, scan));
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_ladder_work_bytes", type, op, NULL, 0));
    if (n <= 0 || algo == GS_ALGO_DEFAULT) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    if (algo == GS_ALGO_CUB) return gs_cub_run(g, scan, type, op, kind, NULL, NULL, n, NULL, bytes);
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        if (!scan)
            return reduce_step(algo, [&](auto step) {
                int64_t blocks;
                GS_CUDA_PASS((ladder_reduce_blocks<Tr, decltype(step)::value>(g, n, &blocks)));
                *bytes = (size_t)blocks * sizeof(typename Tr::reduce_t);
                return GS_OK;
            });
        if (algo == GS_ALGO_REDUCE_THEN_SCAN) {
            *bytes = ladder_reduce_then_scan_bytes<Tr>(n);
            return GS_OK;
        }
        return scan_hierarchy(algo, [&](auto step) {
            *bytes = ladder_levels_bytes<Tr, decltype(step)::value>(n);
            return GS_OK;
        });
    });
}

gs_status gs_cuda_ladder_reduce(gs_cuda *g, gs_algo algo, gs_type type, gs_op op, const void *d_in,
                                int64_t n, gs_acc *d_result, void *work, size_t work_bytes)
{
    GS_CUDA_PASS(gs_cuda_check_algo(g, algo, 0));
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_ladder_reduce", type, op, d_in, n));
    if (!d_result) return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_ladder_reduce: NULL result");
    GS_CUDA_PASS(gs_cuda_enter(g));
    if (n == 0) {
        const gs_acc id = gs_acc_identity(type, op);
        /* a pageable source is staged before the call returns */
        GS_CUDA_CHECK(g, cudaMemcpyAsync(d_result, &id, sizeof id, cudaMemcpyHostToDevice, g->stream),
                      "writing the identity");
        return GS_OK;
    }
    if (algo == GS_ALGO_CUB) {
        size_t bytes = work_bytes;
        return gs_cub_run(g, 0, type, op, GS_INCLUSIVE, d_in, d_result, n, work, &bytes);
    }
    if (algo == GS_ALGO_DEFAULT) return gs_reduce_default(g, type, op, d_in, n, d_result, false);
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        return reduce_step(algo, [&](auto step) {
            return ladder_reduce<Tr, decltype(step)::value>(g, d_in, n, d_result, work, work_bytes);
        });
    });
}

gs_status gs_cuda_ladder_scan(gs_cuda *g, gs_algo algo, gs_type type, gs_op op, gs_scan_kind kind,
                              const void *d_in, void *d_out, int64_t n, gs_acc *d_carry,
                              uint32_t *d_overflow, void *work, size_t work_bytes)
{
    GS_CUDA_PASS(gs_cuda_check_algo(g, algo, 1));
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_ladder_scan", type, op, d_in, n));
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_ladder_scan (output)", gs_scan_output_type(type, op), op,
                                    d_out, n));
    if (kind != GS_INCLUSIVE && kind != GS_EXCLUSIVE)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_ladder_scan: invalid scan kind %d", (int)kind);
    if (!d_carry || !d_overflow)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_ladder_scan: NULL carry or overflow flag");
    if (n == 0) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    if (algo == GS_ALGO_CUB) {
        size_t bytes = work_bytes;
        return gs_cub_run(g, 1, type, op, kind, d_in, d_out, n, work, &bytes);
    }
    gs_scan_io io;
    io.carry_in.w = 0;
    io.carry_src = d_carry;
    io.carry_dst = d_carry;
    io.overflow = d_overflow;
    if (algo == GS_ALGO_DEFAULT) return gs_scan_default(g, type, op, kind, d_in, d_out, n, io);
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        if (algo == GS_ALGO_REDUCE_THEN_SCAN)
            return ladder_reduce_then_scan<Tr>(g, kind, d_in, d_out, n, io, work, work_bytes);
        return scan_hierarchy(algo, [&](auto step) {
            return ladder_hierarchical<Tr, decltype(step)::value>(g, kind, d_in, d_out, n, io, work, work_bytes);
        });
    });
}
