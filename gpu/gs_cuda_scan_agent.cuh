/*
 * gs_cuda_scan_agent.cuh - the scan kernels and their tile machinery:
 *   gs_scan_kernel       one tile per block: the single-pass chained scan with
 *                        decoupled look-back (a dedicated look-back warp), or
 *                        the first or last pass of reduce-then-scan
 *   gs_scan_sums_kernel  reduce-then-scan's middle pass, one block
 * with the tile states they publish, the look-back over them, the tile
 * shapes and the kernels' arguments. One template serves every (type, op);
 * the shape a launch uses (gs_scan_tuning) and the launch helpers live in
 * gs_cuda_launch.cuh.
 */
#ifndef GS_CUDA_SCAN_AGENT_CUH
#define GS_CUDA_SCAN_AGENT_CUH

#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"

/* ---- tile states ----------------------------------------------------------------- */

/* A scan tile's published state: status = epoch << 2 | GS_TILE_*, value =
 * the tile's aggregate or inclusive prefix (the bits of the scan carry).
 * Statuses of earlier scans carry an older epoch and read as "not yet", so
 * the array never needs clearing between scans. Each state has 64 bytes
 * to itself: packed at 16, four to 64 bytes, 2^30-element scans ran 4-5%
 * slower (docs/PERFORMANCE.md). */
struct alignas(64) gs_tile_state {
    uint64_t status;
    uint64_t value;
};
enum { GS_TILE_AGGREGATE = 1, GS_TILE_INCLUSIVE = 2 };

/* One 16-byte store, relaxed at GPU scope: value and status travel together
 * (an aligned 16-byte access is not split by the hardware, as CUB relies on
 * too), so a reader never sees a status without its value. */
GS_DEV void gs_tile_publish(gs_tile_state *tile, uint64_t status, uint64_t value)
{
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};"
                 :: "l"(tile), "l"(status), "l"(value) : "memory");
}

GS_DEV gs_tile_state gs_tile_read(const gs_tile_state *tile)
{
    gs_tile_state s;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(s.status), "=l"(s.value) : "l"(tile) : "memory");
    return s;
}

template <class S> GS_DEV uint64_t gs_bits(S v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}
template <class S> GS_DEV S gs_from_bits(uint64_t b)
{
    S v;
    memcpy(&v, &b, 8);
    return v;
}

/* The exclusive prefix of tile `tile` (> 0) from its predecessors' states,
 * run by one whole warp: each lane reads one predecessor, nearest first, and
 * the window moves back 32 tiles until it holds an inclusive prefix. (A
 * window of 128, four states per lane, measured no faster once the
 * look-back has a warp of its own: docs/PERFORMANCE.md.) */
template <class Tr>
GS_DEV typename Tr::scan_t gs_look_back(const gs_tile_state *states, int64_t tile, uint64_t epoch)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    const int lane = threadIdx.x % 32;
    const S identity = gs_scan_identity<Tr>();
    const uint64_t inclusive_status = epoch << 2 | GS_TILE_INCLUSIVE;

    S prefix = identity;
    for (int64_t window = tile - 1;; window -= 32) {
        const int64_t pred = window - lane;
        gs_tile_state s = {inclusive_status, gs_bits(identity)};   /* before tile 0 */
        if (pred >= 0) s = gs_tile_read(&states[pred]);
        while (__any_sync(GS_FULL_MASK, s.status >> 2 != epoch)) {
            __nanosleep(64);   /* a constant: a growing delay makes ptxas spill */
            if (s.status >> 2 != epoch) s = gs_tile_read(&states[pred]);
        }
        const unsigned inclusive = __ballot_sync(GS_FULL_MASK, s.status == inclusive_status);
        /* lanes up to the nearest inclusive prefix count; farther ones not */
        const int last = inclusive ? __ffs(inclusive) - 1 : 31;
        const S v = lane <= last ? gs_from_bits<S>(s.value) : identity;
        prefix = gs_combine<OP>(gs_warp_reduce<OP>(v), prefix);
        if (inclusive) return prefix;
    }
}

/* ---- tiles and kernels ---------------------------------------------------------- */

/* How a scan tile learns the prefix of everything before it. */
enum gs_tile_mode {
    GS_TILE_LOOKBACK,   /* single pass: decoupled look-back over the published tile states */
    GS_TILE_REDUCE,     /* reduce-then-scan, pass 1: only write the tile's total to sums[tile] */
    GS_TILE_PREFIXED    /* reduce-then-scan, pass 3: sums[tile] holds the tile's prefix */
};

/* A scan kernel's shape: BLOCK data threads, VECS vectors per thread, at
 * least MINB blocks resident per multiprocessor. */
template <int BLOCK_, int VECS_, int MINB_> struct gs_scan_shape {
    static constexpr int block = BLOCK_, vecs = VECS_, min_blocks = MINB_;
};

/* A scan kernel's threads: the data warps, and with look-back one more. */
template <class Shape, int MODE> constexpr int gs_scan_threads()
{
    return Shape::block + (MODE == GS_TILE_LOOKBACK) * 32;
}

/* The elements of a Tr scan tile of Shape. */
template <class Tr, class Shape> GS_HD_CONST int gs_scan_tile_items()
{
    return Shape::block * Shape::vecs * Tr::scan_vec;
}

/* A scan kernel's shared memory, all of it dynamic (past 48 KiB a kernel
 * must ask for it: gs_scan_occupancy does): the staged tile, one raw
 * vector of the input per data thread and vector, then one work_t per data
 * warp. */
template <class Tr, class Shape> GS_HD_CONST int gs_scan_tile_bytes()
{
    return gs_scan_tile_items<Tr, Shape>() * (int)sizeof(typename Tr::in_t);
}
template <class Tr, class Shape> GS_HD_CONST int gs_scan_smem_bytes()
{
    return gs_scan_tile_bytes<Tr, Shape>() + Shape::block / 32 * (int)sizeof(typename Tr::work_t);
}

/* The blocks per multiprocessor it asks ptxas for: MINB, or as many as the
 * target holds where that is fewer (sm_75 runs 1024 threads per
 * multiprocessor; ptxas ignores a larger request, with a warning). */
template <class Shape, int MODE> constexpr int gs_scan_min_blocks()
{
    constexpr int threads = gs_scan_threads<Shape, MODE>();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    return Shape::min_blocks * threads <= 1024 ? Shape::min_blocks : 1024 / threads;
#else
    (void)threads;
    return Shape::min_blocks;
#endif
}

template <class Tr> struct gs_scan_args {
    const typename Tr::in_t *in;
    typename Tr::out_t *out;
    int64_t n;
    /* The tiles cover virtual indices [0, n + shift): element i sits at
     * virtual index i + shift, which puts vector boundaries of `in` on
     * vector boundaries of the tiles. */
    int shift;
    bool vector_out;   /* out is 16-byte aligned at the same vector boundaries */
    bool exclusive;
    typename Tr::scan_t carry_in;   /* the carry before element 0, unless carry_src is set */
    const gs_acc *carry_src;        /* device: the carry before element 0, read by tile 0 */
    gs_acc *carry_dst;              /* device: receives the carry after the last element */
    uint32_t *overflow;             /* device: set to 1 when a prefix sum overflows */
    gs_tile_state *states;          /* GS_TILE_LOOKBACK */
    uint64_t epoch;
    typename Tr::scan_t *sums;      /* GS_TILE_REDUCE, GS_TILE_PREFIXED */
};

/* The combining warp of a scan tile: reads the data warps' totals from
 * warp_vals, finds the tile's prefix as MODE says (publishing the tile's
 * state for look-back), and leaves each data warp's starting value in
 * warp_vals. Run by one whole warp. */
template <class Tr, class Shape, int MODE>
GS_DEV void gs_tile_combine(const gs_scan_args<Tr> &a, typename Tr::work_t *warp_vals)
{
    using W = typename Tr::work_t;
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    constexpr int WARPS = Shape::block / 32;
    const int lane = threadIdx.x % 32;
    const int64_t tile = blockIdx.x;
    const W identity = static_cast<W>(gs_scan_identity<Tr>());

    const W incl = gs_warp_scan<OP>(lane < WARPS ? warp_vals[lane] : identity);
    const S total = static_cast<S>(gs_shfl_idx(incl, WARPS - 1));
    if constexpr (MODE == GS_TILE_REDUCE) {
        if (lane == 0) a.sums[tile] = total;
    } else {
        S prefix;
        if constexpr (MODE == GS_TILE_PREFIXED) {
            prefix = a.sums[tile];
        } else {
            const uint64_t status = a.epoch << 2;
            if (tile == 0) {
                prefix = a.carry_src ? gs_from_acc<S>(*a.carry_src) : a.carry_in;
            } else {
                if (lane == 0) gs_tile_publish(&a.states[tile], status | GS_TILE_AGGREGATE, gs_bits(total));
                prefix = gs_look_back<Tr>(a.states, tile, a.epoch);
            }
            const S inclusive = gs_combine<OP>(prefix, total);
            if (lane == 0) {
                gs_tile_publish(&a.states[tile], status | GS_TILE_INCLUSIVE, gs_bits(inclusive));
                if (tile == gridDim.x - 1) *a.carry_dst = gs_to_acc(inclusive);
            }
        }
        /* data warp w starts after the tile's prefix and warps 0..w-1 */
        const W lower = gs_shfl_up(incl, 1);
        const W base = static_cast<W>(prefix);   /* min/max: exact, the values fit */
        if (lane < WARPS) warp_vals[lane] = lane == 0 ? base : gs_combine<OP>(base, lower);
    }
}

/*
 * One block scans one tile of BLOCK * VECS vectors of Tr::scan_vec elements;
 * blocks start in tile order, so a tile's predecessors are always running or
 * done. Data warp w owns a contiguous segment of VECS * 32 vectors; lane l
 * holds vector j * 32 + l of it for each j, so every load and store is a
 * coalesced 8- or 16-byte access. Min and max work in the element type,
 * everything else in scan_t.
 *
 * The tile waits for its prefix in shared memory, not in registers: each
 * thread copies its own vectors there asynchronously and reads back only
 * those (so no barrier guards them). The registers then hold no copy of
 * the tile, and not its vectors' totals either (each is summed again from
 * shared memory once the prefix is known), so no kernel spills, large
 * tiles fit and more blocks fit on a multiprocessor; both measured faster
 * for every (type, op) at 2^24 elements and more (docs/PERFORMANCE.md).
 *
 * With look-back the block has one more warp, which holds no data: it
 * combines the warps' totals, publishes the tile's state and looks back, so
 * the registers of its look-back never add to those holding the tile (its
 * branch never rejoins theirs). The tile's total goes out before any warp
 * scans its vectors, so the prefix chain between tiles waits for no more
 * work than it must. Whole tiles of aligned data use vector accesses; the
 * first and last tiles, and misaligned output, go element by element with
 * the op's identity in place of missing elements.
 */
template <class Tr, class Shape, int MODE>
__global__ void __launch_bounds__(gs_scan_threads<Shape, MODE>(), gs_scan_min_blocks<Shape, MODE>())
gs_scan_kernel(const gs_scan_args<Tr> a)
{
    using T = typename Tr::in_t;
    using W = typename Tr::work_t;
    using O = typename Tr::out_t;
    using LoadRaw = typename gs_raw_of<Tr::scan_vec * sizeof(T)>::type;
    using StoreRaw = typename gs_raw_of<Tr::scan_vec * sizeof(O)>::type;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = Tr::scan_vec, VECS = Shape::vecs;
    constexpr int WARPS = Shape::block / 32;
    constexpr int64_t WARP_ITEMS = VECS * 32 * VEC;
    constexpr int64_t TILE = WARPS * WARP_ITEMS;
    static_assert(WARPS <= 32, "one warp combines the warp totals");
    /* gs_scan_smem_bytes<Tr, Shape>() */
    extern __shared__ __align__(16) unsigned char gs_scan_smem[];
    LoadRaw *const staged_tile = reinterpret_cast<LoadRaw *>(gs_scan_smem);
    /* the warps' totals, then their starting values */
    W *const warp_vals = reinterpret_cast<W *>(gs_scan_smem + gs_scan_tile_bytes<Tr, Shape>());

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (MODE == GS_TILE_LOOKBACK && warp == WARPS) {
        gs_block_barrier();   /* the totals are in */
        gs_tile_combine<Tr, Shape, MODE>(a, warp_vals);
        gs_block_barrier();   /* the starting values are out */
        return;
    }

    const int64_t tile = blockIdx.x;
    const W identity = static_cast<W>(gs_scan_identity<Tr>());
    /* element index of this lane's first element of vector j = 0 */
    const int64_t first = tile * TILE + warp * WARP_ITEMS + lane * VEC - a.shift;
    const bool whole = a.vector_out && tile * TILE >= a.shift && (tile + 1) * TILE <= a.n + a.shift;

    LoadRaw *const staged = staged_tile + warp * VECS * 32 + lane;   /* this lane's vector j = 0 */
    if (whole) {
#pragma unroll
        for (int j = 0; j < VECS; j++)
            gs_copy_async<sizeof(LoadRaw)>(staged + j * 32, a.in + first + j * 32 * VEC);
        gs_copy_async_wait_all();
    } else {
        const T pad = static_cast<T>(identity);   /* every identity fits the element type */
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            T e[VEC];
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                e[k] = i >= 0 && i < a.n ? a.in[i] : pad;
            }
            memcpy(staged + j * 32, e, sizeof e);
        }
    }
    /* vector j of this lane */
    const auto vector = [&](int j, T (&e)[VEC]) {
        const LoadRaw raw = staged[j * 32];
        memcpy(e, &raw, sizeof raw);
    };
    /* vector j's total */
    const auto vector_total = [&](int j) {
        T e[VEC];
        vector(j, e);
        W v = static_cast<W>(e[0]);
#pragma unroll
        for (int k = 1; k < VEC; k++) v = gs_combine<OP>(v, static_cast<W>(e[k]));
        return v;
    };
    /* The warp's total. */
    W t = identity;
#pragma unroll
    for (int j = 0; j < VECS; j++) t = gs_combine<OP>(t, vector_total(j));
    t = gs_warp_reduce<OP>(t);
    if (lane == 0) warp_vals[warp] = t;
    gs_block_barrier();
    if constexpr (MODE != GS_TILE_LOOKBACK) {
        if (warp == 0) gs_tile_combine<Tr, Shape, MODE>(a, warp_vals);
        if constexpr (MODE == GS_TILE_REDUCE) return;
    }
    gs_block_barrier();

    /* A few vectors at a time (four of a 4-byte work type, two of an 8-byte
     * one: more would spill): their totals (summed again from shared
     * memory rather than kept in registers from above) scanned across the
     * warp together, then each lane's elements serially from their prefix;
     * each output is checked for overflow where it is formed. */
    constexpr int GROUP = sizeof(W) == 4 ? 4 : 2;
    static_assert(VECS % GROUP == 0, "whole groups of vectors");
    W segment = warp_vals[warp];
    bool overflow = false;
#pragma unroll
    for (int g = 0; g < VECS; g += GROUP) {
        W lanes[GROUP];
#pragma unroll
        for (int i = 0; i < GROUP; i++) lanes[i] = vector_total(g + i);
#pragma unroll
        for (int d = 1; d < 32; d *= 2)
#pragma unroll
            for (int i = 0; i < GROUP; i++) {
                const W up = gs_shfl_up(lanes[i], d);
                if (lane >= d) lanes[i] = gs_combine<OP>(up, lanes[i]);
            }
#pragma unroll
        for (int i = 0; i < GROUP; i++) {
            const int j = g + i;
            const W lower_lanes = gs_shfl_up(lanes[i], 1);
            W running = lane == 0 ? segment : gs_combine<OP>(segment, lower_lanes);
            segment = gs_combine<OP>(segment, gs_shfl_idx(lanes[i], 31));
            T in[VEC];
            vector(j, in);
            O y[VEC];
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const W e = static_cast<W>(in[k]);
                const W next = gs_combine<OP>(running, e);
                if constexpr (Tr::is_int_sum) {
                    overflow |= Tr::is_signed
                                    ? gs_add_i64_overflows((int64_t)running, (int64_t)e, (int64_t)next)
                                    : gs_add_u64_overflows(running, next);
                }
                y[k] = static_cast<O>(a.exclusive ? running : next);
                running = next;
            }
            O *dst = a.out + first + j * 32 * VEC;
            if (whole) {
                StoreRaw raw;
                memcpy(&raw, y, sizeof raw);
                *reinterpret_cast<StoreRaw *>(dst) = raw;
            } else {
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    const int64_t i = first + j * 32 * VEC + k;
                    if (i >= 0 && i < a.n) dst[k] = y[k];
                }
            }
        }
    }
    if constexpr (Tr::is_int_sum) {
        if (__any_sync(GS_FULL_MASK, overflow) && lane == 0) *a.overflow = 1;
    }
}

/* Reduce-then-scan, pass 2: one block turns sums[0..count) (the tiles'
 * totals) into their exclusive scan from the carry in place, and leaves the
 * carry after the last in *carry_dst. ITEMS consecutive sums per thread. */
template <class Tr, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) gs_scan_sums_kernel(const gs_scan_args<Tr> a, int64_t count)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    constexpr int WARPS = BLOCK / 32;
    __shared__ S warp_totals[WARPS];
    __shared__ S chunk_prefix;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const S identity = gs_scan_identity<Tr>();
    if (threadIdx.x == 0) chunk_prefix = a.carry_src ? gs_from_acc<S>(*a.carry_src) : a.carry_in;

    for (int64_t base = 0; base < count; base += (int64_t)BLOCK * ITEMS) {
        const int64_t mine = base + (int64_t)threadIdx.x * ITEMS;
        S x[ITEMS];
        S t = identity;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            x[k] = mine + k < count ? a.sums[mine + k] : identity;
            t = gs_combine<OP>(t, x[k]);
        }
        const S incl = gs_warp_scan<OP>(t);
        if (lane == 31) warp_totals[warp] = incl;
        __syncthreads();   /* also orders chunk_prefix */
        S before = chunk_prefix;
        for (int w = 0; w < warp; w++) before = gs_combine<OP>(before, warp_totals[w]);
        S chunk_total = before;
        for (int w = warp; w < WARPS; w++) chunk_total = gs_combine<OP>(chunk_total, warp_totals[w]);
        const S lower = gs_shfl_up(incl, 1);
        S running = lane == 0 ? before : gs_combine<OP>(before, lower);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            if (mine + k < count) a.sums[mine + k] = running;
            running = gs_combine<OP>(running, x[k]);
        }
        __syncthreads();   /* everyone read chunk_prefix and warp_totals */
        if (threadIdx.x == 0) chunk_prefix = chunk_total;
    }
    __syncthreads();
    if (threadIdx.x == 0) *a.carry_dst = gs_to_acc(chunk_prefix);
}

#endif /* GS_CUDA_SCAN_AGENT_CUH */
