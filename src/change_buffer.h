/*
 * change_buffer.h - the pair changes one call computes before it applies
 * them: one record per (observer, target) pair whose senses change (or, with
 * MOVE events on, that keeps perceiving a mover), kept and reused from call
 * to call so the hot path does not allocate, and sorted into the documented
 * delivery order before its events are delivered.
 */
#ifndef PERCEPT_CHANGE_BUFFER_H
#define PERCEPT_CHANGE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

typedef struct pair_change {
    uint64_t key;              /* observer ID << 32 | target ID: the delivery order */
    uint32_t observer, target; /* slots */
    uint32_t index;            /* the entry's place in the changing entity's own list,
                                  PAIR_NONE for a pair that did not hold before */
    uint8_t before, after;     /* sense masks */
    uint8_t moved;             /* MOVE for each sense held before and after */
} pair_change;

typedef struct change_buffer {
    pair_change *items;
    pair_change *scratch; /* as long as items: the radix sort's second buffer */
    size_t len, cap;
} change_buffer;

/* Doubles the buffer (and its scratch); 0, or -1 when out of memory. */
int change_buffer_grow(const percept_allocator *a, change_buffer *buf);

/* Appends a change; 0, or -1 when out of memory. Inline: every candidate
 * pair that changes passes here. */
static inline int change_buffer_push(const percept_allocator *a, change_buffer *buf,
                                     const pair_change *c)
{
    if (buf->len == buf->cap && change_buffer_grow(a, buf))
        return -1;
    buf->items[buf->len++] = *c;
    return 0;
}
/* Order by observer ID, then target ID: each pair comes once, so that is the
 * order promised in percept.h once each record's senses are taken in order.
 * The records before `split` and those from it are sorted apart and then
 * merged: a call's changes come in two runs (the changing entity as observer,
 * then as target), each with half of every key the same, which the sort
 * skips. Never fails and never allocates: push() already grew the scratch. */
void change_buffer_sort(change_buffer *buf, size_t split);
void change_buffer_free(const percept_allocator *a, change_buffer *buf);

#endif
