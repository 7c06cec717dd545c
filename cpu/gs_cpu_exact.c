/*
 * gs_cpu_exact.c - the CPU backend's --exact kernels: exact sums and prefix
 * sums of f32 and f64 in gs_exact states (gs_exact.h).
 *
 * Reductions: each thread adds its block into GS_CPU_EXACT_LANES private
 * states in carry-save form (no carry moves per element; element k goes to
 * lane k % LANES, so consecutive adds to the same digits do not wait on
 * each other), counting the adds in bulk; the lanes and the threads' states
 * are merged at the end. The order changes nothing: the sum is exact.
 *
 * Scans: two passes, as the plain blocked scan. Each thread sums its block
 * exactly, every thread merges the totals before its own onto the carry,
 * and each scans its block from there with a normalized state: each add
 * carries until the carry dies out (a few digits), and each prefix is
 * rounded from the top three digits (gs_exact_round_bits), so an element
 * costs a few dozen instructions however wide the state.
 */
#include "gs_cpu.h"

#define GS_CPU_EXACT_LANES 4

/* Elements of a thread's block taken between two counts: each lane's share
 * (plus the tail, which lane 0 takes) stays well below GS_EXACT_PENDING_MAX. */
#define GS_CPU_EXACT_BATCH ((int64_t)1 << 24)

/* sum_exact_T(in, lo, hi, acc): *acc (normalized or not) += in[lo..hi) exactly.
 * scan_exact_T(in, out, lo, hi, carry, inclusive): the scan of in[lo..hi)
 * from the exact *carry, which it leaves normalized after hi. */
#define GS_CPU_EXACT_KERNELS(T, ctype, round_from)                                             \
    static void sum_exact_##T(const void *in, int64_t lo, int64_t hi, gs_exact *acc)         \
    {                                                                                        \
        const ctype *x = in;                                                                 \
        gs_exact lane[GS_CPU_EXACT_LANES];                                                   \
        uint32_t special = 0;                                                                \
        for (int l = 0; l < GS_CPU_EXACT_LANES; l++) gs_exact_clear(&lane[l]);               \
        for (int64_t b = lo; b < hi; b += GS_CPU_EXACT_BATCH) {                              \
            const int64_t end = hi - b < GS_CPU_EXACT_BATCH ? hi : b + GS_CPU_EXACT_BATCH;   \
            const uint32_t each = (uint32_t)((end - b) / GS_CPU_EXACT_LANES + GS_CPU_EXACT_LANES);      \
            for (int l = 0; l < GS_CPU_EXACT_LANES; l++) gs_exact_count(&lane[l], each);     \
            int64_t i = b;                                                                   \
            for (; i + GS_CPU_EXACT_LANES <= end; i += GS_CPU_EXACT_LANES) {                 \
                for (int l = 0; l < GS_CPU_EXACT_LANES; l++) {                               \
                    uint64_t m;                                                              \
                    int bit, negative;                                                       \
                    const uint32_t sp = gs_exact_decode_##T(x[i + l], &m, &bit, &negative);  \
                    if (sp) special |= sp;                                                   \
                    else gs_exact_add_raw(&lane[l], m, bit, negative);                       \
                }                                                                            \
            }                                                                                \
            for (; i < end; i++) {                                                           \
                uint64_t m;                                                                  \
                int bit, negative;                                                           \
                const uint32_t sp = gs_exact_decode_##T(x[i], &m, &bit, &negative);          \
                if (sp) special |= sp;                                                       \
                else gs_exact_add_raw(&lane[0], m, bit, negative);                           \
            }                                                                                \
        }                                                                                    \
        for (int l = 0; l < GS_CPU_EXACT_LANES; l++) gs_exact_merge(acc, &lane[l]);          \
        acc->special |= special;                                                             \
    }                                                                                        \
                                                                                             \
    static void scan_exact_##T(const void *in, void *out, int64_t lo, int64_t hi,            \
                               gs_exact *carry, int inclusive)                               \
    {                                                                                        \
        const ctype *x = in;                                                                 \
        ctype *y = out;                                                                      \
        gs_exact_normalize(carry);                                                           \
        int top = gs_exact_top_digit(carry, GS_EXACT_DIGITS - 1);                            \
        for (int64_t i = lo; i < hi; i++) {                                                  \
            uint64_t m;                                                                      \
            int bit, negative;                                                               \
            const uint32_t sp = gs_exact_decode_##T(x[i], &m, &bit, &negative);              \
            if (!inclusive) y[i] = round_from(carry, top);                                   \
            if (sp) {                                                                        \
                carry->special |= sp;                                                        \
            } else {                                                                         \
                const int changed = gs_exact_add_carried(carry, m, bit, negative);           \
                top = gs_exact_top_digit(carry, changed > top ? changed : top);              \
            }                                                                                \
            if (inclusive) y[i] = round_from(carry, top);                                    \
        }                                                                                    \
    }

GS_CPU_EXACT_KERNELS(f32, float, gs_exact_round_f32_from)
GS_CPU_EXACT_KERNELS(f64, double, gs_exact_round_f64_from)

typedef void (*sum_exact_fn)(const void *in, int64_t lo, int64_t hi, gs_exact *acc);
typedef void (*scan_exact_fn)(const void *in, void *out, int64_t lo, int64_t hi, gs_exact *carry,
                              int inclusive);

void gs_cpu_reduce_exact(gs_type type, const void *in, int64_t n, gs_exact *acc)
{
    const sum_exact_fn sum = type == GS_F32 ? sum_exact_f32 : sum_exact_f64;
    const int threads = gs_cpu_team_size(n);
    if (threads == 1) {
        sum(in, 0, n, acc);
        return;
    }
    gs_exact partial[threads];
    int team = 1;
    GS_CPU_OMP(omp parallel num_threads(threads))
    {
        const int t = gs_cpu_thread_index();
        int64_t lo, hi;
        gs_cpu_split_range(0, n, gs_cpu_team_threads(), t, &lo, &hi);
        gs_exact_clear(&partial[t]);
        sum(in, lo, hi, &partial[t]);
        if (t == 0) team = gs_cpu_team_threads();
    }
    for (int t = 0; t < team; t++) gs_exact_merge(acc, &partial[t]);
}

void gs_cpu_scan_exact(gs_type type, gs_scan_kind kind, const void *in, void *out, int64_t n,
                       gs_exact *carry)
{
    const sum_exact_fn sum = type == GS_F32 ? sum_exact_f32 : sum_exact_f64;
    const scan_exact_fn scan = type == GS_F32 ? scan_exact_f32 : scan_exact_f64;
    const int inclusive = kind == GS_INCLUSIVE;
    const int threads = gs_cpu_team_size(n);
    if (threads == 1) {
        scan(in, out, 0, n, carry, inclusive);
        return;
    }
    gs_exact total[threads];
    int team = 1;
    GS_CPU_OMP(omp parallel num_threads(threads))
    {
        const int t = gs_cpu_thread_index(), threads_now = gs_cpu_team_threads();
        int64_t lo, hi;
        gs_cpu_split_range(0, n, threads_now, t, &lo, &hi);
        gs_exact_clear(&total[t]);
        sum(in, lo, hi, &total[t]);
        GS_CPU_OMP(omp barrier)
        gs_exact mine = *carry;
        for (int u = 0; u < t; u++) gs_exact_merge(&mine, &total[u]);
        scan(in, out, lo, hi, &mine, inclusive);
        if (t == 0) team = threads_now;
    }
    for (int t = 0; t < team; t++) gs_exact_merge(carry, &total[t]);
    gs_exact_normalize(carry);
}
