/*
 * gpuscan.h - the public interface of libgpuscan.
 *
 * Global reductions (sum, prod, min, max) and prefix scans (inclusive,
 * exclusive) over an array distributed across the ranks of an MPI
 * communicator, one contiguous shard per rank, computed on one GPU per rank
 * (CUDA backend) or on the host (CPU backend, OpenMP).
 *
 * Conventions:
 *  - every function that can fail returns a gs_status; GS_OK is 0. After a
 *    failure gs_context_error() holds a message naming the rank and cause.
 *  - functions marked "collective" must be called by every rank of the
 *    context's communicator, with the same operation, element type, scan
 *    kind and (for runs) source; only shards and counts differ. They agree
 *    on success before returning, so all ranks return the same status and
 *    none is left waiting; ranks that pass different operations, types or
 *    kinds all get GS_ERR_ARG, before any step that depends on them.
 *  - element counts and offsets are 64-bit everywhere.
 *  - threads: a context is used by one thread at a time (calls on one context
 *    from several threads at once must be serialised by the caller, as for an
 *    MPI communicator); distinct contexts, and the functions that take no
 *    context, may be used from different threads, except gs_context_create
 *    and gs_context_destroy, which one thread at a time calls. MPI must be
 *    initialised with at least MPI_THREAD_SERIALIZED where several threads
 *    call gpuscan.
 *  - device memory (CUDA backend): gs_reduce and gs_scan read and write device
 *    pointers on the library's own streams, which do not wait for the
 *    caller's. The caller makes the data ready before the call (for example
 *    cudaStreamSynchronize or cudaDeviceSynchronize of the stream that wrote
 *    it); when the call returns, the library's work on the data is complete
 *    and the output may be used from any stream.
 */
#ifndef GPUSCAN_H
#define GPUSCAN_H

#include <stddef.h>
#include <stdint.h>
/* The CUDA backend's sources see the types below but never MPI. */
#ifndef GPUSCAN_NO_MPI
#include <mpi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The library's own symbols are hidden; these are the ones it exports. */
#if defined(__GNUC__)
#define GS_API __attribute__((visibility("default")))
#else
#define GS_API
#endif

#include "gpuscan_version.h"   /* GS_VERSION_MAJOR, _MINOR, _PATCH, _STRING */

/* The library's version (which may be newer than the header's): the
 * components where not NULL, and the string "MAJOR.MINOR.PATCH". */
GS_API const char *gs_get_version(int *major, int *minor, int *patch);

typedef enum gs_status {
    GS_OK = 0,
    GS_ERR_ARG,          /* invalid argument or option */
    GS_ERR_IO,           /* file missing, unreadable, unwritable */
    GS_ERR_FORMAT,       /* malformed or unsupported file contents */
    GS_ERR_NOMEM,        /* host or device allocation failed */
    GS_ERR_CUDA,         /* CUDA runtime error */
    GS_ERR_MPI,          /* MPI error */
    GS_ERR_OVERFLOW,     /* a 64-bit integer sum or prefix sum overflowed */
    GS_ERR_EMPTY,        /* min or max of no elements */
    GS_ERR_UNSUPPORTED,  /* not available in this build or on this machine */
    GS_STATUS_COUNT
} gs_status;

typedef enum gs_type { GS_I32, GS_I64, GS_U32, GS_U64, GS_F32, GS_F64, GS_TYPE_COUNT } gs_type;
typedef enum gs_op { GS_SUM, GS_PROD, GS_MIN, GS_MAX, GS_OP_COUNT } gs_op;
typedef enum gs_scan_kind { GS_INCLUSIVE, GS_EXCLUSIVE } gs_scan_kind;
typedef enum gs_backend { GS_BACKEND_AUTO, GS_BACKEND_CPU, GS_BACKEND_CUDA } gs_backend;

/* A scalar result. `type` says which member holds it: i for GS_I32/GS_I64,
 * u for GS_U32/GS_U64, f for GS_F32/GS_F64 (an f32 value is held exactly). */
typedef struct gs_value {
    gs_type type;
    union { int64_t i; uint64_t u; double f; } v;
} gs_value;

/* ---- names and type rules ------------------------------------------------ */
GS_API const char *gs_status_name(gs_status s);          /* "GS_ERR_IO" */
GS_API const char *gs_status_string(gs_status s);        /* "I/O error" */
GS_API const char *gs_type_name(gs_type t);               /* "i32" */
GS_API const char *gs_op_name(gs_op op);                  /* "sum" */
GS_API const char *gs_backend_name(gs_backend b);         /* "cuda" */
GS_API gs_status gs_type_from_name(const char *name, gs_type *t);
GS_API gs_status gs_op_from_name(const char *name, gs_op *op);
GS_API gs_status gs_backend_from_name(const char *name, gs_backend *b);
GS_API size_t gs_type_size(gs_type t);
/* Type of a reduction's result: sum/prod of integers widen to 64 bits of the
 * same signedness, float sums and products are accumulated and returned in
 * fp64, min/max keep the input type. */
GS_API gs_type gs_reduce_result_type(gs_type t, gs_op op);
/* Element type of a scan's output: integer sum/prod scans widen to 64 bits
 * (as numpy.cumsum), everything else keeps the input type. */
GS_API gs_type gs_scan_output_type(gs_type t, gs_op op);

/* ---- context ------------------------------------------------------------- */
typedef struct gs_context gs_context;

/* How a context is set up. Initialise with GS_CONFIG_INIT or gs_config_init():
 * both fill `size` and `version`, so that a library built with more fields
 * than the caller's header knows reads only those the caller has. */
typedef struct gs_config {
    size_t size;              /* sizeof(gs_config) of the caller's header */
    unsigned version;         /* GS_CONFIG_VERSION of the caller's header */
    gs_backend backend;       /* AUTO: CUDA when every rank has a usable GPU, else CPU */
    int device;               /* -1: bind by node-local rank; else this device */
    size_t device_mem_cap;    /* 0: no cap; else bytes of backend memory (device memory,
                                 or host memory on the CPU backend) a run may take */
    const char *reduce_kernel;/* NULL or "default": the tuned kernels; else the name of
                                 a teaching variant of the CUDA backend (`gpuscan --help`
                                 lists them under --algo); the string is copied */
    const char *scan_kernel;  /* likewise for scans */
    int exact;                /* 1: f32/f64 sums and prefix sums exact, rounded once
                                 (docs/SEMANTICS.md); float products then fail with
                                 GS_ERR_ARG; nothing else changes (since version 3) */
} gs_config;

#define GS_CONFIG_VERSION 3
#define GS_CONFIG_INIT { sizeof(gs_config), GS_CONFIG_VERSION, GS_BACKEND_AUTO, -1, 0, NULL, NULL, 0 }
GS_API void gs_config_init(gs_config *cfg);

/* Collective. Duplicates `comm`, binds this rank to its GPU (CUDA backend).
 * Unless OMP_NUM_THREADS is set, sets the calling thread's OpenMP team size
 * (omp_set_num_threads) to this rank's share of the cores its node's ranks
 * may use, for the CPU backend and the verify reference.
 * Every rank returns the same status. On failure *ctx is still returned
 * where it could be allocated, so that gs_context_error() can be read
 * (without one, gs_context_error(NULL) names the cause); release it with
 * gs_context_destroy(). A NULL ctx, or MPI_COMM_NULL, is GS_ERR_ARG at
 * once, with no message and no collective step. */
#ifndef GPUSCAN_NO_MPI
GS_API gs_status gs_context_create(MPI_Comm comm, const gs_config *cfg, gs_context **ctx);
#endif
GS_API void gs_context_destroy(gs_context *ctx);
GS_API const char *gs_context_error(const gs_context *ctx);
GS_API int gs_context_rank(const gs_context *ctx);
GS_API int gs_context_size(const gs_context *ctx);
GS_API gs_backend gs_context_backend(const gs_context *ctx);

/* What one rank runs on, for `gpuscan info` and benchmark headers. */
typedef struct gs_rank_info {
    int rank, local_rank;
    char host[64];
    int device;              /* -1 on the CPU backend */
    char device_name[96];
    char pci_bus_id[32];
    uint64_t device_mem_bytes;
    int cpu_threads;         /* OpenMP threads of the CPU backend */
} gs_rank_info;
/* Collective: every rank's info, gathered on every rank into `all`
 * (gs_context_size() entries). */
GS_API gs_status gs_context_rank_info(gs_context *ctx, gs_rank_info *all);
/* The build configuration, one line: "cuda 13.0 (sm_90) mpi openmp". */
GS_API const char *gs_build_info(void);

/* ---- operations on a local shard (collective) ---------------------------- */
/* `shard` may be a host or a device pointer (CUDA backend). Ranks may pass
 * different counts, including 0. */
GS_API gs_status gs_reduce(gs_context *ctx, gs_op op, gs_type type,
                    const void *shard, int64_t count, gs_value *result);
/* `out` holds `count` elements of gs_scan_output_type(type, op), in the same
 * memory space as `in`. The global scan runs in rank order. */
GS_API gs_status gs_scan(gs_context *ctx, gs_op op, gs_type type, gs_scan_kind kind,
                  const void *in, void *out, int64_t count);

/* ---- whole-array runs on files and generated data (collective) ----------- */
typedef struct gs_source {
    const char *path;   /* .npy or raw file, or an HDF5 dataset "FILE.h5[:/DATASET]"
                           (builds with HDF5); NULL: generated data */
    int64_t count;      /* generated elements (path == NULL) */
    uint64_t seed;      /* generator seed */
    gs_type type;       /* element type; for .npy, `type_given` says */
    int type_given;     /* 1: `type` was chosen by the user */
} gs_source;

/* Seconds spent per phase on one rank, and min/avg/max over ranks. */
typedef enum gs_phase { GS_PHASE_READ, GS_PHASE_H2D, GS_PHASE_COMPUTE, GS_PHASE_D2H,
                        GS_PHASE_WRITE, GS_PHASE_MPI, GS_PHASE_VERIFY, GS_PHASE_COUNT } gs_phase;
GS_API const char *gs_phase_name(gs_phase p);

typedef struct gs_report {
    int64_t n;                 /* global element count */
    gs_type type, out_type;
    int ranks;
    gs_backend backend;
    double seconds;            /* wall time of the run, max over ranks */
    double phase_min[GS_PHASE_COUNT], phase_avg[GS_PHASE_COUNT], phase_max[GS_PHASE_COUNT];
    uint64_t bytes;            /* bytes read plus bytes written by the kernels */
    int verified;              /* 1 when --verify ran */
    int64_t wrong;             /* elements that failed verification, all ranks */
    gs_value last;             /* scan: the last element of the output */
    int streamed;              /* 1: the shard went through a ring of chunks; 0: resident */
    int64_t chunk;             /* elements per chunk */
    int depth;                 /* chunks in flight at once */
    int input_passes;          /* reads of the input: 2 for a streamed scan on several
                                  ranks (docs/STREAMING.md), else 1 */
    double overlap;            /* sum of the phase times (verify excluded) over the wall
                                  time, averaged over ranks: about 1 when the phases ran
                                  one after another, more as they overlap */
} gs_report;

/* Where a run keeps a rank's shard on the backend (GPU memory, or host memory
 * on the CPU backend). */
typedef enum gs_residency {
    GS_RESIDENCY_AUTO,       /* resident when that saves a read of the input (scans on
                                several ranks) and the shard fits, else streamed */
    GS_RESIDENCY_RESIDENT,   /* the whole shard at once; an error when it does not fit */
    GS_RESIDENCY_STREAMED    /* a ring of `depth` chunks, whatever the shard's size */
} gs_residency;

/* Progress of a run, called on every rank after each chunk: `done` is the
 * share of the run's chunks behind it, from 0 to 1, the same on every rank. */
typedef void (*gs_progress_fn)(void *data, double done);

typedef struct gs_run_options {
    int verify;                /* check every element against an independent reference */
    int64_t chunk;             /* elements per chunk, the unit of reads, copies, kernels
                                  and writes; 0: chosen from the shard and the memory */
    int depth;                 /* chunks in flight (pinned ring slots), 1 to
                                  GS_MAX_DEPTH; 0: the default, 4 */
    gs_residency residency;
    gs_progress_fn progress;   /* NULL: none */
    void *progress_data;
} gs_run_options;

#define GS_MAX_DEPTH 16

GS_API gs_status gs_reduce_run(gs_context *ctx, const gs_source *src, gs_op op,
                        const gs_run_options *opt, gs_value *result, gs_report *report);
/* Writes the scan to `out_path` (.npy when the name ends in ".npy", an HDF5
 * dataset for "FILE.h5[:/DATASET]", else raw) through a temporary file
 * renamed only when every rank succeeded. */
GS_API gs_status gs_scan_run(gs_context *ctx, const gs_source *src, gs_op op, gs_scan_kind kind,
                      const char *out_path, const gs_run_options *opt, gs_report *report);


#ifdef __cplusplus
}
#endif
#endif /* GPUSCAN_H */
