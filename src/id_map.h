/*
 * id_map.h - maps the caller's 32-bit entity IDs to the core's dense slots:
 * an open-addressing hash table with linear probing and backward-shift
 * deletion, so lookups touch one or two cache lines and need no tombstones.
 */
#ifndef PERCEPT_ID_MAP_H
#define PERCEPT_ID_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

#define ID_MAP_NONE UINT32_MAX

typedef struct id_map_entry {
    uint32_t id;
    uint32_t slot; /* ID_MAP_NONE marks an empty bucket: every ID value is valid */
} id_map_entry;

typedef struct id_map {
    id_map_entry *buckets;
    size_t mask; /* bucket count - 1 (a power of two), or 0 before the first reserve */
    size_t count;
} id_map;

uint32_t id_map_find(const id_map *map, uint32_t id);
/* Make room for `count` entries; afterwards inserting up to that many cannot fail. */
int id_map_reserve(const percept_allocator *a, id_map *map, size_t count);
/* Insert an ID known to be absent; the caller has reserved room. */
void id_map_insert(id_map *map, uint32_t id, uint32_t slot);
void id_map_erase(id_map *map, uint32_t id);
void id_map_free(const percept_allocator *a, id_map *map);
/* Bytes the map holds from its allocator. */
static inline size_t id_map_bytes(const id_map *map)
{
    return map->buckets ? (map->mask + 1) * sizeof *map->buckets : 0;
}

#endif
