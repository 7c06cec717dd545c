/*
 * gs_test_data.c - test data the backend suites share (gs_test_data.h).
 */
#include "gs_test_data.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t gs_test_rng_next(gs_test_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t gs_test_rng_below(gs_test_rng *r, uint64_t bound) { return gs_test_rng_next(r) % bound; }
double gs_test_rng_unit(gs_test_rng *r) { return (double)(gs_test_rng_next(r) >> 11) * 0x1p-53; }

gs_test_rng gs_test_case_rng(uint64_t suite, uint64_t a, uint64_t b, int per_rank)
{
    const uint64_t rank_mix = per_rank ? (uint64_t)gs_test_rank() * 0x9FB21C651E98DF25ull : 0;
    gs_test_rng r = {gs_test_seed() ^ suite * 0xD1B54A32D192ED03ull ^
                     a * 0xABC98388FB8FAC03ull ^ b * 0x8CB92BA72F3D8DD7ull ^ rank_mix};
    gs_test_rng_next(&r);
    return r;
}

void *gs_test_alloc_or_fail(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    return p;
}

size_t gs_test_out_size(gs_type type, gs_op op)
{
    return gs_type_size(gs_scan_output_type(type, op));
}

void *gs_test_poisoned_output(size_t elem, int64_t n)
{
    void *p = gs_test_alloc_or_fail((size_t)n * elem + GS_TEST_GUARD_BYTES);
    memset(p, GS_TEST_POISON, (size_t)n * elem + GS_TEST_GUARD_BYTES);
    return p;
}

int gs_test_guard_intact(const void *out, size_t elem, int64_t n)
{
    const unsigned char *g = (const unsigned char *)out + (size_t)n * elem;
    for (int k = 0; k < GS_TEST_GUARD_BYTES; k++)
        if (g[k] != GS_TEST_POISON) return 0;
    return 1;
}

void gs_test_set_int(gs_type type, void *buf, int64_t k, uint64_t bits)
{
    switch (type) {
    case GS_I32: ((int32_t *)buf)[k] = (int32_t)(uint32_t)bits; break;
    case GS_U32: ((uint32_t *)buf)[k] = (uint32_t)bits; break;
    case GS_I64: ((int64_t *)buf)[k] = (int64_t)bits; break;
    default: ((uint64_t *)buf)[k] = bits; break;
    }
}

void gs_test_set_float(gs_type type, void *buf, int64_t k, double v)
{
    if (type == GS_F32)
        ((float *)buf)[k] = (float)v;
    else
        ((double *)buf)[k] = v;
}

gs_i128 gs_test_get_int(gs_type type, const void *buf, int64_t k)
{
    switch (type) {
    case GS_I32: return ((const int32_t *)buf)[k];
    case GS_U32: return ((const uint32_t *)buf)[k];
    case GS_I64: return ((const int64_t *)buf)[k];
    default: return ((const uint64_t *)buf)[k];
    }
}

uint64_t gs_test_int_value(gs_type type, gs_op op, int extreme, gs_test_rng *r)
{
    uint64_t bits = gs_test_rng_next(r);
    if (!extreme && (type == GS_I64 || type == GS_U64))
        bits = type == GS_I64 ? (uint64_t)((int64_t)bits >> 24) : bits >> 24;
    return op == GS_PROD ? bits | 1 : bits;
}

uint64_t gs_test_int_special(gs_type type, gs_test_rng *r)
{
    const int is_signed = gs_type_is_signed(type);
    const uint64_t max = is_signed ? (uint64_t)gs_type_max_i64(type) : gs_type_max_u64(type);
    const uint64_t min = is_signed ? (uint64_t)gs_type_min_i64(type) : 0;
    const uint64_t pick[] = {0, 1, ~0ull, max, min, max - 1, min + 1};
    return pick[gs_test_rng_below(r, sizeof pick / sizeof pick[0])];
}

double gs_test_float_special(gs_type type, gs_op op, gs_test_rng *r)
{
    const double tiny = type == GS_F32 ? FLT_TRUE_MIN : DBL_TRUE_MIN;
    const double huge = type == GS_F32 ? FLT_MAX : DBL_MAX;
    const double sum_pick[] = {0.0, -0.0, tiny, -tiny, 0x1p60, -0x1p60, 1.0};
    const double prod_pick[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5};
    const double minmax_pick[] = {0.0, -0.0, tiny, -tiny, huge, -huge};
    switch (op) {
    case GS_SUM: return sum_pick[gs_test_rng_below(r, sizeof sum_pick / sizeof sum_pick[0])];
    case GS_PROD: return prod_pick[gs_test_rng_below(r, sizeof prod_pick / sizeof prod_pick[0])];
    default:
        return minmax_pick[gs_test_rng_below(r, sizeof minmax_pick / sizeof minmax_pick[0])];
    }
}

void gs_test_fill_random(gs_type type, gs_op op, void *buf, int64_t n, int extreme,
                         gs_test_rng *r, gs_test_float_fn float_value)
{
    const int is_float = gs_type_is_float(type);
    for (int64_t k = 0; k < n; k++) {
        const int special = extreme && gs_test_rng_below(r, 32) == 0;
        if (is_float)
            gs_test_set_float(type, buf, k,
                              special ? gs_test_float_special(type, op, r)
                                      : float_value(type, op, r));
        else
            gs_test_set_int(type, buf, k,
                            special ? gs_test_int_special(type, r)
                                    : gs_test_int_value(type, op, extreme, r));
    }
    if (extreme && is_float && n >= 4) {
        gs_test_set_float(type, buf, n / 2 + (int64_t)gs_test_rng_below(r, (uint64_t)(n - n / 2)),
                          gs_test_rng_below(r, 2) ? INFINITY : -INFINITY);
        gs_test_set_float(type, buf, n - 1 - (int64_t)gs_test_rng_below(r, (uint64_t)(n / 4)),
                          NAN);
    }
}

gs_acc gs_test_random_carry(gs_type type, gs_op op, gs_test_rng *r, double *abs_offset,
                            gs_test_float_fn float_value)
{
    unsigned char one[8];
    gs_test_fill_random(type, op, one, 1, 0, r, float_value);
    *abs_offset = gs_verify_abs_sum(type, one, 1);
    return gs_acc_scan_carry(type, op, gs_verify_reduce_ref(type, op, one, 1));
}

int gs_test_expect_overflow(gs_type type, gs_op op, const void *in, int64_t n, gs_acc carry)
{
    if (op != GS_SUM || gs_type_is_float(type)) return 0;
    const int is_signed = gs_type_is_signed(type);
    gs_i128 prefix = is_signed ? (gs_i128)(int64_t)carry.u : (gs_i128)carry.u;
    for (int64_t k = 0; k < n; k++) {
        prefix += gs_test_get_int(type, in, k);
        if (is_signed ? prefix > INT64_MAX || prefix < INT64_MIN : prefix > (gs_i128)UINT64_MAX)
            return 1;
    }
    return 0;
}

int gs_test_same_carry(gs_type type, gs_op op, gs_acc got, gs_acc ref, int64_t n, double abs_sum)
{
    if (!gs_type_is_float(type)) return got.u == ref.u;
    return gs_verify_reduce_ok(type, op, got, ref, n, abs_sum);
}
