/*
 * gs_cuda_exact.h - the CUDA backend's exact float sums (--exact,
 * gs_exact.h) behind a C interface: the gs_backend.h entries
 * reduce_exact_async and scan_exact_async. Queued on the handle's compute
 * stream; nothing waits. The design: gs_cuda_exact_agent.cuh.
 */
#ifndef GS_CUDA_EXACT_H
#define GS_CUDA_EXACT_H

#include "gs_cuda.h"
#include "gs_exact.h"

#ifdef __cplusplus
extern "C" {
#endif

/* *d_acc += the exact sum of d_in[0..n) (f32 or f64); d_acc in device
 * memory, normalized on return. */
gs_status gs_cuda_reduce_exact_async(gs_cuda *g, gs_type type, const void *d_in, int64_t n,
                                     gs_exact *d_acc);

/* d_out[i] = the exact *d_carry + d_in[0] + ... + d_in[i] (inclusive; up to
 * d_in[i-1] exclusive) rounded once to the element type, then *d_carry +=
 * the exact sum of d_in[0..n); d_carry in device memory. d_in == d_out is
 * allowed. */
gs_status gs_cuda_scan_exact_async(gs_cuda *g, gs_type type, gs_scan_kind kind, const void *d_in,
                                   void *d_out, int64_t n, gs_exact *d_carry);

#ifdef __cplusplus
}
#endif
#endif /* GS_CUDA_EXACT_H */
