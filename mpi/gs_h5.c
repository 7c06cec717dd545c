/*
 * gs_h5.c - HDF5 datasets as the pipeline's file ends (gs_h5.h), through
 * HDF5's MPI-IO driver.
 *
 * Each rank's range of the flat data, [first, first + n) in C order, is a
 * selection of a few hyperslabs (at most two per dimension), so a dataset of
 * any rank reads as the 1-D array it holds. Reads and writes are collective
 * (H5FD_MPIO_COLLECTIVE), a rank with nothing to move selecting none;
 * filtered (compressed) datasets are read independently, chunk by chunk,
 * which every HDF5 since 1.8 can do in parallel, and no collective call
 * waits inside HDF5 for a rank that failed on a bad chunk.
 *
 * Outputs go to a temporary beside the file (gs_mpiio_reserve): a copy of
 * the existing HDF5 file, if any, with the dataset added, renamed over it
 * only when every rank succeeded. The original is never opened for
 * writing, so a failed or killed run leaves it and its other datasets as
 * they were.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gs_h5.h"

/* ---- paths (local) -------------------------------------------------------- */

static int has_h5_suffix(const char *s, size_t n)
{
    return (n > 3 && memcmp(s + n - 3, ".h5", 3) == 0) || (n > 5 && memcmp(s + n - 5, ".hdf5", 5) == 0);
}

/* The ':' between the file and the dataset, or NULL: the first one that
 * follows a file name ending in .h5 or .hdf5 ("run:3.h5:/x" splits after
 * "run:3.h5"). */
static const char *dataset_sep(const char *path)
{
    for (const char *c = strchr(path, ':'); c; c = strchr(c + 1, ':'))
        if (has_h5_suffix(path, (size_t)(c - path))) return c;
    return NULL;
}

int gs_h5_is_path(const char *path)
{
    return path && (dataset_sep(path) || has_h5_suffix(path, strlen(path)));
}

int gs_h5_file_part(const char *path, char *file, size_t cap)
{
    const char *sep = dataset_sep(path);
    size_t n = sep ? (size_t)(sep - path) : strlen(path);
    if (n >= cap) return 0;
    memcpy(file, path, n);
    file[n] = '\0';
    return 1;
}

#ifdef HAVE_HDF5
#include <hdf5.h>

#define GS_H5_DEFAULT_OUTPUT "/data"

struct gs_h5 {
    char *name;                     /* the path as given: every message starts with it */
    char *file_name;                /* its file part */
    char *dataset;                  /* "/group/dataset" */
    hid_t file, dset, space, mem_type, dxpl;
    size_t elem;                    /* bytes per element */
    int ndim;                       /* 0: a scalar */
    hsize_t dims[H5S_MAX_RANK];
    hsize_t stride[H5S_MAX_RANK];   /* elements per index of each dimension */
    hsize_t total;                  /* elements */
    gs_file *temp;                  /* outputs: the temporary the file is written in */
    int guard;                      /* inputs: gs_mpiio_guard_input's descriptor, or -1 */
};

/* ---- errors ----------------------------------------------------------------
 * HDF5's automatic printing of its error stack is off while gpuscan calls
 * it (and restored after, for an application that uses HDF5 too); a failure
 * takes the most specific reason on the stack into our message. */

typedef struct quiet { H5E_auto2_t fn; void *data; } quiet;

static quiet quiet_begin(void)
{
    quiet q = {NULL, NULL};
    H5Eget_auto2(H5E_DEFAULT, &q.fn, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static void quiet_end(quiet q)
{
    H5Eset_auto2(H5E_DEFAULT, q.fn, q.data);
}

#define GS_H5_REASON_LEN 200

static herr_t innermost_reason(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    char *reason = data;
    if (!reason[0] && e->desc && e->desc[0]) snprintf(reason, GS_H5_REASON_LEN, "%s", e->desc);
    return 0;
}

/* Record "<message>: <HDF5's reason>" and clear HDF5's stack. */
static gs_status h5_fail(gs_mpi *m, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static gs_status h5_fail(gs_mpi *m, gs_status status, const char *fmt, ...)
{
    char what[GS_ERRMSG_LEN], reason[GS_H5_REASON_LEN] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost_reason, reason);
    H5Eclear2(H5E_DEFAULT);
    if (!reason[0]) return gs_err_set(m->err, status, "%s", what);
    return gs_err_set(m->err, status, "%s: %s", what, reason);
}

/* ---- handles -------------------------------------------------------------- */

static void close_id(hid_t id, herr_t (*close_fn)(hid_t))
{
    if (id >= 0) close_fn(id);
}

/* Local: everything but the file and its temporary. */
static void h5_free(gs_h5 *h)
{
    if (!h) return;
    close_id(h->dset, H5Dclose);
    close_id(h->space, H5Sclose);
    close_id(h->dxpl, H5Pclose);
    if (h->guard >= 0) close(h->guard);
    free(h->name);
    free(h->file_name);
    free(h->dataset);
    free(h);
}

/* Local: the handle of `path`, its dataset "/..." or `fallback` (NULL: none
 * named). */
static gs_status h5_new(gs_mpi *m, const char *path, const char *fallback, gs_h5 **out)
{
    *out = NULL;
    const char *sep = dataset_sep(path);
    const char *given = sep && sep[1] ? sep + 1 : fallback;
    const size_t len = strlen(path) + 1, dataset_len = given ? strlen(given) + 2 : 0;
    gs_h5 *h = calloc(1, sizeof *h);
    int ok = h != NULL;
    if (ok) {
        h->file = h->dset = h->space = h->dxpl = H5I_INVALID_HID;
        h->guard = -1;
        ok = (h->name = strdup(path)) && (h->file_name = malloc(len)) && (!given || (h->dataset = malloc(dataset_len)));
    }
    if (!ok) {
        h5_free(h);
        return gs_err_set(m->err, GS_ERR_NOMEM, "%s: out of memory", path);
    }
    gs_h5_file_part(path, h->file_name, len);
    if (given) snprintf(h->dataset, dataset_len, "%s%s", given[0] == '/' ? "" : "/", given);
    *out = h;
    return GS_OK;
}

static hid_t mpio_access(gs_mpi *m)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_mpio(fapl, m->comm, MPI_INFO_NULL) < 0) {
        H5Pclose(fapl);
        fapl = H5I_INVALID_HID;
    }
    return fapl;
}

/* Open (or create, `create`) the file `disk_name` on every rank. */
static gs_status open_file(gs_mpi *m, gs_h5 *h, const char *disk_name, unsigned flags, int create)
{
    /* every HDF5 call clears its error stack: the reason is taken at once */
    hid_t fapl = mpio_access(m);
    gs_status st = GS_OK;
    if (fapl < 0) {
        st = h5_fail(m, GS_ERR_IO, "%s: cannot set up HDF5's MPI-IO driver", h->name);
    } else {
        /* a long name goes through a short link, as for .npy (gs_mpi.h) */
        gs_mpiio_route route;
        const char *name = disk_name;
        st = gs_mpi_agree(m, gs_mpiio_route_make(m, disk_name, h->name, &route, &name));
        if (st == GS_OK) {
            h->file = create ? H5Fcreate(name, flags, H5P_DEFAULT, fapl) : H5Fopen(name, flags, fapl);
            if (h->file < 0 && create) st = h5_fail(m, GS_ERR_IO, "%s: cannot create an HDF5 file", h->name);
            if (h->file < 0 && !create) st = h5_fail(m, GS_ERR_FORMAT, "%s: cannot open as an HDF5 file", h->name);
        }
        gs_mpiio_route_remove(&route);
        H5Pclose(fapl);
    }
    return gs_mpi_agree(m, st);
}

/* ---- datasets ------------------------------------------------------------- */

/* Local. Whether h->dataset exists (*found), with every group on its way; a
 * name on the way that is no group is an error. *missing: the length of the
 * first prefix of the path that does not exist. */
static gs_status walk_path(gs_mpi *m, gs_h5 *h, int *found, size_t *missing)
{
    const char *name = h->dataset;
    const size_t len = strlen(name);
    char *prefix = malloc(len + 1);
    if (!prefix) return gs_err_set(m->err, GS_ERR_NOMEM, "%s: out of memory", h->name);
    gs_status st = GS_OK;
    *found = 1;
    for (size_t at = 1; at <= len && *found && st == GS_OK; at++) {
        if (at < len && name[at] != '/') continue;
        memcpy(prefix, name, at);
        prefix[at] = '\0';
        htri_t exists = H5Lexists(h->file, prefix, H5P_DEFAULT);
        if (exists < 0) {
            st = h5_fail(m, GS_ERR_FORMAT, "%s: cannot look up %s", h->name, prefix);
        } else if (!exists) {
            *found = 0;
            *missing = at;
        } else if (at < len) {
            hid_t obj = H5Oopen(h->file, prefix, H5P_DEFAULT);
            int group = obj >= 0 && H5Iget_type(obj) == H5I_GROUP;
            close_id(obj, H5Oclose);
            if (!group) st = gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s is not a group", h->name, prefix);
        }
    }
    free(prefix);
    return st;
}

typedef struct dataset_list {
    int count;
    char *first;          /* the first dataset's name, "/..." */
    char names[160];      /* the first few, for the message */
} dataset_list;

static herr_t list_dataset(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    dataset_list *list = data;
    if (info->type != H5L_TYPE_HARD) return 0;
    hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
    if (obj >= 0 && H5Iget_type(obj) == H5I_DATASET) {
        if (list->count++ == 0) {
            list->first = malloc(strlen(name) + 2);
            if (!list->first) { H5Oclose(obj); return -1; }
            snprintf(list->first, strlen(name) + 2, "/%s", name);
        }
        size_t used = strlen(list->names);
        if (list->count <= 4)
            snprintf(list->names + used, sizeof list->names - used, "%s/%s", used ? ", " : "", name);
        else if (list->count == 5)
            snprintf(list->names + used, sizeof list->names - used, ", ...");
    }
    close_id(obj, H5Oclose);
    H5Eclear2(H5E_DEFAULT);
    return 0;
}

/* Local: an input named without its dataset uses the file's only one. */
static gs_status only_dataset(gs_mpi *m, gs_h5 *h)
{
    dataset_list list = {0, NULL, ""};
    if (H5Lvisit(h->file, H5_INDEX_NAME, H5_ITER_INC, list_dataset, &list) < 0) {
        free(list.first);
        return h5_fail(m, GS_ERR_FORMAT, "%s: cannot list its datasets", h->name);
    }
    if (list.count == 1) {
        h->dataset = list.first;
        return GS_OK;
    }
    free(list.first);
    if (list.count == 0) return gs_err_set(m->err, GS_ERR_FORMAT, "%s: the file holds no dataset", h->name);
    return gs_err_set(m->err, GS_ERR_ARG, "%s holds %d datasets (%s): name one, as %s:/path/to/dataset",
                      h->name, list.count, list.names, h->file_name);
}

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound (structured)";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "variable-length";
    case H5T_ARRAY: return "array";
    default: return "unknown";
    }
}

/* Local: the gs_type of a dataset's element type. */
static gs_status element_type(gs_mpi *m, const gs_h5 *h, hid_t ftype, gs_type *type)
{
    const H5T_class_t c = H5Tget_class(ftype);
    const size_t size = H5Tget_size(ftype);
    if (c == H5T_INTEGER && (size == 4 || size == 8)) {
        const int is_signed = H5Tget_sign(ftype) == H5T_SGN_2;
        *type = size == 4 ? (is_signed ? GS_I32 : GS_U32) : (is_signed ? GS_I64 : GS_U64);
        return GS_OK;
    }
    if (c == H5T_FLOAT && (size == 4 || size == 8)) {
        *type = size == 4 ? GS_F32 : GS_F64;
        return GS_OK;
    }
    if (c == H5T_INTEGER)
        return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s holds %zu-byte integers; gpuscan reads integers of 4 or 8 bytes",
                          h->name, h->dataset, size);
    if (c == H5T_FLOAT)
        return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s holds %zu-byte floats; gpuscan reads floats of 4 or 8 bytes (f32, f64)",
                          h->name, h->dataset, size);
    if (c < 0) return h5_fail(m, GS_ERR_FORMAT, "%s: cannot read the element type of %s", h->name, h->dataset);
    return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s holds %s elements; gpuscan reads integers and floats of 4 or 8 bytes",
                      h->name, h->dataset, class_name(c));
}

static hid_t native_type(gs_type t)
{
    switch (t) {
    case GS_I32: return H5T_NATIVE_INT32;
    case GS_I64: return H5T_NATIVE_INT64;
    case GS_U32: return H5T_NATIVE_UINT32;
    case GS_U64: return H5T_NATIVE_UINT64;
    case GS_F32: return H5T_NATIVE_FLOAT;
    default: return H5T_NATIVE_DOUBLE;
    }
}

/* The type an output dataset is created with: little-endian, as .npy's. */
static hid_t file_type(gs_type t)
{
    switch (t) {
    case GS_I32: return H5T_STD_I32LE;
    case GS_I64: return H5T_STD_I64LE;
    case GS_U32: return H5T_STD_U32LE;
    case GS_U64: return H5T_STD_U64LE;
    case GS_F32: return H5T_IEEE_F32LE;
    default: return H5T_IEEE_F64LE;
    }
}

/* Local: the shape, the element type and the transfer of the open h->dset.
 * A filtered dataset whose filter this HDF5 lacks is refused here, by name,
 * rather than at its first read. */
static gs_status describe(gs_mpi *m, gs_h5 *h, gs_type *type)
{
    hid_t ftype = H5Dget_type(h->dset);
    gs_status st = ftype < 0 ? h5_fail(m, GS_ERR_FORMAT, "%s: cannot read the type of %s", h->name, h->dataset)
                             : element_type(m, h, ftype, type);
    close_id(ftype, H5Tclose);
    GS_CHECK(st);
    h->elem = (size_t)gs_type_bytes(*type);
    h->mem_type = native_type(*type);

    h->space = H5Dget_space(h->dset);
    const int ndim = h->space < 0 ? -1 : H5Sget_simple_extent_ndims(h->space);
    const H5S_class_t sclass = h->space < 0 ? H5S_NO_CLASS : H5Sget_simple_extent_type(h->space);
    if (ndim < 0 || sclass == H5S_NO_CLASS)
        return h5_fail(m, GS_ERR_FORMAT, "%s: cannot read the shape of %s", h->name, h->dataset);
    if (sclass == H5S_NULL)
        return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s has a null dataspace (no elements, not even an empty shape)",
                          h->name, h->dataset);
    h->ndim = ndim;
    H5Sget_simple_extent_dims(h->space, h->dims, NULL);
    uint64_t total = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        h->stride[i] = total;
        total = gs_sat_mul(total, h->dims[i]);
    }
    if (total > (uint64_t)INT64_MAX / 16)
        return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s has more elements than gpuscan can count", h->name, h->dataset);
    h->total = total;

    int filtered = 0;
    hid_t dcpl = H5Dget_create_plist(h->dset);
    const int nfilters = dcpl < 0 ? -1 : H5Pget_nfilters(dcpl);
    if (nfilters < 0) st = h5_fail(m, GS_ERR_FORMAT, "%s: cannot read the filters of %s", h->name, h->dataset);
    for (int i = 0; i < nfilters && st == GS_OK; i++) {
        unsigned flags = 0, config = 0;
        size_t n_values = 0;
        char filter_name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &n_values, NULL, sizeof filter_name,
                                         filter_name, &config);
        if (id < 0 || H5Zfilter_avail(id) <= 0)
            st = gs_err_set(m->err, GS_ERR_UNSUPPORTED, "%s: %s is filtered with HDF5 filter %d (%s), which this HDF5 library lacks",
                            h->name, h->dataset, (int)id, filter_name[0] ? filter_name : "unnamed");
        filtered = 1;
    }
    close_id(dcpl, H5Pclose);
    GS_CHECK(st);

    h->dxpl = H5Pcreate(H5P_DATASET_XFER);
    if (h->dxpl < 0 ||
        H5Pset_dxpl_mpio(h->dxpl, filtered ? H5FD_MPIO_INDEPENDENT : H5FD_MPIO_COLLECTIVE) < 0)
        return h5_fail(m, GS_ERR_IO, "%s: cannot set up the transfer of %s", h->name, h->dataset);
    return GS_OK;
}

/* Local: open the existing h->dataset (which walk_path found). */
static gs_status open_dataset(gs_mpi *m, gs_h5 *h)
{
    hid_t obj = H5Oopen(h->file, h->dataset, H5P_DEFAULT);
    if (obj < 0) return h5_fail(m, GS_ERR_FORMAT, "%s: cannot open %s", h->name, h->dataset);
    if (H5Iget_type(obj) != H5I_DATASET) {
        H5Oclose(obj);
        return gs_err_set(m->err, GS_ERR_FORMAT, "%s: %s is a group, not a dataset", h->name, h->dataset);
    }
    h->dset = obj;
    return GS_OK;
}

/* Local: find and describe the input dataset. */
static gs_status find_input(gs_mpi *m, gs_h5 *h, gs_type *type)
{
    if (!h->dataset) GS_CHECK(only_dataset(m, h));
    int found = 0;
    size_t missing = 0;
    GS_CHECK(walk_path(m, h, &found, &missing));
    if (!found && h->dataset[missing] == '\0')
        return gs_err_set(m->err, GS_ERR_IO, "%s: no dataset %s in the file", h->name, h->dataset);
    if (!found)
        return gs_err_set(m->err, GS_ERR_IO, "%s: no group %.*s in the file (on the way to %s)", h->name,
                          (int)missing, h->dataset, h->dataset);
    GS_CHECK(open_dataset(m, h));
    return describe(m, h, type);
}

/* Close what is open and free the handle; collective (the file). */
static gs_status h5_close(gs_mpi *m, gs_h5 *h, int keep)
{
    if (!h) return GS_OK;
    close_id(h->dset, H5Dclose);
    h->dset = H5I_INVALID_HID;
    gs_status st = GS_OK;
    if (h->file >= 0 && H5Fclose(h->file) < 0) st = h5_fail(m, GS_ERR_IO, "%s: cannot close", h->name);
    st = gs_mpi_agree(m, st);
    if (h->temp) {
        gs_status ts = gs_mpiio_close(m, h->temp, keep && st == GS_OK);
        if (st == GS_OK) st = ts;
    }
    h5_free(h);
    return st;
}

static gs_status open_read(gs_mpi *m, const char *path, gs_h5 **out, gs_type *type, int64_t *count)
{
    *out = NULL;
    gs_h5 *h = NULL;
    GS_CHECK(gs_mpi_agree(m, h5_new(m, path, NULL, &h)));
    h->guard = gs_mpiio_guard_input(h->file_name);
    gs_status st = open_file(m, h, h->file_name, H5F_ACC_RDONLY, 0);
    if (st == GS_OK) st = gs_mpi_agree(m, find_input(m, h, type));
    if (st != GS_OK) {
        h5_close(m, h, 0);
        return st;
    }
    *count = (int64_t)h->total;
    *out = h;
    return GS_OK;
}

/* ---- outputs -------------------------------------------------------------- */

static void shape_text(const gs_h5 *h, char *text, size_t cap)
{
    size_t used = (size_t)snprintf(text, cap, "(");
    for (int i = 0; i < h->ndim && used < cap; i++)
        used += (size_t)snprintf(text + used, cap - used, "%s%llu", i ? ", " : "", (unsigned long long)h->dims[i]);
    if (used < cap) snprintf(text + used, cap - used, h->ndim == 1 ? ",)" : ")");
}

/* Local: the output dataset in the open (temporary) file: the one there if
 * it has the output's shape and type, else a new one, with its groups. */
static gs_status prepare_output(gs_mpi *m, gs_h5 *h, gs_type type, int64_t count)
{
    int found = 0;
    size_t missing = 0;
    GS_CHECK(walk_path(m, h, &found, &missing));
    if (found) {
        GS_CHECK(open_dataset(m, h));
        gs_type existing;
        GS_CHECK(describe(m, h, &existing));
        if (existing != type || h->ndim != 1 || h->total != (hsize_t)count) {
            char shape[160];
            shape_text(h, shape, sizeof shape);
            return gs_err_set(m->err, GS_ERR_ARG,
                              "%s: dataset %s exists with shape %s of %s; the output is (%lld,) of %s: remove it or name another dataset",
                              h->name, h->dataset, shape, gs_type_name(existing), (long long)count, gs_type_name(type));
        }
        return GS_OK;
    }
    h->dims[0] = (hsize_t)count;
    h->space = H5Screate_simple(1, h->dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (h->space >= 0 && lcpl >= 0 && dcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0)   /* every element is written */
        h->dset = H5Dcreate2(h->file, h->dataset, file_type(type), h->space, lcpl, dcpl, H5P_DEFAULT);
    gs_status st = h->dset >= 0 ? GS_OK : h5_fail(m, GS_ERR_IO, "%s: cannot create dataset %s", h->name, h->dataset);
    close_id(lcpl, H5Pclose);
    close_id(dcpl, H5Pclose);
    close_id(h->space, H5Sclose);
    h->space = H5I_INVALID_HID;
    GS_CHECK(st);
    gs_type made;
    return describe(m, h, &made);
}

static gs_status create(gs_mpi *m, const char *path, gs_type type, int64_t count, gs_h5 **out)
{
    *out = NULL;
    gs_h5 *h = NULL;
    GS_CHECK(gs_mpi_agree(m, h5_new(m, path, GS_H5_DEFAULT_OUTPUT, &h)));
    /* rank 0's view of the file there: HDF5 (added to) or not (replaced) */
    int64_t is_hdf5 = m->rank == 0 && H5Fis_hdf5(h->file_name) > 0;
    H5Eclear2(H5E_DEFAULT);
    gs_status st = gs_mpi_max_i64(m, is_hdf5, &is_hdf5);
    const uint64_t bytes = gs_sat_mul((uint64_t)count, (uint64_t)gs_type_bytes(type));
    if (st == GS_OK) st = gs_mpiio_reserve(m, h->file_name, bytes, (int)is_hdf5, &h->temp);
    const char *disk_name = h->temp ? gs_mpiio_temp_path(h->temp) : NULL;
    if (st == GS_OK && is_hdf5) st = open_file(m, h, disk_name, H5F_ACC_RDWR, 0);
    if (st == GS_OK && !is_hdf5) st = open_file(m, h, disk_name, H5F_ACC_TRUNC, 1);
    if (st == GS_OK) st = gs_mpi_agree(m, prepare_output(m, h, type, count));
    if (st != GS_OK) {
        h5_close(m, h, 0);
        return st;
    }
    *out = h;
    return GS_OK;
}

/* ---- transfers ------------------------------------------------------------ */

/* Add to h->space's selection the elements [a, b) of the flat block at
 * dimension `level`, whose leading coordinates are at[0..level): the partial
 * row at each end through the dimensions below, the whole rows between as
 * one hyperslab. */
static herr_t select_flat(gs_h5 *h, int level, hsize_t *at, hsize_t a, hsize_t b)
{
    if (a >= b) return 0;
    const hsize_t s = h->stride[level];
    hsize_t ra = a / s, rb = b / s;
    const hsize_t ea = a % s, eb = b % s;
    if (ra == rb) {
        at[level] = ra;
        return select_flat(h, level + 1, at, ea, eb);
    }
    if (ea) {
        at[level] = ra++;
        if (select_flat(h, level + 1, at, ea, s) < 0) return -1;
    }
    if (rb > ra) {
        hsize_t start[H5S_MAX_RANK], count[H5S_MAX_RANK];
        for (int i = 0; i < h->ndim; i++) {
            start[i] = i < level ? at[i] : i == level ? ra : 0;
            count[i] = i < level ? 1 : i == level ? rb - ra : h->dims[i];
        }
        if (H5Sselect_hyperslab(h->space, H5S_SELECT_OR, start, NULL, count, NULL) < 0) return -1;
    }
    if (eb) {
        at[level] = rb;
        return select_flat(h, level + 1, at, 0, eb);
    }
    return 0;
}

/* Local: select elements [first, first + n) of the flat data. */
static herr_t select_range(gs_h5 *h, hsize_t first, hsize_t n)
{
    if (H5Sselect_none(h->space) < 0) return -1;
    if (n == 0) return 0;
    if (h->ndim == 0) return H5Sselect_all(h->space);
    hsize_t at[H5S_MAX_RANK];
    return select_flat(h, 0, at, first, first + n);
}

/* Collective read or write of `bytes` at byte `offset` of the flat data. A
 * rank with nothing to move, or that failed, selects nothing but calls. */
static gs_status transfer(gs_mpi *m, gs_h5 *h, uint64_t offset, void *buf, uint64_t bytes, int writing)
{
    const char *verb = writing ? "write" : "read";
    gs_status st = GS_OK;
    if (offset % h->elem || bytes % h->elem || offset / h->elem > h->total ||
        bytes / h->elem > h->total - offset / h->elem)
        st = gs_err_set(m->err, GS_ERR_IO, "%s: cannot %s %llu bytes at byte %llu of %s's %llu elements", h->name,
                        verb, (unsigned long long)bytes, (unsigned long long)offset, h->dataset,
                        (unsigned long long)h->total);
    hsize_t n = st == GS_OK ? bytes / h->elem : 0;
    const hsize_t first = offset / h->elem;
    if (st == GS_OK && select_range(h, first, n) < 0) {
        st = h5_fail(m, GS_ERR_IO, "%s: cannot select elements %llu to %llu", h->name, (unsigned long long)first,
                     (unsigned long long)(first + n));
        n = 0;
    }
    if (n == 0) H5Sselect_none(h->space);
    const hsize_t mem_len = n ? n : 1;
    hid_t mem = H5Screate_simple(1, &mem_len, NULL);
    if (n == 0 && mem >= 0) H5Sselect_none(mem);
    void *at = buf ? buf : (void *)h;   /* HDF5 wants a buffer even for nothing */
    herr_t done = mem < 0 ? -1
                : writing ? H5Dwrite(h->dset, h->mem_type, mem, h->space, h->dxpl, at)
                          : H5Dread(h->dset, h->mem_type, mem, h->space, h->dxpl, at);
    if (done < 0 && st == GS_OK)
        st = h5_fail(m, GS_ERR_IO, "%s: cannot %s elements %llu to %llu of %s", h->name, verb,
                     (unsigned long long)first, (unsigned long long)(first + n), h->dataset);
    close_id(mem, H5Sclose);
    return gs_mpi_agree(m, st);
}

/* ---- the output against the input (local) ------------------------------------ */

/* `path`'s dataset as HDF5 resolves it from the root: one '/' before each
 * name, none after the last, no "." (the group itself); 0 when it does not
 * fit `cap` bytes. */
static int canonical_dataset(const char *path, char *out, size_t cap)
{
    size_t at = 0;
    for (const char *c = path; *c;) {
        while (*c == '/') c++;
        const size_t n = strcspn(c, "/");
        if (n == 0) break;
        if (n == 1 && *c == '.') {
            c++;
            continue;
        }
        if (at + n + 2 > cap) return 0;
        out[at++] = '/';
        memcpy(out + at, c, n);
        at += n;
        c += n;
    }
    if (at + 2 > cap) return 0;
    if (at == 0) out[at++] = '/';
    out[at] = '\0';
    return 1;
}

int gs_h5_is_input(const gs_h5 *in, const char *out_path)
{
    char file[4096], mine[4096], theirs[4096];
    const char *sep = dataset_sep(out_path);
    const char *dataset = sep && sep[1] ? sep + 1 : GS_H5_DEFAULT_OUTPUT;
    struct stat a, b;
    if (!in || !in->dataset || !gs_h5_is_path(out_path) || !gs_h5_file_part(out_path, file, sizeof file) ||
        stat(file, &a) != 0 || stat(in->file_name, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return 0;
    return canonical_dataset(dataset, mine, sizeof mine) && canonical_dataset(in->dataset, theirs, sizeof theirs) &&
           strcmp(mine, theirs) == 0;
}

/* ---- the interface: HDF5's error printing off for each call ---------------- */

gs_status gs_h5_open_read(gs_mpi *m, const char *path, gs_h5 **h, gs_type *type, int64_t *count)
{
    quiet q = quiet_begin();
    gs_status st = open_read(m, path, h, type, count);
    quiet_end(q);
    return st;
}

gs_status gs_h5_read_at(gs_mpi *m, gs_h5 *h, uint64_t offset, void *buf, uint64_t bytes)
{
    quiet q = quiet_begin();
    gs_status st = transfer(m, h, offset, buf, bytes, 0);
    quiet_end(q);
    return st;
}

gs_status gs_h5_create(gs_mpi *m, const char *path, gs_type type, int64_t count, gs_h5 **h)
{
    quiet q = quiet_begin();
    gs_status st = create(m, path, type, count, h);
    quiet_end(q);
    return st;
}

gs_status gs_h5_write_at(gs_mpi *m, gs_h5 *h, uint64_t offset, const void *buf, uint64_t bytes)
{
    quiet q = quiet_begin();
    /* transfer only reads from `buf` when writing */
    gs_status st = transfer(m, h, offset, (void *)buf, bytes, 1);
    quiet_end(q);
    return st;
}

gs_status gs_h5_close(gs_mpi *m, gs_h5 *h, int keep)
{
    quiet q = quiet_begin();
    gs_status st = h5_close(m, h, keep);
    quiet_end(q);
    return st;
}

#else /* no HDF5 in this build: every opening says so */

struct gs_h5 { int unused; };

static gs_status no_hdf5(gs_mpi *m, const char *path)
{
    return gs_mpi_agree(m, gs_err_set(m->err, GS_ERR_UNSUPPORTED,
                                      "%s: this build has no HDF5 support: configure --with-hdf5", path));
}

gs_status gs_h5_open_read(gs_mpi *m, const char *path, gs_h5 **h, gs_type *type, int64_t *count)
{
    (void)type, (void)count;
    *h = NULL;
    return no_hdf5(m, path);
}

gs_status gs_h5_create(gs_mpi *m, const char *path, gs_type type, int64_t count, gs_h5 **h)
{
    (void)type, (void)count;
    *h = NULL;
    return no_hdf5(m, path);
}

/* Never reached: no handle is ever opened. */
gs_status gs_h5_read_at(gs_mpi *m, gs_h5 *h, uint64_t offset, void *buf, uint64_t bytes)
{
    (void)h, (void)offset, (void)buf, (void)bytes;
    return no_hdf5(m, "HDF5");
}

gs_status gs_h5_write_at(gs_mpi *m, gs_h5 *h, uint64_t offset, const void *buf, uint64_t bytes)
{
    (void)h, (void)offset, (void)buf, (void)bytes;
    return no_hdf5(m, "HDF5");
}

gs_status gs_h5_close(gs_mpi *m, gs_h5 *h, int keep)
{
    (void)m, (void)h, (void)keep;
    return GS_OK;
}

int gs_h5_is_input(const gs_h5 *in, const char *out_path)
{
    (void)in, (void)out_path;
    return 0;
}

#endif /* HAVE_HDF5 */
