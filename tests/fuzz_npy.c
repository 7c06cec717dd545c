/*
 * fuzz_npy.c - the fuzz target of the .npy header parser (src/gs_npy.c).
 *
 * One input is the start of a file, as gpuscan reads it (src/gs_run.c): the
 * first min(size, GS_NPY_MAX_HEADER) bytes go to gs_npy_parse, and an
 * accepted header is then checked against the file's size. The input's
 * length is the file's size. Beyond "no crash" (the sanitizers' part), every
 * input must satisfy the invariants below, each checked independently of
 * the parser; a violation prints the input and aborts, which both libFuzzer
 * (`make fuzz`) and the mutation driver of `make check`
 * (tests/fuzz_npy_driver.c) report as a failure.
 *
 * Accepted header:
 *  - a known type; count >= 0; ndim >= 0, and ndim 0 means count 1;
 *  - data_offset is the prelude plus the header length the prelude
 *    declares, within the bytes given and GS_NPY_MAX_HEADER (also when the
 *    parser is given more);
 *  - the header is a dict and padding: its last byte but whitespace is '}';
 *  - data_offset + count * element size fits in int64 (the tool's size check
 *    computes it, and offsets are MPI_Offset): no wrap-around;
 *  - the element size of the type is the one the header's descr names, and
 *    count and ndim are the product and number of the shape's dimensions;
 *  - the same verdict from the header bytes alone (the parser reads nothing
 *    past the header) and a rejection one byte short of them;
 *  - the tool's check of the data size against the file size agrees with
 *    exact arithmetic.
 * Rejected header: GS_ERR_FORMAT, the header left untouched, a message that
 * is not empty, ends within the buffer given (even a tiny one) and consists
 * of printable characters (it is printed to a terminal).
 */
#include "gs_npy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Element sizes and descr kinds by type, written out here rather than taken
 * from the library so that the check is independent of it. */
static const struct {
    char kind;
    unsigned bytes;
} fuzz_types[GS_TYPE_COUNT] = {
    [GS_I32] = {'i', 4}, [GS_I64] = {'i', 8}, [GS_U32] = {'u', 4},
    [GS_U64] = {'u', 8}, [GS_F32] = {'f', 4}, [GS_F64] = {'f', 8},
};

/* Inputs accepted so far: the driver's summary shows the mutations reach
 * past the first checks. */
unsigned long long fuzz_npy_accepted;

static const uint8_t *fuzz_input;
static size_t fuzz_input_size;

/* Report a broken invariant with the input (as a C string literal, to paste
 * into a test) and abort. */
static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_npy: invariant broken: %s\ninput (%zu bytes): \"", what, fuzz_input_size);
    for (size_t i = 0; i < fuzz_input_size; i++) {
        uint8_t ch = fuzz_input[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\')
            fputc(ch, stderr);
        else
            fprintf(stderr, "\\x%02x\"\"", ch);
    }
    fputs("\"\n", stderr);
    abort();
}

#define FUZZ_ASSERT(cond) \
    do { \
        if (!(cond)) fuzz_fail(#cond); \
    } while (0)

/* The dict text of an accepted header: from the end of the prelude to the
 * data. */
static size_t fuzz_prelude(const uint8_t *b) { return b[6] == 1 ? 10 : 12; }

/* Does the dict hold a quoted string of an optional byte order, `kind` and
 * a number equal to `bytes` ('<i4', "i4", '<i004': NumPy reads leading
 * zeros)? Only the descr can: the keys are fixed words. */
static int fuzz_names_type(const char *dict, size_t len, char kind, unsigned bytes)
{
    for (size_t i = 0; i < len; i++) {
        const char quote = dict[i];
        if (quote != '\'' && quote != '"') continue;
        size_t j = i + 1;
        if (j < len && strchr("<=|", dict[j]) && dict[j]) j++;
        if (j >= len || dict[j] != kind) continue;
        unsigned long value = 0;
        size_t digits = 0;
        for (j++; j < len && dict[j] >= '0' && dict[j] <= '9' && value < 1000; j++, digits++)
            value = value * 10 + (unsigned long)(dict[j] - '0');
        if (digits && j < len && dict[j] == quote && value == bytes) return 1;
    }
    return 0;
}

/* The shape of an accepted dict, read naively: the digit runs between the
 * '(' and ')' after the key "shape". Returns 0 when the product overflows
 * int64 (and the dimensions have no 0). */
static int fuzz_shape(const char *dict, size_t len, int *ndim, int64_t *count)
{
    const char *key = NULL;
    for (size_t i = 0; i + 6 <= len && !key; i++)
        if (memcmp(dict + i, "shape", 5) == 0 && (dict[i + 5] == '\'' || dict[i + 5] == '"'))
            key = dict + i;
    FUZZ_ASSERT(key != NULL);
    const char *end = dict + len;
    const char *p = memchr(key, '(', (size_t)(end - key));
    FUZZ_ASSERT(p != NULL);
    const char *close = memchr(p, ')', (size_t)(end - p));
    FUZZ_ASSERT(close != NULL);
    int n = 0, overflow = 0, zero = 0;
    int64_t product = 1;
    while (p < close) {
        if (*p < '0' || *p > '9') {
            p++;
            continue;
        }
        int64_t dim = 0;
        for (; p < close && *p >= '0' && *p <= '9'; p++)
            FUZZ_ASSERT(!__builtin_mul_overflow(dim, 10, &dim) && !__builtin_add_overflow(dim, *p - '0', &dim));
        n++;
        zero |= dim == 0;
        overflow |= __builtin_mul_overflow(product, dim, &product);
    }
    *ndim = n;
    *count = zero ? 0 : product;
    return zero || !overflow;
}

/* Field by field: struct padding is not part of the header. */
static int fuzz_same(const gs_npy_header *a, const gs_npy_header *b)
{
    return a->type == b->type && a->count == b->count && a->data_offset == b->data_offset &&
           a->ndim == b->ndim;
}

static void fuzz_accepted(const uint8_t *b, size_t len, uint64_t file_size, const gs_npy_header *h)
{
    FUZZ_ASSERT((unsigned)h->type < GS_TYPE_COUNT);
    FUZZ_ASSERT(h->count >= 0);
    FUZZ_ASSERT(h->ndim >= 0);
    FUZZ_ASSERT(h->ndim > 0 || h->count == 1);

    /* the prelude, decoded here */
    FUZZ_ASSERT(len >= 10 && memcmp(b, "\x93NUMPY", 6) == 0 && b[7] == 0);
    FUZZ_ASSERT(b[6] >= 1 && b[6] <= 3);
    const size_t prelude = fuzz_prelude(b);
    FUZZ_ASSERT(len >= prelude);
    uint64_t header_len = (uint64_t)b[8] | (uint64_t)b[9] << 8;
    if (prelude == 12) header_len |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    FUZZ_ASSERT(h->data_offset == prelude + header_len);
    FUZZ_ASSERT(h->data_offset <= len && h->data_offset <= GS_NPY_MAX_HEADER);

    /* the extent of the data fits in int64 */
    const unsigned bytes = fuzz_types[h->type].bytes;
    uint64_t data_bytes = 0, extent = 0;
    FUZZ_ASSERT(!__builtin_mul_overflow((uint64_t)h->count, bytes, &data_bytes));
    FUZZ_ASSERT(!__builtin_add_overflow(data_bytes, h->data_offset, &extent));
    FUZZ_ASSERT(extent <= INT64_MAX);

    /* type and shape as the dict spells them */
    const char *dict = (const char *)b + prelude;
    const size_t dict_len = h->data_offset - prelude;
    FUZZ_ASSERT(fuzz_names_type(dict, dict_len, fuzz_types[h->type].kind, bytes));
    int ndim = 0;
    int64_t count = 0;
    FUZZ_ASSERT(fuzz_shape(dict, dict_len, &ndim, &count));
    FUZZ_ASSERT(ndim == h->ndim);
    FUZZ_ASSERT(count == h->count);

    /* a dict and padding: the last byte that is not whitespace closes it */
    size_t last = dict_len;
    while (last > 0 && strchr(" \t\n\v\f\r", dict[last - 1]) && dict[last - 1]) last--;
    FUZZ_ASSERT(last > 0 && dict[last - 1] == '}');

    /* the header bytes alone give the same header; one byte less, none */
    gs_npy_header again;
    char err[256];
    FUZZ_ASSERT(gs_npy_parse(b, h->data_offset, &again, err, sizeof err) == GS_OK);
    FUZZ_ASSERT(fuzz_same(&again, h));
    FUZZ_ASSERT(gs_npy_parse(b, h->data_offset - 1, &again, err, sizeof err) == GS_ERR_FORMAT);

    /* the tool's check (src/gs_run.c): the data fill the rest of the file */
    const int tool_accepts = file_size >= h->data_offset &&
                             file_size - h->data_offset == (uint64_t)h->count * bytes;
    FUZZ_ASSERT(tool_accepts == (file_size == extent));
}

static void fuzz_message(const char *err, size_t cap)
{
    size_t n = strnlen(err, cap);
    FUZZ_ASSERT(n < cap);
    FUZZ_ASSERT(n > 0 || cap == 1);
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT((unsigned char)err[i] >= 0x20 && (unsigned char)err[i] < 0x7f);
}

static void fuzz_rejected(const uint8_t *b, size_t len, gs_status st, const gs_npy_header *h,
                          const char *err, size_t cap)
{
    static const gs_npy_header untouched = {GS_TYPE_COUNT, -7, 7, -7};
    FUZZ_ASSERT(st == GS_ERR_FORMAT);
    FUZZ_ASSERT(fuzz_same(h, &untouched));
    fuzz_message(err, cap);

    /* a small buffer: the message cut short, nothing written past it */
    char small[9];
    memset(small, '#', sizeof small);
    gs_npy_header h2 = untouched;
    FUZZ_ASSERT(gs_npy_parse(b, len, &h2, small, 8) == GS_ERR_FORMAT);
    FUZZ_ASSERT(small[8] == '#');
    fuzz_message(small, 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input = data;
    fuzz_input_size = size;
    /* what the tool hands the parser: at most GS_NPY_MAX_HEADER bytes, in a
     * buffer of exactly that length (so that ASan sees any read past it) */
    const size_t len = size < GS_NPY_MAX_HEADER ? size : GS_NPY_MAX_HEADER;
    uint8_t *head = malloc(len ? len : 1);
    if (!head) return 0;
    if (len) memcpy(head, data, len);

    gs_npy_header h = {GS_TYPE_COUNT, -7, 7, -7};
    char err[256];
    memset(err, '#', sizeof err);
    gs_status st = gs_npy_parse(head, len, &h, err, sizeof err);
    if (st == GS_OK) {
        fuzz_accepted(head, len, size, &h);
        fuzz_npy_accepted++;
    } else {
        fuzz_rejected(head, len, st, &h, err, sizeof err);
    }
    if (size > len) {
        /* more than the tool reads: the parser still keeps to its limit */
        gs_npy_header whole;
        if (gs_npy_parse(data, size, &whole, err, sizeof err) == GS_OK)
            FUZZ_ASSERT(whole.data_offset <= GS_NPY_MAX_HEADER);
    }
    free(head);
    return 0;
}
