/*
 * stub_ops.h - do-nothing operations for the broken test plugins, which the
 * host must refuse before it calls any of them: each plugin then holds only
 * the table entry it breaks. Header-only and static inline, so a plugin that
 * leaves one out (noquery) gets no unused-function warning.
 */
#ifndef PERCEPT_TEST_STUB_OPS_H
#define PERCEPT_TEST_STUB_OPS_H

#include <percept/backend.h>

/* Just enough state to free itself through the host, should a create() slip through. */
struct percept_backend {
    const percept_backend_host *host;
};

static inline percept_backend *stub_create(const percept_backend_setup *setup,
                                           percept_backend_error *error)
{
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        error->param_index = -1;
        error->text[0] = '\0';
        return NULL;
    }
    b->host = setup->host;
    return b;
}

static inline void stub_destroy(percept_backend *b)
{
    b->host->alloc(b->host->user, b, 0);
}

static inline int stub_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                               double y, double range)
{
    (void)b;
    (void)slot_count;
    (void)slot;
    (void)x;
    (void)y;
    (void)range;
    return 0;
}

/* Both insert and update: nothing is indexed. */
static inline void stub_place(percept_backend *b, percept_slot slot, double x, double y,
                              double range)
{
    (void)b;
    (void)slot;
    (void)x;
    (void)y;
    (void)range;
}

static inline void stub_remove(percept_backend *b, percept_slot slot)
{
    (void)b;
    (void)slot;
}

static inline void stub_query(const percept_backend *b, double x, double y, double r,
                              percept_backend_visit visit, void *ctx)
{
    (void)b;
    (void)x;
    (void)y;
    (void)r;
    (void)visit;
    (void)ctx;
}

#endif
