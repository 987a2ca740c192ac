/*
 * backend_util.h - helpers the shipped backends share: allocation through
 * the host, error reporting, and the strict parsing of numeric parameters.
 * Linked into each plugin as a convenience library; nothing here is exported.
 */
#ifndef PERCEPT_BACKEND_UTIL_H
#define PERCEPT_BACKEND_UTIL_H

#include <stddef.h>

#include "percept/backend.h"

/* Allocate, resize or free (size 0) through the host's allocator. */
void *backend_host_alloc(const percept_backend_host *host, void *ptr, size_t size);

/* Fill *error (when not NULL) with the index of the parameter to blame, or -1, and a reason. */
void backend_set_error(percept_backend_error *error, int param_index, const char *text);

/*
 * A plain decimal number greater than 0 (digits, optional fraction and
 * exponent; "inf", "nan" and hex forms, which strtod would take, are
 * refused) whose inverse is finite too, as cell arithmetic multiplies by it.
 * Returns 0 and sets *out, or -1.
 */
int backend_parse_positive(const char *text, double *out);

/*
 * The parameters of a backend that takes one size, `key` (cell_size,
 * tower_size): a positive number no larger than `limit` whose inverse is
 * no larger either. Any other key, a repeat or a bad value fills *error and
 * returns -1. On success *value holds the size (left as the caller's
 * default when the key is absent), *index the parameter's index or -1.
 */
int backend_size_param(const percept_backend_setup *setup, const char *backend, const char *key,
                       double limit, double *value, int *index, percept_backend_error *error);

#endif
