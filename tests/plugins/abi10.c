/*
 * abi10.c - test backend built as a plugin of backend ABI 1.0: its table is
 * the 1.0 layout, which ends at memory_usage, before query_hints (added in
 * 1.1). A host must load it and read nothing past its struct_size; under
 * AddressSanitizer a read beyond the table is a reported error. The index
 * is the shared brute force of flat_index.c; it takes no parameters.
 */
#include <percept/backend.h>

#include "flat_index.h"

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

static percept_backend *old_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    if (setup->param_count > 0) {
        error->param_index = 0;
        snprintf(error->text, sizeof error->text, "abi10 takes no parameters");
        return NULL;
    }
    return flat_create(setup, error);
}

static const ops_1_0 ops = {
    .abi_version = (uint32_t)1 << 16,
    .struct_size = sizeof(ops_1_0),
    .name = "abi10",
    .description = "test backend: an ABI 1.0 table (no query_hints), brute force",
    .create = old_create,
    .destroy = flat_destroy,
    .reserve = flat_reserve,
    .insert = flat_insert,
    .update = flat_insert,
    .remove = flat_remove,
    .query = flat_query,
    .memory_usage = NULL,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return (const percept_backend_ops *)(const void *)&ops;
}
