/*
 * testutil.h - helpers shared by the API test suites: the backend list, opening
 * worlds, recording events and comparing them, and snapshots of a world's state.
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

/* ------------------------------------------------------------------------ */
/* Backends under test                                                       */

/* The backends named by PERCEPT_TEST_BACKENDS (space separated); by default every NAME.so
 * in the first directory of PERCEPT_PLUGIN_PATH, else "bruteforce". */
size_t tu_backend_count(void);
const char *tu_backend_name(size_t index);

/*
 * Run fn once per backend under test. The backend being run is remembered
 * until the loop completes, so that tu_report_backend() can name it when an
 * assertion jumped out of the loop.
 */
void tu_for_each_backend(void (*fn)(const char *backend));

/* A cmocka teardown: names the backend a failed tu_for_each_backend() loop was at. */
int tu_report_backend(void **state);

/* A test run through tu_for_each_backend() with the backend reported on failure. */
#define tu_backend_test(fn) cmocka_unit_test_teardown(fn, tu_report_backend)

/* ------------------------------------------------------------------------ */
/* Event recording                                                           */

/* A growable list of the events a world delivered. */
typedef struct tu_recorder {
    percept_event *events;
    size_t count;
    size_t capacity;
} tu_recorder;

void tu_recorder_init(tu_recorder *rec);
void tu_recorder_clear(tu_recorder *rec);
void tu_recorder_free(tu_recorder *rec);
/* Append one event (aborts the test binary when out of memory: the callback cannot fail). */
void tu_recorder_push(tu_recorder *rec, const percept_event *event);
/* A percept_event_fn whose user pointer is a tu_recorder. */
void tu_record(void *user, const percept_event *event);

/* ------------------------------------------------------------------------ */
/* Worlds                                                                    */

/* One changing call, for the suites that replay sequences of them. */
typedef enum tu_op_kind { TU_ADD, TU_MOVE, TU_REMOVE, TU_RANGE, TU_HIDE } tu_op_kind;

typedef struct tu_op {
    tu_op_kind kind;
    percept_id id;
    percept_entity_desc desc; /* TU_ADD */
    double x, y;              /* TU_MOVE */
    percept_sense sense;      /* TU_RANGE, TU_HIDE */
    double value;             /* the range, or the hidden flag */
} tu_op;

/* Makes the call `o` describes on `w`; returns its status. */
int tu_apply(percept_world *w, const tu_op *o);

/*
 * Open a world from "[percept]\nbackend = NAME\n" followed by `extra_ini`
 * (may be NULL; it continues the [percept] section and may open others).
 * Fails the test, printing percept_error's text, if the world cannot be
 * opened. When `rec` is not NULL it receives the world's events.
 */
percept_world *tu_open(const char *backend, const char *extra_ini, tu_recorder *rec);

typedef struct tu_fault_alloc tu_fault_alloc;
/* As tu_open(), with every byte of the world from `fa` (see tu_fault_fn()) when not NULL. */
percept_world *tu_open_faulty(const char *backend, const char *extra_ini, tu_recorder *rec,
                              tu_fault_alloc *fa);

/* A description: position, ranges (sight, hearing, smell) and hidden mask. */
percept_entity_desc tu_desc(double x, double y, double sight, double hearing, double smell,
                            unsigned hidden);

/* Fail the test unless `call` returns PERCEPT_OK, printing the world's error message. */
#define TU_OK(world, call)                                                                         \
    do {                                                                                           \
        int tu_rc_ = (call);                                                                       \
        if (tu_rc_ != PERCEPT_OK) {                                                                \
            print_error("%s returned %d: %s\n", #call, tu_rc_, percept_errmsg(world));             \
            fail();                                                                                \
        }                                                                                          \
    } while (0)

/* Add an entity and fail the test if that does not succeed. */
void tu_add(percept_world *world, percept_id id, percept_entity_desc desc);

/* The i-th of distinct IDs spread over the whole 32-bit range (a bijection
 * of i), 0 and UINT32_MAX included: for i 0 and 1. */
percept_id tu_spread_id(uint32_t i);

/* ------------------------------------------------------------------------ */
/* Events                                                                    */

percept_event tu_ev(percept_event_kind kind, percept_id observer, percept_id target,
                    percept_sense sense, double x, double y);

/* Order by observer, then target, then sense, then kind (the documented order). */
int tu_event_cmp(const void *a, const void *b);
void tu_sort_events(percept_event *events, size_t count);

/* Write "OBSERVER TARGET SENSE KIND (X, Y)" for one event to `buf`. */
void tu_format_event(char *buf, size_t size, const percept_event *event);
/* Print a list of events through cmocka's print_error, each line prefixed. */
void tu_print_events(const char *title, const percept_event *events, size_t count);

/*
 * 1 if the recorded events equal `expected` in order and in every field
 * (position compared exactly); else print both lists, labelled `what`, and
 * return 0.
 */
int tu_events_match(const tu_recorder *rec, const percept_event *expected, size_t count,
                    const char *what);

/* Fail the test unless the recorded events equal `expected` (see tu_events_match()). */
#define tu_expect_events(rec, expected, count, what)                                               \
    assert_true(tu_events_match((rec), (expected), (count), (what)))

/* Fail the test unless nothing was recorded. */
#define tu_expect_no_events(rec, what) assert_true(tu_events_match((rec), NULL, 0, (what)))

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */

/*
 * percept_perceived() (by_target 0) or percept_perceived_by() (by_target 1)
 * into `ids` (capacity `cap`); fails the test on an error or if the list does
 * not fit. Returns the number of IDs.
 */
size_t tu_list(const percept_world *world, percept_id id, percept_sense sense, int by_target,
               percept_id *ids, size_t cap);

/*
 * 1 if the list for (id, sense) equals `expected` (ascending IDs), else print
 * both and return 0.
 */
int tu_list_matches(const percept_world *world, percept_id id, percept_sense sense, int by_target,
                    const percept_id *expected, size_t count);

#define tu_expect_perceived(world, id, sense, expected, count)                                     \
    assert_true(tu_list_matches((world), (id), (sense), 0, (expected), (count)))
#define tu_expect_perceived_by(world, id, sense, expected, count)                                  \
    assert_true(tu_list_matches((world), (id), (sense), 1, (expected), (count)))

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

/* Copy the file `from` to `to` (made or emptied), failing the test on any error. */
void tu_copy_file(const char *from, const char *to);

/* ------------------------------------------------------------------------ */
/* Snapshots: everything the API tells about a set of IDs                    */

typedef struct tu_snapshot {
    uint64_t *words;
    size_t count;
    size_t capacity;
} tu_snapshot;

/*
 * Record the entity count and, for each ID in `ids`: whether the world
 * contains it, its description, and for each sense the perceived and
 * perceived-by lists. Fails the test if a query fails unexpectedly.
 */
void tu_snapshot_take(const percept_world *world, const percept_id *ids, size_t n,
                      tu_snapshot *snap);
/* 1 if equal; else print where they first differ and return 0. */
int tu_snapshot_equal(const tu_snapshot *a, const tu_snapshot *b, const char *what);
void tu_snapshot_free(tu_snapshot *snap);

#endif /* PERCEPT_TESTUTIL_H */
