/* cli_progress.c - the progress bar of long runs, on stderr: a line redrawn
 * in place (carriage return) at most ten times a second, erased at the end
 * so that the summary and any error message start on a clean line; or,
 * where stderr is no terminal and the bar was asked for (mpirun gives ranks
 * a pipe), one line per update, at most one a second, so that a log reads
 * line by line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* A run shorter than this shows no bar. */
#define CLI_PROGRESS_DELAY 2.0
#define CLI_PROGRESS_INTERVAL 0.1
#define CLI_PROGRESS_LINE_INTERVAL 1.0
#define CLI_PROGRESS_WIDTH 40

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The command line's choice, else GPUSCAN_PROGRESS's (1 on, 0 off). */
static cli_progress_mode chosen_mode(cli_progress_mode asked)
{
    const char *env = getenv("GPUSCAN_PROGRESS");
    if (asked != CLI_PROGRESS_AUTO || !env) return asked;
    if (strcmp(env, "1") == 0) return CLI_PROGRESS_ON;
    if (strcmp(env, "0") == 0) return CLI_PROGRESS_OFF;
    return CLI_PROGRESS_AUTO;
}

void cli_progress_begin(cli_progress *bar, int rank, int quiet, cli_progress_mode asked)
{
    const char *delay = getenv("GS_PROGRESS_DELAY");   /* test-only */
    const cli_progress_mode mode = chosen_mode(asked);
    const int terminal = isatty(STDERR_FILENO);
    bar->enabled = rank == 0 && (mode == CLI_PROGRESS_ON || (mode == CLI_PROGRESS_AUTO && !quiet && terminal));
    bar->lines = !terminal;
    bar->start = now();
    bar->delay = delay && *delay ? atof(delay) : CLI_PROGRESS_DELAY;
    bar->last_drawn = 0;
    bar->drawn = 0;
}

void cli_progress_update(void *data, double done)
{
    cli_progress *bar = data;
    if (!bar->enabled) return;
    double t = now(), elapsed = t - bar->start;
    const double interval = bar->lines ? CLI_PROGRESS_LINE_INTERVAL : CLI_PROGRESS_INTERVAL;
    if (elapsed < bar->delay || (bar->last_drawn > 0 && t - bar->last_drawn < interval && done < 1))
        return;
    char cells[CLI_PROGRESS_WIDTH + 1];
    int full = (int)(done * CLI_PROGRESS_WIDTH + 0.5);
    for (int i = 0; i < CLI_PROGRESS_WIDTH; i++) cells[i] = i < full ? '#' : '.';
    cells[CLI_PROGRESS_WIDTH] = '\0';
    /* the rest takes as long per chunk as what is done took */
    double left = done > 0 ? elapsed * (1 - done) / done : 0;
    fprintf(stderr, "%s[%s] %3.0f%%  %.0f s, about %.0f s left%s", bar->lines ? "" : "\r", cells,
            100 * done, elapsed, left, bar->lines ? "\n" : " ");
    fflush(stderr);
    bar->last_drawn = t;
    bar->drawn = !bar->lines;
}

void cli_progress_end(cli_progress *bar)
{
    if (!bar->drawn) return;
    fputs("\r\033[K", stderr);   /* back to the line's start, and clear it */
    fflush(stderr);
    bar->drawn = 0;
}
