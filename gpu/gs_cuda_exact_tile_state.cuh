/*
 * gs_cuda_exact_tile_state.cuh - what a tile of the exact scan publishes
 * for the look-back of the tiles after it (gs_cuda_exact_scan_agent.cuh):
 * its aggregate and its inclusive prefix, each a 16-byte word that holds
 * a pair of doubles, or that points to the state packed beside it where no
 * pair holds it; how they are written and read.
 */
#ifndef GS_CUDA_EXACT_TILE_STATE_CUH
#define GS_CUDA_EXACT_TILE_STATE_CUH

#include "gs_cuda_exact_fast.cuh"

/* What a tile publishes for the tiles after it, its aggregate and then its
 * inclusive prefix, each a word: head = status | lo's code (status =
 * epoch << 2 | flags) and hi, in one 16-byte store (an aligned 16-byte
 * access is not split, as gs_tile_state relies on too): a reader sees all
 * or nothing. Flags: none, the value is hi + lo exactly, lo in the code
 * (gs_exact_lo_code: a pair's low part mostly has a few bits);
 * GS_EXACT_VALUE_PAIR, it is hi + the state's side field lo exactly;
 * GS_EXACT_VALUE_FULL, no pair holds it (special values, a wide range of
 * exponents) and it is the tile's gs_exact_packed. Side fields are written
 * before the word's release and read after its acquire. Statuses of
 * earlier launches carry an older epoch and read as "not yet", so the
 * states need clearing only when the epoch's 8 bits wrap
 * (gs_cuda_exact.cu); f32 and f64 launches share the states, and either
 * type's word read as the other's still shows its own epoch (an f64
 * word's code lies above an f32 status's epoch bits or is 0). */
enum { GS_EXACT_VALUE_PAIR = 1, GS_EXACT_VALUE_FULL = 2 };
#define GS_EXACT_STATUS_BITS 10
#define GS_EXACT_EPOCHS (1u << (GS_EXACT_STATUS_BITS - 2))
struct alignas(16) gs_exact_word {
    uint64_t head;
    double hi;
};

/* 2^(E - 105) for hi's exponent E, at least 2^-1022: a multiple of it below
 * 2^53 times it is a double, and so is the product (it is not subnormal). */
GS_DEV double gs_exact_lo_unit(double hi)
{
    const int biased = gs_biased_exponent(hi);
    return __longlong_as_double((long long)((biased > 106 ? biased : 106) - 105) << 52);
}
/* lo's code in the head of a tile of T, where it holds lo exactly (else lo
 * is a side field). f32 keeps 32 bits of status and lo as an f32 (its
 * prefixes' low parts have a few bits); f64 10 bits of status and lo = m
 * 2^(E - 105), E hi's exponent, m an integer below 2^53 in the other 54:
 * every lo of a pair whose bits span at most 106 (the generator's f64
 * prefixes' low parts have about 27 bits, normal data's about 42, which
 * no f32 holds: docs/PERFORMANCE.md). */
template <class T> GS_DEV bool gs_exact_lo_code(double hi, double lo, uint64_t &code)
{
    if constexpr (sizeof(T) == 4) {
        const float lo32 = __double2float_rn(lo);
        code = (uint64_t)(uint32_t)__float_as_int(lo32) << 32;
        return (double)lo32 == lo;
    } else {
        const double unit = gs_exact_lo_unit(hi);
        const double m = lo * (1.0 / unit);   /* 1 / unit is a power of two below 2^1023 */
        if (!(fabs(m) < 0x1p53)) return false;
        const long long mi = __double2ll_rz(m);
        code = (uint64_t)mi << GS_EXACT_STATUS_BITS;
        return (double)mi * unit == lo;
    }
}
/* A word as a look-back holds it: f32's decoded where it is read (one
 * conversion, on its short chain), f64's head kept and decoded once the
 * lane has chosen its word. */
template <class T> struct gs_exact_seen;
template <> struct gs_exact_seen<float> {
    uint32_t status_;
    float lo_;
    double hi;
    GS_DEV static gs_exact_seen of(uint64_t head, double hi) { return {(uint32_t)head, __int_as_float((int)(head >> 32)), hi}; }
    GS_DEV uint32_t status() const { return status_; }
    GS_DEV double lo() const { return (double)lo_; }
};
template <> struct gs_exact_seen<double> {
    uint64_t head;
    double hi;
    GS_DEV static gs_exact_seen of(uint64_t head, double hi) { return {head, hi}; }
    GS_DEV uint32_t status() const { return (uint32_t)head & ((1u << GS_EXACT_STATUS_BITS) - 1); }
    GS_DEV double lo() const { return (double)((long long)head >> GS_EXACT_STATUS_BITS) * gs_exact_lo_unit(hi); }
};

/* A word and its side field, in a 32-byte sector of their own; a tile's
 * two in 64 bytes. Packed closer (48 bytes a tile; or one word a tile,
 * which the inclusive prefix overwrites, in 16 or 32 bytes), the scans
 * ran 0.5-5% slower (docs/PERFORMANCE.md). */
struct alignas(32) gs_exact_state {
    gs_exact_word word;
    double lo;
};
struct alignas(64) gs_exact_tile {
    gs_exact_state aggregate, inclusive;
};
/* A normalized gs_exact in half the bytes: its digits below the top one
 * are below 2^32. Each tile has two: its aggregate, its inclusive prefix. */
struct gs_exact_packed {
    int64_t top;
    uint32_t special;
    uint32_t digit[GS_EXACT_DIGITS - 1];
};

/* A word with side fields is released (they were written first, by the
 * same thread); one without needs no ordering. Reads are relaxed: a reader
 * that finds side fields fences (gs_exact_acquire_fence) before it reads
 * them. Acquiring reads cannot overlap (each waits for the one before), so
 * a look-back reading both words of a tile made two round trips of one. */
GS_DEV void gs_exact_word_publish(gs_exact_word *w, uint32_t status, uint64_t lo_code, double hi)
{
    const uint64_t head = status | lo_code;
    const uint64_t bits = (uint64_t)__double_as_longlong(hi);
    if (status & (GS_EXACT_VALUE_PAIR | GS_EXACT_VALUE_FULL))
        asm volatile("st.release.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(w), "l"(head), "l"(bits) : "memory");
    else
        asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(w), "l"(head), "l"(bits) : "memory");
}
template <class T> GS_DEV gs_exact_seen<T> gs_exact_word_read(const gs_exact_word *w)
{
    uint64_t head, bits;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(head), "=l"(bits) : "l"(w) : "memory");
    return gs_exact_seen<T>::of(head, __longlong_as_double((long long)bits));
}
/* The state hi + lo (finite) of a tile of T: lo in the word where its
 * code holds it exactly, else in the side field, written first. */
template <class T> GS_DEV void gs_exact_publish_pair(gs_exact_state *st, uint32_t status, double hi, double lo)
{
    uint64_t code;
    if (gs_exact_lo_code<T>(hi, lo, code)) {
        gs_exact_word_publish(&st->word, status, code, hi);
    } else {
        st->lo = lo;
        gs_exact_word_publish(&st->word, status | GS_EXACT_VALUE_PAIR, 0, hi);
    }
}
/* Where another lane of the warp read the released word: its side fields are visible after. */
GS_DEV void gs_exact_acquire_fence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

GS_DEV void gs_exact_pack(gs_exact_packed *p, const gs_exact *e)   /* e normalized */
{
    for (int d = 0; d < GS_EXACT_DIGITS - 1; d++) p->digit[d] = (uint32_t)e->digit[d];
    p->top = e->digit[GS_EXACT_DIGITS - 1];
    p->special = e->special;
}
/* The word of a state no pair holds: e (normalized) packed first, then
 * the word, released. */
GS_DEV void gs_exact_publish_full(gs_exact_word *w, gs_exact_packed *packed, const gs_exact *e, uint32_t status)
{
    gs_exact_pack(packed, e);
    gs_exact_word_publish(w, status | GS_EXACT_VALUE_FULL, 0, 0.0);
}
GS_DEV void gs_exact_add_packed(gs_exact *e, const gs_exact_packed *p)
{
    gs_exact_count(e, 1);   /* each digit moves by less than 2^32 */
    for (int d = 0; d < GS_EXACT_DIGITS - 1; d++) e->digit[d] += __ldcg(&p->digit[d]);
    e->digit[GS_EXACT_DIGITS - 1] += __ldcg(&p->top);
    e->special |= __ldcg(&p->special);
}

#endif /* GS_CUDA_EXACT_TILE_STATE_CUH */
