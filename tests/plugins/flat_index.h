/*
 * flat_index.h - the index the working test plugins share: positions in
 * flat arrays by slot, every query a scan with the exact test. Each plugin
 * adds only what it tests (its parameters, its ABI table).
 */
#ifndef PERCEPT_TEST_FLAT_INDEX_H
#define PERCEPT_TEST_FLAT_INDEX_H

#include <percept/backend.h>

/* Internal to each plugin: only the entry symbol may be exported. */
#define FLAT_INTERNAL __attribute__((visibility("hidden")))

/* An empty index, or NULL (error filled) when out of memory. */
FLAT_INTERNAL percept_backend *flat_create(const percept_backend_setup *setup,
                                           percept_backend_error *error);
FLAT_INTERNAL void flat_destroy(percept_backend *b);
FLAT_INTERNAL int flat_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                               double y, double range);
FLAT_INTERNAL void flat_insert(percept_backend *b, percept_slot slot, double x, double y,
                               double range);
FLAT_INTERNAL void flat_remove(percept_backend *b, percept_slot slot);
FLAT_INTERNAL void flat_query(const percept_backend *b, double x, double y, double r,
                              percept_backend_visit visit, void *ctx);

#endif
