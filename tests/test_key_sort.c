/*
 * test_key_sort.c - the sort behind the delivery order of a call's events
 * and the order of a batch of moves, against qsort(), on the key shapes
 * each of its three ways meets: every length across the switches between
 * them (insertion sort up to 24 keys, the bucket sort up to 1024, the radix
 * sort beyond), high halves spread evenly, clustered (the bucket sort must
 * give up and leave the keys to the radix sort), all equal, and at both
 * ends of their range (the bucket arithmetic's overflow edges).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "key_sort.h"

#define MAX_KEYS 2100

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

static int compare_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef uint32_t (*high_fn)(size_t i, size_t n);

static uint32_t spread(size_t i, size_t n)
{
    (void)i, (void)n;
    return next_u32() % 100000u;
}

/* Two tight groups far apart: most buckets empty, two overfull. */
static uint32_t clustered(size_t i, size_t n)
{
    (void)n;
    return (i & 1 ? 4000000000u : 7u) + next_u32() % 40u;
}

static uint32_t all_equal(size_t i, size_t n)
{
    (void)i, (void)n;
    return 123456u;
}

/* The whole 32-bit range, its two ends included. */
static uint32_t extremes(size_t i, size_t n)
{
    if (i == 0)
        return 0;
    if (i == n / 2)
        return UINT32_MAX;
    return next_u32() << 16 ^ next_u32();
}

static uint32_t descending(size_t i, size_t n)
{
    return (uint32_t)(n - i) * 3u;
}

/* Sorts n keys of the given shape, their low halves the indices 0, 1, ...
 * in order, as the library builds them, and compares with qsort(). */
static void check_shape(high_fn high, size_t n)
{
    static uint64_t keys[MAX_KEYS], scratch[MAX_KEYS], expected[MAX_KEYS];
    for (size_t i = 0; i < n; i++)
        keys[i] = (uint64_t)high(i, n) << 32 | (uint32_t)i;
    memcpy(expected, keys, n * sizeof *keys);
    qsort(expected, n, sizeof *expected, compare_keys);
    memset(scratch, 0xA5, sizeof scratch);
    key_sort(keys, scratch, n);
    for (size_t i = 0; i < n; i++) {
        if (keys[i] != expected[i])
            fail_msg("n=%zu: key %zu is %#llx, expected %#llx", n, i, (unsigned long long)keys[i],
                     (unsigned long long)expected[i]);
    }
}

/* One shape's test: every length up to past the bucket sort's limit, and
 * two beyond it for the radix sort. The shape comes in as the test's state. */
typedef struct shape {
    const char *name;
    high_fn high;
} shape;

static const shape shapes[] = {
    {"spread", spread},     {"clustered", clustered},   {"all_equal", all_equal},
    {"extremes", extremes}, {"descending", descending},
};

static void test_every_length(void **state)
{
    const shape *sh = *state;
    for (size_t n = 0; n <= 1100; n++)
        check_shape(sh->high, n);
    check_shape(sh->high, 2048);
    check_shape(sh->high, MAX_KEYS);
}

int main(void)
{
    struct CMUnitTest tests[sizeof shapes / sizeof *shapes];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        tests[i] =
            (struct CMUnitTest){shapes[i].name, test_every_length, NULL, NULL, (void *)&shapes[i]};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
