/*
 * pair_list.c - unordered slot lists holding the core's pair state.
 */
#include "pair_list.h"

#include "alloc.h"

int pair_list_push(const percept_allocator *a, pair_list *list, uint32_t slot)
{
    if (list->len == list->cap) {
        size_t cap = list->cap;
        void *items = list->items;
        if (list->len == UINT32_MAX || pc_grow(a, &items, sizeof(uint32_t), &cap, list->len + 1))
            return -1;
        list->items = items;
        list->cap = cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
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
