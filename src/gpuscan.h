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
 *    context's communicator; they agree on success before returning, so all
 *    ranks return the same status and none is left waiting.
 *  - element counts and offsets are 64-bit everywhere.
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

#define GS_VERSION_STRING "0.1.0"

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
    GS_ERR_VERIFY,       /* --verify found wrong elements */
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
const char *gs_status_name(gs_status s);          /* "GS_ERR_IO" */
const char *gs_status_string(gs_status s);        /* "I/O error" */
const char *gs_type_name(gs_type t);               /* "i32" */
const char *gs_op_name(gs_op op);                  /* "sum" */
const char *gs_backend_name(gs_backend b);         /* "cuda" */
gs_status gs_type_from_name(const char *name, gs_type *t);
gs_status gs_op_from_name(const char *name, gs_op *op);
gs_status gs_backend_from_name(const char *name, gs_backend *b);
size_t gs_type_size(gs_type t);
/* Type of a reduction's result: sum/prod of integers widen to 64 bits of the
 * same signedness, float sums and products are accumulated and returned in
 * fp64, min/max keep the input type. */
gs_type gs_reduce_result_type(gs_type t, gs_op op);
/* Element type of a scan's output: integer sum/prod scans widen to 64 bits
 * (as numpy.cumsum), everything else keeps the input type. */
gs_type gs_scan_output_type(gs_type t, gs_op op);

/* ---- context ------------------------------------------------------------- */
typedef struct gs_context gs_context;

/* ---- kernel variants ------------------------------------------------------
 * The CUDA backend's kernels: the tuned default, the classic optimisation
 * steps of the reduction ladder and of the scans, and CUB as a reference.
 * Every variant serves every (type, op) with the semantics of the default;
 * gs_config chooses the one gs_reduce / gs_scan run, `gpuscan ladder` runs
 * them side by side. */
typedef enum gs_algo {
    GS_ALGO_DEFAULT,            /* reduce and scan: the tuned default */
    /* reductions, the classic steps */
    GS_ALGO_DIVERGENT,          /* (1) interleaved addressing, divergent branching */
    GS_ALGO_STRIDED,            /* (2) interleaved addressing, strided index */
    GS_ALGO_SEQUENTIAL,         /* (3) sequential addressing */
    GS_ALGO_FIRST_ADD,          /* (4) first add during the global load */
    GS_ALGO_UNROLL_LAST_WARP,   /* (5) the last warp unrolled */
    GS_ALGO_UNROLL_ALL,         /* (6) complete unrolling, block size a template parameter */
    GS_ALGO_GRID_STRIDE,        /* (7) many elements per thread */
    /* scans */
    GS_ALGO_HILLIS_STEELE,      /* Hillis-Steele block scan (double-buffered), block sums scanned recursively */
    GS_ALGO_BLELLOCH,           /* work-efficient Blelloch block scan, padded against bank conflicts, likewise */
    GS_ALGO_MULTI_KERNEL,       /* shuffle block scan of several elements per thread, likewise */
    GS_ALGO_REDUCE_THEN_SCAN,   /* tile totals, their scan, the tiles scanned from it */
    /* both: the reference */
    GS_ALGO_CUB,                /* CUB DeviceReduce / DeviceScan */
    GS_ALGO_COUNT
} gs_algo;

const char *gs_algo_name(gs_algo a);                /* "divergent", "default", "cub" */
gs_status gs_algo_from_name(const char *name, gs_algo *a);
/* 1 when the variant computes reductions (scan 0) or scans (scan 1). */
int gs_algo_serves(gs_algo a, int scan);

typedef struct gs_config {
    gs_backend backend;   /* AUTO: CUDA when a GPU is usable, else CPU */
    int device;           /* -1: bind by node-local rank; else this device */
    size_t device_mem_cap;/* 0: no cap; else bytes of device memory gpuscan may use */
    gs_algo reduce_algo;  /* the kernels of reductions: GS_ALGO_DEFAULT, or a variant that
                             serves reductions (CUDA backend only) */
    gs_algo scan_algo;    /* the kernels of scans, likewise */
} gs_config;

#define GS_CONFIG_INIT { GS_BACKEND_AUTO, -1, 0, GS_ALGO_DEFAULT, GS_ALGO_DEFAULT }

/* Collective. Duplicates `comm`, binds this rank to its GPU (CUDA backend).
 * On failure *ctx is still returned when allocated, so that
 * gs_context_error() can be read; release it with gs_context_destroy(). */
#ifndef GPUSCAN_NO_MPI
gs_status gs_context_create(MPI_Comm comm, const gs_config *cfg, gs_context **ctx);
#endif
void gs_context_destroy(gs_context *ctx);
const char *gs_context_error(const gs_context *ctx);
int gs_context_rank(const gs_context *ctx);
int gs_context_size(const gs_context *ctx);
gs_backend gs_context_backend(const gs_context *ctx);

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
gs_status gs_context_rank_info(gs_context *ctx, gs_rank_info *all);
/* The build configuration, one line: "cuda 13.0 (sm_90) mpi openmp". */
const char *gs_build_info(void);

/* ---- operations on a local shard (collective) ---------------------------- */
/* `shard` may be a host or a device pointer (CUDA backend). Ranks may pass
 * different counts, including 0. */
gs_status gs_reduce(gs_context *ctx, gs_op op, gs_type type,
                    const void *shard, int64_t count, gs_value *result);
/* `out` holds `count` elements of gs_scan_output_type(type, op), in the same
 * memory space as `in`. The global scan runs in rank order. */
gs_status gs_scan(gs_context *ctx, gs_op op, gs_type type, gs_scan_kind kind,
                  const void *in, void *out, int64_t count);

/* ---- whole-array runs on files and generated data (collective) ----------- */
typedef struct gs_source {
    const char *path;   /* .npy or raw file; NULL: generated data */
    int64_t count;      /* generated elements (path == NULL) */
    uint64_t seed;      /* generator seed */
    gs_type type;       /* element type; for .npy, `type_given` says */
    int type_given;     /* 1: `type` was chosen by the user */
} gs_source;

/* Seconds spent per phase on one rank, and min/avg/max over ranks. */
typedef enum gs_phase { GS_PHASE_READ, GS_PHASE_H2D, GS_PHASE_COMPUTE, GS_PHASE_D2H,
                        GS_PHASE_WRITE, GS_PHASE_MPI, GS_PHASE_VERIFY, GS_PHASE_COUNT } gs_phase;
const char *gs_phase_name(gs_phase p);

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

gs_status gs_reduce_run(gs_context *ctx, const gs_source *src, gs_op op,
                        const gs_run_options *opt, gs_value *result, gs_report *report);
/* Writes the scan to `out_path` (.npy when the name ends in ".npy", else raw)
 * through a temporary file renamed only when every rank succeeded. */
gs_status gs_scan_run(gs_context *ctx, const gs_source *src, gs_op op, gs_scan_kind kind,
                      const char *out_path, const gs_run_options *opt, gs_report *report);

/* ==== benchmarks (gs_bench.c) ===============================================
 * What `gpuscan bench` measures, for applications that want the same
 * numbers. A run is one collective gs_reduce or gs_scan; each rank times
 * every run on its own clock, with no barrier between runs, and the run's
 * time is the largest over the ranks. GB/s are 10^9 bytes per second of
 * bytes read plus bytes written. */

/* Where a benchmark's shard lives. */
typedef enum gs_bench_mode {
    GS_BENCH_RESIDENT,   /* on the backend: device memory (CUDA), host memory (CPU) */
    GS_BENCH_STREAMED    /* in pinned host memory, passed as a host pointer: the CUDA
                            backend copies it through the GPU piece by piece (on the
                            CPU backend the same as resident) */
} gs_bench_mode;
const char *gs_bench_mode_name(gs_bench_mode mode);   /* "resident", "streamed" */

/* The copy bandwidths that bound one rank. */
typedef struct gs_bench_ceiling {
    double copy_gbps;   /* memory to memory, bytes read plus written: device-to-device
                           cudaMemcpy (CUDA), memcpy on the OpenMP threads (CPU) */
    double h2d_gbps;    /* pinned host-to-device cudaMemcpy; 0 on the CPU backend */
    double duplex_gbps; /* pinned host-to-device and device-to-host cudaMemcpy at once, bytes
                           of both directions; 0 on the CPU backend */
} gs_bench_ceiling;

/* Collective: measures every rank's ceilings at the same time (ranks on one
 * node share its memory and links, as they do while benchmarking), gathered
 * on every rank into `all` (gs_context_size() entries). */
gs_status gs_bench_ceilings(gs_context *ctx, gs_bench_ceiling *all);

/* One benchmark case. `n` is the global element count, split across the
 * ranks as the whole-array runs split it (docs/SEMANTICS.md). */
typedef struct gs_bench_case {
    int scan;             /* 0: gs_reduce, 1: gs_scan */
    gs_type type;
    gs_op op;
    gs_scan_kind kind;    /* scans only */
    gs_bench_mode mode;
    int64_t n;            /* >= 1 */
    int warmup;           /* untimed runs first, >= 0 */
    int iters;            /* timed runs, >= 1 */
    int check_iters;      /* further runs, each checked against the independent reference */
    uint64_t seed;        /* the input is the generated array of this seed (never zeros) */
} gs_bench_case;

typedef struct gs_bench_result {
    uint64_t bytes;       /* one run over all ranks: n x (input + output element size);
                             reductions write none */
    double median, min, max, p99;   /* seconds per run (nearest-rank p99) */
    double gbps_rank;     /* bytes / median / ranks */
    double gbps_total;    /* bytes / median */
    int64_t wrong;        /* the worst checked run: wrong output elements of a scan,
                             1 for a wrong reduction result; -1 when nothing was checked */
} gs_bench_result;

/* Collective: allocates the shard where c->mode says, generates it, runs
 * c->warmup, c->iters and c->check_iters times, and frees it. Every rank
 * returns the same status and result. Test hook: GS_BENCH_CORRUPT=1 in the
 * environment plants one wrong element (or a wrong reduction result) on
 * rank 0 before every check, so that r->wrong > 0. */
gs_status gs_bench_run(gs_context *ctx, const gs_bench_case *c, gs_bench_result *r);
/* ==== end of benchmarks ===================================================== */

/* ==== the ladder (gs_ladder.c) ===============================================
 * Every kernel variant of the CUDA backend, the classic optimisation steps
 * first and the tuned default last, run side by side on the same
 * device-resident data of one rank's GPU, each timed and checked against the
 * independent reference (`gpuscan ladder`). The variants are gs_algo's
 * (kernel variants, above); the ladder's cub row is CUB's own call from the
 * identity, without the carry and overflow check that gs_scan's needs. */

typedef struct gs_ladder_case {
    int scan;              /* 0: reductions, 1: scans */
    gs_type type;
    gs_op op;
    gs_scan_kind kind;     /* scans only */
    int64_t n;             /* elements, >= 1 */
    int warmup;            /* untimed runs first, >= 0 */
    int iters;             /* timed runs, >= 1 */
    uint64_t seed;         /* the input is the generated array of this seed */
    int algo;              /* -1: every variant that serves the case; else one gs_algo */
} gs_ladder_case;

typedef struct gs_ladder_row {
    int algo;              /* gs_algo, or -1 for the device-to-device copy */
    double median;         /* seconds per run, median of the timed runs (CUDA events) */
    uint64_t bytes;        /* bytes read plus written by one run */
    double gbps;           /* bytes / median, 10^9 bytes per second */
    int64_t wrong;         /* wrong output elements of the checked run (1 for a wrong
                              reduction); -1 for the copy */
} gs_ladder_row;

/* The rows of one case: the copy first (the ceiling: n input elements
 * copied device to device, read plus written), then every variant in
 * ladder order (or the one asked for) and cub. `rows` holds at least
 * GS_ALGO_COUNT + 1 entries. Collective: each rank runs the case on its
 * own GPU; every rank returns the same status. GS_ERR_UNSUPPORTED on the
 * CPU backend. */
gs_status gs_ladder_run(gs_context *ctx, const gs_ladder_case *c, gs_ladder_row *rows, int *n_rows);
/* ==== end of the ladder ===================================================== */

#ifdef __cplusplus
}
#endif
#endif /* GPUSCAN_H */
