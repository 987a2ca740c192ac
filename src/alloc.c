/*
 * alloc.c - the default allocator and helpers over the world's allocator.
 */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *percept_default_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

char *pc_strdup(const percept_allocator *a, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = pc_alloc(a, n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void *pc_give_back(const percept_allocator *a, void *array, size_t elem, uint32_t len,
                   uint32_t *cap)
{
    if (len == 0) {
        pc_free(a, array);
        *cap = 0;
        return NULL;
    }
    void *p = a->alloc(a->user, array, (size_t)len * 2 * elem); /* len <= cap / 4: no overflow */
    if (!p)
        return array;
    *cap = len * 2;
    return p;
}

int pc_grow(const percept_allocator *a, void **array, size_t elem, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / elem)
        return -1;
    void *p = a->alloc(a->user, *array, n * elem);
    if (!p)
        return -1;
    *array = p;
    *cap = n;
    return 0;
}
