/*
 * abi10.c - test backend built as a plugin of backend ABI 1.0: its table is
 * the 1.0 layout, which ends at memory_usage, before query_hints (added in
 * 1.1). A host must load it and read nothing past its struct_size; under
 * AddressSanitizer a read beyond the table is a reported error. The index
 * itself is brute force over flat arrays; it takes no parameters.
 */
#include <percept/backend.h>

#include <stdio.h>
#include <string.h>

/* percept_backend_ops as ABI 1.0 defined it, field for field. */
typedef struct ops_1_0 {
    uint32_t abi_version;
    uint32_t struct_size;
    const char *name;
    const char *description;
    percept_backend *(*create)(const percept_backend_setup *setup, percept_backend_error *error);
    void (*destroy)(percept_backend *backend);
    int (*reserve)(percept_backend *backend, uint32_t slot_count, percept_slot slot, double x,
                   double y, double range);
    void (*insert)(percept_backend *backend, percept_slot slot, double x, double y, double range);
    void (*update)(percept_backend *backend, percept_slot slot, double x, double y, double range);
    void (*remove)(percept_backend *backend, percept_slot slot);
    void (*query)(const percept_backend *backend, double x, double y, double r,
                  percept_backend_visit visit, void *ctx);
    size_t (*memory_usage)(const percept_backend *backend);
} ops_1_0;

_Static_assert(sizeof(ops_1_0) == offsetof(percept_backend_ops, query_hints),
               "ops_1_0 must be the prefix of percept_backend_ops before query_hints");

struct percept_backend {
    const percept_backend_host *host;
    uint32_t capacity;
    double *x, *y;
    unsigned char *present;
};

static percept_backend *old_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    if (setup->param_count > 0) {
        error->param_index = 0;
        snprintf(error->text, sizeof error->text, "abi10 takes no parameters");
        return NULL;
    }
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

static void old_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    host->alloc(host->user, b->x, 0);
    host->alloc(host->user, b->y, 0);
    host->alloc(host->user, b->present, 0);
    host->alloc(host->user, b, 0);
}

static int grow(const percept_backend_host *host, void **array, uint32_t count, size_t size)
{
    void *p = host->alloc(host->user, *array, (size_t)count * size);
    if (p == NULL)
        return -1;
    *array = p;
    return 0;
}

static int old_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
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

static void old_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    (void)range;
    b->x[slot] = x;
    b->y[slot] = y;
    b->present[slot] = 1;
}

static void old_remove(percept_backend *b, percept_slot slot)
{
    b->present[slot] = 0;
}

/* Every entity: the widest superset, which the host must filter itself. */
static void old_query(const percept_backend *b, double x, double y, double r,
                      percept_backend_visit visit, void *ctx)
{
    (void)x;
    (void)y;
    (void)r;
    for (uint32_t s = 0; s < b->capacity; s++)
        if (b->present[s])
            visit(ctx, s);
}

static const ops_1_0 ops = {
    .abi_version = (uint32_t)1 << 16,
    .struct_size = sizeof(ops_1_0),
    .name = "abi10",
    .description = "test backend: an ABI 1.0 table (no query_hints), brute force",
    .create = old_create,
    .destroy = old_destroy,
    .reserve = old_reserve,
    .insert = old_insert,
    .update = old_insert,
    .remove = old_remove,
    .query = old_query,
    .memory_usage = NULL,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return (const percept_backend_ops *)(const void *)&ops;
}
