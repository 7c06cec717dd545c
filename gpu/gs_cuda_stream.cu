/*
 * gs_cuda_stream.cu - the asynchronous side of the handle, for the streamed
 * pipeline: copies on the copy streams, events that order the streams and
 * time the work on them, and the test for page-locked host memory.
 *
 * Nothing here waits for the GPU except gs_cuda_event_sync.
 */
#include <stdlib.h>

#include "gs_cuda_handle.cuh"

struct gs_cuda_event {
    cudaEvent_t event;
};

/* The stream an index names: GS_CUDA_COMPUTE or a copy stream. */
static gs_status pick_stream(gs_cuda *g, int index, cudaStream_t *stream)
{
    if (index == GS_CUDA_COMPUTE) {
        *stream = g->stream;
        return GS_OK;
    }
    if (index < 0 || index >= GS_CUDA_COPY_STREAMS)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "no stream %d (copy streams 0 to %d)", index,
                                   GS_CUDA_COPY_STREAMS - 1);
    *stream = g->copy_streams[index];
    return GS_OK;
}

static gs_status copy_async(gs_cuda *g, int index, void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, const char *what)
{
    if (bytes == 0) return GS_OK;
    cudaStream_t stream = NULL;   /* set by pick_stream */
    GS_CUDA_PASS(pick_stream(g, index, &stream));
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaMemcpyAsync(dst, src, bytes, kind, stream),
                  "asynchronous %s copy of %zu bytes", what, bytes);
    return GS_OK;
}

gs_status gs_cuda_copy_h2d_async(gs_cuda *g, int stream, void *dst, const void *src, size_t bytes)
{
    return copy_async(g, stream, dst, src, bytes, cudaMemcpyHostToDevice, "host-to-device");
}

gs_status gs_cuda_copy_d2h_async(gs_cuda *g, int stream, void *dst, const void *src, size_t bytes)
{
    return copy_async(g, stream, dst, src, bytes, cudaMemcpyDeviceToHost, "device-to-host");
}

gs_status gs_cuda_event_create(gs_cuda *g, gs_cuda_event **ev)
{
    *ev = NULL;
    GS_CUDA_PASS(gs_cuda_enter(g));
    gs_cuda_event *e = (gs_cuda_event *)calloc(1, sizeof *e);
    if (!e) return gs_cuda_fail_status(g, GS_ERR_NOMEM, "allocating an event: out of host memory");
    /* with timing: the pipeline's phase times come from these events */
    const cudaError_t err = cudaEventCreate(&e->event);
    if (err != cudaSuccess) {
        free(e);
        return gs_cuda_fail(g, err, "cudaEventCreate");
    }
    *ev = e;
    return GS_OK;
}

void gs_cuda_event_destroy(gs_cuda *g, gs_cuda_event *ev)
{
    if (!ev) return;
    /* Nothing to return; a failure is kept as the handle's message. */
    const cudaError_t err = cudaEventDestroy(ev->event);
    if (err != cudaSuccess) gs_cuda_fail(g, err, "cudaEventDestroy");
    free(ev);
}

gs_status gs_cuda_event_record(gs_cuda *g, gs_cuda_event *ev, int stream)
{
    cudaStream_t s = NULL;   /* set by pick_stream */
    GS_CUDA_PASS(pick_stream(g, stream, &s));
    GS_CUDA_CHECK(g, cudaEventRecord(ev->event, s), "recording an event on stream %d", stream);
    return GS_OK;
}

gs_status gs_cuda_stream_wait_event(gs_cuda *g, int waiter, gs_cuda_event *ev)
{
    cudaStream_t s = NULL;   /* set by pick_stream */
    GS_CUDA_PASS(pick_stream(g, waiter, &s));
    GS_CUDA_CHECK(g, cudaStreamWaitEvent(s, ev->event, 0), "making stream %d wait for an event",
                  waiter);
    return GS_OK;
}

gs_status gs_cuda_event_sync(gs_cuda *g, gs_cuda_event *ev)
{
    /* an asynchronous failure of any work before the event surfaces here */
    GS_CUDA_CHECK(g, cudaEventSynchronize(ev->event), "waiting for the GPU");
    return GS_OK;
}

gs_status gs_cuda_event_elapsed(gs_cuda *g, gs_cuda_event *start, gs_cuda_event *end,
                                double *seconds)
{
    float ms = 0;
    GS_CUDA_CHECK(g, cudaEventElapsedTime(&ms, start->event, end->event),
                  "reading the time between two events");
    *seconds = 1e-3 * ms;
    return GS_OK;
}

/* Page-locked: allocated by cudaHostAlloc or registered with cudaHostRegister. */
static int pinned_byte(const void *p)
{
    cudaPointerAttributes attr;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();   /* an unknown pointer is pageable host memory */
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}

int gs_cuda_is_pinned(gs_cuda *g, const void *p, size_t bytes)
{
    (void)g;
    if (!p || bytes == 0) return 0;
    /* both ends: a range that runs past a pinned allocation is no use to an
     * asynchronous copy */
    return pinned_byte(p) && pinned_byte((const char *)p + bytes - 1);
}
