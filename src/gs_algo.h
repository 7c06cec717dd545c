/*
 * gs_algo.h - the kernel variants by number, inside the library (the public
 * header names them by string: gs_config.reduce_kernel / scan_kernel).
 * Not installed.
 */
#ifndef GS_ALGO_H
#define GS_ALGO_H

#include "gpuscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CUDA backend's kernels: the tuned default, the classic optimisation
 * steps of the reduction ladder and of the scans, and CUB as a reference.
 * Every variant serves every (type, op) with the semantics of the default;
 * gs_config names the one gs_reduce / gs_scan run (reduce_kernel,
 * scan_kernel), `gpuscan ladder` runs them side by side. */
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

/* 1 when the ladder's cub-native row (CUB's own scan of the input type)
 * exists for (op, kind): sums both ways, inclusive min and max. */
static inline int gs_native_scan_exists(gs_op op, gs_scan_kind kind)
{
    return op == GS_SUM || (kind == GS_INCLUSIVE && (op == GS_MIN || op == GS_MAX));
}

const char *gs_algo_name(gs_algo a);                /* "divergent", "default", "cub" */
gs_status gs_algo_from_name(const char *name, gs_algo *a);
/* 1 when the variant computes reductions (scan 0) or scans (scan 1). */
int gs_algo_serves(gs_algo a, int scan);

#ifdef __cplusplus
}
#endif
#endif /* GS_ALGO_H */
