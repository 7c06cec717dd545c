/* gs_names.c - names of types, ops, backends, statuses, phases; the type
 * rules of results; the build description. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <string.h>

#include "gs_algo.h"
#include "gs_internal.h"

#define GS_TYPE_NAME(e, name, c_type) [e] = #name,
static const char *const type_names[GS_TYPE_COUNT] = {GS_TYPE_LIST(GS_TYPE_NAME)};
static const char *const op_names[GS_OP_COUNT] = {"sum", "prod", "min", "max"};
static const char *const backend_names[] = {"auto", "cpu", "cuda"};
static const char *const phase_names[GS_PHASE_COUNT] = {"read", "h2d", "compute", "d2h",
                                                        "write", "mpi", "verify"};

static const struct { const char *name, *text; } statuses[GS_STATUS_COUNT] = {
    [GS_OK] = {"GS_OK", "success"},
    [GS_ERR_ARG] = {"GS_ERR_ARG", "invalid argument"},
    [GS_ERR_IO] = {"GS_ERR_IO", "I/O error"},
    [GS_ERR_FORMAT] = {"GS_ERR_FORMAT", "malformed or unsupported file"},
    [GS_ERR_NOMEM] = {"GS_ERR_NOMEM", "out of memory"},
    [GS_ERR_CUDA] = {"GS_ERR_CUDA", "CUDA error"},
    [GS_ERR_MPI] = {"GS_ERR_MPI", "MPI error"},
    [GS_ERR_OVERFLOW] = {"GS_ERR_OVERFLOW", "64-bit integer overflow"},
    [GS_ERR_EMPTY] = {"GS_ERR_EMPTY", "min or max of an empty array"},
    [GS_ERR_UNSUPPORTED] = {"GS_ERR_UNSUPPORTED", "not supported by this build or machine"},
};

const char *gs_status_name(gs_status s)
{
    return (unsigned)s < GS_STATUS_COUNT ? statuses[s].name : "GS_ERR_UNKNOWN";
}

const char *gs_status_string(gs_status s)
{
    return (unsigned)s < GS_STATUS_COUNT ? statuses[s].text : "unknown status";
}

const char *gs_type_name(gs_type t) { return (unsigned)t < GS_TYPE_COUNT ? type_names[t] : "?"; }
const char *gs_op_name(gs_op op) { return (unsigned)op < GS_OP_COUNT ? op_names[op] : "?"; }
const char *gs_phase_name(gs_phase p) { return (unsigned)p < GS_PHASE_COUNT ? phase_names[p] : "?"; }

const char *gs_backend_name(gs_backend b)
{
    return (unsigned)b <= GS_BACKEND_CUDA ? backend_names[b] : "?";
}

size_t gs_type_size(gs_type t) { return (unsigned)t < GS_TYPE_COUNT ? (size_t)gs_type_bytes(t) : 0; }

static int find_name(const char *const *names, int count, const char *name)
{
    for (int i = 0; name && i < count; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

gs_status gs_type_from_name(const char *name, gs_type *t)
{
    int i = find_name(type_names, GS_TYPE_COUNT, name);
    if (i < 0 || !t) return GS_ERR_ARG;
    *t = (gs_type)i;
    return GS_OK;
}

gs_status gs_op_from_name(const char *name, gs_op *op)
{
    int i = find_name(op_names, GS_OP_COUNT, name);
    if (i < 0 || !op) return GS_ERR_ARG;
    *op = (gs_op)i;
    return GS_OK;
}

gs_status gs_backend_from_name(const char *name, gs_backend *b)
{
    int i = find_name(backend_names, 3, name);
    if (i < 0 || !b) return GS_ERR_ARG;
    *b = (gs_backend)i;
    return GS_OK;
}

gs_type gs_reduce_result_type(gs_type t, gs_op op) { return gs_rule_reduce_result(t, op); }
gs_type gs_scan_output_type(gs_type t, gs_op op) { return gs_rule_scan_output(t, op); }

const char *gs_get_version(int *major, int *minor, int *patch)
{
    if (major) *major = GS_VERSION_MAJOR;
    if (minor) *minor = GS_VERSION_MINOR;
    if (patch) *patch = GS_VERSION_PATCH;
    return GS_VERSION_STRING;
}

void gs_config_init(gs_config *cfg)
{
    static const gs_config defaults = GS_CONFIG_INIT;
    *cfg = defaults;
}

const char *gs_build_info(void)
{
    return "gpuscan " GS_VERSION_STRING ":"
#ifdef HAVE_CUDA
           " cuda " GS_CUDA_VERSION " (" GS_CUDA_ARCHS ")"
#else
           " cpu-only"
#endif
#ifdef _OPENMP
           ", openmp"
#endif
#ifdef HAVE_HDF5
           ", hdf5"
#endif
           ", mpi";
}

static const char *const algo_names[GS_ALGO_COUNT] = {
    "default", "divergent", "strided", "sequential", "first-add", "unroll-last-warp", "unroll-all",
    "grid-stride", "hillis-steele", "blelloch", "multi-kernel", "reduce-then-scan", "cub",
};

const char *gs_algo_name(gs_algo a)
{
    return (unsigned)a < GS_ALGO_COUNT ? algo_names[a] : "unknown";
}

gs_status gs_algo_from_name(const char *name, gs_algo *a)
{
    for (int i = 0; name && a && i < GS_ALGO_COUNT; i++) {
        if (strcmp(name, algo_names[i]) == 0) {
            *a = (gs_algo)i;
            return GS_OK;
        }
    }
    return GS_ERR_ARG;
}

int gs_algo_serves(gs_algo a, int scan)
{
    if (a == GS_ALGO_DEFAULT || a == GS_ALGO_CUB) return 1;
    if (a >= GS_ALGO_DIVERGENT && a <= GS_ALGO_GRID_STRIDE) return !scan;
    return scan && a >= GS_ALGO_HILLIS_STEELE && a < GS_ALGO_CUB;
}
