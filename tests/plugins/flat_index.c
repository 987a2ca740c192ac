/*
 * flat_index.c - brute force over flat arrays, for the test plugins that
 * must work (see flat_index.h).
 */
#include "flat_index.h"

#include <stdio.h>
#include <string.h>

struct percept_backend {
    const percept_backend_host *host;
    uint32_t capacity;
    double *x, *y;
    unsigned char *present;
};

percept_backend *flat_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        error->param_index = -1;
        snprintf(error->text, sizeof error->text, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->host = setup->host;
    return b;
}

void flat_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    host->alloc(host->user, b->x, 0);
    host->alloc(host->user, b->y, 0);
    host->alloc(host->user, b->present, 0);
    host->alloc(host->user, b, 0);
}

/* Grow one array to `count` elements of `size` bytes; the old block stays valid on failure. */
static int grow(const percept_backend_host *host, void **array, uint32_t count, size_t size)
{
    void *p = host->alloc(host->user, *array, (size_t)count * size);
    if (p == NULL)
        return -1;
    *array = p;
    return 0;
}

int flat_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x, double y,
                 double range)
{
    (void)x;
    (void)y;
    (void)range;
    uint32_t need = slot_count > slot ? slot_count : slot + 1;
    if (need <= b->capacity)
        return 0;
    uint32_t cap = b->capacity ? b->capacity : 16;
    while (cap < need)
        cap *= 2;
    void *xs = b->x, *ys = b->y, *pr = b->present;
    if (grow(b->host, &xs, cap, sizeof(double)) != 0)
        return -1;
    b->x = xs;
    if (grow(b->host, &ys, cap, sizeof(double)) != 0)
        return -1;
    b->y = ys;
    if (grow(b->host, &pr, cap, 1) != 0)
        return -1;
    b->present = pr;
    memset(b->present + b->capacity, 0, cap - b->capacity);
    b->capacity = cap;
    return 0;
}

void flat_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    (void)range;
    b->x[slot] = x;
    b->y[slot] = y;
    b->present[slot] = 1;
}

void flat_remove(percept_backend *b, percept_slot slot)
{
    b->present[slot] = 0;
}

void flat_query(const percept_backend *b, double x, double y, double r, percept_backend_visit visit,
                void *ctx)
{
    for (uint32_t s = 0; s < b->capacity; s++) {
        if (!b->present[s])
            continue;
        double dx = b->x[s] - x, dy = b->y[s] - y;
        if (dx * dx + dy * dy <= r * r)
            visit(ctx, s);
    }
}
