/*
 * test_mpi.c - the MPI suites, run under mpirun with 1 to 4 ranks.
 *
 * Every rank runs every test, so collective calls inside a test line up;
 * assertions are never fatal for the same reason. Expected values are
 * computed serially: every rank can generate every other rank's input.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpuscan.h"
#include "gs_gen.h"
#include "gs_mpi.h"
#include "gs_test.h"

/* ---- helpers -------------------------------------------------------------- */

/* The MPI layer's own handle: these suites test the layer below
 * gs_context_create through its interface (gs_mpi.h). */
static gs_err mpi_err;
static gs_mpi mpi_handle;
static gs_mpi *const mpi_ctx = &mpi_handle;

static int mpi_ctx_open(void)
{
    return gs_mpi_setup(mpi_ctx, MPI_COMM_WORLD, &mpi_err) != GS_OK;
}

static int mpi_ctx_close(void)
{
    gs_mpi_teardown(mpi_ctx);
    return 0;
}

/* 1 when `ok` holds on every rank. */
static int on_all_ranks(int ok)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* 1 when every rank holds the same `text`. */
static int same_on_all_ranks(const char *text)
{
    char root[GS_ERRMSG_LEN];
    snprintf(root, sizeof root, "%s", text);
    MPI_Bcast(root, (int)sizeof root, MPI_CHAR, 0, MPI_COMM_WORLD);
    return on_all_ranks(strcmp(root, text) == 0);
}

/* ---- set-up and device choice ----------------------------------------------- */

static void test_setup_ranks(void)
{
    gs_mpi *ctx = mpi_ctx;
    CU_ASSERT_EQUAL(ctx->rank, gs_test_rank());
    CU_ASSERT_EQUAL(ctx->size, gs_test_size());
    CU_ASSERT(ctx->local_rank >= 0 && ctx->local_rank < ctx->local_size);
    CU_ASSERT(ctx->local_size <= ctx->size);

    int relation = MPI_UNEQUAL;
    MPI_Comm_compare(ctx->comm, MPI_COMM_WORLD, &relation);
    CU_ASSERT_EQUAL(relation, MPI_CONGRUENT);   /* a duplicate, not the caller's */

    MPI_Errhandler handler;
    MPI_Comm_get_errhandler(ctx->comm, &handler);
    CU_ASSERT(handler == MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&handler);

    /* the nodes' local sizes add up to all ranks */
    int64_t ranks = 0;
    CU_ASSERT_EQUAL(gs_mpi_sum_i64(ctx, ctx->local_rank == 0 ? ctx->local_size : 0, &ranks), GS_OK);
    CU_ASSERT_EQUAL(ranks, ctx->size);
}

/* Contexts come and go around a live one; its combines keep working. */
static void test_setup_nested_contexts(void)
{
    gs_err err_outer, err_inner;
    gs_mpi outer, inner;
    CU_ASSERT_EQUAL(gs_mpi_setup(&outer, MPI_COMM_WORLD, &err_outer), GS_OK);
    CU_ASSERT_EQUAL(gs_mpi_setup(&inner, MPI_COMM_WORLD, &err_inner), GS_OK);
    gs_mpi_teardown(&outer);
    gs_mpi_teardown(&inner);
    CU_ASSERT(inner.comm == MPI_COMM_NULL && inner.node_comm == MPI_COMM_NULL);
    gs_mpi_teardown(&inner);   /* a second teardown does nothing */

    gs_acc acc = { .s = -((gs_i128)1 << 70) };
    CU_ASSERT_EQUAL(gs_mpi_allreduce_acc(mpi_ctx, GS_I64, GS_SUM, &acc), GS_OK);
    CU_ASSERT(acc.s == -((gs_i128)1 << 70) * gs_test_size());
}

static void test_pick_device(void)
{
    for (int local_rank = 0; local_rank < 8; local_rank++)
        CU_ASSERT_EQUAL(gs_mpi_pick_device(local_rank, 1, -1), 0);   /* one GPU per task */
    CU_ASSERT_EQUAL(gs_mpi_pick_device(5, 4, -1), 1);
    CU_ASSERT_EQUAL(gs_mpi_pick_device(3, 4, -1), 3);
    CU_ASSERT_EQUAL(gs_mpi_pick_device(0, 8, -1), 0);
    CU_ASSERT_EQUAL(gs_mpi_pick_device(5, 4, 2), 2);                 /* override */
    CU_ASSERT_EQUAL(gs_mpi_pick_device(5, 1, 0), 0);
    CU_ASSERT_EQUAL(gs_mpi_pick_device(2, 0, -1), -1);               /* no GPU */
}

/* ---- agreement ---------------------------------------------------------------- */

static void test_agree_all_succeed(void)
{
    gs_mpi *ctx = mpi_ctx;
    snprintf(ctx->err->msg, sizeof ctx->err->msg, "untouched %d", ctx->rank);
    CU_ASSERT_EQUAL(gs_mpi_agree(ctx, GS_OK), GS_OK);
    char mine[32];
    snprintf(mine, sizeof mine, "untouched %d", ctx->rank);
    CU_ASSERT_STRING_EQUAL(ctx->err->msg, mine);
}

/* Each rank in turn fails alone, then together with every rank above it
 * (each with its own status): the lowest failing rank's status and message
 * reach every rank. */
static void test_agree_lowest_failure_wins(void)
{
    gs_mpi *ctx = mpi_ctx;
    for (int together = 0; together < 2; together++) {
        for (int first = 0; first < ctx->size; first++) {
            ctx->err->msg[0] = '\0';
            int fails = together ? ctx->rank >= first : ctx->rank == first;
            gs_status mine = fails ? gs_err_set(ctx->err, (gs_status)(GS_ERR_ARG + ctx->rank % 4),
                                             "failure marker %d", ctx->rank)
                                   : GS_OK;
            gs_status agreed = gs_mpi_agree(ctx, mine);

            char expected[64];
            snprintf(expected, sizeof expected, "rank %d: failure marker %d", first, first);
            CU_ASSERT_EQUAL(agreed, GS_ERR_ARG + first % 4);
            CU_ASSERT_STRING_EQUAL(ctx->err->msg, expected);
            CU_ASSERT(same_on_all_ranks(ctx->err->msg));
        }
    }
}

/* Values agreed with the outcome: a bit for each value that differs
 * between ranks, on every rank; a count out of range fails every rank
 * (without it, the count was silently taken as 0). */
static void test_agree_values(void)
{
    gs_mpi *ctx = mpi_ctx;
    const int64_t values[GS_MPI_AGREE_VALUES + 1] = {7, ctx->rank, -9, (int64_t)1 << 40, 0, 0, 0, ctx->rank % 2, 5};
    unsigned differ = 99;
    CU_ASSERT_EQUAL(gs_mpi_agree_values(ctx, GS_OK, values, GS_MPI_AGREE_VALUES, &differ), GS_OK);
    CU_ASSERT_EQUAL(differ, ctx->size > 1 ? (1u << 1 | 1u << 7) : 0u);
    for (int k = 0; k < 2; k++) {
        const int count = k == 0 ? GS_MPI_AGREE_VALUES + 1 : -1;
        ctx->err->msg[0] = '\0';
        differ = 99;
        CU_ASSERT_EQUAL(gs_mpi_agree_values(ctx, GS_OK, values, count, &differ), GS_ERR_ARG);
        CU_ASSERT_EQUAL(differ, 0u);
        CU_ASSERT_PTR_NOT_NULL(strstr(ctx->err->msg, "gs_mpi_agree_values"));
        CU_ASSERT(same_on_all_ranks(ctx->err->msg));
    }
}

/* ---- typed combines -------------------------------------------------------------
 * Each case gives every rank a partial of (type, op); the expected result
 * folds all ranks' partials with gs_acc_combine in rank order. Float values
 * are dyadic (sums exact in any order) or powers of two (products exact). */
enum partial_case {
    CASE_RANDOM,      /* 128-bit sums beyond 2^64; full-range integers */
    CASE_EXTREME,     /* sums near 2^100 of both signs, type min/max, infinities */
    CASE_NAN,         /* floats only: one rank holds NaN, another +inf */
    CASE_SOME_EMPTY,  /* even ranks hold the identity, as empty shards do */
    CASE_COUNT
};

static gs_acc partial_of(gs_type type, gs_op op, int which, int rank)
{
    uint64_t bits = gs_gen_bits(gs_test_seed(),
                                (((uint64_t)which * GS_TYPE_COUNT + type) * GS_OP_COUNT + op) * 64 + rank);
    int last = rank == gs_test_size() - 1;
    int extreme = which == CASE_EXTREME;
    gs_acc a = gs_acc_identity(type, op);
    if (which == CASE_SOME_EMPTY && rank % 2 == 0) return a;

    switch (gs_reduce_acc_kind(type, op)) {
    case GS_ACC_S128:
        a.s = extreme ? (rank % 2 ? 1 : -1) * (((gs_i128)1 << 100) + (gs_i128)bits)
                      : (gs_i128)(int64_t)bits * 8;
        break;
    case GS_ACC_U128:
        a.w = extreme ? ((gs_u128)1 << 100) + bits : (gs_u128)bits * 8;
        break;
    case GS_ACC_U64:
        if (op == GS_PROD)
            a.u = extreme && last ? 0 : bits;
        else
            a.u = extreme ? (rank % 2 ? gs_type_max_u64(type) : 0) : bits % gs_type_max_u64(type);
        break;
    case GS_ACC_I64:
        a.i = extreme ? (rank % 2 ? gs_type_max_i64(type) : gs_type_min_i64(type))
            : type == GS_I32 ? (int32_t)bits : (int64_t)bits;
        break;
    case GS_ACC_F64:
        if (op == GS_PROD)
            a.f = ldexp(bits & 1 ? -1.0 : 1.0, (int)((bits >> 1) % 41) - 20);
        else
            a.f = (double)((int64_t)bits >> 30) * 0x1p-12;
        if (extreme)
            a.f = op == GS_MIN || op == GS_MAX ? (rank % 2 ? INFINITY : -INFINITY)
                : last ? INFINITY : a.f;
        if (which == CASE_NAN)
            a.f = rank == gs_test_size() / 2 ? NAN : rank == 0 ? INFINITY : a.f;
        break;
    }
    return a;
}

static int acc_equal(gs_acc_kind kind, gs_acc a, gs_acc b)
{
    switch (kind) {
    case GS_ACC_S128: return a.s == b.s;
    case GS_ACC_U128: return a.w == b.w;
    case GS_ACC_I64: return a.i == b.i;
    case GS_ACC_U64: return a.u == b.u;
    case GS_ACC_F64: return isnan(a.f) ? isnan(b.f) : a.f == b.f;
    }
    return 0;
}

/* The serial fold of ranks [0, ranks)'s partials. */
static gs_acc fold_ranks(gs_type type, gs_op op, int which, int ranks)
{
    gs_acc acc = gs_acc_identity(type, op);
    for (int k = 0; k < ranks; k++) acc = gs_acc_combine(type, op, acc, partial_of(type, op, which, k));
    return acc;
}

/* Runs `check` for every type x op x case that applies. */
static void for_each_case(int (*check)(gs_type, gs_op, int))
{
    for (int type = 0; type < GS_TYPE_COUNT; type++)
        for (int op = 0; op < GS_OP_COUNT; op++)
            for (int which = 0; which < CASE_COUNT; which++) {
                if (which == CASE_NAN && !gs_type_is_float((gs_type)type)) continue;
                if (!check((gs_type)type, (gs_op)op, which))
                    fprintf(stderr, "rank %d: %s %s case %d: wrong result\n", gs_test_rank(),
                            gs_type_name((gs_type)type), gs_op_name((gs_op)op), which);
            }
}

static int check_allreduce(gs_type type, gs_op op, int which)
{
    gs_acc acc = partial_of(type, op, which, gs_test_rank());
    gs_status status = gs_mpi_allreduce_acc(mpi_ctx, type, op, &acc);
    int ok = status == GS_OK &&
             acc_equal(gs_reduce_acc_kind(type, op), acc, fold_ranks(type, op, which, gs_test_size()));
    CU_ASSERT(ok);
    return ok;
}

static int check_exscan(gs_type type, gs_op op, int which)
{
    int rank = gs_test_rank();
    gs_acc offset;
    gs_status status = gs_mpi_exscan_carry(mpi_ctx, type, op, partial_of(type, op, which, rank), &offset);
    /* rank 0: the identity, as the fold of no rank is */
    gs_acc expected = gs_acc_scan_carry(type, op, fold_ranks(type, op, which, rank));
    gs_acc_kind kind = gs_reduce_acc_kind(type, op);
    if (kind == GS_ACC_S128 || kind == GS_ACC_U128) kind = GS_ACC_U64;   /* carries wrap */
    int ok = status == GS_OK && acc_equal(kind, offset, expected);
    CU_ASSERT(ok);
    return ok;
}

static void test_allreduce_acc(void) { for_each_case(check_allreduce); }
static void test_exscan_carry(void) { for_each_case(check_exscan); }

/* The cases reach what they claim on enough ranks. */
static void test_cases_cover_edges(void)
{
    int size = gs_test_size();
    CU_ASSERT(fold_ranks(GS_I32, GS_SUM, CASE_EXTREME, 1).s < INT64_MIN);
    CU_ASSERT(fold_ranks(GS_U64, GS_SUM, CASE_EXTREME, size).w > UINT64_MAX);
    CU_ASSERT(isnan(fold_ranks(GS_F32, GS_MAX, CASE_NAN, size).f));
    CU_ASSERT(isinf(fold_ranks(GS_F64, GS_SUM, CASE_EXTREME, size).f));
    if (size >= 2) CU_ASSERT_EQUAL(fold_ranks(GS_F64, GS_MIN, CASE_EXTREME, size).f, -INFINITY);
}

static void test_stats_and_sums(void)
{
    gs_mpi *ctx = mpi_ctx;
    int rank = ctx->rank, size = ctx->size;
    double mine[3] = { rank, -rank, 0.5 }, min[3], avg[3], max[3];
    CU_ASSERT_EQUAL(gs_mpi_stats(ctx, mine, 3, min, avg, max), GS_OK);
    CU_ASSERT(min[0] == 0 && max[0] == size - 1 && avg[0] == (size - 1) / 2.0);
    CU_ASSERT(min[1] == 1 - size && max[1] == 0 && avg[1] == (1 - size) / 2.0);
    CU_ASSERT(min[2] == 0.5 && max[2] == 0.5 && avg[2] == 0.5);

    const int64_t big = (int64_t)1 << 40;
    int64_t total = 0, largest = 0;
    CU_ASSERT_EQUAL(gs_mpi_sum_i64(ctx, big * (rank + 1), &total), GS_OK);
    CU_ASSERT_EQUAL(total, big * size * (size + 1) / 2);
    CU_ASSERT_EQUAL(gs_mpi_max_i64(ctx, -big * (rank + 1), &largest), GS_OK);
    CU_ASSERT_EQUAL(largest, -big);

    double sums[2] = { 1.0, rank };
    CU_ASSERT_EQUAL(gs_mpi_sum_f64(ctx, sums, 2), GS_OK);
    CU_ASSERT(sums[0] == size && sums[1] == size * (size - 1) / 2.0);
    double below = -1;
    CU_ASSERT_EQUAL(gs_mpi_exscan_f64(ctx, rank + 1.0, &below), GS_OK);
    CU_ASSERT_EQUAL(below, rank * (rank + 1) / 2.0);

    int pair[2] = { rank, -rank }, *all = malloc(sizeof pair * (size_t)size);
    CU_ASSERT_EQUAL(gs_mpi_allgather_bytes(ctx, pair, sizeof pair, all), GS_OK);
    for (int k = 0; k < size; k++) CU_ASSERT(all[2 * k] == k && all[2 * k + 1] == -k);
    free(all);
}

/* ---- MPI-IO ------------------------------------------------------------------------
 * Files live in a fresh folder of the working directory (shared between nodes
 * where a job runs on several), made by rank 0 and removed at the end. */
static char io_dir[256];

static int io_dir_make(void)
{
    if (mpi_ctx_open()) return 1;
    int made = 1;
    if (gs_test_rank() == 0) {
        snprintf(io_dir, sizeof io_dir, "gs_test_mpiio.tmp.XXXXXX");
        made = mkdtemp(io_dir) != NULL;
    }
    MPI_Bcast(io_dir, (int)sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    return !on_all_ranks(made);
}

static int io_dir_remove(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (gs_test_rank() == 0) {
        DIR *dir = opendir(io_dir);
        for (struct dirent *e; dir && (e = readdir(dir));) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", io_dir, e->d_name);
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) unlink(path);
        }
        if (dir) closedir(dir);
        rmdir(io_dir);
    }
    return mpi_ctx_close();
}

static void io_path(char *path, size_t len, const char *name)
{
    snprintf(path, len, "%s/%s", io_dir, name);
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int64_t file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

/* Temporaries of `name` in the test folder. */
static int temp_files_of(const char *name)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, ".%s.gstmp.", name);
    int found = 0;
    DIR *dir = opendir(io_dir);
    for (struct dirent *e; dir && (e = readdir(dir));)
        found += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (dir) closedir(dir);
    return found;
}

/* A layout of uneven shards: every third rank's is empty, the others hold 1
 * to `most` bytes. */
typedef struct shard_layout {
    uint64_t offset, bytes, total;   /* this rank's shard; the whole file */
} shard_layout;

static shard_layout layout_of(uint64_t salt, uint64_t most)
{
    shard_layout l = { 0, 0, 0 };
    for (int k = 0; k < gs_test_size(); k++) {
        uint64_t bytes = k % 3 == 1 ? 0 : 1 + gs_gen_bits(gs_test_seed() ^ salt, (uint64_t)k) % most;
        if (k == gs_test_rank()) {
            l.offset = l.total;
            l.bytes = bytes;
        }
        l.total += bytes;
    }
    return l;
}

/* Byte i of the file written with `salt`. */
static void fill(unsigned char *buf, uint64_t from, uint64_t bytes, uint64_t salt)
{
    for (uint64_t i = 0; i < bytes; i++) buf[i] = (unsigned char)gs_gen_bits(gs_test_seed() + salt, from + i);
}

static int matches(const unsigned char *buf, uint64_t from, uint64_t bytes, uint64_t salt)
{
    for (uint64_t i = 0; i < bytes; i++)
        if (buf[i] != (unsigned char)gs_gen_bits(gs_test_seed() + salt, from + i)) return 0;
    return 1;
}

/* Every rank writes its shard of `name` collectively; the output appears only
 * at close(keep=1), whole. Then each rank reads its own shard back, and the
 * whole file. */
static void write_and_read_back(const char *name, uint64_t salt, uint64_t most)
{
    gs_mpi *ctx = mpi_ctx;
    char path[512];
    io_path(path, sizeof path, name);
    shard_layout l = layout_of(salt, most);
    unsigned char *mine = malloc(l.bytes + 1), *whole = malloc(l.total + 1);
    fill(mine, l.offset, l.bytes, salt);
    int existed = file_exists(path);
    MPI_Barrier(MPI_COMM_WORLD);   /* every rank looked before anyone creates */

    gs_file *f = NULL;
    CU_ASSERT_EQUAL(gs_mpiio_create(ctx, path, 0, &f), GS_OK);
    CU_ASSERT_EQUAL(temp_files_of(name), 1);
    CU_ASSERT_EQUAL(file_exists(path), existed);
    CU_ASSERT_EQUAL(gs_mpiio_write_at(ctx, f, l.offset, mine, l.bytes), GS_OK);
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 1), GS_OK);
    CU_ASSERT_EQUAL(temp_files_of(name), 0);
    CU_ASSERT_EQUAL(file_bytes(path), (int64_t)l.total);

    uint64_t size = 0;
    memset(mine, 0, l.bytes);
    CU_ASSERT_EQUAL(gs_mpiio_open_read(ctx, path, &f), GS_OK);
    CU_ASSERT_EQUAL(gs_mpiio_size(ctx, f, &size), GS_OK);
    CU_ASSERT_EQUAL(size, l.total);
    CU_ASSERT_EQUAL(gs_mpiio_read_at(ctx, f, l.offset, mine, l.bytes), GS_OK);
    CU_ASSERT(matches(mine, l.offset, l.bytes, salt));
    CU_ASSERT_EQUAL(gs_mpiio_read_at(ctx, f, 0, whole, l.total), GS_OK);
    CU_ASSERT(matches(whole, 0, l.total, salt));
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 0), GS_OK);
    CU_ASSERT(file_exists(path));   /* closing a file read never removes it */
    free(mine);
    free(whole);
}

static void test_io_write_read_back(void)
{
    write_and_read_back("shards.bin", 1, 5000);
    /* again over the same name: the new file replaces the old, whatever its size */
    write_and_read_back("shards.bin", 2, 3000);
}

/* Pieces of 1 + 3*rank bytes: ranks make different numbers of calls of their
 * own, and some none, yet every transfer completes. */
static void test_io_split_into_pieces(void)
{
    gs_mpiio_set_max_piece(1 + 3 * (uint64_t)gs_test_rank());
    write_and_read_back("pieces.bin", 3, 200);
    gs_mpiio_set_max_piece(0);
}

/* close(keep=0) removes the temporary and leaves an existing output as it was. */
static void test_io_discard_keeps_old_output(void)
{
    gs_mpi *ctx = mpi_ctx;
    char path[512];
    io_path(path, sizeof path, "kept.bin");
    static const char old[] = "the previous run's output";
    if (ctx->rank == 0) {
        FILE *out = fopen(path, "w");
        if (out) fputs(old, out), fclose(out);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    shard_layout l = layout_of(4, 1000);
    unsigned char *mine = malloc(l.bytes + 1);
    fill(mine, l.offset, l.bytes, 4);
    gs_file *f = NULL;
    CU_ASSERT_EQUAL(gs_mpiio_create(ctx, path, 0, &f), GS_OK);
    CU_ASSERT_EQUAL(gs_mpiio_write_at(ctx, f, l.offset, mine, l.bytes), GS_OK);
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 0), GS_OK);
    CU_ASSERT_EQUAL(temp_files_of("kept.bin"), 0);
    CU_ASSERT_EQUAL(file_bytes(path), (int64_t)strlen(old));
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, NULL, 1), GS_OK);
    free(mine);

    /* a run that never wrote leaves nothing either */
    io_path(path, sizeof path, "never.bin");
    CU_ASSERT_EQUAL(gs_mpiio_create(ctx, path, 0, &f), GS_OK);
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 0), GS_OK);
    CU_ASSERT(!file_exists(path));
    CU_ASSERT_EQUAL(temp_files_of("never.bin"), 0);
}

/* Temporaries left by runs that were killed (no process holds their lock)
 * are removed by the next run that writes the same output; one whose lock
 * is held (a run still writing) is left alone. The lock is an flock on the
 * file: rank 0 plays both the dead and the live run with a file of its own. */
static void test_io_stale_temporaries(void)
{
    gs_mpi *ctx = mpi_ctx;
    char path[512], dead[600], live[600];
    io_path(path, sizeof path, "stale.bin");
    snprintf(dead, sizeof dead, "%s/.stale.bin.gstmp.dead.1", io_dir);
    snprintf(live, sizeof live, "%s/.stale.bin.gstmp.live.2", io_dir);
    int live_fd = -1;
    if (ctx->rank == 0) {
        FILE *out = fopen(dead, "w");
        if (out) fputs("a killed run's output", out), fclose(out);
        live_fd = open(live, O_WRONLY | O_CREAT, 0644);
        CU_ASSERT(live_fd >= 0 && flock(live_fd, LOCK_EX) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(temp_files_of("stale.bin"), 2);
    gs_file *f = NULL;
    CU_ASSERT_EQUAL(gs_mpiio_create(ctx, path, 0, &f), GS_OK);
    CU_ASSERT(!file_exists(dead));
    CU_ASSERT(file_exists(live));
    CU_ASSERT_EQUAL(temp_files_of("stale.bin"), 2);   /* the live one and this run's */
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 1), GS_OK);
    CU_ASSERT_EQUAL(temp_files_of("stale.bin"), 1);
    if (ctx->rank == 0) {
        close(live_fd);   /* the live run ends without cleaning up: now stale */
        unlink(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CU_ASSERT_EQUAL(gs_mpiio_create(ctx, path, 0, &f), GS_OK);
    CU_ASSERT(!file_exists(live));
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 0), GS_OK);
    CU_ASSERT_EQUAL(temp_files_of("stale.bin"), 0);
}

/* A failed step: status, a message naming the file and `cause`, the same on
 * every rank; no file handed out. */
static void check_io_failure(gs_status got, gs_status expected, const gs_file *f,
                             const char *path, const char *cause)
{
    CU_ASSERT_EQUAL(got, expected);
    CU_ASSERT_PTR_NULL(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(mpi_ctx->err->msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(mpi_ctx->err->msg, cause));
    CU_ASSERT(same_on_all_ranks(mpi_ctx->err->msg));
    mpi_ctx->err->msg[0] = '\0';
}

static void test_io_open_missing(void)
{
    char path[512];
    io_path(path, sizeof path, "missing.npy");
    gs_file *f = NULL;
    gs_status got = gs_mpiio_open_read(mpi_ctx, path, &f);
    check_io_failure(got, GS_ERR_IO, f, path, "cannot open for reading");
}

static void test_io_create_in_missing_folder(void)
{
    char folder[512], path[600];
    io_path(folder, sizeof folder, "no-such-folder");
    snprintf(path, sizeof path, "%s/out.bin", folder);
    gs_file *f = NULL;
    gs_status got = gs_mpiio_create(mpi_ctx, path, 0, &f);
    check_io_failure(got, GS_ERR_IO, f, path, "cannot create");
    CU_ASSERT(!file_exists(folder));

    char folder_only[600];
    snprintf(folder_only, sizeof folder_only, "%s/", io_dir);
    got = gs_mpiio_create(mpi_ctx, folder_only, 0, &f);
    check_io_failure(got, GS_ERR_ARG, f, folder_only, "not a file name");
}

/* The last rank reads past the end: a short read there fails every rank. */
static void test_io_short_read(void)
{
    gs_mpi *ctx = mpi_ctx;
    char path[512];
    io_path(path, sizeof path, "short.bin");
    const uint64_t total = 100;
    unsigned char buf[100];
    fill(buf, 0, total, 5);
    if (ctx->rank == 0) {
        FILE *out = fopen(path, "wb");
        if (out) fwrite(buf, 1, total, out), fclose(out);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    gs_file *f = NULL;
    CU_ASSERT_EQUAL(gs_mpiio_open_read(ctx, path, &f), GS_OK);
    int last = ctx->rank == ctx->size - 1;
    gs_status got = gs_mpiio_read_at(ctx, f, last ? total - 4 : 0, buf, last ? 10 : total);
    CU_ASSERT_EQUAL(got, GS_ERR_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(ctx->err->msg, path));
    CU_ASSERT_PTR_NOT_NULL(strstr(ctx->err->msg, "short read: 4 of 10 bytes"));
    CU_ASSERT(same_on_all_ranks(ctx->err->msg));
    ctx->err->msg[0] = '\0';
    CU_ASSERT_EQUAL(gs_mpiio_close(ctx, f, 0), GS_OK);
}

/* ---- registration ------------------------------------------------------------------ */

typedef struct named_test {
    const char *name;
    CU_TestFunc run;
} named_test;

/* ---- the library's collective calls ------------------------------------------- */

/* Ranks that pass a collective call different operations, types or scan
 * kinds (rank 0 one, the others another; the exact path beside the plain
 * one included) all get GS_ERR_ARG with the same message, before any step
 * that depends on them; then a call that agrees runs as usual. And the
 * arguments no rank can agree on: a NULL context pointer, MPI_COMM_NULL,
 * an unknown scan kind. */
static void test_calls_must_match(void)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gs_config cfg = GS_CONFIG_INIT;
    cfg.backend = GS_BACKEND_CPU;
    CU_ASSERT_EQUAL(gs_context_create(MPI_COMM_WORLD, &cfg, NULL), GS_ERR_ARG);
    gs_context *bad = NULL;
    CU_ASSERT_EQUAL(gs_context_create(MPI_COMM_NULL, &cfg, &bad), GS_ERR_ARG);
    CU_ASSERT_PTR_NULL(bad);
    for (int exact = 0; exact < 2; exact++) {
        cfg.exact = exact;
        gs_context *ctx = NULL;
        CU_ASSERT_EQUAL_FATAL(gs_context_create(MPI_COMM_WORLD, &cfg, &ctx), GS_OK);
        double x[5] = {1, 1, 1, 1, 1}, y[5];
        const int other = rank > 0;
        gs_value v;
        const gs_status type_differs = gs_reduce(ctx, GS_SUM, other ? GS_F64 : GS_I64, x, 5, &v);
        const gs_status op_differs = gs_reduce(ctx, other ? GS_MAX : GS_SUM, GS_F64, x, 5, &v);
        const gs_status kind_differs = gs_scan(ctx, GS_SUM, GS_F64, other ? GS_EXCLUSIVE : GS_INCLUSIVE, x, y, 5);
        const gs_status call_differs = other ? gs_scan(ctx, GS_SUM, GS_F64, GS_INCLUSIVE, x, y, 5)
                                             : gs_reduce(ctx, GS_SUM, GS_F64, x, 5, &v);
        if (size > 1) {
            CU_ASSERT_EQUAL(type_differs, GS_ERR_ARG);
            CU_ASSERT_EQUAL(op_differs, GS_ERR_ARG);
            CU_ASSERT_EQUAL(kind_differs, GS_ERR_ARG);
            CU_ASSERT_EQUAL(call_differs, GS_ERR_ARG);
            CU_ASSERT_PTR_NOT_NULL(strstr(gs_context_error(ctx), "different calls"));
            CU_ASSERT(same_on_all_ranks(gs_context_error(ctx)));
        }
        CU_ASSERT_EQUAL(gs_scan(ctx, GS_SUM, GS_F64, (gs_scan_kind)5, x, y, 5), GS_ERR_ARG);
        CU_ASSERT_EQUAL(gs_reduce(ctx, GS_SUM, GS_F64, x, 5, NULL), GS_ERR_ARG);
        CU_ASSERT_EQUAL(gs_reduce(ctx, GS_SUM, GS_F64, x, 5, &v), GS_OK);
        CU_ASSERT_EQUAL(v.v.f, 5.0 * size);
        gs_context_destroy(ctx);
    }
}

static int add_suite(const char *name, CU_InitializeFunc init, CU_CleanupFunc cleanup,
                     const named_test *tests)
{
    CU_pSuite suite = CU_add_suite(name, init, cleanup);
    if (!suite) return 1;
    for (; tests->name; tests++)
        if (!CU_add_test(suite, tests->name, tests->run)) return 1;
    return 0;
}

static int register_mpi_layer_suites(void)
{
    static const named_test setup[] = {
        {"communicators and ranks", test_setup_ranks},
        {"contexts set up and torn down around a live one", test_setup_nested_contexts},
        {"device choice", test_pick_device},
        {NULL, NULL},
    };
    static const named_test agree[] = {
        {"all ranks succeed", test_agree_all_succeed},
        {"the lowest failing rank's status and message win", test_agree_lowest_failure_wins},
        {"values agreed, and a count out of range fails every rank", test_agree_values},
        {NULL, NULL},
    };
    static const named_test combines[] = {
        {"test cases reach their edges", test_cases_cover_edges},
        {"allreduce of every type x op", test_allreduce_acc},
        {"exscan of every type x op carry", test_exscan_carry},
        {"stats, sums, max, exscan, allgather", test_stats_and_sums},
        {NULL, NULL},
    };
    static const named_test io[] = {
        {"uneven shards written, renamed, read back", test_io_write_read_back},
        {"transfers split into uneven numbers of pieces", test_io_split_into_pieces},
        {"close without keeping leaves no output", test_io_discard_keeps_old_output},
        {"opening a missing file fails on every rank", test_io_open_missing},
        {"creating in a missing folder fails cleanly", test_io_create_in_missing_folder},
        {"stale temporaries of killed runs are removed, live ones kept", test_io_stale_temporaries},
        {"a short read fails every rank", test_io_short_read},
        {NULL, NULL},
    };
    static const named_test calls[] = {
        {"ranks that make different calls all fail, and then agree", test_calls_must_match},
        {NULL, NULL},
    };
    return add_suite("mpi: set-up", mpi_ctx_open, mpi_ctx_close, setup)
        || add_suite("library: collective calls", NULL, NULL, calls)
        || add_suite("mpi: agreement", mpi_ctx_open, mpi_ctx_close, agree)
        || add_suite("mpi: combines", mpi_ctx_open, mpi_ctx_close, combines)
        || add_suite("mpi: MPI-IO", io_dir_make, io_dir_remove, io);
}

static int register_suites(void)
{
    return register_mpi_layer_suites();
}

int main(int argc, char **argv)
{
    return gs_test_main(argc, argv, register_suites);
}
