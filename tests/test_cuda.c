/*
 * test_cuda.c - the CUDA backend (gpu/gs_cuda.h) against the independent
 * reference (gs_verify), on every rank's own GPU.
 *
 * Every case draws fresh random data (seeded with gs_test_seed(), so a
 * failure replays with GS_TEST_SEED=...), poisons the device output with a
 * guard after it, and checks every element, the carry and the overflow flag.
 * A machine without a usable GPU skips the program (exit 77).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cpu.h"
#include "gs_cuda.h"
#include "gs_cuda_exact.h"
#include "gs_exact.h"
#include "gs_gen.h"
#include "gs_test.h"
#include "gs_test_data.h"
#include "gs_verify.h"

#define BIG_N ((int64_t)1000003)
#define HUGE_N (((int64_t)1 << 24) + 3)        /* many tiles, many grid strides */
#define WIDE_N (((int64_t)1 << 26) + 5)        /* the scan's wide tiles on up to 170 multiprocessors */
#define LARGE_N (((int64_t)1 << 31) + 17)      /* past 32-bit indices */

static const gs_scan_kind kinds[] = {GS_INCLUSIVE, GS_EXCLUSIVE};
static gs_cuda *gpu;

/* GS_TEST_MAX_N caps every size (compute-sanitizer runs use small ones):
 * sizes above it are skipped, fixed sizes shrink to it. */
static int64_t max_n(void)
{
    const char *env = getenv("GS_TEST_MAX_N");
    return env && *env ? strtoll(env, NULL, 0) : INT64_MAX;
}
static int64_t capped(int64_t n) { return n < max_n() ? n : max_n(); }

/* ---- helpers ----------------------------------------------------------- */

/* A backend call that must succeed; on failure the message says why. */
#define CHECK_GPU(call)                                                                      \
    do {                                                                                     \
        const gs_status st_ = (call);                                                        \
        CU_ASSERT_EQUAL_FATAL(st_, GS_OK);                                                   \
    } while (0)

static void report_failure(gs_status status)
{
    if (status != GS_OK)
        fprintf(stderr, "    rank %d: %s: %s\n", gs_test_rank(), gs_status_name(status),
                gs_cuda_error(gpu));
}

static gs_status gpu_call(gs_status status)
{
    report_failure(status);
    return status;
}

static void *device_alloc(size_t bytes)
{
    void *p = NULL;
    CU_ASSERT_EQUAL_FATAL(gpu_call(gs_cuda_malloc(gpu, &p, bytes ? bytes : 1)), GS_OK);
    return p;
}

/* Floats: sums of mixed signs and magnitudes, products of factors near +-1
 * whose logarithms are symmetric about 0 (so that a product of 2^24 of them
 * neither drifts into f32's subnormals nor overflows), min/max over every
 * finite exponent, subnormals included. */
static double float_value(gs_type type, gs_op op, gs_test_rng *r)
{
    switch (op) {
    case GS_SUM: return ldexp(2.0 * gs_test_rng_unit(r) - 1.0, (int)gs_test_rng_below(r, 41) - 20);
    case GS_PROD:
        return (gs_test_rng_below(r, 2) ? -1.0 : 1.0) * exp((2.0 * gs_test_rng_unit(r) - 1.0) * 0x1p-7);
    default:
        if (type == GS_F32) {
            uint32_t bits = ((uint32_t)gs_test_rng_next(r) & 0x807FFFFFu) | (uint32_t)gs_test_rng_below(r, 255) << 23;
            float f;
            memcpy(&f, &bits, sizeof f);
            return f;
        } else {
            uint64_t bits = (gs_test_rng_next(r) & 0x800FFFFFFFFFFFFFull) | gs_test_rng_below(r, 2047) << 52;
            double d;
            memcpy(&d, &bits, sizeof d);
            return d;
        }
    }
}

/* Device buffers of one case: the input at element offset `in_offset` of
 * its buffer, the output at `out_offset`, followed by a guard. */
typedef struct device_case {
    char *in_buf, *out_buf;
    void *in, *out;
    void *host_out;       /* n output elements and the guard */
    size_t out_bytes;     /* n output elements */
} device_case;

static void case_open(device_case *c, gs_type type, gs_op op, const void *in, int64_t n,
                      int in_offset, int out_offset)
{
    const size_t elem = gs_type_size(type), oelem = gs_test_out_size(type, op);
    c->in_buf = device_alloc((size_t)(n + in_offset) * elem);
    c->out_bytes = (size_t)n * oelem;
    c->out_buf = device_alloc((size_t)out_offset * oelem + c->out_bytes + GS_TEST_GUARD_BYTES);
    c->in = c->in_buf + (size_t)in_offset * elem;
    c->out = c->out_buf + (size_t)out_offset * oelem;
    c->host_out = gs_test_alloc_or_fail(c->out_bytes + GS_TEST_GUARD_BYTES);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, c->in, in, (size_t)n * elem)));
}

/* Poison the output and its guard on the device. */
static void case_poison(device_case *c)
{
    memset(c->host_out, GS_TEST_POISON, c->out_bytes + GS_TEST_GUARD_BYTES);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, c->out, c->host_out, c->out_bytes + GS_TEST_GUARD_BYTES)));
}

/* Fetch the output and its guard; 1 when the guard is intact. */
static int case_fetch(device_case *c)
{
    CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, c->host_out, c->out, c->out_bytes + GS_TEST_GUARD_BYTES)));
    return gs_test_guard_intact(c->host_out, 1, (int64_t)c->out_bytes);
}

static void case_close(device_case *c)
{
    gs_cuda_free(gpu, c->in_buf);
    gs_cuda_free(gpu, c->out_buf);
    free(c->host_out);
}

/* The device reduction and both scans from `carry_in`, checked against the
 * reference element by element, with guard, carry and overflow flag. */
static void check_on_device(gs_type type, gs_op op, const void *in, int64_t n, int in_offset,
                            int out_offset, gs_acc carry_in, double abs_offset)
{
    device_case c;
    case_open(&c, type, op, in, n, in_offset, out_offset);
    gs_acc got;
    CHECK_GPU(gpu_call(gs_cuda_reduce(gpu, type, op, c.in, n, &got)));
    GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, gs_verify_reduce_ref(type, op, in, n), n,
                                   gs_verify_abs_sum(type, in, n)),
               "reduce", type, op, n);
    const int want_overflow = gs_test_expect_overflow(type, op, in, n, carry_in);
    for (int k = 0; k < 2; k++) {
        const char *what = kinds[k] == GS_INCLUSIVE ? "inclusive scan" : "exclusive scan";
        gs_acc carry_out;
        int overflow = -1;
        case_poison(&c);
        CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], c.in, c.out, n, carry_in,
                                        &carry_out, &overflow)));
        GS_TEST_CHECK_CASE(case_fetch(&c), what, type, op, n);
        gs_verify_scan v;
        gs_verify_scan_begin(&v, type, op, kinds[k], n + 1, carry_in, abs_offset);
        GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, c.host_out, n) == 0, what, type, op, n);
        GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry_out, v.prefix, n + 1, v.abs_prefix), what, type, op, n);
        GS_TEST_CHECK_CASE(overflow == want_overflow, what, type, op, n);
    }
    case_close(&c);
}

/* ---- random data against the reference ---------------------------------- */

/* Every op of `type` at every test size, at 2^24+3 and at 2^26+5 (each
 * of the default scan's three tile shapes): the reduction and both scans,
 * from the identity and from a random carry. Sizes alternate between plain
 * and extreme data and between aligned buffers and buffers one element
 * off 16 bytes (input and output alike, or output only). */
static void check_random_type(gs_type type)
{
    for (int op = 0; op < GS_OP_COUNT; op++) {
        for (int s = 0; s <= gs_test_nsizes + 1; s++) {
            const int64_t n = s < gs_test_nsizes ? gs_test_sizes[s] : s == gs_test_nsizes ? HUGE_N : WIDE_N;
            if (n > max_n()) continue;
            gs_test_rng r = gs_test_case_rng(1, (uint64_t)(type * GS_OP_COUNT + op), (uint64_t)s, 1);
            void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
            gs_test_fill_random(type, op, in, n, s % 2, &r, float_value);
            const int in_offset = s % 3 == 1, out_offset = s % 3 != 0;
            double abs_offset = 0.0;
            check_on_device(type, op, in, n, in_offset, out_offset, gs_acc_identity(type, op), 0.0);
            const gs_acc carry = gs_test_random_carry(type, op, &r, &abs_offset, float_value);
            check_on_device(type, op, in, n, in_offset, out_offset, carry, abs_offset);
            free(in);
        }
    }
}

#define TYPE_TESTS(X) X(i32, GS_I32) X(i64, GS_I64) X(u32, GS_U32) X(u64, GS_U64) X(f32, GS_F32) X(f64, GS_F64)
#define RANDOM_TEST(sfx, E) static void test_random_##sfx(void) { check_random_type(E); }
TYPE_TESTS(RANDOM_TEST)

/* 64-bit sums near the limits: the first overflowing prefix is flagged for
 * both kinds, the wrapped outputs match the reference, and the exact 128-bit
 * reduction is right past 64 bits. The overflow sits in a late tile. */
static void test_sum_overflow(void)
{
    const gs_type types[] = {GS_I64, GS_U64};
    for (int t = 0; t < 2; t++) {
        const gs_type type = types[t];
        const int64_t n = capped(BIG_N);
        for (int64_t at = n - 1; at > 0; at /= 7) {
            gs_test_rng r = gs_test_case_rng(2, (uint64_t)type, (uint64_t)at, 1);
            void *in = gs_test_alloc_or_fail((size_t)n * 8);
            gs_test_fill_random(type, GS_SUM, in, n, 0, &r, float_value);
            /* everything before `at` sums to about +-2^53 at most; this jumps over the limit */
            gs_test_set_int(type, in, at, type == GS_I64 ? (uint64_t)INT64_MAX : UINT64_MAX);
            if (type == GS_I64) gs_test_set_int(type, in, at - (at > 0), (uint64_t)((int64_t)1 << 60));
            CU_ASSERT(gs_test_expect_overflow(type, GS_SUM, in, at, gs_acc_identity(type, GS_SUM)) == 0);
            check_on_device(type, GS_SUM, in, n, 0, 0, gs_acc_identity(type, GS_SUM), 0.0);
            free(in);
        }
    }
}

/* cut[0..count): 0, count - 2 random places in [0, n] (repeats allowed, so
 * pieces may be empty), n; in ascending order. */
static void random_cuts(gs_test_rng *r, int64_t n, int64_t *cut, int count)
{
    cut[0] = 0;
    cut[1] = n;
    for (int c = 2; c < count; c++) cut[c] = (int64_t)gs_test_rng_below(r, (uint64_t)n + 1);
    for (int i = 1; i < count; i++)   /* insertion sort */
        for (int j = i; j > 0 && cut[j] < cut[j - 1]; j--) {
            const int64_t tmp = cut[j];
            cut[j] = cut[j - 1];
            cut[j - 1] = tmp;
        }
}

/* A random case of the chained scans: its input on the host and on the
 * device, a device output, and host room for a whole scan and one in
 * pieces. */
typedef struct {
    size_t elem, oelem;
    void *in, *whole, *parts;
    char *d_in, *d_out;
} chain_case;

static void chain_case_open(chain_case *c, gs_type type, gs_op op, int64_t n, gs_test_rng *r)
{
    c->elem = gs_type_size(type);
    c->oelem = gs_test_out_size(type, op);
    c->in = gs_test_alloc_or_fail((size_t)n * c->elem);
    c->whole = gs_test_alloc_or_fail((size_t)n * c->oelem);
    c->parts = gs_test_alloc_or_fail((size_t)n * c->oelem);
    gs_test_fill_random(type, op, c->in, n, 1, r, float_value);
    c->d_in = device_alloc((size_t)n * c->elem);
    c->d_out = device_alloc((size_t)n * c->oelem);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, c->d_in, c->in, (size_t)n * c->elem)));
}

static void chain_case_close(chain_case *c)
{
    gs_cuda_free(gpu, c->d_in);
    gs_cuda_free(gpu, c->d_out);
    free(c->in);
    free(c->whole);
    free(c->parts);
}

/* Scanning in pieces, each from the carry the previous one returned, equals
 * scanning the whole: bit for bit for integers (values, carry, overflow),
 * within the bound for floats. Pieces start at any element, so most are
 * misaligned. */
static void test_chunks_chain(void)
{
    const int64_t n = capped(BIG_N);
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            gs_test_rng r = gs_test_case_rng(3, (uint64_t)type, (uint64_t)op, 1);
            chain_case c;
            chain_case_open(&c, type, op, n, &r);
            for (int k = 0; k < 2; k++) {
                const gs_acc id = gs_acc_identity(type, op);
                gs_acc whole_carry, carry = id;
                int whole_overflow, overflow = 0;
                CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], c.d_in, c.d_out, n, id,
                                                &whole_carry, &whole_overflow)));
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, c.whole, c.d_out, (size_t)n * c.oelem)));
                /* six cuts in random places, empty pieces allowed */
                int64_t cut[8];
                random_cuts(&r, n, cut, 8);
                for (int p = 0; p < 7; p++) {
                    int piece_overflow = -1;
                    CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], c.d_in + cut[p] * c.elem,
                                                    c.d_out + cut[p] * c.oelem, cut[p + 1] - cut[p],
                                                    carry, &carry, &piece_overflow)));
                    overflow |= piece_overflow;
                }
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, c.parts, c.d_out, (size_t)n * c.oelem)));
                gs_verify_scan v;
                gs_verify_scan_begin(&v, type, op, kinds[k], n, id, 0.0);
                GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, c.in, c.parts, n) == 0, "chunked scan", type, op, n);
                GS_TEST_CHECK_CASE(overflow == whole_overflow, "chunked overflow", type, op, n);
                if (!gs_type_is_float(type)) {
                    GS_TEST_CHECK_CASE(memcmp(c.whole, c.parts, (size_t)n * c.oelem) == 0, "chunked = whole",
                                       type, op, n);
                    GS_TEST_CHECK_CASE(carry.u == whole_carry.u, "chunked carry", type, op, n);
                }
            }
            chain_case_close(&c);
        }
    }
}

/* in == out where the element sizes match gives what separate buffers give:
 * the same bits for integers, results within the bound for floats (whose
 * association depends on the order tiles finish in); where the sizes differ,
 * the call is refused. */
static void test_in_place(void)
{
    const int64_t n = capped(BIG_N);
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            const size_t elem = gs_type_size(type);
            const gs_acc id = gs_acc_identity(type, op);
            char *d_in = device_alloc((size_t)n * 8), *d_out = device_alloc((size_t)n * 8);
            if (gs_test_out_size(type, op) != elem) {
                gs_acc carry;
                int overflow;
                GS_TEST_CHECK_CASE(gs_cuda_scan(gpu, type, op, GS_INCLUSIVE, d_in, d_in, n, id, &carry,
                                        &overflow) == GS_ERR_ARG,
                           "in place refused", type, op, n);
            } else {
                gs_test_rng r = gs_test_case_rng(4, (uint64_t)type, (uint64_t)op, 1);
                void *in = gs_test_alloc_or_fail((size_t)n * elem), *a = gs_test_alloc_or_fail((size_t)n * elem);
                void *b = gs_test_alloc_or_fail((size_t)n * elem);
                gs_test_fill_random(type, op, in, n, 1, &r, float_value);
                for (int k = 0; k < 2; k++) {
                    gs_acc carry, carry_in_place;
                    int overflow, overflow_in_place;
                    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, in, (size_t)n * elem)));
                    CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], d_in, d_out, n, id,
                                                    &carry, &overflow)));
                    CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], d_in, d_in, n, id,
                                                    &carry_in_place, &overflow_in_place)));
                    CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, a, d_out, (size_t)n * elem)));
                    CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, b, d_in, (size_t)n * elem)));
                    if (gs_type_is_float(type)) {
                        gs_verify_scan v;
                        gs_verify_scan_begin(&v, type, op, kinds[k], n, id, 0.0);
                        GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, b, n) == 0, "in place", type, op, n);
                        GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry_in_place, v.prefix, n, v.abs_prefix),
                                   "in place carry", type, op, n);
                    } else {
                        GS_TEST_CHECK_CASE(memcmp(a, b, (size_t)n * elem) == 0, "in place", type, op, n);
                        GS_TEST_CHECK_CASE(carry.u == carry_in_place.u, "in place carry", type, op, n);
                    }
                    GS_TEST_CHECK_CASE(overflow == overflow_in_place, "in place overflow", type, op, n);
                }
                free(in);
                free(a);
                free(b);
            }
            gs_cuda_free(gpu, d_in);
            gs_cuda_free(gpu, d_out);
        }
    }
}

/* ---- hand-computed cases --------------------------------------------------- */

/* The prefix MAX-10, MAX-5, MAX, MAX+1: flagged from 4 elements on, not
 * before, for both kinds; the reduction is exact past 64 bits. */
static void test_i64_overflow_position(void)
{
    const int64_t in[5] = {INT64_MAX - 10, 5, 5, 1, -100};
    const int64_t inclusive[5] = {INT64_MAX - 10, INT64_MAX - 5, INT64_MAX, INT64_MIN, INT64_MAX - 99};
    const int64_t exclusive[5] = {0, INT64_MAX - 10, INT64_MAX - 5, INT64_MAX, INT64_MIN};
    const gs_acc id = gs_acc_identity(GS_I64, GS_SUM);
    int64_t *d_in = device_alloc(sizeof in), *d_out = device_alloc(sizeof in);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, in, sizeof in)));
    for (int64_t n = 0; n <= 5; n++) {
        for (int k = 0; k < 2; k++) {
            int64_t got[5];
            gs_acc carry;
            int overflow = -1;
            CHECK_GPU(gpu_call(gs_cuda_scan(gpu, GS_I64, GS_SUM, kinds[k], d_in, d_out, n, id,
                                            &carry, &overflow)));
            CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, got, d_out, (size_t)n * 8)));
            const int64_t *expect = kinds[k] == GS_INCLUSIVE ? inclusive : exclusive;
            GS_TEST_CHECK_CASE(memcmp(got, expect, (size_t)n * 8) == 0, "hand scan", GS_I64, GS_SUM, n);
            GS_TEST_CHECK_CASE(overflow == (n >= 4), "hand overflow", GS_I64, GS_SUM, n);
        }
    }
    gs_acc sum;
    CHECK_GPU(gpu_call(gs_cuda_reduce(gpu, GS_I64, GS_SUM, d_in, 4, &sum)));
    CU_ASSERT(sum.s == (gs_i128)INT64_MAX + 1);
    gs_cuda_free(gpu, d_in);
    gs_cuda_free(gpu, d_out);
}

/* Empty input: the identity, and a scan passes its carry through. */
static void test_empty(void)
{
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            gs_acc got;
            CHECK_GPU(gpu_call(gs_cuda_reduce(gpu, type, op, NULL, 0, &got)));
            GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, gs_acc_identity(type, op), 0, 0.0),
                       "empty reduce", type, op, 0);
            gs_test_rng r = gs_test_case_rng(5, (uint64_t)type, (uint64_t)op, 1);
            double abs_offset;
            gs_acc carry_in = gs_test_random_carry(type, op, &r, &abs_offset, float_value), carry_out;
            int overflow = -1;
            CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, GS_EXCLUSIVE, NULL, NULL, 0, carry_in,
                                            &carry_out, &overflow)));
            GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry_out, carry_in, 0, 0.0) && overflow == 0,
                       "empty scan", type, op, 0);
        }
    }
}

/* ---- the generator ---------------------------------------------------------- */

/* Device output is bit-identical to the host generator, at any start. */
static void test_generate(void)
{
    const int64_t n = capped(BIG_N), starts[] = {0, 12345, ((int64_t)1 << 33) + 7};
    void *d = device_alloc((size_t)n * 8);
    void *got = gs_test_alloc_or_fail((size_t)n * 8), *want = gs_test_alloc_or_fail((size_t)n * 8);
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int s = 0; s < 3; s++) {
            const uint64_t seed = gs_test_seed() + (uint64_t)s;
            const int64_t start = starts[s];
            CHECK_GPU(gpu_call(gs_cuda_generate(gpu, type, seed, start, n, d)));
            CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, got, d, (size_t)n * gs_type_size(type))));
            for (int64_t i = 0; i < n; i++) {
                const uint64_t k = (uint64_t)(start + i);
                switch (type) {
                case GS_I32: ((int32_t *)want)[i] = gs_gen_i32(seed, k); break;
                case GS_I64: ((int64_t *)want)[i] = gs_gen_i64(seed, k); break;
                case GS_U32: ((uint32_t *)want)[i] = gs_gen_u32(seed, k); break;
                case GS_U64: ((uint64_t *)want)[i] = gs_gen_u64(seed, k); break;
                case GS_F32: ((float *)want)[i] = gs_gen_f32(seed, k); break;
                default: ((double *)want)[i] = gs_gen_f64(seed, k); break;
                }
            }
            GS_TEST_CHECK_CASE(memcmp(got, want, (size_t)n * gs_type_size(type)) == 0, "generate", type,
                       GS_SUM, start);
        }
    }
    gs_cuda_free(gpu, d);
    free(got);
    free(want);
}

/* ---- more than 2^31 elements ------------------------------------------------ */

/* 2^31+17 generated i32 elements: the reduction and the inclusive scan into
 * i64 (last element, carry and spot checks around 2^31) against sums of the
 * host generator. Skipped where it cannot run (open_device_suite). */
static void test_large(void)
{
    const int64_t n = LARGE_N;
    const uint64_t seed = gs_test_seed();
    int32_t *d_in = device_alloc((size_t)n * 4);
    int64_t *d_out = device_alloc((size_t)n * 8);
    CHECK_GPU(gpu_call(gs_cuda_generate(gpu, GS_I32, seed, 0, n, d_in)));
    gs_acc sum, carry;
    int overflow = -1;
    CHECK_GPU(gpu_call(gs_cuda_reduce(gpu, GS_I32, GS_SUM, d_in, n, &sum)));
    CHECK_GPU(gpu_call(gs_cuda_scan(gpu, GS_I32, GS_SUM, GS_INCLUSIVE, d_in, d_out, n,
                                    gs_acc_identity(GS_I32, GS_SUM), &carry, &overflow)));

    /* spots in increasing order; the host prefix runs through them once */
    int64_t spots[40] = {0, 1, 4095, 4096, ((int64_t)1 << 31) - 1, (int64_t)1 << 31,
                         ((int64_t)1 << 31) + 1, n - 2, n - 1};
    int nspots = 9;
    gs_test_rng r = gs_test_case_rng(6, 0, 0, 1);
    while (nspots < 40) spots[nspots++] = (int64_t)gs_test_rng_below(&r, (uint64_t)n);
    for (int i = 1; i < nspots; i++)
        for (int j = i; j > 0 && spots[j] < spots[j - 1]; j--) {
            const int64_t tmp = spots[j];
            spots[j] = spots[j - 1];
            spots[j - 1] = tmp;
        }
    int64_t prefix = 0, k = 0;
    int wrong = 0;
    for (int s = 0; s < nspots; s++) {
        for (; k <= spots[s]; k++) prefix += gs_gen_i32(seed, (uint64_t)k);
        int64_t got;
        CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, &got, d_out + spots[s], sizeof got)));
        if (got != prefix) {
            wrong++;
            fprintf(stderr, "    large scan at %lld: %lld, want %lld\n", (long long)spots[s],
                    (long long)got, (long long)prefix);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(k, n);   /* the last spot is the last element: prefix is the total */
    CU_ASSERT(sum.s == (gs_i128)prefix);
    CU_ASSERT_EQUAL(carry.u, (uint64_t)prefix);
    CU_ASSERT_EQUAL(overflow, 0);
    gs_cuda_free(gpu, d_in);
    gs_cuda_free(gpu, d_out);
}

/* ---- exact float sums (--exact) ------------------------------------------------ */

/* The independent reference: a two's complement integer of REF_WORDS 32-bit
 * words in units of 2^REF_LSB, carried at every add, and IEEE rounding from
 * its magnitude with frexp/ldexp (no code shared with gs_exact.h). */
#define REF_WORDS 72
#define REF_LSB (-1152)

typedef struct exact_ref {
    uint32_t w[REF_WORDS];
    int nan, pos_inf, neg_inf;
} exact_ref;

static void ref_add(exact_ref *r, double x)
{
    if (isnan(x)) { r->nan = 1; return; }
    if (isinf(x)) { if (x > 0) r->pos_inf = 1; else r->neg_inf = 1; return; }
    if (x == 0) return;
    int e;
    const double f = frexp(fabs(x), &e);                 /* |x| = f * 2^e, f in [0.5, 1) */
    uint64_t m = (uint64_t)ldexp(f, 53);                 /* |x| = m * 2^(e - 53) */
    const int pos = e - 53 - REF_LSB;                    /* >= 0 for every double */
    uint32_t add[4] = {0, 0, 0, 0};                      /* m << (pos % 32), 96 bits */
    const int s = pos % 32;
    add[0] = (uint32_t)(m << s);
    add[1] = (uint32_t)((s ? m >> (32 - s) : m >> 32) & 0xffffffffu);
    add[2] = s ? (uint32_t)(m >> (64 - s)) : 0;
    const int at = pos / 32;
    uint64_t carry = 0;
    if (x > 0) {
        for (int i = at; i < REF_WORDS; i++) {
            const uint64_t t = (uint64_t)r->w[i] + (i - at < 3 ? add[i - at] : 0) + carry;
            r->w[i] = (uint32_t)t;
            carry = t >> 32;
            if (i - at >= 2 && !carry) break;
        }
    } else {
        uint64_t borrow = 0;
        for (int i = at; i < REF_WORDS; i++) {
            const uint64_t sub = (uint64_t)(i - at < 3 ? add[i - at] : 0) + borrow;
            borrow = (uint64_t)r->w[i] < sub;
            r->w[i] = (uint32_t)((uint64_t)r->w[i] - sub);
            if (i - at >= 2 && !borrow) break;
        }
    }
}

/* RN of the value to a format of `prec` bits whose least subnormal is
 * 2^qmin; the caller narrows f32 results (exact, or overflowing to inf). */
static double ref_round(const exact_ref *r, int prec, int qmin)
{
    if (r->nan || (r->pos_inf && r->neg_inf)) return NAN;
    if (r->pos_inf) return INFINITY;
    if (r->neg_inf) return -INFINITY;
    uint32_t mag[REF_WORDS];
    const int negative = r->w[REF_WORDS - 1] >> 31;
    uint64_t c = 1;
    for (int i = 0; i < REF_WORDS; i++) {
        const uint64_t t = negative ? (uint64_t)(uint32_t)~r->w[i] + c : r->w[i];
        mag[i] = (uint32_t)t;
        if (negative) c = t >> 32;
    }
    int hb = -1;
    for (int i = REF_WORDS - 1; i >= 0 && hb < 0; i--)
        if (mag[i]) for (int b = 31; b >= 0 && hb < 0; b--) if (mag[i] >> b & 1) hb = 32 * i + b;
    if (hb < 0) return 0.0;                               /* exact zero: +0 */
    int q = hb + REF_LSB - (prec - 1);
    if (q < qmin) q = qmin;
    const int shift = q - REF_LSB;                         /* the ulp's bit: > 0 */
#define REF_BIT(k) ((k) >= 0 && (k) < 32 * REF_WORDS && (mag[(k) / 32] >> ((k) % 32) & 1))
    uint64_t m = 0;
    for (int k = hb; k >= shift; k--) m = m << 1 | REF_BIT(k);
    const int round_bit = REF_BIT(shift - 1);
    int sticky = 0;
    for (int k = shift - 2; k >= 0 && !sticky; k--) {
        if (k % 32 == 31 && mag[k / 32] == 0) { k -= 31; continue; }
        sticky = REF_BIT(k);
    }
#undef REF_BIT
    if (round_bit && (sticky || (m & 1))) m++;
    const double v = ldexp((double)m, q);                  /* m <= 2^prec: exact, or inf */
    return negative ? -v : v;
}

static double ref_value(const exact_ref *r, gs_type type)
{
    return type == GS_F32 ? (double)(float)ref_round(r, 24, -149) : ref_round(r, 53, -1074);
}

/* The data of the exact tests. */
enum exact_data {
    EXACT_UNIFORM,       /* [0, 1) */
    EXACT_NORMAL,        /* mean 0, deviation 1 (Box-Muller) */
    EXACT_FULL_RANGE,    /* every finite exponent, random signs */
    EXACT_CANCEL,        /* huge values that cancel, hiding small ones */
    EXACT_NEAR_TIES,     /* prefixes at and next to rounding ties, a few per 4096 */
    EXACT_FINE_TIES,     /* f32 ties on a grid 48 binades below the prefixes, in many outputs */
    EXACT_SUBNORMAL,     /* subnormals and the least normals, random signs */
    EXACT_SPECIAL,       /* normal data with NaN, +inf and -inf sprinkled in */
    EXACT_TINY_TIES,     /* ties of prefixes near 1 decided by subnormals whose high word is 0 */
    EXACT_DATA_COUNT
};
static const char *const exact_data_name[] = {"uniform", "normal", "full range", "cancellation",
                                               "near ties", "fine ties", "subnormals", "specials", "tiny ties"};

static double exact_value(gs_type type, int data, int64_t i, int64_t n, gs_test_rng *r)
{
    const int f32 = type == GS_F32;
    const int max_exp = f32 ? 127 : 1023, min_exp = f32 ? -149 : -1074, digits = f32 ? 24 : 53;
    const double sign = gs_test_rng_below(r, 2) ? -1.0 : 1.0;
    switch (data) {
    case EXACT_UNIFORM: return gs_test_rng_unit(r);
    case EXACT_NORMAL: {
        const double u = gs_test_rng_unit(r), v = gs_test_rng_unit(r);
        return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
    }
    case EXACT_FULL_RANGE: {
        const int e = min_exp + (int)gs_test_rng_below(r, (uint64_t)(max_exp - min_exp + 1));
        return sign * ldexp(1.0 + gs_test_rng_unit(r), e - 1);   /* in [2^(e-1), 2^e) */
    }
    case EXACT_CANCEL: {
        /* triples +H, small, -H (H a power of two near the top), so prefixes
         * swing from huge to tiny; the carry of a chunk holds the small ones */
        const double huge = ldexp(1.0, max_exp - 1 - (int)gs_test_rng_below(r, 8));
        if (i % 3 == 0) return sign * huge;
        if (i % 3 == 1) return ldexp(gs_test_rng_unit(r), -(int)gs_test_rng_below(r, 60));
        return 0;   /* replaced by the caller: minus element i - 2 */
    }
    case EXACT_NEAR_TIES:
    case EXACT_TINY_TIES: {
        /* from B = 2^P + 1/4, pairs +a, -a of small integers keep every
         * prefix a value of the type; every 4096 elements m, e, -e, -m
         * (m half an ulp of 2^P, e far below the fast path's grid or its
         * double-double's reach) make prefixes that are ties and ties
         * nudged by e: the outputs the fast path cannot decide, a few per
         * tile, and the rounding of each depends on e. Tiny ties: B = 1
         * and e = +-2^(24 + the least exponent), for f64 a subnormal whose
         * high word is 0. The f64 tiles' bound on their elements' lowest
         * bits (gs_low_bits) must count it: from the other elements alone
         * it would be 2^-81, so that a tile's sums (below 2^19) would pass
         * for exact and its ties round as if e were 0. */
        const int tiny = data == EXACT_TINY_TIES, p = tiny ? 0 : f32 ? 20 : 40;
        const double m = ldexp(1.0, p - digits);
        const double e = tiny ? sign * ldexp(1.0, min_exp + 24) : ldexp(1.0, f32 ? p - 55 : p - 110);
        if (i == 0) return ldexp(1.0, p) + (tiny ? 0.0 : 0.25);
        switch (i % 4096) {
        case 1: return m;
        case 2: return e;
        case 3: return -e;
        case 4: return -m;
        }
        return i % 2 ? (double)(1 + gs_test_rng_below(r, 3)) : 0;   /* 0: replaced by the caller */
    }
    case EXACT_FINE_TIES:
        /* 2^32 + 2^-16, then pairs +a, -a with a = 256 - 2^-16 or 0: half
         * the prefixes are 2^32 + 256, a tie of f32 (its ulp there is 512)
         * that only the exact sum decides. A tile of f32 after the first
         * has that P, one double 48 binades above its lowest bit, where the
         * first pass skips the exact-sum test (GS_EXACT_TIE_SPAN); the
         * first tile has P = 0 and takes it. f64 holds every prefix. */
        if (i < 2) return i ? 0x1p-16 : 0x1p32;
        return i % 2 == 0 && gs_test_rng_below(r, 2) ? 256.0 - 0x1p-16 : 0.0;   /* odd: replaced by the caller */
    case EXACT_SUBNORMAL:
        return sign * ldexp((double)gs_test_rng_below(r, (uint64_t)1 << digits), min_exp);
    default: {
        const uint64_t pick = gs_test_rng_below(r, (uint64_t)(n > 64 ? n / 8 : 8));
        if (pick == 0) return NAN;
        if (pick == 1) return INFINITY;
        if (pick == 2) return -INFINITY;
        return sign * gs_test_rng_unit(r);
    }
    }
}

static double elem_at(gs_type type, const void *buf, int64_t i)
{
    return type == GS_F32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

static void *exact_data_fill(gs_type type, int data, int64_t n, gs_test_rng *r)
{
    void *in = gs_test_alloc_or_fail((size_t)(n ? n : 1) * gs_type_size(type));
    const int ties = data == EXACT_NEAR_TIES || data == EXACT_TINY_TIES;
    for (int64_t i = 0; i < n; i++) {
        double v = exact_value(type, data, i, n, r);
        if (data == EXACT_CANCEL && i % 3 == 2) {
            v = -elem_at(type, in, i - 2);
            if (gs_test_rng_below(r, 4) == 0) v *= 0.5;   /* some do not cancel */
        }
        if (ties && i > 0 && i % 2 == 0 && (i % 4096 == 0 || i % 4096 > 4)) v = -elem_at(type, in, i - 1);
        if (data == EXACT_TINY_TIES && i % 4096 == 3) v = -elem_at(type, in, i - 1);   /* -e */
        if (data == EXACT_FINE_TIES && i > 2 && i % 2 == 1) v = -elem_at(type, in, i - 1);
        gs_test_set_float(type, in, i, v);
    }
    return in;
}

/* 1 when a and b have the same bits in `type` (NaNs: any NaN). */
static int same_float(gs_type type, double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (type == GS_F32) {
        const float fa = (float)a, fb = (float)b;
        return memcmp(&fa, &fb, sizeof fa) == 0;
    }
    return memcmp(&a, &b, sizeof a) == 0;
}

/* A random exact carry: a few values of `data`, added to both states. */
static void exact_random_carry(gs_type type, int data, gs_test_rng *r, gs_exact *carry, exact_ref *ref)
{
    gs_exact_clear(carry);
    memset(ref, 0, sizeof *ref);
    const int count = (int)gs_test_rng_below(r, 4);
    for (int k = 0; k < count; k++) {
        const double x = exact_value(type, data == EXACT_SPECIAL ? EXACT_NORMAL : data, 1, 1, r);
        const double v = type == GS_F32 ? (double)(float)x : x;
        gs_exact_add_f64(carry, v);
        ref_add(ref, v);
    }
}

static gs_exact *exact_device_state(const gs_exact *host)
{
    gs_exact *d = device_alloc(sizeof *d);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d, host, sizeof *host)));
    return d;
}

static gs_exact exact_fetch(const gs_exact *d)
{
    gs_exact h;
    CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, &h, d, sizeof h)));
    return h;
}

/* Normalized states hold the same value only with the same digits. */
static int same_state(gs_exact a, gs_exact b)
{
    gs_exact_normalize(&a);
    gs_exact_normalize(&b);
    return memcmp(a.digit, b.digit, sizeof a.digit) == 0 && a.special == b.special;
}

/* gs_cuda_exact.h's contract on the state: normalized after n > 0
 * elements, untouched (bit for bit, normalized or not) after none. */
static void check_state_after(const gs_exact *after, const gs_exact *before, int64_t n)
{
    if (n > 0) {
        CU_ASSERT_EQUAL(after->pending, 0);
    } else {
        CU_ASSERT(memcmp(after, before, sizeof *after) == 0);
    }
}

static int exact_failures;   /* cases reported, so that a broken kernel prints a few, not all */

static void exact_report(const char *what, gs_type type, int data, int64_t n, int64_t at, double got,
                         double want)
{
    if (exact_failures++ < 20)
        fprintf(stderr, "    exact %s %s %s n=%lld at %lld: got %a, want %a\n", gs_type_name(type), what,
                exact_data_name[data], (long long)n, (long long)at, got, want);
}

/* The exact reduction and both exact scans of in[0..n) on the device, at
 * element offsets (16-byte alignment or not), against the reference and the
 * CPU backend's exact kernels, bit for bit: every output, the total and the
 * carry after. */
static void check_exact_case(gs_type type, int data, const void *in, int64_t n, int in_offset,
                             int out_offset, gs_test_rng *r)
{
    device_case c;
    case_open(&c, type, GS_SUM, in, n, in_offset, out_offset);
    const size_t elem = gs_type_size(type);

    /* reduction into a non-zero state */
    gs_exact carry;
    exact_ref ref;
    exact_random_carry(type, data, r, &carry, &ref);
    gs_exact *d_state = exact_device_state(&carry);
    CHECK_GPU(gpu_call(gs_cuda_reduce_exact_async(gpu, type, c.in, n, d_state)));
    const gs_exact got_total = exact_fetch(d_state);
    gs_exact cpu_total = carry;
    gs_cpu_reduce_exact(type, in, n, &cpu_total);
    exact_ref ref_total = ref;
    for (int64_t i = 0; i < n; i++) ref_add(&ref_total, elem_at(type, in, i));
    const double want = ref_round(&ref_total, 53, -1074);
    if (!same_float(GS_F64, gs_exact_round_f64(&got_total), want))
        exact_report("reduce", type, data, n, -1, gs_exact_round_f64(&got_total), want);
    CU_ASSERT(same_float(GS_F64, gs_exact_round_f64(&got_total), want));
    CU_ASSERT(same_state(got_total, cpu_total));
    check_state_after(&got_total, &carry, n);

    void *cpu_out = gs_test_alloc_or_fail((size_t)(n ? n : 1) * elem);
    for (int k = 0; k < 2; k++) {
        const char *what = kinds[k] == GS_INCLUSIVE ? "inclusive" : "exclusive";
        CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_state, &carry, sizeof carry)));
        case_poison(&c);
        CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, kinds[k], c.in, c.out, n, d_state)));
        CU_ASSERT(case_fetch(&c));
        const gs_exact got_carry = exact_fetch(d_state);
        gs_exact cpu_carry = carry;
        gs_cpu_scan_exact(type, kinds[k], in, cpu_out, n, &cpu_carry);
        exact_ref run = ref;
        int64_t wrong = 0, cpu_wrong = 0;
        for (int64_t i = 0; i < n; i++) {
            if (kinds[k] == GS_INCLUSIVE) ref_add(&run, elem_at(type, in, i));
            const double want_i = ref_value(&run, type), got_i = elem_at(type, c.host_out, i);
            if (!same_float(type, got_i, want_i)) {
                if (!wrong) exact_report(what, type, data, n, i, got_i, want_i);
                wrong++;
            }
            cpu_wrong += !same_float(type, got_i, elem_at(type, cpu_out, i));
            if (kinds[k] == GS_EXCLUSIVE) ref_add(&run, elem_at(type, in, i));
        }
        if (wrong) fprintf(stderr, "    (%lld wrong of %lld)\n", (long long)wrong, (long long)n);
        CU_ASSERT_EQUAL(wrong, 0);
        CU_ASSERT_EQUAL(cpu_wrong, 0);
        CU_ASSERT(same_state(got_carry, cpu_carry));
        check_state_after(&got_carry, &carry, n);
        CU_ASSERT(same_float(GS_F64, gs_exact_round_f64(&got_carry), want));
    }
    free(cpu_out);
    gs_cuda_free(gpu, d_state);
    case_close(&c);
}

/* Sizes around the kernels' boundaries: vectors, scan tiles (4096 or 8192
 * f64 elements, 8192 f32, one per block), look-back windows (32 tiles),
 * and past 2^20. */
static const int64_t exact_sizes[] = {0, 1, 2, 3, 5, 31, 257, 997, 2047, 4096, 8191, 8192, 8193,
                                      65537, 262147, 1000003, ((int64_t)1 << 20) + 7};

static void check_exact_type(gs_type type)
{
    const int nsizes = (int)(sizeof exact_sizes / sizeof exact_sizes[0]);
    for (int data = 0; data < EXACT_DATA_COUNT; data++)
        for (int s = 0; s < nsizes; s++) {
            const int64_t n = exact_sizes[s];
            if (n > max_n()) continue;
            gs_test_rng r = gs_test_case_rng(13, (uint64_t)(type * EXACT_DATA_COUNT + data), (uint64_t)s, 1);
            void *in = exact_data_fill(type, data, n, &r);
            check_exact_case(type, data, in, n, s % 3 == 1, s % 3 != 0, &r);
            free(in);
        }
}

static void test_exact_f32(void) { check_exact_type(GS_F32); }

/* check(GS_F64) with f64 scans on both tile lengths
 * (gs_cuda_set_exact_tiles), the long ones where the device has room for
 * them; the handle's own choice again after. */
static void on_both_f64_tiles(void (*check)(gs_type))
{
    CHECK_GPU(gpu_call(gs_cuda_set_exact_tiles(gpu, GS_CUDA_EXACT_TILES_SHORT)));
    check(GS_F64);
    if (gs_cuda_set_exact_tiles(gpu, GS_CUDA_EXACT_TILES_LONG) == GS_OK) {
        check(GS_F64);
    } else {
        printf("\n    rank %d: long f64 tiles not checked: %s\n", gs_test_rank(), gs_cuda_error(gpu));
    }
    CHECK_GPU(gpu_call(gs_cuda_set_exact_tiles(gpu, GS_CUDA_EXACT_TILES_AUTO)));
}

static void test_exact_f64(void) { on_both_f64_tiles(check_exact_type); }

/* Pieces chained through one device state give the whole's outputs and
 * state; in place gives the same outputs. */
static void test_exact_chain_in_place(void)
{
    const gs_type types[] = {GS_F32, GS_F64};
    for (int t = 0; t < 2; t++)
        for (int data = EXACT_NORMAL; data <= EXACT_FINE_TIES; data++) {
            const gs_type type = types[t];
            const int64_t n = capped(300007);
            const size_t elem = gs_type_size(type), bytes = (size_t)n * elem;
            gs_test_rng r = gs_test_case_rng(14, (uint64_t)type, (uint64_t)data, 1);
            void *in = exact_data_fill(type, data, n, &r);
            void *whole = gs_test_alloc_or_fail(bytes ? bytes : 1), *pieces = gs_test_alloc_or_fail(bytes ? bytes : 1);
            char *d_in = device_alloc(bytes), *d_out = device_alloc(bytes);
            gs_exact zero;
            gs_exact_clear(&zero);
            gs_exact *d_a = exact_device_state(&zero), *d_b = exact_device_state(&zero);
            CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, in, bytes)));
            CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, GS_INCLUSIVE, d_in, d_out, n, d_a)));
            CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, whole, d_out, bytes)));
            /* pieces of 1, 12345 and the rest, in place */
            const int64_t cut[4] = {0, n < 1 ? n : 1, n < 12346 ? n : 12346, n};
            for (int p = 0; p < 3; p++)
                CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, GS_INCLUSIVE, d_in + cut[p] * elem,
                                                            d_in + cut[p] * elem, cut[p + 1] - cut[p], d_b)));
            CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, pieces, d_in, bytes)));
            CU_ASSERT(memcmp(whole, pieces, bytes) == 0);
            CU_ASSERT(same_state(exact_fetch(d_a), exact_fetch(d_b)));
            gs_cuda_free(gpu, d_a);
            gs_cuda_free(gpu, d_b);
            gs_cuda_free(gpu, d_in);
            gs_cuda_free(gpu, d_out);
            free(in);
            free(whole);
            free(pieces);
        }
}

/* Scans `first` (its first n_first elements) and then `second` (n), each
 * from a zero carry, the epoch at its wrap before the first (epoch 1) and,
 * with wrap_again, before the second (epoch 1 again; else epoch 2); the
 * second must give its own outputs and carry, bit for bit the CPU
 * backend's, not prefixes from states the first left. A scan of `second`
 * before both gives the tile states their room, so that they are not
 * allocated (and cleared) anew between the two. Returns the second scan's
 * outputs (the caller frees them). */
static void *check_exact_scan_after(gs_type type, const void *first, int64_t n_first, const void *second, int64_t n,
                                    int wrap_again)
{
    const size_t elem = gs_type_size(type), bytes = (size_t)n * elem;
    void *got = gs_test_alloc_or_fail(bytes ? bytes : 1), *want = gs_test_alloc_or_fail(bytes ? bytes : 1);
    char *d_in = device_alloc(bytes), *d_out = device_alloc(bytes);
    gs_exact zero;
    gs_exact_clear(&zero);
    gs_exact *d_carry = exact_device_state(&zero);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, second, bytes)));
    CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, GS_INCLUSIVE, d_in, d_out, n, d_carry)));
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, first, (size_t)n_first * elem)));
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_carry, &zero, sizeof zero)));
    gs_cuda_exact_epoch_to_wrap(gpu);
    CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, GS_INCLUSIVE, d_in, d_out, n_first, d_carry)));
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, second, bytes)));
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_carry, &zero, sizeof zero)));
    if (wrap_again) gs_cuda_exact_epoch_to_wrap(gpu);
    CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, type, GS_INCLUSIVE, d_in, d_out, n, d_carry)));
    CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, got, d_out, bytes)));
    gs_exact carry = zero;
    gs_cpu_scan_exact(type, GS_INCLUSIVE, second, want, n, &carry);
    for (int64_t i = 0; i < n; i++)
        if (!same_float(type, elem_at(type, got, i), elem_at(type, want, i))) {
            fprintf(stderr, "    exact %s scan after another: output %lld is %.17g, want %.17g\n", gs_type_name(type),
                    (long long)i, elem_at(type, got, i), elem_at(type, want, i));
            break;
        }
    CU_ASSERT(memcmp(got, want, bytes) == 0);
    CU_ASSERT(same_state(exact_fetch(d_carry), carry));
    gs_cuda_free(gpu, d_carry);
    gs_cuda_free(gpu, d_in);
    gs_cuda_free(gpu, d_out);
    free(want);
    return got;
}

/* A tile state keeps 8 bits of its scan's epoch; where they wrap, the
 * states are cleared. Two scans of different data, each the one at the
 * wrap (so both at epoch 1). */
static void test_exact_epoch_wrap(void)
{
    const int64_t n = capped(((int64_t)1 << 22) + 3);   /* 513 f32 tiles */
    gs_test_rng r = gs_test_case_rng(15, 0, 0, 1);
    void *first = exact_data_fill(GS_F32, EXACT_UNIFORM, n, &r);
    void *second = exact_data_fill(GS_F32, EXACT_NORMAL, n, &r);
    free(check_exact_scan_after(GS_F32, first, n, second, n, 1));
    free(first);
    free(second);
}

/* A tile no pair holds publishes a packed exact state; those lie apart
 * from every tile's state word, so that a scan of more tiles after one of
 * fewer never reads the packed digits the first left as a state of its own
 * epoch. The first scan here (epoch 1) sums 2^99 + 2^-60 + 2^-140 (three
 * parts: no pair) in tiles of 8192 elements: its packed states hold the
 * digit 8 (2^99 = 8 * 2^96), which where a state word lay would read
 * "epoch 2, ready, 0"; the second (epoch 2) scans ones over many more
 * tiles and must give i + 1 as well as the CPU backend's bits. Per type,
 * and for f64 on both tile lengths. */
static void check_exact_packed_apart(gs_type type)
{
    const int64_t n = capped((int64_t)1 << 20), n_first = capped(16 * 8192);
    const size_t bytes = (size_t)n * gs_type_size(type);
    void *ones = gs_test_alloc_or_fail(bytes ? bytes : 1), *first = gs_test_alloc_or_fail(bytes ? bytes : 1);
    for (int64_t i = 0; i < n; i++) {
        const int64_t k = i % 8192;
        gs_test_set_float(type, ones, i, 1.0);
        gs_test_set_float(type, first, i, k == 0 ? 0x1p99 : k == 1 ? 0x1p-60 : k == 2 ? 0x1p-140 : 0.0);
    }
    void *got = check_exact_scan_after(type, first, n_first, ones, n, 0);
    int64_t wrong = 0;   /* the prefixes of ones, independent of the CPU backend */
    for (int64_t i = 0; i < n; i++)
        if (elem_at(type, got, i) != (double)(i + 1) && !wrong++)
            fprintf(stderr, "    exact %s after packed states: output %lld is %.17g, want %lld\n", gs_type_name(type),
                    (long long)i, elem_at(type, got, i), (long long)(i + 1));
    CU_ASSERT_EQUAL(wrong, 0);
    free(got);
    free(ones);
    free(first);
}

static void test_exact_packed_apart(void)
{
    check_exact_packed_apart(GS_F32);
    on_both_f64_tiles(check_exact_packed_apart);
}

/* Bad arguments are errors with a message, not launches. */
static void test_exact_refusals(void)
{
    gs_exact *d_state = device_alloc(sizeof(gs_exact));
    float *d = device_alloc(64);
    CU_ASSERT_EQUAL(gs_cuda_reduce_exact_async(gpu, GS_I32, d, 4, d_state), GS_ERR_ARG);
    CU_ASSERT(strstr(gs_cuda_error(gpu), "f32 or f64") != NULL);
    CU_ASSERT_EQUAL(gs_cuda_reduce_exact_async(gpu, GS_F32, d, 4, NULL), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_scan_exact_async(gpu, GS_F64, (gs_scan_kind)7, d, d, 2, d_state), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_scan_exact_async(gpu, GS_F32, GS_INCLUSIVE, NULL, d, 4, d_state), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_scan_exact_async(gpu, GS_F32, GS_INCLUSIVE, d, d, 0, d_state), GS_OK);
    CU_ASSERT_EQUAL(gs_cuda_set_exact_tiles(gpu, (gs_cuda_exact_tiles)7), GS_ERR_ARG);
    CU_ASSERT(strstr(gs_cuda_error(gpu), "invalid choice") != NULL);
    gs_cuda_free(gpu, d);
    gs_cuda_free(gpu, d_state);
}

/* The exact reduction of in[0..n) (host data, copied to the device) from
 * a zero state: its state bit for bit the CPU backend's, its rounding the
 * reference's (`ref`: the same elements). */
static void check_exact_reduction(gs_type type, const void *in, int64_t n, const exact_ref *ref, const char *what)
{
    const size_t bytes = (size_t)n * gs_type_size(type);
    char *d_in = device_alloc(bytes ? bytes : 1);
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_in, in, bytes)));
    gs_exact zero, cpu_total;
    gs_exact_clear(&zero);
    cpu_total = zero;
    gs_exact *d_sum = exact_device_state(&zero);
    CHECK_GPU(gpu_call(gs_cuda_reduce_exact_async(gpu, type, d_in, n, d_sum)));
    const gs_exact got = exact_fetch(d_sum);
    gs_cpu_reduce_exact(type, in, n, &cpu_total);
    const double want = ref_round(ref, 53, -1074);
    const int rounded_right = same_float(GS_F64, gs_exact_round_f64(&got), want), same = same_state(got, cpu_total);
    if (!rounded_right || !same)
        fprintf(stderr, "    %s %s: got %a, want %a%s\n", what, gs_type_name(type), gs_exact_round_f64(&got), want,
                same ? "" : " (state differs from the CPU backend's)");
    CU_ASSERT(rounded_right);
    CU_ASSERT(same);
    gs_cuda_free(gpu, d_sum);
    gs_cuda_free(gpu, d_in);
}

/* An f32 reduction whose threads each send hundreds of terms to one digit
 * of their own (gs_exact_f32_sink): every fourth element 2^126, then a
 * value near 2^40, then two near 2^-9.5, each of those two adding nearly
 * 2^55 to the same digit (about 2^27 / 528 blocks / 256 threads / 2 = 496
 * such terms a thread on an H100): without the digits settled every 127 adds,
 * that digit would pass 2^63 (496 * 2^55 > 2^63). Bit for bit against the
 * reference and the CPU backend. */
static void test_exact_crowded_digits(void)
{
    const int64_t n = (int64_t)1 << 27;
    if (n > max_n()) return;
    gs_test_rng r = gs_test_case_rng(13, 99, 0, 1);
    float *in = gs_test_alloc_or_fail((size_t)n * sizeof *in);
    exact_ref ref;
    memset(&ref, 0, sizeof ref);
    for (int64_t i = 0; i < n; i++) {
        const double f = (double)gs_test_rng_below(&r, (uint64_t)1 << 22);   /* 22 random bits */
        const double v = i % 4 == 0 ? 0x1p126 : i % 4 == 1 ? ldexp(0x1p23 + f, 40 - 23)
                                                           : ldexp(0x1.8p23 + f, -10 - 23);   /* [1.5, 2) 2^-10 */
        in[i] = (float)v;
        ref_add(&ref, (double)in[i]);
    }
    check_exact_reduction(GS_F32, in, n, &ref, "crowded digits");
    free(in);
}

/* Reductions long enough for many iterations of a block's summing loop
 * (gs_exact_thread_sum: 8192 f32 or 2048 f64 elements a round on the
 * resident grid), so that threads whose running sums take little send the
 * elements of the next iterations to their own states unasked (the sinks'
 * SINK_AHEAD) and ask again: whole-range data (f64's with subnormals), and
 * stretches of 2^14 elements of whole-range and of uniform data in turn
 * (the mode left and entered again) with an infinity of each sign inside
 * whole-range stretches. The state bit for bit against the CPU backend,
 * its rounding against the reference. */
static void test_exact_sink_ahead(void)
{
    const gs_type types[] = {GS_F32, GS_F64};
    for (int t = 0; t < 2; t++)
        for (int stretches = 0; stretches < 2; stretches++) {
            const gs_type type = types[t];
            const int64_t n = capped(((int64_t)1 << (type == GS_F32 ? 25 : 24)) + 5);
            const int64_t pos_inf = n / 4 + 8191, neg_inf = n / 2 + 4099;   /* in whole-range stretches */
            const size_t bytes = (size_t)n * gs_type_size(type);
            gs_test_rng r = gs_test_case_rng(16, (uint64_t)type, (uint64_t)stretches, 1);
            void *in = gs_test_alloc_or_fail(bytes ? bytes : 1);
            exact_ref ref;
            memset(&ref, 0, sizeof ref);
            for (int64_t i = 0; i < n; i++) {
                double v = exact_value(type, stretches && (i >> 14) % 2 ? EXACT_UNIFORM : EXACT_FULL_RANGE, i, n, &r);
                if (stretches && (i == pos_inf || i == neg_inf)) v = i == pos_inf ? INFINITY : -INFINITY;
                gs_test_set_float(type, in, i, v);
                ref_add(&ref, elem_at(type, in, i));
            }
            check_exact_reduction(type, in, n, &ref, stretches ? "sink ahead, stretches" : "sink ahead");
            free(in);
        }
}

/* test_exact_large, switched off like test_large (open_device_suite). */
static CU_pTest exact_large_test;

/* 2^31+17 generated f32 elements (multiples of 2^-24: their sums are exact
 * 64-bit integers on the host): the exact reduction, and the exact
 * inclusive scan at spots around 2^31. */
static void test_exact_large(void)
{
    const int64_t n = LARGE_N;
    const uint64_t seed = gs_test_seed();
    float *d_in = device_alloc((size_t)n * 4), *d_out = device_alloc((size_t)n * 4);
    CHECK_GPU(gpu_call(gs_cuda_generate(gpu, GS_F32, seed, 0, n, d_in)));
    gs_exact zero;
    gs_exact_clear(&zero);
    gs_exact *d_sum = exact_device_state(&zero), *d_carry = exact_device_state(&zero);
    CHECK_GPU(gpu_call(gs_cuda_reduce_exact_async(gpu, GS_F32, d_in, n, d_sum)));
    CHECK_GPU(gpu_call(gs_cuda_scan_exact_async(gpu, GS_F32, GS_INCLUSIVE, d_in, d_out, n, d_carry)));
    const int64_t spots[] = {0, 1, 8191, 8192, ((int64_t)1 << 31) - 1, (int64_t)1 << 31,
                             ((int64_t)1 << 31) + 1, n - 1};
    uint64_t units = 0;   /* the prefix in units of 2^-24 */
    int64_t k = 0;
    int wrong = 0;
    for (size_t s = 0; s < sizeof spots / sizeof spots[0]; s++) {
        for (; k <= spots[s]; k++) units += (uint64_t)ldexpf(gs_gen_f32(seed, (uint64_t)k), 24);
        float got;
        CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, &got, d_out + spots[s], sizeof got)));
        const float want = ldexpf((float)units, -24);
        if (memcmp(&got, &want, sizeof got) != 0) {
            wrong++;
            fprintf(stderr, "    large exact scan at %lld: %a, want %a\n", (long long)spots[s], got, want);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    const gs_exact sum = exact_fetch(d_sum), carry = exact_fetch(d_carry);
    CU_ASSERT(gs_exact_round_f64(&sum) == ldexp((double)units, -24));
    CU_ASSERT(same_state(sum, carry));
    gs_cuda_free(gpu, d_sum);
    gs_cuda_free(gpu, d_carry);
    gs_cuda_free(gpu, d_in);
    gs_cuda_free(gpu, d_out);
}

/* ---- errors ------------------------------------------------------------------ */

/* Failures come back as a status and a message; the handle stays usable. */
static void test_errors(void)
{
    void *p = NULL;
    CU_ASSERT_EQUAL(gs_cuda_malloc(gpu, &p, (size_t)1 << 56), GS_ERR_NOMEM);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(gs_cuda_error(gpu), "cudaMalloc of"));

    gs_cuda *other = NULL;
    char err[256] = "";
    CU_ASSERT_EQUAL(gs_cuda_open(gs_cuda_device_count(), &other, err, sizeof err), GS_ERR_ARG);
    CU_ASSERT_PTR_NULL(other);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "does not exist"));

    char *d = device_alloc(64);
    gs_acc acc;
    CU_ASSERT_EQUAL(gs_cuda_reduce(gpu, GS_I32, GS_SUM, d + 1, 4, &acc), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_reduce(gpu, GS_TYPE_COUNT, GS_SUM, d, 4, &acc), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_reduce(gpu, GS_I32, GS_SUM, d, -1, &acc), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_is_device_pointer(gpu, d), 1);
    CU_ASSERT_EQUAL(gs_cuda_is_device_pointer(gpu, &acc), 0);

    const int32_t three[3] = {1, -2, 3};
    CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d, three, sizeof three)));
    CHECK_GPU(gpu_call(gs_cuda_reduce(gpu, GS_I32, GS_SUM, d, 3, &acc)));
    CU_ASSERT(acc.s == 2);
    gs_cuda_free(gpu, d);

    gs_cuda_device_info info;
    CHECK_GPU(gpu_call(gs_cuda_info(gpu, &info)));
    CU_ASSERT(info.sm_count > 0 && info.total_mem > 0 && info.name[0] != '\0');
}

/* ---- the asynchronous entry points ------------------------------------------------ */

/* Pieces scanned with gs_cuda_scan_async, chained through one device carry,
 * give what one synchronous scan gives: the same bits for integers (values,
 * carry, overflow), within the bound for floats; the overflow flag is only
 * ever set; gs_cuda_reduce_async accumulates the pieces' partials. */
static void async_chain(void)
{
    const int64_t n = capped(BIG_N);
    for (int type = 0; type < GS_TYPE_COUNT; type++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            gs_test_rng r = gs_test_case_rng(7, (uint64_t)type, (uint64_t)op, 1);
            chain_case c;
            chain_case_open(&c, type, op, n, &r);
            char *d_scalars = device_alloc(64);
            gs_acc *d_carry = (gs_acc *)d_scalars;
            uint32_t *d_overflow = (uint32_t *)(d_scalars + sizeof(gs_acc));
            gs_acc *d_acc = (gs_acc *)(d_scalars + 32);
            int64_t cut[6];
            random_cuts(&r, n, cut, 6);
            for (int k = 0; k < 2; k++) {
                double abs_offset;
                const gs_acc carry_in = gs_test_random_carry(type, op, &r, &abs_offset, float_value);
                gs_acc whole_carry, carry;
                int whole_overflow;
                CHECK_GPU(gpu_call(gs_cuda_scan(gpu, type, op, kinds[k], c.d_in, c.d_out, n, carry_in,
                                                &whole_carry, &whole_overflow)));
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, c.whole, c.d_out, (size_t)n * c.oelem)));
                unsigned char init[64];
                memset(init, 0, sizeof init);
                memcpy(init, &carry_in, sizeof carry_in);
                const gs_acc id = gs_acc_identity(type, op);
                memcpy(init + 32, &id, sizeof id);
                CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_scalars, init, sizeof init)));
                for (int p = 0; p < 5; p++) {
                    CHECK_GPU(gpu_call(gs_cuda_scan_async(gpu, type, op, kinds[k], c.d_in + cut[p] * c.elem,
                                                          c.d_out + cut[p] * c.oelem, cut[p + 1] - cut[p],
                                                          d_carry, d_overflow)));
                    CHECK_GPU(gpu_call(gs_cuda_reduce_async(gpu, type, op, c.d_in + cut[p] * c.elem,
                                                            cut[p + 1] - cut[p], d_acc)));
                }
                unsigned char back[64];
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, c.parts, c.d_out, (size_t)n * c.oelem)));
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, back, d_scalars, sizeof back)));
                uint32_t overflow;
                gs_acc acc;
                memcpy(&carry, back, sizeof carry);
                memcpy(&overflow, back + sizeof(gs_acc), sizeof overflow);
                memcpy(&acc, back + 32, sizeof acc);
                gs_verify_scan v;
                gs_verify_scan_begin(&v, type, op, kinds[k], n + 1, carry_in, abs_offset);
                GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, c.in, c.parts, n) == 0, "async chain", type, op, n);
                GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry, v.prefix, n + 1, v.abs_prefix), "async carry", type, op, n);
                GS_TEST_CHECK_CASE((overflow != 0) == whole_overflow, "async overflow", type, op, n);
                GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, acc, gs_verify_reduce_ref(type, op, c.in, n), n,
                                               gs_verify_abs_sum(type, c.in, n)),
                           "async reduce", type, op, n);
                if (!gs_type_is_float(type)) {
                    GS_TEST_CHECK_CASE(memcmp(c.whole, c.parts, (size_t)n * c.oelem) == 0, "async = sync",
                                       type, op, n);
                    GS_TEST_CHECK_CASE(carry.u == whole_carry.u, "async carry = sync", type, op, n);
                }
                /* a set flag stays set */
                const uint32_t one = 1;
                CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_overflow, &one, sizeof one)));
                CHECK_GPU(gpu_call(gs_cuda_scan_async(gpu, type, op, kinds[k], c.d_in, c.d_out, 1, d_carry,
                                                      d_overflow)));
                CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, &overflow, d_overflow, sizeof overflow)));
                GS_TEST_CHECK_CASE(overflow != 0, "async overflow kept", type, op, n);
            }
            gs_cuda_free(gpu, d_scalars);
            chain_case_close(&c);
        }
    }
}

static void test_async_chain(void) { async_chain(); }

/* Every variant behind the handle's own entry points (gs_cuda_set_variants,
 * what `gpuscan reduce|scan --algo` runs): chained asynchronous pieces and
 * synchronous pieces from a carry, and the overflow checks of 64-bit sums,
 * as for the default. Reduction and scan variants are paired up. */
static void test_variants(void)
{
    gs_algo reduce[GS_ALGO_COUNT], scan[GS_ALGO_COUNT];
    int n_reduce = 0, n_scan = 0;
    for (int a = 1; a < GS_ALGO_COUNT; a++) {   /* 0 is the default */
        if (gs_algo_serves((gs_algo)a, 0)) reduce[n_reduce++] = (gs_algo)a;
        if (gs_algo_serves((gs_algo)a, 1)) scan[n_scan++] = (gs_algo)a;
    }
    CU_ASSERT_EQUAL(gs_cuda_set_variants(gpu, GS_ALGO_BLELLOCH, GS_ALGO_DEFAULT), GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_set_variants(gpu, GS_ALGO_DEFAULT, GS_ALGO_DIVERGENT), GS_ERR_ARG);
    const int pairs = n_reduce > n_scan ? n_reduce : n_scan;
    for (int i = 0; i < pairs; i++) {
        const gs_algo r = reduce[i % n_reduce], sc = scan[i % n_scan];
        if (gs_test_rank() == 0) printf("\n    variants: reduce %s, scan %s", gs_algo_name(r), gs_algo_name(sc));
        CHECK_GPU(gpu_call(gs_cuda_set_variants(gpu, r, sc)));
        async_chain();
        test_chunks_chain();
        test_sum_overflow();
    }
    CHECK_GPU(gpu_call(gs_cuda_set_variants(gpu, GS_ALGO_DEFAULT, GS_ALGO_DEFAULT)));
}

/* ---- the ladder ----------------------------------------------------------------------- */

static const int64_t ladder_sizes[] = {1, 31, 32, 33, 1023, 1025, 65537, BIG_N, HUGE_N};

/* Every variant of gs_algo for one (type, op) on n random elements (extreme
 * ones with `extreme`), input and output `offset` elements off their
 * buffers' alignment: reductions against the reference; scans of the kinds
 * kinds[k_begin..k_end) from a random carry (cub: from the identity)
 * element by element, with guard, carry and overflow flag (cub produces
 * neither). */
static void check_ladder(gs_type type, gs_op op, int64_t n, int extreme, int offset, int k_begin, int k_end,
                         gs_test_rng *r)
{
    void *in = gs_test_alloc_or_fail((size_t)n * gs_type_size(type));
    gs_test_fill_random(type, op, in, n, extreme, r, float_value);
    device_case c;
    case_open(&c, type, op, in, n, offset, offset);
    size_t work_bytes = 0;
    for (int a = 0; a < GS_ALGO_COUNT; a++)
        for (int scan = 0; scan < 2; scan++) {
            size_t bytes = 0;
            if (!gs_algo_serves((gs_algo)a, scan)) continue;
            for (int k = 0; k < 2; k++)
                CHECK_GPU(gpu_call(gs_cuda_ladder_work_bytes(gpu, (gs_algo)a, scan, type, op, kinds[k], n, &bytes)));
            if (bytes > work_bytes) work_bytes = bytes;
        }
    void *work = device_alloc(work_bytes);
    char *d_scalars = device_alloc(32);
    gs_acc *d_acc = (gs_acc *)d_scalars;
    uint32_t *d_overflow = (uint32_t *)(d_scalars + sizeof(gs_acc));
    const gs_acc ref = gs_verify_reduce_ref(type, op, in, n);
    const double abs_sum = gs_verify_abs_sum(type, in, n);

    for (int a = 0; a < GS_ALGO_COUNT; a++) {
        const gs_algo algo = (gs_algo)a;
        if (!gs_algo_serves(algo, 0)) continue;
        gs_acc got;
        memset(&got, 0xA5, sizeof got);
        CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_acc, &got, sizeof got)));
        CHECK_GPU(gpu_call(gs_cuda_ladder_reduce(gpu, algo, type, op, c.in, n, d_acc, work, work_bytes)));
        CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, &got, d_acc, sizeof got)));
        GS_TEST_CHECK_CASE(gs_verify_reduce_ok(type, op, got, ref, n, abs_sum), gs_algo_name(algo), type, op, n);
    }
    for (int a = 0; a < GS_ALGO_COUNT; a++) {
        const gs_algo algo = (gs_algo)a;
        if (!gs_algo_serves(algo, 1)) continue;
        for (int k = k_begin; k < k_end; k++) {
            double abs_offset = 0.0;
            const gs_acc carry_in = algo == GS_ALGO_CUB ? gs_acc_identity(type, op)
                                                        : gs_test_random_carry(type, op, r, &abs_offset, float_value);
            unsigned char scalars[32];
            memset(scalars, 0, sizeof scalars);
            memcpy(scalars, &carry_in, sizeof carry_in);
            CHECK_GPU(gpu_call(gs_cuda_copy_h2d(gpu, d_scalars, scalars, sizeof scalars)));
            case_poison(&c);
            CHECK_GPU(gpu_call(gs_cuda_ladder_scan(gpu, algo, type, op, kinds[k], c.in, c.out, n, d_acc,
                                                   d_overflow, work, work_bytes)));
            GS_TEST_CHECK_CASE(case_fetch(&c), gs_algo_name(algo), type, op, n);
            CHECK_GPU(gpu_call(gs_cuda_copy_d2h(gpu, scalars, d_scalars, sizeof scalars)));
            gs_verify_scan v;
            gs_verify_scan_begin(&v, type, op, kinds[k], n + 1, carry_in, abs_offset);
            GS_TEST_CHECK_CASE(gs_verify_scan_chunk(&v, in, c.host_out, n) == 0, gs_algo_name(algo), type, op, n);
            if (algo != GS_ALGO_CUB) {
                gs_acc carry;
                uint32_t overflow;
                memcpy(&carry, scalars, sizeof carry);
                memcpy(&overflow, scalars + sizeof(gs_acc), sizeof overflow);
                GS_TEST_CHECK_CASE(gs_test_same_carry(type, op, carry, v.prefix, n + 1, v.abs_prefix), gs_algo_name(algo),
                           type, op, n);
                GS_TEST_CHECK_CASE((overflow != 0) == gs_test_expect_overflow(type, op, in, n, carry_in), gs_algo_name(algo),
                           type, op, n);
            }
        }
    }
    gs_cuda_free(gpu, work);
    gs_cuda_free(gpu, d_scalars);
    case_close(&c);
    free(in);
}

/* Every variant, every op of `type`, at every ladder size: plain and
 * extreme data in turn, aligned and one element off; both scan kinds up to
 * BIG_N, beyond it one (alternating), which halves the host's checking. */
static void check_ladder_type(gs_type type)
{
    for (int op = 0; op < GS_OP_COUNT; op++) {
        for (size_t s = 0; s < sizeof ladder_sizes / sizeof ladder_sizes[0]; s++) {
            const int64_t n = ladder_sizes[s];
            if (n > max_n()) continue;
            gs_test_rng r = gs_test_case_rng(8, (uint64_t)(type * GS_OP_COUNT + op), (uint64_t)s, 1);
            const int one = (type + op) % 2;
            check_ladder(type, (gs_op)op, n, (int)(s % 2), (int)(s % 3 == 1), n > BIG_N ? one : 0,
                         n > BIG_N ? one + 1 : 2, &r);
        }
    }
}

#define LADDER_TEST(sfx, E) static void test_ladder_##sfx(void) { check_ladder_type(E); }
TYPE_TESTS(LADDER_TEST)

/* Variants that do not serve the call are refused; so is cub past 2^31 - 1. */
static void test_ladder_refusals(void)
{
    char *d = device_alloc(64);
    size_t bytes;
    CU_ASSERT_EQUAL(gs_cuda_ladder_reduce(gpu, GS_ALGO_BLELLOCH, GS_I32, GS_SUM, d, 4, (gs_acc *)d, NULL, 0),
                    GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_ladder_scan(gpu, GS_ALGO_DIVERGENT, GS_I32, GS_MAX, GS_INCLUSIVE, d, d, 4,
                                        (gs_acc *)d, (uint32_t *)(d + 16), NULL, 0),
                    GS_ERR_ARG);
    CU_ASSERT_EQUAL(gs_cuda_ladder_work_bytes(gpu, GS_ALGO_CUB, 1, GS_F32, GS_SUM, GS_INCLUSIVE,
                                              (int64_t)1 << 31, &bytes),
                    GS_ERR_UNSUPPORTED);
    CU_ASSERT_EQUAL(gs_cuda_ladder_scan(gpu, GS_ALGO_HILLIS_STEELE, GS_F32, GS_SUM, GS_INCLUSIVE, d, d, 1000,
                                        (gs_acc *)d, (uint32_t *)(d + 16), NULL, 0),
                    GS_ERR_ARG);   /* no scratch */
    gs_cuda_free(gpu, d);
}

/* ---- registration -------------------------------------------------------------- */

static int open_gpu(void)
{
    char err[256];
    const int device = gs_test_rank() % gs_cuda_device_count();
    if (gs_cuda_open(device, &gpu, err, sizeof err) != GS_OK) {
        fprintf(stderr, "rank %d: %s\n", gs_test_rank(), err);
        return 1;
    }
    return 0;
}

static int close_gpu(void)
{
    gs_cuda_close(gpu);
    gpu = NULL;
    return 0;
}

/* test_large, switched off where the device lacks the 26 GB it takes or
 * GS_TEST_MAX_N is below its size: CUnit then counts it as inactive, not
 * passed, and the reason is printed. */
static CU_pTest large_test;

/* Open the GPU and switch `test` off unless LARGE_N elements of
 * `bytes_per_element` (input and output) fit; 1 when the GPU failed. */
static int open_with_large_test(CU_pTest test, uint64_t bytes_per_element)
{
    if (open_gpu() != 0) return 1;
    const int64_t n = LARGE_N;
    uint64_t free_bytes = 0, total_bytes = 0;
    char why[96] = "";
    if (n > max_n()) {
        snprintf(why, sizeof why, "GS_TEST_MAX_N=%lld", (long long)max_n());
    } else if (gpu_call(gs_cuda_mem_info(gpu, &free_bytes, &total_bytes)) != GS_OK) {
        close_gpu();
        return 1;
    } else if (free_bytes < (uint64_t)n * bytes_per_element + ((uint64_t)1 << 30)) {
        snprintf(why, sizeof why, "%.1f GB free, %.1f GB needed", free_bytes / 1e9,
                 n * (double)bytes_per_element / 1e9);
    }
    if (*why) {
        printf("\n    rank %d: SKIP \"%s\": %s\n", gs_test_rank(), test->pName, why);
        CU_set_test_active(test, CU_FALSE);
    }
    return 0;
}

static int open_device_suite(void) { return open_with_large_test(large_test, 12); }
static int open_exact_suite(void) { return open_with_large_test(exact_large_test, 8); }

static void register_random_suite(void)
{
    CU_pSuite random = CU_add_suite("cuda random data vs reference", open_gpu, close_gpu);
#define ADD_RANDOM(sfx, E) CU_add_test(random, "random " #sfx, test_random_##sfx);
    TYPE_TESTS(ADD_RANDOM)
    CU_add_test(random, "64-bit sum overflow", test_sum_overflow);
}

static void register_scan_suite(void)
{
    CU_pSuite scans = CU_add_suite("cuda scan contracts", open_gpu, close_gpu);
    CU_add_test(scans, "chunks chain to the whole", test_chunks_chain);
    CU_add_test(scans, "in place", test_in_place);
    CU_add_test(scans, "i64 overflow position", test_i64_overflow_position);
    CU_add_test(scans, "empty input", test_empty);
    CU_add_test(scans, "asynchronous pieces chain", test_async_chain);
    CU_add_test(scans, "every variant through the entry points", test_variants);
}

static void register_ladder_suite(void)
{
    CU_pSuite ladder = CU_add_suite("cuda ladder: every variant vs reference", open_gpu, close_gpu);
#define ADD_LADDER(sfx, E) CU_add_test(ladder, "ladder " #sfx, test_ladder_##sfx);
    TYPE_TESTS(ADD_LADDER)
    CU_add_test(ladder, "refusals", test_ladder_refusals);
}

static void register_device_suite(void)
{
    CU_pSuite device = CU_add_suite("cuda device", open_device_suite, close_gpu);
    CU_add_test(device, "generator", test_generate);
    large_test = CU_add_test(device, "more than 2^31 elements", test_large);
    CU_add_test(device, "errors", test_errors);
}

static void register_exact_suite(void)
{
    CU_pSuite exact = CU_add_suite("cuda exact sums vs reference and CPU", open_exact_suite, close_gpu);
    CU_add_test(exact, "exact f32", test_exact_f32);
    CU_add_test(exact, "exact f64", test_exact_f64);
    CU_add_test(exact, "exact pieces chain, in place", test_exact_chain_in_place);
    CU_add_test(exact, "exact scan states at the epoch's wrap", test_exact_epoch_wrap);
    CU_add_test(exact, "exact scan states apart from packed ones", test_exact_packed_apart);
    CU_add_test(exact, "exact refusals", test_exact_refusals);
    CU_add_test(exact, "exact f32 reduction, crowded digits", test_exact_crowded_digits);
    CU_add_test(exact, "exact reductions sending elements ahead", test_exact_sink_ahead);
    exact_large_test = CU_add_test(exact, "exact, more than 2^31 elements", test_exact_large);
}

/* Every suite, or with GS_TEST_CUDA_SUITE=NAME only that one (a GPU node's
 * time is short: tests/gpu_exact.sh runs the exact one alone). */
static const struct {
    const char *name;
    void (*add)(void);
} suites[] = {
    {"random", register_random_suite}, {"scans", register_scan_suite}, {"ladder", register_ladder_suite},
    {"device", register_device_suite}, {"exact", register_exact_suite},
};

static int register_suites(void)
{
    const char *only = getenv("GS_TEST_CUDA_SUITE");
    int added = 0;
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        if (only && strcmp(only, suites[i].name) != 0) continue;
        suites[i].add();
        added++;
    }
    if (added == 0) {
        fprintf(stderr, "GS_TEST_CUDA_SUITE=%s names no suite; the suites:", only);
        for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) fprintf(stderr, " %s", suites[i].name);
        fprintf(stderr, "\n");
        return 1;
    }
    CU_set_fail_on_inactive(CU_FALSE);   /* a test switched off (too large for the card) is a skip */
    return 0;
}

int main(int argc, char **argv)
{
    if (gs_cuda_device_count() == 0) {
        printf("no usable GPU: skipped\n");
        return 77;
    }
    return gs_test_main(argc, argv, register_suites);
}
