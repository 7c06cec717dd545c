/*
 * host_sum.c - an application calling libgpuscan on data it holds in host
 * memory: the global array is x[g] = g for g = 0 .. N-1, split into one
 * contiguous shard per rank (the first N % size ranks hold one element more).
 * Each rank fills its shard, then asks for the global sum and maximum and for
 * the global inclusive prefix sum, and checks them against their closed
 * forms: sum N(N-1)/2, max N-1, prefix at g g(g+1)/2.
 *
 *   mpirun -np 2 host_sum [N [auto|cpu|cuda]]
 *
 * N defaults to 1000003, the backend to auto (the CUDA backend takes host
 * pointers too). Exit status 0 when every result is right, 1 otherwise.
 *
 * Build outside the tree, with any C compiler:
 *   cc host_sum.c $(pkg-config --cflags --libs gpuscan) -o host_sum
 * `make install` puts this file in $(docdir)/examples (by default
 * /usr/local/share/doc/gpuscan/examples).
 */
#include <stdio.h>
#include <stdlib.h>

#include "gpuscan.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000003;
    gs_config cfg = GS_CONFIG_INIT;
    if (n < 1 || n > 3000000000LL ||
        (argc > 2 && gs_backend_from_name(argv[2], &cfg.backend) != GS_OK)) {
        fprintf(stderr, "usage: host_sum [N (1 to 3e9) [auto|cpu|cuda]]\n");
        MPI_Finalize();
        return 2;
    }

    gs_context *ctx = NULL;
    if (gs_context_create(MPI_COMM_WORLD, &cfg, &ctx) != GS_OK) {
        fprintf(stderr, "host_sum: %s\n", gs_context_error(ctx));
        gs_context_destroy(ctx);
        MPI_Finalize();
        return 1;
    }
    int rank = gs_context_rank(ctx), size = gs_context_size(ctx);

    /* this rank's shard: elements [first, first + count) of the global array */
    int64_t base = n / size, extra = n % size;
    int64_t count = base + (rank < extra);
    int64_t first = rank * base + (rank < extra ? rank : extra);
    int64_t *x = malloc((size_t)(count ? count : 1) * sizeof *x);
    int64_t *prefix = malloc((size_t)(count ? count : 1) * sizeof *prefix);
    if (!x || !prefix) {
        fprintf(stderr, "host_sum: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int64_t i = 0; i < count; i++) x[i] = first + i;

    gs_value sum, max;
    gs_status st = gs_reduce(ctx, GS_SUM, GS_I64, x, count, &sum);
    if (st == GS_OK) st = gs_reduce(ctx, GS_MAX, GS_I64, x, count, &max);
    if (st == GS_OK) st = gs_scan(ctx, GS_SUM, GS_I64, GS_INCLUSIVE, x, prefix, count);
    int rc = 0;
    if (st != GS_OK) {
        /* every rank has the same status; rank 0 speaks for all */
        if (rank == 0) fprintf(stderr, "host_sum: %s\n", gs_context_error(ctx));
        rc = 1;
    } else {
        int64_t wrong = 0;   /* prefix elements that differ from g(g+1)/2 */
        for (int64_t i = 0; i < count; i++) {
            int64_t g = first + i;
            wrong += prefix[i] != g * (g + 1) / 2;
        }
        MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        int64_t want_sum = n * (n - 1) / 2, want_max = n - 1;
        rc = sum.v.i != want_sum || max.v.i != want_max || wrong != 0;
        if (rank == 0) {
            printf("host_sum: %lld elements on %d rank(s), %s backend\n", (long long)n, size,
                   gs_backend_name(gs_context_backend(ctx)));
            printf("  sum    %lld (expected %lld)\n", (long long)sum.v.i, (long long)want_sum);
            printf("  max    %lld (expected %lld)\n", (long long)max.v.i, (long long)want_max);
            printf("  prefix %lld wrong of %lld\n", (long long)wrong, (long long)n);
            printf("%s\n", rc ? "MISMATCH" : "OK");
        }
    }

    free(x);
    free(prefix);
    gs_context_destroy(ctx);
    MPI_Finalize();
    return rc;
}
