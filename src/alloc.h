/*
 * alloc.h - the world's allocator: every byte the core and its backends hold
 * comes through one percept_allocator, so a caller can account for memory or
 * inject failures.
 */
#ifndef PERCEPT_ALLOC_H
#define PERCEPT_ALLOC_H

#include <stddef.h>

#include "percept.h"

/* The allocator used when the caller gives none: the C library's. */
void *percept_default_alloc(void *user, void *ptr, size_t size);

static inline void *pc_alloc(const percept_allocator *a, size_t size)
{
    return size ? a->alloc(a->user, NULL, size) : NULL;
}

static inline void pc_free(const percept_allocator *a, void *ptr)
{
    if (ptr)
        a->alloc(a->user, ptr, 0);
}

/* A copy of s made with the allocator, or NULL when out of memory. */
char *pc_strdup(const percept_allocator *a, const char *s);

/*
 * Grow *array (of elem bytes each, *cap of them) to hold at least `need`,
 * doubling so appends are amortised O(1). Returns 0, or -1 with *array and
 * *cap untouched when out of memory or when the size would overflow.
 */
int pc_grow(const percept_allocator *a, void **array, size_t elem, size_t *cap, size_t need);

/*
 * Give back the room of `array` (elem bytes each, *cap of them, `len` in
 * use; the caller checks len <= *cap / 4): resize it to twice `len`, or free
 * it when `len` is 0, and return it. Never fails: if the allocator refuses,
 * the array keeps its block and *cap stays.
 */
void *pc_give_back(const percept_allocator *a, void *array, size_t elem, uint32_t len,
                   uint32_t *cap);

#endif
