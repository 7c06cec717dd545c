// pc_sum.cpp - a C++ user of the installed libgpuscan, built by
// tests/cli_install.sh with nothing but
//   g++ pc_sum.cpp $(pkg-config --cflags --libs gpuscan)
// (so mpi.h, included by gpuscan.h, must not need Open MPI's or MPICH's C++
// bindings). Rank r holds 1, 2, ..., 100 (r + 1); the global sum and max are
// checked against their closed forms. Prints "pc_sum: ... OK" on rank 0 and
// exits 0, or 1 on any failure.
//
//   mpirun -np 2 pc_sum [auto|cpu|cuda]
#include "gpuscan.h"

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    gs_config cfg = GS_CONFIG_INIT;
    if (argc > 1 && gs_backend_from_name(argv[1], &cfg.backend) != GS_OK) {
        std::fprintf(stderr, "usage: pc_sum [auto|cpu|cuda]\n");
        MPI_Finalize();
        return 2;
    }
    gs_context *ctx = NULL;
    if (gs_context_create(MPI_COMM_WORLD, &cfg, &ctx) != GS_OK) {
        std::fprintf(stderr, "pc_sum: %s\n", gs_context_error(ctx));
        gs_context_destroy(ctx);
        MPI_Finalize();
        return 1;
    }
    const int rank = gs_context_rank(ctx), size = gs_context_size(ctx);

    std::vector<int32_t> shard(100 * (rank + 1));
    std::iota(shard.begin(), shard.end(), 1);

    gs_value sum, max;
    gs_status st = gs_reduce(ctx, GS_SUM, GS_I32, shard.data(), (int64_t)shard.size(), &sum);
    if (st == GS_OK) st = gs_reduce(ctx, GS_MAX, GS_I32, shard.data(), (int64_t)shard.size(), &max);
    int rc = 1;
    if (st != GS_OK) {
        if (rank == 0) std::fprintf(stderr, "pc_sum: %s\n", gs_context_error(ctx));
    } else {
        long long want_sum = 0;
        for (int r = 0; r < size; r++) {
            long long m = 100LL * (r + 1);
            want_sum += m * (m + 1) / 2;
        }
        const long long want_max = 100LL * size;
        rc = sum.type != GS_I64 || sum.v.i != want_sum || max.type != GS_I32 || max.v.i != want_max;
        if (rank == 0)
            std::printf("pc_sum: sum %lld (expected %lld), max %lld (expected %lld) on %d rank(s): %s\n",
                        (long long)sum.v.i, want_sum, (long long)max.v.i, want_max, size,
                        rc ? "MISMATCH" : "OK");
    }
    gs_context_destroy(ctx);
    MPI_Finalize();
    return rc;
}
