/*
 * gs_cpu.c - the CPU backend: reductions, scans and the generator on host
 * memory, in parallel with OpenMP when the build has it.
 *
 * The kernels are written once, as plain C in templates that are included
 * once per instance: gs_cpu_type.inc per type of GS_TYPE_LIST (below), which
 * includes gs_cpu_kernels.inc per op, which includes gs_cpu_fold.inc for its
 * two folds. Each inclusion defines real functions (reduce_i32_sum,
 * scan_f64_max, ...) whose lines a debugger steps; their C types follow
 * from the kinds of gs_rules.h through gs_cpu_rules.h. The entry points pick
 * the instance from a table once per call; no loop switches per element.
 * This file keeps the rest: the thread team, the split, the OpenMP parts.
 *
 * Reductions: each thread folds its block into GS_CPU_LANES independent
 * accumulators (which the compiler can vectorise without reassociating
 * anything), then the lanes, and the threads' partials, are combined in
 * order.
 *
 * Scans: the two-pass blocked scan. Each thread's block is split into
 * GS_CPU_STRANDS strands; each thread reduces its strands, every thread forms
 * the exclusive scan of all strand totals serially (in the same order, so all
 * agree), and each thread scans its strands from those carries, interleaved:
 * a scan is a chain of dependent steps (4 cycles each for fp64) and
 * independent strands overlap their chains. One barrier in all: a barrier
 * per cache-sized tile would spare the second read of the input, but costs a
 * scheduler time slice whenever a thread is descheduled (oversubscribed
 * hybrid MPI+OpenMP runs): up to 10x slower on a loaded 2-core host.
 * The carry out is the fold of the strand totals, so for floats it may differ
 * from the last inclusive element by rounding, within the same bound.
 */
#ifdef _OPENMP
#include <omp.h>
#endif

#include <string.h>

#include "gs_cpu.h"
#include "gs_cpu_rules.h"
#include "gs_gen.h"

/* Independent accumulators of a reduction, of type A: enough to fill the
 * vector registers, but 128-bit ones (two general registers each) fewer,
 * lest they spill. Unrolling keeps them in registers. */
#define GS_CPU_MAX_LANES 16
#define GS_CPU_LANES(A) (sizeof(A) > 8 ? 4 : GS_CPU_MAX_LANES)
/* Elements folded into the lanes before they join the gs_acc: keeps 64-bit
 * lanes of 32-bit integer sums exact (2^24 elements * 2^32 < 2^63). */
#define GS_CPU_FOLD_BLOCK ((int64_t)1 << 24)
/* Fewest elements worth a thread: below this, starting one costs more than
 * the work it takes over. */
#define GS_CPU_MIN_PER_THREAD ((int64_t)1 << 15)
/* Thread blocks start on multiples of this many elements (>= 64 bytes), so
 * no two threads write the same cache line. */
#define GS_CPU_ALIGN 16
/* Strands a thread scans at once. */
#define GS_CPU_STRANDS 4


/* The element-wise step of each op, on any arithmetic type. min and max are
 * gs_fmin and gs_fmax written for any type (NaN propagates; for integers
 * `a != a` is false and compiles away). */
#define GS_CPU_STEP_sum(a, b) ((a) + (b))
#define GS_CPU_STEP_prod(a, b) ((a) * (b))
#define GS_CPU_STEP_min(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
#define GS_CPU_STEP_max(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))

/* ---- the kernels: generate_T, and reduce_T_O, total_T_O, scan_T_O and
 * strands_T_O for each op O, for each type T ---------------------------------- */

#define GS_CPU_T i32
#include "gs_cpu_type.inc"
#undef GS_CPU_T

#define GS_CPU_T i64
#include "gs_cpu_type.inc"
#undef GS_CPU_T

#define GS_CPU_T u32
#include "gs_cpu_type.inc"
#undef GS_CPU_T

#define GS_CPU_T u64
#include "gs_cpu_type.inc"
#undef GS_CPU_T

#define GS_CPU_T f32
#include "gs_cpu_type.inc"
#undef GS_CPU_T

#define GS_CPU_T f64
#include "gs_cpu_type.inc"
#undef GS_CPU_T

typedef gs_acc (*reduce_fn)(const void *in, int64_t lo, int64_t hi);
typedef gs_acc (*scan_fn)(const void *in, void *out, int64_t lo, int64_t hi, gs_acc carry,
                          int inclusive, int *overflow);
typedef void (*strands_fn)(const void *in, void *out, const int64_t *lo, const int64_t *hi,
                           const gs_acc *carry, int inclusive, int *overflow);
typedef void (*generate_fn)(uint64_t seed, int64_t start, void *out, int64_t lo, int64_t hi);

struct kernels {
    reduce_fn reduce, total;
    scan_fn scan;
    strands_fn strands;
};

/* The tables, by GS_TYPE_LIST: a type without its kernels does not compile. */
#define GS_CPU_ENTRY(name, o)                                                                 \
    {reduce_##name##_##o, total_##name##_##o, scan_##name##_##o, strands_##name##_##o}
#define GS_CPU_KERNEL_ROW(e, name, c_type)                                                    \
    [e] = {[GS_SUM] = GS_CPU_ENTRY(name, sum), [GS_PROD] = GS_CPU_ENTRY(name, prod),          \
           [GS_MIN] = GS_CPU_ENTRY(name, min), [GS_MAX] = GS_CPU_ENTRY(name, max)},
static const struct kernels kernel_table[GS_TYPE_COUNT][GS_OP_COUNT] = {
    GS_TYPE_LIST(GS_CPU_KERNEL_ROW)
};

#define GS_CPU_GENERATE_ROW(e, name, c_type) [e] = generate_##name,
static const generate_fn generate_table[GS_TYPE_COUNT] = {GS_TYPE_LIST(GS_CPU_GENERATE_ROW)};

/* The scan carry after the elements of carry `a`, then those of carry `b`. */
static gs_acc carry_after(gs_type type, gs_op op, gs_acc a, gs_acc b)
{
    return gs_acc_scan_carry(type, op, gs_acc_combine(type, op, a, b));
}

int gs_cpu_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* This thread's index in its team, and the team's size. */
int gs_cpu_thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

int gs_cpu_team_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* Threads worth starting for n elements. */
int gs_cpu_team_size(int64_t n)
{
    const int64_t useful = n / GS_CPU_MIN_PER_THREAD;
    const int most = gs_cpu_threads();
    return useful < 2 ? 1 : useful < most ? (int)useful : most;
}

/* Block `part` of `parts` near-equal blocks of [lo, hi), starting on
 * multiples of GS_CPU_ALIGN elements from lo. */
void gs_cpu_split_range(int64_t lo, int64_t hi, int parts, int part, int64_t *first, int64_t *end)
{
    const int64_t n = hi - lo;
    const int64_t units = n / GS_CPU_ALIGN + (n % GS_CPU_ALIGN != 0);
    const int64_t each = units / parts, extra = units % parts;
    const int64_t u0 = part * each + (part < extra ? part : extra);
    const int64_t u1 = u0 + each + (part < extra);
    *first = lo + (u0 * GS_CPU_ALIGN < n ? u0 * GS_CPU_ALIGN : n);
    *end = lo + (u1 * GS_CPU_ALIGN < n ? u1 * GS_CPU_ALIGN : n);
}

static gs_acc reduce_parallel(gs_type type, gs_op op, const void *in, int64_t n, int threads)
{
    const reduce_fn reduce = kernel_table[type][op].reduce;
    gs_acc partial[threads];
    int team = 1;
    GS_CPU_OMP(omp parallel num_threads(threads))
    {
        const int t = gs_cpu_thread_index();
        int64_t lo, hi;
        gs_cpu_split_range(0, n, gs_cpu_team_threads(), t, &lo, &hi);
        partial[t] = reduce(in, lo, hi);
        if (t == 0) team = gs_cpu_team_threads();
    }
    gs_acc total = partial[0];
    for (int t = 1; t < team; t++) total = gs_acc_combine(type, op, total, partial[t]);
    return total;
}

/* The blocked scan (see the top of the file) on `threads` threads, one
 * included. */
static gs_acc scan_blocked(gs_type type, gs_op op, int inclusive, const void *in, void *out,
                           int64_t n, gs_acc carry, int *overflow, int threads)
{
    const struct kernels *k = &kernel_table[type][op];
    gs_acc total[threads * GS_CPU_STRANDS];
    gs_acc carry_out = carry;
    int overflowed = 0;
    GS_CPU_OMP(omp parallel num_threads(threads) reduction(| : overflowed))
    {
        const int team = gs_cpu_team_threads(), t = gs_cpu_thread_index();
        int64_t block_lo, block_hi, lo[GS_CPU_STRANDS], hi[GS_CPU_STRANDS];
        gs_cpu_split_range(0, n, team, t, &block_lo, &block_hi);
        for (int j = 0; j < GS_CPU_STRANDS; j++) {
            gs_cpu_split_range(block_lo, block_hi, GS_CPU_STRANDS, j, &lo[j], &hi[j]);
            total[t * GS_CPU_STRANDS + j] = gs_acc_scan_carry(type, op, k->total(in, lo[j], hi[j]));
        }
        GS_CPU_OMP(omp barrier)
        gs_acc base = carry, mine[GS_CPU_STRANDS];
        for (int u = 0; u < team * GS_CPU_STRANDS; u++) {
            if (u / GS_CPU_STRANDS == t) mine[u % GS_CPU_STRANDS] = base;
            base = carry_after(type, op, base, total[u]);
        }
        k->strands(in, out, lo, hi, mine, inclusive, &overflowed);
        if (t == 0) carry_out = base;
    }
    *overflow = overflowed;
    return carry_out;
}

gs_acc gs_cpu_reduce(gs_type type, gs_op op, const void *in, int64_t n)
{
    const int threads = gs_cpu_team_size(n);
    if (threads > 1) return reduce_parallel(type, op, in, n, threads);
    return kernel_table[type][op].reduce(in, 0, n);
}

void gs_cpu_scan(gs_type type, gs_op op, gs_scan_kind kind, const void *in, void *out,
                 int64_t n, gs_acc carry_in, gs_acc *carry_out, int *overflow)
{
    const int inclusive = kind == GS_INCLUSIVE;
    int overflowed = 0;
    gs_acc carry;
    if (n >= GS_CPU_MIN_PER_THREAD)
        carry = scan_blocked(type, op, inclusive, in, out, n, carry_in, &overflowed, gs_cpu_team_size(n));
    else
        carry = kernel_table[type][op].scan(in, out, 0, n, carry_in, inclusive, &overflowed);
    if (carry_out) *carry_out = carry;
    if (overflow) *overflow = overflowed;
}

void gs_cpu_generate(gs_type type, uint64_t seed, int64_t start, int64_t n, void *out)
{
    const generate_fn generate = generate_table[type];
    GS_CPU_OMP(omp parallel num_threads(gs_cpu_team_size(n)))
    {
        int64_t lo, hi;
        gs_cpu_split_range(0, n, gs_cpu_team_threads(), gs_cpu_thread_index(), &lo, &hi);
        generate(seed, start, out, lo, hi);
    }
}

/* Pieces of 1 MiB: large enough for memcpy's fast path, small enough to
 * spread a few megabytes over every thread. */
#define GS_CPU_COPY_PIECE ((size_t)1 << 20)

void gs_cpu_copy(void *dst, const void *src, size_t bytes)
{
    const int64_t pieces = (int64_t)((bytes + GS_CPU_COPY_PIECE - 1) / GS_CPU_COPY_PIECE);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t i = 0; i < pieces; i++) {
        size_t at = (size_t)i * GS_CPU_COPY_PIECE;
        size_t len = bytes - at < GS_CPU_COPY_PIECE ? bytes - at : GS_CPU_COPY_PIECE;
        memcpy((char *)dst + at, (const char *)src + at, len);
    }
}
