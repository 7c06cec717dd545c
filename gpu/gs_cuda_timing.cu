/*
 * gs_cuda_timing.cu - timing work queued on the compute stream with CUDA
 * events, for the ladder (`gpuscan ladder`): untimed runs until the GPU is
 * warm, then each timed run between two events of its own.
 */
#include "gs_cuda_handle.cuh"

gs_status gs_cuda_time_runs(gs_cuda *g, gs_status (*run)(void *arg), void *arg, int warmup,
                            double warmup_ms, int iters, float *ms)
{
    GS_CUDA_PASS(gs_cuda_enter(g));
    cudaEvent_t start = NULL, stop = NULL;
    gs_status st = GS_OK;
    cudaError_t err = cudaEventCreate(&start);
    if (err == cudaSuccess) err = cudaEventCreate(&stop);
    if (err == cudaSuccess) err = cudaEventRecord(start, g->stream);
    if (err != cudaSuccess) st = gs_cuda_fail(g, err, "creating a CUDA event");
    float warm = 0;
    for (int i = 0; st == GS_OK && (i < warmup || warm < warmup_ms); i++) {
        st = run(arg);
        if (st != GS_OK || (i + 1 < warmup && warmup_ms <= 0)) continue;
        err = cudaEventRecord(stop, g->stream);
        if (err == cudaSuccess) err = cudaEventSynchronize(stop);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&warm, start, stop);
        if (err != cudaSuccess) st = gs_cuda_fail(g, err, "timing warm-up run %d", i);
    }
    for (int i = 0; i < iters && st == GS_OK; i++) {
        err = cudaEventRecord(start, g->stream);
        if (err == cudaSuccess && (st = run(arg)) != GS_OK) break;
        if (err == cudaSuccess) err = cudaEventRecord(stop, g->stream);
        if (err == cudaSuccess) err = cudaEventSynchronize(stop);
        if (err == cudaSuccess) err = cudaEventElapsedTime(&ms[i], start, stop);
        if (err != cudaSuccess) st = gs_cuda_fail(g, err, "timing run %d", i);
    }
    if (st == GS_OK && iters <= 0) {
        err = cudaStreamSynchronize(g->stream);
        if (err != cudaSuccess) st = gs_cuda_fail(g, err, "waiting for the GPU");
    }
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return st;
}
