/*
 * gs_cuda_ceiling.cu - copy bandwidths measured with cudaMemcpyAsync and
 * CUDA events: what the runtime's own copy engine and copy kernels reach is
 * the ceiling that gpuscan's kernels are held against.
 */
#include <string.h>

#include <algorithm>

#include "gs_cuda_ceiling.h"
#include "gs_cuda_handle.cuh"

/* The buffers and events of one measurement; whatever exists is released
 * however the measurement ends. A duplex measurement has a second copy
 * (back_src to back_dst, device to host) and an end event per copy stream. */
struct copy_setup {
    gs_cuda_copy_kind kind = GS_CUDA_COPY_D2D;
    void *src = nullptr, *dst = nullptr;
    void *back_src = nullptr, *back_dst = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEvent_t ends[GS_CUDA_COPY_STREAMS] = {};
};

static bool host_source(const copy_setup *s) { return s->kind != GS_CUDA_COPY_D2D; }

static gs_status alloc_pinned(gs_cuda *g, void **p, size_t bytes)
{
    GS_CUDA_CHECK(g, cudaMallocHost(p, bytes), "cudaMallocHost of %zu bytes for the copy ceiling", bytes);
    return GS_OK;
}

static gs_status alloc_device(gs_cuda *g, void **p, size_t bytes)
{
    GS_CUDA_CHECK(g, cudaMalloc(p, bytes), "cudaMalloc of %zu bytes for the copy ceiling", bytes);
    return GS_OK;
}

static gs_status acquire(gs_cuda *g, copy_setup *s, size_t bytes)
{
    GS_CUDA_PASS(host_source(s) ? alloc_pinned(g, &s->src, bytes) : alloc_device(g, &s->src, bytes));
    GS_CUDA_PASS(alloc_device(g, &s->dst, bytes));
    /* touch every page of the sources and host destinations, so that no
     * copy pays for first use */
    if (host_source(s))
        memset(s->src, 1, bytes);
    else
        GS_CUDA_CHECK(g, cudaMemsetAsync(s->src, 1, bytes, g->stream), "filling the copy ceiling's source");
    if (s->kind == GS_CUDA_COPY_DUPLEX) {
        GS_CUDA_PASS(alloc_device(g, &s->back_src, bytes));
        GS_CUDA_PASS(alloc_pinned(g, &s->back_dst, bytes));
        memset(s->back_dst, 0, bytes);
        GS_CUDA_CHECK(g, cudaMemsetAsync(s->back_src, 1, bytes, g->stream), "filling the copy ceiling's source");
        for (int i = 0; i < GS_CUDA_COPY_STREAMS; i++)
            GS_CUDA_CHECK(g, cudaEventCreateWithFlags(&s->ends[i], cudaEventDisableTiming), "creating a CUDA event");
    }
    GS_CUDA_CHECK(g, cudaEventCreate(&s->start), "creating a CUDA event");
    GS_CUDA_CHECK(g, cudaEventCreate(&s->stop), "creating a CUDA event");
    return GS_OK;
}

static void release(copy_setup *s)
{
    /* errors are of no use any more: free what exists, whatever fails */
    if (host_source(s)) cudaFreeHost(s->src); else cudaFree(s->src);
    cudaFree(s->dst);
    cudaFree(s->back_src);
    cudaFreeHost(s->back_dst);
    for (cudaEvent_t e : {s->start, s->stop, s->ends[0], s->ends[1]})
        if (e) cudaEventDestroy(e);
    cudaGetLastError();
}

/* One copy between s->start and s->stop on g's stream; a duplex copy forks
 * its two halves onto the copy streams the pipeline uses (in, out) and
 * joins them back. */
static gs_status queue_copy(gs_cuda *g, const copy_setup *s, size_t bytes)
{
    GS_CUDA_CHECK(g, cudaEventRecord(s->start, g->stream), "recording a CUDA event");
    if (s->kind != GS_CUDA_COPY_DUPLEX) {
        const cudaMemcpyKind kind = host_source(s) ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
        GS_CUDA_CHECK(g, cudaMemcpyAsync(s->dst, s->src, bytes, kind, g->stream), "copy of %zu bytes", bytes);
    } else {
        for (int i = 0; i < GS_CUDA_COPY_STREAMS; i++) {
            cudaStream_t cs = g->copy_streams[i];
            GS_CUDA_CHECK(g, cudaStreamWaitEvent(cs, s->start, 0), "ordering the copy streams");
            GS_CUDA_CHECK(g, i == 0 ? cudaMemcpyAsync(s->dst, s->src, bytes, cudaMemcpyHostToDevice, cs)
                                    : cudaMemcpyAsync(s->back_dst, s->back_src, bytes, cudaMemcpyDeviceToHost, cs),
                          "copy of %zu bytes", bytes);
            GS_CUDA_CHECK(g, cudaEventRecord(s->ends[i], cs), "recording a CUDA event");
            GS_CUDA_CHECK(g, cudaStreamWaitEvent(g->stream, s->ends[i], 0), "ordering the copy streams");
        }
    }
    GS_CUDA_CHECK(g, cudaEventRecord(s->stop, g->stream), "recording a CUDA event");
    return GS_OK;
}

/* Milliseconds of each of `reps` copies, after one untimed copy. */
static gs_status time_copies(gs_cuda *g, const copy_setup *s, size_t bytes, int reps, float *ms)
{
    GS_CUDA_PASS(queue_copy(g, s, bytes));
    for (int i = 0; i < reps; i++) {
        GS_CUDA_PASS(queue_copy(g, s, bytes));
        GS_CUDA_CHECK(g, cudaEventSynchronize(s->stop), "waiting for a copy of %zu bytes", bytes);
        GS_CUDA_CHECK(g, cudaEventElapsedTime(&ms[i], s->start, s->stop), "reading a copy's time");
    }
    return GS_OK;
}

gs_status gs_cuda_copy_bandwidth(gs_cuda *g, gs_cuda_copy_kind kind, size_t bytes, int reps,
                                 double *gbps)
{
    *gbps = 0;
    if (kind != GS_CUDA_COPY_D2D && kind != GS_CUDA_COPY_H2D && kind != GS_CUDA_COPY_DUPLEX)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "copy ceiling: unknown copy kind %d", (int)kind);
    if (bytes == 0 || reps < 1 || reps > GS_CUDA_CEILING_MAX_REPS)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "copy ceiling: %zu bytes, %d copies (1 to %d)",
                                   bytes, reps, GS_CUDA_CEILING_MAX_REPS);
    GS_CUDA_PASS(gs_cuda_enter(g));
    copy_setup s;
    s.kind = kind;
    float ms[GS_CUDA_CEILING_MAX_REPS];
    gs_status status = acquire(g, &s, bytes);
    if (status == GS_OK) status = time_copies(g, &s, bytes, reps, ms);
    release(&s);
    if (status != GS_OK) return status;

    /* the median: robust against a copy that met a clock change or a neighbour */
    std::sort(ms, ms + reps);
    const double median_ms = reps % 2 ? ms[reps / 2] : 0.5 * (ms[reps / 2 - 1] + ms[reps / 2]);
    if (median_ms <= 0)
        return gs_cuda_fail_status(g, GS_ERR_CUDA, "copy ceiling: a copy of %zu bytes took no time", bytes);
    /* read plus written, or both directions of the link */
    const double counted = kind == GS_CUDA_COPY_H2D ? (double)bytes : 2.0 * (double)bytes;
    *gbps = counted / (median_ms * 1e-3) * 1e-9;
    return GS_OK;
}
