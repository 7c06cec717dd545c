/*
 * cli_ladder.c - `gpuscan ladder`: every kernel variant of the CUDA backend
 * side by side on one GPU, as the classic optimisation slides tabulate
 * them, measured and checked by the library (gs_ladder_run). Rank 0 prints
 * its own GPU's rows; every rank runs every case and leaves with rank 0's
 * exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

typedef struct cli_ladder_args {
    int64_t n, iters, warmup;
    int types[GS_TYPE_COUNT];   /* gs_type values */
    int n_types;
    int ops[GS_OP_COUNT];       /* gs_op values */
    int n_ops;
    int scan;
    gs_scan_kind kind;
    int algo;                 /* -1: every variant */
    int exact;                /* --exact: the exact row where it applies */
    uint64_t seed;
    gs_config cfg;
    const char *json_path;
    int help;
} cli_ladder_args;

/* One case's rows, as run. */
typedef struct cli_ladder_case {
    gs_ladder_case c;
    gs_ladder_row rows[GS_LADDER_MAX_ROWS];
    int n_rows;
} cli_ladder_case;

static void ladder_usage(FILE *out)
{
    fputs(
"usage: gpuscan ladder [-g N] [-t TYPES|all] [-o OPS|all] [--scan] [--exclusive]\n"
"                      [--algo NAME] [-n ITERS] [-w WARMUP] [--seed S] [--device N]\n"
"                      [--exact] [--json FILE]\n"
"\n"
"Runs every kernel variant of the CUDA backend on the same device-resident,\n"
"freshly generated data of one GPU: the classic reduction steps or the scans,\n"
"the tuned default and CUB, next to a device-to-device copy of the input (the\n"
"ceiling). Each variant is timed with CUDA events (the median of the timed runs\n"
"after its warm-up) and checked element by element against an independent\n"
"reference. The cub row computes gpuscan's function (fp64 accumulation of\n"
"floats, widened integer sums); the cub-native row is CUB as its users call it\n"
"on the input type (InclusiveSum, cuda::maximum, ...: f32 sums accumulate in\n"
"f32, i32 sums wrap in 32 bits; no products), timed but not checked.\n"
"\n"
"  -g N             elements, not bytes (default 32Mi; suffixes k M G T, Ki Mi Gi Ti)\n"
"  -t TYPES         i32 i64 u32 u64 f32 f64 (or NumPy's names), a comma-separated list\n"
"                   or all (default f32)\n"
"  -o OPS           sum prod min max, a comma-separated list or all (default sum)\n"
"      --scan       the scans (default: the reductions)\n"
"      --exclusive  exclusive scans (default inclusive)\n"
"      --exact      for f32/f64 sums, a last row: the backend's exact kernels (--exact of\n"
"                   reduce and scan), checked bit for bit\n"
"      --algo NAME  only this variant (and cub): default, cub; reductions: divergent\n"
"                   strided sequential first-add unroll-last-warp unroll-all grid-stride;\n"
"                   scans: hillis-steele blelloch multi-kernel reduce-then-scan\n"
"  -n ITERS         timed runs (default 20)\n"
"  -w WARMUP        untimed runs first (default 3; unless 0, also at least 50 ms of them)\n"
"      --seed S     generator seed, decimal or 0x hex (default: from the clock,\n"
"                   printed)\n"
"      --device N   GPU ordinal\n"
"      --json FILE  every case and row as one JSON object\n"
"\n"
"Columns: time per run in microseconds; GB/s of bytes read plus written (scans\n"
"write n outputs); step: speedup over the row before; cumul: over the first\n"
"variant; %copy: GB/s against the copy's; xCUB: cub's time over the row's;\n"
"xNAT: cub-native's time over the row's; #wrong: wrong elements (1 for a wrong\n"
"reduction; a scan's wrong carry or overflow flag counts one more; '-': not\n"
"checked). Exit status 1 when any variant is wrong or a\n"
"run fails, 2 for a usage error. Needs the CUDA backend.\n",
        out);
}

static int parse_type(const char *name, int *value)
{
    gs_type t;
    if (cli_parse_type(name, &t) != 0) return -1;
    *value = (int)t;
    return 0;
}

static int parse_op(const char *name, int *value)
{
    gs_op op;
    if (gs_op_from_name(name, &op) != GS_OK) return -1;
    *value = (int)op;
    return 0;
}

/* "all" (every value 0..count-1) or names separated by commas, each once.
 * 0, or -1. */
static int parse_list(const char *text, int count, int (*parse)(const char *, int *), int *values, int *n)
{
    *n = 0;
    if (strcmp(text, "all") == 0) {
        for (int i = 0; i < count; i++) values[(*n)++] = i;
        return 0;
    }
    char buf[128];
    if (strlen(text) >= sizeof buf) return -1;
    strcpy(buf, text);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int v;
        if (*n == count || parse(name, &v) != 0) return -1;
        for (int i = 0; i < *n; i++)
            if (values[i] == v) return -1;
        values[(*n)++] = v;
    }
    return *n > 0 ? 0 : -1;
}

static int parse_ladder(int argc, char **argv, cli_ladder_args *a, char *err, size_t errlen)
{
    enum { OPT_SCAN = 256, OPT_EXCLUSIVE, OPT_ALGO, OPT_SEED, OPT_DEVICE, OPT_JSON, OPT_EXACT };
    static const struct option options[] = {
        {"scan", no_argument, 0, OPT_SCAN},       {"exclusive", no_argument, 0, OPT_EXCLUSIVE},
        {"algo", required_argument, 0, OPT_ALGO}, {"seed", required_argument, 0, OPT_SEED},
        {"device", required_argument, 0, OPT_DEVICE}, {"json", required_argument, 0, OPT_JSON},
        {"type", required_argument, 0, 't'},      {"op", required_argument, 0, 'o'},
        {"exact", no_argument, 0, OPT_EXACT},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    static const gs_config cfg = GS_CONFIG_INIT;
    memset(a, 0, sizeof *a);
    a->cfg = cfg;
    a->n = (int64_t)32 << 20;
    a->iters = 20;
    a->warmup = 3;
    a->types[a->n_types++] = (int)GS_F32;
    a->ops[a->n_ops++] = (int)GS_SUM;
    a->kind = GS_INCLUSIVE;
    a->algo = -1;
    a->seed = (uint64_t)time(NULL);
    const char *algo_name = NULL;

    optind = 1;   /* argv[0] is "ladder" */
    opterr = 0;
    int c;
    int64_t count;
    while ((c = getopt_long(argc, argv, ":g:t:o:n:w:h", options, NULL)) != -1) {
        switch (c) {
        case 'g':
            if (cli_parse_count(optarg, &a->n) != 0 || a->n < 1 || a->n > INT64_MAX / 16)
                return cli_usage_error(err, errlen, "-g %s: not a positive element count (digits with an optional k M G T Ki Mi Gi Ti)", optarg);
            break;
        case 't':
            if (parse_list(optarg, GS_TYPE_COUNT, parse_type, a->types, &a->n_types) != 0)
                return cli_usage_error(err, errlen, "-t %s: not a list of types (i32 i64 u32 u64 f32 f64, or all)", optarg);
            break;
        case 'o':
            if (parse_list(optarg, GS_OP_COUNT, parse_op, a->ops, &a->n_ops) != 0)
                return cli_usage_error(err, errlen, "-o %s: not a list of operations (sum prod min max, or all)", optarg);
            break;
        case 'n':
            if (cli_parse_count(optarg, &a->iters) != 0 || a->iters < 1 || a->iters > (1 << 20))
                return cli_usage_error(err, errlen, "-n %s: not a number of runs from 1 to 1Mi", optarg);
            break;
        case 'w':
            if (cli_parse_count(optarg, &a->warmup) != 0 || a->warmup > (1 << 20))
                return cli_usage_error(err, errlen, "-w %s: not a number of runs from 0 to 1Mi", optarg);
            break;
        case OPT_SCAN: a->scan = 1; break;
        case OPT_EXCLUSIVE: a->kind = GS_EXCLUSIVE; a->scan = 1; break;
        case OPT_ALGO: algo_name = optarg; break;
        case OPT_EXACT: a->exact = 1; break;
        case OPT_SEED:
            if (cli_parse_seed(optarg, &a->seed, err, errlen) != 0) return CLI_EXIT_USAGE;
            break;
        case OPT_DEVICE:
            if (cli_parse_count(optarg, &count) != 0 || count > (1 << 20))
                return cli_usage_error(err, errlen, "--device %s: not a GPU ordinal", optarg);
            a->cfg.device = (int)count;
            break;
        case OPT_JSON: a->json_path = optarg; break;
        case 'h': a->help = 1; return CLI_EXIT_OK;
        case ':': return cli_usage_error(err, errlen, "ladder: %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(err, errlen, "ladder: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(err, errlen, "ladder: unexpected argument '%s'", argv[optind]);
    if (algo_name) {
        gs_algo algo;
        if (cli_parse_algo(algo_name, a->scan, &algo) != 0)
            return cli_usage_error(err, errlen, a->scan ? "--algo %s: no scan variant (see gpuscan ladder --help)"
                                                    : "--algo %s: no reduction variant (see gpuscan ladder --help)",
                               algo_name);
        a->algo = (int)algo;
    }
    if (a->exact) {
        int float_sums = 0;
        for (int t = 0; t < a->n_types; t++)
            for (int o = 0; o < a->n_ops; o++)
                float_sums += (a->types[t] == GS_F32 || a->types[t] == GS_F64) && a->ops[o] == GS_SUM;
        if (!float_sums)
            return cli_usage_error(err, errlen, "%s", "ladder --exact: no f32 or f64 sum among the cases "
                                   "(the exact row is for f32/f64 sums: -t f32, f64 or all with -o sum or all)");
    }
    return CLI_EXIT_OK;
}

/* ---- reports ------------------------------------------------------------------- */

static const char *case_kind(const gs_ladder_case *c)
{
    return !c->scan ? "reduce" : c->kind == GS_EXCLUSIVE ? "exclusive scan" : "inclusive scan";
}

static const char *row_name(const gs_ladder_row *r)
{
    switch (r->algo) {
    case GS_LADDER_COPY: return "copy (D2D)";
    case GS_LADDER_EXACT: return "exact";
    case GS_LADDER_NATIVE: return "cub-native";
    default: return gs_algo_name((gs_algo)r->algo);
    }
}

/* The derived columns of row i: step and cumulative speedups over the
 * ladder's variants (neither for the copy, no step for cub, cub-native and
 * the exact row), % of the copy, ratios to cub and to cub-native; 0 where
 * there is none. */
typedef struct derived { double step, cumul, pct_copy, x_cub, x_native; } derived;

static const gs_ladder_row *find_row(const cli_ladder_case *lc, int algo)
{
    for (int k = 0; k < lc->n_rows; k++)
        if (lc->rows[k].algo == algo) return &lc->rows[k];
    return NULL;
}

static derived derive(const cli_ladder_case *lc, int i)
{
    const gs_ladder_row *r = &lc->rows[i], *copy = &lc->rows[0], *first = &lc->rows[1];
    const gs_ladder_row *cub = find_row(lc, GS_ALGO_CUB), *native = find_row(lc, GS_LADDER_NATIVE);
    derived d = {0, 0, 0, 0, 0};
    if (r->median <= 0) return d;
    d.pct_copy = copy->gbps > 0 ? 100.0 * r->gbps / copy->gbps : 0;
    if (r->algo == GS_LADDER_COPY) return d;
    d.cumul = first->median / r->median;
    if (i > 1 && r->algo >= 0 && r->algo != GS_ALGO_CUB) d.step = lc->rows[i - 1].median / r->median;
    if (cub) d.x_cub = cub->median / r->median;
    if (native) d.x_native = native->median / r->median;
    return d;
}

static void print_number(FILE *out, int width, const char *fmt, double v)
{
    if (v > 0) fprintf(out, fmt, width, v);
    else fprintf(out, "%*s", width, "-");
}

static void print_case(FILE *out, const cli_ladder_case *lc)
{
    const gs_ladder_case *c = &lc->c;
    fprintf(out, "\n# %s %s %s, %lld elements\n", case_kind(c), gs_type_name(c->type), gs_op_name(c->op),
            (long long)c->n);
    fprintf(out, "  %-18s %12s %9s %7s %7s %7s %7s %7s %8s\n", "variant", "time(us)", "GB/s", "step", "cumul",
            "%copy", "xCUB", "xNAT", "#wrong");
    for (int i = 0; i < lc->n_rows; i++) {
        const gs_ladder_row *r = &lc->rows[i];
        const derived d = derive(lc, i);
        fprintf(out, "  %-18s %12.2f %9.1f", row_name(r), r->median * 1e6, r->gbps);
        print_number(out, 7, " %*.2f", d.step);
        print_number(out, 7, " %*.2f", d.cumul);
        print_number(out, 7, " %*.1f", d.pct_copy);
        print_number(out, 7, " %*.3f", d.x_cub);
        print_number(out, 7, " %*.3f", d.x_native);
        if (r->wrong >= 0) fprintf(out, " %8lld\n", (long long)r->wrong);
        else fprintf(out, " %8s\n", "-");
    }
    fflush(out);
}

static void json_number(FILE *f, const char *name, double v)
{
    char buf[40];
    cli_format_real(buf, sizeof buf, v, 6);
    fprintf(f, ", \"%s\": %s", name, v > 0 ? buf : "null");
}

/* What the JSON report holds. */
typedef struct cli_ladder_report {
    const cli_ladder_args *a;
    const gs_rank_info *info;   /* rank 0's, whose GPU the rows are */
    const cli_ladder_case *cases;
    int n_cases;
    int64_t wrong_total;
} cli_ladder_report;

static void write_json(FILE *f, const void *data)
{
    const cli_ladder_report *rep = data;
    const cli_ladder_args *a = rep->a;
    fprintf(f, "{\"command\": \"ladder\", \"version\": \"%s\", \"build\": ", GS_VERSION_STRING);
    cli_json_string(f, gs_build_info());
    fputs(", \"device\": ", f);
    cli_json_string(f, rep->info->device_name);
    fprintf(f, ", \"iters\": %lld, \"warmup\": %lld, \"seed\": %llu,\n \"cases\": [", (long long)a->iters,
            (long long)a->warmup, (unsigned long long)a->seed);
    for (int k = 0; k < rep->n_cases; k++) {
        const cli_ladder_case *lc = &rep->cases[k];
        fprintf(f, "%s\n  {\"op\": \"%s\", \"type\": \"%s\", \"kind\": \"%s\", \"elements\": %lld, \"rows\": [",
                k ? "," : "", gs_op_name(lc->c.op), gs_type_name(lc->c.type),
                lc->c.scan ? (lc->c.kind == GS_EXCLUSIVE ? "exscan" : "scan") : "reduce", (long long)lc->c.n);
        for (int i = 0; i < lc->n_rows; i++) {
            const gs_ladder_row *r = &lc->rows[i];
            const derived d = derive(lc, i);
            fprintf(f, "%s\n   {\"variant\": \"%s\", \"time_us\": %.3f, \"bytes\": %llu, \"gbps\": %.3f",
                    i ? "," : "", r->algo == GS_LADDER_COPY ? "copy" : row_name(r), r->median * 1e6,
                    (unsigned long long)r->bytes, r->gbps);
            json_number(f, "step", d.step);
            json_number(f, "cumul", d.cumul);
            json_number(f, "pct_copy", d.pct_copy);
            json_number(f, "x_cub", d.x_cub);
            json_number(f, "x_native", d.x_native);
            if (r->wrong >= 0) fprintf(f, ", \"wrong\": %lld}", (long long)r->wrong);
            else fputs(", \"wrong\": null}", f);
        }
        fputs("]}", f);
    }
    fprintf(f, "],\n \"wrong_total\": %lld, \"result\": \"%s\"}\n", (long long)rep->wrong_total,
            rep->wrong_total ? "wrong" : "ok");
}

/* ---- the run ---------------------------------------------------------------------- */

static int run_ladder(gs_context *ctx, const cli_ladder_args *a, int rank)
{
    const int n_cases = a->n_types * a->n_ops;
    const int quiet = a->json_path && strcmp(a->json_path, "-") == 0;
    cli_ladder_case *cases = calloc((size_t)n_cases, sizeof *cases);
    gs_rank_info *info = calloc((size_t)gs_context_size(ctx), sizeof *info);
    if (!cases || !info) {
        free(cases);
        free(info);
        if (rank == 0) fprintf(stderr, "gpuscan: error: ladder: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    gs_status st = gs_context_rank_info(ctx, info);
    if (st == GS_OK && rank == 0 && !quiet)
        printf("# gpuscan ladder: %s, GPU %d %s; %s\n# median of %lld timed runs after %lld warm-up; seed %llu\n",
               gs_build_info(), info->device, info->device_name, a->scan ? "scans" : "reductions",
               (long long)a->iters, (long long)a->warmup, (unsigned long long)a->seed);
    int64_t wrong_total = 0;
    int done = 0;
    for (int t = 0; t < a->n_types && st == GS_OK; t++)
        for (int o = 0; o < a->n_ops && st == GS_OK; o++) {
            cli_ladder_case *lc = &cases[done];
            gs_ladder_case c = {a->scan, (gs_type)a->types[t], (gs_op)a->ops[o], a->kind, a->n,
                                (int)a->warmup, (int)a->iters, a->seed, a->algo, a->exact};
            lc->c = c;
            st = gs_ladder_run(ctx, &lc->c, lc->rows, &lc->n_rows);
            if (st != GS_OK) break;
            done++;
            for (int i = 0; i < lc->n_rows; i++)
                if (lc->rows[i].wrong > 0) wrong_total += lc->rows[i].wrong;
            if (rank == 0 && !quiet) print_case(stdout, lc);
        }
    int code = CLI_EXIT_OK;
    if (rank == 0) {
        if (st != GS_OK) {
            fprintf(stderr, "gpuscan: error: %s\n", gs_context_error(ctx));
            code = CLI_EXIT_FAIL;
        } else if (wrong_total > 0) {
            fprintf(stderr, "gpuscan: error: ladder: %lld wrong result(s)\n", (long long)wrong_total);
            code = CLI_EXIT_FAIL;
        }
        const cli_ladder_report rep = {a, info, cases, done, wrong_total};
        char err[512];
        if (st == GS_OK && a->json_path &&
            cli_write_report(a->json_path, "JSON", write_json, &rep, err, sizeof err) != 0) {
            fprintf(stderr, "gpuscan: error: %s\n", err);
            code = CLI_EXIT_FAIL;
        }
        fflush(stdout);
    }
    if (MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS) code = CLI_EXIT_FAIL;
    free(cases);
    free(info);
    return code;
}

int cli_ladder_main(int argc, char **argv)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_ladder_args a;
    char err[256];
    int code = parse_ladder(argc, argv, &a, err, sizeof err);
    /* the report's place before the ladder's minutes of timing */
    if (code == CLI_EXIT_OK && !a.help && rank == 0 && a.json_path &&
        cli_check_report_path(a.json_path, "JSON", err, sizeof err) != 0)
        code = CLI_EXIT_FAIL;
    code = cli_agree(code, err, sizeof err, "ladder");
    if (code != CLI_EXIT_OK) return code;
    if (a.help) {
        if (rank == 0) ladder_usage(stdout);
        return CLI_EXIT_OK;
    }
    /* every rank uses rank 0's seed, so that a replay reproduces all */
    MPI_Bcast(&a.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    gs_context *ctx = NULL;
    code = cli_create_context(&a.cfg, rank, &ctx, NULL);
    if (code == CLI_EXIT_OK && gs_context_backend(ctx) != GS_BACKEND_CUDA) {
        if (rank == 0)
            fprintf(stderr, "gpuscan: error: ladder needs the CUDA backend: it times GPU kernels, and this run "
                            "has the %s backend (%s)\n",
                    gs_backend_name(gs_context_backend(ctx)), gs_build_info());
        code = CLI_EXIT_FAIL;
    }
    if (code == CLI_EXIT_OK) code = run_ladder(ctx, &a, rank);
    gs_context_destroy(ctx);
    return code;
}
