/*
 * pair_list.h - one side of the perception relation for one entity and
 * sense: the slots it perceives, or the slots perceiving it. A flat array
 * (4 bytes a pair) because lists are short and scanned whole on every move;
 * order is not kept, so removal is a swap with the last element.
 */
#ifndef PERCEPT_PAIR_LIST_H
#define PERCEPT_PAIR_LIST_H

#include <stdint.h>

#include "percept.h"

typedef struct pair_list {
    uint32_t *items;
    uint32_t len, cap;
} pair_list;

/* Append; fails (-1) only when out of memory, leaving the list as it was. */
int pair_list_push(const percept_allocator *a, pair_list *list, uint32_t slot);
/* Remove `slot` if present; returns 1 if it was there. Never fails. */
int pair_list_remove(pair_list *list, uint32_t slot);
int pair_list_contains(const pair_list *list, uint32_t slot);
void pair_list_free(const percept_allocator *a, pair_list *list);

#endif
