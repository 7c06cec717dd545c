/*
 * gs_internal.h - the context and the error-handling conventions of the
 * host core. Not installed.
 *
 * Inside the library nothing aborts: every failure sets the context's message
 * (gs_fail) and returns a status, which the GS_CHECK family passes upward.
 */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include "gpuscan.h"
#include "gs_algo.h"
#include "gs_rules.h"

#define GS_ERRMSG_LEN 512

struct gs_cuda;   /* gpu/gs_cuda.h; NULL on the CPU backend */
struct gs_ring;   /* src/gs_pipe.c; NULL until a pipeline first runs */

struct gs_context {
    MPI_Comm comm;          /* our duplicate of the caller's communicator */
    MPI_Comm node_comm;     /* ranks sharing this node */
    int rank, size, local_rank, local_size;
    gs_backend backend;     /* resolved: CPU or CUDA */
    gs_config cfg;
    gs_algo reduce_algo, scan_algo;   /* cfg's kernel names, resolved */
    struct gs_cuda *cuda;
    struct gs_ring *ring;   /* the pipeline's buffers and events, kept between calls */
    char error[GS_ERRMSG_LEN];
};

/* Release ctx->ring (gs_pipe.c), before the backend goes. */
void gs_ring_free(gs_context *ctx);

/* Record a failure of this rank: "rank R: <message>". Returns `status`. */
gs_status gs_fail(gs_context *ctx, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Pass a failure upward. */
#define GS_CHECK(call)                                   \
    do {                                                 \
        gs_status gs_check_status_ = (call);             \
        if (gs_check_status_ != GS_OK)                   \
            return gs_check_status_;                     \
    } while (0)

/* Pass a failure to a cleanup label, keeping the status in `var`. */
#define GS_CHECK_GOTO(call, var, label)                  \
    do {                                                 \
        (var) = (call);                                  \
        if ((var) != GS_OK)                              \
            goto label;                                  \
    } while (0)

/* Seconds from a monotonic clock. */
double gs_now(void);

/* ---- local compute on this rank's backend (gs_shard.c) ---------------------
 * `on_device`: the pointers are device memory (CUDA backend), else host. */
gs_status gs_local_reduce(gs_context *ctx, gs_type type, gs_op op, const void *in, int64_t n,
                          int on_device, gs_acc *partial);
gs_status gs_local_scan(gs_context *ctx, gs_type type, gs_op op, gs_scan_kind kind,
                        const void *in, void *out, int64_t n, int on_device, gs_acc carry_in,
                        gs_acc *carry_out, int *overflow);
/* The global result of a combined reduction partial over n_total elements:
 * GS_ERR_OVERFLOW when an integer sum does not fit 64 bits, GS_ERR_EMPTY for
 * min/max of nothing. Sets no message (the caller knows the context). */
gs_status gs_finish_reduce(gs_type type, gs_op op, gs_acc acc, int64_t n_total, gs_value *result);
/* A gs_value of `type` from one element in memory / from a 64-bit carry. */
gs_value gs_value_from_element(gs_type type, const void *element);
gs_value gs_value_from_carry(gs_type type, gs_acc carry);

#endif /* GS_INTERNAL_H */
