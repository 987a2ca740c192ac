/*
 * change_buffer.c - growth and ordering of a call's pending pair changes.
 */
#include "change_buffer.h"

#include <stdint.h>

#include "alloc.h"
#include "key_sort.h"

int change_buffer_grow(const percept_allocator *a, change_buffer *buf)
{
    /* Grow the sorting room before the call commits, so ordering cannot fail. */
    size_t cap = buf->cap ? buf->cap * 2 : 64;
    if (cap > SIZE_MAX / (2 * sizeof *buf->keys))
        return -1;
    /* All three grow or none does, so cap tells what is held (memory
     * reports count on it). The keys and the order are filled afresh by
     * each ordering: new blocks, nothing to copy. */
    uint64_t *keys = pc_alloc(a, 2 * cap * sizeof *keys);
    uint32_t *order = pc_alloc(a, cap * sizeof *order);
    pair_change *items = keys && order ? a->alloc(a->user, buf->items, cap * sizeof *items) : NULL;
    if (!items) {
        pc_free(a, keys);
        pc_free(a, order);
        return -1;
    }
    pc_free(a, buf->keys);
    pc_free(a, buf->order);
    buf->items = items;
    buf->keys = keys;
    buf->order = order;
    buf->cap = cap;
    return 0;
}

void change_buffer_push_grown(const percept_allocator *a, change_buffer *buf, const pair_change *c)
{
    if (change_buffer_grow(a, buf)) {
        buf->failed = 1;
        return;
    }
    buf->items[buf->len++] = *c;
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
    key_sort(keys, scratch, split);
    key_sort(keys + split, scratch + split, n - split);
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
