/*
 * key_sort.c - insertion sort for the short arrays most calls sort, radix
 * sort on the varying bytes of the high half for the longer ones.
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
 * LSD radix sort of n keys, using `scratch` (n more): a teleport gives one
 * call dozens of changes, a crowd hundreds, and a batch of moves is as long
 * as a tick, where qsort()'s calls of a comparison would dominate. Only the
 * bytes of the high half that differ between keys are sorted on, found in
 * one pass: IDs below 65536 need two passes. The low half is unique, so no
 * two keys are equal.
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

void key_sort(uint64_t *keys, uint64_t *scratch, size_t n)
{
    /* Most calls yield a handful of changes: insertion sort is fastest there. */
    if (n <= 24)
        insertion_sort(keys, n);
    else
        radix_sort(keys, scratch, n);
}
