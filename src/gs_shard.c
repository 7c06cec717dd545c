/* gs_shard.c - reductions and scans of the local shards an application
 * passes in (host or device pointers), combined across ranks. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdlib.h>
#include <string.h>

#include "gs_internal.h"
#include "gs_pipe.h"

gs_status gs_finish_reduce(gs_type type, gs_op op, gs_acc acc, int64_t n_total, gs_value *result)
{
    result->type = gs_reduce_result_type(type, op);
    if ((op == GS_MIN || op == GS_MAX) && n_total == 0) return GS_ERR_EMPTY;
    switch (gs_reduce_acc_kind(type, op)) {
    case GS_ACC_S128:
        if (acc.s < INT64_MIN || acc.s > INT64_MAX) return GS_ERR_OVERFLOW;
        result->v.i = (int64_t)acc.s;
        break;
    case GS_ACC_U128:
        if (acc.w > UINT64_MAX) return GS_ERR_OVERFLOW;
        result->v.u = (uint64_t)acc.w;
        break;
    case GS_ACC_F64: result->v.f = acc.f; break;
    case GS_ACC_U64: result->v.u = acc.u; break;
    case GS_ACC_I64: result->v.i = acc.i; break;
    }
    return GS_OK;
}

gs_value gs_value_from_element(gs_type type, const void *p)
{
    gs_value v;
    v.type = type;
    switch (type) {
    case GS_I32: v.v.i = *(const int32_t *)p; break;
    case GS_I64: v.v.i = *(const int64_t *)p; break;
    case GS_U32: v.v.u = *(const uint32_t *)p; break;
    case GS_U64: v.v.u = *(const uint64_t *)p; break;
    case GS_F32: v.v.f = *(const float *)p; break;
    default: v.v.f = *(const double *)p; break;
    }
    return v;
}

int gs_exact_applies(const gs_context *ctx, gs_type type, gs_op op)
{
    return ctx->exact && gs_type_is_float(type) && op == GS_SUM;
}

gs_status gs_exact_check(gs_context *ctx, gs_type type, gs_op op)
{
    if (ctx->exact && gs_type_is_float(type) && op == GS_PROD)
        return gs_fail(ctx, GS_ERR_ARG, "--exact: a product of %s values cannot be exact in bounded space "
                       "(--exact applies to sums; min and max are exact already)", gs_type_name(type));
    return GS_OK;
}

/* What every rank's call must agree on (gs_mpi_agree_call): which call,
 * its operation, element type and scan kind (reductions: 0). */
static int64_t call_key(int scan, gs_op op, gs_type type, gs_scan_kind kind)
{
    return (int64_t)scan << 48 | (int64_t)(uint32_t)op << 32 | (int64_t)(uint16_t)type << 16 | (uint16_t)kind;
}

static gs_status check_args(gs_context *ctx, gs_op op, gs_type type, const void *p, int64_t count)
{
    if ((unsigned)type >= GS_TYPE_COUNT) return gs_fail(ctx, GS_ERR_ARG, "unknown element type %d", (int)type);
    if ((unsigned)op >= GS_OP_COUNT) return gs_fail(ctx, GS_ERR_ARG, "unknown operation %d", (int)op);
    if (count < 0) return gs_fail(ctx, GS_ERR_ARG, "negative element count %lld", (long long)count);
    if (count > 0 && !p) return gs_fail(ctx, GS_ERR_ARG, "NULL shard of %lld elements", (long long)count);
    return gs_exact_check(ctx, type, op);
}

/* Memory the backend computes on directly: device memory, or any host
 * memory where the backend computes on the host. Anything else streams
 * through the backend (gs_pipe.h). */
static int backend_reads(gs_context *ctx, const void *p)
{
    return ctx->be.ops->computes_on_host || gs_be_is_device_pointer(&ctx->be, p);
}

/* This rank's partial of its shard, wherever the shard lives. */
static gs_status shard_partial(gs_context *ctx, gs_type type, gs_op op, const void *shard,
                               int64_t count, gs_acc *partial)
{
    *partial = gs_acc_identity(type, op);
    if (count == 0) return GS_OK;
    if (backend_reads(ctx, shard)) return gs_be_reduce(&ctx->be, type, op, shard, count, partial);
    return gs_pipe_host_reduce(&ctx->be, ctx->ring, type, op, shard, count, 0, 0, partial);
}

/* --exact: out NULL: *state = the exact sum of the shard; else its exact
 * scan into out from *state. Direct where the backend reads the shard (the
 * state passes through the ring's scalars in backend memory), else through
 * the pipeline. */
static gs_status shard_exact(gs_context *ctx, gs_type type, gs_scan_kind kind, const void *in, void *out,
                             int64_t count, gs_exact *state)
{
    if (!out) gs_exact_clear(state);
    if (count == 0) return GS_OK;
    if (!backend_reads(ctx, in)) return gs_pipe_host_exact(&ctx->be, ctx->ring, type, kind, in, out, count, state);
    gs_ring *ring = ctx->ring;
    GS_CHECK(gs_ring_reserve(ring, &ring->d_scalars, GS_MEM_DEVICE, sizeof(gs_ring_scalars)));
    gs_exact *d = &((gs_ring_scalars *)ring->d_scalars.p)->exact;
    GS_CHECK(gs_be_copy(&ctx->be, d, state, sizeof *state, 1));
    if (out) GS_CHECK(gs_be_scan_exact_async(&ctx->be, type, kind, in, out, count, d));
    else GS_CHECK(gs_be_reduce_exact_async(&ctx->be, type, in, count, d));
    return gs_be_copy(&ctx->be, state, d, sizeof *state, 0);
}

/* gs_reduce on the exact path: the f64 nearest the exact sum of all ranks. */
static gs_status reduce_exact(gs_context *ctx, gs_status st, gs_type type, const void *shard, int64_t count,
                              gs_value *result)
{
    gs_exact total;
    if (st == GS_OK) st = shard_exact(ctx, type, GS_INCLUSIVE, shard, NULL, count, &total);
    GS_CHECK(gs_mpi_agree_call(&ctx->mpi, st, call_key(0, GS_SUM, type, 0)));
    GS_CHECK(gs_mpi_allreduce_exact(&ctx->mpi, &total));
    result->type = GS_F64;
    result->v.f = gs_exact_round_f64(&total);
    return GS_OK;
}

/* gs_scan on the exact path: the rank's offset is the exact sum of lower
 * ranks' shards; each element is rounded once. */
static gs_status scan_exact(gs_context *ctx, gs_status st, gs_type type, gs_scan_kind kind, const void *in,
                            void *out, int64_t count)
{
    gs_exact carry;
    gs_exact_clear(&carry);
    if (ctx->mpi.size > 1) {
        gs_exact total;
        if (st == GS_OK) st = shard_exact(ctx, type, kind, in, NULL, count, &total);
        GS_CHECK(gs_mpi_agree_call(&ctx->mpi, st, call_key(1, GS_SUM, type, kind)));
        GS_CHECK(gs_mpi_exscan_exact(&ctx->mpi, &total, &carry));
    }
    if (st == GS_OK && count > 0 && backend_reads(ctx, in) != backend_reads(ctx, out))
        st = gs_fail(ctx, GS_ERR_ARG, "scan input and output must both be host or both be device memory");
    if (st == GS_OK) st = shard_exact(ctx, type, kind, in, out, count, &carry);
    return gs_mpi_agree(&ctx->mpi, st);
}

gs_status gs_reduce(gs_context *ctx, gs_op op, gs_type type, const void *shard, int64_t count,
                    gs_value *result)
{
    gs_status st = check_args(ctx, op, type, shard, count);
    if (st == GS_OK && !result) st = gs_fail(ctx, GS_ERR_ARG, "NULL result");
    if (gs_exact_applies(ctx, type, op)) return reduce_exact(ctx, st, type, shard, count, result);
    gs_acc partial;
    if (st == GS_OK) st = shard_partial(ctx, type, op, shard, count, &partial);
    GS_CHECK(gs_mpi_agree_call(&ctx->mpi, st, call_key(0, op, type, 0)));
    int64_t n_total = 0;
    GS_CHECK(gs_mpi_allreduce_acc(&ctx->mpi, type, op, &partial));
    GS_CHECK(gs_mpi_sum_i64(&ctx->mpi, count, &n_total));
    st = gs_finish_reduce(type, op, partial, n_total, result);
    if (st == GS_ERR_OVERFLOW)
        return gs_fail(ctx, st, "the %s sum of %lld elements overflows 64 bits", gs_type_name(type), (long long)n_total);
    if (st == GS_ERR_EMPTY)
        return gs_fail(ctx, st, "%s of an empty array has no identity", gs_op_name(op));
    return st;
}

gs_status gs_scan(gs_context *ctx, gs_op op, gs_type type, gs_scan_kind kind, const void *in,
                  void *out, int64_t count)
{
    gs_status st = check_args(ctx, op, type, in, count);
    if (st == GS_OK && kind != GS_INCLUSIVE && kind != GS_EXCLUSIVE)
        st = gs_fail(ctx, GS_ERR_ARG, "unknown scan kind %d", (int)kind);
    if (st == GS_OK && count > 0 && !out) st = gs_fail(ctx, GS_ERR_ARG, "NULL scan output");
    if (gs_exact_applies(ctx, type, op)) return scan_exact(ctx, st, type, kind, in, out, count);
    /* the rank's offset: combine the totals of lower ranks (one reduction
     * pass first, so the scan pass writes final values; docs/DESIGN.md) */
    gs_acc carry = gs_acc_identity(type, op);
    const int size = ctx->mpi.size;
    if (st == GS_OK && size > 1) st = shard_partial(ctx, type, op, in, count, &carry);
    GS_CHECK(gs_mpi_agree_call(&ctx->mpi, st, call_key(1, op, type, kind)));
    if (size > 1)
        GS_CHECK(gs_mpi_exscan_carry(&ctx->mpi, type, op, gs_acc_scan_carry(type, op, carry), &carry));

    int overflow = 0;
    if (count > 0) {
        const int direct = backend_reads(ctx, in);
        if (direct != backend_reads(ctx, out))
            st = gs_fail(ctx, GS_ERR_ARG, "scan input and output must both be host or both be device memory");
        else if (direct)
            st = gs_be_scan(&ctx->be, type, op, kind, in, out, count, carry, &overflow);
        else
            st = gs_pipe_host_scan(&ctx->be, ctx->ring, type, op, kind, in, out, count, 0, 0, carry);
    }
    if (st == GS_OK && overflow)
        st = gs_fail(ctx, GS_ERR_OVERFLOW, "a 64-bit prefix sum of %s elements overflowed", gs_type_name(type));
    return gs_mpi_agree(&ctx->mpi, st);
}
