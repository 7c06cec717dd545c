/* gs_context.c - a context's life: the MPI handle, the backend every rank
 * agrees on, the GPU binding; rank information. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gs_cpu.h"
#include "gs_internal.h"
#include "gs_ring.h"

/* Why no context could be made where none was allocated. */
static const char no_context[] = "gs_context_create: no memory for a context";

/* The caller's config, read only as far as its header knew it (cfg->size),
 * over the defaults. */
static gs_status read_config(const gs_config *cfg, gs_config *out)
{
    gs_config_init(out);
    if (!cfg) return GS_OK;
    if (cfg->size < offsetof(gs_config, version) + sizeof cfg->version || cfg->version < 1)
        return GS_ERR_ARG;
    memcpy(out, cfg, cfg->size < sizeof *out ? cfg->size : sizeof *out);
    return GS_OK;
}

/* This rank's view of `asked`: the backend it can run, or why not. */
static gs_status choose_backend(gs_context *ctx, gs_backend asked, gs_backend *chosen)
{
    char why[GS_ERRMSG_LEN] = "";
    const int usable = gs_backend_devices(GS_BACKEND_CUDA, why, sizeof why) > 0;
    if ((unsigned)asked > GS_BACKEND_CUDA)
        return gs_fail(ctx, GS_ERR_ARG, "unknown backend %d", (int)asked);
    if (asked == GS_BACKEND_CUDA && !usable)
        return gs_fail(ctx, GS_ERR_UNSUPPORTED, "the CUDA backend was requested but %s", why);
    *chosen = (asked == GS_BACKEND_CPU || !usable) ? GS_BACKEND_CPU : GS_BACKEND_CUDA;
    return GS_OK;
}

/* The kernel variants named in the config: each must exist and serve its
 * side, and anything but the default needs the CUDA backend, whose kernels
 * they are. */
static gs_status resolve_variants(gs_context *ctx, const gs_config *cfg, gs_backend backend)
{
    const char *names[2] = {cfg->reduce_kernel, cfg->scan_kernel};
    gs_algo *algo[2] = {&ctx->reduce_algo, &ctx->scan_algo};
    for (int scan = 0; scan < 2; scan++) {
        *algo[scan] = GS_ALGO_DEFAULT;
        if (names[scan] && gs_algo_from_name(names[scan], algo[scan]) != GS_OK)
            return gs_fail(ctx, GS_ERR_ARG, "no kernel variant is called '%.64s'", names[scan]);
        if (!gs_algo_serves(*algo[scan], scan))
            return gs_fail(ctx, GS_ERR_ARG, "kernel variant %s is no %s variant", gs_algo_name(*algo[scan]),
                           scan ? "scan" : "reduction");
        if (*algo[scan] != GS_ALGO_DEFAULT && backend != GS_BACKEND_CUDA)
            return gs_fail(ctx, GS_ERR_UNSUPPORTED, "kernel variant %s runs on the CUDA backend only, not on the %s backend",
                           gs_algo_name(*algo[scan]), gs_backend_name(backend));
    }
    return GS_OK;
}

/* Open the agreed backend on this rank: the GPU by node-local rank, or the
 * one asked for. */
static gs_status open_backend(gs_context *ctx, gs_backend backend)
{
    int device = -1;
    if (backend == GS_BACKEND_CUDA) {
        char why[GS_ERRMSG_LEN] = "";
        const int count = gs_backend_devices(GS_BACKEND_CUDA, why, sizeof why);
        device = gs_mpi_pick_device(ctx->mpi.local_rank, count, ctx->device);
        if (device >= count)
            return gs_fail(ctx, GS_ERR_ARG, "--device %d: only %d GPU(s) visible", device, count);
    } else if (ctx->device > 0) {
        return gs_fail(ctx, GS_ERR_ARG, "--device %d: the CPU backend has no devices to choose", ctx->device);
    }
    GS_CHECK(gs_be_open(&ctx->be, backend, device, &ctx->err));
    if (ctx->reduce_algo != GS_ALGO_DEFAULT || ctx->scan_algo != GS_ALGO_DEFAULT)
        GS_CHECK(gs_be_set_variants(&ctx->be, ctx->reduce_algo, ctx->scan_algo));
    return gs_ring_create(&ctx->be, &ctx->ring, &ctx->err);
}

/* Threads a rank may have per CPU of its node: OMP_NUM_THREADS beyond that
 * (100000, say) makes libgomp fail to create the team, and crash. */
#define GS_THREADS_PER_CPU 16

/* Size the OpenMP team of the CPU backend and of the verify reference:
 * this rank's share of the cores its node's ranks may use (gs_cpu_threads.c),
 * or the user's OMP_NUM_THREADS within GS_THREADS_PER_CPU per CPU.
 * Collective over the node; the verdict is the caller's to agree on. */
static gs_status size_cpu_team(gs_context *ctx)
{
    unsigned char cpus[GS_CPU_MASK_BYTES];
    const int mine = gs_cpu_affinity(cpus, sizeof cpus);
    GS_CHECK(gs_mpi_node_or_bytes(&ctx->mpi, cpus, sizeof cpus));
    const int node = gs_cpu_mask_count(cpus, sizeof cpus);
    const int team = gs_cpu_set_team(mine, node, ctx->mpi.local_size);
    const int most = GS_THREADS_PER_CPU * (node > 1 ? node : 1);
    if (team > most)
        return gs_fail(ctx, GS_ERR_ARG, "OMP_NUM_THREADS=%d: more than %d threads per CPU of this node's %d",
                       team, GS_THREADS_PER_CPU, node);
    return GS_OK;
}

/* Every step that can fail on one rank alone ends in an agreement, so all
 * ranks take the same collective steps and return the same status. */
static gs_status setup(gs_context *ctx, MPI_Comm comm, const gs_config *cfg_in, int allocated)
{
    GS_CHECK(gs_mpi_setup(&ctx->mpi, comm, &ctx->err));
    /* a rank that could not allocate its context says so here, collectively */
    gs_status st = allocated ? GS_OK : gs_fail(ctx, GS_ERR_NOMEM, "%s", no_context);
    if (gs_mpi_agree(&ctx->mpi, st) == GS_OK) st = size_cpu_team(ctx);
    gs_config cfg;
    if (st == GS_OK && read_config(cfg_in, &cfg) != GS_OK)
        st = gs_fail(ctx, GS_ERR_ARG, "gs_config: not initialised with GS_CONFIG_INIT or gs_config_init");
    gs_backend mine = GS_BACKEND_CPU;
    if (st == GS_OK) st = choose_backend(ctx, cfg.backend, &mine);
    GS_CHECK(gs_mpi_agree(&ctx->mpi, st));
    /* AUTO: the CUDA backend only when every rank can use it */
    int64_t cpu_ranks = 0;
    GS_CHECK(gs_mpi_sum_i64(&ctx->mpi, mine == GS_BACKEND_CPU, &cpu_ranks));
    const gs_backend backend = cpu_ranks ? GS_BACKEND_CPU : GS_BACKEND_CUDA;
    ctx->device = cfg.device;
    ctx->mem_cap = cfg.device_mem_cap;
    ctx->exact = cfg.exact;
    st = resolve_variants(ctx, &cfg, backend);
    if (st == GS_OK) st = open_backend(ctx, backend);
    if (st == GS_OK && ctx->exact && !gs_be_has_exact(&ctx->be))
        st = gs_fail(ctx, GS_ERR_UNSUPPORTED, "--exact is not available on the %s backend in this build",
                     gs_backend_name(backend));
    return gs_mpi_agree(&ctx->mpi, st);
}

gs_status gs_context_create(MPI_Comm comm, const gs_config *cfg, gs_context **out)
{
    /* nothing to report a message in, and no ranks to agree with */
    if (!out) return GS_ERR_ARG;
    *out = NULL;
    if (comm == MPI_COMM_NULL) return GS_ERR_ARG;
    gs_context *ctx = calloc(1, sizeof *ctx);
    /* without memory this rank still takes part in every collective step,
     * on a context of its own stack, and reports why */
    gs_context spare;
    gs_context *use = ctx ? ctx : memset(&spare, 0, sizeof spare);
    use->err.rank = -1;
    gs_status st = setup(use, comm, cfg, ctx != NULL);
    if (!ctx) {
        if (st == GS_OK) st = GS_ERR_NOMEM;   /* unreachable: setup agreed on this rank's failure */
        gs_ring_destroy(use->ring);
        gs_be_close(&use->be);
        gs_mpi_teardown(&use->mpi);
    }
    *out = ctx;
    return st;
}

void gs_context_destroy(gs_context *ctx)
{
    if (!ctx) return;
    gs_ring_destroy(ctx->ring);
    gs_be_close(&ctx->be);
    gs_mpi_teardown(&ctx->mpi);
    free(ctx);
}

const char *gs_context_error(const gs_context *ctx) { return ctx ? ctx->err.msg : no_context; }
int gs_context_rank(const gs_context *ctx) { return ctx->mpi.rank; }
int gs_context_size(const gs_context *ctx) { return ctx->mpi.size; }
gs_backend gs_context_backend(const gs_context *ctx) { return ctx->be.ops->kind; }

gs_status gs_context_rank_info(gs_context *ctx, gs_rank_info *all)
{
    gs_rank_info me;
    memset(&me, 0, sizeof me);
    me.rank = ctx->mpi.rank;
    me.local_rank = ctx->mpi.local_rank;
    gethostname(me.host, sizeof me.host - 1);
    me.cpu_threads = gs_cpu_threads();
    GS_CHECK(gs_mpi_agree(&ctx->mpi, gs_be_describe(&ctx->be, &me)));
    return gs_mpi_allgather_bytes(&ctx->mpi, &me, sizeof me, all);
}
