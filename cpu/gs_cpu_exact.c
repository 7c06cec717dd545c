/*
 * gs_cpu_exact.c - the CPU backend's --exact kernels: exact sums and prefix
 * sums of f32 and f64 in gs_exact states (gs_exact.h).
 *
 * Both keep the hot part of the exact value in one 128-bit integer `a`
 * counted in units of 2^(32w + GS_EXACT_LSB_EXP) for a window digit w: an
 * element whose significand, shifted to its exponent, lies in the window
 * is one shift and one 128-bit add. Elements outside it, rare on data of
 * low dynamic range, take the slower exact paths of gs_exact.h.
 *
 * Reductions (struct sum_window): a is a private partial sum, folded into
 * the carry-save state every GS_CPU_EXACT_FOLD elements; w follows the
 * largest elements seen (an element above the window folds a and moves w
 * up to it), elements below the window are added to the carry-save state.
 *
 * Scans: two passes, as the plain blocked scan. Each thread sums its block
 * exactly (as above), every thread merges the totals before its own onto
 * the carry, and each scans its block from there through a rounding window
 * (struct scan_window): the running value is V = (a + f) * 2^(32w) with f
 * the digits below digit w, which no window add touches (of f the rounding
 * needs only whether it is zero). Each prefix rounds from a and that sticky
 * flag: the top 63 bits of a, sticky in bit 0, converted by the hardware's
 * int64-to-float conversion (one IEEE round to nearest even) and scaled by
 * adding to the exponent field. Anything else (an element below or too far
 * above the window, a result that is subnormal, infinite or too small for
 * a after cancellation) falls back to the exact state: a is written back
 * into the digits, the element added with its carries or the prefix
 * rounded from the digits (gs_exact_round_window, gs_exact_round_bits),
 * and the window re-opened at the new top digit; it is also re-opened after
 * every batch of GS_CPU_EXACT_SCAN_BATCH elements, which bounds |a|.
 */
#include "gs_cpu.h"

/* a + sign * m * 2^sh for 0 <= sh <= 63, the shift in 64-bit halves and
 * both signs computed (what compilers make of a 128-bit variable shift and
 * a branch-free negation is slower). */
static inline gs_i128 add_shifted(gs_i128 a, uint64_t m, int sh, int negative)
{
    const gs_u128 v = (gs_u128)((m >> 1) >> (63 - sh)) << 64 | (m << sh);
    const gs_u128 plus = (gs_u128)a + v, minus = (gs_u128)a - v;
    return (gs_i128)(negative ? minus : plus);
}

/* ---- reductions ------------------------------------------------------------------- */

/* Sum windows take elements whose significand's bit 0 lies 0..63 bits above
 * the window's bottom: each adds less than 2^(53 + 63) = 2^116 to a, and a
 * is folded every 2^10 elements, so |a| < 2^126. */
#define GS_CPU_EXACT_SUM_SHIFT 63u
#define GS_CPU_EXACT_FOLD 1024

/* A thread's partial sum: acc (carry-save) + a * 2^(32w). */
struct sum_window {
    gs_i128 a;
    int w;
};

/* acc += a * 2^(32w) in carry-save form (each digit moves by less than
 * 2^32: one counted add), a = 0. */
static void sum_fold(struct sum_window *s, gs_exact *acc)
{
    const gs_u128 u = (gs_u128)s->a;
    gs_exact_count(acc, 1);
    acc->digit[s->w] += (int64_t)(u & 0xffffffff);
    acc->digit[s->w + 1] += (int64_t)((u >> 32) & 0xffffffff);
    acc->digit[s->w + 2] += (int64_t)((u >> 64) & 0xffffffff);
    acc->digit[s->w + 3] += (int64_t)(s->a >> 96);
    s->a = 0;
}

/* An element outside the window: one above it folds a and moves the window
 * to it (its bit 0 then 32..63 bits above the bottom: it leaves room for
 * elements 2^32 times smaller); one below it goes to acc directly. */
static void sum_miss(struct sum_window *s, gs_exact *acc, uint64_t m, int bit, int negative)
{
    if (bit - 32 * s->w > (int)GS_CPU_EXACT_SUM_SHIFT) {
        sum_fold(s, acc);
        s->w = (bit >> 5) - 1;
        const gs_i128 v = (gs_i128)((gs_u128)m << (bit - 32 * s->w));
        s->a = negative ? -v : v;
    } else {
        gs_exact_count(acc, 1);
        gs_exact_add_raw(acc, m, bit, negative);
    }
}

/* sum_exact_T(in, lo, hi, acc): *acc (normalized or not) += in[lo..hi)
 * exactly. */
#define GS_CPU_EXACT_SUM(T, ctype)                                                           \
    static void sum_exact_##T(const void *in, int64_t lo, int64_t hi, gs_exact *acc)         \
    {                                                                                        \
        const ctype *x = in;                                                                 \
        struct sum_window s = {0, 0};                                                        \
        gs_i128 a = 0; /* s.a, in a local but around sum_miss */                             \
        int wbit = 0;                                                                        \
        uint32_t special = 0;                                                                \
        for (int64_t b = lo; b < hi; b += GS_CPU_EXACT_FOLD) {                               \
            const int64_t end = hi - b < GS_CPU_EXACT_FOLD ? hi : b + GS_CPU_EXACT_FOLD;     \
            for (int64_t i = b; i < end; i++) {                                              \
                uint64_t m;                                                                  \
                int bit, negative;                                                           \
                special |= gs_exact_decode_##T(x[i], &m, &bit, &negative);                   \
                const int sh = bit - wbit;                                                   \
                if ((unsigned)sh <= GS_CPU_EXACT_SUM_SHIFT) {                                \
                    a = add_shifted(a, m, sh, negative);                                     \
                } else if (m) {                                                              \
                    s.a = a;                                                                 \
                    sum_miss(&s, acc, m, bit, negative);                                     \
                    a = s.a;                                                                 \
                    wbit = 32 * s.w;                                                         \
                }                                                                            \
            }                                                                                \
            s.a = a;                                                                         \
            sum_fold(&s, acc);                                                               \
            a = 0;                                                                           \
        }                                                                                    \
        acc->special |= special;                                                             \
    }

GS_CPU_EXACT_SUM(f32, float)
GS_CPU_EXACT_SUM(f64, double)

/* ---- scans ------------------------------------------------------------------------ */

/* An element goes into a scan window when its significand's bit 0 lies
 * 0..47 bits above the window's bottom: it then adds less than
 * 2^(53 + 47) = 2^100 to a. */
#define GS_CPU_EXACT_SCAN_SHIFT 47u
/* Elements between two re-openings of the window: a opens below 2^96 in
 * magnitude and grows by less than 2^100 per element, so |a| < 2^96 +
 * 2^20 * 2^100 < 2^121 and never overflows. */
#define GS_CPU_EXACT_SCAN_BATCH ((int64_t)1 << 20)

/* V = (a + f) * 2^(32w + GS_EXACT_LSB_EXP), f in [0, 1) the value of
 * e's digits below w (normalized, untouched while the window is open),
 * below = (f != 0). e's digits from w up are stale until scan_flush. */
struct scan_window {
    gs_exact e;
    gs_i128 a;
    int w;
    int below;
};

/* Opens the window on a normalized state at its top digit h: w = h - 2,
 * so |a| < 2^96 and a holds at least 64 bits of a non-zero value. */
static void scan_open_here(struct scan_window *win)
{
    const int h = gs_exact_top_digit(&win->e, GS_EXACT_DIGITS - 1);
    const int w = h > 2 ? h - 2 : 0;
    /* the sign's fill above h (the top digit carries its own sign) */
    gs_i128 a = h < GS_EXACT_DIGITS - 1 && win->e.digit[GS_EXACT_DIGITS - 1] < 0 ? -1 : 0;
    for (int j = h; j >= w; j--) a = a * ((gs_i128)1 << 32) + win->e.digit[j];
    int below = 0;
    for (int j = w - 1; j >= 0 && !below; j--) below = win->e.digit[j] != 0;
    win->a = a;
    win->w = w;
    win->below = below;
}

static void scan_open(struct scan_window *win, const gs_exact *carry)
{
    win->e = *carry;
    gs_exact_normalize(&win->e);
    scan_open_here(win);
}

/* Writes a back into e's digits from w up: e = V exactly, normalized. */
static void scan_flush(struct scan_window *win)
{
    gs_i128 a = win->a;
    for (int j = win->w; j < GS_EXACT_DIGITS - 1; j++) {
        win->e.digit[j] = (int64_t)(a & 0xffffffff);
        a >>= 32;   /* arithmetic: the floor */
    }
    win->e.digit[GS_EXACT_DIGITS - 1] = (int64_t)a;
}

/* The fallback of an add: V += sign * m * 2^bit exactly, and re-open. */
static void scan_add_exact(struct scan_window *win, uint64_t m, int bit, int negative)
{
    scan_flush(win);
    gs_exact_add_carried(&win->e, m, bit, negative);
    scan_open_here(win);
}

/* Re-opens the window on V (after a batch: the bound on |a| starts anew). */
static void scan_reopen(struct scan_window *win)
{
    scan_flush(win);
    scan_open_here(win);
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
    const int top = gs_exact_top_digit(&win->e, GS_EXACT_DIGITS - 1);
    bits = gs_exact_round_bits(&win->e, top, prec, qmin, max_biased, negative);
    scan_open_here(win);
    return bits;
}

/* A slow path of scan_batch_T: the locals into win, the call, back. */
#define GS_CPU_EXACT_SLOW(call)                                                              \
    do {                                                                                     \
        win->a = a;                                                                          \
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
 * from the exact *carry, which it leaves normalized after hi. */
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
    /* in[lo..hi) (at most a batch) through the window; `inclusive` is a                     \
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
            else if (m)                                                                      \
                GS_CPU_EXACT_SLOW(scan_add_exact(win, m, bit, negative));                    \
            if (inclusive && (special || !round_fast_##T(a, wbit, below, &y[i])))            \
                GS_CPU_EXACT_SLOW(y[i] = round_slow_##T(win));                               \
        }                                                                                    \
        win->a = a;                                                                          \
        win->e.special = special;                                                            \
    }                                                                                        \
                                                                                             \
    static void scan_exact_##T(const void *in, void *out, int64_t lo, int64_t hi,            \
                               gs_exact *carry, int inclusive)                               \
    {                                                                                        \
        struct scan_window win;                                                              \
        scan_open(&win, carry);                                                              \
        for (int64_t b = lo; b < hi; b += GS_CPU_EXACT_SCAN_BATCH) {                         \
            int64_t end = hi;                                                                \
            if (hi - b > GS_CPU_EXACT_SCAN_BATCH) end = b + GS_CPU_EXACT_SCAN_BATCH;         \
            if (b > lo) scan_reopen(&win);                                                   \
            if (inclusive) scan_batch_##T(&win, in, out, b, end, 1);                         \
            else scan_batch_##T(&win, in, out, b, end, 0);                                   \
        }                                                                                    \
        scan_close(&win, carry);                                                             \
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
