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

size_t change_buffer_order(change_buffer *buf, percept_id self)
{
    size_t n = buf->len, below = 0;
    const pair_change *items = buf->items;
    uint64_t *keys = buf->keys, *scratch = buf->keys + buf->cap;
    /* A call makes fewer than 2^32 changes (one per entity at most), so an
     * index fits the low half. */
    for (size_t i = 0; i < n; i++) {
        keys[i] = (uint64_t)items[i].partner_id << 32 | i;
        below += items[i].partner_id < self;
    }
    key_sort(keys, scratch, n);
    uint32_t *order = buf->order;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)keys[i];
    return below;
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
