/*
 * noquery.c - broken test backend: the mandatory query operation is NULL, so
 * the host must refuse the table and name the missing operation.
 */
#include <percept/backend.h>

#include "stub_ops.h"

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "noquery",
    .description = "test backend without query",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = NULL, /* the fault: a mandatory operation missing */
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
