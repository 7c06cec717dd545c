/*
 * fuzz_npy_driver.c - runs the .npy fuzz target (tests/fuzz_npy.c) where
 * libFuzzer is not used: `make check` runs it as a test, a few seconds of
 * deterministic mutations of a seed corpus of valid headers.
 *
 *   tests/fuzz_npy [-n INPUTS] [-s SEED]   mutate (default 1000000 inputs, seed 1)
 *   tests/fuzz_npy FILE...                 run the target on each file (a
 *                                          libFuzzer crash file, say)
 *   tests/fuzz_npy --write-corpus DIR      write the seeds, one file each, as
 *                                          a starting corpus for libFuzzer
 *
 * The seeds are .npy files of every accepted type and byte-order spelling,
 * versions 1.0, 2.0 and 3.0, C and Fortran order, 0-d, 1-d and N-d shapes,
 * empty and huge ones, and the syntax variants NumPy's reader takes. Each
 * input stacks 1 to 4 mutations on a seed: bit flips, bytes set to values
 * the syntax cares about, deleted, inserted or duplicated ranges,
 * truncation, dimensions replaced by numbers near 2^31, 2^61..2^64 and past
 * them, dict tokens spliced in, header lengths and magic/version bytes
 * changed, data added or removed. The random numbers are a fixed sequence
 * from the seed, so a failure is reproduced by running the same command; the
 * target prints the failing input.
 */
#include "gs_npy.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern unsigned long long fuzz_npy_accepted;

/* Inputs are at most this long: a header up to GS_NPY_MAX_HEADER plus some
 * data, so that headers cut at the limit are reached too. */
#define FUZZ_MAX_INPUT (GS_NPY_MAX_HEADER + 256)

/* ---- seeds ------------------------------------------------------------------- */

typedef struct fuzz_seed {
    uint8_t *bytes;
    size_t len;
} fuzz_seed;

static fuzz_seed *seeds;
static size_t seed_count, seed_cap;

/* A .npy file: version `major`.0 around `dict`, padded with spaces and '\n'
 * to a multiple of 64 bytes (`pad`: how NumPy writes it) or not, and
 * `data` zero bytes after it. */
static void add_seed(int major, const char *dict, int pad, size_t data)
{
    size_t prelude = major == 1 ? 10 : 12, n = strlen(dict);
    size_t header = pad ? (prelude + n + 1 + 63) / 64 * 64 : prelude + n;
    if (seed_count == seed_cap) {
        seed_cap = seed_cap ? 2 * seed_cap : 256;
        seeds = realloc(seeds, seed_cap * sizeof *seeds);
        if (!seeds) { perror("fuzz_npy"); exit(99); }
    }
    uint8_t *b = calloc(1, header + data + 1);
    if (!b) { perror("fuzz_npy"); exit(99); }
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (uint8_t)major;
    b[7] = 0;
    for (size_t i = 0; i < prelude - 8; i++) b[8 + i] = (uint8_t)((header - prelude) >> (8 * i));
    memcpy(b + prelude, dict, n);
    if (pad) {
        memset(b + prelude + n, ' ', header - prelude - n - 1);
        b[header - 1] = '\n';
    }
    seeds[seed_count++] = (fuzz_seed){b, header + data};
}

static void make_seeds(void)
{
    static const char *const descrs[] = {
        "<i4", "<i8", "<u4", "<u8", "<f4", "<f8", "=i4", "=f8", "i8", "u4", "|u8", ">f4",
    };
    static const unsigned descr_bytes[] = {4, 8, 4, 8, 4, 8, 4, 8, 8, 4, 8, 4};
    static const struct {
        const char *text;
        long long count;   /* elements; -1: too many to add as data */
    } shapes[] = {
        {"()", 1}, {"(0,)", 0}, {"(1,)", 1}, {"(7,)", 7}, {"(2, 3)", 6}, {"(2, 3,)", 6},
        {"(4, 1, 5)", 20}, {"(3, 0, 2)", 0}, {"(1, 1, 1, 1, 13)", 13}, {"(5L,)", 5},
        {"(1000003,)", -1}, {"(2147483648,)", -1}, {"(4611686018427387904,)", -1},
        {"(2305843009213693951,)", -1}, {"(65536, 65536, 65536)", -1},
        {"(9223372036854775807,)", -1},
        /* a product that wraps to 2^32 before the 0 that makes it empty */
        {"(4294967297, 4294967296, 0)", 0},
    };
    const size_t ndescr = sizeof descrs / sizeof *descrs, nshape = sizeof shapes / sizeof *shapes;
    char dict[512];
    size_t d = 0;
    for (size_t s = 0; s < nshape; s++) {
        for (int fortran = 0; fortran < 2; fortran++) {
            for (int major = 1; major <= 3; major++) {
                /* every descr with every shape would be thousands of seeds;
                 * cycle through them instead */
                d = (d + 1) % ndescr;
                size_t data = shapes[s].count < 0 ? 0 : (size_t)shapes[s].count * descr_bytes[d];
                snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                         descrs[d], fortran ? "True" : "False", shapes[s].text);
                add_seed(major, dict, 1, data);
            }
        }
    }
    for (size_t i = 0; i < ndescr; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", descrs[i]);
        add_seed(1, dict, 1, 3 * descr_bytes[i]);
    }
    /* key order, quotes, whitespace, no trailing comma, no padding */
    add_seed(1, "{'shape': (2,), 'fortran_order': False, 'descr': '<f8'}", 1, 16);
    add_seed(1, "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (4,)}", 1, 16);
    add_seed(2, "{ 'descr' :'<u8' ,'fortran_order':True,\n'shape':( 2 , 1 , ) , }", 1, 16);
    add_seed(1, "{'descr':'<f4','fortran_order':False,'shape':(1,)}", 0, 4);
    add_seed(3, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }\t\r\x0b\x0c", 1, 8);
    /* near the size limit: a header padded to GS_NPY_MAX_HEADER bytes */
    {
        size_t pad_len = GS_NPY_MAX_HEADER - 12 - 60;
        char *big = malloc(pad_len + 80);
        if (!big) { perror("fuzz_npy"); exit(99); }
        int n = snprintf(big, 80, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }");
        memset(big + n, ' ', pad_len - (size_t)n);
        big[pad_len] = '\0';
        add_seed(2, big, 1, 8);
        free(big);
    }
}

/* ---- mutations --------------------------------------------------------------- */

/* splitmix64: a fixed sequence from the seed */
static uint64_t rng_state;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

static const char *const tokens[] = {
    "'descr'", "'shape'", "'fortran_order'", "'<i4'", "'<f8'", "'>u8'", "'|i4'", "'<c16'",
    "'<U3'", "[('a', '<i4')]", "True", "False", "None", "(", ")", "(,)", ",", ", ", ":", "{",
    "}", "'", "\"", "\\", "\n", "L", "-1", "0", "00", " ", "\t", "\x93NUMPY", "''", "'<'",
};
static const char *const numbers[] = {
    "0", "1", "2147483647", "2147483648", "4294967296", "2305843009213693951",
    "2305843009213693952", "4611686018427387904", "4611686018435776512", "9223372036854775807",
    "9223372036854775808", "18446744073709551615", "18446744073709551616",
    "99999999999999999999999999", "3037000500", "65536",
};
static const uint8_t interesting[] = {
    0, 1, 0x7f, 0x80, 0xff, '(', ')', ',', '\'', '"', '{', '}', ':', ' ', '\n', '0', '9',
    '<', '>', '=', '|', 'L', '\\', 0x1b,
};

/* Replace bytes [at, at+cut) of the input with `ins` (ins_len bytes). */
static void splice(uint8_t *b, size_t *len, size_t at, size_t cut, const void *ins, size_t ins_len)
{
    if (at > *len) at = *len;
    if (cut > *len - at) cut = *len - at;
    if (*len - cut + ins_len > FUZZ_MAX_INPUT) return;
    memmove(b + at + ins_len, b + at + cut, *len - at - cut);
    memcpy(b + at, ins, ins_len);
    *len = *len - cut + ins_len;
}

static void mutate(uint8_t *b, size_t *len)
{
    size_t n = *len;
    switch (below(12)) {
    case 0:   /* flip a bit */
        if (n) b[below(n)] ^= (uint8_t)(1u << below(8));
        break;
    case 1:   /* a byte the syntax cares about */
        if (n) b[below(n)] = interesting[below(sizeof interesting)];
        break;
    case 2: { /* delete a range */
        size_t at = below(n);
        splice(b, len, at, 1 + below(16), "", 0);
        break;
    }
    case 3: { /* duplicate a range */
        size_t at = below(n), k = 1 + below(16);
        uint8_t copy[16];
        if (k > n - at) k = n - at;
        memcpy(copy, b + at, k);
        splice(b, len, below(n), 0, copy, k);
        break;
    }
    case 4:   /* truncate */
        *len = below(n + 1);
        break;
    case 5: { /* a dimension (or any digit run) becomes a big number */
        size_t at = below(n);
        while (at < n && (b[at] < '0' || b[at] > '9')) at++;
        size_t end = at;
        while (end < n && b[end] >= '0' && b[end] <= '9') end++;
        const char *num = numbers[below(sizeof numbers / sizeof *numbers)];
        splice(b, len, at, end - at, num, strlen(num));
        break;
    }
    case 6: { /* a token of the dict syntax spliced in, or over something */
        const char *tok = tokens[below(sizeof tokens / sizeof *tokens)];
        splice(b, len, below(n), below(3), tok, strlen(tok));
        break;
    }
    case 7: { /* the header length: random, past the end, or just off */
        if (n < 12) break;
        size_t prelude = b[6] == 1 ? 10 : 12;
        uint32_t hl;
        switch (below(4)) {
        case 0: hl = (uint32_t)rng(); break;
        case 1: hl = (uint32_t)(n - prelude + 1 + below(100)); break;
        case 2: hl = (uint32_t)(n - prelude - (n > prelude ? 1 : 0)); break;
        default: hl = (uint32_t)(GS_NPY_MAX_HEADER - prelude - 2 + below(260)); break;
        }
        for (size_t i = 0; i < prelude - 8; i++) b[8 + i] = (uint8_t)(hl >> (8 * i));
        break;
    }
    case 8:   /* magic and version */
        if (n >= 8) {
            size_t at = below(8);
            b[at] = below(2) ? (uint8_t)rng() : (uint8_t)below(5);
        }
        break;
    case 9: { /* data added or removed: the file size disagrees with the shape */
        static const uint8_t zeros[64];
        if (below(2)) splice(b, len, n, 0, zeros, 1 + below(64));
        else if (n) *len = n - 1 - below(n < 8 ? n : 8);
        break;
    }
    case 10: { /* a piece of another seed */
        const fuzz_seed *s = &seeds[below(seed_count)];
        size_t from = below(s->len), k = 1 + below(32);
        if (k > s->len - from) k = s->len - from;
        splice(b, len, below(n), below(4), s->bytes + from, k);
        break;
    }
    default: { /* a run of one byte: long headers, long strings */
        uint8_t run[256];
        memset(run, interesting[below(sizeof interesting)], sizeof run);
        splice(b, len, below(n), 0, run, 1 + below(sizeof run));
        break;
    }
    }
}

/* ---- the three ways to run ------------------------------------------------------ */

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "fuzz_npy: %s: %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t *b = malloc(FUZZ_MAX_INPUT);
    size_t len = b ? fread(b, 1, FUZZ_MAX_INPUT, f) : 0;
    int bad = !b || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "fuzz_npy: %s: cannot read\n", path);
        free(b);
        return 1;
    }
    LLVMFuzzerTestOneInput(b, len);
    free(b);
    printf("%s: ok\n", path);
    return 0;
}

static int write_corpus(const char *dir)
{
    for (size_t i = 0; i < seed_count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/seed-%03zu.npy", dir, i);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(seeds[i].bytes, 1, seeds[i].len, f) != seeds[i].len || fclose(f) != 0) {
            fprintf(stderr, "fuzz_npy: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    printf("%zu seeds written to %s\n", seed_count, dir);
    return 0;
}

static int mutate_all(unsigned long long inputs, unsigned long long seed)
{
    uint8_t *b = malloc(FUZZ_MAX_INPUT);
    if (!b) { perror("fuzz_npy"); return 99; }
    rng_state = seed;
    /* every seed as it is first */
    for (size_t i = 0; i < seed_count; i++) LLVMFuzzerTestOneInput(seeds[i].bytes, seeds[i].len);
    for (unsigned long long k = 0; k < inputs; k++) {
        const fuzz_seed *s = &seeds[below(seed_count)];
        size_t len = s->len;
        memcpy(b, s->bytes, len);
        for (size_t m = 1 + below(4); m > 0; m--) mutate(b, &len);
        LLVMFuzzerTestOneInput(b, len);
    }
    free(b);
    printf("fuzz_npy: %zu seeds and %llu mutated inputs (seed %llu), %llu accepted: every "
           "invariant held\n", seed_count, inputs, seed, fuzz_npy_accepted);
    return 0;
}

static unsigned long long number_arg(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s || *end || *s == '-') {
        fprintf(stderr, "fuzz_npy: '%s' is not a number\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    unsigned long long inputs = 1000000, seed = 1;
    int files = 0, rc = 0;
    make_seeds();
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            inputs = number_arg(argv[++i]);
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            seed = number_arg(argv[++i]);
        } else if (strcmp(argv[i], "--write-corpus") == 0 && i + 1 < argc) {
            return write_corpus(argv[i + 1]);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: fuzz_npy [-n INPUTS] [-s SEED] | FILE... | --write-corpus DIR\n");
            return 2;
        } else {
            files++;
            rc |= run_file(argv[i]);
        }
    }
    return files ? rc : mutate_all(inputs, seed);
}
