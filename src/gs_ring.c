/* gs_ring.c - the pipeline's ring (gs_ring.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>

#include "gs_ring.h"

gs_status gs_ring_create(gs_be *be, gs_ring **out, gs_err *err)
{
    gs_ring *ring = calloc(1, sizeof *ring);
    *out = ring;
    if (!ring) return gs_err_set(err, GS_ERR_NOMEM, "cannot allocate the pipeline's ring");
    ring->be = be;
    return GS_OK;
}

void gs_ring_destroy(gs_ring *ring)
{
    if (!ring) return;
    gs_be *be = ring->be;
    gs_be_free(be, GS_MEM_PINNED, ring->h_in.p);
    gs_be_free(be, GS_MEM_PINNED, ring->h_out.p);
    gs_be_free(be, GS_MEM_DEVICE, ring->d_in.p);
    gs_be_free(be, GS_MEM_DEVICE, ring->d_out.p);
    gs_be_free(be, GS_MEM_PINNED, ring->h_flags.p);
    gs_be_free(be, GS_MEM_DEVICE, ring->d_scalars.p);
    for (int s = 0; s < GS_MAX_DEPTH; s++)
        for (int ph = 0; ph < GS_RING_PHASES; ph++)
            for (int i = 0; i < 2; i++) gs_be_event_destroy(be, ring->ev[s][ph][i]);
    for (int i = 0; i < GS_STREAM_COUNT; i++) gs_be_event_destroy(be, ring->drain[i]);
    free(ring);
}

gs_status gs_ring_reserve(gs_ring *ring, gs_buffer *b, gs_mem mem, size_t bytes)
{
    if (bytes <= b->bytes) return GS_OK;
    gs_be_free(ring->be, mem, b->p);
    b->p = NULL;
    b->bytes = 0;
    GS_CHECK(gs_be_alloc(ring->be, mem, &b->p, bytes));
    b->bytes = bytes;
    return GS_OK;
}

static gs_status create_event(gs_ring *ring, gs_event **ev)
{
    return *ev ? GS_OK : gs_be_event_create(ring->be, ev);
}

gs_status gs_ring_events(gs_ring *ring, int depth)
{
    for (int s = 0; s < depth; s++)
        for (int ph = 0; ph < GS_RING_PHASES; ph++)
            for (int i = 0; i < 2; i++) GS_CHECK(create_event(ring, &ring->ev[s][ph][i]));
    for (int i = 0; i < GS_STREAM_COUNT; i++) GS_CHECK(create_event(ring, &ring->drain[i]));
    return GS_OK;
}
