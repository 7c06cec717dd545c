/*
 * gs_cpu_rules.h - the type rules of gs_rules.h as names the preprocessor can
 * paste, for the CPU backend's kernel templates (gs_cpu_type.inc,
 * gs_cpu_kernels.inc, gs_cpu_fold.inc) and for test_cpu, which checks them.
 *
 * gs_rules.h states each rule once, as a function of (type, op):
 * gs_reduce_acc_kind, gs_scan_carry_kind, gs_rule_scan_output. C can call
 * them but cannot make a type out of their value (C++ can: constexpr, and
 * the CUDA side does), so GS_CPU_RULE_<type>_<op> below writes down their
 * values once per (type, op), as the enum names gs_rules.h uses, and
 * test_cpu ("rule names agree with gs_rules.h") compares every one with the
 * functions. Every C type then follows through two small mappings:
 *   a type's name -> its C type and enum   (from GS_TYPE_LIST)
 *   a kind        -> its gs_acc member      (the member's type is the kind's
 *                                            C type)
 */
#ifndef GS_CPU_RULES_H
#define GS_CPU_RULES_H

#include "gs_rules.h"

/* Token pasting after expansion of the arguments. */
#define GS_CPU_CAT2(a, b) GS_CPU_CAT2_(a, b)
#define GS_CPU_CAT2_(a, b) a##b
#define GS_CPU_CAT4(a, b, c, d) GS_CPU_CAT4_(a, b, c, d)
#define GS_CPU_CAT4_(a, b, c, d) a##b##c##d

/* ---- types and ops by name --------------------------------------------------- */

/* gs_cpu_elem_i32 is int32_t and GS_CPU_TYPE_OF(i32) is GS_I32, for every
 * type of GS_TYPE_LIST. */
#define GS_CPU_ELEM_TYPEDEF(e, name, c_type) typedef c_type gs_cpu_elem_##name;
GS_TYPE_LIST(GS_CPU_ELEM_TYPEDEF)
#undef GS_CPU_ELEM_TYPEDEF
#define GS_CPU_TYPE_ENUM(e, name, c_type) gs_cpu_type_##name = e,
enum { GS_TYPE_LIST(GS_CPU_TYPE_ENUM) };
#undef GS_CPU_TYPE_ENUM
#define GS_CPU_TYPE_OF(name) ((gs_type)GS_CPU_CAT2(gs_cpu_type_, name))

/* The ops by the names gs_op_name gives them: GS_CPU_OP_OF(sum) is GS_SUM. */
#define GS_CPU_OP_sum GS_SUM
#define GS_CPU_OP_prod GS_PROD
#define GS_CPU_OP_min GS_MIN
#define GS_CPU_OP_max GS_MAX
#define GS_CPU_OP_OF(name) GS_CPU_CAT2(GS_CPU_OP_, name)

/* ---- kinds ------------------------------------------------------------------ */

/* A kind's gs_acc member, and the 64-bit member of the same kind of number
 * (a 128-bit sum's 64-bit lanes, which gs_cpu_kernels.inc uses for 32-bit
 * elements). The C type of a kind is its member's. */
#define GS_CPU_MEMBER_GS_ACC_I64 i
#define GS_CPU_MEMBER_GS_ACC_U64 u
#define GS_CPU_MEMBER_GS_ACC_F64 f
#define GS_CPU_MEMBER_GS_ACC_S128 s
#define GS_CPU_MEMBER_GS_ACC_U128 w
#define GS_CPU_MEMBER64_GS_ACC_I64 i
#define GS_CPU_MEMBER64_GS_ACC_U64 u
#define GS_CPU_MEMBER64_GS_ACC_F64 f
#define GS_CPU_MEMBER64_GS_ACC_S128 i
#define GS_CPU_MEMBER64_GS_ACC_U128 u

#define GS_CPU_MEMBER(kind) GS_CPU_CAT2(GS_CPU_MEMBER_, kind)
#define GS_CPU_MEMBER64(kind) GS_CPU_CAT2(GS_CPU_MEMBER64_, kind)
#define GS_CPU_KIND_TYPE(kind) __typeof__(((gs_acc *)0)->GS_CPU_MEMBER(kind))
#define GS_CPU_KIND64_TYPE(kind) __typeof__(((gs_acc *)0)->GS_CPU_MEMBER64(kind))

/* The overflow check of one step s = a + v of a prefix sum (uint64_t a, v,
 * s) whose reduction is of `kind`: exact 128-bit reductions are those of
 * integer sums, whose 64-bit prefixes can overflow (gs_rules.h); the other
 * kinds' prefixes wrap (products) or are floats, and never overflow. */
#define GS_CPU_OVERFLOWS_GS_ACC_S128(a, v, s)                                                 \
    gs_add_i64_overflows((int64_t)(a), (int64_t)(v), (int64_t)(s))
#define GS_CPU_OVERFLOWS_GS_ACC_U128(a, v, s) gs_add_u64_overflows((a), (s))
#define GS_CPU_OVERFLOWS_GS_ACC_I64(a, v, s) 0
#define GS_CPU_OVERFLOWS_GS_ACC_U64(a, v, s) 0
#define GS_CPU_OVERFLOWS_GS_ACC_F64(a, v, s) 0
#define GS_CPU_STEP_OVERFLOWS(kind) GS_CPU_CAT2(GS_CPU_OVERFLOWS_, kind)

/* ---- the rules of each (type, op) ------------------------------------------- */

/*                       gs_reduce_acc_kind  gs_scan_carry_kind  gs_rule_scan_output */
#define GS_CPU_RULE_i32_sum  GS_ACC_S128,        GS_ACC_U64,         i64
#define GS_CPU_RULE_i32_prod GS_ACC_U64,         GS_ACC_U64,         i64
#define GS_CPU_RULE_i32_min  GS_ACC_I64,         GS_ACC_I64,         i32
#define GS_CPU_RULE_i32_max  GS_ACC_I64,         GS_ACC_I64,         i32
#define GS_CPU_RULE_i64_sum  GS_ACC_S128,        GS_ACC_U64,         i64
#define GS_CPU_RULE_i64_prod GS_ACC_U64,         GS_ACC_U64,         i64
#define GS_CPU_RULE_i64_min  GS_ACC_I64,         GS_ACC_I64,         i64
#define GS_CPU_RULE_i64_max  GS_ACC_I64,         GS_ACC_I64,         i64
#define GS_CPU_RULE_u32_sum  GS_ACC_U128,        GS_ACC_U64,         u64
#define GS_CPU_RULE_u32_prod GS_ACC_U64,         GS_ACC_U64,         u64
#define GS_CPU_RULE_u32_min  GS_ACC_U64,         GS_ACC_U64,         u32
#define GS_CPU_RULE_u32_max  GS_ACC_U64,         GS_ACC_U64,         u32
#define GS_CPU_RULE_u64_sum  GS_ACC_U128,        GS_ACC_U64,         u64
#define GS_CPU_RULE_u64_prod GS_ACC_U64,         GS_ACC_U64,         u64
#define GS_CPU_RULE_u64_min  GS_ACC_U64,         GS_ACC_U64,         u64
#define GS_CPU_RULE_u64_max  GS_ACC_U64,         GS_ACC_U64,         u64
#define GS_CPU_RULE_f32_sum  GS_ACC_F64,         GS_ACC_F64,         f32
#define GS_CPU_RULE_f32_prod GS_ACC_F64,         GS_ACC_F64,         f32
#define GS_CPU_RULE_f32_min  GS_ACC_F64,         GS_ACC_F64,         f32
#define GS_CPU_RULE_f32_max  GS_ACC_F64,         GS_ACC_F64,         f32
#define GS_CPU_RULE_f64_sum  GS_ACC_F64,         GS_ACC_F64,         f64
#define GS_CPU_RULE_f64_prod GS_ACC_F64,         GS_ACC_F64,         f64
#define GS_CPU_RULE_f64_min  GS_ACC_F64,         GS_ACC_F64,         f64
#define GS_CPU_RULE_f64_max  GS_ACC_F64,         GS_ACC_F64,         f64

/* The three rules of (type name t, op name o). */
#define GS_CPU_REDUCE_KIND(t, o) GS_CPU_FIRST(GS_CPU_CAT4(GS_CPU_RULE_, t, _, o))
#define GS_CPU_CARRY_KIND(t, o) GS_CPU_SECOND(GS_CPU_CAT4(GS_CPU_RULE_, t, _, o))
#define GS_CPU_OUT_NAME(t, o) GS_CPU_THIRD(GS_CPU_CAT4(GS_CPU_RULE_, t, _, o))
#define GS_CPU_FIRST(...) GS_CPU_FIRST_(__VA_ARGS__)
#define GS_CPU_FIRST_(a, b, c) a
#define GS_CPU_SECOND(...) GS_CPU_SECOND_(__VA_ARGS__)
#define GS_CPU_SECOND_(a, b, c) b
#define GS_CPU_THIRD(...) GS_CPU_THIRD_(__VA_ARGS__)
#define GS_CPU_THIRD_(a, b, c) c

#endif /* GS_CPU_RULES_H */
