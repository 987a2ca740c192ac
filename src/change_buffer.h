/*
 * change_buffer.h - the pair changes one call computes before it applies
 * them: one record per partner of the changing entity whose senses change in
 * either direction (or, with MOVE events on, that keeps perceiving a mover),
 * reused from call to call so the hot path does not allocate, and sorted
 * into the delivery order.
 */
#ifndef PERCEPT_CHANGE_BUFFER_H
#define PERCEPT_CHANGE_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

typedef struct pair_change {
    percept_id partner_id;  /* the delivery order */
    uint32_t partner;       /* slot */
    uint32_t index;         /* the entry's place in the changing entity's list,
                               PAIR_NONE for a pair that did not hold before */
    uint16_t before, after; /* masks as the changing entity's list keeps them
                               (see pair_list.h): both directions */
    uint8_t moved;          /* MOVE for each sense the partner perceives the
                               mover in before and after */
} pair_change;

typedef struct change_buffer {
    pair_change *items;
    /* Sorting room, grown with items: 2 * cap keys (the partner's ID beside
     * its record's index, and the sorts' second buffer). Records never
     * move; only keys do. */
    uint64_t *keys;
    size_t len, cap;
    /* Set when a push could not grow the buffer: the call that computes
     * the changes fails whole. Its owner clears it. */
    int failed;
} change_buffer;

/* change_buffer_push() when the buffer is full: doubles it and its sorting
 * room, then appends. */
void change_buffer_push_grown(const percept_allocator *a, change_buffer *buf, const pair_change *c);

/* Appends a change, or sets buf->failed when out of memory. Inline: every
 * pair that changes passes here. The growth is a call of its own, so the
 * common path saves no registers for one. */
static inline void change_buffer_push(const percept_allocator *a, change_buffer *buf,
                                      const pair_change *c)
{
    if (buf->len == buf->cap)
        change_buffer_push_grown(a, buf, c);
    else
        buf->items[buf->len++] = *c;
}
/*
 * Sort the keys so that change_buffer_nth() walks the records in their
 * partners' ID order, and return how many partners have an ID below `self`,
 * the changing entity's. The delivery order of percept.h is then: the pairs
 * where those partners observe the entity, every pair where the entity
 * observes its partner, then the pairs where the partners above observe it.
 * Never fails nor allocates: push() already grew the sorting room.
 */
size_t change_buffer_order(change_buffer *buf, percept_id self);
/* The record with the i-th smallest partner ID, after change_buffer_order(). */
static inline const pair_change *change_buffer_nth(const change_buffer *buf, size_t i)
{
    return &buf->items[(uint32_t)buf->keys[i]];
}
void change_buffer_free(const percept_allocator *a, change_buffer *buf);
/* Bytes the buffer holds from its allocator: records and sort keys. */
static inline size_t change_buffer_bytes(const change_buffer *buf)
{
    return buf->cap * (sizeof *buf->items + 2 * sizeof *buf->keys);
}

#endif
