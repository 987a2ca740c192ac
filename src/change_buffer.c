/*
 * change_buffer.c - growth and ordering of a call's pending pair changes.
 */
#include "change_buffer.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

int change_buffer_grow(const percept_allocator *a, change_buffer *buf)
{
    /* Grow the sorting room before the call commits, so ordering cannot fail. */
    size_t cap = buf->cap ? buf->cap * 2 : 64;
    if (cap > SIZE_MAX / (2 * sizeof *buf->keys))
        return -1;
    pair_change *items = a->alloc(a->user, buf->items, cap * sizeof *items);
    if (!items)
        return -1;
    buf->items = items;
    /* Until all three grew, cap stays: the next push grows them again. */
    uint64_t *keys = a->alloc(a->user, buf->keys, 2 * cap * sizeof *keys);
    if (!keys)
        return -1;
    buf->keys = keys;
    uint32_t *order = a->alloc(a->user, buf->order, cap * sizeof *order);
    if (!order)
        return -1;
    buf->order = order;
    buf->cap = cap;
    return 0;
}

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
 * LSD radix sort of n keys, using `scratch` (n more): a crowd or a teleport
 * gives one call hundreds of changes, where a comparison sort dominates the
 * call. Only the bytes of the ID half (the top 32 bits) that differ between
 * keys are sorted on, found in one pass: IDs below 65536 need two passes.
 * The low half, a record's index, is unique, so no two keys are equal.
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

/* Sort keys[0 .. n) (ID << 32 | record index), with scratch room for n more. */
static void sort_keys(uint64_t *keys, uint64_t *scratch, size_t n)
{
    /* Most calls yield a handful of changes: insertion sort is fastest there
     * (callgrind, 10k teleports: switching at 48 beats 24 and 32). */
    if (n <= 48)
        insertion_sort(keys, n);
    else
        radix_sort(keys, scratch, n);
}

void change_buffer_order(change_buffer *buf, size_t split, percept_id self)
{
    size_t n = buf->len;
    if (split > n)
        split = n;
    const pair_change *items = buf->items;
    uint64_t *keys = buf->keys, *scratch = buf->keys + buf->cap;
    /* The observer run varies in its target IDs, the target run in its
     * observer IDs: each is sorted on that ID alone. A call makes fewer than
     * 2^32 changes (two per entity at most), so an index fits the low half. */
    for (size_t i = 0; i < split; i++)
        keys[i] = (uint64_t)(uint32_t)items[i].key << 32 | i;
    for (size_t i = split; i < n; i++)
        keys[i] = (items[i].key >> 32) << 32 | i;
    sort_keys(keys, scratch, split);
    sort_keys(keys + split, scratch + split, n - split);
    /* The target run's observers below `self`, the observer run (observer
     * `self` throughout), then the target run's observers above `self`: the
     * target run never holds `self` as observer, so there is no tie. */
    size_t below = split, end = n;
    while (below < end) {
        size_t mid = below + (end - below) / 2;
        if ((percept_id)(keys[mid] >> 32) < self)
            below = mid + 1;
        else
            end = mid;
    }
    uint32_t *order = buf->order;
    size_t k = 0;
    for (size_t i = split; i < below; i++)
        order[k++] = (uint32_t)keys[i];
    for (size_t i = 0; i < split; i++)
        order[k++] = (uint32_t)keys[i];
    for (size_t i = below; i < n; i++)
        order[k++] = (uint32_t)keys[i];
}

void change_buffer_free(const percept_allocator *a, change_buffer *buf)
{
    pc_free(a, buf->items);
    pc_free(a, buf->keys);
    pc_free(a, buf->order);
    buf->items = NULL;
    buf->keys = NULL;
    buf->order = NULL;
    buf->len = buf->cap = 0;
}
