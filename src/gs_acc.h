/*
 * gs_acc.h - accumulators and the semantics of each (type, op), shared by the
 * CPU backend (C), the CUDA kernels (C++) and the MPI combines.
 *
 * Reductions accumulate into a gs_acc:
 *   integer sum   signed: exact 128-bit (s), unsigned: exact 128-bit (w);
 *                 the result must fit in 64 bits, else GS_ERR_OVERFLOW
 *   integer prod  wrapping 64-bit (u); signed results are the same bits (NumPy)
 *   integer min/max  64-bit of the input's signedness (i or u)
 *   float (any op)   fp64 (f); min/max propagate NaN
 * Scans carry a 64-bit gs_acc: integer sums wrap (u) and each output element
 * is checked for overflow where it is formed (gs_add_*_overflows), which
 * catches the first overflowing prefix exactly.
 */
#ifndef GS_ACC_H
#define GS_ACC_H

#include <stdint.h>
#include "gpuscan.h"

#ifdef __CUDACC__
#define GS_HD __host__ __device__ __forceinline__
#else
#define GS_HD static inline
#endif

typedef __int128 gs_i128;
typedef unsigned __int128 gs_u128;

typedef union gs_acc {
    int64_t i;
    uint64_t u;
    double f;
    gs_i128 s;
    gs_u128 w;
} gs_acc;

/* Which member of gs_acc a reduction of (type, op) uses. */
typedef enum gs_acc_kind { GS_ACC_I64, GS_ACC_U64, GS_ACC_F64, GS_ACC_S128, GS_ACC_U128 } gs_acc_kind;

GS_HD int gs_type_is_float(gs_type t) { return t == GS_F32 || t == GS_F64; }
GS_HD int gs_type_is_signed(gs_type t) { return t == GS_I32 || t == GS_I64; }

GS_HD gs_acc_kind gs_reduce_acc_kind(gs_type t, gs_op op)
{
    if (gs_type_is_float(t)) return GS_ACC_F64;
    if (op == GS_SUM) return gs_type_is_signed(t) ? GS_ACC_S128 : GS_ACC_U128;
    if (op == GS_PROD) return GS_ACC_U64;
    return gs_type_is_signed(t) ? GS_ACC_I64 : GS_ACC_U64;
}

/* NaN-propagating min and max, as numpy.minimum / numpy.maximum. */
GS_HD double gs_fmin(double a, double b) { return (a != a || a < b) ? a : b; }
GS_HD double gs_fmax(double a, double b) { return (a != a || a > b) ? a : b; }

/* Overflow of one step s = a + b of a prefix sum, where a is an exact prefix. */
GS_HD int gs_add_i64_overflows(int64_t a, int64_t b, int64_t s)
{
    return ((a ^ s) & (b ^ s)) < 0;
}
GS_HD int gs_add_u64_overflows(uint64_t a, uint64_t s) { return s < a; }

/* Largest and smallest value of a type, as an accumulator of its kind. */
GS_HD int64_t gs_type_min_i64(gs_type t) { return t == GS_I32 ? INT32_MIN : INT64_MIN; }
GS_HD int64_t gs_type_max_i64(gs_type t) { return t == GS_I32 ? INT32_MAX : INT64_MAX; }
GS_HD uint64_t gs_type_max_u64(gs_type t) { return t == GS_U32 ? UINT32_MAX : UINT64_MAX; }

/* The identity of (type, op) for reductions and for exclusive scans:
 * 0, 1, the type's max for min, its min for max (+-inf for floats). */
GS_HD gs_acc gs_acc_identity(gs_type t, gs_op op)
{
    gs_acc a;
    a.w = 0;
    if (gs_type_is_float(t)) {
        double inf = __builtin_inf();
        a.f = op == GS_SUM ? 0.0 : op == GS_PROD ? 1.0 : op == GS_MIN ? inf : -inf;
    } else if (op == GS_PROD) {
        a.u = 1;
    } else if (op == GS_MIN) {
        if (gs_type_is_signed(t)) a.i = gs_type_max_i64(t); else a.u = gs_type_max_u64(t);
    } else if (op == GS_MAX) {
        if (gs_type_is_signed(t)) a.i = gs_type_min_i64(t); else a.u = 0;
    }
    return a;
}

/* Combine two reduction partials of (type, op). */
GS_HD gs_acc gs_acc_combine(gs_type t, gs_op op, gs_acc a, gs_acc b)
{
    gs_acc r;
    r.w = 0;
    switch (gs_reduce_acc_kind(t, op)) {
    case GS_ACC_S128: r.s = a.s + b.s; break;
    case GS_ACC_U128: r.w = a.w + b.w; break;
    case GS_ACC_F64:
        r.f = op == GS_SUM ? a.f + b.f : op == GS_PROD ? a.f * b.f
            : op == GS_MIN ? gs_fmin(a.f, b.f) : gs_fmax(a.f, b.f);
        break;
    case GS_ACC_U64:
        r.u = op == GS_PROD ? a.u * b.u : op == GS_MIN ? (a.u < b.u ? a.u : b.u)
                                                       : (a.u > b.u ? a.u : b.u);
        break;
    case GS_ACC_I64:
        r.i = op == GS_MIN ? (a.i < b.i ? a.i : b.i) : (a.i > b.i ? a.i : b.i);
        break;
    }
    return r;
}

/* The 64-bit scan carry that a reduction partial stands for (an integer sum
 * keeps its low 64 bits: prefix sums wrap and are checked per element). */
GS_HD gs_acc gs_acc_scan_carry(gs_type t, gs_op op, gs_acc reduced)
{
    gs_acc c = reduced;
    if (!gs_type_is_float(t) && op == GS_SUM) { c.w = 0; c.u = (uint64_t)reduced.w; }
    return c;
}

#endif /* GS_ACC_H */
