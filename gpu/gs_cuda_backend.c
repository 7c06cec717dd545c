/*
 * gs_cuda_backend.c - the CUDA backend behind the backend interface
 * (gs_backend.h): the table's entries are the C interface of gpu/
 * (gs_cuda.h, gs_cuda_ceiling.h). Plain C, built only with CUDA.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>

#include "gs_backend.h"
#include "gs_cuda.h"
#include "gs_cuda_ceiling.h"
#include "gs_cuda_exact.h"

/* Share of the free device memory a run's buffers may take: the rest
 * stays for the CUDA context's own growth and other ranks' handles. */
#define GS_CUDA_MEM_SHARE 0.85

static int cuda_stream(gs_stream s)
{
    return s == GS_STREAM_COMPUTE ? GS_CUDA_COMPUTE : s == GS_STREAM_COPY_IN ? 0 : 1;
}

static const char *cuda_error(void *g) { return gs_cuda_error(g); }
static void cuda_close(void *g) { gs_cuda_close(g); }

static gs_status cuda_describe(void *g, gs_rank_info *me)
{
    gs_cuda_device_info info;
    GS_CHECK(gs_cuda_info(g, &info));
    me->device = info.device;
    snprintf(me->device_name, sizeof me->device_name, "%s", info.name);
    snprintf(me->pci_bus_id, sizeof me->pci_bus_id, "%s", info.pci_bus_id);
    me->device_mem_bytes = info.total_mem;
    return GS_OK;
}

static gs_status cuda_memory_free(void *g, uint64_t *bytes)
{
    uint64_t free_bytes = 0, total = 0;
    GS_CHECK(gs_cuda_mem_info(g, &free_bytes, &total));
    *bytes = (uint64_t)((double)free_bytes * GS_CUDA_MEM_SHARE);
    return GS_OK;
}

static gs_status cuda_set_variants(void *g, gs_algo reduce, gs_algo scan)
{
    return gs_cuda_set_variants(g, reduce, scan);
}

static gs_status cuda_alloc(void *g, gs_mem mem, void **p, size_t bytes)
{
    return mem == GS_MEM_PINNED ? gs_cuda_host_alloc(g, p, bytes) : gs_cuda_malloc(g, p, bytes);
}

static void cuda_free(void *g, gs_mem mem, void *p)
{
    if (mem == GS_MEM_PINNED) gs_cuda_host_free(g, p);
    else gs_cuda_free(g, p);
}

static int cuda_is_device_pointer(void *g, const void *p) { return gs_cuda_is_device_pointer(g, p); }
static int cuda_is_pinned(void *g, const void *p, size_t bytes) { return gs_cuda_is_pinned(g, p, bytes); }

static gs_status cuda_copy_async(void *g, gs_stream stream, void *dst, const void *src, size_t bytes,
                                 int to_device)
{
    return to_device ? gs_cuda_copy_h2d_async(g, cuda_stream(stream), dst, src, bytes)
                     : gs_cuda_copy_d2h_async(g, cuda_stream(stream), dst, src, bytes);
}

static gs_status cuda_copy(void *g, void *dst, const void *src, size_t bytes, int to_device)
{
    return to_device ? gs_cuda_copy_h2d(g, dst, src, bytes) : gs_cuda_copy_d2h(g, dst, src, bytes);
}

static gs_status cuda_fill(void *g, void *d, int byte, size_t bytes) { return gs_cuda_fill(g, d, byte, bytes); }

static gs_status cuda_reduce_async(void *g, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *acc)
{
    return gs_cuda_reduce_async(g, type, op, in, n, acc);
}

static gs_status cuda_scan_async(void *g, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                                 void *out, int64_t n, gs_acc *carry, uint32_t *overflow)
{
    return gs_cuda_scan_async(g, type, op, kind, in, out, n, carry, overflow);
}

static gs_status cuda_reduce_exact_async(void *g, gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    return gs_cuda_reduce_exact_async(g, type, in, n, acc);
}

static gs_status cuda_scan_exact_async(void *g, gs_type type, gs_scan_kind kind, const void *in, void *out,
                                       int64_t n, gs_exact *carry)
{
    return gs_cuda_scan_exact_async(g, type, kind, in, out, n, carry);
}

static gs_status cuda_reduce(void *g, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *partial)
{
    return gs_cuda_reduce(g, type, op, in, n, partial);
}

static gs_status cuda_scan(void *g, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                           int64_t n, gs_acc carry_in, int *overflow)
{
    return gs_cuda_scan(g, type, op, kind, in, out, n, carry_in, NULL, overflow);
}

static gs_status cuda_generate(void *g, gs_type type, uint64_t seed, int64_t start, int64_t n, void *out)
{
    return gs_cuda_generate(g, type, seed, start, n, out);
}

static gs_status cuda_event_create(void *g, gs_event **ev)
{
    return gs_cuda_event_create(g, (gs_cuda_event **)ev);
}

static void cuda_event_destroy(void *g, gs_event *ev) { gs_cuda_event_destroy(g, (gs_cuda_event *)ev); }

static gs_status cuda_event_record(void *g, gs_event *ev, gs_stream stream)
{
    return gs_cuda_event_record(g, (gs_cuda_event *)ev, cuda_stream(stream));
}

static gs_status cuda_stream_wait(void *g, gs_stream waiter, gs_event *ev)
{
    return gs_cuda_stream_wait_event(g, cuda_stream(waiter), (gs_cuda_event *)ev);
}

static gs_status cuda_event_sync(void *g, gs_event *ev) { return gs_cuda_event_sync(g, (gs_cuda_event *)ev); }

static gs_status cuda_event_elapsed(void *g, gs_event *start, gs_event *end, double *seconds)
{
    return gs_cuda_event_elapsed(g, (gs_cuda_event *)start, (gs_cuda_event *)end, seconds);
}

static gs_status cuda_copy_bandwidth(void *g, gs_copy_kind kind, size_t bytes, int reps, double *gbps)
{
    const gs_cuda_copy_kind k = kind == GS_COPY_D2D ? GS_CUDA_COPY_D2D
                              : kind == GS_COPY_H2D ? GS_CUDA_COPY_H2D : GS_CUDA_COPY_DUPLEX;
    return gs_cuda_copy_bandwidth(g, k, bytes, reps, gbps);
}

static gs_status cuda_time_runs(void *g, gs_status (*run)(void *arg), void *arg, int warmup, double warmup_ms,
                                int iters, float *ms)
{
    return gs_cuda_time_runs(g, run, arg, warmup, warmup_ms, iters, ms);
}

static gs_status cuda_ladder_work_bytes(void *g, gs_algo algo, int scan, gs_type type, gs_op op,
                                        gs_scan_kind kind, int64_t n, size_t *bytes)
{
    return gs_cuda_ladder_work_bytes(g, algo, scan, type, op, kind, n, bytes);
}

static gs_status cuda_ladder_reduce(void *g, gs_algo algo, gs_type type, gs_op op, const void *in, int64_t n,
                                    gs_acc *result, void *work, size_t work_bytes)
{
    return gs_cuda_ladder_reduce(g, algo, type, op, in, n, result, work, work_bytes);
}

static gs_status cuda_ladder_scan(void *g, gs_algo algo, gs_type type, gs_op op, gs_scan_kind kind,
                                  const void *in, void *out, int64_t n, gs_acc *carry, uint32_t *overflow,
                                  void *work, size_t work_bytes)
{
    return gs_cuda_ladder_scan(g, algo, type, op, kind, in, out, n, carry, overflow, work, work_bytes);
}

static gs_status cuda_ladder_native(void *g, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                                    int64_t n, void *work, size_t *work_bytes)
{
    return gs_cuda_ladder_native(g, type, op, kind, in, out, n, work, work_bytes);
}

static const gs_backend_ops cuda_ops = {
    .kind = GS_BACKEND_CUDA,
    .computes_on_host = 0,
    .error = cuda_error,
    .close = cuda_close,
    .describe = cuda_describe,
    .memory_free = cuda_memory_free,
    .set_variants = cuda_set_variants,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .is_device_pointer = cuda_is_device_pointer,
    .is_pinned = cuda_is_pinned,
    .copy_async = cuda_copy_async,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .reduce_async = cuda_reduce_async,
    .scan_async = cuda_scan_async,
    .reduce_exact_async = cuda_reduce_exact_async,
    .scan_exact_async = cuda_scan_exact_async,
    .reduce = cuda_reduce,
    .scan = cuda_scan,
    .generate = cuda_generate,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait = cuda_stream_wait,
    .event_sync = cuda_event_sync,
    .event_elapsed = cuda_event_elapsed,
    .copy_bandwidth = cuda_copy_bandwidth,
    .time_runs = cuda_time_runs,
    .ladder_work_bytes = cuda_ladder_work_bytes,
    .ladder_reduce = cuda_ladder_reduce,
    .ladder_scan = cuda_ladder_scan,
    .ladder_native = cuda_ladder_native,
};

int gs_cuda_backend_devices(char *why, size_t why_len)
{
    int count = gs_cuda_device_count();
    if (count == 0) {
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");
        if (visible && !*visible)
            snprintf(why, why_len, "no usable GPU is visible: CUDA_VISIBLE_DEVICES is empty");
        else
            snprintf(why, why_len, "no usable GPU is visible (no NVIDIA driver, no device%s%s)",
                     visible ? ", or none of CUDA_VISIBLE_DEVICES=" : "", visible ? visible : "");
    }
    return count;
}

gs_status gs_cuda_backend_open(int device, void **impl, const gs_backend_ops **ops, char *why, size_t why_len)
{
    gs_cuda *g = NULL;
    *impl = NULL;
    *ops = &cuda_ops;
    GS_CHECK(gs_cuda_open(device, &g, why, why_len));
    *impl = g;
    return GS_OK;
}
