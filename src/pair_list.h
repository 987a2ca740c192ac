/*
 * pair_list.h - one side of the perception relation for one entity: the
 * slots it perceives, or the slots perceiving it, each with the mask of
 * senses the pair holds in. One list for all senses, because ranges are
 * alike across senses and a move then walks one short list, not three.
 * An entry packs the slot and the mask in 4 bytes; order is not kept, so
 * removal is a swap with the last entry.
 */
#ifndef PERCEPT_PAIR_LIST_H
#define PERCEPT_PAIR_LIST_H

#include <stdint.h>

#include "percept.h"

/* The mask takes the low bits of an entry; the slot the rest. */
#define PAIR_MASK_BITS 3
#define PAIR_MASK ((1u << PAIR_MASK_BITS) - 1)
/* Slots must fit beside the mask: the world holds at most this many entities. */
#define PAIR_SLOT_LIMIT (UINT32_MAX >> PAIR_MASK_BITS)
#define PAIR_NONE UINT32_MAX

_Static_assert(PERCEPT_SENSE_COUNT <= PAIR_MASK_BITS, "a pair's mask must hold every sense");

static inline uint32_t pair_entry(uint32_t slot, unsigned mask)
{
    return slot << PAIR_MASK_BITS | mask;
}
static inline uint32_t pair_slot(uint32_t entry)
{
    return entry >> PAIR_MASK_BITS;
}
static inline unsigned pair_mask(uint32_t entry)
{
    return entry & PAIR_MASK;
}

typedef struct pair_list {
    uint32_t *items;
    uint32_t len, cap;
} pair_list;

/* Make room for `extra` more entries at once (spare room is invisible);
 * fails (-1) only when out of memory, leaving the list as it was. */
int pair_list_reserve(const percept_allocator *a, pair_list *list, uint32_t extra);
/* Append; fails (-1) only when out of memory, leaving the list as it was. */
int pair_list_push(const percept_allocator *a, pair_list *list, uint32_t entry);
/* The index of `slot`'s entry, or PAIR_NONE. */
uint32_t pair_list_find(const pair_list *list, uint32_t slot);
/* Give `slot`'s entry the mask `mask`, removing it when the mask is 0. */
void pair_list_set(pair_list *list, uint32_t slot, unsigned mask);
/* Drop every entry whose mask is 0, keeping the order of the others. */
void pair_list_compact(pair_list *list);
void pair_list_free(const percept_allocator *a, pair_list *list);

#endif
