/*
 * gs_verify.c - the independent reference: serial loops that apply the rules
 * of gs_rules.h one element at a time, in index order. Deliberately plain and
 * slow; it shares nothing with the backends but gs_rules.h's scalar functions,
 * so that a fast kernel and its check do not share a mistake.
 */
#include <math.h>

#include "gs_verify.h"

/* One input element, widened losslessly: exactly one of the three is set,
 * by the type's class. */
typedef struct element {
    int64_t i;
    uint64_t u;
    double f;
} element;

static element load_element(gs_type type, const void *in, int64_t k)
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
static gs_acc element_partial(gs_type type, gs_op op, element e)
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
static gs_acc scan_step(gs_type type, gs_op op, gs_acc prefix, element e)
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
static gs_acc load_output(gs_type out_type, const void *got, int64_t k)
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
static int float_ok(gs_type out_type, gs_op op, double got, double ref, int64_t n_global,
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

gs_acc gs_verify_reduce_ref(gs_type type, gs_op op, const void *in, int64_t n)
{
    gs_acc acc = gs_acc_identity(type, op);
    for (int64_t k = 0; k < n; k++)
        acc = gs_acc_combine(type, op, acc, element_partial(type, op, load_element(type, in, k)));
    return acc;
}

double gs_verify_abs_sum(gs_type type, const void *in, int64_t n)
{
    double sum = 0.0;
    if (gs_type_is_float(type))
        for (int64_t k = 0; k < n; k++) sum += fabs(load_element(type, in, k).f);
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
}

int64_t gs_verify_scan_chunk(gs_verify_scan *v, const void *in, const void *got, int64_t n)
{
    const gs_type out_type = gs_scan_output_type(v->type, v->op);
    const int inclusive = v->kind == GS_INCLUSIVE;
    int64_t wrong = 0;
    for (int64_t k = 0; k < n; k++) {
        const element e = load_element(v->type, in, k);
        const gs_acc before = v->prefix;
        const double abs_before = v->abs_prefix;
        v->prefix = scan_step(v->type, v->op, v->prefix, e);
        v->abs_prefix += fabs(e.f);
        const gs_acc ref = inclusive ? v->prefix : before;
        const gs_acc out = load_output(out_type, got, k);
        const int ok = gs_type_is_float(v->type)
                           ? float_ok(out_type, v->op, out.f, ref.f, v->n_global,
                                      inclusive ? v->abs_prefix : abs_before)
                           : out.u == ref.u;
        if (!ok) {
            if (v->first_wrong < 0) v->first_wrong = v->checked + k;
            wrong++;
        }
    }
    v->checked += n;
    v->wrong += wrong;
    return wrong;
}
