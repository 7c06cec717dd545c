/*
 * gs_backend.c - choosing and opening a backend, and the calls through its
 * table (gs_backend.h). The only place in the core that knows which
 * backends the build has; everything else goes through the table.
 *
 * A backend keeps its own message for a failure; the wrappers copy it into
 * the caller's gs_err once, here, so no caller translates backend errors.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <string.h>

#include "gs_backend.h"

int gs_backend_devices(gs_backend kind, char *why, size_t why_len)
{
    if (kind == GS_BACKEND_CPU) return 1;
#ifdef HAVE_CUDA
    return gs_cuda_backend_devices(why, why_len);
#else
    snprintf(why, why_len, "gpuscan was built without CUDA (configure --with-cuda)");
    return 0;
#endif
}

gs_status gs_be_open(gs_be *be, gs_backend kind, int device, gs_err *err)
{
    char why[GS_ERRMSG_LEN] = "";
    gs_status st;
    be->ops = NULL;
    be->impl = NULL;
    be->err = err;
    if (kind == GS_BACKEND_CPU) {
        st = gs_cpu_backend_open(&be->impl, &be->ops, why, sizeof why);
        return st == GS_OK ? GS_OK : gs_err_set(err, st, "CPU backend: %s", why);
    }
#ifdef HAVE_CUDA
    st = gs_cuda_backend_open(device, &be->impl, &be->ops, why, sizeof why);
    return st == GS_OK ? GS_OK : gs_err_set(err, st, "GPU %d: %s", device, why);
#else
    (void)device;
    return gs_err_set(err, GS_ERR_UNSUPPORTED, "the CUDA backend was requested but gpuscan was built without CUDA (configure --with-cuda)");
#endif
}

void gs_be_close(gs_be *be)
{
    if (be->ops) be->ops->close(be->impl);
    be->ops = NULL;
    be->impl = NULL;
}

/* ---- calls ---------------------------------------------------------------------- */

static gs_status checked(gs_be *be, gs_status st)
{
    return st == GS_OK ? GS_OK : gs_err_set(be->err, st, "%s", be->ops->error(be->impl));
}

static gs_status missing(gs_be *be, const char *what)
{
    return gs_err_set(be->err, GS_ERR_UNSUPPORTED, "%s: not available on the %s backend", what,
                      gs_backend_name(be->ops->kind));
}

/* Call table entry `entry` with the backend's state and the arguments. */
#define GS_BE_CALL(be, entry, ...)                                                  \
    ((be)->ops->entry ? checked((be), (be)->ops->entry((be)->impl, __VA_ARGS__))    \
                      : missing((be), #entry))

gs_status gs_be_describe(gs_be *be, gs_rank_info *me) { return GS_BE_CALL(be, describe, me); }
gs_status gs_be_memory_free(gs_be *be, uint64_t *bytes) { return GS_BE_CALL(be, memory_free, bytes); }
gs_status gs_be_set_variants(gs_be *be, gs_algo reduce, gs_algo scan)
{
    return GS_BE_CALL(be, set_variants, reduce, scan);
}

gs_status gs_be_alloc(gs_be *be, gs_mem mem, void **p, size_t bytes)
{
    *p = NULL;
    if (bytes == 0) return GS_OK;
    return GS_BE_CALL(be, alloc, mem, p, bytes);
}

void gs_be_free(gs_be *be, gs_mem mem, void *p)
{
    if (p) be->ops->free(be->impl, mem, p);
}

int gs_be_is_device_pointer(gs_be *be, const void *p) { return p && be->ops->is_device_pointer(be->impl, p); }
int gs_be_is_pinned(gs_be *be, const void *p, size_t bytes) { return p && be->ops->is_pinned(be->impl, p, bytes); }

gs_status gs_be_copy_async(gs_be *be, gs_stream stream, void *dst, const void *src, size_t bytes,
                           int to_device)
{
    return GS_BE_CALL(be, copy_async, stream, dst, src, bytes, to_device);
}

gs_status gs_be_copy(gs_be *be, void *dst, const void *src, size_t bytes, int to_device)
{
    return GS_BE_CALL(be, copy, dst, src, bytes, to_device);
}

gs_status gs_be_fill(gs_be *be, void *d, int byte, size_t bytes) { return GS_BE_CALL(be, fill, d, byte, bytes); }

gs_status gs_be_reduce_async(gs_be *be, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *acc)
{
    return GS_BE_CALL(be, reduce_async, type, op, in, n, acc);
}

gs_status gs_be_scan_async(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                           void *out, int64_t n, gs_acc *carry, uint32_t *overflow)
{
    return GS_BE_CALL(be, scan_async, type, op, kind, in, out, n, carry, overflow);
}

int gs_be_has_exact(gs_be *be) { return be->ops->reduce_exact_async && be->ops->scan_exact_async; }

gs_status gs_be_reduce_exact_async(gs_be *be, gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    return GS_BE_CALL(be, reduce_exact_async, type, in, n, acc);
}

gs_status gs_be_scan_exact_async(gs_be *be, gs_type type, gs_scan_kind kind, const void *in, void *out,
                                 int64_t n, gs_exact *carry)
{
    return GS_BE_CALL(be, scan_exact_async, type, kind, in, out, n, carry);
}

gs_status gs_be_reduce(gs_be *be, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *partial)
{
    return GS_BE_CALL(be, reduce, type, op, in, n, partial);
}

gs_status gs_be_scan(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                     int64_t n, gs_acc carry_in, int *overflow)
{
    return GS_BE_CALL(be, scan, type, op, kind, in, out, n, carry_in, overflow);
}

gs_status gs_be_generate(gs_be *be, gs_type type, uint64_t seed, int64_t start, int64_t n, void *out)
{
    return GS_BE_CALL(be, generate, type, seed, start, n, out);
}

gs_status gs_be_event_create(gs_be *be, gs_event **ev) { return GS_BE_CALL(be, event_create, ev); }

void gs_be_event_destroy(gs_be *be, gs_event *ev)
{
    if (ev) be->ops->event_destroy(be->impl, ev);
}

gs_status gs_be_event_record(gs_be *be, gs_event *ev, gs_stream stream)
{
    return GS_BE_CALL(be, event_record, ev, stream);
}

gs_status gs_be_stream_wait(gs_be *be, gs_stream waiter, gs_event *ev)
{
    return GS_BE_CALL(be, stream_wait, waiter, ev);
}

gs_status gs_be_event_sync(gs_be *be, gs_event *ev) { return GS_BE_CALL(be, event_sync, ev); }

gs_status gs_be_event_elapsed(gs_be *be, gs_event *start, gs_event *end, double *seconds)
{
    return GS_BE_CALL(be, event_elapsed, start, end, seconds);
}

gs_status gs_be_copy_bandwidth(gs_be *be, gs_copy_kind kind, size_t bytes, int reps, double *gbps)
{
    return GS_BE_CALL(be, copy_bandwidth, kind, bytes, reps, gbps);
}

gs_status gs_be_time_runs(gs_be *be, gs_status (*run)(void *arg), void *arg, int warmup,
                          double warmup_ms, int iters, float *ms)
{
    return GS_BE_CALL(be, time_runs, run, arg, warmup, warmup_ms, iters, ms);
}

gs_status gs_be_ladder_work_bytes(gs_be *be, gs_algo algo, int scan, gs_type type, gs_op op,
                                  gs_scan_kind kind, int64_t n, size_t *bytes)
{
    return GS_BE_CALL(be, ladder_work_bytes, algo, scan, type, op, kind, n, bytes);
}

gs_status gs_be_ladder_reduce(gs_be *be, gs_algo algo, gs_type type, gs_op op, const void *in,
                              int64_t n, gs_acc *result, void *work, size_t work_bytes)
{
    return GS_BE_CALL(be, ladder_reduce, algo, type, op, in, n, result, work, work_bytes);
}

gs_status gs_be_ladder_scan(gs_be *be, gs_algo algo, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, gs_acc *carry, uint32_t *overflow,
                            void *work, size_t work_bytes)
{
    return GS_BE_CALL(be, ladder_scan, algo, type, op, kind, in, out, n, carry, overflow, work, work_bytes);
}

gs_status gs_be_ladder_native(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                              int64_t n, void *work, size_t *work_bytes)
{
    return GS_BE_CALL(be, ladder_native, type, op, kind, in, out, n, work, work_bytes);
}
