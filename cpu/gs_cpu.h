/*
 * gs_cpu.h - the CPU backend: local reductions and scans on host memory,
 * parallel with OpenMP when the build has it. Every (type, op) follows the
 * rules of gs_rules.h, exactly as the CUDA backend does.
 */
#ifndef GS_CPU_H
#define GS_CPU_H

#include "gs_rules.h"

/* The reduction partial of in[0..n) (the identity when n == 0). */
gs_acc gs_cpu_reduce(gs_type type, gs_op op, const void *in, int64_t n);

/* Scan of in[0..n) into out[0..n) (elements of gs_scan_output_type), starting
 * from `carry_in` (a 64-bit scan carry: the identity, or the combined value of
 * everything before in[0]). Returns the carry after the last element in
 * *carry_out when not NULL, and sets *overflow to 1 when a 64-bit integer
 * prefix sum overflowed, else 0. in == out is allowed when the input and
 * output types have the same size. */
void gs_cpu_scan(gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                 int64_t n, gs_acc carry_in, gs_acc *carry_out, int *overflow);

/* Fill out[0..n) with elements [start, start+n) of the generated array. */
void gs_cpu_generate(gs_type type, uint64_t seed, int64_t start, int64_t n, void *out);

/* dst = src over the backend's threads: one thread's memcpy falls well
 * short of the memory's bandwidth. */
void gs_cpu_copy(void *dst, const void *src, size_t bytes);

/* Threads the backend uses (1 without OpenMP). */
int gs_cpu_threads(void);

#endif /* GS_CPU_H */
