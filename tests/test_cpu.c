/*
 * test_cpu.c - the CPU backend against the independent reference
 * (gs_verify), and the reference against hand-computed values, on one rank.
 *
 * Random cases draw fresh data from a test-local generator seeded with
 * gs_test_seed() and the case, so a failure replays with GS_TEST_SEED=...
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gs_cpu.h"
#include "gs_cpu_rules.h"
#include "gs_gen.h"
#include "gs_test.h"
#include "gs_test_data.h"
#include "gs_verify.h"

#define BIG_N ((int64_t)1000003) /* the blocked scan: every thread, all strands */

static const gs_scan_kind kinds[] = {GS_INCLUSIVE, GS_EXCLUSIVE};

/* ---- helpers ----------------------------------------------------------- */

/* Floats: sums of mixed signs and magnitudes, products of factors near +-1
 * (which neither overflow nor underflow), min/max over every finite
 * exponent, subnormals included. */
static double float_value(gs_type type, gs_op op, gs_test_rng *r)
{
    switch (op) {
    case GS_SUM: return ldexp(2.0 * gs_test_rng_unit(r) - 1.0, (int)gs_test_rng_below(r, 41) - 20);
    case GS_PROD:
        return (gs_test_rng_below(r, 2) ? -1.0 : 1.0) * (1.0 + (2.0 * gs_test_rng_unit(r) - 1.0) * 0x1p-7);
    default:
        if (type == GS_F32) {
            const uint32_t exponent = (uint32_t)gs_test_rng_below(r, 255) << 23; /* not 255: inf/NaN */
            uint32_t bits = ((uint32_t)gs_test_rng_next(r) & 0x807FFFFFu) | exponent;
            float f;
            memcpy(&f, &bits, sizeof f);
            return f;
        } else {
            const uint64_t exponent = gs_test_rng_below(r, 2047) << 52;
            uint64_t bits = (gs_test_rng_next(r) & 0x800FFFFFFFFFFFFFull) | exponent;
            double d;
            memcpy(&d, &bits, sizeof d);
            return d;
        }
    }
}

/* One scan on poisoned output, checked element by element against the
 * reference, with its guard, its carry and its overflow flag. */
static void check_scan(gs_type type, gs_op op, gs_scan_kind kind, const void *in, int64_t n,
                       gs_acc carry_in, double abs_offset)
{
    const size_t elem = gs_test_out_size(type, op);
    void *out = gs_test_poisoned_output(elem, n);
    gs_acc carry_out;
    int overflow = -1;
    gs_cpu_scan(type, op, kind, in, out, n, carry_in, &carry_out, &overflow);

    gs_verify_scan v;
    gs_verify_scan_begin(&v, type, op, kind, n + 1, carry_in, abs_offset);
    const char *what = kind == GS_INCLUSIVE ? "inclusive scan" : "exclusive scan";
    GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, out, n) == 0, what, type, op, n);
    GS_TEST_CHECK_CASE(gs_test_guard_intact(out, elem, n), what, type, op, n);
    GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry_out, v.prefix, n + 1, v.abs_prefix), what, type, op, n);
    GS_TEST_CHECK_CASE(overflow == gs_test_expect_overflow(type, op, in, n, carry_in), what, type, op, n);
    free(out);
}

/* ---- random data against the reference ---------------------------------- */

/* Thread counts every random case runs at: serial, and an odd team (the
 * default may be 1: mpirun binds a rank to one core). */
#ifdef _OPENMP
static const int case_threads[] = {1, 3};
#else
static const int case_threads[] = {1};
#endif
#define CASE_THREAD_COUNTS ((int)(sizeof case_threads / sizeof case_threads[0]))

static void set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
}

/* The team size set_threads would restore. */
static int team_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Every op of `type` at every test size and every case thread count: the
 * reduction, and both scans from the identity and from a random carry.
 * Sizes alternate between plain and extreme data. */
static void check_random_type(gs_type type)
{
    const int saved = gs_cpu_threads();
    for (int op = 0; op < GS_OP_COUNT; op++) {
        for (int s = 0; s < gs_test_nsizes; s++) {
            const int64_t n = gs_test_sizes[s];
            const int extreme = s % 2;
            gs_test_rng r = gs_test_case_rng(1, (uint64_t)(type * GS_OP_COUNT + op), (uint64_t)s, 0);
            void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
            gs_test_fill_random(type, op, in, n, extreme, &r, float_value);
            const gs_acc ref = gs_verify_reduce_ref(type, op, in, n);
            const double abs_sum = gs_verify_abs_sum(type, in, n);
            for (int c = 0; c < CASE_THREAD_COUNTS; c++) {
                set_threads(case_threads[c]);
                gs_acc got = gs_cpu_reduce(type, op, in, n);
                GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, ref, n, abs_sum), "reduce", type, op,
                           n);
                for (int k = 0; k < 2; k++) {
                    double abs_offset = 0.0;
                    check_scan(type, op, kinds[k], in, n, gs_acc_identity(type, op), 0.0);
                    gs_acc carry = gs_test_random_carry(type, op, &r, &abs_offset, float_value);
                    check_scan(type, op, kinds[k], in, n, carry, abs_offset);
                }
            }
            set_threads(saved);
            free(in);
        }
    }
}

#define TYPE_TESTS(X)                                                                              \
    X(i32, GS_I32) X(i64, GS_I64) X(u32, GS_U32) X(u64, GS_U64) X(f32, GS_F32) X(f64, GS_F64)
#define RANDOM_TEST(sfx, E)                                                                        \
    static void test_random_##sfx(void) { check_random_type(E); }
TYPE_TESTS(RANDOM_TEST)

/* Scanning in three chunks, each starting from the carry the previous one
 * returned, equals scanning the whole: bit for bit for integers, within the
 * bound (checked against the reference) for floats. */
static void test_chunks_chain(void)
{
    const int64_t n = BIG_N;
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            gs_test_rng r = gs_test_case_rng(2, (uint64_t)type, (uint64_t)op, 0);
            void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
            gs_test_fill_random(type, op, in, n, 1, &r, float_value);
            const size_t elem = gs_test_out_size(type, op);
            for (int k = 0; k < 2; k++) {
                void *whole = gs_test_poisoned_output(elem, n), *parts = gs_test_poisoned_output(elem, n);
                gs_acc whole_carry, carry = gs_acc_identity(type, op);
                int whole_overflow, overflow = 0;
                gs_cpu_scan(type, op, kinds[k], in, whole, n, carry, &whole_carry, &whole_overflow);

                /* cuts: the second chunk is sometimes empty */
                int64_t cut[4] = {0, (int64_t)gs_test_rng_below(&r, (uint64_t)n), 0, n};
                cut[2] = gs_test_rng_below(&r, 2) ? cut[1]
                                          : cut[1] + (int64_t)gs_test_rng_below(&r, (uint64_t)(n - cut[1]));
                for (int c = 0; c < 3; c++) {
                    int chunk_overflow;
                    gs_cpu_scan(type, op, kinds[k],
                                (const char *)in + (size_t)cut[c] * gs_type_size(type),
                                (char *)parts + (size_t)cut[c] * elem, cut[c + 1] - cut[c], carry,
                                &carry, &chunk_overflow);
                    overflow |= chunk_overflow;
                }
                gs_verify_scan v;
                gs_verify_scan_begin(&v, type, op, kinds[k], n, gs_acc_identity(type, op), 0.0);
                GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, parts, n) == 0, "chunked scan", type, op,
                           n);
                GS_TEST_CHECK_CASE(overflow == whole_overflow, "chunked overflow", type, op, n);
                if (!gs_type_is_float(type)) {
                    GS_TEST_CHECK_CASE(memcmp(whole, parts, (size_t)n * elem) == 0, "chunked = whole", type,
                               op, n);
                    GS_TEST_CHECK_CASE(carry.u == whole_carry.u, "chunked carry", type, op, n);
                }
                free(whole);
                free(parts);
            }
            free(in);
        }
    }
}

/* in == out where the element sizes match gives what separate buffers give. */
static void test_in_place(void)
{
    const int64_t n = BIG_N;
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            const size_t elem = gs_type_size(type);
            if (gs_test_out_size(type, op) != elem) continue;
            gs_test_rng r = gs_test_case_rng(3, (uint64_t)type, (uint64_t)op, 0);
            void *in = gs_test_alloc_or_fail((size_t)n * elem), *buf = gs_test_alloc_or_fail((size_t)n * elem);
            void *out = gs_test_poisoned_output(elem, n);
            gs_test_fill_random(type, op, in, n, 1, &r, float_value);
            for (int k = 0; k < 2; k++) {
                gs_acc carry, carry_in_place;
                int overflow, overflow_in_place;
                memcpy(buf, in, (size_t)n * elem);
                gs_cpu_scan(type, op, kinds[k], in, out, n, gs_acc_identity(type, op), &carry,
                            &overflow);
                gs_cpu_scan(type, op, kinds[k], buf, buf, n, gs_acc_identity(type, op),
                            &carry_in_place, &overflow_in_place);
                GS_TEST_CHECK_CASE(memcmp(out, buf, (size_t)n * elem) == 0, "in place", type, op, n);
                GS_TEST_CHECK_CASE(memcmp(&carry, &carry_in_place, sizeof carry) == 0, "in place carry",
                           type, op, n);
                GS_TEST_CHECK_CASE(overflow == overflow_in_place, "in place overflow", type, op, n);
            }
            free(in);
            free(buf);
            free(out);
        }
    }
}

/* Team sizes for test_thread_counts: serial, even, odd, more than the
 * cores. Without OpenMP there is one. */
#ifdef _OPENMP
static const int team_counts[] = {1, 2, 3, 4};
#else
static const int team_counts[] = {1};
#endif
#define TEAM_COUNTS ((int)(sizeof team_counts / sizeof team_counts[0]))

/* One reduction and one inclusive scan at the current thread count. */
typedef struct thread_run {
    gs_acc reduce, carry;
    int overflow;
    void *out;
} thread_run;

static void run_at_count(gs_type type, gs_op op, const void *in, int64_t n, thread_run *run)
{
    run->reduce = gs_cpu_reduce(type, op, in, n);
    run->overflow = -1;
    gs_cpu_scan(type, op, GS_INCLUSIVE, in, run->out, n, gs_acc_identity(type, op), &run->carry,
                &run->overflow);
}

static int same_run(const thread_run *a, const thread_run *b, size_t out_bytes)
{
    return memcmp(&a->reduce, &b->reduce, sizeof a->reduce) == 0 &&
           memcmp(&a->carry, &b->carry, sizeof a->carry) == 0 && a->overflow == b->overflow &&
           memcmp(a->out, b->out, out_bytes) == 0;
}

/* gs_cpu_threads() is the thread count OpenMP is set to (1 without OpenMP),
 * and at every count: results agree with the reference (integers exactly,
 * floats within the bound), integer results are the same bits as at the
 * first count, and a second run at the same count gives the same bits as
 * the first (the split depends on n and the count only), floats included. */
static void test_thread_counts(void)
{
    const int64_t n = BIG_N;
#ifndef _OPENMP
    if (gs_test_rank() == 0)
        printf("\n    (no OpenMP in this build: one team size, 1 thread; checking "
               "gs_cpu_threads() == 1, the results against the reference and their "
               "repeatability) ");
#endif
    const int saved = gs_cpu_threads();
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            gs_test_rng r = gs_test_case_rng(4, (uint64_t)type, (uint64_t)op, 0);
            const size_t elem = gs_test_out_size(type, op);
            void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
            gs_test_fill_random(type, op, in, n, 1, &r, float_value);
            const gs_acc ref = gs_verify_reduce_ref(type, op, in, n);
            const double abs_sum = gs_verify_abs_sum(type, in, n);
            const gs_acc id = gs_acc_identity(type, op);
            const int expect_overflow = gs_test_expect_overflow(type, op, in, n, id);
            thread_run first = {.out = gs_test_poisoned_output(elem, n)};
            thread_run run = {.out = gs_test_poisoned_output(elem, n)};
            thread_run again = {.out = gs_test_poisoned_output(elem, n)};
            for (int c = 0; c < TEAM_COUNTS; c++) {
                const int count = team_counts[c];
                set_threads(count);
                GS_TEST_CHECK_CASE(gs_cpu_threads() == count, "gs_cpu_threads() follows the setting",
                                   type, op, count);
                run_at_count(type, op, in, n, &run);
                GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, run.reduce, ref, n, abs_sum),
                                   "threads reduce", type, op, count);
                gs_verify_scan v;
                gs_verify_scan_begin(&v, type, op, GS_INCLUSIVE, n, id, 0.0);
                GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, run.out, n) == 0, "threads scan", type,
                                   op, count);
                GS_TEST_CHECK_CASE(gs_test_guard_intact(run.out, elem, n), "threads scan guard", type, op,
                                   count);
                GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, run.carry, v.prefix, n, v.abs_prefix),
                                   "threads carry", type, op, count);
                GS_TEST_CHECK_CASE(run.overflow == expect_overflow, "threads overflow", type, op,
                                   count);

                run_at_count(type, op, in, n, &again);
                GS_TEST_CHECK_CASE(same_run(&run, &again, (size_t)n * elem), "same count, same bits",
                                   type, op, count);

                if (c == 0) {
                    first.reduce = run.reduce;
                    first.carry = run.carry;
                    first.overflow = run.overflow;
                    memcpy(first.out, run.out, (size_t)n * elem);
                } else if (!gs_type_is_float(type)) {
                    GS_TEST_CHECK_CASE(same_run(&first, &run, (size_t)n * elem),
                                       "integers: same bits at every count", type, op, count);
                }
            }
            set_threads(saved);
            free(in);
            free(first.out);
            free(run.out);
            free(again.out);
        }
    }
    CU_ASSERT_EQUAL(gs_cpu_threads(), saved);
}

/* The rule names the kernel templates instantiate from (gs_cpu_rules.h) are
 * gs_rules.h's: the kinds of the reduction and of the scan carry, and the
 * scan's output type, of every (type, op); and each element type's C type
 * has the type's size. */
static void check_rule_names(gs_type type, gs_op op, gs_acc_kind reduce_kind,
                             gs_acc_kind carry_kind, gs_type out)
{
    GS_TEST_CHECK_CASE(reduce_kind == gs_reduce_acc_kind(type, op), "gs_reduce_acc_kind", type, op,
                       0);
    GS_TEST_CHECK_CASE(carry_kind == gs_scan_carry_kind(type, op), "gs_scan_carry_kind", type, op,
                       0);
    GS_TEST_CHECK_CASE(out == gs_rule_scan_output(type, op), "gs_rule_scan_output", type, op, 0);
}

#define CHECK_RULE_OP(e, name, o)                                                                  \
    check_rule_names(e, GS_CPU_OP_OF(o), GS_CPU_REDUCE_KIND(name, o), GS_CPU_CARRY_KIND(name, o),  \
                     GS_CPU_TYPE_OF(GS_CPU_OUT_NAME(name, o)));
#define CHECK_RULE_TYPE(e, name, c_type)                                                           \
    CU_ASSERT_EQUAL(GS_CPU_TYPE_OF(name), e);                                                      \
    CU_ASSERT_EQUAL(sizeof(gs_cpu_elem_##name), (size_t)gs_type_size(e));                          \
    CHECK_RULE_OP(e, name, sum) CHECK_RULE_OP(e, name, prod) CHECK_RULE_OP(e, name, min)           \
    CHECK_RULE_OP(e, name, max)

static void test_rule_names(void)
{
    GS_TYPE_LIST(CHECK_RULE_TYPE)
    CU_ASSERT_EQUAL(GS_CPU_OP_OF(sum), GS_SUM);
    CU_ASSERT_EQUAL(GS_CPU_OP_OF(prod), GS_PROD);
    CU_ASSERT_EQUAL(GS_CPU_OP_OF(min), GS_MIN);
    CU_ASSERT_EQUAL(GS_CPU_OP_OF(max), GS_MAX);
}

/* n = 0: the reduction is the identity, a scan writes nothing (NULL
 * buffers are fine) and passes its carry through. */
static void test_empty(void)
{
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            const gs_acc id = gs_acc_identity(type, op);
            gs_acc got = gs_cpu_reduce(type, op, NULL, 0),
                   ref = gs_verify_reduce_ref(type, op, NULL, 0);
            GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, id, 0, 0.0), "empty reduce", type, op, 0);
            GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, ref, id, 0, 0.0), "empty reference", type, op,
                       0);
            gs_test_rng r = gs_test_case_rng(5, (uint64_t)type, (uint64_t)op, 0);
            double abs_offset;
            gs_acc carry_in = gs_test_random_carry(type, op, &r, &abs_offset, float_value), carry_out;
            int overflow = -1;
            gs_cpu_scan(type, op, GS_EXCLUSIVE, NULL, NULL, 0, carry_in, &carry_out, &overflow);
            GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry_out, carry_in, 0, 0.0), "empty scan", type, op,
                       0);
            GS_TEST_CHECK_CASE(overflow == 0, "empty scan", type, op, 0);
        }
    }
}

/* ---- hand-computed cases (they catch a wrong reference too) ------------- */

/* Scan n elements from `carry`, and check the backend's output bit for bit
 * and the reference's acceptance against `expect`; returns the overflow. */
static int scan_expect(gs_type type, gs_op op, gs_scan_kind kind, const void *in, int64_t n,
                       gs_acc carry, const void *expect, gs_acc *carry_out)
{
    const size_t elem = gs_test_out_size(type, op);
    void *out = gs_test_poisoned_output(elem, n);
    int overflow = -1;
    gs_cpu_scan(type, op, kind, in, out, n, carry, carry_out, &overflow);
    GS_TEST_CHECK_CASE(memcmp(out, expect, (size_t)n * elem) == 0, "scan = hand value", type, op, n);
    GS_TEST_CHECK_CASE(gs_test_guard_intact(out, elem, n), "scan guard", type, op, n);
    gs_verify_scan v;
    gs_verify_scan_begin(&v, type, op, kind, n, carry, 0.0);
    GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, expect, n) == 0, "reference = hand value", type, op, n);
    free(out);
    return overflow;
}

static void test_i32_sum_is_exact_64bit(void)
{
    const int32_t in[3] = {INT32_MAX, INT32_MAX, INT32_MAX};
    const int64_t expect[3] = {2147483647, 4294967294, 6442450941};
    CU_ASSERT(gs_cpu_reduce(GS_I32, GS_SUM, in, 3).s == 6442450941);
    CU_ASSERT(gs_verify_reduce_ref(GS_I32, GS_SUM, in, 3).s == 6442450941);
    gs_acc carry;
    CU_ASSERT_EQUAL(scan_expect(GS_I32, GS_SUM, GS_INCLUSIVE, in, 3,
                                gs_acc_identity(GS_I32, GS_SUM), expect, &carry),
                    0);
    CU_ASSERT_EQUAL(carry.i, 6442450941);

    const uint32_t uin[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    CU_ASSERT(gs_cpu_reduce(GS_U32, GS_SUM, uin, 3).w == 12884901885u);
    CU_ASSERT(gs_verify_reduce_ref(GS_U32, GS_SUM, uin, 3).w == 12884901885u);
}

static void test_u64_sum_overflow(void)
{
    const uint64_t in[2] = {UINT64_MAX, 2};
    const uint64_t expect[2] = {UINT64_MAX, 1}; /* wrapped */
    const gs_u128 exact = ((gs_u128)1 << 64) + 1;
    CU_ASSERT(gs_cpu_reduce(GS_U64, GS_SUM, in, 2).w == exact);
    CU_ASSERT(gs_verify_reduce_ref(GS_U64, GS_SUM, in, 2).w == exact);
    gs_acc id = gs_acc_identity(GS_U64, GS_SUM), carry;
    CU_ASSERT_EQUAL(scan_expect(GS_U64, GS_SUM, GS_INCLUSIVE, in, 1, id, expect, &carry), 0);
    CU_ASSERT_EQUAL(scan_expect(GS_U64, GS_SUM, GS_INCLUSIVE, in, 2, id, expect, &carry), 1);
    CU_ASSERT_EQUAL(carry.u, 1);
    /* the carry alone takes it over: UINT64_MAX-1 + 1 fits, + 0 fits, + 1 does not */
    const uint64_t step[3] = {1, 0, 1}, step_expect[3] = {UINT64_MAX, UINT64_MAX, 0};
    gs_acc near;
    near.w = 0;
    near.u = UINT64_MAX - 1;
    CU_ASSERT_EQUAL(scan_expect(GS_U64, GS_SUM, GS_INCLUSIVE, step, 2, near, step_expect, &carry),
                    0);
    CU_ASSERT_EQUAL(scan_expect(GS_U64, GS_SUM, GS_INCLUSIVE, step, 3, near, step_expect, &carry),
                    1);
}

/* The prefix MAX-10, MAX-5, MAX, MAX+1: flagged from 4 elements on, not
 * before, for both kinds (an exclusive scan's total counts too). */
static void test_i64_prefix_overflow_position(void)
{
    const int64_t in[5] = {INT64_MAX - 10, 5, 5, 1, -100};
    const int64_t inclusive[5] = {INT64_MAX - 10, INT64_MAX - 5, INT64_MAX, INT64_MIN,
                                  INT64_MAX - 99};
    const int64_t exclusive[5] = {0, INT64_MAX - 10, INT64_MAX - 5, INT64_MAX, INT64_MIN};
    const gs_acc id = gs_acc_identity(GS_I64, GS_SUM);
    gs_acc carry;
    for (int64_t n = 0; n <= 5; n++) {
        CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_INCLUSIVE, in, n, id, inclusive, &carry),
                        n >= 4);
        CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_EXCLUSIVE, in, n, id, exclusive, &carry),
                        n >= 4);
    }
    CU_ASSERT_EQUAL(carry.i, INT64_MAX - 99);
    /* the reduction is exact in 128 bits: its intermediate excursion is no overflow */
    CU_ASSERT(gs_cpu_reduce(GS_I64, GS_SUM, in, 5).s == INT64_MAX - 99);
    CU_ASSERT(gs_verify_reduce_ref(GS_I64, GS_SUM, in, 5).s == INT64_MAX - 99);

    const int64_t down[3] = {INT64_MIN + 1, -1, -1},
                  down_expect[3] = {INT64_MIN + 1, INT64_MIN, INT64_MAX};
    CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_INCLUSIVE, down, 2, id, down_expect, &carry), 0);
    CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_INCLUSIVE, down, 3, id, down_expect, &carry), 1);

    /* from a carry-in of MAX: +0 fits, +1 overflows, exclusive or not */
    const int64_t step[3] = {0, 0, 1}, excl_expect[3] = {INT64_MAX, INT64_MAX, INT64_MAX};
    gs_acc max;
    max.w = 0;
    max.i = INT64_MAX;
    CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_EXCLUSIVE, step, 2, max, excl_expect, &carry),
                    0);
    CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_SUM, GS_EXCLUSIVE, step, 3, max, excl_expect, &carry),
                    1);
    CU_ASSERT_EQUAL(carry.i, INT64_MIN);
}

/* A thread block whose own total overflows (MAX + MAX) while every global
 * prefix fits (they start from -MAX) is no overflow; one more unit at the
 * end is. Wherever the blocks fall, at every thread count. */
static void test_block_overflow_is_not_prefix_overflow(void)
{
    const int64_t n = BIG_N;
    int64_t *in = gs_test_alloc_or_fail((size_t)n * sizeof *in),
            *out = gs_test_alloc_or_fail((size_t)n * sizeof *out);
    memset(in, 0, (size_t)n * sizeof *in);
    in[0] = -INT64_MAX;
    in[n / 2 + 7] = INT64_MAX;
    in[n - 1] = INT64_MAX;
    const gs_acc id = gs_acc_identity(GS_I64, GS_SUM);
    const int saved = gs_cpu_threads();
    for (int threads = 1; threads <= 4; threads++) {
        set_threads(threads);
        for (int k = 0; k < 2; k++) {
            gs_acc carry;
            int overflow = -1;
            in[n - 2] = 0;
            gs_cpu_scan(GS_I64, GS_SUM, kinds[k], in, out, n, id, &carry, &overflow);
            CU_ASSERT_EQUAL(overflow, 0);
            CU_ASSERT_EQUAL(carry.i, INT64_MAX);
            gs_verify_scan v;
            gs_verify_scan_begin(&v, GS_I64, GS_SUM, kinds[k], n, id, 0.0);
            CU_ASSERT_EQUAL(gs_verify_scan_chunk(&v, in, out, n), 0);
            in[n - 2] = 1;
            gs_cpu_scan(GS_I64, GS_SUM, kinds[k], in, out, n, id, &carry, &overflow);
            CU_ASSERT_EQUAL(overflow, 1);
        }
    }
    set_threads(saved);
    free(in);
    free(out);
}

/* Integer products wrap modulo 2^64; signed ones are the same bits. */
static void test_prod_wraps(void)
{
    const uint64_t u64_in[2] = {UINT64_MAX, UINT64_MAX}; /* (-1)(-1) = 1 mod 2^64 */
    CU_ASSERT_EQUAL(gs_cpu_reduce(GS_U64, GS_PROD, u64_in, 2).u, 1);
    CU_ASSERT_EQUAL(gs_verify_reduce_ref(GS_U64, GS_PROD, u64_in, 2).u, 1);

    const int64_t i64_in[3] = {(int64_t)1 << 32, (int64_t)1 << 32, 5},
                  i64_expect[3] = {(int64_t)1 << 32, 0, 0};
    gs_acc carry;
    CU_ASSERT_EQUAL(scan_expect(GS_I64, GS_PROD, GS_INCLUSIVE, i64_in, 3,
                                gs_acc_identity(GS_I64, GS_PROD), i64_expect, &carry),
                    0);
    CU_ASSERT_EQUAL(carry.u, 0);

    /* -2 * (2^31-1)^2 = -2^63 + 2^33 - 2 */
    const int32_t i32_in[3] = {-2, INT32_MAX, INT32_MAX};
    const int64_t i32_expect[3] = {-2, -4294967294, INT64_MIN + 0x1FFFFFFFE};
    CU_ASSERT_EQUAL(scan_expect(GS_I32, GS_PROD, GS_INCLUSIVE, i32_in, 3,
                                gs_acc_identity(GS_I32, GS_PROD), i32_expect, &carry),
                    0);
    CU_ASSERT_EQUAL(gs_cpu_reduce(GS_I32, GS_PROD, i32_in, 3).i, INT64_MIN + 0x1FFFFFFFE);
    CU_ASSERT_EQUAL(gs_verify_reduce_ref(GS_I32, GS_PROD, i32_in, 3).i, INT64_MIN + 0x1FFFFFFFE);

    /* (2^32-1)^3 = 2^33 + 2^32 - 1 mod 2^64 */
    const uint32_t u32_in[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
    CU_ASSERT_EQUAL(gs_cpu_reduce(GS_U32, GS_PROD, u32_in, 3).u, 0x2FFFFFFFFull);
    CU_ASSERT_EQUAL(gs_verify_reduce_ref(GS_U32, GS_PROD, u32_in, 3).u, 0x2FFFFFFFFull);
}

/* Both backends' float comparisons see NaN: check that values are NaN or
 * equal, element by element. */
static int same_floats(const double *got, const double *expect, int n)
{
    for (int k = 0; k < n; k++)
        if (isnan(expect[k]) ? !isnan(got[k]) : got[k] != expect[k]) return 0;
    return 1;
}

static void test_nan_propagates_in_min_max(void)
{
    const double in[3] = {1.0, NAN, -5.0};
    for (int op = GS_MIN; op <= GS_MAX; op++) {
        CU_ASSERT(isnan(gs_cpu_reduce(GS_F64, op, in, 3).f));
        CU_ASSERT(isnan(gs_verify_reduce_ref(GS_F64, op, in, 3).f));
        CU_ASSERT(isnan(gs_cpu_reduce(GS_F64, op, in + 1, 2).f));
        CU_ASSERT_EQUAL(gs_cpu_reduce(GS_F64, op, in + 2, 1).f, -5.0);
    }
    double out[3];
    const double incl_min[3] = {1.0, NAN, NAN}, excl_min[3] = {INFINITY, 1.0, NAN};
    gs_cpu_scan(GS_F64, GS_MIN, GS_INCLUSIVE, in, out, 3, gs_acc_identity(GS_F64, GS_MIN), NULL,
                NULL);
    CU_ASSERT(same_floats(out, incl_min, 3));
    gs_cpu_scan(GS_F64, GS_MIN, GS_EXCLUSIVE, in, out, 3, gs_acc_identity(GS_F64, GS_MIN), NULL,
                NULL);
    CU_ASSERT(same_floats(out, excl_min, 3));
    gs_verify_scan v;
    gs_verify_scan_begin(&v, GS_F64, GS_MIN, GS_EXCLUSIVE, 3, gs_acc_identity(GS_F64, GS_MIN), 0.0);
    CU_ASSERT_EQUAL(gs_verify_scan_chunk(&v, in, excl_min, 3), 0);
    CU_ASSERT(isnan(v.prefix.f));

    /* a NaN first stays for good, in f32 too */
    const float fin[3] = {NAN, -1.0f, 2.0f};
    float fout[3];
    gs_cpu_scan(GS_F32, GS_MAX, GS_INCLUSIVE, fin, fout, 3, gs_acc_identity(GS_F32, GS_MAX), NULL,
                NULL);
    CU_ASSERT(isnan(fout[0]) && isnan(fout[1]) && isnan(fout[2]));
    CU_ASSERT(isnan(gs_verify_reduce_ref(GS_F32, GS_MAX, fin, 3).f));
}

/* An exclusive scan from the identity starts with the identity. */
static void test_exclusive_from_identity(void)
{
    gs_acc carry;
    const int32_t i32_in[3] = {3, 4, 5};
    const int64_t i32_expect[3] = {0, 3, 7};
    CU_ASSERT_EQUAL(scan_expect(GS_I32, GS_SUM, GS_EXCLUSIVE, i32_in, 3,
                                gs_acc_identity(GS_I32, GS_SUM), i32_expect, &carry),
                    0);
    CU_ASSERT_EQUAL(carry.i, 12);

    const uint32_t u32_in[3] = {7, 3, 9}, u32_expect[3] = {UINT32_MAX, 7, 3};
    scan_expect(GS_U32, GS_MIN, GS_EXCLUSIVE, u32_in, 3, gs_acc_identity(GS_U32, GS_MIN),
                u32_expect, &carry);
    CU_ASSERT_EQUAL(carry.u, 3);

    const int32_t max_in[1] = {5}, max_expect[1] = {INT32_MIN};
    scan_expect(GS_I32, GS_MAX, GS_EXCLUSIVE, max_in, 1, gs_acc_identity(GS_I32, GS_MAX),
                max_expect, &carry);
    CU_ASSERT_EQUAL(carry.i, 5);

    const int64_t prod_in[2] = {3, -2}, prod_expect[2] = {1, 3};
    scan_expect(GS_I64, GS_PROD, GS_EXCLUSIVE, prod_in, 2, gs_acc_identity(GS_I64, GS_PROD),
                prod_expect, &carry);
    CU_ASSERT_EQUAL(carry.i, -6);

    const double f64_in[2] = {2.0, -1.0}, f64_expect[2] = {-INFINITY, 2.0};
    scan_expect(GS_F64, GS_MAX, GS_EXCLUSIVE, f64_in, 2, gs_acc_identity(GS_F64, GS_MAX),
                f64_expect, &carry);
    CU_ASSERT_EQUAL(carry.f, 2.0);
}

/* f32 sums and products accumulate in fp64 and round once: 2^24 + 1 + 1 is
 * 2^24 + 2 (an f32 accumulator loses both ones), and 2^100 * 2^100 * 2^-120
 * is 2^80 (an f32 accumulator stays at infinity). */
static void test_f32_accumulates_in_fp64(void)
{
    gs_acc carry;
    const float sum_in[3] = {0x1p24f, 1.0f, 1.0f};
    const float sum_expect[3] = {0x1p24f, 0x1p24f, 0x1p24f + 2.0f}; /* 2^24 + 1 rounds to even */
    CU_ASSERT_EQUAL(gs_cpu_reduce(GS_F32, GS_SUM, sum_in, 3).f, 0x1p24 + 2.0);
    CU_ASSERT_EQUAL(gs_verify_reduce_ref(GS_F32, GS_SUM, sum_in, 3).f, 0x1p24 + 2.0);
    scan_expect(GS_F32, GS_SUM, GS_INCLUSIVE, sum_in, 3, gs_acc_identity(GS_F32, GS_SUM),
                sum_expect, &carry);
    CU_ASSERT_EQUAL(carry.f, 0x1p24 + 2.0);

    const float prod_in[3] = {0x1p100f, 0x1p100f, 0x1p-120f};
    const float prod_expect[3] = {0x1p100f, INFINITY, 0x1p80f};
    CU_ASSERT_EQUAL(gs_cpu_reduce(GS_F32, GS_PROD, prod_in, 3).f, 0x1p80);
    scan_expect(GS_F32, GS_PROD, GS_INCLUSIVE, prod_in, 3, gs_acc_identity(GS_F32, GS_PROD),
                prod_expect, &carry);
    CU_ASSERT_EQUAL(carry.f, 0x1p80);
}

/* ---- the generator ------------------------------------------------------ */

static int generated_matches(gs_type type, uint64_t seed, int64_t start, const void *buf, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {
        const uint64_t i = (uint64_t)(start + k);
        int same = 0;
        switch (type) {
        case GS_I32: same = ((const int32_t *)buf)[k] == gs_gen_i32(seed, i); break;
        case GS_I64: same = ((const int64_t *)buf)[k] == gs_gen_i64(seed, i); break;
        case GS_U32: same = ((const uint32_t *)buf)[k] == gs_gen_u32(seed, i); break;
        case GS_U64: same = ((const uint64_t *)buf)[k] == gs_gen_u64(seed, i); break;
        case GS_F32: same = ((const float *)buf)[k] == gs_gen_f32(seed, i); break;
        default: same = ((const double *)buf)[k] == gs_gen_f64(seed, i); break;
        }
        if (!same) return 0;
    }
    return 1;
}

/* gs_cpu_generate gives gs_gen_* at every index, whatever the split of
 * [start, start + n) into calls. */
static void test_generate(void)
{
    const int64_t n = BIG_N, starts[] = {0, 12345, ((int64_t)1 << 40) + 3};
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        const size_t elem = gs_type_size(type);
        void *whole = gs_test_poisoned_output(elem, n), *pieces = gs_test_poisoned_output(elem, n);
        for (int s = 0; s < 3; s++) {
            gs_test_rng r = gs_test_case_rng(6, (uint64_t)type, (uint64_t)s, 0);
            const uint64_t seed = gs_test_rng_next(&r);
            gs_cpu_generate(type, seed, starts[s], n, whole);
            GS_TEST_CHECK_CASE(generated_matches(type, seed, starts[s], whole, n), "generate", type, GS_SUM,
                       n);
            GS_TEST_CHECK_CASE(gs_test_guard_intact(whole, elem, n), "generate guard", type, GS_SUM, n);
            int64_t at = 0;
            while (at < n) {
                const int64_t m = gs_test_rng_below(&r, 4) == 0
                                      ? (int64_t)gs_test_rng_below(&r, 40)
                                      : (int64_t)gs_test_rng_below(&r, (uint64_t)(n - at) + 1);
                const int64_t take = m < n - at ? m : n - at;
                gs_cpu_generate(type, seed, starts[s] + at, take,
                                (char *)pieces + (size_t)at * elem);
                at += take;
            }
            GS_TEST_CHECK_CASE(memcmp(whole, pieces, (size_t)n * elem) == 0, "generate split", type, GS_SUM,
                       n);
        }
        gs_cpu_generate(type, 1, 0, 0, pieces);
        GS_TEST_CHECK_CASE(gs_test_guard_intact(pieces, elem, n), "generate n=0", type, GS_SUM, 0);
        free(whole);
        free(pieces);
    }
}

/* ---- the reference's own checks ---------------------------------------- */

/* v moved by a million units in the last place. */
static double off_by_million_ulps(gs_type type, double v)
{
    if (type == GS_F32) return (float)v + 1e6f * (nextafterf((float)v, INFINITY) - (float)v);
    return v + 1e6 * (nextafter(v, INFINITY) - v);
}

static gs_acc float_acc(double f)
{
    gs_acc a;
    a.w = 0;
    a.f = f;
    return a;
}

static void test_verify_reduce_bound(void)
{
    const int64_t n = 1000;
    for (int type = GS_F32; type <= GS_F64; type++) {
        gs_test_rng r = gs_test_case_rng(7, (uint64_t)type, 0, 0);
        void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
        for (int64_t k = 0; k < n; k++) gs_test_set_float(type, in, k, 0.5 + 0.5 * gs_test_rng_unit(&r));
        const double abs_sum = gs_verify_abs_sum(type, in, n);
        for (int op = GS_SUM; op <= GS_PROD; op++) {
            gs_acc ref = gs_verify_reduce_ref(type, op, in, n),
                   got = gs_cpu_reduce(type, op, in, n);
            GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, ref, n, abs_sum), "accepts", type, op, n);
            /* the reduction's result is fp64 */
            GS_TEST_CHECK_CASE(!gs_verify_reduce_ok(type, op, float_acc(off_by_million_ulps(GS_F64, ref.f)),
                                            ref, n, abs_sum),
                       "rejects", type, op, n);
        }
        free(in);
    }
    const double d = 1.5;
    CU_ASSERT(gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(NAN), float_acc(NAN), 1, 1.0));
    CU_ASSERT(!gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(NAN), float_acc(d), 1, 1.0));
    CU_ASSERT(!gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(d), float_acc(NAN), 1, 1.0));
    CU_ASSERT(
        gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(INFINITY), float_acc(INFINITY), 1, INFINITY));
    CU_ASSERT(!gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(-INFINITY), float_acc(INFINITY), 1,
                                   INFINITY));
    CU_ASSERT(
        !gs_verify_reduce_ok(GS_F64, GS_SUM, float_acc(DBL_MAX), float_acc(INFINITY), 1, INFINITY));
    CU_ASSERT(
        !gs_verify_reduce_ok(GS_F64, GS_MIN, float_acc(nextafter(d, 2.0)), float_acc(d), 1, 0.0));
    CU_ASSERT(gs_verify_reduce_ok(GS_F32, GS_MAX, float_acc(-0.0), float_acc(0.0), 1, 0.0));

    gs_acc a, b;
    a.w = b.w = 0;
    a.s = (gs_i128)INT64_MAX * 4;
    b.s = a.s + 1;
    CU_ASSERT(gs_verify_reduce_ok(GS_I64, GS_SUM, a, a, 1, 0.0));
    CU_ASSERT(!gs_verify_reduce_ok(GS_I64, GS_SUM, a, b, 1, 0.0));
    a.w = b.w = 0;
    a.u = 7;
    b.u = 8;
    CU_ASSERT(!gs_verify_reduce_ok(GS_U32, GS_MAX, a, b, 1, 0.0));
}

/* Plant k wrong elements in a correct scan: the reference, fed in three
 * chunks, counts exactly k and names the first. */
static void test_verify_scan_counts_planted(void)
{
    const int64_t n = 10007;
    const gs_type types[] = {GS_F32, GS_F64, GS_I64, GS_U32};
    for (int t = 0; t < 4; t++) {
        const gs_type type = types[t];
        const gs_scan_kind kind = kinds[t % 2];
        const size_t elem = gs_test_out_size(type, GS_SUM);
        gs_test_rng r = gs_test_case_rng(8, (uint64_t)type, 0, 0);
        void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type)),
             *out = gs_test_alloc_or_fail((size_t)n * elem);
        char *planted = gs_test_alloc_or_fail((size_t)n);
        memset(planted, 0, (size_t)n);
        for (int64_t k = 0; k < n; k++) {
            if (gs_type_is_float(type))
                gs_test_set_float(type, in, k, 0.5 + 0.5 * gs_test_rng_unit(&r));
            else
                gs_test_set_int(type, in, k, gs_test_int_value(type, GS_SUM, 0, &r));
        }
        const gs_acc id = gs_acc_identity(type, GS_SUM);
        gs_cpu_scan(type, GS_SUM, kind, in, out, n, id, NULL, NULL);

        for (int pass = 0; pass < 2; pass++) { /* the real result, then with planted errors */
            int64_t expect_wrong = 0, expect_first = -1;
            if (pass == 1) {
                const int64_t want = 1 + (int64_t)gs_test_rng_below(&r, 20);
                while (expect_wrong < want) {
                    /* not out[0], which may be 0 (whose ulp is tiny) */
                    const int64_t k = 1 + (int64_t)gs_test_rng_below(&r, (uint64_t)(n - 1));
                    if (planted[k]) continue;
                    planted[k] = 1;
                    expect_wrong++;
                    if (type == GS_F32)
                        ((float *)out)[k] = (float)off_by_million_ulps(type, ((float *)out)[k]);
                    else if (type == GS_F64)
                        ((double *)out)[k] = off_by_million_ulps(type, ((double *)out)[k]);
                    else
                        ((uint64_t *)out)[k] += 1;
                }
                for (int64_t k = n - 1; k >= 0; k--)
                    if (planted[k]) expect_first = k;
            }
            gs_verify_scan v;
            gs_verify_scan_begin(&v, type, GS_SUM, kind, n, id, 0.0);
            const int64_t cut1 = (int64_t)gs_test_rng_below(&r, (uint64_t)n),
                          cut2 = cut1 + (int64_t)gs_test_rng_below(&r, (uint64_t)(n - cut1));
            int64_t wrong = gs_verify_scan_chunk(&v, in, out, cut1);
            wrong += gs_verify_scan_chunk(&v, (const char *)in + (size_t)cut1 * gs_type_size(type),
                                          (const char *)out + (size_t)cut1 * elem, cut2 - cut1);
            wrong += gs_verify_scan_chunk(&v, (const char *)in + (size_t)cut2 * gs_type_size(type),
                                          (const char *)out + (size_t)cut2 * elem, n - cut2);
            GS_TEST_CHECK_CASE(wrong == expect_wrong && v.wrong == expect_wrong, "planted count", type,
                       GS_SUM, n);
            GS_TEST_CHECK_CASE(v.first_wrong == expect_first, "planted first", type, GS_SUM, n);
            GS_TEST_CHECK_CASE(v.checked == n, "checked", type, GS_SUM, n);
        }
        free(in);
        free(out);
        free(planted);
    }
}

/* ---- registration ------------------------------------------------------- */

typedef struct named_test {
    const char *name;
    CU_TestFunc fn;
} named_test;

static int add_suite(const char *name, const named_test *tests, int count)
{
    CU_pSuite suite = CU_add_suite(name, NULL, NULL);
    if (!suite) return 1;
    for (int k = 0; k < count; k++)
        if (!CU_add_test(suite, tests[k].name, tests[k].fn)) return 1;
    return 0;
}

/* The reference's blocked parallel walk (four blocks per thread, from
 * GS_VERIFY_PARALLEL_MIN elements on) against its serial walk: the same
 * integer reductions and carries, the same wrong counts and first wrong
 * element, with errors planted on both sides of every thread's share's
 * boundaries (block boundaries too) for 2, 3 and 4 threads; the chunk is checked in two pieces, a split one and a short
 * serial one, so the carry passes from the blocked walk to the serial one. */
static void test_verify_parallel_matches_serial(void)
{
    const int64_t n = 3 * GS_VERIFY_PARALLEL_MIN + 5, n1 = n - 77;
    static const struct {
        gs_type type;
        gs_op op;
    } cases[] = {{GS_I64, GS_SUM}, {GS_U32, GS_SUM}, {GS_I32, GS_SUM}, {GS_I32, GS_MAX},
                 {GS_U64, GS_PROD}, {GS_I64, GS_MIN}, {GS_F64, GS_SUM}, {GS_F32, GS_SUM}};
    static const int threads[] = {2, 3, 4};
    const int saved_threads = team_threads();
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        const gs_type type = cases[c].type;
        const gs_op op = cases[c].op;
        const size_t elem = gs_test_out_size(type, op);
        gs_test_rng r = gs_test_case_rng(9, (uint64_t)type, (uint64_t)op, 0);
        void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type)),
             *out = gs_test_alloc_or_fail((size_t)n * elem);
        for (int64_t k = 0; k < n; k++) {
            if (gs_type_is_float(type))
                gs_test_set_float(type, in, k, 0.5 + 0.5 * gs_test_rng_unit(&r));
            else
                gs_test_set_int(type, in, k, gs_test_int_value(type, op, 0, &r));
        }
        for (int t = 0; t < 3; t++) {
            set_threads(threads[t]);
            const gs_acc ser = gs_verify_reduce_ref_serial(type, op, in, n),
                         par = gs_verify_reduce_ref(type, op, in, n);
            const double abs_ser = gs_verify_abs_sum_serial(type, in, n),
                         abs_par = gs_verify_abs_sum(type, in, n);
            GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, par, ser, n, abs_ser), "parallel reduce ref",
                               type, op, n);
            GS_TEST_CHECK_CASE(fabs(abs_par - abs_ser) <= 0x1p-30 * abs_ser, "parallel abs sum", type, op, n);
        }
        for (int kk = 0; kk < 2; kk++) {
            const gs_acc id = gs_acc_identity(type, op);
            set_threads(1);
            gs_cpu_scan(type, op, kinds[kk], in, out, n, id, NULL, NULL);
            for (int pass = 0; pass < 2; pass++) { /* correct, then with planted errors */
                if (pass == 1)
                    for (int t = 0; t < 3; t++)
                        for (int b = 1; b <= threads[t]; b++) {
                            const int64_t edge = n1 * b / threads[t]; /* block b's first */
                            for (int64_t k = edge - 1; k <= edge && k < n; k++) {
                                if (k == 0) continue;
                                if (gs_type_is_float(type)) {
                                    if (elem == 4)
                                        ((float *)out)[k] = (float)off_by_million_ulps(GS_F32, ((float *)out)[k] + 1.0);
                                    else
                                        ((double *)out)[k] = off_by_million_ulps(GS_F64, ((double *)out)[k] + 1.0);
                                } else {
                                    ((unsigned char *)out)[(size_t)k * elem] += 1; /* twice: still wrong */
                                }
                            }
                        }
                for (int t = 0; t < 3; t++) {
                    set_threads(threads[t]);
                    gs_verify_scan vs, vp;
                    gs_verify_scan_begin(&vs, type, op, kinds[kk], n, id, 0.0);
                    gs_verify_scan_begin(&vp, type, op, kinds[kk], n, id, 0.0);
                    const int64_t ws = gs_verify_scan_chunk_serial(&vs, in, out, n);
                    int64_t wp = gs_verify_scan_chunk(&vp, in, out, n1);
                    wp += gs_verify_scan_chunk(&vp, (const char *)in + (size_t)n1 * gs_type_size(type),
                                               (const char *)out + (size_t)n1 * elem, n - n1);
                    GS_TEST_CHECK_CASE(ws == wp && vs.wrong == vp.wrong && vs.checked == vp.checked &&
                                           vs.first_wrong == vp.first_wrong,
                                       "parallel scan check: wrong count", type, op, n);
                    GS_TEST_CHECK_CASE((pass == 0) == (ws == 0), "planted errors are found", type, op, n);
                    if (!gs_type_is_float(type))
                        GS_TEST_CHECK_CASE(vs.prefix.u == vp.prefix.u, "parallel scan check: carry", type,
                                           op, n);
                    else
                        GS_TEST_CHECK_CASE(fabs(vs.prefix.f - vp.prefix.f) <= 0x1p-30 * fabs(vs.prefix.f) &&
                                               fabs(vs.abs_prefix - vp.abs_prefix) <= 0x1p-30 * vs.abs_prefix,
                                           "parallel scan check: float carry", type, op, n);
                }
            }
        }
        set_threads(saved_threads);
        free(in);
        free(out);
    }
}

/* The team's size: a rank bound to its own cores uses them all (Open MPI's
 * default binding); ranks that may all run on every core split them
 * (--bind-to none); a rank bound to a socket that others share takes its
 * share; never fewer than 1. The mask count; and gs_cpu_set_team obeys
 * OMP_NUM_THREADS when set, else sets the team it computes. */
static void test_team_size(void)
{
    static const struct {
        int mine, node, local_size, team;
    } cases[] = {
        {1, 2, 2, 1},     /* 2 ranks, default binding, 2 cores */
        {2, 2, 2, 1},     /* 2 ranks, --bind-to none, 2 cores */
        {2, 2, 1, 2},     /* 1 rank, 2 cores */
        {64, 64, 4, 16},  /* 4 ranks, --bind-to none, 64 cores */
        {16, 64, 4, 16},  /* 4 ranks bound to 16 cores each */
        {32, 64, 4, 16},  /* 4 ranks, 2 to each socket of 32 cores */
        {4, 8, 2, 4},     /* --map-by slot:PE=4, 2 ranks */
        {8, 8, 3, 2},     /* 3 ranks, 8 cores: 2 each, never more than all */
        {2, 2, 5, 1},     /* more ranks than cores: one thread each */
        {0, 0, 1, 1},     /* nothing known: one thread */
        {7, 7, 0, 7},     /* no node size: all of its own */
    };
    for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); c++) {
        const int team = gs_cpu_rank_threads(cases[c].mine, cases[c].node, cases[c].local_size);
        CU_ASSERT_EQUAL(team, cases[c].team);
        if (team != cases[c].team)
            fprintf(stderr, "    failed: gs_cpu_rank_threads(%d, %d, %d) = %d, not %d\n", cases[c].mine,
                    cases[c].node, cases[c].local_size, team, cases[c].team);
    }

    unsigned char mask[GS_CPU_MASK_BYTES];
    memset(mask, 0, sizeof mask);
    CU_ASSERT_EQUAL(gs_cpu_mask_count(mask, sizeof mask), 0);
    mask[0] = 0x81;
    mask[GS_CPU_MASK_BYTES - 1] = 0xff;
    CU_ASSERT_EQUAL(gs_cpu_mask_count(mask, sizeof mask), 10);
    const int mine = gs_cpu_affinity(mask, sizeof mask);
    CU_ASSERT(mine >= 1);
    CU_ASSERT_EQUAL(gs_cpu_mask_count(mask, sizeof mask), mine);

#ifdef _OPENMP
    const int saved = gs_cpu_threads();
    const char *user = getenv("OMP_NUM_THREADS");
    char *kept = user ? strdup(user) : NULL;
    unsetenv("OMP_NUM_THREADS");
    CU_ASSERT_EQUAL(gs_cpu_set_team(6, 12, 2), 6);
    CU_ASSERT_EQUAL(gs_cpu_set_team(6, 12, 4), 3);
    setenv("OMP_NUM_THREADS", "5", 1);
    set_threads(5);
    CU_ASSERT_EQUAL(gs_cpu_set_team(6, 12, 4), 5);   /* the user's setting stands */
    if (kept) setenv("OMP_NUM_THREADS", kept, 1); else unsetenv("OMP_NUM_THREADS");
    free(kept);
    set_threads(saved);
#endif
}

#define NAMED_RANDOM_TEST(sfx, E) {"random " #sfx, test_random_##sfx},


/* ---- --exact (gs_exact.h) --------------------------------------------------------- */

/* Any finite double from random bits: every exponent, subnormals included. */
static double random_finite_f64(void)
{
    for (;;) {
        uint64_t bits = ((uint64_t)rand() << 62) ^ ((uint64_t)rand() << 31) ^ (uint64_t)rand();
        double x;
        memcpy(&x, &bits, sizeof x);
        if (isfinite(x)) return x;
    }
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The exact sum of two doubles rounded once is IEEE's a + b: an independent
 * reference for the rounding, over the whole range (subnormal results and
 * overflow to infinity included), and {a, b, -a} must give b exactly. */
static void test_exact_two_sum(void)
{
    srand(13);
    for (int i = 0; i < 200000; i++) {
        double a = random_finite_f64(), b = random_finite_f64();
        if (i % 4 == 1) b = ldexp(b, -(rand() % 60));            /* near exponents: real rounding */
        if (i % 4 == 2) b = nextafter(-a, i % 8 < 4 ? 0.0 : INFINITY);
        gs_exact e;
        gs_exact_clear(&e);
        gs_exact_add_f64(&e, a);
        gs_exact_add_f64(&e, b);
        if (!same_bits(gs_exact_round_f64(&e), a + b)) {
            CU_FAIL("exact a + b rounds as IEEE a + b");
            printf("a=%a b=%a got %a want %a\n", a, b, gs_exact_round_f64(&e), a + b);
            return;
        }
        gs_exact_add_f64(&e, -a);
        CU_ASSERT_TRUE(same_bits(gs_exact_round_f64(&e), b == 0 ? 0.0 : b));
        /* f32 of two floats whose exact sum a double holds: one rounding */
        float fa = (float)ldexp(a, -(int)(rand() % 3) * 400), fb = (float)(fa * ldexp(1.0, -(rand() % 28)));
        if (!isfinite(fa) || !isfinite(fb) || fa == 0) continue;   /* -0 + -0: IEEE's -0, exact +0 */
        gs_exact f;
        gs_exact_clear(&f);
        gs_exact_add_f32(&f, fa);
        gs_exact_add_f32(&f, (i & 1) ? fb : -fb);
        float want = (float)((double)fa + ((i & 1) ? (double)fb : -(double)fb));
        float got = gs_exact_round_f32(&f);
        CU_ASSERT_EQUAL(memcmp(&got, &want, sizeof got), 0);
    }
}

/* Hand-computed cases: ties to even, the overflow threshold, subnormals,
 * cancellation far below the result, the special-value rules. */
static void test_exact_known(void)
{
    struct { double x[4]; int n; double want; } cases[] = {
        {{1.0, 0x1p-53}, 2, 1.0},                         /* tie: to even (down) */
        {{1.0, 0x1p-52, 0x1p-53}, 3, 1.0 + 0x1p-51},      /* tie: to even (up) */
        {{1.0, 0x1p-53, 0x1p-1074}, 3, 1.0 + 0x1p-52},    /* above the tie by the least subnormal */
        {{DBL_MAX, 0x1p970}, 2, INFINITY},                /* MAX + half an ulp: to infinity */
        {{DBL_MAX, 0x1p969}, 2, DBL_MAX},                 /* below the threshold */
        {{-DBL_MAX, -DBL_MAX, DBL_MAX}, 3, -DBL_MAX},     /* overflow on the way is no overflow */
        {{0x1p-1074, 0x1p-1074, 0x1p-1074}, 3, 0x3p-1074},/* subnormal sums are exact */
        {{0x1p-1022, -0x1p-1074}, 2, 0x1p-1022 - 0x1p-1074},
        {{1e308, 1.0, -1e308, 0x1p-1074}, 4, 1.0},        /* cancellation hides nothing */
        {{0.0, -0.0}, 2, 0.0},
        {{1.0, NAN}, 2, NAN},
        {{INFINITY, 1.0}, 2, INFINITY},
        {{-INFINITY, -INFINITY}, 2, -INFINITY},
        {{INFINITY, -INFINITY}, 2, NAN},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        gs_exact e;
        gs_exact_clear(&e);
        for (int i = 0; i < cases[c].n; i++) gs_exact_add_f64(&e, cases[c].x[i]);
        const double got = gs_exact_round_f64(&e), want = cases[c].want;
        CU_ASSERT_TRUE(isnan(want) ? isnan(got) : same_bits(got, want));
    }
    /* f32: FLT_MAX + half an ulp overflows; subnormal f32 output */
    gs_exact e;
    gs_exact_clear(&e);
    gs_exact_add_f32(&e, FLT_MAX);
    gs_exact_add_f32(&e, 0x1p103f);
    CU_ASSERT_TRUE(isinf(gs_exact_round_f32(&e)));
    gs_exact_clear(&e);
    gs_exact_add_f64(&e, 0x1p-149);
    gs_exact_add_f64(&e, 0x1p-151);   /* below half the least f32 subnormal: rounds down */
    CU_ASSERT_EQUAL(gs_exact_round_f32(&e), 0x1p-149f);
}

/* Carry-save digits stay exact past the normalization threshold: states
 * that claim nearly GS_EXACT_PENDING_MAX adds each, merged and added to
 * many times, normalize on the way and keep the exact value. */
static void test_exact_many_adds(void)
{
    gs_exact a, b;
    gs_exact_clear(&a);
    gs_exact_clear(&b);
    gs_exact_add_f64(&b, -DBL_MAX);
    gs_exact_add_f64(&b, 0x1p-1074);
    b.pending = GS_EXACT_PENDING_MAX - 1;
    for (int i = 0; i < 1000; i++) {
        gs_exact_merge(&a, &b);
        gs_exact_add_f64(&a, DBL_MAX);
        CU_ASSERT_TRUE(a.pending <= GS_EXACT_PENDING_MAX + 1);
    }
    CU_ASSERT_EQUAL(gs_exact_round_f64(&a), 1000 * 0x1p-1074);
}

/* gs_cpu_scan_exact and gs_cpu_reduce_exact of x[0..n) (f32 or f64) from
 * the exact carry *carry_in, out of place and in place, against
 * element-by-element gs_exact adds and the full rounding: every output, the
 * carry left and the sum. Returns the outputs that differ. */
static int64_t check_exact_kernels(gs_type type, gs_scan_kind kind, const void *x, int64_t n,
                                   const gs_exact *carry_in)
{
    const size_t size = type == GS_F32 ? sizeof(float) : sizeof(double);
    unsigned char *y = malloc((size_t)n * size + 1), *inplace = malloc((size_t)n * size + 1);
    CU_ASSERT_FATAL(y && inplace);
    memset(y, 0xff, (size_t)n * size);   /* poison: NaNs */
    memcpy(inplace, x, (size_t)n * size);
    gs_exact carry = *carry_in, carry2 = *carry_in, sum = *carry_in, ref = *carry_in;
    gs_cpu_scan_exact(type, kind, x, y, n, &carry);
    gs_cpu_scan_exact(type, kind, inplace, inplace, n, &carry2);
    gs_cpu_reduce_exact(type, x, n, &sum);
    int64_t wrong = memcmp(y, inplace, (size_t)n * size) != 0;
    for (int64_t i = 0; i < n; i++) {
        for (int step = 0; step < 2; step++) {
            if (step == (kind == GS_INCLUSIVE)) {   /* the output: before (exclusive) or after the add */
                if (type == GS_F32) {
                    const float want = gs_exact_round_f32(&ref);
                    wrong += memcmp(y + (size_t)i * size, &want, size) != 0;
                } else {
                    const double want = gs_exact_round_f64(&ref);
                    wrong += memcmp(y + (size_t)i * size, &want, size) != 0;
                }
            } else if (type == GS_F32) {
                gs_exact_add_f32(&ref, ((const float *)x)[i]);
            } else {
                gs_exact_add_f64(&ref, ((const double *)x)[i]);
            }
        }
    }
    const double want = gs_exact_round_f64(&ref);
    wrong += !same_bits(gs_exact_round_f64(&carry), want) + !same_bits(gs_exact_round_f64(&carry2), want)
           + !same_bits(gs_exact_round_f64(&sum), want);
    free(y);
    free(inplace);
    return wrong;
}

/* An exact state holding the double v. */
static gs_exact exact_of(double v)
{
    gs_exact e;
    gs_exact_clear(&e);
    gs_exact_add_f64(&e, v);
    return e;
}

/* The CPU backend's exact kernels (batched lanes, carried scan states with
 * the top-digit hint, threads) against element-by-element gs_exact_add and
 * the full rounding, on whole-range data with cancellation. */
static void test_exact_cpu_kernels(void)
{
    srand(7);
    const int64_t n = 200003;
    double *x = malloc((size_t)n * sizeof *x);
    float *xf = malloc((size_t)n * sizeof *xf);
    CU_ASSERT_FATAL(x && xf);
    for (int64_t i = 0; i < n; i++) {
        x[i] = i % 5 == 0 ? random_finite_f64() : i % 5 == 1 ? -x[i - 1] : ldexp((double)rand() / RAND_MAX - 0.5, rand() % 80 - 40);
        xf[i] = (float)ldexp(x[i], 0);
        if (!isfinite(xf[i])) xf[i] = (float)i;
    }
    const gs_exact half = exact_of(0.5), zero = exact_of(0);
    for (int kind = 0; kind < 2; kind++) {
        const gs_scan_kind k = kind ? GS_EXCLUSIVE : GS_INCLUSIVE;
        CU_ASSERT_EQUAL(check_exact_kernels(GS_F64, k, x, n, &half), 0);
        CU_ASSERT_EQUAL(check_exact_kernels(GS_F32, k, xf, n, &zero), 0);
    }
    free(x);
    free(xf);
}

/* The CPU exact scan's rounding window and each of its fallbacks, against
 * element-by-element gs_exact_add and the full rounding: runs of low-range
 * data (the window), then an element far above it (re-opened higher) and
 * small ones below it, its cancellation back down (the window too short:
 * full rounding), ties broken only by a sticky bit far below the window,
 * borrows through it (1 - 2^-300), sums crossing zero, exact zeros,
 * subnormal sums and overflow to infinity and back; repeated past a batch
 * of 2^20 elements. Plus hand-computed prefixes of the ties. */
static int64_t fill_window_cases(double *x, int64_t n)
{
    static const double special_runs[] = {
        1.0, 0x1p-53, 0x1p-300, -0x1p-300, -0x1p-53,   /* 1, 1 (tie: even), 1 + 2^-52, 1, 1 */
        -2.0, -0x1p-53, -0x1p-300,                      /* -1, -1, -(1 + 2^-52) */
        1.0, 0x1p-300, -1.0, -0x1p-300,                 /* exact: 2^-300 rounds from below the window, then +0 */
        0x1p70, 0.25, 0x1p-20, -0x1p70,                 /* far above the window, small ones below it, cancelled */
        0x1p-1074, 0x1p-1070, -0x1p-1073,               /* subnormal sums */
        0x1.fffffffffffffp1023, 0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023, /* inf, then DBL_MAX */
        -0x1.fffffffffffffp1023, 0.0, -0.0, 0.0,
    };
    const int64_t nspecial = (int64_t)(sizeof special_runs / sizeof special_runs[0]);
    int64_t i = 0;
    while (i < n) {
        for (int64_t k = 0; k < 997 && i < n; k++, i++) {   /* low range, both signs near zero sums */
            const double u = (double)rand() / RAND_MAX;
            x[i] = (i / 997) % 3 == 2 ? u - 0.5 : u;
        }
        for (int64_t k = 0; k < nspecial && i < n; k++, i++) x[i] = special_runs[k];
        if (i < n) x[i++] = -0x1p-300 * (rand() % 7);   /* below the window, borrowing */
    }
    return i;
}

static void test_exact_scan_window(void)
{
    srand(11);
    const int64_t n = ((int64_t)1 << 20) + 4099;
    double *x = malloc((size_t)n * sizeof *x);
    float *xf = malloc((size_t)n * sizeof *xf);
    CU_ASSERT_FATAL(x && xf);
    fill_window_cases(x, n);
    for (int64_t i = 0; i < n; i++) {
        /* the same shapes in f32's range: 2^-53 -> 2^-24, 2^-300 -> 2^-100, ... */
        const double v = x[i], a = fabs(v);
        xf[i] = a == 0x1p-53 ? copysignf(0x1p-24f, (float)v) : a == 0x1p-300 ? copysignf(0x1p-100f, (float)v)
              : a == 0x1p70 ? copysignf(0x1p40f, (float)v) : a >= 0x1p-1074 && a <= 0x1p-1070 ? copysignf(0x1p-149f, (float)v)
              : a > 0x1p1000 ? copysignf(FLT_MAX, (float)v) : (float)v;
    }
    const gs_exact below = exact_of(-0x1p-600), zero = exact_of(0);   /* a carry-in far below everything */
    for (int kind = 0; kind < 2; kind++) {
        const gs_scan_kind k = kind ? GS_EXCLUSIVE : GS_INCLUSIVE;
        CU_ASSERT_EQUAL(check_exact_kernels(GS_F64, k, x, n, &below), 0);
        CU_ASSERT_EQUAL(check_exact_kernels(GS_F32, k, xf, n, &zero), 0);
    }
    /* by hand: the ties and the sticky bit far below */
    static const double tie_in[] = {1.0, 0x1p-53, 0x1p-300, -0x1p-300, -0x1p-53, -2.0,
                                    -0x1p-53, -0x1p-300, 1.0, 0x1p-300, 0x1p-53, -0x1p-300};
    static const double tie_want[] = {1.0, 1.0, 1.0 + 0x1p-52, 1.0, 1.0, -1.0,
                                      -1.0, -1.0 - 0x1p-52, -0x1p-53, -0x1p-53, 0.0, -0x1p-300};
    double tie_out[12];
    gs_exact carry;
    gs_exact_clear(&carry);
    gs_cpu_scan_exact(GS_F64, GS_INCLUSIVE, tie_in, tie_out, 12, &carry);
    for (int i = 0; i < 12; i++) {
        if (!same_bits(tie_out[i], tie_want[i])) {
            CU_FAIL("hand-computed exact prefix");
            printf("prefix %d: got %a want %a\n", i, tie_out[i], tie_want[i]);
        }
    }
    free(x);
    free(xf);
}

/* The kernels' fast path (whole blocks on fixed grids, prefixes rounded from
 * doubles when a bound decides) against element by element, on data that
 * takes it and data that makes it decline: low-range blocks of every size
 * around the block length and its vector steps; prefixes on coarse grids,
 * so that many of them land on or next to a rounding boundary of the
 * element type, from carries with sticky bits far below (ties to break);
 * blocks whose magnitudes jump by up to 2^40 from one to the next, with
 * zeros, -0 and elements too small for the block's grid; cancellation to
 * zero and across it; subnormals summing to exact zeros (+0, never -0); a
 * NaN or an infinity in one block; f64 prefixes next to overflow. */
static void test_exact_blocks(void)
{
    srand(17);
    const int64_t nmax = 5 * 1024 + 13;
    double *x = malloc((size_t)nmax * sizeof *x);
    float *xf = malloc((size_t)nmax * sizeof *xf);
    CU_ASSERT_FATAL(x && xf);
    static const int64_t sizes[] = {0, 1, 3, 7, 8, 9, 1023, 1024, 1025, 2048 + 4, 3 * 1024 + 7, 5 * 1024 + 13};
    static const double carries[][2] = {{0, 0}, {0.5, 0x1p-80}, {0.5, -0x1p-80}, {-1e6, 0x1p-200}, {3.0, 0x1p-60}};
    for (int shape = 0; shape < 7; shape++) {
        for (int64_t i = 0; i < nmax; i++) {
            const double u = (double)rand() / RAND_MAX, k = (double)(rand() % (1 << 21) - (1 << 20));
            const int block = (int)(i / 1024);
            switch (shape) {
            case 0: x[i] = u; xf[i] = (float)u; break;                                   /* low range */
            case 1: x[i] = k * 0x1p-55 + 0x1p-30 * (rand() % 3); xf[i] = (float)(k * 0x1p-26); break; /* coarse grids */
            case 2: /* magnitudes jumping per block, zeros, -0, stray tiny ones */
                x[i] = ldexp(u - 0.3, (block * 37) % 80 - 40);
                if (rand() % 50 == 0) x[i] = rand() % 2 ? 0.0 : -0.0;
                if (rand() % 900 == 0) x[i] = ldexp(u, -70);
                xf[i] = (float)x[i];
                break;
            case 3: x[i] = i % 2 ? -x[i - 1] : k; xf[i] = (float)x[i]; break;            /* cancellation to 0 */
            case 4: x[i] = k * 0x1p-52 - (i % 997 == 0 ? 1e3 : 0); xf[i] = (float)(k * 0x1p-23); break; /* across 0 */
            case 5: /* near the least subnormals, cancelling to exact zeros */
                x[i] = i % 3 == 2 ? -(x[i - 1] + x[i - 2]) : k * 0x1p-1074;
                xf[i] = i % 3 == 2 ? -(xf[i - 1] + xf[i - 2]) : (float)(k * 0x1p-149);
                break;
            default: x[i] = u; xf[i] = (float)u;                                         /* a special */
                if (i == 1500) x[i] = xf[i] = NAN;
                if (i == 3000) x[i] = xf[i] = INFINITY;
            }
        }
        for (size_t s = 0; s < 2 * sizeof sizes / sizeof sizes[0]; s++) {
            /* every size twice: with the widest vectors, then with 2 lanes */
            gs_cpu_exact_allow_wide(s < sizeof sizes / sizeof sizes[0]);
            const int64_t n = sizes[s % (sizeof sizes / sizeof sizes[0])];
            for (size_t c = 0; c < sizeof carries / sizeof carries[0]; c++) {
                gs_exact carry;
                gs_exact_clear(&carry);
                gs_exact_add_f64(&carry, carries[c][0]);
                gs_exact_add_f64(&carry, carries[c][1]);
                for (int kind = 0; kind < 2; kind++) {
                    const gs_scan_kind k = kind ? GS_EXCLUSIVE : GS_INCLUSIVE;
                    const int64_t wrong = check_exact_kernels(GS_F64, k, x, n, &carry)
                                        + check_exact_kernels(GS_F32, k, xf, n, &carry);
                    if (wrong) {
                        CU_FAIL("exact kernels (blocks) vs element by element");
                        printf("shape %d n=%lld carry %a%+a kind %d: %lld wrong\n", shape, (long long)n,
                               carries[c][0], carries[c][1], kind, (long long)wrong);
                    }
                }
            }
        }
    }
    /* f64 prefixes next to overflow, from carries at f64's largest: results
     * at, past and back below the threshold (a tie there rounds to inf) */
    static const double big_carries[] = {0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023, 0x1p1023, 0x1.ffffp1023};
    for (int wide = 1; wide >= 0; wide--) {
        gs_cpu_exact_allow_wide(wide);
        for (size_t c = 0; c < sizeof big_carries / sizeof big_carries[0]; c++) {
            for (int64_t i = 0; i < 4101; i++)   /* mostly away from zero: past the threshold */
                x[i] = copysign(ldexp(1 + rand() % 4, 957 + rand() % 4), big_carries[c]) * (rand() % 8 ? 1 : -1);
            const gs_exact carry = exact_of(big_carries[c]);
            for (int kind = 0; kind < 2; kind++) {
                const int64_t wrong = check_exact_kernels(GS_F64, kind ? GS_EXCLUSIVE : GS_INCLUSIVE, x, 4101, &carry);
                if (wrong) {
                    CU_FAIL("exact kernels next to f64 overflow");
                    printf("carry %a kind %d wide %d: %lld wrong\n", big_carries[c], kind, wide, (long long)wrong);
                }
            }
        }
    }
    gs_cpu_exact_allow_wide(1);
    free(x);
    free(xf);
}

/* Two exact states hold the same value (and specials), whatever their
 * pending adds. */
static int same_exact(const gs_exact *a, const gs_exact *b)
{
    gs_exact x = *a, y = *b;
    gs_exact_normalize(&x);
    gs_exact_normalize(&y);
    return memcmp(x.digit, y.digit, sizeof x.digit) == 0 && x.special == y.special;
}

/* --verify's exact check in blocks (GS_VERIFY_PARALLEL_MIN elements on)
 * against its serial walk, for 2, 3 and 4 threads: the same wrong count,
 * first wrong element and exact carry, with the chunk checked in a split
 * piece and a short serial one; and the blocked exact reduction the serial
 * one's sum. Data from 2^-61 to 2^59 with both signs, so blocks' sums round
 * and cancel; outputs gs_cpu_scan_exact's, then one ulp off on both sides of
 * every thread's share's boundaries. */
static void test_verify_exact_parallel_matches_serial(void)
{
    const int64_t n = 3 * GS_VERIFY_PARALLEL_MIN + 5, n1 = n - 77;
    static const int threads[] = {2, 3, 4};
    const int saved_threads = team_threads();
    gs_exact carry_in = exact_of(3.0);
    gs_exact_add_f64(&carry_in, 0x1p-60);
    srand(23);
    for (int wide = 0; wide < 2; wide++) {
        const gs_type type = wide ? GS_F64 : GS_F32;
        const size_t size = wide ? sizeof(double) : sizeof(float);
        unsigned char *in = malloc((size_t)n * size), *out = malloc((size_t)n * size);
        CU_ASSERT_FATAL(in && out);
        for (int64_t k = 0; k < n; k++) {
            const double v = ldexp((double)rand() / RAND_MAX - 0.5, rand() % 121 - 60);
            if (wide) ((double *)in)[k] = v;
            else ((float *)in)[k] = (float)v;
        }
        for (int kk = 0; kk < 2; kk++) {
            gs_exact carry = carry_in;
            set_threads(1);
            gs_cpu_scan_exact(type, kinds[kk], in, out, n, &carry);
            for (int pass = 0; pass < 2; pass++) { /* correct, then with planted errors */
                if (pass == 1)
                    for (int t = 0; t < 3; t++)
                        for (int b = 1; b <= threads[t]; b++)
                            for (int64_t k = n1 * b / threads[t] - 1; k <= n1 * b / threads[t] && k < n; k++) {
                                if (wide) ((double *)out)[k] = nextafter(((double *)out)[k], INFINITY);
                                else ((float *)out)[k] = nextafterf(((float *)out)[k], INFINITY);
                            }
                for (int t = 0; t < 3; t++) {
                    set_threads(threads[t]);
                    gs_verify_scan vs, vp;
                    gs_verify_scan_begin_exact(&vs, type, kinds[kk], &carry_in);
                    gs_verify_scan_begin_exact(&vp, type, kinds[kk], &carry_in);
                    const int64_t ws = gs_verify_scan_chunk_serial(&vs, in, out, n);
                    int64_t wp = gs_verify_scan_chunk(&vp, in, out, n1);
                    wp += gs_verify_scan_chunk(&vp, in + (size_t)n1 * size, out + (size_t)n1 * size, n - n1);
                    GS_TEST_CHECK_CASE(ws == wp && vs.wrong == vp.wrong && vs.checked == vp.checked &&
                                           vs.first_wrong == vp.first_wrong,
                                       "parallel exact scan check: wrong count", type, GS_SUM, n);
                    GS_TEST_CHECK_CASE((pass == 0) == (ws == 0), "planted errors are found", type, GS_SUM, n);
                    GS_TEST_CHECK_CASE(same_exact(&vs.exact_prefix, &vp.exact_prefix) &&
                                           same_exact(&vs.exact_prefix, &carry),
                                       "parallel exact scan check: carry", type, GS_SUM, n);
                }
            }
        }
        set_threads(1);
        gs_exact serial = carry_in;
        gs_verify_reduce_exact(type, in, n, &serial);
        for (int t = 0; t < 3; t++) {
            set_threads(threads[t]);
            gs_exact blocked = carry_in;
            gs_verify_reduce_exact(type, in, n, &blocked);
            GS_TEST_CHECK_CASE(same_exact(&serial, &blocked), "parallel exact reduce ref", type, GS_SUM, n);
        }
        set_threads(saved_threads);
        free(in);
        free(out);
    }
}

static int register_suites(void)
{
    if (gs_test_rank() == 0) printf("gs_cpu_threads() = %d by default\n", gs_cpu_threads());
    static const named_test random_tests[] = {
        TYPE_TESTS(NAMED_RANDOM_TEST) /* one per type */
        {"chunks chain like the whole", test_chunks_chain},
        {"in place", test_in_place},
        {"thread counts", test_thread_counts},
        {"empty", test_empty},
    };
    static const named_test known_tests[] = {
        {"i32 sum is exact in 64 bits", test_i32_sum_is_exact_64bit},
        {"u64 sum overflow", test_u64_sum_overflow},
        {"i64 prefix overflow position", test_i64_prefix_overflow_position},
        {"block overflow is not prefix overflow", test_block_overflow_is_not_prefix_overflow},
        {"integer products wrap", test_prod_wraps},
        {"NaN propagates in min/max", test_nan_propagates_in_min_max},
        {"exclusive scan from identity", test_exclusive_from_identity},
        {"f32 accumulates in fp64", test_f32_accumulates_in_fp64},
    };
    static const named_test other_tests[] = {
        {"generate", test_generate},
        {"rule names agree with gs_rules.h", test_rule_names},
        {"verify reduce bound", test_verify_reduce_bound},
        {"verify scan counts planted errors", test_verify_scan_counts_planted},
        {"verify in parallel as serially", test_verify_parallel_matches_serial},
        {"team size from affinity and node ranks", test_team_size},
    };
    static const struct named_test exact_tests[] = {
        {"exact a + b rounds as IEEE", test_exact_two_sum},
        {"exact hand-computed cases", test_exact_known},
        {"exact past the normalization threshold", test_exact_many_adds},
        {"exact CPU kernels vs element by element", test_exact_cpu_kernels},
        {"exact CPU scan window and its fallbacks", test_exact_scan_window},
        {"exact CPU blocks and their fallbacks", test_exact_blocks},
        {"exact verify in parallel as serially", test_verify_exact_parallel_matches_serial},
    };
    return add_suite("cpu: exact sums (gs_exact.h)", exact_tests, (int)(sizeof exact_tests / sizeof exact_tests[0])) ||
           add_suite("cpu: random data vs reference", random_tests,
                     (int)(sizeof random_tests / sizeof random_tests[0])) ||
           add_suite("cpu: hand-computed cases", known_tests,
                     (int)(sizeof known_tests / sizeof known_tests[0])) ||
           add_suite("cpu: generator and reference", other_tests,
                     (int)(sizeof other_tests / sizeof other_tests[0]));
}

int main(int argc, char **argv) { return gs_test_main(argc, argv, register_suites); }
