/*
 * gs_cuda_kernels.cuh - the CUDA backend's internals, shared by its .cu files:
 * the handle, error checking, the (type, op) traits and the kernel templates.
 *
 * One template per kernel serves every (type, op); gs_traits supplies the
 * C++ types that the rules of gs_rules.h call for, and gs_dispatch() turns a
 * run-time (type, op) into the instance.
 *
 * Kernels:
 *   gs_reduce_kernel     persistent grid-stride reduction with 16-byte loads;
 *                        the last block to finish combines the block partials
 *   gs_scan_kernel       one tile per block: the single-pass chained scan with
 *                        decoupled look-back (a dedicated look-back warp), or
 *                        the first or last pass of reduce-then-scan
 *   gs_scan_sums_kernel  reduce-then-scan's middle pass, one block
 *   gs_generate_kernel   the counter-based generator of gs_gen.h
 * The ladder's teaching kernels live in gs_cuda_ladder.cu.
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
    uint32_t overflow;        /* a synchronous scan's overflow flag; cleared by the host
                                 only after it was seen set */
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
    gs_algo reduce_algo, scan_algo;    /* the kernels gs_cuda_reduce* and gs_cuda_scan* run */
    void *d_variant_work;              /* scratch of the variants (gs_cuda_variant.cu) */
    size_t variant_work_bytes;
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

/* The C++ types of one (type, op), as gs_rules.h rules:
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
    /* work_t: what a scan computes in inside a tile: min and max are exact
     * in the element type (no widening, no fp64), the rest use scan_t */
    using work_t = std::conditional_t<is_min_max, in_t, scan_t>;
    /* Elements per scan vector: 16 bytes of the wider of input and output,
     * so that the stores are 16 bytes wide (loads 8 when the output widens). */
    static constexpr int scan_vec = 16 / (sizeof(in_t) > sizeof(out_t) ? sizeof(in_t) : sizeof(out_t));
};

/* gs_acc's member for each accumulator type (the member gs_rules.h names for
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
GS_HD float gs_min_of(float a, float b) { return (a != a || a < b) ? a : b; }
GS_HD float gs_max_of(float a, float b) { return (a != a || a > b) ? a : b; }

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

/* The default reduction's threads per block and 16-byte loads in flight
 * per thread. */
#define GS_REDUCE_BLOCK 256
#define GS_REDUCE_UNROLL 8

/* Elements [0, head) and the tail after the last whole vector are read one
 * by one; the aligned middle as 16-byte vectors, UNROLL per thread in flight.
 * Each block writes its partial; the last block to finish (the classic
 * threadfence pattern) combines them into *result, with what *result held
 * before when `accumulate` is set. In is the element type, or reduce_t when
 * the kernel combines the partials another kernel left. */
template <class Tr, class In, int BLOCK, int UNROLL>
__global__ void __launch_bounds__(BLOCK)
gs_reduce_kernel(const In *in, int64_t n, int64_t head, typename Tr::reduce_t *partials,
                 gs_cuda_scalars *scalars, gs_acc *result, bool accumulate)
{
    using R = typename Tr::reduce_t;
    /* a thread's 32-bit integer sum is exact in 64 bits; partials are not */
    using A = std::conditional_t<std::is_same_v<In, typename Tr::in_t>, typename Tr::thread_t, R>;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = gs_vec<In>::count;
    __shared__ R warp_partials[BLOCK / 32];
    __shared__ bool is_last_block;

    const R identity = gs_from_acc<R>(gs_acc_identity(Tr::type, OP));
    const int64_t nvec = (n - head) / VEC;
    const gs_vec<In> *vin = reinterpret_cast<const gs_vec<In> *>(in + head);
    const int64_t thread = (int64_t)blockIdx.x * BLOCK + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * BLOCK;

    A acc = static_cast<A>(identity);
    int64_t i = thread;
    for (; i + (UNROLL - 1) * stride < nvec; i += UNROLL * stride) {
        gs_vec<In> v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) v[u] = gs_load_vec_nc(&vin[i + u * stride].e[0]);
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
#pragma unroll
            for (int k = 0; k < VEC; k++) acc = gs_combine<OP>(acc, static_cast<A>(v[u].e[k]));
    }
    for (; i < nvec; i += stride) {
        const gs_vec<In> v = gs_load_vec_nc(&vin[i].e[0]);
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
        if (accumulate) total = gs_combine<OP>(gs_from_acc<R>(*result), total);
        *result = gs_to_acc(total);
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

/* v, as a value the compiler cannot see through: conversions of it made
 * before cannot be reused after, so they are not kept alive in registers. */
template <class T> GS_DEV T gs_opaque(T v)
{
    if constexpr (sizeof(T) == 8) {
        uint64_t b;
        memcpy(&b, &v, 8);
        asm volatile("" : "+l"(b));
        memcpy(&v, &b, 8);
    } else {
        uint32_t b;
        memcpy(&b, &v, 4);
        asm volatile("" : "+r"(b));
        memcpy(&v, &b, 4);
    }
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

/* 8 or 16 bytes moved as one access. */
template <int BYTES> struct gs_raw_of;
template <> struct gs_raw_of<8> { using type = uint2; };
template <> struct gs_raw_of<16> { using type = uint4; };

/* The exclusive prefix of tile `tile` (> 0) from its predecessors' states,
 * run by one whole warp: each lane reads one predecessor, nearest first, and
 * the window moves back 32 tiles until it holds an inclusive prefix. (A
 * window of 128, four states per lane, measured no faster once the
 * look-back has a warp of its own: docs/PERFORMANCE.md.) */
template <class Tr>
GS_DEV typename Tr::scan_t gs_look_back(const gs_tile_state *states, int64_t tile, uint64_t epoch)
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

/* How a scan tile learns the prefix of everything before it. */
enum gs_tile_mode {
    GS_TILE_LOOKBACK,   /* single pass: decoupled look-back over the published tile states */
    GS_TILE_REDUCE,     /* reduce-then-scan, pass 1: only write the tile's total to sums[tile] */
    GS_TILE_PREFIXED    /* reduce-then-scan, pass 3: sums[tile] holds the tile's prefix */
};

/* A scan kernel's shape: BLOCK data threads, VECS vectors per thread, at
 * least MINB blocks resident per multiprocessor. */
template <int BLOCK_, int VECS_, int MINB_> struct gs_scan_shape {
    static constexpr int block = BLOCK_, vecs = VECS_, min_blocks = MINB_;
};

/* The default scan's shape, every (type, op): 256 data threads of 8 vectors
 * (32 KiB of input per tile for 4-byte elements without widening), three
 * blocks per multiprocessor. Of twelve shapes timed on an H200 for six
 * classes of (type, op) at 2^20, 2^24 and 2^30 elements, the best in every
 * case but one (within 5% there): docs/PERFORMANCE.md. */
template <class Tr> struct gs_scan_tuning {
    using shape = gs_scan_shape<256, 8, 3>;
};

template <class Tr> struct gs_scan_args {
    const typename Tr::in_t *in;
    typename Tr::out_t *out;
    int64_t n;
    /* The tiles cover virtual indices [0, n + shift): element i sits at
     * virtual index i + shift, which puts vector boundaries of `in` on
     * vector boundaries of the tiles. */
    int shift;
    bool vector_out;   /* out is 16-byte aligned at the same vector boundaries */
    bool exclusive;
    typename Tr::scan_t carry_in;   /* the carry before element 0, unless carry_src is set */
    const gs_acc *carry_src;        /* device: the carry before element 0, read by tile 0 */
    gs_acc *carry_dst;              /* device: receives the carry after the last element */
    uint32_t *overflow;             /* device: set to 1 when a prefix sum overflows */
    gs_tile_state *states;          /* GS_TILE_LOOKBACK */
    uint64_t epoch;
    typename Tr::scan_t *sums;      /* GS_TILE_REDUCE, GS_TILE_PREFIXED */
};

/* A barrier of the whole block that may sit at different places in the
 * code of different warps (the warp-specialised scan): the non-aligned form. */
GS_DEV void gs_block_barrier() { asm volatile("barrier.sync 0;" ::: "memory"); }

/* The combining warp of a scan tile: reads the data warps' totals from
 * warp_vals, finds the tile's prefix as MODE says (publishing the tile's
 * state for look-back), and leaves each data warp's starting value in
 * warp_vals. Run by one whole warp. */
template <class Tr, class Shape, int MODE>
GS_DEV void gs_tile_combine(const gs_scan_args<Tr> &a, typename Tr::work_t *warp_vals)
{
    using W = typename Tr::work_t;
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    constexpr int WARPS = Shape::block / 32;
    const int lane = threadIdx.x % 32;
    const int64_t tile = blockIdx.x;
    const W identity = static_cast<W>(gs_scan_identity<Tr>());

    const W incl = gs_warp_scan<OP>(lane < WARPS ? warp_vals[lane] : identity);
    const S total = static_cast<S>(gs_shfl_idx(incl, WARPS - 1));
    if constexpr (MODE == GS_TILE_REDUCE) {
        if (lane == 0) a.sums[tile] = total;
    } else {
        S prefix;
        if constexpr (MODE == GS_TILE_PREFIXED) {
            prefix = a.sums[tile];
        } else {
            const uint64_t status = a.epoch << 2;
            if (tile == 0) {
                prefix = a.carry_src ? gs_from_acc<S>(*a.carry_src) : a.carry_in;
            } else {
                if (lane == 0) gs_tile_publish(&a.states[tile], status | GS_TILE_AGGREGATE, gs_bits(total));
                prefix = gs_look_back<Tr>(a.states, tile, a.epoch);
            }
            const S inclusive = gs_combine<OP>(prefix, total);
            if (lane == 0) {
                gs_tile_publish(&a.states[tile], status | GS_TILE_INCLUSIVE, gs_bits(inclusive));
                if (tile == gridDim.x - 1) *a.carry_dst = gs_to_acc(inclusive);
            }
        }
        /* data warp w starts after the tile's prefix and warps 0..w-1 */
        const W lower = gs_shfl_up(incl, 1);
        const W base = static_cast<W>(prefix);   /* min/max: exact, the values fit */
        if (lane < WARPS) warp_vals[lane] = lane == 0 ? base : gs_combine<OP>(base, lower);
    }
}

/*
 * One block scans one tile of BLOCK * VECS vectors of Tr::scan_vec elements;
 * blocks start in tile order, so a tile's predecessors are always running or
 * done. Data warp w owns a contiguous segment of VECS * 32 vectors; lane l
 * holds vector j * 32 + l of it for each j, so every load and store is a
 * coalesced 8- or 16-byte access straight from registers. Min and max work
 * in the element type, everything else in scan_t.
 *
 * With look-back the block has one more warp, which holds no data: it
 * combines the warps' totals, publishes the tile's state and looks back, so
 * the registers of its look-back never add to those holding the tile (its
 * branch never rejoins theirs). The tile's total goes out before any warp
 * scans its vectors, so the prefix chain between tiles waits for no more
 * work than it must. Whole tiles of aligned data use vector accesses; the
 * first and last tiles, and misaligned output, go element by element with
 * the op's identity in place of missing elements.
 */
template <class Tr, class Shape, int MODE>
__global__ void __launch_bounds__(Shape::block + (MODE == GS_TILE_LOOKBACK) * 32, Shape::min_blocks)
gs_scan_kernel(const gs_scan_args<Tr> a)
{
    using T = typename Tr::in_t;
    using W = typename Tr::work_t;
    using O = typename Tr::out_t;
    using LoadRaw = typename gs_raw_of<Tr::scan_vec * sizeof(T)>::type;
    using StoreRaw = typename gs_raw_of<Tr::scan_vec * sizeof(O)>::type;
    constexpr gs_op OP = Tr::op;
    constexpr int VEC = Tr::scan_vec, VECS = Shape::vecs;
    constexpr int WARPS = Shape::block / 32;
    constexpr int64_t WARP_ITEMS = VECS * 32 * VEC;
    constexpr int64_t TILE = WARPS * WARP_ITEMS;
    static_assert(WARPS <= 32, "one warp combines the warp totals");
    __shared__ W warp_vals[WARPS];   /* the warps' totals, then their starting values */

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (MODE == GS_TILE_LOOKBACK && warp == WARPS) {
        gs_block_barrier();   /* the totals are in */
        gs_tile_combine<Tr, Shape, MODE>(a, warp_vals);
        gs_block_barrier();   /* the starting values are out */
        return;
    }

    const int64_t tile = blockIdx.x;
    const W identity = static_cast<W>(gs_scan_identity<Tr>());
    /* element index of this lane's first element of vector j = 0 */
    const int64_t first = tile * TILE + warp * WARP_ITEMS + lane * VEC - a.shift;
    const bool whole = a.vector_out && tile * TILE >= a.shift && (tile + 1) * TILE <= a.n + a.shift;

    T x[VECS][VEC];
    if (whole) {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const LoadRaw raw = *reinterpret_cast<const LoadRaw *>(a.in + first + j * 32 * VEC);
            memcpy(x[j], &raw, sizeof raw);
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

    /* The vectors' totals, and the warp's. Min and max of 8-byte elements
     * form the vectors' totals again after the wait for the tile's prefix
     * (a few compares), which frees their registers during it and halves
     * those kernels' spills; everything else keeps them. */
    constexpr bool KEEP_TOTALS = !(Tr::is_min_max && sizeof(T) == 8);
    W v[VECS];
    W t = identity;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        v[j] = static_cast<W>(x[j][0]);
#pragma unroll
        for (int k = 1; k < VEC; k++) v[j] = gs_combine<OP>(v[j], static_cast<W>(x[j][k]));
        t = gs_combine<OP>(t, v[j]);
    }
    if constexpr (!KEEP_TOTALS) {   /* else the compiler keeps v[] anyway */
#pragma unroll
        for (int j = 0; j < VECS; j++)
#pragma unroll
            for (int k = 0; k < VEC; k++) x[j][k] = gs_opaque(x[j][k]);
    }
    t = gs_warp_reduce<OP>(t);
    if (lane == 0) warp_vals[warp] = t;
    gs_block_barrier();
    if constexpr (MODE != GS_TILE_LOOKBACK) {
        if (warp == 0) gs_tile_combine<Tr, Shape, MODE>(a, warp_vals);
        if constexpr (MODE == GS_TILE_REDUCE) return;
    }
    gs_block_barrier();

    if constexpr (!KEEP_TOTALS) {
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            v[j] = static_cast<W>(x[j][0]);
#pragma unroll
            for (int k = 1; k < VEC; k++) v[j] = gs_combine<OP>(v[j], static_cast<W>(x[j][k]));
        }
    }

    /* Scan the lanes' vector totals across the warp, all j at once. */
#pragma unroll
    for (int d = 1; d < 32; d *= 2)
#pragma unroll
        for (int j = 0; j < VECS; j++) {
            const W up = gs_shfl_up(v[j], d);
            if (lane >= d) v[j] = gs_combine<OP>(up, v[j]);
        }
    /* Each lane scans its own vectors serially from their prefixes; each
     * output is checked for overflow where it is formed. */
    W segment = warp_vals[warp];
    bool overflow = false;
#pragma unroll
    for (int j = 0; j < VECS; j++) {
        /* Where W is wider than T, converting each vector again here is
         * cheaper than keeping every element converted (the compiler would,
         * at twice the registers): hide the earlier conversions from it. */
        if constexpr (!std::is_same_v<T, W>) {
#pragma unroll
            for (int k = 0; k < VEC; k++) x[j][k] = gs_opaque(x[j][k]);
        }
        const W lower_lanes = gs_shfl_up(v[j], 1);
        W running = lane == 0 ? segment : gs_combine<OP>(segment, lower_lanes);
        segment = gs_combine<OP>(segment, gs_shfl_idx(v[j], 31));
        O y[VEC];
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const W e = static_cast<W>(x[j][k]);
            const W next = gs_combine<OP>(running, e);
            if constexpr (Tr::is_int_sum) {
                overflow |= Tr::is_signed
                                ? gs_add_i64_overflows((int64_t)running, (int64_t)e, (int64_t)next)
                                : gs_add_u64_overflows(running, next);
            }
            y[k] = static_cast<O>(a.exclusive ? running : next);
            running = next;
        }
        O *dst = a.out + first + j * 32 * VEC;
        if (whole) {
            StoreRaw raw;
            memcpy(&raw, y, sizeof raw);
            *reinterpret_cast<StoreRaw *>(dst) = raw;
        } else {
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                const int64_t i = first + j * 32 * VEC + k;
                if (i >= 0 && i < a.n) dst[k] = y[k];
            }
        }
    }
    if constexpr (Tr::is_int_sum) {
        if (__any_sync(GS_FULL_MASK, overflow) && lane == 0) *a.overflow = 1;
    }
}

/* Reduce-then-scan, pass 2: one block turns sums[0..count) (the tiles'
 * totals) into their exclusive scan from the carry in place, and leaves the
 * carry after the last in *carry_dst. ITEMS consecutive sums per thread. */
template <class Tr, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) gs_scan_sums_kernel(const gs_scan_args<Tr> a, int64_t count)
{
    using S = typename Tr::scan_t;
    constexpr gs_op OP = Tr::op;
    constexpr int WARPS = BLOCK / 32;
    __shared__ S warp_totals[WARPS];
    __shared__ S chunk_prefix;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const S identity = gs_scan_identity<Tr>();
    if (threadIdx.x == 0) chunk_prefix = a.carry_src ? gs_from_acc<S>(*a.carry_src) : a.carry_in;

    for (int64_t base = 0; base < count; base += (int64_t)BLOCK * ITEMS) {
        const int64_t mine = base + (int64_t)threadIdx.x * ITEMS;
        S x[ITEMS];
        S t = identity;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            x[k] = mine + k < count ? a.sums[mine + k] : identity;
            t = gs_combine<OP>(t, x[k]);
        }
        const S incl = gs_warp_scan<OP>(t);
        if (lane == 31) warp_totals[warp] = incl;
        __syncthreads();   /* also orders chunk_prefix */
        S before = chunk_prefix;
        for (int w = 0; w < warp; w++) before = gs_combine<OP>(before, warp_totals[w]);
        S chunk_total = before;
        for (int w = warp; w < WARPS; w++) chunk_total = gs_combine<OP>(chunk_total, warp_totals[w]);
        const S lower = gs_shfl_up(incl, 1);
        S running = lane == 0 ? before : gs_combine<OP>(before, lower);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            if (mine + k < count) a.sums[mine + k] = running;
            running = gs_combine<OP>(running, x[k]);
        }
        __syncthreads();   /* everyone read chunk_prefix and warp_totals */
        if (threadIdx.x == 0) chunk_prefix = chunk_total;
    }
    __syncthreads();
    if (threadIdx.x == 0) *a.carry_dst = gs_to_acc(chunk_prefix);
}

/* ---- launches shared by the default entry points and the ladder ------------------ */

/* Queue the default reduction of in[0..n), n > 0, on the compute stream:
 * *result = the partial, or combine(*result, partial) with `accumulate`.
 * In is the element type, or reduce_t for the partials of a ladder kernel. */
template <class Tr, class In, int BLOCK, int UNROLL>
gs_status gs_reduce_launch(gs_cuda *g, const In *in, int64_t n, gs_acc *result, bool accumulate)
{
    using R = typename Tr::reduce_t;
    constexpr int VEC = gs_vec<In>::count;
    const auto kernel = gs_reduce_kernel<Tr, In, BLOCK, UNROLL>;

    /* elements before the first 16-byte boundary */
    const int64_t misaligned = (int64_t)((uintptr_t)in % 16 / sizeof(In));
    const int64_t head = misaligned == 0 ? 0 : (VEC - misaligned < n ? VEC - misaligned : n);

    int blocks_per_sm;
    GS_CUDA_PASS(gs_cuda_occupancy(g, (const void *)kernel, BLOCK, &blocks_per_sm));
    /* no more blocks than there are vectors to share out */
    const int64_t per_block = (int64_t)BLOCK * UNROLL * VEC;
    const int64_t wanted = (n + per_block - 1) / per_block;
    const int64_t resident = (int64_t)g->sm_count * blocks_per_sm;
    const unsigned blocks = (unsigned)(wanted < resident ? wanted : resident);

    GS_CUDA_PASS(gs_cuda_reserve(g, &g->d_partials, &g->partials_bytes, blocks * sizeof(R),
                                 "reduction partials"));
    kernel<<<blocks, BLOCK, 0, g->stream>>>(in, n, head, static_cast<R *>(g->d_partials),
                                            g->d_scalars, result, accumulate);
    GS_CUDA_CHECK(g, cudaGetLastError(), "launching the %s %s reduction", gs_type_name(Tr::type),
                  gs_op_name(Tr::op));
    return GS_OK;
}

/* Where a scan finds its carry and leaves its results (device memory). */
struct gs_scan_io {
    gs_acc carry_in;          /* the carry by value, used when carry_src is NULL */
    const gs_acc *carry_src;
    gs_acc *carry_dst;
    uint32_t *overflow;
};

/* The kernel arguments of a scan of d_in[0..n), n > 0, in tiles of Shape,
 * and the number of tiles; GS_ERR_ARG past the grid's limit. */
template <class Tr, class Shape>
gs_status gs_scan_setup(gs_cuda *g, gs_scan_kind kind, const void *d_in, void *d_out, int64_t n,
                        const gs_scan_io &io, gs_scan_args<Tr> *args, unsigned *tiles)
{
    using T = typename Tr::in_t;
    using O = typename Tr::out_t;
    constexpr int VEC = Tr::scan_vec;
    constexpr int64_t TILE = (int64_t)Shape::block * Shape::vecs * VEC;
    memset(args, 0, sizeof *args);
    args->in = static_cast<const T *>(d_in);
    args->out = static_cast<O *>(d_out);
    args->n = n;
    args->shift = (int)((uintptr_t)d_in % (VEC * sizeof(T)) / sizeof(T));
    args->vector_out = ((uintptr_t)d_out - args->shift * sizeof(O)) % (VEC * sizeof(O)) == 0;
    args->exclusive = kind == GS_EXCLUSIVE;
    args->carry_in = gs_from_acc<typename Tr::scan_t>(io.carry_in);
    args->carry_src = io.carry_src;
    args->carry_dst = io.carry_dst;
    args->overflow = io.overflow;
    const int64_t count = (n + args->shift + TILE - 1) / TILE;
    if (count > INT32_MAX)
        return gs_cuda_fail_status(g, GS_ERR_ARG, "a scan of %lld elements needs too many tiles",
                                   (long long)n);
    *tiles = (unsigned)count;
    return GS_OK;
}

/* GS_ERR_ARG, with a message, unless `algo` is a variant that serves
 * reductions (scan 0) or scans (scan 1) (gs_cuda_ladder.cu). */
gs_status gs_cuda_check_algo(gs_cuda *g, gs_algo algo, int scan);

/* The default scan of d_in[0..n), queued on the compute stream with the
 * carry and overflow flag of `io` (gs_cuda_scan.cu). */
gs_status gs_scan_default(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io);

/* The variant of g->reduce_algo or g->scan_algo in place of the default
 * (gs_cuda_variant.cu), with the default's contract: a reduction replaces
 * *result with its partial, or combines it in (accumulate); a scan follows
 * `io`. Scratch comes from the handle. */
gs_status gs_variant_reduce(gs_cuda *g, gs_type type, gs_op op, const void *d_in, int64_t n,
                            gs_acc *result, bool accumulate);
gs_status gs_variant_scan(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                          void *d_out, int64_t n, const gs_scan_io &io);

/* CUB's scan from the carry at *d_carry_in (gs_cuda_ladder_cub.cu), as the
 * cub variant runs it for gs_scan: the carry after the last element goes to
 * *d_carry_out (not d_carry_in: both are read and written by one kernel),
 * overflows of 64-bit sums set *d_overflow. With work == NULL, *bytes = the
 * scratch it needs. At most 2^31 - 1 elements. */
gs_status gs_cub_scan_carried(gs_cuda *g, gs_type type, gs_op op, gs_scan_kind kind, const void *d_in,
                              void *d_out, int64_t n, const gs_acc *d_carry_in, gs_acc *d_carry_out,
                              uint32_t *d_overflow, void *work, size_t *bytes);

/* The ladder's cub variant (gs_cuda_ladder_cub.cu): with work == NULL,
 * *bytes = the scratch a reduction (scan 0, into the reduce_t at d_out) or
 * a scan from the identity needs; else the call, queued on the compute
 * stream. At most 2^31 - 1 elements. */
gs_status gs_cub_run(gs_cuda *g, int scan, gs_type type, gs_op op, gs_scan_kind kind,
                     const void *d_in, void *d_out, int64_t n, void *work, size_t *bytes);

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
