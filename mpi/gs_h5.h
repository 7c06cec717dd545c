/*
 * gs_h5.h - HDF5 datasets as the pipeline's file ends, through HDF5's MPI-IO
 * driver: a dataset read flat in C order, each rank its own hyperslabs, and
 * an output dataset written in a temporary copy of its file, renamed over it
 * only when every rank succeeded (gs_mpiio_reserve). Collective over m->comm
 * unless marked "local"; every step ends in gs_mpi_agree, and failures are
 * recorded in m->err with HDF5's own reason (its error stack is never
 * printed).
 *
 * A path names a file and a dataset: "NAME.h5" or "NAME.hdf5", followed by
 * ":/group/dataset" or not. Without a dataset an input file must hold
 * exactly one, and an output is "/data".
 *
 * Built without HDF5 (configure --with-hdf5), the opening functions fail
 * with a message that says so.
 */
#ifndef GS_H5_H
#define GS_H5_H

#include "gs_mpi.h"

typedef struct gs_h5 gs_h5;

/* Local: 1 when `path` names an HDF5 dataset (see above). */
int gs_h5_is_path(const char *path);
/* Local: the file part of such a path, in `file` (`cap` bytes); 0 when it
 * does not fit. */
int gs_h5_file_part(const char *path, char *file, size_t cap);

/* Open the input dataset: its element type (integers and floats of 4 and 8
 * bytes, any byte order) and element count (the product of its shape, any
 * rank; 1 for a scalar). */
gs_status gs_h5_open_read(gs_mpi *m, const char *path, gs_h5 **h, gs_type *type, int64_t *count);
/* Read `bytes` of the dataset's flat data from byte `offset` into buf, like
 * gs_mpiio_read_at: each rank its own range, including none. */
gs_status gs_h5_read_at(gs_mpi *m, gs_h5 *h, uint64_t offset, void *buf, uint64_t bytes);

/* Create the output: a 1-D dataset of `count` elements of `type` in a
 * temporary file that is a copy of the existing file, if any (its other
 * datasets kept), or a new one (an existing file that is not HDF5 is
 * replaced). Groups on the path are created; a dataset already there is
 * overwritten when it has that shape and type, refused otherwise. */
gs_status gs_h5_create(gs_mpi *m, const char *path, gs_type type, int64_t count, gs_h5 **h);
/* Write `bytes` of the output's flat data at byte `offset`, like
 * gs_mpiio_write_at. */
gs_status gs_h5_write_at(gs_mpi *m, gs_h5 *h, uint64_t offset, const void *buf, uint64_t bytes);

/* Local: 1 when the output path names the dataset the input `in` reads
 * (the same file, by device and inode, and the same dataset): the scan
 * would replace its own input. Another dataset of that file is fine: the
 * output is written in a copy of the file. */
int gs_h5_is_input(const gs_h5 *in, const char *out_path);

/* Close; for an output, `keep` = 1 (only after every rank agreed on
 * success) renames its file into place, 0 removes it. NULL is closed. */
gs_status gs_h5_close(gs_mpi *m, gs_h5 *h, int keep);

#endif /* GS_H5_H */
