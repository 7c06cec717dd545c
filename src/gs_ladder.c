/*
 * gs_ladder.c - `gpuscan ladder`'s measurements: every kernel variant of the
 * CUDA backend (gs_algo) on the same device-resident generated data, timed
 * with CUDA events (median of the timed runs after the warm-up) and checked
 * against the independent reference of gs_verify.h, next to a
 * device-to-device copy of the input (the ceiling).
 *
 * The reference runs on the host in blocks on the OpenMP threads, each
 * block's input generated again where it is checked (the whole input is
 * never held on the host); each block's reference starts from the carry of
 * the blocks before it (their partials combined in order), as a rank's
 * does from the lower ranks' (docs/SEMANTICS.md's bound covers both). A
 * scan's output comes back a chunk at a time through pinned memory.
 *
 * The exact row (--exact) runs the backend's exact kernels on the same
 * data with a gs_exact state in device memory; its reference is each
 * block's exact sum (gs_verify_reduce_exact), merged in order, and its
 * check bit-equality.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>

#include "gs_cpu.h"
#include "gs_internal.h"
#include "gs_tools.h"
#include "gs_verify.h"


/* The rows' order: the classic steps, the default, then cub. */
static int ladder_order(int scan, gs_algo *order)
{
    int count = 0;
    for (int a = GS_ALGO_DIVERGENT; a < GS_ALGO_CUB; a++)
        if (gs_algo_serves((gs_algo)a, scan)) order[count++] = (gs_algo)a;
    order[count++] = GS_ALGO_DEFAULT;
    order[count++] = GS_ALGO_CUB;
    return count;
}

/* Elements per block of the host reference, and blocks per chunk of output
 * copied back at once (through a pinned staging buffer). */
#define GS_LADDER_CHECK_BLOCK ((int64_t)1 << 20)
#define GS_LADDER_CHECK_CHUNK 32
/* Least GPU time of a variant's warm-up runs. */
#define GS_LADDER_WARMUP_MS 50.0

/* Everything one case holds. */
typedef struct ladder {
    gs_context *ctx;
    gs_be *be;
    const gs_ladder_case *c;
    size_t in_size, out_size;
    void *d_in, *d_out, *d_work;
    size_t work_bytes;
    gs_acc *d_acc;            /* reduction result, or scan carry */
    uint32_t *d_overflow;
    void *h_stage;            /* scans: pinned, one chunk of output */
    int64_t blocks;           /* reference blocks */
    gs_acc *carries;          /* scans: the reference carry before each block, then after the last */
    double *abs_before;       /* scans: sum of |x| before each block, then of all */
    gs_acc reduced;           /* reductions: the reference partial */
    double abs_sum;
    gs_algo algo;             /* the variant being run */
    int exact;                /* the exact row applies to the case */
    int exact_row;            /* the exact row is being run (not l->algo) */
    int native;               /* the cub-native row applies to the case */
    int native_row;           /* the cub-native row is being run */
    gs_exact *d_exact;        /* its sum or carry, in device memory */
    gs_exact *exact_before;   /* its reference: the exact sum before each block, then of all */
} ladder;

/* 1 when the exact row applies to (type, op). */
static int exact_applies(const gs_ladder_case *c)
{
    return c->exact && (c->type == GS_F32 || c->type == GS_F64) && c->op == GS_SUM;
}

/* 1 when the cub-native row is run: scans CUB has a native call for,
 * within its 32-bit counts. */
static int native_applies(const gs_ladder_case *c)
{
    return c->scan && gs_native_scan_exists(c->op, c->kind) && c->n <= INT32_MAX;
}

static int64_t block_len(const ladder *l, int64_t b)
{
    const int64_t first = b * GS_LADDER_CHECK_BLOCK;
    return l->c->n - first < GS_LADDER_CHECK_BLOCK ? l->c->n - first : GS_LADDER_CHECK_BLOCK;
}

/* Blocks [first, last) of the reference on the OpenMP threads, each block's
 * input generated again on its thread (the generator is a pure function of
 * the index): its partial and sum of |x| into carries[] and abs_before[]
 * (out == NULL), or the count of wrong elements of `out`, whose block
 * `first` starts the buffer. */
static gs_status blocks_on_threads(ladder *l, int64_t first, int64_t last, const void *out, int64_t *wrong)
{
    const gs_ladder_case *c = l->c;
    int failed = 0;
    int64_t bad = 0;
#ifdef _OPENMP
#pragma omp parallel reduction(+ : bad) reduction(| : failed)
#endif
    {
        void *x = malloc((size_t)GS_LADDER_CHECK_BLOCK * l->in_size);
        failed = x == NULL;
#ifdef _OPENMP
#pragma omp for schedule(dynamic)
#endif
        for (int64_t b = first; b < last; b++) {
            if (!x) continue;
            const int64_t m = block_len(l, b);
            gs_cpu_generate(c->type, c->seed, b * GS_LADDER_CHECK_BLOCK, m, x);
            if (!out) {
                l->carries[b] = gs_verify_reduce_ref(c->type, c->op, x, m);
                l->abs_before[b] = gs_verify_abs_sum(c->type, x, m);
                if (l->exact) {
                    gs_exact_clear(&l->exact_before[b]);
                    gs_verify_reduce_exact(c->type, x, m, &l->exact_before[b]);
                }
            } else {
                gs_verify_scan v;
                if (l->exact_row) gs_verify_scan_begin_exact(&v, c->type, c->kind, &l->exact_before[b]);
                else gs_verify_scan_begin(&v, c->type, c->op, c->kind, c->n, l->carries[b], l->abs_before[b]);
                bad += gs_verify_scan_chunk(&v, x, (const char *)out + (size_t)((b - first) * GS_LADDER_CHECK_BLOCK) * l->out_size, m);
            }
        }
        free(x);
    }
    if (wrong) *wrong = bad;
    return failed ? gs_fail(l->ctx, GS_ERR_NOMEM, "ladder: no host memory for the reference") : GS_OK;
}

/* The reference: each block's partial and sum of |x| in parallel, then the
 * carries before each block in order. */
static gs_status reference(ladder *l)
{
    const gs_ladder_case *c = l->c;
    l->blocks = (c->n + GS_LADDER_CHECK_BLOCK - 1) / GS_LADDER_CHECK_BLOCK;
    l->carries = malloc((size_t)(l->blocks + 1) * sizeof *l->carries);
    l->abs_before = malloc((size_t)(l->blocks + 1) * sizeof *l->abs_before);
    if (l->exact) l->exact_before = malloc((size_t)(l->blocks + 1) * sizeof *l->exact_before);
    if (!l->carries || !l->abs_before || (l->exact && !l->exact_before))
        return gs_fail(l->ctx, GS_ERR_NOMEM, "ladder: no host memory for the reference of %lld elements",
                       (long long)c->n);
    GS_CHECK(blocks_on_threads(l, 0, l->blocks, NULL, NULL));
    /* each block's partial becomes the carry before it */
    gs_acc acc = gs_acc_identity(c->type, c->op);
    double abs = 0;
    for (int64_t b = 0; b < l->blocks; b++) {
        const gs_acc partial = l->carries[b];
        const double partial_abs = l->abs_before[b];
        l->carries[b] = gs_acc_scan_carry(c->type, c->op, acc);
        l->abs_before[b] = abs;
        acc = gs_acc_combine(c->type, c->op, acc, partial);
        abs += partial_abs;
    }
    l->carries[l->blocks] = gs_acc_scan_carry(c->type, c->op, acc);
    l->abs_before[l->blocks] = abs;
    if (l->exact) {
        gs_exact sum;
        gs_exact_clear(&sum);
        for (int64_t b = 0; b <= l->blocks; b++) {
            const gs_exact partial = l->exact_before[b];
            l->exact_before[b] = sum;
            if (b < l->blocks) gs_exact_merge(&sum, &partial);
        }
    }
    l->reduced = acc;
    l->abs_sum = abs;
    return GS_OK;
}

/* One run of the current variant, queued on the compute stream. */
static gs_status run_variant(void *arg)
{
    ladder *l = arg;
    const gs_ladder_case *c = l->c;
    if (!c->scan)
        return gs_be_ladder_reduce(l->be, l->algo, c->type, c->op, l->d_in, c->n, l->d_acc, l->d_work,
                                     l->work_bytes);
    return gs_be_ladder_scan(l->be, l->algo, c->type, c->op, c->kind, l->d_in, l->d_out, c->n, l->d_acc,
                               l->d_overflow, l->d_work, l->work_bytes);
}

/* One run of CUB's native scan, queued. */
static gs_status run_native(void *arg)
{
    ladder *l = arg;
    const gs_ladder_case *c = l->c;
    size_t bytes = l->work_bytes;
    return gs_be_ladder_native(l->be, c->type, c->op, c->kind, l->d_in, l->d_out, c->n, l->d_work, &bytes);
}

/* One run of the exact kernels, queued: onto the device's exact state. */
static gs_status run_exact(void *arg)
{
    ladder *l = arg;
    const gs_ladder_case *c = l->c;
    if (!c->scan) return gs_be_reduce_exact_async(l->be, c->type, l->d_in, c->n, l->d_exact);
    return gs_be_scan_exact_async(l->be, c->type, c->kind, l->d_in, l->d_out, c->n, l->d_exact);
}

/* The device's exact state cleared (a zero sum or carry). */
static gs_status reset_exact(ladder *l)
{
    gs_exact zero;
    gs_exact_clear(&zero);
    return gs_be_copy(l->be, l->d_exact, &zero, sizeof zero, 1);
}

/* 1 when the device's exact state rounds as the reference's. */
static gs_status exact_state_ok(ladder *l, const gs_exact *ref, int *ok)
{
    gs_exact got;
    GS_CHECK(gs_be_copy(l->be, &got, l->d_exact, sizeof got, 0));
    *ok = gs_verify_same_f64(gs_exact_round_f64(&got), gs_exact_round_f64(ref));
    return GS_OK;
}

/* The carry from the identity and a clear overflow flag, on the device. */
static gs_status reset_carry(ladder *l)
{
    unsigned char init[32];
    memset(init, 0, sizeof init);
    const gs_acc id = gs_acc_identity(l->c->type, l->c->op);
    memcpy(init, &id, sizeof id);
    return gs_be_copy(l->be, l->d_acc, init, sizeof init, 1);
}

static int same_carry(const gs_ladder_case *c, gs_acc got, gs_acc ref, double abs_sum)
{
    if (!gs_type_is_float(c->type)) return got.u == ref.u;
    return gs_verify_reduce_ok(c->type, c->op, got, ref, c->n, abs_sum);
}

/* One more run after poisoning what it writes, checked: wrong output
 * elements, plus one each for a wrong carry or overflow flag (which cub
 * does not produce); for the exact row, bit for bit, plus one for a wrong
 * final sum or carry. */
static gs_status check_variant(ladder *l, int64_t *wrong)
{
    const gs_ladder_case *c = l->c;
    *wrong = 0;
    if (l->exact_row) GS_CHECK(reset_exact(l));
    if (!c->scan && l->exact_row) {
        GS_CHECK(run_exact(l));
        int ok;
        GS_CHECK(exact_state_ok(l, &l->exact_before[l->blocks], &ok));
        *wrong = !ok;
        return GS_OK;
    }
    if (!c->scan) {
        gs_acc got;
        GS_CHECK(gs_be_fill(l->be, l->d_acc, 0xff, sizeof got));
        GS_CHECK(run_variant(l));
        GS_CHECK(gs_be_copy(l->be, &got, l->d_acc, sizeof got, 0));
        *wrong = !gs_verify_reduce_ok(c->type, c->op, got, l->reduced, c->n, l->abs_sum);
        return GS_OK;
    }
    if (!l->exact_row) GS_CHECK(reset_carry(l));
    GS_CHECK(gs_be_fill(l->be, l->d_out, 0xff, (size_t)c->n * l->out_size));
    GS_CHECK(l->exact_row ? run_exact(l) : run_variant(l));
    unsigned char tail[32];
    GS_CHECK(gs_be_copy(l->be, tail, l->d_acc, sizeof tail, 0));
    int64_t bad = 0;
    for (int64_t first = 0; first < l->blocks; first += GS_LADDER_CHECK_CHUNK) {
        const int64_t last = first + GS_LADDER_CHECK_CHUNK < l->blocks ? first + GS_LADDER_CHECK_CHUNK : l->blocks;
        const int64_t from = first * GS_LADDER_CHECK_BLOCK;
        const int64_t to = last * GS_LADDER_CHECK_BLOCK < c->n ? last * GS_LADDER_CHECK_BLOCK : c->n;
        int64_t chunk_bad;
        GS_CHECK(gs_be_copy(l->be, l->h_stage, (const char *)l->d_out + (size_t)from * l->out_size,
                                                 (size_t)(to - from) * l->out_size, 0));
        GS_CHECK(blocks_on_threads(l, first, last, l->h_stage, &chunk_bad));
        bad += chunk_bad;
    }
    if (l->exact_row) {
        int ok;
        GS_CHECK(exact_state_ok(l, &l->exact_before[l->blocks], &ok));
        bad += !ok;
    } else if (l->algo != GS_ALGO_CUB) {
        gs_acc carry;
        uint32_t overflow;
        memcpy(&carry, tail, sizeof carry);
        memcpy(&overflow, tail + sizeof carry, sizeof overflow);
        bad += !same_carry(c, carry, l->carries[l->blocks], l->abs_before[l->blocks]);
        bad += overflow != 0;   /* generated data never overflows */
    }
    *wrong = bad;
    return GS_OK;
}

static int compare_floats(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static gs_status time_variant(ladder *l, gs_ladder_row *row)
{
    const gs_ladder_case *c = l->c;
    float *ms = malloc((size_t)c->iters * sizeof *ms);
    if (!ms) return gs_fail(l->ctx, GS_ERR_NOMEM, "ladder: no memory for %d run times", c->iters);
    /* the timed runs chain their carry, as consecutive chunks would */
    gs_status st = l->exact_row ? reset_exact(l) : c->scan ? reset_carry(l) : GS_OK;
    /* with a warm-up, at least GS_LADDER_WARMUP_MS of it: clocks that fell
     * while the host computed the reference come back up before timing */
    const double warmup_ms = c->warmup > 0 ? GS_LADDER_WARMUP_MS : 0;
    gs_status (*run)(void *) = l->exact_row ? run_exact : l->native_row ? run_native : run_variant;
    if (st == GS_OK) st = gs_be_time_runs(l->be, run, l, c->warmup, warmup_ms, c->iters, ms);
    if (st == GS_OK) {
        qsort(ms, (size_t)c->iters, sizeof *ms, compare_floats);
        const double median = c->iters % 2 ? ms[c->iters / 2] : 0.5 * (ms[c->iters / 2 - 1] + ms[c->iters / 2]);
        row->algo = l->exact_row ? GS_LADDER_EXACT : l->native_row ? GS_LADDER_NATIVE : (int)l->algo;
        row->median = median * 1e-3;
        row->bytes = (uint64_t)c->n * (l->in_size + l->out_size);
        row->gbps = row->median > 0 ? (double)row->bytes / row->median * 1e-9 : 0;
        /* CUB's native call computes another function: not checked */
        if (l->native_row) row->wrong = -1;
        else st = check_variant(l, &row->wrong);
    }
    free(ms);
    return st;
}

/* The ceiling: the input copied device to device, as the backend's copy_bandwidth
 * measures it (read plus written). */
static gs_status copy_row(ladder *l, gs_ladder_row *row)
{
    const gs_ladder_case *c = l->c;
    const size_t bytes = (size_t)c->n * l->in_size;
    const int reps = c->iters < GS_COPY_MAX_REPS ? c->iters : GS_COPY_MAX_REPS;
    double gbps;
    GS_CHECK(gs_be_copy_bandwidth(l->be, GS_COPY_D2D, bytes, reps, &gbps));
    row->algo = GS_LADDER_COPY;
    row->bytes = 2 * (uint64_t)bytes;
    row->gbps = gbps;
    row->median = gbps > 0 ? (double)row->bytes / (gbps * 1e9) : 0;
    row->wrong = -1;
    return GS_OK;
}

static gs_status setup(ladder *l, const gs_algo *order, int count)
{
    const gs_ladder_case *c = l->c;
    l->in_size = gs_type_size(c->type);
    l->out_size = c->scan ? gs_type_size(gs_scan_output_type(c->type, c->op)) : 0;
    for (int i = 0; i < count; i++) {
        size_t bytes;
        GS_CHECK(gs_be_ladder_work_bytes(l->be, order[i], c->scan, c->type, c->op, c->kind,
                                                          c->n, &bytes));
        if (bytes > l->work_bytes) l->work_bytes = bytes;
    }
    if (l->native) {
        size_t bytes = 0;
        GS_CHECK(gs_be_ladder_native(l->be, c->type, c->op, c->kind, NULL, NULL, c->n, NULL, &bytes));
        if (bytes > l->work_bytes) l->work_bytes = bytes;
    }
    GS_CHECK(gs_be_alloc(l->be, GS_MEM_DEVICE, &l->d_in, (size_t)c->n * l->in_size));
    if (c->scan) {
        GS_CHECK(gs_be_alloc(l->be, GS_MEM_DEVICE, &l->d_out, (size_t)c->n * l->out_size));
        const int64_t staged = c->n < GS_LADDER_CHECK_CHUNK * GS_LADDER_CHECK_BLOCK ? c->n
                                                                                  : GS_LADDER_CHECK_CHUNK * GS_LADDER_CHECK_BLOCK;
        GS_CHECK(gs_be_alloc(l->be, GS_MEM_PINNED, &l->h_stage, (size_t)staged * l->out_size));
    }
    /* the accumulator, then the overflow flag */
    void *scalars;
    GS_CHECK(gs_be_alloc(l->be, GS_MEM_DEVICE, &scalars, 32));
    l->d_acc = scalars;
    l->d_overflow = (uint32_t *)((char *)scalars + sizeof(gs_acc));
    if (l->work_bytes) GS_CHECK(gs_be_alloc(l->be, GS_MEM_DEVICE, &l->d_work, l->work_bytes));
    if (l->exact) GS_CHECK(gs_be_alloc(l->be, GS_MEM_DEVICE, (void **)&l->d_exact, sizeof(gs_exact)));
    GS_CHECK(gs_be_generate(l->be, c->type, c->seed, 0, c->n, l->d_in));
    return reference(l);
}

static void teardown(ladder *l)
{
    gs_be_free(l->be, GS_MEM_DEVICE, l->d_in);
    gs_be_free(l->be, GS_MEM_DEVICE, l->d_out);
    gs_be_free(l->be, GS_MEM_DEVICE, l->d_work);
    gs_be_free(l->be, GS_MEM_DEVICE, l->d_acc);
    gs_be_free(l->be, GS_MEM_PINNED, l->h_stage);
    gs_be_free(l->be, GS_MEM_DEVICE, l->d_exact);
    free(l->carries);
    free(l->abs_before);
    free(l->exact_before);
}

static gs_status run_case(gs_context *ctx, const gs_ladder_case *c, gs_ladder_row *rows, int *n_rows)
{
    gs_algo order[GS_ALGO_COUNT];
    int count = ladder_order(c->scan, order);
    if (c->algo >= 0) {   /* the one asked for (cub's row comes with it) */
        order[0] = (gs_algo)c->algo;
        count = c->algo == GS_ALGO_CUB ? 1 : 2;
        order[1] = GS_ALGO_CUB;
    }
    ladder l;
    memset(&l, 0, sizeof l);
    l.ctx = ctx;
    l.be = &ctx->be;
    l.c = c;
    l.exact = exact_applies(c);
    l.native = native_applies(c);
    gs_status st = setup(&l, order, count);
    if (st == GS_OK) st = copy_row(&l, &rows[(*n_rows)++]);
    for (int i = 0; i < count && st == GS_OK; i++) {
        l.algo = order[i];
        st = time_variant(&l, &rows[(*n_rows)++]);
    }
    if (st == GS_OK && l.native) {
        l.native_row = 1;
        st = time_variant(&l, &rows[(*n_rows)++]);
        l.native_row = 0;
    }
    if (st == GS_OK && l.exact) {
        l.exact_row = 1;
        st = time_variant(&l, &rows[(*n_rows)++]);
    }
    teardown(&l);
    return st;
}

static gs_status check_case(gs_context *ctx, const gs_ladder_case *c)
{
    if ((unsigned)c->type >= GS_TYPE_COUNT || (unsigned)c->op >= GS_OP_COUNT)
        return gs_fail(ctx, GS_ERR_ARG, "ladder: unknown type %d or operation %d", (int)c->type, (int)c->op);
    if (c->kind != GS_INCLUSIVE && c->kind != GS_EXCLUSIVE)
        return gs_fail(ctx, GS_ERR_ARG, "ladder: unknown scan kind %d", (int)c->kind);
    if (c->n < 1 || c->iters < 1 || c->warmup < 0)
        return gs_fail(ctx, GS_ERR_ARG, "ladder: %lld elements, %d timed and %d warm-up runs (at least 1, 1, 0)",
                       (long long)c->n, c->iters, c->warmup);
    if (c->algo >= GS_ALGO_COUNT || (c->algo >= 0 && !gs_algo_serves((gs_algo)c->algo, c->scan)))
        return gs_fail(ctx, GS_ERR_ARG, "ladder: %s is no %s variant", gs_algo_name((gs_algo)c->algo),
                       c->scan ? "scan" : "reduction");
    if (exact_applies(c) && !gs_be_has_exact(&ctx->be))
        return gs_fail(ctx, GS_ERR_UNSUPPORTED, "ladder --exact: the %s backend has no exact kernels in this build",
                       gs_backend_name(ctx->be.ops->kind));
    return GS_OK;
}

gs_status gs_ladder_run(gs_context *ctx, const gs_ladder_case *c, gs_ladder_row *rows, int *n_rows)
{
    *n_rows = 0;
    gs_status st = check_case(ctx, c);
    if (st == GS_OK && ctx->be.ops->kind != GS_BACKEND_CUDA)
        st = gs_fail(ctx, GS_ERR_UNSUPPORTED, "the ladder times the CUDA backend's kernels, and this run uses the %s backend",
                     gs_backend_name(ctx->be.ops->kind));
    if (st == GS_OK) st = run_case(ctx, c, rows, n_rows);
    return gs_mpi_agree(&ctx->mpi, st);
}
