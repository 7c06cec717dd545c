/*
 * gs_cuda_ceiling.cu - copy bandwidths measured with cudaMemcpyAsync and
 * CUDA events: what the runtime's own copy engine and copy kernels reach is
 * the ceiling that gpuscan's kernels are held against.
 */
#include <algorithm>

#include "gs_cuda_ceiling.h"
#include "gs_cuda_kernels.cuh"

/* The buffers and events of one measurement; whatever exists is released
 * however the measurement ends. */
struct copy_setup {
    void *src = nullptr, *dst = nullptr;
    bool pinned_src = false;
    cudaEvent_t start = nullptr, stop = nullptr;
};

static gs_status acquire(gs_cuda *g, copy_setup *s, size_t bytes)
{
    if (s->pinned_src)
        GS_CUDA_CHECK(g, cudaMallocHost(&s->src, bytes), "cudaMallocHost of %zu bytes for the copy ceiling", bytes);
    else
        GS_CUDA_CHECK(g, cudaMalloc(&s->src, bytes), "cudaMalloc of %zu bytes for the copy ceiling", bytes);
    GS_CUDA_CHECK(g, cudaMalloc(&s->dst, bytes), "cudaMalloc of %zu bytes for the copy ceiling", bytes);
    /* touch every page of the source, so that no copy pays for first use */
    if (s->pinned_src)
        memset(s->src, 1, bytes);
    else
        GS_CUDA_CHECK(g, cudaMemsetAsync(s->src, 1, bytes, g->stream), "filling the copy ceiling's source");
    GS_CUDA_CHECK(g, cudaEventCreate(&s->start), "creating a CUDA event");
    GS_CUDA_CHECK(g, cudaEventCreate(&s->stop), "creating a CUDA event");
    return GS_OK;
}

static void release(copy_setup *s)
{
    /* errors are of no use any more: free what exists, whatever fails */
    if (s->pinned_src) cudaFreeHost(s->src); else cudaFree(s->src);
    cudaFree(s->dst);
    if (s->start) cudaEventDestroy(s->start);
    if (s->stop) cudaEventDestroy(s->stop);
    cudaGetLastError();
}

/* Milliseconds of each of `reps` copies, after one untimed copy. */
static gs_status time_copies(gs_cuda *g, const copy_setup *s, size_t bytes, int reps, float *ms)
{
    const cudaMemcpyKind kind = s->pinned_src ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice;
    GS_CUDA_CHECK(g, cudaMemcpyAsync(s->dst, s->src, bytes, kind, g->stream), "copy of %zu bytes", bytes);
    for (int i = 0; i < reps; i++) {
        GS_CUDA_CHECK(g, cudaEventRecord(s->start, g->stream), "recording a CUDA event");
        GS_CUDA_CHECK(g, cudaMemcpyAsync(s->dst, s->src, bytes, kind, g->stream), "copy of %zu bytes", bytes);
        GS_CUDA_CHECK(g, cudaEventRecord(s->stop, g->stream), "recording a CUDA event");
        GS_CUDA_CHECK(g, cudaEventSynchronize(s->stop), "waiting for a copy of %zu bytes", bytes);
        GS_CUDA_CHECK(g, cudaEventElapsedTime(&ms[i], s->start, s->stop), "reading a copy's time");
    }
    return GS_OK;
}

gs_status gs_cuda_copy_bandwidth(gs_cuda *g, gs_cuda_copy_kind kind, size_t bytes, int reps,
                                 double *gbps)
{
    *gbps = 0;
    if (kind != GS_CUDA_COPY_D2D && kind != GS_CUDA_COPY_H2D)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "copy ceiling: unknown copy kind %d", (int)kind);
    if (bytes == 0 || reps < 1 || reps > GS_CUDA_CEILING_MAX_REPS)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "copy ceiling: %zu bytes, %d copies (1 to %d)",
                                   bytes, reps, GS_CUDA_CEILING_MAX_REPS);
    GS_CUDA_PASS(gs_cuda_enter(g));
    copy_setup s;
    s.pinned_src = kind == GS_CUDA_COPY_H2D;
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
    const double counted = kind == GS_CUDA_COPY_D2D ? 2.0 * (double)bytes : (double)bytes;
    *gbps = counted / (median_ms * 1e-3) * 1e-9;
    return GS_OK;
}
