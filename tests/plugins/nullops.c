/*
 * nullops.c - broken test backend: the entry symbol exists but returns NULL,
 * so the host must refuse it instead of dereferencing the table.
 */
#include <percept/backend.h>

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return NULL;
}
