/*
 * gs_pipe.c - the chunk pipeline (gs_pipe.h, docs/STREAMING.md).
 *
 * A pass runs steps k = 0, 1, ...: step k takes chunk k in (stage_in: free
 * its ring slot, read it, queue its copy to the device, its kernel and, in a
 * scan, its copy back) and, in a scan, takes chunk k-depth+1 out (stage_out:
 * wait for it on the host, write it). So the host reads chunk k and writes
 * chunk k-depth+1 while the GPU copies and computes the chunks between, and
 * the host waits for the GPU only where it reuses a slot or writes a chunk.
 *
 * Chunk k's kernel waits for its copy in through an event, its copy out for
 * its kernel through another; kernels run in order on the compute stream,
 * which carries the reduction accumulator or the scan carry from chunk to
 * chunk in device memory. A slot is reused only after the host has seen the
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
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_cpu.h"
#include "gs_pipe.h"
#ifdef HAVE_CUDA
#include "gs_cuda.h"
#endif

/* The default chunk: tens of MiB keep the per-chunk costs (a kernel launch,
 * a few events, an agreement) below 1% of a chunk's copy at PCIe speed. */
#define GS_PIPE_CHUNK_BYTES ((int64_t)32 << 20)
#define GS_PIPE_MIN_CHUNK_BYTES ((int64_t)1 << 20)
/* Chunks in the ring and the resident buffers start aligned to the
 * kernels' 16-byte vector loads (see chunk_stride). */
#define GS_PIPE_ALIGN 16
/* Share of the free device memory the shard's buffers may take. */
#define GS_DEVICE_MEM_SHARE 0.85
/* The phases timed by CUDA events: READ (the generator on the device),
 * H2D, COMPUTE and D2H, the first entries of gs_phase. */
#define GS_GPU_PHASES (GS_PHASE_D2H + 1)
/* The copy streams: chunks in, chunks out. */
enum { GS_COPY_IN = 0, GS_COPY_OUT = 1 };

/* Memory that only grows, kept from call to call. */
typedef struct gs_buffer {
    void *p;
    size_t bytes;
} gs_buffer;

typedef enum gs_mem { GS_MEM_HOST, GS_MEM_PINNED, GS_MEM_DEVICE } gs_mem;

/* A pass's running value, in device memory on the CUDA backend. */
typedef struct gs_pipe_scalars {
    gs_acc value;        /* the reduction accumulator, or the scan carry */
    uint32_t overflow;   /* non-zero once a prefix sum overflowed */
} gs_pipe_scalars;

struct gs_ring {
    gs_buffer h_in, h_out;   /* host slots: pinned (CUDA) or plain (CPU, streamed) */
    gs_buffer d_in, d_out;   /* device slots (CUDA, streamed) */
    gs_buffer h_flags;       /* pinned: each slot's copy of the overflow flag (CUDA scans) */
    gs_buffer d_scalars;     /* device: one gs_pipe_scalars (CUDA) */
#ifdef HAVE_CUDA
    gs_cuda_event *ev[GS_MAX_DEPTH][GS_GPU_PHASES][2];   /* each slot's phases: begin, end */
    gs_cuda_event *drain[1 + GS_CUDA_COPY_STREAMS];      /* the end of every stream */
#endif
};

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static double since(double t0) { return gs_now() - t0; }

/* ---- memory ---------------------------------------------------------------------- */

/* A failure of the CUDA backend, recorded as this rank's (the CPU backend's
 * steps do not fail). */
static gs_status gpu_failed(gs_context *ctx, gs_status st)
{
#ifdef HAVE_CUDA
    if (st != GS_OK) return gs_fail(ctx, st, "%s", gs_cuda_error(ctx->cuda));
#else
    (void)ctx;
#endif
    return st;
}

static gs_status mem_alloc(gs_context *ctx, gs_mem mem, void **p, size_t bytes)
{
    *p = NULL;
    if (bytes == 0) return GS_OK;
    if (mem == GS_MEM_HOST) {
        *p = malloc(bytes);
        return *p ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", bytes);
    }
#ifdef HAVE_CUDA
    return gpu_failed(ctx, mem == GS_MEM_PINNED ? gs_cuda_host_alloc(ctx->cuda, p, bytes)
                                                : gs_cuda_malloc(ctx->cuda, p, bytes));
#else
    return gs_fail(ctx, GS_ERR_UNSUPPORTED, "no GPU memory in a build without CUDA");
#endif
}

static void mem_free(gs_context *ctx, gs_mem mem, void *p)
{
    if (mem == GS_MEM_HOST) {
        free(p);
        return;
    }
#ifdef HAVE_CUDA
    if (mem == GS_MEM_PINNED) gs_cuda_host_free(ctx->cuda, p);
    else gs_cuda_free(ctx->cuda, p);
#else
    (void)ctx;   /* nothing but host memory is ever allocated */
#endif
}

/* Grow b to at least `bytes` (its contents are not kept). */
static gs_status reserve(gs_context *ctx, gs_buffer *b, gs_mem mem, size_t bytes)
{
    if (bytes <= b->bytes) return GS_OK;
    mem_free(ctx, mem, b->p);
    b->p = NULL;
    b->bytes = 0;
    GS_CHECK(mem_alloc(ctx, mem, &b->p, bytes));
    b->bytes = bytes;
    return GS_OK;
}

/* Host slots are pinned where a GPU copies them; the shard's buffers live on
 * the backend. */
static gs_mem host_mem(const gs_context *ctx) { return ctx->cuda ? GS_MEM_PINNED : GS_MEM_HOST; }
static gs_mem backend_mem(const gs_context *ctx) { return ctx->cuda ? GS_MEM_DEVICE : GS_MEM_HOST; }

void gs_ring_free(gs_context *ctx)
{
    struct gs_ring *ring = ctx->ring;
    if (!ring) return;
    mem_free(ctx, host_mem(ctx), ring->h_in.p);
    mem_free(ctx, host_mem(ctx), ring->h_out.p);
    mem_free(ctx, GS_MEM_DEVICE, ring->d_in.p);
    mem_free(ctx, GS_MEM_DEVICE, ring->d_out.p);
    mem_free(ctx, GS_MEM_PINNED, ring->h_flags.p);
    mem_free(ctx, GS_MEM_DEVICE, ring->d_scalars.p);
#ifdef HAVE_CUDA
    for (int s = 0; s < GS_MAX_DEPTH; s++)
        for (int ph = 0; ph < GS_GPU_PHASES; ph++)
            for (int i = 0; i < 2; i++) gs_cuda_event_destroy(ctx->cuda, ring->ev[s][ph][i]);
    for (int i = 0; i < 1 + GS_CUDA_COPY_STREAMS; i++) gs_cuda_event_destroy(ctx->cuda, ring->drain[i]);
#endif
    free(ring);
    ctx->ring = NULL;
}

/* ---- planning ------------------------------------------------------------------ */

/* Bytes from one chunk's start to the next in the ring and in the resident
 * buffers: a whole multiple of GS_PIPE_ALIGN, so that every chunk starts
 * aligned alike and the kernels split it alike, resident or streamed (float
 * results depend on the split). */
static size_t stride_of(int64_t chunk, size_t size)
{
    return ((size_t)chunk * size + GS_PIPE_ALIGN - 1) / GS_PIPE_ALIGN * GS_PIPE_ALIGN;
}

uint64_t gs_pipe_resident_bytes(int64_t count, int64_t chunk, size_t in_size, size_t out_size)
{
    return (uint64_t)ceil_div(count, chunk) * (stride_of(chunk, in_size) + stride_of(chunk, out_size));
}

uint64_t gs_pipe_ring_bytes(int64_t chunk, int depth, size_t in_size, size_t out_size)
{
    return (uint64_t)depth * (stride_of(chunk, in_size) + stride_of(chunk, out_size));
}

int64_t gs_pipe_fit_chunk(uint64_t budget, int depth, size_t in_size, size_t out_size)
{
    int64_t chunk = (int64_t)(budget / ((uint64_t)depth * (in_size + out_size)));
    while (chunk > 0 && gs_pipe_ring_bytes(chunk, depth, in_size, out_size) > budget) chunk--;
    return chunk;
}

int64_t gs_pipe_default_chunk(int64_t largest, size_t in_size, int depth)
{
    int64_t chunk = GS_PIPE_CHUNK_BYTES / (int64_t)in_size;
    int64_t least = GS_PIPE_MIN_CHUNK_BYTES / (int64_t)in_size;
    int64_t spread = ceil_div(largest, 2 * (int64_t)depth);
    if (spread < chunk) chunk = spread > least ? spread : least;
    return chunk;
}

/* Bytes of memory the backend has free: 85% of the device's (CUDA), half
 * of the machine's (CPU). */
static gs_status backend_free_bytes(gs_context *ctx, uint64_t *bytes)
{
#ifdef HAVE_CUDA
    if (ctx->cuda) {
        uint64_t free_bytes = 0, total = 0;
        GS_CHECK(gpu_failed(ctx, gs_cuda_mem_info(ctx->cuda, &free_bytes, &total)));
        *bytes = (uint64_t)((double)free_bytes * GS_DEVICE_MEM_SHARE);
        return GS_OK;
    }
#else
    (void)ctx;   /* the CPU backend's memory is the machine's */
#endif
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (uint64_t)1 << 32;
    return GS_OK;
}

gs_status gs_pipe_memory_budget(gs_context *ctx, uint64_t *bytes)
{
    GS_CHECK(backend_free_bytes(ctx, bytes));
    if (ctx->cfg.device_mem_cap && ctx->cfg.device_mem_cap < *bytes) *bytes = ctx->cfg.device_mem_cap;
    /* test-only: lets the tests make a shard "larger than the GPU" */
    const char *cap = getenv("GS_DEVICE_MEM_CAP");
    if (cap && *cap) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(cap, &end, 10);
        if (*end || errno || *cap == '-')
            return gs_fail(ctx, GS_ERR_ARG, "GS_DEVICE_MEM_CAP=%s: not a byte count", cap);
        if (v < *bytes) *bytes = v;
    }
    return GS_OK;
}

/* ---- where a chunk lies ----------------------------------------------------------- */

static int slot_of(const gs_pipe *p, int64_t k) { return (int)(k % p->depth); }

/* Elements of chunk k on this rank: 0 past the end of its shard. */
static int64_t chunk_len(const gs_pipe *p, int64_t k)
{
    int64_t first = k * p->chunk;
    return first < p->count ? min64(p->chunk, p->count - first) : 0;
}

static size_t chunk_stride(const gs_pipe *p, size_t size) { return stride_of(p->chunk, size); }

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
 * memory (CPU backend), else the chunk's slot on the backend. */
static void *compute_in(const gs_pipe *p, int64_t k)
{
    if (p->resident) return stride_at(p->c_in, k, chunk_stride(p, p->in_size));
    if (!p->on_device && p->in.kind == GS_IO_HOST) return caller_chunk(p, p->in.host, k, p->in_size);
    return slot_at(p, p->on_device ? &p->ring->d_in : &p->ring->h_in, k, p->in_size);
}

static void *compute_out(const gs_pipe *p, int64_t k)
{
    if (p->resident) return stride_at(p->c_out, k, chunk_stride(p, p->out_size));
    if (!p->on_device && p->out.kind == GS_IO_HOST) return caller_chunk(p, p->out.host, k, p->out_size);
    return slot_at(p, p->on_device ? &p->ring->d_out : &p->ring->h_out, k, p->out_size);
}

/* Where chunk k lies on the host on its way in and out: the caller's
 * page-locked memory, else the chunk's pinned slot. On the CPU backend the
 * host is the backend. */
static void *staged_in(const gs_pipe *p, int64_t k)
{
    if (!p->on_device) return compute_in(p, k);
    if (p->in_pinned) return caller_chunk(p, p->in.host, k, p->in_size);
    return slot_at(p, &p->ring->h_in, k, p->in_size);
}

static void *staged_out(const gs_pipe *p, int64_t k)
{
    if (!p->on_device) return compute_out(p, k);
    if (p->out_pinned) return caller_chunk(p, p->out.host, k, p->out_size);
    return slot_at(p, &p->ring->h_out, k, p->out_size);
}

/* ---- the ring ------------------------------------------------------------------- */

#ifdef HAVE_CUDA
static gs_status create_event(gs_context *ctx, gs_cuda_event **ev)
{
    return *ev ? GS_OK : gpu_failed(ctx, gs_cuda_event_create(ctx->cuda, ev));
}

/* The events of the first `depth` slots and of the drain, where missing. */
static gs_status create_events(gs_context *ctx, struct gs_ring *ring, int depth)
{
    for (int s = 0; s < depth; s++)
        for (int ph = 0; ph < GS_GPU_PHASES; ph++)
            for (int i = 0; i < 2; i++) GS_CHECK(create_event(ctx, &ring->ev[s][ph][i]));
    for (int i = 0; i < 1 + GS_CUDA_COPY_STREAMS; i++) GS_CHECK(create_event(ctx, &ring->drain[i]));
    return GS_OK;
}
#endif

/* The ring slots this pipeline needs: host slots where its input or output
 * passes through the host (reads and writes, pageable memory, the
 * reference's view), device slots where the shard is not resident. */
static gs_status reserve_ring(gs_pipe *p)
{
    gs_context *ctx = p->ctx;
    if (!ctx->ring && !(ctx->ring = calloc(1, sizeof *ctx->ring)))
        return gs_fail(ctx, GS_ERR_NOMEM, "cannot allocate the pipeline's ring");
    struct gs_ring *ring = p->ring = ctx->ring;
    const int scans = p->out.kind != GS_IO_NONE;
    const size_t in_slots = (size_t)p->depth * chunk_stride(p, p->in_size);
    const size_t out_slots = (size_t)p->depth * chunk_stride(p, p->out_size);
    int stage_in, stage_out;
    if (p->on_device) {
        stage_in = !p->in_pinned && (p->in.kind != GS_IO_GENERATE || p->want_host_input);
        stage_out = scans && !p->out_pinned;
    } else {
        stage_in = !p->resident && p->in.kind != GS_IO_HOST;
        stage_out = scans && !p->resident && p->out.kind != GS_IO_HOST;
    }
    if (stage_in) GS_CHECK(reserve(ctx, &ring->h_in, host_mem(ctx), in_slots));
    if (stage_out) GS_CHECK(reserve(ctx, &ring->h_out, host_mem(ctx), out_slots));
#ifdef HAVE_CUDA
    if (p->on_device) {
        if (!p->resident) GS_CHECK(reserve(ctx, &ring->d_in, GS_MEM_DEVICE, in_slots));
        if (!p->resident && scans) GS_CHECK(reserve(ctx, &ring->d_out, GS_MEM_DEVICE, out_slots));
        if (scans) GS_CHECK(reserve(ctx, &ring->h_flags, GS_MEM_PINNED, GS_MAX_DEPTH * sizeof(uint32_t)));
        GS_CHECK(reserve(ctx, &ring->d_scalars, GS_MEM_DEVICE, sizeof(gs_pipe_scalars)));
        GS_CHECK(create_events(ctx, ring, p->depth));
    }
#endif
    return GS_OK;
}

/* ---- opening ------------------------------------------------------------------ */

gs_status gs_pipe_open(gs_pipe *p)
{
    gs_context *ctx = p->ctx;
    const int scans = p->out.kind != GS_IO_NONE;
    p->on_device = ctx->cuda != NULL;
    p->in_size = gs_type_size(p->type);
    p->out_size = scans ? gs_type_size(gs_scan_output_type(p->type, p->op)) : 0;
    p->in_pinned = p->out_pinned = 0;
#ifdef HAVE_CUDA
    if (p->on_device && p->in.kind == GS_IO_HOST)
        p->in_pinned = gs_cuda_is_pinned(ctx->cuda, p->in.host, (size_t)p->count * p->in_size);
    if (p->on_device && p->out.kind == GS_IO_HOST)
        p->out_pinned = gs_cuda_is_pinned(ctx->cuda, p->out.host, (size_t)p->count * p->out_size);
#endif
    p->loaded = 0;
    p->c_in = p->c_out = NULL;
    GS_CHECK(reserve_ring(p));
    if (!p->resident) return GS_OK;
    const size_t chunks = (size_t)ceil_div(p->count, p->chunk);
    GS_CHECK(mem_alloc(ctx, backend_mem(ctx), &p->c_in, chunks * chunk_stride(p, p->in_size)));
    return scans ? mem_alloc(ctx, backend_mem(ctx), &p->c_out, chunks * chunk_stride(p, p->out_size))
                 : GS_OK;
}

void gs_pipe_close(gs_pipe *p)
{
    mem_free(p->ctx, backend_mem(p->ctx), p->c_in);
    mem_free(p->ctx, backend_mem(p->ctx), p->c_out);
    p->c_in = p->c_out = NULL;
}

/* ---- the GPU's side of a chunk ------------------------------------------------------ */

static gs_status overflowed(gs_pipe *p)
{
    return gs_fail(p->ctx, GS_ERR_OVERFLOW, "%s: a 64-bit prefix sum of the %s elements overflowed",
                   p->name, gs_type_name(p->type));
}

#ifdef HAVE_CUDA
/* Record the begin (end = 0) or end (1) of `phase` of the chunk in slot s. */
static gs_status mark(gs_pipe *p, int s, gs_phase phase, int end, int stream)
{
    gs_status st = gpu_failed(p->ctx, gs_cuda_event_record(p->ctx->cuda, p->ring->ev[s][phase][end], stream));
    if (st == GS_OK && end) p->slot[s].timed |= 1u << phase;
    return st;
}

static gs_status copy_in(gs_pipe *p, int64_t k, int s, int64_t m)
{
    gs_cuda *g = p->ctx->cuda;
    GS_CHECK(mark(p, s, GS_PHASE_H2D, 0, GS_COPY_IN));
    GS_CHECK(gpu_failed(p->ctx, gs_cuda_copy_h2d_async(g, GS_COPY_IN, compute_in(p, k), staged_in(p, k),
                                                        (size_t)m * p->in_size)));
    return mark(p, s, GS_PHASE_H2D, 1, GS_COPY_IN);
}

/* Chunk k's output, and the overflow flag as it stands after it, back to
 * the host once its kernel is done. */
static gs_status copy_out(gs_pipe *p, int64_t k, int s, int64_t m)
{
    gs_cuda *g = p->ctx->cuda;
    gs_pipe_scalars *d = p->ring->d_scalars.p;
    uint32_t *flags = p->ring->h_flags.p;
    GS_CHECK(gpu_failed(p->ctx, gs_cuda_stream_wait_event(g, GS_COPY_OUT, p->ring->ev[s][GS_PHASE_COMPUTE][1])));
    GS_CHECK(mark(p, s, GS_PHASE_D2H, 0, GS_COPY_OUT));
    GS_CHECK(gpu_failed(p->ctx, gs_cuda_copy_d2h_async(g, GS_COPY_OUT, staged_out(p, k), compute_out(p, k),
                                                        (size_t)m * p->out_size)));
    GS_CHECK(gpu_failed(p->ctx, gs_cuda_copy_d2h_async(g, GS_COPY_OUT, &flags[s], &d->overflow,
                                                        sizeof flags[s])));
    return mark(p, s, GS_PHASE_D2H, 1, GS_COPY_OUT);
}

/* Queue chunk k's kernel after its copy in, chained to the previous
 * chunk's through the device accumulator or carry. */
static gs_status compute_on_gpu(gs_pipe *p, int64_t k, int s, int64_t m)
{
    gs_cuda *g = p->ctx->cuda;
    gs_pipe_scalars *d = p->ring->d_scalars.p;
    if (p->slot[s].timed & (1u << GS_PHASE_H2D))
        GS_CHECK(gpu_failed(p->ctx, gs_cuda_stream_wait_event(g, GS_CUDA_COMPUTE, p->ring->ev[s][GS_PHASE_H2D][1])));
    GS_CHECK(mark(p, s, GS_PHASE_COMPUTE, 0, GS_CUDA_COMPUTE));
    gs_status st = p->scanning
        ? gs_cuda_scan_async(g, p->type, p->op, p->kind, compute_in(p, k), compute_out(p, k), m,
                             &d->value, &d->overflow)
        : gs_cuda_reduce_async(g, p->type, p->op, compute_in(p, k), m, &d->value);
    GS_CHECK(gpu_failed(p->ctx, st));
    GS_CHECK(mark(p, s, GS_PHASE_COMPUTE, 1, GS_CUDA_COMPUTE));
    return p->scanning ? copy_out(p, k, s, m) : GS_OK;
}

/* Add up the event times of the chunk in slot s; its events are complete. */
static gs_status collect_times(gs_pipe *p, int s)
{
    for (int ph = 0; ph < GS_GPU_PHASES; ph++) {
        if (!(p->slot[s].timed & (1u << ph))) continue;
        double seconds = 0;
        GS_CHECK(gs_cuda_event_elapsed(p->ctx->cuda, p->ring->ev[s][ph][0], p->ring->ev[s][ph][1], &seconds));
        p->t[ph] += seconds;
    }
    return GS_OK;
}
#endif

/* Free slot s: wait for the last event of its chunk (every other event of
 * the chunk comes before it: a copy out waits for the kernel, the kernel for
 * the copy in or the generator) and add up the chunk's times. Returns the
 * backend's status without recording a message (see drain). */
static gs_status recycle(gs_pipe *p, int s)
{
    gs_status st = GS_OK;
#ifdef HAVE_CUDA
    unsigned timed = p->slot[s].timed;
    if (p->on_device && timed) {
        int last = GS_GPU_PHASES - 1;
        while (!(timed & (1u << last))) last--;
        st = gs_cuda_event_sync(p->ctx->cuda, p->ring->ev[s][last][1]);
        if (st == GS_OK) st = collect_times(p, s);
    }
#endif
    p->slot[s].timed = 0;
    p->slot[s].host_in = NULL;
    return st;
}

/* Wait until every stream is idle, then free every slot: after a failure
 * too, since nothing may still read or write the ring when it is reused.
 * `st` is the pass's status so far; only a first failure records its
 * message. */
static gs_status drain(gs_pipe *p, gs_status st)
{
#ifdef HAVE_CUDA
    for (int i = 0; p->on_device && i < 1 + GS_CUDA_COPY_STREAMS; i++) {
        const int stream = i == 0 ? GS_CUDA_COMPUTE : i - 1;
        gs_status ds = gs_cuda_event_record(p->ctx->cuda, p->ring->drain[i], stream);
        if (ds == GS_OK) ds = gs_cuda_event_sync(p->ctx->cuda, p->ring->drain[i]);
        if (st == GS_OK && ds != GS_OK) st = gpu_failed(p->ctx, ds);
    }
#endif
    for (int s = 0; s < p->depth; s++) {
        gs_status rs = recycle(p, s);
        if (st == GS_OK && rs != GS_OK) st = gpu_failed(p->ctx, rs);
    }
    return st;
}

/* ---- the host's side of a chunk ---------------------------------------------------- */

/* Collective read of chunk k's input into `dst`: m elements, or nothing from
 * a rank that failed already (`st`), which only keeps the count of calls. */
static gs_status read_chunk(gs_pipe *p, int64_t k, int64_t m, void *dst, gs_status st, gs_phase phase)
{
    double t0 = gs_now();
    gs_status rs = gs_mpiio_read_at(p->ctx, p->in.file, p->in.offset + (uint64_t)(k * p->chunk) * p->in_size,
                                    dst, st == GS_OK ? (uint64_t)m * p->in_size : 0);
    p->t[phase] += since(t0);
    return st == GS_OK ? rs : st;
}

static gs_status generate(gs_pipe *p, int64_t k, int s, int64_t m)
{
    const int64_t start = p->in.start + k * p->chunk;
#ifdef HAVE_CUDA
    if (p->on_device) {
        /* on the compute stream, where the kernel that reads it comes next */
        GS_CHECK(mark(p, s, GS_PHASE_READ, 0, GS_CUDA_COMPUTE));
        GS_CHECK(gpu_failed(p->ctx, gs_cuda_generate(p->ctx->cuda, p->type, p->in.seed, start, m,
                                                      compute_in(p, k))));
        return mark(p, s, GS_PHASE_READ, 1, GS_CUDA_COMPUTE);
    }
#endif
    (void)s;
    double t0 = gs_now();
    gs_cpu_generate(p->type, p->in.seed, start, m, compute_in(p, k));
    p->t[GS_PHASE_READ] += since(t0);
    return GS_OK;
}

/* Bring chunk k's input to where it is computed from; *host_in: where it
 * lies on the host on the way, if it passes there. */
static gs_status load(gs_pipe *p, int64_t k, int s, int64_t m, gs_status st, const void **host_in)
{
    void *staged = staged_in(p, k);
    if (p->in.kind == GS_IO_GENERATE) {
        if (st == GS_OK && m > 0) st = generate(p, k, s, m);
        *host_in = p->on_device ? NULL : staged;
        return st;
    }
    if (p->in.kind == GS_IO_FILE) {
        st = read_chunk(p, k, m, staged, st, GS_PHASE_READ);
    } else if (st == GS_OK && p->on_device && !p->in_pinned) {
        double t0 = gs_now();
        gs_cpu_copy(staged, caller_chunk(p, p->in.host, k, p->in_size), (size_t)m * p->in_size);
        p->t[GS_PHASE_READ] += since(t0);
    }
    *host_in = staged;
#ifdef HAVE_CUDA
    if (st == GS_OK && p->on_device && m > 0) st = copy_in(p, k, s, m);
#endif
    return st;
}

/* The reference's copy of chunk k's input where the input never passed
 * through the host (generated on the GPU, or resident there since the first
 * pass): generated again, or read again (collectively), into the chunk's
 * host slot. Counted as verification time. */
static gs_status reference_input(gs_pipe *p, int64_t k, int64_t m, gs_status st, const void **host_in)
{
    void *dst = staged_in(p, k);
    *host_in = dst;
    if (p->in.kind == GS_IO_FILE) return read_chunk(p, k, m, dst, st, GS_PHASE_VERIFY);
    double t0 = gs_now();
    if (st == GS_OK) gs_cpu_generate(p->type, p->in.seed, p->in.start + k * p->chunk, m, dst);
    p->t[GS_PHASE_VERIFY] += since(t0);
    return st;
}

/* Run (CPU) or queue (CUDA) chunk k's reduction or scan. */
static gs_status compute(gs_pipe *p, int64_t k, int s, int64_t m)
{
#ifdef HAVE_CUDA
    if (p->on_device) return compute_on_gpu(p, k, s, m);
#endif
    (void)s;
    double t0 = gs_now();
    gs_status st = GS_OK;
    if (p->scanning) {
        int overflow = 0;
        gs_cpu_scan(p->type, p->op, p->kind, compute_in(p, k), compute_out(p, k), m, p->acc, &p->acc,
                    &overflow);
        if (overflow) st = overflowed(p);
    } else {
        p->acc = gs_acc_combine(p->type, p->op, p->acc, gs_cpu_reduce(p->type, p->op, compute_in(p, k), m));
    }
    p->t[GS_PHASE_COMPUTE] += since(t0);
    return st;
}

/* Chunk k in: free its slot, bring its input, queue its kernel (and in a
 * scan its copy back). In a reduction pass the chunk is then through. Takes
 * part in the collective reads whatever fails on this rank. */
static gs_status stage_in(gs_pipe *p, int64_t k)
{
    const int s = slot_of(p, k);
    const int64_t m = chunk_len(p, k);
    gs_status st = gpu_failed(p->ctx, recycle(p, s));
    const void *host_in = NULL;
    if (!p->loaded) st = load(p, k, s, m, st, &host_in);
    else if (!p->on_device) host_in = compute_in(p, k);
    if (!host_in && p->want_host_input) st = reference_input(p, k, m, st, &host_in);
    p->slot[s].host_in = host_in;
    if (st == GS_OK && m > 0) st = compute(p, k, s, m);
    if (st == GS_OK && !p->scanning && p->chunk_done)
        p->chunk_done(p->chunk_data, k * p->chunk, m, host_in, NULL);
    return st;
}

/* Collective write of chunk j's output from `host_out`, or its copy to the
 * caller's pageable memory; a rank that failed (`st`) writes nothing but
 * keeps the count of calls. */
static gs_status write_chunk(gs_pipe *p, int64_t j, int64_t m, const void *host_out, gs_status st)
{
    double t0 = gs_now();
    if (p->out.kind == GS_IO_FILE) {
        gs_status ws = gs_mpiio_write_at(p->ctx, p->out.file,
                                         p->out.offset + (uint64_t)(j * p->chunk) * p->out_size, host_out,
                                         st == GS_OK ? (uint64_t)m * p->out_size : 0);
        if (st == GS_OK) st = ws;
    } else if (st == GS_OK && p->on_device && !p->out_pinned) {
        gs_cpu_copy(caller_chunk(p, p->out.host, j, p->out_size), host_out, (size_t)m * p->out_size);
    }
    p->t[GS_PHASE_WRITE] += since(t0);
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
#ifdef HAVE_CUDA
    if (st == GS_OK && (p->slot[s].timed & (1u << GS_PHASE_D2H))) {
        st = gpu_failed(p->ctx, gs_cuda_event_sync(p->ctx->cuda, p->ring->ev[s][GS_PHASE_D2H][1]));
        if (st == GS_OK && ((const uint32_t *)p->ring->h_flags.p)[s]) st = overflowed(p);
    }
#endif
    if (st == GS_OK && p->chunk_done) p->chunk_done(p->chunk_data, j * p->chunk, m, p->slot[s].host_in, host_out);
    return write_chunk(p, j, m, host_out, st);
}

/* ---- passes ---------------------------------------------------------------------- */

static gs_status agree(gs_pipe *p, gs_status st)
{
    double t0 = gs_now();
    st = gs_mpi_agree(p->ctx, st);
    p->t[GS_PHASE_MPI] += since(t0);
    return st;
}

/* Start the pass's running value at `start`, with no overflow seen. */
static gs_status begin_pass(gs_pipe *p, int scanning, gs_acc start)
{
    p->scanning = scanning;
    p->acc = start;
    memset(p->slot, 0, sizeof p->slot);
#ifdef HAVE_CUDA
    if (p->on_device) {
        gs_pipe_scalars scalars;
        memset(&scalars, 0, sizeof scalars);
        scalars.value = start;
        return gpu_failed(p->ctx, gs_cuda_copy_h2d(p->ctx->cuda, p->ring->d_scalars.p, &scalars, sizeof scalars));
    }
#endif
    return GS_OK;
}

/* The pass's running value, once the GPU is idle. */
static gs_status end_pass(gs_pipe *p, gs_acc *value)
{
#ifdef HAVE_CUDA
    if (p->on_device) {
        gs_pipe_scalars scalars;
        GS_CHECK(gpu_failed(p->ctx, gs_cuda_copy_d2h(p->ctx->cuda, &scalars, p->ring->d_scalars.p, sizeof scalars)));
        if (scalars.overflow) return overflowed(p);
        *value = scalars.value;
        return GS_OK;
    }
#endif
    *value = p->acc;
    return GS_OK;
}

static gs_status run_pass(gs_pipe *p, int scanning, gs_acc start, gs_acc *value)
{
    /* a scan writes chunk k-depth+1 in the step that reads chunk k */
    const int64_t lag = scanning ? p->depth - 1 : 0;
    gs_status st = begin_pass(p, scanning, start);
    if (p->collective) st = agree(p, st);
    for (int64_t k = 0; st == GS_OK && k < p->steps + lag; k++) {
        gs_status step = k < p->steps ? stage_in(p, k) : GS_OK;
        if (scanning && k >= lag) step = stage_out(p, k - lag, step);
        st = p->collective ? agree(p, step) : step;
    }
    st = drain(p, st);
    if (st == GS_OK) st = end_pass(p, value);
    if (p->collective) st = agree(p, st);
    if (st == GS_OK && p->resident) p->loaded = 1;
    return st;
}

gs_status gs_pipe_reduce(gs_pipe *p, gs_acc *partial)
{
    return run_pass(p, 0, gs_acc_identity(p->type, p->op), partial);
}

gs_status gs_pipe_scan(gs_pipe *p, gs_acc carry_in)
{
    gs_acc carry_out;
    return run_pass(p, 1, carry_in, &carry_out);
}

/* ---- host shards ------------------------------------------------------------------- */

static void host_pipe_init(gs_pipe *p, gs_context *ctx, gs_type type, gs_op op, gs_scan_kind kind,
                           const void *in, void *out, int64_t n, int64_t chunk, int depth)
{
    memset(p, 0, sizeof *p);
    p->ctx = ctx;
    p->type = type;
    p->op = op;
    p->kind = kind;
    p->count = n;
    p->depth = depth > 0 && depth <= GS_MAX_DEPTH ? depth : GS_PIPE_DEFAULT_DEPTH;
    p->chunk = chunk > 0 ? chunk : gs_pipe_default_chunk(n, gs_type_size(type), p->depth);
    if (p->chunk > n && n > 0) p->chunk = n;
    p->steps = ceil_div(n, p->chunk);
    if (p->depth > p->steps) p->depth = p->steps > 0 ? (int)p->steps : 1;
    p->name = "host shard";
    p->in.kind = GS_IO_HOST;
    p->in.host = (void *)in;   /* only read */
    p->out.kind = out ? GS_IO_HOST : GS_IO_NONE;
    p->out.host = out;
}

gs_status gs_pipe_host_reduce(gs_context *ctx, gs_type type, gs_op op, const void *in, int64_t n,
                              int64_t chunk, int depth, gs_acc *partial)
{
    gs_pipe p;
    host_pipe_init(&p, ctx, type, op, GS_INCLUSIVE, in, NULL, n, chunk, depth);
    gs_status st = gs_pipe_open(&p);
    if (st == GS_OK) st = gs_pipe_reduce(&p, partial);
    gs_pipe_close(&p);
    return st;
}

gs_status gs_pipe_host_scan(gs_context *ctx, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, int64_t chunk, int depth,
                            gs_acc carry_in)
{
    gs_pipe p;
    host_pipe_init(&p, ctx, type, op, kind, in, out, n, chunk, depth);
    gs_status st = gs_pipe_open(&p);
    if (st == GS_OK) st = gs_pipe_scan(&p, carry_in);
    gs_pipe_close(&p);
    return st;
}
