/*
 * cli.h - the gpuscan command line: a thin user of the public API.
 */
#ifndef GS_CLI_H
#define GS_CLI_H

#include <stdio.h>
#include "gs_tools.h"

/* Exit statuses of the tool. */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

typedef enum cli_command { CLI_NONE, CLI_REDUCE, CLI_SCAN, CLI_INFO, CLI_HELP, CLI_VERSION } cli_command;

/* Whether rank 0 draws the progress bar: by default when stderr is a
 * terminal; --progress / GPUSCAN_PROGRESS=1 force it (one line per update
 * where stderr is no terminal, as under mpirun); --no-progress / =0 not. */
typedef enum cli_progress_mode { CLI_PROGRESS_AUTO, CLI_PROGRESS_ON, CLI_PROGRESS_OFF } cli_progress_mode;

typedef struct cli_args {
    cli_command command;
    gs_source src;
    gs_op op;
    gs_scan_kind kind;
    gs_config cfg;
    gs_run_options run;
    const char *out_path;    /* -O */
    const char *json_path;   /* --json FILE, "-" for stdout */
    int quiet;
    cli_progress_mode progress;   /* from the command line; AUTO: the environment decides */
} cli_args;

/* Parse the options of `command` (CLI_NONE: none was named) in argv[1..];
 * argv[0] is the command's name. On a usage error returns CLI_EXIT_USAGE
 * with a message in err; CLI_NONE stays CLI_NONE unless --help or
 * --version turns it into CLI_HELP or CLI_VERSION. */
int cli_parse(int argc, char **argv, cli_command command, cli_args *args, char *err, size_t errlen);
/* "12", "1k" (10^3), "2Mi" (2^20), ...: k M G T powers of 10, Ki Mi Gi Ti of 2. */
int cli_parse_count(const char *text, int64_t *value);
/* -t of every command: gpuscan's names (i32 ... f64) and NumPy's for the
 * same types (int32 ... float64, i4 ... f8, <i4 ... <f8). 0, or -1. */
int cli_parse_type(const char *name, gs_type *type);
#define CLI_TYPE_NAMES "i32 i64 u32 u64 f32 f64, or NumPy's int32 ... float64, i4 ... f8"

/* A usage error of any command: the message (fmt with one %s) in err;
 * returns CLI_EXIT_USAGE. */
int cli_usage_error(char *err, size_t errlen, const char *fmt, const char *what);
/* --seed S of every command: an integer below 2^64, decimal (a leading 0
 * is not octal) or hexadecimal after 0x. 0, or for anything else the usage
 * error in err and CLI_EXIT_USAGE. */
int cli_parse_seed(const char *text, uint64_t *seed, char *err, size_t errlen);
/* a and b name the same file: the same path text, or both exist and have the
 * same device and inode (a hard link, another spelling of the path, a
 * symbolic link to it) when both exist, the same name in the same folder
 * when neither does ("y.npy", "./y.npy"). "-" (stdout) is the same only as
 * "-". */
int cli_same_file(const char *a, const char *b);
/* A report at `report` would overwrite the file that holds `data` (a file,
 * or the file of an HDF5 dataset path "F.h5:/d"). */
int cli_same_data_file(const char *report, const char *data);
/* --algo NAME: a variant that serves reductions (scan 0) or scans (scan 1).
 * 0, or -1 for no such variant. */
int cli_parse_algo(const char *name, int scan, gs_algo *algo);
/* Collective gs_context_create (its status in *status unless NULL); on
 * failure rank 0 prints why. Returns
 * CLI_EXIT_OK or CLI_EXIT_FAIL; *ctx goes to gs_context_destroy either way. */
int cli_create_context(const gs_config *cfg, int rank, gs_context **ctx, gs_status *status);
/* Collective: every rank's verdict on its arguments (an exit code and its
 * message in err, errlen bytes on every rank) becomes the first failing
 * rank's, code and message ("rank R: " before another rank's), so that
 * ranks that see different files at one path all stop. Rank 0 prints a
 * failure, and under a usage error where `gpuscan COMMAND --help` (NULL:
 * `gpuscan --help`) lists the options. Returns the agreed code. */
int cli_agree(int code, char *err, size_t errlen, const char *command);
/* The options of reduce, scan and info, for the usage text (cli_main.c has
 * the commands). */
void cli_print_options(FILE *out);

/* Reports, printed by rank 0. */
/* cpu_why: why the run is on the CPU backend ("" when it is not, or was
 * asked to be) */
void cli_print_summary(FILE *out, const cli_args *args, const gs_report *rep,
                       const gs_value *result, const gs_rank_info *ranks, const char *cpu_why);
/* Writes the JSON object to args->json_path ("-": stdout) with
 * cli_write_report. Returns 0, or -1 with the message in err. */
int cli_write_json(const cli_args *args, const gs_report *rep, const gs_value *result,
                   const gs_rank_info *ranks, char *err, size_t errlen);
void cli_print_info(FILE *out, int size, const gs_rank_info *ranks, gs_backend backend, const char *cpu_why);
/* The JSON error object of a failed run, {"error": MESSAGE, "status":
 * STATUS}, written to args->json_path as reports are. 0, or -1 with the
 * message in err. */
int cli_write_json_error(const cli_args *args, const char *message, const char *status, char *err,
                         size_t errlen);

/* Report files and JSON text, for every command (cli_output.c). */
typedef void (*cli_write_fn)(FILE *f, const void *data);   /* fills a report */
/* Write the report `what` ("JSON", "CSV") to path whole or not at all:
 * fill(f, data) writes it into a temporary created exclusively beside the
 * target (never through a link planted there), which gets the target's
 * permissions (a new file's, 0666 less the umask, when there is none), and
 * its owner and group where this process may give them, and
 * is renamed over it only once complete; it is removed on failure. A target
 * that exists and is not a regular file (folder, FIFO, device, symbolic
 * link) is refused and left as it is. Returns 0, or -1 with the message,
 * "PATH: cannot write the WHAT report: WHY", in err. */
int cli_write_atomically(const char *path, const char *what, cli_write_fn fill, const void *data,
                         char *err, size_t errlen);
/* Before a run: cli_write_atomically could write a report at path (what
 * stands there, and a temporary in its folder, made and removed); "-" is
 * fine. 0, or -1 with the message in err. */
int cli_check_report_path(const char *path, const char *what, char *err, size_t errlen);
/* The same, except that path "-" is stdout. */
int cli_write_report(const char *path, const char *what, cli_write_fn fill, const void *data,
                     char *err, size_t errlen);
/* A finite double with `digits` significant digits, always as a float
 * ("0.0", not "0", which Python's json would read as an int). */
void cli_format_real(char *buf, size_t len, double v, int digits);
/* text as a JSON string, quotes included: '"' and '\' escaped, control
 * characters as \uXXXX, bytes that are not UTF-8 as \ufffd; NULL as null.
 * Every string from outside the program (host and device names, paths,
 * build information, error messages) goes through it. */
void cli_json_string(FILE *f, const char *text);

/* The progress bar of a long run (cli_progress.c): drawn on stderr by rank 0
 * once the run has taken more than 2 s (test-only: GS_PROGRESS_DELAY=SECONDS
 * in the environment): redrawn in place when stderr is a terminal and the
 * run is not --quiet; when forced (cli_progress_mode), also where stderr is
 * no terminal, as one line per update, at most one a second. */
typedef struct cli_progress {
    int enabled;
    int lines;               /* one line per update instead of redrawing */
    double start, delay, last_drawn;
    int drawn;               /* a bar is on the terminal */
} cli_progress;
void cli_progress_begin(cli_progress *bar, int rank, int quiet, cli_progress_mode mode);
/* A gs_progress_fn: data is the cli_progress. */
void cli_progress_update(void *data, double done);
/* Erase the bar, if one was drawn, before anything else is printed. */
void cli_progress_end(cli_progress *bar);

/* Commands with their own options, in cli_main.c's table of commands:
 * called after MPI_Init with argv[0] = the command's name; they return the
 * exit status, the same on every rank. */
int cli_bench_main(int argc, char **argv);    /* cli_bench.c: the benchmark sweep */
int cli_ladder_main(int argc, char **argv);   /* cli_ladder.c: the kernel variants side by side */

#endif
