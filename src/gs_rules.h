/*
 * gs_rules.h - the type rules: the one source of what every (type, op) means,
 * shared by the CPU backend (C), the CUDA kernels (C++), the MPI combines and
 * the names of the public API. Nothing here depends on a backend or on MPI.
 *
 * Element types: GS_TYPE_LIST names each with its C type.
 * Results: integer sums and products widen to 64 bits of the same signedness
 * (as NumPy), float sums and products reduce in fp64, min and max keep the
 * element type; a scan's output widens integer sums and products likewise.
 *
 * Reductions accumulate into a gs_acc:
 *   integer sum   signed: exact 128-bit (s), unsigned: exact 128-bit (w);
 *                 the result must fit in 64 bits, else GS_ERR_OVERFLOW
 *   integer prod  wrapping 64-bit (u); signed results are the same bits (NumPy)
 *   integer min/max  64-bit of the input's signedness (i or u)
 *   float (any op)   fp64 (f); min/max propagate NaN
 * Scans carry a 64-bit gs_acc (gs_scan_carry_kind): integer sums wrap (u) and
 * each output element is checked for overflow where it is formed
 * (gs_add_*_overflows), which catches the first overflowing prefix exactly.
 */
#ifndef GS_RULES_H
#define GS_RULES_H

#include <stdint.h>
#include "gpuscan.h"

#ifdef __CUDACC__
#define GS_HD __host__ __device__ __forceinline__
/* the rules that name a type are constant expressions in C++, so that the
 * kernels' traits derive their C++ types from them */
#define GS_HD_CONST __host__ __device__ __forceinline__ constexpr
#else
#define GS_HD static inline
#define GS_HD_CONST static inline
#endif

/* Every element type with its name and C type: X(enum, name, C type). */
#define GS_TYPE_LIST(X)        \
    X(GS_I32, i32, int32_t)    \
    X(GS_I64, i64, int64_t)    \
    X(GS_U32, u32, uint32_t)   \
    X(GS_U64, u64, uint64_t)   \
    X(GS_F32, f32, float)      \
    X(GS_F64, f64, double)

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

GS_HD_CONST int gs_type_is_float(gs_type t) { return t == GS_F32 || t == GS_F64; }
GS_HD_CONST int gs_type_is_signed(gs_type t) { return t == GS_I32 || t == GS_I64; }
GS_HD_CONST int gs_type_bytes(gs_type t) { return t == GS_I32 || t == GS_U32 || t == GS_F32 ? 4 : 8; }

/* i32 -> i64, u32 -> u64; the rest are 64 bits wide already. */
GS_HD_CONST gs_type gs_type_widened(gs_type t) { return t == GS_I32 ? GS_I64 : t == GS_U32 ? GS_U64 : t; }

/* The type of a reduction's result (gpuscan.h: gs_reduce_result_type). */
GS_HD_CONST gs_type gs_rule_reduce_result(gs_type t, gs_op op)
{
    return op == GS_MIN || op == GS_MAX ? t : gs_type_is_float(t) ? GS_F64 : gs_type_widened(t);
}

/* The element type of a scan's output (gpuscan.h: gs_scan_output_type). */
GS_HD_CONST gs_type gs_rule_scan_output(gs_type t, gs_op op)
{
    return op == GS_SUM || op == GS_PROD ? gs_type_widened(t) : t;
}

/* The accumulator of a reduction of (type, op). */
GS_HD_CONST gs_acc_kind gs_reduce_acc_kind(gs_type t, gs_op op)
{
    return gs_type_is_float(t) ? GS_ACC_F64
         : op == GS_SUM ? (gs_type_is_signed(t) ? GS_ACC_S128 : GS_ACC_U128)
         : op == GS_PROD ? GS_ACC_U64
         : gs_type_is_signed(t) ? GS_ACC_I64 : GS_ACC_U64;
}

/* The 64-bit carry of a scan of (type, op): integer sums and products wrap
 * in u64, integer min and max keep the signedness, floats use fp64. */
GS_HD_CONST gs_acc_kind gs_scan_carry_kind(gs_type t, gs_op op)
{
    return gs_type_is_float(t) ? GS_ACC_F64
         : (op == GS_MIN || op == GS_MAX) && gs_type_is_signed(t) ? GS_ACC_I64 : GS_ACC_U64;
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

#endif /* GS_RULES_H */
