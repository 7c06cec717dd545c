/*
 * gs_tools.h - the measuring tools built on libgpuscan: the benchmark sweep
 * (`gpuscan bench`) and the kernel ladder (`gpuscan ladder`). Used by the
 * CLI and the tests; not part of the installed library.
 */
#ifndef GS_TOOLS_H
#define GS_TOOLS_H

#include "gpuscan.h"
#include "gs_algo.h"

/* ==== benchmarks (gs_bench.c) ====
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
    int plant_wrong;      /* test-only: plant one wrong element (or a wrong reduction
                             result) on rank 0 before every check, so that r->wrong > 0 */
    int exact;            /* 1: the exact path (gs_config.exact) for this case, checked
                             bit for bit against the exact reference; f32/f64 sums only */
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
 * returns the same status and result. */
gs_status gs_bench_run(gs_context *ctx, const gs_bench_case *c, gs_bench_result *r);

/* The read bandwidth of an input file, as gs_reduce_run reads it (.npy or
 * an HDF5 dataset, FILE.h5[:/DATASET]): `iters` streamed reductions (max)
 * of the whole file, each rank reading its shard; a run's read time is the
 * slowest rank's read phase. Repeated reads of one file come from the page
 * cache where it fits there. Collective. */
typedef struct gs_bench_read_result {
    uint64_t bytes;       /* the file's data: elements x element size */
    double median;        /* seconds per read of the whole file, median of the runs */
    double gbps;          /* bytes / median, all ranks together */
} gs_bench_read_result;
gs_status gs_bench_read(gs_context *ctx, const char *path, int iters, gs_bench_read_result *r);

/* ==== the ladder (gs_ladder.c) ====
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
    int exact;             /* 1: where (type, op) is an f32/f64 sum, a last row of the
                              backend's exact kernels (--exact), checked bit for bit */
} gs_ladder_case;

/* gs_ladder_row.algo of the copy, the exact row and CUB's native call. */
#define GS_LADDER_COPY (-1)
#define GS_LADDER_EXACT (-2)
#define GS_LADDER_NATIVE (-3)

typedef struct gs_ladder_row {
    int algo;              /* gs_algo, GS_LADDER_COPY, GS_LADDER_EXACT or GS_LADDER_NATIVE */
    double median;         /* seconds per run, median of the timed runs (CUDA events) */
    uint64_t bytes;        /* bytes read plus written by one run */
    double gbps;           /* bytes / median, 10^9 bytes per second */
    int64_t wrong;         /* wrong output elements of the checked run (1 for a wrong
                              reduction); -1 for the copy and the cub-native row */
} gs_ladder_row;

/* The most rows of one case: the copy, the variants, cub-native, exact. */
#define GS_LADDER_MAX_ROWS (GS_ALGO_COUNT + 3)

/* The rows of one case: the copy first (the ceiling: n input elements
 * copied device to device, read plus written), then every variant in
 * ladder order (or the one asked for) and cub, then CUB's native scan on the
 * input type (gs_native_scan_exists, up to 2^31 - 1 elements; timed, not
 * checked: it computes CUB's function, not gpuscan's), then the exact row (when
 * c->exact applies). `rows` holds at least GS_LADDER_MAX_ROWS entries.
 * Collective: each rank runs the case on its own GPU; every rank returns
 * the same status. GS_ERR_UNSUPPORTED on the CPU backend, and for an exact
 * row on a backend without exact kernels. */
gs_status gs_ladder_run(gs_context *ctx, const gs_ladder_case *c, gs_ladder_row *rows, int *n_rows);

#endif /* GS_TOOLS_H */
