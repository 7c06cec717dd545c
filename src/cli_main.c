/* cli_main.c - gpuscan: the table of its commands, which dispatches, writes
 * the usage and names them in errors; and reduce, scan and info themselves:
 * parse, create a context, run one command, report. Every rank runs the same
 * steps; rank 0 prints; all ranks exit alike. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gs_backend.h"
#include "gs_mpi.h"

/* Ctrl-C, `kill`, SLURM's time limit (srun signals every task; mpirun sends
 * its ranks SIGTERM once its own SIGINT or SIGTERM came): remove the
 * temporary of the output being written, then end as the signal would
 * have, so no half-written file stays behind. */
static void on_termination(int sig)
{
    gs_mpiio_discard_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_termination(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_termination;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static int fail(int rank, const char *message, int code)
{
    if (rank == 0) {
        fprintf(stderr, "gpuscan: error: %s\n", message);
        fflush(stderr);
    }
    return code;
}

/* fail, and under a usage error where `gpuscan COMMAND --help` (NULL:
 * `gpuscan --help`) lists the options. */
static int fail_with_hint(int rank, const char *message, int code, const char *command)
{
    fail(rank, message, code);
    if (rank == 0 && code == CLI_EXIT_USAGE)
        fprintf(stderr, "(gpuscan%s%s --help lists the options)\n", command ? " " : "", command ? command : "");
    return code;
}

/* cli_agree's reduction and broadcast. */
static int agree(int code, char *err, size_t errlen)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int first = code != CLI_EXIT_OK ? rank : size;
    if (MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Allreduce failed while the ranks compared their arguments");
        return CLI_EXIT_FAIL;
    }
    if (first == size) return CLI_EXIT_OK;
    if (MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Bcast(err, (int)errlen, MPI_CHAR, first, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(err, errlen, "rank %d stopped on its arguments (its message could not be shared)", first);
        return CLI_EXIT_FAIL;
    }
    err[errlen - 1] = '\0';
    if (first != 0) {
        char theirs[512];
        snprintf(theirs, sizeof theirs, "%s", err);
        snprintf(err, errlen, "rank %d: %s", first, theirs);
    }
    return code;
}

int cli_agree(int code, char *err, size_t errlen, const char *command)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    code = agree(code, err, errlen);
    return code == CLI_EXIT_OK ? code : fail_with_hint(rank, err, code, command);
}

int cli_create_context(const gs_config *cfg, int rank, gs_context **ctx, gs_status *status)
{
    *ctx = NULL;
    gs_status st = gs_context_create(MPI_COMM_WORLD, cfg, ctx);
    if (status) *status = st;
    if (st == GS_OK) return CLI_EXIT_OK;
    return fail(rank, *ctx ? gs_context_error(*ctx) : gs_status_string(st), CLI_EXIT_FAIL);
}

/* A failed reduce or scan: with --json, rank 0 also writes the JSON error
 * object, so that a script reading the report learns what happened. */
static int run_failure(int rank, const cli_args *a, const char *message, gs_status st)
{
    if (rank != 0 || !a->json_path) return CLI_EXIT_FAIL;
    char err[512];
    if (cli_write_json_error(a, message, gs_status_name(st), err, sizeof err) != 0)
        fprintf(stderr, "gpuscan: error: %s\n", err);
    fflush(stdout);
    return CLI_EXIT_FAIL;
}

/* Collective: why the run is on the CPU backend, on rank 0 (every rank gets
 * ""): the first rank without a usable GPU and its reason (no driver,
 * CUDA_VISIBLE_DEVICES empty, built without CUDA). "" when the CPU backend
 * was asked for, or the run is on the GPUs. */
static void cpu_backend_reason(const cli_args *a, gs_backend backend, int rank, int size, char *why, size_t len)
{
    enum { REASON_LEN = 256 };
    why[0] = '\0';
    if (backend != GS_BACKEND_CPU || a->cfg.backend == GS_BACKEND_CPU) return;
    char mine[REASON_LEN] = "";
    if (gs_backend_devices(GS_BACKEND_CUDA, mine, sizeof mine) > 0) mine[0] = '\0';
    char *all = rank == 0 ? calloc((size_t)size, REASON_LEN) : NULL;
    const int gathered = MPI_Gather(mine, REASON_LEN, MPI_CHAR, all, REASON_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0 && (!all || gathered != MPI_SUCCESS)) snprintf(why, len, "(the reason could not be gathered)");
    for (int r = 0; all && gathered == MPI_SUCCESS && r < size; r++) {
        const char *reason = all + (size_t)r * REASON_LEN;
        if (!*reason) continue;
        if (size == 1) snprintf(why, len, "%.*s", REASON_LEN, reason);
        else snprintf(why, len, "rank %d: %.*s", r, REASON_LEN, reason);
        break;
    }
    free(all);
}

static int run_command(gs_context *ctx, const cli_args *a, int rank, int size)
{
    gs_rank_info *ranks = calloc((size_t)size, sizeof *ranks);
    if (!ranks) return fail(rank, "out of memory", CLI_EXIT_FAIL);
    gs_status st = gs_context_rank_info(ctx, ranks);
    char cpu_why[512];
    cpu_backend_reason(a, gs_context_backend(ctx), rank, size, cpu_why, sizeof cpu_why);
    gs_report rep;
    gs_value result;
    memset(&result, 0, sizeof result);
    if (st == GS_OK && a->command == CLI_INFO) {
        if (rank == 0) cli_print_info(stdout, size, ranks, gs_context_backend(ctx), cpu_why);
        free(ranks);
        return CLI_EXIT_OK;
    }
    cli_progress bar;
    cli_progress_begin(&bar, rank, a->quiet, a->progress);
    gs_run_options run = a->run;
    run.progress = cli_progress_update;
    run.progress_data = &bar;
    if (st == GS_OK && a->command == CLI_REDUCE)
        st = gs_reduce_run(ctx, &a->src, a->op, &run, &result, &rep);
    else if (st == GS_OK)
        st = gs_scan_run(ctx, &a->src, a->op, a->kind, a->out_path, &run, &rep);
    cli_progress_end(&bar);
    if (st != GS_OK) {
        fail(rank, gs_context_error(ctx), CLI_EXIT_FAIL);
        free(ranks);
        return run_failure(rank, a, gs_context_error(ctx), st);
    }
    int code = CLI_EXIT_OK;
    if (rank == 0) {
        if (!a->quiet && !(a->json_path && strcmp(a->json_path, "-") == 0))
            cli_print_summary(stdout, a, &rep, &result, ranks, cpu_why);
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

/* ---- the commands ------------------------------------------------------------ */

static int reduce_main(int argc, char **argv);
static int scan_main(int argc, char **argv);
static int info_main(int argc, char **argv);
static int help_main(int argc, char **argv);
static int version_main(int argc, char **argv);

/* `gpuscan NAME ARGS...` calls main(argc - 1, argv + 1) after MPI_Init, so
 * that argv[0] is NAME; it returns the exit status, the same on every rank. */
typedef struct cli_subcommand {
    const char *name;
    const char *synopsis;   /* its arguments, for the usage line */
    const char *summary;    /* what it does, in one line */
    int (*main)(int argc, char **argv);
} cli_subcommand;

static const cli_subcommand commands[] = {
    {"reduce", "(-i FILE | -g N) [-t TYPE] [-o OP] [options]",
     "the sum, product, min or max of the whole array", reduce_main},
    {"scan", "(-i FILE | -g N) -O OUT [-t TYPE] [-o OP] [--exclusive] [options]",
     "the running sums, products, minima or maxima of the array, written to OUT", scan_main},
    {"info", "", "the ranks, their hosts and GPUs, and the build", info_main},
    {"bench", "[options]", "reduce and scan timed over a sweep of sizes (gpuscan bench --help)",
     cli_bench_main},
    {"ladder", "[options]", "the CUDA kernel variants side by side on one GPU (gpuscan ladder --help)",
     cli_ladder_main},
    {"help", "", "this text (also gpuscan --help; each command's options: gpuscan COMMAND --help)",
     help_main},
    {"version", "", "the version and the build (also gpuscan --version)", version_main},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const cli_subcommand *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* "reduce, scan, ...": every command, for the messages that list them. */
static const char *command_names(void)
{
    static char names[128];
    size_t used = 0;
    for (int i = 0; i < N_COMMANDS && used < sizeof names; i++)
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", commands[i].name);
    return names;
}

static void print_usage(FILE *out)
{
    int width = 0;
    for (int i = 0; i < N_COMMANDS; i++) {
        int len = (int)strlen(commands[i].name);
        if (len > width) width = len;
    }
    for (int i = 0; i < N_COMMANDS; i++) {
        const char *lead = i ? "      " : "usage:";
        if (*commands[i].synopsis)
            fprintf(out, "%s gpuscan %-*s %s\n", lead, width, commands[i].name, commands[i].synopsis);
        else
            fprintf(out, "%s gpuscan %s\n", lead, commands[i].name);
    }
    fputs("       gpuscan --help | --version\n"
          "\n"
          "Global reductions and prefix scans over an array split across MPI ranks,\n"
          "each rank on one GPU (or on the CPU backend). Run under mpirun or srun.\n"
          "\n"
          "commands:\n",
          out);
    for (int i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-*s  %s\n", width, commands[i].name, commands[i].summary);
    fputc('\n', out);
    cli_print_options(out);
}

/* reduce, scan, info, and gpuscan with no command (CLI_NONE: --help, --version). */
static int run_main(int argc, char **argv, cli_command command)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cli_args args;
    char err[256];
    int code = cli_parse(argc, argv, command, &args, err, sizeof err);
    if (code == CLI_EXIT_OK && args.command == CLI_NONE) {
        snprintf(err, sizeof err, "no command given (%s; --help)", command_names());
        code = CLI_EXIT_USAGE;
    }
    /* the report's place first, so that a run never ends unable to write it */
    if (code == CLI_EXIT_OK && rank == 0 && args.json_path &&
        cli_check_report_path(args.json_path, "JSON", err, sizeof err) != 0)
        code = CLI_EXIT_FAIL;
    code = cli_agree(code, err, sizeof err, NULL);
    if (code != CLI_EXIT_OK) return code;
    if (args.command == CLI_HELP) {
        if (rank == 0) print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (args.command == CLI_VERSION) {
        if (rank == 0) printf("%s\n", gs_build_info());
        return CLI_EXIT_OK;
    }
    gs_context *ctx = NULL;
    gs_status st;
    code = cli_create_context(&args.cfg, rank, &ctx, &st);
    if (code != CLI_EXIT_OK && args.command != CLI_INFO)
        code = run_failure(rank, &args, ctx ? gs_context_error(ctx) : gs_status_string(st), st);
    else if (code == CLI_EXIT_OK)
        code = run_command(ctx, &args, rank, size);
    gs_context_destroy(ctx);
    return code;
}

static int reduce_main(int argc, char **argv) { return run_main(argc, argv, CLI_REDUCE); }
static int scan_main(int argc, char **argv) { return run_main(argc, argv, CLI_SCAN); }
static int info_main(int argc, char **argv) { return run_main(argc, argv, CLI_INFO); }

/* `gpuscan help` and `gpuscan version`: --help and --version as commands. */
static int print_main(int argc, char **argv, cli_command what)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1) {
        char err[256];
        snprintf(err, sizeof err, "%s takes no arguments (gpuscan COMMAND --help for a command's options)", argv[0]);
        return fail_with_hint(rank, err, CLI_EXIT_USAGE, NULL);
    }
    if (rank == 0 && what == CLI_HELP) print_usage(stdout);
    if (rank == 0 && what == CLI_VERSION) printf("%s\n", gs_build_info());
    return CLI_EXIT_OK;
}

static int help_main(int argc, char **argv) { return print_main(argc, argv, CLI_HELP); }
static int version_main(int argc, char **argv) { return print_main(argc, argv, CLI_VERSION); }

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "gpuscan: error: MPI_Init failed\n");
        return CLI_EXIT_FAIL;
    }
    catch_termination();
    int code;
    if (argc > 1 && argv[1][0] != '-') {
        const cli_subcommand *command = find_command(argv[1]);
        if (command) {
            code = command->main(argc - 1, argv + 1);
        } else {
            int rank = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            char err[256];
            snprintf(err, sizeof err, "unknown command '%s' (%s)", argv[1], command_names());
            code = fail_with_hint(rank, err, CLI_EXIT_USAGE, NULL);
        }
    } else {
        code = run_main(argc, argv, CLI_NONE);   /* options only: --help, --version, or an error */
    }
    MPI_Finalize();
    return code;
}
