/*
 * test_bad_input.c - the bad input the other suites leave out (test_relation.c,
 * test_callback.c, test_config.c and test_plugin_load.c cover the rest): each
 * is refused with a clear status and message, delivers no event and leaves the
 * world exactly as it was, compared over every entity's description and its
 * perceived and perceived-by sets.
 */
#include "testutil.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define SB(s) PERCEPT_SENSE_BIT(s)
#define BIG UINT32_MAX
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------ */
/* A populated world and the check that a refused call changed nothing       */

/* Every ID the fixture's calls name, present or not: the snapshots cover them all. */
static const percept_id watched[] = {0, 1, 2, 3, 4, 5, 99, BIG};

typedef struct fixture {
    percept_world *w;
    tu_recorder rec;
    tu_snapshot before;
} fixture;

/*
 * 1, 2 and 3 perceive each other by some senses; 4 is hidden from sight; 5
 * was added and removed again, so its ID is free and its slot is reusable.
 */
static void fixture_open(fixture *f, const char *backend)
{
    tu_recorder_init(&f->rec);
    f->w = tu_open(backend, "move_events = on\n", &f->rec);
    tu_add(f->w, 1, tu_desc(10, 10, 5, 5, 5, 0));
    tu_add(f->w, 2, tu_desc(13, 14, 3, 0, 5, SB(H)));
    tu_add(f->w, 3, tu_desc(10, 10, 0, 0, 0, 0));
    tu_add(f->w, 4, tu_desc(11, 11, 8, 1, 0, SB(S)));
    tu_add(f->w, 5, tu_desc(12, 10, 9, 9, 9, 0));
    TU_OK(f->w, percept_remove(f->w, 5));
    tu_recorder_clear(&f->rec);
    tu_snapshot_take(f->w, watched, COUNT_OF(watched), &f->before);
}

static void fixture_close(fixture *f)
{
    tu_snapshot_free(&f->before);
    percept_world_close(f->w);
    tu_recorder_free(&f->rec);
}

/*
 * The call returned `want`; its message names the function `fn`; no event
 * came; every watched entity is as before. `fn` NULL: a reading call, whose
 * message is not checked.
 */
static void expect_refused(fixture *f, int rc, int want, const char *fn, const char *what)
{
    if (rc != want) {
        print_error("%s: returned %d (%s), expected %s\n", what, rc,
                    percept_status_name(rc) ? percept_status_name(rc) : "?",
                    percept_status_name(want));
        fail();
    }
    if (fn != NULL) {
        const char *msg = percept_errmsg(f->w);
        if (msg == NULL || strstr(msg, fn) == NULL) {
            print_error("%s: the message '%s' does not name %s\n", what, msg ? msg : "(null)", fn);
            fail();
        }
    }
    if (!tu_events_match(&f->rec, NULL, 0, what))
        fail();
    tu_snapshot after;
    tu_snapshot_take(f->w, watched, COUNT_OF(watched), &after);
    int same = tu_snapshot_equal(&f->before, &after, what);
    tu_snapshot_free(&after);
    if (!same)
        fail();
}

#define REFUSED(f, call, want, fn) expect_refused((f), (call), (want), (fn), #call)

/* ------------------------------------------------------------------------ */
/* Numbers at and beyond the limits                                          */

static void check_number_edges(const char *backend)
{
    const double beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    const double tiny_negative = -nextafter(0.0, 1.0);
    const double bad_coords[] = {beyond, -beyond, DBL_MAX,  -DBL_MAX,
                                 NAN,    -NAN,    INFINITY, -INFINITY};
    const double bad_ranges[] = {beyond, DBL_MAX, -DBL_MAX, tiny_negative, -1e-300,
                                 -1.0,   NAN,     -NAN,     INFINITY,      -INFINITY};
    fixture f;
    fixture_open(&f, backend);

    for (size_t i = 0; i < COUNT_OF(bad_coords); i++) {
        double v = bad_coords[i];
        percept_entity_desc dx = tu_desc(v, 10, 1, 1, 1, 0), dy = tu_desc(10, v, 1, 1, 1, 0);
        REFUSED(&f, percept_add(f.w, 99, &dx), PERCEPT_EINVAL, "percept_add");
        REFUSED(&f, percept_add(f.w, 99, &dy), PERCEPT_EINVAL, "percept_add");
        REFUSED(&f, percept_move(f.w, 1, v, 10), PERCEPT_EINVAL, "percept_move");
        REFUSED(&f, percept_move(f.w, 2, 10, v), PERCEPT_EINVAL, "percept_move");
        REFUSED(&f, percept_move(f.w, 3, v, v), PERCEPT_EINVAL, "percept_move");
    }
    for (size_t i = 0; i < COUNT_OF(bad_ranges); i++) {
        double v = bad_ranges[i];
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            percept_entity_desc d = tu_desc(10, 10, 1, 1, 1, 0);
            d.range[s] = v;
            REFUSED(&f, percept_add(f.w, 99, &d), PERCEPT_EINVAL, "percept_add");
            REFUSED(&f, percept_set_range(f.w, 1, (percept_sense)s, v), PERCEPT_EINVAL,
                    "percept_set_range");
            /* Also for an entity whose range of that sense is 0. */
            REFUSED(&f, percept_set_range(f.w, 3, (percept_sense)s, v), PERCEPT_EINVAL,
                    "percept_set_range");
        }
    }
    /* A number just past the limit is shown as it is, not rounded to the
     * limit itself, and the message states the limit. */
    REFUSED(&f, percept_move(f.w, 1, beyond, 10), PERCEPT_EINVAL, "percept_move");
    assert_non_null(strstr(percept_errmsg(f.w), "(1000000000000000.1, 10) must be finite and "
                                                "within [-1e15, 1e15]"));
    REFUSED(&f, percept_set_range(f.w, 1, H, beyond), PERCEPT_EINVAL, "percept_set_range");
    assert_non_null(strstr(percept_errmsg(f.w), "hearing range 1000000000000000.1 must be a "
                                                "number from 0 to 1e15"));
    /* A number in exponent form is written as the limit is: "1e16", not
     * %g's "1e+16" beside "1e15". */
    REFUSED(&f, percept_move(f.w, 1, 1e16, 2.5e-7), PERCEPT_EINVAL, "percept_move");
    assert_non_null(strstr(percept_errmsg(f.w), "(1e16, 2.5e-7) must be finite and "
                                                "within [-1e15, 1e15]"));
    percept_position far = {1, 0.5, -beyond};
    REFUSED(&f, percept_move_many(f.w, &far, 1), PERCEPT_EINVAL, "percept_move_many");
    assert_non_null(strstr(percept_errmsg(f.w), "moves[0]: entity 1: position (0.5, "
                                                "-1000000000000000.1) must be finite"));
    fixture_close(&f);

    /* At the limit is accepted; -0 is a range of 0, a missing sense. */
    fixture_open(&f, backend);
    percept_entity_desc d = tu_desc(PERCEPT_COORD_LIMIT, 10, -0.0, PERCEPT_COORD_LIMIT, 0, 0);
    TU_OK(f.w, percept_add(f.w, 99, &d));
    percept_entity_desc got;
    TU_OK(f.w, percept_get_entity(f.w, 99, &got));
    assert_true(got.range[S] == 0 && got.range[H] == PERCEPT_COORD_LIMIT);
    /* Its hearing reaches 1 from the edge of the coordinates; sight it lacks. */
    assert_int_equal(percept_perceives(f.w, 99, 1, H), 1);
    assert_int_equal(percept_perceives(f.w, 99, 1, S), 0);
    TU_OK(f.w, percept_set_range(f.w, 1, S, -0.0));
    assert_int_equal(percept_perceives(f.w, 1, 3, S), 0);
    TU_OK(f.w, percept_move(f.w, 3, -PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT));
    fixture_close(&f);
}

static void test_number_edges(void **state)
{
    (void)state;
    tu_for_each_backend(check_number_edges);
}

/* Hidden masks with bits beyond the three senses. */
static void check_hidden_mask(const char *backend)
{
    const unsigned masks[] = {SB(3), SB(3) | SB(S), 0xF0u, UINT_MAX, 1u << 31};
    fixture f;
    fixture_open(&f, backend);
    for (size_t i = 0; i < COUNT_OF(masks); i++) {
        percept_entity_desc d = tu_desc(10, 10, 1, 1, 1, masks[i]);
        REFUSED(&f, percept_add(f.w, 99, &d), PERCEPT_EINVAL, "percept_add");
    }
    /* Any nonzero flag hides, as documented; these are not errors. */
    TU_OK(f.w, percept_set_hidden(f.w, 3, M, 42));
    TU_OK(f.w, percept_set_hidden(f.w, 3, H, -1));
    assert_int_equal(percept_perceives(f.w, 1, 3, M), 0);
    assert_int_equal(percept_perceives(f.w, 1, 3, H), 0);
    fixture_close(&f);
}

static void test_hidden_mask_bits(void **state)
{
    (void)state;
    tu_for_each_backend(check_hidden_mask);
}

/* Sense numbers far outside 0..2, for every call that takes one. */
static void check_sense_numbers(const char *backend)
{
    const int senses[] = {3, 4, 255, -1, -3, INT_MAX, INT_MIN};
    percept_id ids[8];
    size_t count = 12345;
    fixture f;
    fixture_open(&f, backend);
    for (size_t i = 0; i < COUNT_OF(senses); i++) {
        percept_sense s = (percept_sense)senses[i];
        REFUSED(&f, percept_set_range(f.w, 1, s, 1), PERCEPT_EINVAL, "percept_set_range");
        REFUSED(&f, percept_set_range(f.w, 1, s, 0), PERCEPT_EINVAL, "percept_set_range");
        assert_non_null(strstr(percept_errmsg(f.w), "entity 1:")); /* as every change's message */
        REFUSED(&f, percept_set_hidden(f.w, 2, s, 1), PERCEPT_EINVAL, "percept_set_hidden");
        REFUSED(&f, percept_set_hidden(f.w, 2, s, 0), PERCEPT_EINVAL, "percept_set_hidden");
        assert_non_null(strstr(percept_errmsg(f.w), "entity 2:"));
        REFUSED(&f, percept_perceives(f.w, 1, 2, s), PERCEPT_EINVAL, NULL);
        REFUSED(&f, percept_perceived(f.w, 1, s, ids, 8, &count), PERCEPT_EINVAL, NULL);
        REFUSED(&f, percept_perceived_by(f.w, 1, s, ids, 8, &count), PERCEPT_EINVAL, NULL);
        assert_null(percept_backend_name(f.w, s));
        assert_null(percept_backend_path(f.w, s));
        assert_null(percept_sense_name(s));
    }
    assert_int_equal(count, 12345); /* never written on failure */
    fixture_close(&f);
}

static void test_sense_numbers(void **state)
{
    (void)state;
    tu_for_each_backend(check_sense_numbers);
}

/* ------------------------------------------------------------------------ */
/* IDs                                                                       */

/* 0 and 4294967295 are ordinary IDs: unknown until added, in an empty world too. */
static void check_unknown_ids(const char *backend)
{
    percept_entity_desc d;
    percept_id ids[4];
    size_t count;
    tu_recorder rec;
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, NULL, &rec);
    const percept_id unknown[] = {0, 1, BIG};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < COUNT_OF(unknown); i++) {
            percept_id id = unknown[i];
            assert_int_equal(percept_move(w, id, 1, 1), PERCEPT_ENOENT);
            assert_non_null(strstr(percept_errmsg(w), "percept_move"));
            assert_int_equal(percept_remove(w, id), PERCEPT_ENOENT);
            assert_int_equal(percept_set_range(w, id, S, 1), PERCEPT_ENOENT);
            assert_int_equal(percept_set_hidden(w, id, S, 1), PERCEPT_ENOENT);
            assert_int_equal(percept_perceives(w, id, id, S), PERCEPT_ENOENT);
            assert_int_equal(percept_perceived(w, id, S, ids, 4, &count), PERCEPT_ENOENT);
            assert_int_equal(percept_perceived_by(w, id, S, ids, 4, &count), PERCEPT_ENOENT);
            assert_int_equal(percept_get_entity(w, id, &d), PERCEPT_ENOENT);
            assert_int_equal(percept_contains(w, id), 0);
        }
        assert_int_equal(percept_entity_count(w), round);
        assert_int_equal(rec.count, 0);
        /* Second round: the same with one other entity in the world. */
        if (round == 0)
            tu_add(w, 7, tu_desc(1, 1, 5, 5, 5, 0));
        tu_recorder_clear(&rec);
    }
    percept_world_close(w);
    tu_recorder_free(&rec);
}

static void test_unknown_ids(void **state)
{
    (void)state;
    tu_for_each_backend(check_unknown_ids);
}

/* A removed ID is unknown to every call until it is added again. */
static void check_removed_id(const char *backend)
{
    percept_entity_desc d;
    percept_id ids[4];
    size_t count;
    fixture f;
    fixture_open(&f, backend);
    REFUSED(&f, percept_move(f.w, 5, 1, 1), PERCEPT_ENOENT, "percept_move");
    REFUSED(&f, percept_remove(f.w, 5), PERCEPT_ENOENT, "percept_remove");
    REFUSED(&f, percept_set_range(f.w, 5, S, 1), PERCEPT_ENOENT, "percept_set_range");
    REFUSED(&f, percept_set_hidden(f.w, 5, S, 1), PERCEPT_ENOENT, "percept_set_hidden");
    REFUSED(&f, percept_perceives(f.w, 1, 5, S), PERCEPT_ENOENT, NULL);
    REFUSED(&f, percept_perceives(f.w, 5, 1, S), PERCEPT_ENOENT, NULL);
    REFUSED(&f, percept_perceived(f.w, 5, S, ids, 4, &count), PERCEPT_ENOENT, NULL);
    REFUSED(&f, percept_perceived_by(f.w, 5, S, ids, 4, &count), PERCEPT_ENOENT, NULL);
    REFUSED(&f, percept_get_entity(f.w, 5, &d), PERCEPT_ENOENT, NULL);
    fixture_close(&f);
}

static void test_removed_id_is_unknown(void **state)
{
    (void)state;
    tu_for_each_backend(check_removed_id);
}

/*
 * An ID reused after removal, over and over: each time it comes back with
 * nothing of its past. A twin world where the ID never left must deliver the
 * same events for the same re-add and hold the same state afterwards.
 */
static void check_reused_id(const char *backend)
{
    fixture f;
    tu_recorder twin_rec;
    fixture_open(&f, backend);
    tu_recorder_init(&twin_rec);
    percept_world *twin = tu_open(backend, "move_events = on\n", &twin_rec);
    tu_add(twin, 1, tu_desc(10, 10, 5, 5, 5, 0));
    tu_add(twin, 2, tu_desc(13, 14, 3, 0, 5, SB(H)));
    tu_add(twin, 3, tu_desc(10, 10, 0, 0, 0, 0));
    tu_add(twin, 4, tu_desc(11, 11, 8, 1, 0, SB(S)));

    for (int round = 0; round < 50; round++) {
        /* Different places, ranges and masks each round. */
        double x = 8 + round % 7, y = 9 + round % 5;
        percept_entity_desc d =
            tu_desc(x, y, round % 3 * 2.5, round % 4, 9 - round % 9, (unsigned)round % 8);
        tu_recorder_clear(&f.rec);
        tu_recorder_clear(&twin_rec);
        TU_OK(f.w, percept_add(f.w, 5, &d));
        TU_OK(twin, percept_add(twin, 5, &d));
        char what[64];
        snprintf(what, sizeof what, "re-adding ID 5, round %d", round);
        tu_expect_events(&f.rec, twin_rec.events, twin_rec.count, what);

        /* A duplicate of the re-added ID is refused like any other. */
        tu_snapshot_free(&f.before);
        tu_snapshot_take(f.w, watched, COUNT_OF(watched), &f.before);
        tu_recorder_clear(&f.rec);
        REFUSED(&f, percept_add(f.w, 5, &d), PERCEPT_EEXIST, "percept_add");

        tu_snapshot a, b;
        tu_snapshot_take(f.w, watched, COUNT_OF(watched), &a);
        tu_snapshot_take(twin, watched, COUNT_OF(watched), &b);
        assert_true(tu_snapshot_equal(&a, &b, what));
        tu_snapshot_free(&a);
        tu_snapshot_free(&b);

        /* Leave again; both worlds now forget 5. */
        TU_OK(f.w, percept_remove(f.w, 5));
        TU_OK(twin, percept_remove(twin, 5));
    }
    percept_world_close(twin);
    tu_recorder_free(&twin_rec);
    fixture_close(&f);
}

static void test_reused_id(void **state)
{
    (void)state;
    tu_for_each_backend(check_reused_id);
}

/* ------------------------------------------------------------------------ */
/* NULL and misuse of the API's own arguments                                */

static int open_text(percept_world **out, const char *text, const percept_options *options,
                     percept_error *error)
{
    memset(error, 0x55, sizeof *error);
    return percept_world_open_string(out, text, "<bad>", options, error);
}

/* Fail unless creation was refused with `status` and a message, and *out cleared. */
static void expect_open_refused(int rc, percept_world *w, const percept_error *error, int status,
                                const char *needle, const char *what)
{
    if (rc != status || w != NULL || error->status != status ||
        memchr(error->text, '\0', sizeof error->text) == NULL || error->text[0] == '\0' ||
        (needle != NULL && strstr(error->text, needle) == NULL)) {
        print_error("%s: status %d (%s), world %p, message '%.*s'; expected %s%s%s\n", what, rc,
                    percept_status_name(rc), (void *)w, (int)sizeof error->text, error->text,
                    percept_status_name(status), needle ? " mentioning " : "",
                    needle ? needle : "");
        fail();
    }
}

static void *null_alloc_user_check(void *user, void *ptr, size_t size)
{
    (void)user;
    (void)ptr;
    (void)size;
    return NULL;
}

static void test_open_arguments(void **state)
{
    static char dummy;
    const char *ok = "[percept]\nbackend = bruteforce\n";
    percept_world *w;
    percept_error error;
    (void)state;

    w = (percept_world *)(void *)&dummy;
    memset(&error, 0, sizeof error);
    int rc = percept_world_open(&w, NULL, NULL, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, NULL, "percept_world_open with no path");
    assert_int_equal(percept_world_open(NULL, "/nonexistent.ini", NULL, &error), PERCEPT_EINVAL);
    assert_int_equal(percept_world_open(NULL, "/nonexistent.ini", NULL, NULL), PERCEPT_EINVAL);

    /* Options not made with PERCEPT_OPTIONS_INIT. */
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.size = 0;
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "PERCEPT_OPTIONS_INIT", "options.size 0");
    options.size = sizeof options - 1;
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "PERCEPT_OPTIONS_INIT",
                        "options.size too small");

    /* Options from a newer header, larger than this library's: fine while
     * the fields it does not know are zero, refused once one is set. */
    struct {
        percept_options known;
        unsigned char newer[24];
    } grown;
    memset(&grown, 0, sizeof grown);
    grown.known = (percept_options)PERCEPT_OPTIONS_INIT;
    grown.known.size = sizeof grown;
    w = NULL;
    assert_int_equal(open_text(&w, ok, &grown.known, &error), PERCEPT_OK);
    percept_world_close(w);
    grown.known.size = SIZE_MAX / 2; /* garbage, never read past */
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &grown.known, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "PERCEPT_OPTIONS_INIT",
                        "options.size SIZE_MAX / 2");
    grown.known.size = sizeof grown;
    grown.newer[5] = 1;
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &grown.known, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "newer version",
                        "options of a newer version set");

    /* An allocator without its function. */
    percept_allocator no_fn = {NULL, NULL};
    options = (percept_options)PERCEPT_OPTIONS_INIT;
    options.allocator = &no_fn;
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_EINVAL, "alloc", "an allocator without alloc");

    /* An allocator that never has memory: ENOMEM, not a crash. */
    percept_allocator empty = {null_alloc_user_check, NULL};
    options.allocator = &empty;
    w = (percept_world *)(void *)&dummy;
    rc = open_text(&w, ok, &options, &error);
    expect_open_refused(rc, w, &error, PERCEPT_ENOMEM, "out of memory", "an empty allocator");

    /* No error struct: still refused, still cleared. */
    w = (percept_world *)(void *)&dummy;
    assert_int_equal(percept_world_open(&w, "/nonexistent/percept.ini", NULL, NULL), PERCEPT_EIO);
    assert_null(w);
}

static void check_null_arguments(const char *backend)
{
    size_t count = 99;
    fixture f;
    fixture_open(&f, backend);
    REFUSED(&f, percept_add(f.w, 99, NULL), PERCEPT_EINVAL, "percept_add");
    REFUSED(&f, percept_get_entity(f.w, 1, NULL), PERCEPT_EINVAL, NULL);
    REFUSED(&f, percept_perceived(f.w, 1, S, NULL, 0, NULL), PERCEPT_EINVAL, NULL);
    REFUSED(&f, percept_perceived_by(f.w, 1, S, NULL, 1, &count), PERCEPT_EINVAL, NULL);
    /* A NULL list with capacity 0 is the documented way to ask for the size. */
    assert_int_equal(percept_perceived(f.w, 1, S, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, 2);
    /* Clearing the callback is allowed; the world goes on without events. */
    assert_int_equal(percept_set_event_callback(f.w, NULL, NULL), PERCEPT_OK);
    TU_OK(f.w, percept_move(f.w, 3, 100, 100));
    assert_int_equal(f.rec.count, 0);
    assert_int_equal(percept_perceives(f.w, 1, 3, S), 0);
    fixture_close(&f);

    /* Without a world: nothing to change, messages for humans anyway. */
    assert_non_null(percept_errmsg(NULL));
    assert_int_equal(percept_entity_count(NULL), 0);
    assert_null(percept_backend_name(NULL, S));
    assert_null(percept_backend_path(NULL, S));
    assert_non_null(percept_strerror(12345));
    assert_non_null(percept_strerror(INT_MIN));
    assert_non_null(percept_status_name(12345));
}

static void test_null_arguments(void **state)
{
    (void)state;
    tu_for_each_backend(check_null_arguments);
}

/* ------------------------------------------------------------------------ */
/* Calls from inside the event callback not covered by test_callback.c       */

typedef struct inside {
    percept_world *self, *other;
    tu_recorder *rec;
    int set_callback_rc, other_rc;
    size_t calls;
} inside;

static void inside_callback(void *user, const percept_event *e)
{
    inside *in = user;
    tu_recorder_push(in->rec, e);
    if (in->calls++ > 0)
        return;
    /* Replacing or clearing the callback while it runs is a change: refused. */
    in->set_callback_rc = percept_set_event_callback(in->self, NULL, NULL);
    /* Another world is not in a callback: changing it is fine. */
    percept_entity_desc d = tu_desc(e->x, e->y, 1, 1, 1, 0);
    in->other_rc = percept_add(in->other, e->target, &d);
}

static void check_inside_callback(const char *backend)
{
    fixture f;
    tu_recorder other_rec;
    fixture_open(&f, backend);
    tu_recorder_init(&other_rec);
    percept_world *other = tu_open(backend, NULL, &other_rec);
    tu_add(other, 1000, tu_desc(13, 14, 10, 10, 10, 0));
    tu_recorder_clear(&other_rec);

    inside in = {f.w, other, &f.rec, 0, 0, 0};
    assert_int_equal(percept_set_event_callback(f.w, inside_callback, &in), PERCEPT_OK);
    TU_OK(f.w, percept_move(f.w, 2, 13, 15));
    assert_true(in.calls > 0);
    assert_int_equal(in.set_callback_rc, PERCEPT_EBUSY);
    assert_non_null(strstr(percept_errmsg(f.w), "percept_set_event_callback"));
    assert_int_equal(in.other_rc, PERCEPT_OK);
    /* The nested add in the other world delivered its own events to its own callback. */
    assert_true(other_rec.count > 0);
    assert_int_equal(percept_contains(other, f.rec.events[0].target), 1);

    /* The callback is still the one set: the next call's events reach it. */
    size_t before = in.calls;
    TU_OK(f.w, percept_move(f.w, 2, 13, 14));
    assert_true(in.calls > before);
    percept_world_close(other);
    tu_recorder_free(&other_rec);
    fixture_close(&f);
}

static void test_inside_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_inside_callback);
}

/* ------------------------------------------------------------------------ */
/* Configuration: plugin directories and backend parameters                 */

static char tmp_dir[] = "/tmp/percept-bad-XXXXXX";

static void test_options_plugin_dir(void **state)
{
    static char dummy;
    char missing[sizeof tmp_dir + 32], file[sizeof tmp_dir + 32], text[1024];
    percept_error error;
    percept_options options = PERCEPT_OPTIONS_INIT;
    percept_world *w;
    (void)state;
    snprintf(missing, sizeof missing, "%s/no-such-dir", tmp_dir);
    snprintf(file, sizeof file, "%s/a-file", tmp_dir);
    FILE *fp = fopen(file, "w");
    assert_non_null(fp);
    assert_int_equal(fclose(fp), 0);

    const char *dirs[] = {missing, file};
    for (size_t i = 0; i < COUNT_OF(dirs); i++) {
        /* In the options: the caller's mistake, EINVAL. */
        options.plugin_dir = dirs[i];
        w = (percept_world *)(void *)&dummy;
        int rc = open_text(&w, "[percept]\nbackend = bruteforce\n", &options, &error);
        expect_open_refused(rc, w, &error, PERCEPT_EINVAL, dirs[i], "options.plugin_dir");
        /* In the config: the file's mistake, ECONFIG with its line. */
        snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\nplugin_dir = %s\n", dirs[i]);
        w = (percept_world *)(void *)&dummy;
        rc = open_text(&w, text, NULL, &error);
        expect_open_refused(rc, w, &error, PERCEPT_ECONFIG,
                            "<bad>:3: key 'plugin_dir' in [percept]", "plugin_dir in the config");
        assert_int_equal(error.line, 3);
    }
    unlink(file);
}

/* A config whose only problem is line 4, a parameter of the sense's backend. */
static void expect_param_refused(const char *backend, const char *section, const char *param,
                                 const char *needle)
{
    static char dummy;
    char text[512], key[64], where[128];
    percept_error error;
    percept_world *w = (percept_world *)(void *)&dummy;
    snprintf(text, sizeof text, "[percept]\nbackend = %s\n[%s]\n%s\n", backend, section, param);
    snprintf(key, sizeof key, "%.*s", (int)strcspn(param, " ="), param);
    snprintf(where, sizeof where, "<bad>:4: key '%s' in [%s]: ", key, section);
    int rc = open_text(&w, text, NULL, &error);
    char what[256];
    snprintf(what, sizeof what, "backend %s, [%s] %s", backend, section, param);
    expect_open_refused(rc, w, &error, PERCEPT_ECONFIG, where, what);
    assert_int_equal(error.line, 4);
    if (needle != NULL && strstr(error.text, needle) == NULL) {
        print_error("%s: the message '%s' does not say '%s'\n", what, error.text, needle);
        fail();
    }
}

/* Each backend validates its own parameters; the host adds file, line, section and key. */
static void check_backend_params(const char *backend)
{
    static const char *const sections[] = {"sight", "hearing", "smell"};
    for (size_t i = 0; i < COUNT_OF(sections); i++)
        expect_param_refused(backend, sections[i], "no_such_key = 1", NULL);
    const char *key = strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0 ? "cell_size"
                      : strcmp(backend, "tower") == 0 ? "tower_size"
                                                      : NULL;
    if (key == NULL)
        return;
    /* Each refused for what it is: not a number, too small, too large. */
    const char *too_small = strcmp(backend, "hashgrid") == 0 ? "at least 0.001" : "greater than 0";
    static const char *const not_numbers[] = {"abc", "nan", "inf", "", "1e400", "5x", "0x10"};
    for (size_t i = 0; i < COUNT_OF(not_numbers); i++) {
        char param[64];
        snprintf(param, sizeof param, "%s = %s", key, not_numbers[i]);
        expect_param_refused(backend, sections[i % 3], param, "must be a plain decimal number");
    }
    static const char *const too_small_values[] = {"0", "-1", "-0"};
    for (size_t i = 0; i < COUNT_OF(too_small_values); i++) {
        char param[64];
        snprintf(param, sizeof param, "%s = %s", key, too_small_values[i]);
        expect_param_refused(backend, sections[i % 3], param, too_small);
    }
    char param[64];
    snprintf(param, sizeof param, "%s = 1.0000000000000002e15", key);
    expect_param_refused(backend, "sight", param, "must be at most 1e15");
    /* A good value still opens. */
    char text[256];
    percept_world *w = NULL;
    percept_error error;
    snprintf(text, sizeof text, "[percept]\nbackend = %s\n[smell]\n%s = 17\n", backend, key);
    assert_int_equal(open_text(&w, text, NULL, &error), PERCEPT_OK);
    percept_world_close(w);
}

static void test_backend_params(void **state)
{
    (void)state;
    tu_for_each_backend(check_backend_params);
}

/* Bounds that make the core's observer grid too fine: a clear ECONFIG, not a huge allocation. */
static void test_observer_grid_too_fine(void **state)
{
    static char dummy;
    char text[256];
    percept_error error;
    percept_world *w = (percept_world *)(void *)&dummy;
    (void)state;
    snprintf(text, sizeof text,
             "[percept]\nbackend = bruteforce\n[world]\nmax_x = 100000\nmax_y = 100000\n"
             "[hearing]\nobserver_cell_size = 1\n");
    int rc = open_text(&w, text, NULL, &error);
    expect_open_refused(rc, w, &error, PERCEPT_ECONFIG,
                        "<bad>:7: key 'observer_cell_size' in [hearing]",
                        "observer_cell_size too small");
    assert_int_equal(error.line, 7);

    /* The same cell size over small bounds is fine. */
    w = NULL;
    assert_int_equal(open_text(&w,
                               "[percept]\nbackend = bruteforce\n[world]\nmax_x = 100\n"
                               "max_y = 100\n[hearing]\nobserver_cell_size = 1\n",
                               NULL, &error),
                     PERCEPT_OK);
    percept_world_close(w);
}

static int make_tmp_dir(void **state)
{
    (void)state;
    return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

static int remove_tmp_dir(void **state)
{
    (void)state;
    return rmdir(tmp_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_number_edges),          tu_backend_test(test_hidden_mask_bits),
        tu_backend_test(test_sense_numbers),         tu_backend_test(test_unknown_ids),
        tu_backend_test(test_removed_id_is_unknown), tu_backend_test(test_reused_id),
        cmocka_unit_test(test_open_arguments),       tu_backend_test(test_null_arguments),
        tu_backend_test(test_inside_callback),       cmocka_unit_test(test_options_plugin_dir),
        tu_backend_test(test_backend_params),        cmocka_unit_test(test_observer_grid_too_fine),
    };
    return cmocka_run_group_tests(tests, make_tmp_dir, remove_tmp_dir);
}
