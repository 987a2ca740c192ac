/*
 * world.h - the world's private layout: entity records by slot, the pair
 * state of each sense (the single source of truth for who perceives whom),
 * each sense's backend and observer grid.
 */
#ifndef PERCEPT_WORLD_H
#define PERCEPT_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "event_buffer.h"
#include "id_map.h"
#include "observer_grid.h"
#include "pair_list.h"
#include "percept.h"
#include "plugin.h"

/* One entity; 48 bytes, the fields an exact check reads, together. */
typedef struct entity {
    double x, y;
    double range[PERCEPT_SENSE_COUNT];
    percept_id id;
    uint8_t hidden; /* PERCEPT_SENSE_BIT()s */
    uint8_t alive;
} entity;

typedef struct sense_state {
    plugin plugin;
    percept_backend *backend;
    percept_backend_host host;
    observer_grid grid;
    pair_list *seen;    /* [slot]: the targets the entity perceives */
    pair_list *seen_by; /* [slot]: the observers that perceive it */
} sense_state;

struct percept_world {
    percept_allocator alloc;
    entity *ents;         /* [slot_cap] */
    uint32_t *mark;       /* [slot_cap]: visit stamps that dedupe candidates */
    uint32_t *free_slots; /* [slot_cap]: slots to reuse, a stack */
    size_t slot_cap;
    uint32_t slot_count; /* slots ever used: the high-water mark */
    uint32_t free_count;
    uint32_t epoch;
    id_map ids;
    sense_state sense[PERCEPT_SENSE_COUNT];
    event_buffer events;
    percept_event_fn on_event;
    void *on_event_user;
    int in_callback;
    int move_events;
    percept_bounds bounds;
    char errmsg[512];
};

#endif
