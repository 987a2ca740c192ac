/*
 * badparam.c - test backend that works (brute force over flat arrays) but
 * accepts only one parameter, `level` (an integer 1..3), so the tests can
 * check how the host reports a parameter a backend rejects.
 */
#include <percept/backend.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct percept_backend {
    const percept_backend_host *host;
    uint32_t capacity;
    double *x, *y;
    unsigned char *present;
};

static void set_error(percept_backend_error *error, int index, const char *text)
{
    error->param_index = index;
    snprintf(error->text, sizeof error->text, "%s", text);
}

static int parse_level(const char *value)
{
    char *end;
    errno = 0;
    long level = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno != 0 || level < 1 || level > 3)
        return -1;
    return (int)level;
}

static percept_backend *bp_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        if (strcmp(p->key, "level") != 0) {
            set_error(error, (int)i, "unknown key");
            return NULL;
        }
        if (parse_level(p->value) < 0) {
            set_error(error, (int)i, "must be an integer from 1 to 3");
            return NULL;
        }
    }
    percept_backend *b = setup->host->alloc(setup->host->user, NULL, sizeof *b);
    if (b == NULL) {
        set_error(error, -1, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->host = setup->host;
    return b;
}

static void bp_destroy(percept_backend *b)
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

static int bp_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                      double y, double range)
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

static void bp_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    (void)range;
    b->x[slot] = x;
    b->y[slot] = y;
    b->present[slot] = 1;
}

static void bp_remove(percept_backend *b, percept_slot slot)
{
    b->present[slot] = 0;
}

static void bp_query(const percept_backend *b, double x, double y, double r,
                     percept_backend_visit visit, void *ctx)
{
    for (uint32_t s = 0; s < b->capacity; s++) {
        if (!b->present[s])
            continue;
        double dx = b->x[s] - x, dy = b->y[s] - y;
        if (dx * dx + dy * dy <= r * r)
            visit(ctx, s);
    }
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "badparam",
    .description = "test backend: brute force, accepts only level = 1..3",
    .create = bp_create,
    .destroy = bp_destroy,
    .reserve = bp_reserve,
    .insert = bp_insert,
    .update = bp_insert,
    .remove = bp_remove,
    .query = bp_query,
};

/* Declared here as backend.h has no prototype for it (-Wmissing-prototypes). */
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
