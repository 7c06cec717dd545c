/*
 * gs_mpi.h - everything MPI, behind its own handle: communicator set-up, the
 * node-local rank that picks the GPU, error agreement, typed combines of
 * partials and carries, and MPI-IO on shards. Depends only on the status
 * layer (gs_status.h) and the type rules (gs_rules.h). All functions here
 * are collective over m->comm unless marked "local"; failures are recorded
 * in m->err.
 */
#ifndef GS_MPI_H
#define GS_MPI_H

#include <mpi.h>

#include "gs_exact.h"
#include "gs_rules.h"
#include "gs_status.h"

struct stat;   /* gs_mpiio_keep_owner takes a pointer to one */

typedef struct gs_mpi {
    MPI_Comm comm;          /* our duplicate of the caller's communicator */
    MPI_Comm node_comm;     /* the ranks sharing this node */
    int rank, size, local_rank, local_size;
    gs_err *err;            /* where this rank's failures are recorded */
} gs_mpi;

/* Fill m (a duplicate of `comm`, the node communicator, ranks and sizes);
 * failures go to `err`, whose rank is set as soon as it is known. On failure
 * nothing stays allocated. */
gs_status gs_mpi_setup(gs_mpi *m, MPI_Comm comm, gs_err *err);
void gs_mpi_teardown(gs_mpi *m);

/* Local. Record a failed MPI call on this rank: `status` with the message
 * "<fmt...>: <MPI's error string for mpi_error>". Returns `status`. */
gs_status gs_mpi_fail(gs_mpi *m, gs_status status, int mpi_error, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Local. The device this rank binds: `requested` when >= 0; the only device
 * when exactly one is visible (SLURM giving each task its own GPU); else the
 * node-local rank modulo the device count. */
int gs_mpi_pick_device(int local_rank, int device_count, int requested);

/* Agree on the outcome of a step. Every rank passes its own status; every
 * rank returns the same one: GS_OK when all succeeded, else the status of the
 * lowest failing rank, whose message (m->err) is copied to every rank. */
gs_status gs_mpi_agree(gs_mpi *m, gs_status mine);
/* gs_mpi_agree, and in the same single reduction whether the ranks hold
 * the same `count` (at most GS_MPI_AGREE_VALUES) values: bit i of *differ
 * (unless NULL) is set on every rank when values[i] differs between them. A
 * count out of range is this rank's GS_ERR_ARG (the values are not
 * compared), agreed on like any failure. */
#define GS_MPI_AGREE_VALUES 8
gs_status gs_mpi_agree_values(gs_mpi *m, gs_status mine, const int64_t *values, int count, unsigned *differ);
/* gs_mpi_agree, and that every rank made the same call: `call` encodes what
 * must match (operation, type, kind); where it differs, every rank returns
 * GS_ERR_ARG with one message that says so, before the type-dependent steps
 * that would mismatch. */
gs_status gs_mpi_agree_call(gs_mpi *m, gs_status mine, int64_t call);

/* Combine reduction partials of (type, op) over all ranks, in place; every
 * rank gets the result. Builtin MPI ops where they match the semantics,
 * user-defined ops for 128-bit integer sums and NaN-propagating min/max. */
gs_status gs_mpi_allreduce_acc(gs_mpi *m, gs_type type, gs_op op, gs_acc *acc);

/* The scan offset of this rank: the combination of the 64-bit scan carries
 * (gs_acc_scan_carry) of all lower ranks, the identity on rank 0. */
gs_status gs_mpi_exscan_carry(gs_mpi *m, gs_type type, gs_op op, gs_acc local,
                              gs_acc *offset);

/* --exact: the exact sum of every rank's state, in place, on every rank
 * (a user-defined op on the gs_exact's bytes). */
gs_status gs_mpi_allreduce_exact(gs_mpi *m, gs_exact *acc);
/* --exact: the exact sum of the states of all lower ranks (zero on rank 0). */
gs_status gs_mpi_exscan_exact(gs_mpi *m, const gs_exact *local, gs_exact *offset);

/* min/avg/max over ranks of `count` doubles (for phase timings). */
gs_status gs_mpi_stats(gs_mpi *m, const double *mine, int count, double *min,
                       double *avg, double *max);

/* Sum of a 64-bit count over ranks. */
gs_status gs_mpi_sum_i64(gs_mpi *m, int64_t mine, int64_t *total);
/* Largest of a 64-bit count over ranks. */
gs_status gs_mpi_max_i64(gs_mpi *m, int64_t mine, int64_t *max);
/* Sum of doubles over ranks, in place (float error-bound terms). */
gs_status gs_mpi_sum_f64(gs_mpi *m, double *values, int count);
/* Exclusive prefix sum of a double over ranks (0 on rank 0). */
gs_status gs_mpi_exscan_f64(gs_mpi *m, double mine, double *offset);
/* Every rank's `bytes` bytes, gathered in rank order on every rank. */
gs_status gs_mpi_allgather_bytes(gs_mpi *m, const void *mine, size_t bytes, void *all);
/* Collective over the node's ranks (m->node_comm): bits[0..bytes) becomes
 * the bitwise OR of every node-local rank's bits (CPU masks). */
gs_status gs_mpi_node_or_bytes(gs_mpi *m, unsigned char *bits, size_t bytes);

/* ---- MPI-IO ------------------------------------------------------------ */
typedef struct gs_file gs_file;

/* Open `path` for reading on every rank. The message names the file. */
gs_status gs_mpiio_open_read(gs_mpi *m, const char *path, gs_file **f);
/* Local: a descriptor holding a shared lock on the file at `path` (close()
 * it to let go), or -1: a file a run reads this way is never removed as a
 * dead run's temporary. gs_mpiio_open_read takes one for its file. */
int gs_mpiio_guard_input(const char *path);
/* Size of the file in bytes. */
gs_status gs_mpiio_size(gs_mpi *m, gs_file *f, uint64_t *bytes);
/* Read `bytes` at byte `offset` into buf: collective; correct beyond 2 GiB
 * (the request is split into pieces whose counts fit an int). Each rank may
 * pass its own offset and size, including 0. */
gs_status gs_mpiio_read_at(gs_mpi *m, gs_file *f, uint64_t offset, void *buf,
                           uint64_t bytes);

/* Create a temporary file beside `final_path` (same folder) for writing
 * `bytes` (0: unknown; UINT64_MAX: a saturated sum, 2^64 or more). Refused
 * before anything is written: a final path
 * that is a folder or exists as anything but a regular file, a folder that
 * takes no new file, more bytes than a file offset holds or than the file
 * system has free. */
gs_status gs_mpiio_create(gs_mpi *m, const char *final_path, uint64_t bytes, gs_file **f);
/* gs_mpiio_create without opening the temporary, for a library that opens
 * gs_mpiio_temp_path(f) itself (HDF5: gs_h5.c) and closes it before
 * gs_mpiio_close. `copy_existing` = 1: the temporary starts as a copy of the
 * file at the final path, if there is one (the output adds to that file). */
gs_status gs_mpiio_reserve(gs_mpi *m, const char *final_path, uint64_t bytes, int copy_existing,
                           gs_file **f);
/* Local. The temporary's path. */
const char *gs_mpiio_temp_path(const gs_file *f);
/* Collective write of `bytes` at byte `offset`, like gs_mpiio_read_at. */
gs_status gs_mpiio_write_at(gs_mpi *m, gs_file *f, uint64_t offset, const void *buf,
                            uint64_t bytes);
/* Close; for a file from gs_mpiio_create, `keep` = 1 renames it to its final
 * path (call only after every rank agreed on success), 0 deletes it. */
gs_status gs_mpiio_close(gs_mpi *m, gs_file *f, int keep);

/* Open MPI's I/O components overflow fixed buffers built from long file
 * names (gs_mpiio.c says which): a name longer than 128 characters is
 * opened through a symbolic link to it in a private folder of TMPDIR,
 * removed as soon as the file is open. Local. */
typedef struct gs_mpiio_route {
    char dir[96];     /* the private folder; "" when the name is used as it is */
    char link[104];   /* dir + "/f" */
} gs_mpiio_route;
/* The name to open `path` by (`path` itself, or the link); `shown` names the
 * file in messages. */
gs_status gs_mpiio_route_make(gs_mpi *m, const char *path, const char *shown, gs_mpiio_route *r,
                              const char **name);
/* Remove the link and its folder, if any: call once the open returned. */
void gs_mpiio_route_remove(gs_mpiio_route *r);

/* Local and async-signal-safe: remove the temporaries of the files this
 * process is writing (rank 0's), for a handler of SIGINT and SIGTERM that
 * then ends the process. A run killed outright leaves its temporary; the
 * next run writing the same output removes it (gs_mpiio.c says how). */
void gs_mpiio_discard_temporaries(void);

/* Local: give `temp`, about to be renamed over the regular file `old`
 * describes, that file's owner and group where this process may (root;
 * else its own uid, and a group it is in); otherwise it stays this
 * process's. errno is left as it was. */
void gs_mpiio_keep_owner(const char *temp, const struct stat *old);

/* Test hook. Local. The largest byte count of one MPI-IO call (default and
 * maximum 1 GiB; 0 restores the default), so that tests can split small
 * transfers into many pieces. */
void gs_mpiio_set_max_piece(uint64_t bytes);

#endif /* GS_MPI_H */
