/*
 * cli_output.c - what every command's report files share: the one writer
 * of report files (whole or not at all, never through a planted link), the
 * one JSON float format and the one JSON string escaper.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "gs_h5.h"

/* ---- report files -------------------------------------------------------------- */

/* Fills err with "PATH: cannot write the WHAT report: " and fmt; returns -1. */
static int report_error(char *err, size_t errlen, const char *path, const char *what, const char *fmt, ...)
{
    int used = snprintf(err, errlen, "%s: cannot write the %s report: ", path, what);
    if (used >= 0 && (size_t)used < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + used, errlen - (size_t)used, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* What a file that is not a regular file is, in words; NULL for a regular one. */
static const char *irregular_kind(mode_t mode)
{
    if (S_ISREG(mode)) return NULL;
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "a special file";
}

/* The permissions open(2) gives a new file: 0666 less the umask, which can
 * only be read by setting it (the CLI runs no thread that creates files). */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* "DIR/.NAME.gpuscan-tmp.XXXXXX", a mkstemp template: hidden, in the
 * target's folder so that the rename stays on one file system, and named as
 * the scan output's temporaries are (mpi/gs_mpiio.c). */
static char *temp_template(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t len = strlen(path) + sizeof "..gpuscan-tmp.XXXXXX";
    char *temp = malloc(len);
    if (temp) snprintf(temp, len, "%.*s.%s.gpuscan-tmp.XXXXXX", (int)(name - path), path, name);
    return temp;
}

/* Fill the temporary on fd (closed here) with the report; 0 or an errno. */
static int fill_temp(int fd, mode_t mode, cli_write_fn fill, const void *data)
{
    /* mkstemp made it 0600; give it what the target has, or would have */
    if (fchmod(fd, mode) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        return e;
    }
    errno = 0;
    fill(f, data);
    int e = fflush(f) != 0 || ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !e) e = errno;
    return e;
}

/* What may stand at a report's path, and the permissions its file gets:
 * nothing (a new file's), or a regular file this process may write (its
 * own). A rename over a device (--json /dev/null), a FIFO or a link
 * (/dev/stdout) would destroy it, not write to it; a rename over a file it
 * may not write would replace it on the folder's permission alone. 0, or
 * -1 with the message in err. */
static int report_target(const char *path, const char *what, mode_t *mode, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    if (!*path || (slash && !slash[1])) return report_error(err, errlen, path, what, "not a file name");
    struct stat st;
    if (lstat(path, &st) == 0) {
        const char *kind = irregular_kind(st.st_mode);
        if (kind) return report_error(err, errlen, path, what, "it is %s, not a regular file (left as it is)", kind);
        if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
            return report_error(err, errlen, path, what, "%s (left as it is)", strerror(errno));
        *mode = st.st_mode & 0777;   /* its permission bits, not set-id or sticky */
        return 0;
    }
    if (errno != ENOENT) return report_error(err, errlen, path, what, "%s", strerror(errno));
    *mode = new_file_mode();
    return 0;
}

int cli_check_report_path(const char *path, const char *what, char *err, size_t errlen)
{
    mode_t mode;
    if (strcmp(path, "-") == 0) return 0;
    if (report_target(path, what, &mode, err, errlen) != 0) return -1;
    /* the folder must take the temporary */
    char *temp = temp_template(path);
    if (!temp) return report_error(err, errlen, path, what, "out of memory");
    int fd = mkstemp(temp), e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        close(fd);
        unlink(temp);
    }
    free(temp);
    return e ? report_error(err, errlen, path, what, "%s", strerror(e)) : 0;
}

int cli_write_atomically(const char *path, const char *what, cli_write_fn fill, const void *data,
                         char *err, size_t errlen)
{
    /* The rename never follows a link, so whatever is swapped in after
     * this check is replaced, never written through. */
    mode_t mode;
    if (report_target(path, what, &mode, err, errlen) != 0) return -1;
    char *temp = temp_template(path);
    if (!temp) return report_error(err, errlen, path, what, "out of memory");
    /* O_CREAT | O_EXCL with a fresh name: a file or link planted there fails
     * the call instead of being written through */
    int fd = mkstemp(temp);
    int e = fd < 0 ? errno : fill_temp(fd, mode, fill, data);
    /* an old report's owner and group, where this process may give them */
    struct stat old;
    if (!e && lstat(path, &old) == 0 && S_ISREG(old.st_mode)) gs_mpiio_keep_owner(temp, &old);
    if (!e && rename(temp, path) != 0) e = errno;
    if (e && fd >= 0) unlink(temp);
    free(temp);
    return e ? report_error(err, errlen, path, what, "%s", strerror(e)) : 0;
}

int cli_write_report(const char *path, const char *what, cli_write_fn fill, const void *data,
                     char *err, size_t errlen)
{
    if (strcmp(path, "-") != 0) return cli_write_atomically(path, what, fill, data, err, errlen);
    errno = 0;
    fill(stdout, data);
    if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
    return report_error(err, errlen, path, what, "%s", strerror(errno ? errno : EIO));
}

/* ---- JSON numbers and strings ---------------------------------------------------- */

void cli_format_real(char *buf, size_t len, double v, int digits)
{
    if (snprintf(buf, len, "%.*g", digits, v) > 0 && !strpbrk(buf, ".e"))
        strncat(buf, ".0", len - strlen(buf) - 1);
}

/* The length of the well-formed UTF-8 sequence that starts at s (RFC 3629:
 * shortest form, no surrogates, at most U+10FFFF), or 0. */
static int utf8_length(const unsigned char *s)
{
    static const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    int n;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) n = 3;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4) n = 4;
    else return 0;
    uint32_t code = s[0] & (0x3fu >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;   /* also stops at the terminating NUL */
        code = code << 6 | (s[i] & 0x3fu);
    }
    if (code < least[n] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
    return n;
}

void cli_json_string(FILE *f, const char *text)
{
    if (!text) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_length(s);
        if (*s == '"' || *s == '\\') {
            fputc('\\', f);
            fputc(*s, f);
        } else if (*s < 0x20) {
            fprintf(f, "\\u%04x", *s);
        } else if (n == 0) {
            fputs("\\ufffd", f);   /* JSON text is UTF-8: a stray byte cannot stand for itself */
            n = 1;
        } else {
            fwrite(s, 1, (size_t)n, f);
        }
        s += n;
    }
    fputc('"', f);
}

/* The folder holding path and the name in it: "a/b/c" gives "a/b" and "c",
 * "c" gives "." and "c". */
static int split_path(const char *path, char *dir, size_t dirlen, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    size_t len = slash ? (size_t)(slash - path) : 1;
    if (slash && len == 0) len = 1;   /* "/c": the root */
    if (len >= dirlen) return -1;
    memcpy(dir, slash ? path : ".", len);
    dir[len] = '\0';
    return 0;
}

int cli_same_file(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) return 1;
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return 0;
    struct stat sa, sb;
    int has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a && has_b) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (has_a || has_b) return 0;
    /* neither exists yet: the same name in the same folder ("y.npy", "./y.npy") */
    char da[4096], db[4096];
    const char *na, *nb;
    if (split_path(a, da, sizeof da, &na) != 0 || split_path(b, db, sizeof db, &nb) != 0) return 0;
    if (strcmp(na, nb) != 0 || !*na) return 0;
    return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cli_same_data_file(const char *report, const char *data)
{
    char file[4096];
    if (gs_h5_is_path(data) && gs_h5_file_part(data, file, sizeof file)) data = file;
    return cli_same_file(report, data);
}
