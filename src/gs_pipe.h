/*
 * gs_pipe.h - the chunk pipeline: one rank's shard moves through the backend
 * chunk by chunk, with the reads, copies, kernels and writes of different
 * chunks in flight at once (docs/STREAMING.md).
 *
 * On the CUDA backend chunk k is read (MPI-IO, or a copy from pageable
 * memory) into pinned ring slot k % depth, copied to the device on copy
 * stream 0, reduced or scanned on the compute stream into a device-resident
 * accumulator or carry, copied back on copy stream 1 and written, while chunk
 * k+1 is read and chunk k-depth+1 written: events order the streams, and the
 * host waits only before it reuses a slot and before it writes a chunk. On
 * the CPU backend the same steps run one after another on the host.
 *
 * A pipeline is used by whole-array runs (gs_run.c: files and generated data,
 * collective, every rank taking the same steps) and by gs_reduce / gs_scan on
 * host shards (local, through gs_pipe_host_reduce / gs_pipe_host_scan).
 */
#ifndef GS_PIPE_H
#define GS_PIPE_H

#include "gs_internal.h"
#include "gs_mpi.h"

/* Chunks in flight by default: one being read, one copied in, one computed
 * and one copied out and written. */
#define GS_PIPE_DEFAULT_DEPTH 4

/* Where a pipeline's input comes from and its output goes. */
typedef enum gs_pipe_io {
    GS_IO_NONE,       /* output only: a reduction writes nothing */
    GS_IO_FILE,       /* collective MPI-IO at `offset`, the byte of the shard's element 0 */
    GS_IO_HOST,       /* the caller's host memory */
    GS_IO_GENERATE    /* input only: the generator, on the backend that computes */
} gs_pipe_io;

typedef struct gs_pipe_end {
    gs_pipe_io kind;
    gs_file *file;          /* FILE */
    uint64_t offset;        /* FILE */
    void *host;             /* HOST (only read when it is the input) */
    uint64_t seed;          /* GENERATE */
    int64_t start;          /* GENERATE: the global index of the shard's element 0 */
} gs_pipe_end;

/* Called once per chunk and pass when the chunk is through: after its read
 * in a reduction pass, before its write in a scan pass. `first` indexes the
 * shard; host_in is the chunk's input on the host (NULL where it never
 * visited the host, unless want_host_input); host_out its output (NULL in a
 * reduction pass). Called with m == 0 too, where this rank's shard is
 * shorter than the longest. */
typedef void (*gs_pipe_chunk_fn)(void *data, int64_t first, int64_t m, const void *host_in,
                                 const void *host_out);

typedef struct gs_pipe {
    /* ---- set by the caller before gs_pipe_open ---- */
    gs_context *ctx;
    gs_type type;
    gs_op op;
    gs_scan_kind kind;
    int64_t count;              /* this rank's elements */
    int64_t chunk;              /* elements per chunk, >= 1 */
    int64_t steps;              /* chunks per pass: the same on every rank when collective */
    int depth;                  /* ring slots, 1 to GS_MAX_DEPTH */
    int collective;             /* the ranks agree after every step; FILE ends need it */
    int resident;               /* the backend holds the whole shard: read once */
    const char *name;           /* the input in messages: a path, "generated data" */
    gs_pipe_end in, out;        /* out.kind NONE: no scan pass will run */
    int want_host_input;        /* chunk_done needs host_in even where the input never
                                   visits the host (the reference of --verify) */
    gs_pipe_chunk_fn chunk_done;
    void *chunk_data;
    double t[GS_PHASE_COUNT];   /* seconds per phase, added to by every pass */

    /* ---- private ---- */
    int on_device;              /* CUDA backend */
    size_t in_size, out_size;
    int in_pinned, out_pinned;  /* HOST ends that are page-locked: no staging */
    int loaded;                 /* a resident shard's input is on the backend */
    int scanning;               /* the pass under way is a scan */
    void *c_in, *c_out;         /* resident: the whole shard on the backend */
    gs_acc acc;                 /* CPU: the pass's accumulator or carry */
    struct gs_ring *ring;
    struct gs_pipe_slot {
        unsigned timed;         /* 1 << phase: event pairs recorded for that chunk */
        const void *host_in;    /* what chunk_done will see of its input */
    } slot[GS_MAX_DEPTH];
} gs_pipe;

/* The default chunk for a longest shard of `largest` elements: 32 MiB of
 * input, less where the shard would give fewer than 2 x depth chunks, never
 * under 1 MiB. */
int64_t gs_pipe_default_chunk(int64_t largest, size_t in_size, int depth);

/* Bytes of backend memory a resident shard of `count` elements takes, and a
 * streamed pipeline's ring (out_size 0 for reductions); chunks are padded to
 * start 16-byte aligned. The largest chunk whose ring fits `budget`, 0 when
 * none does. */
uint64_t gs_pipe_resident_bytes(int64_t count, int64_t chunk, size_t in_size, size_t out_size);
uint64_t gs_pipe_ring_bytes(int64_t chunk, int depth, size_t in_size, size_t out_size);
int64_t gs_pipe_fit_chunk(uint64_t budget, int depth, size_t in_size, size_t out_size);

/* Local. Bytes of backend memory the shard's buffers may take on this rank:
 * 85% of the free device memory (CUDA) or half the physical memory (CPU),
 * at most ctx->cfg.device_mem_cap and GS_DEVICE_MEM_CAP (test-only: an
 * environment variable, in bytes) where set. */
gs_status gs_pipe_memory_budget(gs_context *ctx, uint64_t *bytes);

/* Allocate the resident buffers and the ring (kept in ctx between calls).
 * Local; a collective caller agrees on the result. */
gs_status gs_pipe_open(gs_pipe *p);
/* Free the resident buffers; every pass has already waited for the GPU. */
void gs_pipe_close(gs_pipe *p);

/* One pass over the input (read unless resident and already loaded):
 * *partial = the reduction of the shard. */
gs_status gs_pipe_reduce(gs_pipe *p, gs_acc *partial);
/* One pass: the scan of the shard from carry_in, written to p->out. A 64-bit
 * prefix sum that overflows fails with GS_ERR_OVERFLOW. */
gs_status gs_pipe_scan(gs_pipe *p, gs_acc carry_in);

/* Local: a host shard through the GPU, or on the host on the CPU backend.
 * chunk 0 and depth 0 choose the defaults. */
gs_status gs_pipe_host_reduce(gs_context *ctx, gs_type type, gs_op op, const void *in, int64_t n,
                              int64_t chunk, int depth, gs_acc *partial);
gs_status gs_pipe_host_scan(gs_context *ctx, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, int64_t chunk, int depth,
                            gs_acc carry_in);

#endif /* GS_PIPE_H */
