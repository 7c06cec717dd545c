/*
 * gs_run.c - whole-array reductions and scans over generated data or files.
 *
 * Each rank takes one contiguous shard and runs it through the chunk
 * pipeline (gs_pipe.c, docs/STREAMING.md): resident when the backend holds
 * the whole shard, streamed through a ring of chunks otherwise. Every rank
 * takes the same steps, so the collective MPI-IO calls always match, and the
 * ranks agree on success after every step, so a failure on one rank stops
 * all of them at the same step.
 *
 * A distributed scan needs each rank's offset before it writes: a reduction
 * pass gives the rank totals, MPI_Exscan the offsets, and the scan pass then
 * writes final values. A resident shard is read once for both passes, a
 * streamed one twice; one rank skips the reduction pass.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_internal.h"
#include "gs_npy.h"
#include "gs_pipe.h"
#include "gs_run.h"
#include "gs_verify.h"

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
    gs_h5 *in_h5, *out_h5;       /* HDF5 datasets in their place (gs_h5.h) */
    uint64_t in_offset, out_offset; /* bytes before element 0 in each file */
    gs_pipe pipe;
    int pipe_open;
    int input_passes;            /* reads of the input */
    int64_t chunks_done, chunks_total;   /* progress over every pass */
    double t[GS_PHASE_COUNT];    /* phases outside the pipeline: combines, the header */
    gs_value last;               /* scan: this rank's last output element */
    /* the independent reference (--verify) */
    gs_acc ref_partial;
    double ref_abs;
    int exact;                   /* --exact applies: f32/f64 sums through gs_exact states */
    gs_exact ref_exact;          /* the exact path's reference partial */
    gs_verify_scan check;
    void *ref_in;                /* a chunk of input read again for the reference, where
                                    the pipeline's never passes the host */
} gs_run;

void gs_shard_range(int64_t n, int rank, int size, int64_t *start, int64_t *count)
{
    int64_t base = n / size, extra = n % size;
    *count = base + (rank < extra);
    *start = rank * base + (rank < extra ? rank : extra);
}

static double since(double t0) { return gs_now() - t0; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ---- the input -------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Regular files only: MPI-IO opens a folder and then fails (or hangs) in
 * the collective read, waits forever for a FIFO's writer, and reads a
 * device such as /dev/zero as 0 bytes. */
static gs_status check_input_path(gs_context *ctx, const char *path)
{
    struct stat sb;
    gs_status st = GS_OK;
    if (stat(path, &sb) != 0)
        st = gs_fail(ctx, GS_ERR_IO, "%s: cannot open for reading: %s", path, strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        st = gs_fail(ctx, GS_ERR_IO, "%s: is a folder, not a file", path);
    else if (!S_ISREG(sb.st_mode))
        st = gs_fail(ctx, GS_ERR_IO, "%s: not a regular file (a device, FIFO or socket); gpuscan reads regular files only", path);
    else if (access(path, R_OK) != 0)   /* MPI-IO's own message would not name the file */
        st = gs_fail(ctx, GS_ERR_IO, "%s: cannot open for reading: %s", path, strerror(errno));
    return gs_mpi_agree(&ctx->mpi, st);
}

/* An HDF5 dataset: its type and count from the file. */
static gs_status open_input_h5(gs_run *r)
{
    gs_context *ctx = r->ctx;
    const char *path = r->src->path;
    char file[4096];
    gs_status st = gs_h5_file_part(path, file, sizeof file) ? GS_OK
                 : gs_fail(ctx, GS_ERR_ARG, "%s: the file name is too long", path);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    GS_CHECK(check_input_path(ctx, file));
    GS_CHECK(gs_h5_open_read(&ctx->mpi, path, &r->in_h5, &r->type, &r->n));
    if (r->src->type_given && r->src->type != r->type)
        st = gs_fail(ctx, GS_ERR_ARG, "%s holds %s elements but -t %s was given", path, gs_type_name(r->type),
                     gs_type_name(r->src->type));
    r->in_offset = 0;
    return gs_mpi_agree(&ctx->mpi, st);
}

/* Open the input file and learn its type, count and data offset: an HDF5
 * dataset when the name says so (gs_h5.h), .npy when it starts with
 * NumPy's magic, else raw binary of the type given. */
static gs_status open_input_file(gs_run *r)
{
    gs_context *ctx = r->ctx;
    const char *path = r->src->path;
    if (r->src->type_given && (unsigned)r->src->type >= GS_TYPE_COUNT)
        return gs_mpi_agree(&ctx->mpi, gs_fail(ctx, GS_ERR_ARG, "unknown element type %d", (int)r->src->type));
    if (gs_h5_is_path(path)) return open_input_h5(r);
    GS_CHECK(check_input_path(ctx, path));
    GS_CHECK(gs_mpiio_open_read(&ctx->mpi, path, &r->in));
    gs_status st = GS_OK;
    uint64_t size = 0;
    GS_CHECK(gs_mpiio_size(&ctx->mpi, r->in, &size));

    size_t head_len = size < GS_NPY_MAX_HEADER ? (size_t)size : GS_NPY_MAX_HEADER;
    char *head = malloc(head_len + 1);
    st = head ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "%s: no memory for the header", path);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    /* every rank reads the same header bytes, so every rank reaches the same
     * verdict on them without a broadcast */
    st = gs_mpiio_read_at(&ctx->mpi, r->in, 0, head, head_len);
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
    return gs_mpi_agree(&ctx->mpi, st);
}

/* Every rank must have the same array and the same call: ranks that see
 * different files at one path (a node-local folder), or a program that
 * passes ranks different sources or operations, would otherwise split
 * different arrays, or wait in different collectives. */
static gs_status agree_input(gs_run *r)
{
    const int generated = r->src->path == NULL;
    const int64_t mine[6] = {r->op, r->kind, generated ? (int64_t)r->src->seed : 0,
                             (int64_t)r->type, r->n, (int64_t)r->in_offset};
    /* the first three are the call's; the rest are what a file says, or
     * for generated data the call's too */
    const unsigned call = generated ? 077u : 07u;
    unsigned differ = 0;
    GS_CHECK(gs_mpi_agree_values(&r->ctx->mpi, GS_OK, mine, 6, &differ));
    if (differ & call)
        return gs_fail(r->ctx, GS_ERR_ARG, "the ranks made different calls: every rank must pass the same "
                       "operation, scan kind and source (path, or count, type and seed)");
    if (!differ) return GS_OK;
    return gs_fail(r->ctx, GS_ERR_IO, "%s: the ranks do not read the same file there (its element type, count or "
                   "header differ between ranks): give every rank one file, on a shared file system", r->src->path);
}

static gs_status open_generated(gs_run *r)
{
    gs_status st = GS_OK;
    if (r->src->count < 0)
        st = gs_fail(r->ctx, GS_ERR_ARG, "negative element count %lld", (long long)r->src->count);
    else if ((unsigned)r->src->type >= GS_TYPE_COUNT)
        st = gs_fail(r->ctx, GS_ERR_ARG, "unknown element type %d", (int)r->src->type);
    /* a scan's output, never narrower, is checked in open_output, naming the file */
    else if (!r->scan && (uint64_t)r->src->count > (uint64_t)INT64_MAX / gs_type_size(r->src->type))
        st = gs_fail(r->ctx, GS_ERR_ARG, "%lld %s elements are beyond 2^63 - 1 bytes, the largest size",
                     (long long)r->src->count, gs_type_name(r->src->type));
    r->type = r->src->type;
    r->n = r->src->count;
    return gs_mpi_agree(&r->ctx->mpi, st);
}

static gs_status open_input(gs_run *r)
{
    GS_CHECK(r->src->path ? open_input_file(r) : open_generated(r));
    return agree_input(r);
}

/* ---- each chunk through ---------------------------------------------------------- */

/* The reference's view of chunk k's input: the pipeline's own where it
 * passes the host, else read (collectively) or generated again into ref_in,
 * counted as verification time. The choice is the same on every rank. */
static gs_status reference_input(gs_run *r, int64_t k, int64_t m, const void **host_in, gs_status st)
{
    if (gs_pipe_input_on_host(&r->pipe)) return st;
    *host_in = r->ref_in;
    return gs_pipe_read(&r->pipe, k, m, r->ref_in, st, GS_PHASE_VERIFY);
}

/* What the run does with every chunk the pipeline is through with, on every
 * rank and step: feeds the reference (--verify: a reduction pass's input,
 * or a scan's input and output), keeps the scan's last element and reports
 * progress. */
static gs_status chunk_through(void *data, int64_t k, int64_t first, int64_t m, const void *host_in,
                               const void *host_out, gs_status st)
{
    gs_run *r = data;
    if (r->opt->verify) {
        st = reference_input(r, k, m, &host_in, st);
        double t0 = gs_now();
        if (st == GS_OK && m > 0 && host_out) {
            gs_verify_scan_chunk(&r->check, host_in, host_out, m);
        } else if (st == GS_OK && m > 0 && r->exact) {
            gs_verify_reduce_exact(r->type, host_in, m, &r->ref_exact);
        } else if (st == GS_OK && m > 0) {
            gs_acc part = gs_verify_reduce_ref(r->type, r->op, host_in, m);
            r->ref_partial = gs_acc_combine(r->type, r->op, r->ref_partial, part);
            r->ref_abs += gs_verify_abs_sum(r->type, host_in, m);
        }
        r->t[GS_PHASE_VERIFY] += since(t0);
    }
    if (st == GS_OK && host_out && m > 0 && first + m == r->count)
        r->last = gs_value_from_element(r->out_type, (const char *)host_out + (size_t)(m - 1) * r->out_size);
    r->chunks_done++;
    if (r->opt->progress && r->chunks_total > 0)
        r->opt->progress(r->opt->progress_data, (double)r->chunks_done / (double)r->chunks_total);
    return st;
}

/* ---- the plan ---------------------------------------------------------------- */

/* Element types, sizes and this rank's shard, once the input is known. */
static void shape(gs_run *r)
{
    r->out_type = r->scan ? gs_scan_output_type(r->type, r->op) : r->type;
    r->in_size = gs_type_size(r->type);
    r->out_size = r->scan ? gs_type_size(r->out_type) : 0;
    r->exact = gs_exact_applies(r->ctx, r->type, r->op);
    gs_exact_clear(&r->ref_exact);
    gs_shard_range(r->n, r->ctx->mpi.rank, r->ctx->mpi.size, &r->start, &r->count);
}

static gs_status check_options(gs_context *ctx, const gs_run_options *opt)
{
    gs_status st = GS_OK;
    if (opt->depth < 0 || opt->depth > GS_MAX_DEPTH)
        st = gs_fail(ctx, GS_ERR_ARG, "depth %d: chunks in flight must be 1 to %d", opt->depth, GS_MAX_DEPTH);
    else if (opt->chunk < 0)
        st = gs_fail(ctx, GS_ERR_ARG, "chunk %lld: not a positive element count", (long long)opt->chunk);
    else if ((unsigned)opt->residency > GS_RESIDENCY_STREAMED)
        st = gs_fail(ctx, GS_ERR_ARG, "unknown residency %d", (int)opt->residency);
    return gs_mpi_agree(&ctx->mpi, st);
}

/* The memory budget of the rank with the least: every rank then reaches the
 * same verdicts below. */
static gs_status common_budget(gs_context *ctx, uint64_t *budget)
{
    gs_status st = gs_plan_memory_budget(&ctx->be, ctx->mem_cap, budget);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    int64_t neg_least = 0;
    GS_CHECK(gs_mpi_max_i64(&ctx->mpi, -(int64_t)(*budget < INT64_MAX ? *budget : INT64_MAX), &neg_least));
    *budget = (uint64_t)-neg_least;
    return GS_OK;
}

/* The pipeline's ends and hooks: this rank's part of the input and output
 * files, or of the generated array. */
static void connect_pipe(gs_run *r)
{
    gs_pipe *p = &r->pipe;
    p->be = &r->ctx->be;
    p->mpi = &r->ctx->mpi;
    p->err = &r->ctx->err;
    p->ring = r->ctx->ring;
    p->type = r->type;
    p->op = r->op;
    p->kind = r->kind;
    p->count = r->count;
    p->exact = r->exact;
    p->name = r->src->path ? r->src->path : "generated data";
    if (r->in || r->in_h5) {
        p->in.kind = GS_IO_FILE;
        p->in.file = r->in;
        p->in.h5 = r->in_h5;
        p->in.offset = r->in_offset + (uint64_t)r->start * r->in_size;
    } else {
        p->in.kind = GS_IO_GENERATE;
        p->in.seed = r->src->seed;
        p->in.start = r->start;
    }
    if (r->out || r->out_h5) {
        p->out.kind = GS_IO_FILE;
        p->out.file = r->out;
        p->out.h5 = r->out_h5;
        p->out.offset = r->out_offset + (uint64_t)r->start * r->out_size;
    }
    p->chunk_done = chunk_through;
    p->chunk_data = r;
}

/* Resident or streamed, the chunk and the depth, from the options, the
 * longest shard and the memory budget: the same on every rank. */
static gs_status choose_layout(gs_run *r, uint64_t budget)
{
    gs_context *ctx = r->ctx;
    const gs_run_options *opt = r->opt;
    gs_pipe *p = &r->pipe;
    const char *memory = ctx->be.ops->computes_on_host ? "host" : "device";
    const int size = ctx->mpi.size;
    const int64_t largest = ceil_div(r->n, size);
    const int depth = opt->depth ? opt->depth : GS_PLAN_DEFAULT_DEPTH;
    int64_t chunk = opt->chunk ? opt->chunk : gs_plan_default_chunk(largest, r->in_size, depth);
    chunk = min64(chunk, largest > 0 ? largest : 1);

    /* resident pays where it saves the scan's second read of the input */
    const uint64_t resident_bytes = gs_plan_resident_bytes(largest, chunk, r->in_size, r->out_size);
    p->resident = opt->residency == GS_RESIDENCY_RESIDENT ||
                  (opt->residency == GS_RESIDENCY_AUTO && r->scan && size > 1 && resident_bytes <= budget);
    const uint64_t ring_bytes = gs_plan_ring_bytes(chunk, depth, r->in_size, r->out_size);
    gs_status st = GS_OK;
    if (p->resident && resident_bytes > budget)
        st = gs_fail(ctx, GS_ERR_NOMEM,
                     "--resident: a shard of %lld elements needs %llu bytes of %s memory but %llu may be used (use --stream)",
                     (long long)largest, (unsigned long long)resident_bytes, memory, (unsigned long long)budget);
    else if (!p->resident && ring_bytes > budget && opt->chunk)
        st = gs_fail(ctx, GS_ERR_NOMEM, "--chunk %lld x --depth %d needs %llu bytes of %s memory but %llu may be used",
                     (long long)chunk, depth, (unsigned long long)ring_bytes, memory, (unsigned long long)budget);
    else if (!p->resident && ring_bytes > budget)   /* a chosen chunk shrinks to fit */
        chunk = gs_plan_fit_chunk(budget, depth, r->in_size, r->out_size);
    if (st == GS_OK && chunk < 1)
        st = gs_fail(ctx, GS_ERR_NOMEM, "not even %d chunks of one element fit in the %llu bytes of %s memory that may be used",
                     depth, (unsigned long long)budget, memory);
    p->chunk = chunk > 0 ? chunk : 1;
    p->steps = ceil_div(largest, p->chunk);
    p->depth = (int)min64(depth, p->steps > 0 ? p->steps : 1);
    return gs_mpi_agree(&ctx->mpi, st);
}

static gs_status plan(gs_run *r)
{
    GS_CHECK(check_options(r->ctx, r->opt));
    uint64_t budget = 0;
    GS_CHECK(common_budget(r->ctx, &budget));
    connect_pipe(r);
    GS_CHECK(choose_layout(r, budget));
    r->pipe_open = 1;
    gs_status st = gs_pipe_open(&r->pipe);
    /* the reference's own copy of a chunk of input, where the pipeline's
     * never passes the host */
    if (st == GS_OK && r->opt->verify && !(r->ref_in = malloc((size_t)gs_plan_stride(r->pipe.chunk, r->in_size))))
        st = gs_fail(r->ctx, GS_ERR_NOMEM, "no host memory for a chunk of the reference's input");
    return gs_mpi_agree(&r->ctx->mpi, st);
}

/* ---- report ------------------------------------------------------------------ */

static gs_status fill_report(gs_run *r, double t_start, gs_report *rep)
{
    gs_context *ctx = r->ctx;
    double t[GS_PHASE_COUNT], busy = 0;
    for (int p = 0; p < GS_PHASE_COUNT; p++) {
        t[p] = r->t[p] + r->pipe.t[p];
        if (p != GS_PHASE_VERIFY) busy += t[p];
    }
    /* this rank's wall time and overlap ratio */
    double wall = since(t_start);
    double mine[2] = {wall, wall > 0 ? busy / wall : 0}, least[2], avg[2], most[2];
    memset(rep, 0, sizeof *rep);
    rep->n = r->n;
    rep->type = r->type;
    rep->out_type = r->out_type;
    rep->ranks = ctx->mpi.size;
    rep->backend = ctx->be.ops->kind;
    rep->bytes = gs_sat_mul((uint64_t)r->n, r->in_size + r->out_size);
    rep->verified = r->opt->verify;
    rep->streamed = !r->pipe.resident;
    rep->chunk = r->pipe.chunk;
    rep->depth = r->pipe.depth;
    rep->input_passes = r->input_passes;
    GS_CHECK(gs_mpi_stats(&ctx->mpi, t, GS_PHASE_COUNT, rep->phase_min, rep->phase_avg, rep->phase_max));
    GS_CHECK(gs_mpi_stats(&ctx->mpi, mine, 2, least, avg, most));
    rep->seconds = most[0];
    rep->overlap = avg[1];
    return GS_OK;
}

static void run_init(gs_run *r, gs_context *ctx, const gs_source *src, gs_op op,
                     const gs_run_options *opt, int scan)
{
    static const gs_run_options no_options;
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->src = src;
    r->op = op;
    r->scan = scan;
    r->opt = opt ? opt : &no_options;
    r->input_passes = 1;
}

/* Close what a run opened (collective); the scan's output is kept only when
 * every rank succeeded. */
static gs_status run_finish(gs_run *r, gs_status st)
{
    if (r->pipe_open) gs_pipe_close(&r->pipe);
    free(r->ref_in);
    if (r->out) {
        gs_status cs = gs_mpiio_close(&r->ctx->mpi, r->out, st == GS_OK);
        if (st == GS_OK) st = cs;
    }
    if (r->out_h5) {
        gs_status cs = gs_h5_close(&r->ctx->mpi, r->out_h5, st == GS_OK);
        if (st == GS_OK) st = cs;
    }
    if (r->in) gs_mpiio_close(&r->ctx->mpi, r->in, 0);
    if (r->in_h5) gs_h5_close(&r->ctx->mpi, r->in_h5, 0);
    return st;
}

static gs_status check_op(gs_context *ctx, gs_op op)
{
    gs_status st = (unsigned)op < GS_OP_COUNT ? GS_OK
                 : gs_fail(ctx, GS_ERR_ARG, "unknown operation %d", (int)op);
    return gs_mpi_agree(&ctx->mpi, st);
}

/* ---- reduce ------------------------------------------------------------------ */

/* The exact path (--exact, f32/f64 sums): the f64 nearest the exact sum;
 * --verify demands its bits. */
static gs_status reduce_exact_run(gs_run *r, gs_value *result, gs_report *report, double t_start)
{
    gs_context *ctx = r->ctx;
    gs_exact partial;
    GS_CHECK(gs_pipe_reduce_exact(&r->pipe, &partial));
    double t0 = gs_now();
    gs_status st = gs_mpi_allreduce_exact(&ctx->mpi, &partial);
    if (st == GS_OK && r->opt->verify) st = gs_mpi_allreduce_exact(&ctx->mpi, &r->ref_exact);
    r->t[GS_PHASE_MPI] += since(t0);
    GS_CHECK(st);
    result->type = GS_F64;
    result->v.f = gs_exact_round_f64(&partial);
    if (!report) return GS_OK;
    GS_CHECK(fill_report(r, t_start, report));
    report->wrong = r->opt->verify && !gs_verify_same_f64(result->v.f, gs_exact_round_f64(&r->ref_exact));
    return GS_OK;
}

static gs_status reduce_run(gs_run *r, gs_value *result, gs_report *report, double t_start)
{
    gs_context *ctx = r->ctx;
    GS_CHECK(check_op(ctx, r->op));
    if (!result) return gs_mpi_agree(&ctx->mpi, gs_fail(ctx, GS_ERR_ARG, "NULL result"));
    GS_CHECK(open_input(r));
    shape(r);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, gs_exact_check(ctx, r->type, r->op)));
    GS_CHECK(plan(r));
    r->chunks_total = r->pipe.steps;
    if (r->exact) return reduce_exact_run(r, result, report, t_start);
    r->ref_partial = gs_acc_identity(r->type, r->op);
    gs_acc partial;
    GS_CHECK(gs_pipe_reduce(&r->pipe, &partial));

    double t0 = gs_now();
    gs_status st = gs_mpi_allreduce_acc(&ctx->mpi, r->type, r->op, &partial);
    if (st == GS_OK && r->opt->verify) st = gs_mpi_allreduce_acc(&ctx->mpi, r->type, r->op, &r->ref_partial);
    if (st == GS_OK && r->opt->verify) st = gs_mpi_sum_f64(&ctx->mpi, &r->ref_abs, 1);
    r->t[GS_PHASE_MPI] += since(t0);
    GS_CHECK(st);

    const char *name = r->pipe.name;
    st = gs_finish_reduce(r->type, r->op, partial, r->n, result);
    if (st == GS_ERR_OVERFLOW)
        return gs_fail(ctx, st, "%s: the %s sum of %lld elements overflows 64 bits", name,
                       gs_type_name(r->type), (long long)r->n);
    if (st == GS_ERR_EMPTY)
        return gs_fail(ctx, st, "%s of an empty array (%s) has no identity", gs_op_name(r->op), name);
    if (!report) return GS_OK;
    GS_CHECK(fill_report(r, t_start, report));
    report->wrong = r->opt->verify &&
                    !gs_verify_reduce_ok(r->type, r->op, partial, r->ref_partial, r->n, r->ref_abs);
    return GS_OK;
}

gs_status gs_reduce_run(gs_context *ctx, const gs_source *src, gs_op op,
                        const gs_run_options *opt, gs_value *result, gs_report *report)
{
    double t_start = gs_now();
    gs_run r;
    run_init(&r, ctx, src, op, opt, 0);
    return run_finish(&r, reduce_run(&r, result, report, t_start));
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
    else if (r->src->path && (strcmp(path, r->src->path) == 0 || same_file(path, r->src->path) ||
                              gs_h5_is_input(r->in_h5, path)))
        st = gs_fail(ctx, GS_ERR_ARG, "%s: the output would overwrite the input", path);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    if (gs_h5_is_path(path)) return gs_h5_create(&ctx->mpi, path, r->out_type, r->n, &r->out_h5);
    /* the .npy header, written by rank 0 */
    char header[256];
    size_t len = 0;
    if (ends_with(path, ".npy")) len = gs_npy_format(header, sizeof header, r->out_type, r->n);
    r->out_offset = len;
    GS_CHECK(gs_mpiio_create(&ctx->mpi, path, gs_sat_add(len, gs_sat_mul((uint64_t)r->n, r->out_size)), &r->out));

    double t0 = gs_now();
    st = gs_mpiio_write_at(&ctx->mpi, r->out, 0, header, ctx->mpi.rank == 0 ? len : 0);
    r->t[GS_PHASE_WRITE] += since(t0);
    return st;
}

/* The output's last element: from the highest rank with a non-empty shard. */
static gs_status gather_last(gs_run *r, gs_value mine, gs_value *last)
{
    gs_context *ctx = r->ctx;
    const int size = ctx->mpi.size;
    struct { int64_t count; gs_value v; } me = {r->count, mine}, *all = calloc((size_t)size, sizeof me);
    gs_status st = all ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "no memory to gather results");
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    st = gs_mpi_allgather_bytes(&ctx->mpi, &me, sizeof me, all);
    last->type = r->out_type;
    last->v.u = 0;
    for (int i = size - 1; st == GS_OK && i >= 0; i--)
        if (all[i].count > 0) { *last = all[i].v; break; }
    free(all);
    return st;
}

/* The rank's scan offset: a reduction pass (which loads a resident shard
 * for good), then MPI_Exscan of the rank totals; the same for the reference
 * under --verify. */
static gs_status rank_offset(gs_run *r, gs_acc *carry, gs_acc *ref_carry, double *ref_abs_offset)
{
    gs_context *ctx = r->ctx;
    gs_acc total;
    GS_CHECK(gs_pipe_reduce(&r->pipe, &total));
    double t0 = gs_now();
    gs_status st = gs_mpi_exscan_carry(&ctx->mpi, r->type, r->op, gs_acc_scan_carry(r->type, r->op, total), carry);
    if (st == GS_OK && r->opt->verify)
        st = gs_mpi_exscan_carry(&ctx->mpi, r->type, r->op, gs_acc_scan_carry(r->type, r->op, r->ref_partial),
                                 ref_carry);
    if (st == GS_OK && r->opt->verify) st = gs_mpi_exscan_f64(&ctx->mpi, r->ref_abs, ref_abs_offset);
    r->t[GS_PHASE_MPI] += since(t0);
    return st;
}

/* rank_offset of the exact path: exact states through MPI_Exscan. */
static gs_status rank_offset_exact(gs_run *r, gs_exact *carry, gs_exact *ref_carry)
{
    gs_context *ctx = r->ctx;
    gs_exact total;
    GS_CHECK(gs_pipe_reduce_exact(&r->pipe, &total));
    double t0 = gs_now();
    gs_status st = gs_mpi_exscan_exact(&ctx->mpi, &total, carry);
    if (st == GS_OK && r->opt->verify) st = gs_mpi_exscan_exact(&ctx->mpi, &r->ref_exact, ref_carry);
    r->t[GS_PHASE_MPI] += since(t0);
    return st;
}

/* The scan pass (after the offset pass where there are several ranks): the
 * plain path's, or the exact path's from exact offsets. */
static gs_status scan_pass(gs_run *r, int passes)
{
    if (!r->exact) {
        gs_acc carry = gs_acc_identity(r->type, r->op), ref_carry = carry;
        r->ref_partial = carry;
        double ref_abs_offset = 0;
        if (passes == 2) GS_CHECK(rank_offset(r, &carry, &ref_carry, &ref_abs_offset));
        if (r->opt->verify)
            gs_verify_scan_begin(&r->check, r->type, r->op, r->kind, r->n, ref_carry, ref_abs_offset);
        return gs_pipe_scan(&r->pipe, carry);
    }
    gs_exact carry, ref_carry;
    gs_exact_clear(&carry);
    gs_exact_clear(&ref_carry);
    if (passes == 2) GS_CHECK(rank_offset_exact(r, &carry, &ref_carry));
    if (r->opt->verify) gs_verify_scan_begin_exact(&r->check, r->type, r->kind, &ref_carry);
    return gs_pipe_scan_exact(&r->pipe, &carry);
}

static gs_status scan_run(gs_run *r, const char *out_path, gs_report *report, double t_start)
{
    gs_context *ctx = r->ctx;
    GS_CHECK(check_op(ctx, r->op));
    if (r->kind != GS_INCLUSIVE && r->kind != GS_EXCLUSIVE)
        return gs_mpi_agree(&ctx->mpi, gs_fail(ctx, GS_ERR_ARG, "unknown scan kind %d", (int)r->kind));
    GS_CHECK(open_input(r));
    shape(r);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, gs_exact_check(ctx, r->type, r->op)));
    GS_CHECK(open_output(r, out_path));
    GS_CHECK(plan(r));

    const int passes = ctx->mpi.size > 1 ? 2 : 1;
    r->input_passes = passes == 2 && r->pipe.resident ? 1 : passes;
    r->chunks_total = passes * r->pipe.steps;
    r->last.type = r->out_type;
    r->last.v.u = 0;
    GS_CHECK(scan_pass(r, passes));
    gs_value global_last;
    GS_CHECK(gather_last(r, r->last, &global_last));
    int64_t wrong = 0;
    if (r->opt->verify) GS_CHECK(gs_mpi_sum_i64(&ctx->mpi, r->check.wrong, &wrong));
    if (report) {
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
    return run_finish(&r, scan_run(&r, out_path, report, t_start));
}
