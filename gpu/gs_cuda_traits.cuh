/*
 * gs_cuda_traits.cuh - the C++ face of gs_rules.h for the kernels: the
 * element type of each gs_type, gs_traits (the C++ types of one (type, op)),
 * gs_acc access by type, the op on any accumulator (gs_combine), and
 * gs_dispatch(), which turns a run-time (type, op) into a template instance.
 * One template per kernel then serves every (type, op).
 */
#ifndef GS_CUDA_TRAITS_CUH
#define GS_CUDA_TRAITS_CUH

#include <stdint.h>
#include <type_traits>

#include "gs_rules.h"

/* The qualifiers of the device-only helpers (warp primitives, agents). */
#define GS_DEV __device__ __forceinline__

template <gs_type TYPE> struct gs_element;
template <> struct gs_element<GS_I32> { using type = int32_t; };
template <> struct gs_element<GS_I64> { using type = int64_t; };
template <> struct gs_element<GS_U32> { using type = uint32_t; };
template <> struct gs_element<GS_U64> { using type = uint64_t; };
template <> struct gs_element<GS_F32> { using type = float; };
template <> struct gs_element<GS_F64> { using type = double; };

/* The C++ types of one (type, op), as gs_rules.h rules:
 *   in_t      the element
 *   scan_t    the 64-bit scan carry: integer sums and products wrap in
 *             uint64_t, min/max keep the signedness, floats use fp64
 *   out_t     a scan's output element (gs_scan_output_type)
 *   reduce_t  the reduction accumulator (gs_reduce_acc_kind)
 *   thread_t  one thread's reduction accumulator: a thread sees fewer than
 *             2^32 elements, so 32-bit sums are exact in 64 bits */
template <gs_type TYPE, gs_op OP>
struct gs_traits {
    static constexpr gs_type type = TYPE;
    static constexpr gs_op op = OP;
    static constexpr bool is_float = TYPE == GS_F32 || TYPE == GS_F64;
    static constexpr bool is_signed = TYPE == GS_I32 || TYPE == GS_I64;
    static constexpr bool is_int_sum = !is_float && OP == GS_SUM;
    static constexpr bool is_min_max = OP == GS_MIN || OP == GS_MAX;

    using in_t = typename gs_element<TYPE>::type;
    using scan_t = std::conditional_t<is_float, double,
                   std::conditional_t<is_min_max && is_signed, int64_t, uint64_t>>;
    using out_t = std::conditional_t<is_float || is_min_max, in_t,
                  std::conditional_t<is_signed, int64_t, uint64_t>>;
    using reduce_t = std::conditional_t<is_int_sum,
                     std::conditional_t<is_signed, gs_i128, gs_u128>, scan_t>;
    using thread_t = std::conditional_t<is_int_sum && sizeof(in_t) == 4,
                     std::conditional_t<is_signed, int64_t, uint64_t>, reduce_t>;
    /* work_t: what a scan computes in inside a tile: min and max are exact
     * in the element type (no widening, no fp64), the rest use scan_t */
    using work_t = std::conditional_t<is_min_max, in_t, scan_t>;
    /* Elements per scan vector: 16 bytes of the wider of input and output,
     * so that the stores are 16 bytes wide (loads 8 when the output widens). */
    static constexpr int scan_vec = 16 / (sizeof(in_t) > sizeof(out_t) ? sizeof(in_t) : sizeof(out_t));
};

/* gs_acc's member for each accumulator type (the member gs_rules.h names for
 * its kind); the other bytes are zero. */
GS_HD int64_t gs_acc_get(gs_acc a, int64_t *) { return a.i; }
GS_HD uint64_t gs_acc_get(gs_acc a, uint64_t *) { return a.u; }
GS_HD double gs_acc_get(gs_acc a, double *) { return a.f; }
GS_HD gs_i128 gs_acc_get(gs_acc a, gs_i128 *) { return a.s; }
GS_HD gs_u128 gs_acc_get(gs_acc a, gs_u128 *) { return a.w; }
GS_HD void gs_acc_set(gs_acc *a, int64_t v) { a->i = v; }
GS_HD void gs_acc_set(gs_acc *a, uint64_t v) { a->u = v; }
GS_HD void gs_acc_set(gs_acc *a, double v) { a->f = v; }
GS_HD void gs_acc_set(gs_acc *a, gs_i128 v) { a->s = v; }
GS_HD void gs_acc_set(gs_acc *a, gs_u128 v) { a->w = v; }

template <class A> GS_HD A gs_from_acc(gs_acc a) { return gs_acc_get(a, (A *)nullptr); }
template <class A> GS_HD gs_acc gs_to_acc(A v)
{
    gs_acc a;
    a.w = 0;
    gs_acc_set(&a, v);
    return a;
}

template <class Tr> GS_HD typename Tr::scan_t gs_scan_identity()
{
    return gs_from_acc<typename Tr::scan_t>(gs_acc_identity(Tr::type, Tr::op));
}

/* The op on any accumulator; floats take the NaN-propagating min and max. */
template <class A> GS_HD A gs_min_of(A a, A b) { return b < a ? b : a; }
template <class A> GS_HD A gs_max_of(A a, A b) { return b > a ? b : a; }
GS_HD double gs_min_of(double a, double b) { return gs_fmin(a, b); }
GS_HD double gs_max_of(double a, double b) { return gs_fmax(a, b); }
GS_HD float gs_min_of(float a, float b) { return (a != a || a < b) ? a : b; }
GS_HD float gs_max_of(float a, float b) { return (a != a || a > b) ? a : b; }

template <gs_op OP, class A> GS_HD A gs_combine(A a, A b)
{
    if constexpr (OP == GS_SUM) return a + b;
    else if constexpr (OP == GS_PROD) return a * b;
    else if constexpr (OP == GS_MIN) return gs_min_of(a, b);
    else return gs_max_of(a, b);
}

/* ---- dispatch ---------------------------------------------------------------- */

/* fn(gs_traits<TYPE, OP>{}) for the run-time (type, op); the caller has
 * checked both are in range. */
template <gs_type TYPE, class Fn> gs_status gs_dispatch_op(gs_op op, Fn &&fn)
{
    switch (op) {
    case GS_SUM: return fn(gs_traits<TYPE, GS_SUM>{});
    case GS_PROD: return fn(gs_traits<TYPE, GS_PROD>{});
    case GS_MIN: return fn(gs_traits<TYPE, GS_MIN>{});
    default: return fn(gs_traits<TYPE, GS_MAX>{});
    }
}

template <class Fn> gs_status gs_dispatch(gs_type type, gs_op op, Fn &&fn)
{
    switch (type) {
    case GS_I32: return gs_dispatch_op<GS_I32>(op, fn);
    case GS_I64: return gs_dispatch_op<GS_I64>(op, fn);
    case GS_U32: return gs_dispatch_op<GS_U32>(op, fn);
    case GS_U64: return gs_dispatch_op<GS_U64>(op, fn);
    case GS_F32: return gs_dispatch_op<GS_F32>(op, fn);
    default: return gs_dispatch_op<GS_F64>(op, fn);
    }
}

#endif /* GS_CUDA_TRAITS_CUH */
