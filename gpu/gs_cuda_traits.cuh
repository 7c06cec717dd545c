/*
 * gs_cuda_traits.cuh - the C++ face of gs_rules.h for the kernels: the
 * element type of each gs_type, gs_traits (the C++ types of one (type, op)),
 * gs_acc access by type, the op on any accumulator (gs_combine), and
 * gs_dispatch(), which turns a run-time (type, op) into a template instance.
 *
 * The types are not restated here: gs_traits derives them from the rules
 * (GS_TYPE_LIST, gs_rule_scan_output, gs_scan_carry_kind,
 * gs_reduce_acc_kind), which are constant expressions in CUDA C++. One
 * template per kernel then serves every (type, op).
 */
#ifndef GS_CUDA_TRAITS_CUH
#define GS_CUDA_TRAITS_CUH

#include <stdint.h>
#include <type_traits>

#include "gs_rules.h"

/* The qualifiers of the device-only helpers (warp primitives, agents). */
#define GS_DEV __device__ __forceinline__

/* The C type of each element type, from GS_TYPE_LIST. */
template <gs_type TYPE> struct gs_element;
#define GS_ELEMENT_(type_, name_, ctype_) \
    template <> struct gs_element<type_> { using type = ctype_; };
GS_TYPE_LIST(GS_ELEMENT_)
#undef GS_ELEMENT_

/* The C++ type of each member of gs_acc. */
template <gs_acc_kind KIND> struct gs_acc_type;
template <> struct gs_acc_type<GS_ACC_I64> { using type = int64_t; };
template <> struct gs_acc_type<GS_ACC_U64> { using type = uint64_t; };
template <> struct gs_acc_type<GS_ACC_F64> { using type = double; };
template <> struct gs_acc_type<GS_ACC_S128> { using type = gs_i128; };
template <> struct gs_acc_type<GS_ACC_U128> { using type = gs_u128; };

/* The C++ types of one (type, op), as gs_rules.h rules:
 *   in_t      the element
 *   scan_t    the 64-bit scan carry (gs_scan_carry_kind): integer sums and
 *             products wrap in uint64_t, min/max keep the signedness,
 *             floats use fp64
 *   out_t     a scan's output element (gs_rule_scan_output)
 *   reduce_t  the reduction accumulator (gs_reduce_acc_kind)
 *   thread_t  one thread's reduction accumulator: a thread sees fewer than
 *             2^32 elements, so 32-bit sums are exact in 64 bits (the
 *             widened element) */
template <gs_type TYPE, gs_op OP>
struct gs_traits {
    static constexpr gs_type type = TYPE;
    static constexpr gs_op op = OP;
    static constexpr bool is_float = gs_type_is_float(TYPE);
    static constexpr bool is_signed = gs_type_is_signed(TYPE);
    static constexpr bool is_int_sum = !is_float && OP == GS_SUM;
    static constexpr bool is_min_max = OP == GS_MIN || OP == GS_MAX;

    using in_t = typename gs_element<TYPE>::type;
    using scan_t = typename gs_acc_type<gs_scan_carry_kind(TYPE, OP)>::type;
    using out_t = typename gs_element<gs_rule_scan_output(TYPE, OP)>::type;
    using reduce_t = typename gs_acc_type<gs_reduce_acc_kind(TYPE, OP)>::type;
    using thread_t = std::conditional_t<is_int_sum && sizeof(in_t) == 4,
                     typename gs_element<gs_type_widened(TYPE)>::type, reduce_t>;
    /* work_t: what a scan computes in inside a tile: min and max are exact
     * in the element type (no widening, no fp64), the rest use scan_t */
    using work_t = std::conditional_t<is_min_max, in_t, scan_t>;
    /* Elements per scan vector: 16 bytes of the wider of input and output,
     * so that the stores are 16 bytes wide (loads 8 when the output widens). */
    static constexpr int scan_vec = 16 / (sizeof(in_t) > sizeof(out_t) ? sizeof(in_t) : sizeof(out_t));
};

/* A few of the derived types, spelt out. */
static_assert(std::is_same_v<gs_traits<GS_I32, GS_SUM>::out_t, int64_t> &&
              std::is_same_v<gs_traits<GS_I32, GS_SUM>::scan_t, uint64_t> &&
              std::is_same_v<gs_traits<GS_I32, GS_SUM>::reduce_t, gs_i128> &&
              std::is_same_v<gs_traits<GS_I32, GS_SUM>::thread_t, int64_t>,
              "i32 sums: i64 output, wrapping u64 carry, exact 128-bit reduction");
static_assert(std::is_same_v<gs_traits<GS_I64, GS_MIN>::scan_t, int64_t> &&
              std::is_same_v<gs_traits<GS_U32, GS_MAX>::out_t, uint32_t> &&
              std::is_same_v<gs_traits<GS_U32, GS_PROD>::reduce_t, uint64_t>,
              "integer min/max keep type and signedness; products wrap in u64");
static_assert(std::is_same_v<gs_traits<GS_F32, GS_SUM>::out_t, float> &&
              std::is_same_v<gs_traits<GS_F32, GS_SUM>::scan_t, double> &&
              std::is_same_v<gs_traits<GS_F32, GS_MIN>::reduce_t, double>,
              "floats: fp64 carries and accumulators, output in the element type");

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

/* fn(std::integral_constant<gs_type, TYPE>{}) for the run-time type. */
template <class Fn> gs_status gs_dispatch_type(gs_type type, Fn &&fn)
{
    switch (type) {
    case GS_I32: return fn(std::integral_constant<gs_type, GS_I32>{});
    case GS_I64: return fn(std::integral_constant<gs_type, GS_I64>{});
    case GS_U32: return fn(std::integral_constant<gs_type, GS_U32>{});
    case GS_U64: return fn(std::integral_constant<gs_type, GS_U64>{});
    case GS_F32: return fn(std::integral_constant<gs_type, GS_F32>{});
    default: return fn(std::integral_constant<gs_type, GS_F64>{});
    }
}

template <class Fn> gs_status gs_dispatch(gs_type type, gs_op op, Fn &&fn)
{
    return gs_dispatch_type(type, [&](auto t) { return gs_dispatch_op<decltype(t)::value>(op, fn); });
}

#endif /* GS_CUDA_TRAITS_CUH */
