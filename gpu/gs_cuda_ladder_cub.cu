/*
 * gs_cuda_ladder_cub.cu - the ladder's reference variant: CUB's
 * DeviceReduce::Reduce and DeviceScan (CCCL, shipped with the toolkit),
 * given gpuscan's accumulators and ops, so that they compute the same
 * function: reductions accumulate in reduce_t, scans in work_t (fp64 for
 * float sums and products, the element type for min and max), and store
 * through the conversion to the output type. CUB takes 32-bit counts here
 * (its fastest path), so n is at most 2^31 - 1. The ladder's call scans
 * from the identity and detects no overflow; gs_cub_scan_carried is the
 * cub variant of gs_scan, with a carry in device memory and the overflow
 * check, through iterators around the same CUB call.
 *
 * gs_cuda_ladder_native is the cub-native row beside it: CUB's own calls on
 * the input type, for the ratios users compare with.
 *
 * Here: the checks and the choice of the element type; the CUB calls are in
 * gs_cuda_cub.cuh, compiled in two files by element size (gs_cuda_cub_32.cu,
 * gs_cuda_cub_64.cu).
 */
#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_traits.cuh"

gs_status gs_cub_run(gs_cuda *g, int scan, gs_type type, gs_op op, gs_scan_kind kind,
                     const void *d_in, void *d_out, int64_t n, void *work, size_t *bytes)
{
    if (n > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED,
                                   "the cub variant takes at most 2^31 - 1 elements, not %lld",
                                   (long long)n);
    return gs_dispatch_type(type, [&](auto t) {
        return gs_cub_run_of<decltype(t)::value>(g, scan, op, kind, d_in, d_out, (int)n, work, bytes);
    });
}

gs_status gs_cuda_ladder_native(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                                void *d_out, int64_t n, void *work, size_t *work_bytes)
{
    if (!gs_native_scan_exists(op, kind))
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED, "no native CUB call for the %s %s scan",
                                   kind == GS_EXCLUSIVE ? "exclusive" : "inclusive", gs_op_name(op));
    if (n > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED,
                                   "CUB's native calls take at most 2^31 - 1 elements here, not %lld",
                                   (long long)n);
    return gs_dispatch_type(type, [&](auto t) {
        return gs_cub_native_of<decltype(t)::value>(g, op, kind, d_in, d_out, (int)n, work, work_bytes);
    });
}

gs_status gs_cub_scan_carried(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                              void *d_out, int64_t n, const gs_acc *d_carry_in, gs_acc *d_carry_out,
                              uint32_t *d_overflow, void *work, size_t *bytes)
{
    if (n > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED,
                                   "the cub variant takes at most 2^31 - 1 elements at once, not %lld "
                                   "(streamed runs take them a chunk at a time)",
                                   (long long)n);
    return gs_dispatch_type(type, [&](auto t) {
        return gs_cub_scan_carried_of<decltype(t)::value>(g, op, kind, d_in, d_out, (int)n, d_carry_in,
                                                          d_carry_out, d_overflow, work, bytes);
    });
}
