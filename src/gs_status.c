/* gs_status.c - recording failures (gs_status.h) and the clock. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gs_status.h"

/* Of a message too long for gs_err, the start and the end are kept: the end
 * says why, and paths of up to PATH_MAX characters in the middle would
 * otherwise push it out. */
#define GS_ERR_HEAD 160

gs_status gs_err_set(gs_err *err, gs_status status, const char *fmt, ...)
{
    if (!err) return status;
    char full[2 * 4096 + GS_ERRMSG_LEN];
    int prefix = err->rank >= 0 ? snprintf(full, sizeof full, "rank %d: ", err->rank) : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(full + prefix, sizeof full - (size_t)prefix, fmt, ap);
    va_end(ap);
    size_t len = strlen(full);
    if (len < sizeof err->msg) {
        memcpy(err->msg, full, len + 1);
    } else {
        static const char cut[] = " ... ";
        size_t tail = sizeof err->msg - GS_ERR_HEAD - (sizeof cut - 1) - 1;
        memcpy(err->msg, full, GS_ERR_HEAD);
        memcpy(err->msg + GS_ERR_HEAD, cut, sizeof cut - 1);
        memcpy(err->msg + GS_ERR_HEAD + sizeof cut - 1, full + len - tail, tail + 1);
    }
    return status;
}

double gs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
