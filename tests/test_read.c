/*
 * test_read.c - percept_entities() and percept_get_bounds(): the IDs in the
 * world after a seeded random run of adds, removes and re-adds, as the model
 * (model.h) has them, and the bounds the configuration or the options gave.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include "../tools/splitmix.h"

/* Never an ID of the pool, so that a buffer still full of it was not written. */
#define SENTINEL ((percept_id)0xDEADBEEFu)

/* The IDs a run draws from: both ends of the range, the small ones right
 * after 0, the large ones right before UINT32_MAX, and spread ones. */
#define POOL_SIZE 600
static percept_id pool[POOL_SIZE];

static void fill_pool(void)
{
    size_t n = 0;
    for (uint32_t i = 0; i < 40; i++)
        pool[n++] = i; /* 0, 1, 2, ... */
    for (uint32_t i = 0; i < 40; i++)
        pool[n++] = UINT32_MAX - i; /* UINT32_MAX, UINT32_MAX - 1, ... */
    for (uint32_t i = 2; n < POOL_SIZE; i++) {
        percept_id id = tu_spread_id(i);
        int seen = id == SENTINEL;
        for (size_t j = 0; j < n && !seen; j++)
            seen = pool[j] == id;
        if (!seen)
            pool[n++] = id;
    }
}

static void fill(percept_id *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = SENTINEL;
}

static int all_sentinel(const percept_id *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != SENTINEL)
            return 0;
    return 1;
}

/* Everything percept_entities() must say of a world holding the model's IDs. */
static void check_entities(const percept_world *w, const model *m, size_t step)
{
    static percept_id want[POOL_SIZE], buf[POOL_SIZE + 8];
    const size_t n = model_ids(m, want);
    size_t count;

    assert_int_equal(percept_entity_count(w), n);
    count = SIZE_MAX;
    assert_int_equal(percept_entities(w, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, n);
    /* Too little room, 0 or one short: the count, and the buffer untouched. */
    for (size_t cap = 0; cap < 2 && cap < n; cap++) {
        fill(buf, COUNT_OF(buf));
        count = SIZE_MAX;
        assert_int_equal(percept_entities(w, buf, cap ? n - 1 : 0, &count), PERCEPT_OK);
        assert_int_equal(count, n);
        if (!all_sentinel(buf, COUNT_OF(buf)))
            fail_msg("step %zu: room for %zu of %zu IDs, yet the buffer was written", step,
                     cap ? n - 1 : 0, n);
    }
    /* Exactly enough, then room to spare: all of them, ascending, nothing past them. */
    for (size_t spare = 0; spare <= 5; spare += 5) {
        fill(buf, COUNT_OF(buf));
        count = SIZE_MAX;
        assert_int_equal(percept_entities(w, buf, n + spare, &count), PERCEPT_OK);
        assert_int_equal(count, n);
        if (memcmp(buf, want, n * sizeof buf[0]) != 0)
            fail_msg("step %zu: percept_entities() differs from the model's %zu IDs", step, n);
        assert_true(all_sentinel(buf + n, COUNT_OF(buf) - n));
    }
}

/*
 * A seeded run: a phase that mostly adds, one that mostly removes (leaving
 * dead slots below the high-water mark), and a mixed one that re-adds into
 * freed slots; after every step the world is compared with the model.
 */
static void run_random(const char *backend)
{
    static const unsigned add_percent[3] = {85, 20, 50};
    uint64_t rng = 20240614u;
    model m;
    tu_recorder rec;
    model_init(&m, 1);
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, NULL, &rec);
    check_entities(w, &m, 0);
    size_t step = 0;
    for (int phase = 0; phase < 3; phase++) {
        for (int i = 0; i < 900; i++) {
            int want_add = splitmix_below(&rng, 100) < add_percent[phase];
            tu_op o = {.id = pool[splitmix_below(&rng, POOL_SIZE)]};
            /* An ID in the state the step wants, a few tries, then what came. */
            for (int tries = 0; tries < 8 && (model_get(&m, o.id) == NULL) != want_add; tries++)
                o.id = pool[splitmix_below(&rng, POOL_SIZE)];
            /* Mostly the call that succeeds; one in ten the one that must fail. */
            int present = model_get(&m, o.id) != NULL;
            o.kind = (splitmix_below(&rng, 10) == 0) != present ? TU_REMOVE : TU_ADD;
            o.desc = tu_desc(
                (double)splitmix_below(&rng, 1400) - 200, (double)splitmix_below(&rng, 1400) - 200,
                splitmix_below(&rng, 3) == 0 ? (double)splitmix_below(&rng, 120) : 0, 0, 0, 0);
            tu_call(w, &rec, &m, &o, "a random add or remove");
            if (m.alive > 0 && splitmix_below(&rng, 4) == 0) { /* moves change nothing listed */
                percept_id ids[POOL_SIZE];
                tu_op mv = {.kind = TU_MOVE,
                            .x = splitmix_below(&rng, 1024),
                            .y = splitmix_below(&rng, 1024)};
                mv.id = ids[splitmix_below(&rng, (uint32_t)model_ids(&m, ids))];
                tu_call(w, &rec, &m, &mv, "a random move");
            }
            check_entities(w, &m, ++step);
        }
    }
    tu_expect_world(&m, w, "after the run");
    percept_world_close(w);
    tu_recorder_free(&rec);
    model_free(&m);
}

static void test_entities_random(void **state)
{
    (void)state;
    tu_for_each_backend(run_random);
}

/* Bad arguments: PERCEPT_EINVAL, no output written, the world's message untouched. */
static void test_entities_bad_arguments(void **state)
{
    (void)state;
    percept_world *w = tu_open(tu_backend_name(0), NULL, NULL);
    tu_add(w, 7, tu_desc(1, 1, 0, 0, 0, 0));
    tu_add(w, 3, tu_desc(2, 2, 0, 0, 0, 0));
    assert_int_equal(percept_remove(w, 99), PERCEPT_ENOENT);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", percept_errmsg(w));
    assert_true(msg[0] != '\0');

    percept_id buf[4];
    size_t count = 12345;
    fill(buf, 4);
    assert_int_equal(percept_entities(NULL, buf, 4, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_entities(NULL, NULL, 0, &count), PERCEPT_EINVAL);
    assert_int_equal(percept_entities(w, buf, 4, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_entities(w, NULL, 0, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_entities(w, NULL, 1, &count), PERCEPT_EINVAL);
    assert_int_equal(count, 12345);
    assert_true(all_sentinel(buf, 4));
    assert_string_equal(percept_errmsg(w), msg);

    assert_int_equal(percept_entities(w, buf, 4, &count), PERCEPT_OK);
    assert_int_equal(count, 2);
    assert_true(buf[0] == 3 && buf[1] == 7 && buf[2] == SENTINEL);
    assert_string_equal(percept_errmsg(w), msg);
    percept_world_close(w);
}

/* ------------------------------------------------------------------------ */
/* Bounds                                                                    */

static void expect_bounds(const percept_world *w, double min_x, double min_y, double max_x,
                          double max_y)
{
    percept_bounds b = {-1, -1, -1, -1};
    assert_int_equal(percept_get_bounds(w, &b), PERCEPT_OK);
    if (b.min_x != min_x || b.min_y != min_y || b.max_x != max_x || b.max_y != max_y) {
        print_error("bounds (%.17g, %.17g, %.17g, %.17g), expected (%.17g, %.17g, %.17g, %.17g)\n",
                    b.min_x, b.min_y, b.max_x, b.max_y, min_x, min_y, max_x, max_y);
        fail();
    }
}

static void test_bounds_default(void **state)
{
    (void)state;
    percept_world *w = tu_open(tu_backend_name(0), NULL, NULL);
    expect_bounds(w, 0, 0, 1024, 1024);
    percept_world_close(w);
}

static void test_bounds_from_config(void **state)
{
    (void)state;
    percept_world *w = tu_open(tu_backend_name(0),
                               "[world]\nmin_x = -500.5\nmin_y = -20\nmax_x = 3000\n"
                               "max_y = 0.25\n",
                               NULL);
    expect_bounds(w, -500.5, -20, 3000, 0.25);
    percept_world_close(w);

    /* A bound the section does not set keeps its default. */
    w = tu_open(tu_backend_name(0), "[world]\nmax_x = 77\nmin_y = -3\n", NULL);
    expect_bounds(w, 0, -3, 77, 1024);
    percept_world_close(w);
}

static void test_bounds_from_options(void **state)
{
    (void)state;
    char ini[256];
    snprintf(ini, sizeof ini,
             "[percept]\nbackend = %s\n[world]\nmin_x = 10\nmin_y = 20\nmax_x = 30\n"
             "max_y = 40\n",
             tu_backend_name(0));
    const percept_bounds given = {-1e6, 5, 2.5e6, 7.125};
    percept_options opt = PERCEPT_OPTIONS_INIT;
    opt.bounds = &given;
    percept_world *w = NULL;
    percept_error err;
    int rc = percept_world_open_string(&w, ini, "<test>", &opt, &err);
    if (rc != PERCEPT_OK) {
        print_error("cannot open the world: %s\n", err.text);
        fail();
    }
    expect_bounds(w, -1e6, 5, 2.5e6, 7.125);
    percept_world_close(w);
}

static void test_bounds_bad_arguments(void **state)
{
    (void)state;
    percept_world *w = tu_open(tu_backend_name(0), "[world]\nmax_x = 9\n", NULL);
    percept_bounds b = {-1, -2, -3, -4};
    assert_int_equal(percept_get_bounds(NULL, &b), PERCEPT_EINVAL);
    assert_true(b.min_x == -1 && b.min_y == -2 && b.max_x == -3 && b.max_y == -4);
    assert_int_equal(percept_get_bounds(w, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_get_bounds(NULL, NULL), PERCEPT_EINVAL);
    percept_world_close(w);
}

/* ------------------------------------------------------------------------ */
/* Inside the event callback                                                 */

typedef struct watcher {
    percept_world *w;
    const model *m; /* the state after the call being delivered */
    percept_bounds bounds;
    size_t events, problems;
} watcher;

static void on_event(void *user, const percept_event *e)
{
    (void)e;
    watcher *v = user;
    percept_id buf[16], want[16];
    size_t count = 0, n = model_ids(v->m, want);
    percept_bounds b;
    v->events++;
    v->problems += percept_entities(v->w, buf, COUNT_OF(buf), &count) != PERCEPT_OK || count != n ||
                   memcmp(buf, want, n * sizeof buf[0]) != 0 ||
                   percept_get_bounds(v->w, &b) != PERCEPT_OK ||
                   memcmp(&b, &v->bounds, sizeof b) != 0;
}

/* Each change is made in the model first: the callback sees the state after the call. */
static void check_inside_callback(const char *backend)
{
    static const percept_id ids[] = {UINT32_MAX, 0, 500, 12, 4000000000u, 1};
    model m;
    model_init(&m, 1);
    watcher v = {.m = &m, .bounds = {-50, -60, 700, 800}};
    v.w = tu_open(backend, "[world]\nmin_x = -50\nmin_y = -60\nmax_x = 700\nmax_y = 800\n", NULL);
    TU_OK(v.w, percept_set_event_callback(v.w, on_event, &v));
    for (size_t i = 0; i < COUNT_OF(ids); i++) {
        percept_entity_desc d = tu_desc((double)(i * 3), 0, 20, 0, 0, 0);
        assert_int_equal(model_add(&m, ids[i], &d), PERCEPT_OK);
        tu_add(v.w, ids[i], d);
    }
    const percept_change moves[] = {TU_CH_MOVE(500, 1, 1, 0), TU_CH_MOVE(12, 2, 2, 0),
                                    TU_CH_MOVE(0, 900, 900, 0)};
    assert_int_equal(model_tick(&m, moves, COUNT_OF(moves)), PERCEPT_OK);
    TU_OK(v.w, percept_tick(v.w, moves, COUNT_OF(moves)));
    assert_int_equal(model_remove(&m, 500), PERCEPT_OK);
    TU_OK(v.w, percept_remove(v.w, 500));
    assert_int_equal(model_remove(&m, UINT32_MAX), PERCEPT_OK);
    TU_OK(v.w, percept_remove(v.w, UINT32_MAX));
    percept_entity_desc d = tu_desc(4, 0, 20, 0, 0, 0);
    assert_int_equal(model_add(&m, UINT32_MAX, &d), PERCEPT_OK);
    tu_add(v.w, UINT32_MAX, d);
    assert_true(v.events > 10 && v.problems == 0);
    tu_expect_world(&m, v.w, "after the calls");
    percept_world_close(v.w);
    model_free(&m);
}

static void test_read_inside_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_inside_callback);
}

int main(void)
{
    fill_pool();
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_entities_random),      cmocka_unit_test(test_entities_bad_arguments),
        cmocka_unit_test(test_bounds_default),      cmocka_unit_test(test_bounds_from_config),
        cmocka_unit_test(test_bounds_from_options), cmocka_unit_test(test_bounds_bad_arguments),
        tu_backend_test(test_read_inside_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
