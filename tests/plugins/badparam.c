/*
 * badparam.c - test backend that works (brute force over flat arrays) but
 * accepts only one parameter, `level` (an integer 1..3), so the tests can
 * check how the host reports a parameter a backend rejects; `misreport`
 * makes it blame a parameter index past those it was given. Three more keys
 * make create() fail blaming no parameter: `whole` refuses the setup with a
 * reason, `silent` without one, and `hungry` after asking the host for a
 * 2 GiB block (test_plugin_load's allocator refuses anything above 1 GiB:
 * a block no allocator gives would abort a sanitizer's run instead).
 * `crowded = 1` makes reserve() refuse room for more than one entity.
 */
#include <percept/backend.h>

#include "flat_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void set_error(percept_backend_error *error, int index, const char *text)
{
    error->param_index = index;
    snprintf(error->text, sizeof error->text, "%s", text);
}

static int parse_level(const char *value)
{
    char *end;
    errno = 0;
    long level = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno != 0 || level < 1 || level > 3)
        return -1;
    return (int)level;
}

/* Set by `crowded`: a test plugin's instances live in one test at a time. */
static int crowded;

static int bp_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                      double y, double range)
{
    if (crowded && slot_count > 1)
        return -1;
    return flat_reserve(b, slot_count, slot, x, y, range);
}

static percept_backend *bp_create(const percept_backend_setup *setup, percept_backend_error *error)
{
    crowded = 0;
    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        if (strcmp(p->key, "misreport") == 0) { /* a plugin bug: blames no parameter given */
            set_error(error, (int)setup->param_count + 6, "rejected");
            return NULL;
        }
        if (strcmp(p->key, "whole") == 0) {
            set_error(error, -1, "these bounds need a larger size");
            return NULL;
        }
        if (strcmp(p->key, "silent") == 0) {
            set_error(error, -1, "");
            return NULL;
        }
        if (strcmp(p->key, "hungry") == 0) {
            void *block = setup->host->alloc(setup->host->user, NULL, (size_t)1 << 31);
            if (block != NULL) /* a test plugin must not leak either */
                setup->host->alloc(setup->host->user, block, 0);
            set_error(error, -1, "cannot allocate its index");
            return NULL;
        }
        if (strcmp(p->key, "mute") == 0) { /* blames its parameter but gives no reason */
            error->param_index = (int)i;
            error->text[0] = '\0';
            return NULL;
        }
        if (strcmp(p->key, "crowded") == 0) {
            crowded = 1;
            continue;
        }
        if (strcmp(p->key, "level") != 0) {
            set_error(error, (int)i, "unknown key");
            return NULL;
        }
        if (parse_level(p->value) < 0) {
            set_error(error, (int)i, "must be an integer from 1 to 3");
            return NULL;
        }
    }
    return flat_create(setup, error);
}

static const percept_backend_ops ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "badparam",
    .description = "test backend: brute force, accepts only level = 1..3",
    .create = bp_create,
    .destroy = flat_destroy,
    .reserve = bp_reserve,
    .insert = flat_insert,
    .update = flat_insert,
    .remove = flat_remove,
    .query = flat_query,
};

/* Declared here as backend.h has no prototype for it (-Wmissing-prototypes). */
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);
PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &ops;
}
