/*
 * gs_verify.c - the independent reference: plain loops that apply the rules
 * of gs_rules.h one element at a time, in index order. It shares nothing with
 * the backends but gs_rules.h's scalar functions, so that a fast kernel and
 * its check do not share a mistake.
 *
 * Large inputs (GS_VERIFY_PARALLEL_MIN elements and more, outside another
 * parallel region) are split into contiguous blocks, four per OpenMP thread;
 * each block runs the same serial walk, and the blocks' partials are combined
 * in block order. Integers and --exact's sums stay exact (their combines are
 * associative); the fp64 float reference sums in another order, which the
 * bounds of gs_verify.h allow (a blocked sum's error is no larger than a
 * serial one's).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gs_verify.h"

/* The per-element helpers below, called from several walks now, are inlined
 * into each as they were into the one walk before (not inlined, a scan check
 * runs half again as long). */
#define ALWAYS_INLINE inline __attribute__((always_inline))

/* One input element, widened losslessly: exactly one of the three is set,
 * by the type's class. */
typedef struct element {
    int64_t i;
    uint64_t u;
    double f;
} element;

static ALWAYS_INLINE element load_element(gs_type type, const void *in, int64_t k)
{
    element e = {0, 0, 0.0};
    switch (type) {
    case GS_I32: e.i = ((const int32_t *)in)[k]; break;
    case GS_I64: e.i = ((const int64_t *)in)[k]; break;
    case GS_U32: e.u = ((const uint32_t *)in)[k]; break;
    case GS_U64: e.u = ((const uint64_t *)in)[k]; break;
    case GS_F32: e.f = ((const float *)in)[k]; break;
    case GS_F64: e.f = ((const double *)in)[k]; break;
    case GS_TYPE_COUNT: break;
    }
    return e;
}

/* The element as a reduction partial of (type, op): the gs_acc member that
 * gs_reduce_acc_kind() names. Signed integers enter a wrapping product as the
 * same 64 bits (two's complement), so the product is NumPy's. */
static ALWAYS_INLINE gs_acc element_partial(gs_type type, gs_op op, element e)
{
    gs_acc a;
    a.w = 0;
    switch (gs_reduce_acc_kind(type, op)) {
    case GS_ACC_S128: a.s = e.i; break;
    case GS_ACC_U128: a.w = e.u; break;
    case GS_ACC_F64: a.f = e.f; break;
    case GS_ACC_I64: a.i = e.i; break;
    case GS_ACC_U64: a.u = gs_type_is_signed(type) ? (uint64_t)e.i : e.u; break;
    }
    return a;
}

/* One step of a scan's 64-bit carry: integer prefix sums wrap modulo 2^64,
 * every other (type, op) combines as a reduction does. */
static ALWAYS_INLINE gs_acc scan_step(gs_type type, gs_op op, gs_acc prefix, element e)
{
    gs_acc next;
    next.w = 0;
    if (!gs_type_is_float(type) && op == GS_SUM)
        next.u = prefix.u + (gs_type_is_signed(type) ? (uint64_t)e.i : e.u);
    else
        next = gs_acc_combine(type, op, prefix, element_partial(type, op, e));
    return next;
}

/* Element k of a scan's output (of type out_type) in the carry's member:
 * u for integers (the same 64 bits as i), f for floats. */
static ALWAYS_INLINE gs_acc load_output(gs_type out_type, const void *got, int64_t k)
{
    element e = load_element(out_type, got, k);
    gs_acc a;
    a.w = 0;
    if (gs_type_is_float(out_type))
        a.f = e.f;
    else
        a.u = gs_type_is_signed(out_type) ? (uint64_t)e.i : e.u;
    return a;
}

/* Unit roundoff of a float type, and its smallest subnormal: the absolute
 * error of rounding a value below the normal range. */
static double unit_roundoff(gs_type t) { return t == GS_F32 ? 0x1p-24 : 0x1p-53; }
static double smallest_subnormal(gs_type t) { return t == GS_F32 ? 0x1p-149 : 0x1p-1074; }

/* 1 when a float result `got` (already in out_type) matches the fp64
 * reference: NaN meets NaN, an infinity the same infinity (of the reference
 * rounded to out_type), min and max exactly, sums and products within the
 * bounds of gs_verify.h (`abs_sum`: S of the elements the result covers). */
static ALWAYS_INLINE int float_ok(gs_type out_type, gs_op op, double got, double ref, int64_t n_global,
                    double abs_sum)
{
    if (isnan(got) || isnan(ref)) return isnan(got) && isnan(ref);
    const double ref_out = out_type == GS_F32 ? (double)(float)ref : ref;
    if (isinf(got) || isinf(ref_out)) return got == ref_out;
    if (op == GS_MIN || op == GS_MAX) return got == ref;
    const double spread = op == GS_SUM ? abs_sum : fabs(ref);
    const double bound =
        unit_roundoff(out_type) * fabs(ref) + 2.0 * (double)n_global * 0x1p-53 * spread +
        smallest_subnormal(out_type);
    return fabs(got - ref) <= bound;
}

gs_acc gs_verify_reduce_ref_serial(gs_type type, gs_op op, const void *in, int64_t n)
{
    gs_acc acc = gs_acc_identity(type, op);
    for (int64_t k = 0; k < n; k++)
        acc = gs_acc_combine(type, op, acc, element_partial(type, op, load_element(type, in, k)));
    return acc;
}

double gs_verify_abs_sum_serial(gs_type type, const void *in, int64_t n)
{
    double sum = 0.0;
    if (gs_type_is_float(type))
        for (int64_t k = 0; k < n; k++) sum += fabs(load_element(type, in, k).f);
    return sum;
}

/* The number of blocks a walk over n elements is split into (1: serial):
 * four per thread, taken dynamically, so that a thread the system holds back
 * does not hold back the others. */
static int parallel_blocks(int64_t n)
{
#ifdef _OPENMP
    if (n >= GS_VERIFY_PARALLEL_MIN && !omp_in_parallel()) {
        const int t = omp_get_max_threads();
        return t > 1 ? 4 * t : 1;
    }
#endif
    (void)n;
    return 1;
}

/* Block b of nb over [0, n): [block_begin(b), block_begin(b + 1)). */
static int64_t block_begin(int64_t n, int nb, int b)
{
    return (int64_t)((unsigned __int128)n * (unsigned)b / (unsigned)nb);
}


/* One serial pass over a block of m elements, into the block's part. */
typedef void block_pass(gs_type type, gs_op op, const void *in, int64_t m, void *part);

/* `pass` over each of the nb blocks of in[0..n) in parallel, block b's
 * into parts + b * part_size. */
static void each_block(int nb, gs_type type, gs_op op, const void *in, int64_t n, block_pass *pass, void *parts,
                       size_t part_size)
{
    const size_t size = (size_t)gs_type_bytes(type);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int b = 0; b < nb; b++) {
        const int64_t first = block_begin(n, nb, b);
        pass(type, op, (const char *)in + (size_t)first * size, block_begin(n, nb, b + 1) - first,
             (char *)parts + (size_t)b * part_size);
    }
}

static void reduce_pass(gs_type type, gs_op op, const void *in, int64_t m, void *part)
{
    *(gs_acc *)part = gs_verify_reduce_ref_serial(type, op, in, m);
}

static void abs_sum_pass(gs_type type, gs_op op, const void *in, int64_t m, void *part)
{
    (void)op;
    *(double *)part = gs_verify_abs_sum_serial(type, in, m);
}

gs_acc gs_verify_reduce_ref(gs_type type, gs_op op, const void *in, int64_t n)
{
    const int nb = parallel_blocks(n);
    gs_acc *part = nb > 1 ? malloc((size_t)nb * sizeof *part) : NULL;
    if (!part) return gs_verify_reduce_ref_serial(type, op, in, n);
    each_block(nb, type, op, in, n, reduce_pass, part, sizeof *part);
    gs_acc acc = part[0];
    for (int b = 1; b < nb; b++) acc = gs_acc_combine(type, op, acc, part[b]);
    free(part);
    return acc;
}

double gs_verify_abs_sum(gs_type type, const void *in, int64_t n)
{
    const int nb = gs_type_is_float(type) ? parallel_blocks(n) : 1;
    double *part = nb > 1 ? malloc((size_t)nb * sizeof *part) : NULL;
    if (!part) return gs_verify_abs_sum_serial(type, in, n);
    each_block(nb, type, GS_SUM, in, n, abs_sum_pass, part, sizeof *part);
    double sum = 0.0;
    for (int b = 0; b < nb; b++) sum += part[b];
    free(part);
    return sum;
}

int gs_verify_reduce_ok(gs_type type, gs_op op, gs_acc got, gs_acc ref, int64_t n_global,
                        double abs_sum)
{
    switch (gs_reduce_acc_kind(type, op)) {
    case GS_ACC_S128: return got.s == ref.s;
    case GS_ACC_U128: return got.w == ref.w;
    case GS_ACC_I64: return got.i == ref.i;
    case GS_ACC_U64: return got.u == ref.u;
    case GS_ACC_F64: break;
    }
    return float_ok(gs_reduce_result_type(type, op), op, got.f, ref.f, n_global, abs_sum);
}

void gs_verify_scan_begin(gs_verify_scan *v, gs_type type, gs_op op, gs_scan_kind kind,
                          int64_t n_global, gs_acc carry_in, double abs_offset)
{
    v->type = type;
    v->op = op;
    v->kind = kind;
    v->n_global = n_global;
    v->prefix = carry_in;
    v->abs_prefix = abs_offset;
    v->checked = 0;
    v->wrong = 0;
    v->first_wrong = -1;
    v->exact = 0;
}

static void reduce_exact_serial(gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    for (int64_t k = 0; k < n; k++) {
        if (type == GS_F32) gs_exact_add_f32(acc, ((const float *)in)[k]);
        else gs_exact_add_f64(acc, ((const double *)in)[k]);
    }
}

static void exact_pass(gs_type type, gs_op op, const void *in, int64_t m, void *part)
{
    (void)op;
    gs_exact_clear(part);
    reduce_exact_serial(type, in, m, part);
}

/* Blocks summed apart and merged: exact sums do not depend on the order. */
void gs_verify_reduce_exact(gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    const int nb = parallel_blocks(n);
    gs_exact *part = nb > 1 ? malloc((size_t)nb * sizeof *part) : NULL;
    if (!part) {
        reduce_exact_serial(type, in, n, acc);
        return;
    }
    each_block(nb, type, GS_SUM, in, n, exact_pass, part, sizeof *part);
    for (int b = 0; b < nb; b++) gs_exact_merge(acc, &part[b]);
    free(part);
}

int gs_verify_same_f64(double got, double ref)
{
    return (got != got && ref != ref) || memcmp(&got, &ref, sizeof got) == 0;
}

void gs_verify_scan_begin_exact(gs_verify_scan *v, gs_type type, gs_scan_kind kind, const gs_exact *carry_in)
{
    gs_verify_scan_begin(v, type, GS_SUM, kind, 0, gs_acc_identity(type, GS_SUM), 0);
    v->exact = 1;
    v->exact_prefix = *carry_in;
}

/* The exact walk over elements [from, to) of a chunk, as scan_walk below. */
static int64_t exact_walk(gs_verify_scan *w, const void *in, const void *got, int64_t from, int64_t to,
                          int64_t *first)
{
    const int inclusive = w->kind == GS_INCLUSIVE;
    int64_t wrong = 0;
    for (int64_t k = from; k < to; k++) {
        int ok;
        if (w->type == GS_F32) {
            float ref = 0, out = ((const float *)got)[k];
            if (!inclusive) ref = gs_exact_round_f32(&w->exact_prefix);
            gs_exact_add_f32(&w->exact_prefix, ((const float *)in)[k]);
            if (inclusive) ref = gs_exact_round_f32(&w->exact_prefix);
            ok = (out != out && ref != ref) || memcmp(&out, &ref, sizeof out) == 0;
        } else {
            double ref = 0, out = ((const double *)got)[k];
            if (!inclusive) ref = gs_exact_round_f64(&w->exact_prefix);
            gs_exact_add_f64(&w->exact_prefix, ((const double *)in)[k]);
            if (inclusive) ref = gs_exact_round_f64(&w->exact_prefix);
            ok = gs_verify_same_f64(out, ref);
        }
        if (!ok) {
            if (wrong == 0) *first = k;
            wrong++;
        }
    }
    return wrong;
}

/* The serial walk over elements [from, to) of a chunk from w's prefix and
 * abs_prefix, which it advances: returns the wrong count and sets *first
 * (chunk index of the first wrong element; left alone when none). */
static int64_t scan_walk(gs_verify_scan *w, const void *in, const void *got, int64_t from, int64_t to,
                         int64_t *first)
{
    const gs_type out_type = gs_scan_output_type(w->type, w->op);
    const int inclusive = w->kind == GS_INCLUSIVE;
    int64_t wrong = 0;
    for (int64_t k = from; k < to; k++) {
        const element e = load_element(w->type, in, k);
        const gs_acc before = w->prefix;
        const double abs_before = w->abs_prefix;
        w->prefix = scan_step(w->type, w->op, w->prefix, e);
        w->abs_prefix += fabs(e.f);
        const gs_acc ref = inclusive ? w->prefix : before;
        const gs_acc out = load_output(out_type, got, k);
        const int ok = gs_type_is_float(w->type)
                           ? float_ok(out_type, w->op, out.f, ref.f, w->n_global,
                                      inclusive ? w->abs_prefix : abs_before)
                           : out.u == ref.u;
        if (!ok) {
            if (wrong == 0) *first = k;
            wrong++;
        }
    }
    return wrong;
}

/* The scan carry's identity: the 64-bit zero for integer sums (which wrap
 * modulo 2^64), the reduction's identity otherwise. */
static gs_acc scan_identity(gs_type type, gs_op op)
{
    gs_acc id;
    id.w = 0;
    if (gs_type_is_float(type) || op != GS_SUM) id = gs_acc_identity(type, op);
    return id;
}

/* prefix followed by a block whose carry from scan_identity is `total`. */
static gs_acc scan_join(gs_type type, gs_op op, gs_acc prefix, gs_acc total)
{
    gs_acc next;
    next.w = 0;
    if (!gs_type_is_float(type) && op == GS_SUM)
        next.u = prefix.u + total.u;
    else
        next = gs_acc_combine(type, op, prefix, total);
    return next;
}

/* The carry of in[0..m) from scan_identity, and its sum of |x|. Float sums,
 * --verify's common case, in plain loops (scan_step's fp64 addition, in the
 * same order) that cost about what reading the block does. */
static void block_total(gs_type type, gs_op op, const void *in, int64_t m, gs_acc *total,
                        double *abs_total)
{
    gs_acc t = scan_identity(type, op);
    double a = 0.0;
    if (type == GS_F32 && op == GS_SUM) {
        const float *x = in;
        for (int64_t k = 0; k < m; k++) {
            t.f += (double)x[k];
            a += fabs((double)x[k]);
        }
    } else if (type == GS_F64 && op == GS_SUM) {
        const double *x = in;
        for (int64_t k = 0; k < m; k++) {
            t.f += x[k];
            a += fabs(x[k]);
        }
    } else {
        for (int64_t k = 0; k < m; k++) {
            const element e = load_element(type, in, k);
            t = scan_step(type, op, t, e);
            a += fabs(e.f);
        }
    }
    *total = t;
    *abs_total = a;
}

/* Account a chunk of n elements with `wrong` wrong ones, the first at chunk
 * index `first`. */
static int64_t scan_account(gs_verify_scan *v, int64_t n, int64_t wrong, int64_t first)
{
    if (wrong && v->first_wrong < 0) v->first_wrong = v->checked + first;
    v->checked += n;
    v->wrong += wrong;
    return wrong;
}

int64_t gs_verify_scan_chunk_serial(gs_verify_scan *v, const void *in, const void *got, int64_t n)
{
    int64_t first = -1;
    const int64_t wrong = v->exact ? exact_walk(v, in, got, 0, n, &first) : scan_walk(v, in, got, 0, n, &first);
    return scan_account(v, n, wrong, first);
}

/* Two passes over nb blocks: each block's carry from the identity (and its
 * sum of |x|; --exact: its exact sum); a serial scan of those gives each
 * block's carry in; then each block walks from its carry in, as the serial
 * walk does. */
int64_t gs_verify_scan_chunk(gs_verify_scan *v, const void *in, const void *got, int64_t n)
{
    const int nb = parallel_blocks(n);
    struct block {
        gs_acc carry;      /* pass 1: the block's total; then its carry in */
        double abs_carry;  /* likewise for S */
        gs_exact exact;    /* likewise, --exact */
        int64_t wrong, first;
    } *blk = nb > 1 ? malloc((size_t)nb * sizeof *blk) : NULL;
    if (!blk) return gs_verify_scan_chunk_serial(v, in, got, n);
    const size_t size = (size_t)gs_type_bytes(v->type);
#ifdef _OPENMP
#pragma omp parallel
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int b = 0; b < nb; b++) {
            const int64_t first = block_begin(n, nb, b), m = block_begin(n, nb, b + 1) - first;
            const char *x = (const char *)in + (size_t)first * size;
            if (v->exact) {
                gs_exact_clear(&blk[b].exact);
                reduce_exact_serial(v->type, x, m, &blk[b].exact);
            } else {
                block_total(v->type, v->op, x, m, &blk[b].carry, &blk[b].abs_carry);
            }
        }
#ifdef _OPENMP
#pragma omp single
#endif
        if (v->exact) {
            for (int b = 0; b < nb; b++) {
                const gs_exact total = blk[b].exact;
                blk[b].exact = v->exact_prefix;
                gs_exact_merge(&v->exact_prefix, &total);
            }
        } else {
            gs_acc carry = v->prefix;
            double abs_carry = v->abs_prefix;
            for (int b = 0; b < nb; b++) {
                const gs_acc total = blk[b].carry;
                const double abs_total = blk[b].abs_carry;
                blk[b].carry = carry;
                blk[b].abs_carry = abs_carry;
                carry = scan_join(v->type, v->op, carry, total);
                abs_carry += abs_total;
            }
            v->prefix = carry;
            v->abs_prefix = abs_carry;
        } /* the single's barrier: every carry in is set */
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int b = 0; b < nb; b++) {
            gs_verify_scan w = *v; /* this block's walker, from its carry in */
            w.prefix = blk[b].carry;
            w.abs_prefix = blk[b].abs_carry;
            w.exact_prefix = blk[b].exact;
            const int64_t from = block_begin(n, nb, b), to = block_begin(n, nb, b + 1);
            int64_t first = -1;
            blk[b].wrong = v->exact ? exact_walk(&w, in, got, from, to, &first)
                                    : scan_walk(&w, in, got, from, to, &first);
            blk[b].first = first;
        }
    }
    int64_t wrong = 0, first = -1;
    for (int b = 0; b < nb; b++) {
        if (blk[b].wrong && first < 0) first = blk[b].first;
        wrong += blk[b].wrong;
    }
    free(blk);
    return scan_account(v, n, wrong, first);
}
