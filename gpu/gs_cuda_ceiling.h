/*
 * gs_cuda_ceiling.h - the copy bandwidths that bound the CUDA backend, the
 * "100%" of `gpuscan bench`. C interface, no MPI.
 *
 * A reduction reads its input once and a scan reads it and writes its
 * output once, so the fastest either can go on resident data is the rate at
 * which the device copies memory to memory, and on streamed data the rate
 * at which pinned host memory reaches the device (reductions) or crosses
 * the link both ways at once (scans: their input in, their output out).
 */
#ifndef GS_CUDA_CEILING_H
#define GS_CUDA_CEILING_H

#include "gs_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gs_cuda_copy_kind {
    GS_CUDA_COPY_D2D,   /* device to device: counts bytes read plus bytes written */
    GS_CUDA_COPY_H2D,   /* pinned host to device: counts the bytes that cross the link */
    GS_CUDA_COPY_DUPLEX /* pinned host to device and device to pinned host at once, on two
                           copy streams: counts the bytes that cross the link both ways */
} gs_cuda_copy_kind;

/* The most copies one measurement times. */
#define GS_CUDA_CEILING_MAX_REPS 64

/* The median bandwidth, GB/s (10^9 bytes/s), of `reps` copies of `bytes`
 * (after one untimed copy), each timed with CUDA events on g's stream (a
 * duplex copy: `bytes` each way, from an event on g's stream to the later of
 * the two copies' ends).
 * Allocates its buffers, and frees them on every path. */
gs_status gs_cuda_copy_bandwidth(gs_cuda *g, gs_cuda_copy_kind kind, size_t bytes, int reps,
                                 double *gbps);

#ifdef __cplusplus
}
#endif
#endif /* GS_CUDA_CEILING_H */
