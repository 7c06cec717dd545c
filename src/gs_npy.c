/*
 * gs_npy.c - .npy headers (NumPy's NEP 1): the parser of what numpy.save
 * writes and the writer of our own 1-D headers.
 *
 * A header is a 6-byte magic string, a 2-byte version, a little-endian
 * header length (uint16 in version 1.0, uint32 in 2.0 and 3.0) and a Python
 * literal dict padded with spaces and ended by '\n'. NumPy reads the dict
 * with ast.literal_eval; we parse the subset of Python literal syntax such a
 * dict can use (quoted strings, True/False, tuples of non-negative integers,
 * any whitespace, trailing commas) with a small recursive-descent parser, so
 * that every file NumPy writes for a supported dtype is accepted and anything
 * else gets a message saying what is wrong, not a guess.
 *
 * Version 3.0 differs from 2.0 only in allowing UTF-8 in the dict (field
 * names of structured dtypes); the keys and values we accept are ASCII, so
 * both are parsed alike.
 */
#include "gs_npy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* The dtype of each gs_type: NumPy's kind character and item size. The
 * parser and the writer both use this table, so they cannot disagree. */
static const struct {
    char kind;
    unsigned size;
} npy_dtypes[GS_TYPE_COUNT] = {
    [GS_I32] = {'i', 4}, [GS_I64] = {'i', 8}, [GS_U32] = {'u', 4},
    [GS_U64] = {'u', 8}, [GS_F32] = {'f', 4}, [GS_F64] = {'f', 8},
};

#define NPY_SUPPORTED "<i4 <i8 <u4 <u8 <f4 <f8"

/* '=' (and a descr without a byte-order character) mean the writer's native
 * order; files come from little-endian machines, so take them as '<' there. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NPY_NATIVE_ORDER '<'
#else
#define NPY_NATIVE_ORDER '>'
#endif

/* The longest string value quoted back in a message. */
#define NPY_QUOTE_MAX 40

/* A string from the file as a message quotes it: cut to NPY_QUOTE_MAX
 * characters, and anything but printable ASCII shown as '?', since the
 * message goes to a terminal (an escape sequence in a header must not
 * reach it). */
typedef struct npy_quoted {
    char s[NPY_QUOTE_MAX + 1];
} npy_quoted;

static npy_quoted npy_quote(const char *s, size_t len)
{
    npy_quoted q;
    size_t n = len > NPY_QUOTE_MAX ? NPY_QUOTE_MAX : len;
    for (size_t i = 0; i < n; i++)
        q.s[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    q.s[n] = '\0';
    return q;
}

static gs_status npy_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static gs_status npy_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return GS_ERR_FORMAT;
}

/* A cursor over the dict text; offsets in messages count from its start. */
typedef struct npy_cursor {
    const unsigned char *begin, *p, *end;
    char *err;
    size_t errlen;
} npy_cursor;

static size_t npy_offset(const npy_cursor *c) { return (size_t)(c->p - c->begin); }

/* Python's whitespace between tokens (space, \t \n \v \f \r); inside
 * braces newlines are allowed. */
static void npy_skip_ws(npy_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || (*c->p >= '\t' && *c->p <= '\r')))
        c->p++;
}

static gs_status npy_expected(npy_cursor *c, const char *what)
{
    if (c->p >= c->end)
        return npy_error(c->err, c->errlen,
                         "malformed .npy header: expected %s, found the end of the header", what);
    return npy_error(c->err, c->errlen,
                     "malformed .npy header: expected %s at byte %zu of the header, found '%c'",
                     what, npy_offset(c), *c->p >= 0x20 && *c->p < 0x7f ? *c->p : '?');
}

static int npy_accept(npy_cursor *c, char ch)
{
    if (c->p < c->end && *c->p == (unsigned char)ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string, single or double quotes, without escapes (no key or
 * descr we could accept has one). */
static gs_status npy_string(npy_cursor *c, const char **s, size_t *len, const char *what)
{
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return npy_expected(c, what);
    unsigned char quote = *c->p++;
    const unsigned char *start = c->p;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || *c->p == '\n')
            return npy_error(c->err, c->errlen,
                             "malformed .npy header: unsupported character in a string at byte %zu",
                             npy_offset(c));
        c->p++;
    }
    if (c->p >= c->end)
        return npy_error(c->err, c->errlen, "malformed .npy header: unterminated string");
    *s = (const char *)start;
    *len = (size_t)(c->p - start);
    c->p++;
    return GS_OK;
}

static int npy_is_ident(unsigned char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z');
}

static gs_status npy_bool(npy_cursor *c, int *value)
{
    static const char *const words[2] = {"False", "True"};
    for (int v = 0; v < 2; v++) {
        size_t n = strlen(words[v]);
        if ((size_t)(c->end - c->p) >= n && memcmp(c->p, words[v], n) == 0 &&
            (c->p + n == c->end || !npy_is_ident(c->p[n]))) {
            c->p += n;
            *value = v;
            return GS_OK;
        }
    }
    return npy_expected(c, "True or False for 'fortran_order'");
}

/* A non-negative decimal integer that fits in int64. A trailing 'L' is
 * Python 2's long suffix, which old NumPy wrote and NumPy still reads. */
static gs_status npy_dim(npy_cursor *c, int64_t *dim)
{
    if (c->p < c->end && *c->p == '-')
        return npy_error(c->err, c->errlen,
                         "malformed .npy header: negative dimension in 'shape'");
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
        return npy_expected(c, "a dimension (a non-negative integer) in 'shape'");
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *c->p - '0', &v))
            return npy_error(c->err, c->errlen,
                             "malformed .npy header: a dimension in 'shape' exceeds 2^63-1");
        c->p++;
    }
    if (c->p < c->end && (*c->p == 'L' || *c->p == 'l'))
        c->p++;
    *dim = v;
    return GS_OK;
}

typedef struct npy_shape {
    int ndim;
    int longer_than_one;  /* dimensions > 1: Fortran order matters if 2+ */
    int has_zero;
    int overflow;         /* the product of the dimensions exceeds int64 */
    int64_t count;
} npy_shape;

/* A Python tuple of dimensions: (), (5,), (2, 3), (2, 3,). "(5)" is not a
 * tuple in Python (it is the integer 5), and NumPy rejects it, so do we. */
static gs_status npy_shape_value(npy_cursor *c, npy_shape *s)
{
    memset(s, 0, sizeof *s);
    s->count = 1;
    if (!npy_accept(c, '('))
        return npy_expected(c, "a tuple such as (5,) for 'shape'");
    npy_skip_ws(c);
    if (npy_accept(c, ')'))
        return GS_OK;
    for (;;) {
        int64_t dim = 0;
        gs_status st = npy_dim(c, &dim);
        if (st != GS_OK)
            return st;
        s->ndim++;
        s->longer_than_one += dim > 1;
        s->has_zero |= dim == 0;
        if (!s->overflow && __builtin_mul_overflow(s->count, dim, &s->count))
            s->overflow = 1;
        npy_skip_ws(c);
        if (npy_accept(c, ')')) {
            if (s->ndim == 1)
                return npy_error(c->err, c->errlen,
                                 "malformed .npy header: 'shape' (N) is not a tuple, (N,) is");
            return GS_OK;
        }
        if (!npy_accept(c, ','))
            return npy_expected(c, "',' or ')' in 'shape'");
        npy_skip_ws(c);
        if (npy_accept(c, ')'))
            return GS_OK;
    }
}

/* What a dtype kind is, for the message that rejects it. */
static const char *npy_kind_name(char kind)
{
    switch (kind) {
    case 'b': return "boolean";
    case 'c': return "complex";
    case 'U': case 'S': case 'a': return "string";
    case 'O': return "Python object";
    case 'V': return "raw or structured (void)";
    case 'M': case 'm': return "datetime";
    default: return NULL;
    }
}

/* Map a descr string such as '<f8' to a gs_type. */
static gs_status npy_descr(const char *s, size_t len, gs_type *type, char *err, size_t errlen)
{
    const npy_quoted shown = npy_quote(s, len);
    char order = NPY_NATIVE_ORDER;
    size_t i = 0;
    if (len > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
        if (s[0] != '=')
            order = s[0];
        i = 1;
    }
    if (i == len)
        return npy_error(err, errlen, "malformed .npy header: empty dtype '%s'", shown.s);
    char kind = s[i];
    const char *what = npy_kind_name(kind);
    if (what)
        return npy_error(err, errlen, "%s dtype '%s' is not supported (supported: "
                         NPY_SUPPORTED ")", what, shown.s);
    unsigned size = 0;
    for (i++; i < len && s[i] >= '0' && s[i] <= '9' && size < 1000; i++)
        size = size * 10 + (unsigned)(s[i] - '0');
    int t = GS_TYPE_COUNT;
    if (i == len)
        for (t = 0; t < GS_TYPE_COUNT; t++)
            if (npy_dtypes[t].kind == kind && npy_dtypes[t].size == size)
                break;
    if (t == GS_TYPE_COUNT)
        return npy_error(err, errlen, "dtype '%s' is not supported (supported: "
                         NPY_SUPPORTED ")", shown.s);
    if (order == '>')
        return npy_error(err, errlen, "big-endian dtype '%s' is not supported: convert "
                         "it with x.astype('<%c%u')", shown.s, kind, size);
    if (order == '|')
        return npy_error(err, errlen, "dtype '%s': byte order '|' (not applicable) is "
                         "only valid for 1-byte types", shown.s);
    *type = (gs_type)t;
    return GS_OK;
}

/* The dict: exactly the keys 'descr', 'fortran_order' and 'shape', in any
 * order, as NumPy requires. */
static gs_status npy_dict(npy_cursor *c, gs_npy_header *h, npy_shape *shape, int *fortran)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0};

    npy_skip_ws(c);
    if (!npy_accept(c, '{'))
        return npy_expected(c, "'{' opening the header dict");
    for (;;) {
        npy_skip_ws(c);
        if (npy_accept(c, '}'))
            break;
        const char *key = NULL;
        size_t klen = 0;
        gs_status st = npy_string(c, &key, &klen, "a quoted key or '}'");
        if (st != GS_OK)
            return st;
        int k = 0;
        while (k < 3 && !(strlen(keys[k]) == klen && memcmp(keys[k], key, klen) == 0))
            k++;
        if (k == 3)
            return npy_error(c->err, c->errlen, "malformed .npy header: unexpected key '%s'",
                             npy_quote(key, klen).s);
        if (seen[k]++)
            return npy_error(c->err, c->errlen, "malformed .npy header: key '%s' appears twice",
                             keys[k]);
        npy_skip_ws(c);
        if (!npy_accept(c, ':'))
            return npy_expected(c, "':' after a key");
        npy_skip_ws(c);
        if (k == 0) {
            const char *d = NULL;
            size_t dlen = 0;
            if (c->p < c->end && *c->p == '[')
                return npy_error(c->err, c->errlen, "structured dtypes (a list 'descr') are "
                                 "not supported (supported: " NPY_SUPPORTED ")");
            if ((st = npy_string(c, &d, &dlen, "a quoted dtype for 'descr'")) != GS_OK ||
                (st = npy_descr(d, dlen, &h->type, c->err, c->errlen)) != GS_OK)
                return st;
        } else if (k == 1) {
            if ((st = npy_bool(c, fortran)) != GS_OK)
                return st;
        } else if ((st = npy_shape_value(c, shape)) != GS_OK) {
            return st;
        }
        npy_skip_ws(c);
        if (npy_accept(c, '}'))
            break;
        if (!npy_accept(c, ','))
            return npy_expected(c, "',' or '}' after a value");
    }
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return npy_error(c->err, c->errlen, "malformed .npy header: no '%s' key", keys[k]);
    /* padding: spaces and the final newline */
    npy_skip_ws(c);
    if (c->p != c->end)
        return npy_expected(c, "only padding after the header dict");
    return GS_OK;
}

gs_status gs_npy_parse(const void *buf, size_t len, gs_npy_header *h, char *err,
                       size_t errlen)
{
    const unsigned char *b = buf;
    size_t magic_len = len < sizeof npy_magic ? len : sizeof npy_magic;
    if (len == 0 || memcmp(b, npy_magic, magic_len) != 0)
        return npy_error(err, errlen, "not a .npy file (no \\x93NUMPY magic string)");
    if (len < 10)
        return npy_error(err, errlen, "truncated .npy header: %zu bytes", len);

    unsigned major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return npy_error(err, errlen, "unsupported .npy format version %u.%u (supported: "
                         "1.0, 2.0, 3.0)", major, minor);
    /* 1.0 has a 16-bit header length, 2.0 and 3.0 a 32-bit one */
    size_t prelude = major == 1 ? 10 : 12;
    if (len < prelude)
        return npy_error(err, errlen, "truncated .npy header: %zu bytes", len);
    uint64_t header_len = (uint64_t)b[8] | (uint64_t)b[9] << 8;
    if (major != 1)
        header_len |= (uint64_t)b[10] << 16 | (uint64_t)b[11] << 24;
    uint64_t data_offset = prelude + header_len;
    if (data_offset > GS_NPY_MAX_HEADER)
        return npy_error(err, errlen, ".npy header of %llu bytes is larger than the %d bytes "
                         "supported", (unsigned long long)data_offset, GS_NPY_MAX_HEADER);
    if (data_offset > len)
        return npy_error(err, errlen, "truncated .npy header: it declares %llu bytes, the "
                         "file has %zu", (unsigned long long)data_offset, len);

    /* zeroed: the parser fills each part when it meets its key, and fails
     * when a key is missing */
    gs_npy_header out = {0};
    npy_shape shape = {0};
    int fortran = 0;
    npy_cursor c = {b + prelude, b + prelude, b + data_offset, err, errlen};
    gs_status st = npy_dict(&c, &out, &shape, &fortran);
    if (st != GS_OK)
        return st;

    /* Fortran order stores the same flat sequence as C order unless two or
     * more dimensions are longer than 1 (and the array is not empty). */
    if (fortran && shape.longer_than_one > 1 && !shape.has_zero)
        return npy_error(err, errlen, "Fortran-ordered array with %d dimensions is not "
                         "supported: save it with numpy.ascontiguousarray(x)", shape.ndim);
    if (shape.has_zero)
        shape.count = 0;
    unsigned size = npy_dtypes[out.type].size;
    /* the caller adds data_offset + count * size: both must fit in int64 */
    if ((shape.overflow && !shape.has_zero) ||
        (uint64_t)shape.count > ((uint64_t)INT64_MAX - data_offset) / size)
        return npy_error(err, errlen, "the array's shape is too large (more than 2^63 bytes)");
    out.count = shape.count;
    out.ndim = shape.ndim;
    out.data_offset = data_offset;
    *h = out;
    return GS_OK;
}

size_t gs_npy_format(void *buf, size_t cap, gs_type type, int64_t count)
{
    if ((unsigned)type >= GS_TYPE_COUNT || count < 0)
        return 0;
    /* NumPy's own layout, byte for byte: a 1-D dict is under 100 bytes, so
     * version 1.0's 16-bit length always suffices. */
    char dict[128];
    int n = snprintf(dict, sizeof dict,
                     "{'descr': '<%c%u', 'fortran_order': False, 'shape': (%lld,), }",
                     npy_dtypes[type].kind, npy_dtypes[type].size, (long long)count);
    /* the data starts 64-byte aligned, as NumPy >= 1.22 writes it */
    size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
    if (total > cap)
        return 0;
    unsigned char *out = buf;
    size_t header_len = total - 10;
    memcpy(out, npy_magic, sizeof npy_magic);
    out[6] = 1;
    out[7] = 0;
    out[8] = (unsigned char)(header_len & 0xff);
    out[9] = (unsigned char)(header_len >> 8);
    memcpy(out + 10, dict, (size_t)n);
    memset(out + 10 + n, ' ', total - 10 - (size_t)n - 1);
    out[total - 1] = '\n';
    return total;
}
