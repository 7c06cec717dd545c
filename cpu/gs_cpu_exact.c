/*
 * gs_cpu_exact.c - the CPU backend's --exact kernels: exact sums and prefix
 * sums of f32 and f64 in gs_exact states (gs_exact.h).
 *
 * Both walk their range in blocks of 2^10 elements. A block whose elements
 * fit fixed grids (data of low dynamic range: almost every block of the
 * generator's or normal data) is summed, and its prefixes rounded, in
 * plain fp64 vector arithmetic that is exact there (the block kernels
 * below). Any other block goes element by element:
 *
 * Reductions: into bins, one per exponent, each the sum of its elements'
 * signed significands (no shift, no branch on the data), which go into the
 * carry-save state at the end of the range (sum_bins_flush).
 *
 * Scans: two passes, as the plain blocked scan. Each thread sums its block
 * exactly (as a reduction), every thread merges the totals before its own
 * onto the carry, and each scans its block from there; the carry between
 * blocks is a normalized gs_exact. A window keeps the hot part of the
 * exact value in one 128-bit integer `a` counted in units of
 * 2^(32w + GS_EXACT_LSB_EXP) for a window digit w: an element whose
 * significand, shifted to its exponent, lies in the window is one shift
 * and one 128-bit add; elements outside it take the slower exact paths of
 * gs_exact.h. The window of a block that takes it (struct
 * scan_window): the running value is V = (a + f) * 2^(32w) with f the
 * digits below digit w, which no add inside the window touches (of f the
 * rounding needs only whether it is zero). Each prefix rounds from a and that sticky
 * flag: the top 63 bits of a, sticky in bit 0, converted by the hardware's
 * int64-to-float conversion (one IEEE round to nearest even) and scaled by
 * adding to the exponent field. An element below the window goes into f's
 * digits with its carries, its part from digit w up into a
 * (scan_add_below). Anything else (an element too far above the window, a
 * result that is subnormal, infinite or too small for a after
 * cancellation) falls back to the exact state: a is written back
 * into the digits, the element added with its carries or the prefix
 * rounded from the digits (gs_exact_round_window, gs_exact_round_bits),
 * and the window re-opened at the new top digit.
 */
#include <float.h>
#include <math.h>
#ifdef __x86_64__
#include <immintrin.h>
#endif

#include "gs_cpu.h"

/* v, or -v when negative, without a branch on the data: -v = (v ^ -1) + 1. */
static inline int64_t signed_by(int64_t v, int negative)
{
    const int64_t flip = -(int64_t)negative;
    return (v ^ flip) - flip;
}

/* a + sign * m * 2^sh for 0 <= sh <= 63, the shift in 64-bit halves and
 * both signs computed (what compilers make of a 128-bit variable shift and
 * a branch-free negation is slower). */
static inline gs_i128 add_shifted(gs_i128 a, uint64_t m, int sh, int negative)
{
    const gs_u128 v = (gs_u128)((m >> 1) >> (63 - sh)) << 64 | (m << sh);
    const gs_u128 plus = (gs_u128)a + v, minus = (gs_u128)a - v;
    return (gs_i128)(negative ? minus : plus);
}

/* ---- whole blocks by error-free extraction --------------------------------------- */

/*
 * The fast path of both kernels, for blocks of up to 2^M elements whose
 * magnitudes are not too far apart (the generator's and normal data): each
 * element becomes one or two doubles on fixed grids, whose sums in any
 * order are exact in plain fp64 arithmetic.
 *  - f64: x = q1 + q2 split exactly (Rump, Ogita and Oishi's ExtractScalar:
 *    q = fl(fl(sigma + x) - sigma) for a power of two sigma, r = x - q
 *    exactly). With every |x| <= 2^e and sigma1 = 2^(e + M), each q1 is a
 *    multiple of 2^(e + M - 53) of magnitude at most 2^e, so every sum of up
 *    to 2^M of them is a double; so are the sums of the remainders q2 on a
 *    grid 2^(53 - M) finer, when nothing remains of x below it.
 *  - f32: x itself, when every |x| lies in [2^(e - 29 + M), 2^e] or is 0:
 *    its 24-bit significand then lies on the grid 2^(e + M - 53).
 * A block with an element above 2^e, a remainder, an element too small, a
 * NaN or an infinity is tried again with e from its own largest |x| (a
 * block keeps the e of the one before, which saves a pass), and if it still
 * does not fit it goes element by element (the windows below).
 *
 * A reduction adds the block's two exact sums to its window. A scan rounds
 * each prefix V = C + P1 + P2 (C the exact carry, P1 and P2 the block's
 * exact prefixes) from doubles: C = c1 + c2 + c3 + rho (each part the
 * rounding of what the ones before leave, |rho| tiny), s = fl(c1 + P1), and
 * a bound d on |V - s'|, s' = s (f32) or s + t with t = e + (c2 + P2) + c3
 * and s + e = c1 + P1 exactly (f64, TwoSum). Rounding is monotonic, so when
 * both s' - d and s' + d round to the same element, so does V; for f32,
 * which rounds the double once more, d also covers an f64 ulp of V, so
 * that no f32 rounding boundary can hide in the double rounding. The ends
 * are compared bit for bit: an exact zero lies between -d and +d, whose
 * f32 roundings -0 and +0 compare equal as numbers, and must be +0. Otherwise
 * (about once in 2^26 (f32) or 2^48 (f64) random prefixes, and every exact
 * tie) the block goes element by element.
 *
 * Vectors are GCC's (and clang's) vector extensions: 2 doubles (SSE2 on
 * x86-64, NEON on aarch64) and, for AVX2, 4. The compiler must not
 * reassociate: no -ffast-math.
 */
#ifdef __FAST_MATH__
#error "gs_cpu_exact.c needs IEEE arithmetic: build it without -ffast-math"
#endif
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 9
#error "gs_cpu_exact.c needs GCC 9 or later (or clang): __builtin_convertvector"
#endif

/* x86-64 with GCC: the block kernels also in 4 lanes for AVX2, called where
 * the CPU has it (and tests allow it: gs_cpu_exact_allow_wide); the 2-lane
 * ones also compiled for AVX2 (three-operand instructions, no register
 * copies) and picked at load time (not under ASan, whose runtime is not up
 * when such a choice runs). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GS_CPU_EXACT_AVX2 1
#endif
#if defined(GS_CPU_EXACT_AVX2) && !defined(__SANITIZE_ADDRESS__)
#define GS_CPU_EXACT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GS_CPU_EXACT_CLONES
#endif

#define GS_CPU_EXACT_BLOCK_LOG 10
#define GS_CPU_EXACT_BLOCK (1 << GS_CPU_EXACT_BLOCK_LOG)

typedef double gs_v2d __attribute__((vector_size(16)));
typedef int64_t gs_v2l __attribute__((vector_size(16)));
typedef float gs_v4f __attribute__((vector_size(16)));
typedef int32_t gs_v4i __attribute__((vector_size(16)));
typedef float gs_v2f __attribute__((vector_size(8)));
typedef double gs_v4d __attribute__((vector_size(32)));

/* a mask (gs_v2l, gs_v4i, gs_v4l) with a lane set */
#define GS_MASK_ANY(m) (memcmp(&(m), &(__typeof__(m)){0}, sizeof(m)) != 0)

/* f32 lanes 0, 1 and 2, 3 as doubles (GCC 12 makes scalar conversions of
 * the generic form) */
#ifdef __SSE2__
#define GS_V4F_LO(f) ((gs_v2d)_mm_cvtps_pd((__m128)(f)))
#define GS_V4F_HI(f) ((gs_v2d)_mm_cvtps_pd(_mm_movehl_ps((__m128)(f), (__m128)(f))))
#else
#define GS_V4F_HALF(f, j)                                                                    \
    __extension__({                                                                          \
        gs_v2f h_;                                                                           \
        memcpy(&h_, (const float *)&(f) + 2 * (j), sizeof h_);                               \
        __builtin_convertvector(h_, gs_v2d);                                                 \
    })
#define GS_V4F_LO(f) GS_V4F_HALF(f, 0)
#define GS_V4F_HI(f) GS_V4F_HALF(f, 1)
#endif
/* two pairs of doubles rounded to one vector of f32 (older GCCs: through
 * memory, slower) */
#if defined(__clang__) || __GNUC__ >= 12
#define GS_V2D_PAIR_TO_V4F(a, b) __builtin_convertvector(__builtin_shufflevector(a, b, 0, 1, 2, 3), gs_v4f)
#else
#define GS_V2D_PAIR_TO_V4F(a, b)                                                             \
    __extension__({                                                                          \
        gs_v4f j_;                                                                           \
        const gs_v2f a_ = __builtin_convertvector(a, gs_v2f), b_ = __builtin_convertvector(b, gs_v2f); \
        memcpy(&j_, &a_, sizeof a_);                                                         \
        memcpy((float *)&j_ + 2, &b_, sizeof b_);                                            \
        j_;                                                                                  \
    })
#endif

/* The grids of blocks whose |x| are at most bound = 2^e: sigma[0] =
 * 2^(e + M), sigma[1] = 2^(e + 2M - 53); f32 elements must also be 0 or at
 * least low = 2^(e - 29 + M). */
struct grids {
    double bound, sigma[2];
    float bound32, low32;
};

/* grids for a block of f64 (f64 = 1: both grids matter) or f32 elements
 * whose largest |x| (NaNs left out) is amax; 0 where they would leave the
 * normal range (an infinity, data near f64's extremes). */
static int grids_for(double amax, int f64, struct grids *g)
{
    if (!(amax <= DBL_MAX)) return 0;
    uint64_t bits;
    memcpy(&bits, &amax, sizeof bits);
    const int biased = (int)(bits >> 52);
    const int e = (biased ? biased : 1) - 1022;   /* amax < 2^e */
    const int k1 = e + GS_CPU_EXACT_BLOCK_LOG, k2 = k1 - 53 + GS_CPU_EXACT_BLOCK_LOG;
    if (k1 > 1023 || (f64 ? k2 : e) < -1000) return 0;
    g->bound = ldexp(1, e);
    g->sigma[0] = ldexp(1, k1);
    g->sigma[1] = ldexp(1, k2 > -1000 ? k2 : -1000);
    g->bound32 = e > 127 ? INFINITY : ldexpf(1, e);
    g->low32 = ldexpf(1, e - 29 + GS_CPU_EXACT_BLOCK_LOG);   /* 0 below f32's range */
    return 1;
}

/* The exact carry of a scan as doubles, C = c1 + c2 + c3 + rho, and
 * rho_bound >= |rho|. */
struct carry_parts {
    double c1, c2, c3, rho_bound;
};

/* e += v exactly, e normalized before and after (v finite). */
static void exact_add_f64_carried(gs_exact *e, double v)
{
    uint64_t m;
    int bit, negative;
    gs_exact_decode_f64(v, &m, &bit, &negative);
    if (m) gs_exact_add_carried(e, m, bit, negative);
}

/* carry_parts of a normalized state; 0 when there are none (a special
 * value, or |C| beyond f64's range). */
static int carry_split(const gs_exact *carry, struct carry_parts *p)
{
    if (carry->special) return 0;
    gs_exact rest = *carry;
    double part[3];
    int top = GS_EXACT_DIGITS - 1;
    for (int j = 0; j < 3; j++) {
        top = gs_exact_top_digit(&rest, top);
        int negative;
        const uint64_t bits = gs_exact_round_bits(&rest, top, 53, -1074, 2047, &negative)
                            | (uint64_t)negative << 63;
        memcpy(&part[j], &bits, sizeof bits);
        if (!(fabs(part[j]) <= DBL_MAX)) return 0;
        if (j < 2) exact_add_f64_carried(&rest, -part[j]);
    }
    p->c1 = part[0];
    p->c2 = part[1];
    p->c3 = part[2];
    p->rho_bound = fabs(part[2]) * 0x1p-52 + 0x1p-1074;
    return 1;
}

/* The bound d of a scan block's prefixes, twice what the errors need:
 * |s| <= |c1| + |P1| <= |c1| + sigma1, |e| <= 2^-53 |s|; f64: the errors of
 * t's three additions, with |P2| <= sigma2, and rho; f32: |V - s| (the
 * rounding of s, c2, c3, rho) and half an f64 ulp of V; both: the absolute
 * error of an addition near the subnormals. Where an f64 prefix could
 * overflow (s, then TwoSum's e, would be infinite or NaN), s_max rounds to
 * infinity first, and so does d: no lane of the block passes. */
static double block_bound(const struct grids *g, const struct carry_parts *c, int f32)
{
    const double s_max = fabs(c->c1) + g->sigma[0];
    const double d = f32 ? 0x1p-52 * s_max + fabs(c->c2) + fabs(c->c3) + c->rho_bound
                         : 0x1p-102 * s_max + 0x1p-52 * (3 * (g->sigma[1] + fabs(c->c2)) + fabs(c->c3)) + c->rho_bound;
    return 2 * d + 0x1p-1070;
}

/* Vector shapes: W = 2 lanes of doubles (gs_v2d: SSE2, NEON) and, on
 * x86-64 CPUs that have AVX2, W = 4 (gs_v4d; a baseline build lowers
 * 4-lane compares to scalar code, so those kernels are compiled for AVX2
 * alone and called only where the CPU has it). PREFIX_W(v): the lanes'
 * inclusive prefix (exact sums: the order is free); LAST_W(v): the last
 * lane in every lane. */
#define GS_CPU_PREFIX_2(v) ((v) + (gs_v2d){0, (v)[0]})
#define GS_CPU_LAST_2(v) ((gs_v2d){(v)[1], (v)[1]})
#define GS_CPU_PREFIX_4(v)                                                                   \
    __extension__({                                                                          \
        const gs_v4d p_ = (v) + (gs_v4d){0, (v)[0], (v)[1], (v)[2]};                         \
        p_ + (gs_v4d){0, 0, p_[0], p_[1]};                                                   \
    })
#define GS_CPU_LAST_4(v) ((gs_v4d){(v)[3], (v)[3], (v)[3], (v)[3]})

/* SPLIT_T_W(x, g, qa1, qa2, qb1, qb2, bad): 2W elements x[0..2W) on g's
 * grids, the first W as qa1 + qa2 and the next W as qb1 + qb2 (vectors of
 * W doubles; f32: q2 = 0); `bad` (a mask) non-zero where an element does
 * not fit. NaNs of f32 pass it, and the sums, no longer finite, tell. */
#define GS_CPU_SPLIT1_f64(v, g, q1, q2, bad)                                                 \
    do {                                                                                     \
        (bad) |= (__typeof__(v))((__typeof__(bad))(v) & INT64_MAX) > (g)->bound;             \
        q1 = ((v) + (g)->sigma[0]) - (g)->sigma[0];                                          \
        const __typeof__(v) r_ = (v) - q1;                                                   \
        q2 = (r_ + (g)->sigma[1]) - (g)->sigma[1];                                           \
        (bad) |= (r_ - q2) != 0; /* a remainder */                                           \
    } while (0)
#define GS_CPU_SPLIT_f64(x, g, qa1, qa2, qb1, qb2, bad)                                      \
    do {                                                                                     \
        __typeof__(qa1) va_, vb_;                                                            \
        memcpy(&va_, x, sizeof va_);                                                         \
        memcpy(&vb_, (x) + sizeof va_ / sizeof(double), sizeof vb_);                         \
        GS_CPU_SPLIT1_f64(va_, g, qa1, qa2, bad);                                            \
        GS_CPU_SPLIT1_f64(vb_, g, qb1, qb2, bad);                                            \
    } while (0)
#define GS_CPU_SPLIT_f64_2 GS_CPU_SPLIT_f64
#define GS_CPU_SPLIT_f64_4 GS_CPU_SPLIT_f64
/* f32: 4 elements out of the grids' range, or not 0 */
#define GS_CPU_F32_OFF(f, g)                                                                 \
    __extension__({                                                                          \
        const gs_v4f a_ = (gs_v4f)((gs_v4i)(f) & INT32_MAX);                                 \
        (a_ > (g)->bound32) | ((a_ < (g)->low32) & (a_ != 0));                               \
    })
#define GS_CPU_SPLIT_f32_2(x, g, qa1, qa2, qb1, qb2, bad)                                    \
    do {                                                                                     \
        gs_v4f f_;                                                                           \
        memcpy(&f_, x, sizeof f_);                                                           \
        (bad) |= GS_CPU_F32_OFF(f_, g);                                                      \
        qa1 = GS_V4F_LO(f_);                                                                 \
        qb1 = GS_V4F_HI(f_);                                                                 \
        qa2 = qb2 = (gs_v2d){0, 0};                                                          \
    } while (0)
#define GS_CPU_SPLIT_f32_4(x, g, qa1, qa2, qb1, qb2, bad)                                    \
    do {                                                                                     \
        gs_v4f fa_, fb_;                                                                     \
        memcpy(&fa_, x, sizeof fa_);                                                         \
        memcpy(&fb_, (x) + 4, sizeof fb_);                                                   \
        (bad) |= GS_CPU_F32_OFF(fa_, g) | GS_CPU_F32_OFF(fb_, g);                            \
        qa1 = GS_V4F_TO_V4D(fa_);                                                            \
        qb1 = GS_V4F_TO_V4D(fb_);                                                            \
        qa2 = qb2 = (gs_v4d){0, 0, 0, 0};                                                    \
    } while (0)

/* ROUND_T(pa1, pa2, pb1, pb2, c, d, bad, out): out[0..2W) = C + pa1 + pa2,
 * C + pb1 + pb2 rounded to T, with `bad` non-zero where it may not be (d:
 * the block's bound, block_bound). Ends compared bit for bit: -0 and +0
 * differ. */
#define GS_CPU_ROUND_f32_2(pa1, pa2, pb1, pb2, c, d, bad, out)                               \
    do {                                                                                     \
        (void)(pa2), (void)(pb2); /* f32: P2 = 0 */                                          \
        const gs_v2d sa_ = (c)->c1 + (pa1), sb_ = (c)->c1 + (pb1);                           \
        const gs_v4f lo_ = GS_V2D_PAIR_TO_V4F(sa_ - (d), sb_ - (d));                         \
        const gs_v4f hi_ = GS_V2D_PAIR_TO_V4F(sa_ + (d), sb_ + (d));                         \
        (bad) |= (gs_v4i)lo_ != (gs_v4i)hi_;                                                 \
        memcpy(out, &lo_, sizeof lo_);                                                       \
    } while (0)
#define GS_CPU_ROUND1_f64(p1, p2, c, d, bad, out)                                            \
    do {                                                                                     \
        const __typeof__(p1) s_ = (c)->c1 + (p1), b_ = s_ - (c)->c1;                         \
        const __typeof__(p1) e_ = ((c)->c1 - (s_ - b_)) + ((p1) - b_);                       \
        const __typeof__(p1) t_ = (e_ + ((p2) + (c)->c2)) + (c)->c3;                         \
        const __typeof__(p1) lo_ = s_ + (t_ - (d));                                          \
        (bad) |= (__typeof__(bad))lo_ != (__typeof__(bad))(s_ + (t_ + (d)));                 \
        (bad) |= lo_ != lo_; /* NaN: s overflowed (d guards that too) */                     \
        memcpy(out, &lo_, sizeof lo_);                                                       \
    } while (0)
#define GS_CPU_ROUND1_f32(p1, c, d, bad, out)                                                \
    do {                                                                                     \
        const gs_v4d s_ = (c)->c1 + (p1);                                                    \
        const gs_v4f lo_ = GS_V4D_TO_V4F(s_ - (d));                                          \
        (bad) |= (gs_v4i)lo_ != (gs_v4i)GS_V4D_TO_V4F(s_ + (d));                             \
        memcpy(out, &lo_, sizeof lo_);                                                       \
    } while (0)
#define GS_CPU_ROUND_f32_4(pa1, pa2, pb1, pb2, c, d, bad, out)                               \
    do {                                                                                     \
        (void)(pa2), (void)(pb2); /* f32: P2 = 0 */                                          \
        GS_CPU_ROUND1_f32(pa1, c, d, bad, out);                                              \
        GS_CPU_ROUND1_f32(pb1, c, d, bad, (out) + 4);                                        \
    } while (0)
#define GS_CPU_ROUND_f64(pa1, pa2, pb1, pb2, c, d, bad, out)                                 \
    do {                                                                                     \
        GS_CPU_ROUND1_f64(pa1, pa2, c, d, bad, out);                                         \
        GS_CPU_ROUND1_f64(pb1, pb2, c, d, bad, (out) + sizeof(pa1) / sizeof(double));        \
    } while (0)
#define GS_CPU_ROUND_f64_2 GS_CPU_ROUND_f64
#define GS_CPU_ROUND_f64_4 GS_CPU_ROUND_f64

/* amax_T(x, n): the largest |x[i]|, NaNs left out (n a multiple of 4; four
 * maxima at once, not one chain of dependent compares). */
#define GS_CPU_EXACT_AMAX(T, ctype)                                                          \
    static double amax_##T(const ctype *x, int n)                                            \
    {                                                                                        \
        double m[4] = {0, 0, 0, 0};                                                          \
        for (int i = 0; i < n; i += 4) {                                                     \
            GS_CPU_UNROLL(4)                                                                 \
            for (int j = 0; j < 4; j++) {                                                    \
                const double a = fabs((double)x[i + j]);                                     \
                m[j] = a > m[j] ? a : m[j];                                                  \
            }                                                                                \
        }                                                                                    \
        const double m01 = m[0] > m[1] ? m[0] : m[1], m23 = m[2] > m[3] ? m[2] : m[3];       \
        return m01 > m23 ? m01 : m23;                                                        \
    }
GS_CPU_EXACT_AMAX(f32, float)
GS_CPU_EXACT_AMAX(f64, double)

/*
 * The block kernels of T in W lanes (vd: W doubles, mask_t: SPLIT_T's and
 * ROUND_T's mask, attr: what they are compiled for), named NAME = T_W, on
 * blocks of n elements, n a multiple of 16 up to 2^M (pad_block pads a
 * shorter one with zeros):
 *   sum_block_NAME(x, n, g, total): x[0..n) exactly as total[0] +
 *     total[1], or 0 when the block does not fit g;
 *   scan_block_NAME(x, y, n, g, c, inclusive, total): the rounded prefixes
 *     of x[0..n) from the carry into y and the block's exact sum, or 0 when
 *     the block does not fit or a prefix cannot be rounded so (y then holds
 *     what it holds).
 */
#define GS_CPU_EXACT_BLOCKS(T, W, ctype, vd, mask_t, attr)                                   \
    attr static int sum_block_##T##_##W(const ctype *x, int n, const struct grids *g,        \
                                        double total[2])                                     \
    {                                                                                        \
        const vd z = {0};                                                                    \
        vd s1a = z, s1b = z, s1c = z, s1d = z, s2a = z, s2b = z;                             \
        mask_t bad = {0};                                                                    \
        for (int i = 0; i < n; i += 4 * W) {                                                 \
            vd qa1, qa2, qb1, qb2;                                                           \
            GS_CPU_SPLIT_##T##_##W(x + i, g, qa1, qa2, qb1, qb2, bad);                       \
            s1a += qa1;                                                                      \
            s1b += qb1;                                                                      \
            s2a += qa2;                                                                      \
            s2b += qb2;                                                                      \
            GS_CPU_SPLIT_##T##_##W(x + i + 2 * W, g, qa1, qa2, qb1, qb2, bad);               \
            /* f32: two more sums (f64: no registers for them) */                            \
            if (sizeof(ctype) == 4) {                                                        \
                s1c += qa1;                                                                  \
                s1d += qb1;                                                                  \
            } else {                                                                         \
                s1a += qa1;                                                                  \
                s1b += qb1;                                                                  \
            }                                                                                \
            s2a += qa2;                                                                      \
            s2b += qb2;                                                                      \
        }                                                                                    \
        const vd t1 = (s1a + s1b) + (s1c + s1d), t2 = s2a + s2b;                             \
        total[0] = total[1] = 0;                                                             \
        for (int j = 0; j < W; j++) {                                                        \
            total[0] += t1[j];                                                               \
            total[1] += t2[j];                                                               \
        }                                                                                    \
        return !GS_MASK_ANY(bad) && fabs(total[0]) <= DBL_MAX && fabs(total[1]) <= DBL_MAX;  \
    }                                                                                        \
                                                                                             \
    attr static int scan_block_##T##_##W(const ctype *x, ctype *y, int n, const struct grids *g, \
                                         const struct carry_parts *c, int inclusive,         \
                                         double total[2])                                    \
    {                                                                                        \
        const double d = block_bound(g, c, sizeof(ctype) == 4);                              \
        const vd z = {0};                                                                    \
        vd run1 = z, run2 = z;                                                               \
        mask_t bad = {0};                                                                    \
        for (int i = 0; i < n; i += 2 * W) {                                                 \
            vd qa1, qa2, qb1, qb2;                                                           \
            GS_CPU_SPLIT_##T##_##W(x + i, g, qa1, qa2, qb1, qb2, bad);                       \
            /* the prefixes of a and b from run, and run past both */                        \
            const vd sa1 = GS_CPU_PREFIX_##W(qa1), sb1 = GS_CPU_PREFIX_##W(qb1);             \
            const vd sa2 = GS_CPU_PREFIX_##W(qa2), sb2 = GS_CPU_PREFIX_##W(qb2);             \
            vd pa1 = sa1 + run1, pb1 = sb1 + (run1 + GS_CPU_LAST_##W(sa1));                  \
            vd pa2 = sa2 + run2, pb2 = sb2 + (run2 + GS_CPU_LAST_##W(sa2));                  \
            run1 += GS_CPU_LAST_##W(sa1) + GS_CPU_LAST_##W(sb1);                             \
            run2 += GS_CPU_LAST_##W(sa2) + GS_CPU_LAST_##W(sb2);                             \
            if (!inclusive) {                                                                \
                pa1 -= qa1;                                                                  \
                pb1 -= qb1;                                                                  \
                pa2 -= qa2;                                                                  \
                pb2 -= qb2;                                                                  \
            }                                                                                \
            GS_CPU_ROUND_##T##_##W(pa1, pa2, pb1, pb2, c, d, bad, y + i);                    \
        }                                                                                    \
        total[0] = run1[0];                                                                  \
        total[1] = run2[0];                                                                  \
        return !GS_MASK_ANY(bad) && fabs(total[0]) <= DBL_MAX && fabs(total[1]) <= DBL_MAX;  \
    }

GS_CPU_EXACT_BLOCKS(f32, 2, float, gs_v2d, gs_v4i, GS_CPU_EXACT_CLONES)
GS_CPU_EXACT_BLOCKS(f64, 2, double, gs_v2d, gs_v2l, GS_CPU_EXACT_CLONES)
#ifdef GS_CPU_EXACT_AVX2
typedef int64_t gs_v4l __attribute__((vector_size(32)));
/* 4 f32 to 4 doubles and back in one instruction (GCC 12 makes two and a
 * trip through memory of the generic conversions) */
#define GS_V4F_TO_V4D(f) ((gs_v4d)_mm256_cvtps_pd((__m128)(f)))
#define GS_V4D_TO_V4F(v) ((gs_v4f)_mm256_cvtpd_ps((__m256d)(v)))
GS_CPU_EXACT_BLOCKS(f32, 4, float, gs_v4d, gs_v4i, __attribute__((target("avx2"))))
GS_CPU_EXACT_BLOCKS(f64, 4, double, gs_v4d, gs_v4l, __attribute__((target("avx2"))))
#endif

/* sum_block_T, scan_block_T: the widest block kernels this CPU runs. */
static int allow_wide = 1;

void gs_cpu_exact_allow_wide(int allow) { allow_wide = allow; }

#ifdef GS_CPU_EXACT_AVX2
#define GS_CPU_EXACT_WIDE (allow_wide && __builtin_cpu_supports("avx2"))
#else
#define GS_CPU_EXACT_WIDE 0
#define sum_block_f32_4 sum_block_f32_2
#define scan_block_f32_4 scan_block_f32_2
#define sum_block_f64_4 sum_block_f64_2
#define scan_block_f64_4 scan_block_f64_2
#endif
#define GS_CPU_EXACT_PICK(T, ctype)                                                          \
    static int sum_block_##T(const ctype *x, int n, const struct grids *g, double total[2])  \
    {                                                                                        \
        return GS_CPU_EXACT_WIDE ? sum_block_##T##_4(x, n, g, total)                         \
                                 : sum_block_##T##_2(x, n, g, total);                        \
    }                                                                                        \
    static int scan_block_##T(const ctype *x, ctype *y, int n, const struct grids *g,        \
                              const struct carry_parts *c, int inclusive, double total[2])   \
    {                                                                                        \
        return GS_CPU_EXACT_WIDE ? scan_block_##T##_4(x, y, n, g, c, inclusive, total)       \
                                 : scan_block_##T##_2(x, y, n, g, c, inclusive, total);      \
    }
GS_CPU_EXACT_PICK(f32, float)
GS_CPU_EXACT_PICK(f64, double)

/* A block of n elements as a multiple of 16: x itself, or x copied to pad
 * and zeros after it (the last block of a range); *rounded the count. */
static const void *pad_block(const void *x, int n, size_t size, void *pad, int *rounded)
{
    *rounded = (n + 15) & ~15;
    if (*rounded == n) return x;
    memcpy(pad, x, (size_t)n * size);
    memset((char *)pad + (size_t)n * size, 0, (size_t)(*rounded - n) * size);
    return pad;
}

/* GS_CPU_EXACT_TRY(T, g, have, x, n, try): `try` (a call of a block kernel
 * on *g, non-zero when the block fit) on the grids kept from the block
 * before, then on the block's own; 0 when neither fits. */
#define GS_CPU_EXACT_TRY(T, g, have, x, n, try)                                              \
    (((have) && (try)) || (((have) = grids_for(amax_##T(x, n), sizeof *(x) == 8, g)) && (try)))

/* ---- reductions ------------------------------------------------------------------- */

/*
 * Elements summed one by one (blocks of a wide range of exponents) go to
 * bins, one per exponent: a bin adds the signed significands of its
 * elements, with no shift and no branch on the data (a window near the
 * largest elements, as the scans keep, mispredicts its test for most
 * elements of such data). f32: one bin per exponent; f64: each significand
 * in two halves, below and from bit GS_CPU_EXACT_BIN_SPLIT, in two rows of
 * bins. A bin moves by less than 2^27 per element, so 2^35 elements leave
 * it below 2^62; the bins go into the digits (sum_bins_flush) at the end
 * of a range or after GS_CPU_EXACT_BIN_ADDS elements.
 */
#define GS_CPU_EXACT_BIN_SPLIT 26
#define GS_CPU_EXACT_BIN_ADDS ((int64_t)1 << 35)
/* the positions of significands' bit 0 (gs_exact_decode_T): f32 939..1192,
 * f64 14..2059 */
#define GS_CPU_EXACT_BIN_FIRST_f32 939
#define GS_CPU_EXACT_BIN_COUNT_f32 254
#define GS_CPU_EXACT_BIN_FIRST_f64 14
#define GS_CPU_EXACT_BIN_COUNT_f64 2046

/* The bins' signed sum into *acc, and the bins cleared: `rows` rows of
 * `count` bins, row r's first at position first + r * GS_CPU_EXACT_BIN_SPLIT;
 * each bin as two pieces of under 2^32 and 2^31, at its position and 32
 * bits above. */
static void sum_bins_flush(gs_exact *acc, int64_t *bins, int rows, int count, int first)
{
    for (int r = 0; r < rows; r++, bins += count, first += GS_CPU_EXACT_BIN_SPLIT) {
        gs_exact_count(acc, 2 * (uint32_t)count);
        for (int j = 0; j < count; j++) {
            if (!bins[j]) continue;
            const int negative = bins[j] < 0;
            const uint64_t u = negative ? -(uint64_t)bins[j] : (uint64_t)bins[j];
            gs_exact_add_raw(acc, u & 0xffffffff, first + j, negative);
            gs_exact_add_raw(acc, u >> 32, first + j + 32, negative);
            bins[j] = 0;
        }
    }
}

/* sum_exact_T(in, lo, hi, acc): *acc (normalized or not) += in[lo..hi)
 * exactly: whole blocks by sum_block_T where they fit; a block that does
 * not in pieces of GS_CPU_EXACT_PIECE elements, and those that do not fit
 * either element by element (a stray element far below the block's
 * largest, about one block in a hundred of normal f32 data, then costs a
 * piece, not a block, of the slow path). After GS_CPU_EXACT_PIECE_TRIES
 * pieces in a row do not fit, the rest of the block goes element by
 * element: its range is wide, not a stray's. */
#define GS_CPU_EXACT_PIECE 64
#define GS_CPU_EXACT_PIECE_TRIES 2
#define GS_CPU_EXACT_SUM(T, ctype)                                                           \
    static void sum_exact_##T(const void *in, int64_t lo, int64_t hi, gs_exact *acc)         \
    {                                                                                        \
        enum { FIRST = GS_CPU_EXACT_BIN_FIRST_##T, COUNT = GS_CPU_EXACT_BIN_COUNT_##T };     \
        enum { ROWS = sizeof(ctype) == 8 ? 2 : 1 };                                          \
        const ctype *x = in;                                                                 \
        uint32_t special = 0;                                                                \
        struct grids g;                                                                      \
        int have = 0;                                                                        \
        ctype pad[GS_CPU_EXACT_BLOCK];                                                       \
        int64_t bins[ROWS][COUNT]; /* cleared when first used */                             \
        int64_t binned = -1;       /* elements in the bins; -1: not cleared yet */           \
        for (int64_t b = lo; b < hi; b += GS_CPU_EXACT_BLOCK) {                              \
            const int64_t end = hi - b < GS_CPU_EXACT_BLOCK ? hi : b + GS_CPU_EXACT_BLOCK;   \
            int n;                                                                           \
            const ctype *xb = pad_block(x + b, (int)(end - b), sizeof *x, pad, &n);          \
            double total[2];                                                                 \
            if (GS_CPU_EXACT_TRY(T, &g, have, xb, n, sum_block_##T(xb, n, &g, total))) {     \
                gs_exact_add_f64(acc, total[0]);                                             \
                gs_exact_add_f64(acc, total[1]);                                             \
            } else {                                                                         \
                /* a few stray elements: the rest of the block still in pieces */            \
                int misses = 0;                                                              \
                for (int p = 0; p < n; p += GS_CPU_EXACT_PIECE) {                            \
                    const int m = n - p < GS_CPU_EXACT_PIECE ? n - p : GS_CPU_EXACT_PIECE;   \
                    if (have && misses < GS_CPU_EXACT_PIECE_TRIES && sum_block_##T(xb + p, m, &g, total)) { \
                        gs_exact_add_f64(acc, total[0]);                                     \
                        gs_exact_add_f64(acc, total[1]);                                     \
                        misses = 0;                                                          \
                        continue;                                                            \
                    }                                                                        \
                    misses++;                                                                \
                    if (binned < 0 || binned >= GS_CPU_EXACT_BIN_ADDS) {                     \
                        if (binned < 0) memset(bins, 0, sizeof bins);                        \
                        if (binned > 0) sum_bins_flush(acc, bins[0], ROWS, COUNT, FIRST);    \
                        binned = 0;                                                          \
                    }                                                                        \
                    binned += m;                                                             \
                    for (int i = p; i < p + m && b + i < end; i++) {                         \
                        uint64_t mant;                                                       \
                        int bit, negative;                                                   \
                        special |= gs_exact_decode_##T(xb[i], &mant, &bit, &negative);       \
                        /* a NaN or an infinity: mant = 0, bit = 0, bin 0 */                 \
                        const int j = bit ? bit - FIRST : 0;                                 \
                        const uint64_t low = ROWS == 2 ? mant & ((1u << GS_CPU_EXACT_BIN_SPLIT) - 1) : mant; \
                        bins[0][j] += signed_by((int64_t)low, negative);                     \
                        if (ROWS == 2)                                                       \
                            bins[ROWS - 1][j] += signed_by((int64_t)(mant >> GS_CPU_EXACT_BIN_SPLIT), negative); \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        if (binned > 0) sum_bins_flush(acc, bins[0], ROWS, COUNT, FIRST);                    \
        acc->special |= special;                                                             \
    }

GS_CPU_EXACT_SUM(f32, float)
GS_CPU_EXACT_SUM(f64, double)

/* ---- scans ------------------------------------------------------------------------ */

/* An element goes into a scan window when its significand's bit 0 lies
 * 0..47 bits above the window's bottom: it then adds less than
 * 2^(53 + 47) = 2^100 to a, which opens below 2^96 in magnitude; a window
 * lives for one block of 2^10 elements, so |a| < 2^96 + 2^10 * 2^100 <
 * 2^111 and never overflows. */
#define GS_CPU_EXACT_SCAN_SHIFT 47u

/* V = (a + f) * 2^(32w + GS_EXACT_LSB_EXP), f in [0, 1) the value of
 * e's digits below w (normalized; only scan_add_below changes them while
 * the window is open), below = (f != 0). e's digits from w up are stale
 * until scan_flush, but those above w + 3 hold the sign's fill `fill` (0
 * or -1) of the value at the last flush or opening: a flush rewrites them
 * only when a's sign differs, and the top digit is looked for from w + 3
 * (or the highest digit a carry reached) down, not from the top of the
 * state. */
struct scan_window {
    gs_exact e;
    gs_i128 a;
    int w;
    int below;
    int64_t fill;
};

/* The highest digit a normalized state's top can be at: w + 3 after a
 * flush, or `changed` (gs_exact_add_carried's answer) if higher. */
static int scan_top_from(const struct scan_window *win, int changed)
{
    const int from = win->w + 3 > changed ? win->w + 3 : changed;
    return from < GS_EXACT_DIGITS - 1 ? from : GS_EXACT_DIGITS - 1;
}

/* Opens the window on a normalized state whose top digit is h: w = h - 2,
 * so |a| < 2^96 and a holds at least 64 bits of a non-zero value. */
static void scan_open_at(struct scan_window *win, int h)
{
    const int w = h > 2 ? h - 2 : 0;
    /* the sign's fill above h (the top digit carries its own sign) */
    gs_i128 a = h < GS_EXACT_DIGITS - 1 && win->e.digit[GS_EXACT_DIGITS - 1] < 0 ? -1 : 0;
    for (int j = h; j >= w; j--) a = a * ((gs_i128)1 << 32) + win->e.digit[j];
    int below = 0;
    for (int j = w - 1; j >= 0 && !below; j--) below = win->e.digit[j] != 0;
    win->a = a;
    win->w = w;
    win->below = below;
    win->fill = win->e.digit[GS_EXACT_DIGITS - 1] < 0 ? -1 : 0;
}

static void scan_open(struct scan_window *win, const gs_exact *carry)
{
    win->e = *carry;
    gs_exact_normalize(&win->e);
    scan_open_at(win, gs_exact_top_digit(&win->e, GS_EXACT_DIGITS - 1));
}

/* Writes a back into e's digits from w up: e = V exactly, normalized (a
 * takes digits w..w+3; those above keep their fill unless a's sign
 * changed it). */
static void scan_flush(struct scan_window *win)
{
    gs_i128 a = win->a;
    const int64_t fill = a < 0 ? -1 : 0;
    int j = win->w;
    for (; j < GS_EXACT_DIGITS - 1 && (j < win->w + 4 || fill != win->fill); j++) {
        win->e.digit[j] = (int64_t)(a & 0xffffffff);
        a >>= 32;   /* arithmetic: the floor */
    }
    if (j == GS_EXACT_DIGITS - 1) win->e.digit[j] = (int64_t)a;
    win->fill = fill;
}

/* An element whose bit 0 lies below the window's, bit < 32w: its three
 * digits (gs_exact_add_raw's) below w go into f's digits with their
 * carries, f staying normalized, and those from w up, with the carry out
 * of f (-1, 0 or 1), into a (each below 2^96); the window stays. Returns
 * a; *below is f != 0 again. */
static inline gs_i128 scan_add_below(gs_exact *e, int w, gs_i128 a, uint64_t m, int bit, int negative, int *below)
{
    int64_t piece[3];
    const int i = gs_exact_split(m, bit, piece);
    for (int k = 0; k < 3; k++) piece[k] = signed_by(piece[k], negative);
    int64_t carry = 0, any = 0;
    int j = i;
    for (; j < w && (j < i + 3 || carry != 0); j++) {
        const int64_t d = e->digit[j] + (j < i + 3 ? piece[j - i] : 0) + carry;
        carry = d >> 32;   /* arithmetic: the floor */
        e->digit[j] = d & 0xffffffff;
        any |= e->digit[j];
    }
    a += carry;
    for (int k = w - i; k < 3; k++) a += (gs_i128)piece[k] * ((gs_i128)1 << (32 * (i + k - w)));
    if (any) {
        *below = 1;
    } else {   /* the digits it changed are 0: so may f be */
        *below = 0;
        for (int k = i - 1; k >= 0 && !*below; k--) *below = e->digit[k] != 0;
        for (int k = j; k < w && !*below; k++) *below = e->digit[k] != 0;
    }
    return a;
}

/* The fallback of an add: V += sign * m * 2^bit exactly, and re-open. */
static void scan_add_exact(struct scan_window *win, uint64_t m, int bit, int negative)
{
    scan_flush(win);
    const int changed = gs_exact_add_carried(&win->e, m, bit, negative);
    scan_open_at(win, gs_exact_top_digit(&win->e, scan_top_from(win, changed)));
}

static void scan_close(struct scan_window *win, gs_exact *carry)
{
    scan_flush(win);
    *carry = win->e;
}

/* The fallback of a rounding: a special result; or from the window when it
 * decides; else from the exact state (the window then re-opens on V's top
 * digit, where it decides). Returns the IEEE bits without the sign. */
static uint64_t scan_round_slow(struct scan_window *win, int prec, int qmin, int max_biased, int *negative)
{
    uint64_t bits;
    if (gs_exact_round_window(win->a, win->below, 32 * win->w, prec, qmin, max_biased, &bits, negative))
        return bits;
    scan_flush(win);
    const int top = gs_exact_top_digit(&win->e, scan_top_from(win, 0));
    bits = gs_exact_round_bits(&win->e, top, prec, qmin, max_biased, negative);
    scan_open_at(win, top);
    return bits;
}

/* A slow path of scan_batch_T: the locals into win, the call, back. */
#define GS_CPU_EXACT_SLOW(call)                                                              \
    do {                                                                                     \
        win->a = a;                                                                          \
        win->below = below;                                                                  \
        win->e.special = special;                                                            \
        call;                                                                                \
        a = win->a;                                                                          \
        wbit = 32 * win->w;                                                                  \
        below = win->below;                                                                  \
    } while (0)

/* round_slow_T(win), round_fast_T(a, 32w, below, out): V rounded to T.
 * The fast path: t = a >> k, k such that t's leading bit (of a positive
 * a; the highest bit unlike the sign of a negative one) is bit 62; the
 * bits shifted out and f make a sticky bit, or-ed into bit 0: then t
 * stands for V / 2^k rounding-wise (t and t | 1 lie on the same side of
 * every rounding boundary of T, which are even; V lies strictly between t
 * and t + 1 when the sticky bit is set). The int64 to float conversion
 * rounds t once, to nearest even (|t| >= 2^62: at least 9 bits go; the
 * library never leaves the default rounding mode), and E
 * scales it exactly by adding to the exponent field when the result is
 * normal: E_MIN and E_MAX bound E so that the converted value's exponent
 * (62 or 63) plus E stays within T's normal range.
 * round_fast_T returns 0 where the fast path does not apply.
 *
 * scan_exact_T(in, out, lo, hi, carry, inclusive): the scan of in[lo..hi)
 * from the exact *carry, which it leaves normalized after hi: each block by
 * scan_block_T where it fits, else through a window. */
#define GS_CPU_EXACT_SCAN(T, ctype, utype, prec, qmin, max_biased, E_MIN, E_MAX)             \
    static ctype round_slow_##T(struct scan_window *win)                                     \
    {                                                                                        \
        if (win->e.special) /* NaN or an infinity: the digits do not matter */               \
            return gs_exact_round_##T##_from(&win->e, GS_EXACT_DIGITS - 1);                  \
        int negative;                                                                        \
        const utype u = (utype)scan_round_slow(win, prec, qmin, max_biased, &negative)       \
                      | (utype)negative << (8 * sizeof(utype) - 1);                          \
        ctype r;                                                                             \
        memcpy(&r, &u, sizeof r);                                                            \
        return r;                                                                            \
    }                                                                                        \
                                                                                             \
    static inline int round_fast_##T(gs_i128 a, int wbit, int below, ctype *out)             \
    {                                                                                        \
        const uint64_t lo = (uint64_t)a, hi = (uint64_t)((gs_u128)a >> 64);                  \
        const uint64_t lead = hi ^ (uint64_t)((int64_t)hi >> 63); /* |a| - (a < 0) >> 64 */  \
        if (lead == 0) return 0;                                                             \
        const int k = 65 - GS_EXACT_CLZ64(lead); /* a >> k: its leading bit at bit 62 */     \
        const int E = k + wbit + GS_EXACT_LSB_EXP;                                           \
        if (E > (E_MAX) + 1) { /* |V| >= 2^(62 + E), past T's largest binade: +-inf */       \
            const utype u = (utype)(max_biased) << (prec - 1)                                \
                          | (utype)(a < 0) << (8 * sizeof(utype) - 1);                       \
            memcpy(out, &u, sizeof u);                                                       \
            return 1;                                                                        \
        }                                                                                    \
        if (E < (E_MIN) || E > (E_MAX)) return 0;                                            \
        const int64_t t = (int64_t)((lo >> k) | (hi << (64 - k)))                            \
                        | (int64_t)(((lo << (64 - k)) != 0) | below);                        \
        ctype r = (ctype)t;                                                                  \
        utype u;                                                                             \
        memcpy(&u, &r, sizeof u);                                                            \
        u += (utype)E << (prec - 1);                                                         \
        memcpy(out, &u, sizeof u);                                                           \
        return 1;                                                                            \
    }                                                                                        \
                                                                                             \
    /* in[lo..hi) (at most a block) through the window; `inclusive` is a                     \
     * constant where it is inlined. */                                                      \
    static inline __attribute__((always_inline)) void scan_batch_##T(                        \
        struct scan_window *win, const ctype *x, ctype *y, int64_t lo, int64_t hi,           \
        const int inclusive)                                                                 \
    {                                                                                        \
        /* the window's hot fields in locals (win only around the slow paths) */             \
        gs_i128 a = win->a;                                                                  \
        int wbit = 32 * win->w, below = win->below;                                          \
        uint32_t special = win->e.special;                                                   \
        for (int64_t i = lo; i < hi; i++) {                                                  \
            uint64_t m;                                                                      \
            int bit, negative;                                                               \
            const uint32_t sp = gs_exact_decode_##T(x[i], &m, &bit, &negative);              \
            if (!inclusive && (special || !round_fast_##T(a, wbit, below, &y[i])))           \
                GS_CPU_EXACT_SLOW(y[i] = round_slow_##T(win));                               \
            const int sh = bit - wbit;                                                       \
            if (sp)                                                                          \
                special |= sp;                                                               \
            else if ((unsigned)sh <= GS_CPU_EXACT_SCAN_SHIFT)                                \
                a = add_shifted(a, m, sh, negative);                                         \
            else if (m && sh < 0)                                                            \
                a = scan_add_below(&win->e, win->w, a, m, bit, negative, &below);            \
            else if (m)                                                                      \
                GS_CPU_EXACT_SLOW(scan_add_exact(win, m, bit, negative));                    \
            if (inclusive && (special || !round_fast_##T(a, wbit, below, &y[i])))            \
                GS_CPU_EXACT_SLOW(y[i] = round_slow_##T(win));                               \
        }                                                                                    \
        win->a = a;                                                                          \
        win->below = below;                                                                  \
        win->e.special = special;                                                            \
    }                                                                                        \
                                                                                             \
    static void scan_exact_##T(const void *in, void *out, int64_t lo, int64_t hi,            \
                               gs_exact *carry, int inclusive)                               \
    {                                                                                        \
        const ctype *x = in;                                                                 \
        ctype *y = out;                                                                      \
        ctype buf[GS_CPU_EXACT_BLOCK]; /* a block's outputs until all are taken (in place) */ \
        ctype pad[GS_CPU_EXACT_BLOCK];                                                       \
        struct grids g;                                                                      \
        int have = 0;                                                                        \
        gs_exact_normalize(carry);                                                           \
        for (int64_t b = lo; b < hi; b += GS_CPU_EXACT_BLOCK) {                              \
            const int n = hi - b < GS_CPU_EXACT_BLOCK ? (int)(hi - b) : GS_CPU_EXACT_BLOCK;  \
            int np;                                                                          \
            const ctype *xb = pad_block(x + b, n, sizeof *x, pad, &np);                      \
            /* the outputs straight into y, but in place or past its end into buf */         \
            ctype *yb = x != y && np == n ? y + b : buf;                                     \
            struct carry_parts parts;                                                        \
            double total[2];                                                                 \
            if (carry_split(carry, &parts)                                                   \
                && GS_CPU_EXACT_TRY(T, &g, have, xb, np,                                     \
                                    scan_block_##T(xb, yb, np, &g, &parts, inclusive, total))) { \
                if (yb == buf) memcpy(y + b, buf, (size_t)n * sizeof *buf);                  \
                exact_add_f64_carried(carry, total[0]);                                      \
                exact_add_f64_carried(carry, total[1]);                                      \
                continue;                                                                    \
            }                                                                                \
            struct scan_window win;                                                          \
            scan_open(&win, carry);                                                          \
            if (inclusive) scan_batch_##T(&win, x, y, b, b + n, 1);                          \
            else scan_batch_##T(&win, x, y, b, b + n, 0);                                    \
            scan_close(&win, carry);                                                         \
        }                                                                                    \
    }

/* E bounds: f32 normal exponents -126..127, f64 -1022..1023 */
GS_CPU_EXACT_SCAN(f32, float, uint32_t, 24, -149, 255, -126 - 62, 127 - 63)
GS_CPU_EXACT_SCAN(f64, double, uint64_t, 53, -1074, 2047, -1022 - 62, 1023 - 63)

typedef void (*sum_exact_fn)(const void *in, int64_t lo, int64_t hi, gs_exact *acc);
typedef void (*scan_exact_fn)(const void *in, void *out, int64_t lo, int64_t hi, gs_exact *carry,
                              int inclusive);

void gs_cpu_reduce_exact(gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    const sum_exact_fn sum = type == GS_F32 ? sum_exact_f32 : sum_exact_f64;
    const int threads = gs_cpu_team_size(n);
    if (threads == 1) {
        sum(in, 0, n, acc);
        return;
    }
    gs_exact partial[threads];
    int team = 1;
    GS_CPU_OMP(omp parallel num_threads(threads))
    {
        const int t = gs_cpu_thread_index();
        int64_t lo, hi;
        gs_cpu_split_range(0, n, gs_cpu_team_threads(), t, &lo, &hi);
        gs_exact_clear(&partial[t]);
        sum(in, lo, hi, &partial[t]);
        if (t == 0) team = gs_cpu_team_threads();
    }
    for (int t = 0; t < team; t++) gs_exact_merge(acc, &partial[t]);
}

void gs_cpu_scan_exact(gs_type type, gs_scan_kind kind, const void *in, void *out, int64_t n,
                       gs_exact *carry)
{
    const sum_exact_fn sum = type == GS_F32 ? sum_exact_f32 : sum_exact_f64;
    const scan_exact_fn scan = type == GS_F32 ? scan_exact_f32 : scan_exact_f64;
    const int inclusive = kind == GS_INCLUSIVE;
    const int threads = gs_cpu_team_size(n);
    if (threads == 1) {
        scan(in, out, 0, n, carry, inclusive);
        return;
    }
    gs_exact total[threads];
    int team = 1;
    GS_CPU_OMP(omp parallel num_threads(threads))
    {
        const int t = gs_cpu_thread_index(), threads_now = gs_cpu_team_threads();
        int64_t lo, hi;
        gs_cpu_split_range(0, n, threads_now, t, &lo, &hi);
        gs_exact_clear(&total[t]);
        sum(in, lo, hi, &total[t]);
        GS_CPU_OMP(omp barrier)
        gs_exact mine = *carry;
        for (int u = 0; u < t; u++) gs_exact_merge(&mine, &total[u]);
        scan(in, out, lo, hi, &mine, inclusive);
        if (t == 0) team = threads_now;
    }
    for (int t = 0; t < team; t++) gs_exact_merge(carry, &total[t]);
    gs_exact_normalize(carry);
}
