/*
 * gs_cuda_exact_scan_agent.cuh - the exact scan kernel (--exact,
 * gs_exact.h):
 *
 *   gs_exact_scan_kernel  a scan in one pass, one tile per block, chained by
 *                         decoupled look-back over exact tile states: a pair
 *                         of doubles whose sum is the state exactly, or a
 *                         packed gs_exact where no pair holds it. A tile first
 *                         sums its elements exactly on its own (f32: on a
 *                         grid; f64: in double-double where that is exact)
 *                         and publishes that; with P, the exact sum before
 *                         it, from the look-back, the fast path rounds P +
 *                         each local prefix, checked against a bound on its
 *                         error: an output whose approximation is farther
 *                         than the bound from every rounding boundary rounds
 *                         exactly as the exact prefix does. Up to
 *                         GS_EXACT_FIXES outputs too close (or zero) are
 *                         rounded one by one from the exact carry; a tile
 *                         with more (or a special value, an overflow) takes
 *                         the exact path: each thread walks a run of elements
 *                         with a normalized gs_exact and rounds every prefix.
 *
 * The fast path's arithmetic is in gs_cuda_exact_fast.cuh, the tile states
 * and how they are published in gs_cuda_exact_tile_state.cuh. Launched by
 * gs_cuda_exact.cu.
 */
#ifndef GS_CUDA_EXACT_SCAN_AGENT_CUH
#define GS_CUDA_EXACT_SCAN_AGENT_CUH

#include <type_traits>

#include "gs_cuda_exact_tile_state.cuh"

/* ---- the scan: one pass, tiles chained by decoupled look-back ------------------ */

/* A scan tile is VECS 16-byte vectors per thread: GS_EXACT_VECS, or for
 * f64 GS_EXACT_VECS_LONG where three blocks of that fit a multiprocessor
 * (gs_cuda_exact.cu): f64's chain per tile is the longer, so its tile pays
 * for being longer (docs/PERFORMANCE.md). */
#define GS_EXACT_VECS 8
#define GS_EXACT_VECS_LONG 16
template <class T, int VECS> GS_HD_CONST int64_t gs_exact_tile_items()
{
    return (int64_t)GS_EXACT_BLOCK * VECS * gs_exact_scan_traits<T>::vec;
}

/* VECS: the tile's shape (gs_exact_tile_items), carried in the type. */
template <class T, int VECS> struct gs_exact_scan_args {
    const T *in;
    T *out;
    int64_t n;
    gs_exact *carry;           /* before element 0; tile 0 reads it, the last tile moves it past n */
    gs_exact_tile *tiles;      /* one per tile */
    gs_exact_packed *full;     /* two per tile: aggregate, inclusive prefix */
    uint32_t epoch;            /* below GS_EXACT_EPOCHS, never 0 */
    bool exclusive;
    bool vector_io;            /* in and out 16-byte aligned: whole tiles use vectors */
};

/* Outputs of a tile that are rounded one by one from the exact carry when
 * the fast path's check leaves them undecided; with more, the tile takes
 * the exact path. */
#define GS_EXACT_FIXES 8

/* f32 tiles whose P (exact, one double) lies fewer than this many
 * binades above its lowest set bit test their outputs for exact sums in
 * the first pass (gs_exact_round_checked's FAST2SUM). On data as coarse as
 * P, an output is a tie of f32's rounding with a chance of about 2^(23 -
 * that distance): from 48 on, fewer than one tile in 4096 has one and
 * passes twice. Below, the test is cheaper than the second pass, which,
 * in a scan's last wave of tiles, lengthens the scan by a tile's life
 * (integer-valued data, the generator's first tiles; docs/PERFORMANCE.md). */
#define GS_EXACT_TIE_SPAN 48

/* A 16-byte vector of a tile (four f32 or two f64). */
using gs_exact_raw = typename gs_raw_of<16>::type;

/* What a tile keeps in shared memory beside its elements: its own sums,
 * written by every warp, and P, written by warp 0, which looks back for it. */
struct gs_exact_tile_shared {
    gs_exact carry;            /* P, the exact sum before the tile, when carry_exact */
    gs_exact inclusive;        /* the tile's exact sum where aggregate_full, then P + the tile's sum where a pair cannot hold it */
    double hi, lo, err;        /* P for the fast path: |P - (hi + lo)| <= err */
    int low;                   /* with err == 0: P is a multiple of 2^low */
    bool all_slow;             /* P holds a special value or is beyond fp64 */
    bool carry_exact;
    bool aggregate_full;       /* the tile's exact sum is inclusive, not aggregate */
    double aggregate[2];
    int warp_low[GS_EXACT_WARPS];
    gs_dd warp_total[GS_EXACT_WARPS];
    double warp_abs[GS_EXACT_WARPS];
    double warp_off_grid[GS_EXACT_WARPS];   /* f32: what the grid rounded off */
    gs_exact_pair warp_rest[GS_EXACT_WARPS];
};
/* The rare paths' shared memory. */
struct gs_exact_scan_scratch {
    gs_exact_block_state sum;  /* the rare paths' block sums */
    int64_t warp_scan[GS_EXACT_WARPS];
    int fails;                 /* outputs of the tile its check left undecided */
    int64_t fail_index[GS_EXACT_FIXES];
    double fail_value[GS_EXACT_FIXES];
};
/* The tile, in rows of the block's vectors as loaded (row j: each warp's
 * 32 vectors j * 32 .. j * 32 + 31 of its segment, at gs_exact_stage_slot):
 * a static array for tiles of GS_EXACT_VECS (ptxas spilled three times as
 * much in the f32 kernel with a dynamic one), dynamic shared memory for
 * the long ones (past a static array's 48 KiB). */
template <int VECS> struct gs_exact_tile_rows {
    gs_exact_raw row[VECS * GS_EXACT_BLOCK];
};
extern __shared__ gs_exact_raw gs_exact_stage_dynamic[];
template <int VECS> GS_HD_CONST int gs_exact_dynamic_bytes()
{
    return VECS == GS_EXACT_VECS ? 0 : VECS * GS_EXACT_BLOCK * (int)sizeof(gs_exact_raw);
}

/* Where vector c of row j of a warp's segment lies, from the warp's first
 * column: the row, then c with its low three bits permuted. A warp stores
 * rows (lanes c = 0..31) and reads runs (lane l: vectors l * VECS + i,
 * i = 0..VECS-1, for the prefixes); 16-byte accesses go eight lanes at a
 * time, and both ways the eight meet eight different 16-byte bank groups
 * (unpermuted, a run's lanes would meet one). */
template <int VECS> GS_DEV int gs_exact_stage_slot(int j, int c)
{
    static_assert(VECS == 8 || VECS == 16, "a run spans 32 / VECS lanes of a row");
    const int key = c / VECS | (j % (VECS / 4)) * (32 / VECS);   /* < 8, the same for eight lanes of a row */
    return j * GS_EXACT_BLOCK + (c ^ key);
}

/* st->carry made P exactly, where only the pair held it (a tile's fix or
 * exact path, never both, calls it once); every thread calls it. */
GS_DEV void gs_exact_scan_exact_carry(gs_exact_tile_shared *st)
{
    gs_exact_sync();
    if (threadIdx.x == 0 && !st->carry_exact) gs_exact_from_pair(&st->carry, st->hi, st->lo);
    gs_exact_sync();
}

/* Lane 0 of warp 0: P for the fast path, from the pair p
 * (exact) or, when full, from st->carry (normalized). */
GS_DEV void gs_exact_set_carry(gs_exact_tile_shared *st, bool full, gs_exact_pair p)
{
    double hi, lo;
    bool exact = true;
    if (full) exact = gs_exact_to_pair(&st->carry, hi, lo);
    else gs_two_sum(p.hi, p.lo, hi, lo);   /* normalized: |lo| <= ulp(hi) / 2 */
    st->hi = hi;
    st->lo = lo;
    st->err = exact ? 0.0 : __dadd_ru(__dmul_ru(fabs(hi), 0x1p-106), 0x1p-1074);
    const int low_hi = gs_low_bit(hi), low_lo = gs_low_bit(lo);
    st->low = low_hi < low_lo ? low_hi : low_lo;
    st->all_slow = full && (st->carry.special != 0 || !isfinite(hi));
    st->carry_exact = full;
}
/* How many tile states a look-back lane reads at once: a window is 32 times
 * as many tiles. A look-back walks about as far as the inclusive prefixes
 * lag behind its tile, 45-90 tiles on an H200. f64 reads three a lane:
 * its long tiles' scans ran 6% faster on an H100 and 2% on an H200 than
 * with one, its short tiles' 4% on an H200 (two or four: slower). f32's
 * ran slower with two or three (docs/PERFORMANCE.md). */
template <class T> GS_HD_CONST int gs_exact_look_back_reads()
{
    return sizeof(T) == 8 ? 3 : 1;
}

/* Warp 0 of tile `tile` > 0: P from the states of the tiles before it,
 * nearest first, a window at a time until one holds an inclusive prefix:
 * lane l reads the states of tiles window - l - 32 k, k below
 * gs_exact_look_back_reads. While every state is a pair and their sum
 * stays whole, P is the pair p (lane 0's); else it is summed exactly into
 * st->carry (normalized on return) and the result is true. */
template <class T, int VECS>
GS_DEV bool gs_exact_look_back(const gs_exact_scan_args<T, VECS> &a, int64_t tile, gs_exact_tile_shared *st,
                               gs_exact_pair &p)
{
    constexpr int K = gs_exact_look_back_reads<T>();
    const int lane = threadIdx.x % 32;
    const uint32_t epoch = a.epoch;
    bool full = false;
    for (int64_t window = tile - 1;; window -= 32 * K) {
        /* the tile that lane l reads in its read k */
        const auto pred = [&](int k, int l) { return window - 32 * k - l; };
        gs_exact_seen<T> incl[K], agg[K];
        const auto ready = [&](int k) { return incl[k].status() >> 2 == epoch || agg[k].status() >> 2 == epoch; };
        const auto read = [&](int k) {   /* both words at once: one round trip */
            incl[k] = gs_exact_word_read<T>(&a.tiles[pred(k, lane)].inclusive.word);
            agg[k] = gs_exact_word_read<T>(&a.tiles[pred(k, lane)].aggregate.word);
        };
        const auto all_ready = [&] {
            bool r = true;
#pragma unroll
            for (int k = 0; k < K; k++) r = r & ready(k);
            return r;
        };
#pragma unroll
        for (int k = 0; k < K; k++) {
            /* before tile 0: never counted (tile 0 is an inclusive prefix) */
            incl[k] = gs_exact_seen<T>::of((uint64_t)epoch << 2, 0.0);
            agg[k] = gs_exact_seen<T>::of(0, 0.0);
            if (pred(k, lane) >= 0) read(k);
        }
        while (__any_sync(GS_FULL_MASK, !all_ready())) {
            __nanosleep(64);
#pragma unroll
            for (int k = 0; k < K; k++)
                if (!ready(k)) read(k);
        }
        /* the nearest inclusive prefix, in read `stop` (K: none), lane `last` */
        bool inclusive[K];
        int stop = K, last = 31;
#pragma unroll
        for (int k = 0; k < K; k++) {
            inclusive[k] = incl[k].status() >> 2 == epoch;
            const unsigned inclusives = __ballot_sync(GS_FULL_MASK, inclusive[k]);
            if (stop == K && inclusives) {
                stop = k;
                last = __ffs(inclusives) - 1;
            }
        }
        const bool found = stop < K;
        /* states up to the nearest inclusive prefix count; farther ones not */
        gs_exact_pair v[K];
        unsigned flags[K], any_flags = 0;
#pragma unroll
        for (int k = 0; k < K; k++) {
            const bool counted = k < stop || (k == stop && lane <= last);
            const gs_exact_seen<T> w = inclusive[k] ? incl[k] : agg[k];
            flags[k] = counted ? (unsigned)(w.status() & 3) : 0u;
            any_flags |= flags[k];
            v[k].hi = counted ? w.hi : 0.0;
            v[k].lo = counted ? w.lo() : 0.0;
        }
        if (any_flags) gs_exact_acquire_fence();   /* side fields, or a packed state, follow the word */
        if (!full && !__any_sync(GS_FULL_MASK, any_flags)) {
            /* values in the words: the his' sum and the los' in fp64, exact
             * when no addition rounded */
            bool exact = true;
            double hi_sum = v[0].hi, lo_sum = v[0].lo;
#pragma unroll
            for (int k = 1; k < K; k++) gs_sums_add_checked(hi_sum, lo_sum, v[k].hi, v[k].lo, exact);
            gs_warp_sums_checked(hi_sum, lo_sum, exact);
            gs_exact_pair q = p;
            q.add(hi_sum);
            if (lo_sum != 0.0) q.add(lo_sum);
            if (__all_sync(GS_FULL_MASK, exact) && __shfl_sync(GS_FULL_MASK, (int)q.whole, 0)) {
                p = q;
                if (found) return false;
                continue;
            }
        }
#pragma unroll
        for (int k = 0; k < K; k++)
            if (flags[k] & GS_EXACT_VALUE_PAIR) {
                const gs_exact_tile *t = &a.tiles[pred(k, lane)];
                v[k].lo = __ldcg(inclusive[k] ? &t->inclusive.lo : &t->aggregate.lo);
            }
        if (!full) {
            gs_exact_pair sum = v[0];
#pragma unroll
            for (int k = 1; k < K; k++) sum.add(v[k]);
            gs_exact_pair q = p;
            q.add(gs_exact_pair_warp_sum(sum));
            if (__shfl_sync(GS_FULL_MASK, (int)q.whole, 0) && !__any_sync(GS_FULL_MASK, any_flags & GS_EXACT_VALUE_FULL)) {
                p = q;
                if (found) return false;
                continue;
            }
            if (lane == 0) gs_exact_from_pair(&st->carry, p.hi, p.lo);
            full = true;
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
            const int lanes = k < stop ? 32 : k == stop ? last + 1 : 0;
            for (int l = 0; l < lanes; l++) {
                const bool packed = __shfl_sync(GS_FULL_MASK, flags[k] & GS_EXACT_VALUE_FULL, l);
                const bool li = __shfl_sync(GS_FULL_MASK, inclusive[k], l);
                const double h = __shfl_sync(GS_FULL_MASK, v[k].hi, l), hl = __shfl_sync(GS_FULL_MASK, v[k].lo, l);
                if (lane == 0) {
                    if (packed) {
                        gs_exact_acquire_fence();   /* lane l read the word; this lane reads the state */
                        gs_exact_add_packed(&st->carry, &a.full[2 * pred(k, l) + li]);
                    } else {
                        gs_exact_add_f64(&st->carry, h);
                        gs_exact_add_f64(&st->carry, hl);
                    }
                }
            }
        }
        if (found) {
            if (lane == 0) gs_exact_normalize(&st->carry);
            __syncwarp();
            return true;
        }
    }
}

/* One thread, once the tile's sums are in st: publishes the aggregate of
 * tile `tile` > 0 for the look-back of the tiles after it. */
template <class T, int VECS>
GS_DEV void gs_exact_publish_aggregate(const gs_exact_scan_args<T, VECS> &a, int64_t tile, gs_exact_tile_shared *st)
{
    const uint32_t status = a.epoch << 2;
    gs_exact_tile *state = &a.tiles[tile];
    if (st->aggregate_full) gs_exact_publish_full(&state->aggregate.word, &a.full[2 * tile], &st->inclusive, status);
    else gs_exact_publish_pair<T>(&state->aggregate, status, st->aggregate[0], st->aggregate[1]);
}

/*
 * A warp, once the tile's aggregate is published: finds P (the look-back;
 * tile 0: *a.carry), publishes the inclusive prefix P + aggregate, and
 * leaves P for the fast path in st (gs_exact_set_carry). The last tile
 * moves *a.carry past the whole scan.
 */
template <class T, int VECS>
GS_DEV void gs_exact_scan_prefix(const gs_exact_scan_args<T, VECS> &a, int64_t tile, gs_exact_tile_shared *st)
{
    const int lane = threadIdx.x % 32;
    const uint32_t status = a.epoch << 2;
    gs_exact_tile *state = &a.tiles[tile];
    gs_exact_pair p;
    bool full = true;
    if (tile > 0) {
        full = gs_exact_look_back(a, tile, st, p);
    } else {
        if constexpr (sizeof(T) == 8) full = !gs_exact_carry_as_pair_outlined(a.carry, p);
        else full = !gs_exact_carry_as_pair(a.carry, p);
        if (full && lane == 0) {
            st->carry = *a.carry;
            gs_exact_normalize(&st->carry);
        }
    }
    if (lane == 0) {
        /* the inclusive prefix first (the tiles after wait for it): a
         * pair where one holds it, else exact; then P for this tile */
        const bool aggregate_full = st->aggregate_full;   /* lane 0 wrote it (thread 0) */
        gs_exact_pair q = p;
        if (!full && !aggregate_full) {
            q.add(st->aggregate[0]);
            q.add(st->aggregate[1]);
        }
        bool inclusive_full = full || aggregate_full || !q.whole;
        const bool last = tile == gridDim.x - 1;
        if (inclusive_full) {
            gs_exact *c = &st->inclusive;   /* (holds the tile's sum where aggregate_full) */
            if (aggregate_full) {
                if (full) {
                    gs_exact_merge(c, &st->carry);
                } else {
                    gs_exact_add_f64(c, p.hi);
                    gs_exact_add_f64(c, p.lo);
                }
            } else {
                if (full) *c = st->carry;
                else gs_exact_from_pair(c, p.hi, p.lo);
                gs_exact_add_f64(c, st->aggregate[0]);
                gs_exact_add_f64(c, st->aggregate[1]);
            }
            gs_exact_normalize(c);
            q.whole = true;
            inclusive_full = !gs_exact_to_pair(c, q.hi, q.lo);
            if (last) *a.carry = *c;
        } else if (last) {   /* the pair q is the inclusive prefix: the carry from it */
            gs_exact_from_pair(&st->inclusive, q.hi, q.lo);
            *a.carry = st->inclusive;
        }
        if (inclusive_full) {
            gs_exact_publish_full(&state->inclusive.word, &a.full[2 * tile + 1], &st->inclusive, status);
        } else {
            gs_exact_publish_pair<T>(&state->inclusive, status, q.hi, q.lo);
        }
        gs_exact_set_carry(st, full, p);
    }
}

/* The tile's exact sum into st->inclusive (normalized), from its elements
 * loaded again: for a tile whose sum no pair holds. Every thread calls it. */
template <class T, int VECS>
GS_DEV void gs_exact_scan_tile_sum(const gs_exact_scan_args<T, VECS> &a, int64_t first, int64_t end,
                                   gs_exact_tile_shared *st, gs_exact_scan_scratch *s)
{
    constexpr int VEC = gs_exact_scan_traits<T>::vec;
    const gs_exact_warp_sink sink = {s->sum.warp_digit[threadIdx.x / 32], &s->sum.special};
    gs_exact_block_clear(&s->sum);
    gs_expansion<sizeof(T) == 4> ex;
#pragma unroll 1
    for (int b = 0; b < VECS * VEC; b++) {
        const int64_t i = first + b / VEC * 32 * VEC + b % VEC;
        if (i < end) ex.add(a.in[i], sink);
    }
    ex.flush(sink);
    gs_exact_block_total(&s->sum);
    if (threadIdx.x == 0) st->inclusive = s->sum.sum;
    gs_exact_sync();
}

/* Exclusive sum of v over the block's threads; every thread calls it. */
GS_DEV int64_t gs_exact_block_exclusive(int64_t v, int64_t *warp_scan)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t incl = gs_warp_scan<GS_SUM>(v);
    if (lane == 31) warp_scan[warp] = incl;
    gs_exact_sync();
    int64_t before = 0;
    for (int w = 0; w < warp; w++) before += warp_scan[w];
    gs_exact_sync();
    return before + incl - v;
}

/* The exact path of tile [begin, end): thread t walks the run
 * [begin + t*R, begin + (t+1)*R) from the exact carry + the runs before it,
 * rounding each prefix. Every thread calls it; it reads each element
 * before writing its output, so in place is fine. */
template <class T, int VECS>
__device__ __noinline__ void gs_exact_scan_slow(const gs_exact_scan_args<T, VECS> a, int64_t begin, int64_t end,
                                                gs_exact_tile_shared *st, gs_exact_scan_scratch *s)
{
    gs_exact_scan_exact_carry(st);
    const int64_t per = (end - begin + GS_EXACT_BLOCK - 1) / GS_EXACT_BLOCK;
    const int64_t r0 = begin + threadIdx.x * per < end ? begin + threadIdx.x * per : end;
    const int64_t r1 = r0 + per < end ? r0 + per : end;

    gs_exact acc;   /* first the run's sum, then the running prefix */
    gs_exact_clear(&acc);
    for (int64_t i = r0; i < r1; i++) {
        if constexpr (sizeof(T) == 4) gs_exact_add_f32(&acc, a.in[i]);
        else gs_exact_add_f64(&acc, a.in[i]);
    }
    gs_exact_normalize(&acc);
    /* runs' normalized digits are below 2^32: their block sums fit */
    for (int d = 0; d < GS_EXACT_DIGITS; d++)
        acc.digit[d] = st->carry.digit[d] + gs_exact_block_exclusive(acc.digit[d], s->warp_scan);
    uint32_t special = st->carry.special;
    for (int bit = GS_EXACT_NAN; bit <= GS_EXACT_NEG_INF; bit <<= 1)
        if (gs_exact_block_exclusive((acc.special & bit) != 0, s->warp_scan)) special |= bit;
    acc.special = special;
    acc.pending = 1;
    gs_exact_normalize(&acc);

    int top = gs_exact_top_digit(&acc, GS_EXACT_DIGITS - 1);
    for (int64_t i = r0; i < r1; i++) {
        const T x = a.in[i];
        T y = 0;
        if (a.exclusive)
            y = sizeof(T) == 4 ? (T)gs_exact_round_f32_from(&acc, top < 0 ? 0 : top)
                               : (T)gs_exact_round_f64_from(&acc, top < 0 ? 0 : top);
        uint64_t m;
        int bit, negative;
        const uint32_t sp = sizeof(T) == 4 ? gs_exact_decode_f32((float)x, &m, &bit, &negative)
                                           : gs_exact_decode_f64((double)x, &m, &bit, &negative);
        if (sp) {
            acc.special |= sp;
        } else if (m) {
            const int j = gs_exact_add_carried(&acc, m, bit, negative);
            top = gs_exact_top_digit(&acc, j > top ? j : top);
        }
        if (!a.exclusive)
            y = sizeof(T) == 4 ? (T)gs_exact_round_f32_from(&acc, top < 0 ? 0 : top)
                               : (T)gs_exact_round_f64_from(&acc, top < 0 ? 0 : top);
        a.out[i] = y;
    }
}

/* s->fail_value[e] = the exact output of element s->fail_index[e] of the
 * tile [begin, end): the exact carry plus the block's exact sum of the tile
 * up to it, rounded. Every thread calls it; reads inputs only, so the
 * tile's outputs wait for it. */
template <class T, int VECS>
__device__ __noinline__ void gs_exact_scan_fix(const gs_exact_scan_args<T, VECS> a, int64_t begin, int64_t end,
                                              gs_exact_tile_shared *st, gs_exact_scan_scratch *s)
{
    gs_exact_scan_exact_carry(st);   /* (barriers: s->fail_index is complete) */
    gs_exact_block_clear(&s->sum);
    for (int e = 0; e < s->fails; e++) {
        const int64_t upto = a.exclusive ? s->fail_index[e] : s->fail_index[e] + 1;
        gs_exact_block_sum(a.in, begin, upto < end ? upto : end, &s->sum);   /* (padding: not stored) */
        if (threadIdx.x == 0) {
            gs_exact_merge(&s->sum.sum, &st->carry);
            gs_exact_normalize(&s->sum.sum);
            s->fail_value[e] = sizeof(T) == 4 ? gs_exact_round_f32_from(&s->sum.sum, GS_EXACT_DIGITS - 1)
                                              : gs_exact_round_f64_from(&s->sum.sum, GS_EXACT_DIGITS - 1);
        }
        gs_exact_block_clear(&s->sum);   /* (a barrier) */
    }
}

/* Where a thread's part of tile [begin, end) lies: in the input (its
 * first vector, `first`, and its run's first element, `run`) and in the
 * tile's rows of shared memory. Warp w owns a contiguous segment of VECS *
 * 32 vectors; lane l loads and stores vector j * 32 + l of it (coalesced,
 * as in gs_scan_kernel), and computes the outputs of the run of vectors l
 * * VECS .. l * VECS + VECS - 1, so that the warp scans one sum per
 * thread, not one per vector. */
template <class T, int VECS> struct gs_exact_tile_view {
    static constexpr int VEC = gs_exact_scan_traits<T>::vec;
    int64_t begin, end, first, run;
    bool whole;               /* a whole tile of 16-byte vectors */
    gs_exact_raw *stage;      /* the warp's first column of the rows */
    int lane;

    GS_DEV gs_exact_tile_view(const gs_exact_scan_args<T, VECS> &a, int64_t b, int64_t e, gs_exact_raw *rows)
    {
        constexpr int64_t WARP_ITEMS = (int64_t)VECS * 32 * VEC;
        const int warp = threadIdx.x / 32;
        lane = threadIdx.x % 32;
        begin = b;
        end = e;
        whole = a.vector_io && e - b == gs_exact_tile_items<T, VECS>();
        first = b + warp * WARP_ITEMS + lane * VEC;   /* vector j at + j*32*VEC */
        run = b + warp * WARP_ITEMS + lane * VECS * VEC;
        stage = rows + warp * 32;
    }
    /* the thread's vector j as loaded (lane's vector of row j) */
    GS_DEV gs_exact_raw *loaded(int j) const { return &stage[gs_exact_stage_slot<VECS>(j, lane)]; }
    /* vector i of its run (the warp segment's vector lane * VECS + i) */
    GS_DEV gs_exact_raw *in_run(int i) const
    {
        const int m = lane * VECS + i;
        return &stage[gs_exact_stage_slot<VECS>(m / 32, m % 32)];
    }
};

/* The thread's run: its sum, scanned across the warp (inclusive: lane 31
 * has the warp's total). */
template <class T, int VECS>
GS_DEV typename gs_exact_scan_traits<T>::A gs_exact_run_scan(const gs_exact_tile_view<T, VECS> &v)
{
    using A = typename gs_exact_scan_traits<T>::A;
    constexpr int VEC = gs_exact_scan_traits<T>::vec;
    A sum = gs_acc_zero<A>();
#pragma unroll
    for (int i = 0; i < VECS; i++) {
        T x[VEC];
        memcpy(x, v.in_run(i), 16);
#pragma unroll
        for (int k = 0; k < VEC; k++) sum = gs_dd_add(sum, (double)x[k]);
    }
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const A up = gs_shfl_up(sum, d);
        if (v.lane >= d) sum = gs_dd_add(up, sum);
    }
    return sum;
}

/* With the totals of the warps before, the run's local start (all but P)
 * from its scanned sum. */
template <class T>
GS_DEV typename gs_exact_scan_traits<T>::A gs_exact_run_start(const gs_exact_tile_shared *st,
                                                              typename gs_exact_scan_traits<T>::A scanned)
{
    using A = typename gs_exact_scan_traits<T>::A;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    A local = gs_acc_zero<A>();
    const A lower = gs_shfl_up(scanned, 1);
    for (int w = 0; w < warp; w++) {
        if constexpr (sizeof(T) == 4) local = __dadd_rn(local, st->warp_total[w].hi);
        else local = gs_dd_add(local, st->warp_total[w]);
    }
    if (lane > 0) local = gs_dd_add(local, lower);
    return local;
}

/* What a thread takes from a tile's own sums to its outputs. */
template <class T> struct gs_exact_tile_sums {
    using A = typename gs_exact_scan_traits<T>::A;
    bool valid = true;        /* the fast path's sums and bound hold */
    double magnitude = 0.0;   /* f32: >= the tile's sum of |x| */
    A local = gs_acc_zero<A>();   /* the run's local start (all but P) */
    double terms = 0.0;       /* f64: >= the tile's sum of |x| */
    int terms_low = INT32_MAX / 2;   /* f64: the lowest bit of any element */
};

/* f64: whether partial sums below m, of terms that are multiples of
 * 2^low, are exact in the fast path's arithmetic (see gs_low_bits) */
GS_DEV bool gs_exact_below(double m, int low)
{
    const int limit = low + gs_exact_scan_traits<double>::exact_bits;
    return limit > 1023 ? isfinite(m) : m < __longlong_as_double((int64_t)(limit + 1023) << 52);
}

/*
 * The tile's own sums, which need nothing from before it. The tile waits in
 * the stage meanwhile (f64: the elements; f32: their terms on the grid),
 * not in registers, which would cost blocks per multiprocessor. f32: the
 * terms on the tile's grid (found from the block's sum of |x|) replace the
 * elements, and their sums are exact. f64: the elements' sums in
 * double-double, exact when the terms' range allows (gs_low_bits). Unless
 * FIX, also the tile's exact aggregate into st (the warps' totals and
 * rests, as a pair while one holds it, else st->inclusive from the
 * elements). Every thread calls it; a barrier ends it.
 */
template <class T, int VECS, bool FIX>
GS_DEV gs_exact_tile_sums<T> gs_exact_scan_sums(const gs_exact_scan_args<T, VECS> &a, const gs_exact_tile_view<T, VECS> &v,
                                               gs_exact_tile_shared *st, gs_exact_scan_scratch *s)
{
    using X = gs_exact_scan_traits<T>;
    using A = typename X::A;
    constexpr int VEC = X::vec;
    constexpr bool GRID = sizeof(T) == 4;
    /* a long tile loads in halves (half its 64 KiB in flight at a time) */
    constexpr int PART = VECS == GS_EXACT_VECS ? VECS : VECS / 2;
    static_assert(!GRID || VECS == GS_EXACT_VECS, "f32 tiles are short: the grid needs the whole tile's terms");
    using Raw = gs_exact_raw;
    const int lane = v.lane, warp = threadIdx.x / 32;
    gs_exact_tile_sums<T> r;

    /* `rest` is what the warps' totals leave out of the exact sum (f32: what
     * the grid rounded off; f64 where the totals are not exact: the
     * thread's elements), exactly while it is whole. */
    double abs_sum = 0.0;     /* f32: what the grid rounded off; f64: the sum of |x| */
    gs_low_bits low_bits;     /* f64 */
    double total = 0.0;       /* f32: the sum of the terms */
    gs_exact_pair rest;
    gs_grid grid;             /* f32 */
#if __CUDA_ARCH__ >= 900
    /* a long tile's second half into L2 while the first is loaded and
     * summed: both halves' reads reach memory at once, without registers
     * for the second (one bulk prefetch a warp: its rows PART..VECS-1 are
     * one run of bytes) */
    if constexpr (PART != VECS)
        if (v.whole && lane == 0)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(a.in + v.first + PART * 32 * VEC),
                         "r"((VECS - PART) * 32 * 16) : "memory");
#endif
#pragma unroll
    for (int h = 0; h < VECS; h += PART) {
        T x[PART][VEC];
        if (v.whole) {
#pragma unroll
            for (int j = 0; j < PART; j++) {
                const Raw raw = __ldg(reinterpret_cast<const Raw *>(a.in + v.first + (h + j) * 32 * VEC));
                memcpy(x[j], &raw, 16);
            }
        } else {
#pragma unroll
            for (int j = 0; j < PART; j++)
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    const int64_t i = v.first + (h + j) * 32 * VEC + k;
                    x[j][k] = i < v.end ? a.in[i] : (T)0;
                }
        }
        if constexpr (!GRID)
#pragma unroll
            for (int j = 0; j < PART; j++) memcpy(v.loaded(h + j), x[j], 16);
        if constexpr (GRID) {
            float abs32 = 0.0f;   /* 32 terms in f32 rounded up: an overflow takes the exact path */
            uint32_t least = 0xffffffffu;   /* the least |x| but zeros, as (its bits << 1) - 1 */
#pragma unroll
            for (int j = 0; j < PART; j++)
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    abs32 = __fadd_ru(abs32, fabsf(x[j][k]));
                    least = min(least, ((uint32_t)__float_as_int(x[j][k]) << 1) - 1u);
                }
            double sum = abs32;
#pragma unroll
            for (int m = 16; m > 0; m >>= 1) sum = __dadd_ru(sum, __shfl_xor_sync(GS_FULL_MASK, sum, m));
            if (lane == 0) st->warp_abs[warp] = sum;
            gs_exact_sync();
            for (int w = 0; w < GS_EXACT_WARPS; w++) r.magnitude = __dadd_ru(r.magnitude, st->warp_abs[w]);
            if (isfinite(r.magnitude)) grid = gs_grid_for(r.magnitude);
            r.valid = grid.usable;   /* else a special value or an overflow: the exact path */
            /* most threads' elements are all on the grid (0 or from 2^(q+23)
             * up): their terms are the elements */
            const bool on_grid = grid.from == 0.0f || least >= ((uint32_t)__float_as_int(grid.from) << 1) - 1u;
            /* what the grid rounds off, x - t, is exact in f32; a thread
             * that rounded any off keeps their exact sum (rare) */
            float off32 = 0.0f;
            if (on_grid) {
#pragma unroll
                for (int j = 0; j < PART; j++) {
#pragma unroll
                    for (int k = 0; k < VEC; k++) total = __dadd_rn(total, (double)x[j][k]);
                    memcpy(v.loaded(h + j), x[j], 16);
                }
            } else {
#pragma unroll
                for (int j = 0; j < PART; j++) {
                    T t[VEC];
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        t[k] = grid.round(x[j][k]);
                        off32 = __fadd_ru(off32, fabsf(__fsub_rn(x[j][k], t[k])));
                        total = __dadd_rn(total, (double)t[k]);
                    }
                    memcpy(v.loaded(h + j), t, 16);   /* the terms wait, not the elements */
                }
            }
            if (!FIX && off32 != 0.0f) {
#pragma unroll
                for (int j = 0; j < PART; j++) {
                    T t[VEC];
                    memcpy(t, v.loaded(h + j), 16);
#pragma unroll
                    for (int k = 0; k < VEC; k++) rest.add(__fsub_rn(x[j][k], t[k]));
                }
            }
            abs_sum = off32;
        } else {
#pragma unroll
            for (int j = 0; j < PART; j++)
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    abs_sum = __dadd_ru(abs_sum, fabs((double)x[j][k]));
                    low_bits.add(x[j][k]);
                }
        }
    }
    int low = GRID ? INT32_MAX / 2 : low_bits.low();   /* f64 */
    /* f64 scans its runs now, before the look-back, while the look-back
     * waits for the tiles before (2% faster), and lane 31 gives the warp's
     * total (no second sum in the loads); f32 once its aggregate is out
     * (gs_exact_scan_kernel: before it, 9% slower; after the look-back,
     * 5-6% slower on an H200; docs/PERFORMANCE.md) */
    A run_sum = gs_acc_zero<A>();
    if constexpr (!GRID) {
        __syncwarp();   /* the warp's rows are staged: its runs */
        run_sum = gs_exact_run_scan<T, VECS>(v);
        if (lane == 31) st->warp_total[warp] = run_sum;
    }
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        if constexpr (GRID) total = __dadd_rn(total, __shfl_xor_sync(GS_FULL_MASK, total, m));
        abs_sum = __dadd_ru(abs_sum, __shfl_xor_sync(GS_FULL_MASK, abs_sum, m));
        const int l = __shfl_xor_sync(GS_FULL_MASK, low, m);
        low = l < low ? l : low;
    }
    if (lane == 0) {
        if constexpr (GRID) {
            st->warp_total[warp] = gs_dd{total, 0.0};
            st->warp_off_grid[warp] = abs_sum;
        } else {
            st->warp_abs[warp] = abs_sum;
            st->warp_low[warp] = low;
        }
    }
    /* f32 asks at this barrier whether a thread keeps a rest */
    bool rest_in_block = false;
    if constexpr (GRID && !FIX) rest_in_block = gs_exact_sync_or(rest.hi != 0.0 || rest.lo != 0.0 || !rest.whole);
    else gs_exact_sync();

    /* f64: the block's range of terms, and whether the warps' totals are exact */
    bool totals_exact = true;
    if constexpr (!GRID) {
        for (int w = 0; w < GS_EXACT_WARPS; w++) {
            r.terms = __dadd_ru(r.terms, st->warp_abs[w]);
            r.terms_low = st->warp_low[w] < r.terms_low ? st->warp_low[w] : r.terms_low;
        }
        r.valid = isfinite(r.terms);
        totals_exact = gs_exact_below(r.terms, r.terms_low);
        r.local = gs_exact_run_start<T>(st, run_sum);
    }

    if constexpr (!FIX) {
        if constexpr (!GRID) {
            if (!totals_exact) {
#pragma unroll 1
                for (int j = 0; j < VECS; j++) {
                    T x[VEC];
                    memcpy(x, v.loaded(j), 16);
#pragma unroll
                    for (int k = 0; k < VEC; k++) rest.add(x[k]);
                }
            }
        }
        /* f32's rests are what the grid rounded off, in a few threads; f64's
         * the elements, where the totals are not exact (the block knows) */
        const bool any_rest = GRID ? rest_in_block : !totals_exact;
        if (any_rest) {
            const gs_exact_pair p = gs_exact_pair_warp_sum(rest);
            if (lane == 0) st->warp_rest[warp] = p;
            gs_exact_sync();
        }
        if (threadIdx.x == 0) {
            gs_exact_pair sum;
            if (totals_exact) {   /* then their sums are exact too */
                A t = gs_acc_zero<A>();
                for (int w = 0; w < GS_EXACT_WARPS; w++) {
                    if constexpr (GRID) t = __dadd_rn(t, st->warp_total[w].hi);
                    else t = gs_dd_add(t, st->warp_total[w]);
                }
                if constexpr (GRID) sum.hi = t;
                else gs_two_sum(t.hi, t.lo, sum.hi, sum.lo);
            }
            if (any_rest)
                for (int w = 0; w < GS_EXACT_WARPS; w++) sum.add(st->warp_rest[w]);
            st->aggregate_full = !(r.valid && sum.whole);
            st->aggregate[0] = sum.hi;
            st->aggregate[1] = sum.lo;
        }
        /* without rests the sum is the totals', a pair: whole, and only
         * thread 0, which publishes it, reads it; no barrier */
        bool full = !r.valid;
        if (any_rest) {
            gs_exact_sync();
            full = st->aggregate_full;
        }
        if (full) gs_exact_scan_tile_sum(a, v.first, v.end, st, s);
    }
    return r;
}

/*
 * The outputs of the tile, from P (in st) and the local prefix sums,
 * checked against the error bound: an output whose approximation is
 * farther than the bound from every rounding boundary rounds exactly as
 * the exact prefix does. They replace the tile in the stage, and when every
 * check decides its output, or (FIX) a few do not and are rounded one by
 * one from the exact carry, they are stored. Returns false, storing
 * nothing, when the exact path must take the tile. Every thread calls it and
 * gets the same answer.
 */
template <class T, int VECS, bool FIX>
GS_DEV bool gs_exact_scan_outputs(const gs_exact_scan_args<T, VECS> &a, const gs_exact_tile_view<T, VECS> &v,
                                  gs_exact_tile_shared *st, gs_exact_scan_scratch *s, const gs_exact_tile_sums<T> &r)
{
    using X = gs_exact_scan_traits<T>;
    using A = typename X::A;
    constexpr int VEC = X::vec;
    constexpr bool GRID = sizeof(T) == 4;
    /* a long tile unrolls its output loop 4 times */
    constexpr int OUT_UNROLL = VECS == GS_EXACT_VECS ? VECS : 4;
    using Raw = gs_exact_raw;
    const double carry_hi = st->hi, carry_lo = st->lo, carry_err = st->err;
    bool valid = r.valid & !st->all_slow;
    double bound;
    int bound_exp = 0;   /* f32: see gs_exact_round_checked */
    gs_exact_f32_exact exact;
    if constexpr (GRID) {
        /* local sums are exact: the error is P's and what the grid rounded off */
        bound = carry_err;
        for (int w = 0; w < GS_EXACT_WARPS; w++) bound = __dadd_ru(bound, st->warp_off_grid[w]);
        bound_exp = gs_biased_exponent(bound) + 53;   /* b < 2^(bound_exp - 1075) */
        if (bound == 0.0 && carry_lo == 0.0) {   /* the terms and P are multiples of 2^g */
            int g = min(gs_grid_exponent(r.magnitude), st->low);
            g = g < 970 ? g : 970;   /* (an invalid tile's magnitude may be infinite) */
            exact.top = (uint32_t)(g + 53 + 1023) << 20;
            exact.hi_above = ((uint32_t)__double2hiint(carry_hi) & 0x7ff00000u) + 0x00100000u;
        }
    } else {
        /* exact arithmetic needs no bound (see gs_low_bits): 2^(low +
         * exact_bits) is the partial sums' exact range */
        const int sub_low = r.terms_low < st->low ? r.terms_low : st->low;
        const double m = __dadd_ru(__dadd_ru(fabs(carry_hi), fabs(carry_lo)), r.terms);
        valid = valid & isfinite(m);
        const bool exact = carry_err == 0.0 && gs_exact_below(m, sub_low);
        bound = __dadd_ru(carry_err, exact ? 0.0 : __dmul_ru(m, X::rel));
    }

    /* the run's outputs, from its local start (f64: with P), replace its
     * terms in the stage. `failed` has a bit for each output whose check
     * did not decide it (FIX; else `decided` says all) */
    static_assert(VECS * VEC <= 32, "a thread's outputs fit a 32-bit mask");
    A running;
    if constexpr (GRID) running = r.local;
    else running = gs_dd_add(gs_dd{carry_hi, carry_lo}, r.local);
    uint32_t failed = 0;
    bool decided = true;
    const auto run_outputs = [&](auto fast2sum) {
        constexpr bool AT_ONCE = GRID && !FIX && !decltype(fast2sum)::value;   /* gs_exact_f32_run_check */
        gs_exact_f32_run_check run;
#pragma unroll OUT_UNROLL
        for (int i = 0; i < VECS; i++) {
            T x[VEC];
            memcpy(x, v.in_run(i), 16);
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const A next = gs_dd_add(running, (double)x[k]);
                const A value = a.exclusive ? running : next;
                bool one = true;
                if constexpr (GRID) {
                    if constexpr (AT_ONCE)
                        x[k] = run.round(carry_hi, carry_lo, value);
                    else
                        x[k] = gs_exact_round_checked<decltype(fast2sum)::value>(carry_hi, carry_lo, value, bound_exp, exact, one);
                } else {
                    x[k] = gs_exact_round_checked(value, bound, one);
                }
                if constexpr (FIX) failed |= (uint32_t)!one << (i * VEC + k);
                else decided = decided & one;
                running = next;
            }
            memcpy(v.in_run(i), x, 16);
        }
        if constexpr (AT_ONCE) decided = decided & run.decided(bound_exp, exact);
    };
    if constexpr (GRID) {
        const bool ties_likely = FIX || gs_biased_exponent(carry_hi) - 1023 - st->low < GS_EXACT_TIE_SPAN;
        if (exact.top != 0 && ties_likely) run_outputs(std::true_type{});
        else run_outputs(std::false_type{});
    } else {
        run_outputs(std::false_type{});
    }

    if constexpr (!FIX) {
        if (gs_exact_sync_or(!(valid && decided))) return false;
    } else {
        /* the undecided outputs (padding's included: not stored), each from
         * the exact carry plus the block's exact sum up to it */
        if (gs_exact_sync_or(!valid)) return false;
        int entry = (int)gs_exact_block_exclusive(__popc(failed), s->warp_scan);
        if (threadIdx.x == GS_EXACT_BLOCK - 1) s->fails = entry + __popc(failed);
        gs_exact_sync();
        if (s->fails > GS_EXACT_FIXES) return false;
        for (uint32_t m = failed; m; m &= m - 1) s->fail_index[entry++] = v.run + __ffs(m) - 1;
        gs_exact_scan_fix(a, v.begin, v.end, st, s);
        entry -= __popc(failed);
        for (uint32_t m = failed; m; m &= m - 1) {
            const int b = __ffs(m) - 1;
            T x[VEC];
            memcpy(x, v.in_run(b / VEC), 16);
            x[b % VEC] = (T)s->fail_value[entry++];
            memcpy(v.in_run(b / VEC), x, 16);
        }
    }
    __syncwarp();   /* the runs' outputs, stored row by row */

#pragma unroll
    for (int j = 0; j < VECS; j++) {
        if (v.whole) {
            *reinterpret_cast<Raw *>(a.out + v.first + j * 32 * VEC) = *v.loaded(j);
        } else {
            T x[VEC];
            memcpy(x, v.loaded(j), 16);
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = v.first + j * 32 * VEC + k;
                if (i < v.end) a.out[i] = x[k];
            }
        }
    }
    return true;
}

/* f32: the run's local start into r, from its terms in the stage (f64's
 * came with the tile's sums). */
template <class T, int VECS>
GS_DEV void gs_exact_run_local(const gs_exact_tile_view<T, VECS> &v, const gs_exact_tile_shared *st, gs_exact_tile_sums<T> &r)
{
    if constexpr (sizeof(T) == 4) r.local = gs_exact_run_start<T>(st, gs_exact_run_scan<T, VECS>(v));
}

/* The fast path again for a tile it did not decide, now rounding a few
 * undecided outputs one by one; apart, so that the first keeps no
 * registers for it. */
template <class T, int VECS>
__device__ __noinline__ bool gs_exact_scan_redo(const gs_exact_scan_args<T, VECS> a, const gs_exact_tile_view<T, VECS> v,
                                               gs_exact_tile_shared *st, gs_exact_scan_scratch *s)
{
    gs_exact_tile_sums<T> r = gs_exact_scan_sums<T, VECS, true>(a, v, st, s);
    gs_exact_run_local(v, st, r);
    return gs_exact_scan_outputs<T, VECS, true>(a, v, st, s, r);
}

/* The outputs of a tile whose P is in st: the fast path, else the fast
 * path with a few outputs rounded one by one, else the exact path from the
 * exact carry. */
template <class T, int VECS>
GS_DEV void gs_exact_scan_finish(const gs_exact_scan_args<T, VECS> &a, const gs_exact_tile_view<T, VECS> &v,
                                 gs_exact_tile_shared *st, gs_exact_scan_scratch *s, const gs_exact_tile_sums<T> &r)
{
    if (!gs_exact_scan_outputs<T, VECS, false>(a, v, st, s, r) && !gs_exact_scan_redo(a, v, st, s))
        gs_exact_scan_slow(a, v.begin, v.end, st, s);
}

/* The scan kernel's blocks per multiprocessor. Its tile waits in shared
 * memory through the look-back, not in registers, so four blocks of short
 * tiles (32 KiB, 64 registers) or three of long ones (64 KiB) fit;
 * the spills are in the rare paths' serial code. While one block waits on
 * the tiles before it, the others work. Four short ones measured 1.2-1.4x
 * faster than two, five slower (docs/PERFORMANCE.md). */
template <int VECS> GS_HD_CONST int gs_exact_scan_blocks()
{
    return VECS == GS_EXACT_VECS ? 4 : 3;
}

/* Block b scans tile b: its own sums, then warp 0 publishes its aggregate
 * and looks back while the other warps wait, then the outputs. Long tiles
 * wait in gs_exact_dynamic_bytes<VECS>() of dynamic shared memory. */
template <class T, int VECS>
__global__ void __launch_bounds__(GS_EXACT_BLOCK, gs_exact_scan_blocks<VECS>())
gs_exact_scan_kernel(const gs_exact_scan_args<T, VECS> a)
{
    constexpr int64_t ITEMS = gs_exact_tile_items<T, VECS>();
    __shared__ gs_exact_tile_shared st;
    __shared__ gs_exact_scan_scratch s;
    gs_exact_raw *rows = gs_exact_stage_dynamic;
    if constexpr (VECS == GS_EXACT_VECS) {
        __shared__ gs_exact_tile_rows<GS_EXACT_VECS> short_rows;
        rows = short_rows.row;
    }
    const int64_t tile = blockIdx.x;
    const int64_t begin = tile * ITEMS;
    const int64_t end = begin + ITEMS < a.n ? begin + ITEMS : a.n;
    const gs_exact_tile_view<T, VECS> v(a, begin, end, rows);
    gs_exact_tile_sums<T> r = gs_exact_scan_sums<T, VECS, false>(a, v, &st, &s);
    /* f32 scans its runs here: warp 0 once its aggregate is out, the others
     * while it looks back. f64 scanned them with its sums, and publishes
     * from within warp 0's branch: built as f32's, its scans ran 2% slower
     * (docs/PERFORMANCE.md). */
    if constexpr (sizeof(T) == 4) {
        if (threadIdx.x == 0 && tile > 0) gs_exact_publish_aggregate(a, tile, &st);
        gs_exact_run_local(v, &st, r);
        if (threadIdx.x < 32) gs_exact_scan_prefix(a, tile, &st);
    } else if (threadIdx.x < 32) {
        if (threadIdx.x == 0 && tile > 0) gs_exact_publish_aggregate(a, tile, &st);
        gs_exact_scan_prefix(a, tile, &st);
    }
    gs_exact_sync();
    gs_exact_scan_finish(a, v, &st, &s, r);
}

#endif /* GS_CUDA_EXACT_SCAN_AGENT_CUH */
