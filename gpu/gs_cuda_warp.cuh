/*
 * gs_cuda_warp.cuh - the device building blocks the kernels share: shuffles
 * of any accumulator (128-bit sums too), the op over a warp (reduce, scan)
 * and over a block (reduce, a barrier warps may reach from different code),
 * and 8- or 16-byte vector accesses (read-only and L1-bypassing loads).
 *
 * Device code only; what a kernel does with them lives in the agents
 * (gs_cuda_reduce_agent.cuh, gs_cuda_scan_agent.cuh) and the ladder.
 */
#ifndef GS_CUDA_WARP_CUH
#define GS_CUDA_WARP_CUH

#include <stdint.h>
#include <string.h>

#include "gs_cuda_traits.cuh"

#define GS_FULL_MASK 0xffffffffu

/* ---- shuffles ---------------------------------------------------------------- */

/* Shuffles of any accumulator, a 32-bit word at a time (128-bit sums too);
 * shifts rather than arrays keep the words in registers. */
template <class A, class Shuffle> GS_DEV A gs_shuffle_words(A v, Shuffle shuffle)
{
    if constexpr (sizeof(A) == 16) {
        const gs_u128 w = (gs_u128)v;
        const uint64_t lo = gs_shuffle_words((uint64_t)w, shuffle);
        const uint64_t hi = gs_shuffle_words((uint64_t)(w >> 64), shuffle);
        return (A)((gs_u128)hi << 64 | lo);
    } else if constexpr (sizeof(A) == 8) {
        uint64_t b;
        memcpy(&b, &v, 8);
        const uint32_t lo = shuffle((uint32_t)b), hi = shuffle((uint32_t)(b >> 32));
        b = (uint64_t)hi << 32 | lo;
        memcpy(&v, &b, 8);
        return v;
    } else {
        uint32_t b;
        memcpy(&b, &v, 4);
        b = shuffle(b);
        memcpy(&v, &b, 4);
        return v;
    }
}
template <class A> GS_DEV A gs_shfl_up(A v, int delta)
{
    return gs_shuffle_words(v, [=](uint32_t w) { return __shfl_up_sync(GS_FULL_MASK, w, delta); });
}
template <class A> GS_DEV A gs_shfl_xor(A v, int mask)
{
    return gs_shuffle_words(v, [=](uint32_t w) { return __shfl_xor_sync(GS_FULL_MASK, w, mask); });
}
template <class A> GS_DEV A gs_shfl_idx(A v, int lane)
{
    return gs_shuffle_words(v, [=](uint32_t w) { return __shfl_sync(GS_FULL_MASK, w, lane); });
}

/* ---- warp and block ------------------------------------------------------------ */

/* The op over the warp, every lane gets the result. */
template <gs_op OP, class A> GS_DEV A gs_warp_reduce(A v)
{
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) v = gs_combine<OP>(v, gs_shfl_xor(v, mask));
    return v;
}

/* The op over lanes 0..lane, every lane. */
template <gs_op OP, class A> GS_DEV A gs_warp_scan(A v)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
        const A up = gs_shfl_up(v, d);
        if (lane >= d) v = gs_combine<OP>(up, v);
    }
    return v;
}

/* The op over the block; the result is valid in thread 0. `shared` holds
 * one value per warp. */
template <gs_op OP, int BLOCK, class A> GS_DEV A gs_block_reduce(A v, A identity, A *shared)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = gs_warp_reduce<OP>(v);
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < BLOCK / 32 ? shared[lane] : identity;
        v = gs_warp_reduce<OP>(v);
    }
    return v;
}

/* A barrier of the whole block that may sit at different places in the
 * code of different warps (the warp-specialised scan): the non-aligned form. */
GS_DEV void gs_block_barrier() { asm volatile("barrier.sync 0;" ::: "memory"); }

/* ---- vector accesses ------------------------------------------------------------ */

/* 16 bytes of elements. */
template <class T> struct alignas(16) gs_vec {
    static constexpr int count = 16 / sizeof(T);
    T e[count];
};

/* 8 or 16 bytes moved as one access. */
template <int BYTES> struct gs_raw_of;
template <> struct gs_raw_of<8> { using type = uint2; };
template <> struct gs_raw_of<16> { using type = uint4; };

/* A copy from global to shared memory that runs while the thread goes on
 * (cp.async, sm_80 and later; a plain load and store before), and the wait
 * for all of the thread's copies (the group of them closed, then waited
 * for). A thread sees its own copies after the wait; other threads' need a
 * barrier too. */
template <int BYTES> GS_DEV void gs_copy_async(void *dst_shared, const void *src_global)
{
#if __CUDA_ARCH__ >= 800
    const unsigned dst = (unsigned)__cvta_generic_to_shared(dst_shared);
    if constexpr (BYTES == 16)   /* .cg: past L1, which streamed data would only evict */
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src_global) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(src_global), "n"(BYTES)
                     : "memory");
#else
    using Raw = typename gs_raw_of<BYTES>::type;
    *static_cast<Raw *>(dst_shared) = *static_cast<const Raw *>(src_global);
#endif
}

GS_DEV void gs_copy_async_wait_all()
{
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#endif
}

template <class T> GS_DEV gs_vec<T> gs_load_vec_nc(const T *p)
{
    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
    gs_vec<T> v;
    memcpy(&v, &raw, 16);
    return v;
}

/* A load that bypasses L1 (which is not coherent across blocks). */
template <class A> GS_DEV A gs_load_cg(const A *p)
{
    if constexpr (sizeof(A) == 16) {
        const ulonglong2 raw = __ldcg(reinterpret_cast<const ulonglong2 *>(p));
        return (A)((gs_u128)raw.y << 64 | raw.x);
    } else {
        const unsigned long long raw = __ldcg(reinterpret_cast<const unsigned long long *>(p));
        A v;
        memcpy(&v, &raw, 8);
        return v;
    }
}

#endif /* GS_CUDA_WARP_CUH */
