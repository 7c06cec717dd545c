/*
 * gs_cpu_backend.c - the CPU backend behind the backend interface
 * (gs_backend.h): the kernels of gs_cpu.h on host memory, run at once on the
 * calling thread's OpenMP team. Every kind of memory is plain host memory,
 * copies are parallel memcpy, and events are time stamps, so the pipeline's
 * one sequence of queued work runs here unchanged, step by step.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_backend.h"
#include "gs_cpu.h"

typedef struct cpu_backend {
    char error[GS_ERRMSG_LEN];
} cpu_backend;

struct gs_event {
    double t;   /* when it was recorded: everything before it is done */
};

static gs_status cpu_fail(void *impl, gs_status st, const char *what, size_t bytes)
{
    cpu_backend *b = impl;
    snprintf(b->error, sizeof b->error, "%s of %zu bytes failed", what, bytes);
    return st;
}

static const char *cpu_error(void *impl) { return ((cpu_backend *)impl)->error; }
static void cpu_close(void *impl) { free(impl); }

static gs_status cpu_describe(void *impl, gs_rank_info *me)
{
    (void)impl;
    me->device = -1;
    return GS_OK;
}

/* Half of the machine's memory: the rest stays for the input's page cache
 * and for other ranks. */
static gs_status cpu_memory_free(void *impl, uint64_t *bytes)
{
    (void)impl;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    *bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (uint64_t)1 << 32;
    return GS_OK;
}

static gs_status cpu_set_variants(void *impl, gs_algo reduce, gs_algo scan)
{
    cpu_backend *b = impl;
    if (reduce == GS_ALGO_DEFAULT && scan == GS_ALGO_DEFAULT) return GS_OK;
    snprintf(b->error, sizeof b->error, "the kernel variants run on the CUDA backend only");
    return GS_ERR_UNSUPPORTED;
}

static gs_status cpu_alloc(void *impl, gs_mem mem, void **p, size_t bytes)
{
    (void)mem;   /* both kinds are plain host memory here */
    *p = malloc(bytes);
    return *p ? GS_OK : cpu_fail(impl, GS_ERR_NOMEM, "allocating host memory", bytes);
}

static void cpu_free(void *impl, gs_mem mem, void *p)
{
    (void)impl;
    (void)mem;
    free(p);
}

static int cpu_is_device_pointer(void *impl, const void *p)
{
    (void)impl;
    (void)p;
    return 0;
}

static int cpu_is_pinned(void *impl, const void *p, size_t bytes)
{
    (void)impl;
    (void)p;
    (void)bytes;
    return 0;
}

static gs_status cpu_copy(void *impl, void *dst, const void *src, size_t bytes, int to_device)
{
    (void)impl;
    (void)to_device;
    gs_cpu_copy(dst, src, bytes);
    return GS_OK;
}

static gs_status cpu_copy_async(void *impl, gs_stream stream, void *dst, const void *src, size_t bytes,
                                int to_device)
{
    (void)stream;
    return cpu_copy(impl, dst, src, bytes, to_device);
}

static gs_status cpu_fill(void *impl, void *d, int byte, size_t bytes)
{
    (void)impl;
    memset(d, byte, bytes);
    return GS_OK;
}

static gs_status cpu_reduce_async(void *impl, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *acc)
{
    (void)impl;
    *acc = gs_acc_combine(type, op, *acc, gs_cpu_reduce(type, op, in, n));
    return GS_OK;
}

static gs_status cpu_scan_async(void *impl, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                                void *out, int64_t n, gs_acc *carry, uint32_t *overflow)
{
    (void)impl;
    int overflowed = 0;
    gs_cpu_scan(type, op, kind, in, out, n, *carry, carry, &overflowed);
    if (overflowed) *overflow = 1;
    return GS_OK;
}

static gs_status cpu_reduce_exact_async(void *impl, gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    (void)impl;
    gs_cpu_reduce_exact(type, in, n, acc);
    return GS_OK;
}

static gs_status cpu_scan_exact_async(void *impl, gs_type type, gs_scan_kind kind, const void *in, void *out,
                                      int64_t n, gs_exact *carry)
{
    (void)impl;
    gs_cpu_scan_exact(type, kind, in, out, n, carry);
    return GS_OK;
}

static gs_status cpu_reduce(void *impl, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *partial)
{
    (void)impl;
    *partial = gs_cpu_reduce(type, op, in, n);
    return GS_OK;
}

static gs_status cpu_scan(void *impl, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                          int64_t n, gs_acc carry_in, int *overflow)
{
    (void)impl;
    gs_cpu_scan(type, op, kind, in, out, n, carry_in, NULL, overflow);
    return GS_OK;
}

static gs_status cpu_generate(void *impl, gs_type type, uint64_t seed, int64_t start, int64_t n, void *out)
{
    (void)impl;
    gs_cpu_generate(type, seed, start, n, out);
    return GS_OK;
}

static gs_status cpu_event_create(void *impl, gs_event **ev)
{
    *ev = calloc(1, sizeof **ev);
    return *ev ? GS_OK : cpu_fail(impl, GS_ERR_NOMEM, "allocating an event", sizeof **ev);
}

static void cpu_event_destroy(void *impl, gs_event *ev)
{
    (void)impl;
    free(ev);
}

static gs_status cpu_event_record(void *impl, gs_event *ev, gs_stream stream)
{
    (void)impl;
    (void)stream;
    ev->t = gs_now();
    return GS_OK;
}

/* Work ran when it was queued: nothing is ever waited for. */
static gs_status cpu_event_wait(void *impl, gs_event *ev)
{
    (void)impl;
    (void)ev;
    return GS_OK;
}

static gs_status cpu_stream_wait(void *impl, gs_stream waiter, gs_event *ev)
{
    (void)waiter;
    return cpu_event_wait(impl, ev);
}

static gs_status cpu_event_elapsed(void *impl, gs_event *start, gs_event *end, double *seconds)
{
    (void)impl;
    *seconds = end->t - start->t;
    return GS_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The memory's own ceiling: bytes read plus written by a parallel memcpy;
 * there is no link to cross. */
static gs_status cpu_copy_bandwidth(void *impl, gs_copy_kind kind, size_t bytes, int reps, double *gbps)
{
    cpu_backend *b = impl;
    if (kind != GS_COPY_D2D || reps < 1) {
        snprintf(b->error, sizeof b->error, "the CPU backend has no host-to-device link to measure");
        return GS_ERR_UNSUPPORTED;
    }
    char *src = malloc(bytes), *dst = malloc(bytes);
    double *seconds = malloc((size_t)reps * sizeof *seconds);
    gs_status st = GS_OK;
    if (!src || !dst || !seconds) {
        st = cpu_fail(impl, GS_ERR_NOMEM, "allocating 2 buffers to measure the memory copy bandwidth", bytes);
    } else {
        /* the first copy places dst's pages on the threads that copy them */
        memset(src, 1, bytes);
        gs_cpu_copy(dst, src, bytes);
        for (int i = 0; i < reps; i++) {
            double t0 = gs_now();
            gs_cpu_copy(dst, src, bytes);
            seconds[i] = gs_now() - t0;
        }
        qsort(seconds, (size_t)reps, sizeof *seconds, compare_doubles);
        double median = reps % 2 ? seconds[reps / 2] : 0.5 * (seconds[reps / 2 - 1] + seconds[reps / 2]);
        *gbps = median > 0 ? 2.0 * (double)bytes / median * 1e-9 : 0;
    }
    free(seconds);
    free(src);
    free(dst);
    return st;
}

static const gs_backend_ops cpu_ops = {
    .kind = GS_BACKEND_CPU,
    .computes_on_host = 1,
    .error = cpu_error,
    .close = cpu_close,
    .describe = cpu_describe,
    .memory_free = cpu_memory_free,
    .set_variants = cpu_set_variants,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .is_device_pointer = cpu_is_device_pointer,
    .is_pinned = cpu_is_pinned,
    .copy_async = cpu_copy_async,
    .copy = cpu_copy,
    .fill = cpu_fill,
    .reduce_async = cpu_reduce_async,
    .scan_async = cpu_scan_async,
    .reduce_exact_async = cpu_reduce_exact_async,
    .scan_exact_async = cpu_scan_exact_async,
    .reduce = cpu_reduce,
    .scan = cpu_scan,
    .generate = cpu_generate,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .stream_wait = cpu_stream_wait,
    .event_sync = cpu_event_wait,
    .event_elapsed = cpu_event_elapsed,
    .copy_bandwidth = cpu_copy_bandwidth,
    /* the ladder's kernels and their timing are the CUDA backend's */
};

gs_status gs_cpu_backend_open(void **impl, const gs_backend_ops **ops, char *why, size_t why_len)
{
    *impl = calloc(1, sizeof(cpu_backend));
    *ops = &cpu_ops;
    if (*impl) return GS_OK;
    snprintf(why, why_len, "no memory for the backend's state");
    return GS_ERR_NOMEM;
}
