/*
 * device_sum.c - an application calling libgpuscan on data it already holds
 * in GPU memory: each rank fills its shard of x[i] = i % 1000 on its GPU,
 * then asks for the global sum and the global inclusive prefix sum.
 *
 *   mpirun -np 2 examples/device_sum [elements per rank]
 *
 * Build outside the tree, against a CUDA build of gpuscan (its gpuscan.pc
 * gives the CUDA include path and cudart):
 *   cc device_sum.c $(pkg-config --cflags --libs gpuscan) -o device_sum
 * `make install` puts this file in $(docdir)/examples (by default
 * /usr/local/share/doc/gpuscan/examples), beside host_sum.c, the same on
 * host memory with any backend.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpuscan.h"

#define CHECK_CUDA(call)                                                          \
    do {                                                                          \
        cudaError_t e_ = (call);                                                  \
        if (e_ != cudaSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int64_t per_rank = argc > 1 ? atoll(argv[1]) : 1000000;

    gs_config cfg = GS_CONFIG_INIT;
    cfg.backend = GS_BACKEND_CUDA;
    gs_context *ctx = NULL;
    if (gs_context_create(MPI_COMM_WORLD, &cfg, &ctx) != GS_OK) {
        fprintf(stderr, "device_sum: %s\n", ctx ? gs_context_error(ctx) : "no context");
        gs_context_destroy(ctx);
        MPI_Finalize();
        return 77;   /* no GPU: nothing to show */
    }
    int rank = gs_context_rank(ctx), size = gs_context_size(ctx);

    /* this rank's shard of the global array, made on the host and copied to
     * the GPU the context bound */
    int32_t *host = malloc((size_t)per_rank * sizeof *host);
    for (int64_t i = 0; i < per_rank; i++) host[i] = (int32_t)((rank * per_rank + i) % 1000);
    int32_t *x;
    int64_t *prefix;
    CHECK_CUDA(cudaMalloc((void **)&x, (size_t)per_rank * sizeof *x));
    CHECK_CUDA(cudaMalloc((void **)&prefix, (size_t)per_rank * sizeof *prefix));
    CHECK_CUDA(cudaMemcpy(x, host, (size_t)per_rank * sizeof *x, cudaMemcpyHostToDevice));

    gs_value sum;
    int rc = 0;
    gs_status st = gs_reduce(ctx, GS_SUM, GS_I32, x, per_rank, &sum);
    if (st == GS_OK) st = gs_scan(ctx, GS_SUM, GS_I32, GS_INCLUSIVE, x, prefix, per_rank);
    if (st != GS_OK) {
        if (rank == 0) fprintf(stderr, "device_sum: %s\n", gs_context_error(ctx));
        rc = 1;
    } else {
        int64_t last;   /* this rank's last prefix; the last rank's is the sum */
        CHECK_CUDA(cudaMemcpy(&last, prefix + per_rank - 1, sizeof last, cudaMemcpyDeviceToHost));
        if (rank == size - 1) {
            printf("sum %lld, last prefix %lld: %s\n", (long long)sum.v.i, (long long)last,
                   last == sum.v.i ? "agree" : "DISAGREE");
            rc = last != sum.v.i;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    cudaFree(x);
    cudaFree(prefix);
    free(host);
    gs_context_destroy(ctx);
    MPI_Finalize();
    return rc;
}
