/* cli_main.c - gpuscan: parse, create a context, run one command, report.
 * Every rank runs the same steps; rank 0 prints; all ranks exit alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int fail(int rank, const char *message, int code)
{
    if (rank == 0) {
        fprintf(stderr, "gpuscan: error: %s\n", message);
        fflush(stderr);
    }
    return code;
}

int cli_create_context(const gs_config *cfg, int rank, gs_context **ctx)
{
    *ctx = NULL;
    gs_status st = gs_context_create(MPI_COMM_WORLD, cfg, ctx);
    if (st == GS_OK) return CLI_EXIT_OK;
    return fail(rank, *ctx ? gs_context_error(*ctx) : gs_status_string(st), CLI_EXIT_FAIL);
}

static int run_command(gs_context *ctx, const cli_args *a, int rank, int size)
{
    gs_rank_info *ranks = calloc((size_t)size, sizeof *ranks);
    if (!ranks) return fail(rank, "out of memory", CLI_EXIT_FAIL);
    gs_status st = gs_context_rank_info(ctx, ranks);
    gs_report rep;
    gs_value result;
    memset(&result, 0, sizeof result);
    if (st == GS_OK && a->command == CLI_INFO) {
        if (rank == 0) cli_print_info(stdout, size, ranks, gs_context_backend(ctx));
        free(ranks);
        return CLI_EXIT_OK;
    }
    cli_progress bar;
    cli_progress_begin(&bar, rank, a->quiet);
    gs_run_options run = a->run;
    run.progress = cli_progress_update;
    run.progress_data = &bar;
    if (st == GS_OK && a->command == CLI_REDUCE)
        st = gs_reduce_run(ctx, &a->src, a->op, &run, &result, &rep);
    else if (st == GS_OK)
        st = gs_scan_run(ctx, &a->src, a->op, a->kind, a->out_path, &run, &rep);
    cli_progress_end(&bar);
    if (st != GS_OK) {
        int code = fail(rank, gs_context_error(ctx), CLI_EXIT_FAIL);
        free(ranks);
        return code;
    }
    int code = CLI_EXIT_OK;
    if (rank == 0) {
        if (!a->quiet && !(a->json_path && strcmp(a->json_path, "-") == 0))
            cli_print_summary(stdout, a, &rep, &result, ranks);
        char err[512];
        if (a->json_path && cli_write_json(a, &rep, &result, ranks, err, sizeof err) != 0) {
            fprintf(stderr, "gpuscan: error: %s\n", err);
            code = CLI_EXIT_FAIL;
        }
        if (rep.verified && rep.wrong) {
            fprintf(stderr, "gpuscan: error: verification failed: %lld wrong element(s)\n", (long long)rep.wrong);
            code = CLI_EXIT_FAIL;
        }
        fflush(stdout);
    }
    /* every rank leaves with rank 0's verdict */
    if (MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) code = CLI_EXIT_FAIL;
    free(ranks);
    return code;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpuscan: error: MPI_Init failed\n");
        return CLI_EXIT_FAIL;
    }
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    cli_args args;
    char err[256];
    int code;
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        code = cli_bench_main(argc - 1, argv + 1);
        MPI_Finalize();
        return code;
    }
    if (argc > 1 && strcmp(argv[1], "ladder") == 0) {
        code = cli_ladder_main(argc - 1, argv + 1);
        MPI_Finalize();
        return code;
    }
    code = cli_parse(argc, argv, &args, err, sizeof err);
    if (code != CLI_EXIT_OK) {
        fail(rank, err, code);
        if (rank == 0) fputs("(gpuscan --help lists the options)\n", stderr);
    } else if (args.command == CLI_HELP) {
        if (rank == 0) cli_print_usage(stdout);
    } else if (args.command == CLI_VERSION) {
        if (rank == 0) printf("%s\n", gs_build_info());
    } else {
        gs_context *ctx = NULL;
        code = cli_create_context(&args.cfg, rank, &ctx);
        if (code == CLI_EXIT_OK) code = run_command(ctx, &args, rank, size);
        gs_context_destroy(ctx);
    }
    MPI_Finalize();
    return code;
}
