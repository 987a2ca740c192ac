/*
 * world.h - the world's private layout: entity records by slot, the pair
 * state (the one truth of who perceives whom), the backend instances and
 * the observer grids. Senses configured alike share one instance, and
 * senses with one observer cell size one grid: one query serves them all.
 */
#ifndef PERCEPT_WORLD_H
#define PERCEPT_WORLD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "change_buffer.h"
#include "id_map.h"
#include "observer_grid.h"
#include "pair_list.h"
#include "percept.h"
#include "plugin.h"

/* One entity in one cache line (the array is 64-byte aligned): meeting a
 * neighbour reads its position and ranges and stamps it in a single line. */
typedef struct entity {
    double x, y;
    double range[PERCEPT_SENSE_COUNT]; /* NaN for a sense the entity lacks */
    percept_id id;
    uint32_t mark;  /* visit stamp that dedupes a pass's candidates */
    uint8_t hidden; /* PERCEPT_SENSE_BIT()s */
    uint8_t alive;
    uint8_t spare[14];
} entity;
_Static_assert(sizeof(entity) == 64, "an entity record is one cache line");

/* One move of a batch, checked: where the entity in `slot` goes. */
typedef struct batch_move {
    double x, y;
    uint32_t slot;
} batch_move;

/* One backend instance and the senses it indexes. */
typedef struct backend_group {
    plugin plugin;
    percept_backend *backend;
    percept_backend_host host; /* the world's allocator, through host_alloc() */
    const percept_allocator *alloc;
    int refused;     /* a request was refused: a failed create() is out of memory */
    unsigned senses; /* PERCEPT_SENSE_BIT()s */
} backend_group;

struct percept_world {
    percept_allocator alloc;
    entity *ents;         /* [slot_cap], 64-byte aligned inside ents_block */
    void *ents_block;     /* the allocation holding ents */
    uint32_t *free_slots; /* [slot_cap]: slots to reuse, a stack */
    size_t slot_cap;
    uint32_t slot_count; /* slots ever used: the high-water mark */
    uint32_t free_count;
    uint32_t epoch;
    id_map ids;
    /* [slot_cap]: whom the entity perceives and is perceived by, in which
     * senses. Any of them may hold room: an add that ran out of memory
     * leaves what it reserved in the slot it was to take. */
    pair_list *pairs;
    backend_group backends[PERCEPT_SENSE_COUNT];
    int backend_count;
    uint8_t backend_of[PERCEPT_SENSE_COUNT]; /* sense -> backends[] */
    /* One per observer cell size, then the near grids (choose_near_backends()). */
    observer_grid grids[2 * PERCEPT_SENSE_COUNT];
    uint8_t near_backend[2 * PERCEPT_SENSE_COUNT]; /* grid -> backend finding its near observers */
    int8_t near_of[2 * PERCEPT_SENSE_COUNT];       /* near grid -> the grid it serves; else -1 */
    int grid_count;
    change_buffer changes;
    /* percept_move_many()'s room, kept between calls: the checked moves (a
     * copy the callback cannot change) and 2 * batch_cap sort keys. */
    batch_move *batch;
    uint64_t *batch_keys;
    size_t batch_cap;
    percept_event_fn on_event;
    void *on_event_user;
    int in_callback;
    /* Closed from inside the callback: the delivering call stops and frees it. */
    int close_requested;
    /* Whose reserve() refused the change, for its message; NULL: the core's. */
    const backend_group *refused_by;
    int move_events;
    percept_bounds bounds;
    char errmsg[512];
    size_t err_index; /* the batch entry errmsg names, or SIZE_MAX (percept_errindex()) */
};

/* A coordinate the API accepts, in the bounds and every call. */
static inline int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static inline int valid_sense(percept_sense sense)
{
    return (unsigned)sense < PERCEPT_SENSE_COUNT;
}

/* Make room for `count` entities, so that adds up to that many grow no
 * array. Returns 0, or -1 out of memory, having changed only room. */
int world_reserve(percept_world *w, size_t count);

/* Free the world and all it holds, also when the callback closed it. */
void free_world(percept_world *w);

#endif
