/*
 * gs_test_data.h - test data the backend suites (test_cpu, test_cuda,
 * test_stream) share: a random generator of their own, poisoned output
 * buffers with a guard, element access by type, random values per type and
 * op, and the 128-bit expectations (overflow, carries) to check against.
 */
#ifndef GS_TEST_DATA_H
#define GS_TEST_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gs_test.h"
#include "gs_verify.h"

#define GS_TEST_POISON 0xA5
#define GS_TEST_GUARD_BYTES 64

/* CU_ASSERT that also names the case, since one test runs many. */
#define GS_TEST_CHECK_CASE(cond, what, type, op, n)                                                \
    do {                                                                                           \
        const int ok_ = (cond);                                                                    \
        CU_assertImplementation(ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, "",           \
                                CU_FALSE);                                                         \
        if (!ok_)                                                                                  \
            fprintf(stderr, "    failed: %s %s %s n=%lld (GS_TEST_SEED=%llu)\n", (what),           \
                    gs_type_name(type), gs_op_name(op), (long long)(n),                            \
                    (unsigned long long)gs_test_seed());                                           \
    } while (0)

/* splitmix64, kept apart from gs_gen.h so that the data under test does not
 * come from the code under test. */
typedef struct gs_test_rng {
    uint64_t state;
} gs_test_rng;

uint64_t gs_test_rng_next(gs_test_rng *r);
uint64_t gs_test_rng_below(gs_test_rng *r, uint64_t bound);
double gs_test_rng_unit(gs_test_rng *r);

/* A generator for one case, distinct per (suite, a, b), and with `per_rank`
 * also per rank. */
gs_test_rng gs_test_case_rng(uint64_t suite, uint64_t a, uint64_t b, int per_rank);

/* malloc that fails the test (fatally) when it fails; never NULL. */
void *gs_test_alloc_or_fail(size_t bytes);

/* Bytes of one output element of a scan of (type, op). */
size_t gs_test_out_size(gs_type type, gs_op op);

/* An output buffer of n elements plus a guard, every byte poisoned. */
void *gs_test_poisoned_output(size_t elem, int64_t n);
/* 1 when the guard after n elements of `elem` bytes is still poisoned. */
int gs_test_guard_intact(const void *out, size_t elem, int64_t n);

/* Store the low bits of `bits` as element k of an integer array. */
void gs_test_set_int(gs_type type, void *buf, int64_t k, uint64_t bits);
void gs_test_set_float(gs_type type, void *buf, int64_t k, double v);
/* Element k of an integer array, exactly, as a 128-bit integer. */
gs_i128 gs_test_get_int(gs_type type, const void *buf, int64_t k);

/* Integers: the full range for 32-bit types (their sums are 64-bit),
 * negatives included; for 64-bit types values of 40 bits, whose sums cannot
 * overflow, or with `extreme` the full range, whose prefix sums overflow.
 * Products get odd factors so that they do not collapse to 0 after 64 even
 * ones. */
uint64_t gs_test_int_value(gs_type type, gs_op op, int extreme, gs_test_rng *r);
/* Integers at and next to the type's limits. */
uint64_t gs_test_int_special(gs_type type, gs_test_rng *r);
/* Finite floats that stress an op: signed zeros, subnormals, limits. */
double gs_test_float_special(gs_type type, gs_op op, gs_test_rng *r);

/* A random float of (type, op); each suite draws its own (products differ
 * with how many factors a suite multiplies). */
typedef double (*gs_test_float_fn)(gs_type type, gs_op op, gs_test_rng *r);

/* n random elements for (type, op), floats from float_value; with `extreme`,
 * one in 32 is special and floats get one infinity in the second half and a
 * NaN in the last quarter. */
void gs_test_fill_random(gs_type type, gs_op op, void *buf, int64_t n, int extreme,
                         gs_test_rng *r, gs_test_float_fn float_value);

/* A random scan carry of (type, op): the carry of one random element. */
gs_acc gs_test_random_carry(gs_type type, gs_op op, gs_test_rng *r, double *abs_offset,
                            gs_test_float_fn float_value);

/* Whether some prefix sum carry + x[0..k], k < n, leaves the 64-bit range:
 * the overflow a scan must report, worked out in 128 bits. */
int gs_test_expect_overflow(gs_type type, gs_op op, const void *in, int64_t n, gs_acc carry);

/* Scan carries agree: integers bit for bit, floats within the bound. */
int gs_test_same_carry(gs_type type, gs_op op, gs_acc got, gs_acc ref, int64_t n,
                       double abs_sum);

#endif
