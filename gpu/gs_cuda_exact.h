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

/* The state in device memory (*d_acc, *d_carry) may come normalized or
 * not (gs_exact.h: pending honest). When n > 0 it is normalized on return
 * (in stream order: pending == 0); n == 0 queues nothing and leaves it as
 * it was, bit for bit. Either way it is a valid state to round or merge.
 * The CPU backend promises only the valid state. */

/* *d_acc += the exact sum of d_in[0..n) (f32 or f64). */
gs_status gs_cuda_reduce_exact_async(gs_cuda *g, gs_type type, const void *d_in, int64_t n,
                                     gs_exact *d_acc);

/* d_out[i] = the exact *d_carry + d_in[0] + ... + d_in[i] (inclusive; up to
 * d_in[i-1] exclusive) rounded once to the element type, then *d_carry +=
 * the exact sum of d_in[0..n). d_in == d_out is allowed. The handle keeps
 * tile states of 624 bytes per tile (of 32 KiB: 1.9% of the input's bytes;
 * 64 KiB for long f64 tiles) for the largest n it has scanned. */
gs_status gs_cuda_scan_exact_async(gs_cuda *g, gs_type type, gs_scan_kind kind, const void *d_in,
                                   void *d_out, int64_t n, gs_exact *d_carry);

/* The tiles of f64 exact scans: by default (AUTO) long ones (8192
 * elements, 71 KiB of shared memory a block) where three of their blocks
 * fit a multiprocessor, else short ones (4096); SHORT and LONG choose,
 * for tests and measurements (LONG is refused, GS_ERR_ARG, where a block
 * cannot have its 71 KiB). The bits of the results are the same either
 * way. */
typedef enum { GS_CUDA_EXACT_TILES_AUTO, GS_CUDA_EXACT_TILES_SHORT, GS_CUDA_EXACT_TILES_LONG } gs_cuda_exact_tiles;
gs_status gs_cuda_set_exact_tiles(gs_cuda *g, gs_cuda_exact_tiles tiles);

/* For tests: the next exact scan takes the epoch at which the 30 bits a
 * tile state keeps of it wrap, so that it clears the handle's tile states
 * (no scan may read an earlier scan's states as its own). */
void gs_cuda_exact_epoch_to_wrap(gs_cuda *g);

#ifdef __cplusplus
}
#endif
#endif /* GS_CUDA_EXACT_H */
