/*
 * crashy.c - broken test backend: a sound table, but its query kills the
 * process, so percept-plugin-check must report each check it crashes in,
 * by name and signal, and go on with the next. It traps (SIGILL) rather
 * than dereference a null pointer: the sanitizer build would catch a
 * SIGSEGV itself and exit instead of dying by the signal. With CRASHY_LOOP
 * set in the environment the query never returns instead, for --timeout;
 * with CRASHY_EXIT it ends the process with status 0, which must not pass.
 */
#include <percept/backend.h>

#include <stdlib.h>

#include "stub_ops.h"

static void crashy_query(const percept_backend *b, double x, double y, double r,
                         percept_backend_visit visit, void *ctx)
{
    (void)b;
    (void)x;
    (void)y;
    (void)r;
    (void)visit;
    (void)ctx;
    if (getenv("CRASHY_EXIT") != NULL)
        exit(0);
    if (getenv("CRASHY_LOOP") != NULL)
        for (volatile int forever = 1; forever;)
            continue;
    __builtin_trap(); /* the fault */
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "crashy",
    .description = "test backend whose query crashes",
    .create = stub_create,
    .destroy = stub_destroy,
    .reserve = stub_reserve,
    .insert = stub_place,
    .update = stub_place,
    .remove = stub_remove,
    .query = crashy_query,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
