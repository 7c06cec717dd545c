/*
 * gs_run.h - whole-array runs on files and generated data (gs_reduce_run,
 * gs_scan_run): sharding and input detection, exposed for the tests.
 */
#ifndef GS_RUN_H
#define GS_RUN_H

#include "gs_internal.h"

/* The contiguous shard of `rank` among `size` ranks over n elements,
 * balanced to within one element: the first n % size ranks get one more. */
void gs_shard_range(int64_t n, int rank, int size, int64_t *start, int64_t *count);

#endif /* GS_RUN_H */
