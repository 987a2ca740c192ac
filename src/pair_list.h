/*
 * pair_list.h - one entity's side of the perception relation: every entity
 * it perceives or is perceived by, each once, with the senses it perceives
 * the partner in and those the partner perceives it in. One list for both
 * directions and all senses: ranges are alike across senses and between
 * neighbours, so most pairs hold both ways, and a move walks one short list
 * and tests each neighbour once, with one distance. An entry is 8 bytes:
 * the partner's slot and the pair's index in the partner's list, so that
 * updating or removing a pair never searches a list (in a crowd a list
 * holds hundreds), each beside one direction's senses. Order is not kept:
 * removal swaps in the last entry, which tells its own partner where it went.
 */
#ifndef PERCEPT_PAIR_LIST_H
#define PERCEPT_PAIR_LIST_H

#include <stdint.h>

#include "percept.h"

/* A pair's mask, as its owner's list keeps it: bit s, the owner perceives
 * the partner in sense s; bit PAIR_IN_SHIFT + s, the partner perceives the
 * owner. The partner's list holds the same pair with the halves swapped. */
#define PAIR_IN_SHIFT 8
#define PAIR_OUT_MASK ((1u << PAIR_IN_SHIFT) - 1)
#define PAIR_MASK ((1u << 2 * PAIR_IN_SHIFT) - 1)
/* Slots and indexes share their word with a half mask: a world holds at
 * most this many entities. */
#define PAIR_SLOT_LIMIT (UINT32_MAX >> PAIR_IN_SHIFT)
#define PAIR_NONE UINT32_MAX

_Static_assert(PERCEPT_MAX_SENSES <= PAIR_IN_SHIFT, "a pair's mask must hold every sense");

typedef struct pair {
    uint32_t slot_out; /* partner slot << PAIR_IN_SHIFT | the senses the owner perceives it in */
    uint32_t index_in; /* the pair's index in the partner's list << PAIR_IN_SHIFT | the
                          senses the partner perceives the owner in */
} pair;

static inline pair pair_make(uint32_t slot, uint32_t index, unsigned mask)
{
    return (pair){slot << PAIR_IN_SHIFT | (mask & PAIR_OUT_MASK),
                  index << PAIR_IN_SHIFT | mask >> PAIR_IN_SHIFT};
}
static inline uint32_t pair_slot(const pair *p)
{
    return p->slot_out >> PAIR_IN_SHIFT;
}
static inline uint32_t pair_back(const pair *p)
{
    return p->index_in >> PAIR_IN_SHIFT;
}
static inline unsigned pair_mask(const pair *p)
{
    return (p->slot_out & PAIR_OUT_MASK) | (p->index_in & PAIR_OUT_MASK) << PAIR_IN_SHIFT;
}
static inline void pair_set_mask(pair *p, unsigned mask)
{
    *p = pair_make(pair_slot(p), pair_back(p), mask);
}
static inline void pair_set_back(pair *p, uint32_t index)
{
    p->index_in = index << PAIR_IN_SHIFT | (p->index_in & PAIR_OUT_MASK);
}
/* The senses the owner perceives the partner in, and the reverse. */
static inline unsigned pair_out(unsigned mask)
{
    return mask & PAIR_OUT_MASK;
}
static inline unsigned pair_in(unsigned mask)
{
    return mask >> PAIR_IN_SHIFT;
}
/* The same pair's mask as the partner's list keeps it. */
static inline unsigned pair_swap(unsigned mask)
{
    return pair_in(mask) | pair_out(mask) << PAIR_IN_SHIFT;
}

typedef struct pair_list {
    pair *items;
    uint32_t len, cap;
} pair_list;

/* Make room for `extra` more entries at once (spare room is invisible).
 * This and the append fail (-1) only when out of memory, leaving the list
 * as it was. */
int pair_list_reserve(const percept_allocator *a, pair_list *list, uint32_t extra);
/* Append; inline, like the removal: an arrival in a crowd makes two of
 * each per pair it gains or loses, and growth is rare (a call of its own). */
static inline int pair_list_push(const percept_allocator *a, pair_list *list, pair entry)
{
    if (list->len == list->cap && pair_list_reserve(a, list, 1))
        return -1;
    list->items[list->len++] = entry;
    return 0;
}
/* The index of `slot`'s entry, or PAIR_NONE. */
uint32_t pair_list_find(const pair_list *list, uint32_t slot);
/* Remove entry i by moving the last entry into its place; `lists` is the
 * per-slot array of lists, where the moved entry's partner learns its new
 * index. Never fails. */
static inline void pair_list_remove_at(pair_list *list, uint32_t i, pair_list *lists)
{
    list->items[i] = list->items[--list->len];
    if (i < list->len) {
        const pair *moved = &list->items[i];
        pair_set_back(&lists[pair_slot(moved)].items[pair_back(moved)], i);
    }
}
void pair_list_free(const percept_allocator *a, pair_list *list);

/* Lists with room for this many entries or fewer keep it, even empty: an
 * entity's few neighbours come and go, and resizing on each would cost a
 * call on every move of a sparse world. */
#define PAIR_SHRINK_FROM 8
/* pc_give_back() once a list holds a quarter of its room or less: a list
 * that grew in a crowd would otherwise keep the crowd's size for good. */
void pair_list_give_back(const percept_allocator *a, pair_list *list);
static inline void pair_list_shrink(const percept_allocator *a, pair_list *list)
{
    if (list->cap > PAIR_SHRINK_FROM && list->len <= list->cap / 4)
        pair_list_give_back(a, list);
}
/* Bytes the list holds from its allocator, spare room included. */
static inline size_t pair_list_bytes(const pair_list *list)
{
    return (size_t)list->cap * sizeof(pair);
}

#endif
