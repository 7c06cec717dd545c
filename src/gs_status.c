/* gs_status.c - recording failures (gs_status.h) and the clock. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "gs_status.h"

gs_status gs_err_set(gs_err *err, gs_status status, const char *fmt, ...)
{
    if (!err) return status;
    int prefix = err->rank >= 0 ? snprintf(err->msg, sizeof err->msg, "rank %d: ", err->rank) : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + prefix, sizeof err->msg - (size_t)prefix, fmt, ap);
    va_end(ap);
    return status;
}

double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
