/*
 * change_buffer.c - growth and ordering of a call's pending pair changes.
 */
#include "change_buffer.h"

#include <stdint.h>

#include "alloc.h"
#include "key_sort.h"

void change_buffer_push_grown(const percept_allocator *a, change_buffer *buf, const pair_change *c)
{
    /* The sorting room grows with the records, so ordering cannot fail, and
     * both grow or neither does, so cap tells what is held. The keys are
     * filled afresh by each ordering: a new block, nothing to copy. */
    size_t cap = buf->cap ? buf->cap * 2 : 64;
    uint64_t *keys =
        cap <= SIZE_MAX / (2 * sizeof *keys) ? pc_alloc(a, 2 * cap * sizeof *keys) : NULL;
    pair_change *items = keys ? a->alloc(a->user, buf->items, cap * sizeof *items) : NULL;
    if (!items) {
        pc_free(a, keys);
        buf->failed = 1;
        return;
    }
    pc_free(a, buf->keys);
    buf->items = items;
    buf->keys = keys;
    buf->cap = cap;
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
    return below;
}

void change_buffer_free(const percept_allocator *a, change_buffer *buf)
{
    pc_free(a, buf->items);
    pc_free(a, buf->keys);
    *buf = (change_buffer){NULL, NULL, 0, 0, 0};
}
