/*
 * gs_cuda_ladder_cub.cu - the ladder's reference variant: CUB's
 * DeviceReduce::Reduce and DeviceScan (CCCL, shipped with the toolkit),
 * given gpuscan's accumulators and ops, so that they compute the same
 * function: reductions accumulate in reduce_t, scans in work_t (fp64 for
 * float sums and products, the element type for min and max), and store
 * through the conversion to the output type. CUB takes 32-bit counts here
 * (its fastest path), so n is at most 2^31 - 1; it scans from the identity
 * and detects no overflow.
 */
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "gs_cuda_kernels.cuh"

/* gpuscan's op on accumulators of type A, as CUB calls it. */
template <gs_op OP, class A> struct gs_cub_op {
    __device__ __forceinline__ A operator()(A a, A b) const { return gs_combine<OP>(a, b); }
};

/* One CUB call of (type, op): with work == NULL it sets *bytes to the
 * scratch it needs, else it queues the call on the compute stream. */
template <class Tr>
static cudaError_t cub_call(gs_cuda *g, int scan, gs_scan_kind kind, const void *d_in, void *d_out,
                            int n, void *work, size_t *bytes)
{
    using T = typename Tr::in_t;
    const T *in = static_cast<const T *>(d_in);
    if (!scan) {
        using R = typename Tr::reduce_t;
        const R init = gs_from_acc<R>(gs_acc_identity(Tr::type, Tr::op));
        return cub::DeviceReduce::Reduce(work, *bytes, in, static_cast<R *>(d_out), n,
                                         gs_cub_op<Tr::op, R>{}, init, g->stream);
    }
    using W = typename Tr::work_t;
    using O = typename Tr::out_t;
    const W init = static_cast<W>(gs_scan_identity<Tr>());
    O *out = static_cast<O *>(d_out);
    if (kind == GS_EXCLUSIVE)
        return cub::DeviceScan::ExclusiveScan(work, *bytes, in, out, gs_cub_op<Tr::op, W>{}, init, n,
                                              g->stream);
    return cub::DeviceScan::InclusiveScanInit(work, *bytes, in, out, gs_cub_op<Tr::op, W>{}, init, n,
                                              g->stream);
}

gs_status gs_cub_run(gs_cuda *g, int scan, gs_type type, gs_op op, gs_scan_kind kind,
                     const void *d_in, void *d_out, int64_t n, void *work, size_t *bytes)
{
    if (n > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_UNSUPPORTED,
                                   "the cub variant takes at most 2^31 - 1 elements, not %lld",
                                   (long long)n);
    return gs_dispatch(type, op, [&](auto traits) {
        using Tr = decltype(traits);
        GS_CUDA_CHECK(g, (cub_call<Tr>(g, scan, kind, d_in, d_out, (int)n, work, bytes)),
                      "CUB %s of %lld %s elements (%s)", scan ? "scan" : "reduction", (long long)n,
                      gs_type_name(type), gs_op_name(op));
        return GS_OK;
    });
}
