/*
 * gs_mpi.c - communicator set-up, GPU choice, error agreement and the typed
 * combines of reduction partials and scan carries.
 *
 * Every MPI call runs on our duplicate of the caller's communicator, whose
 * error handler is MPI_ERRORS_RETURN: a failed call becomes GS_ERR_MPI with
 * MPI's own words, never an abort.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gs_mpi.h"

/* Call an MPI function; when it fails, return GS_ERR_MPI naming it. */
#define GS_MPI_CALL(m, fn, args)                                               \
    do {                                                                         \
        int gs_mpi_err_ = fn args;                                               \
        if (gs_mpi_err_ != MPI_SUCCESS)                                          \
            return gs_mpi_fail((m), GS_ERR_MPI, gs_mpi_err_, "%s", #fn);       \
    } while (0)

gs_status gs_mpi_fail(gs_mpi *m, gs_status status, int mpi_error, const char *fmt, ...)
{
    char what[GS_ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);

    char why[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_error, why, &len) != MPI_SUCCESS)
        snprintf(why, sizeof why, "MPI error code %d", mpi_error);
    return gs_err_set(m->err, status, "%s: %s", what, why);
}

/* ---- user-defined combines ------------------------------------------------
 * Created by the first context set up and freed by the last one torn down,
 * so that no handle outlives the contexts (not thread-safe, as documented). */
static struct {
    int contexts;          /* contexts set up and not yet torn down */
    MPI_Datatype acc128;   /* one 128-bit accumulator: two 64-bit words */
    MPI_Op sum128;         /* exact 128-bit integer sum */
    MPI_Op fmin, fmax;     /* NaN-propagating min and max of doubles */
    MPI_Datatype exact;    /* one gs_exact, as its bytes */
    MPI_Op exact_sum;      /* gs_exact_merge: exact, so commutative */
} gs_mpi_user = { 0, MPI_DATATYPE_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_DATATYPE_NULL, MPI_OP_NULL };

/* A two's complement sum has the same bits for signed and unsigned words, so
 * one op serves both. MPI's buffers need not be 16-byte aligned: copy. */
static void user_sum128(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) {
        gs_u128 a, b;
        memcpy(&a, (const char *)in + i * sizeof a, sizeof a);
        memcpy(&b, (char *)inout + i * sizeof b, sizeof b);
        b += a;
        memcpy((char *)inout + i * sizeof b, &b, sizeof b);
    }
}

static void user_fmin(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const double *a = in;
    double *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++) b[i] = gs_fmin(a[i], b[i]);
}

static void user_fmax(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const double *a = in;
    double *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++) b[i] = gs_fmax(a[i], b[i]);
}

/* MPI's buffers need not be aligned for int64: copy. */
static void user_exact_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    for (int i = 0; i < *len; i++) {
        gs_exact a, b;
        memcpy(&a, (const char *)in + i * sizeof a, sizeof a);
        memcpy(&b, (char *)inout + i * sizeof b, sizeof b);
        gs_exact_merge(&b, &a);
        memcpy((char *)inout + i * sizeof b, &b, sizeof b);
    }
}

static void user_combines_free(void)
{
    if (gs_mpi_user.exact_sum != MPI_OP_NULL) MPI_Op_free(&gs_mpi_user.exact_sum);
    if (gs_mpi_user.exact != MPI_DATATYPE_NULL) MPI_Type_free(&gs_mpi_user.exact);
    if (gs_mpi_user.fmax != MPI_OP_NULL) MPI_Op_free(&gs_mpi_user.fmax);
    if (gs_mpi_user.fmin != MPI_OP_NULL) MPI_Op_free(&gs_mpi_user.fmin);
    if (gs_mpi_user.sum128 != MPI_OP_NULL) MPI_Op_free(&gs_mpi_user.sum128);
    if (gs_mpi_user.acc128 != MPI_DATATYPE_NULL) MPI_Type_free(&gs_mpi_user.acc128);
}

static gs_status user_combines_create(gs_mpi *m)
{
    GS_MPI_CALL(m, MPI_Type_contiguous, (2, MPI_UINT64_T, &gs_mpi_user.acc128));
    GS_MPI_CALL(m, MPI_Type_commit, (&gs_mpi_user.acc128));
    GS_MPI_CALL(m, MPI_Op_create, (user_sum128, 1, &gs_mpi_user.sum128));
    GS_MPI_CALL(m, MPI_Op_create, (user_fmin, 1, &gs_mpi_user.fmin));
    GS_MPI_CALL(m, MPI_Op_create, (user_fmax, 1, &gs_mpi_user.fmax));
    GS_MPI_CALL(m, MPI_Type_contiguous, ((int)sizeof(gs_exact), MPI_BYTE, &gs_mpi_user.exact));
    GS_MPI_CALL(m, MPI_Type_commit, (&gs_mpi_user.exact));
    GS_MPI_CALL(m, MPI_Op_create, (user_exact_sum, 1, &gs_mpi_user.exact_sum));
    return GS_OK;
}

static gs_status user_combines_acquire(gs_mpi *m)
{
    if (gs_mpi_user.contexts == 0) {
        gs_status status = user_combines_create(m);
        if (status != GS_OK) {
            user_combines_free();
            return status;
        }
    }
    gs_mpi_user.contexts++;
    return GS_OK;
}

static void user_combines_release(void)
{
    if (--gs_mpi_user.contexts == 0) user_combines_free();
}

static MPI_Op builtin_op(gs_op op)
{
    switch (op) {
    case GS_SUM: return MPI_SUM;
    case GS_PROD: return MPI_PROD;
    case GS_MIN: return MPI_MIN;
    default: return MPI_MAX;
    }
}

/* The MPI datatype and op that combine accumulators of `kind` for `op`
 * exactly as gs_acc_combine does. */
static void combine_of(gs_acc_kind kind, gs_op op, MPI_Datatype *type, MPI_Op *mpi_op)
{
    switch (kind) {
    case GS_ACC_S128:
    case GS_ACC_U128:
        *type = gs_mpi_user.acc128;
        *mpi_op = gs_mpi_user.sum128;
        return;
    case GS_ACC_F64:
        /* MPI_MIN/MPI_MAX on doubles need not propagate NaN */
        *type = MPI_DOUBLE;
        *mpi_op = op == GS_MIN ? gs_mpi_user.fmin : op == GS_MAX ? gs_mpi_user.fmax
                                                                 : builtin_op(op);
        return;
    case GS_ACC_I64:
        *type = MPI_INT64_T;
        break;
    case GS_ACC_U64:
        *type = MPI_UINT64_T;
        break;
    }
    *mpi_op = builtin_op(op);
}

/* ---- set-up -------------------------------------------------------------- */

static void free_comms(gs_mpi *m)
{
    if (m->node_comm != MPI_COMM_NULL) MPI_Comm_free(&m->node_comm);
    if (m->comm != MPI_COMM_NULL) MPI_Comm_free(&m->comm);
}

static gs_status setup_comms(gs_mpi *m, MPI_Comm comm)
{
    GS_MPI_CALL(m, MPI_Comm_dup, (comm, &m->comm));
    /* communicators split from m->comm inherit this handler */
    GS_MPI_CALL(m, MPI_Comm_set_errhandler, (m->comm, MPI_ERRORS_RETURN));
    GS_MPI_CALL(m, MPI_Comm_rank, (m->comm, &m->rank));
    m->err->rank = m->rank;
    GS_MPI_CALL(m, MPI_Comm_size, (m->comm, &m->size));
    GS_MPI_CALL(m, MPI_Comm_split_type,
                (m->comm, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &m->node_comm));
    GS_MPI_CALL(m, MPI_Comm_rank, (m->node_comm, &m->local_rank));
    GS_MPI_CALL(m, MPI_Comm_size, (m->node_comm, &m->local_size));
    return GS_OK;
}

/* On failure nothing stays allocated and m->comm is MPI_COMM_NULL, which
 * is how gs_mpi_teardown tells a handle that was set up. */
gs_status gs_mpi_setup(gs_mpi *m, MPI_Comm comm, gs_err *err)
{
    m->comm = m->node_comm = MPI_COMM_NULL;
    m->err = err;
    gs_status status = setup_comms(m, comm);
    if (status == GS_OK) status = user_combines_acquire(m);
    if (status != GS_OK) free_comms(m);
    return status;
}

void gs_mpi_teardown(gs_mpi *m)
{
    if (m->comm == MPI_COMM_NULL) return;
    user_combines_release();
    free_comms(m);
}

int gs_mpi_pick_device(int local_rank, int device_count, int requested)
{
    if (requested >= 0) return requested;
    if (device_count < 1) return -1;
    return device_count == 1 ? 0 : local_rank % device_count;
}

/* ---- agreement and combines ---------------------------------------------- */

gs_status gs_mpi_agree_values(gs_mpi *m, gs_status mine, const int64_t *values, int count, unsigned *differ)
{
    /* one reduction for all: the lowest failing rank (its rank above its
     * status, ranks that succeeded as `size`) as the minimum, and each value
     * as a maximum and a minimum, which differ when the ranks' values do */
    int64_t v[1 + 2 * GS_MPI_AGREE_VALUES];
    if (count < 0 || count > GS_MPI_AGREE_VALUES) {   /* a caller's bug: every rank passes the same count */
        if (mine == GS_OK)
            mine = gs_err_set(m->err, GS_ERR_ARG, "gs_mpi_agree_values: %d values (0 to %d)", count,
                              GS_MPI_AGREE_VALUES);
        count = 0;
    }
    if (differ) *differ = 0;
    v[0] = -(mine != GS_OK ? (int64_t)m->rank << 32 | (uint32_t)mine : (int64_t)m->size << 32);
    for (int i = 0; i < count; i++) {
        v[1 + 2 * i] = values[i];
        v[2 + 2 * i] = -values[i];
    }
    GS_MPI_CALL(m, MPI_Allreduce, (MPI_IN_PLACE, v, 1 + 2 * count, MPI_INT64_T, MPI_MAX, m->comm));
    for (int i = 0; differ && i < count; i++)
        if (v[1 + 2 * i] != -v[2 + 2 * i]) *differ |= 1u << i;
    const int first = (int)(-v[0] >> 32);
    if (first == m->size) return GS_OK;
    GS_MPI_CALL(m, MPI_Bcast, (m->err->msg, GS_ERRMSG_LEN, MPI_CHAR, first, m->comm));
    m->err->msg[GS_ERRMSG_LEN - 1] = '\0';
    return (gs_status)(uint32_t)(-v[0] & 0xffffffff);
}

gs_status gs_mpi_agree(gs_mpi *m, gs_status mine)
{
    return gs_mpi_agree_values(m, mine, NULL, 0, NULL);
}

gs_status gs_mpi_agree_call(gs_mpi *m, gs_status mine, int64_t call)
{
    unsigned differ = 0;
    const gs_status st = gs_mpi_agree_values(m, mine, &call, 1, &differ);
    if (!differ) return st;
    /* every rank saw it: rank 0's words for all (a second agreement, on
     * this error path only) */
    return gs_mpi_agree(m, m->rank != 0 ? GS_ERR_ARG
                                       : gs_err_set(m->err, GS_ERR_ARG, "the ranks made different calls: every "
                                                    "rank must pass the same operation, element type and scan "
                                                    "kind to a collective call"));
}

gs_status gs_mpi_allreduce_acc(gs_mpi *m, gs_type type, gs_op op, gs_acc *acc)
{
    MPI_Datatype mpi_type;
    MPI_Op mpi_op;
    combine_of(gs_reduce_acc_kind(type, op), op, &mpi_type, &mpi_op);
    GS_MPI_CALL(m, MPI_Allreduce, (MPI_IN_PLACE, acc, 1, mpi_type, mpi_op, m->comm));
    return GS_OK;
}

gs_status gs_mpi_exscan_carry(gs_mpi *m, gs_type type, gs_op op, gs_acc local,
                              gs_acc *offset)
{
    /* gs_acc_scan_carry is idempotent: `local` may be a reduction partial or
     * already a carry. Integer sums travel as wrapping 64-bit words. */
    gs_acc carry = gs_acc_scan_carry(type, op, local);
    gs_acc_kind kind = gs_reduce_acc_kind(type, op);
    if (kind == GS_ACC_S128 || kind == GS_ACC_U128) kind = GS_ACC_U64;

    MPI_Datatype mpi_type;
    MPI_Op mpi_op;
    combine_of(kind, op, &mpi_type, &mpi_op);
    gs_acc lower;
    lower.w = 0;
    GS_MPI_CALL(m, MPI_Exscan, (&carry, &lower, 1, mpi_type, mpi_op, m->comm));
    /* MPI leaves rank 0's result undefined */
    *offset = m->rank == 0 ? gs_acc_identity(type, op) : lower;
    return GS_OK;
}

gs_status gs_mpi_allreduce_exact(gs_mpi *m, gs_exact *acc)
{
    GS_MPI_CALL(m, MPI_Allreduce, (MPI_IN_PLACE, acc, 1, gs_mpi_user.exact, gs_mpi_user.exact_sum, m->comm));
    return GS_OK;
}

gs_status gs_mpi_exscan_exact(gs_mpi *m, const gs_exact *local, gs_exact *offset)
{
    gs_exact lower;
    gs_exact_clear(&lower);
    GS_MPI_CALL(m, MPI_Exscan, (local, &lower, 1, gs_mpi_user.exact, gs_mpi_user.exact_sum, m->comm));
    /* MPI leaves rank 0's result undefined */
    if (m->rank == 0) gs_exact_clear(&lower);
    *offset = lower;
    return GS_OK;
}

gs_status gs_mpi_stats(gs_mpi *m, const double *mine, int count, double *min,
                       double *avg, double *max)
{
    GS_MPI_CALL(m, MPI_Allreduce, (mine, min, count, MPI_DOUBLE, MPI_MIN, m->comm));
    GS_MPI_CALL(m, MPI_Allreduce, (mine, max, count, MPI_DOUBLE, MPI_MAX, m->comm));
    GS_MPI_CALL(m, MPI_Allreduce, (mine, avg, count, MPI_DOUBLE, MPI_SUM, m->comm));
    for (int i = 0; i < count; i++) avg[i] /= m->size;
    return GS_OK;
}

gs_status gs_mpi_sum_i64(gs_mpi *m, int64_t mine, int64_t *total)
{
    GS_MPI_CALL(m, MPI_Allreduce, (&mine, total, 1, MPI_INT64_T, MPI_SUM, m->comm));
    return GS_OK;
}

gs_status gs_mpi_max_i64(gs_mpi *m, int64_t mine, int64_t *max)
{
    GS_MPI_CALL(m, MPI_Allreduce, (&mine, max, 1, MPI_INT64_T, MPI_MAX, m->comm));
    return GS_OK;
}

gs_status gs_mpi_sum_f64(gs_mpi *m, double *values, int count)
{
    GS_MPI_CALL(m, MPI_Allreduce, (MPI_IN_PLACE, values, count, MPI_DOUBLE, MPI_SUM, m->comm));
    return GS_OK;
}

gs_status gs_mpi_exscan_f64(gs_mpi *m, double mine, double *offset)
{
    double lower = 0.0;
    GS_MPI_CALL(m, MPI_Exscan, (&mine, &lower, 1, MPI_DOUBLE, MPI_SUM, m->comm));
    *offset = m->rank == 0 ? 0.0 : lower;
    return GS_OK;
}

gs_status gs_mpi_allgather_bytes(gs_mpi *m, const void *mine, size_t bytes, void *all)
{
    /* every rank passes the same size, so every rank fails alike */
    if (bytes > INT_MAX)
        return gs_err_set(m->err, GS_ERR_ARG, "allgather of %zu bytes per rank exceeds an MPI count",
                       bytes);
    GS_MPI_CALL(m, MPI_Allgather,
                (mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, m->comm));
    return GS_OK;
}

gs_status gs_mpi_node_or_bytes(gs_mpi *m, unsigned char *bits, size_t bytes)
{
    if (bytes > INT_MAX)
        return gs_err_set(m->err, GS_ERR_ARG, "OR of %zu bytes per rank exceeds an MPI count", bytes);
    GS_MPI_CALL(m, MPI_Allreduce, (MPI_IN_PLACE, bits, (int)bytes, MPI_BYTE, MPI_BOR, m->node_comm));
    return GS_OK;
}
