/*
 * gs_plan.h - how a shard is laid out for the pipeline: the chunk, the
 * bytes a resident shard or a ring of chunks takes, and the memory a run may
 * use. Every byte count saturates (gs_sat_mul), so a size that cannot exist
 * is larger than any budget, never a small wrapped-around number.
 */
#ifndef GS_PLAN_H
#define GS_PLAN_H

#include "gs_backend.h"

/* Chunks in flight by default: one being read, one copied in, one computed
 * and one copied out and written. */
#define GS_PLAN_DEFAULT_DEPTH 4

/* The default chunk for a longest shard of `largest` elements: 32 MiB of
 * input, less where the shard would give fewer than 2 x depth chunks, never
 * under 1 MiB. */
int64_t gs_plan_default_chunk(int64_t largest, size_t in_size, int depth);

/* Bytes from one chunk's start to the next in the ring and in the resident
 * buffers: a whole multiple of 16, the kernels' vector loads, so that every
 * chunk starts aligned alike and the kernels split it alike, resident or
 * streamed (float results depend on the split). */
uint64_t gs_plan_stride(int64_t chunk, size_t size);

/* Bytes of backend memory a resident shard of `count` elements takes, and a
 * streamed pipeline's ring (out_size 0 for reductions). */
uint64_t gs_plan_resident_bytes(int64_t count, int64_t chunk, size_t in_size, size_t out_size);
uint64_t gs_plan_ring_bytes(int64_t chunk, int depth, size_t in_size, size_t out_size);
/* The largest chunk whose ring fits `budget`, 0 when none does. */
int64_t gs_plan_fit_chunk(uint64_t budget, int depth, size_t in_size, size_t out_size);

/* Local. Bytes of backend memory this rank's buffers may take: what the
 * backend has free, at most `cap` where not 0. */
gs_status gs_plan_memory_budget(gs_be *be, uint64_t cap, uint64_t *bytes);

#endif /* GS_PLAN_H */
