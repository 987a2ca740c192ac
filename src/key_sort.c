/*
 * key_sort.c - insertion sort for short arrays, a bucket sort for longer
 * ones whose keys spread evenly, radix sort for the rest.
 */
#include "key_sort.h"

#include <string.h>

static void insertion_sort(uint64_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint64_t k = a[i];
        size_t j = i;
        while (j > 0 && k < a[j - 1]) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = k;
    }
}

/*
 * LSD radix sort, using `scratch`: a crowd gives one call hundreds of
 * changes, and a batch of moves is as long as a tick, where qsort()'s calls
 * of a comparison would dominate. Only the bytes of the high half that
 * differ between keys are sorted on, found in one pass.
 */
static void radix_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    uint64_t *src = keys, *dst = scratch;
    uint64_t all_or = 0, all_and = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        all_or |= src[i];
        all_and &= src[i];
    }
    uint64_t varies = all_or ^ all_and;
    for (int shift = 32; shift < 64; shift += 8) {
        if (!((varies >> shift) & 0xffu))
            continue;
        /* No key's byte exceeds that of all_or: small IDs use few buckets. */
        unsigned top = (unsigned)(all_or >> shift) & 0xffu;
        uint32_t count[256];
        memset(count, 0, (top + 1) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xffu]++;
        uint32_t sum = 0;
        for (unsigned v = 0; v <= top; v++) {
            uint32_t c = count[v];
            count[v] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xffu]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *src);
}

/*
 * Keys whose high halves spread evenly, as the partner IDs of a call's
 * changes do, in fewer passes than the radix sort: each key goes to one of n
 * buckets by where its high half falls between the smallest and the
 * largest, and an insertion sort finishes, each key moving within its
 * bucket. Returns 0, having sorted nothing, when a bucket got more than
 * BUCKET_FULL keys: clustered keys could cost the insertion sort the square
 * of their number. The bucket starts take up to 4 KiB of stack.
 */
#define BUCKET_SORT_MAX 1024
#define BUCKET_FULL 16

static int bucket_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t h = (uint32_t)(keys[i] >> 32);
        lo = h < lo ? h : lo;
        hi = h > hi ? h : hi;
    }
    /* bucket = (h - lo) * n / span, by a multiply: (h - lo) < span, so the
     * product is below n * 2^32 and the bucket below n. */
    uint64_t scale = ((uint64_t)n << 32) / ((uint64_t)hi - lo + 1);
#define BUCKET_OF(k) ((size_t)(((uint64_t)((uint32_t)((k) >> 32) - lo) * scale) >> 32))
    uint32_t start[BUCKET_SORT_MAX];
    memset(start, 0, n * sizeof *start);
    for (size_t i = 0; i < n; i++)
        start[BUCKET_OF(keys[i])]++;
    uint32_t sum = 0, fullest = 0;
    for (size_t b = 0; b < n; b++) {
        uint32_t c = start[b];
        fullest = c > fullest ? c : fullest;
        start[b] = sum;
        sum += c;
    }
    if (fullest > BUCKET_FULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        scratch[start[BUCKET_OF(keys[i])]++] = keys[i];
#undef BUCKET_OF
    memcpy(keys, scratch, n * sizeof *keys);
    insertion_sort(keys, n);
    return 1;
}

void key_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    /* Most calls yield a handful of changes, where insertion sort is fastest
     * (the bound is measured on walks and teleports). */
    if (n <= 24)
        insertion_sort(keys, n);
    else if (n > BUCKET_SORT_MAX || !bucket_sort(keys, scratch, n))
        radix_sort(keys, scratch, n);
}
