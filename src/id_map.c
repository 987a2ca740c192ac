/*
 * id_map.c - ID to slot hash table (see id_map.h).
 */
#include "id_map.h"

#include "alloc.h"

static size_t bucket_of(const id_map *map, uint32_t id)
{
    /* Fibonacci hashing spreads sequential IDs, the common case, over the table. */
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & map->mask;
}

uint32_t id_map_find(const id_map *map, uint32_t id)
{
    if (!map->buckets)
        return ID_MAP_NONE;
    for (size_t i = bucket_of(map, id);; i = (i + 1) & map->mask) {
        const id_map_entry *e = &map->buckets[i];
        if (e->slot == ID_MAP_NONE)
            return ID_MAP_NONE;
        if (e->id == id)
            return e->slot;
    }
}

static void place(id_map *map, uint32_t id, uint32_t slot)
{
    size_t i = bucket_of(map, id);
    while (map->buckets[i].slot != ID_MAP_NONE)
        i = (i + 1) & map->mask;
    map->buckets[i].id = id;
    map->buckets[i].slot = slot;
}

int id_map_reserve(const percept_allocator *a, id_map *map, size_t count)
{
    size_t buckets = map->buckets ? map->mask + 1 : 0;
    if (count * 2 <= buckets) /* keep the load at or below one half */
        return 0;
    size_t n = buckets ? buckets : 64;
    while (n < count * 2) {
        if (n > SIZE_MAX / 2 / sizeof(id_map_entry))
            return -1;
        n *= 2;
    }
    id_map_entry *fresh = pc_alloc(a, n * sizeof *fresh);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < n; i++)
        fresh[i].slot = ID_MAP_NONE;
    id_map old = *map;
    map->buckets = fresh;
    map->mask = n - 1;
    for (size_t i = 0; i < buckets; i++)
        if (old.buckets[i].slot != ID_MAP_NONE)
            place(map, old.buckets[i].id, old.buckets[i].slot);
    pc_free(a, old.buckets);
    return 0;
}

void id_map_insert(id_map *map, uint32_t id, uint32_t slot)
{
    place(map, id, slot);
    map->count++;
}

void id_map_erase(id_map *map, uint32_t id)
{
    if (!map->buckets)
        return;
    size_t i = bucket_of(map, id);
    while (map->buckets[i].slot != ID_MAP_NONE && map->buckets[i].id != id)
        i = (i + 1) & map->mask;
    if (map->buckets[i].slot == ID_MAP_NONE)
        return;
    /* Backward-shift: pull later members of the probe run into the hole so
     * that lookups can keep stopping at the first empty bucket. */
    size_t hole = i;
    for (size_t j = (i + 1) & map->mask; map->buckets[j].slot != ID_MAP_NONE;
         j = (j + 1) & map->mask) {
        size_t home = bucket_of(map, map->buckets[j].id);
        /* Move j into the hole unless its home lies cyclically in (hole, j]. */
        int home_between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_between) {
            map->buckets[hole] = map->buckets[j];
            hole = j;
        }
    }
    map->buckets[hole].slot = ID_MAP_NONE;
    map->count--;
}

void id_map_free(const percept_allocator *a, id_map *map)
{
    pc_free(a, map->buckets);
    *map = (id_map){NULL, 0, 0};
}
