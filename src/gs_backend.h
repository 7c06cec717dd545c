/*
 * gs_backend.h - the one interface between the core (pipeline, shards, runs,
 * tools) and the hardware that computes: a table of operations that the CPU
 * backend (cpu/, OpenMP) and the CUDA backend (gpu/) each implement. The
 * core has one path for both and never asks which backend it has; it asks
 * what the backend does (computes_on_host) and calls the table through the
 * gs_be_* wrappers below, which record a failing backend's own message in
 * the caller's gs_err. Not installed.
 *
 * Work is queued in order on streams: kernels on GS_STREAM_COMPUTE, copies
 * on GS_STREAM_COPY_IN and GS_STREAM_COPY_OUT, so that copies of chunk k+1
 * and k-1 overlap the kernels of chunk k. Events mark points in a stream.
 * The CPU backend runs everything at once on the calling thread (its events
 * are time stamps), so the same sequence of calls is correct on both.
 */
#ifndef GS_BACKEND_H
#define GS_BACKEND_H

#include "gs_algo.h"
#include "gs_exact.h"
#include "gs_rules.h"
#include "gs_status.h"

/* Kinds of memory a backend allocates: host memory that its copies read and
 * write without staging (page-locked on the CUDA backend), and its own
 * (device memory; host memory on the CPU backend). Plain pageable host
 * memory is never the backend's business. */
typedef enum gs_mem { GS_MEM_PINNED, GS_MEM_DEVICE } gs_mem;

typedef enum gs_stream { GS_STREAM_COMPUTE, GS_STREAM_COPY_IN, GS_STREAM_COPY_OUT, GS_STREAM_COUNT } gs_stream;

typedef struct gs_event gs_event;   /* each backend's own */

/* The copy ceilings a backend can measure (the "100%" of the bench). */
typedef enum gs_copy_kind {
    GS_COPY_D2D,    /* backend memory to backend memory: bytes read plus bytes written */
    GS_COPY_H2D,    /* pinned host to device: bytes that cross the link */
    GS_COPY_DUPLEX  /* host to device and back at once on the two copy streams: both ways */
} gs_copy_kind;

/* The most copies one copy_bandwidth measurement times. */
#define GS_COPY_MAX_REPS 64

/* Every function returns GS_OK or a status, the backend keeping its message
 * for `error`. `impl` is the backend's own state. Entries a backend lacks
 * are NULL: the wrapper then fails with GS_ERR_UNSUPPORTED. */
typedef struct gs_backend_ops {
    gs_backend kind;
    int computes_on_host;    /* kernels read and write host memory: no copies needed */
    const char *(*error)(void *impl);
    void (*close)(void *impl);
    /* what it runs on: the device fields of *me (device, name, PCI id, memory) */
    gs_status (*describe)(void *impl, gs_rank_info *me);
    /* bytes of backend memory a run may take now */
    gs_status (*memory_free)(void *impl, uint64_t *bytes);
    gs_status (*set_variants)(void *impl, gs_algo reduce, gs_algo scan);

    /* ---- memory ---- */
    gs_status (*alloc)(void *impl, gs_mem mem, void **p, size_t bytes);
    void (*free)(void *impl, gs_mem mem, void *p);
    /* 1 when p is backend memory that host code cannot read */
    int (*is_device_pointer)(void *impl, const void *p);
    /* 1 when all of [p, p + bytes) is page-locked (copies need no staging) */
    int (*is_pinned)(void *impl, const void *p, size_t bytes);
    /* queued on `stream`: to_device 1 copies host -> backend, 0 backend -> host */
    gs_status (*copy_async)(void *impl, gs_stream stream, void *dst, const void *src, size_t bytes,
                            int to_device);
    /* at once, after the work queued so far: the same directions */
    gs_status (*copy)(void *impl, void *dst, const void *src, size_t bytes, int to_device);
    /* queued on the compute stream: d[0..bytes) = byte */
    gs_status (*fill)(void *impl, void *d, int byte, size_t bytes);

    /* ---- kernels, on backend memory ---- */
    /* queued: *acc = combine(*acc, reduction partial of in[0..n)); acc in backend memory */
    gs_status (*reduce_async)(void *impl, gs_type type, gs_op op, const void *in, int64_t n,
                              gs_acc *acc);
    /* queued: scan in[0..n) into out from the 64-bit carry *carry, leave the carry after
     * the last element there, set *overflow non-zero when a prefix sum overflowed (never
     * cleared); both in backend memory */
    gs_status (*scan_async)(void *impl, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                            void *out, int64_t n, gs_acc *carry, uint32_t *overflow);
    /* --exact (gs_exact.h), f32 and f64 only; NULL where the backend lacks it.
     * queued: *acc += the exact sum of in[0..n); acc (a gs_exact) in backend memory */
    gs_status (*reduce_exact_async)(void *impl, gs_type type, const void *in, int64_t n, gs_exact *acc);
    /* queued: out[i] = RN(*carry + in[0] + ... + in[i]) (inclusive; exclusive: up to
     * in[i-1]) in the element type, then *carry += the exact sum of in[0..n); carry in
     * backend memory */
    gs_status (*scan_exact_async)(void *impl, gs_type type, gs_scan_kind kind, const void *in,
                                  void *out, int64_t n, gs_exact *carry);
    /* at once: the reduction partial of in[0..n), on the host */
    gs_status (*reduce)(void *impl, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *partial);
    /* at once: the scan from carry_in (host values); *overflow 1 when a prefix sum overflowed */
    gs_status (*scan)(void *impl, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                      int64_t n, gs_acc carry_in, int *overflow);
    /* queued: elements [start, start+n) of the generated array (gs_gen.h) into out */
    gs_status (*generate)(void *impl, gs_type type, uint64_t seed, int64_t start, int64_t n, void *out);

    /* ---- events ---- */
    gs_status (*event_create)(void *impl, gs_event **ev);
    void (*event_destroy)(void *impl, gs_event *ev);
    gs_status (*event_record)(void *impl, gs_event *ev, gs_stream stream);
    /* `waiter` waits for the event without blocking the host */
    gs_status (*stream_wait)(void *impl, gs_stream waiter, gs_event *ev);
    /* the host waits for the event */
    gs_status (*event_sync)(void *impl, gs_event *ev);
    gs_status (*event_elapsed)(void *impl, gs_event *start, gs_event *end, double *seconds);

    /* ---- measuring tools (bench, ladder) ---- */
    /* the median GB/s of `reps` (1 to GS_COPY_MAX_REPS) copies of `bytes` of `kind` */
    gs_status (*copy_bandwidth)(void *impl, gs_copy_kind kind, size_t bytes, int reps, double *gbps);
    /* milliseconds of each of `iters` runs of run(arg), after warm-up runs (at least
     * `warmup`, and more until they took warmup_ms) */
    gs_status (*time_runs)(void *impl, gs_status (*run)(void *arg), void *arg, int warmup,
                           double warmup_ms, int iters, float *ms);
    /* the ladder's variants by number (gs_cuda.h: gs_cuda_ladder_*) */
    gs_status (*ladder_work_bytes)(void *impl, gs_algo algo, int scan, gs_type type, gs_op op,
                                   gs_scan_kind kind, int64_t n, size_t *bytes);
    gs_status (*ladder_reduce)(void *impl, gs_algo algo, gs_type type, gs_op op, const void *in,
                               int64_t n, gs_acc *result, void *work, size_t work_bytes);
    gs_status (*ladder_scan)(void *impl, gs_algo algo, gs_type type, gs_op op, gs_scan_kind kind,
                             const void *in, void *out, int64_t n, gs_acc *carry, uint32_t *overflow,
                             void *work, size_t work_bytes);
    /* CUB's native scan for the ladder's cub-native row (gs_cuda.h:
     * gs_cuda_ladder_native); work == NULL: *work_bytes = its scratch */
    gs_status (*ladder_native)(void *impl, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                               void *out, int64_t n, void *work, size_t *work_bytes);
} gs_backend_ops;

/* A backend in use: its table, its state and where its failures go. */
typedef struct gs_be {
    const gs_backend_ops *ops;
    void *impl;
    gs_err *err;
} gs_be;

/* ---- choosing and opening (gs_backend.c: the one place that knows which
 * backends the build has) ---- */
/* Usable devices of a backend: 1 for the CPU, the visible GPUs for CUDA (0
 * when there is no driver or device, or the build has no CUDA); *why says
 * why there are none. */
int gs_backend_devices(gs_backend kind, char *why, size_t why_len);
/* Open `kind` on `device` (ignored by the CPU backend). */
gs_status gs_be_open(gs_be *be, gs_backend kind, int device, gs_err *err);
void gs_be_close(gs_be *be);

/* The backends' own openers (cpu/gs_cpu_backend.c, gpu/gs_cuda_backend.c). */
gs_status gs_cpu_backend_open(void **impl, const gs_backend_ops **ops, char *why, size_t why_len);
gs_status gs_cuda_backend_open(int device, void **impl, const gs_backend_ops **ops, char *why,
                               size_t why_len);
int gs_cuda_backend_devices(char *why, size_t why_len);

/* ---- calls: the table's entries, each failure recorded in be->err ---- */
gs_status gs_be_describe(gs_be *be, gs_rank_info *me);
gs_status gs_be_memory_free(gs_be *be, uint64_t *bytes);
gs_status gs_be_set_variants(gs_be *be, gs_algo reduce, gs_algo scan);
gs_status gs_be_alloc(gs_be *be, gs_mem mem, void **p, size_t bytes);
void gs_be_free(gs_be *be, gs_mem mem, void *p);
int gs_be_is_device_pointer(gs_be *be, const void *p);
int gs_be_is_pinned(gs_be *be, const void *p, size_t bytes);
gs_status gs_be_copy_async(gs_be *be, gs_stream stream, void *dst, const void *src, size_t bytes,
                           int to_device);
gs_status gs_be_copy(gs_be *be, void *dst, const void *src, size_t bytes, int to_device);
gs_status gs_be_fill(gs_be *be, void *d, int byte, size_t bytes);
gs_status gs_be_reduce_async(gs_be *be, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *acc);
gs_status gs_be_scan_async(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in,
                           void *out, int64_t n, gs_acc *carry, uint32_t *overflow);
/* 1 when the backend has the exact entries (both). */
int gs_be_has_exact(gs_be *be);
gs_status gs_be_reduce_exact_async(gs_be *be, gs_type type, const void *in, int64_t n, gs_exact *acc);
gs_status gs_be_scan_exact_async(gs_be *be, gs_type type, gs_scan_kind kind, const void *in, void *out,
                                 int64_t n, gs_exact *carry);
gs_status gs_be_reduce(gs_be *be, gs_type type, gs_op op, const void *in, int64_t n, gs_acc *partial);
gs_status gs_be_scan(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                     int64_t n, gs_acc carry_in, int *overflow);
gs_status gs_be_generate(gs_be *be, gs_type type, uint64_t seed, int64_t start, int64_t n, void *out);
gs_status gs_be_event_create(gs_be *be, gs_event **ev);
void gs_be_event_destroy(gs_be *be, gs_event *ev);
gs_status gs_be_event_record(gs_be *be, gs_event *ev, gs_stream stream);
gs_status gs_be_stream_wait(gs_be *be, gs_stream waiter, gs_event *ev);
gs_status gs_be_event_sync(gs_be *be, gs_event *ev);
gs_status gs_be_event_elapsed(gs_be *be, gs_event *start, gs_event *end, double *seconds);
gs_status gs_be_copy_bandwidth(gs_be *be, gs_copy_kind kind, size_t bytes, int reps, double *gbps);
gs_status gs_be_time_runs(gs_be *be, gs_status (*run)(void *arg), void *arg, int warmup,
                          double warmup_ms, int iters, float *ms);
gs_status gs_be_ladder_work_bytes(gs_be *be, gs_algo algo, int scan, gs_type type, gs_op op,
                                  gs_scan_kind kind, int64_t n, size_t *bytes);
gs_status gs_be_ladder_reduce(gs_be *be, gs_algo algo, gs_type type, gs_op op, const void *in,
                              int64_t n, gs_acc *result, void *work, size_t work_bytes);
gs_status gs_be_ladder_scan(gs_be *be, gs_algo algo, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, gs_acc *carry, uint32_t *overflow,
                            void *work, size_t work_bytes);
gs_status gs_be_ladder_native(gs_be *be, gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                              int64_t n, void *work, size_t *work_bytes);

#endif /* GS_BACKEND_H */
