/*
 * pair_list.c - unordered slot lists holding the core's pair state.
 */
#include "pair_list.h"

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

int pair_list_push(const percept_allocator *a, pair_list *list, uint32_t slot)
{
    if (list->len == list->cap) {
        /* Grow by half from 4, not double from 8: there are six lists per
         * entity, so slack is most of an entity's memory. */
        uint64_t cap = list->cap ? (uint64_t)list->cap + list->cap / 2 + 1 : 4;
        if (cap > UINT32_MAX)
            cap = UINT32_MAX;
        if (list->len == UINT32_MAX || cap > SIZE_MAX / sizeof(uint32_t))
            return -1;
        uint32_t *items = a->alloc(a->user, list->items, (size_t)cap * sizeof(uint32_t));
        if (!items)
            return -1;
        list->items = items;
        list->cap = (uint32_t)cap;
    }
    list->items[list->len++] = slot;
    return 0;
}

int pair_list_remove(pair_list *list, uint32_t slot)
{
    /* Search from the end: the pair just added, the one undone first on a
     * failure, is found at once. */
    for (uint32_t i = list->len; i-- > 0;) {
        if (list->items[i] == slot) {
            list->items[i] = list->items[--list->len];
            return 1;
        }
    }
    return 0;
}

int pair_list_contains(const pair_list *list, uint32_t slot)
{
    for (uint32_t i = 0; i < list->len; i++)
        if (list->items[i] == slot)
            return 1;
    return 0;
}

void pair_list_free(const percept_allocator *a, pair_list *list)
{
    pc_free(a, list->items);
    list->items = NULL;
    list->len = list->cap = 0;
}
