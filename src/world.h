/*
 * world.h - the world's private layout: entity records by slot, the pair
 * state (the single source of truth for who perceives whom, in which
 * senses), the backend instances and the observer grids. Senses configured
 * with the same backend and parameters share one instance, and senses with
 * the same observer cell size share one grid: every instance would hold the
 * same positions, and one query then serves them all.
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

/*
 * One entity: one cache line (the array is aligned to 64 bytes), holding
 * what an exact check reads and the visit stamp a pass writes, so that
 * meeting a neighbour touches a single line.
 */
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

/* What a backend's host allocator works with: the world's allocator, and
 * whether it has refused a request (so that a create() that fails after a
 * refusal is reported as out of memory, not as a refused setup). */
typedef struct backend_host_state {
    const percept_allocator *alloc;
    int refused;
} backend_host_state;

/* One backend instance and the senses it indexes. */
typedef struct backend_group {
    plugin plugin;
    percept_backend *backend;
    percept_backend_host host;
    backend_host_state host_state;
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
    /* [slot_cap]: whom the entity perceives and is perceived by, with the senses */
    pair_list *pairs;
    backend_group backends[PERCEPT_SENSE_COUNT];
    int backend_count;
    uint8_t backend_of[PERCEPT_SENSE_COUNT]; /* sense -> backends[] */
    /* One per distinct observer cell size, then the near grids (see
     * choose_near_backends()). */
    observer_grid grids[2 * PERCEPT_SENSE_COUNT];
    /* grid -> backends[] that finds its near observers (see choose_near_backends()) */
    uint8_t near_backend[2 * PERCEPT_SENSE_COUNT];
    /* A near grid holds the near observers its grid (this index) only
     * counts; -1 for the other grids. */
    int8_t near_of[2 * PERCEPT_SENSE_COUNT];
    int grid_count;
    change_buffer changes;
    /* percept_move_many()'s room, kept from call to call: the checked moves
     * (a copy, so the callback cannot change one after its check) and
     * 2 * batch_cap sort keys (the second half is the sort's room). */
    batch_move *batch;
    uint64_t *batch_keys;
    size_t batch_cap;
    percept_event_fn on_event;
    void *on_event_user;
    int in_callback;
    /* percept_world_close() was called from inside the callback: the call
     * delivering stops delivering and closes the world before it returns. */
    int close_requested;
    /* The backend whose reserve() refused the change being made, for the
     * out-of-memory message; NULL when the core's own allocation failed. */
    const backend_group *refused_by;
    int move_events;
    percept_bounds bounds;
    char errmsg[512];
    size_t err_index; /* the batch entry errmsg names, or SIZE_MAX (percept_errindex()) */
};

/* A coordinate within what the API accepts: finite, at most
 * PERCEPT_COORD_LIMIT in magnitude. For creation's bounds and every call. */
static inline int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static inline int valid_sense(percept_sense sense)
{
    return (unsigned)sense < PERCEPT_SENSE_COUNT;
}

/* A record's range as the public API gives it back: a record keeps a lacking
 * sense's range as NaN (world.c), the API as 0. */
static inline double public_range(double range)
{
    return isnan(range) ? 0 : range;
}

/* Make room for `count` entities, so that adds up to that many grow no
 * array (world.c). Returns 0, or -1 out of memory with nothing changed
 * but room that stays unused. */
int world_reserve(percept_world *w, size_t count);

/* Free the world and everything it holds (world_open.c): for
 * percept_world_close(), and for a call whose callback closed the world. */
void free_world(percept_world *w);

#endif
