/*
 * pair_list.c - growing, searching and freeing pair lists (see pair_list.h).
 */
#include "pair_list.h"

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

int pair_list_reserve(const percept_allocator *a, pair_list *list, uint32_t extra)
{
    uint64_t need = (uint64_t)list->len + extra;
    if (need <= list->cap)
        return 0;
    /* Grow by half from 4, not double from 8: slack is much of an
     * entity's memory. */
    uint64_t cap = list->cap ? (uint64_t)list->cap + list->cap / 2 + 1 : 4;
    if (cap < need)
        cap = need;
    if (need > UINT32_MAX || cap > SIZE_MAX / sizeof(pair))
        return -1;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    pair *items = a->alloc(a->user, list->items, (size_t)cap * sizeof(pair));
    if (!items)
        return -1;
    list->items = items;
    list->cap = (uint32_t)cap;
    return 0;
}

uint32_t pair_list_find(const pair_list *list, uint32_t slot)
{
    for (uint32_t i = 0; i < list->len; i++)
        if (pair_slot(&list->items[i]) == slot)
            return i;
    return PAIR_NONE;
}

void pair_list_give_back(const percept_allocator *a, pair_list *list)
{
    list->items = pc_give_back(a, list->items, sizeof(pair), list->len, &list->cap);
}

void pair_list_free(const percept_allocator *a, pair_list *list)
{
    pc_free(a, list->items);
    *list = (pair_list){NULL, 0, 0};
}
