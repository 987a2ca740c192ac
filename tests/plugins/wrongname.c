/*
 * wrongname.c - broken test backend: the file is wrongname.so but its table
 * says "somethingelse", so the host must refuse it and name both.
 */
#include <percept/backend.h>

#include "stub_ops.h"

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "somethingelse", /* the fault: not the file's name */
    .description = "test backend with a mismatched name",
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
