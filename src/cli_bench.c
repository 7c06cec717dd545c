/*
 * cli_bench.c - `gpuscan bench`: a sweep of sizes x types x ops of the
 * collective gs_reduce and gs_scan in the manner of nccl-tests, each case
 * timed and checked by the library (gs_bench_ceilings, gs_bench_run).
 *
 * Every number of a row is formatted once; the table, the CSV and the JSON
 * print those same strings, so a script reads exactly what a person reads.
 * Rank 0 prints and writes; every rank runs every case and leaves with rank
 * 0's exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What a field prints when there is no number (no check ran). */
#define CLI_NO_VALUE "-"

typedef struct cli_bench_args {
    int64_t min_n, max_n;
    int64_t factor, step;           /* sizes grow by *factor, or by +step when step > 0 */
    int64_t iters, warmup, check_iters;
    gs_type types[GS_TYPE_COUNT];
    int n_types;
    gs_op ops[GS_OP_COUNT];
    int n_ops;
    int reduce, scan;               /* which collectives */
    gs_scan_kind kind;
    int resident, streamed;         /* which memory modes */
    int extra_columns;              /* -I: min, max, p99 */
    gs_config cfg;
    uint64_t seed;
    const char *json_path, *csv_path;
    double min_bw;                  /* GB/s per rank; < 0: no bound */
    int help;
} cli_bench_args;

/* One row, its numbers as printed. */
typedef struct cli_bench_row {
    gs_bench_case c;
    gs_bench_result r;
    char time_us[24], min_us[24], max_us[24], p99_us[24];
    char gbps_rank[24], gbps_total[24], ceiling_pct[24], wrong[24];
} cli_bench_row;

typedef struct cli_bench_report {
    const cli_bench_args *a;
    int ranks;
    gs_backend backend;
    const gs_rank_info *info;
    const gs_bench_ceiling *ceilings;
    gs_bench_ceiling slowest;       /* the least of each ceiling over the ranks */
    char copy_gbps[24], h2d_gbps[24], duplex_gbps[24];
    cli_bench_row *rows;
    int n_rows;
    double avg_gbps_rank;
    char avg[24];
    int64_t wrong_total;
    int checked;                    /* rows whose results were checked */
    const char *verdict;            /* "ok", "wrong", "below min-bw", "error" */
    const char *error;              /* the library's message when verdict is "error" */
} cli_bench_report;

static void bench_usage(FILE *out)
{
    fputs(
"usage: gpuscan bench [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP]\n"
"                     [-c CHECK_ITERS] [-t TYPE|all] [-o OP|all] [--reduce] [--scan]\n"
"                     [--exclusive] [--resident] [--stream] [-I] [--backend B] [--device N]\n"
"                     [--seed S] [--json FILE] [--csv FILE] [--min-bw GBPS]\n"
"\n"
"Times the collective gs_reduce and gs_scan over a sweep of sizes, as nccl-tests\n"
"does: no barrier between runs, each run's time the slowest rank's, the median\n"
"reported. Each case gets freshly generated data and is checked against an\n"
"independent serial reference.\n"
"\n"
"sizes (GLOBAL element counts, split across the ranks as `gpuscan reduce -g` splits them;\n"
"suffixes k M G T are powers of 10, Ki Mi Gi Ti powers of 2):\n"
"  -b, --minsize N      smallest count (default 32Mi)\n"
"  -e, --maxsize N      largest count (default: MIN)\n"
"  -f, --stepfactor F   multiply the count by F from one size to the next (default 2)\n"
"  -i, --stepsize N     add N from one size to the next instead\n"
"runs:\n"
"  -n, --iters N        timed runs per case (default 20)\n"
"  -w, --warmup_iters N untimed runs first (default 5)\n"
"  -c, --check N        further runs checked element by element (default 1; 0: none)\n"
"cases:\n"
"  -t, --type T         i32 i64 u32 u64 f32 f64 or all (default f32)\n"
"  -o, --op OP          sum prod min max or all (default sum)\n"
"      --reduce         time gs_reduce    } both when neither is given\n"
"      --scan           time gs_scan      }\n"
"      --exclusive      exclusive scans (default inclusive)\n"
"      --resident       data on the backend: GPU memory, or host memory on the CPU backend (default)\n"
"      --stream         data in pinned host memory, streamed through the GPU; with --resident, both\n"
"execution:\n"
"      --backend B      auto cuda cpu (default auto)\n"
"      --device N       GPU ordinal (default: the only GPU visible, else node-local rank modulo count)\n"
"      --seed S         generator seed (default 1)\n"
"output:\n"
"  -I, --intervals      also print the min, max and p99 times\n"
"      --json FILE      the header, every row and the footer as one JSON object\n"
"      --csv FILE       one line per row\n"
"      --min-bw GBPS    fail when the average GB/s per rank is below GBPS\n"
"\n"
"Columns: time is the median per run in microseconds; GB/s count bytes read plus\n"
"written (n x input size, plus n x output size for scans) per rank and over all\n"
"ranks; %ceil is GB/s per rank against the slowest rank's measured ceiling\n"
"(device copy for resident data; for streamed data pinned host-to-device\n"
"for reductions, host-to-device and device-to-host at once for scans);\n"
"#wrong counts the wrong elements of the worst checked run (1 for a wrong\n"
"reduction). Exit status: 0 when all is right, 1 when anything is wrong, a run\n"
"fails or the average is below --min-bw, 2 for a usage error.\n",
        out);
}

/* ---- options ----------------------------------------------------------------- */

/* A count option within [least, most]. */
static int parse_bounded(const char *text, int64_t least, int64_t most, int64_t *value)
{
    return cli_parse_count(text, value) == 0 && *value >= least && *value <= most ? 0 : -1;
}

static int parse_bench(int argc, char **argv, cli_bench_args *a, char *err, size_t errlen)
{
    enum { OPT_REDUCE = 256, OPT_SCAN, OPT_EXCLUSIVE, OPT_RESIDENT, OPT_STREAM, OPT_BACKEND,
           OPT_DEVICE, OPT_SEED, OPT_JSON, OPT_CSV, OPT_MIN_BW };
    static const struct option options[] = {
        {"minsize", required_argument, 0, 'b'},    {"maxsize", required_argument, 0, 'e'},
        {"stepfactor", required_argument, 0, 'f'}, {"stepsize", required_argument, 0, 'i'},
        {"iters", required_argument, 0, 'n'},      {"warmup_iters", required_argument, 0, 'w'},
        {"check", required_argument, 0, 'c'},      {"type", required_argument, 0, 't'},
        {"op", required_argument, 0, 'o'},         {"intervals", no_argument, 0, 'I'},
        {"reduce", no_argument, 0, OPT_REDUCE},    {"scan", no_argument, 0, OPT_SCAN},
        {"exclusive", no_argument, 0, OPT_EXCLUSIVE}, {"resident", no_argument, 0, OPT_RESIDENT},
        {"stream", no_argument, 0, OPT_STREAM},    {"backend", required_argument, 0, OPT_BACKEND},
        {"device", required_argument, 0, OPT_DEVICE}, {"seed", required_argument, 0, OPT_SEED},
        {"json", required_argument, 0, OPT_JSON},  {"csv", required_argument, 0, OPT_CSV},
        {"min-bw", required_argument, 0, OPT_MIN_BW}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    static const gs_config cfg = GS_CONFIG_INIT;
    memset(a, 0, sizeof *a);
    a->cfg = cfg;
    a->min_n = (int64_t)32 << 20;
    a->factor = 2;
    a->iters = 20;
    a->warmup = 5;
    a->check_iters = 1;
    a->types[a->n_types++] = GS_F32;
    a->ops[a->n_ops++] = GS_SUM;
    a->kind = GS_INCLUSIVE;
    a->seed = 1;
    a->min_bw = -1;
    int max_given = 0, factor_given = 0;

    optind = 1;   /* argv[0] is "bench" */
    opterr = 0;
    int c;
    int64_t count;
    while ((c = getopt_long(argc, argv, ":b:e:f:i:n:w:c:t:o:Ih", options, NULL)) != -1) {
        switch (c) {
        case 'b':
            if (parse_bounded(optarg, 1, INT64_MAX / 16, &a->min_n) != 0)
                return cli_usage_error(err, errlen, "-b %s: not a positive element count (digits with an optional k M G T Ki Mi Gi Ti)", optarg);
            break;
        case 'e':
            if (parse_bounded(optarg, 1, INT64_MAX / 16, &a->max_n) != 0)
                return cli_usage_error(err, errlen, "-e %s: not a positive element count (digits with an optional k M G T Ki Mi Gi Ti)", optarg);
            max_given = 1;
            break;
        case 'f':
            if (parse_bounded(optarg, 2, 1 << 20, &a->factor) != 0)
                return cli_usage_error(err, errlen, "-f %s: not a whole factor of at least 2", optarg);
            factor_given = 1;
            break;
        case 'i':
            if (parse_bounded(optarg, 1, INT64_MAX / 16, &a->step) != 0)
                return cli_usage_error(err, errlen, "-i %s: not a positive element count", optarg);
            break;
        case 'n':
            if (parse_bounded(optarg, 1, 1 << 24, &a->iters) != 0)
                return cli_usage_error(err, errlen, "-n %s: not a number of runs from 1 to 16Mi", optarg);
            break;
        case 'w':
            if (parse_bounded(optarg, 0, 1 << 24, &a->warmup) != 0)
                return cli_usage_error(err, errlen, "-w %s: not a number of runs from 0 to 16Mi", optarg);
            break;
        case 'c':
            if (parse_bounded(optarg, 0, 1 << 24, &a->check_iters) != 0)
                return cli_usage_error(err, errlen, "-c %s: not a number of runs from 0 to 16Mi", optarg);
            break;
        case 't':
            a->n_types = 0;
            if (strcmp(optarg, "all") == 0)
                for (int t = 0; t < GS_TYPE_COUNT; t++) a->types[a->n_types++] = (gs_type)t;
            else if (gs_type_from_name(optarg, &a->types[a->n_types++]) != GS_OK)
                return cli_usage_error(err, errlen, "-t %s: unknown type (i32 i64 u32 u64 f32 f64 all)", optarg);
            break;
        case 'o':
            a->n_ops = 0;
            if (strcmp(optarg, "all") == 0)
                for (int op = 0; op < GS_OP_COUNT; op++) a->ops[a->n_ops++] = (gs_op)op;
            else if (gs_op_from_name(optarg, &a->ops[a->n_ops++]) != GS_OK)
                return cli_usage_error(err, errlen, "-o %s: unknown operation (sum prod min max all)", optarg);
            break;
        case 'I': a->extra_columns = 1; break;
        case OPT_REDUCE: a->reduce = 1; break;
        case OPT_SCAN: a->scan = 1; break;
        case OPT_EXCLUSIVE: a->kind = GS_EXCLUSIVE; break;
        case OPT_RESIDENT: a->resident = 1; break;
        case OPT_STREAM: a->streamed = 1; break;
        case OPT_BACKEND:
            if (gs_backend_from_name(optarg, &a->cfg.backend) != GS_OK)
                return cli_usage_error(err, errlen, "--backend %s: unknown backend (auto cuda cpu)", optarg);
            break;
        case OPT_DEVICE:
            if (parse_bounded(optarg, 0, 1 << 20, &count) != 0)
                return cli_usage_error(err, errlen, "--device %s: not a GPU ordinal", optarg);
            a->cfg.device = (int)count;
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            a->seed = strtoull(optarg, &end, 0);
            if (!*optarg || *end || errno || *optarg == '-')
                return cli_usage_error(err, errlen, "--seed %s: not an unsigned integer", optarg);
            break;
        }
        case OPT_JSON: a->json_path = optarg; break;
        case OPT_CSV: a->csv_path = optarg; break;
        case OPT_MIN_BW: {
            char *end;
            errno = 0;
            a->min_bw = strtod(optarg, &end);
            if (!*optarg || *end || errno || !(a->min_bw >= 0) || isinf(a->min_bw))
                return cli_usage_error(err, errlen, "--min-bw %s: not a bandwidth in GB/s (a number >= 0)", optarg);
            break;
        }
        case 'h': a->help = 1; return CLI_EXIT_OK;
        case ':': return cli_usage_error(err, errlen, "bench: %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(err, errlen, "bench: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(err, errlen, "bench: unexpected argument '%s'", argv[optind]);
    if (!max_given) a->max_n = a->min_n;
    if (a->max_n < a->min_n) return cli_usage_error(err, errlen, "%s", "bench: -e MAX is smaller than -b MIN");
    if (a->step && factor_given) return cli_usage_error(err, errlen, "%s", "bench: give -f FACTOR or -i STEP, not both");
    if (!a->reduce && !a->scan) a->reduce = a->scan = 1;
    if (!a->resident && !a->streamed) a->resident = 1;
    return CLI_EXIT_OK;
}

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
    int64_t cases = sizes * (a->reduce + a->scan) * (a->resident + a->streamed) * a->n_types * a->n_ops;
    return cases > (1 << 24) ? -1 : (int)cases;
}

/* ---- rows -------------------------------------------------------------------- */

static const char *kind_name(const gs_bench_case *c)
{
    return !c->scan ? "reduce" : c->kind == GS_EXCLUSIVE ? "exscan" : "scan";
}

/* The ceiling a case is held against: streamed data on the GPU crosses the
 * host link (a scan's both ways at once), everything else the memory of its
 * backend. */
static double ceiling_of(const cli_bench_report *rep, const gs_bench_case *c)
{
    if (rep->backend == GS_BACKEND_CUDA && c->mode == GS_BENCH_STREAMED)
        return c->scan ? rep->slowest.duplex_gbps : rep->slowest.h2d_gbps;
    return rep->slowest.copy_gbps;
}

static void format_row(const cli_bench_report *rep, cli_bench_row *row)
{
    const gs_bench_result *r = &row->r;
    snprintf(row->time_us, sizeof row->time_us, "%.2f", r->median * 1e6);
    snprintf(row->min_us, sizeof row->min_us, "%.2f", r->min * 1e6);
    snprintf(row->max_us, sizeof row->max_us, "%.2f", r->max * 1e6);
    snprintf(row->p99_us, sizeof row->p99_us, "%.2f", r->p99 * 1e6);
    snprintf(row->gbps_rank, sizeof row->gbps_rank, "%.3f", r->gbps_rank);
    snprintf(row->gbps_total, sizeof row->gbps_total, "%.3f", r->gbps_total);
    double ceiling = ceiling_of(rep, &row->c);
    if (ceiling > 0) snprintf(row->ceiling_pct, sizeof row->ceiling_pct, "%.1f", 100.0 * r->gbps_rank / ceiling);
    else snprintf(row->ceiling_pct, sizeof row->ceiling_pct, CLI_NO_VALUE);
    if (r->wrong >= 0) snprintf(row->wrong, sizeof row->wrong, "%lld", (long long)r->wrong);
    else snprintf(row->wrong, sizeof row->wrong, CLI_NO_VALUE);
}

/* ---- the table --------------------------------------------------------------- */

static void print_header(FILE *out, const cli_bench_report *rep)
{
    const cli_bench_args *a = rep->a;
    fprintf(out, "# gpuscan bench: %d rank(s), backend %s; %s\n", rep->ranks,
            gs_backend_name(rep->backend), gs_build_info());
    fprintf(out, "# counts are global elements split across the ranks; %lld timed runs after %lld warm-up, %lld checked; seed %llu\n",
            (long long)a->iters, (long long)a->warmup, (long long)a->check_iters,
            (unsigned long long)a->seed);
    for (int i = 0; i < rep->ranks; i++) {
        const gs_rank_info *r = &rep->info[i];
        fprintf(out, "#  rank %3d  host %s  local rank %d  ", r->rank, r->host, r->local_rank);
        if (r->device >= 0)
            fprintf(out, "GPU %d %s (PCI %s)  copy %.1f GB/s  h2d %.1f GB/s  h2d+d2h %.1f GB/s\n", r->device,
                    r->device_name, r->pci_bus_id, rep->ceilings[i].copy_gbps, rep->ceilings[i].h2d_gbps,
                    rep->ceilings[i].duplex_gbps);
        else
            fprintf(out, "cpu backend, %d thread(s)  copy %.1f GB/s\n", r->cpu_threads, rep->ceilings[i].copy_gbps);
    }
    if (rep->backend == GS_BACKEND_CUDA)
        fprintf(out, "# ceilings (slowest rank): resident data %s GB/s (device copy); streamed data: reductions %s GB/s\n"
                     "#   (pinned host to device), scans %s GB/s (pinned host to device and back at once)\n",
                rep->copy_gbps, rep->h2d_gbps, rep->duplex_gbps);
    else
        fprintf(out, "# ceiling (slowest rank): %s GB/s (host memory copy) for resident and streamed data\n",
                rep->copy_gbps);
    fprintf(out, "#\n# %12s %14s %5s %5s %7s %9s %11s", "elements", "bytes", "type", "op", "kind", "mode", "time(us)");
    if (a->extra_columns) fprintf(out, " %11s %11s %11s", "min(us)", "max(us)", "p99(us)");
    fprintf(out, " %11s %11s %7s %7s\n", "GB/s/rank", "GB/s", "%ceil", "#wrong");
    fflush(out);
}

static void print_row(FILE *out, const cli_bench_report *rep, const cli_bench_row *row)
{
    fprintf(out, "  %12lld %14llu %5s %5s %7s %9s %11s", (long long)row->c.n,
            (unsigned long long)row->r.bytes, gs_type_name(row->c.type), gs_op_name(row->c.op),
            kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us);
    if (rep->a->extra_columns) fprintf(out, " %11s %11s %11s", row->min_us, row->max_us, row->p99_us);
    fprintf(out, " %11s %11s %7s %7s\n", row->gbps_rank, row->gbps_total, row->ceiling_pct, row->wrong);
    fflush(out);
}

static void print_footer(FILE *out, const cli_bench_report *rep)
{
    fprintf(out, "# average bandwidth per rank: %s GB/s over %d row(s)", rep->avg, rep->n_rows);
    if (rep->a->min_bw >= 0) fprintf(out, " (--min-bw %g)", rep->a->min_bw);
    fprintf(out, "\n# total #wrong: ");
    if (rep->checked) fprintf(out, "%lld in %d checked row(s)\n", (long long)rep->wrong_total, rep->checked);
    else fprintf(out, "%s (nothing checked: -c 0)\n", CLI_NO_VALUE);
    fprintf(out, "# result: %s\n", rep->verdict);
    fflush(out);
}

/* ---- CSV and JSON -------------------------------------------------------------- */

static const char *csv_header =
    "backend,ranks,elements,bytes,type,op,kind,mode,time_us,min_us,max_us,p99_us,"
    "gbps_rank,gbps_total,ceiling_pct,wrong\n";

/* A printed field in CSV (empty) or JSON (null) where it has no number. */
static const char *csv_field(const char *s) { return strcmp(s, CLI_NO_VALUE) ? s : ""; }
static const char *json_field(const char *s) { return strcmp(s, CLI_NO_VALUE) ? s : "null"; }

static void write_csv(FILE *f, const void *data)
{
    const cli_bench_report *rep = data;
    fputs(csv_header, f);
    for (int i = 0; i < rep->n_rows; i++) {
        const cli_bench_row *row = &rep->rows[i];
        fprintf(f, "%s,%d,%lld,%llu,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", gs_backend_name(rep->backend),
                rep->ranks, (long long)row->c.n, (unsigned long long)row->r.bytes, gs_type_name(row->c.type),
                gs_op_name(row->c.op), kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us,
                row->min_us, row->max_us, row->p99_us, row->gbps_rank, row->gbps_total,
                csv_field(row->ceiling_pct), csv_field(row->wrong));
    }
}

static void write_json(FILE *f, const void *data)
{
    const cli_bench_report *rep = data;
    const cli_bench_args *a = rep->a;
    fprintf(f, "{\"command\": \"bench\", \"version\": \"%s\", \"build\": ", GS_VERSION_STRING);
    cli_json_string(f, gs_build_info());
    fprintf(f, ", \"backend\": \"%s\", \"ranks\": %d, \"iters\": %lld, \"warmup\": %lld, \"check_iters\": %lld, \"seed\": %llu,\n",
            gs_backend_name(rep->backend), rep->ranks, (long long)a->iters, (long long)a->warmup,
            (long long)a->check_iters, (unsigned long long)a->seed);
    fprintf(f, " \"devices\": [");
    for (int i = 0; i < rep->ranks; i++) {
        const gs_rank_info *r = &rep->info[i];
        fprintf(f, "%s\n  {\"rank\": %d, \"host\": ", i ? "," : "", r->rank);
        cli_json_string(f, r->host);
        fprintf(f, ", \"local_rank\": %d, \"device\": %d, \"name\": ", r->local_rank, r->device);
        cli_json_string(f, r->device >= 0 ? r->device_name : "cpu");
        fprintf(f, ", \"pci_bus_id\": ");
        cli_json_string(f, r->pci_bus_id);
        fprintf(f, ", \"copy_gbps\": %.6g, \"h2d_gbps\": %.6g, \"duplex_gbps\": %.6g}", rep->ceilings[i].copy_gbps,
                rep->ceilings[i].h2d_gbps, rep->ceilings[i].duplex_gbps);
    }
    fprintf(f, "],\n \"ceiling\": {\"copy_gbps\": %s, \"h2d_gbps\": %s, \"duplex_gbps\": %s},\n \"rows\": [",
            rep->copy_gbps, json_field(rep->h2d_gbps), json_field(rep->duplex_gbps));
    for (int i = 0; i < rep->n_rows; i++) {
        const cli_bench_row *row = &rep->rows[i];
        fprintf(f, "%s\n  {\"elements\": %lld, \"bytes\": %llu, \"type\": \"%s\", \"op\": \"%s\", \"kind\": \"%s\", "
                   "\"mode\": \"%s\", \"time_us\": %s, \"min_us\": %s, \"max_us\": %s, \"p99_us\": %s, "
                   "\"gbps_rank\": %s, \"gbps_total\": %s, \"ceiling_pct\": %s, \"wrong\": %s}",
                i ? "," : "", (long long)row->c.n, (unsigned long long)row->r.bytes, gs_type_name(row->c.type),
                gs_op_name(row->c.op), kind_name(&row->c), gs_bench_mode_name(row->c.mode), row->time_us,
                row->min_us, row->max_us, row->p99_us, row->gbps_rank, row->gbps_total,
                json_field(row->ceiling_pct), json_field(row->wrong));
    }
    fprintf(f, "],\n \"avg_gbps_rank\": %s, \"wrong_total\": ", rep->avg);
    if (rep->checked) fprintf(f, "%lld", (long long)rep->wrong_total); else fputs("null", f);
    fprintf(f, ", \"min_bw\": ");
    if (a->min_bw >= 0) fprintf(f, "%.17g", a->min_bw); else fputs("null", f);
    fprintf(f, ", \"result\": \"%s\", \"error\": ", rep->verdict);
    cli_json_string(f, rep->error);
    fputs("}\n", f);
}

/* ---- the sweep ------------------------------------------------------------------ */

static void fill_ceilings(cli_bench_report *rep)
{
    rep->slowest = rep->ceilings[0];
    for (int i = 1; i < rep->ranks; i++) {
        rep->slowest.copy_gbps = fmin(rep->slowest.copy_gbps, rep->ceilings[i].copy_gbps);
        rep->slowest.h2d_gbps = fmin(rep->slowest.h2d_gbps, rep->ceilings[i].h2d_gbps);
        rep->slowest.duplex_gbps = fmin(rep->slowest.duplex_gbps, rep->ceilings[i].duplex_gbps);
    }
    snprintf(rep->copy_gbps, sizeof rep->copy_gbps, "%.1f", rep->slowest.copy_gbps);
    const int link = rep->backend == GS_BACKEND_CUDA;
    snprintf(rep->h2d_gbps, sizeof rep->h2d_gbps, link ? "%.1f" : CLI_NO_VALUE, rep->slowest.h2d_gbps);
    snprintf(rep->duplex_gbps, sizeof rep->duplex_gbps, link ? "%.1f" : CLI_NO_VALUE, rep->slowest.duplex_gbps);
}

/* Run every case in order: mode, collective, type, op, then size, so that
 * the rows of one curve follow each other. Stops at the first failure (the
 * same on every rank). */
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
                        cli_bench_row *row = &rep->rows[rep->n_rows];
                        gs_bench_case c = {scan, a->types[t], a->ops[o], a->kind, (gs_bench_mode)mode, n,
                                           (int)a->warmup, (int)a->iters, (int)a->check_iters, a->seed,
                                           plant_wrong};
                        row->c = c;
                        gs_status st = gs_bench_run(ctx, &row->c, &row->r);
                        if (st != GS_OK) return st;
                        format_row(rep, row);
                        rep->n_rows++;
                        if (rank == 0) print_row(stdout, rep, row);
                    }
        }
    }
    return GS_OK;
}

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
    snprintf(rep->avg, sizeof rep->avg, "%.3f", rep->avg_gbps_rank);
    if (st != GS_OK) {
        rep->verdict = "error";
        rep->error = error;
    } else if (rep->wrong_total > 0) {
        rep->verdict = "wrong";
    } else if (rep->a->min_bw >= 0 && rep->avg_gbps_rank < rep->a->min_bw) {
        rep->verdict = "below min-bw";
    } else {
        rep->verdict = "ok";
    }
}

/* Rank 0: the footer, the files and the exit status. */
static int conclude(const cli_bench_report *rep)
{
    const cli_bench_args *a = rep->a;
    int code = CLI_EXIT_OK;
    print_footer(stdout, rep);
    if (rep->error) {
        fprintf(stderr, "gpuscan: error: %s\n", rep->error);
        code = CLI_EXIT_FAIL;
    } else if (rep->wrong_total > 0) {
        fprintf(stderr, "gpuscan: error: bench found %lld wrong result(s)\n", (long long)rep->wrong_total);
        code = CLI_EXIT_FAIL;
    } else if (strcmp(rep->verdict, "below min-bw") == 0) {
        fprintf(stderr, "gpuscan: error: average bandwidth %s GB/s per rank is below --min-bw %g\n", rep->avg, a->min_bw);
        code = CLI_EXIT_FAIL;
    }
    const struct { const char *path, *what; cli_write_fn write; } files[] = {
        {a->csv_path, "CSV", write_csv}, {a->json_path, "JSON", write_json},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char err[512];
        if (files[i].path &&
            cli_write_atomically(files[i].path, files[i].what, files[i].write, rep, err, sizeof err) != 0) {
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
            fill_ceilings(&rep);
            if (rank == 0) print_header(stdout, &rep);
            st = sweep(ctx, &rep, rank);
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

int cli_bench_main(int argc, char **argv)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cli_bench_args a;
    char err[256];
    int code = parse_bench(argc, argv, &a, err, sizeof err);
    if (code != CLI_EXIT_OK) {
        if (rank == 0) fprintf(stderr, "gpuscan: error: %s\n(gpuscan bench --help lists the options)\n", err);
        return code;
    }
    if (a.help) {
        if (rank == 0) bench_usage(stdout);
        return CLI_EXIT_OK;
    }
    gs_context *ctx = NULL;
    code = cli_create_context(&a.cfg, rank, &ctx);
    if (code == CLI_EXIT_OK) code = run_bench(ctx, &a, rank);
    gs_context_destroy(ctx);
    return code;
}
