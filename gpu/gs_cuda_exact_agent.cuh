/*
 * gs_cuda_exact_agent.cuh - what the kernels of the exact float sums
 * (--exact, gs_exact.h: every result is the exact sum rounded once) share:
 * error-free arithmetic (TwoSum, double-double), a thread's running sum as
 * a floating-point expansion, the sinks that take what an expansion cannot
 * hold, and a block's exact sum of a range into warps' digits.
 *
 *   gs_cuda_exact_reduce_agent.cuh  the reduction kernel
 *   gs_cuda_exact_scan_agent.cuh    the scan kernel, on
 *     gs_cuda_exact_tile_state.cuh  the states its tiles publish, and
 *     gs_cuda_exact_fast.cuh        its fast path's arithmetic
 *   gs_cuda_exact.cu                their launches
 */
#ifndef GS_CUDA_EXACT_AGENT_CUH
#define GS_CUDA_EXACT_AGENT_CUH

#include <stdint.h>

#include "gs_cuda_handle.cuh"
#include "gs_cuda_traits.cuh"
#include "gs_cuda_warp.cuh"
#include "gs_exact.h"

#define GS_EXACT_BLOCK 256
#define GS_EXACT_WARPS (GS_EXACT_BLOCK / 32)
/* 16-byte loads in flight per thread in the summing loops */
#define GS_EXACT_UNROLL 8

/* ---- error-free arithmetic ----------------------------------------------------- */

/* s + e == a + b exactly, s = RN(a + b) (Knuth's TwoSum: no ordering of a
 * and b needed). The _rn intrinsics keep the compiler from reassociating. */
GS_DEV double gs_sum_error(double a, double b, double s)   /* s = RN(a + b) */
{
    const double bb = __dadd_rn(s, -a);
    return __dadd_rn(__dadd_rn(a, -__dadd_rn(s, -bb)), __dadd_rn(b, -bb));
}
GS_DEV void gs_two_sum(double a, double b, double &s, double &e)
{
    s = __dadd_rn(a, b);
    e = gs_sum_error(a, b, s);
}

/* Whether s = RN(a + b) is a + b exactly, without its error: by Dekker's
 * lemma s - a is exact where |a| >= |b| (and s - b where |b| >= |a|), so
 * that difference is the other operand exactly when s rounded nothing off
 * and differs from it when s did; when s is exact, both are. Three
 * additions against TwoSum's six; false for a NaN or infinite s. */
GS_DEV bool gs_sum_is_exact(double a, double b, double s)
{
    return (__dadd_rn(s, -a) == b) & (__dadd_rn(s, -b) == a);
}

/* A double-double: the f64 scan's running sums. hi + lo is the value; lo
 * collects the exact errors of the hi additions (its own additions round). */
struct gs_dd {
    double hi, lo;
};
GS_DEV gs_dd gs_dd_add(gs_dd a, gs_dd b)
{
    gs_dd r;
    double e;
    gs_two_sum(a.hi, b.hi, r.hi, e);
    r.lo = __dadd_rn(__dadd_rn(a.lo, b.lo), e);
    return r;
}
GS_DEV gs_dd gs_dd_add(gs_dd a, double x)
{
    gs_dd r;
    double e;
    gs_two_sum(a.hi, x, r.hi, e);
    r.lo = __dadd_rn(a.lo, e);
    return r;
}
GS_DEV double gs_dd_add(double a, double b) { return __dadd_rn(a, b); }
GS_DEV double gs_acc_abs(gs_dd a) { return __dadd_ru(fabs(a.hi), fabs(a.lo)); }
template <class A> GS_DEV A gs_acc_zero()
{
    A a;
    memset(&a, 0, sizeof a);
    return a;
}
GS_DEV gs_dd gs_shfl_up(gs_dd v, int d) { return {gs_shfl_up(v.hi, d), gs_shfl_up(v.lo, d)}; }
GS_DEV gs_dd gs_shfl_idx(gs_dd v, int l) { return {gs_shfl_idx(v.hi, l), gs_shfl_idx(v.lo, l)}; }
GS_DEV gs_dd gs_shfl_xor(gs_dd v, int m) { return {gs_shfl_xor(v.hi, m), gs_shfl_xor(v.lo, m)}; }

/* ---- where a thread's expansion puts the terms it cannot hold ------------------ */

/* Each kind of sink adds a term exactly (put: any double; put_element: an
 * element, which decodes more cheaply) or records its special bit.
 * SETTLE_ADDS: 0, or (a sink whose adds are unchecked) the most adds it
 * takes between two calls of its settle(). SINK_AHEAD: 0, or how many
 * iterations of elements gs_exact_thread_sum sends to it unasked once the
 * expansion failed to take most of one (a sink much cheaper than asking).
 * The reduction sends almost every element of full-range data there, so
 * its sinks (gs_cuda_exact_reduce_agent.cuh) are each thread's own state,
 * without atomics (64-bit shared-memory atomics serialize the lanes that
 * meet on a digit: two to four times slower, docs/PERFORMANCE.md). The
 * scan's rare paths see few terms and keep the warp's digits of a
 * gs_exact_block_state. */

/* Adds sign * m * 2^bit (m < 2^64) to digits laid out as gs_exact's,
 * three 32-bit pieces, by atomics. */
GS_DEV void gs_exact_digits_add(unsigned long long *digit, uint64_t m, int bit, bool negative)
{
    const int i = bit >> 5, s = bit & 31;
    const uint64_t rest = m >> (32 - s);
    const uint64_t piece[3] = {(m << s) & 0xffffffffu, rest & 0xffffffffu, rest >> 32};
#pragma unroll
    for (int k = 0; k < 3; k++)
        if (piece[k]) atomicAdd(&digit[i + k], negative ? (unsigned long long)(-(int64_t)piece[k]) : piece[k]);
}

/* x's significand m, the position of its bit 0 and its sign
 * (gs_exact_decode_f64); false when there is nothing to add: x is zero, or
 * not finite (its special bit is then recorded). */
GS_DEV bool gs_exact_term(double x, unsigned *special, uint64_t &m, int &bit, int &negative)
{
    const uint32_t sp = gs_exact_decode_f64(x, &m, &bit, &negative);
    if (sp) atomicOr(special, sp);
    return !sp && m != 0;
}

/* Each warp's carry-save digits (gs_exact's layout, as unsigned words so
 * that atomicAdd wraps as two's complement), the block's special values,
 * and the block's normalized sum. */
struct gs_exact_block_state {
    unsigned long long warp_digit[GS_EXACT_WARPS][GS_EXACT_DIGITS];
    gs_exact sum;
    unsigned special;
};

/* The scan's sink: the warp's digits of a gs_exact_block_state. Each add
 * moves a digit by less than 2^32. */
struct gs_exact_warp_sink {
    static constexpr int SETTLE_ADDS = 0, SINK_AHEAD = 0;
    unsigned long long *digit;
    unsigned *special;

    GS_DEV void put(double x) const
    {
        uint64_t m;
        int bit, negative;
        if (gs_exact_term(x, special, m, bit, negative)) gs_exact_digits_add(digit, m, bit, negative);
    }
    GS_DEV void put_element(double x) const { put(x); }
};

/* One thread's exact running sum: hi + lo + whatever it put in its sink.
 * lo keeps hi's errors, and only what lo cannot hold exactly (e2, which
 * is computed only then: gs_sum_is_exact asks whether there is any) goes
 * to the sink; x itself goes when something was not finite (x, or hi + x
 * overflowed). For f32 data (exact in fp64), e is mostly zero, and the
 * element itself goes to the sink instead of e2. LO false (the f32
 * reduction) leaves lo out: such an element goes to the sink as soon as
 * hi cannot take it, which full-range data made cheaper than a second
 * TwoSum that mostly fails (docs/PERFORMANCE.md). The rare paths are
 * inlined: as a call (which saves the caller's live registers to local
 * memory) they made full-range data 4x slower. */
template <bool F32, bool LO = true> struct gs_expansion {
    double hi = 0.0, lo = 0.0;

    /* false when something went to the sink; to_sink sends x there
     * without asking hi and lo. One place puts (x, or f64's e2): each
     * place is inlined for every element of the summing loops, whose
     * size the instruction cache felt (docs/PERFORMANCE.md). */
    template <class T, class Sink> GS_DEV bool add(T x, const Sink &sink, bool to_sink = false)
    {
        T put = x;
        if (!to_sink) {
            if (F32) {   /* e is mostly zero: asked for, not computed */
                const double s = __dadd_rn(hi, (double)x);
                if (gs_sum_is_exact(hi, (double)x, s)) {
                    hi = s;
                    return true;
                }
            }
            if (LO) {
                double s, e;
                gs_two_sum(hi, (double)x, s, e);
                const double t = __dadd_rn(lo, e);
                if (gs_sum_is_exact(lo, e, t)) {
                    hi = s;
                    lo = t;
                    return true;
                }
                if constexpr (!F32) {
                    const double e2 = gs_sum_error(lo, e, t);
                    if (isfinite(e2)) {   /* hi and lo keep the rest */
                        hi = s;
                        lo = t;
                        put = e2;
                    }
                }
            }
        }
        /* e2; or f32 data that hi (and lo) could not take, x not finite,
         * hi + x overflowed, or to_sink */
        sink.put_element(put);
        return false;
    }
    /* hi and lo into the sink: the thread's sum is then all there */
    template <class Sink> GS_DEV void flush(const Sink &sink) const
    {
        sink.put(hi);
        if (LO) sink.put(lo);
    }
};

/* The barrier of the GS_EXACT_BLOCK threads that share a block's exact
 * work: named barrier 1 with that count, not __syncthreads, so that the
 * scan's helpers say whom they wait for (a block with a look-back warp
 * beside them was tried that way: docs/PERFORMANCE.md). */
GS_DEV void gs_exact_sync() { asm volatile("bar.sync 1, %0;" ::"n"(GS_EXACT_BLOCK) : "memory"); }
/* The same, and true in every thread when p holds in any. */
GS_DEV bool gs_exact_sync_or(bool p)
{
    int any;
    asm volatile("{\n\t.reg .pred p, q;\n\tsetp.ne.s32 p, %1, 0;\n\tbar.red.or.pred q, 1, %2, p;\n\t"
                 "selp.s32 %0, 1, 0, q;\n\t}"
                 : "=r"(any)
                 : "r"((int)p), "n"(GS_EXACT_BLOCK)
                 : "memory");
    return any != 0;
}

/* Zero the block state; every thread calls it, a barrier follows. */
GS_DEV void gs_exact_block_clear(gs_exact_block_state *b)
{
    for (int i = threadIdx.x; i < GS_EXACT_WARPS * GS_EXACT_DIGITS; i += GS_EXACT_BLOCK)
        b->warp_digit[i / GS_EXACT_DIGITS][i % GS_EXACT_DIGITS] = 0;
    if (threadIdx.x == 0) b->special = 0;
    gs_exact_sync();
}

/* Every thread adds its share of in[begin, end) to its expansion: 16-byte
 * vectors (several in flight) when in + begin is 16-byte aligned, else
 * element by element. The block's threads stride through the range
 * together, so loads coalesce. A sink that settles is settled on return
 * (a flush of the expansion adds a few more). */
template <int BLOCK, class T, bool F32, bool LO, class Sink>
GS_DEV void gs_exact_thread_sum(const T *in, int64_t begin, int64_t end, gs_expansion<F32, LO> &ex, const Sink &sink)
{
    constexpr int VEC = gs_vec<T>::count;
    constexpr int SETTLE = Sink::SETTLE_ADDS;
    int unsettled = 0;   /* adds the sink may have taken since it settled */
    const auto room_for = [&](int adds) {
        if constexpr (SETTLE > 0) {
            if (unsettled + adds > SETTLE) {
                sink.settle();
                unsettled = 0;
            }
            unsettled += adds;
        }
    };
    const int tid = threadIdx.x;
    int64_t scalar_from = begin;
    if ((uintptr_t)(in + begin) % 16 == 0) {
        const int64_t nvec = (end - begin) / VEC;
        const gs_vec<T> *v = reinterpret_cast<const gs_vec<T> *>(in + begin);
        int64_t i = tid;
        /* (the reductions' own sinks) a thread whose expansion took fewer
         * than half of an iteration's elements whole sends the next
         * SINK_AHEAD iterations' to the sink without asking it (data of
         * wide exponent range), then asks again: the same exact sum, less
         * arithmetic */
        constexpr int SINK_AHEAD = Sink::SINK_AHEAD;
        int ahead = 0;
        for (; i + (GS_EXACT_UNROLL - 1) * BLOCK < nvec; i += GS_EXACT_UNROLL * BLOCK) {
            room_for(GS_EXACT_UNROLL * VEC);
            gs_vec<T> x[GS_EXACT_UNROLL];
#pragma unroll
            for (int u = 0; u < GS_EXACT_UNROLL; u++) x[u] = gs_load_vec_nc(&v[i + u * BLOCK].e[0]);
            const bool to_sink = ahead > 0;
            int taken = 0;
#pragma unroll
            for (int u = 0; u < GS_EXACT_UNROLL; u++)
#pragma unroll
                for (int k = 0; k < VEC; k++) taken += ex.add(x[u].e[k], sink, to_sink);
            if constexpr (SINK_AHEAD > 0) ahead = to_sink ? ahead - 1 : 2 * taken < GS_EXACT_UNROLL * VEC ? SINK_AHEAD : 0;
        }
        for (; i < nvec; i += BLOCK) {
            room_for(VEC);
            const gs_vec<T> x = gs_load_vec_nc(&v[i].e[0]);
#pragma unroll
            for (int k = 0; k < VEC; k++) ex.add(x.e[k], sink);
        }
        scalar_from = begin + nvec * VEC;
    }
    for (int64_t i = scalar_from + tid; i < end; i += BLOCK) {
        room_for(1);
        ex.add(in[i], sink);
    }
    if constexpr (SETTLE > 0) sink.settle();
}

/* The block's digits (and specials) into b->sum, normalized; every thread
 * calls it, and b->sum is ready for all after it returns. */
GS_DEV void gs_exact_block_total(gs_exact_block_state *b)
{
    gs_exact_sync();
    /* warps' digits stay below 2^62 in magnitude (a launch gives a block
     * fewer than 2^27 elements): their sum fits */
    for (int d = threadIdx.x; d < GS_EXACT_DIGITS; d += GS_EXACT_BLOCK) {
        int64_t sum = 0;
        for (int w = 0; w < GS_EXACT_WARPS; w++) sum += (int64_t)b->warp_digit[w][d];
        b->sum.digit[d] = sum;
    }
    gs_exact_sync();
    if (threadIdx.x == 0) {
        b->sum.special = b->special;
        gs_exact_normalize(&b->sum);
    }
    gs_exact_sync();
}

/* The block's exact sum of in[begin, end) into b->sum, normalized, with
 * its specials; every thread calls it after gs_exact_block_clear. */
template <class T> GS_DEV void gs_exact_block_sum(const T *in, int64_t begin, int64_t end, gs_exact_block_state *b)
{
    constexpr bool F32 = sizeof(T) == 4;
    const gs_exact_warp_sink sink = {b->warp_digit[threadIdx.x / 32], &b->special};
    gs_expansion<F32> ex;
    gs_exact_thread_sum<GS_EXACT_BLOCK>(in, begin, end, ex, sink);
    ex.flush(sink);
    gs_exact_block_total(b);
}

#endif /* GS_CUDA_EXACT_AGENT_CUH */
