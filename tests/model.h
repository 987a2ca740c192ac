/*
 * model.h - a brute-force model of the perception relation, written from its
 * definition (include/percept.h, docs/trace-format.md) and nothing else, for
 * the tests and the fuzz targets to hold the library to.
 *
 * The model keeps every entity ever named and the relation as it stands.
 * Each change returns the status the library must give and, when that is 0,
 * makes the change and leaves its events in m->events, in the documented
 * order: by observer ID, then target ID, then sense. A single change
 * re-evaluates every pair of the changed entity (no other pair can change)
 * by the rule in model.c, a tick every pair of the world; the model keeps
 * the relation rather than recomputing it from scratch, because with
 * margins the relation depends on its own past.
 */
#ifndef PERCEPT_TEST_MODEL_H
#define PERCEPT_TEST_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

/* One pair held by an entity: the other entity's slot and the senses. */
typedef struct model_link {
    uint32_t other;
    unsigned senses;
} model_link;

typedef struct model_links {
    model_link *v;
    uint32_t n, cap;
} model_links;

/* One sense of an entity, as the relation reads it (fov 360: no cone). */
typedef struct model_sense {
    double range, margin, fov;
    uint32_t ignore;
} model_sense;

typedef struct model_entity {
    percept_id id;
    int alive;
    double x, y, z; /* after a removal, the last position */
    double facing[3];
    uint32_t tags;
    unsigned hidden;
    model_sense sense[PERCEPT_MAX_SENSES];
    model_links out; /* the targets it perceives */
    model_links in;  /* the observers that perceive it */
} model_entity;

#define MODEL_NAME_MAX 32

typedef struct model {
    int move_events; /* a target's own move reports MOVE for the pairs that hold throughout */
    int senses;      /* the world's number of senses */
    char names[PERCEPT_MAX_SENSES][MODEL_NAME_MAX]; /* for messages */
    model_entity *ent; /* by slot: one per ID ever added, kept after removal */
    uint32_t count, cap;
    uint32_t *index; /* open addressing: slots by ID, UINT32_MAX free */
    size_t index_mask;
    size_t alive;
    percept_event *events; /* the last change's events */
    size_t n_events, events_cap;
    unsigned *was_out, *was_in; /* by slot: scratch for one change */
    struct model_place *place;  /* by slot: where each entity reaches, to skip pairs quickly */
} model;

/* A model of a world with the default senses (sight, hearing, smell). */
void model_init(model *m, int move_events);
/* The world's senses instead, before the first add: 1 to PERCEPT_MAX_SENSES names. */
void model_set_senses(model *m, int count, const char *const *names);
void model_free(model *m);

/* The name of sense s, or "?" for none. */
const char *model_sense_name(const model *m, int s);

/* The entity `id` if it is in the world, else NULL. */
const model_entity *model_get(const model *m, percept_id id);

/* The description percept_get_entity() must give of entity `e`. */
percept_entity_desc model_desc(const model *m, const model_entity *e);

/* The changes. Each returns the library's status; on 0 m->events holds the
 * change's events, on an error there are none and nothing changed. */
int model_add(model *m, percept_id id, const percept_entity_desc *desc);
int model_update(model *m, percept_id id, const percept_entity_desc *desc);
int model_move(model *m, percept_id id, double x, double y);
int model_move3(model *m, percept_id id, double x, double y, double z);
int model_turn(model *m, percept_id id, double fx, double fy, double fz);
int model_remove(model *m, percept_id id);
int model_set_range(model *m, percept_id id, percept_sense sense, double range);
int model_set_hidden(model *m, percept_id id, percept_sense sense, int hidden);

/* A stimulus: its STIMULUS events in m->events, by observer; the world does not change. */
int model_emit(model *m, const percept_stimulus *stimulus);

/* percept_query(): the status; on 0 the IDs in `out` (room for m->count), ascending. */
int model_query(const model *m, double x, double y, double z, double radius, percept_id *out,
                size_t *count);

/*
 * A tick (percept_tick()): model_check_tick() first; on 0 every change is
 * made at once, every pair of the world judged again on the state after
 * them all with rule 5's "before" meaning before the tick, and m->events
 * holds the difference of the relation, sorted as a single change's, with
 * a MOVE for each moved target that an observer perceives by a sense before
 * and after (when the world reports them). On an error nothing changes.
 */
int model_tick(model *m, const percept_change *changes, size_t count);

/*
 * What percept_tick() must say of a tick before it changes anything: 0, or
 * the status of the first bad entry, whose index goes to *bad (SIZE_MAX for
 * a tick refused as a whole).
 */
int model_check_tick(const model *m, const percept_change *changes, size_t count, size_t *bad);

/* 1 if observer perceives target by sense now, else 0; -1 for an unknown ID. */
int model_perceives(const model *m, percept_id observer, percept_id target, percept_sense sense);

/* The IDs id perceives by sense (by_target 0) or that perceive it (1),
 * ascending, into out (room for m->count); returns how many. */
size_t model_perceived(const model *m, percept_id id, percept_sense sense, int by_target,
                       percept_id *out);

/* Every ID in the world, ascending, into out (room for m->count); returns how many. */
size_t model_ids(const model *m, percept_id *out);

/* Orders events as the library delivers a call's: observer, target, sense. */
int model_event_cmp(const void *a, const void *b);

/* 1 if the lists are equal in order and every field (positions exactly; a
 * stimulus' target only when it has a source); else 0, with the first
 * difference described in why. Senses are named as in m (NULL: numbered). */
int model_same_events(const model *m, const percept_event *want, size_t n_want,
                      const percept_event *got, size_t n_got, char *why, size_t size);

/* "1 2 sight enter at (x, y, z)": one event for messages. */
void model_describe_event(const model *m, char *buf, size_t size, const percept_event *e);

/*
 * 1 if the world says what the model holds: its senses, the entity count,
 * and for every ID the model ever saw percept_contains(),
 * percept_get_entity() and the perceived and perceived-by lists of every
 * sense; else 0, with the first difference described in why.
 */
int model_check_world(const model *m, const percept_world *w, char *why, size_t size);

#endif
