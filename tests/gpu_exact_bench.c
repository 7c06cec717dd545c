/*
 * gpu_exact_bench.c - the exact sums' cost on the GPU (tests/gpu_exact.sh):
 * for f32 and f64 at 2^LOG2N elements, on the generator's data, normally
 * distributed data, data whose exponents span the whole range with random
 * signs and integers 0..1023 (counts: many of their prefixes are exact
 * ties of f32's rounding), the median time of the plain and of the exact
 * reduction and inclusive scan (gs_cuda.h's default kernels,
 * gs_cuda_exact.h), and the ratio plain/exact (1.0: as fast; the targets
 * of issue #13 are >= 0.9 for reductions, >= 0.8 for scans on generator
 * and normal data, >= 0.5 for full-range reductions). Each row also prints
 * the exact and plain results so that a wrong exact kernel shows at once.
 *
 * usage: gpu_exact_bench [LOG2N (28)] [ITERS (10)] [auto|short|long: the
 *        f64 scans' tiles, gs_cuda_set_exact_tiles (auto)] [DATA: all,
 *        generator, normal, full or integer (all); one alone suits a
 *        profiler] [TYPE: all, f32 or f64 (all)]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cuda.h"
#include "gs_cuda_exact.h"
#include "gs_exact.h"

static gs_cuda *gpu;

#define CHECK(call)                                                                         \
    do {                                                                                    \
        if ((call) != GS_OK) {                                                              \
            fprintf(stderr, "gpu_exact_bench: %s: %s\n", #call, gs_cuda_error(gpu));        \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double unit(uint64_t i, uint64_t salt) { return (double)(mix(i * 2 + salt) >> 11) * 0x1p-53; }

enum { DATA_GENERATOR, DATA_NORMAL, DATA_FULL_RANGE, DATA_INTEGER, DATA_COUNT };
/* each kind of data: its DATA on the command line and its label in the table */
static const struct {
    const char *arg, *label;
} data_kinds[DATA_COUNT] = {
    {"generator", "generator"}, {"normal", "normal"}, {"full", "full range"}, {"integer", "integer"}};

/* n elements of `data` into d_in (host-made data staged through `host`). */
static void fill(gs_type type, int data, int64_t n, void *host, void *d_in)
{
    if (data == DATA_GENERATOR) {
        CHECK(gs_cuda_generate(gpu, type, 13, 0, n, d_in));
        return;
    }
    const int f32 = type == GS_F32;
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (data == DATA_NORMAL) {
            v = sqrt(-2.0 * log(1.0 - unit((uint64_t)i, 0))) * cos(6.283185307179586 * unit((uint64_t)i, 1));
        } else if (data == DATA_INTEGER) {
            v = (double)(mix((uint64_t)i * 7 + 3) & 1023);
        } else {
            const int lo = f32 ? -149 : -1074, hi = f32 ? 127 : 1023;
            const int e = lo + (int)(mix((uint64_t)i * 3 + 7) % (uint64_t)(hi - lo + 1));
            v = ldexp(1.0 + unit((uint64_t)i, 2), e - 1) * (mix((uint64_t)i * 5 + 1) & 1 ? -1.0 : 1.0);
        }
        if (f32) ((float *)host)[i] = (float)v;
        else ((double *)host)[i] = v;
    }
    CHECK(gs_cuda_copy_h2d(gpu, d_in, host, (size_t)n * gs_type_size(type)));
}

typedef struct run_args {
    gs_type type;
    int exact, scan;
    const void *in;
    void *out;
    int64_t n;
    gs_acc *acc;
    uint32_t *overflow;
    gs_exact *state;
} run_args;

/* One timed run; accumulators start from zero each time (a queued fill). */
static gs_status run(void *p)
{
    run_args *a = p;
    if (a->exact) {
        gs_status st = gs_cuda_fill(gpu, a->state, 0, sizeof *a->state);
        if (st != GS_OK) return st;
        return a->scan ? gs_cuda_scan_exact_async(gpu, a->type, GS_INCLUSIVE, a->in, a->out, a->n, a->state)
                       : gs_cuda_reduce_exact_async(gpu, a->type, a->in, a->n, a->state);
    }
    gs_status st = gs_cuda_fill(gpu, a->acc, 0, sizeof *a->acc);
    if (st != GS_OK) return st;
    return a->scan ? gs_cuda_scan_async(gpu, a->type, GS_SUM, GS_INCLUSIVE, a->in, a->out, a->n, a->acc, a->overflow)
                   : gs_cuda_reduce_async(gpu, a->type, GS_SUM, a->in, a->n, a->acc);
}

/* A scan's last output element. */
static double last_output(gs_type type, const void *d_out, int64_t n)
{
    const size_t elem = gs_type_size(type);
    if (type == GS_F32) {
        float f;
        CHECK(gs_cuda_copy_d2h(gpu, &f, (const char *)d_out + (n - 1) * elem, sizeof f));
        return f;
    }
    double d;
    CHECK(gs_cuda_copy_d2h(gpu, &d, (const char *)d_out + (n - 1) * elem, sizeof d));
    return d;
}

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double median_ms(run_args *a, int iters)
{
    float ms[64];
    CHECK(gs_cuda_time_runs(gpu, run, a, 2, 50.0, iters, ms));
    qsort(ms, (size_t)iters, sizeof ms[0], cmp_float);
    return ms[iters / 2];
}

int main(int argc, char **argv)
{
    const int log2n = argc > 1 ? atoi(argv[1]) : 28;
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    if (iters < 1) iters = 1;
    if (iters > 64) iters = 64;
    const int64_t n = (int64_t)1 << log2n;
    const char *tiles = argc > 3 ? argv[3] : "auto";
    int only = -1;   /* the data to run, or all */
    if (argc > 4 && strcmp(argv[4], "all") != 0) {
        for (int d = 0; d < DATA_COUNT; d++)
            if (strcmp(argv[4], data_kinds[d].arg) == 0) only = d;
        if (only < 0) {
            fprintf(stderr, "gpu_exact_bench: DATA is all, generator, normal, full or integer, not '%s'\n", argv[4]);
            return 2;
        }
    }
    const char *type_arg = argc > 5 ? argv[5] : "all";
    if (strcmp(type_arg, "all") != 0 && strcmp(type_arg, "f32") != 0 && strcmp(type_arg, "f64") != 0) {
        fprintf(stderr, "gpu_exact_bench: TYPE is all, f32 or f64, not '%s'\n", type_arg);
        return 2;
    }
    char err[256];
    if (gs_cuda_device_count() == 0 || gs_cuda_open(0, &gpu, err, sizeof err) != GS_OK) {
        printf("gpu_exact_bench: no usable GPU\n");
        return 77;
    }
    CHECK(gs_cuda_set_exact_tiles(gpu, strcmp(tiles, "short") == 0  ? GS_CUDA_EXACT_TILES_SHORT
                                       : strcmp(tiles, "long") == 0 ? GS_CUDA_EXACT_TILES_LONG
                                                                    : GS_CUDA_EXACT_TILES_AUTO));
    gs_cuda_device_info info;
    CHECK(gs_cuda_info(gpu, &info));
    printf("%s, %d SMs, n = 2^%d, median of %d, f64 scan tiles %s\n", info.name, info.sm_count, log2n, iters, tiles);
    printf("%-4s %-10s %-6s %10s %10s %9s %9s %7s   %-24s %s\n", "type", "data", "op", "plain ms", "exact ms",
           "plain GB/s", "exact GB/s", "ratio", "exact result", "plain result");

    void *host = malloc((size_t)n * 8);
    /* one allocation each: gs_acc holds an __int128 (16-byte aligned), which
     * a gs_exact (568 bytes) in front of it would misalign */
    void *d_in, *d_out, *d_state, *d_acc, *d_overflow;
    CHECK(gs_cuda_malloc(gpu, &d_in, (size_t)n * 8));
    CHECK(gs_cuda_malloc(gpu, &d_out, (size_t)n * 8));
    CHECK(gs_cuda_malloc(gpu, &d_state, sizeof(gs_exact)));
    CHECK(gs_cuda_malloc(gpu, &d_acc, sizeof(gs_acc)));
    CHECK(gs_cuda_malloc(gpu, &d_overflow, sizeof(uint32_t)));
    if (!host) {
        fprintf(stderr, "gpu_exact_bench: out of host memory\n");
        return 1;
    }
    gs_exact *state = d_state;
    gs_acc *acc = d_acc;
    uint32_t *overflow = d_overflow;

    const gs_type types[] = {GS_F32, GS_F64};
    for (int t = 0; t < 2; t++)
        for (int data = 0; data < DATA_COUNT; data++) {
            if (only >= 0 && data != only) continue;
            const gs_type type = types[t];
            if (strcmp(type_arg, "all") != 0 && strcmp(type_arg, gs_type_name(type)) != 0) continue;
            const size_t elem = gs_type_size(type);
            fill(type, data, n, host, d_in);
            for (int scan = 0; scan < 2; scan++) {
                run_args a = {type, 0, scan, d_in, d_out, n, acc, overflow, state};
                const double plain = median_ms(&a, iters);
                gs_acc plain_result;
                CHECK(gs_cuda_copy_d2h(gpu, &plain_result, acc, sizeof plain_result));
                const double plain_last = scan ? last_output(type, d_out, n) : 0.0;
                a.exact = 1;
                const double exact = median_ms(&a, iters);
                gs_exact st;
                CHECK(gs_cuda_copy_d2h(gpu, &st, state, sizeof st));
                const double exact_last = scan ? last_output(type, d_out, n) : 0.0;
                /* bytes moved: the input, and the output of a scan */
                const double bytes = (double)n * elem * (scan ? 2 : 1);
                char ex[64], pl[64];
                snprintf(ex, sizeof ex, "%.17g", scan ? exact_last : gs_exact_round_f64(&st));
                snprintf(pl, sizeof pl, "%.17g", scan ? plain_last : plain_result.f);
                printf("%-4s %-10s %-6s %10.3f %10.3f %9.1f %9.1f %7.3f   %-24s %s\n", gs_type_name(type),
                       data_kinds[data].label, scan ? "scan" : "reduce", plain, exact, bytes / plain / 1e6,
                       bytes / exact / 1e6, plain / exact, ex, pl);
                fflush(stdout);
            }
        }
    gs_cuda_free(gpu, d_in);
    gs_cuda_free(gpu, d_out);
    gs_cuda_free(gpu, d_state);
    gs_cuda_free(gpu, d_acc);
    gs_cuda_free(gpu, d_overflow);
    free(host);
    gs_cuda_close(gpu);
    return 0;
}
