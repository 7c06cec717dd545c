/*
 * gs_cuda_device.cu - the CUDA backend's handle: device binding, the stream,
 * memory, copies and fills, scratch buffers, errors, and the generator.
 *
 * Nothing here aborts: every CUDA call is checked, its message lands in the
 * handle ("cudaMalloc of 4096 bytes: out of memory") and a gs_status goes
 * back to the caller.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gs_cuda_generate.cuh"
#include "gs_cuda_handle.cuh"
#include "gs_cuda_traits.cuh"

/* Threads per block of the generator. */
#define GS_GENERATE_BLOCK 256
/* Generator blocks per multiprocessor: enough to keep it busy. */
#define GS_GENERATE_BLOCKS_PER_SM 8

static gs_status fail_v(gs_cuda *g, gs_status status, const char *cuda_msg, const char *fmt,
                        va_list ap)
{
    int len = vsnprintf(g->error, sizeof g->error, fmt, ap);
    if (cuda_msg && len >= 0 && (size_t)len < sizeof g->error)
        snprintf(g->error + len, sizeof g->error - (size_t)len, ": %s", cuda_msg);
    return status;
}

gs_status gs_cuda_fail(gs_cuda *g, cudaError_t err, const char *fmt, ...)
{
    cudaGetLastError();   /* clear a non-sticky error so later calls can succeed */
    va_list ap;
    va_start(ap, fmt);
    const gs_status status = err == cudaErrorMemoryAllocation ? GS_ERR_NOMEM : GS_ERR_CUDA;
    fail_v(g, status, cudaGetErrorString(err), fmt, ap);
    va_end(ap);
    return status;
}

gs_status gs_cuda_fail_status(gs_cuda *g, gs_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(g, status, NULL, fmt, ap);
    va_end(ap);
    return status;
}

gs_status gs_cuda_enter(gs_cuda *g)
{
    GS_CUDA_CHECK(g, cudaSetDevice(g->device), "cudaSetDevice(%d)", g->device);
    return GS_OK;
}

gs_status gs_cuda_check_args(gs_cuda *g, const char *what, gs_type type, gs_op op,
                             const void *data, int64_t n)
{
    if ((unsigned)type >= GS_TYPE_COUNT || (unsigned)op >= GS_OP_COUNT)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: invalid type %d or op %d", what, (int)type,
                                   (int)op);
    if (n < 0)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: negative count %lld", what, (long long)n);
    if (n > 0 && !data)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: NULL data for %lld elements", what,
                                   (long long)n);
    if ((uintptr_t)data % gs_type_size(type) != 0)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "%s: %p is not aligned to a %s element", what,
                                   data, gs_type_name(type));
    return GS_OK;
}

gs_status gs_cuda_reserve(gs_cuda *g, void **buffer, size_t *capacity, size_t bytes,
                          const char *what)
{
    if (bytes <= *capacity) return GS_OK;
    if (*buffer) {
        GS_CUDA_CHECK(g, cudaFree(*buffer), "cudaFree of the %s", what);
        *buffer = NULL;
        *capacity = 0;
    }
    GS_CUDA_CHECK(g, cudaMalloc(buffer, bytes), "cudaMalloc of %zu bytes for the %s", bytes, what);
    *capacity = bytes;
    GS_CUDA_CHECK(g, cudaMemsetAsync(*buffer, 0, bytes, g->stream), "clearing the %s", what);
    return GS_OK;
}

gs_status gs_cuda_occupancy(gs_cuda *g, const void *kernel, int block, int smem, int *blocks_per_sm)
{
    int slot = 0;
    for (; slot < GS_CUDA_OCCUPANCY_SLOTS && g->occupancy[slot].kernel; slot++) {
        if (g->occupancy[slot].kernel == kernel) {
            *blocks_per_sm = g->occupancy[slot].blocks_per_sm;
            return GS_OK;
        }
    }
    if (smem > 48 * 1024)
        GS_CUDA_CHECK(g, cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                      "asking for %d bytes of shared memory for a kernel of %d threads", smem, block);
    GS_CUDA_CHECK(g, cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, kernel, block, (size_t)smem),
                  "occupancy of a kernel of %d threads and %d bytes of shared memory", block, smem);
    if (*blocks_per_sm < 1)
        return gs_cuda_fail_status(g, GS_ERR_CUDA,
                                   "a kernel of %d threads and %d bytes of shared memory does not fit on device %d",
                                   block, smem, g->device);
    if (slot < GS_CUDA_OCCUPANCY_SLOTS) {
        g->occupancy[slot].kernel = kernel;
        g->occupancy[slot].blocks_per_sm = *blocks_per_sm;
    }
    return GS_OK;
}

gs_status gs_cuda_fetch_scalars(gs_cuda *g)
{
    GS_CUDA_CHECK(g, cudaMemcpyAsync(g->h_scalars, g->d_scalars, sizeof *g->h_scalars,
                                     cudaMemcpyDeviceToHost, g->stream),
                  "copying a result to the host");
    GS_CUDA_CHECK(g, cudaStreamSynchronize(g->stream), "waiting for the GPU");
    return GS_OK;
}

int gs_cuda_device_count(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();   /* no driver or no device: not an error here */
        return 0;
    }
    return count;
}

/* The handle's resources after g->device is set; the caller frees g on failure. */
static gs_status open_handle(gs_cuda *g)
{
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaDeviceGetAttribute(&g->sm_count, cudaDevAttrMultiProcessorCount, g->device),
                  "reading the multiprocessor count of device %d", g->device);
    GS_CUDA_CHECK(g, cudaDeviceGetAttribute(&g->smem_per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, g->device),
                  "reading the shared memory per block of device %d", g->device);
    GS_CUDA_CHECK(g, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking),
                  "creating a stream on device %d", g->device);
    for (int i = 0; i < GS_CUDA_COPY_STREAMS; i++)
        GS_CUDA_CHECK(g, cudaStreamCreateWithFlags(&g->copy_streams[i], cudaStreamNonBlocking),
                      "creating copy stream %d on device %d", i, g->device);
    GS_CUDA_CHECK(g, cudaMalloc((void **)&g->d_scalars, sizeof *g->d_scalars),
                  "cudaMalloc of %zu bytes for the results", sizeof *g->d_scalars);
    GS_CUDA_CHECK(g, cudaMemsetAsync(g->d_scalars, 0, sizeof *g->d_scalars, g->stream),
                  "clearing the results");
    GS_CUDA_CHECK(g, cudaMallocHost((void **)&g->h_scalars, sizeof *g->h_scalars),
                  "cudaMallocHost of %zu bytes for the results", sizeof *g->h_scalars);
    GS_CUDA_CHECK(g, cudaStreamSynchronize(g->stream), "setting up device %d", g->device);
    return GS_OK;
}

gs_status gs_cuda_open(int device, gs_cuda **out, char *err, size_t errlen)
{
    *out = NULL;
    const int count = gs_cuda_device_count();
    if (device < 0 || device >= count) {
        snprintf(err, errlen, "CUDA device %d does not exist (%d usable)", device, count);
        return count == 0 ? GS_ERR_UNSUPPORTED : GS_ERR_ARG;
    }
    gs_cuda *g = (gs_cuda *)calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "allocating the CUDA handle: out of host memory");
        return GS_ERR_NOMEM;
    }
    g->device = device;
    const gs_status status = open_handle(g);
    if (status != GS_OK) {
        snprintf(err, errlen, "%s", g->error);
        gs_cuda_close(g);
        return status;
    }
    *out = g;
    return GS_OK;
}

void gs_cuda_close(gs_cuda *g)
{
    if (!g) return;
    /* Errors are of no use any more: release what exists, whatever fails. */
    cudaSetDevice(g->device);
    cudaDeviceSynchronize();
    cudaFree(g->d_tiles);
    cudaFree(g->d_partials);
    cudaFree(g->d_variant_work);
    cudaFree(g->d_exact_tiles);
    cudaFree(g->d_scalars);
    cudaFreeHost(g->h_scalars);
    if (g->stream) cudaStreamDestroy(g->stream);
    for (int i = 0; i < GS_CUDA_COPY_STREAMS; i++)
        if (g->copy_streams[i]) cudaStreamDestroy(g->copy_streams[i]);
    cudaGetLastError();
    free(g);
}

const char *gs_cuda_error(const gs_cuda *g)
{
    return g ? g->error : "no CUDA handle";
}

gs_status gs_cuda_info(gs_cuda *g, gs_cuda_device_info *info)
{
    cudaDeviceProp prop;
    GS_CUDA_CHECK(g, cudaGetDeviceProperties(&prop, g->device), "reading the properties of device %d",
                  g->device);
    memset(info, 0, sizeof *info);
    memcpy(info->name, prop.name, strnlen(prop.name, sizeof info->name - 1));
    GS_CUDA_CHECK(g, cudaDeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, g->device),
                  "reading the PCI bus id of device %d", g->device);
    info->total_mem = prop.totalGlobalMem;
    info->sm_count = prop.multiProcessorCount;
    info->device = g->device;
    return GS_OK;
}

gs_status gs_cuda_mem_info(gs_cuda *g, uint64_t *free_bytes, uint64_t *total_bytes)
{
    GS_CUDA_PASS(gs_cuda_enter(g));
    size_t free_b = 0, total_b = 0;
    GS_CUDA_CHECK(g, cudaMemGetInfo(&free_b, &total_b), "reading the memory of device %d",
                  g->device);
    *free_bytes = free_b;
    *total_bytes = total_b;
    return GS_OK;
}

gs_status gs_cuda_malloc(gs_cuda *g, void **p, size_t bytes)
{
    *p = NULL;
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaMalloc(p, bytes), "cudaMalloc of %zu bytes", bytes);
    return GS_OK;
}

void gs_cuda_free(gs_cuda *g, void *p)
{
    if (!p) return;
    /* Nothing to return; a failure is kept as the handle's message. */
    if (gs_cuda_enter(g) == GS_OK) {
        const cudaError_t err = cudaFree(p);
        if (err != cudaSuccess) gs_cuda_fail(g, err, "cudaFree(%p)", p);
    }
}

gs_status gs_cuda_host_alloc(gs_cuda *g, void **p, size_t bytes)
{
    *p = NULL;
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaMallocHost(p, bytes), "cudaMallocHost of %zu bytes", bytes);
    return GS_OK;
}

void gs_cuda_host_free(gs_cuda *g, void *p)
{
    if (!p) return;
    const cudaError_t err = cudaFreeHost(p);
    if (err != cudaSuccess) gs_cuda_fail(g, err, "cudaFreeHost(%p)", p);
}

int gs_cuda_is_device_pointer(gs_cuda *g, const void *p)
{
    (void)g;
    cudaPointerAttributes attr;
    if (!p || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();   /* an unknown pointer is host memory */
        return 0;
    }
    return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

static gs_status copy(gs_cuda *g, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                      const char *what)
{
    if (bytes == 0) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaMemcpyAsync(dst, src, bytes, kind, g->stream), "%s copy of %zu bytes", what,
                  bytes);
    /* the caller may reuse or free its host buffer once we return */
    GS_CUDA_CHECK(g, cudaStreamSynchronize(g->stream), "%s copy of %zu bytes", what, bytes);
    return GS_OK;
}

gs_status gs_cuda_copy_h2d(gs_cuda *g, void *dst, const void *src, size_t bytes)
{
    return copy(g, dst, src, bytes, cudaMemcpyHostToDevice, "host-to-device");
}

gs_status gs_cuda_copy_d2h(gs_cuda *g, void *dst, const void *src, size_t bytes)
{
    return copy(g, dst, src, bytes, cudaMemcpyDeviceToHost, "device-to-host");
}

gs_status gs_cuda_fill(gs_cuda *g, void *d, int byte, size_t bytes)
{
    if (bytes == 0) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    GS_CUDA_CHECK(g, cudaMemsetAsync(d, byte, bytes, g->stream), "filling %zu bytes", bytes);
    return GS_OK;
}

gs_status gs_cuda_generate(gs_cuda *g, gs_type type, uint64_t seed, int64_t start, int64_t n,
                           void *d_out)
{
    GS_CUDA_PASS(gs_cuda_check_args(g, "gs_cuda_generate", type, GS_SUM, d_out, n));
    if (start < 0)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "gs_cuda_generate: negative start %lld",
                                   (long long)start);
    if (n == 0) return GS_OK;
    GS_CUDA_PASS(gs_cuda_enter(g));
    const int64_t wanted = (n + GS_GENERATE_BLOCK - 1) / GS_GENERATE_BLOCK;
    const int64_t most = (int64_t)g->sm_count * GS_GENERATE_BLOCKS_PER_SM;
    const unsigned blocks = (unsigned)(wanted < most ? wanted : most);
    return gs_dispatch(type, GS_SUM, [&](auto traits) {
        using T = typename decltype(traits)::in_t;
        gs_generate_kernel<T><<<blocks, GS_GENERATE_BLOCK, 0, g->stream>>>(seed, start, n,
                                                                          static_cast<T *>(d_out));
        GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s generator", gs_type_name(type));
        return GS_OK;
    });
}
