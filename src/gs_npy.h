/*
 * gs_npy.h - the .npy format (NumPy's NEP 1): parse and write headers.
 * Pure functions on byte buffers; the file I/O is MPI-IO's (mpi/).
 *
 * Accepted: versions 1.0, 2.0 and 3.0; descr '<i4' '<i8' '<u4' '<u8' '<f4'
 * '<f8' (and '|' or '=' byte order on little-endian machines where NumPy
 * writes it); any shape, C order, or Fortran order when at most one
 * dimension exceeds 1 (the same flat order). Everything else is rejected
 * with a message that says why: big-endian data, complex, strings, objects,
 * structured dtypes, Fortran-ordered N-D arrays, malformed headers.
 */
#ifndef GS_NPY_H
#define GS_NPY_H

#include <stddef.h>
#include <stdint.h>
#include "gpuscan.h"

/* Enough bytes to hold any header we accept (the prelude plus the dict). */
#define GS_NPY_MAX_HEADER 65536

typedef struct gs_npy_header {
    gs_type type;
    int64_t count;          /* product of the shape (1 for shape ()) */
    uint64_t data_offset;   /* bytes from the start of the file to the data */
    int ndim;
} gs_npy_header;

/* Parse the header at the start of `buf` (`len` bytes, possibly the whole
 * file prefix up to GS_NPY_MAX_HEADER). On failure writes a message to `err`
 * (without the file name) and returns GS_ERR_FORMAT. */
gs_status gs_npy_parse(const void *buf, size_t len, gs_npy_header *h, char *err,
                       size_t errlen);

/* Write a version 1.0 header (a 1-D dict is far below its 65535-byte limit) for a 1-D little-endian
 * array of `count` elements of `type` into buf; the header length is a
 * multiple of 64 bytes. Returns the header length, or 0 if `cap` is too
 * small. */
size_t gs_npy_format(void *buf, size_t cap, gs_type type, int64_t count);

#endif /* GS_NPY_H */
