/*
 * gs_cuda.h - the CUDA backend behind a C interface. No MPI here.
 *
 * Every function returns a gs_status; on failure gs_cuda_error() (or the
 * `err` buffer where no handle exists yet) says what failed and where.
 * All work runs on the handle's stream; functions that return results to the
 * host synchronise that stream before returning.
 */
#ifndef GS_CUDA_H
#define GS_CUDA_H

#include "gs_algo.h"
#include "gs_rules.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gs_cuda gs_cuda;

typedef struct gs_cuda_device_info {
    char name[96];
    char pci_bus_id[32];
    uint64_t total_mem;
    int sm_count;
    int device;          /* the CUDA device ordinal bound */
} gs_cuda_device_info;

/* Usable devices; 0 when there is no driver or no device (never an error). */
int gs_cuda_device_count(void);

/* Bind this process to `device` and create its stream. */
gs_status gs_cuda_open(int device, gs_cuda **g, char *err, size_t errlen);
void gs_cuda_close(gs_cuda *g);
const char *gs_cuda_error(const gs_cuda *g);
gs_status gs_cuda_info(gs_cuda *g, gs_cuda_device_info *info);
/* Free and total device memory, bytes. */
gs_status gs_cuda_mem_info(gs_cuda *g, uint64_t *free_bytes, uint64_t *total_bytes);

/* Memory. */
gs_status gs_cuda_malloc(gs_cuda *g, void **p, size_t bytes);
void gs_cuda_free(gs_cuda *g, void *p);
gs_status gs_cuda_host_alloc(gs_cuda *g, void **p, size_t bytes);   /* pinned */
void gs_cuda_host_free(gs_cuda *g, void *p);
/* 1 when p is device (or managed) memory, 0 for host memory. */
int gs_cuda_is_device_pointer(gs_cuda *g, const void *p);
gs_status gs_cuda_copy_h2d(gs_cuda *g, void *dst, const void *src, size_t bytes);
gs_status gs_cuda_copy_d2h(gs_cuda *g, void *dst, const void *src, size_t bytes);

/* Elements [start, start+n) of the generated array (gs_gen.h), on the device. */
gs_status gs_cuda_generate(gs_cuda *g, gs_type type, uint64_t seed, int64_t start,
                           int64_t n, void *d_out);

/* The kernels that gs_cuda_reduce, gs_cuda_scan and their asynchronous
 * forms run from now on: GS_ALGO_DEFAULT (the default of a new handle), or
 * a variant that serves reductions and one that serves scans
 * (gs_algo_serves). */
gs_status gs_cuda_set_variants(gs_cuda *g, gs_algo reduce, gs_algo scan);

/* Reduction partial of d_in[0..n), returned to the host. */
gs_status gs_cuda_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                         gs_acc *partial);

/* Scan d_in[0..n) into d_out (elements of gs_scan_output_type) from
 * `carry_in`, with the same contract as gs_cpu_scan. d_in == d_out is
 * allowed when the input and output types have the same size. */
gs_status gs_cuda_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind,
                       const void *d_in, void *d_out, int64_t n, gs_acc carry_in,
                       gs_acc *carry_out, int *overflow);

/* ---- asynchronous work, for the streamed pipeline ----------------------------
 * Kernels run in order on the handle's compute stream; copies run on copy
 * streams 0..GS_CUDA_COPY_STREAMS-1, so copies of chunk k+1 and k-1 overlap
 * the kernels of chunk k. Accumulators live in device memory (gs_acc), so a
 * chain of chunks needs no host synchronisation. Nothing here waits for the
 * GPU unless its name says so. */
#define GS_CUDA_COPY_STREAMS 2
#define GS_CUDA_COMPUTE (-1)           /* the stream argument naming the compute stream */

gs_status gs_cuda_copy_h2d_async(gs_cuda *g, int stream, void *dst, const void *src, size_t bytes);
gs_status gs_cuda_copy_d2h_async(gs_cuda *g, int stream, void *dst, const void *src, size_t bytes);
/* 1 when all of [p, p + bytes) is page-locked host memory, which copies
 * read or write without staging (cudaHostAlloc, cudaHostRegister). */
int gs_cuda_is_pinned(gs_cuda *g, const void *p, size_t bytes);
/* Events mark a point in a stream's queue; `waiter` waits for it without
 * blocking the host; gs_cuda_event_sync blocks the host. */
typedef struct gs_cuda_event gs_cuda_event;
gs_status gs_cuda_event_create(gs_cuda *g, gs_cuda_event **ev);
void gs_cuda_event_destroy(gs_cuda *g, gs_cuda_event *ev);
gs_status gs_cuda_event_record(gs_cuda *g, gs_cuda_event *ev, int stream);
gs_status gs_cuda_stream_wait_event(gs_cuda *g, int waiter, gs_cuda_event *ev);
gs_status gs_cuda_event_sync(gs_cuda *g, gs_cuda_event *ev);
/* Seconds between two completed events. */
gs_status gs_cuda_event_elapsed(gs_cuda *g, gs_cuda_event *start, gs_cuda_event *end, double *seconds);

/* On the compute stream: *d_acc = combine(*d_acc, reduction of d_in[0..n)). */
gs_status gs_cuda_reduce_async(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                               gs_acc *d_acc);
/* On the compute stream: scan d_in[0..n) into d_out starting from *d_carry
 * (a 64-bit scan carry), leave the carry after the last element in *d_carry,
 * and set *d_overflow to a non-zero value when a prefix sum overflowed
 * (never cleared here). */
gs_status gs_cuda_scan_async(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind,
                             const void *d_in, void *d_out, int64_t n, gs_acc *d_carry,
                             uint32_t *d_overflow);

/* ---- the ladder: every variant of gpuscan.h's gs_algo (gs_cuda_ladder.cu) ------
 * Queued on the compute stream; nothing waits. A reduction replaces
 * *d_result with the partial of d_in[0..n); a scan follows
 * gs_cuda_scan_async's contract (carry through *d_carry, overflow into
 * *d_overflow), except GS_ALGO_CUB, which scans from the identity and leaves
 * both alone. Variants that need scratch memory take it from `work`, of at
 * least the bytes gs_cuda_ladder_work_bytes names. GS_ERR_ARG for a variant
 * that does not serve the call; GS_ERR_UNSUPPORTED where n is beyond the
 * variant (cub: 2^31 - 1 elements). */
gs_status gs_cuda_ladder_work_bytes(gs_cuda *g, gs_algo algo, int scan, gs_type type, gs_op op,
                                    gs_scan_kind kind, int64_t n, size_t *bytes);
gs_status gs_cuda_ladder_reduce(gs_cuda *g, gs_algo algo, gs_type type, gs_op op,
                                const void *d_in, int64_t n, gs_acc *d_result, void *work,
                                size_t work_bytes);
gs_status gs_cuda_ladder_scan(gs_cuda *g, gs_algo algo, gs_type type, gs_op op,
                              gs_scan_kind kind, const void *d_in, void *d_out, int64_t n,
                              gs_acc *d_carry, uint32_t *d_overflow, void *work, size_t work_bytes);
/* The ladder's cub-native row (gs_cuda_ladder_cub.cu): CUB's own scan of
 * the input type, as its users call it (sums accumulate in the input
 * type), from the identity into d_out (of the input type); not gpuscan's
 * function. With work == NULL, *work_bytes = the scratch it needs; else the
 * call, queued. GS_ERR_UNSUPPORTED where gs_native_scan_exists says no and
 * beyond 2^31 - 1 elements. */
gs_status gs_cuda_ladder_native(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                                void *d_out, int64_t n, void *work, size_t *work_bytes);
/* Fill d[0..bytes) with `byte` on the compute stream (gs_cuda_device.cu). */
gs_status gs_cuda_fill(gs_cuda *g, void *d, int byte, size_t bytes);
/* Milliseconds of each of `iters` runs of run(arg) (work it queues on the
 * compute stream), timed with CUDA events, after untimed runs: at least
 * `warmup`, and more until they took `warmup_ms` on the GPU. Waits for the
 * last. A failing run stops the timing with its status (gs_cuda_timing.cu). */
gs_status gs_cuda_time_runs(gs_cuda *g, gs_status (*run)(void *arg), void *arg, int warmup,
                            double warmup_ms, int iters, float *ms);

#ifdef __cplusplus
}
#endif
#endif /* GS_CUDA_H */
