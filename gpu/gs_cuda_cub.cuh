/*
 * gs_cuda_cub.cuh - the CUB calls of the cub variant (gs_cuda_ladder_cub.cu
 * says what they compute), for one element type at a time, instantiated in
 * two files (gs_cuda_cub_32.cu, gs_cuda_cub_64.cu) that `make -j` compiles
 * side by side: CUB's kernels for 24 (type, op) pairs in five forms took one
 * translation unit most of the build's time. Not one file per type: each
 * file parses CUB again (about 10 s of CPU on the CI machine), which six
 * files paid on a 2-core machine for no gain.
 */
#ifndef GS_CUDA_CUB_CUH
#define GS_CUDA_CUB_CUH

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_internal.cuh"
#include "gs_cuda_traits.cuh"

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

/* ---- the cub variant of gs_scan: a carry in and out, overflow checked ------------------ */

/* One step of a prefix: a (the prefix so far) combined with b; a 64-bit
 * sum that leaves its range sets the flag, as in the default kernel. */
template <class Tr>
__device__ __forceinline__ typename Tr::work_t gs_checked_step(typename Tr::work_t a, typename Tr::work_t b,
                                                              uint32_t *overflow)
{
    const typename Tr::work_t s = gs_combine<Tr::op>(a, b);
    if constexpr (Tr::is_int_sum) {
        const bool wrapped = Tr::is_signed ? gs_add_i64_overflows((int64_t)a, (int64_t)b, (int64_t)s)
                                           : gs_add_u64_overflows(a, s);
        if (wrapped) *overflow = 1;
    }
    return s;
}

/* What CUB scans: element i in work_t, element 0 combined with the carry,
 * so that a scan of it from the identity is the scan from the carry. */
template <class Tr> struct gs_carried_input {
    using W = typename Tr::work_t;
    const typename Tr::in_t *in;
    const gs_acc *carry;
    uint32_t *overflow;

    __device__ W carry_value() const { return static_cast<W>(gs_from_acc<typename Tr::scan_t>(*carry)); }
    __device__ W operator()(int64_t i) const
    {
        const W x = static_cast<W>(in[i]);
        return i == 0 ? gs_checked_step<Tr>(carry_value(), x, overflow) : x;
    }
};

/* Where CUB's prefixes go: the output element i (converted to out_t), the
 * overflow check of each 64-bit sum step (CUB's own arithmetic wraps), and
 * the carry after the last element. */
template <class Tr> struct gs_carried_output {
    using W = typename Tr::work_t;
    gs_carried_input<Tr> input;
    typename Tr::out_t *out;
    gs_acc *carry_out;
    int64_t last;
    bool exclusive;

    /* v: the prefix through element i (inclusive), or before it, from the
     * identity (exclusive) */
    __device__ void operator()(ptrdiff_t i, W v) const
    {
        using O = typename Tr::out_t;
        W through = v;
        if (exclusive) {
            if (Tr::is_int_sum || i == last) through = gs_checked_step<Tr>(v, input(i), input.overflow);
            out[i] = static_cast<O>(i == 0 ? input.carry_value() : v);
        } else {
            if constexpr (Tr::is_int_sum) {
                /* undo the step CUB took to check it: v = before + x */
                const W x = input(i);
                gs_checked_step<Tr>(v - x, x, input.overflow);
            }
            out[i] = static_cast<O>(v);
        }
        if (i == last) *carry_out = gs_to_acc(static_cast<typename Tr::scan_t>(through));
    }
};

template <class Tr>
static cudaError_t cub_carried_call(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out, int n,
                                    const gs_acc *carry_in, gs_acc *carry_out, uint32_t *overflow,
                                    void *work, size_t *bytes)
{
    using W = typename Tr::work_t;
    const gs_carried_input<Tr> input{static_cast<const typename Tr::in_t *>(d_in), carry_in, overflow};
    const gs_carried_output<Tr> output{input, static_cast<typename Tr::out_t *>(d_out), carry_out, n - 1,
                                       kind == GS_EXCLUSIVE};
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), input);
    auto out = thrust::make_tabulate_output_iterator(output);
    if (kind == GS_EXCLUSIVE)
        return cub::DeviceScan::ExclusiveScan(work, *bytes, in, out, gs_cub_op<Tr::op, W>{},
                                              static_cast<W>(gs_scan_identity<Tr>()), n, g->stream);
    return cub::DeviceScan::InclusiveScan(work, *bytes, in, out, gs_cub_op<Tr::op, W>{}, n, g->stream);
}

/* ---- one element type's entries (gs_cuda_internal.cuh) ------------------------------ */

template <gs_type TYPE>
gs_status gs_cub_run_of(gs_cuda *g, int scan, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out,
                        int n, void *work, size_t *bytes)
{
    return gs_dispatch_op<TYPE>(op, [&](auto traits) {
        using Tr = decltype(traits);
        GS_CUDA_CHECK(g, (cub_call<Tr>(g, scan, kind, d_in, d_out, n, work, bytes)),
                      "CUB %s of %d %s elements (%s)", scan ? "scan" : "reduction", n,
                      gs_type_name(TYPE), gs_op_name(op));
        return GS_OK;
    });
}

template <gs_type TYPE>
gs_status gs_cub_scan_carried_of(gs_cuda *g, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out,
                                 int n, const gs_acc *d_carry_in, gs_acc *d_carry_out, uint32_t *d_overflow,
                                 void *work, size_t *bytes)
{
    return gs_dispatch_op<TYPE>(op, [&](auto traits) {
        using Tr = decltype(traits);
        GS_CUDA_CHECK(g, (cub_carried_call<Tr>(g, kind, d_in, d_out, n, d_carry_in, d_carry_out, d_overflow,
                                               work, bytes)),
                      "CUB scan of %d %s elements (%s) from a carry", n, gs_type_name(TYPE),
                      gs_op_name(op));
        return GS_OK;
    });
}

/* ---- CUB's native calls: the ladder's cub-native row ------------------------------- */

/* CUB's scans as its users call them, on the input type: InclusiveSum and
 * ExclusiveSum (accumulating in the input type: f32 sums in f32, 32-bit
 * integer sums wrapping in 32 bits), InclusiveScan with cuda::minimum /
 * cuda::maximum (not NaN-propagating). Not gpuscan's function, so a timing
 * reference only; the output is of the input type. Only these four forms
 * (the ones users compare with) are compiled: each costs nvcc seconds. */
template <class T>
static cudaError_t cub_native_call(gs_cuda *g, gs_op op, gs_scan_kind kind, const T *in, T *out, int n,
                                   void *work, size_t *bytes)
{
    if (op == GS_SUM)
        return kind == GS_EXCLUSIVE ? cub::DeviceScan::ExclusiveSum(work, *bytes, in, out, n, g->stream)
                                    : cub::DeviceScan::InclusiveSum(work, *bytes, in, out, n, g->stream);
    if (op == GS_MIN) return cub::DeviceScan::InclusiveScan(work, *bytes, in, out, cuda::minimum<T>{}, n, g->stream);
    return cub::DeviceScan::InclusiveScan(work, *bytes, in, out, cuda::maximum<T>{}, n, g->stream);
}

template <gs_type TYPE>
gs_status gs_cub_native_of(gs_cuda *g, gs_op op, gs_scan_kind kind, const void *d_in, void *d_out, int n,
                           void *work, size_t *bytes)
{
    using T = typename gs_element<TYPE>::type;
    GS_CUDA_CHECK(g, (cub_native_call<T>(g, op, kind, static_cast<const T *>(d_in), static_cast<T *>(d_out), n,
                                         work, bytes)),
                  "CUB's native %s scan of %d %s elements (%s)", kind == GS_EXCLUSIVE ? "exclusive" : "inclusive",
                  n, gs_type_name(TYPE), gs_op_name(op));
    return GS_OK;
}

/* The explicit instances of one type (gs_cuda_cub_32.cu, gs_cuda_cub_64.cu). */
#define GS_CUB_INSTANTIATE(TYPE)                                                                        \
    template gs_status gs_cub_run_of<TYPE>(gs_cuda *, int, gs_op, gs_scan_kind, const void *, void *, int, \
                                           void *, size_t *);                                           \
    template gs_status gs_cub_scan_carried_of<TYPE>(gs_cuda *, gs_op, gs_scan_kind, const void *, void *, \
                                                    int, const gs_acc *, gs_acc *, uint32_t *, void *,  \
                                                    size_t *);  \
    template gs_status gs_cub_native_of<TYPE>(gs_cuda *, gs_op, gs_scan_kind, const void *, void *, int, void *, \
                                              size_t *);

#endif /* GS_CUDA_CUB_CUH */
