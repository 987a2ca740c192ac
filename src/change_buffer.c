/*
 * change_buffer.c - growth and ordering of a call's pending pair changes.
 */
#include "change_buffer.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

int change_buffer_grow(const percept_allocator *a, change_buffer *buf)
{
    /* Grow both buffers before the call commits, so sorting cannot fail. */
    size_t cap = buf->cap ? buf->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof *buf->items)
        return -1;
    pair_change *items = a->alloc(a->user, buf->items, cap * sizeof *items);
    if (!items)
        return -1;
    buf->items = items;
    pair_change *scratch = a->alloc(a->user, buf->scratch, cap * sizeof *scratch);
    if (!scratch)
        return -1; /* items grew; cap stays, so the next push grows both again */
    buf->scratch = scratch;
    buf->cap = cap;
    return 0;
}

static void insertion_sort(pair_change *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        pair_change c = a[i];
        size_t j = i;
        while (j > 0 && c.key < a[j - 1].key) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = c;
    }
}

/*
 * LSD radix sort on the key's bytes: a crowd can give one move hundreds of
 * changes (MOVE notifications above all), where comparison sorts dominate the
 * call. Bytes that are the same in every key are found in one pass and
 * skipped: within one run of a call's changes one half of the key is fixed.
 */
static void radix_sort(pair_change *items, pair_change *scratch, size_t n)
{
    pair_change *src = items, *dst = scratch;
    uint64_t all_or = 0, all_and = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        all_or |= src[i].key;
        all_and &= src[i].key;
    }
    uint64_t varies = all_or ^ all_and;
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((varies >> shift) & 0xffu))
            continue;
        uint32_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].key >> shift) & 0xffu]++;
        uint32_t sum = 0;
        for (int v = 0; v < 256; v++) {
            uint32_t c = count[v];
            count[v] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].key >> shift) & 0xffu]++] = src[i];
        pair_change *t = src;
        src = dst;
        dst = t;
    }
    if (src != items)
        memcpy(items, src, n * sizeof *src);
}

static void sort_run(pair_change *items, pair_change *scratch, size_t n)
{
    /* Most calls yield a handful of changes: insertion sort is fastest there
     * (callgrind: below about 48 it beats the radix sort's fixed 256-entry
     * counting passes). */
    if (n <= 48)
        insertion_sort(items, n);
    else
        radix_sort(items, scratch, n);
}

void change_buffer_sort(change_buffer *buf, size_t split)
{
    size_t n = buf->len;
    if (split > n)
        split = n;
    pair_change *a = buf->items, *scratch = buf->scratch;
    sort_run(a, scratch, split);
    sort_run(a + split, scratch + split, n - split);
    if (split == 0 || split == n || a[split - 1].key < a[split].key)
        return;
    /* Merge the two sorted runs through the scratch buffer. */
    size_t i = 0, j = split, k = 0;
    while (i < split && j < n)
        scratch[k++] = a[j].key < a[i].key ? a[j++] : a[i++];
    while (i < split)
        scratch[k++] = a[i++];
    while (j < n)
        scratch[k++] = a[j++];
    memcpy(a, scratch, n * sizeof *a);
}

void change_buffer_free(const percept_allocator *a, change_buffer *buf)
{
    pc_free(a, buf->items);
    pc_free(a, buf->scratch);
    buf->items = buf->scratch = NULL;
    buf->len = buf->cap = 0;
}
