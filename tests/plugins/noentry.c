/*
 * noentry.c - broken test backend: a complete table, but exported under the
 * wrong symbol, so the host's dlsym of percept_backend_entry must fail.
 */
#include <percept/backend.h>

#include "stub_ops.h"

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "noentry",
    .description = "test backend without the entry symbol",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = stub_query,
};

/* Deliberately not PERCEPT_BACKEND_ENTRY_SYMBOL; declared first for -Wmissing-prototypes. */
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry_point(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry_point(void)
{
    return &ops;
}
