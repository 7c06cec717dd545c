/* gs_plan.c - the shard's layout for the pipeline (gs_plan.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gs_plan.h"

/* The default chunk: tens of MiB keep the per-chunk costs (a kernel launch,
 * a few events, an agreement) below 1% of a chunk's copy at PCIe speed. */
#define GS_PLAN_CHUNK_BYTES ((int64_t)32 << 20)
#define GS_PLAN_MIN_CHUNK_BYTES ((int64_t)1 << 20)
#define GS_PLAN_ALIGN 16

static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

int64_t gs_plan_default_chunk(int64_t largest, size_t in_size, int depth)
{
    int64_t chunk = GS_PLAN_CHUNK_BYTES / (int64_t)in_size;
    int64_t least = GS_PLAN_MIN_CHUNK_BYTES / (int64_t)in_size;
    int64_t spread = ceil_div(largest, 2 * (int64_t)depth);
    if (spread < chunk) chunk = spread > least ? spread : least;
    return chunk;
}

uint64_t gs_plan_stride(int64_t chunk, size_t size)
{
    const uint64_t bytes = gs_sat_mul((uint64_t)chunk, size);
    if (bytes > UINT64_MAX - GS_PLAN_ALIGN) return UINT64_MAX;
    return (bytes + GS_PLAN_ALIGN - 1) / GS_PLAN_ALIGN * GS_PLAN_ALIGN;
}

uint64_t gs_plan_resident_bytes(int64_t count, int64_t chunk, size_t in_size, size_t out_size)
{
    const uint64_t chunks = (uint64_t)ceil_div(count, chunk);
    return gs_sat_mul(chunks, gs_sat_add(gs_plan_stride(chunk, in_size), gs_plan_stride(chunk, out_size)));
}

uint64_t gs_plan_ring_bytes(int64_t chunk, int depth, size_t in_size, size_t out_size)
{
    return gs_sat_mul((uint64_t)depth, gs_sat_add(gs_plan_stride(chunk, in_size), gs_plan_stride(chunk, out_size)));
}

int64_t gs_plan_fit_chunk(uint64_t budget, int depth, size_t in_size, size_t out_size)
{
    uint64_t most = budget / ((uint64_t)depth * (in_size + out_size));
    int64_t chunk = most > INT64_MAX ? INT64_MAX : (int64_t)most;
    while (chunk > 0 && gs_plan_ring_bytes(chunk, depth, in_size, out_size) > budget) chunk--;
    return chunk;
}

gs_status gs_plan_memory_budget(gs_be *be, uint64_t cap, uint64_t *bytes)
{
    GS_CHECK(gs_be_memory_free(be, bytes));
    if (cap && cap < *bytes) *bytes = cap;
    return GS_OK;
}
