/*
 * gs_run.c - whole-array reductions and scans over generated data or files.
 *
 * Each rank takes one contiguous shard and moves through it in chunks: a
 * chunk is what sits on the backend at once (the whole shard when it fits:
 * "resident"), and a chunk is read and written in blocks, the unit of host
 * staging and of collective MPI-IO. Every rank runs the same number of chunk
 * and block steps (empty ones where its shard is shorter), so collective
 * calls always match, and the ranks agree on success after every chunk, so a
 * failure on one rank stops all of them at the same step.
 *
 * A distributed scan needs each rank's offset before it writes: a reduction
 * pass gives the rank totals, MPI_Exscan the offsets, and the scan pass then
 * writes final values. One rank skips the reduction pass.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_cpu.h"
#include "gs_mpi.h"
#include "gs_npy.h"
#include "gs_run.h"
#include "gs_verify.h"
#ifdef HAVE_CUDA
#include "gs_cuda.h"
#endif

/* Elements per block: 128 MiB of f32 input per collective read or write. */
#define GS_BLOCK_ELEMS ((int64_t)32 << 20)
/* Share of free device memory the chunk buffers may take. */
#define GS_DEVICE_MEM_SHARE 0.85

typedef struct gs_run {
    gs_context *ctx;
    const gs_source *src;
    const gs_run_options *opt;
    gs_op op;
    gs_scan_kind kind;
    int scan;                    /* 1 for gs_scan_run */
    gs_type type, out_type;
    size_t in_size, out_size;
    int64_t n, start, count;     /* the global count and this rank's shard */
    gs_file *in, *out;           /* input file (NULL: generated), output file */
    uint64_t in_offset, out_offset; /* bytes before element 0 in each file */
    int on_device;               /* chunk buffers are device memory */
    int64_t block, chunk_blocks, max_blocks;
    void *c_in, *c_out;          /* chunk buffers on the backend */
    void *h_in, *h_out;          /* host staging blocks (CUDA backend, pinned) */
    double t[GS_PHASE_COUNT];
    /* the independent reference (--verify) */
    gs_acc ref_partial;
    double ref_abs;
    gs_verify_scan check;
} gs_run;

void gs_shard_range(int64_t n, int rank, int size, int64_t *start, int64_t *count)
{
    int64_t base = n / size, extra = n % size;
    *count = base + (rank < extra);
    *start = rank * base + (rank < extra ? rank : extra);
}

static double since(double t0) { return gs_now() - t0; }

/* ---- memory of the backend -------------------------------------------------- */

#ifdef HAVE_CUDA
static gs_status cuda_status(gs_run *r, gs_status st)
{
    if (st != GS_OK) return gs_fail(r->ctx, st, "%s", gs_cuda_error(r->ctx->cuda));
    return st;
}
#endif

static gs_status alloc_host(gs_run *r, void **p, size_t bytes, int pinned)
{
    *p = NULL;
    if (bytes == 0) return GS_OK;
#ifdef HAVE_CUDA
    if (pinned) return cuda_status(r, gs_cuda_host_alloc(r->ctx->cuda, p, bytes));
#else
    (void)pinned;
#endif
    *p = malloc(bytes);
    return *p ? GS_OK : gs_fail(r->ctx, GS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", bytes);
}

static gs_status alloc_chunk(gs_run *r, void **p, size_t bytes)
{
#ifdef HAVE_CUDA
    if (r->on_device) {
        *p = NULL;
        return bytes ? cuda_status(r, gs_cuda_malloc(r->ctx->cuda, p, bytes)) : GS_OK;
    }
#endif
    return alloc_host(r, p, bytes, 0);
}

static void release(gs_run *r)
{
#ifdef HAVE_CUDA
    if (r->on_device) {
        gs_cuda_free(r->ctx->cuda, r->c_in);
        gs_cuda_free(r->ctx->cuda, r->c_out);
        gs_cuda_host_free(r->ctx->cuda, r->h_in);
        gs_cuda_host_free(r->ctx->cuda, r->h_out);
        return;
    }
#endif
    free(r->c_in);
    free(r->c_out);
}

/* ---- the input -------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Open the input file and learn its type, count and data offset: .npy when
 * it starts with NumPy's magic, else raw binary of the type given. */
static gs_status open_input_file(gs_run *r)
{
    gs_context *ctx = r->ctx;
    const char *path = r->src->path;
    /* MPI-IO opens a folder and then fails (or hangs) in the collective
     * read: refuse it by name first */
    struct stat sb;
    gs_status st = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)
                       ? gs_fail(ctx, GS_ERR_IO, "%s: is a folder, not a file", path) : GS_OK;
    GS_CHECK(gs_mpi_agree(ctx, st));
    GS_CHECK(gs_mpiio_open_read(ctx, path, &r->in));
    uint64_t size = 0;
    GS_CHECK(gs_mpiio_size(ctx, r->in, &size));

    size_t head_len = size < GS_NPY_MAX_HEADER ? (size_t)size : GS_NPY_MAX_HEADER;
    char *head = malloc(head_len + 1);
    st = head ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "%s: no memory for the header", path);
    GS_CHECK(gs_mpi_agree(ctx, st));
    /* every rank reads the same header bytes, so every rank reaches the same
     * verdict on them without a broadcast */
    st = gs_mpiio_read_at(ctx, r->in, 0, head, head_len);
    if (st != GS_OK) { free(head); return st; }

    int is_npy = head_len >= 6 && memcmp(head, "\x93NUMPY", 6) == 0;
    if (is_npy) {
        gs_npy_header h;
        char why[256];
        if (gs_npy_parse(head, head_len, &h, why, sizeof why) != GS_OK) {
            st = gs_fail(ctx, GS_ERR_FORMAT, "%s: %s", path, why);
        } else if (r->src->type_given && r->src->type != h.type) {
            st = gs_fail(ctx, GS_ERR_ARG, "%s holds %s elements but -t %s was given", path,
                         gs_type_name(h.type), gs_type_name(r->src->type));
        } else if (size < h.data_offset ||
                   size - h.data_offset != (uint64_t)h.count * gs_type_size(h.type)) {
            st = gs_fail(ctx, GS_ERR_FORMAT,
                         "%s: the header's shape says %lld %s elements (%llu bytes) but the file holds %llu bytes of data",
                         path, (long long)h.count, gs_type_name(h.type),
                         (unsigned long long)h.count * gs_type_size(h.type),
                         (unsigned long long)(size > h.data_offset ? size - h.data_offset : 0));
        } else {
            r->type = h.type;
            r->n = h.count;
            r->in_offset = h.data_offset;
        }
    } else if (ends_with(path, ".npy")) {
        st = gs_fail(ctx, GS_ERR_FORMAT, "%s: not a .npy file (no \\x93NUMPY magic)", path);
    } else if (!r->src->type_given) {
        st = gs_fail(ctx, GS_ERR_ARG, "%s: raw binary input needs its element type (-t TYPE)", path);
    } else if (size % gs_type_size(r->src->type) != 0) {
        st = gs_fail(ctx, GS_ERR_FORMAT, "%s: %llu bytes is not a whole number of %s elements (%zu bytes each)",
                     path, (unsigned long long)size, gs_type_name(r->src->type),
                     gs_type_size(r->src->type));
    } else {
        r->type = r->src->type;
        r->n = (int64_t)(size / gs_type_size(r->type));
        r->in_offset = 0;
    }
    free(head);
    return gs_mpi_agree(ctx, st);
}

static gs_status open_input(gs_run *r)
{
    if (r->src->path) return open_input_file(r);
    gs_status st = GS_OK;
    if (r->src->count < 0)
        st = gs_fail(r->ctx, GS_ERR_ARG, "negative element count %lld", (long long)r->src->count);
    if ((unsigned)r->src->type >= GS_TYPE_COUNT)
        st = gs_fail(r->ctx, GS_ERR_ARG, "unknown element type %d", (int)r->src->type);
    r->type = r->src->type;
    r->n = r->src->count;
    return gs_mpi_agree(r->ctx, st);
}

/* ---- the plan ---------------------------------------------------------------- */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* How many blocks a chunk holds: the whole largest shard when it fits the
 * backend's memory (or --chunk), else as many as fit. Same on every rank. */
static gs_status plan(gs_run *r)
{
    gs_context *ctx = r->ctx;
    r->out_type = r->scan ? gs_scan_output_type(r->type, r->op) : r->type;
    r->in_size = gs_type_size(r->type);
    r->out_size = r->scan ? gs_type_size(r->out_type) : 0;
    gs_shard_range(r->n, ctx->rank, ctx->size, &r->start, &r->count);
    r->on_device = ctx->backend == GS_BACKEND_CUDA;

    int64_t largest = ceil_div(r->n, ctx->size);
    r->block = min64(GS_BLOCK_ELEMS, largest > 0 ? largest : 1);
    if (r->opt->chunk > 0) r->block = min64(r->block, r->opt->chunk);
    r->max_blocks = ceil_div(largest, r->block);

    uint64_t budget = 0;   /* bytes the chunk buffers may take on this rank */
    gs_status st = GS_OK;
#ifdef HAVE_CUDA
    if (r->on_device) {
        uint64_t free_bytes = 0, total = 0;
        st = cuda_status(r, gs_cuda_mem_info(ctx->cuda, &free_bytes, &total));
        budget = (uint64_t)((double)free_bytes * GS_DEVICE_MEM_SHARE);
        if (ctx->cfg.device_mem_cap && ctx->cfg.device_mem_cap < budget) budget = ctx->cfg.device_mem_cap;
    }
#endif
    if (!r->on_device) {
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        budget = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (uint64_t)1 << 32;
    }
    GS_CHECK(gs_mpi_agree(ctx, st));
    uint64_t per_block = (uint64_t)r->block * (r->in_size + r->out_size);
    int64_t fit = (int64_t)(budget / per_block);
    if (r->opt->chunk > 0) fit = min64(fit, r->opt->chunk / r->block);
    /* the smallest fit over ranks, as a max of negatives */
    int64_t neg_fit = 0;
    GS_CHECK(gs_mpi_max_i64(ctx, -fit, &neg_fit));
    r->chunk_blocks = min64(-neg_fit, r->max_blocks > 0 ? r->max_blocks : 1);
    if (r->chunk_blocks < 1)
        return gs_fail(ctx, GS_ERR_NOMEM, "not even one block of %lld elements fits in %s memory",
                       (long long)r->block, r->on_device ? "device" : "host");

    int64_t chunk = r->chunk_blocks * r->block;
    st = alloc_chunk(r, &r->c_in, (size_t)min64(chunk, r->count) * r->in_size);
    if (st == GS_OK && r->scan) st = alloc_chunk(r, &r->c_out, (size_t)min64(chunk, r->count) * r->out_size);
    if (st == GS_OK && r->on_device) {
        size_t b = (size_t)min64(r->block, r->count);
        st = alloc_host(r, &r->h_in, b * r->in_size, 1);
        if (st == GS_OK && r->scan) st = alloc_host(r, &r->h_out, b * r->out_size, 1);
    }
    return gs_mpi_agree(ctx, st);
}

/* This rank's part of global block b: [*first, *first + *m) of its shard. */
static void block_range(const gs_run *r, int64_t b, int64_t *first, int64_t *m)
{
    *first = b * r->block;
    *m = *first < r->count ? min64(r->block, r->count - *first) : 0;
    if (*m == 0) *first = 0;
}

static int64_t chunk_count(const gs_run *r) { return ceil_div(r->max_blocks, r->chunk_blocks); }

/* ---- moving data --------------------------------------------------------------- */

/* Read m input elements at shard index `first` into host memory (collective). */
static gs_status read_block(gs_run *r, int64_t first, int64_t m, void *host)
{
    double t0 = gs_now();
    gs_status st = gs_mpiio_read_at(r->ctx, r->in,
                                    r->in_offset + (uint64_t)(r->start + first) * r->in_size, host,
                                    (uint64_t)m * r->in_size);
    r->t[GS_PHASE_READ] += since(t0);
    return st;
}

/* Host copy of generated elements, for the reference. */
static void generate_host(gs_run *r, int64_t first, int64_t m, void *host)
{
    gs_cpu_generate(r->type, r->src->seed, r->start + first, m, host);
}

/* The reference's view of input block b (verify only): where it already is on
 * the host, else regenerated or read again (collective for files). */
static gs_status host_input(gs_run *r, int64_t first, int64_t m, int64_t in_chunk_at, const void **p)
{
    if (!r->on_device) {
        *p = (const char *)r->c_in + (size_t)in_chunk_at * r->in_size;
        return GS_OK;
    }
    *p = r->h_in;
    if (r->in) return read_block(r, first, m, r->h_in);
    generate_host(r, first, m, r->h_in);
    return GS_OK;
}

/* Fold one input block into the reference's partial and |x| sum. */
static void reference_add(gs_run *r, const void *host, int64_t m)
{
    double t0 = gs_now();
    gs_acc part = gs_verify_reduce_ref(r->type, r->op, host, m);
    r->ref_partial = gs_acc_combine(r->type, r->op, r->ref_partial, part);
    r->ref_abs += gs_verify_abs_sum(r->type, host, m);
    r->t[GS_PHASE_VERIFY] += since(t0);
}

/* Load chunk k of the shard into c_in; returns its element count. With
 * `reference`, also feeds each block to the reference. Collective. */
static gs_status load_chunk(gs_run *r, int64_t k, int reference, int64_t *loaded)
{
    int64_t b0 = k * r->chunk_blocks, b1 = min64(b0 + r->chunk_blocks, r->max_blocks);
    int64_t chunk_first = min64(b0 * r->block, r->count);
    *loaded = 0;
    gs_status st = GS_OK;
    if (!r->in) {   /* generated: the whole chunk at once, where it is used */
        int64_t m = min64((b1 - b0) * r->block, r->count - chunk_first);
        double t0 = gs_now();
#ifdef HAVE_CUDA
        if (r->on_device && m > 0)
            st = cuda_status(r, gs_cuda_generate(r->ctx->cuda, r->type, r->src->seed,
                                                 r->start + chunk_first, m, r->c_in));
#endif
        if (!r->on_device) generate_host(r, chunk_first, m, r->c_in);
        r->t[GS_PHASE_READ] += since(t0);
        *loaded = m;
    }
    for (int64_t b = b0; b < b1 && (r->in || reference); b++) {
        int64_t first, m;
        block_range(r, b, &first, &m);
        int64_t at = first - chunk_first;
        if (r->in) {
            void *dst = r->on_device ? r->h_in : (char *)r->c_in + (size_t)at * r->in_size;
            if (st == GS_OK) st = read_block(r, first, m, dst);
            else read_block(r, 0, 0, NULL);   /* keep the collective count */
#ifdef HAVE_CUDA
            if (st == GS_OK && r->on_device && m > 0) {
                double t0 = gs_now();
                st = cuda_status(r, gs_cuda_copy_h2d(r->ctx->cuda, (char *)r->c_in + (size_t)at * r->in_size,
                                                     r->h_in, (size_t)m * r->in_size));
                r->t[GS_PHASE_H2D] += since(t0);
            }
#endif
            if (st == GS_OK && reference) reference_add(r, dst, m);
            *loaded += m;
        } else if (m > 0) {
            const void *host;
            host_input(r, first, m, at, &host);
            reference_add(r, host, m);
        }
    }
    return st;
}

/* ---- reduce ------------------------------------------------------------------ */

static gs_status reduce_pass(gs_run *r, int reference, gs_acc *partial)
{
    *partial = gs_acc_identity(r->type, r->op);
    for (int64_t k = 0; k < chunk_count(r); k++) {
        int64_t m = 0;
        gs_status st = load_chunk(r, k, reference, &m);
        if (st == GS_OK && m > 0) {
            gs_acc part;
            double t0 = gs_now();
            st = gs_local_reduce(r->ctx, r->type, r->op, r->c_in, m, r->on_device, &part);
            r->t[GS_PHASE_COMPUTE] += since(t0);
            *partial = gs_acc_combine(r->type, r->op, *partial, part);
        }
        GS_CHECK(gs_mpi_agree(r->ctx, st));
    }
    return GS_OK;
}

/* ---- report ------------------------------------------------------------------ */

static gs_status fill_report(gs_run *r, double t_start, gs_report *rep)
{
    gs_context *ctx = r->ctx;
    double wall = since(t_start), wall_min, wall_avg, wall_max;
    rep->n = r->n;
    rep->type = r->type;
    rep->out_type = r->out_type;
    rep->ranks = ctx->size;
    rep->backend = ctx->backend;
    rep->bytes = (uint64_t)r->n * (r->in_size + r->out_size);
    rep->verified = r->opt->verify;
    GS_CHECK(gs_mpi_stats(ctx, r->t, GS_PHASE_COUNT, rep->phase_min, rep->phase_avg, rep->phase_max));
    GS_CHECK(gs_mpi_stats(ctx, &wall, 1, &wall_min, &wall_avg, &wall_max));
    rep->seconds = wall_max;
    return GS_OK;
}

static void run_init(gs_run *r, gs_context *ctx, const gs_source *src, gs_op op,
                     const gs_run_options *opt, int scan)
{
    static const gs_run_options no_options = {0, 0};
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->src = src;
    r->op = op;
    r->scan = scan;
    r->opt = opt ? opt : &no_options;
}

static gs_status check_op(gs_context *ctx, gs_op op)
{
    gs_status st = (unsigned)op < GS_OP_COUNT ? GS_OK
                 : gs_fail(ctx, GS_ERR_ARG, "unknown operation %d", (int)op);
    return gs_mpi_agree(ctx, st);
}

gs_status gs_reduce_run(gs_context *ctx, const gs_source *src, gs_op op,
                        const gs_run_options *opt, gs_value *result, gs_report *report)
{
    double t_start = gs_now();
    gs_run r;
    run_init(&r, ctx, src, op, opt, 0);
    gs_status st = check_op(ctx, op);
    if (st == GS_OK) st = open_input(&r);
    if (st == GS_OK) st = plan(&r);
    gs_acc partial;
    r.ref_partial = gs_acc_identity(r.type, op);
    if (st == GS_OK) st = reduce_pass(&r, r.opt->verify, &partial);
    if (st == GS_OK) {
        double t0 = gs_now();
        st = gs_mpi_allreduce_acc(ctx, r.type, op, &partial);
        if (st == GS_OK && r.opt->verify) st = gs_mpi_allreduce_acc(ctx, r.type, op, &r.ref_partial);
        if (st == GS_OK && r.opt->verify) st = gs_mpi_sum_f64(ctx, &r.ref_abs, 1);
        r.t[GS_PHASE_MPI] += since(t0);
    }
    if (st == GS_OK) {
        st = gs_finish_reduce(r.type, op, partial, r.n, result);
        if (st == GS_ERR_OVERFLOW)
            st = gs_fail(ctx, st, "%s: the %s sum of %lld elements overflows 64 bits",
                         src->path ? src->path : "generated data", gs_type_name(r.type), (long long)r.n);
        else if (st == GS_ERR_EMPTY)
            st = gs_fail(ctx, st, "%s of an empty array (%s) has no identity", gs_op_name(op),
                         src->path ? src->path : "generated data");
    }
    if (r.in) gs_mpiio_close(ctx, r.in, 0);
    release(&r);
    if (st != GS_OK) return st;
    if (report) {
        memset(report, 0, sizeof *report);
        GS_CHECK(fill_report(&r, t_start, report));
        report->wrong = r.opt->verify &&
                        !gs_verify_reduce_ok(r.type, op, partial, r.ref_partial, r.n, r.ref_abs);
    }
    return GS_OK;
}

/* ---- scan -------------------------------------------------------------------- */

/* The same file, whether named the same way or not. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static gs_status open_output(gs_run *r, const char *path)
{
    gs_context *ctx = r->ctx;
    gs_status st = GS_OK;
    if (!path || !*path) st = gs_fail(ctx, GS_ERR_ARG, "scan needs an output file (-O OUT)");
    else if (r->src->path && (strcmp(path, r->src->path) == 0 || same_file(path, r->src->path)))
        st = gs_fail(ctx, GS_ERR_ARG, "%s: the output would overwrite the input", path);
    GS_CHECK(gs_mpi_agree(ctx, st));
    GS_CHECK(gs_mpiio_create(ctx, path, &r->out));

    /* the .npy header, by rank 0 */
    char header[256];
    size_t len = 0;
    if (ends_with(path, ".npy")) len = gs_npy_format(header, sizeof header, r->out_type, r->n);
    r->out_offset = len;
    double t0 = gs_now();
    st = gs_mpiio_write_at(ctx, r->out, 0, header, ctx->rank == 0 ? len : 0);
    r->t[GS_PHASE_WRITE] += since(t0);
    return st;
}

/* Write (and check) output chunk k: block by block, in step on every rank.
 * A rank whose chunk failed (st) still takes part, writing nothing. */
static gs_status write_chunk(gs_run *r, int64_t k, gs_status st, gs_value *last)
{
    int64_t b0 = k * r->chunk_blocks, b1 = min64(b0 + r->chunk_blocks, r->max_blocks);
    int64_t chunk_first = min64(b0 * r->block, r->count);
    for (int64_t b = b0; b < b1; b++) {
        int64_t first, m;
        block_range(r, b, &first, &m);
        int64_t at = first - chunk_first;
        const void *host_out = (const char *)r->c_out + (size_t)at * r->out_size;
#ifdef HAVE_CUDA
        if (st == GS_OK && r->on_device && m > 0) {
            double t0 = gs_now();
            st = cuda_status(r, gs_cuda_copy_d2h(r->ctx->cuda, r->h_out, host_out, (size_t)m * r->out_size));
            r->t[GS_PHASE_D2H] += since(t0);
            host_out = r->h_out;
        }
#endif
        if (r->opt->verify && (st == GS_OK || r->in)) {
            const void *host_in = NULL;
            gs_status vs = host_input(r, first, st == GS_OK ? m : 0, at, &host_in);
            if (st == GS_OK) st = vs;
            if (st == GS_OK && m > 0) {
                double t0 = gs_now();
                gs_verify_scan_chunk(&r->check, host_in, host_out, m);
                r->t[GS_PHASE_VERIFY] += since(t0);
            }
        }
        if (st == GS_OK && m > 0 && first + m == r->count)
            *last = gs_value_from_element(r->out_type, (const char *)host_out + (size_t)(m - 1) * r->out_size);
        double t0 = gs_now();
        gs_status ws = gs_mpiio_write_at(r->ctx, r->out,
                                         r->out_offset + (uint64_t)(r->start + first) * r->out_size,
                                         host_out, st == GS_OK ? (uint64_t)m * r->out_size : 0);
        r->t[GS_PHASE_WRITE] += since(t0);
        if (st == GS_OK) st = ws;
    }
    return st;
}

static gs_status scan_pass(gs_run *r, gs_acc carry, int resident, gs_value *last)
{
    int overflow = 0;
    for (int64_t k = 0; k < chunk_count(r); k++) {
        int64_t m = r->count;
        gs_status st = resident ? GS_OK : load_chunk(r, k, 0, &m);
        if (st == GS_OK && m > 0) {
            int ovf = 0;
            double t0 = gs_now();
            st = gs_local_scan(r->ctx, r->type, r->op, r->kind, r->c_in, r->c_out, m,
                               r->on_device, carry, &carry, &ovf);
            r->t[GS_PHASE_COMPUTE] += since(t0);
            overflow |= ovf;
        }
        st = write_chunk(r, k, st, last);
        if (st == GS_OK && overflow)
            st = gs_fail(r->ctx, GS_ERR_OVERFLOW, "%s: a 64-bit prefix sum of the %s elements overflowed",
                         r->src->path ? r->src->path : "generated data", gs_type_name(r->type));
        GS_CHECK(gs_mpi_agree(r->ctx, st));
    }
    return GS_OK;
}

/* The output's last element: from the highest rank with a non-empty shard. */
static gs_status gather_last(gs_run *r, gs_value mine, gs_value *last)
{
    gs_context *ctx = r->ctx;
    struct { int64_t count; gs_value v; } me = {r->count, mine}, *all = calloc((size_t)ctx->size, sizeof me);
    gs_status st = all ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "no memory to gather results");
    GS_CHECK(gs_mpi_agree(ctx, st));
    st = gs_mpi_allgather_bytes(ctx, &me, sizeof me, all);
    last->type = r->out_type;
    last->v.u = 0;
    for (int i = ctx->size - 1; st == GS_OK && i >= 0; i--)
        if (all[i].count > 0) { *last = all[i].v; break; }
    free(all);
    return st;
}

static gs_status scan_run(gs_run *r, const char *out_path, gs_report *report, double t_start)
{
    gs_context *ctx = r->ctx;
    GS_CHECK(check_op(ctx, r->op));
    GS_CHECK(open_input(r));
    GS_CHECK(plan(r));
    GS_CHECK(open_output(r, out_path));

    int resident = chunk_count(r) == 1;
    gs_acc carry = gs_acc_identity(r->type, r->op);
    r->ref_partial = carry;
    gs_acc ref_carry = carry;
    double ref_abs_offset = 0;
    if (ctx->size > 1) {
        gs_acc total;
        GS_CHECK(reduce_pass(r, r->opt->verify, &total));
        double t0 = gs_now();
        GS_CHECK(gs_mpi_exscan_carry(ctx, r->type, r->op, gs_acc_scan_carry(r->type, r->op, total), &carry));
        if (r->opt->verify) {
            GS_CHECK(gs_mpi_exscan_carry(ctx, r->type, r->op,
                                         gs_acc_scan_carry(r->type, r->op, r->ref_partial), &ref_carry));
            GS_CHECK(gs_mpi_exscan_f64(ctx, r->ref_abs, &ref_abs_offset));
        }
        r->t[GS_PHASE_MPI] += since(t0);
    } else if (resident) {
        int64_t m;
        GS_CHECK(load_chunk(r, 0, 0, &m));
    }
    if (r->opt->verify)
        gs_verify_scan_begin(&r->check, r->type, r->op, r->kind, r->n, ref_carry, ref_abs_offset);

    gs_value last;
    last.type = r->out_type;
    last.v.u = 0;
    GS_CHECK(scan_pass(r, carry, resident, &last));
    gs_value global_last;
    GS_CHECK(gather_last(r, last, &global_last));
    int64_t wrong = 0;
    if (r->opt->verify) GS_CHECK(gs_mpi_sum_i64(ctx, r->check.wrong, &wrong));
    if (report) {
        memset(report, 0, sizeof *report);
        GS_CHECK(fill_report(r, t_start, report));
        report->last = global_last;
        report->wrong = wrong;
    }
    return GS_OK;
}

gs_status gs_scan_run(gs_context *ctx, const gs_source *src, gs_op op, gs_scan_kind kind,
                      const char *out_path, const gs_run_options *opt, gs_report *report)
{
    double t_start = gs_now();
    gs_run r;
    run_init(&r, ctx, src, op, opt, 1);
    r.kind = kind;
    gs_status st = scan_run(&r, out_path, report, t_start);
    /* the output is renamed into place only when every rank succeeded */
    if (r.out) {
        gs_status cs = gs_mpiio_close(ctx, r.out, st == GS_OK);
        if (st == GS_OK) st = cs;
    }
    if (r.in) gs_mpiio_close(ctx, r.in, 0);
    release(&r);
    return st;
}
