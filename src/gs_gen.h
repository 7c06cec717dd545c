/*
 * gs_gen.h - the counter-based generator behind `-g N`.
 *
 * Element i of a generated array is a pure function of (seed, i), so every
 * rank generates its own shard, on the host or on the GPU, and the array does
 * not depend on the number of ranks. Distributions (documented in docs/):
 *   i32 uniform integers in [-2^20, 2^20)   i64 in [-2^26, 2^26)
 *   u32 uniform integers in [0, 2^21)       u64 in [0, 2^27)
 *   f32, f64 uniform in [0, 1) with 24 and 53 random bits
 * so that sums of 2^36 elements fit in 64 bits.
 */
#ifndef GS_GEN_H
#define GS_GEN_H

#include "gs_rules.h"

/* splitmix64's finaliser: a bijection of 64-bit words with good avalanche. */
GS_HD uint64_t gs_gen_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

GS_HD uint64_t gs_gen_bits(uint64_t seed, uint64_t index)
{
    return gs_gen_mix(gs_gen_mix(seed) + (index + 1) * 0x9E3779B97F4A7C15ull);
}

GS_HD int32_t gs_gen_i32(uint64_t seed, uint64_t i) { return (int32_t)(gs_gen_bits(seed, i) >> 43) - (1 << 20); }
GS_HD int64_t gs_gen_i64(uint64_t seed, uint64_t i) { return (int64_t)(gs_gen_bits(seed, i) >> 37) - ((int64_t)1 << 26); }
GS_HD uint32_t gs_gen_u32(uint64_t seed, uint64_t i) { return (uint32_t)(gs_gen_bits(seed, i) >> 43); }
GS_HD uint64_t gs_gen_u64(uint64_t seed, uint64_t i) { return gs_gen_bits(seed, i) >> 37; }
GS_HD float gs_gen_f32(uint64_t seed, uint64_t i) { return (float)(gs_gen_bits(seed, i) >> 40) * 0x1p-24f; }
GS_HD double gs_gen_f64(uint64_t seed, uint64_t i) { return (double)(gs_gen_bits(seed, i) >> 11) * 0x1p-53; }

#endif /* GS_GEN_H */
