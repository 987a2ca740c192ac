/*
 * percept.h - the public API of percept, a perception (area-of-interest)
 * library for game servers: who perceives whom, by which sense, and every
 * change to that relation delivered as an event.
 *
 * A world names its senses (1 to PERCEPT_MAX_SENSES; by default sight,
 * hearing and smell) and holds entities. Each has a position (x, y, z), a
 * facing, tags, and per sense a range (0: it lacks the sense), a margin, a
 * cone (fov) and an ignore mask, and a set of senses it is hidden from.
 * Observer O perceives target T by sense S after a call exactly when:
 *
 *   1. O and T are different entities, both in the world;
 *   2. O's range R for S is greater than 0;
 *   3. T is not hidden from S;
 *   4. O's ignore mask for S and T's tags share no bit;
 *   5. dd <= L*L, with dd = dx*dx + dy*dy + dz*dz (dx = T.x - O.x, ...) and
 *      L = R, or R + M (O's margin for S) if O perceived T by S before the
 *      call: hysteresis, so that a target on the edge does not flicker;
 *   6. O's fov for S is 360, or dd == 0, or T lies in O's cone: with
 *      c = cos(fov * (PI / 360)), dot = FX*dx + FY*dy + FZ*dz (O's facing)
 *      and q = c * c * (dd * (FX*FX + FY*FY + FZ*FZ)): if c >= 0, dot >= 0
 *      and dot*dot >= q; if c < 0, dot >= 0 or dot*dot <= q.
 *
 * Each formula is computed as written, left to right, in IEEE double
 * precision without fused multiply-add: docs/trace-format.md, the
 * specification, gives the whole relation and its stimuli.
 *
 * Every call that changes the world either completes and then reports each
 * change of that relation to the world's event callback before it returns,
 * or fails with a negative status, sets a message (percept_errmsg()) and
 * leaves the world exactly as it was. Events reach
 * the callback set at the time: with none set, a change is reported to no
 * one, nor kept for later. A callback that closes the world ends the call's
 * delivery there.
 *
 * Thread safety: a world is not thread-safe; use it from one thread at a
 * time. Distinct worlds share nothing and may be used from different
 * threads in parallel.
 */
#ifndef PERCEPT_H
#define PERCEPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define PERCEPT_API __attribute__((visibility("default")))
#else
#define PERCEPT_API
#endif

/* The library's version, as text and as a number (major*10000 + minor*100 + patch). */
#define PERCEPT_VERSION "0.4.0"
#define PERCEPT_VERSION_NUMBER 400

/* An entity's identifier, chosen by the caller: any 32-bit value. */
typedef uint32_t percept_id;

/*
 * A sense: its index among the world's senses, 0 to percept_sense_count()
 * - 1, in the order the config's [world] senses names them. The default
 * senses are sight, hearing and smell, in that order, so these constants
 * name them in a world that keeps the default.
 */
typedef int percept_sense;
enum { PERCEPT_SIGHT = 0, PERCEPT_HEARING = 1, PERCEPT_SMELL = 2 };

/* The most senses a world has. */
#define PERCEPT_MAX_SENSES 8

/* Bit for a sense in a hidden-from mask: PERCEPT_SENSE_BIT(PERCEPT_SIGHT). */
#define PERCEPT_SENSE_BIT(sense) (1u << (unsigned)(sense))

/*
 * Status codes. 0 is success; every error is negative. percept_strerror()
 * gives a short description, percept_status_name() the constant's name, and
 * percept_errmsg() the detailed message of a world's last failed call.
 */
typedef enum percept_status {
    PERCEPT_OK = 0,
    PERCEPT_EINVAL = -1,  /* an argument is invalid (NULL, NaN, negative range, ...) */
    PERCEPT_ENOMEM = -2,  /* out of memory, or an add to a world of 2^24 - 1 entities (its
                             limit); nothing was changed */
    PERCEPT_EEXIST = -3,  /* an entity with that ID is already in the world */
    PERCEPT_ENOENT = -4,  /* no entity with that ID is in the world */
    PERCEPT_EBUSY = -5,   /* a change was requested from inside the event callback */
    PERCEPT_ECONFIG = -6, /* the configuration is invalid */
    PERCEPT_EPLUGIN = -7, /* a backend plugin could not be found, loaded or used */
    PERCEPT_EIO = -8      /* a file could not be read */
} percept_status;

/* A short, static description of a status code ("unknown entity ID", ...);
 * "unknown status code" for a value that is none. */
PERCEPT_API const char *percept_strerror(int status);
/* The constant's name for a status code ("PERCEPT_ENOENT", ...);
 * "PERCEPT_UNKNOWN" for a value that is none. */
PERCEPT_API const char *percept_status_name(int status);

/*
 * The version of the library running, in the form of PERCEPT_VERSION and
 * PERCEPT_VERSION_NUMBER, which give that of the headers compiled against.
 * While the major version is 0, a minor release may change the API: compare
 * percept_version_number() / 100 with PERCEPT_VERSION_NUMBER / 100.
 */
PERCEPT_API const char *percept_version(void);
PERCEPT_API int percept_version_number(void);

/* The most threads a world's ticks run on ([world] threads, percept_options.threads). */
#define PERCEPT_MAX_THREADS 64

/* Limits: coordinates and ranges must be finite, and at most this in magnitude. */
#define PERCEPT_COORD_LIMIT 1e15

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

typedef enum percept_event_kind {
    PERCEPT_ENTER = 0,   /* observer now perceives target */
    PERCEPT_LEAVE = 1,   /* observer no longer perceives target */
    PERCEPT_MOVE = 2,    /* target moved and observer still perceives it (config: move_events):
                            one per sense that perceived it before the call and still does */
    PERCEPT_STIMULUS = 3 /* observer perceived a stimulus (percept_emit()) */
} percept_event_kind;

typedef struct percept_event {
    percept_event_kind kind;
    percept_sense sense;
    percept_id observer;
    percept_id target; /* STIMULUS: the stimulus' source, or 0 without one */
    double x, y, z;    /* the target's position after the call (its last position on
                          removal); STIMULUS: the stimulus' point */
    int has_source;    /* STIMULUS: whether it has a source; 1 for every other kind,
                          whose target is always an entity */
} percept_event;

/*
 * Receives each event of a call, after the whole change has been applied and
 * before the call returns. Within one call, events come sorted by observer
 * ID, then target ID, then sense (in the world's order), at most one per
 * (observer, target, sense); over time ENTER and LEAVE strictly alternate,
 * starting with ENTER (for a callback set before the world's first change;
 * one set later may see a LEAVE first).
 *
 * Inside the callback the world may be read (percept_perceives(),
 * percept_perceived(), ...) but not changed: every call of "Changing the
 * world" below, percept_emit(), percept_set_event_callback() and
 * percept_set_event_buffer() return PERCEPT_EBUSY there and change nothing.
 * Keep a queue of the changes your AI decides on and apply them after the
 * call returns, or read the events from the buffer
 * (percept_set_event_buffer()) instead. percept_world_close() there is
 * deferred (see there).
 *
 * The callback must return normally. Leaving it by longjmp() or a C++
 * exception skips the rest of the call: its other events are not delivered,
 * and the world stays marked as inside its callback for good, refusing every
 * change with PERCEPT_EBUSY; percept_world_close() cannot tell it from a
 * close inside the callback then, and never frees it.
 *
 * `event` points to a copy valid until the callback returns.
 */
typedef void (*percept_event_fn)(void *user, const percept_event *event);

/* ------------------------------------------------------------------------ */
/* Creating a world                                                          */

typedef struct percept_world percept_world;

/*
 * A custom allocator. alloc(user, NULL, n) allocates, alloc(user, p, n)
 * resizes, alloc(user, p, 0) frees and returns NULL. Returning NULL for n > 0
 * means out of memory; percept then fails the call with PERCEPT_ENOMEM and
 * leaves the world as it was. A resize to a smaller size that returns NULL
 * must leave the block as it was, like realloc(); percept then keeps the
 * larger block, and the call succeeds. Backends allocate through it as well.
 */
typedef struct percept_allocator {
    void *(*alloc)(void *user, void *ptr, size_t size);
    void *user;
} percept_allocator;

/* Rectangular world bounds; the backends and observer grids are tuned for them. */
typedef struct percept_bounds {
    double min_x, min_y, max_x, max_y;
} percept_bounds;

/*
 * Optional settings that take precedence over the configuration. Initialise
 * with PERCEPT_OPTIONS_INIT, which sets `size`: a later percept that grows the
 * struct still reads an older program's smaller one, and this one accepts a
 * larger struct from a newer header as long as the fields it does not know
 * are zero (PERCEPT_EINVAL otherwise, rather than ignore an option). Fields
 * are only ever added at the end, each a pointer or a size_t, so that the
 * struct has no padding that PERCEPT_OPTIONS_INIT could leave unset.
 */
typedef struct percept_options {
    size_t size;                        /* sizeof(percept_options), set by PERCEPT_OPTIONS_INIT */
    const char *backend;                /* if set: this backend (letters, digits, '_' and
                                           '-', else EINVAL) for every sense. A sense whose
                                           config names it too gets its section's
                                           parameters; any other, the backend's defaults,
                                           its section's neither passed nor checked */
    const char *plugin_dir;             /* if set: searched before the config's plugin_dir;
                                           not a directory: PERCEPT_EINVAL */
    const percept_bounds *bounds;       /* if set: replaces the config's [world] bounds,
                                           which are still checked: inverted ones in the
                                           file are refused (PERCEPT_ECONFIG) */
    const percept_allocator *allocator; /* if set: all memory comes from it */
    size_t reserve;                     /* if above 0: replaces the config's [world] reserve,
                                           room for that many entities made at creation */
    size_t threads;                     /* if above 0: replaces the config's [world] threads,
                                           how many threads a tick runs on, at most
                                           PERCEPT_MAX_THREADS */
} percept_options;

#define PERCEPT_OPTIONS_INIT                                                                       \
    {                                                                                              \
        sizeof(percept_options), NULL, NULL, NULL, NULL, 0, 0                                      \
    }

/*
 * Why creating a world failed. `text` is the message for people, naming the
 * file, line, key, option or path at fault; the other fields say the same
 * for programs (an editor that marks the bad key), each empty (0, "") where
 * the message names nothing of the kind. For "percept.ini:14: key
 * 'cel_size' in [sight]: unknown parameter (read '64')": status
 * PERCEPT_ECONFIG, line 14, section "sight", key "cel_size". Text the
 * message quotes (a config line, a path) shows each control byte as \xNN.
 */
typedef struct percept_error {
    int status;       /* the status returned */
    int line;         /* the config line concerned, or 0 */
    char section[64]; /* the config section concerned, without brackets ("sight"), or "" */
    char key[64];     /* the config key concerned ("cel_size"), or "" */
    char text[512];   /* the message, cut to 511 bytes */
} percept_error;

/*
 * Create a world from the INI file at `path`. On success *out is the new
 * world and 0 is returned. On failure *out is NULL, a negative status is
 * returned and, if `error` is not NULL, filled in. `options` may be NULL.
 */
PERCEPT_API int percept_world_open(percept_world **out, const char *path,
                                   const percept_options *options, percept_error *error);

/*
 * Same as percept_world_open(), from INI text held in memory. `name` labels
 * the text in messages ("<string>" when NULL); a relative plugin_dir is
 * taken from the current directory.
 */
PERCEPT_API int percept_world_open_string(percept_world **out, const char *ini_text,
                                          const char *name, const percept_options *options,
                                          percept_error *error);

/*
 * Destroy a world and everything in it. No events are delivered. NULL is a
 * no-op. From inside the world's event callback it is deferred: the call
 * delivering the event delivers no more, closes the world and returns PERCEPT_OK (its
 * change was made). The world may still be read until the callback returns,
 * and not at all after.
 */
PERCEPT_API void percept_world_close(percept_world *world);

/* Set (or clear with NULL) the callback that receives the world's events.
 * PERCEPT_EBUSY from inside the callback, PERCEPT_EINVAL for a NULL world. */
PERCEPT_API int percept_set_event_callback(percept_world *world, percept_event_fn fn, void *user);

/*
 * Keep each call's events in a buffer the world owns (on != 0), besides
 * calling back if a callback is set, or stop keeping them (0). Each call
 * that changes the world or emits a stimulus and succeeds replaces the
 * buffer's events with its own, in the callback's order (none when it
 * changed nothing); a failed call leaves them. Read them after the call
 * with percept_events(), and change the world as you like then: no
 * PERCEPT_EBUSY rule applies to a buffer. Its room is made before a change
 * is applied, so a call that cannot have it fails with PERCEPT_ENOMEM and
 * changes nothing. PERCEPT_EBUSY from inside the callback, PERCEPT_EINVAL
 * for a NULL world.
 */
PERCEPT_API int percept_set_event_buffer(percept_world *world, int on);

/*
 * The events of the world's last successful call, kept by
 * percept_set_event_buffer(): *count of them (count may be NULL), or NULL
 * and 0 when there are none or the buffer is off. Valid until the next
 * call that changes the world, emits, turns the buffer off or closes the
 * world; reading calls leave them. Read inside the callback, they are the
 * events delivered so far.
 */
PERCEPT_API const percept_event *percept_events(const percept_world *world, size_t *count);

/*
 * The detailed message of the world's last failed change, e.g.
 * "percept_move: unknown entity 42"; empty when none has failed. A
 * successful call does not clear it: read it right after the call that
 * failed (a change refused with PERCEPT_EBUSY inside the callback too). The
 * pointer is valid until the world is closed; the next failed change
 * rewrites its text. For a NULL world, a static "the world is NULL".
 * Control bytes of the names it quotes (a plugin's path) show as \xNN.
 */
PERCEPT_API const char *percept_errmsg(const percept_world *world);

/*
 * The index of the percept_tick() entry the world's last failed call was
 * refused for (the entry percept_errmsg() names: an unknown ID, a bad
 * value, an entity named twice), so that a program can drop or mend it;
 * SIZE_MAX when that call named no entry, or no call has failed. Read it,
 * like the message, right after the call that failed.
 */
PERCEPT_API size_t percept_errindex(const percept_world *world);

/* ------------------------------------------------------------------------ */
/* Changing the world                                                        */

/* One sense of an entity. All zero: it lacks the sense. */
typedef struct percept_sense_params {
    double range;    /* >= 0; 0 (or -0): the entity lacks the sense */
    double margin;   /* >= 0: a perceived target is kept out to range + margin */
    double fov;      /* the cone's full angle in degrees, in (0, 360]; 0 means 360: no cone */
    uint32_t ignore; /* targets whose tags share a bit with it are not perceived */
} percept_sense_params;

/*
 * What an entity is. Initialise with PERCEPT_ENTITY_DESC_INIT, which sets
 * `size` (the protocol of percept_options) and leaves every other field
 * zero: no height, no facing, no tags, hidden from nothing, and every sense
 * lacking, without margin, cone or ignore mask. Senses beyond the world's
 * count must stay zero.
 */
typedef struct percept_entity_desc {
    size_t size; /* sizeof(percept_entity_desc), set by PERCEPT_ENTITY_DESC_INIT */
    double x, y, z;
    double facing[3]; /* any length, not 0 when a sense has a cone (fov < 360, even with
                         a range of 0); each component finite, at most
                         PERCEPT_COORD_LIMIT in magnitude */
    uint32_t tags;    /* what the entity is, for the other entities' ignore masks */
    unsigned hidden;  /* PERCEPT_SENSE_BIT()s of the senses it is hidden from */
    percept_sense_params sense[PERCEPT_MAX_SENSES];
} percept_entity_desc;

#define PERCEPT_ENTITY_DESC_INIT                                                                   \
    {                                                                                              \
        sizeof(percept_entity_desc), 0, 0, 0, {0, 0, 0}, 0, 0,                                     \
        {                                                                                          \
            {                                                                                      \
                0, 0, 0, 0                                                                         \
            }                                                                                      \
        }                                                                                          \
    }

/*
 * Add entity `id`. Reports both directions: who now perceives the newcomer,
 * and what the newcomer perceives. PERCEPT_EEXIST if `id` is in the world;
 * PERCEPT_EINVAL, with a message naming the field ("sight.fov"), for a
 * position, range or margin that is not finite or beyond
 * PERCEPT_COORD_LIMIT, a negative range or margin, a fov outside (0, 360]
 * other than 0, a cone without a facing, a facing not finite, hidden bits
 * or fields of senses the world does not have, or a `size` this library
 * cannot read.
 *
 * Cost: like a move of the newcomer, plus amortised O(1) for its record.
 * The add that finds the world's arrays full doubles them, copying every
 * record: O(N) at once (tens of milliseconds at half a million entities).
 * A world made with room for N entities ([world] reserve in the config, or
 * percept_options.reserve) never does so while it holds at most N.
 */
PERCEPT_API int percept_add(percept_world *world, percept_id id, const percept_entity_desc *desc);

/*
 * Change every field of entity `id` at once to those of `desc`, as one
 * change with one set of events (percept_get_entity(), change some fields,
 * percept_update()). The checks of percept_add(). A change of position
 * delivers MOVE events as percept_move() does.
 */
PERCEPT_API int percept_update(percept_world *world, percept_id id,
                               const percept_entity_desc *desc);

/* Move entity `id` to (x, y), its height unchanged. Any distance: a teleport
 * is a move. A move to where the entity already is changes nothing and
 * delivers nothing. The only calls that deliver MOVE events are a target's
 * own moves (percept_move(), percept_move3(), percept_tick(), and
 * percept_update() with a new position): an observer's move or turn
 * delivers ENTER and LEAVE only. */
PERCEPT_API int percept_move(percept_world *world, percept_id id, double x, double y);

/* Move entity `id` to (x, y, z), like percept_move(). */
PERCEPT_API int percept_move3(percept_world *world, percept_id id, double x, double y, double z);

/* Turn entity `id` to face (fx, fy, fz): any length, not 0 while a sense of
 * the entity has a cone (PERCEPT_EINVAL). */
PERCEPT_API int percept_turn(percept_world *world, percept_id id, double fx, double fy, double fz);

/* What one entry of a tick changes. */
typedef enum percept_change_kind {
    PERCEPT_CHANGE_MOVE = 0,  /* the entity goes to (x, y, z), as percept_move3() */
    PERCEPT_CHANGE_TURN = 1,  /* it faces (x, y, z), as percept_turn() */
    PERCEPT_CHANGE_UPDATE = 2 /* every field becomes *desc's, as percept_update() */
} percept_change_kind;

/* One entry of percept_tick(): an entity and its change. */
typedef struct percept_change {
    percept_id id;
    percept_change_kind kind;
    double x, y, z;                  /* MOVE: the new position; TURN: the new facing */
    const percept_entity_desc *desc; /* UPDATE: the new description; else unread */
} percept_change;

/*
 * A tick: every change of `changes` made at once, each entity named at most
 * once. The relation after the call is judged on the state after all of
 * them, with rule 5's "before" meaning before the call; the events are the
 * difference between the relation before the call and after it, sorted as
 * a single change's are, delivered once every change is made. A pair that
 * would enter and leave in the course of the tick (seen after one move,
 * gone after another) gives no event; a MOVE goes to each observer that
 * perceives a moved target by a sense before and after the tick.
 *
 * Every entry is checked before anything changes, by the checks of the call
 * its kind names: an unknown ID (PERCEPT_ENOENT), a bad value, an entity
 * named twice or an unknown kind (PERCEPT_EINVAL) change nothing;
 * percept_errmsg() names the first bad entry by its index and
 * percept_errindex() gives that index. More than UINT32_MAX entries, or
 * `changes` NULL with a `count` above 0, are refused as a whole
 * (PERCEPT_EINVAL; percept_errindex() is SIZE_MAX). Out of memory
 * (PERCEPT_ENOMEM): the world is as it was before the call.
 *
 * Cost: in proportion to the entities the tick changes and their
 * neighbours, however many stand still. The entries are split among the
 * world's threads ([world] threads, percept_options.threads), which find
 * their pairs' changes at once: the events are the same, in the same order,
 * for any number of threads. The backends' queries then run on several
 * threads at once (docs/plugins.md).
 */
PERCEPT_API int percept_tick(percept_world *world, const percept_change *changes, size_t count);

/* Remove entity `id`; every pair it was part of leaves, in both directions. */
PERCEPT_API int percept_remove(percept_world *world, percept_id id);

/* Set the range of one sense of entity `id` (0 switches the sense off). */
PERCEPT_API int percept_set_range(percept_world *world, percept_id id, percept_sense sense,
                                  double range);

/* Make entity `id` imperceptible (hidden != 0) or perceptible (0) to `sense`. */
PERCEPT_API int percept_set_hidden(percept_world *world, percept_id id, percept_sense sense,
                                   int hidden);

/*
 * A one-shot stimulus: a noise, a flash, a puff of scent. Initialise with
 * PERCEPT_STIMULUS_INIT (the protocol of percept_options). Observer O
 * perceives it when O is not its source, O's range R for the sense is
 * above 0, O's ignore mask for the sense shares no bit with `tags`, the
 * point is within strength * R of O (dd <= L*L, L = strength * R; margins
 * do not apply) and within O's cone for the sense. Hiding does not apply.
 */
typedef struct percept_stimulus {
    size_t size; /* sizeof(percept_stimulus), set by PERCEPT_STIMULUS_INIT */
    percept_sense sense;
    double x, y, z;
    double strength;   /* > 0: a multiple of each observer's range; 0 means 1 */
    int has_source;    /* whether `source` names the entity it comes from */
    percept_id source; /* an entity in the world, which does not perceive it */
    uint32_t tags;     /* what it is, for the observers' ignore masks */
} percept_stimulus;

#define PERCEPT_STIMULUS_INIT                                                                      \
    {                                                                                              \
        sizeof(percept_stimulus), 0, 0, 0, 0, 0, 0, 0, 0                                           \
    }

/*
 * Emit a stimulus: one PERCEPT_STIMULUS event per observer that perceives
 * it, in observer ID order, before the call returns; the world does not
 * change. PERCEPT_EINVAL for a bad sense, point or strength, PERCEPT_ENOENT
 * for a source not in the world, PERCEPT_EBUSY inside the callback,
 * PERCEPT_ENOMEM (nothing delivered) when its working room cannot grow.
 */
PERCEPT_API int percept_emit(percept_world *world, const percept_stimulus *stimulus);

/* ------------------------------------------------------------------------ */
/* Reading the world (allowed inside the event callback)                      */
/*                                                                            */
/* These calls never write to the world, not even its message. Those that    */
/* return a status return PERCEPT_EINVAL for a NULL argument or a bad sense   */
/* and PERCEPT_ENOENT for an unknown ID, and write no output then. Several    */
/* threads may read one world at once while no thread changes it.             */

/* The number of the world's senses, 1 to PERCEPT_MAX_SENSES; 0 for a NULL world. */
PERCEPT_API int percept_sense_count(const percept_world *world);

/* The index of the sense named `name` ("sight"), or PERCEPT_ENOENT for a
 * name the world does not have (PERCEPT_EINVAL for a NULL argument). */
PERCEPT_API int percept_sense_index(const percept_world *world, const char *name);

/* The name of `sense`, or NULL for a NULL world or a bad sense. Valid until
 * the world is closed. */
PERCEPT_API const char *percept_sense_name(const percept_world *world, percept_sense sense);

/* The number of entities in the world; 0 for a NULL world. */
PERCEPT_API size_t percept_entity_count(const percept_world *world);

/*
 * Every entity's ID, in ascending order; *count, `ids` and `capacity` work
 * as in percept_perceived(). Learning the size takes constant time; writing
 * the IDs walks every entity record, as many as the world has ever held at
 * once.
 */
PERCEPT_API int percept_entities(const percept_world *world, percept_id *ids, size_t capacity,
                                 size_t *count);

/*
 * The world's bounds: percept_options.bounds if the world was opened with
 * them, else the config's [world] section, a bound it does not set taking
 * its default (0, 0, 1024, 1024): the values given, unchanged for the
 * world's life, each min at most its max. They tune the backends and
 * observer grids but do not limit positions: entities anywhere within
 * PERCEPT_COORD_LIMIT, on or outside the bounds, perceive and are perceived
 * as anywhere else.
 */
PERCEPT_API int percept_get_bounds(const percept_world *world, percept_bounds *out);

/* 1 if `id` is in the world, else 0 (also for a NULL world). */
PERCEPT_API int percept_contains(const percept_world *world, percept_id id);

/* Copy out entity `id`'s description, as percept_update() takes it (a fov
 * of 0 reads back as 360). `out->size` must be at least this header's
 * (PERCEPT_ENTITY_DESC_INIT); the fields this library knows are written,
 * `size` set to their size. */
PERCEPT_API int percept_get_entity(const percept_world *world, percept_id id,
                                   percept_entity_desc *out);

/* 1 if `observer` perceives `target` by `sense`, 0 if not, negative on
 * error: test for `== 1`, since an error is not 0 either. */
PERCEPT_API int percept_perceives(const percept_world *world, percept_id observer,
                                  percept_id target, percept_sense sense);

/*
 * The targets `observer` perceives by `sense`, in ascending ID order. Stores
 * the total in *count and, if it fits (capacity >= *count), writes all of
 * them to `ids`; if it does not fit, `ids` is left untouched and the call
 * still succeeds, so compare *count with capacity before reading `ids`.
 * `ids` may be NULL when capacity is 0: call so first to learn the size.
 */
PERCEPT_API int percept_perceived(const percept_world *world, percept_id observer,
                                  percept_sense sense, percept_id *ids, size_t capacity,
                                  size_t *count);

/* The observers that perceive `target` by `sense`, like percept_perceived(). */
PERCEPT_API int percept_perceived_by(const percept_world *world, percept_id target,
                                     percept_sense sense, percept_id *ids, size_t capacity,
                                     size_t *count);

/*
 * The entities within `radius` of (x, y, z) (dd <= radius * radius, in
 * three dimensions), in ascending ID order, like percept_perceived().
 * PERCEPT_EINVAL for a point or radius that is not finite, beyond
 * PERCEPT_COORD_LIMIT or, for the radius, negative; PERCEPT_ENOMEM when
 * its working room cannot be allocated. The one reading call that
 * allocates: threads that read a world at once and query it need an
 * allocator they may call at once (the C library's is one). Costs a query
 * of the first sense's backend and a sort of what it finds.
 */
PERCEPT_API int percept_query(const percept_world *world, double x, double y, double z,
                              double radius, percept_id *ids, size_t capacity, size_t *count);

/* The name of the backend serving `sense` ("bruteforce", "grid", ...), or
 * NULL for a NULL world or a bad sense. Valid until the world is closed. */
PERCEPT_API const char *percept_backend_name(const percept_world *world, percept_sense sense);

/*
 * The file the backend serving `sense` was loaded from, as it was given to
 * dlopen(): the first directory of the search holding NAME.so
 * (percept_options.plugin_dir, the config's plugin_dir, PERCEPT_PLUGIN_PATH,
 * the install directory), then "/NAME.so"; relative when that directory
 * was. NULL for a NULL world or a bad sense. Valid until the world is
 * closed. Tells which copy of a plugin a program runs when several are.
 */
PERCEPT_API const char *percept_backend_path(const percept_world *world, percept_sense sense);

/*
 * The bytes a world holds from its allocator (percept_options.allocator, or
 * the C library's), by part, counted as requested: the allocator's own
 * overhead (block headers, rounding) comes on top. Spare room that arrays
 * keep for growth is counted; memory given back is not. So that memory
 * follows a crowd that disperses, a pair list that holds a quarter of its
 * room or less gives room back, keeping twice its length, as do the cells
 * of the observer grids and of the shipped grid, tower and hashgrid
 * backends; a call's working room keeps its largest size until the world
 * is closed. A backend plugin whose memory_usage operation is NULL counts
 * as 0.
 */
typedef struct percept_memory {
    size_t total;          /* the sum of the parts below */
    size_t entities;       /* entity records, the ID map, the free-slot stack */
    size_t pairs;          /* the pair lists: who perceives whom, both ways */
    size_t observer_grids; /* the core's index of who perceives what place */
    size_t backends;       /* what the backend instances report holding */
    size_t scratch;        /* working room kept from call to call: a call's
                              changes, its query's finds, the last batch */
    size_t world;          /* the world's own record and its plugins' paths */
} percept_memory;

/* Fill *out with what `world` holds, allocating nothing. Walks every
 * entity's pair lists, so it costs time in proportion to the entities. */
PERCEPT_API int percept_memory_usage(const percept_world *world, percept_memory *out);

#ifdef __cplusplus
}
#endif

#endif /* PERCEPT_H */
