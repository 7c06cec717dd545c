/*
 * gs_cuda_exact_reduce_agent.cuh - the exact reduction kernel (--exact,
 * gs_exact.h):
 *
 *   gs_exact_sum_kernel   each thread keeps a floating-point expansion
 *                         (error-free TwoSum: f32 one term, f64 two), and
 *                         only what it cannot hold exactly goes to the
 *                         thread's own fixed-point state in shared memory;
 *                         the blocks' sums go into the caller's gs_exact
 *                         (global atomics, the last block normalizes).
 *
 * Launched by gs_cuda_exact.cu.
 */
#ifndef GS_CUDA_EXACT_REDUCE_AGENT_CUH
#define GS_CUDA_EXACT_REDUCE_AGENT_CUH

#include "gs_cuda_exact_agent.cuh"

/* The reductions' sinks: each thread's own state in shared memory, added
 * to without atomics, laid out word-major (a thread's word k at
 * own[k * BLOCK]) so that a warp's lanes touch consecutive addresses
 * whichever words they add to: no bank conflicts. */

/* f32: gs_exact's digits GS_EXACT_F32_FIRST.. as int64. Every value on
 * f32's grid of 2^-149 and below 2^160 lies there (the elements and a
 * thread's sums of them); the top digit only takes carries. An element adds
 * m * 2^bit, below 2^55, to one digit, unchecked: the summing loops settle
 * the digits (each below 2^32, the carries moved up) before
 * SETTLE_ADDS adds could pass (gs_exact_thread_sum), so every digit stays
 * below 2^32 + 127 * 2^55 < 2^62 in magnitude. */
#define GS_EXACT_F32_FIRST ((1 + 938) / 32)   /* 29: f32's least subnormal (gs_exact_decode_f32) */
#define GS_EXACT_F32_DIGITS 11

template <int BLOCK> struct gs_exact_f32_sink {
    static constexpr int SETTLE_ADDS = 127, SINK_AHEAD = 31;
    long long *own;   /* this thread's digit GS_EXACT_F32_FIRST */
    unsigned *special;

    /* m < 2^24 at bit (gs_exact_decode_f32's position); the sign is taken
     * in 32 bits, then the value widened and shifted */
    GS_DEV void add(uint32_t m, int bit, bool negative) const
    {
        const int32_t sm = negative ? -(int32_t)m : (int32_t)m;
        own[((bit >> 5) - GS_EXACT_F32_FIRST) * BLOCK] += (long long)((unsigned long long)(long long)sm << (bit & 31));
    }
    /* every digit but the top one below 2^32, the carries moved up */
    GS_DEV void settle() const
    {
        long long carry = 0;
#pragma unroll
        for (int k = 0; k < GS_EXACT_F32_DIGITS - 1; k++) {
            const long long d = own[k * BLOCK] + carry;
            carry = d >> 32;   /* arithmetic: the floor of d / 2^32 */
            own[k * BLOCK] = d & 0xffffffff;
        }
        own[(GS_EXACT_F32_DIGITS - 1) * BLOCK] += carry;
    }
    /* gs_exact_decode_f32's arithmetic, without its branches and 16-bit
     * steps (what nvcc makes of it here, on every full-range element) */
    GS_DEV void put_element(float x) const
    {
        const uint32_t b = __float_as_uint(x);
        const int biased = (int)((b >> 23) & 0xff);
        if (biased == 0xff) atomicOr(special, (b & 0x7fffff) ? GS_EXACT_NAN : b >> 31 ? GS_EXACT_NEG_INF : GS_EXACT_POS_INF);
        else add((b & 0x7fffff) | (biased ? 0x800000u : 0u), (biased ? biased : 1) + 938, b >> 31);
    }
    /* a thread's hi at the end: on the grid, 53 bits, added 24 at a time */
    GS_DEV void put(double x) const
    {
        uint64_t m;
        int bit, negative;
        if (!gs_exact_term(x, special, m, bit, negative)) return;
        const int zeros = __ffsll((long long)m) - 1;   /* on the grid: bit + zeros >= 939 */
        m >>= zeros;
        bit += zeros;
        for (; m; m >>= 24, bit += 24) add((uint32_t)m & 0xffffff, bit, negative);
    }
};

/* f64: a two's complement number of GS_EXACT_F64_WORDS 32-bit words, word
 * w weighing 2^(32 w) above 2^GS_EXACT_LSB_EXP, as gs_exact's digits (2176
 * bits: past any thread's sum). A term adds its 53 bits, shifted, to three
 * words with their carries; the words above gain the carry out, or -1 for a
 * negative term, which rarely moves past the first of them. */
#define GS_EXACT_F64_WORDS 68

template <int BLOCK> struct gs_exact_f64_sink {
    static constexpr int SETTLE_ADDS = 0, SINK_AHEAD = 31;
    uint32_t *own;   /* this thread's word 0 */
    unsigned *special;

    /* m < 2^53 at bit (gs_exact_decode_f64's position); m == 0 adds zero */
    GS_DEV void add(uint64_t m, int bit, bool negative) const
    {
        const int s = bit & 31;
        uint32_t w0 = (uint32_t)(m << s), w1 = (uint32_t)(m >> (32 - s)), w2 = s ? (uint32_t)(m >> (64 - s)) : 0u;
        if (negative) {   /* -v = ~v + 1 over the three words (the + 1 below), all ones above */
            w0 = ~w0;
            w1 = ~w1;
            w2 = ~w2;
        }
        uint32_t *word = own + (bit >> 5) * BLOCK;
        uint64_t t = (uint64_t)word[0] + w0 + (negative ? 1u : 0u);
        word[0] = (uint32_t)t;
        t = (uint64_t)word[BLOCK] + w1 + (t >> 32);
        word[BLOCK] = (uint32_t)t;
        t = (uint64_t)word[2 * BLOCK] + w2 + (t >> 32);
        word[2 * BLOCK] = (uint32_t)t;
        const uint32_t above = (negative ? 0xffffffffu : 0u) + (uint32_t)(t >> 32);   /* +1, -1 or 0 */
        if (above)
            for (uint32_t *w = word + 3 * BLOCK; w < own + GS_EXACT_F64_WORDS * BLOCK; w += BLOCK) {
                const uint32_t before = *w;
                *w = before + above;
                if (before != (above == 1 ? 0xffffffffu : 0u)) break;   /* no carry (borrow) on */
            }
    }
    /* gs_exact_decode_f64's arithmetic without its branches: a zero (of
     * either sign) adds zero; a flush's terms are put the same way */
    GS_DEV void put(double x) const { put_element(x); }
    GS_DEV void put_element(double x) const
    {
        const uint64_t b = (uint64_t)__double_as_longlong(x);
        const int biased = (int)((b >> 52) & 0x7ff);
        const uint64_t frac = b & (((uint64_t)1 << 52) - 1);
        if (biased == 0x7ff) atomicOr(special, frac ? GS_EXACT_NAN : b >> 63 ? GS_EXACT_NEG_INF : GS_EXACT_POS_INF);
        else add(frac | (biased ? (uint64_t)1 << 52 : 0u), (biased ? biased : 1) + 13, b >> 63);
    }
};

/* ---- the reduction ------------------------------------------------------------- */

/* The reduction's block and blocks per multiprocessor. f64's threads keep
 * 272 bytes each in shared memory, so its blocks are half as large. f32:
 * four blocks per SM, 64 registers (ptxas spills 308 bytes; three blocks,
 * without spills, measured slower). f64: five, 96 registers (128 bytes
 * spilled, in the rare paths): against four (112 registers, no spills) the
 * H200's narrow-range sums 0.91 -> 0.93 of the plain sum and full-range
 * ones faster on both cards, the H100's narrow-range 0.94 -> 0.92. Six
 * (80 registers) left L1 too small beside their 210 KB of shared memory
 * for the loads in flight: 0.82 (docs/PERFORMANCE.md). */
template <class T> GS_HD_CONST int gs_exact_sum_block()
{
    return sizeof(T) == 4 ? 256 : 128;
}
template <class T> GS_HD_CONST int gs_exact_sum_min_blocks()
{
    return sizeof(T) == 4 ? 4 : 5;
}

/* The reduction's shared memory: its threads' own states (WORDS words
 * each, the first being gs_exact's digit FIRST), the block's special values
 * and its sum, which `total` counts up from zero by atomics and normalizes.
 * Every thread calls clear (a barrier follows) and total (b->sum is ready
 * for all after it). */
template <int BLOCK, class Word, int WORDS, int FIRST> struct gs_exact_sum_shared {
    Word own[WORDS][BLOCK];
    gs_exact sum;
    unsigned special;

    GS_DEV void clear()
    {
        for (int k = 0; k < WORDS; k++) own[k][threadIdx.x] = 0;
        for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += BLOCK) sum.digit[d] = 0;
        if (threadIdx.x == 0) special = 0;
        __syncthreads();
    }
    /* Each thread's words as digits: f32's carry-save digits normalized
     * first (one could be near 2^62), f64's two's complement words as they
     * are (the top one signed); their sums over the block fit. */
    GS_DEV void total()
    {
        constexpr bool CARRY_SAVE = sizeof(Word) == 8;
        int64_t carry = 0;
#pragma unroll 1
        for (int k = 0; k < WORDS; k++) {
            int64_t d;
            if (CARRY_SAVE) {
                d = (int64_t)own[k][threadIdx.x] + carry;
                if (k < WORDS - 1) {
                    carry = d >> 32;
                    d &= 0xffffffff;
                }
            } else {
                d = k < WORDS - 1 ? (int64_t)(uint32_t)own[k][threadIdx.x] : (int64_t)(int32_t)own[k][threadIdx.x];
            }
            const unsigned long long w = gs_warp_reduce<GS_SUM>((unsigned long long)d);
            if (threadIdx.x % 32 == 0 && w)
                atomicAdd(reinterpret_cast<unsigned long long *>(&sum.digit[FIRST + k]), w);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            sum.special = special;
            gs_exact_normalize(&sum);
        }
        __syncthreads();
    }
};

template <class T> struct gs_exact_sum_types;
template <> struct gs_exact_sum_types<float> {
    static constexpr int BLOCK = gs_exact_sum_block<float>();
    using shared = gs_exact_sum_shared<BLOCK, long long, GS_EXACT_F32_DIGITS, GS_EXACT_F32_FIRST>;
    using sink = gs_exact_f32_sink<BLOCK>;
};
template <> struct gs_exact_sum_types<double> {
    static constexpr int BLOCK = gs_exact_sum_block<double>();
    using shared = gs_exact_sum_shared<BLOCK, uint32_t, GS_EXACT_F64_WORDS, 0>;
    using sink = gs_exact_f64_sink<BLOCK>;
};

/* Block b sums in[b * per_block, min(n, (b + 1) * per_block)) and adds the
 * sum to *acc; the last block to finish (the threadfence pattern of
 * gs_reduce_kernel) normalizes *acc. per_block is a multiple of the vector
 * length, so blocks stay aligned. */
template <class T>
__global__ void __launch_bounds__(gs_exact_sum_block<T>(), gs_exact_sum_min_blocks<T>())
gs_exact_sum_kernel(const T *in, int64_t n, int64_t per_block, gs_exact *acc, gs_cuda_scalars *scalars)
{
    constexpr int BLOCK = gs_exact_sum_block<T>();
    __shared__ typename gs_exact_sum_types<T>::shared b;
    __shared__ bool is_last_block;
    b.clear();
    const int64_t begin = (int64_t)blockIdx.x * per_block;
    const int64_t end = begin + per_block < n ? begin + per_block : n;
    const typename gs_exact_sum_types<T>::sink sink = {&b.own[0][threadIdx.x], &b.special};
    gs_expansion<sizeof(T) == 4, sizeof(T) == 8> ex;   /* f32: hi only */
    gs_exact_thread_sum<BLOCK>(in, begin, end, ex, sink);
    ex.flush(sink);
    b.total();

    /* normalized digits are below 2^32, *acc's below 2^62 + 2^32 (pending
     * at most GS_EXACT_PENDING_MAX): a grid's worth more cannot overflow */
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += BLOCK)
        if (b.sum.digit[d])
            atomicAdd(reinterpret_cast<unsigned long long *>(&acc->digit[d]), (unsigned long long)b.sum.digit[d]);
    if (threadIdx.x == 0) {
        if (b.sum.special) atomicOr(&acc->special, b.sum.special);
        __threadfence();   /* the digits are visible before the count says so */
        is_last_block = atomicAdd(&scalars->blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last_block) return;

    __threadfence();
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += BLOCK)
        b.sum.digit[d] = (int64_t)__ldcg(reinterpret_cast<const unsigned long long *>(&acc->digit[d]));
    __syncthreads();
    if (threadIdx.x == 0) gs_exact_normalize(&b.sum);
    __syncthreads();
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += BLOCK) acc->digit[d] = b.sum.digit[d];
    if (threadIdx.x == 0) {
        acc->pending = 0;
        scalars->blocks_done = 0;   /* ready for the next launch */
    }
}

#endif /* GS_CUDA_EXACT_REDUCE_AGENT_CUH */
