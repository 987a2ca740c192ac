/*
 * undefsym.c - broken test backend: a sound table, but the plugin refers to
 * a variable that nothing defines, as a plugin built without the library it
 * needs does. A data reference is bound when the plugin is loaded, so the
 * host's dlopen() must fail, and its message say what to check.
 */
#include <percept/backend.h>

#include "stub_ops.h"

/* Defined nowhere: the link of a module allows it, the loader does not. */
extern int percept_test_symbol_nothing_defines;

static percept_backend *undef_create(const percept_backend_setup *setup,
                                     percept_backend_error *error)
{
    if (percept_test_symbol_nothing_defines != 0) { /* read, so the reference stays */
        error->param_index = -1;
        return NULL;
    }
    return stub_create(setup, error);
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "undefsym",
    .description = "test backend referring to an undefined symbol",
    .create = undef_create,
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
