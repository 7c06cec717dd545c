/*
 * cli_bench.h - `gpuscan bench` inside the CLI: its options
 * (cli_bench_parse.c), its report and how that is printed and written
 * (cli_bench_output.c), the sweep and the verdict (cli_bench.c).
 */
#ifndef GS_CLI_BENCH_H
#define GS_CLI_BENCH_H

#include "cli.h"

/* What a field prints when there is no number (no check ran, no ceiling). */
#define CLI_NO_VALUE "-"

#define CLI_BENCH_MAX_READS 8

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
    int exact;                      /* --exact: an exact row after each f32/f64 sum row */
    gs_config cfg;
    uint64_t seed;
    const char *json_path, *csv_path;
    const char *reads[CLI_BENCH_MAX_READS]; /* --read: files whose read bandwidth is measured */
    int n_reads;
    double min_bw;                  /* GB/s per rank; < 0: no bound */
    int help;
} cli_bench_args;

/* The options: CLI_EXIT_OK, or CLI_EXIT_USAGE with the message in err.
 * argv[0] is "bench". */
int cli_bench_parse(int argc, char **argv, cli_bench_args *a, char *err, size_t errlen);
void cli_bench_usage(FILE *out);
/* 1 when a row of (type, op) is followed by its exact row (--exact). */
int cli_bench_exact_row(const cli_bench_args *a, gs_type type, gs_op op);
/* The (type, op) pairs among the cases that get exact rows. */
int cli_bench_exact_cases(const cli_bench_args *a);

/* One row: its numbers, and the same numbers as printed. */
typedef struct cli_bench_row {
    gs_bench_case c;
    gs_bench_result r;
    char time_us[24], min_us[24], max_us[24], p99_us[24];
    char gbps_rank[24], gbps_total[24], ceiling_pct[24], wrong[24];
} cli_bench_row;

typedef enum cli_bench_verdict {
    CLI_BENCH_OK, CLI_BENCH_WRONG, CLI_BENCH_BELOW_MIN_BW, CLI_BENCH_ERROR
} cli_bench_verdict;

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
    cli_bench_verdict verdict;
    const char *error;              /* the library's message when the verdict is CLI_BENCH_ERROR */
} cli_bench_report;

/* Every number is formatted once, into the report's strings; the table, the
 * CSV and the JSON print those same strings, so that a script reads exactly
 * what a person reads. */
void cli_bench_format_ceilings(cli_bench_report *rep);   /* from rep->slowest */
void cli_bench_format_row(const cli_bench_report *rep, cli_bench_row *row);
void cli_bench_format_average(cli_bench_report *rep);    /* from rep->avg_gbps_rank */
/* "ok", "wrong", "below min-bw", "error": the footer's and the JSON's result. */
const char *cli_bench_verdict_name(cli_bench_verdict verdict);

/* The table, on stdout by rank 0: the header before the sweep, each row as
 * it is measured, the footer after. */
void cli_bench_print_header(FILE *out, const cli_bench_report *rep);
void cli_bench_print_row(FILE *out, const cli_bench_report *rep, const cli_bench_row *row);
void cli_bench_print_footer(FILE *out, const cli_bench_report *rep);
/* The report files, as cli_write_fn's: data is the cli_bench_report. */
void cli_bench_write_csv(FILE *f, const void *data);
void cli_bench_write_json(FILE *f, const void *data);

#endif
