/*
 * gs_cpu.c - the CPU backend: reductions, scans and the generator on host
 * memory, in parallel with OpenMP when the build has it.
 *
 * One loop template serves every (type, op). GS_CPU_TYPES lists each type
 * with the C types that its rules in gs_rules.h call for, GS_CPU_OPS expands
 * a type into its four ops, and GS_CPU_KERNELS instantiates the kernels of
 * one (type, op) from the element-wise step of its op. The entry points pick
 * the instance from a table once per call; no loop switches per element.
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
#include "gs_gen.h"

#define GS_CPU_STRINGIFY(x) #x
/* Unroll the next loop n times (n: a macro is expanded first). */
#define GS_CPU_UNROLL(n) _Pragma(GS_CPU_STRINGIFY(GCC unroll n))

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

/* OpenMP directives, which vanish in a serial build (one thread, no
 * unknown-pragma warnings). */
#ifdef _OPENMP
#define GS_CPU_OMP(directive) _Pragma(#directive)
#else
#define GS_CPU_OMP(directive)
#endif

/* The element-wise steps. MIN and MAX are gs_fmin and gs_fmax written for
 * any arithmetic type (NaN propagates; for integers `a != a` is false and
 * compiles away). */
#define GS_CPU_ADD(a, b) ((a) + (b))
#define GS_CPU_MUL(a, b) ((a) * (b))
#define GS_CPU_MIN(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))
#define GS_CPU_MAX(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))

/* Overflow of one prefix-sum step s = a + b, all three uint64_t. */
#define GS_CPU_OVF_SIGNED(a, b, s) gs_add_i64_overflows((int64_t)(a), (int64_t)(b), (int64_t)(s))
#define GS_CPU_OVF_UNSIGNED(a, b, s) gs_add_u64_overflows((a), (s))
#define GS_CPU_OVF_NONE(a, b, s) 0

/*
 * The types and the C types of their rules (gs_rules.h):
 *   OUT   element of sum and prod scans (gs_scan_output_type)
 *   WIDE  the carry of sum and prod scans and the accumulator of products,
 *         as gs_acc member WM: integers wrap in uint64_t, floats use fp64
 *   SUML  lane of sum reductions, as member SM: exact for integers (64-bit
 *         lanes for 32-bit types within GS_CPU_FOLD_BLOCK, else 128-bit)
 *   MM    gs_acc member of min and max, which run on the element type itself
 *         (exact, so the same as in fp64 for floats)
 *   OVF   the overflow check of a prefix-sum step
 */
/*    sfx  enum    T         OUT       WIDE      WM SUML      SM MM OVF */
#define GS_CPU_TYPES(X)                                                                 \
    X(i32, GS_I32, int32_t,  int64_t,  uint64_t, u, int64_t,  s, i, GS_CPU_OVF_SIGNED)   \
    X(i64, GS_I64, int64_t,  int64_t,  uint64_t, u, gs_i128,  s, i, GS_CPU_OVF_SIGNED)   \
    X(u32, GS_U32, uint32_t, uint64_t, uint64_t, u, uint64_t, w, u, GS_CPU_OVF_UNSIGNED) \
    X(u64, GS_U64, uint64_t, uint64_t, uint64_t, u, gs_u128,  w, u, GS_CPU_OVF_UNSIGNED) \
    X(f32, GS_F32, float,    float,    double,   f, double,   f, f, GS_CPU_OVF_NONE)     \
    X(f64, GS_F64, double,   double,   double,   f, double,   f, f, GS_CPU_OVF_NONE)

/* The four ops of a type: reduction lanes R (member RM), scan carry P
 * (member PM), scan output O, step, overflow check. */
#define GS_CPU_OPS(sfx, E, T, OUT, WIDE, WM, SUML, SM, MM, OVF)                               \
    GS_CPU_KERNELS(sfx##_sum, E, GS_SUM, T, SUML, SM, WIDE, WM, OUT, GS_CPU_ADD, OVF)          \
    GS_CPU_KERNELS(sfx##_prod, E, GS_PROD, T, WIDE, WM, WIDE, WM, OUT, GS_CPU_MUL,             \
                   GS_CPU_OVF_NONE)                                                            \
    GS_CPU_KERNELS(sfx##_min, E, GS_MIN, T, T, MM, T, MM, T, GS_CPU_MIN, GS_CPU_OVF_NONE)      \
    GS_CPU_KERNELS(sfx##_max, E, GS_MAX, T, T, MM, T, MM, T, GS_CPU_MAX, GS_CPU_OVF_NONE)      \
    GS_CPU_GENERATE(sfx, T)

/*
 * fn: the fold of elements [lo, hi) of (type E, op OP) into lanes of type A,
 * returned as gs_acc member AM; lane by lane, block by block.
 */
#define GS_CPU_FOLD(fn, E, OP, T, A, AM, STEP)                                                \
    static gs_acc fn(const void *in, int64_t lo, int64_t hi)                                  \
    {                                                                                         \
        enum { lanes = GS_CPU_LANES(A) };                                                     \
        const T *x = in;                                                                      \
        gs_acc acc = gs_acc_identity(E, OP);                                                  \
        const A identity = (A)acc.AM;                                                         \
        for (int64_t first = lo; first < hi; first += GS_CPU_FOLD_BLOCK) {                    \
            const int64_t end = hi - first > GS_CPU_FOLD_BLOCK ? first + GS_CPU_FOLD_BLOCK : hi; \
            A lane[lanes];                                                                    \
            for (int j = 0; j < lanes; j++) lane[j] = identity;                               \
            int64_t i = first;                                                                \
            for (; i + lanes <= end; i += lanes) {                                            \
                GS_CPU_UNROLL(GS_CPU_MAX_LANES)                                               \
                for (int j = 0; j < lanes; j++) lane[j] = STEP(lane[j], (A)x[i + j]);         \
            }                                                                                 \
            for (; i < end; i++) lane[0] = STEP(lane[0], (A)x[i]);                            \
            for (int j = 1; j < lanes; j++) lane[0] = STEP(lane[0], lane[j]);                 \
            gs_acc part;                                                                      \
            part.w = 0;                                                                       \
            part.AM = lane[0];                                                                \
            acc = gs_acc_combine(E, OP, acc, part);                                           \
        }                                                                                     \
        return acc;                                                                           \
    }

/*
 * The kernels of one (type, op) on elements [lo, hi):
 *   reduce_NAME   the reduction partial (lanes R, exact for integer sums);
 *   total_NAME    the same fold in the scan's carry type P (integer sums
 *                 wrap: all a scan carry keeps), cheaper for 64-bit sums;
 *   scan_NAME     the serial scan from `carry`; returns the carry after hi;
 *   strands_NAME  GS_CPU_STRANDS scans at once, strand j on [lo[j], hi[j])
 *                 from carry[j]: steps interleave over the common length,
 *                 then each strand finishes alone.
 * Each element is read before its output is written, so in == out works.
 */
#define GS_CPU_KERNELS(name, E, OP, T, R, RM, P, PM, O, STEP, OVF)                            \
    GS_CPU_FOLD(reduce_##name, E, OP, T, R, RM, STEP)                                         \
    GS_CPU_FOLD(total_##name, E, OP, T, P, PM, STEP)                                          \
    static gs_acc scan_##name(const void *in, void *out, int64_t lo, int64_t hi,              \
                              gs_acc carry, int inclusive, int *overflow)                     \
    {                                                                                         \
        const T *x = in;                                                                      \
        O *y = out;                                                                           \
        P prefix = (P)carry.PM;                                                               \
        int overflowed = 0;                                                                   \
        for (int64_t i = lo; i < hi; i++) {                                                   \
            const P v = (P)x[i];                                                              \
            const P next = STEP(prefix, v);                                                   \
            overflowed |= OVF(prefix, v, next);                                               \
            y[i] = (O)(inclusive ? next : prefix);                                            \
            prefix = next;                                                                    \
        }                                                                                     \
        *overflow |= overflowed;                                                              \
        gs_acc c;                                                                             \
        c.w = 0;                                                                              \
        c.PM = prefix;                                                                        \
        return c;                                                                             \
    }                                                                                         \
    static void strands_##name(const void *in, void *out, const int64_t *lo, const int64_t *hi, \
                               const gs_acc *carry, int inclusive, int *overflow)             \
    {                                                                                         \
        const T *x = in;                                                                      \
        O *y = out;                                                                           \
        P prefix[GS_CPU_STRANDS];                                                             \
        int64_t common = hi[0] - lo[0];                                                       \
        for (int j = 0; j < GS_CPU_STRANDS; j++) {                                            \
            prefix[j] = (P)carry[j].PM;                                                       \
            if (hi[j] - lo[j] < common) common = hi[j] - lo[j];                               \
        }                                                                                     \
        int overflowed = 0;                                                                   \
        for (int64_t i = 0; i < common; i++) {                                                \
            GS_CPU_UNROLL(GS_CPU_STRANDS)                                                     \
            for (int j = 0; j < GS_CPU_STRANDS; j++) {                                        \
                const P v = (P)x[lo[j] + i];                                                  \
                const P next = STEP(prefix[j], v);                                            \
                overflowed |= OVF(prefix[j], v, next);                                        \
                y[lo[j] + i] = (O)(inclusive ? next : prefix[j]);                             \
                prefix[j] = next;                                                             \
            }                                                                                 \
        }                                                                                     \
        for (int j = 0; j < GS_CPU_STRANDS; j++) {                                            \
            gs_acc c;                                                                         \
            c.w = 0;                                                                          \
            c.PM = prefix[j];                                                                 \
            scan_##name(in, out, lo[j] + common, hi[j], c, inclusive, &overflowed);           \
        }                                                                                     \
        *overflow |= overflowed;                                                              \
    }

#define GS_CPU_GENERATE(sfx, T)                                                               \
    static void generate_##sfx(uint64_t seed, int64_t start, void *out, int64_t lo, int64_t hi) \
    {                                                                                         \
        T *y = out;                                                                           \
        for (int64_t i = lo; i < hi; i++) y[i] = gs_gen_##sfx(seed, (uint64_t)(start + i));   \
    }

GS_CPU_TYPES(GS_CPU_OPS)

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

#define GS_CPU_ENTRY(fn) {reduce_##fn, total_##fn, scan_##fn, strands_##fn}
#define GS_CPU_KERNEL_ROW(sfx, E, ...)                                                        \
    [E] = {[GS_SUM] = GS_CPU_ENTRY(sfx##_sum), [GS_PROD] = GS_CPU_ENTRY(sfx##_prod),          \
           [GS_MIN] = GS_CPU_ENTRY(sfx##_min), [GS_MAX] = GS_CPU_ENTRY(sfx##_max)},
static const struct kernels kernel_table[GS_TYPE_COUNT][GS_OP_COUNT] = {
    GS_CPU_TYPES(GS_CPU_KERNEL_ROW)
};

#define GS_CPU_GENERATE_ROW(sfx, E, ...) [E] = generate_##sfx,
static const generate_fn generate_table[GS_TYPE_COUNT] = {GS_CPU_TYPES(GS_CPU_GENERATE_ROW)};

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
static int thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static int team_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* Threads worth starting for n elements. */
static int team_size(int64_t n)
{
    const int64_t useful = n / GS_CPU_MIN_PER_THREAD;
    const int most = gs_cpu_threads();
    return useful < 2 ? 1 : useful < most ? (int)useful : most;
}

/* Block `part` of `parts` near-equal blocks of [lo, hi), starting on
 * multiples of GS_CPU_ALIGN elements from lo. */
static void split_range(int64_t lo, int64_t hi, int parts, int part, int64_t *first, int64_t *end)
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
        const int t = thread_index();
        int64_t lo, hi;
        split_range(0, n, team_threads(), t, &lo, &hi);
        partial[t] = reduce(in, lo, hi);
        if (t == 0) team = team_threads();
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
        const int team = team_threads(), t = thread_index();
        int64_t block_lo, block_hi, lo[GS_CPU_STRANDS], hi[GS_CPU_STRANDS];
        split_range(0, n, team, t, &block_lo, &block_hi);
        for (int j = 0; j < GS_CPU_STRANDS; j++) {
            split_range(block_lo, block_hi, GS_CPU_STRANDS, j, &lo[j], &hi[j]);
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
    const int threads = team_size(n);
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
        carry = scan_blocked(type, op, inclusive, in, out, n, carry_in, &overflowed, team_size(n));
    else
        carry = kernel_table[type][op].scan(in, out, 0, n, carry_in, inclusive, &overflowed);
    if (carry_out) *carry_out = carry;
    if (overflow) *overflow = overflowed;
}

void gs_cpu_generate(gs_type type, uint64_t seed, int64_t start, int64_t n, void *out)
{
    const generate_fn generate = generate_table[type];
    GS_CPU_OMP(omp parallel num_threads(team_size(n)))
    {
        int64_t lo, hi;
        split_range(0, n, team_threads(), thread_index(), &lo, &hi);
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
