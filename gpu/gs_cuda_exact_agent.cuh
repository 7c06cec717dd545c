/*
 * gs_cuda_exact_agent.cuh - the kernels of the exact float sums (--exact,
 * gs_exact.h): every result is the exact sum rounded once.
 *
 *   gs_exact_sum_kernel     a block's exact sum of its range: each thread
 *                           keeps a two-term floating-point expansion (error-
 *                           free TwoSum), and only what the expansion cannot
 *                           hold exactly goes to its warp's fixed-point digits
 *                           in shared memory. The block's digits then either
 *                           go into the caller's gs_exact (a reduction: global
 *                           atomics, the last block normalizes) or become the
 *                           tile's state (pass 1 of the scan).
 *   gs_exact_prefix_kernel  pass 2 of the scan, one block: the tile states
 *                           become exact exclusive prefixes from the carry,
 *                           and the carry moves past the whole chunk.
 *   gs_exact_scan_kernel    pass 3: each block walks its tile in sub-tiles.
 *                           The fast path is the plain scan's in fp64 (f32)
 *                           or double-double (f64) with a bound on its error;
 *                           an element whose approximation is farther than
 *                           the bound from every rounding boundary rounds
 *                           exactly as the exact prefix does. Up to
 *                           GS_EXACT_FIXES outputs too close (or zero) are
 *                           rounded one by one from the exact carry, which
 *                           the fast path keeps up to date; a sub-tile with
 *                           more (or a special value, an overflow) takes the
 *                           exact path: each thread walks a run of elements
 *                           with a normalized gs_exact and rounds every
 *                           prefix.
 *
 * The launches live in gs_cuda_exact.cu.
 */
#ifndef GS_CUDA_EXACT_AGENT_CUH
#define GS_CUDA_EXACT_AGENT_CUH

#include <stdint.h>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"
#include "gs_exact.h"

#define GS_EXACT_BLOCK 256
#define GS_EXACT_WARPS (GS_EXACT_BLOCK / 32)
/* 16-byte loads in flight per thread in the summing kernels */
#define GS_EXACT_UNROLL 8

/* ---- error-free arithmetic ----------------------------------------------------- */

/* s + e == a + b exactly, s = RN(a + b) (Knuth's TwoSum: no ordering of a
 * and b needed). The _rn intrinsics keep the compiler from reassociating. */
GS_DEV void gs_two_sum(double a, double b, double &s, double &e)
{
    s = __dadd_rn(a, b);
    const double bb = __dadd_rn(s, -a);
    e = __dadd_rn(__dadd_rn(a, -__dadd_rn(s, -bb)), __dadd_rn(b, -bb));
}

/* A double-double: the f64 scan's running sums. hi + lo is the value; lo
 * collects the exact errors of the hi additions (its own additions round). */
struct gs_dd {
    double hi, lo;
};
GS_DEV gs_dd gs_dd_add(gs_dd a, gs_dd b)
{
    gs_dd r;
    double e;
    gs_two_sum(a.hi, b.hi, r.hi, e);
    r.lo = __dadd_rn(__dadd_rn(a.lo, b.lo), e);
    return r;
}
GS_DEV gs_dd gs_dd_add(gs_dd a, double x)
{
    gs_dd r;
    double e;
    gs_two_sum(a.hi, x, r.hi, e);
    r.lo = __dadd_rn(a.lo, e);
    return r;
}
GS_DEV double gs_dd_add(double a, double b) { return __dadd_rn(a, b); }
GS_DEV double gs_acc_abs(gs_dd a) { return __dadd_ru(fabs(a.hi), fabs(a.lo)); }
template <class A> GS_DEV A gs_acc_zero()
{
    A a;
    memset(&a, 0, sizeof a);
    return a;
}
GS_DEV gs_dd gs_shfl_up(gs_dd v, int d) { return {gs_shfl_up(v.hi, d), gs_shfl_up(v.lo, d)}; }
GS_DEV gs_dd gs_shfl_idx(gs_dd v, int l) { return {gs_shfl_idx(v.hi, l), gs_shfl_idx(v.lo, l)}; }

/* ---- the digits in shared memory ---------------------------------------------- */

/* Each warp's carry-save digits (gs_exact's layout, as unsigned words so
 * that atomicAdd wraps as two's complement), the block's special values,
 * and the block's normalized sum. */
struct gs_exact_block_state {
    unsigned long long warp_digit[GS_EXACT_WARPS][GS_EXACT_DIGITS];
    gs_exact sum;
    unsigned special;
};

/* digits += x exactly (x finite), or its special bit. Each of the three
 * adds moves a digit by less than 2^32. */
GS_DEV void gs_exact_flush(unsigned long long *digit, unsigned *special, double x)
{
    uint64_t m;
    int bit, negative;
    const uint32_t sp = gs_exact_decode_f64(x, &m, &bit, &negative);
    if (sp) {
        atomicOr(special, sp);
        return;
    }
    if (m == 0) return;
    const int i = bit >> 5, s = bit & 31;
    const uint64_t rest = m >> (32 - s);
    uint64_t piece[3] = {(m << s) & 0xffffffffu, rest & 0xffffffffu, rest >> 32};
#pragma unroll
    for (int k = 0; k < 3; k++)
        if (piece[k]) atomicAdd(&digit[i + k], negative ? (unsigned long long)(-(int64_t)piece[k]) : piece[k]);
}

/* What the rare path of gs_expansion::add leaves: the residue e2 goes to
 * the digits (hi, lo become s, t); or x alone goes there and hi, lo stay:
 * for f32 data (x's 24 bits take at most two atomics, e2's 53 three), and
 * when something was not finite (x itself, or hi + x overflowed).
 * Inlined: as a call (which saves the caller's live registers to local
 * memory) it made full-range data 4x slower. */
template <bool F32>
__device__ __forceinline__ gs_dd gs_expansion_rare(gs_dd kept, double x, double s, double t, double e2,
                                                   unsigned long long *digit, unsigned *special)
{
    if (!F32 && isfinite(e2)) {
        gs_exact_flush(digit, special, e2);
        return {s, t};
    }
    gs_exact_flush(digit, special, x);
    return kept;
}

/* One thread's exact running sum: hi + lo + whatever it flushed. F32 data
 * (converted exactly to f64) rarely leaves an error in hi, so the second
 * TwoSum runs only when there is one. */
template <bool F32> struct gs_expansion {
    double hi = 0.0, lo = 0.0;

    GS_DEV void add(double x, unsigned long long *digit, unsigned *special)
    {
        double s, e;
        gs_two_sum(hi, x, s, e);
        if (F32 && e == 0.0) {   /* a NaN e goes on, to the rare path */
            hi = s;
            return;
        }
        double t, e2;
        gs_two_sum(lo, e, t, e2);
        if (e2 == 0.0) {
            hi = s;
            lo = t;
            return;
        }
        const gs_dd r = gs_expansion_rare<F32>({hi, lo}, x, s, t, e2, digit, special);
        hi = r.hi;
        lo = r.lo;
    }
};

/* Zero the block state; every thread calls it, a barrier follows. */
GS_DEV void gs_exact_block_clear(gs_exact_block_state *b)
{
    for (int i = threadIdx.x; i < GS_EXACT_WARPS * GS_EXACT_DIGITS; i += GS_EXACT_BLOCK)
        b->warp_digit[i / GS_EXACT_DIGITS][i % GS_EXACT_DIGITS] = 0;
    if (threadIdx.x == 0) b->special = 0;
    __syncthreads();
}

/* Every thread adds its share of in[begin, end) to its expansion: 16-byte
 * vectors (several in flight) when in + begin is 16-byte aligned, else
 * element by element. The block's threads stride through the range
 * together, so loads coalesce. */
template <class T, bool F32>
GS_DEV void gs_exact_thread_sum(const T *in, int64_t begin, int64_t end, gs_expansion<F32> &ex,
                                unsigned long long *digit, unsigned *special)
{
    constexpr int VEC = gs_vec<T>::count;
    const int tid = threadIdx.x;
    int64_t scalar_from = begin;
    if ((uintptr_t)(in + begin) % 16 == 0) {
        const int64_t nvec = (end - begin) / VEC;
        const gs_vec<T> *v = reinterpret_cast<const gs_vec<T> *>(in + begin);
        int64_t i = tid;
        for (; i + (GS_EXACT_UNROLL - 1) * GS_EXACT_BLOCK < nvec; i += GS_EXACT_UNROLL * GS_EXACT_BLOCK) {
            gs_vec<T> x[GS_EXACT_UNROLL];
#pragma unroll
            for (int u = 0; u < GS_EXACT_UNROLL; u++) x[u] = gs_load_vec_nc(&v[i + u * GS_EXACT_BLOCK].e[0]);
#pragma unroll
            for (int u = 0; u < GS_EXACT_UNROLL; u++)
#pragma unroll
                for (int k = 0; k < VEC; k++) ex.add((double)x[u].e[k], digit, special);
        }
        for (; i < nvec; i += GS_EXACT_BLOCK) {
            const gs_vec<T> x = gs_load_vec_nc(&v[i].e[0]);
#pragma unroll
            for (int k = 0; k < VEC; k++) ex.add((double)x.e[k], digit, special);
        }
        scalar_from = begin + nvec * VEC;
    }
    for (int64_t i = scalar_from + tid; i < end; i += GS_EXACT_BLOCK) ex.add((double)in[i], digit, special);
}

/* The block's digits (and specials) into b->sum, normalized; every thread
 * calls it, and b->sum is ready for all after it returns. */
GS_DEV void gs_exact_block_total(gs_exact_block_state *b)
{
    __syncthreads();
    /* warps' digits stay below 2^62 in magnitude (a launch gives a block
     * fewer than 2^27 elements): their sum fits */
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK) {
        int64_t sum = 0;
        for (int w = 0; w < GS_EXACT_WARPS; w++) sum += (int64_t)b->warp_digit[w][d];
        b->sum.digit[d] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        b->sum.special = b->special;
        gs_exact_normalize(&b->sum);
    }
    __syncthreads();
}

/* The block's exact sum of in[begin, end) into b->sum, normalized, with
 * its specials; every thread calls it after gs_exact_block_clear. */
template <class T> GS_DEV void gs_exact_block_sum(const T *in, int64_t begin, int64_t end, gs_exact_block_state *b)
{
    constexpr bool F32 = sizeof(T) == 4;
    unsigned long long *digit = b->warp_digit[threadIdx.x / 32];
    gs_expansion<F32> ex;
    gs_exact_thread_sum<T, F32>(in, begin, end, ex, digit, &b->special);
    gs_exact_flush(digit, &b->special, ex.hi);
    gs_exact_flush(digit, &b->special, ex.lo);
    gs_exact_block_total(b);
}

/* ---- the summing kernel: reductions and pass 1 of the scan ------------------- */

/* The summing kernel's blocks per multiprocessor, which caps its registers:
 * its threads' sums are chains of dependent additions, so it needs warps to
 * hide them. Left to itself ptxas takes 86 (f32) and 114 (f64) registers,
 * two blocks; four (f32, 64 registers) and three (f64, 80) measured faster
 * on an H200 although ptxas then spills 256-276 bytes (f64 is 3% slower on
 * an H100; both stay past 0.9 of the plain sum: docs/PERFORMANCE.md). */
template <class T> constexpr int gs_exact_sum_min_blocks()
{
    return sizeof(T) == 4 ? 4 : 3;
}

/* Block b sums in[b * per_block, min(n, (b + 1) * per_block)). With `tiles`
 * the sum becomes tiles[b]; else it is added to *acc, and the last block to
 * finish (the threadfence pattern of gs_reduce_kernel) normalizes *acc.
 * per_block is a multiple of the vector length, so blocks stay aligned. */
template <class T>
__global__ void __launch_bounds__(GS_EXACT_BLOCK, gs_exact_sum_min_blocks<T>())
gs_exact_sum_kernel(const T *in, int64_t n, int64_t per_block, gs_exact *tiles, gs_exact *acc,
                    gs_cuda_scalars *scalars)
{
    __shared__ gs_exact_block_state b;
    __shared__ bool is_last_block;
    gs_exact_block_clear(&b);
    const int64_t begin = (int64_t)blockIdx.x * per_block;
    const int64_t end = begin + per_block < n ? begin + per_block : n;
    gs_exact_block_sum(in, begin, end, &b);

    if (tiles) {
        gs_exact *t = &tiles[blockIdx.x];
        for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK) t->digit[d] = b.sum.digit[d];
        if (threadIdx.x == 0) {
            t->special = b.sum.special;
            t->pending = 0;
        }
        return;
    }
    /* normalized digits are below 2^32, *acc's below 2^62 + 2^32 (pending
     * at most GS_EXACT_PENDING_MAX): a grid's worth more cannot overflow */
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK)
        if (b.sum.digit[d])
            atomicAdd(reinterpret_cast<unsigned long long *>(&acc->digit[d]), (unsigned long long)b.sum.digit[d]);
    if (threadIdx.x == 0) {
        if (b.sum.special) atomicOr(&acc->special, b.sum.special);
        __threadfence();   /* the digits are visible before the count says so */
        is_last_block = atomicAdd(&scalars->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last_block) return;

    __threadfence();
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK)
        b.sum.digit[d] = (int64_t)__ldcg(reinterpret_cast<const unsigned long long *>(&acc->digit[d]));
    __syncthreads();
    if (threadIdx.x == 0) gs_exact_normalize(&b.sum);
    __syncthreads();
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK) acc->digit[d] = b.sum.digit[d];
    if (threadIdx.x == 0) {
        acc->pending = 0;
        scalars->blocks_done = 0;   /* ready for the next launch */
    }
}

/* ---- pass 2: the tiles' exclusive prefixes ------------------------------------- */

#define GS_EXACT_PREFIX_BLOCK 1024
/* threads per slice: one per digit and one for the specials */
#define GS_EXACT_LANES (GS_EXACT_DIGITS + 1)
#define GS_EXACT_SLICES (GS_EXACT_PREFIX_BLOCK / GS_EXACT_LANES)

/* One block: tiles[0..count) (normalized sums) become carry + the sum of
 * the tiles before each (not normalized: pending says so), and *carry
 * becomes carry + all of them, normalized. Thread (slice, digit): each
 * slice of consecutive tiles is summed, the slices' offsets found, then
 * each slice rewritten from its offset. */
__global__ void __launch_bounds__(GS_EXACT_PREFIX_BLOCK)
gs_exact_prefix_kernel(gs_exact *tiles, int64_t count, gs_exact *carry)
{
    __shared__ int64_t slice_total[GS_EXACT_SLICES][GS_EXACT_LANES];
    __shared__ gs_exact c;
    const int slice = threadIdx.x / GS_EXACT_LANES, d = threadIdx.x % GS_EXACT_LANES;
    const bool active = slice < GS_EXACT_SLICES;
    const bool is_special = d == GS_EXACT_DIGITS;

    if (threadIdx.x < GS_EXACT_DIGITS) c.digit[threadIdx.x] = carry->digit[threadIdx.x];
    if (threadIdx.x == 0) {
        c.special = carry->special;
        c.pending = 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) gs_exact_normalize(&c);   /* the carry may come unnormalized */
    const int64_t per = (count + GS_EXACT_SLICES - 1) / GS_EXACT_SLICES;
    const int64_t lo = slice * per, hi = lo + per < count ? lo + per : count;
    int64_t total = 0;
    if (active) {
        for (int64_t t = lo; t < hi; t++)
            total = is_special ? (total | tiles[t].special) : total + tiles[t].digit[d];
        slice_total[slice][d] = total;
    }
    __syncthreads();
    if (active) {
        int64_t running = is_special ? c.special : c.digit[d];
        for (int s = 0; s < slice; s++)
            running = is_special ? (running | slice_total[s][d]) : running + slice_total[s][d];
        for (int64_t t = lo; t < hi; t++) {
            if (is_special) {
                const uint32_t v = tiles[t].special;
                tiles[t].special = (uint32_t)running;
                tiles[t].pending = 1;
                running |= v;
            } else {
                const int64_t v = tiles[t].digit[d];
                tiles[t].digit[d] = running;
                running += v;
            }
        }
    }
    __syncthreads();   /* everyone has read c */
    if (slice == GS_EXACT_SLICES - 1) {
        /* the last slice's offset plus its total is everything */
        int64_t all = is_special ? c.special : c.digit[d];
        for (int s = 0; s < GS_EXACT_SLICES; s++)
            all = is_special ? (all | slice_total[s][d]) : all + slice_total[s][d];
        if (is_special) c.special = (uint32_t)all;
        else c.digit[d] = all;
    }
    __syncthreads();
    if (threadIdx.x == 0) gs_exact_normalize(&c);
    __syncthreads();
    if (threadIdx.x < GS_EXACT_DIGITS) carry->digit[threadIdx.x] = c.digit[threadIdx.x];
    if (threadIdx.x == 0) {
        carry->special = c.special;
        carry->pending = 0;
    }
}

/* ---- pass 3: every element rounded ---------------------------------------------- */

/* The fast path's numbers per element type: A the running sum (fp64 on a
 * grid for f32, see gs_grid; double-double for f64), the sub-tile's shape,
 * and for f64 REL, a bound on the path's error relative to the largest sum
 * it forms: fewer than 64 roundings lie on any element's path (vector,
 * lanes, rows, warps, elements), each of at most 2^-53 of an error term
 * (double-double's lo); twice that for the bound's own roundings. */
template <class T> struct gs_exact_scan_traits;
template <> struct gs_exact_scan_traits<float> {
    using A = double;
    static constexpr int vec = 4, vecs = 8;
    static constexpr double carry_rel = 0x1p-52;   /* |C - RN(C)| <= 2^-53 |RN(C)| */
};
template <> struct gs_exact_scan_traits<double> {
    using A = gs_dd;
    static constexpr int vec = 2, vecs = 8;
    static constexpr double rel = 0x1p-90;
    static constexpr double carry_rel = 0x1p-104;  /* |C - hi - lo| <= 2^-106 |hi| */
    static constexpr int exact_bits = 100;
};

/* The elements of a pass-3 sub-tile: every thread's `vecs` vectors. */
template <class T> GS_HD_CONST int64_t gs_exact_sub_items()
{
    return (int64_t)GS_EXACT_BLOCK * gs_exact_scan_traits<T>::vecs * gs_exact_scan_traits<T>::vec;
}

/* The exponent of the lowest set bit of x (finite; a large value for 0):
 * x is a multiple of 2^that. When every term and the carry are multiples
 * of 2^q and every partial sum is below 2^(q + exact_bits), the fast path's
 * arithmetic is exact: a double-double's lo collects errors that stay
 * below 2^(q + 53). Data on a grid (the generator's k * 2^-53, integers)
 * then needs no bound at all, which also decides exact ties. */
GS_DEV int gs_low_bit(double x)
{
    const uint64_t b = (uint64_t)__double_as_longlong(x);
    const int biased = (int)((b >> 52) & 0x7ff);
    const uint64_t m = (b & 0xfffffffffffffull) | (biased ? 0x10000000000000ull : 0);
    return m ? (biased ? biased : 1) - 1075 + __ffsll((long long)m) - 1 : INT32_MAX / 2;
}

/* The f32 fast path's grid: sums of the carry and the terms run on
 * multiples of 2^q, each moved onto the grid (by at most 2^(q-1)), with
 * q = floor(log2 M) - 51 for M >= |carry| + the sub-tile's sum of |x|.
 * Every partial sum is then a multiple of 2^q below M + 8193 * 2^(q-1) <
 * 2^(q+53): exact in fp64. The only error is what the grid rounded off:
 * nothing for most data (it takes terms 2^28 times below M to lose bits),
 * so the bound stays tiny instead of growing with M from sub-tile to
 * sub-tile as a bound on fp64 roundings does. */
struct gs_grid {
    double step = 1.0, inv = 1.0;   /* 2^q, 2^-q */
    float from = 0.0f;    /* 2^(q+23), where f32's spacing reaches 2^q; 0: every f32 is on the grid */
    bool usable = false;  /* q <= 104: that fits f32 */

    /* the carry: x * 2^-q is exact (|x| < 2^(q+52), or rounds to 0 anyway) */
    GS_DEV double round(double x) const { return __dmul_rn(rint(__dmul_rn(x, inv)), step); }
    /* a term, in f32 (no conversion, no fp64 rounding): from 2^(q+23) up it
     * is a multiple of 2^q already; below, |x| + 2^(q+23) lies where the
     * spacing is 2^q, so the addition rounds |x| to the grid and taking
     * 2^(q+23) off again is exact */
    GS_DEV float round(float x) const
    {
        const float a = fabsf(x);
        return a >= from ? x : copysignf(__fsub_rn(__fadd_rn(a, from), from), x);
    }
};
GS_DEV gs_grid gs_grid_for(double magnitude)   /* finite */
{
    int e = magnitude > 0.0 ? ilogb(magnitude) : -150;
    e = e < -150 ? -150 : e;   /* f32 sums are multiples of 2^-149 */
    const int q = e - 51;
    gs_grid g;
    g.step = __longlong_as_double((int64_t)(q + 1023) << 52);
    g.inv = __longlong_as_double((int64_t)(1023 - q) << 52);
    g.usable = q <= 104;
    if (q >= -149 && g.usable) g.from = __int_as_float((q + 23 + 127) << 23);
    return g;
}

/* RN(v) in f32 when the exact value lies within `bound` of v and that
 * decides it (bound 0: v is exact); else `ok` is cleared. Rounding is
 * monotonic, so the ends of the interval, rounded outwards to fp64, decide
 * it when they round alike. Zero is left undecided: the exact carry
 * knows its sign. Every element is checked without a branch (&, not &&): per
 * element, branches cost more than the arithmetic. */
GS_DEV float gs_exact_round_checked(double v, double bound, bool &ok)
{
    if (bound == 0.0) return v == 0.0 ? 0.0f : __double2float_rn(v);   /* +0 for an exact 0 */
    const float f = __double2float_rn(__dadd_ru(v, bound));
    ok = ok & (f == __double2float_rn(__dadd_rd(v, -bound))) & (f != 0.0f);
    return f;
}

/* The same in f64 for a double-double v: h + l is v exactly, and the
 * interval's ends are h plus l's ends, each rounded once. */
GS_DEV double gs_exact_round_checked(gs_dd v, double bound, bool &ok)
{
    double h, l;
    gs_two_sum(v.hi, v.lo, h, l);
    if (bound == 0.0) return h == 0.0 ? 0.0 : h;   /* exact: h is the rounding of hi + lo */
    const double r = __dadd_rn(h, __dadd_ru(l, bound));
    ok = ok & (r == __dadd_rn(h, __dadd_rd(l, -bound))) & (r != 0.0);
    return r;
}

template <class T> struct gs_exact_scan_args {
    const T *in;
    T *out;
    int64_t n;
    int64_t per_tile;          /* elements per block: a multiple of the sub-tile */
    const gs_exact *prefix;    /* pass 2's exclusive prefix of each tile */
    bool exclusive;
    bool vector_io;            /* in and out 16-byte aligned: whole sub-tiles use vectors */
};

/* Outputs of a sub-tile that pass 3 rounds one by one from the exact
 * carry when the fast path's check leaves them undecided; with more, the
 * sub-tile takes the exact path. */
#define GS_EXACT_FIXES 8

/* What a block keeps in shared memory. */
struct gs_exact_scan_shared {
    gs_exact_block_state sum;  /* in its digits: what `committed` left out (and scratch) */
    gs_exact carry;            /* exact, but for `committed` and `sum`: brought up to date when needed */
    double hi, lo, err;        /* the fast path's carry: |prefix - (hi + lo)| <= err */
    int low;                   /* with err == 0: the carry is a multiple of 2^low */
    int warp_low[GS_EXACT_WARPS];
    bool all_slow;             /* the carry holds a special value or is beyond fp64 */
    gs_dd warp_total[GS_EXACT_WARPS];
    double warp_abs[GS_EXACT_WARPS];
    double warp_off_grid[GS_EXACT_WARPS];   /* f32: what the grid rounded off */
    int64_t warp_scan[GS_EXACT_WARPS];
    gs_dd committed[GS_EXACT_WARPS];   /* each warp's exact total of the sub-tiles done since */
    int fails;                 /* outputs of the sub-tile its check left undecided */
    int64_t fail_index[GS_EXACT_FIXES];
    double fail_value[GS_EXACT_FIXES];
};

/* s->carry += the sums in s->sum's digits, which are clear again after.
 * Every thread calls it. */
__device__ __noinline__ void gs_exact_scan_catch_up(gs_exact_scan_shared *s)
{
    gs_exact_block_total(&s->sum);
    if (threadIdx.x == 0) {
        gs_exact_merge(&s->carry, &s->sum.sum);
        gs_exact_normalize(&s->carry);
    }
    gs_exact_block_clear(&s->sum);
}

/* A sum of a few values kept exactly in two doubles while `whole` holds
 * (when an addition leaves an error the pair cannot keep, it clears). */
struct gs_exact_pair {
    double hi = 0.0, lo = 0.0;
    bool whole = true;

    GS_DEV void add(double x)
    {
        double s, e, t, e2;
        gs_two_sum(hi, x, s, e);
        gs_two_sum(lo, e, t, e2);
        hi = s;
        lo = t;
        whole = whole & (e2 == 0.0);
    }
};

/* Thread 0: the fast path's carry from the exact one. */
template <class T> __device__ __noinline__ void gs_exact_carry_approx(gs_exact_scan_shared *s)
{
    using X = gs_exact_scan_traits<T>;
    const double hi = gs_exact_round_f64_from(&s->carry, GS_EXACT_DIGITS - 1);
    double lo = 0.0;
    bool exact = false;
    if (isfinite(hi) && s->carry.special == 0) {
        /* rest = C - hi (- lo): zero when hi (+ lo) is C exactly */
        gs_exact rest = s->carry;
        uint64_t m;
        int bit, negative;
        gs_exact_decode_f64(-hi, &m, &bit, &negative);
        if (m) gs_exact_add_carried(&rest, m, bit, negative);
        if constexpr (sizeof(T) == 8) {
            lo = gs_exact_round_f64_from(&rest, GS_EXACT_DIGITS - 1);
            gs_exact_decode_f64(-lo, &m, &bit, &negative);
            if (m) gs_exact_add_carried(&rest, m, bit, negative);
        }
        exact = gs_exact_top_digit(&rest, GS_EXACT_DIGITS - 1) < 0 && rest.digit[GS_EXACT_DIGITS - 1] == 0;
    }
    s->hi = hi;
    s->lo = lo;
    s->err = exact ? 0.0 : __dmul_ru(fabs(hi), X::carry_rel);
    const int low_hi = gs_low_bit(hi), low_lo = gs_low_bit(lo);
    s->low = low_hi < low_lo ? low_hi : low_lo;
    s->all_slow = s->carry.special != 0 || !isfinite(hi);
}

/* Exclusive sum of v over the block's threads; every thread calls it. */
GS_DEV int64_t gs_exact_block_exclusive(int64_t v, int64_t *warp_scan)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t incl = gs_warp_scan<GS_SUM>(v);
    if (lane == 31) warp_scan[warp] = incl;
    __syncthreads();
    int64_t before = 0;
    for (int w = 0; w < warp; w++) before += warp_scan[w];
    __syncthreads();
    return before + incl - v;
}

/* The exact path of one sub-tile [begin, end): thread t walks the run
 * [begin + t*R, begin + (t+1)*R) from carry + the runs before it, rounding
 * each prefix; the last thread leaves carry + the whole sub-tile in
 * s->carry. Reads each element before writing its output, so in place is
 * fine. */
template <class T>
__device__ __noinline__ void gs_exact_scan_slow(const gs_exact_scan_args<T> a, int64_t begin, int64_t end,
                               gs_exact_scan_shared *s)
{
    const int64_t per = (end - begin + GS_EXACT_BLOCK - 1) / GS_EXACT_BLOCK;
    const int64_t r0 = begin + threadIdx.x * per < end ? begin + threadIdx.x * per : end;
    const int64_t r1 = r0 + per < end ? r0 + per : end;

    gs_exact st;   /* first the run's sum, then the running prefix */
    gs_exact_clear(&st);
    for (int64_t i = r0; i < r1; i++) {
        if constexpr (sizeof(T) == 4) gs_exact_add_f32(&st, a.in[i]);
        else gs_exact_add_f64(&st, a.in[i]);
    }
    gs_exact_normalize(&st);
    /* runs' normalized digits are below 2^32: their block sums fit */
    for (int d = 0; d < GS_EXACT_DIGITS; d++)
        st.digit[d] = s->carry.digit[d] + gs_exact_block_exclusive(st.digit[d], s->warp_scan);
    uint32_t special = s->carry.special;
    for (int bit = GS_EXACT_NAN; bit <= GS_EXACT_NEG_INF; bit <<= 1)
        if (gs_exact_block_exclusive((st.special & bit) != 0, s->warp_scan)) special |= bit;
    st.special = special;
    st.pending = 1;
    gs_exact_normalize(&st);

    int top = gs_exact_top_digit(&st, GS_EXACT_DIGITS - 1);
    for (int64_t i = r0; i < r1; i++) {
        const T x = a.in[i];
        T y = 0;
        if (a.exclusive)
            y = sizeof(T) == 4 ? (T)gs_exact_round_f32_from(&st, top < 0 ? 0 : top)
                               : (T)gs_exact_round_f64_from(&st, top < 0 ? 0 : top);
        uint64_t m;
        int bit, negative;
        const uint32_t sp = sizeof(T) == 4 ? gs_exact_decode_f32((float)x, &m, &bit, &negative)
                                           : gs_exact_decode_f64((double)x, &m, &bit, &negative);
        if (sp) {
            st.special |= sp;
        } else if (m) {
            const int j = gs_exact_add_carried(&st, m, bit, negative);
            top = gs_exact_top_digit(&st, j > top ? j : top);
        }
        if (!a.exclusive)
            y = sizeof(T) == 4 ? (T)gs_exact_round_f32_from(&st, top < 0 ? 0 : top)
                               : (T)gs_exact_round_f64_from(&st, top < 0 ? 0 : top);
        a.out[i] = y;
    }
    __syncthreads();   /* everyone has read s->carry */
    if (threadIdx.x == GS_EXACT_BLOCK - 1) s->carry = st;
    __syncthreads();
}

/* s->fail_value[e] = the exact output of element s->fail_index[e] of the
 * sub-tile [begin, end): the exact carry (brought up to date first) plus
 * the block's exact sum of the sub-tile up to it, rounded. Every thread
 * calls it; reads inputs only, so the sub-tile's outputs wait for it. */
template <class T>
__device__ __noinline__ void gs_exact_scan_fix(const gs_exact_scan_args<T> a, int64_t begin, int64_t end,
                                              gs_exact_scan_shared *s)
{
    gs_exact_scan_catch_up(s);   /* (barriers: s->fail_index is complete) */
    for (int e = 0; e < s->fails; e++) {
        const int64_t upto = a.exclusive ? s->fail_index[e] : s->fail_index[e] + 1;
        gs_exact_block_sum(a.in, begin, upto < end ? upto : end, &s->sum);   /* (padding: not stored) */
        if (threadIdx.x == 0) {
            gs_exact_merge(&s->sum.sum, &s->carry);
            gs_exact_normalize(&s->sum.sum);
            s->fail_value[e] = sizeof(T) == 4 ? gs_exact_round_f32_from(&s->sum.sum, GS_EXACT_DIGITS - 1)
                                              : gs_exact_round_f64_from(&s->sum.sum, GS_EXACT_DIGITS - 1);
        }
        gs_exact_block_clear(&s->sum);   /* (a barrier) */
    }
}

/* Each warp's exact total of the sub-tiles done (s->committed) into its
 * digits, so that a catch-up finds it there. */
GS_DEV void gs_exact_scan_commit(gs_exact_scan_shared *s)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        gs_exact_flush(s->sum.warp_digit[warp], &s->sum.special, s->committed[warp].hi);
        gs_exact_flush(s->sum.warp_digit[warp], &s->sum.special, s->committed[warp].lo);
        s->committed[warp] = gs_dd{0.0, 0.0};
    }
}

/*
 * The fast path of sub-tile [begin, end) of BLOCK * VECS vectors. Warp w
 * owns a contiguous segment of VECS * 32 vectors, lane l holds vector
 * j * 32 + l of it (as in gs_scan_kernel); the sums run in A from the fast
 * carry and every output is checked against the error bound. When every
 * check decides its output, or (FIX) a few do not and are rounded one by
 * one from the exact carry, the outputs are stored and the sub-tile's exact
 * sum kept: the warps' totals, which the fast path formed exactly, in
 * s->committed, and what they left out (f32: what the grid rounded off;
 * f64 beyond the double-double's reach: each thread's exact sum instead)
 * in the digits. So the exact carry is at hand without reading the inputs
 * again, and in place needs nothing more: a sub-tile's elements are loaded
 * before its outputs are stored. Returns false, storing nothing, when the
 * exact path must take the sub-tile. Every thread calls it and gets the
 * same answer.
 */
template <class T, bool FIX>
GS_DEV bool gs_exact_scan_sub(const gs_exact_scan_args<T> &a, int64_t begin, int64_t end, gs_exact_scan_shared *s)
{
    using X = gs_exact_scan_traits<T>;
    using A = typename X::A;
    constexpr int VEC = X::vec, VECS = X::vecs;
    constexpr int64_t WARP_ITEMS = (int64_t)VECS * 32 * VEC;
    constexpr int64_t SUB = gs_exact_sub_items<T>();
    constexpr bool GRID = sizeof(T) == 4;
    using Raw = typename gs_raw_of<16>::type;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    unsigned long long *digit = s->sum.warp_digit[warp];
    const bool whole = a.vector_io && end - begin == SUB;
    const int64_t first = begin + warp * WARP_ITEMS + lane * VEC;   /* vector j at + j*32*VEC */
    const A carry = [&] {
        if constexpr (sizeof(T) == 8) return gs_dd{s->hi, s->lo};
        else return s->hi;
    }();
    const double carry_err = s->err;
    const int carry_low = s->low;
    bool valid = !s->all_slow;   /* the fast path's sums and bound hold */

    T x[VECS][VEC];
    if (whole) {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const Raw raw = __ldg(reinterpret_cast<const Raw *>(a.in + first + j * 32 * VEC));
            memcpy(x[j], &raw, 16);
        }
    } else {
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                x[j][k] = i < end ? a.in[i] : (T)0;
            }
    }

    /* f32: the sums run from the carry and terms on a grid (gs_grid),
     * found from the block's sum of |x| first, the terms replacing the
     * elements in registers; f64: from the carry and the elements */
    gs_grid grid;
    A start = carry;
    double start_off_grid = 0.0;
    double abs_sum = 0.0;   /* f32: what the grid rounded off; f64: the sum of |x| */
    gs_exact_pair rest;     /* f32: the same exactly; f64: the thread's sum where needed */
    if constexpr (GRID) {
        float abs32 = 0.0f;   /* 32 terms in f32 rounded up: an overflow takes the exact path */
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) abs32 = __fadd_ru(abs32, fabsf(x[j][k]));
        double sum = abs32;
#pragma unroll
        for (int m = 16; m > 0; m >>= 1) sum = __dadd_ru(sum, __shfl_xor_sync(GS_FULL_MASK, sum, m));
        if (lane == 0) s->warp_abs[warp] = sum;
        __syncthreads();
        double magnitude = fabs(carry);
        for (int w = 0; w < GS_EXACT_WARPS; w++) magnitude = __dadd_ru(magnitude, s->warp_abs[w]);
        if (isfinite(magnitude)) grid = gs_grid_for(magnitude);
        valid = valid & grid.usable;   /* else a special value or an overflow: the exact path */
        start = grid.round(carry);
        start_off_grid = fabs(__dadd_rn(carry, -start));   /* exact */
        /* what the grid rounds off, x - t, is exact in f32; a thread that
         * rounded any off keeps their exact sum, from its elements loaded
         * again (rare; not stored yet, so in place too) */
        float off32 = 0.0f;
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const float t = grid.round(x[j][k]);
                off32 = __fadd_ru(off32, fabsf(__fsub_rn(x[j][k], t)));
                x[j][k] = t;
            }
        if (off32 != 0.0f) {
#pragma unroll 1
            for (int b = 0; b < VECS * VEC; b++) {
                const int64_t i = first + b / VEC * 32 * VEC + b % VEC;
                if (i < end) rest.add(__fsub_rn(a.in[i], grid.round((float)a.in[i])));
            }
        }
        abs_sum = off32;
    }

    /* vector sums, scanned across the lanes; f64: |x| and the lowest bit
     * for the bound */
    A v[VECS];
    int low = INT32_MAX / 2;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        v[j] = gs_acc_zero<A>();
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            v[j] = gs_dd_add(v[j], (double)x[j][k]);
            if constexpr (!GRID) {
                abs_sum = __dadd_ru(abs_sum, fabs((double)x[j][k]));
                const int l = gs_low_bit(x[j][k]);
                low = l < low ? l : low;
            }
        }
    }
#pragma unroll
    for (int d = 1; d < 32; d *= 2)
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const A up = gs_shfl_up(v[j], d);
            if (lane >= d) v[j] = gs_dd_add(up, v[j]);
        }
    A warp_total = gs_acc_zero<A>();
#pragma unroll
    for (int j = 0; j < VECS; j++) warp_total = gs_dd_add(warp_total, gs_shfl_idx(v[j], 31));
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        abs_sum = __dadd_ru(abs_sum, __shfl_xor_sync(GS_FULL_MASK, abs_sum, m));
        const int l = __shfl_xor_sync(GS_FULL_MASK, low, m);
        low = l < low ? l : low;
    }
    if (lane == 0) {
        if constexpr (sizeof(T) == 8) {
            s->warp_total[warp] = warp_total;
            s->warp_abs[warp] = abs_sum;
            s->warp_low[warp] = low;
        } else {
            s->warp_total[warp] = gs_dd{warp_total, 0.0};
            s->warp_off_grid[warp] = abs_sum;
        }
    }
    __syncthreads();

    /* every thread forms the same bound and sub-tile total */
    A segment = start, sub_total = start;
    int sub_low = carry_low;
    for (int w = 0; w < GS_EXACT_WARPS; w++) {
        A t;
        if constexpr (sizeof(T) == 8) t = s->warp_total[w];
        else t = s->warp_total[w].hi;
        if (w < warp) segment = gs_dd_add(segment, t);
        sub_total = gs_dd_add(sub_total, t);
    }
    double bound;
    bool totals_exact = true;   /* the warps' totals are their exact sums */
    if constexpr (GRID) {
        /* the grid's sums are exact: the error is the carry's and what the
         * grid rounded off */
        bound = __dadd_ru(carry_err, start_off_grid);
        for (int w = 0; w < GS_EXACT_WARPS; w++) bound = __dadd_ru(bound, s->warp_off_grid[w]);
    } else {
        /* exact arithmetic needs no bound (see gs_low_bit): 2^(low +
         * exact_bits) is the partial sums' exact range */
        const auto below = [](double m, int low) {
            const int limit = low + X::exact_bits;
            return limit > 1023 ? isfinite(m) : m < __longlong_as_double((int64_t)(limit + 1023) << 52);
        };
        double terms = 0.0;
        int terms_low = INT32_MAX / 2;
        for (int w = 0; w < GS_EXACT_WARPS; w++) {
            terms = __dadd_ru(terms, s->warp_abs[w]);
            terms_low = s->warp_low[w] < terms_low ? s->warp_low[w] : terms_low;
        }
        sub_low = terms_low < sub_low ? terms_low : sub_low;
        const double magnitude = __dadd_ru(gs_acc_abs(carry), terms);
        valid = valid & isfinite(magnitude);
        const bool exact = carry_err == 0.0 && below(magnitude, sub_low);
        bound = __dadd_ru(carry_err, exact ? 0.0 : __dmul_ru(magnitude, X::rel));
        totals_exact = below(terms, terms_low);
        if (!totals_exact) {
#pragma unroll
            for (int j = 0; j < VECS; j++)
#pragma unroll
                for (int k = 0; k < VEC; k++) rest.add(x[j][k]);
        }
    }
    valid = valid & rest.whole;

    /* the outputs replace the terms in registers; `failed` has a bit for
     * each whose check did not decide it (FIX; else `decided` says all) */
    static_assert(VECS * VEC <= 32, "a thread's outputs fit a 32-bit mask");
    uint32_t failed = 0;
    bool decided = true;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        const A lower = gs_shfl_up(v[j], 1);
        A running = lane == 0 ? segment : gs_dd_add(segment, lower);
        segment = gs_dd_add(segment, gs_shfl_idx(v[j], 31));
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const A next = gs_dd_add(running, (double)x[j][k]);
            if constexpr (FIX) {
                bool one = true;
                x[j][k] = gs_exact_round_checked(a.exclusive ? running : next, bound, one);
                failed |= (uint32_t)!one << (j * VEC + k);
            } else {
                x[j][k] = gs_exact_round_checked(a.exclusive ? running : next, bound, decided);
            }
            running = next;
        }
    }

    if constexpr (!FIX) {
        if (__syncthreads_or(!(valid && decided))) return false;
    } else {
        /* the undecided outputs (padding's included: not stored), each from
         * the exact carry plus the block's exact sum up to it */
        if (__syncthreads_or(!valid)) return false;
        int entry = (int)gs_exact_block_exclusive(__popc(failed), s->warp_scan);
        if (threadIdx.x == GS_EXACT_BLOCK - 1) s->fails = entry + __popc(failed);
        __syncthreads();
        if (s->fails > GS_EXACT_FIXES) return false;
        for (uint32_t m = failed; m; m &= m - 1) {
            const int b = __ffs(m) - 1;
            s->fail_index[entry++] = first + b / VEC * 32 * VEC + b % VEC;
        }
        gs_exact_scan_commit(s);
        gs_exact_scan_fix(a, begin, end, s);
        entry -= __popc(failed);
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++)
                if (failed >> (j * VEC + k) & 1) x[j][k] = (T)s->fail_value[entry++];
    }

    if (whole) {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            Raw raw;
            memcpy(&raw, x[j], 16);
            *reinterpret_cast<Raw *>(a.out + first + j * 32 * VEC) = raw;
        }
    } else {
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                if (i < end) a.out[i] = x[j][k];
            }
    }
    /* the sub-tile's exact sum, for the exact carry */
    if (totals_exact && lane == 0) {
        gs_expansion<false> c;
        c.hi = s->committed[warp].hi;
        c.lo = s->committed[warp].lo;
        c.add(s->warp_total[warp].hi, digit, &s->sum.special);
        if constexpr (sizeof(T) == 8) c.add(s->warp_total[warp].lo, digit, &s->sum.special);
        s->committed[warp] = gs_dd{c.hi, c.lo};
    }
    if (rest.hi != 0.0) {
        gs_exact_flush(digit, &s->sum.special, rest.hi);
        gs_exact_flush(digit, &s->sum.special, rest.lo);
    }
    if (threadIdx.x == 0) {
        if constexpr (sizeof(T) == 8) {
            s->hi = sub_total.hi;
            s->lo = sub_total.lo;
        } else {
            s->hi = sub_total;
        }
        s->err = bound;
        s->low = sub_low;
    }
    return true;
}

/* The fast path again for a sub-tile it did not decide, now rounding a few
 * undecided outputs one by one; apart, so that the hot loop keeps no
 * registers for it. */
template <class T>
__device__ __noinline__ bool gs_exact_scan_redo(const gs_exact_scan_args<T> a, int64_t begin, int64_t end,
                                               gs_exact_scan_shared *s)
{
    return gs_exact_scan_sub<T, true>(a, begin, end, s);
}

/* Block b scans tile [b * per_tile, ...) in sub-tiles: the fast path, else
 * the fast path with a few outputs rounded one by one, else the exact path
 * from the exact carry. */
template <class T>
__global__ void __launch_bounds__(GS_EXACT_BLOCK, 2)
gs_exact_scan_kernel(const gs_exact_scan_args<T> a)
{
    constexpr int64_t SUB = gs_exact_sub_items<T>();
    __shared__ gs_exact_scan_shared s;

    const int64_t tile_begin = (int64_t)blockIdx.x * a.per_tile;
    const int64_t tile_end = tile_begin + a.per_tile < a.n ? tile_begin + a.per_tile : a.n;
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK) s.carry.digit[d] = a.prefix[blockIdx.x].digit[d];
    if (threadIdx.x == 0) s.carry.special = a.prefix[blockIdx.x].special;
    if (threadIdx.x < GS_EXACT_WARPS) s.committed[threadIdx.x] = gs_dd{0.0, 0.0};
    __syncthreads();
    if (threadIdx.x == 0) {
        gs_exact_normalize(&s.carry);
        gs_exact_carry_approx<T>(&s);
    }
    gs_exact_block_clear(&s.sum);   /* (a barrier) */

    for (int64_t begin = tile_begin; begin < tile_end; begin += SUB) {
        const int64_t end = begin + SUB < tile_end ? begin + SUB : tile_end;
        if (!gs_exact_scan_sub<T, false>(a, begin, end, &s) && !gs_exact_scan_redo(a, begin, end, &s)) {
            gs_exact_scan_commit(&s);
            gs_exact_scan_catch_up(&s);
            gs_exact_scan_slow(a, begin, end, &s);
            if (threadIdx.x == 0) gs_exact_carry_approx<T>(&s);
        }
        __syncthreads();
    }
}

#endif /* GS_CUDA_EXACT_AGENT_CUH */
