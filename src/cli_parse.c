/* cli_parse.c - the options of reduce, scan and info, and the parsers every
 * command shares (counts, --algo, usage errors). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gs_h5.h"

void cli_print_options(FILE *out)
{
    fputs(
"input:\n"
"  -i, --input FILE     .npy (v1-3, little-endian i4 i8 u4 u8 f4 f8) or raw binary (needs -t)\n"
"                       or FILE.h5[:/DATASET] (HDF5 builds; without :/DATASET, the file's only one)\n"
"  -g, --generate N     N generated elements, a function of (seed, index)\n"
"  -t, --type TYPE      i32 i64 u32 u64 f32 f64, or NumPy's names (float32, f4, <f4 ...)\n"
"                       (default f32 for -g, the header's for .npy)\n"
"      --seed S         generator seed, decimal or 0x hex (default 1)\n"
"operation:\n"
"  -o, --op OP          sum prod min max (default sum)\n"
"      --exclusive      exclusive scan (default inclusive)\n"
"  -O, --output OUT     scan output: .npy when OUT ends in .npy, OUT.h5[:/DATASET] an HDF5\n"
"                       dataset (default /data) added to the file, else raw\n"
"execution:\n"
"      --backend B      auto cuda cpu (default auto: cuda when every rank has a GPU)\n"
"      --device N       GPU ordinal (default: node-local rank modulo the GPUs visible)\n"
"      --chunk N        elements per chunk, the unit of reads, copies, kernels and writes\n"
"                       (default: 32 MiB of input, less for small shards or little memory)\n"
"      --depth K        chunks in flight at once, 1 to 16 (default 4)\n"
"      --mem-cap BYTES  at most this much backend memory (GPU memory, or host memory on\n"
"                       the CPU backend) for a run's buffers (default: 85% of the free\n"
"                       GPU memory, half the host's)\n"
"      --algo NAME      the kernels (CUDA backend): default, cub; reductions: divergent\n"
"                       strided sequential first-add unroll-last-warp unroll-all grid-stride;\n"
"                       scans: hillis-steele blelloch multi-kernel reduce-then-scan\n"
"                       (gpuscan ladder times them side by side)\n"
"      --stream         stream the shard through the GPU in chunks, whatever its size\n"
"      --resident       hold the whole shard on the GPU (an error if it does not fit);\n"
"                       default: resident for scans on several ranks when it fits\n"
"output:\n"
"      --exact          f32/f64 sums and prefix sums exact, each result rounded once: the same\n"
"                       bits on any ranks, chunks, backend (docs/SEMANTICS.md); not with\n"
"                       float prod; no change for integer sums, min and max\n"
"      --verify         check every element against an independent reference; exit 1 if wrong\n"
"                       (with --exact: bit-equality with an exact reference)\n"
"      --json FILE|-    write the result as one JSON object\n"
"  -q, --quiet          no human summary, no progress bar\n"
"      --progress       rank 0's progress bar on stderr even where it is no terminal\n"
"                       (under mpirun): one line per update there (GPUSCAN_PROGRESS=1)\n"
"      --no-progress    no progress bar (GPUSCAN_PROGRESS=0); default: a bar only\n"
"                       when stderr is a terminal\n"
"\n"
"Each option is for the commands that use it: reduce and scan take all of them\n"
"but -O and --exclusive (scan only); info takes --backend and --device.\n"
"Sizes take suffixes k M G T (powers of 10) and Ki Mi Gi Ti (powers of 2).\n"
"Integer sums are exact 64-bit (i32 -> i64, u32 -> u64) and overflow is an error;\n"
"float sums accumulate in fp64. Exit status: 0 success, 1 failure, 2 usage error.\n",
        out);
}

int cli_parse_count(const char *text, int64_t *value)
{
    static const struct { const char *suffix; double scale; } units[] = {
        {"", 1}, {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
    };
    if (!text || *text < '0' || *text > '9') return -1;   /* no sign, no blank: strtoull would take them */
    errno = 0;
    char *end;
    unsigned long long digits = strtoull(text, &end, 10);
    if (end == text || errno) return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].suffix) != 0) continue;
        double v = (double)digits * units[i].scale;
        if (v > 9.2e18) return -1;
        *value = (int64_t)digits * (int64_t)units[i].scale;
        return 0;
    }
    return -1;
}

int cli_parse_type(const char *name, gs_type *type)
{
    /* NumPy's names: the dtype's name, and its code in native ('=') or
     * little-endian ('<') order; '>' (big-endian) is no type gpuscan has */
    static const struct { const char *numpy, *code, *ours; } aliases[] = {
        {"int32", "i4", "i32"},   {"int64", "i8", "i64"},   {"uint32", "u4", "u32"},
        {"uint64", "u8", "u64"},  {"float32", "f4", "f32"}, {"float64", "f8", "f64"},
    };
    const char *code = name[0] == '<' || name[0] == '=' ? name + 1 : name;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].numpy) == 0 || strcmp(code, aliases[i].code) == 0)
            name = aliases[i].ours;
    return gs_type_from_name(name, type) == GS_OK ? 0 : -1;
}

#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* c is an ASCII digit (unlike isdigit, whatever the locale). */
static int cli_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* c is an ASCII hexadecimal digit. */
static int cli_is_hex_digit(char c)
{
    return cli_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int cli_parse_seed(const char *text, uint64_t *seed, char *err, size_t errlen)
{
    /* decimal (a leading 0 is not octal: 010 is ten, 09 nine), or
     * hexadecimal after 0x; strtoull would skip blanks and take "" as 0
     * and " -1" as 2^64-1, so the first character after any 0x must be a
     * digit of the base */
    const int hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    const char *digits = hex ? text + 2 : text;
    char *end = NULL;
    errno = 0;
    if (hex ? cli_is_hex_digit(*digits) : cli_is_digit(*digits)) *seed = strtoull(digits, &end, hex ? 16 : 10);
    if (end && !*end && !errno) return 0;
    return cli_usage_error(err, errlen, "--seed %s: not a decimal or 0x hexadecimal integer below 2^64", text);
}

int cli_usage_error(char *err, size_t errlen, const char *fmt, const char *what)
{
    snprintf(err, errlen, fmt, what);
    return CLI_EXIT_USAGE;
}

int cli_parse_algo(const char *name, int scan, gs_algo *algo)
{
    return gs_algo_from_name(name, algo) == GS_OK && gs_algo_serves(*algo, scan) ? 0 : -1;
}

enum { OPT_SEED = 256, OPT_EXCLUSIVE, OPT_BACKEND, OPT_DEVICE, OPT_CHUNK, OPT_DEPTH, OPT_STREAM,
       OPT_RESIDENT, OPT_VERIFY, OPT_JSON, OPT_ALGO, OPT_MEM_CAP, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_EXACT };

/* The commands an option is for, as bits of (1 << cli_command). */
#define FOR_REDUCE (1u << CLI_REDUCE)
#define FOR_SCAN (1u << CLI_SCAN)
#define FOR_INFO (1u << CLI_INFO)
#define FOR_RUNS (FOR_REDUCE | FOR_SCAN)
#define FOR_ALL (FOR_RUNS | FOR_INFO)

/* Every option of reduce, scan and info, with the commands it is for: one
 * given to any other command is a usage error, never silently ignored. A
 * new option is one row here and one case in cli_parse. */
static const struct cli_option {
    const char *name;
    int has_arg, code;   /* code: the short option's letter, or an OPT_ */
    unsigned commands;
} cli_options[] = {
    {"input", required_argument, 'i', FOR_RUNS},
    {"generate", required_argument, 'g', FOR_RUNS},
    {"type", required_argument, 't', FOR_RUNS},
    {"seed", required_argument, OPT_SEED, FOR_RUNS},
    {"op", required_argument, 'o', FOR_RUNS},
    {"exclusive", no_argument, OPT_EXCLUSIVE, FOR_SCAN},
    {"output", required_argument, 'O', FOR_SCAN},
    {"backend", required_argument, OPT_BACKEND, FOR_ALL},
    {"device", required_argument, OPT_DEVICE, FOR_ALL},
    {"chunk", required_argument, OPT_CHUNK, FOR_RUNS},
    {"depth", required_argument, OPT_DEPTH, FOR_RUNS},
    {"mem-cap", required_argument, OPT_MEM_CAP, FOR_RUNS},
    {"exact", no_argument, OPT_EXACT, FOR_RUNS},
    {"algo", required_argument, OPT_ALGO, FOR_RUNS},
    {"stream", no_argument, OPT_STREAM, FOR_RUNS},
    {"resident", no_argument, OPT_RESIDENT, FOR_RUNS},
    {"verify", no_argument, OPT_VERIFY, FOR_RUNS},
    {"json", required_argument, OPT_JSON, FOR_RUNS},
    {"quiet", no_argument, 'q', FOR_RUNS},
    {"progress", no_argument, OPT_PROGRESS, FOR_RUNS},
    {"no-progress", no_argument, OPT_NO_PROGRESS, FOR_RUNS},
    {"help", no_argument, 'h', FOR_ALL},
    {"version", no_argument, 'V', FOR_ALL},
};
enum { N_CLI_OPTIONS = sizeof cli_options / sizeof cli_options[0] };

static const char *command_name(cli_command command)
{
    return command == CLI_REDUCE ? "reduce" : command == CLI_SCAN ? "scan" : "info";
}

/* Option `code` is not for `command`: 0; else -1 with the usage error in
 * err, which names the commands it is for. */
static int check_applies(int code, cli_command command, char *err, size_t errlen)
{
    for (int i = 0; i < N_CLI_OPTIONS; i++) {
        const struct cli_option *o = &cli_options[i];
        if (o->code != code) continue;
        if (command == CLI_NONE || (o->commands & (1u << command))) return 0;
        char name[32] = "";
        if (code < 256) snprintf(name, sizeof name, "-%c/", code);
        char users[64] = "";
        size_t used = 0;
        for (cli_command c = CLI_REDUCE; c <= CLI_INFO; c++)
            if (o->commands & (1u << c))
                used += (size_t)snprintf(users + used, sizeof users - used, "%s%s", used ? " and " : "", command_name(c));
        snprintf(err, errlen, "%s--%s does not apply to %s (it is for %s)", name, o->name, command_name(command), users);
        return -1;
    }
    return 0;
}

int cli_parse(int argc, char **argv, cli_command command, cli_args *a, char *err, size_t errlen)
{
    struct option options[N_CLI_OPTIONS + 1];
    memset(options, 0, sizeof options);
    for (int i = 0; i < N_CLI_OPTIONS; i++)
        options[i] = (struct option){cli_options[i].name, cli_options[i].has_arg, 0, cli_options[i].code};
    static const gs_config cfg = GS_CONFIG_INIT;
    memset(a, 0, sizeof *a);
    a->cfg = cfg;
    a->src.seed = 1;
    a->src.type = GS_F32;
    a->op = GS_SUM;
    a->kind = GS_INCLUSIVE;

    a->command = command;
    int has_gen = 0;
    const char *algo_name = NULL;
    optind = 1;   /* argv[0] is the command, or the program when none was named */
    opterr = 0;
    int c;
    int64_t count;
    while ((c = getopt_long(argc, argv, ":i:g:t:o:O:qhV", options, NULL)) != -1) {
        if (c != ':' && c != '?' && check_applies(c, a->command, err, errlen) != 0) return CLI_EXIT_USAGE;
        switch (c) {
        case 'i':
            if (a->src.path) return cli_usage_error(err, errlen, "-i %s: a second input (one -i or -g)", optarg);
            a->src.path = optarg;
            break;
        case 'g':
            if (has_gen) return cli_usage_error(err, errlen, "-g %s: a second input (one -i or -g)", optarg);
            if (cli_parse_count(optarg, &a->src.count) != 0)
                return cli_usage_error(err, errlen, "-g %s: not an element count (digits with an optional k M G T Ki Mi Gi Ti)", optarg);
            has_gen = 1;
            break;
        case 't':
            if (cli_parse_type(optarg, &a->src.type) != 0)
                return cli_usage_error(err, errlen, "-t %s: unknown type (" CLI_TYPE_NAMES ")", optarg);
            a->src.type_given = 1;
            break;
        case 'o':
            if (gs_op_from_name(optarg, &a->op) != GS_OK)
                return cli_usage_error(err, errlen, "-o %s: unknown operation (sum prod min max)", optarg);
            break;
        case 'O':
            if (!*optarg) return cli_usage_error(err, errlen, "%s", "-O '': an empty output path");
            if (optarg[strlen(optarg) - 1] == '/' && !gs_h5_is_path(optarg))
                return cli_usage_error(err, errlen, "-O %s: a folder, not a file name", optarg);
            if (a->out_path) return cli_usage_error(err, errlen, "-O %s: a second output (one -O)", optarg);
            a->out_path = optarg;
            break;
        case OPT_SEED:
            if (cli_parse_seed(optarg, &a->src.seed, err, errlen) != 0) return CLI_EXIT_USAGE;
            break;
        case OPT_EXCLUSIVE: a->kind = GS_EXCLUSIVE; break;
        case OPT_BACKEND:
            if (gs_backend_from_name(optarg, &a->cfg.backend) != GS_OK)
                return cli_usage_error(err, errlen, "--backend %s: unknown backend (auto cuda cpu)", optarg);
            break;
        case OPT_DEVICE:
            if (cli_parse_count(optarg, &count) != 0 || count > 1 << 20)
                return cli_usage_error(err, errlen, "--device %s: not a GPU ordinal", optarg);
            a->cfg.device = (int)count;
            break;
        case OPT_CHUNK:
            if (cli_parse_count(optarg, &a->run.chunk) != 0 || a->run.chunk == 0)
                return cli_usage_error(err, errlen, "--chunk %s: not a positive element count", optarg);
            break;
        case OPT_DEPTH:
            if (cli_parse_count(optarg, &count) != 0 || count < 1 || count > GS_MAX_DEPTH)
                return cli_usage_error(err, errlen, "--depth %s: not a count of chunks from 1 to " CLI_STR(GS_MAX_DEPTH), optarg);
            a->run.depth = (int)count;
            break;
        case OPT_STREAM:
        case OPT_RESIDENT: {
            gs_residency want = c == OPT_STREAM ? GS_RESIDENCY_STREAMED : GS_RESIDENCY_RESIDENT;
            if (a->run.residency != GS_RESIDENCY_AUTO && a->run.residency != want)
                return cli_usage_error(err, errlen, "%s", "--stream and --resident exclude each other");
            a->run.residency = want;
            break;
        }
        case OPT_MEM_CAP:
            if (cli_parse_count(optarg, &count) != 0 || count < 1)
                return cli_usage_error(err, errlen, "--mem-cap %s: not a positive byte count", optarg);
            a->cfg.device_mem_cap = (size_t)count;
            break;
        case OPT_ALGO: algo_name = optarg; break;
        case OPT_VERIFY: a->run.verify = 1; break;
        case OPT_EXACT: a->cfg.exact = 1; break;
        case OPT_JSON:
            if (!*optarg) return cli_usage_error(err, errlen, "%s", "--json '': an empty report path");
            a->json_path = optarg;
            break;
        case 'q': a->quiet = 1; break;
        case OPT_PROGRESS: a->progress = CLI_PROGRESS_ON; break;
        case OPT_NO_PROGRESS: a->progress = CLI_PROGRESS_OFF; break;
        case 'h': a->command = CLI_HELP; return CLI_EXIT_OK;
        case 'V': a->command = CLI_VERSION; return CLI_EXIT_OK;
        case ':': return cli_usage_error(err, errlen, "%s needs a value", argv[optind - 1]);
        default: return cli_usage_error(err, errlen, "unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(err, errlen, "unexpected argument '%s'", argv[optind]);
    if (a->command == CLI_NONE) return CLI_EXIT_OK;   /* cli_main.c says which commands there are */
    if (a->command == CLI_INFO) return CLI_EXIT_OK;
    /* a .npy input's type is known only once it is opened: the library refuses it there */
    if (a->cfg.exact && a->op == GS_PROD && (has_gen || a->src.type_given) && (a->src.type == GS_F32 || a->src.type == GS_F64))
        return cli_usage_error(err, errlen, "--exact with -o prod of %s: a product of floats cannot be exact in bounded space "
                               "(--exact applies to sums)", gs_type_name(a->src.type));
    if (algo_name) {
        const int scan = a->command == CLI_SCAN;
        gs_algo algo;
        if (cli_parse_algo(algo_name, scan, &algo) != 0)
            return cli_usage_error(err, errlen, scan ? "--algo %s: no scan variant (see gpuscan --help)"
                                                 : "--algo %s: no reduction variant (see gpuscan --help)",
                               algo_name);
        if (scan) a->cfg.scan_kernel = gs_algo_name(algo);
        else a->cfg.reduce_kernel = gs_algo_name(algo);
    }
    if (!a->src.path == !has_gen)
        return cli_usage_error(err, errlen, "%s", "give exactly one input: -i FILE or -g N");
    if (a->command == CLI_SCAN && !a->out_path)
        return cli_usage_error(err, errlen, "%s", "scan needs an output file: -O OUT");
    /* the report must not replace the data it reports on (the file of an
     * HDF5 dataset path included) */
    if (a->json_path && strcmp(a->json_path, "-") != 0) {
        if (a->src.path && cli_same_data_file(a->json_path, a->src.path))
            return cli_usage_error(err, errlen, "--json %s: the same file as the input (-i)", a->json_path);
        if (a->out_path && cli_same_data_file(a->json_path, a->out_path))
            return cli_usage_error(err, errlen, "--json %s: the same file as the output (-O)", a->json_path);
    }
    return CLI_EXIT_OK;
}
