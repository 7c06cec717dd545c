/* cli_bench_parse.c - the options of `gpuscan bench` and its usage text. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_bench.h"

void cli_bench_usage(FILE *out)
{
    fputs(
"usage: gpuscan bench [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP]\n"
"                     [-c CHECK_ITERS] [-t TYPE|all] [-o OP|all] [--reduce] [--scan]\n"
"                     [--exclusive] [--resident] [--stream] [-I] [--backend B] [--device N]\n"
"                     [--exact] [--seed S] [--json FILE] [--csv FILE] [--min-bw GBPS]\n"
"                     [--read FILE]...\n"
"\n"
"Times the collective gs_reduce and gs_scan over a sweep of sizes, as nccl-tests\n"
"does: no barrier between runs, each run's time the slowest rank's, the median\n"
"reported. Each case gets freshly generated data and is checked against an\n"
"independent serial reference.\n"
"\n"
"sizes (GLOBAL element counts, not bytes: nccl-tests' -b 1Gi is -b 256Mi of f32\n"
"here; split across the ranks as `gpuscan reduce -g` splits them; suffixes k M G T\n"
"are powers of 10, Ki Mi Gi Ti powers of 2):\n"
"  -b, --minsize N      smallest count (default 32Mi)\n"
"  -e, --maxsize N      largest count (default: MIN)\n"
"  -f, --stepfactor F   multiply the count by F from one size to the next (default 2)\n"
"  -i, --stepsize N     add N from one size to the next instead\n"
"runs:\n"
"  -n, --iters N        timed runs per case (default 20)\n"
"  -w, --warmup_iters N untimed runs first (default 5)\n"
"  -c, --check N        further runs checked element by element (default 1; 0: none)\n"
"cases:\n"
"  -t, --type T         i32 i64 u32 u64 f32 f64 (or NumPy's names) or all (default f32)\n"
"  -o, --op OP          sum prod min max or all (default sum)\n"
"      --reduce         time gs_reduce    } both when neither is given\n"
"      --scan           time gs_scan      }\n"
"      --exclusive      exclusive scans (default inclusive)\n"
"      --resident       data on the backend: GPU memory, or host memory on the CPU backend (default)\n"
"      --stream         data in pinned host memory, streamed through the GPU; with --resident, both\n"
"      --exact          after each f32/f64 sum row, the same case on the exact path (--exact of\n"
"                       reduce and scan), checked bit for bit; its rows say yes under exact\n"
"execution:\n"
"      --backend B      auto cuda cpu (default auto)\n"
"      --device N       GPU ordinal (default: the only GPU visible, else node-local rank modulo count)\n"
"      --seed S         generator seed, decimal or 0x hex (default 1)\n"
"output:\n"
"  -I, --intervals      also print the min, max and p99 times\n"
"      --json FILE      the header, every row and the footer as one JSON object\n"
"      --csv FILE       one line per row (FILE - for either: stdout, then with no table)\n"
"      --min-bw GBPS    fail when the average GB/s per rank is below GBPS\n"
"files:\n"
"      --read FILE      after the sweep, FILE's read bandwidth: -n reads of the whole file\n"
"                       (.npy or FILE.h5[:/DATASET]) as `gpuscan reduce -i` reads it, each\n"
"                       rank its shard; up to 8, e.g. the same data as .npy and as .h5\n"
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

/* A count option within [least, most]. */
static int parse_bounded(const char *text, int64_t least, int64_t most, int64_t *value)
{
    return cli_parse_count(text, value) == 0 && *value >= least && *value <= most ? 0 : -1;
}

int cli_bench_parse(int argc, char **argv, cli_bench_args *a, char *err, size_t errlen)
{
    enum { OPT_REDUCE = 256, OPT_SCAN, OPT_EXCLUSIVE, OPT_RESIDENT, OPT_STREAM, OPT_BACKEND,
           OPT_DEVICE, OPT_SEED, OPT_JSON, OPT_CSV, OPT_MIN_BW, OPT_READ, OPT_EXACT };
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
        {"read", required_argument, 0, OPT_READ},  {"exact", no_argument, 0, OPT_EXACT},
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
            else if (cli_parse_type(optarg, &a->types[a->n_types++]) != 0)
                return cli_usage_error(err, errlen, "-t %s: unknown type (" CLI_TYPE_NAMES ", or all)", optarg);
            break;
        case 'o':
            a->n_ops = 0;
            if (strcmp(optarg, "all") == 0)
                for (int op = 0; op < GS_OP_COUNT; op++) a->ops[a->n_ops++] = (gs_op)op;
            else if (gs_op_from_name(optarg, &a->ops[a->n_ops++]) != GS_OK)
                return cli_usage_error(err, errlen, "-o %s: unknown operation (sum prod min max all)", optarg);
            break;
        case 'I': a->extra_columns = 1; break;
        case OPT_EXACT: a->exact = 1; break;
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
        case OPT_SEED:
            if (cli_parse_seed(optarg, &a->seed, err, errlen) != 0) return CLI_EXIT_USAGE;
            break;
        case OPT_JSON:
            if (!*optarg) return cli_usage_error(err, errlen, "%s", "bench: --json '': an empty report path");
            a->json_path = optarg;
            break;
        case OPT_CSV:
            if (!*optarg) return cli_usage_error(err, errlen, "%s", "bench: --csv '': an empty report path");
            a->csv_path = optarg;
            break;
        case OPT_MIN_BW: {
            char *end;
            errno = 0;
            a->min_bw = strtod(optarg, &end);
            if (!*optarg || *end || errno || !(a->min_bw >= 0) || isinf(a->min_bw))
                return cli_usage_error(err, errlen, "--min-bw %s: not a bandwidth in GB/s (a number >= 0)", optarg);
            break;
        }
        case OPT_READ:
            if (!*optarg) return cli_usage_error(err, errlen, "%s", "bench: --read '': an empty file name");
            if (a->n_reads == CLI_BENCH_MAX_READS)
                return cli_usage_error(err, errlen, "bench: --read %s: at most 8 files", optarg);
            a->reads[a->n_reads++] = optarg;
            break;
        case 'h': a->help = 1; return CLI_EXIT_OK;
        case ':': return cli_usage_error(err, errlen, "bench: %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(err, errlen, "bench: unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(err, errlen, "bench: unexpected argument '%s'", argv[optind]);
    /* one report must not replace the other */
    if (a->json_path && a->csv_path && cli_same_file(a->json_path, a->csv_path))
        return cli_usage_error(err, errlen, "bench: --json and --csv name the same file %s", a->csv_path);
    /* nor the data it reads */
    for (int i = 0; i < a->n_reads; i++) {
        if (a->json_path && strcmp(a->json_path, "-") != 0 && cli_same_data_file(a->json_path, a->reads[i]))
            return cli_usage_error(err, errlen, "bench: --json %s: the same file as a --read file", a->json_path);
        if (a->csv_path && strcmp(a->csv_path, "-") != 0 && cli_same_data_file(a->csv_path, a->reads[i]))
            return cli_usage_error(err, errlen, "bench: --csv %s: the same file as a --read file", a->csv_path);
    }
    if (!max_given) a->max_n = a->min_n;
    if (a->max_n < a->min_n) return cli_usage_error(err, errlen, "%s", "bench: -e MAX is smaller than -b MIN");
    if (a->step && factor_given) return cli_usage_error(err, errlen, "%s", "bench: give -f FACTOR or -i STEP, not both");
    if (a->kind == GS_EXCLUSIVE && a->reduce && !a->scan)
        return cli_usage_error(err, errlen, "%s", "bench: --exclusive is for scans, not with --reduce alone");
    if (!a->reduce && !a->scan) a->reduce = a->scan = 1;
    if (!a->resident && !a->streamed) a->resident = 1;
    if (a->exact && cli_bench_exact_cases(a) == 0)
        return cli_usage_error(err, errlen, "%s", "bench --exact: no f32 or f64 sum among the cases "
                               "(exact rows are f32/f64 sums: -t f32, f64 or all with -o sum or all)");
    return CLI_EXIT_OK;
}

int cli_bench_exact_row(const cli_bench_args *a, gs_type type, gs_op op)
{
    return a->exact && (type == GS_F32 || type == GS_F64) && op == GS_SUM;
}

int cli_bench_exact_cases(const cli_bench_args *a)
{
    int count = 0;
    for (int t = 0; t < a->n_types; t++)
        for (int o = 0; o < a->n_ops; o++) count += cli_bench_exact_row(a, a->types[t], a->ops[o]);
    return count;
}
