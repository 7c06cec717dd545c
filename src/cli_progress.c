/* cli_progress.c - the progress bar of long runs, on stderr: a line redrawn
 * in place (carriage return) at most ten times a second, erased at the end
 * so that the summary and any error message start on a clean line. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* A run shorter than this shows no bar. */
#define CLI_PROGRESS_DELAY 2.0
#define CLI_PROGRESS_INTERVAL 0.1
#define CLI_PROGRESS_WIDTH 40

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_begin(cli_progress *bar, int rank, int quiet)
{
    const char *delay = getenv("GS_PROGRESS_DELAY");   /* test-only */
    bar->enabled = rank == 0 && !quiet && isatty(STDERR_FILENO);
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
    if (elapsed < bar->delay || (bar->drawn && t - bar->last_drawn < CLI_PROGRESS_INTERVAL && done < 1))
        return;
    char cells[CLI_PROGRESS_WIDTH + 1];
    int full = (int)(done * CLI_PROGRESS_WIDTH + 0.5);
    for (int i = 0; i < CLI_PROGRESS_WIDTH; i++) cells[i] = i < full ? '#' : '.';
    cells[CLI_PROGRESS_WIDTH] = '\0';
    /* the rest takes as long per chunk as what is done took */
    double left = done > 0 ? elapsed * (1 - done) / done : 0;
    fprintf(stderr, "\r[%s] %3.0f%%  %.0f s, about %.0f s left ", cells, 100 * done, elapsed, left);
    fflush(stderr);
    bar->last_drawn = t;
    bar->drawn = 1;
}

void cli_progress_end(cli_progress *bar)
{
    if (!bar->drawn) return;
    fputs("\r\033[K", stderr);   /* back to the line's start, and clear it */
    fflush(stderr);
    bar->drawn = 0;
}
