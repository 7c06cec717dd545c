/*
 * gs_bench.c - the measurements behind `gpuscan bench`: each rank's copy
 * bandwidth ceilings, and timed, checked runs of the collective gs_reduce
 * and gs_scan on shards that live on the backend (resident) or in host
 * memory (streamed).
 *
 * Timing follows nccl-tests: no barrier between runs; each rank times every
 * run on its own monotonic clock, and a run's time is the largest over the
 * ranks, combined once after the last run so that no extra MPI call sits
 * between runs. gs_reduce and gs_scan are collective and return only when
 * their results are complete (the CUDA backend synchronises its stream), so
 * a rank's clock covers the whole collective as that rank saw it.
 *
 * Checks run after the timed runs, never among them: the scan output is
 * poisoned, one more run fills it, and the output is compared with the
 * independent serial reference of gs_verify.h, block by block on host
 * copies, so host memory stays bounded whatever the shard size.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cpu.h"
#include "gs_internal.h"
#include "gs_mpi.h"
#include "gs_run.h"
#include "gs_tools.h"
#include "gs_verify.h"

/* Elements per host block of a check (the reference's unit of work). */
#define GS_BENCH_CHECK_BLOCK ((int64_t)1 << 24)
/* Copies timed per ceiling; the median is kept. */
#define GS_BENCH_CEILING_REPS 7
/* Buffer sizes of the ceilings: large against any cache, small against
 * memory: a host copy touches 2 x 256 MiB, a device copy at most 2 x 1 GiB. */
#define GS_BENCH_HOST_COPY_BYTES ((size_t)256 << 20)
#define GS_BENCH_DEVICE_COPY_BYTES ((size_t)1 << 30)
#define GS_BENCH_H2D_BYTES ((size_t)256 << 20)
/* Largest global count: keeps every byte count of a shard within 64 bits. */
#define GS_BENCH_MAX_N (INT64_MAX / 16)

const char *gs_bench_mode_name(gs_bench_mode mode)
{
    return mode == GS_BENCH_RESIDENT ? "resident" : mode == GS_BENCH_STREAMED ? "streamed" : "unknown";
}

/* ---- statistics ------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts s[0..n) and returns its median. */
static double sort_and_median(double *s, int n)
{
    qsort(s, (size_t)n, sizeof *s, compare_doubles);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- ceilings ----------------------------------------------------------------- */

/* This rank's ceilings: the backend's memory-to-memory copy and, where it
 * has a link to cross, pinned host-to-device and both directions at once. */
static gs_status rank_ceilings(gs_context *ctx, gs_bench_ceiling *c)
{
    gs_be *be = &ctx->be;
    if (be->ops->computes_on_host)
        return gs_be_copy_bandwidth(be, GS_COPY_D2D, GS_BENCH_HOST_COPY_BYTES, GS_BENCH_CEILING_REPS, &c->copy_gbps);
    uint64_t free_bytes = 0;
    GS_CHECK(gs_be_memory_free(be, &free_bytes));
    /* source and destination together within half of what is free */
    size_t d2d = GS_BENCH_DEVICE_COPY_BYTES;
    if (d2d > free_bytes / 4) d2d = (size_t)(free_bytes / 4);
    GS_CHECK(gs_be_copy_bandwidth(be, GS_COPY_D2D, d2d, GS_BENCH_CEILING_REPS, &c->copy_gbps));
    GS_CHECK(gs_be_copy_bandwidth(be, GS_COPY_H2D, GS_BENCH_H2D_BYTES, GS_BENCH_CEILING_REPS, &c->h2d_gbps));
    return gs_be_copy_bandwidth(be, GS_COPY_DUPLEX, GS_BENCH_H2D_BYTES, GS_BENCH_CEILING_REPS, &c->duplex_gbps);
}

gs_status gs_bench_ceilings(gs_context *ctx, gs_bench_ceiling *all)
{
    gs_bench_ceiling mine = {0, 0, 0};
    /* an agreement is an Allreduce: every rank starts measuring together */
    GS_CHECK(gs_mpi_agree(&ctx->mpi, GS_OK));
    GS_CHECK(gs_mpi_agree(&ctx->mpi, rank_ceilings(ctx, &mine)));
    return gs_mpi_allgather_bytes(&ctx->mpi, &mine, sizeof mine, all);
}

/* ---- one case: buffers ------------------------------------------------------- */

typedef struct gs_bench {
    gs_context *ctx;
    const gs_bench_case *c;
    gs_type out_type;           /* scans: gs_scan_output_type */
    size_t in_size, out_size;   /* out_size is 0 for reductions */
    int64_t start, count;       /* this rank's shard */
    gs_mem mem;                 /* where in and out live: the backend's memory (resident),
                                   or host memory its copies read directly (streamed) */
    int on_device;              /* in and out are memory the host cannot read */
    void *in, *out;
    void *h_in, *h_out;         /* host blocks of the check, for device buffers */
    gs_value result;            /* the last reduction's */
} gs_bench;

static gs_status check_case(gs_context *ctx, const gs_bench_case *c)
{
    if ((unsigned)c->type >= GS_TYPE_COUNT || (unsigned)c->op >= GS_OP_COUNT)
        return gs_fail(ctx, GS_ERR_ARG, "bench: unknown type %d or operation %d", (int)c->type, (int)c->op);
    if (c->kind != GS_INCLUSIVE && c->kind != GS_EXCLUSIVE)
        return gs_fail(ctx, GS_ERR_ARG, "bench: unknown scan kind %d", (int)c->kind);
    if (c->mode != GS_BENCH_RESIDENT && c->mode != GS_BENCH_STREAMED)
        return gs_fail(ctx, GS_ERR_ARG, "bench: unknown memory mode %d", (int)c->mode);
    if (c->n < 1 || c->n > GS_BENCH_MAX_N)
        return gs_fail(ctx, GS_ERR_ARG, "bench: %lld elements (1 to %lld)", (long long)c->n,
                       (long long)GS_BENCH_MAX_N);
    if (c->exact && !gs_be_has_exact(&ctx->be))
        return gs_fail(ctx, GS_ERR_UNSUPPORTED, "bench --exact: the %s backend has no exact kernels in this build",
                       gs_backend_name(ctx->be.ops->kind));
    if (c->exact && !((c->type == GS_F32 || c->type == GS_F64) && c->op == GS_SUM))
        return gs_fail(ctx, GS_ERR_ARG, "bench --exact: exact rows are f32/f64 sums, not %s %s",
                       gs_type_name(c->type), gs_op_name(c->op));
    if (c->iters < 1 || c->warmup < 0 || c->check_iters < 0)
        return gs_fail(ctx, GS_ERR_ARG, "bench: %d timed runs (at least 1), %d warm-up and %d checked (at least 0)",
                       c->iters, c->warmup, c->check_iters);
    return GS_OK;
}

/* Room for this rank's `count` elements of `elem_size` bytes where the
 * case's mode puts them. */
static gs_status alloc_buffer(gs_bench *b, void **p, size_t elem_size)
{
    return gs_be_alloc(&b->ctx->be, b->mem, p, (size_t)b->count * elem_size);
}

static void free_buffer(gs_bench *b, void *p) { gs_be_free(&b->ctx->be, b->mem, p); }

/* Elements of the check block that starts at shard index `first`. */
static int64_t block_len(const gs_bench *b, int64_t first)
{
    return b->count - first < GS_BENCH_CHECK_BLOCK ? b->count - first : GS_BENCH_CHECK_BLOCK;
}

static gs_status alloc_host_block(gs_bench *b, void **p, size_t elem_size)
{
    int64_t m = block_len(b, 0);
    *p = m ? malloc((size_t)m * elem_size) : NULL;
    return *p || !m ? GS_OK
                    : gs_fail(b->ctx, GS_ERR_NOMEM, "bench: cannot allocate %zu bytes of host memory for the check",
                              (size_t)m * elem_size);
}

/* This rank's shard and its buffers, with generated input. Collective. */
static gs_status setup(gs_bench *b, gs_context *ctx, const gs_bench_case *c)
{
    memset(b, 0, sizeof *b);
    b->ctx = ctx;
    b->c = c;
    GS_CHECK(gs_mpi_agree(&ctx->mpi, check_case(ctx, c)));
    b->out_type = gs_scan_output_type(c->type, c->op);
    b->in_size = gs_type_size(c->type);
    b->out_size = c->scan ? gs_type_size(b->out_type) : 0;
    gs_shard_range(c->n, ctx->mpi.rank, ctx->mpi.size, &b->start, &b->count);
    b->mem = c->mode == GS_BENCH_RESIDENT ? GS_MEM_DEVICE : GS_MEM_PINNED;
    b->on_device = !ctx->be.ops->computes_on_host && c->mode == GS_BENCH_RESIDENT;

    gs_status st = alloc_buffer(b, &b->in, b->in_size);
    if (st == GS_OK) st = alloc_buffer(b, &b->out, b->out_size);
    if (st == GS_OK && b->on_device && c->check_iters > 0) {
        st = alloc_host_block(b, &b->h_in, b->in_size);
        if (st == GS_OK && c->scan) st = alloc_host_block(b, &b->h_out, b->out_size);
    }
    if (st == GS_OK && b->count > 0) {
        if (b->on_device) st = gs_be_generate(&ctx->be, c->type, c->seed, b->start, b->count, b->in);
        else gs_cpu_generate(c->type, c->seed, b->start, b->count, b->in);
    }
    return gs_mpi_agree(&ctx->mpi, st);
}

static void teardown(gs_bench *b)
{
    free_buffer(b, b->in);
    free_buffer(b, b->out);
    free(b->h_in);
    free(b->h_out);
}

/* ---- one case: runs ------------------------------------------------------------ */

/* One collective run; gs_reduce and gs_scan agree on their status. */
static gs_status run_once(gs_bench *b)
{
    const gs_bench_case *c = b->c;
    if (c->scan) return gs_scan(b->ctx, c->op, c->type, c->kind, b->in, b->out, b->count);
    return gs_reduce(b->ctx, c->op, c->type, b->in, b->count, &b->result);
}

static gs_status time_runs(gs_bench *b, gs_bench_result *r)
{
    gs_context *ctx = b->ctx;
    const int iters = b->c->iters;
    /* this rank's times, then their min, avg and max over the ranks */
    double *mine = malloc(4 * (size_t)iters * sizeof *mine);
    gs_status st = mine ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "no memory for %d run times", iters);
    if ((st = gs_mpi_agree(&ctx->mpi, st)) != GS_OK) {
        free(mine);
        return st;
    }
    double *lo = mine + iters, *avg = lo + iters, *hi = avg + iters;
    for (int i = 0; i < iters && st == GS_OK; i++) {
        double t0 = gs_now();
        st = run_once(b);
        mine[i] = gs_now() - t0;
    }
    if (st == GS_OK) st = gs_mpi_stats(&ctx->mpi, mine, iters, lo, avg, hi);
    if (st == GS_OK) {
        r->median = sort_and_median(hi, iters);
        r->min = hi[0];
        r->max = hi[iters - 1];
        r->p99 = hi[(int)ceil(0.99 * iters) - 1];
    }
    free(mine);
    return st;
}

/* ---- one case: checks ------------------------------------------------------------ */

/* What the reference says: a reduction's global partial and sum of |x|, or
 * a scan's offset (the combined lower ranks) and their sum of |x|; on the
 * exact path the same as an exact state instead. */
typedef struct gs_bench_reference {
    gs_acc value;
    double abs_sum;
    gs_exact exact;
} gs_bench_reference;

/* The input elements [first, first + m) of this rank's shard, on the host:
 * where they are, or generated again (device buffers). */
static const void *host_input(gs_bench *b, int64_t first, int64_t m)
{
    if (!b->on_device) return (const char *)b->in + (size_t)first * b->in_size;
    gs_cpu_generate(b->c->type, b->c->seed, b->start + first, m, b->h_in);
    return b->h_in;
}

/* The scan output elements [first, first + m), on the host. */
static gs_status host_output(gs_bench *b, int64_t first, int64_t m, void **p)
{
    *p = (char *)b->out + (size_t)first * b->out_size;
    if (!b->on_device) return GS_OK;
    gs_status st = gs_be_copy(&b->ctx->be, b->h_out, *p, (size_t)m * b->out_size, 0);
    *p = b->h_out;
    return st;
}

/* Fill the scan output with all-ones bytes (NaN, -1, the largest unsigned),
 * so that elements a run fails to write are counted wrong. Collective. */
static gs_status poison_output(gs_bench *b)
{
    gs_status st = GS_OK;
    const size_t bytes = (size_t)b->count * b->out_size;
    if (b->on_device) st = gs_be_fill(&b->ctx->be, b->out, 0xff, bytes);
    else if (bytes) memset(b->out, 0xff, bytes);   /* an empty shard has no buffer (NULL) */
    return gs_mpi_agree(&b->ctx->mpi, st);
}

/* compute_reference of the exact path: the exact sum of the whole input
 * (reductions) or of the lower ranks' (scans). */
static gs_status compute_exact_reference(gs_bench *b, gs_bench_reference *ref)
{
    gs_exact partial;
    gs_exact_clear(&partial);
    for (int64_t first = 0; first < b->count; first += GS_BENCH_CHECK_BLOCK) {
        int64_t m = block_len(b, first);
        gs_verify_reduce_exact(b->c->type, host_input(b, first, m), m, &partial);
    }
    if (b->c->scan) return gs_mpi_exscan_exact(&b->ctx->mpi, &partial, &ref->exact);
    ref->exact = partial;
    return gs_mpi_allreduce_exact(&b->ctx->mpi, &ref->exact);
}

static gs_status compute_reference(gs_bench *b, gs_bench_reference *ref)
{
    const gs_bench_case *c = b->c;
    if (c->exact) return compute_exact_reference(b, ref);
    gs_acc partial = gs_acc_identity(c->type, c->op);
    double abs_sum = 0;
    for (int64_t first = 0; first < b->count; first += GS_BENCH_CHECK_BLOCK) {
        int64_t m = block_len(b, first);
        const void *x = host_input(b, first, m);
        partial = gs_acc_combine(c->type, c->op, partial, gs_verify_reduce_ref(c->type, c->op, x, m));
        abs_sum += gs_verify_abs_sum(c->type, x, m);
    }
    if (c->scan) {
        GS_CHECK(gs_mpi_exscan_carry(&b->ctx->mpi, c->type, c->op, partial, &ref->value));
        return gs_mpi_exscan_f64(&b->ctx->mpi, abs_sum, &ref->abs_sum);
    }
    ref->value = partial;
    ref->abs_sum = abs_sum;
    GS_CHECK(gs_mpi_allreduce_acc(&b->ctx->mpi, c->type, c->op, &ref->value));
    return gs_mpi_sum_f64(&b->ctx->mpi, &ref->abs_sum, 1);
}

/* A value that no correct run gives where x is due: |x| + 1 away from a
 * finite x (beyond any error bound of docs/SEMANTICS.md), 0 for the others. */
static double corrupt_float(double x)
{
    return isfinite(x) ? x + copysign(fabs(x) + 1, x) : 0;
}

static void corrupt_element(gs_type type, void *p)
{
    if (type == GS_F32) *(float *)p = (float)corrupt_float(*(float *)p);
    else if (type == GS_F64) *(double *)p = corrupt_float(*(double *)p);
    else *(unsigned char *)p ^= 1;   /* the lowest bit of a little-endian integer */
}

/* A reduction's result as the accumulator the reference holds. */
static gs_acc acc_of_result(gs_type type, gs_op op, gs_value v)
{
    gs_acc a;
    a.w = 0;
    switch (gs_reduce_acc_kind(type, op)) {
    case GS_ACC_S128: a.s = v.v.i; break;
    case GS_ACC_U128: a.w = v.v.u; break;
    case GS_ACC_F64: a.f = v.v.f; break;
    case GS_ACC_U64: a.u = v.v.u; break;
    case GS_ACC_I64: a.i = v.v.i; break;
    }
    return a;
}

/* Wrong elements of the last run, over all ranks. Collective. */
static gs_status check_run(gs_bench *b, const gs_bench_reference *ref, int64_t *wrong)
{
    const gs_bench_case *c = b->c;
    const int corrupt = b->c->plant_wrong && b->ctx->mpi.rank == 0;
    if (!c->scan) {
        gs_value got = b->result;
        if (corrupt) {
            if (gs_type_is_float(got.type)) got.v.f = corrupt_float(got.v.f);
            else got.v.u ^= 1;
        }
        /* every rank holds the result: any rank's wrong one counts */
        int64_t bad = c->exact ? !gs_verify_same_f64(got.v.f, gs_exact_round_f64(&ref->exact))
                               : !gs_verify_reduce_ok(c->type, c->op, acc_of_result(c->type, c->op, got),
                                                      ref->value, c->n, ref->abs_sum);
        return gs_mpi_max_i64(&b->ctx->mpi, bad, wrong);
    }
    gs_verify_scan v;
    if (c->exact) gs_verify_scan_begin_exact(&v, c->type, c->kind, &ref->exact);
    else gs_verify_scan_begin(&v, c->type, c->op, c->kind, c->n, ref->value, ref->abs_sum);
    gs_status st = GS_OK;
    for (int64_t first = 0; first < b->count && st == GS_OK; first += GS_BENCH_CHECK_BLOCK) {
        int64_t m = block_len(b, first);
        void *out;
        st = host_output(b, first, m, &out);
        if (st != GS_OK) break;
        if (corrupt && first == 0) corrupt_element(b->out_type, out);
        gs_verify_scan_chunk(&v, host_input(b, first, m), out, m);
    }
    GS_CHECK(gs_mpi_agree(&b->ctx->mpi, st));
    return gs_mpi_sum_i64(&b->ctx->mpi, v.wrong, wrong);
}

static gs_status check_runs(gs_bench *b, gs_bench_result *r)
{
    r->wrong = -1;
    if (b->c->check_iters == 0) return GS_OK;
    gs_bench_reference ref;
    GS_CHECK(compute_reference(b, &ref));
    r->wrong = 0;
    for (int k = 0; k < b->c->check_iters; k++) {
        if (b->c->scan) GS_CHECK(poison_output(b));
        GS_CHECK(run_once(b));
        int64_t wrong = 0;
        GS_CHECK(check_run(b, &ref, &wrong));
        if (wrong > r->wrong) r->wrong = wrong;
    }
    return GS_OK;
}

gs_status gs_bench_run(gs_context *ctx, const gs_bench_case *c, gs_bench_result *r)
{
    memset(r, 0, sizeof *r);
    r->wrong = -1;
    gs_bench b;
    gs_status st = setup(&b, ctx, c);
    /* the case's path, whatever the context's config says, for its runs only */
    const int config_exact = ctx->exact;
    ctx->exact = c->exact;
    for (int i = 0; i < c->warmup && st == GS_OK; i++) st = run_once(&b);
    if (st == GS_OK) st = time_runs(&b, r);
    if (st == GS_OK) st = check_runs(&b, r);
    ctx->exact = config_exact;
    teardown(&b);
    if (st != GS_OK) return st;
    r->bytes = (uint64_t)c->n * (b.in_size + b.out_size);
    r->gbps_total = r->median > 0 ? (double)r->bytes / r->median * 1e-9 : 0;
    r->gbps_rank = r->gbps_total / ctx->mpi.size;
    return GS_OK;
}

/* ---- file reads -------------------------------------------------------------- */

gs_status gs_bench_read(gs_context *ctx, const char *path, int iters, gs_bench_read_result *r)
{
    memset(r, 0, sizeof *r);
    gs_status st = iters >= 1 ? GS_OK : gs_fail(ctx, GS_ERR_ARG, "bench: %d read runs (at least 1)", iters);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    double *times = malloc((size_t)iters * sizeof *times);
    st = times ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "bench: no memory for %d read times", iters);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    const gs_source src = {path, 0, 0, GS_F32, 0};
    gs_run_options opt;
    memset(&opt, 0, sizeof opt);
    opt.residency = GS_RESIDENCY_STREAMED;
    gs_report rep;
    for (int i = 0; i < iters && st == GS_OK; i++) {
        gs_value ignored;
        st = gs_reduce_run(ctx, &src, GS_MAX, &opt, &ignored, &rep);
        times[i] = rep.phase_max[GS_PHASE_READ];
    }
    if (st == GS_OK) {
        r->bytes = rep.bytes;
        r->median = sort_and_median(times, iters);
        r->gbps = r->median > 0 ? (double)r->bytes / r->median / 1e9 : 0;
    }
    free(times);
    return st;
}
