/*
 * test_npy.c - the .npy header parser and writer (src/gs_npy.c): headers
 * written by NumPy itself, hand-built headers for every accepted variation
 * of the dict syntax and every rejection, and format -> parse round trips.
 */
#include "gs_npy.h"
#include "gs_test.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- headers written by NumPy 1.24 ------------------------------------------
 * The prelude and dict of each file, byte for byte, as the comment's call
 * wrote it (with `f` an io.BytesIO); the data is left out. */
/* numpy.save(f, numpy.zeros(3, '<f8')) */
static const char np_f8_3[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros((2, 3), '<i4')) */
static const char np_i4_2x3[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }"
    "                                                "
    "          "
    "\n";
/* numpy.save(f, numpy.array(7, '<u8')) */
static const char np_u8_scalar[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<u8', 'fortran_order': False, 'shape': (), }"
    "                                                "
    "              "
    "\n";
/* numpy.save(f, numpy.zeros(0, '<f4')) */
static const char np_f4_empty[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(1000003, '<i8')) */
static const char np_i8_1000003[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<i8', 'fortran_order': False, 'shape': (1000003,), }"
    "                                                "
    "      "
    "\n";
/* numpy.save(f, numpy.zeros((4, 1, 5), '<u4')) */
static const char np_u4_4x1x5[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<u4', 'fortran_order': False, 'shape': (4, 1, 5), }"
    "                                                "
    "       "
    "\n";
/* numpy.lib.format.write_array(f, numpy.zeros(5, '<f4'), version=(2, 0)) */
static const char np_f4_v2[] =
    "\x93NUMPY" "\x02\x00\x74\x00\x00\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"
    "                                                "
    "          "
    "\n";
/* numpy.lib.format.write_array(f, numpy.zeros(5, '<i8'), version=(3, 0)) */
static const char np_i8_v3[] =
    "\x93NUMPY" "\x03\x00\x74\x00\x00\x00"
    "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }"
    "                                                "
    "          "
    "\n";
/* numpy.save(f, numpy.asfortranarray(numpy.zeros((2, 3), '<i4'))) */
static const char np_fortran_2x3[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }"
    "                                                "
    "           "
    "\n";
/* numpy.save(f, numpy.zeros(3, '>i4')) */
static const char np_big_endian[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<c8')) */
static const char np_complex[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<U3')) */
static const char np_unicode[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<U3', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '|S3')) */
static const char np_bytes[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '|S3', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.array([1, 'a', None], dtype=object)) */
static const char np_object[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "             "
    "\n";
/* numpy.save(f, numpy.zeros(3, '?')) */
static const char np_bool[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<f2')) */
static const char np_half[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<f2', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<i4,<f8')) */
static const char np_structured[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': [('f0', '<i4'), ('f1', '<f8')], 'fortran_order': False, 'shape': (3,), }"
    "                                   "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<i2')) */
static const char np_int16[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "            "
    "\n";
/* numpy.save(f, numpy.zeros(3, '<M8[s]')) */
static const char np_datetime[] =
    "\x93NUMPY" "\x01\x00\x76\x00"
    "{'descr': '<M8[s]', 'fortran_order': False, 'shape': (3,), }"
    "                                                "
    "         "
    "\n";

/* ---- helpers ----------------------------------------------------------------- */

static char errbuf[256];

/* Parse and report a mismatch on stderr (CUnit shows only the condition). */
static int accepts(const void *buf, size_t len, gs_type type, int64_t count, int ndim,
                   uint64_t data_offset)
{
    gs_npy_header h;
    errbuf[0] = '\0';
    gs_status st = gs_npy_parse(buf, len, &h, errbuf, sizeof errbuf);
    if (st != GS_OK) {
        fprintf(stderr, "\n  rejected: %s\n", errbuf);
        return 0;
    }
    if (h.type != type || h.count != count || h.ndim != ndim || h.data_offset != data_offset) {
        fprintf(stderr, "\n  parsed type %d count %" PRId64 " ndim %d offset %" PRIu64
                ", expected %d %" PRId64 " %d %" PRIu64 "\n", (int)h.type, h.count, h.ndim,
                h.data_offset, (int)type, count, ndim, data_offset);
        return 0;
    }
    return 1;
}

/* Rejected with GS_ERR_FORMAT and a message containing `why`. */
static int rejects(const void *buf, size_t len, const char *why)
{
    gs_npy_header h;
    errbuf[0] = '\0';
    gs_status st = gs_npy_parse(buf, len, &h, errbuf, sizeof errbuf);
    if (st != GS_ERR_FORMAT || !strstr(errbuf, why)) {
        fprintf(stderr, "\n  status %d, message \"%s\", expected \"%s\"\n", (int)st, errbuf, why);
        return 0;
    }
    return 1;
}

/* A version `major`.0 header around `dict`, padded like NumPy's to 64 bytes
 * when `pad`, else with the dict alone (no newline). Returns its length. */
static unsigned char hbuf[GS_NPY_MAX_HEADER + 64];

static size_t build(int major, const char *dict, int pad)
{
    size_t prelude = major == 1 ? 10 : 12, n = strlen(dict);
    size_t total = pad ? (prelude + n + 1 + 63) / 64 * 64 : prelude + n;
    size_t hlen = total - prelude;
    memcpy(hbuf, "\x93NUMPY", 6);
    hbuf[6] = (unsigned char)major;
    hbuf[7] = 0;
    for (size_t i = 0; i < prelude - 8; i++)
        hbuf[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(hbuf + prelude, dict, n);
    if (pad) {
        memset(hbuf + prelude + n, ' ', total - prelude - n - 1);
        hbuf[total - 1] = '\n';
    }
    return total;
}

#define ACCEPTS_NP(arr, type, count, ndim) \
    CU_ASSERT(accepts(arr, sizeof(arr) - 1, type, count, ndim, sizeof(arr) - 1))
#define REJECTS_NP(arr, why) CU_ASSERT(rejects(arr, sizeof(arr) - 1, why))
/* A padded version 1.0 header around a dict: accepted as (type, count, ndim). */
#define ACCEPTS(dict, type, count, ndim)                                      \
    do {                                                                      \
        size_t len_ = build(1, dict, 1);                                      \
        CU_ASSERT(accepts(hbuf, len_, type, count, ndim, len_));              \
    } while (0)
#define REJECTS(dict, why)                                                    \
    do {                                                                      \
        size_t len_ = build(1, dict, 1);                                      \
        CU_ASSERT(rejects(hbuf, len_, why));                                  \
    } while (0)

#define DICT(descr, fortran, shape) \
    "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

/* ---- NumPy's own files ---------------------------------------------------------- */

static void test_numpy_accepted(void)
{
    ACCEPTS_NP(np_f8_3, GS_F64, 3, 1);
    ACCEPTS_NP(np_i4_2x3, GS_I32, 6, 2);
    ACCEPTS_NP(np_u8_scalar, GS_U64, 1, 0);
    ACCEPTS_NP(np_f4_empty, GS_F32, 0, 1);
    ACCEPTS_NP(np_i8_1000003, GS_I64, 1000003, 1);
    ACCEPTS_NP(np_u4_4x1x5, GS_U32, 20, 3);
    ACCEPTS_NP(np_f4_v2, GS_F32, 5, 1);
    ACCEPTS_NP(np_i8_v3, GS_I64, 5, 1);
}

static void test_numpy_rejected(void)
{
    REJECTS_NP(np_fortran_2x3, "Fortran-ordered");
    REJECTS_NP(np_big_endian, "big-endian dtype '>i4'");
    REJECTS_NP(np_complex, "complex dtype '<c8'");
    REJECTS_NP(np_unicode, "string dtype '<U3'");
    REJECTS_NP(np_bytes, "string dtype '|S3'");
    REJECTS_NP(np_object, "Python object dtype '|O'");
    REJECTS_NP(np_bool, "boolean dtype '|b1'");
    REJECTS_NP(np_half, "dtype '<f2' is not supported");
    REJECTS_NP(np_structured, "structured dtypes");
    REJECTS_NP(np_int16, "dtype '<i2' is not supported");
    REJECTS_NP(np_datetime, "datetime dtype '<M8[s]'");
}

/* What we write is what NumPy writes for the same 1-D array. */
static void test_numpy_same_bytes(void)
{
    unsigned char buf[256];
    size_t n = gs_npy_format(buf, sizeof buf, GS_F64, 3);
    CU_ASSERT_EQUAL(n, sizeof np_f8_3 - 1);
    CU_ASSERT(n == sizeof np_f8_3 - 1 && memcmp(buf, np_f8_3, n) == 0);
    n = gs_npy_format(buf, sizeof buf, GS_I64, 1000003);
    CU_ASSERT(n == sizeof np_i8_1000003 - 1 && memcmp(buf, np_i8_1000003, n) == 0);
    n = gs_npy_format(buf, sizeof buf, GS_F32, 0);
    CU_ASSERT(n == sizeof np_f4_empty - 1 && memcmp(buf, np_f4_empty, n) == 0);
}

/* ---- the prelude ---------------------------------------------------------------- */

static void test_magic(void)
{
    CU_ASSERT(rejects("", 0, "not a .npy file"));
    CU_ASSERT(rejects("\x93NUMPZ\x01\x00\x00\x00", 10, "not a .npy file"));
    CU_ASSERT(rejects("PK\x03\x04", 4, "not a .npy file"));  /* an .npz */
    CU_ASSERT(rejects("\x93NUM", 4, "truncated"));
    CU_ASSERT(rejects("\x93NUMPY\x01\x00\x76", 9, "truncated"));
    CU_ASSERT(rejects("\x93NUMPY\x02\x00\x74\x00\x00", 11, "truncated"));
}

static void test_version(void)
{
    static const unsigned char bad[][2] = {{0, 0}, {1, 1}, {2, 1}, {4, 0}, {0xff, 0xff}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t len = build(1, DICT("<f8", "False", "(3,)"), 1);
        hbuf[6] = bad[i][0];
        hbuf[7] = bad[i][1];
        CU_ASSERT(rejects(hbuf, len, "unsupported .npy format version"));
    }
    size_t len = build(2, DICT("<u4", "False", "(7,)"), 1);
    CU_ASSERT(accepts(hbuf, len, GS_U32, 7, 1, len));
    /* 3.0 allows UTF-8 in the dict; ours is ASCII, which is UTF-8 */
    len = build(3, DICT("<u4", "False", "(7,)"), 0);
    CU_ASSERT(accepts(hbuf, len, GS_U32, 7, 1, len));
}

static void test_header_length(void)
{
    /* the length declared exceeds what the buffer (the file) holds */
    size_t len = build(1, DICT("<f8", "False", "(3,)"), 1);
    CU_ASSERT(rejects(hbuf, len - 1, "truncated .npy header"));
    CU_ASSERT(rejects(hbuf, 10, "truncated .npy header"));
    /* a bigger buffer (the file's data follows) is fine */
    CU_ASSERT(accepts(hbuf, sizeof hbuf, GS_F64, 3, 1, len));
    /* a version 2.0 length beyond what any header of ours needs */
    build(2, DICT("<f8", "False", "(3,)"), 1);
    hbuf[10] = 1;  /* + 65536 */
    CU_ASSERT(rejects(hbuf, sizeof hbuf, "larger than"));
    /* a 2.0 header can be large and still fit */
    char dict[GS_NPY_MAX_HEADER];
    snprintf(dict, sizeof dict, "{'descr': '<i8', 'fortran_order': False, 'shape': (9,), %*s}",
             60000, "");
    len = build(2, dict, 1);
    CU_ASSERT(len > 60000 && len <= GS_NPY_MAX_HEADER);
    CU_ASSERT(accepts(hbuf, len, GS_I64, 9, 1, len));
}

/* ---- the dict ------------------------------------------------------------------- */

static void test_descr(void)
{
    static const struct { const char *d; gs_type t; } ok[] = {
        {"<i4", GS_I32}, {"<i8", GS_I64}, {"<u4", GS_U32}, {"<u8", GS_U64},
        {"<f4", GS_F32}, {"<f8", GS_F64},
        {"=i8", GS_I64}, {"=f4", GS_F32},   /* native order on a little-endian host */
        {"f8", GS_F64},  {"u4", GS_U32},    /* no order character: native, as numpy.dtype */
    };
    char dict[128];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (4,)}",
                 ok[i].d);
        size_t len = build(1, dict, 1);
        CU_ASSERT(accepts(hbuf, len, ok[i].t, 4, 1, len));
    }
    REJECTS(DICT(">i4", "False", "(3,)"), "big-endian dtype '>i4'");
    REJECTS(DICT(">f8", "False", "(3,)"), "x.astype('<f8')");
    REJECTS(DICT("|i4", "False", "(3,)"), "only valid for 1-byte types");
    REJECTS(DICT("<c8", "False", "(3,)"), "complex");
    REJECTS(DICT("<c16", "False", "(3,)"), "complex");
    REJECTS(DICT("<U3", "False", "(3,)"), "string");
    REJECTS(DICT("|S3", "False", "(3,)"), "string");
    REJECTS(DICT("|O", "False", "(3,)"), "Python object");
    REJECTS(DICT("|b1", "False", "(3,)"), "boolean");
    REJECTS(DICT("|V8", "False", "(3,)"), "void");
    REJECTS(DICT("<m8[ns]", "False", "(3,)"), "datetime");
    REJECTS(DICT("<f2", "False", "(3,)"), "dtype '<f2' is not supported");
    REJECTS(DICT("<f16", "False", "(3,)"), "dtype '<f16' is not supported");
    REJECTS(DICT("|i1", "False", "(3,)"), "dtype '|i1' is not supported");
    REJECTS(DICT("<u2", "False", "(3,)"), "dtype '<u2' is not supported");
    REJECTS(DICT("<i4x", "False", "(3,)"), "dtype '<i4x' is not supported");
    REJECTS(DICT("<i40000000000", "False", "(3,)"), "is not supported");
    REJECTS(DICT("float64", "False", "(3,)"), "dtype 'float64' is not supported");
    REJECTS(DICT("<", "False", "(3,)"), "empty dtype");
    REJECTS(DICT("", "False", "(3,)"), "empty dtype");
    REJECTS("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (3,)}", "structured");
    REJECTS("{'descr': 5, 'fortran_order': False, 'shape': (3,)}", "quoted dtype");
    REJECTS("{'descr': '<i4\\n', 'fortran_order': False, 'shape': (3,)}",
            "unsupported character");
    REJECTS("{'descr': '<i4, 'fortran_order': False, 'shape': (3,)}", "dtype '<i4, '");
    size_t len = build(1, "{'descr': \"<i4', 'fortran_order': False, 'shape': (3,)}", 0);
    CU_ASSERT(rejects(hbuf, len, "unterminated string"));
}

static void test_syntax(void)
{
    /* keys in any order, either quote, any whitespace, with or without the
     * trailing comma, padded or not */
    ACCEPTS("{'shape': (3,), 'fortran_order': False, 'descr': '<i4'}", GS_I32, 3, 1);
    ACCEPTS("{'fortran_order': False, 'descr': '<i4', 'shape': (3,),}", GS_I32, 3, 1);
    ACCEPTS("{\"descr\": \"<u8\", \"fortran_order\": False, \"shape\": (3,)}", GS_U64, 3, 1);
    ACCEPTS("{'descr':'<f4','fortran_order':False,'shape':(2,3)}", GS_F32, 6, 2);
    ACCEPTS("  {\n\t'descr' :\t'<f4' ,\r\n 'fortran_order'  : False,\n"
            " 'shape' : ( 2 , 3 , ) ,\n }  ", GS_F32, 6, 2);
    size_t len = build(1, DICT("<f8", "False", "(3,)"), 0);  /* no padding, no newline */
    CU_ASSERT(accepts(hbuf, len, GS_F64, 3, 1, len));

    REJECTS("", "expected '{'");
    REJECTS("'descr': '<i4'", "expected '{'");
    REJECTS("{'descr': '<i4', 'fortran_order': False, 'shape': (3,)", "expected ',' or '}'");
    REJECTS("{'descr': '<i4' 'fortran_order': False, 'shape': (3,)}", "expected ',' or '}'");
    REJECTS("{'descr' '<i4', 'fortran_order': False, 'shape': (3,)}", "expected ':'");
    REJECTS("{'descr': '<i4',, 'fortran_order': False, 'shape': (3,)}", "quoted key");
    REJECTS("{,}", "quoted key");
    REJECTS("{descr: '<i4', 'fortran_order': False, 'shape': (3,)}", "quoted key");
    REJECTS(DICT("<i4", "False", "(3,)") " x", "only padding");
    REJECTS(DICT("<i4", "False", "(3,)") "}", "only padding");
    len = build(1, DICT("<i4", "False", "(3,)"), 1);
    hbuf[len - 2] = '\0';  /* NUL padding is not Python */
    CU_ASSERT(rejects(hbuf, len, "only padding"));
}

static void test_keys(void)
{
    REJECTS("{}", "no 'descr' key");
    REJECTS("{'fortran_order': False, 'shape': (3,)}", "no 'descr' key");
    REJECTS("{'descr': '<i4', 'shape': (3,)}", "no 'fortran_order' key");
    REJECTS("{'descr': '<i4', 'fortran_order': False}", "no 'shape' key");
    REJECTS("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
            "unexpected key 'extra'");
    REJECTS("{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (3,)}",
            "'descr' appears twice");
    REJECTS("{'Descr': '<i4', 'fortran_order': False, 'shape': (3,)}", "unexpected key");
}

static void test_fortran_order(void)
{
    ACCEPTS(DICT("<i8", "True", "(5,)"), GS_I64, 5, 1);
    ACCEPTS(DICT("<i8", "True", "()"), GS_I64, 1, 0);
    /* one dimension longer than 1: the same flat order as C */
    ACCEPTS(DICT("<i8", "True", "(1, 5, 1)"), GS_I64, 5, 3);
    /* empty: no data to order */
    ACCEPTS(DICT("<i8", "True", "(2, 0, 3)"), GS_I64, 0, 3);
    REJECTS(DICT("<i8", "True", "(2, 3)"), "Fortran-ordered array with 2 dimensions");
    REJECTS(DICT("<i8", "True", "(1, 2, 1, 3)"), "Fortran-ordered");
    REJECTS(DICT("<i8", "1", "(3,)"), "True or False");
    REJECTS(DICT("<i8", "true", "(3,)"), "True or False");
    REJECTS(DICT("<i8", "Truely", "(3,)"), "True or False");
    REJECTS(DICT("<i8", "'False'", "(3,)"), "True or False");
}

static void test_shape(void)
{
    ACCEPTS(DICT("<f4", "False", "()"), GS_F32, 1, 0);
    ACCEPTS(DICT("<f4", "False", "( )"), GS_F32, 1, 0);
    ACCEPTS(DICT("<f4", "False", "(0,)"), GS_F32, 0, 1);
    ACCEPTS(DICT("<f4", "False", "(3, 0)"), GS_F32, 0, 2);
    ACCEPTS(DICT("<f4", "False", "(1099511627776,)"), GS_F32, INT64_C(1) << 40, 1);
    ACCEPTS(DICT("<f4", "False", "(1048576, 1048576)"), GS_F32, INT64_C(1) << 40, 2);
    ACCEPTS(DICT("<f4", "False", "(5L,)"), GS_F32, 5, 1);  /* Python 2's NumPy */
    ACCEPTS(DICT("<f4", "False", "(2, 2, 2, 2, 2, 2, 2, 2, 2, 2)"), GS_F32, 1024, 10);
    /* a zero anywhere makes the product 0, even after an overflowing part */
    ACCEPTS(DICT("<f4", "False", "(4294967296, 4294967296, 0)"), GS_F32, 0, 3);

    REJECTS(DICT("<f4", "False", "(5)"), "is not a tuple");
    REJECTS(DICT("<f4", "False", "5"), "a tuple");
    REJECTS(DICT("<f4", "False", "[5]"), "a tuple");
    REJECTS(DICT("<f4", "False", "(-5,)"), "negative dimension");
    REJECTS(DICT("<f4", "False", "(2, -1)"), "negative dimension");
    REJECTS(DICT("<f4", "False", "(,)"), "a dimension");
    REJECTS(DICT("<f4", "False", "(2,,)"), "a dimension");
    REJECTS(DICT("<f4", "False", "(2 3)"), "',' or ')'");
    REJECTS(DICT("<f4", "False", "(2.5,)"), "',' or ')'");
    REJECTS(DICT("<f4", "False", "(0x10,)"), "',' or ')'");
    REJECTS(DICT("<f4", "False", "('3',)"), "a dimension");
    REJECTS(DICT("<f4", "False", "(3,"), "a dimension");
    REJECTS(DICT("<f4", "False", "(9223372036854775808,)"), "exceeds 2^63-1");
    /* the product, and the product in bytes, must fit in 64 bits */
    REJECTS(DICT("<f4", "False", "(4294967296, 4294967296)"), "too large");
    REJECTS(DICT("<i1", "False", "(4294967296, 4294967296)"), "not supported");
    REJECTS(DICT("<f8", "False", "(9223372036854775807,)"), "too large");
    REJECTS(DICT("<f4", "False", "(4611686018427387904,)"), "too large");
    /* the largest f8 array whose end offset still fits in int64 (a padded
     * header of this dict is 128 bytes) */
    ACCEPTS(DICT("<f8", "False", "(1152921504606846959,)"), GS_F64,
            INT64_C(1152921504606846959), 1);
    REJECTS(DICT("<f8", "False", "(1152921504606846960,)"), "too large");
}

/* Messages describe the problem only; the caller names the file. */
static void test_error_buffer(void)
{
    size_t len = build(1, DICT(">i4", "False", "(3,)"), 1);
    gs_npy_header h = {GS_F64, 42, 7, 9};
    char small[8];
    CU_ASSERT_EQUAL(gs_npy_parse(hbuf, len, &h, small, sizeof small), GS_ERR_FORMAT);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);  /* truncated, terminated */
    CU_ASSERT_EQUAL(gs_npy_parse(hbuf, len, &h, NULL, 0), GS_ERR_FORMAT);
    /* the header is left alone on failure */
    CU_ASSERT(h.type == GS_F64 && h.count == 42 && h.data_offset == 7 && h.ndim == 9);
}

/* ---- the writer ------------------------------------------------------------------ */

static void test_round_trip(void)
{
    for (int t = 0; t < GS_TYPE_COUNT; t++) {
        int64_t size = (t == GS_I32 || t == GS_U32 || t == GS_F32) ? 4 : 8;
        /* the largest count whose data still ends below 2^63 bytes (our
         * headers are 128 bytes when the count has 19 digits) */
        int64_t max = (INT64_MAX - 128) / size;
        const int64_t counts[] = {0, 1, 2, 1000003, INT64_C(1) << 40, max, max + 1,
                                  INT64_C(1) << 62};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            unsigned char buf[256];
            size_t n = gs_npy_format(buf, sizeof buf, (gs_type)t, counts[i]);
            CU_ASSERT(n > 0 && n % 64 == 0 && n <= 128);
            if (n == 0)
                continue;
            CU_ASSERT_EQUAL(buf[n - 1], '\n');
            CU_ASSERT(buf[6] == 1 && buf[7] == 0);
            CU_ASSERT_EQUAL((size_t)buf[8] | (size_t)buf[9] << 8, n - 10);
            if (counts[i] > max) {  /* written as asked, refused when read */
                CU_ASSERT(rejects(buf, n, "too large"));
            } else {
                CU_ASSERT(accepts(buf, n, (gs_type)t, counts[i], 1, n));
            }
        }
    }
}

static void test_format_limits(void)
{
    unsigned char buf[256];
    size_t n = gs_npy_format(buf, sizeof buf, GS_I32, 5);
    CU_ASSERT_EQUAL(n, 128);
    CU_ASSERT_EQUAL(gs_npy_format(buf, n - 1, GS_I32, 5), 0);
    CU_ASSERT_EQUAL(gs_npy_format(buf, n, GS_I32, 5), n);
    CU_ASSERT_EQUAL(gs_npy_format(buf, 0, GS_I32, 5), 0);
    CU_ASSERT_EQUAL(gs_npy_format(buf, sizeof buf, GS_I32, -1), 0);
    CU_ASSERT_EQUAL(gs_npy_format(buf, sizeof buf, GS_TYPE_COUNT, 5), 0);
    CU_ASSERT_EQUAL(gs_npy_format(buf, sizeof buf, (gs_type)-1, 5), 0);
    /* the longest count still needs only 128 bytes */
    CU_ASSERT_EQUAL(gs_npy_format(buf, sizeof buf, GS_U64, INT64_MAX), 128);
}

static int register_suites(void)
{
    static CU_TestInfo numpy_tests[] = {
        {"headers NumPy writes for our types", test_numpy_accepted},
        {"headers NumPy writes for other arrays", test_numpy_rejected},
        {"gs_npy_format writes NumPy's bytes", test_numpy_same_bytes},
        CU_TEST_INFO_NULL,
    };
    static CU_TestInfo prelude_tests[] = {
        {"magic string", test_magic},
        {"versions", test_version},
        {"header length", test_header_length},
        CU_TEST_INFO_NULL,
    };
    static CU_TestInfo dict_tests[] = {
        {"descr", test_descr},
        {"dict syntax", test_syntax},
        {"keys", test_keys},
        {"fortran_order", test_fortran_order},
        {"shape", test_shape},
        {"error buffer", test_error_buffer},
        CU_TEST_INFO_NULL,
    };
    static CU_TestInfo format_tests[] = {
        {"format then parse, every type", test_round_trip},
        {"buffer and argument limits", test_format_limits},
        CU_TEST_INFO_NULL,
    };
    static CU_SuiteInfo suites[] = {
        {"npy_numpy", NULL, NULL, NULL, NULL, numpy_tests},
        {"npy_prelude", NULL, NULL, NULL, NULL, prelude_tests},
        {"npy_dict", NULL, NULL, NULL, NULL, dict_tests},
        {"npy_format", NULL, NULL, NULL, NULL, format_tests},
        CU_SUITE_INFO_NULL,
    };
    return CU_register_suites(suites) == CUE_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    return gs_test_main(argc, argv, register_suites);
}
