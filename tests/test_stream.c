/*
 * test_stream.c - the chunk pipeline on host shards (gs_pipe_host_reduce,
 * gs_pipe_host_scan: what gs_reduce and gs_scan use for host pointers on the
 * CUDA backend), on one rank, through the pipeline's own interface on a
 * backend opened through the backend interface: the GPU where there is one
 * (with pageable and with pinned host memory), else the CPU backend, which
 * runs the same steps on the host.
 *
 * Every type x op x scan kind, chunk sizes that do and do not divide the
 * shard (down to one element), depths 1 to 16: results against the
 * independent reference (integers exactly, floats within its bound), chunked
 * integer output equal to the one-chunk output bit for bit, carries that
 * enter from outside, and a prefix overflow in a middle chunk.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_algo.h"
#include "gs_cpu.h"
#include "gs_pipe.h"
#include "gs_test.h"
#include "gs_test_data.h"
#include "gs_verify.h"

static gs_err err;         /* the pipeline's failures */
static gs_be be;           /* the backend the pipeline runs on */
static gs_ring *ring;
static gs_context *ctx;    /* the public API, for the kernel variants */

/* Chunk sizes and depths: one element at a time, chunks that divide no
 * size below, one 16-byte multiple, and the defaults (0). */
static const struct { int64_t chunk; int depth; } shapes[] = {
    {1, 1}, {7, 2}, {1000, 3}, {4096, 16}, {0, 0},
};
static const int64_t sizes[] = {1, 2, 33, 4099, 65537};
/* Chunks of one element only below this size: each costs a kernel launch. */
#define ONE_ELEMENT_LIMIT 5000

#define CHECK_CASE(cond, what, type, op, n, chunk, depth)                                          \
    do {                                                                                           \
        const int ok_ = (cond);                                                                    \
        CU_assertImplementation(ok_ ? CU_TRUE : CU_FALSE, __LINE__, #cond, __FILE__, "",           \
                                CU_FALSE);                                                         \
        if (!ok_)                                                                                  \
            fprintf(stderr, "    failed: %s %s %s n=%lld chunk=%lld depth=%d: %s\n", (what),       \
                    gs_type_name(type), gs_op_name(op), (long long)(n), (long long)(chunk),        \
                    (depth), err.msg);                                                             \
    } while (0)

/* 1 when a GPU can be used: the pipeline then runs on the CUDA backend. */
static int have_gpu(void)
{
    char why[GS_ERRMSG_LEN];
    return gs_backend_devices(GS_BACKEND_CUDA, why, sizeof why) > 0;
}

static int open_context(void)
{
    gs_config cfg = GS_CONFIG_INIT;
    if (gs_context_create(MPI_COMM_WORLD, &cfg, &ctx) != GS_OK) return 1;
    err.rank = gs_test_rank();
    const gs_backend kind = have_gpu() ? GS_BACKEND_CUDA : GS_BACKEND_CPU;
    if (gs_be_open(&be, kind, 0, &err) != GS_OK || gs_ring_create(&be, &ring, &err) != GS_OK) return 1;
    if (gs_test_rank() == 0) printf("backend: %s\n", gs_backend_name(kind));
    return 0;
}

static int close_context(void)
{
    gs_ring_destroy(ring);
    gs_be_close(&be);
    gs_context_destroy(ctx);
    ctx = NULL;
    return 0;
}

/* Host memory of the kind under test: pageable, or pinned (CUDA only). */
typedef enum memory { PAGEABLE, PINNED } memory;

static void *host_alloc(memory mem, size_t bytes)
{
    void *p = NULL;
    if (mem == PINNED) {
        CU_ASSERT_EQUAL_FATAL(gs_be_alloc(&be, GS_MEM_PINNED, &p, bytes ? bytes : 1), GS_OK);
        return p;
    }
    return gs_test_alloc_or_fail(bytes);
}

static void host_free(memory mem, void *p)
{
    if (mem == PINNED) gs_be_free(&be, GS_MEM_PINNED, p);
    else free(p);
}

/* Reduce and scan (both kinds) one generated shard in every chunk shape. */
static void check_shard(memory mem, gs_type type, gs_op op, int64_t n)
{
    const size_t in_bytes = (size_t)n * gs_type_size(type), out_bytes = (size_t)n * gs_test_out_size(type, op);
    void *in = host_alloc(mem, in_bytes), *out = host_alloc(mem, out_bytes), *whole = malloc(out_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(whole);
    gs_cpu_generate(type, 0x5eed, 1000, n, in);
    const gs_acc ref = gs_verify_reduce_ref(type, op, in, n);
    const double abs_sum = gs_verify_abs_sum(type, in, n);
    for (int kind = GS_INCLUSIVE; kind <= GS_EXCLUSIVE; kind++) {
        /* the one-chunk scan, which chunked integer scans must equal bit for bit */
        CU_ASSERT_EQUAL(gs_pipe_host_scan(&be, ring, type, op, (gs_scan_kind)kind, in, whole, n, n, 1,
                                          gs_acc_identity(type, op)), GS_OK);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            const int64_t chunk = shapes[s].chunk;
            const int depth = shapes[s].depth;
            if (chunk == 1 && n > ONE_ELEMENT_LIMIT) continue;
            if (kind == GS_INCLUSIVE) {
                gs_acc got;
                CHECK_CASE(gs_pipe_host_reduce(&be, ring, type, op, in, n, chunk, depth, &got) == GS_OK,
                           "reduce runs", type, op, n, chunk, depth);
                CHECK_CASE(gs_verify_reduce_ok(type, op, got, ref, n, abs_sum), "reduce result", type,
                           op, n, chunk, depth);
            }
            memset(out, 0xA5, out_bytes);
            CHECK_CASE(gs_pipe_host_scan(&be, ring, type, op, (gs_scan_kind)kind, in, out, n, chunk, depth,
                                         gs_acc_identity(type, op)) == GS_OK,
                       "scan runs", type, op, n, chunk, depth);
            gs_verify_scan v;
            gs_verify_scan_begin(&v, type, op, (gs_scan_kind)kind, n, gs_acc_identity(type, op), 0);
            CHECK_CASE(gs_verify_scan_chunk(&v, in, out, n) == 0, "scan output", type, op, n, chunk, depth);
            if (!gs_type_is_float(type))
                CHECK_CASE(memcmp(out, whole, out_bytes) == 0, "chunked = one chunk", type, op, n, chunk,
                           depth);
        }
    }
    host_free(mem, in);
    host_free(mem, out);
    free(whole);
}

static void check_every_case(memory mem)
{
    for (int t = 0; t < GS_TYPE_COUNT; t++)
        for (int op = 0; op < GS_OP_COUNT; op++)
            for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
                check_shard(mem, (gs_type)t, (gs_op)op, sizes[i]);
}

static void test_pageable(void) { check_every_case(PAGEABLE); }
static void test_pinned(void) { check_every_case(PINNED); }

/* A scan in two calls, the second starting from the first part's total, as
 * gs_scan does with a rank's offset: the same as one scan of the whole. */
static void test_carry_enters(void)
{
    const int64_t n = 10007, cut = 3001;
    for (int t = 0; t < GS_TYPE_COUNT; t++) {
        for (int op = 0; op < GS_OP_COUNT; op++) {
            const gs_type type = (gs_type)t;
            const size_t in_size = gs_type_size(type), osize = gs_test_out_size(type, (gs_op)op);
            char *in = malloc((size_t)n * in_size), *out = malloc((size_t)n * osize);
            CU_ASSERT_PTR_NOT_NULL_FATAL(in);
            CU_ASSERT_PTR_NOT_NULL_FATAL(out);
            gs_cpu_generate(type, 77, 0, n, in);
            gs_acc first;
            CU_ASSERT_EQUAL(gs_pipe_host_reduce(&be, ring, type, (gs_op)op, in, cut, 1000, 2, &first), GS_OK);
            CU_ASSERT_EQUAL(gs_pipe_host_scan(&be, ring, type, (gs_op)op, GS_INCLUSIVE, in, out, cut, 999, 3,
                                              gs_acc_identity(type, (gs_op)op)), GS_OK);
            CU_ASSERT_EQUAL(gs_pipe_host_scan(&be, ring, type, (gs_op)op, GS_INCLUSIVE, in + cut * in_size,
                                              out + cut * osize, n - cut, 1000, 4,
                                              gs_acc_scan_carry(type, (gs_op)op, first)), GS_OK);
            gs_verify_scan v;
            gs_verify_scan_begin(&v, type, (gs_op)op, GS_INCLUSIVE, n, gs_acc_identity(type, (gs_op)op), 0);
            CHECK_CASE(gs_verify_scan_chunk(&v, in, out, n) == 0, "scan in two calls", type, (gs_op)op, n,
                       (int64_t)1000, 4);
            free(in);
            free(out);
        }
    }
}

/* A prefix sum that overflows in a middle chunk fails the scan with
 * GS_ERR_OVERFLOW, and the pipeline works again afterwards. */
static void test_overflow_in_a_middle_chunk(void)
{
    const int64_t n = 5000;
    int64_t *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    in[2500] = INT64_MAX;
    in[2501] = 1;
    const gs_acc zero = gs_acc_identity(GS_I64, GS_SUM);
    CU_ASSERT_EQUAL(gs_pipe_host_scan(&be, ring, GS_I64, GS_SUM, GS_INCLUSIVE, in, out, n, 100, 3, zero),
                    GS_ERR_OVERFLOW);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "overflow"));
    in[2501] = 0;
    CU_ASSERT_EQUAL(gs_pipe_host_scan(&be, ring, GS_I64, GS_SUM, GS_INCLUSIVE, in, out, n, 100, 3, zero), GS_OK);
    CU_ASSERT_EQUAL(out[n - 1], INT64_MAX);
    free(in);
    free(out);
}

/* gs_config's kernel variants: a context refuses a variant of the wrong
 * side, and any variant off the CUDA backend, with a message naming it; on
 * the CUDA backend a context with variants computes what the default does
 * (integers: the same bits). Collective, like gs_context_create. */
static gs_status create_with(gs_backend backend, gs_algo reduce, gs_algo scan, gs_context **made)
{
    gs_config cfg = GS_CONFIG_INIT;
    cfg.backend = backend;
    cfg.reduce_kernel = gs_algo_name(reduce);
    cfg.scan_kernel = gs_algo_name(scan);
    return gs_context_create(MPI_COMM_WORLD, &cfg, made);
}

static void expect_refused(gs_backend backend, gs_algo reduce, gs_algo scan, gs_status want,
                           const char *named)
{
    gs_context *c = NULL;
    CU_ASSERT_EQUAL(create_with(backend, reduce, scan, &c), want);
    CU_ASSERT_PTR_NOT_NULL(c && strstr(gs_context_error(c), named));
    gs_context_destroy(c);
}

static void test_variants_in_context(void)
{
    expect_refused(GS_BACKEND_AUTO, GS_ALGO_BLELLOCH, GS_ALGO_DEFAULT, GS_ERR_ARG, "blelloch");
    expect_refused(GS_BACKEND_AUTO, GS_ALGO_DEFAULT, GS_ALGO_DIVERGENT, GS_ERR_ARG, "divergent");
    expect_refused(GS_BACKEND_CPU, GS_ALGO_CUB, GS_ALGO_DEFAULT, GS_ERR_UNSUPPORTED, "cub");
    expect_refused(GS_BACKEND_CPU, GS_ALGO_DEFAULT, GS_ALGO_MULTI_KERNEL, GS_ERR_UNSUPPORTED, "multi-kernel");
    if (gs_context_backend(ctx) != GS_BACKEND_CUDA) return;

    const int64_t n = 100003;
    int32_t *in = malloc((size_t)n * sizeof *in);
    int64_t *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in && want && got);
    gs_cpu_generate(GS_I32, 91, 0, n, in);
    gs_value want_sum, got_sum;
    CU_ASSERT_EQUAL_FATAL(gs_reduce(ctx, GS_SUM, GS_I32, in, n, &want_sum), GS_OK);
    CU_ASSERT_EQUAL_FATAL(gs_scan(ctx, GS_SUM, GS_I32, GS_EXCLUSIVE, in, want, n), GS_OK);
    const gs_algo pairs[][2] = {{GS_ALGO_GRID_STRIDE, GS_ALGO_REDUCE_THEN_SCAN}, {GS_ALGO_CUB, GS_ALGO_CUB},
                                {GS_ALGO_FIRST_ADD, GS_ALGO_BLELLOCH}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        gs_context *c = NULL;
        CU_ASSERT_EQUAL_FATAL(create_with(GS_BACKEND_CUDA, pairs[i][0], pairs[i][1], &c), GS_OK);
        memset(got, 0x5a, (size_t)n * sizeof *got);   /* poison */
        CU_ASSERT_EQUAL(gs_reduce(c, GS_SUM, GS_I32, in, n, &got_sum), GS_OK);
        CU_ASSERT_EQUAL(got_sum.v.i, want_sum.v.i);
        CU_ASSERT_EQUAL(gs_scan(c, GS_SUM, GS_I32, GS_EXCLUSIVE, in, got, n), GS_OK);
        CU_ASSERT(memcmp(got, want, (size_t)n * sizeof *got) == 0);
        gs_context_destroy(c);
    }
    free(in);
    free(want);
    free(got);
}

static int register_suites(void)
{
    CU_pSuite suite = CU_add_suite("chunk pipeline on host shards", open_context, close_context);
    if (!suite) return 1;
    CU_add_test(suite, "pageable memory, every type x op x chunk shape", test_pageable);
    if (have_gpu()) CU_add_test(suite, "pinned memory, every type x op x chunk shape", test_pinned);
    CU_add_test(suite, "a carry enters from outside", test_carry_enters);
    CU_add_test(suite, "overflow in a middle chunk", test_overflow_in_a_middle_chunk);
    CU_add_test(suite, "kernel variants in the context", test_variants_in_context);
    return 0;
}

int main(int argc, char **argv) { return gs_test_main(argc, argv, register_suites); }
