/*
 * testutil.h - what the API suites share: the backends under test, worlds,
 * recorded events, calls made on a world and on the model (model.h) at once,
 * and an allocator that fails on request.
 */
#ifndef PERCEPT_TESTUTIL_H
#define PERCEPT_TESTUTIL_H

/* cmocka.h needs these before it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "percept.h"
#include "model.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* Backends under test                                                       */

/* The backends named by PERCEPT_TEST_BACKENDS (space separated); by default every NAME.so
 * in the first directory of PERCEPT_PLUGIN_PATH, else "bruteforce". */
size_t tu_backend_count(void);
const char *tu_backend_name(size_t index);

/* Run fn once per backend under test; a failure names the backend (tu_backend_test). */
void tu_for_each_backend(void (*fn)(const char *backend));
int tu_report_backend(void **state);
#define tu_backend_test(fn) cmocka_unit_test_teardown(fn, tu_report_backend)

/* The one size parameter of the shipped backends that have one ("cell_size"), or NULL. */
const char *tu_size_key(const char *backend);

/* ------------------------------------------------------------------------ */
/* Worlds and events                                                         */

/* A growable list of the events a world delivered. */
typedef struct tu_recorder {
    percept_event *events;
    size_t count;
    size_t capacity;
} tu_recorder;

void tu_recorder_init(tu_recorder *rec);
void tu_recorder_clear(tu_recorder *rec);
void tu_recorder_free(tu_recorder *rec);
void tu_recorder_push(tu_recorder *rec, const percept_event *event);
/* A percept_event_fn whose user pointer is a tu_recorder. */
void tu_record(void *user, const percept_event *event);

typedef struct tu_fault_alloc tu_fault_alloc;

/*
 * A world from "[percept]\nbackend = NAME\n" followed by `extra_ini` (may be
 * NULL; it continues [percept] and may open other sections), its events to
 * `rec` when not NULL, all its memory from `fa` when not NULL. Fails the
 * test if the world cannot be opened.
 */
percept_world *tu_open(const char *backend, const char *extra_ini, tu_recorder *rec);
percept_world *tu_open_faulty(const char *backend, const char *extra_ini, tu_recorder *rec,
                              tu_fault_alloc *fa);
/* The same, `threads` in percept_options.threads (0: the config's). */
percept_world *tu_open_with(const char *backend, const char *extra_ini, tu_recorder *rec,
                            tu_fault_alloc *fa, size_t threads);

/* A description: position, ranges (sight, hearing, smell) and hidden mask;
 * every other field as PERCEPT_ENTITY_DESC_INIT leaves it. */
percept_entity_desc tu_desc(double x, double y, double sight, double hearing, double smell,
                            unsigned hidden);

/* A random range for the random tests: mostly integers whose boundary points
 * have integer offsets (3-4-5, 5-12-13), sometimes 0, a fraction, or 1e7,
 * which reaches everyone inside and far outside the bounds. */
double tu_random_range(uint64_t *r);

/* A model of the world `w`: its senses, by name, and whether it reports MOVE. */
void tu_model_init(model *m, int move_events, const percept_world *w);

/* Fail the test unless `call` returns PERCEPT_OK, printing the world's error message. */
#define TU_OK(world, call)                                                                         \
    do {                                                                                           \
        int tu_rc_ = (call);                                                                       \
        if (tu_rc_ != PERCEPT_OK)                                                                  \
            fail_msg("%s returned %d: %s", #call, tu_rc_, percept_errmsg(world));                  \
    } while (0)

void tu_add(percept_world *world, percept_id id, percept_entity_desc desc);

/* Entries of a tick (percept_tick()). */
#define TU_CH_MOVE(i, a, b, c) ((percept_change){(i), PERCEPT_CHANGE_MOVE, (a), (b), (c), NULL})
#define TU_CH_TURN(i, a, b, c) ((percept_change){(i), PERCEPT_CHANGE_TURN, (a), (b), (c), NULL})
#define TU_CH_UPDATE(i, d) ((percept_change){(i), PERCEPT_CHANGE_UPDATE, 0, 0, 0, (d)})

/* The i-th of distinct IDs spread over the 32-bit range: 0 and UINT32_MAX for i 0 and 1. */
percept_id tu_spread_id(uint32_t i);

/* An event of a pair, its target at (x, y) or (x, y, z). */
percept_event tu_ev(percept_event_kind kind, percept_id observer, percept_id target,
                    percept_sense sense, double x, double y);
percept_event tu_ev3(percept_event_kind kind, percept_id observer, percept_id target,
                     percept_sense sense, double x, double y, double z);
/* A STIMULUS event of a stimulus at (x, y, z); source < 0: it has none. */
percept_event tu_stim_ev(percept_id observer, percept_sense sense, long long source, double x,
                         double y, double z);

void tu_print_events(const char *title, const percept_event *events, size_t count);

/* 1 if the recorded events equal `expected` in order and every field; else print
 * both lists, labelled `what`, and return 0. */
int tu_events_match(const tu_recorder *rec, const percept_event *expected, size_t count,
                    const char *what);
#define tu_expect_events(rec, expected, count, what)                                               \
    assert_true(tu_events_match((rec), (expected), (count), (what)))
#define tu_expect_no_events(rec, what) assert_true(tu_events_match((rec), NULL, 0, (what)))

/* percept_perceived() (by_target 0) or percept_perceived_by() (1) equals `expected`. */
int tu_list_matches(const percept_world *world, percept_id id, percept_sense sense, int by_target,
                    const percept_id *expected, size_t count);
#define tu_expect_perceived(world, id, sense, expected, count)                                     \
    assert_true(tu_list_matches((world), (id), (sense), 0, (expected), (count)))
#define tu_expect_perceived_by(world, id, sense, expected, count)                                  \
    assert_true(tu_list_matches((world), (id), (sense), 1, (expected), (count)))

/* ------------------------------------------------------------------------ */
/* Calls on a world and on the model                                         */

typedef enum tu_op_kind {
    TU_ADD,
    TU_MOVE,
    TU_REMOVE,
    TU_RANGE,
    TU_HIDE,
    TU_MOVE3,
    TU_TURN,
    TU_UPDATE,
    TU_EMIT,
    TU_TICK
} tu_op_kind;

typedef struct tu_op {
    tu_op_kind kind;
    percept_id id;
    percept_entity_desc desc;      /* TU_ADD, TU_UPDATE */
    double x, y, z;                /* TU_MOVE (not z), TU_MOVE3; TU_TURN: the facing */
    percept_sense sense;           /* TU_RANGE, TU_HIDE */
    double value;                  /* the range, or the hidden flag */
    percept_stimulus stimulus;     /* TU_EMIT */
    const percept_change *changes; /* TU_TICK: its entries, which the caller keeps */
    size_t count;                  /* TU_TICK: how many */
} tu_op;

/* Calls as values, for tables and sequences of them. */
#define TU_OP_ADD(i, a, b, s, h, m, hid)                                                           \
    ((tu_op){.kind = TU_ADD, .id = (i), .desc = tu_desc(a, b, s, h, m, hid)})
#define TU_OP_ADD_DESC(i, d) ((tu_op){.kind = TU_ADD, .id = (i), .desc = (d)})
#define TU_OP_UPDATE(i, d) ((tu_op){.kind = TU_UPDATE, .id = (i), .desc = (d)})
#define TU_OP_MOVE(i, a, b) ((tu_op){.kind = TU_MOVE, .id = (i), .x = (a), .y = (b)})
#define TU_OP_MOVE3(i, a, b, c) ((tu_op){.kind = TU_MOVE3, .id = (i), .x = (a), .y = (b), .z = (c)})
#define TU_OP_TURN(i, a, b, c) ((tu_op){.kind = TU_TURN, .id = (i), .x = (a), .y = (b), .z = (c)})
#define TU_OP_REMOVE(i) ((tu_op){.kind = TU_REMOVE, .id = (i)})
#define TU_OP_RANGE(i, s, r) ((tu_op){.kind = TU_RANGE, .id = (i), .sense = (s), .value = (r)})
#define TU_OP_HIDE(i, s, h) ((tu_op){.kind = TU_HIDE, .id = (i), .sense = (s), .value = (h)})
#define TU_OP_EMIT(st) ((tu_op){.kind = TU_EMIT, .stimulus = (st)})
#define TU_OP_TICK(ch, n) ((tu_op){.kind = TU_TICK, .changes = (ch), .count = (n)})

/* The call `o` describes, on the world or on the model; returns its status. */
int tu_apply(percept_world *w, const tu_op *o);
int tu_apply_model(model *m, const tu_op *o);
/* "move 7 (1, 2)": `o` for messages, its senses named as in `m` (may be NULL). */
void tu_describe(const model *m, char *buf, size_t size, const tu_op *o);

/*
 * Make the call on the world (its events recorded in `rec`) and on the
 * model; fail the test unless both give the same status and the world
 * delivered the model's events. Returns the status.
 */
int tu_call(percept_world *w, tu_recorder *rec, model *m, const tu_op *o, const char *what);

/* Fail the test unless the world holds what the model does (model_check_world()). */
void tu_expect_world(const model *m, const percept_world *w, const char *what);

/* Fail the test unless percept_query() gives the model's status and IDs. */
void tu_expect_query(const model *m, const percept_world *w, double x, double y, double z,
                     double radius, const char *what);

/* ------------------------------------------------------------------------ */
/* A failing allocator                                                       */

/*
 * A percept_allocator function (user: a tu_fault_alloc) that fails request
 * number fail_at. Only new blocks and growth count as requests: frees always
 * succeed, as the library may rely on, and so do shrinks unless
 * refuse_shrinks is set (then each returns NULL and leaves the block as it
 * was). Each block carries its size and a magic word, so leaks and frees of
 * foreign pointers are seen.
 */
struct tu_fault_alloc {
    size_t counted;       /* requests that could fail: size > 0, and new or growing */
    size_t fail_at;       /* fail the request with this number (1-based); 0: never */
    int sticky;           /* fail every request after fail_at too: memory stays short */
    int hit;              /* the failure was injected */
    int refuse_shrinks;   /* return NULL for every resize to a smaller size */
    size_t shrinks;       /* resizes to a smaller size asked for, refused or not */
    size_t live_blocks;   /* blocks handed out and not yet freed */
    size_t live_bytes;    /* their sizes, summed */
    size_t foreign_frees; /* frees or resizes of pointers this allocator never gave */
};

void *tu_fault_fn(void *user, void *ptr, size_t size);
void tu_fault_init(tu_fault_alloc *fa);
/* Fail the test unless every block was given back. */
void tu_expect_no_leak(const tu_fault_alloc *fa, const char *what);

#endif /* PERCEPT_TESTUTIL_H */
