/*
 * bruteforce.c - the reference backend: a dense array of every entity,
 * scanned whole by each query. O(n) per query and no cleverness to get
 * wrong, which makes it the plainest answer every other backend is compared
 * with. It tests the planar distance alone: in three dimensions a superset,
 * which the host narrows by its exact test, and no slower in two.
 */
#include <stdint.h>
#include <string.h>

#include "percept/backend.h"

#include "../src/ieee_double.h" /* the reference: in the specification's arithmetic */

typedef struct point {
    double x, y;
    percept_slot slot;
} point;

struct percept_backend {
    const percept_backend_host *host;
    point *points;   /* dense: the entities, in no order */
    uint32_t *index; /* [slot]: position in points */
    uint32_t count;
    /* Each array's own capacity: a reserve that ran out of memory may have
     * grown one and not the other, and memory_usage() counts what is held. */
    size_t points_cap, index_cap;
};

static percept_backend *bf_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    if (setup->param_count > 0) {
        error->param_index = 0;
        strcpy(error->text, "unknown parameter (bruteforce takes no parameters)");
        return NULL;
    }
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (!b) {
        error->param_index = -1;
        strcpy(error->text, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->host = setup->host;
    return b;
}

static void bf_destroy(percept_backend *b)
{
    const percept_backend_host *h = b->host;
    h->alloc(h->user, b->points, 0);
    h->alloc(h->user, b->index, 0);
    h->alloc(h->user, b, 0);
}

static int bf_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                      double y, double z, double range)
{
    (void)slot, (void)x, (void)y, (void)z, (void)range;
    if (slot_count <= b->points_cap && slot_count <= b->index_cap)
        return 0;
    size_t cap = 64; /* the same powers of two for both arrays */
    while (cap < slot_count)
        cap *= 2;
    if (b->points_cap < cap) {
        point *points = b->host->alloc(b->host->user, b->points, cap * sizeof *points);
        if (!points)
            return -1;
        b->points = points;
        b->points_cap = cap;
    }
    if (b->index_cap < cap) {
        uint32_t *index = b->host->alloc(b->host->user, b->index, cap * sizeof *index);
        if (!index)
            return -1; /* points grew, which only memory_usage() sees; the next reserve goes on */
        b->index = index;
        b->index_cap = cap;
    }
    return 0;
}

static void bf_insert(percept_backend *b, percept_slot slot, double x, double y, double z,
                      double range)
{
    (void)z, (void)range;
    b->index[slot] = b->count;
    b->points[b->count++] = (point){x, y, slot};
}

static void bf_update(percept_backend *b, percept_slot slot, double x, double y, double z,
                      double range)
{
    (void)z, (void)range;
    point *p = &b->points[b->index[slot]];
    p->x = x;
    p->y = y;
}

static void bf_remove(percept_backend *b, percept_slot slot)
{
    uint32_t i = b->index[slot];
    b->points[i] = b->points[--b->count];
    b->index[b->points[i].slot] = i;
}

static void bf_query(const percept_backend *b, double x, double y, double z, double r,
                     percept_backend_visit visit, void *ctx)
{
    (void)z;
    double r2 = r * r;
    for (uint32_t i = 0; i < b->count; i++) {
        double dx = b->points[i].x - x, dy = b->points[i].y - y;
        if (dx * dx + dy * dy <= r2)
            visit(ctx, b->points[i].slot);
    }
}

static size_t bf_memory_usage(const percept_backend *b)
{
    return sizeof *b + b->points_cap * sizeof(point) + b->index_cap * sizeof(uint32_t);
}

static const percept_backend_ops bruteforce_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "bruteforce",
    .description = "scans every entity; the reference for exactness",
    .create = bf_create,
    .destroy = bf_destroy,
    .reserve = bf_reserve,
    .insert = bf_insert,
    .update = bf_update,
    .remove = bf_remove,
    .query = bf_query,
    .memory_usage = bf_memory_usage,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &bruteforce_ops;
}
