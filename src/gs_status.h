/*
 * gs_status.h - the bottom layer: how a failure is recorded and passed up.
 * Every other layer (backends, MPI, pipeline, runs) depends on this one and
 * nothing here depends on them. Not installed.
 *
 * Inside the library nothing aborts: a failing function records "rank R:
 * <what failed and why>" in the gs_err it was given (gs_err_set) and returns
 * a gs_status, which the GS_CHECK family passes upward.
 */
#ifndef GS_STATUS_H
#define GS_STATUS_H

#include "gpuscan.h"

#define GS_ERRMSG_LEN 512

/* One rank's last failure. `rank` prefixes every message; the MPI layer's
 * agreement copies the message of the lowest failing rank to all ranks. */
typedef struct gs_err {
    int rank;
    char msg[GS_ERRMSG_LEN];
} gs_err;

/* Record a failure: "rank R: <message>" (plain "<message>" before the rank
 * is known, rank < 0). Returns `status`. A NULL err records nothing. */
gs_status gs_err_set(gs_err *err, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Pass a failure upward. */
#define GS_CHECK(call)                                   \
    do {                                                 \
        gs_status gs_check_status_ = (call);             \
        if (gs_check_status_ != GS_OK)                   \
            return gs_check_status_;                     \
    } while (0)

/* Pass a failure to a clean-up label, keeping the status in `var`. */
#define GS_CHECK_GOTO(call, var, label)                  \
    do {                                                 \
        (var) = (call);                                  \
        if ((var) != GS_OK)                              \
            goto label;                                  \
    } while (0)

/* Seconds from a monotonic clock. */
double gs_now(void);

/* Saturating size arithmetic: a*b and a+b, or UINT64_MAX where the result
 * does not fit 64 bits. Byte counts derived from element counts go through
 * these, so an impossible size compares as larger than any memory instead of
 * wrapping around to a small one. */
static inline uint64_t gs_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
static inline uint64_t gs_sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif /* GS_STATUS_H */
