/*
 * cli_bench.c - `gpuscan bench`: a sweep of sizes x types x ops of the
 * collective gs_reduce and gs_scan in the manner of nccl-tests, each case
 * timed and checked by the library (gs_bench_ceilings, gs_bench_run), and
 * the verdict: the exit status. Its options are in cli_bench_parse.c, its
 * table and files in cli_bench_output.c.
 *
 * Rank 0 prints and writes; every rank runs every case and leaves with rank
 * 0's exit status.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_bench.h"
#include "gs_h5.h"

/* ---- the sweep ------------------------------------------------------------------ */

/* The next size of the sweep, or 0 after the last. */
static int64_t next_size(const cli_bench_args *a, int64_t n)
{
    if (a->step) return n <= a->max_n - a->step ? n + a->step : 0;
    return n <= a->max_n / a->factor ? n * a->factor : 0;
}

static int count_cases(const cli_bench_args *a)
{
    int64_t sizes = 0;
    for (int64_t n = a->min_n; n; n = next_size(a, n)) sizes++;
    int64_t cases = sizes * (a->reduce + a->scan) * (a->resident + a->streamed) *
                    (a->n_types * a->n_ops + cli_bench_exact_cases(a));
    return cases > (1 << 24) ? -1 : (int)cases;
}

/* The least of each ceiling over the ranks: the slowest rank bounds a collective. */
static void find_slowest(cli_bench_report *rep)
{
    rep->slowest = rep->ceilings[0];
    for (int i = 1; i < rep->ranks; i++) {
        rep->slowest.copy_gbps = fmin(rep->slowest.copy_gbps, rep->ceilings[i].copy_gbps);
        rep->slowest.h2d_gbps = fmin(rep->slowest.h2d_gbps, rep->ceilings[i].h2d_gbps);
        rep->slowest.duplex_gbps = fmin(rep->slowest.duplex_gbps, rep->ceilings[i].duplex_gbps);
    }
}

/* Rank 0 prints the table unless a report goes to stdout (`-`), which then
 * carries only that report, as for reduce and scan. */
static int shows_table(const cli_bench_args *a)
{
    return !(a->json_path && strcmp(a->json_path, "-") == 0) && !(a->csv_path && strcmp(a->csv_path, "-") == 0);
}

/* One row: the case run, formatted and printed. */
static gs_status run_row(gs_context *ctx, cli_bench_report *rep, int rank, const gs_bench_case *c)
{
    cli_bench_row *row = &rep->rows[rep->n_rows];
    row->c = *c;
    gs_status st = gs_bench_run(ctx, &row->c, &row->r);
    if (st != GS_OK) return st;
    cli_bench_format_row(rep, row);
    rep->n_rows++;
    if (rank == 0 && shows_table(rep->a)) cli_bench_print_row(stdout, rep, row);
    return GS_OK;
}

/* Run every case in order: mode, collective, type, op, then size, so that
 * the rows of one curve follow each other, each exact row (--exact) right
 * after its plain one. Stops at the first failure (the same on every rank). */
static gs_status sweep(gs_context *ctx, cli_bench_report *rep, int rank)
{
    const cli_bench_args *a = rep->a;
    /* test-only: GS_BENCH_CORRUPT=1 makes every check fail (tests/cli_bench.sh) */
    const char *corrupt = getenv("GS_BENCH_CORRUPT");
    const int plant_wrong = corrupt && *corrupt && strcmp(corrupt, "0") != 0;
    for (int mode = GS_BENCH_RESIDENT; mode <= GS_BENCH_STREAMED; mode++) {
        if (!(mode == GS_BENCH_RESIDENT ? a->resident : a->streamed)) continue;
        for (int scan = 0; scan <= 1; scan++) {
            if (!(scan ? a->scan : a->reduce)) continue;
            for (int t = 0; t < a->n_types; t++)
                for (int o = 0; o < a->n_ops; o++)
                    for (int64_t n = a->min_n; n; n = next_size(a, n)) {
                        gs_bench_case c = {scan, a->types[t], a->ops[o], a->kind, (gs_bench_mode)mode, n,
                                           (int)a->warmup, (int)a->iters, (int)a->check_iters, a->seed,
                                           plant_wrong, 0};
                        gs_status st = run_row(ctx, rep, rank, &c);
                        if (st == GS_OK && cli_bench_exact_row(a, c.type, c.op)) {
                            c.exact = 1;
                            st = run_row(ctx, rep, rank, &c);
                        }
                        if (st != GS_OK) return st;
                    }
        }
    }
    return GS_OK;
}

/* The read bandwidth of each --read file, printed by rank 0 as it is
 * measured, after the sweep's rows. */
static gs_status file_reads(gs_context *ctx, const cli_bench_args *a, int rank)
{
    for (int i = 0; i < a->n_reads; i++) {
        gs_bench_read_result r;
        gs_status st = gs_bench_read(ctx, a->reads[i], (int)a->iters, &r);
        if (st != GS_OK) return st;
        const int ranks = gs_context_size(ctx);
        if (rank == 0 && shows_table(a))
            printf("# read %s: %llu bytes, %.6f s (median of %d): %.2f GB/s, %.2f GB/s per rank\n", a->reads[i],
                   (unsigned long long)r.bytes, r.median, (int)a->iters, r.gbps, r.gbps / ranks);
    }
    return GS_OK;
}

/* ---- the verdict ---------------------------------------------------------------- */

static void summarize(cli_bench_report *rep, gs_status st, const char *error)
{
    double sum = 0;
    for (int i = 0; i < rep->n_rows; i++) {
        sum += rep->rows[i].r.gbps_rank;
        if (rep->rows[i].r.wrong >= 0) {
            rep->wrong_total += rep->rows[i].r.wrong;
            rep->checked++;
        }
    }
    rep->avg_gbps_rank = rep->n_rows ? sum / rep->n_rows : 0;
    cli_bench_format_average(rep);
    if (st != GS_OK) {
        rep->verdict = CLI_BENCH_ERROR;
        rep->error = error;
    } else if (rep->wrong_total > 0) {
        rep->verdict = CLI_BENCH_WRONG;
    } else if (rep->a->min_bw >= 0 && rep->avg_gbps_rank < rep->a->min_bw) {
        rep->verdict = CLI_BENCH_BELOW_MIN_BW;
    } else {
        rep->verdict = CLI_BENCH_OK;
    }
}

/* Rank 0: the footer, the files and the exit status. */
static int conclude(const cli_bench_report *rep)
{
    const cli_bench_args *a = rep->a;
    if (shows_table(a)) cli_bench_print_footer(stdout, rep);
    switch (rep->verdict) {
    case CLI_BENCH_OK: break;
    case CLI_BENCH_ERROR: fprintf(stderr, "gpuscan: error: %s\n", rep->error); break;
    case CLI_BENCH_WRONG:
        fprintf(stderr, "gpuscan: error: bench found %lld wrong result(s)\n", (long long)rep->wrong_total);
        break;
    case CLI_BENCH_BELOW_MIN_BW:
        fprintf(stderr, "gpuscan: error: average bandwidth %s GB/s per rank is below --min-bw %g\n", rep->avg,
                a->min_bw);
        break;
    }
    int code = rep->verdict == CLI_BENCH_OK ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    /* the files hold the rows even when the verdict is a failure */
    const struct { const char *path, *what; cli_write_fn write; } files[] = {
        {a->csv_path, "CSV", cli_bench_write_csv}, {a->json_path, "JSON", cli_bench_write_json},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char err[512];
        if (files[i].path &&
            cli_write_report(files[i].path, files[i].what, files[i].write, rep, err, sizeof err) != 0) {
            if (code == CLI_EXIT_OK) fprintf(stderr, "gpuscan: error: %s\n", err);   /* one error line */
            code = CLI_EXIT_FAIL;
        }
    }
    fflush(stdout);
    return code;
}

/* 1 when every rank says ok: keeps a local failure from leaving the others
 * in a collective. */
static int all_ranks_ok(int ok)
{
    return MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && ok;
}

static int run_bench(gs_context *ctx, const cli_bench_args *a, int rank)
{
    cli_bench_report rep;
    memset(&rep, 0, sizeof rep);
    rep.a = a;
    rep.ranks = gs_context_size(ctx);
    rep.backend = gs_context_backend(ctx);
    int cases = count_cases(a);
    gs_rank_info *info = calloc((size_t)rep.ranks, sizeof *info);
    gs_bench_ceiling *ceilings = calloc((size_t)rep.ranks, sizeof *ceilings);
    rep.rows = cases > 0 ? calloc((size_t)cases, sizeof *rep.rows) : NULL;
    rep.info = info;
    rep.ceilings = ceilings;
    int code = CLI_EXIT_FAIL;
    if (!all_ranks_ok(info && ceilings && rep.rows)) {
        if (rank == 0) fprintf(stderr, "gpuscan: error: bench: no memory for %d case(s)%s\n", cases,
                               cases < 0 ? " (too many: use fewer sizes)" : "");
    } else {
        gs_status st = gs_context_rank_info(ctx, info);
        if (st == GS_OK) st = gs_bench_ceilings(ctx, ceilings);
        if (st == GS_OK) {
            find_slowest(&rep);
            cli_bench_format_ceilings(&rep);
            if (rank == 0 && shows_table(a)) cli_bench_print_header(stdout, &rep);
            st = sweep(ctx, &rep, rank);
            if (st == GS_OK) st = file_reads(ctx, a, rank);
        }
        summarize(&rep, st, st == GS_OK ? NULL : gs_context_error(ctx));
        if (rank == 0) code = conclude(&rep);
        /* every rank leaves with rank 0's verdict */
        if (MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) code = CLI_EXIT_FAIL;
    }
    free(info);
    free(ceilings);
    free(rep.rows);
    return code;
}

static int check_files(const cli_bench_args *a, int rank, char *err, size_t errlen)
{
    if (rank == 0 && a->json_path && cli_check_report_path(a->json_path, "JSON", err, errlen) != 0)
        return CLI_EXIT_FAIL;
    if (rank == 0 && a->csv_path && cli_check_report_path(a->csv_path, "CSV", err, errlen) != 0)
        return CLI_EXIT_FAIL;
    for (int i = 0; i < a->n_reads; i++) {
        char file[4096];
        const char *path = a->reads[i];
        if (gs_h5_is_path(path) && gs_h5_file_part(path, file, sizeof file)) path = file;
        if (access(path, R_OK) != 0) {
            snprintf(err, errlen, "bench: --read %s: %s", a->reads[i], strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    return CLI_EXIT_OK;
}

int cli_bench_main(int argc, char **argv)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_bench_args a;
    char err[256];
    int code = cli_bench_parse(argc, argv, &a, err, sizeof err);
    /* what the files named need, before the sweep: reports that can be
     * written (rank 0 writes them), --read files every rank can read */
    if (code == CLI_EXIT_OK && !a.help) code = check_files(&a, rank, err, sizeof err);
    code = cli_agree(code, err, sizeof err, "bench");
    if (code != CLI_EXIT_OK) return code;
    if (a.help) {
        if (rank == 0) cli_bench_usage(stdout);
        return CLI_EXIT_OK;
    }
    gs_context *ctx = NULL;
    code = cli_create_context(&a.cfg, rank, &ctx, NULL);
    if (code == CLI_EXIT_OK) code = run_bench(ctx, &a, rank);
    gs_context_destroy(ctx);
    return code;
}
