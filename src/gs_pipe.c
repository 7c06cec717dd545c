/*
 * gs_pipe.c - the chunk pipeline's step loop (gs_pipe.h, docs/STREAMING.md).
 *
 * A pass runs steps k = 0, 1, ...: step k takes chunk k in (stage_in: free
 * its ring slot, read it, queue its copy to the backend, its kernel and, in
 * a scan, its copy back) and, in a scan, takes chunk k-depth+1 out
 * (stage_out: wait for it on the host, write it). So the host reads chunk k
 * and writes chunk k-depth+1 while the backend copies and computes the
 * chunks between, and the host waits only where it reuses a slot or writes
 * a chunk.
 *
 * Chunk k's kernel waits for its copy in through an event, its copy out for
 * its kernel through another; kernels run in order on the compute stream,
 * which carries the reduction accumulator or the scan carry from chunk to
 * chunk in backend memory. A slot is reused only after the host has seen the
 * last event of its previous chunk, so no stream ever waits on a slot.
 *
 * Collective pipelines (whole-array runs) agree after every step, and every
 * rank takes every step, reading and writing nothing past the end of its
 * shard, so the collective MPI-IO calls always match and a failure on one
 * rank stops all of them at the same step.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>

#include "gs_pipe.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* ---- where a chunk lies ----------------------------------------------------------- */

static int slot_of(const gs_pipe *p, int64_t k) { return (int)(k % p->depth); }

/* Elements of chunk k on this rank: 0 past the end of its shard. */
static int64_t chunk_len(const gs_pipe *p, int64_t k)
{
    int64_t first = k * p->chunk;
    return first < p->count ? min64(p->chunk, p->count - first) : 0;
}

static size_t chunk_stride(const gs_pipe *p, size_t size) { return (size_t)gs_plan_stride(p->chunk, size); }

static void *stride_at(void *base, int64_t index, size_t stride)
{
    return base ? (char *)base + (size_t)index * stride : NULL;
}

/* Chunk k of the caller's memory, where chunks lie end to end. */
static void *caller_chunk(const gs_pipe *p, void *base, int64_t k, size_t size)
{
    return stride_at(base, k, (size_t)p->chunk * size);
}

/* Chunk k's slot of a ring buffer. */
static void *slot_at(const gs_pipe *p, const gs_buffer *b, int64_t k, size_t size)
{
    return stride_at(b->p, slot_of(p, k), chunk_stride(p, size));
}

/* Where chunk k is computed from and into: the resident shard, the caller's
 * memory (a backend computing on the host), else the chunk's backend slot. */
static void *compute_in(const gs_pipe *p, int64_t k)
{
    if (p->resident) return stride_at(p->c_in, k, chunk_stride(p, p->in_size));
    if (p->on_host && p->in.kind == GS_IO_HOST) return caller_chunk(p, p->in.host, k, p->in_size);
    return slot_at(p, p->on_host ? &p->ring->h_in : &p->ring->d_in, k, p->in_size);
}

static void *compute_out(const gs_pipe *p, int64_t k)
{
    if (p->resident) return stride_at(p->c_out, k, chunk_stride(p, p->out_size));
    if (p->on_host && p->out.kind == GS_IO_HOST) return caller_chunk(p, p->out.host, k, p->out_size);
    return slot_at(p, p->on_host ? &p->ring->h_out : &p->ring->d_out, k, p->out_size);
}

/* Where chunk k lies on the host on its way in and out: where it is
 * computed (a backend computing on the host), the caller's page-locked
 * memory, else the chunk's pinned slot. */
static void *staged_in(const gs_pipe *p, int64_t k)
{
    if (p->on_host) return compute_in(p, k);
    if (p->in_pinned) return caller_chunk(p, p->in.host, k, p->in_size);
    return slot_at(p, &p->ring->h_in, k, p->in_size);
}

static void *staged_out(const gs_pipe *p, int64_t k)
{
    if (p->on_host) return compute_out(p, k);
    if (p->out_pinned) return caller_chunk(p, p->out.host, k, p->out_size);
    return slot_at(p, &p->ring->h_out, k, p->out_size);
}

int gs_pipe_input_on_host(const gs_pipe *p)
{
    return p->on_host || (!p->loaded && p->in.kind != GS_IO_GENERATE);
}

/* ---- opening ------------------------------------------------------------------ */

/* The ring slots this pipeline needs: host slots where its input or output
 * passes through the host (reads and writes, pageable memory), backend
 * slots where the shard is not resident. */
static gs_status reserve_ring(gs_pipe *p)
{
    gs_ring *ring = p->ring;
    const int scans = p->out.kind != GS_IO_NONE;
    const size_t in_slots = (size_t)p->depth * chunk_stride(p, p->in_size);
    const size_t out_slots = (size_t)p->depth * chunk_stride(p, p->out_size);
    int stage_in, stage_out;
    if (p->on_host) {
        stage_in = !p->resident && p->in.kind != GS_IO_HOST;
        stage_out = scans && !p->resident && p->out.kind != GS_IO_HOST;
    } else {
        stage_in = !p->in_pinned && p->in.kind != GS_IO_GENERATE;
        stage_out = scans && !p->out_pinned;
    }
    if (stage_in) GS_CHECK(gs_ring_reserve(ring, &ring->h_in, GS_MEM_PINNED, in_slots));
    if (stage_out) GS_CHECK(gs_ring_reserve(ring, &ring->h_out, GS_MEM_PINNED, out_slots));
    if (!p->on_host && !p->resident) GS_CHECK(gs_ring_reserve(ring, &ring->d_in, GS_MEM_DEVICE, in_slots));
    if (!p->on_host && !p->resident && scans)
        GS_CHECK(gs_ring_reserve(ring, &ring->d_out, GS_MEM_DEVICE, out_slots));
    if (scans) GS_CHECK(gs_ring_reserve(ring, &ring->h_flags, GS_MEM_PINNED, GS_MAX_DEPTH * sizeof(uint32_t)));
    GS_CHECK(gs_ring_reserve(ring, &ring->d_scalars, GS_MEM_DEVICE, sizeof(gs_ring_scalars)));
    return gs_ring_events(ring, p->depth);
}

gs_status gs_pipe_open(gs_pipe *p)
{
    const int scans = p->out.kind != GS_IO_NONE;
    p->on_host = p->be->ops->computes_on_host;
    p->in_size = gs_type_size(p->type);
    p->out_size = scans ? gs_type_size(gs_scan_output_type(p->type, p->op)) : 0;
    p->in_pinned = p->in.kind == GS_IO_HOST && gs_be_is_pinned(p->be, p->in.host, (size_t)p->count * p->in_size);
    p->out_pinned = p->out.kind == GS_IO_HOST && gs_be_is_pinned(p->be, p->out.host, (size_t)p->count * p->out_size);
    p->loaded = 0;
    p->c_in = p->c_out = NULL;
    GS_CHECK(reserve_ring(p));
    if (!p->resident) return GS_OK;
    const size_t chunks = (size_t)ceil_div(p->count, p->chunk);
    GS_CHECK(gs_be_alloc(p->be, GS_MEM_DEVICE, &p->c_in, chunks * chunk_stride(p, p->in_size)));
    return scans ? gs_be_alloc(p->be, GS_MEM_DEVICE, &p->c_out, chunks * chunk_stride(p, p->out_size)) : GS_OK;
}

void gs_pipe_close(gs_pipe *p)
{
    gs_be_free(p->be, GS_MEM_DEVICE, p->c_in);
    gs_be_free(p->be, GS_MEM_DEVICE, p->c_out);
    p->c_in = p->c_out = NULL;
}

/* ---- the backend's side of a chunk -------------------------------------------------- */

static gs_status overflowed(gs_pipe *p)
{
    return gs_err_set(p->err, GS_ERR_OVERFLOW, "%s: a 64-bit prefix sum of the %s elements overflowed",
                      p->name, gs_type_name(p->type));
}

/* Record the begin (end = 0) or end (1) of `phase` of the chunk in slot s. */
static gs_status mark(gs_pipe *p, int s, gs_phase phase, int end, gs_stream stream)
{
    GS_CHECK(gs_be_event_record(p->be, p->ring->ev[s][phase][end], stream));
    if (end) p->slot[s].timed |= 1u << phase;
    return GS_OK;
}

static gs_status copy_in(gs_pipe *p, int64_t k, int s, int64_t m)
{
    GS_CHECK(mark(p, s, GS_PHASE_H2D, 0, GS_STREAM_COPY_IN));
    GS_CHECK(gs_be_copy_async(p->be, GS_STREAM_COPY_IN, compute_in(p, k), staged_in(p, k), (size_t)m * p->in_size, 1));
    return mark(p, s, GS_PHASE_H2D, 1, GS_STREAM_COPY_IN);
}

/* Chunk k's output, and the overflow flag as it stands after it, to the
 * host once its kernel is done (on a backend computing on the host the
 * output is there already). */
static gs_status copy_out(gs_pipe *p, int64_t k, int s, int64_t m)
{
    gs_ring_scalars *d = p->ring->d_scalars.p;
    uint32_t *flags = p->ring->h_flags.p;
    GS_CHECK(gs_be_stream_wait(p->be, GS_STREAM_COPY_OUT, p->ring->ev[s][GS_PHASE_COMPUTE][1]));
    if (!p->on_host) {
        GS_CHECK(mark(p, s, GS_PHASE_D2H, 0, GS_STREAM_COPY_OUT));
        GS_CHECK(gs_be_copy_async(p->be, GS_STREAM_COPY_OUT, staged_out(p, k), compute_out(p, k),
                                  (size_t)m * p->out_size, 0));
    }
    GS_CHECK(gs_be_copy_async(p->be, GS_STREAM_COPY_OUT, &flags[s], &d->overflow, sizeof flags[s], 0));
    return p->on_host ? GS_OK : mark(p, s, GS_PHASE_D2H, 1, GS_STREAM_COPY_OUT);
}

/* Queue chunk k's kernel after its copy in, chained to the previous
 * chunk's through the accumulator or carry in backend memory. */
static gs_status compute(gs_pipe *p, int64_t k, int s, int64_t m)
{
    gs_ring_scalars *d = p->ring->d_scalars.p;
    if (p->slot[s].timed & (1u << GS_PHASE_H2D))
        GS_CHECK(gs_be_stream_wait(p->be, GS_STREAM_COMPUTE, p->ring->ev[s][GS_PHASE_H2D][1]));
    GS_CHECK(mark(p, s, GS_PHASE_COMPUTE, 0, GS_STREAM_COMPUTE));
    if (p->scanning && p->exact)
        GS_CHECK(gs_be_scan_exact_async(p->be, p->type, p->kind, compute_in(p, k), compute_out(p, k), m,
                                        &d->exact));
    else if (p->scanning)
        GS_CHECK(gs_be_scan_async(p->be, p->type, p->op, p->kind, compute_in(p, k), compute_out(p, k), m,
                                  &d->value, &d->overflow));
    else if (p->exact)
        GS_CHECK(gs_be_reduce_exact_async(p->be, p->type, compute_in(p, k), m, &d->exact));
    else
        GS_CHECK(gs_be_reduce_async(p->be, p->type, p->op, compute_in(p, k), m, &d->value));
    GS_CHECK(mark(p, s, GS_PHASE_COMPUTE, 1, GS_STREAM_COMPUTE));
    return p->scanning ? copy_out(p, k, s, m) : GS_OK;
}

/* Add up the event times of the chunk in slot s; its events are complete. */
static gs_status collect_times(gs_pipe *p, int s)
{
    for (int ph = 0; ph < GS_RING_PHASES; ph++) {
        if (!(p->slot[s].timed & (1u << ph))) continue;
        double seconds = 0;
        GS_CHECK(gs_be_event_elapsed(p->be, p->ring->ev[s][ph][0], p->ring->ev[s][ph][1], &seconds));
        p->t[ph] += seconds;
    }
    return GS_OK;
}

/* Free slot s: wait for the last event of its chunk (every other event of
 * the chunk comes before it: a copy out waits for the kernel, the kernel for
 * the copy in or the generator) and add up the chunk's times. */
static gs_status recycle(gs_pipe *p, int s)
{
    gs_status st = GS_OK;
    unsigned timed = p->slot[s].timed;
    if (timed) {
        int last = GS_RING_PHASES - 1;
        while (!(timed & (1u << last))) last--;
        st = gs_be_event_sync(p->be, p->ring->ev[s][last][1]);
        if (st == GS_OK) st = collect_times(p, s);
    }
    p->slot[s].timed = 0;
    p->slot[s].host_in = NULL;
    return st;
}

/* Wait until every stream is idle, then free every slot: after a failure
 * too, since nothing may still read or write the ring when it is reused.
 * `st` is the pass's status so far: a later failure's message must not
 * replace the first one's. */
static gs_status drain(gs_pipe *p, gs_status st)
{
    gs_err first = *p->err;   /* the message of the pass's first failure */
    for (int i = 0; i < GS_STREAM_COUNT + p->depth; i++) {
        gs_status ds;
        if (i < GS_STREAM_COUNT) {
            ds = gs_be_event_record(p->be, p->ring->drain[i], (gs_stream)i);
            if (ds == GS_OK) ds = gs_be_event_sync(p->be, p->ring->drain[i]);
        } else {
            ds = recycle(p, i - GS_STREAM_COUNT);
        }
        if (st == GS_OK && ds != GS_OK) {
            st = ds;
            first = *p->err;
        }
    }
    if (st != GS_OK) *p->err = first;
    return st;
}

/* ---- the host's side of a chunk ---------------------------------------------------- */

static gs_status generate(gs_pipe *p, int64_t k, int s, int64_t m)
{
    /* on the compute stream, where the kernel that reads it comes next */
    GS_CHECK(mark(p, s, GS_PHASE_READ, 0, GS_STREAM_COMPUTE));
    GS_CHECK(gs_be_generate(p->be, p->type, p->in.seed, p->in.start + k * p->chunk, m, compute_in(p, k)));
    return mark(p, s, GS_PHASE_READ, 1, GS_STREAM_COMPUTE);
}

/* Bring chunk k's input to where it is computed from; *host_in: where it
 * lies on the host on the way, if it passes there. */
static gs_status load(gs_pipe *p, int64_t k, int s, int64_t m, gs_status st, const void **host_in)
{
    void *staged = staged_in(p, k);
    if (p->in.kind == GS_IO_GENERATE) {
        if (st == GS_OK && m > 0) st = generate(p, k, s, m);
        *host_in = p->on_host ? staged : NULL;
        return st;
    }
    /* the caller's memory, where computed from directly, needs no read */
    if (p->in.kind == GS_IO_FILE || staged != caller_chunk(p, p->in.host, k, p->in_size))
        st = gs_pipe_read(p, k, m, staged, st, GS_PHASE_READ);
    *host_in = staged;
    if (st == GS_OK && !p->on_host && m > 0) st = copy_in(p, k, s, m);
    return st;
}

/* Chunk k in: free its slot, bring its input, queue its kernel (and in a
 * scan its copy back). In a reduction pass the chunk is then through. Takes
 * part in the collective reads whatever fails on this rank. */
static gs_status stage_in(gs_pipe *p, int64_t k)
{
    const int s = slot_of(p, k);
    const int64_t m = chunk_len(p, k);
    gs_status st = recycle(p, s);
    const void *host_in = NULL;
    if (!p->loaded) st = load(p, k, s, m, st, &host_in);
    else if (p->on_host) host_in = compute_in(p, k);
    p->slot[s].host_in = host_in;
    if (st == GS_OK && m > 0) st = compute(p, k, s, m);
    if (!p->scanning && p->chunk_done) st = p->chunk_done(p->chunk_data, k, k * p->chunk, m, host_in, NULL, st);
    return st;
}

/* Chunk j out (scan passes): wait until its output is on the host, check
 * the overflow flag, show it to chunk_done and write it. Takes part in the
 * collective writes whatever failed on this rank (`st`). */
static gs_status stage_out(gs_pipe *p, int64_t j, gs_status st)
{
    const int s = slot_of(p, j);
    const int64_t m = chunk_len(p, j);
    void *host_out = staged_out(p, j);
    /* the chunk's last phase: its copy out, or its kernel where there is none */
    const gs_phase last = p->on_host ? GS_PHASE_COMPUTE : GS_PHASE_D2H;
    if (st == GS_OK && (p->slot[s].timed & (1u << last))) {
        st = gs_be_event_sync(p->be, p->ring->ev[s][last][1]);
        if (st == GS_OK && ((const uint32_t *)p->ring->h_flags.p)[s]) st = overflowed(p);
    }
    if (p->chunk_done) st = p->chunk_done(p->chunk_data, j, j * p->chunk, m, p->slot[s].host_in, host_out, st);
    return gs_pipe_write(p, j, m, host_out, st);
}

/* ---- passes ---------------------------------------------------------------------- */

static gs_status agree(gs_pipe *p, gs_status st)
{
    if (!p->mpi) return st;
    double t0 = gs_now();
    st = gs_mpi_agree(p->mpi, st);
    p->t[GS_PHASE_MPI] += gs_now() - t0;
    return st;
}

/* Start the pass's running value at `start` (its overflow flag is ignored:
 * no overflow is seen yet). */
static gs_status begin_pass(gs_pipe *p, int scanning, const gs_ring_scalars *start)
{
    p->scanning = scanning;
    memset(p->slot, 0, sizeof p->slot);
    gs_ring_scalars scalars = *start;
    scalars.overflow = 0;
    return gs_be_copy(p->be, p->ring->d_scalars.p, &scalars, sizeof scalars, 1);
}

/* The pass's running value, once the backend is idle. */
static gs_status end_pass(gs_pipe *p, gs_ring_scalars *value)
{
    GS_CHECK(gs_be_copy(p->be, value, p->ring->d_scalars.p, sizeof *value, 0));
    return value->overflow ? overflowed(p) : GS_OK;
}

static gs_status run_pass(gs_pipe *p, int scanning, const gs_ring_scalars *start, gs_ring_scalars *value)
{
    /* a scan writes chunk k-depth+1 in the step that reads chunk k */
    const int64_t lag = scanning ? p->depth - 1 : 0;
    gs_status st = agree(p, begin_pass(p, scanning, start));
    for (int64_t k = 0; st == GS_OK && k < p->steps + lag; k++) {
        gs_status step = k < p->steps ? stage_in(p, k) : GS_OK;
        if (scanning && k >= lag) step = stage_out(p, k - lag, step);
        st = agree(p, step);
    }
    st = drain(p, st);
    if (st == GS_OK) st = end_pass(p, value);
    st = agree(p, st);
    if (st == GS_OK && p->resident) p->loaded = 1;
    return st;
}

/* The running value of a pass that starts from `acc` or from the exact
 * state `exact` (NULL: zero). */
static gs_ring_scalars scalars_of(gs_acc acc, const gs_exact *exact)
{
    gs_ring_scalars s;
    memset(&s, 0, sizeof s);
    s.value = acc;
    if (exact) s.exact = *exact;
    else gs_exact_clear(&s.exact);
    return s;
}

gs_status gs_pipe_reduce(gs_pipe *p, gs_acc *partial)
{
    const gs_ring_scalars start = scalars_of(gs_acc_identity(p->type, p->op), NULL);
    gs_ring_scalars end;
    GS_CHECK(run_pass(p, 0, &start, &end));
    *partial = end.value;
    return GS_OK;
}

gs_status gs_pipe_scan(gs_pipe *p, gs_acc carry_in)
{
    const gs_ring_scalars start = scalars_of(carry_in, NULL);
    gs_ring_scalars end;
    return run_pass(p, 1, &start, &end);
}

gs_status gs_pipe_reduce_exact(gs_pipe *p, gs_exact *partial)
{
    const gs_ring_scalars start = scalars_of(gs_acc_identity(p->type, p->op), NULL);
    gs_ring_scalars end;
    GS_CHECK(run_pass(p, 0, &start, &end));
    *partial = end.exact;
    return GS_OK;
}

gs_status gs_pipe_scan_exact(gs_pipe *p, const gs_exact *carry_in)
{
    const gs_ring_scalars start = scalars_of(gs_acc_identity(p->type, p->op), carry_in);
    gs_ring_scalars end;
    return run_pass(p, 1, &start, &end);
}

/* ---- host shards ------------------------------------------------------------------- */

static void host_pipe_init(gs_pipe *p, gs_be *be, gs_ring *ring, gs_type type, gs_op op, gs_scan_kind kind,
                           const void *in, void *out, int64_t n, int64_t chunk, int depth)
{
    memset(p, 0, sizeof *p);
    p->be = be;
    p->err = be->err;
    p->ring = ring;
    p->type = type;
    p->op = op;
    p->kind = kind;
    p->count = n;
    p->depth = depth > 0 && depth <= GS_MAX_DEPTH ? depth : GS_PLAN_DEFAULT_DEPTH;
    p->chunk = chunk > 0 ? chunk : gs_plan_default_chunk(n, gs_type_size(type), p->depth);
    if (p->chunk > n && n > 0) p->chunk = n;
    p->steps = ceil_div(n, p->chunk);
    if (p->depth > p->steps) p->depth = p->steps > 0 ? (int)p->steps : 1;
    p->name = "host shard";
    p->in.kind = GS_IO_HOST;
    p->in.host = (void *)in;   /* only read */
    p->out.kind = out ? GS_IO_HOST : GS_IO_NONE;
    p->out.host = out;
}

/* The pass of a host pipeline: a reduction into *partial or *exact, or a
 * scan from carry_in or *exact (the one of the two that p->exact says). */
static gs_status host_pass(gs_pipe *p, gs_acc carry_in, gs_acc *partial, gs_exact *exact)
{
    gs_status st = gs_pipe_open(p);
    if (st == GS_OK && p->out.kind == GS_IO_NONE)
        st = p->exact ? gs_pipe_reduce_exact(p, exact) : gs_pipe_reduce(p, partial);
    else if (st == GS_OK)
        st = p->exact ? gs_pipe_scan_exact(p, exact) : gs_pipe_scan(p, carry_in);
    gs_pipe_close(p);
    return st;
}

gs_status gs_pipe_host_reduce(gs_be *be, gs_ring *ring, gs_type type, gs_op op, const void *in,
                              int64_t n, int64_t chunk, int depth, gs_acc *partial)
{
    gs_pipe p;
    host_pipe_init(&p, be, ring, type, op, GS_INCLUSIVE, in, NULL, n, chunk, depth);
    return host_pass(&p, gs_acc_identity(type, op), partial, NULL);
}

gs_status gs_pipe_host_scan(gs_be *be, gs_ring *ring, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, int64_t chunk, int depth,
                            gs_acc carry_in)
{
    gs_pipe p;
    host_pipe_init(&p, be, ring, type, op, kind, in, out, n, chunk, depth);
    return host_pass(&p, carry_in, NULL, NULL);
}

gs_status gs_pipe_host_exact(gs_be *be, gs_ring *ring, gs_type type, gs_scan_kind kind, const void *in,
                             void *out, int64_t n, gs_exact *state)
{
    gs_pipe p;
    host_pipe_init(&p, be, ring, type, GS_SUM, kind, in, out, n, 0, 0);
    p.exact = 1;
    return host_pass(&p, gs_acc_identity(type, GS_SUM), NULL, state);
}
