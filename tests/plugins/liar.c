/*
 * liar.c - test backend whose queries answer with everything they may, and
 * with what they must not: each exact find twice, then every slot from 0 to
 * two past the highest it was told of (slots never used, slots of removed
 * entities, the querying entity's own), and UINT32_MAX. The ABI allows a
 * superset and duplicates; the host must drop the rest. With it the
 * relation must come out exactly as with an honest backend (liar.test). It
 * says its queries are local, so the core also takes near observers from
 * its answers (one query serves a move's targets and its near observers).
 */
#include <percept/backend.h>

#include "flat_index.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The index itself (flat_index.c), and the highest slot it was told of. */
typedef struct liar {
    percept_backend *flat;
    const percept_backend_host *host;
    uint32_t limit; /* 1 + the highest slot given to reserve() */
} liar;

static liar *as_liar(const percept_backend *b)
{
    return (liar *)(uintptr_t)b;
}

static percept_backend *liar_create(const percept_backend_setup *setup,
                                    percept_backend_error *error)
{
    if (setup->param_count > 0) {
        error->param_index = 0;
        snprintf(error->text, sizeof error->text, "liar takes no parameters");
        return NULL;
    }
    liar *l = setup->host->alloc(setup->host->user, NULL, sizeof *l);
    if (l == NULL) {
        error->param_index = -1;
        snprintf(error->text, sizeof error->text, "out of memory");
        return NULL;
    }
    memset(l, 0, sizeof *l);
    l->host = setup->host;
    l->flat = flat_create(setup, error);
    if (l->flat == NULL) {
        setup->host->alloc(setup->host->user, l, 0);
        return NULL;
    }
    return (percept_backend *)(void *)l;
}

static void liar_destroy(percept_backend *b)
{
    liar *l = as_liar(b);
    flat_destroy(l->flat);
    l->host->alloc(l->host->user, l, 0);
}

static int liar_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double range)
{
    liar *l = as_liar(b);
    if (flat_reserve(l->flat, slot_count, slot, x, y, range) != 0)
        return -1;
    if (slot_count > l->limit)
        l->limit = slot_count;
    if (slot != UINT32_MAX && slot + 1 > l->limit)
        l->limit = slot + 1;
    return 0;
}

static void liar_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    flat_insert(as_liar(b)->flat, slot, x, y, range);
}

static void liar_remove(percept_backend *b, percept_slot slot)
{
    flat_remove(as_liar(b)->flat, slot);
}

static void liar_query(const percept_backend *b, double x, double y, double r,
                       percept_backend_visit visit, void *ctx)
{
    const liar *l = as_liar(b);
    flat_query(l->flat, x, y, r, visit, ctx);
    flat_query(l->flat, x, y, r, visit, ctx);
    for (uint32_t s = 0; s < l->limit + 2; s++)
        visit(ctx, s);
    visit(ctx, UINT32_MAX);
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "liar",
    .description = "test backend: exact finds twice, then every slot, dead or not, and beyond",
    .create = liar_create,
    .destroy = liar_destroy,
    .reserve = liar_reserve,
    .insert = liar_insert,
    .update = liar_insert,
    .remove = liar_remove,
    .query = liar_query,
    .memory_usage = NULL,
    .query_hints = PERCEPT_BACKEND_QUERY_LOCAL,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
