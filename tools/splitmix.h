/*
 * splitmix.h - the seeded random numbers of the tools' workloads and scenes
 * and of the tests' scenarios: splitmix64, so that a run depends on its seed
 * alone, on every platform. Header-only: the tests include it too.
 */
#ifndef PERCEPT_SPLITMIX_H
#define PERCEPT_SPLITMIX_H

#include <stdint.h>

/* The next 64 random bits; *state is the whole generator. */
static inline uint64_t splitmix_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1), from the top 53 bits. */
static inline double splitmix_unit(uint64_t *state)
{
    return (double)(splitmix_next(state) >> 11) * 0x1p-53;
}

/* Uniform in 0 .. n - 1 (n > 0), with the modulo's slight bias. */
static inline uint32_t splitmix_below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(splitmix_next(state) % n);
}

/* 1 with a chance of `percent` in 100. */
static inline int splitmix_chance(uint64_t *state, uint32_t percent)
{
    return splitmix_below(state, 100) < percent;
}

/* Uniform in [lo, hi). */
static inline double splitmix_between(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * splitmix_unit(state);
}

#endif
