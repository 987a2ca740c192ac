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
#include "thread_pool.h"
#include "tick_grid.h"

/*
 * One entity: what an exact check reads, and the visit stamp a pass writes.
 * The world's array holds each record's first ENTITY_BYTES(sense_count)
 * bytes, a whole number of cache lines apart (one line for up to three
 * senses; the array is 64-byte aligned): meeting a neighbour reads and
 * stamps a single line. Copies (a change's next state) are whole structs.
 */
typedef struct entity {
    double x, y, z;
    percept_id id;
    uint32_t mark; /* visit stamp that dedupes a pass's candidates */
    uint32_t tags;
    uint8_t hidden; /* PERCEPT_SENSE_BIT()s */
    uint8_t alive;
    uint8_t shaped; /* 1: the world's shapes hold its facing, margins, cones and masks */
    uint8_t spare;
    double range[PERCEPT_MAX_SENSES]; /* NaN for a sense the entity lacks */
} entity;

#define ENTITY_BYTES(senses) (offsetof(entity, range) + (size_t)(senses) * sizeof(double))
/* log2 of the stride: one cache line for up to three senses, two for more. */
#define ENTITY_SHIFT(senses) (ENTITY_BYTES(senses) <= 64 ? 6 : 7)
_Static_assert(ENTITY_BYTES(3) <= 64 && ENTITY_BYTES(PERCEPT_MAX_SENSES) <= 128,
               "a record is one or two cache lines");

/* One sense of an entity beyond its range: what the slow test reads. */
typedef struct sense_shape {
    double margin; /* 0: none */
    double fov;    /* as given, 360 for no cone */
    double c;      /* cos(fov * (PI / 360)): the cone test's constant */
    uint32_t ignore;
} sense_shape;

/*
 * What makes an entity's test slow: its facing and, per sense, margin,
 * cone and ignore mask. Kept apart, per slot, and only once some entity
 * has any (w->shapes stays NULL until then): a world of plain ranges pays
 * neither its memory nor its reads. An entity without them has entity.shaped
 * 0 and its shape all defaults.
 */
typedef struct shape {
    double facing[3];
    double ff; /* FX*FX + FY*FY + FZ*FZ */
    sense_shape sense[PERCEPT_MAX_SENSES];
} shape;

#define SHAPE_BYTES(senses) (offsetof(shape, sense) + (size_t)(senses) * sizeof(sense_shape))

/* Exponents of ranges counted per sense, so that a stimulus knows how far
 * its observers can stand: bucket e + RANGE_EXP_BIAS counts the ranges in
 * [2^e, 2^(e+1)), the lowest bucket also all those below. */
#define RANGE_EXP_BUCKETS 128
#define RANGE_EXP_BIAS 64

/* One backend instance and the senses it indexes. */
typedef struct backend_group {
    plugin plugin;
    percept_backend *backend;
    percept_backend_host host; /* the world's allocator, through host_alloc() */
    const percept_allocator *alloc;
    int refused;     /* a request was refused: a failed create() is out of memory */
    unsigned senses; /* PERCEPT_SENSE_BIT()s */
} backend_group;

/* A tick's room, kept from tick to tick (tick.c). */
struct tick_entry;
struct tick_worker;
struct tick_event;
typedef struct tick_room {
    struct tick_entry *entries; /* 64-byte aligned in entries_block */
    void *entries_block;
    size_t entry_cap;
    uint32_t *entry_of; /* per slot in the tick: its entry */
    size_t entry_of_cap;
    shape *shapes; /* the new shapes of the tick's turns and updates */
    size_t shape_cap;
    og_registration *regs; /* per entry, per observer grid */
    size_t reg_cap;
    uint64_t *in_tick; /* a bit per slot: the slot's entity is in the tick */
    size_t in_tick_words;
    tick_point *points; /* the tick grid's input */
    size_t point_cap;
    tick_grid grid;
    struct tick_event *events;
    uint64_t *keys; /* 4 per event: two sorts, each with its second buffer */
    size_t event_cap;
    struct tick_worker *workers; /* [threads] */
    unsigned threads;
    thread_pool *pool; /* NULL with one thread */
} tick_room;

struct percept_world {
    percept_allocator alloc;
    int sense_count;
    char sense_names[PERCEPT_MAX_SENSES][32];
    unsigned all_senses;   /* PERCEPT_SENSE_BIT()s of every sense */
    unsigned char *ents;   /* [slot_cap] records, 64-byte aligned in ents_block */
    void *ents_block;      /* the allocation holding ents */
    uint8_t ent_shift;     /* records are 1 << ent_shift bytes apart; a byte, which no
                              store to an entity field can alias */
    size_t ent_bytes;      /* of which each holds this many */
    unsigned char *shapes; /* NULL, or [slot_cap] records of shape_bytes bytes */
    size_t shape_bytes;
    shape next_shape; /* the shape a change gives its entity */
    uint32_t range_exp[PERCEPT_MAX_SENSES][RANGE_EXP_BUCKETS];
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
    backend_group backends[PERCEPT_MAX_SENSES];
    int backend_count;
    uint8_t backend_of[PERCEPT_MAX_SENSES]; /* sense -> backends[] */
    /* One per observer cell size, then the near grids (choose_near_backends()). */
    observer_grid grids[2 * PERCEPT_MAX_SENSES];
    uint8_t near_backend[2 * PERCEPT_MAX_SENSES]; /* grid -> backend finding its near observers */
    int8_t near_of[2 * PERCEPT_MAX_SENSES];       /* near grid -> the grid it serves; else -1 */
    int grid_count;
    change_buffer changes;
    tick_room tick;
    percept_event_fn on_event;
    void *on_event_user;
    /* percept_set_event_buffer(): the last change's events, kept. */
    int buffering;
    percept_event *events_buf;
    size_t events_len, events_cap;
    int in_callback;
    /* Closed from inside the callback: the delivering call stops and frees it. */
    int close_requested;
    /* Whose reserve() refused the change, for its message; NULL: the core's. */
    const backend_group *refused_by;
    int move_events;
    percept_bounds bounds;
    char errmsg[512];
    size_t err_index; /* the tick entry errmsg names, or SIZE_MAX (percept_errindex()) */
};

/* A coordinate the API accepts, in the bounds and every call. */
static inline int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static inline int valid_sense(const percept_world *w, percept_sense sense)
{
    return (unsigned)sense < (unsigned)w->sense_count;
}

/* The size protocol of the structs that carry their size (percept_options,
 * percept_entity_desc, percept_stimulus): the bytes of a newer header's
 * fields, beyond the `known` this library reads, must be zero, so that no
 * setting is ignored silently. */
static inline int unknown_bytes_zero(const void *p, size_t known, size_t size)
{
    for (size_t i = known; i < size; i++)
        if (((const unsigned char *)p)[i])
            return 0;
    return 1;
}

/* The record of the entity in `slot`. */
static inline entity *ent(const percept_world *w, uint32_t slot)
{
    return (entity *)(w->ents + ((size_t)slot << w->ent_shift));
}

/* The shape of `e`, the entity in `slot`, or NULL when it has none. */
static inline const shape *shape_at(const percept_world *w, const entity *e, uint32_t slot)
{
    return e->shaped ? (const shape *)(w->shapes + (size_t)slot * w->shape_bytes) : NULL;
}

static inline const shape *shape_of(const percept_world *w, uint32_t slot)
{
    return shape_at(w, ent(w, slot), slot);
}

/* Make room for `count` entities, so that adds up to that many grow no
 * array. Returns 0, or -1 out of memory, having changed only room. */
int world_reserve(percept_world *w, size_t count);

/* The description of the entity in `slot`, as percept_get_entity() gives it. */
void world_describe(const percept_world *w, uint32_t slot, percept_entity_desc *out);

/* Free the world and all it holds, also when the callback closed it. */
void free_world(percept_world *w);

/* A failed call's status, with its message; percept_errindex() then names
 * no entry. */
int world_error(percept_world *w, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Every changing call's first check: not from inside the callback. */
int world_check_caller(percept_world *w, const char *fn);
/* EINVAL naming the entity and a position out of bounds; `where` leads. */
int world_bad_position(percept_world *w, const char *fn, const char *where, percept_id id, double x,
                       double y, double z);
/* Check `d` and make it *next (keeping its id, mark and alive) and *sh. */
int world_read_desc(percept_world *w, const char *fn, percept_id id, const percept_entity_desc *d,
                    entity *next, shape *sh);
/* The radius to query backend g with around an entity in state `e`,
 * changing in the senses `out` and perceptible in `in_visible`: its reach,
 * or the near observers' radius, the larger (0: no query). */
double world_query_radius(const percept_world *w, int g, const entity *e, unsigned out,
                          unsigned in_visible);
/* Call visit(ctx, slot) for every entity that may perceive or be perceived
 * by an entity in state `e`, changing in the senses `out` and perceptible
 * in `visible`, besides those of its pair list: from each backend, those
 * within its reach or a near observer's; from each observer grid, the
 * far-sighted observers that may reach it. Some may come more than once. */
void world_find_candidates(const percept_world *w, const entity *e, unsigned out, unsigned visible,
                           og_visit visit, void *ctx);
/* Count the ranges of `after` instead of those of `before` (either NULL). */
void world_count_ranges(percept_world *w, const entity *before, const entity *after);
/* Room for every slot's shape, all defaults: 0, or -1 with nothing changed. */
int world_alloc_shapes(percept_world *w);
/* Room in the event buffer, when it is on, for `most` events of the
 * change to come: 0, or -1 with only room changed (event_buffer.c). */
int world_reserve_events(percept_world *w, size_t most);
/* One event: kept when the buffer is on (in the room reserved), then to
 * the callback if one is set. Nonzero: the callback closed the world. */
static inline int world_emit(percept_world *w, const percept_event *ev)
{
    if (w->buffering)
        w->events_buf[w->events_len++] = *ev;
    if (w->on_event)
        w->on_event(w->on_event_user, ev);
    return w->close_requested;
}
/* A successful call that changes nothing: the buffer keeps no events. */
static inline int world_no_events(percept_world *w)
{
    w->events_len = 0;
    return PERCEPT_OK;
}
/* Whether a change's events go anywhere. */
static inline int world_wants_events(const percept_world *w)
{
    return w->on_event || w->buffering;
}
/* One pair's events in one direction (world.c); nonzero: the callback
 * closed the world. */
int world_deliver_pair(percept_world *w, percept_id observer, percept_id target, const entity *t,
                       unsigned before, unsigned after, unsigned moved);

/* The tick's threads and room (tick.c): made at creation, 0 or -1 out of
 * memory or threads; freed with the world; their bytes. */
int tick_init(percept_world *w, unsigned threads);
void tick_free(percept_world *w);
size_t tick_bytes(const percept_world *w);

#endif
