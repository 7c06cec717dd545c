/*
 * gs_verify.h - the independent reference behind --verify and the tests:
 * plain loops over host memory, sharing no code with the backends (only the
 * semantics of gs_rules.h), with the documented error bounds. From
 * GS_VERIFY_PARALLEL_MIN elements on (outside a parallel region) the loops run
 * as blocks (four per OpenMP thread) combined in block order: integer results and
 * wrong counts are those of the serial walk; float references may round
 * differently, within the bounds below.
 *
 * Error bounds for floats (u64 = 2^-53; u_out = 2^-24 for f32 output, 2^-53
 * for f64; N = the global element count):
 *   sum  (reduce and scan): |got - ref| <= u_out*|ref| + 2*N*u64*S + d_out,
 *        S = the sum of |x| over the elements the result covers;
 *   prod (reduce and scan): |got - ref| <= u_out*|ref| + 2*N*u64*|ref| + d_out;
 *   d_out = the output type's smallest subnormal (rounding below the normal
 *   range is absolute, not relative);
 *   min, max: exact. NaN must meet NaN, an infinity the same infinity.
 * Integers are compared exactly.
 */
#ifndef GS_VERIFY_H
#define GS_VERIFY_H

#include "gs_exact.h"
#include "gs_rules.h"

/* Inputs from this many elements on are checked by all OpenMP threads. */
#define GS_VERIFY_PARALLEL_MIN ((int64_t)1 << 16)

/* Reduction partial of in[0..n). */
gs_acc gs_verify_reduce_ref(gs_type type, gs_op op, const void *in, int64_t n);
/* Sum of |x| over in[0..n) (floats; 0 for integers). */
double gs_verify_abs_sum(gs_type type, const void *in, int64_t n);
/* The same, always serial, in index order (the tests compare the two). */
gs_acc gs_verify_reduce_ref_serial(gs_type type, gs_op op, const void *in, int64_t n);
double gs_verify_abs_sum_serial(gs_type type, const void *in, int64_t n);

/* 1 when a float reduction result `got` is within the bound of `ref`
 * (abs_sum: S over all elements); integers and min/max: exact equality. */
int gs_verify_reduce_ok(gs_type type, gs_op op, gs_acc got, gs_acc ref, int64_t n_global,
                        double abs_sum);

/* Element-by-element check of a scan's output, chunk by chunk. */
typedef struct gs_verify_scan {
    gs_type type;
    gs_op op;
    gs_scan_kind kind;
    int64_t n_global;    /* for the float bound */
    gs_acc prefix;       /* reference carry before the next element */
    double abs_prefix;   /* S before the next element */
    int64_t checked;     /* elements checked so far */
    int64_t wrong;       /* elements outside the bound so far */
    int64_t first_wrong; /* local index of the first wrong element, -1 if none */
    int exact;           /* --exact: each element must have the bits of the rounded
                            exact prefix */
    gs_exact exact_prefix;
} gs_verify_scan;

/* --exact: *acc += the exact sum of in[0..n) (f32/f64), element by element
 * through gs_exact_add (not the backends' batched loops). */
void gs_verify_reduce_exact(gs_type type, const void *in, int64_t n, gs_exact *acc);
/* 1 when got has the bits of the reference (any NaN meets any NaN). */
int gs_verify_same_f64(double got, double ref);

/* carry_in: the rank's scan offset; abs_offset: S of all lower ranks. */
void gs_verify_scan_begin(gs_verify_scan *v, gs_type type, gs_op op, gs_scan_kind kind,
                          int64_t n_global, gs_acc carry_in, double abs_offset);
/* --exact: the check demands bit-equality with the reference prefix from
 * the exact carry_in, rounded per element through the state's full rounding
 * (in blocks as the other walks, each from its exact carry in). */
void gs_verify_scan_begin_exact(gs_verify_scan *v, gs_type type, gs_scan_kind kind, const gs_exact *carry_in);
/* Check got[0..n) (elements of gs_scan_output_type) against the next n input
 * elements in[0..n). Returns the wrong count of this chunk. */
int64_t gs_verify_scan_chunk(gs_verify_scan *v, const void *in, const void *got, int64_t n);
/* The same, always serial (the tests compare the two). */
int64_t gs_verify_scan_chunk_serial(gs_verify_scan *v, const void *in, const void *got, int64_t n);

#endif /* GS_VERIFY_H */
