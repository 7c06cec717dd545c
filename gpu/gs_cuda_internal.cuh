/*
 * gs_cuda_internal.cuh - the backend's functions that one .cu file defines
 * and others call, outside gs_cuda.h's C interface: the variant check, the
 * default reduction and scan, the variants behind the entry points, and the
 * CUB calls, with gs_scan_io, where a scan finds its carry and leaves its
 * results.
 * Host declarations only (C++: references, bool); the files that define
 * them are named at each.
 */
#ifndef GS_CUDA_INTERNAL_CUH
#define GS_CUDA_INTERNAL_CUH

#include <stddef.h>
#include <stdint.h>

#include "gs_cuda.h"

/* Where a scan finds its carry and leaves its results (device memory). */
struct gs_scan_io {
    gs_acc carry_in;          /* the carry by value, used when carry_src is NULL */
    const gs_acc *carry_src;
    gs_acc *carry_dst;
    uint32_t *overflow;
};

/* GS_ERR_ARG, with a message, unless `algo` is a variant that serves
 * reductions (scan 0) or scans (scan 1) (gs_cuda_ladder.cu). */
gs_status gs_cuda_check_algo(gs_cuda *g, gs_algo algo, int scan);

/* The default reduction of d_in[0..n), n > 0, queued on the compute stream:
 * *result = the partial, or combine(*result, partial) with `accumulate`
 * (gs_cuda_reduce.cu; the ladder runs it too, without compiling it again). */
gs_status gs_reduce_default(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n, gs_acc *result,
                            bool accumulate);

/* The default scan of d_in[0..n), queued on the compute stream with the
 * carry and overflow flag of `io` (gs_cuda_scan.cu). */
gs_status gs_scan_default(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io);

/* The variant of g->reduce_algo or g->scan_algo in place of the default
 * (gs_cuda_variant.cu), with the default's contract: a reduction replaces
 * *result with its partial, or combines it in (accumulate); a scan follows
 * `io`. Scratch comes from the handle. */
gs_status gs_variant_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                            gs_acc *result, bool accumulate);
gs_status gs_variant_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io);

/* CUB's scan from the carry at *d_carry_in (gs_cuda_ladder_cub.cu), as the
 * cub variant runs it for gs_scan: the carry after the last element goes to
 * *d_carry_out (not d_carry_in: both are read and written by one kernel),
 * overflows of 64-bit sums set *d_overflow. With work == NULL, *bytes = the
 * scratch it needs. At most 2^31 - 1 elements. */
gs_status gs_cub_scan_carried(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                              void *d_out, int64_t n, const gs_acc *d_carry_in, gs_acc *d_carry_out,
                              uint32_t *d_overflow, void *work, size_t *bytes);

/* The ladder's cub variant (gs_cuda_ladder_cub.cu): with work == NULL,
 * *bytes = the scratch a reduction (scan 0, into the reduce_t at d_out) or
 * a scan from the identity needs; else the call, queued on the compute
 * stream. At most 2^31 - 1 elements. */
gs_status gs_cub_run(gs_cuda *g, int scan, gs_type type, gs_op op, gs_scan_kind kind,
                     const void *d_in, void *d_out, int64_t n, void *work, size_t *bytes);

/* The two above, and gs_cuda_ladder_native, for one element type, n checked (gs_cuda_cub.cuh; one
 * instance per type, in gs_cuda_cub_32.cu and gs_cuda_cub_64.cu). */
template <gs_type TYPE>
gs_status gs_cub_run_of(gs_cuda *g, int scan, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out,
                        int n, void *work, size_t *bytes);
template <gs_type TYPE>
gs_status gs_cub_native_of(gs_cuda *g, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out, int n,
                           void *work, size_t *bytes);
template <gs_type TYPE>
gs_status gs_cub_scan_carried_of(gs_cuda *g, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out,
                                 int n, const gs_acc *d_carry_in, gs_acc *d_carry_out, uint32_t *d_overflow,
                                 void *work, size_t *bytes);

#endif /* GS_CUDA_INTERNAL_CUH */
