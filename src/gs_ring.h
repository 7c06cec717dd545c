/*
 * gs_ring.h - the pipeline's ring: the host and backend slots that chunks
 * pass through, the overflow flags and running value of a pass, and the
 * events that time and order each slot's phases. It only grows and is kept
 * from call to call (pinned memory is slow to allocate), owned by whoever
 * created it (the context) and used by one pipeline at a time.
 */
#ifndef GS_RING_H
#define GS_RING_H

#include "gs_backend.h"

/* The phases timed by backend events: READ (the generator on the backend),
 * H2D, COMPUTE and D2H, the first entries of gs_phase. */
#define GS_RING_PHASES (GS_PHASE_D2H + 1)

/* Memory that only grows; its contents are not kept when it does. */
typedef struct gs_buffer {
    void *p;
    size_t bytes;
} gs_buffer;

/* A pass's running value, in backend memory. */
typedef struct gs_ring_scalars {
    gs_acc value;        /* the reduction accumulator, or the scan carry */
    gs_exact exact;      /* the same of an exact pipeline (--exact) */
    uint32_t overflow;   /* non-zero once a prefix sum overflowed */
} gs_ring_scalars;

typedef struct gs_ring {
    gs_be *be;
    gs_buffer h_in, h_out;   /* host slots (pinned on the CUDA backend) */
    gs_buffer d_in, d_out;   /* backend slots, where a shard is not resident */
    gs_buffer h_flags;       /* each slot's copy of the overflow flag */
    gs_buffer d_scalars;     /* one gs_ring_scalars */
    gs_event *ev[GS_MAX_DEPTH][GS_RING_PHASES][2];   /* each slot's phases: begin, end */
    gs_event *drain[GS_STREAM_COUNT];                /* the end of every stream */
} gs_ring;

gs_status gs_ring_create(gs_be *be, gs_ring **ring, gs_err *err);
void gs_ring_destroy(gs_ring *ring);
/* Grow b, of kind `mem`, to at least `bytes`. */
gs_status gs_ring_reserve(gs_ring *ring, gs_buffer *b, gs_mem mem, size_t bytes);
/* The events of the first `depth` slots and of the drain, where missing. */
gs_status gs_ring_events(gs_ring *ring, int depth);

#endif /* GS_RING_H */
