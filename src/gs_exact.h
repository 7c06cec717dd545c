/*
 * gs_exact.h - exact sums of f32 and f64 values (--exact, docs/SEMANTICS.md):
 * one plain-old-data state, gs_exact, and its arithmetic, shared by the CPU
 * backend (C), the CUDA kernels (C++: every function is GS_HD) and the MPI
 * combine (which moves a gs_exact as sizeof(gs_exact) bytes).
 *
 * A state is a big fixed-point number in carry-save form:
 *   value = sum_i digit[i] * 2^(32*i + GS_EXACT_LSB_EXP)
 * where each digit may be any int64. Adding a float adds its 53-bit (24-bit)
 * integer significand, shifted to its exponent, to two or three digits;
 * no carry moves until gs_exact_normalize, which brings every digit but the
 * top one into [0, 2^32) and leaves the sign in the top digit (two's
 * complement). `pending` counts what was added since: each add moves a
 * digit by less than 2^32, so digits stay below (pending + 1) * 2^32 in
 * magnitude, and the state normalizes itself before pending passes
 * GS_EXACT_PENDING_MAX (far from int64's limit even after a merge of two).
 * pending == 0 means the digits are normalized.
 *
 * Infinities and NaNs are not digits: `special` collects them, and the
 * rounding applies the rules: any NaN gives NaN, +inf and -inf together
 * give NaN, otherwise an infinity gives that infinity.
 *
 * Rounding (gs_exact_round_f64, _f32) is IEEE round to nearest, ties to
 * even, of the exact value, subnormal results and overflow to infinity
 * included. An exact zero is +0.
 */
#ifndef GS_EXACT_H
#define GS_EXACT_H

#include <stdint.h>
#include <string.h>

#include "gs_rules.h"

/* The weight of digit[0]'s lowest bit: below f64's least subnormal 2^-1074,
 * a multiple of 32 so that a float's bit position splits into a digit and a
 * shift with >> 5 and & 31. */
#define GS_EXACT_LSB_EXP (-1088)
/* 70 digits reach 2^(32*70 - 1088) = 2^1152: sums of up to 2^63 values of
 * magnitude below 2^1024 (2^1087), with room for the sign. */
#define GS_EXACT_DIGITS 70
/* Adds (or merged states' counts) before a normalization is due. */
#define GS_EXACT_PENDING_MAX ((uint32_t)1 << 30)

#define GS_EXACT_NAN 1u
#define GS_EXACT_POS_INF 2u
#define GS_EXACT_NEG_INF 4u

typedef struct gs_exact {
    int64_t digit[GS_EXACT_DIGITS];
    uint32_t special;   /* GS_EXACT_NAN | GS_EXACT_POS_INF | GS_EXACT_NEG_INF */
    uint32_t pending;   /* adds since the digits were last normalized */
} gs_exact;

#if defined(__CUDA_ARCH__)
#define GS_EXACT_CLZ64(x) __clzll((long long)(x))
#else
#define GS_EXACT_CLZ64(x) __builtin_clzll(x)
#endif

GS_HD void gs_exact_clear(gs_exact *e)
{
    for (int i = 0; i < GS_EXACT_DIGITS; i++) e->digit[i] = 0;
    e->special = 0;
    e->pending = 0;
}

/* Carries up: digits 0..DIGITS-2 into [0, 2^32), the top digit signed. */
GS_HD void gs_exact_normalize(gs_exact *e)
{
    int64_t carry = 0;
    for (int i = 0; i < GS_EXACT_DIGITS - 1; i++) {
        int64_t d = e->digit[i] + carry;
        carry = d >> 32;   /* arithmetic: the floor of d / 2^32 */
        e->digit[i] = d & 0xffffffff;
    }
    e->digit[GS_EXACT_DIGITS - 1] += carry;
    e->pending = 0;
}

/* Count one more add; normalize first when the digits could overflow. */
GS_HD void gs_exact_count(gs_exact *e, uint32_t adds)
{
    if (e->pending + adds > GS_EXACT_PENDING_MAX) gs_exact_normalize(e);
    e->pending += adds;
}

/* m * 2^bit (bit: the position above GS_EXACT_LSB_EXP, m < 2^53) as the
 * pieces of three digits from digit bit >> 5 up, each below 2^32; returns
 * that digit. */
GS_HD int gs_exact_split(uint64_t m, int bit, int64_t piece[3])
{
    const int s = bit & 31;
    const uint64_t rest = m >> (32 - s);   /* s < 32: a shift of 1 to 32 */
    piece[0] = (int64_t)((m << s) & 0xffffffff);
    piece[1] = (int64_t)(rest & 0xffffffff);
    piece[2] = (int64_t)(rest >> 32);
    return bit >> 5;
}

/* digits += sign * m * 2^bit, without counting it: the hot loops count in
 * bulk. */
GS_HD void gs_exact_add_raw(gs_exact *e, uint64_t m, int bit, int negative)
{
    const int i = bit >> 5, s = bit & 31;
    const int64_t lo = (int64_t)((m << s) & 0xffffffff);
    const uint64_t rest = m >> (32 - s);   /* s < 32: a shift of 1 to 32 */
    const int64_t mid = (int64_t)(rest & 0xffffffff), hi = (int64_t)(rest >> 32);
    if (negative) {
        e->digit[i] -= lo;
        e->digit[i + 1] -= mid;
        e->digit[i + 2] -= hi;
    } else {
        e->digit[i] += lo;
        e->digit[i + 1] += mid;
        e->digit[i + 2] += hi;
    }
}

/* A float as the integer significand m and the position `bit` of m's bit 0
 * above 2^GS_EXACT_LSB_EXP, and its sign; returns 0, or the GS_EXACT_ bit of
 * a NaN or an infinity (m and bit then unset). */
GS_HD uint32_t gs_exact_decode_f64(double x, uint64_t *m, int *bit, int *negative)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int biased = (int)((bits >> 52) & 0x7ff);
    const uint64_t frac = bits & (((uint64_t)1 << 52) - 1);
    *negative = (int)(bits >> 63);
    *m = 0;
    *bit = 0;
    if (biased == 0x7ff) return frac ? GS_EXACT_NAN : *negative ? GS_EXACT_NEG_INF : GS_EXACT_POS_INF;
    /* x = m * 2^(max(biased, 1) - 1075): bit 0 at max(biased, 1) + 13 */
    *m = biased ? frac | ((uint64_t)1 << 52) : frac;
    *bit = (biased ? biased : 1) + 13;
    return 0;
}

GS_HD uint32_t gs_exact_decode_f32(float x, uint64_t *m, int *bit, int *negative)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    const int biased = (int)((bits >> 23) & 0xff);
    const uint32_t frac = bits & ((1u << 23) - 1);
    *negative = (int)(bits >> 31);
    *m = 0;
    *bit = 0;
    if (biased == 0xff) return frac ? GS_EXACT_NAN : *negative ? GS_EXACT_NEG_INF : GS_EXACT_POS_INF;
    /* x = m * 2^(max(biased, 1) - 150): bit 0 at max(biased, 1) + 938 */
    *m = biased ? frac | (1u << 23) : frac;
    *bit = (biased ? biased : 1) + 938;
    return 0;
}

GS_HD void gs_exact_add_f64(gs_exact *e, double x)
{
    uint64_t m;
    int bit, negative;
    const uint32_t special = gs_exact_decode_f64(x, &m, &bit, &negative);
    if (special) {
        e->special |= special;
        return;
    }
    gs_exact_count(e, 1);
    gs_exact_add_raw(e, m, bit, negative);
}

GS_HD void gs_exact_add_f32(gs_exact *e, float x)
{
    uint64_t m;
    int bit, negative;
    const uint32_t special = gs_exact_decode_f32(x, &m, &bit, &negative);
    if (special) {
        e->special |= special;
        return;
    }
    gs_exact_count(e, 1);
    gs_exact_add_raw(e, m, bit, negative);
}

/* gs_exact_add_raw on a normalized state that stays normalized (what a scan
 * needs before it rounds each prefix): the carry runs up from the digits
 * added to until it dies out. Returns the highest digit it changed. */
GS_HD int gs_exact_add_carried(gs_exact *e, uint64_t m, int bit, int negative)
{
    int64_t piece[3];
    const int i = gs_exact_split(m, bit, piece);
    int64_t carry = 0;
    int j = i;
    for (;; j++) {
        const int64_t add = j < i + 3 ? (negative ? -piece[j - i] : piece[j - i]) : 0;
        if (j == GS_EXACT_DIGITS - 1) {
            e->digit[j] += add + carry;
            break;
        }
        const int64_t d = e->digit[j] + add + carry;
        carry = d >> 32;
        e->digit[j] = d & 0xffffffff;
        if (j >= i + 2 && carry == 0) break;
    }
    return j;
}

/* e += o */
GS_HD void gs_exact_merge(gs_exact *e, const gs_exact *o)
{
    gs_exact_count(e, o->pending + 1);
    for (int i = 0; i < GS_EXACT_DIGITS; i++) e->digit[i] += o->digit[i];
    e->special |= o->special;
}

/* ---- rounding ------------------------------------------------------------------- */

/* The index of the highest digit of a normalized state that is not the
 * sign's fill (0 for a positive value, 0xffffffff for a negative one), or
 * -1 when every digit is; `from` bounds it from above (DIGITS - 1 when
 * nothing better is known). */
GS_HD int gs_exact_top_digit(const gs_exact *e, int from)
{
    const int64_t top = e->digit[GS_EXACT_DIGITS - 1];
    if (top != 0 && top != -1) return GS_EXACT_DIGITS - 1;
    const int64_t fill = top < 0 ? 0xffffffff : 0;
    int h = from < GS_EXACT_DIGITS - 1 ? from : GS_EXACT_DIGITS - 2;
    while (h >= 0 && e->digit[h] == fill) h--;
    return h;
}

/* Rounds (W + f) * 2^(wb + GS_EXACT_LSB_EXP), W a signed 128-bit integer
 * and f in [0, 1) (below: f != 0), to nearest even into a binary format of
 * `prec` significand bits (hidden bit included) whose least subnormal is
 * 2^qmin and whose largest biased exponent is max_biased (f64: 53, -1074,
 * 2047). Returns 1 with *bits (the IEEE bits without the sign) and
 * *negative when W decides it: when the result's round bit lies in W, so
 * that of f only whether it is zero matters (the sticky bit). Returns 0
 * when it does not (W too short for the value: the caller rounds a wider
 * window). An exact zero is +0. */
GS_HD int gs_exact_round_window(gs_i128 w, int below, int wb, int prec, int qmin, int max_biased,
                                uint64_t *bits, int *negative)
{
    gs_u128 mag;
    *bits = 0;
    *negative = w < 0;
    if (w < 0) mag = (gs_u128)(-w) - (below ? 1 : 0);   /* |W + f| = (-W - 1) + (1 - f) */
    else mag = (gs_u128)w;
    if (mag == 0) return w == 0 && !below;
    const uint64_t mag_hi = (uint64_t)(mag >> 64), mag_lo = (uint64_t)mag;
    const int mb = mag_hi ? 127 - GS_EXACT_CLZ64(mag_hi) : 63 - GS_EXACT_CLZ64(mag_lo);
    /* the exponent of the result's last bit: prec bits from the leading
     * one, but never below the least subnormal */
    int q = wb + mb + GS_EXACT_LSB_EXP - (prec - 1);
    if (q < qmin) q = qmin;
    const int shift = q - GS_EXACT_LSB_EXP - wb;   /* window bits below the significand */
    if (shift < 1) return 0;
    uint64_t m;
    int round_bit, sticky;
    if (shift > 128) {
        m = 0;
        round_bit = 0;
        sticky = 1;
    } else {
        m = shift == 128 ? 0 : (uint64_t)(mag >> shift);
        round_bit = (int)((mag >> (shift - 1)) & 1);
        sticky = below || (shift > 1 && (mag & (((gs_u128)1 << (shift - 1)) - 1)) != 0);
    }
    if (round_bit && (sticky || (m & 1))) m++;
    const uint64_t hidden = (uint64_t)1 << (prec - 1);
    if (m == hidden << 1) {
        m >>= 1;
        q++;
    }
    const int64_t biased = (int64_t)q - qmin + 1;
    if (m < hidden) *bits = m;   /* subnormal (q == qmin), or zero */
    else if (biased >= max_biased) *bits = (uint64_t)max_biased << (prec - 1);   /* infinity */
    else *bits = ((uint64_t)biased << (prec - 1)) | (m - hidden);
    return 1;
}

/* The IEEE bits of a normalized state, rounded as gs_exact_round_window
 * says. `top` is gs_exact_top_digit's answer. Specials are the caller's.
 * Returns the bits without the sign; *negative the sign.
 *
 * The window is the three digits from `top` down as one signed 128-bit
 * number W, the digits below are f in [0, 1) units of the window
 * (normalized digits are non-negative): value = (W + f) * 2^wb. |W| >= 2^64
 * (or f = 0, near the bottom), more bits than the rounding needs, so the
 * window always decides. */
GS_HD uint64_t gs_exact_round_bits(const gs_exact *e, int top, int prec, int qmin, int max_biased,
                                   int *negative)
{
    *negative = 0;
    const int64_t fill = e->digit[GS_EXACT_DIGITS - 1] < 0 ? -1 : 0;
    if (top < 0 && fill == 0) return 0;   /* exact zero: +0 */
    const int h = top < 0 ? 0 : top;
    int64_t top_signed = e->digit[h];
    if (h < GS_EXACT_DIGITS - 1 && fill) top_signed -= (int64_t)1 << 32;
    const uint64_t d1 = h >= 1 ? (uint64_t)e->digit[h - 1] : 0;
    const uint64_t d2 = h >= 2 ? (uint64_t)e->digit[h - 2] : 0;
    const gs_i128 w = (gs_i128)top_signed * ((gs_i128)1 << 64) + (gs_i128)((d1 << 32) | d2);
    int below = 0;
    for (int i = h - 3; i >= 0 && !below; i--) below = e->digit[i] != 0;
    uint64_t bits;
    gs_exact_round_window(w, below, 32 * (h - 2), prec, qmin, max_biased, &bits, negative);
    return bits;
}

/* NaN, or +-inf by the rules, or 0 when the value is finite. */
GS_HD int gs_exact_special_result(uint32_t special)
{
    if ((special & GS_EXACT_NAN) || (special & GS_EXACT_POS_INF && special & GS_EXACT_NEG_INF)) return 3;
    return special & GS_EXACT_POS_INF ? 1 : special & GS_EXACT_NEG_INF ? 2 : 0;
}

/* Rounding of a normalized state (pending == 0), from a bound on its top
 * digit (DIGITS - 1 when nothing better is known): what the scans call per
 * element. */
GS_HD double gs_exact_round_f64_from(const gs_exact *e, int from)
{
    const int special = gs_exact_special_result(e->special);
    int negative = special == 2;
    uint64_t bits = special == 3 ? (uint64_t)0xfff << 51 : special ? (uint64_t)0x7ff << 52
                  : gs_exact_round_bits(e, gs_exact_top_digit(e, from), 53, -1074, 2047, &negative);
    bits |= (uint64_t)negative << 63;
    double r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

GS_HD float gs_exact_round_f32_from(const gs_exact *e, int from)
{
    const int special = gs_exact_special_result(e->special);
    int negative = special == 2;
    uint32_t bits = special == 3 ? 0x7fc00000u : special ? 0x7f800000u
                  : (uint32_t)gs_exact_round_bits(e, gs_exact_top_digit(e, from), 24, -149, 255, &negative);
    bits |= (uint32_t)negative << 31;
    float r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

GS_HD double gs_exact_round_f64(const gs_exact *e)
{
    if (e->pending == 0) return gs_exact_round_f64_from(e, GS_EXACT_DIGITS - 1);
    gs_exact n = *e;
    gs_exact_normalize(&n);
    return gs_exact_round_f64_from(&n, GS_EXACT_DIGITS - 1);
}

GS_HD float gs_exact_round_f32(const gs_exact *e)
{
    if (e->pending == 0) return gs_exact_round_f32_from(e, GS_EXACT_DIGITS - 1);
    gs_exact n = *e;
    gs_exact_normalize(&n);
    return gs_exact_round_f32_from(&n, GS_EXACT_DIGITS - 1);
}

#endif /* GS_EXACT_H */
