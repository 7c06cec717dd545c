/*
 * gs_cuda_handle.cuh - the handle behind gs_cuda.h's opaque gs_cuda, and
 * the helpers every .cu file of the backend uses on it: recording failures
 * (GS_CUDA_CHECK, GS_CUDA_PASS), making its device current, its scratch
 * buffers and its per-kernel occupancy. Defined in gs_cuda_device.cu.
 *
 * Host code only: no kernels or device helpers here, so that files which
 * launch nothing (streams, copy ceilings) include no kernel templates.
 */
#ifndef GS_CUDA_HANDLE_CUH
#define GS_CUDA_HANDLE_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "gs_cuda.h"

/* Results a kernel leaves for the host, copied back in one transfer. */
struct gs_cuda_scalars {
    gs_acc result;            /* reduction partial, or a scan's carry out */
    uint32_t overflow;        /* a synchronous scan's overflow flag; cleared by the host
                                 only after it was seen set */
    unsigned int blocks_done; /* reduction blocks finished; the last resets it */
};

/* Kernels whose resident blocks per multiprocessor a handle remembers:
 * more than the library has (type x op x kernel); a kernel past them is
 * only asked again at each launch. */
#define GS_CUDA_OCCUPANCY_SLOTS 256

struct gs_cuda {
    int device;
    int sm_count;
    int smem_per_block;                /* the most shared memory a block may ask for */
    struct {
        const void *kernel;
        int blocks_per_sm;
    } occupancy[GS_CUDA_OCCUPANCY_SLOTS];
    cudaStream_t stream;               /* kernels and synchronous copies, non-blocking */
    cudaStream_t copy_streams[GS_CUDA_COPY_STREAMS]; /* the pipeline's asynchronous copies */
    gs_cuda_scalars *d_scalars;        /* device */
    gs_cuda_scalars *h_scalars;        /* pinned host mirror */
    void *d_partials;                  /* reduction block partials */
    size_t partials_bytes;
    void *d_tiles;                     /* scan tile states */
    size_t tiles_bytes;
    uint64_t scan_epoch;               /* incremented per scan launch, never 0 */
    gs_algo reduce_algo, scan_algo;    /* the kernels gs_cuda_reduce* and gs_cuda_scan* run */
    void *d_variant_work;              /* scratch of the variants (gs_cuda_variant.cu) */
    size_t variant_work_bytes;
    void *d_exact_tiles;               /* the exact scan's tile states (gs_cuda_exact.cu) */
    size_t exact_tiles_bytes;
    uint32_t exact_epoch;              /* incremented per exact scan launch, 1 .. GS_EXACT_EPOCHS - 1 */
    int exact_tiles;                   /* f64 exact scans' tiles: a gs_cuda_exact_tiles */
    bool exact_long_decided, exact_long;   /* what GS_CUDA_EXACT_TILES_AUTO decided */
    char error[512];
};

/* Record "<what>: <CUDA's message>" in the handle, clear CUDA's last error
 * and return GS_ERR_NOMEM for failed allocations, else GS_ERR_CUDA. */
gs_status gs_cuda_fail(gs_cuda *g, cudaError_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record a failure that is no CUDA error. */
gs_status gs_cuda_fail_status(gs_cuda *g, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Run a CUDA call; on failure record the message (printf-style `...`) and
 * return from the calling function. */
#define GS_CUDA_CHECK(g, call, ...)                                        \
    do {                                                                   \
        cudaError_t gs_cuda_check_err_ = (call);                           \
        if (gs_cuda_check_err_ != cudaSuccess)                             \
            return gs_cuda_fail((g), gs_cuda_check_err_, __VA_ARGS__);     \
    } while (0)

/* Pass a failure upward. */
#define GS_CUDA_PASS(call)                                                 \
    do {                                                                   \
        gs_status gs_cuda_pass_status_ = (call);                           \
        if (gs_cuda_pass_status_ != GS_OK) return gs_cuda_pass_status_;    \
    } while (0)

/* Make g's device current (the caller's thread may have switched). */
gs_status gs_cuda_enter(gs_cuda *g);
/* Grow a scratch buffer to at least `bytes`, zeroed when (re)allocated. */
gs_status gs_cuda_reserve(gs_cuda *g, void **buffer, size_t *capacity, size_t bytes,
                          const char *what);
/* Resident blocks per multiprocessor of `kernel` with `block` threads and
 * `smem` bytes of dynamic shared memory (the same for every launch of that
 * kernel), worked out once per handle and kernel. Past the default 48 KiB,
 * that first call also lets the kernel have `smem` bytes, which every
 * launch of it needs. */
gs_status gs_cuda_occupancy(gs_cuda *g, const void *kernel, int block, int smem, int *blocks_per_sm);
/* Copy the scalars back to g->h_scalars and wait for the stream. */
gs_status gs_cuda_fetch_scalars(gs_cuda *g);
/* GS_ERR_ARG unless (type, op) is valid, n >= 0 and `data` (n elements of
 * `type`) is element-aligned, or NULL with n == 0; `what` names the call. */
gs_status gs_cuda_check_args(gs_cuda *g, const char *what, gs_type type, gs_op op,
                             const void *data, int64_t n);

#endif /* GS_CUDA_HANDLE_CUH */
