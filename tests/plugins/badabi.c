/*
 * badabi.c - broken test backend: its table claims ABI major version 2, which
 * the host (major 1) must refuse before reading anything else.
 */
#include <percept/backend.h>

#include "stub_ops.h"

static const percept_backend_ops ops = {
    /* The fault: a future major version. */
    .abi_version = ((uint32_t)2 << 16) | (uint32_t)PERCEPT_BACKEND_ABI_MINOR,
    .struct_size = sizeof(percept_backend_ops),
    .name = "badabi",
    .description = "test backend of a future ABI",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = stub_query,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
