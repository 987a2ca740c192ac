/*
 * entry_block.h - the entities of one cell (or tower) as one block: what a
 * query reads of each entity, in a single array, so a cell's candidates are
 * one sequential read rather than a chain of misses. grid, hashgrid and tower
 * keep one block per occupied cell and, per slot, where its entry is.
 */
#ifndef PERCEPT_ENTRY_BLOCK_H
#define PERCEPT_ENTRY_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

typedef struct block_entry {
    double x, y;
    uint32_t slot;
} block_entry;

/* The count and capacity in front of the entries. */
typedef struct entry_block {
    uint32_t count, cap;
    block_entry items[];
} entry_block;

/* No entry: what entry_block_remove() returns when nothing moved. */
#define ENTRY_BLOCK_NONE UINT32_MAX

/*
 * Room for one more entry in *block: makes it with `first` entries when it
 * is NULL, doubles it when full. Returns 0, or -1 when out of memory with
 * *block unchanged. *bytes, the caller's total of block bytes, follows.
 */
int entry_block_reserve(const percept_backend_host *host, entry_block **block, uint32_t first,
                        size_t *bytes);

/* Appends an entry (reserve() made room); returns its index. */
uint32_t entry_block_push(entry_block *block, uint32_t slot, double x, double y);

/* Removes entry i by moving the last one into its place; returns the slot
 * of the entry now at i, for the caller's index, or ENTRY_BLOCK_NONE. */
uint32_t entry_block_remove(entry_block *block, uint32_t i);

/* Bytes of a block of `cap` entries. */
size_t entry_block_bytes(uint32_t cap);

#endif
