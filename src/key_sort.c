/*
 * key_sort.c - insertion sort for the short arrays most calls sort, merge
 * sort for the few dozen to a hundred of a teleport, radix sort on the
 * varying bytes of the high half for the long ones.
 */
#include "key_sort.h"

#include <string.h>

/* Up to this many keys, merge sort; above, radix sort (callgrind: their
 * costs cross near 100 keys with IDs below 65536, radix's two passes then
 * paying for their 256-entry counts; 128 and 512 tied on town_square). */
#define MERGE_SORT_MAX 128

static inline void insertion_sort(uint64_t *a, size_t n)
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
 * LSD radix sort of n keys, using `scratch` (n more): a crowd or a teleport
 * gives one call hundreds of changes, and a batch of moves is as long as a
 * tick, where a comparison sort would dominate. Only the bytes of the high
 * half that differ between keys are sorted on, found in one pass: IDs below
 * 65536 need two passes. The low half is unique, so no two keys are equal.
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

/* Merges the sorted runs a[0 .. n) and b[0 .. m) into out. */
static void merge_runs(const uint64_t *a, size_t n, const uint64_t *b, size_t m, uint64_t *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < n && j < m)
        out[k++] = a[i] < b[j] ? a[i++] : b[j++];
    while (i < n)
        out[k++] = a[i++];
    while (j < m)
        out[k++] = b[j++];
}

#define MERGE_RUN 16

/*
 * Merge sort for up to MERGE_SORT_MAX keys, as a teleport gives: runs of
 * MERGE_RUN keys sorted in place, then merged pairwise between keys and
 * scratch. The radix sort's 256-entry counts cost more than so few keys.
 */
static void merge_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    for (size_t i = 0; i < n; i += MERGE_RUN)
        insertion_sort(keys + i, n - i < MERGE_RUN ? n - i : MERGE_RUN);
    uint64_t *src = keys, *dst = scratch;
    for (size_t width = MERGE_RUN; width < n; width *= 2) {
        for (size_t i = 0; i < n; i += 2 * width) {
            size_t mid = i + width < n ? i + width : n;
            size_t end = i + 2 * width < n ? i + 2 * width : n;
            merge_runs(src + i, mid - i, src + mid, end - mid, dst + i);
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, n * sizeof *src);
}

void key_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    /* Most calls yield a handful of changes: insertion sort is fastest there.
     * A teleport at 10k sorts runs of 30 to 60 (callgrind, 3000 teleports:
     * 131.4M instructions with insertion sort up to 48 and radix sort above,
     * 125.2M with merge sort above 24; 16 and 24 tie, 32 and 48 lose). */
    if (n <= 24)
        insertion_sort(keys, n);
    else if (n <= MERGE_SORT_MAX)
        merge_sort(keys, scratch, n);
    else
        radix_sort(keys, scratch, n);
}
