/*
 * gs_pipe_io.c - the pipeline's ends (gs_pipe.h): where chunks come from and
 * go to on the host. Files are read and written collectively with MPI-IO at
 * the chunk's byte offset, HDF5 datasets at that byte of their flat data
 * (gs_h5.h); the caller's pageable memory is copied on the host's threads;
 * the generator fills the chunk. A rank that already failed
 * (`st`) still makes every collective call, with nothing to move.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "gs_cpu.h"
#include "gs_pipe.h"

gs_status gs_pipe_read(gs_pipe *p, int64_t k, int64_t m, void *dst, gs_status st, gs_phase phase)
{
    const double t0 = gs_now();
    const size_t bytes = (size_t)m * p->in_size;
    if (p->in.kind == GS_IO_FILE) {
        const uint64_t at = p->in.offset + (uint64_t)(k * p->chunk) * p->in_size, n = st == GS_OK ? bytes : 0;
        gs_status rs = p->in.h5 ? gs_h5_read_at(p->mpi, p->in.h5, at, dst, n)
                                : gs_mpiio_read_at(p->mpi, p->in.file, at, dst, n);
        if (st == GS_OK) st = rs;
    } else if (st == GS_OK && p->in.kind == GS_IO_HOST) {
        gs_cpu_copy(dst, (const char *)p->in.host + (size_t)(k * p->chunk) * p->in_size, bytes);
    } else if (st == GS_OK && p->in.kind == GS_IO_GENERATE) {
        gs_cpu_generate(p->type, p->in.seed, p->in.start + k * p->chunk, m, dst);
    }
    p->t[phase] += gs_now() - t0;
    return st;
}

gs_status gs_pipe_write(gs_pipe *p, int64_t j, int64_t m, const void *src, gs_status st)
{
    const double t0 = gs_now();
    const size_t bytes = (size_t)m * p->out_size;
    if (p->out.kind == GS_IO_FILE) {
        const uint64_t at = p->out.offset + (uint64_t)(j * p->chunk) * p->out_size, n = st == GS_OK ? bytes : 0;
        gs_status ws = p->out.h5 ? gs_h5_write_at(p->mpi, p->out.h5, at, src, n)
                                 : gs_mpiio_write_at(p->mpi, p->out.file, at, src, n);
        if (st == GS_OK) st = ws;
    } else if (st == GS_OK && p->out.kind == GS_IO_HOST) {
        char *dst = (char *)p->out.host + (size_t)(j * p->chunk) * p->out_size;
        if (dst != src) gs_cpu_copy(dst, src, bytes);
    }
    p->t[GS_PHASE_WRITE] += gs_now() - t0;
    return st;
}
