/*
 * gs_mpiio.c - MPI-IO on shards: collective reads and writes at explicit
 * byte offsets, split into pieces whose counts fit an int, and output
 * through a temporary file beside the final one, renamed only when every
 * rank succeeded, so that a failed run never leaves a half-written file.
 *
 * Every step ends in gs_mpi_agree: all ranks return the same status and
 * message, and a rank that failed keeps taking part in the collective calls
 * that follow so that none is left waiting.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "gs_mpi.h"

#define GS_MPIIO_PIECE_LIMIT ((uint64_t)1 << 30)

static uint64_t gs_mpiio_max_piece = GS_MPIIO_PIECE_LIMIT;

void gs_mpiio_set_max_piece(uint64_t bytes)
{
    gs_mpiio_max_piece = bytes == 0 || bytes > GS_MPIIO_PIECE_LIMIT ? GS_MPIIO_PIECE_LIMIT : bytes;
}

struct gs_file {
    MPI_File fh;
    char *path;        /* the name the user gave, in every message */
    char *temp_path;   /* files being written: where the data stays until
                          close; NULL for files opened for reading */
    int lock_fd;       /* rank 0 of a file being written: the temporary, locked
                          for as long as this run lives (see reap_stale); a file
                          read: the file, under a shared lock; else -1 */
};

/* ---- temporaries ----------------------------------------------------------
 * An output is written to "<dir>/.<base>.gstmp.<suffix>" and renamed to its
 * final name only when every rank succeeded. Rank 0 creates the temporary
 * exclusively (never through a link planted at its name) and holds an
 * flock() on it until the run ends: the kernel drops that lock when the
 * process dies, however it dies, so a later run writing the same output
 * knows a temporary whose lock it can take for one whose run is gone, and
 * removes it (reap_stale). A file that a run reads is under a shared lock
 * for as long as the run has it open (gs_mpiio_guard_input), so that an
 * input whose name looks like a temporary is never taken for one. SIGINT
 * and SIGTERM are caught by the tool, which removes this process's
 * temporaries with gs_mpiio_discard_temporaries. */
#define GS_TEMP_TAG ".gstmp."
#define GS_TEMP_SLOTS 16

/* The temporaries this process holds, for the signal handler: written only
 * outside it, read by it. */
static char *volatile held_temps[GS_TEMP_SLOTS];

static void hold_temp(char *path)
{
    for (int i = 0; i < GS_TEMP_SLOTS; i++)
        if (!held_temps[i]) { held_temps[i] = path; return; }
}

static void release_temp(const char *path)
{
    for (int i = 0; i < GS_TEMP_SLOTS; i++)
        if (held_temps[i] == path) held_temps[i] = NULL;
}

void gs_mpiio_discard_temporaries(void)
{
    for (int i = 0; i < GS_TEMP_SLOTS; i++) {
        const char *path = held_temps[i];
        if (path) unlink(path);
    }
}

static void file_free(gs_file *f)
{
    if (!f) return;
    if (f->temp_path) release_temp(f->temp_path);
    if (f->lock_fd >= 0) close(f->lock_fd);
    free(f->path);
    free(f->temp_path);
    free(f);
}

/* "<dir>/.<base>.gstmp.<suffix>": hidden, and in the final file's folder so
 * that the rename stays within one file system; short, so that paths near
 * PATH_MAX still have a temporary. */
static char *temp_name(const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t len = strlen(path) + strlen(suffix) + sizeof "." GS_TEMP_TAG;
    char *name = malloc(len);
    if (name)
        snprintf(name, len, "%.*s.%s" GS_TEMP_TAG "%s", (int)(base - path), path, base, suffix);
    return name;
}

/* 1 when `rest` is what temp_suffix makes: base-36 digits, a dot, base-36
 * digits. */
static int is_temp_suffix(const char *rest)
{
    const char *dot = strchr(rest, '.');
    const size_t digits = strspn(rest, "0123456789abcdefghijklmnopqrstuvwxyz");
    return dot && digits > 0 && rest + digits == dot && dot[1] &&
           strspn(dot + 1, "0123456789abcdefghijklmnopqrstuvwxyz") == strlen(dot + 1);
}

int gs_mpiio_guard_input(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Rank 0: remove the temporaries of `path` that earlier runs left when they
 * were killed: files named as temp_name names them whose lock can be taken
 * (a live run holds its temporary's, and every run its inputs'). A file
 * system without flock (ENOLCK, EOPNOTSUPP) keeps them: nothing tells a dead
 * run from a live one there. */
static void reap_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir_name = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    size_t prefix_len = strlen(base) + sizeof GS_TEMP_TAG;   /* "." base GS_TEMP_TAG */
    char *prefix = malloc(prefix_len + 1);
    DIR *dir = dir_name && prefix ? opendir(dir_name) : NULL;
    if (dir) {
        snprintf(prefix, prefix_len + 1, ".%s" GS_TEMP_TAG, base);
        const int fd_dir = dirfd(dir);
        for (struct dirent *e; (e = readdir(dir));) {
            if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || !is_temp_suffix(e->d_name + strlen(prefix)))
                continue;
            int fd = openat(fd_dir, e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0) continue;
            struct stat sb;
            if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
                unlinkat(fd_dir, e->d_name, 0);
            close(fd);
        }
        closedir(dir);
    }
    free(prefix);
    free(dir_name);
}

/* Rank 0: create the temporary, exclusively, and lock it for the run. */
static gs_status temp_create(gs_mpi *m, gs_file *f)
{
    reap_stale(f->path);
    f->lock_fd = open(f->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f->lock_fd < 0)
        return gs_err_set(m->err, GS_ERR_IO, "%s: cannot create %s: %s", f->path, f->temp_path, strerror(errno));
    hold_temp(f->temp_path);
    if (flock(f->lock_fd, LOCK_EX | LOCK_NB) != 0 && errno != ENOLCK && errno != EOPNOTSUPP)
        return gs_err_set(m->err, GS_ERR_IO, "%s: cannot lock %s: %s", f->path, f->temp_path, strerror(errno));
    return GS_OK;
}

/* Local. `temp_suffix` NULL: a file to read; else one to write through a
 * temporary. */
static gs_status file_new(gs_mpi *m, const char *path, const char *temp_suffix,
                          gs_file **out)
{
    *out = NULL;
    const char *slash = strrchr(path, '/');
    if (temp_suffix && (*path == '\0' || (slash && slash[1] == '\0')))
        return gs_err_set(m->err, GS_ERR_ARG, "'%s': not a file name", path);

    gs_file *f = calloc(1, sizeof *f);
    if (f) {
        f->fh = MPI_FILE_NULL;
        f->lock_fd = -1;
        f->path = strdup(path);
        if (temp_suffix) f->temp_path = temp_name(path, temp_suffix);
    }
    if (!f || !f->path || (temp_suffix && !f->temp_path)) {
        file_free(f);
        return gs_err_set(m->err, GS_ERR_NOMEM, "%s: out of memory", path);
    }
    *out = f;
    return GS_OK;
}

/* ---- long names ------------------------------------------------------------
 * Open MPI's ompio builds names from the name of every file it opens in
 * fixed buffers: its lockedfile component sprintf()s "<name>.locktest.<rank>"
 * into 256 bytes (a fortified build aborts with "buffer overflow detected",
 * another overruns its stack), and its sm component makes a file named after
 * the name's last part plus some 30 characters, which must stay under
 * NAME_MAX. So a name longer than GS_MPIIO_SHORT_NAME is opened through a
 * symbolic link to it, "<TMPDIR or /tmp>/gs-link.XXXXXX/f", that each rank
 * makes in a folder of its own (mkdtemp: mode 0700, so nobody else can
 * swap the link) and removes as soon as MPI_File_open returns: from then on
 * MPI-IO works on the open file, not on its name. Paths up to PATH_MAX work
 * so; one that the link cannot hold fails with a message. */
#define GS_MPIIO_SHORT_NAME 128

gs_status gs_mpiio_route_make(gs_mpi *m, const char *path, const char *shown, gs_mpiio_route *r,
                              const char **name)
{
    r->dir[0] = '\0';
    *name = path;
    if (strlen(path) <= GS_MPIIO_SHORT_NAME) return GS_OK;

    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/' || strlen(tmp) > sizeof r->dir - sizeof "/gs-link.XXXXXX")
        tmp = "/tmp";
    snprintf(r->dir, sizeof r->dir, "%s/gs-link.XXXXXX", tmp);
    if (!mkdtemp(r->dir)) {
        int cause = errno;
        r->dir[0] = '\0';
        return gs_err_set(m->err, GS_ERR_IO, "%s: a path of more than %d characters is opened through a "
                          "link in %s, which cannot be made: %s", shown, GS_MPIIO_SHORT_NAME, tmp, strerror(cause));
    }
    snprintf(r->link, sizeof r->link, "%s/f", r->dir);

    /* the link's target must not depend on the folder it lies in */
    char *target = NULL;
    if (path[0] == '/') {
        target = strdup(path);
    } else {
        char *cwd = getcwd(NULL, 0);
        if (cwd && (target = malloc(strlen(cwd) + strlen(path) + 2)))
            sprintf(target, "%s/%s", cwd, path);
        free(cwd);
    }
    gs_status st = GS_OK;
    if (!target)
        st = gs_err_set(m->err, GS_ERR_IO, "%s: cannot make the absolute path: %s", shown, strerror(errno));
    else if (symlink(target, r->link) != 0)
        st = gs_err_set(m->err, GS_ERR_IO, "%s: cannot link to it from %s: %s", shown, r->dir, strerror(errno));
    free(target);
    if (st == GS_OK) *name = r->link;
    return st;
}

void gs_mpiio_route_remove(gs_mpiio_route *r)
{
    if (!r->dir[0]) return;
    unlink(r->link);
    rmdir(r->dir);
    r->dir[0] = '\0';
}

/* Open the file (its temporary when writing) on every rank and agree. */
static gs_status file_open(gs_mpi *m, gs_file *f, int amode, const char *failure)
{
    gs_mpiio_route route;
    const char *name = NULL;
    gs_status status = gs_mpi_agree(m, gs_mpiio_route_make(m, f->temp_path ? f->temp_path : f->path, f->path,
                                                  &route, &name));
    if (status != GS_OK) {
        gs_mpiio_route_remove(&route);   /* this rank's, where another rank failed */
        return status;
    }
    MPI_File fh = MPI_FILE_NULL;
    int err = MPI_File_open(m->comm, name, amode, MPI_INFO_NULL, &fh);
    gs_mpiio_route_remove(&route);
    if (err == MPI_SUCCESS) {
        f->fh = fh;
        /* MPI_FILE_NULL's handler, which a new file inherits, may have been changed */
        err = MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    }
    if (err != MPI_SUCCESS) status = gs_mpi_fail(m, GS_ERR_IO, err, "%s: %s", f->path, failure);
    return gs_mpi_agree(m, status);
}

/* Rank 0 removes a temporary after a failure already reported: best effort. */
static void temp_discard(gs_mpi *m, const gs_file *f)
{
    if (f->temp_path && m->rank == 0) unlink(f->temp_path);
}

/* Hand out a file every rank opened; else undo what was done. */
static gs_status file_settle(gs_mpi *m, gs_status status, gs_file *f, gs_file **out)
{
    if (status == GS_OK) {
        *out = f;
        return GS_OK;
    }
    if (f) {
        if (f->fh != MPI_FILE_NULL) MPI_File_close(&f->fh);
        temp_discard(m, f);
        file_free(f);
    }
    *out = NULL;
    return status;
}

gs_status gs_mpiio_open_read(gs_mpi *m, const char *path, gs_file **out)
{
    gs_file *f = NULL;
    gs_status status = gs_mpi_agree(m, file_new(m, path, NULL, &f));
    if (status == GS_OK) f->lock_fd = gs_mpiio_guard_input(path);
    if (status == GS_OK) status = file_open(m, f, MPI_MODE_RDONLY, "cannot open for reading");
    return file_settle(m, status, f, out);
}

/* A name part no other run picks (rank 0's pid and clock), broadcast so that
 * every rank opens the same temporary. */
static gs_status temp_suffix(gs_mpi *m, char *suffix, int len)
{
    if (m->rank == 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        /* base 36: a few characters each */
        unsigned long long parts[2] = {(unsigned long long)getpid(),
                                       (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec};
        int at = 0;
        for (int i = 0; i < 2; i++) {
            char digits[16];
            int n = 0;
            do digits[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[parts[i] % 36]; while ((parts[i] /= 36) && n < 15);
            while (n > 0 && at < len - 2) suffix[at++] = digits[--n];
            if (i == 0 && at < len - 1) suffix[at++] = '.';
        }
        suffix[at] = '\0';
    }
    int err = MPI_Bcast(suffix, len, MPI_CHAR, 0, m->comm);
    if (err != MPI_SUCCESS) return gs_mpi_fail(m, GS_ERR_MPI, err, "MPI_Bcast");
    return GS_OK;
}

/* Local. What may stand at an output's path: nothing, or a regular file
 * that the output replaces; never a folder, device, FIFO, socket or
 * symbolic link (whose target would be left alone while the link went).
 * And its folder must take a new file. */
static gs_status check_output(gs_mpi *m, const char *path, uint64_t bytes)
{
    const size_t len = strlen(path);
    if (len == 0 || path[len - 1] == '/') return GS_OK;   /* no file name: file_new says so */
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode))
            return gs_err_set(m->err, GS_ERR_IO, "%s: is a folder; the output must be a file", path);
        if (!S_ISREG(sb.st_mode))
            return gs_err_set(m->err, GS_ERR_IO, "%s: exists and is not a regular file (a link, device, FIFO or socket); gpuscan replaces regular files only", path);
        /* the rename would replace it on the folder's permission alone */
        if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0)
            return gs_err_set(m->err, GS_ERR_IO, "%s: %s: gpuscan replaces only a file it may write", path,
                              strerror(errno));
    } else if (errno != ENOENT) {
        return gs_err_set(m->err, GS_ERR_IO, "%s: %s", path, strerror(errno));
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) return gs_err_set(m->err, GS_ERR_NOMEM, "%s: out of memory", path);
    gs_status st = GS_OK;
    struct statvfs fs;
    if (access(dir, W_OK | X_OK) != 0)
        st = gs_err_set(m->err, GS_ERR_IO, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
    else if (bytes == UINT64_MAX)   /* callers' saturated sums: the count itself is lost */
        st = gs_err_set(m->err, GS_ERR_ARG, "%s: 2^64 bytes or more is beyond the largest file offset", path);
    else if (bytes > INT64_MAX)
        st = gs_err_set(m->err, GS_ERR_ARG, "%s: %llu bytes is beyond the largest file offset", path,
                        (unsigned long long)bytes);
    else if (statvfs(dir, &fs) == 0 && gs_sat_mul(fs.f_bavail, fs.f_frsize) < bytes)
        st = gs_err_set(m->err, GS_ERR_IO, "%s: %s: %llu bytes to write, %llu free in %s", path, strerror(ENOSPC),
                        (unsigned long long)bytes, (unsigned long long)gs_sat_mul(fs.f_bavail, fs.f_frsize), dir);
    free(dir);
    return st;
}

/* Rank 0: copy the file at the final path, where there is one, into the
 * fresh temporary, for an output that adds to the file it replaces. */
static gs_status temp_copy_existing(gs_mpi *m, const gs_file *f)
{
    int from = open(f->path, O_RDONLY | O_CLOEXEC);
    if (from < 0 && errno == ENOENT) return GS_OK;
    int to = from < 0 ? -1 : open(f->temp_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    const size_t cap = (size_t)1 << 20;
    char *buf = to < 0 ? NULL : malloc(cap);
    int ok = buf != NULL, cause = to < 0 ? errno : ENOMEM;
    for (ssize_t got; ok && (got = read(from, buf, cap)) != 0;) {
        ok = got > 0;
        for (ssize_t done = 0, put; ok && done < got; done += put)
            ok = (put = write(to, buf + done, (size_t)(got - done))) > 0;
        if (!ok) cause = errno;
    }
    if (to >= 0 && close(to) != 0 && ok) { ok = 0; cause = errno; }
    if (from >= 0) close(from);
    free(buf);
    if (ok) return GS_OK;
    return gs_err_set(m->err, GS_ERR_IO, "%s: cannot copy it into %s: %s", f->path, f->temp_path, strerror(cause));
}

gs_status gs_mpiio_reserve(gs_mpi *m, const char *final_path, uint64_t bytes, int copy_existing,
                           gs_file **out)
{
    *out = NULL;
    struct stat sb;
    if (copy_existing && stat(final_path, &sb) == 0 && S_ISREG(sb.st_mode))
        bytes = gs_sat_add(bytes, (uint64_t)sb.st_size);
    GS_CHECK(gs_mpi_agree(m, check_output(m, final_path, bytes)));
    char suffix[48] = "";
    GS_CHECK(temp_suffix(m, suffix, (int)sizeof suffix));

    gs_file *f = NULL;
    gs_status status = gs_mpi_agree(m, file_new(m, final_path, suffix, &f));
    if (status == GS_OK) status = gs_mpi_agree(m, m->rank == 0 ? temp_create(m, f) : GS_OK);
    if (status == GS_OK && copy_existing)
        status = gs_mpi_agree(m, m->rank == 0 ? temp_copy_existing(m, f) : GS_OK);
    return file_settle(m, status, f, out);
}

const char *gs_mpiio_temp_path(const gs_file *f)
{
    return f->temp_path;
}

gs_status gs_mpiio_create(gs_mpi *m, const char *final_path, uint64_t bytes, gs_file **out)
{
    gs_file *f = NULL;
    GS_CHECK(gs_mpiio_reserve(m, final_path, bytes, 0, &f));
    return file_settle(m, file_open(m, f, MPI_MODE_WRONLY, "cannot open"), f, out);
}

/* The size of the file, on this rank alone. */
static gs_status file_size(gs_mpi *m, const gs_file *f, uint64_t *bytes)
{
    MPI_Offset size = 0;
    int err = MPI_File_get_size(f->fh, &size);
    *bytes = (uint64_t)size;
    if (err != MPI_SUCCESS) return gs_mpi_fail(m, GS_ERR_IO, err, "%s: cannot get the size", f->path);
    return GS_OK;
}

gs_status gs_mpiio_size(gs_mpi *m, gs_file *f, uint64_t *bytes)
{
    return gs_mpi_agree(m, file_size(m, f, bytes));
}

static gs_status short_transfer(gs_mpi *m, const gs_file *f, const char *verb,
                                uint64_t moved, uint64_t asked, uint64_t offset)
{
    return gs_err_set(m->err, GS_ERR_IO, "%s: short %s: %llu of %llu bytes at offset %llu", f->path,
                   verb, (unsigned long long)moved, (unsigned long long)asked,
                   (unsigned long long)offset);
}

/* A read must lie within the file: collective reads of Open MPI's ompio
 * report the count asked for even where the file ends sooner. */
static gs_status check_extent(gs_mpi *m, const gs_file *f, uint64_t offset, uint64_t bytes)
{
    uint64_t size = 0;
    GS_CHECK(file_size(m, f, &size));
    uint64_t held = size > offset ? size - offset : 0;
    return bytes <= held ? GS_OK : short_transfer(m, f, "read", held, bytes, offset);
}

/* Collective read or write of `bytes` at `offset`, in pieces of at most
 * gs_mpiio_max_piece bytes. Every rank makes as many *_all calls as the rank
 * with the most pieces; past its own, or after a failure, it passes 0. */
static gs_status file_transfer(gs_mpi *m, gs_file *f, uint64_t offset, void *buf,
                               uint64_t bytes, int writing)
{
    const uint64_t piece = gs_mpiio_max_piece;
    int64_t pieces = 0;
    GS_CHECK(gs_mpi_max_i64(m, (int64_t)((bytes + piece - 1) / piece), &pieces));

    const char *verb = writing ? "write" : "read";
    gs_status status = writing ? GS_OK : check_extent(m, f, offset, bytes);
    uint64_t done = 0;
    for (int64_t k = 0; k < pieces; k++) {
        uint64_t left = status == GS_OK ? bytes - done : 0;
        int count = (int)(left < piece ? left : piece);
        MPI_Offset at = (MPI_Offset)(offset + done);
        void *at_buf = count ? (char *)buf + done : buf;
        MPI_Status io;
        int err = writing ? MPI_File_write_at_all(f->fh, at, at_buf, count, MPI_BYTE, &io)
                          : MPI_File_read_at_all(f->fh, at, at_buf, count, MPI_BYTE, &io);
        if (status != GS_OK) continue;

        /* ROMIO leaves the status of an empty transfer undefined */
        int moved = 0;
        if (err == MPI_SUCCESS && count > 0) err = MPI_Get_count(&io, MPI_BYTE, &moved);
        if (err != MPI_SUCCESS)
            status = gs_mpi_fail(m, GS_ERR_IO, err, "%s: cannot %s %d bytes at offset %lld",
                                 f->path, verb, count, (long long)at);
        else if (moved != count)
            status = short_transfer(m, f, verb, (uint64_t)moved, (uint64_t)count, offset + done);
        done += (uint64_t)count;
    }
    return gs_mpi_agree(m, status);
}

gs_status gs_mpiio_read_at(gs_mpi *m, gs_file *f, uint64_t offset, void *buf,
                           uint64_t bytes)
{
    return file_transfer(m, f, offset, buf, bytes, 0);
}

gs_status gs_mpiio_write_at(gs_mpi *m, gs_file *f, uint64_t offset, const void *buf,
                            uint64_t bytes)
{
    /* file_transfer only reads from `buf` when writing */
    return file_transfer(m, f, offset, (void *)buf, bytes, 1);
}

void gs_mpiio_keep_owner(const char *temp, const struct stat *old)
{
    const int saved = errno;
    if (chown(temp, old->st_uid, old->st_gid) != 0 && chown(temp, (uid_t)-1, old->st_gid) != 0) {
        /* not ours to give: the file stays this process's */
    }
    errno = saved;
}

/* Rank 0: give the finished temporary its final name, or remove it. A file
 * it replaces keeps its permissions, and its owner and group where this
 * process may give them (root; else its own uid, and a group it is in). */
static gs_status temp_place(gs_mpi *m, const gs_file *f, int keep)
{
    if (keep) {
        struct stat sb;
        if (stat(f->path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            gs_mpiio_keep_owner(f->temp_path, &sb);
            chmod(f->temp_path, sb.st_mode & 07777);   /* after chown, which clears set-id bits */
        }
        if (rename(f->temp_path, f->path) == 0) return GS_OK;
        int cause = errno;
        unlink(f->temp_path);
        return gs_err_set(m->err, GS_ERR_IO, "%s: cannot rename %s to it: %s", f->path, f->temp_path,
                       strerror(cause));
    }
    if (unlink(f->temp_path) == 0 || errno == ENOENT) return GS_OK;
    return gs_err_set(m->err, GS_ERR_IO, "%s: cannot remove %s: %s", f->path, f->temp_path,
                   strerror(errno));
}

gs_status gs_mpiio_close(gs_mpi *m, gs_file *f, int keep)
{
    if (!f) return GS_OK;
    /* a reserved temporary that the caller wrote and closed itself has no handle */
    int err = f->fh != MPI_FILE_NULL ? MPI_File_close(&f->fh) : MPI_SUCCESS;
    gs_status status = GS_OK;
    if (err != MPI_SUCCESS) status = gs_mpi_fail(m, GS_ERR_IO, err, "%s: cannot close", f->path);
    /* the agreement also orders every rank's close before rank 0's rename */
    status = gs_mpi_agree(m, status);
    if (f->temp_path) {
        if (status == GS_OK)
            status = gs_mpi_agree(m, m->rank == 0 ? temp_place(m, f, keep) : GS_OK);
        else
            temp_discard(m, f);
    }
    file_free(f);
    return status;
}
