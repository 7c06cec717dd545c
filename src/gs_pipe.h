/*
 * gs_pipe.h - the chunk pipeline: one rank's shard moves through the backend
 * chunk by chunk, with the reads, copies, kernels and writes of different
 * chunks in flight at once (docs/STREAMING.md).
 *
 * Chunk k is read (MPI-IO, a copy from the caller's memory, or the
 * generator) into ring slot k % depth, copied to the backend on the copy-in
 * stream, reduced or scanned on the compute stream into an accumulator or
 * carry in backend memory, copied back on the copy-out stream and written,
 * while chunk k+1 is read and chunk k-depth+1 written: events order the
 * streams, and the host waits only before it reuses a slot and before it
 * writes a chunk. A backend that computes on host memory (the CPU's) needs
 * no copies and runs each step at once; the sequence of calls is the same.
 *
 * Used by whole-array runs (gs_run.c: files and generated data, collective,
 * every rank taking the same steps) and by gs_reduce / gs_scan on host
 * shards of the CUDA backend (local). Layout: gs_plan.h; buffers: gs_ring.h.
 */
#ifndef GS_PIPE_H
#define GS_PIPE_H

#include "gs_backend.h"
#include "gs_h5.h"
#include "gs_mpi.h"
#include "gs_plan.h"
#include "gs_ring.h"

/* Where a pipeline's input comes from and its output goes. */
typedef enum gs_pipe_io {
    GS_IO_NONE,       /* output only: a reduction writes nothing */
    GS_IO_FILE,       /* collective MPI-IO at `offset`, the byte of the shard's element 0;
                         or, where `h5` is set, HDF5 at that byte of the dataset's flat data */
    GS_IO_HOST,       /* the caller's host memory */
    GS_IO_GENERATE    /* input only: the generator, on the backend that computes */
} gs_pipe_io;

typedef struct gs_pipe_end {
    gs_pipe_io kind;
    gs_file *file;          /* FILE through MPI-IO */
    gs_h5 *h5;              /* FILE through HDF5 (file unused) */
    uint64_t offset;        /* FILE */
    void *host;             /* HOST (only read when it is the input) */
    uint64_t seed;          /* GENERATE */
    int64_t start;          /* GENERATE: the global index of the shard's element 0 */
} gs_pipe_end;

/* Called once per chunk and pass, on every rank of a collective pipeline,
 * when the chunk is through: after its read in a reduction pass, before its
 * write in a scan pass; with m == 0 too, where this rank's shard is shorter
 * than the longest, and with `st` the step's status so far, so that it can
 * take part in collective calls whatever failed. `first` indexes the shard;
 * host_in is the chunk's input on the host, NULL on every rank alike where
 * the input never passes the host (generated on, or resident in, device
 * memory); host_out its output (NULL in a reduction pass). Returns the
 * step's status. */
typedef gs_status (*gs_pipe_chunk_fn)(void *data, int64_t k, int64_t first, int64_t m,
                                      const void *host_in, const void *host_out, gs_status st);

typedef struct gs_pipe {
    /* ---- set by the caller before gs_pipe_open ---- */
    gs_be *be;
    gs_mpi *mpi;                /* collective pipelines: the ranks agree after every step;
                                   NULL: local */
    gs_err *err;
    gs_ring *ring;
    gs_type type;
    gs_op op;
    gs_scan_kind kind;
    int64_t count;              /* this rank's elements */
    int64_t chunk;              /* elements per chunk, >= 1 */
    int64_t steps;              /* chunks per pass: the same on every rank when collective */
    int depth;                  /* ring slots, 1 to GS_MAX_DEPTH */
    int resident;               /* the backend holds the whole shard: read once */
    int exact;                  /* --exact f32/f64 sums: gs_exact states, the exact entries */
    const char *name;           /* the input in messages: a path, "generated data" */
    gs_pipe_end in, out;        /* out.kind NONE: no scan pass will run */
    gs_pipe_chunk_fn chunk_done;
    void *chunk_data;
    double t[GS_PHASE_COUNT];   /* seconds per phase, added to by every pass */

    /* ---- private ---- */
    int on_host;                /* the backend computes on host memory */
    size_t in_size, out_size;
    int in_pinned, out_pinned;  /* HOST ends that are page-locked: no staging */
    int loaded;                 /* a resident shard's input is on the backend */
    int scanning;               /* the pass under way is a scan */
    void *c_in, *c_out;         /* resident: the whole shard on the backend */
    struct gs_pipe_slot {
        unsigned timed;         /* 1 << phase: event pairs recorded for that chunk */
        const void *host_in;    /* what chunk_done will see of its input */
    } slot[GS_MAX_DEPTH];
} gs_pipe;

/* 1 when chunk_done's host_in shows the input in the pass about to run
 * (the same on every rank of a collective pipeline); 0 where the input never
 * passes the host: generated on the device, or resident there already. */
int gs_pipe_input_on_host(const gs_pipe *p);

/* Allocate the resident buffers and the ring's slots. Local; a collective
 * caller agrees on the result. */
gs_status gs_pipe_open(gs_pipe *p);
/* Free the resident buffers; every pass has already waited for the backend. */
void gs_pipe_close(gs_pipe *p);

/* One pass over the input (read unless resident and already loaded):
 * *partial = the reduction of the shard. */
gs_status gs_pipe_reduce(gs_pipe *p, gs_acc *partial);
/* One pass: the scan of the shard from carry_in, written to p->out. A 64-bit
 * prefix sum that overflows fails with GS_ERR_OVERFLOW. */
gs_status gs_pipe_scan(gs_pipe *p, gs_acc carry_in);

/* The same of an exact pipeline (p->exact): the exact sum of the shard; the
 * scan from the exact carry_in, each element rounded once. */
gs_status gs_pipe_reduce_exact(gs_pipe *p, gs_exact *partial);
gs_status gs_pipe_scan_exact(gs_pipe *p, const gs_exact *carry_in);

/* The ends (gs_pipe_io.c). Chunk k's input, m elements, into `dst` on the
 * host: a collective read of the file (nothing read, but the call made,
 * where `st` already failed), a copy of the caller's memory, or the
 * generator; timed as `phase`. */
gs_status gs_pipe_read(gs_pipe *p, int64_t k, int64_t m, void *dst, gs_status st, gs_phase phase);
/* Chunk j's output, m elements from `src`, to the output end: a collective
 * write (likewise), or a copy to the caller's memory. */
gs_status gs_pipe_write(gs_pipe *p, int64_t j, int64_t m, const void *src, gs_status st);

/* Local: a host shard through the backend. chunk 0 and depth 0 choose the
 * defaults. */
gs_status gs_pipe_host_reduce(gs_be *be, gs_ring *ring, gs_type type, gs_op op, const void *in,
                              int64_t n, int64_t chunk, int depth, gs_acc *partial);
gs_status gs_pipe_host_scan(gs_be *be, gs_ring *ring, gs_type type, gs_op op, gs_scan_kind kind,
                            const void *in, void *out, int64_t n, int64_t chunk, int depth,
                            gs_acc carry_in);
/* Local, exact: out NULL: *state = the exact sum of in[0..n); else the
 * exact scan of in into out from *state. */
gs_status gs_pipe_host_exact(gs_be *be, gs_ring *ring, gs_type type, gs_scan_kind kind, const void *in,
                             void *out, int64_t n, gs_exact *state);

#endif /* GS_PIPE_H */
