/*
 * gs_cpu.h - the CPU backend: local reductions and scans on host memory,
 * parallel with OpenMP when the build has it. Every (type, op) follows the
 * rules of gs_rules.h, exactly as the CUDA backend does.
 */
#ifndef GS_CPU_H
#define GS_CPU_H

#include "gs_exact.h"
#include "gs_rules.h"

/* OpenMP directives, which vanish in a serial build (one thread, no
 * unknown-pragma warnings). */
#ifdef _OPENMP
#define GS_CPU_OMP(directive) _Pragma(#directive)
#else
#define GS_CPU_OMP(directive)
#endif

#define GS_CPU_STRINGIFY(x) #x
/* Unroll the next loop n times (n: a macro is expanded first). */
#define GS_CPU_UNROLL(n) _Pragma(GS_CPU_STRINGIFY(GCC unroll n))

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

/* --exact (gs_exact.h), type f32 or f64: *acc += the exact sum of in[0..n). */
void gs_cpu_reduce_exact(gs_type type, const void *in, int64_t n, gs_exact *acc);

/* --exact scan: out[i] = the exact *carry + in[0] + ... + in[i] (exclusive:
 * up to in[i-1]) rounded to nearest even in the element type, then *carry
 * += the exact sum of in[0..n). in == out is allowed. */
void gs_cpu_scan_exact(gs_type type, gs_scan_kind kind, const void *in, void *out, int64_t n,
                       gs_exact *carry);

/* For tests: 0 keeps the exact kernels to the 2-lane vectors every CPU
 * runs, 1 (the default) lets them use wider ones where the CPU has them. */
void gs_cpu_exact_allow_wide(int allow);

/* Fill out[0..n) with elements [start, start+n) of the generated array. */
void gs_cpu_generate(gs_type type, uint64_t seed, int64_t start, int64_t n, void *out);

/* dst = src over the backend's threads: one thread's memcpy falls well
 * short of the memory's bandwidth. */
void gs_cpu_copy(void *dst, const void *src, size_t bytes);

/* Threads the backend uses (1 without OpenMP): the calling thread's
 * OpenMP setting (omp_get_max_threads), which gs_cpu_set_team sizes. */
int gs_cpu_threads(void);

/* The thread team of the kernels (gs_cpu.c): threads worth starting for n
 * elements; inside a parallel region, this thread's index and the team's
 * size; block `part` of `parts` near-equal blocks of [lo, hi), aligned so
 * that no two threads write the same cache line. */
int gs_cpu_team_size(int64_t n);
int gs_cpu_thread_index(void);
int gs_cpu_team_threads(void);
void gs_cpu_split_range(int64_t lo, int64_t hi, int parts, int part, int64_t *first, int64_t *end);

/* ---- threads per rank (gs_cpu_threads.c) ---- */

/* Bytes of a CPU mask: bit i for CPU i, as many CPUs as a cpu_set_t. */
#define GS_CPU_MASK_BYTES 128

/* Threads for a rank that may run on `mine` CPUs when the `local_size`
 * ranks of its node may run on `node` CPUs together: its share of the
 * node's CPUs, at most its own, at least 1. */
int gs_cpu_rank_threads(int mine, int node, int local_size);

/* The CPUs this process may run on (sched_getaffinity; else every online
 * CPU) as a mask of `bytes` bytes, bit i for CPU i; returns their number. */
int gs_cpu_affinity(unsigned char *mask, size_t bytes);

/* The number of bits set in mask[0..bytes). */
int gs_cpu_mask_count(const unsigned char *mask, size_t bytes);

/* Set the calling thread's OpenMP team to gs_cpu_rank_threads(mine, node,
 * local_size), unless OMP_NUM_THREADS is set (the user's choice stands).
 * Returns gs_cpu_threads() after it. */
int gs_cpu_set_team(int mine, int node, int local_size);

#endif /* GS_CPU_H */
