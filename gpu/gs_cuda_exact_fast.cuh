/*
 * gs_cuda_exact_fast.cuh - the arithmetic of the exact scan's fast path
 * (gs_cuda_exact_scan_agent.cuh): its sums per element type, a bound on
 * the elements' lowest bits (f64), the grid that makes f32 sums exact, the
 * rounding of an output with the check that it rounds as the exact prefix
 * does, pairs of doubles that hold a sum exactly while they can, and the
 * conversions between such pairs and a gs_exact.
 */
#ifndef GS_CUDA_EXACT_FAST_CUH
#define GS_CUDA_EXACT_FAST_CUH

#include "gs_cuda_exact_agent.cuh"

/* The fast path's numbers per element type: A its sums (fp64 on a grid for
 * f32, see gs_grid; double-double for f64), the vector's elements, and for
 * f64 REL, a bound on the path's error relative to M, the largest sum it
 * forms: N < 128 roundings lie on any element's path (up to 7 warp
 * totals, each of up to 32 elements and 5 lanes; or the runs before the
 * thread's in its warp, as many; then 1 more, P, and up to 32 elements of
 * its run: under 100, counting 2 for each addition of two double-doubles),
 * each in double-double's lo, which sums fewer than N errors of at most
 * 2^-53 M: each rounding errs by at most 2^-53 N 2^-53 M,
 * all together by N^2 2^-106 M < 2^-92 M; 2^-90 leaves room for the
 * bound's own roundings. */
template <class T> struct gs_exact_scan_traits;
template <> struct gs_exact_scan_traits<float> {
    using A = double;
    static constexpr int vec = 4;
};
template <> struct gs_exact_scan_traits<double> {
    using A = gs_dd;
    static constexpr int vec = 2;
    static constexpr double rel = 0x1p-90;
    static constexpr int exact_bits = 100;
};


/* |x|'s high word: its exponent and top 20 bits, ordered as |x| */
GS_DEV uint32_t gs_high_word_abs(double x) { return (uint32_t)__double2hiint(x) & 0x7fffffffu; }

/* A lower bound on the exponents of the lowest set bits of doubles (finite;
 * a large value for none but zeros): each is a multiple of 2^(E - 1075 +
 * z), for E the least biased exponent among them (at least 1) and z the
 * trailing zeros of their mantissa fields' OR (at most 52, the implicit
 * bit); of one double, its lowest set bit's exponent. A few integer
 * operations an element and no branch, where each element's own lowest
 * bit took a 64-bit find-first-set and a branch. When every term and
 * the carry are multiples of 2^q and every partial sum is below 2^(q +
 * exact_bits), the fast path's arithmetic is exact: a double-double's lo
 * collects errors of at most 2^(q + 46) each (half an ulp of such a sum),
 * fewer than 128 of them on any element's path (see the traits), so it
 * stays a multiple of 2^q below 2^(q + 53). Data on a grid (the
 * generator's k * 2^-53, integers) then needs no bound at all, which also
 * decides exact ties. */
struct gs_low_bits {
    uint32_t least = 0xffffffffu;   /* least (|x|'s high word, bit 0 set for a low word not 0) - 1: zeros wrap */
    uint32_t field_hi = 0, field_lo = 0;

    GS_DEV void add(double x)
    {
        const uint32_t hi = (uint32_t)__double2hiint(x), lo = (uint32_t)__double2loint(x);
        least = min(least, (gs_high_word_abs(x) | min(lo, 1u)) - 1u);
        field_hi |= hi;
        field_lo |= lo;
    }
    GS_DEV int low() const
    {
        if (least == 0xffffffffu) return INT32_MAX / 2;
        const int biased = (int)((least + 1u) >> 20);
        const uint64_t field = (uint64_t)(field_hi & 0xfffffu) << 32 | field_lo;
        const int zeros = field ? __ffsll((long long)field) - 1 : 52;
        return (biased > 1 ? biased : 1) - 1075 + (zeros < 52 ? zeros : 52);
    }
};
GS_DEV int gs_low_bit(double x)
{
    gs_low_bits b;
    b.add(x);
    return b.low();
}

/* x's biased exponent (0 for zeros and subnormals): x < 2^(that - 1022) for finite x. */
GS_DEV int gs_biased_exponent(double x) { return (int)(((uint32_t)__double2hiint(x) >> 20) & 0x7ffu); }

/* The f32 fast path's grid: a tile's sums run on multiples of 2^q, each
 * term moved onto the grid (by at most 2^(q-1)), with q = floor(log2 M) - 51
 * for M >= the tile's sum of |x|. Every partial sum is then a multiple of
 * 2^q below M + 8193 * 2^(q-1) < 2^(q+53): exact in fp64. The only error is
 * what the grid rounded off: nothing for most data (it takes terms 2^28
 * times below M to lose bits). */
struct gs_grid {
    float from = 0.0f;    /* 2^(q+23), where f32's spacing reaches 2^q; 0: every f32 is on the grid */
    bool usable = false;  /* q <= 104: that fits f32 */

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
GS_DEV int gs_grid_exponent(double magnitude)   /* q, for a finite M */
{
    const int e = magnitude > 0.0 ? ilogb(magnitude) : -150;
    return (e < -150 ? -150 : e) - 51;   /* f32 sums are multiples of 2^-149 */
}
GS_DEV gs_grid gs_grid_for(double magnitude)   /* finite */
{
    const int q = gs_grid_exponent(magnitude);
    gs_grid g;
    g.usable = q <= 104;
    if (q >= -149 && g.usable) g.from = __int_as_float((q + 23 + 127) << 23);
    return g;
}

/*
 * RN(V) in f32 for the exact prefix V = P + local: P = hi + lo (|lo| <=
 * ulp(hi) / 2) up to b, the bound on P's error and on what the grid rounded
 * off, and local on the tile's grid (exact). One conversion rounds h2 =
 * RN(RN(hi + local) + lo), and `ok` says whether V rounds alike:
 *
 * - h = RN(hi + local) and h2 leave |V - h2| <= ulp(h)/2 + ulp(h2)/2 + b.
 *   Either h lies at most one binade above h2, or |h| < 2|lo| <= ulp(hi),
 *   so hi + local cancelled exactly (Sterbenz) and ulp(h)/2 drops out:
 *   |V - h2| < 1.5 + 2^s ulps of h2, for b < 2^(bound_exp - 1075) and s =
 *   bound_exp - h2's biased exponent.
 * - In h2's binade (f32's normal range: |h2| >= 2^-126), f32's rounding
 *   boundaries are the doubles whose low 29 bits are 2^28, and the nearest
 *   boundary of another binade lies 2^27 ulps away. So where h2's low 29
 *   bits are farther than 2 + 2^s from 2^28 (s <= 26), V rounds as h2 does
 *   (rounding is monotonic; above f32's range both are infinite).
 * - Tiles whose lo and b are 0 (EXACT) have V = hi + local, and where that
 *   sum is exact, h2 is V itself, ties and zeros included: data on coarse
 *   grids (integers, the generator's k 2^-24) have ties in some prefixes.
 *   The sum is exact below 2^(g + 53), hi and local multiples of 2^g
 *   (exact.top: the high word of that; 0 in other tiles), and, with
 *   FAST2SUM, where local's exponent is at most hi's (exact.hi_above), when
 *   h - hi is local (Fast2Sum: h - hi is then exact). FAST2SUM's two fp64
 *   operations an output are paid only where ties are likely (P has few
 *   bits: GS_EXACT_TIE_SPAN) and in a tile's second pass after its first
 *   left an output undecided (gs_exact_scan_redo), so that a rare tie costs
 *   its tile that pass, not every tile the test.
 *
 * Else `ok` is cleared and the tile's fix rounds that output from the
 * exact carry (a few tiles of a scan of 2^28 random elements). An exact
 * zero is +0 with no operation for it: h is -0 only where hi and local
 * are, and local, a sum begun from +0, never is; h2 then never is either.
 * The check is integer arithmetic on h2's words, without a branch: the
 * fp64 and conversion pipes are the kernel's busy ones.
 */
struct gs_exact_f32_exact {
    uint32_t top = 0;        /* 0: lo or b is not 0 */
    uint32_t hi_above = 0;   /* |local|'s high word below it: local's exponent is at most hi's */
};
/* h2's distance, in its ulps, from f32's nearest rounding boundary in its binade */
GS_DEV int gs_exact_f32_distance(double h2) { return abs((int)((uint32_t)__double2loint(h2) & 0x1fffffffu) - 0x10000000); }
/* the distance that decides an output whose h2 has the high word top (sign cleared) */
GS_DEV int gs_exact_f32_margin(int bound_exp, uint32_t top)
{
    const int s = bound_exp - (int)(top >> 20);
    return s > 26 ? INT32_MAX : 2 + (1 << (s > 0 ? s : 0));
}
/* whether outputs whose h2 lie at `distance` or farther from a boundary,
 * with high words from top_min to top_max, are decided: farther than the
 * margin of the least exponent (the largest margin) and normal, or all
 * below exact.top */
GS_DEV bool gs_exact_f32_decides(int distance, uint32_t top_min, uint32_t top_max, int bound_exp, gs_exact_f32_exact exact)
{
    return ((distance > gs_exact_f32_margin(bound_exp, top_min)) & (top_min >= 0x38100000u)) | (top_max < exact.top);
}
template <bool FAST2SUM>
GS_DEV float gs_exact_round_checked(double hi, double lo, double local, int bound_exp, gs_exact_f32_exact exact, bool &ok)
{
    const double h = __dadd_rn(hi, local);
    const double h2 = __dadd_rn(h, lo);
    const uint32_t top = gs_high_word_abs(h2);
    bool decided = gs_exact_f32_decides(gs_exact_f32_distance(h2), top, top, bound_exp, exact);
    if constexpr (FAST2SUM) {
        const bool local_below = gs_high_word_abs(local) < exact.hi_above;
        decided = decided | (local_below & (__dadd_rn(h, -hi) == local));
    }
    ok = ok & decided;
    return __double2float_rn(h2);
}

/* The same for a tile's first pass, which asks only whether all of a
 * thread's outputs are decided, from their extremes (gs_exact_f32_decides).
 * Each output then costs its extremes, not its own margin and comparisons;
 * a run decided partly one way and partly the other takes the second pass
 * (gs_exact_scan_redo). */
struct gs_exact_f32_run_check {
    uint32_t top_min = 0xffffffffu, top_max = 0;
    int distance = INT32_MAX;

    GS_DEV float round(double hi, double lo, double local)
    {
        const double h2 = __dadd_rn(__dadd_rn(hi, local), lo);
        const uint32_t top = gs_high_word_abs(h2);
        top_min = min(top_min, top);
        top_max = max(top_max, top);
        distance = min(distance, gs_exact_f32_distance(h2));
        return __double2float_rn(h2);
    }
    GS_DEV bool decided(int bound_exp, gs_exact_f32_exact exact) const
    {
        return gs_exact_f32_decides(distance, top_min, top_max, bound_exp, exact);
    }
};

/* RN(v) in f64 for a double-double v: h + l is v exactly, and the
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

/* A sum of a few values kept exactly in two doubles while `whole` holds
 * (when an addition leaves an error the pair cannot keep, it clears). */
struct gs_exact_pair {
    double hi = 0.0, lo = 0.0;
    bool whole = true;

    GS_DEV void add(double x)
    {
        double s, e;
        gs_two_sum(hi, x, s, e);
        const double t = __dadd_rn(lo, e);
        whole = whole & gs_sum_is_exact(lo, e, t);
        hi = s;
        lo = t;
    }
    GS_DEV void add(const gs_exact_pair &o)
    {
        add(o.hi);
        add(o.lo);
        whole = whole & o.whole;
    }
};

/* a += x and b += y in fp64; `exact` cleared where an addition rounded. */
GS_DEV void gs_sums_add_checked(double &a, double &b, double x, double y, bool &exact)
{
    const double sa = __dadd_rn(a, x), sb = __dadd_rn(b, y);
    exact = exact & gs_sum_is_exact(a, x, sa) & gs_sum_is_exact(b, y, sb);
    a = sa;
    b = sb;
}

/* The warp's sums of a and of b in fp64, in every lane (two butterflies
 * interleaved: their latencies overlap); `exact` cleared where an
 * addition rounded. */
GS_DEV void gs_warp_sums_checked(double &a, double &b, bool &exact)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        const double oa = __shfl_xor_sync(GS_FULL_MASK, a, m), ob = __shfl_xor_sync(GS_FULL_MASK, b, m);
        gs_sums_add_checked(a, b, oa, ob, exact);
    }
}

/* The warp's pairs summed (lane 0's sum is the one to use: lanes add in
 * different orders, so their pairs, and whether they stayed whole, may
 * differ; every one is the same exact value when whole). */
GS_DEV gs_exact_pair gs_exact_pair_warp_sum(gs_exact_pair p)
{
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
        gs_exact_pair o;
        o.hi = __shfl_xor_sync(GS_FULL_MASK, p.hi, m);
        o.lo = __shfl_xor_sync(GS_FULL_MASK, p.lo, m);
        o.whole = __shfl_xor_sync(GS_FULL_MASK, (int)p.whole, m);
        p.add(o);
    }
    return p;
}

/* e += x exactly (x finite or not). */
GS_DEV void gs_exact_add_carried_f64(gs_exact *e, double x)
{
    uint64_t m;
    int bit, negative;
    const uint32_t sp = gs_exact_decode_f64(x, &m, &bit, &negative);
    if (sp) e->special |= sp;
    else if (m) gs_exact_add_carried(e, m, bit, negative);
}

/* e = hi + lo exactly, normalized. */
GS_DEV void gs_exact_from_pair(gs_exact *e, double hi, double lo)
{
    gs_exact_clear(e);
    gs_exact_add_carried_f64(e, hi);
    gs_exact_add_carried_f64(e, lo);
}

/* Warp 0 of tile 0: the carry *c as an exact pair p, where that is quick
 * to see: c normalized, no special value, and its digits but the sign's
 * fill within three consecutive digits (a zero carry, and every carry the
 * last tile made from a pair). False, p not set, for any other carry,
 * which the caller reads and normalizes in one lane as before. Tile 0's
 * inclusive prefix heads the chain every tile waits on: the one lane's
 * way cost it several microseconds (docs/PERFORMANCE.md). */
GS_DEV bool gs_exact_carry_as_pair(const gs_exact *c, gs_exact_pair &p)
{
    constexpr int BELOW = GS_EXACT_DIGITS - 1;   /* the digits under the signed top one */
    const int lane = threadIdx.x % 32;
    const int64_t top = __ldcg(&c->digit[BELOW]);
    const uint32_t special = __ldcg(&c->special);
    const int64_t fill = top < 0 ? 0xffffffff : 0;
    int64_t d[3];   /* digits lane, lane + 32, lane + 64 */
    unsigned nonzero[3], nonfill[3];
    bool normalized = true;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        const int i = lane + 32 * k;
        const bool digit = i < BELOW;
        d[k] = digit ? __ldcg(&c->digit[i]) : 0;
        normalized = normalized & (!digit || (d[k] >= 0 && d[k] <= 0xffffffff));
        nonzero[k] = __ballot_sync(GS_FULL_MASK, digit && d[k] != 0);
        nonfill[k] = __ballot_sync(GS_FULL_MASK, digit && d[k] != fill);
    }
    if (!__all_sync(GS_FULL_MASK, normalized) || special != 0 || (top != 0 && top != -1)) return false;
    /* b: the lowest digit that is not 0; t: the highest that is not fill */
    const int b = nonzero[0] ? __ffs(nonzero[0]) - 1
                  : nonzero[1] ? 31 + __ffs(nonzero[1])
                  : nonzero[2] ? 63 + __ffs(nonzero[2])
                               : -1;
    const int t = nonfill[2] ? 95 - __clz(nonfill[2])
                  : nonfill[1] ? 63 - __clz(nonfill[1])
                  : nonfill[0] ? 31 - __clz(nonfill[0])
                               : -1;
    if (b < 0) {   /* every digit 0: the value is top * 2^(32 * BELOW + LSB), 0 or -2^1120 */
        p = gs_exact_pair{};
        return top == 0;
    }
    /* digits b..b+2 hold the value, the fill above them adding -2^(32 (b + 3)) for a
     * negative one; from b = 1 on every term is a multiple of 2^-1056 of at
     * most 32 bits, so a double holds it exactly (or it overflows) */
    if (b < 1 || b > BELOW - 3 || t > b + 2) return false;
    gs_exact_pair q;
    if (top < 0) q.add(-ldexp(1.0, 32 * (b + 3) + GS_EXACT_LSB_EXP));
#pragma unroll
    for (int j = 2; j >= 0; j--) {
        const int i = b + j;   /* the same in every lane */
        const int64_t mine = i < 32 ? d[0] : i < 64 ? d[1] : d[2];
        const int64_t digit = __shfl_sync(GS_FULL_MASK, mine, i % 32);
        q.add(ldexp((double)digit, 32 * i + GS_EXACT_LSB_EXP));
    }
    if (!q.whole || !isfinite(q.hi) || !isfinite(q.lo)) return false;
    p = q;
    return true;
}

/* The same, out of line: the long f64 tile's kernel runs 2% faster at 2^28
 * with this call not inlined, the f32 kernel 2% slower (H100, "The carry
 * at the chain's two ends" in docs/PERFORMANCE.md), so f64 calls this. */
__device__ __noinline__ bool gs_exact_carry_as_pair_outlined(const gs_exact *c, gs_exact_pair &p)
{
    return gs_exact_carry_as_pair(c, p);
}

/* hi = RN(c), lo = RN(c - hi) in f64, for a normalized c (left as it was);
 * true when hi + lo is c exactly (c holds no special value). Else
 * |c - hi - lo| <= 2^-106 |hi| + 2^-1075 when hi is finite. */
GS_DEV bool gs_exact_to_pair(gs_exact *c, double &hi, double &lo)
{
    hi = gs_exact_round_f64_from(c, GS_EXACT_DIGITS - 1);
    lo = 0.0;
    if (c->special || !isfinite(hi)) return false;
    gs_exact_add_carried_f64(c, -hi);
    lo = gs_exact_round_f64_from(c, GS_EXACT_DIGITS - 1);
    gs_exact_add_carried_f64(c, -lo);
    const bool exact = gs_exact_top_digit(c, GS_EXACT_DIGITS - 1) < 0 && c->digit[GS_EXACT_DIGITS - 1] == 0;
    gs_exact_add_carried_f64(c, lo);
    gs_exact_add_carried_f64(c, hi);
    return exact;
}

#endif /* GS_CUDA_EXACT_FAST_CUH */
