/*
 * gs_internal.h - the context: what one gs_context_create puts together from
 * the layers below it (gs_status.h, gs_mpi.h, gs_backend.h), and the local
 * helpers of the core. Not installed.
 *
 * Inside the library nothing aborts: every failure records the context's
 * message (gs_fail) and returns a status, which GS_CHECK passes upward.
 */
#ifndef GS_INTERNAL_H
#define GS_INTERNAL_H

#include "gpuscan.h"
#include "gs_algo.h"
#include "gs_backend.h"
#include "gs_mpi.h"
#include "gs_rules.h"
#include "gs_status.h"

struct gs_ring;   /* gs_ring.h: the pipeline's buffers, kept from call to call */

struct gs_context {
    gs_err err;             /* this rank's last failure, agreed on by every rank */
    gs_mpi mpi;             /* communicators, rank and size */
    gs_be be;               /* the backend every rank agreed on */
    gs_algo reduce_algo, scan_algo;   /* the config's kernel names, resolved */
    int device;             /* the config's device request (-1: by node-local rank) */
    uint64_t mem_cap;       /* bytes of backend memory a run may take; 0: no cap */
    int exact;              /* the config's exact: f32/f64 sums in gs_exact states */
    struct gs_ring *ring;
};

/* Record a failure of this rank: "rank R: <message>". Returns `status`. */
#define gs_fail(ctx, status, ...) gs_err_set(&(ctx)->err, (status), __VA_ARGS__)

/* The global result of a combined reduction partial over n_total elements:
 * GS_ERR_OVERFLOW when an integer sum does not fit 64 bits, GS_ERR_EMPTY for
 * min/max of nothing. Sets no message (the caller knows the context). */
gs_status gs_finish_reduce(gs_type type, gs_op op, gs_acc acc, int64_t n_total, gs_value *result);
/* 1 when (type, op) runs on the exact path: ctx->exact and an f32/f64 sum. */
int gs_exact_applies(const gs_context *ctx, gs_type type, gs_op op);
/* GS_ERR_ARG (with the message) for what --exact refuses: float products. */
gs_status gs_exact_check(gs_context *ctx, gs_type type, gs_op op);
/* A gs_value of `type` from one element in memory. */
gs_value gs_value_from_element(gs_type type, const void *element);

#endif /* GS_INTERNAL_H */
