/*
 * gs_cuda_kernels.cuh - the CUDA backend's internals, shared by its .cu files:
 * the handle, error checking, the (type, op) traits and the kernel templates.
 *
 * One template per kernel serves every (type, op); gs_traits supplies the
 * C++ types that the rules of gs_acc.h call for, and gs_dispatch() turns a
 * run-time (type, op) into the instance.
 *
 * Kernels:
 *   gs_reduce_kernel    persistent grid-stride reduction with 16-byte loads;
 *                       the last block to finish combines the block partials
 *   gs_scan_kernel      single-pass chained scan with decoupled look-back
 *   gs_generate_kernel  the counter-based generator of gs_gen.h
 */
#ifndef GS_CUDA_KERNELS_CUH
#define GS_CUDA_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "gs_cuda.h"
#include "gs_gen.h"

/* ---- the handle ------------------------------------------------------------- */

/* Results a kernel leaves for the host, copied back in one transfer. */
struct gs_cuda_scalars {
    gs_acc result;            /* reduction partial, or a scan's carry out */
    uint64_t overflow_epoch;  /* the scan epoch in which a prefix sum overflowed */
    unsigned int blocks_done; /* reduction blocks finished; the last resets it */
};

/* A scan tile's published state: status = epoch << 2 | GS_TILE_*, value =
 * the tile's aggregate or inclusive prefix (the bits of the scan carry).
 * Statuses of earlier scans carry an older epoch and read as "not yet", so
 * the array never needs clearing between scans. */
struct alignas(16) gs_tile_state {
    uint64_t status;
    uint64_t value;
};
enum { GS_TILE_AGGREGATE = 1, GS_TILE_INCLUSIVE = 2 };

/* Kernels whose resident blocks per multiprocessor a handle remembers. */
#define GS_CUDA_OCCUPANCY_SLOTS 64

struct gs_cuda {
    int device;
    int sm_count;
    struct {
        const void *kernel;
        int blocks_per_sm;
    } occupancy[GS_CUDA_OCCUPANCY_SLOTS];
    cudaStream_t stream;               /* kernels and synchronous copies, non-blocking */
    cudaStream_t copy_streams[GS_CUDA_COPY_STREAMS]; /* the pipeline's asynchronous copies */
    gs_cuda_scalars *d_scalars;        /* device */
    gs_cuda_scalars *h_scalars;        /* pinned host mirror */
    void *d_partials;                  /* reduction block partials */
    size_t partials_bytes;
    void *d_tiles;                     /* scan tile states */
    size_t tiles_bytes;
    uint64_t scan_epoch;               /* incremented per scan launch, never 0 */
    char error[512];
};

/* Record "<what>: <CUDA's message>" in the handle, clear CUDA's last error
 * and return GS_ERR_NOMEM for failed allocations, else GS_ERR_CUDA. */
gs_status gs_cuda_fail(gs_cuda *g, cudaError_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Record a failure that is no CUDA error. */
gs_status gs_cuda_fail_status(gs_cuda *g, gs_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Run a CUDA call; on failure record the message (printf-style `...`) and
 * return from the calling function. */
#define GS_CUDA_CHECK(g, call, ...)                                        \
    do {                                                                   \
        cudaError_t gs_cuda_check_err_ = (call);                           \
        if (gs_cuda_check_err_ != cudaSuccess)                             \
            return gs_cuda_fail((g), gs_cuda_check_err_, __VA_ARGS__);     \
    } while (0)

/* Pass a failure upward. */
#define GS_CUDA_PASS(call)                                                 \
    do {                                                                   \
        gs_status gs_cuda_pass_status_ = (call);                           \
        if (gs_cuda_pass_status_ != GS_OK) return gs_cuda_pass_status_;    \
    } while (0)

/* Make g's device current (the caller's thread may have switched). */
gs_status gs_cuda_enter(gs_cuda *g);
/* Grow a scratch buffer to at least `bytes`, zeroed when (re)allocated. */
gs_status gs_cuda_reserve(gs_cuda *g, void **buffer, size_t *capacity, size_t bytes,
                          const char *what);
/* Resident blocks per multiprocessor of `kernel` with `block` threads,
 * worked out once per handle and kernel. */
gs_status gs_cuda_occupancy(gs_cuda *g, const void *kernel, int block, int *blocks_per_sm);
/* Copy the scalars back to g->h_scalars and wait for the stream. */
gs_status gs_cuda_fetch_scalars(gs_cuda *g);
/* GS_ERR_ARG unless (type, op) is valid, n >= 0 and `data` (n elements of
 * `type`) is element-aligned, or NULL with n == 0; `what` names the call. */
gs_status gs_cuda_check_args(gs_cuda *g, const char *what, gs_type type, gs_op op,
                             const void *data, int64_t n);

/* ---- traits ------------------------------------------------------------------ */

template <gs_type TYPE> struct gs_element;
template <> struct gs_element<GS_I32> { using type = int32_t; };
template <> struct gs_element<GS_I64> { using type = int64_t; };
template <> struct gs_element<GS_U32> { using type = uint32_t; };
template <> struct gs_element<GS_U64> { using type = uint64_t; };
template <> struct gs_element<GS_F32> { using type = float; };
template <> struct gs_element<GS_F64> { using type = double; };

/* The C++ types of one (type, op), as gs_acc.h rules:
 *   in_t      the element
 *   scan_t    the 64-bit scan carry: integer sums and products wrap in
 *             uint64_t, min/max keep the signedness, floats use fp64
 *   out_t     a scan's output element (gs_scan_output_type)
 *   reduce_t  the reduction accumulator (gs_reduce_acc_kind)
 *   thread_t  one thread's reduction accumulator: a thread sees fewer than
 *             2^32 elements, so 32-bit sums are exact in 64 bits */
template <gs_type TYPE, gs_op OP>
struct gs_traits {
    static constexpr gs_type type = TYPE;
    static constexpr gs_op op = OP;
    static constexpr bool is_float = TYPE == GS_F32 || TYPE == GS_F64;
    static constexpr bool is_signed = TYPE == GS_I32 || TYPE == GS_I64;
    static constexpr bool is_int_sum = !is_float && OP == GS_SUM;
    static constexpr bool is_min_max = OP == GS_MIN || OP == GS_MAX;

    using in_t = typename gs_element<TYPE>::type;
    using scan_t = std::conditional_t<is_float, double,
                   std::conditional_t<is_min_max && is_signed, int64_t, uint64_t>>;
    using out_t = std::conditional_t<is_float || is_min_max, in_t,
                  std::conditional_t<is_signed, int64_t, uint64_t>>;
    using reduce_t = std::conditional_t<is_int_sum,
                     std::conditional_t<is_signed, gs_i128, gs_u128>, scan_t>;
    using thread_t = std::conditional_t<is_int_sum && sizeof(in_t) == 4,
                     std::conditional_t<is_signed, int64_t, uint64_t>, reduce_t>;
};

/* gs_acc's member for each accumulator type (the member gs_acc.h names for
 * its kind); the other bytes are zero. */
GS_HD int64_t gs_acc_get(gs_acc a, int64_t *) { return a.i; }
GS_HD uint64_t gs_acc_get(gs_acc a, uint64_t *) { return a.u; }
GS_HD double gs_acc_get(gs_acc a, double *) { return a.f; }
GS_HD gs_i128 gs_acc_get(gs_acc a, gs_i128 *) { return a.s; }
GS_HD gs_u128 gs_acc_get(gs_acc a, gs_u128 *) { return a.w; }
GS_HD void gs_acc_set(gs_acc *a, int64_t v) { a->i = v; }
GS_HD void gs_acc_set(gs_acc *a, uint64_t v) { a->u = v; }
GS_HD void gs_acc_set(gs_acc *a, double v) { a->f = v; }
GS_HD void gs_acc_set(gs_acc *a, gs_i128 v) { a->s = v; }
GS_HD void gs_acc_set(gs_acc *a, gs_u128 v) { a->w = v; }

template <class A> GS_HD A gs_from_acc(gs_acc a) { return gs_acc_get(a, (A *)nullptr); }
template <class A> GS_HD gs_acc gs_to_acc(A v)
{
    gs_acc a;
    a.w = 0;
    gs_acc_set(&a, v);
    return a;
}

template <class Tr> GS_HD typename Tr::scan_t gs_scan_identity()
{
    return gs_from_acc<typename Tr::scan_t>(gs_acc_identity(Tr::type, Tr::op));
}

/* The op on any accumulator; floats take the NaN-propagating min and max. */
template <class A> GS_HD A gs_min_of(A a, A b) { return b < a ? b : a; }
template <class A> GS_HD A gs_max_of(A a, A b) { return b > a ? b : a; }
GS_HD double gs_min_of(double a, double b) { return gs_fmin(a, b); }
GS_HD double gs_max_of(double a, double b) { return gs_fmax(a, b); }

template <gs_op OP, class A> GS_HD A gs_combine(A a, A b)
{
    if constexpr (OP == GS_SUM) return a + b;
    else if constexpr (OP == GS_PROD) return a * b;
    else if constexpr (OP == GS_MIN) return gs_min_of(a, b);
    else return gs_max_of(a, b);
}

/* ---- dispatch ---------------------------------------------------------------- */

/* fn(gs_traits<TYPE, OP>{}) for the run-time (type, op); the caller has
 * checked both are in range. */
template <gs_type TYPE, class Fn> gs_status gs_dispatch_op(gs_op op, Fn &&fn)
{
    switch (op) {
    case GS_SUM: return fn(gs_traits<TYPE, GS_SUM>{});
    case GS_PROD: return fn(gs_traits<TYPE, GS_PROD>{});
    case GS_MIN: return fn(gs_traits<TYPE, GS_MIN>{});
    default: return fn(gs_traits<TYPE, GS_MAX>{});
    }
}

template <class Fn> gs_status gs_dispatch(gs_type type, gs_op op, Fn &&fn)
{
    switch (type) {
    case GS_I32: return gs_dispatch_op<GS_I32>(op, fn);
    case GS_I64: return gs_dispatch_op<GS_I64>(op, fn);
    case GS_U32: return gs_dispatch_op<GS_U32>(op, fn);
    case GS_U64: return gs_dispatch_op<GS_U64>(op, fn);
    case GS_F32: return gs_dispatch_op<GS_F32>(op, fn);
    default: return gs_dispatch_op<GS_F64>(op, fn);
    }
}

/* ---- device helpers ------------------------------------------------------------ */

#define GS_DEV __device__ __forceinline__
#define GS_FULL_MASK 0xffffffffu

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

/* The op over the warp, every lane gets the result. */
template <gs_op OP, class A> GS_DEV A gs_warp_reduce(A v)
{
#pragma unroll
    for (int mask = 16; mask > 0; mask >>= 1) v = gs_combine<OP>(v, gs_shfl_xor(v, mask));
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

/* 16 bytes of elements. */
template <class T> struct alignas(16) gs_vec {
    static constexpr int count = 16 / sizeof(T);
    T e[count];
};

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

/* ---- reduction --------------------------------------------------------------------- */

/* Elements [0, head) and the tail after the last whole vector are read one
 * by one; the aligned middle as 16-byte vectors, UNROLL per thread in flight.
 * Each block writes its partial; the last block to finish (the classic
 * threadfence pattern) combines them into scalars->result. */
template <class Tr, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
gs_reduce_kernel(const typename Tr::in_t *in, int64_t n, int64_t head,
                 typename Tr::reduce_t *partials, gs_cuda_scalars *scalars)
{
    using T = typename Tr::in_t;
    using A = typename Tr::thread_t;
    using R = typename Tr::reduce_t;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = gs_vec<T>::count;
    __shared__ R warp_partials[BLOCK / 32];
    __shared__ bool is_last_block;

    const R identity = gs_from_acc<R>(gs_acc_identity(Tr::type, OP));
    const int64_t nvec = (n - head) / VEC;
    const gs_vec<T> *vin = reinterpret_cast<const gs_vec<T> *>(in + head);
    const int64_t thread = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * BLOCK;

    A acc = static_cast<A>(identity);
    int64_t i = thread;
    for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
        gs_vec<T> v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = gs_load_vec_nc(&vin[i + u * stride].e[0]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int k = 0; k < VEC; k++) acc = gs_combine<OP>(acc, static_cast<A>(v[u].e[k]));
    }
    for (; i < nvec; i += stride) {
        const gs_vec<T> v = gs_load_vec_nc(&vin[i].e[0]);
#pragma unroll
        for (int k = 0; k < VEC; k++) acc = gs_combine<OP>(acc, static_cast<A>(v.e[k]));
    }
    const int64_t tail = head + nvec * VEC;
    if (thread < head) acc = gs_combine<OP>(acc, static_cast<A>(in[thread]));
    if (thread < n - tail) acc = gs_combine<OP>(acc, static_cast<A>(in[tail + thread]));

    R block = gs_block_reduce<OP, BLOCK>(static_cast<R>(acc), identity, warp_partials);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = block;
        __threadfence();   /* the partial is visible before the count says so */
        is_last_block = atomicAdd(&scalars->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last_block) return;

    __threadfence();
    R total = identity;
    for (int b = threadIdx.x; b < (int)gridDim.x; b += BLOCK)
        total = gs_combine<OP>(total, gs_load_cg(&partials[b]));
    __syncthreads();   /* warp_partials is reused */
    total = gs_block_reduce<OP, BLOCK>(total, identity, warp_partials);
    if (threadIdx.x == 0) {
        scalars->result = gs_to_acc(total);
        scalars->blocks_done = 0;   /* ready for the next launch */
    }
}

/* ---- scan --------------------------------------------------------------------------- */

/* One 16-byte store, relaxed at GPU scope: value and status travel together
 * (an aligned 16-byte access is not split by the hardware, as CUB relies on
 * too), so a reader never sees a status without its value. */
GS_DEV void gs_tile_publish(gs_tile_state *tile, uint64_t status, uint64_t value)
{
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};"
                 :: "l"(tile), "l"(status), "l"(value) : "memory");
}

GS_DEV gs_tile_state gs_tile_read(const gs_tile_state *tile)
{
    gs_tile_state s;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];"
                 : "=l"(s.status), "=l"(s.value) : "l"(tile) : "memory");
    return s;
}

template <class S> GS_DEV uint64_t gs_bits(S v)
{
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
}
template <class S> GS_DEV S gs_from_bits(uint64_t b)
{
    S v;
    memcpy(&v, &b, 8);
    return v;
}

template <class Tr> struct gs_scan_args {
    const typename Tr::in_t *in;
    typename Tr::out_t *out;
    int64_t n;
    /* The tiles cover virtual indices [0, n + shift): element i sits at
     * virtual index i + shift, which puts 16-byte boundaries of `in` on
     * vector boundaries of the tiles. */
    int shift;
    bool vector_out;   /* out is 16-byte aligned at the same vector boundaries */
    bool exclusive;
    typename Tr::scan_t carry_in;
    gs_tile_state *states;
    uint64_t epoch;
    gs_cuda_scalars *scalars;
};

/* The exclusive prefix of tile `tile` (> 0) from its predecessors' states,
 * run by one whole warp: each lane reads one predecessor, nearest first, and
 * the window moves back 32 tiles until it holds an inclusive prefix. */
template <class Tr> GS_DEV typename Tr::scan_t gs_look_back(const gs_tile_state *states,
                                                            int64_t tile, uint64_t epoch)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    const int lane = threadIdx.x % 32;
    const S identity = gs_scan_identity<Tr>();
    const uint64_t inclusive_status = epoch << 2 | GS_TILE_INCLUSIVE;

    S prefix = identity;
    for (int64_t window = tile - 1;; window -= 32) {
        const int64_t pred = window - lane;
        gs_tile_state s = {inclusive_status, gs_bits(identity)};   /* before tile 0 */
        if (pred >= 0) s = gs_tile_read(&states[pred]);
        while (__any_sync(GS_FULL_MASK, s.status >> 2 != epoch)) {
            __nanosleep(64);   /* a constant: a growing delay makes ptxas spill */
            if (s.status >> 2 != epoch) s = gs_tile_read(&states[pred]);
        }
        const unsigned inclusive = __ballot_sync(GS_FULL_MASK, s.status == inclusive_status);
        /* lanes up to the nearest inclusive prefix count; farther ones not */
        const int last = inclusive ? __ffs(inclusive) - 1 : 31;
        const S v = lane <= last ? gs_from_bits<S>(s.value) : identity;
        prefix = gs_combine<OP>(gs_warp_reduce<OP>(v), prefix);
        if (inclusive) return prefix;
    }
}

/*
 * One block scans one tile of BLOCK * VECS 16-byte vectors; blocks start in
 * tile order, so a tile's predecessors are always running or done. Warp w
 * owns a contiguous segment of VECS * 32 vectors; lane l holds vector
 * j * 32 + l of it for each j, so every load and store is a coalesced
 * 16-byte access. Per j, the lanes' vector totals are scanned across the
 * warp by shuffles; the warps' totals through shared memory; the tile's
 * prefix by look-back. Whole tiles of aligned data use vector loads and
 * stores; the first and last tiles, and misaligned output, go element by
 * element with the op's identity in place of missing elements. At least 768
 * threads stay resident per multiprocessor, so that the loads of some tiles
 * overlap the look-back of others.
 */
template <class Tr, int BLOCK, int VECS>
__global__ void __launch_bounds__(BLOCK, 768 / BLOCK) gs_scan_kernel(const gs_scan_args<Tr> a)
{
    using T = typename Tr::in_t;
    using S = typename Tr::scan_t;
    using O = typename Tr::out_t;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = gs_vec<T>::count;
    constexpr int WARPS = BLOCK / 32;
    constexpr int64_t WARP_ITEMS = VECS * 32 * VEC;
    constexpr int64_t TILE = WARPS * WARP_ITEMS;
    __shared__ S warp_totals[WARPS];
    __shared__ S tile_prefix;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t tile = blockIdx.x;
    const S identity = gs_scan_identity<Tr>();
    /* element index of this lane's first element of vector j = 0 */
    const int64_t first = tile * TILE + warp * WARP_ITEMS + lane * VEC - a.shift;
    const bool whole = a.vector_out && tile * TILE >= a.shift &&
                       (tile + 1) * TILE <= a.n + a.shift;

    T x[VECS][VEC];
    if (whole) {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const uint4 raw = *reinterpret_cast<const uint4 *>(a.in + first + j * 32 * VEC);
            memcpy(x[j], &raw, 16);
        }
    } else {
        const T pad = static_cast<T>(identity);   /* every identity fits the element type */
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                x[j][k] = i >= 0 && i < a.n ? a.in[i] : pad;
            }
    }

    /* Scan the lanes' vector totals across the warp, all j at once. */
    S scanned[VECS];
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        scanned[j] = static_cast<S>(x[j][0]);
#pragma unroll
        for (int k = 1; k < VEC; k++) scanned[j] = gs_combine<OP>(scanned[j], static_cast<S>(x[j][k]));
    }
#pragma unroll
    for (int d = 1; d < 32; d *= 2)
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const S up = gs_shfl_up(scanned[j], d);
            if (lane >= d) scanned[j] = gs_combine<OP>(up, scanned[j]);
        }
    /* before[j]: the warp segment's elements before this lane's vector j */
    S before[VECS];
    S segment = identity;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        const S lower_lanes = gs_shfl_up(scanned[j], 1);
        before[j] = lane == 0 ? segment : gs_combine<OP>(segment, lower_lanes);
        segment = gs_combine<OP>(segment, gs_shfl_idx(scanned[j], 31));
    }
    if (lane == 0) warp_totals[warp] = segment;
    __syncthreads();

    S warp_prefix = identity, tile_total = identity;
#pragma unroll
    for (int w = 0; w < WARPS; w++) {
        if (w == warp) warp_prefix = tile_total;
        tile_total = gs_combine<OP>(tile_total, warp_totals[w]);
    }
    if (warp == 0) {
        const uint64_t status = a.epoch << 2;
        S prefix = a.carry_in;
        if (tile > 0) {
            if (lane == 0) gs_tile_publish(&a.states[tile], status | GS_TILE_AGGREGATE, gs_bits(tile_total));
            prefix = gs_look_back<Tr>(a.states, tile, a.epoch);
        }
        const S inclusive = gs_combine<OP>(prefix, tile_total);
        if (lane == 0) {
            gs_tile_publish(&a.states[tile], status | GS_TILE_INCLUSIVE, gs_bits(inclusive));
            tile_prefix = prefix;
            if (tile == gridDim.x - 1) a.scalars->result = gs_to_acc(inclusive);
        }
    }
    __syncthreads();

    /* Each lane scans its own vectors serially from their prefixes; each
     * output is checked for overflow where it is formed. */
    const S base = gs_combine<OP>(tile_prefix, warp_prefix);
    bool overflow = false;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        S running = gs_combine<OP>(base, before[j]);
        O y[VEC];
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const S v = static_cast<S>(x[j][k]);
            const S next = gs_combine<OP>(running, v);
            if constexpr (Tr::is_int_sum) {
                overflow |= Tr::is_signed
                                ? gs_add_i64_overflows((int64_t)running, (int64_t)v, (int64_t)next)
                                : gs_add_u64_overflows(running, next);
            }
            y[k] = static_cast<O>(a.exclusive ? running : next);
            running = next;
        }
        O *dst = a.out + first + j * 32 * VEC;
        if (whole) {
#pragma unroll
            for (int part = 0; part < (int)sizeof y / 16; part++) {
                uint4 raw;
                memcpy(&raw, reinterpret_cast<const char *>(y) + 16 * part, 16);
                reinterpret_cast<uint4 *>(dst)[part] = raw;
            }
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                if (i >= 0 && i < a.n) dst[k] = y[k];
            }
        }
    }
    if constexpr (Tr::is_int_sum) {
        if (__any_sync(GS_FULL_MASK, overflow) && lane == 0) a.scalars->overflow_epoch = a.epoch;
    }
}

/* ---- generator ------------------------------------------------------------------------- */

GS_DEV int32_t gs_gen_element(uint64_t seed, uint64_t i, int32_t *) { return gs_gen_i32(seed, i); }
GS_DEV int64_t gs_gen_element(uint64_t seed, uint64_t i, int64_t *) { return gs_gen_i64(seed, i); }
GS_DEV uint32_t gs_gen_element(uint64_t seed, uint64_t i, uint32_t *) { return gs_gen_u32(seed, i); }
GS_DEV uint64_t gs_gen_element(uint64_t seed, uint64_t i, uint64_t *) { return gs_gen_u64(seed, i); }
GS_DEV float gs_gen_element(uint64_t seed, uint64_t i, float *) { return gs_gen_f32(seed, i); }
GS_DEV double gs_gen_element(uint64_t seed, uint64_t i, double *) { return gs_gen_f64(seed, i); }

template <class T>
__global__ void gs_generate_kernel(uint64_t seed, int64_t start, int64_t n, T *out)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = gs_gen_element(seed, (uint64_t)(start + i), (T *)nullptr);
}

#endif /* GS_CUDA_KERNELS_CUH */
