/*
 * smallsize.c - broken test backend: its table claims to be 16 bytes long,
 * too small to hold the mandatory operations, so the host must refuse it.
 */
#include <percept/backend.h>

#include "stub_ops.h"

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = 16, /* the fault: ends after name, before every operation */
    .name = "smallsize",
    .description = "test backend with a truncated table",
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
