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
#include "gs_acc.h"

#define GS_ERRMSG_LEN 512

struct gs_cuda;   /* gpu/gs_cuda.h; NULL on the CPU backend */

struct gs_context {
    MPI_Comm comm;          /* our duplicate of the caller's communicator */
    MPI_Comm node_comm;     /* ranks sharing this node */
    int rank, size, local_rank, local_size;
    gs_backend backend;     /* resolved: CPU or CUDA */
    gs_config cfg;
    struct gs_cuda *cuda;
    char error[GS_ERRMSG_LEN];
};

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

#endif /* GS_INTERNAL_H */
