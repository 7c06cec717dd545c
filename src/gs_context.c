/* gs_context.c - context life cycle: MPI set-up, backend choice, GPU binding;
 * error recording; rank information. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gs_cpu.h"
#include "gs_internal.h"
#include "gs_mpi.h"
#ifdef HAVE_CUDA
#include "gs_cuda.h"
#endif

gs_status gs_fail(gs_context *ctx, gs_status status, const char *fmt, ...)
{
    if (!ctx) return status;
    int prefix = snprintf(ctx->error, sizeof ctx->error, "rank %d: ", ctx->rank);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error + prefix, sizeof ctx->error - (size_t)prefix, fmt, ap);
    va_end(ap);
    return status;
}

double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Decide this rank's backend; the ranks then agree on one. */
static gs_status choose_backend(gs_context *ctx, gs_backend asked, gs_backend *chosen)
{
#ifdef HAVE_CUDA
    int usable = gs_cuda_device_count() > 0;
#else
    int usable = 0;
#endif
    if (asked == GS_BACKEND_CUDA && !usable) {
#ifdef HAVE_CUDA
        return gs_fail(ctx, GS_ERR_UNSUPPORTED, "the CUDA backend was requested but no usable GPU is visible");
#else
        return gs_fail(ctx, GS_ERR_UNSUPPORTED, "the CUDA backend was requested but gpuscan was built without CUDA (configure --with-cuda)");
#endif
    }
    *chosen = (asked == GS_BACKEND_CPU || !usable) ? GS_BACKEND_CPU : GS_BACKEND_CUDA;
    return GS_OK;
}

static gs_status bind_device(gs_context *ctx)
{
#ifdef HAVE_CUDA
    int count = gs_cuda_device_count();
    int device = gs_mpi_pick_device(ctx->local_rank, count, ctx->cfg.device);
    if (device >= count)
        return gs_fail(ctx, GS_ERR_ARG, "--device %d: only %d GPU(s) visible", device, count);
    char err[GS_ERRMSG_LEN] = "";
    if (gs_cuda_open(device, &ctx->cuda, err, sizeof err) != GS_OK)
        return gs_fail(ctx, GS_ERR_CUDA, "GPU %d: %s", device, err);
    return GS_OK;
#else
    (void)ctx;
    return GS_OK;
#endif
}

/* The kernel variants asked for: each must serve its side, and anything
 * but the default needs the CUDA backend, whose kernels they are. */
static gs_status check_variants(gs_context *ctx)
{
    const char *names[2] = {ctx->cfg.reduce_kernel, ctx->cfg.scan_kernel};
    gs_algo *asked[2] = {&ctx->reduce_algo, &ctx->scan_algo};
    for (int scan = 0; scan < 2; scan++) {
        *asked[scan] = GS_ALGO_DEFAULT;
        if (names[scan] && gs_algo_from_name(names[scan], asked[scan]) != GS_OK)
            return gs_fail(ctx, GS_ERR_ARG, "no kernel variant is called '%.64s'", names[scan]);
    }
    for (int scan = 0; scan < 2; scan++) {
        if (!gs_algo_serves(*asked[scan], scan))
            return gs_fail(ctx, GS_ERR_ARG, "kernel variant %s is no %s variant", gs_algo_name(*asked[scan]),
                           scan ? "scan" : "reduction");
        if (*asked[scan] != GS_ALGO_DEFAULT && ctx->backend != GS_BACKEND_CUDA)
            return gs_fail(ctx, GS_ERR_UNSUPPORTED, "kernel variant %s runs on the CUDA backend only, not on the %s backend",
                           gs_algo_name(*asked[scan]), gs_backend_name(ctx->backend));
    }
    return GS_OK;
}

static gs_status bind_variants(gs_context *ctx)
{
#ifdef HAVE_CUDA
    gs_status st = gs_cuda_set_variants(ctx->cuda, ctx->reduce_algo, ctx->scan_algo);
    return st == GS_OK ? GS_OK : gs_fail(ctx, st, "%s", gs_cuda_error(ctx->cuda));
#else
    (void)ctx;   /* only the CUDA backend has variants, and check_variants saw to that */
    return GS_OK;
#endif
}

gs_status gs_context_create(MPI_Comm comm, const gs_config *cfg, gs_context **out)
{
    static const gs_config defaults = GS_CONFIG_INIT;
    *out = NULL;
    gs_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return GS_ERR_NOMEM;
    *out = ctx;
    ctx->comm = ctx->node_comm = MPI_COMM_NULL;
    ctx->cfg = cfg ? *cfg : defaults;
    GS_CHECK(gs_mpi_setup(ctx, comm));

    gs_backend mine = GS_BACKEND_CPU;
    gs_status st = choose_backend(ctx, ctx->cfg.backend, &mine);
    GS_CHECK(gs_mpi_agree(ctx, st));
    /* AUTO: the CUDA backend only when every rank can use it */
    int64_t cpu_ranks = 0;
    GS_CHECK(gs_mpi_sum_i64(ctx, mine == GS_BACKEND_CPU, &cpu_ranks));
    ctx->backend = cpu_ranks ? GS_BACKEND_CPU : GS_BACKEND_CUDA;

    st = check_variants(ctx);
    if (st == GS_OK && ctx->backend == GS_BACKEND_CUDA) st = bind_device(ctx);
    if (st == GS_OK && ctx->backend == GS_BACKEND_CUDA) st = bind_variants(ctx);
    return gs_mpi_agree(ctx, st);
}

void gs_context_destroy(gs_context *ctx)
{
    if (!ctx) return;
    gs_ring_free(ctx);
#ifdef HAVE_CUDA
    if (ctx->cuda) gs_cuda_close(ctx->cuda);
#endif
    gs_mpi_teardown(ctx);
    free(ctx);
}

const char *gs_context_error(const gs_context *ctx) { return ctx ? ctx->error : "no context"; }
int gs_context_rank(const gs_context *ctx) { return ctx->rank; }
int gs_context_size(const gs_context *ctx) { return ctx->size; }
gs_backend gs_context_backend(const gs_context *ctx) { return ctx->backend; }

gs_status gs_context_rank_info(gs_context *ctx, gs_rank_info *all)
{
    gs_rank_info me;
    memset(&me, 0, sizeof me);
    me.rank = ctx->rank;
    me.local_rank = ctx->local_rank;
    gethostname(me.host, sizeof me.host - 1);
    me.device = -1;
    me.cpu_threads = gs_cpu_threads();
    gs_status st = GS_OK;
#ifdef HAVE_CUDA
    if (ctx->cuda) {
        gs_cuda_device_info info;
        st = gs_cuda_info(ctx->cuda, &info);
        if (st == GS_OK) {
            me.device = info.device;
            snprintf(me.device_name, sizeof me.device_name, "%s", info.name);
            snprintf(me.pci_bus_id, sizeof me.pci_bus_id, "%s", info.pci_bus_id);
            me.device_mem_bytes = info.total_mem;
        } else {
            st = gs_fail(ctx, st, "%s", gs_cuda_error(ctx->cuda));
        }
    }
#endif
    GS_CHECK(gs_mpi_agree(ctx, st));
    return gs_mpi_allgather_bytes(ctx, &me, sizeof me, all);
}
