/*
 * test_read.c - percept_entities() and percept_get_bounds(), checked against
 * the test's own model: a sorted array of the IDs that should be in the
 * world after a seeded random run of adds, removes and re-adds, and the
 * bounds the configuration or the options gave.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Never an ID of the pool, so that a buffer still full of it was not written. */
#define SENTINEL ((percept_id)0xDEADBEEFu)

/* ------------------------------------------------------------------------ */
/* The model                                                                 */

/* splitmix64: fully specified, so the same seed means the same run. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint32_t below(uint64_t *state, uint32_t n)
{
    return (uint32_t)(next_random(state) % n);
}

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

/* The IDs that should be in the world, ascending: kept by insertion, the
 * test's own order, not the library's sort. */
typedef struct model {
    percept_id ids[POOL_SIZE];
    size_t n;
} model;

static size_t model_lower(const model *m, percept_id id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int model_has(const model *m, percept_id id)
{
    size_t i = model_lower(m, id);
    return i < m->n && m->ids[i] == id;
}

static void model_add(model *m, percept_id id)
{
    size_t i = model_lower(m, id);
    memmove(&m->ids[i + 1], &m->ids[i], (m->n - i) * sizeof m->ids[0]);
    m->ids[i] = id;
    m->n++;
}

static void model_remove(model *m, percept_id id)
{
    size_t i = model_lower(m, id);
    memmove(&m->ids[i], &m->ids[i + 1], (m->n - i - 1) * sizeof m->ids[0]);
    m->n--;
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

static void print_mismatch(const char *what, size_t step, const model *m, const percept_id *got)
{
    size_t i = 0;
    while (i < m->n && got[i] == m->ids[i])
        i++;
    print_error("%s at step %zu (%zu IDs): index %zu is %lu, expected %lu\n", what, step, m->n, i,
                (unsigned long)got[i], (unsigned long)m->ids[i]);
}

/* Everything percept_entities() must say about the world `m` models. */
static void check_entities(const percept_world *w, const model *m, size_t step)
{
    static percept_id buf[POOL_SIZE + 8];
    const size_t n = m->n;
    size_t count;

    assert_int_equal(percept_entity_count(w), n);

    /* Size only. */
    count = SIZE_MAX;
    assert_int_equal(percept_entities(w, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, n);

    /* Capacity 0 with a buffer: nothing written unless the world is empty. */
    fill(buf, COUNT_OF(buf));
    count = SIZE_MAX;
    assert_int_equal(percept_entities(w, buf, 0, &count), PERCEPT_OK);
    assert_int_equal(count, n);
    assert_true(all_sentinel(buf, COUNT_OF(buf)));

    /* One too few: the count, and the buffer untouched. */
    if (n > 0) {
        fill(buf, COUNT_OF(buf));
        count = SIZE_MAX;
        assert_int_equal(percept_entities(w, buf, n - 1, &count), PERCEPT_OK);
        assert_int_equal(count, n);
        if (!all_sentinel(buf, COUNT_OF(buf))) {
            print_error("step %zu: capacity %zu < %zu, yet the buffer was written\n", step, n - 1,
                        n);
            fail();
        }
    }

    /* Exactly enough, then room to spare: all of them, ascending, nothing past them. */
    const size_t caps[2] = {n, n + 5};
    for (size_t c = 0; c < 2; c++) {
        fill(buf, COUNT_OF(buf));
        count = SIZE_MAX;
        assert_int_equal(percept_entities(w, buf, caps[c], &count), PERCEPT_OK);
        assert_int_equal(count, n);
        if (memcmp(buf, m->ids, n * sizeof buf[0]) != 0) {
            print_mismatch("percept_entities", step, m, buf);
            fail();
        }
        assert_true(all_sentinel(buf + n, COUNT_OF(buf) - n));
    }
}

static percept_entity_desc random_desc(uint64_t *rng)
{
    /* Mostly inside the default bounds, some outside them; some entities
     * observe, so that adds and removes deliver events. */
    double x = (double)below(rng, 1400) - 200, y = (double)below(rng, 1400) - 200;
    double sight = below(rng, 3) == 0 ? (double)below(rng, 120) : 0;
    return tu_desc(x, y, sight, 0, 0, 0);
}

/*
 * A seeded run: a phase that mostly adds, one that mostly removes (leaving
 * dead slots below the high-water mark), and a mixed one that re-adds into
 * freed slots; after every step the world is compared with the model.
 */
static void run_random(const char *backend)
{
    uint64_t rng = 20240614u;
    model m;
    m.n = 0;
    percept_world *w = tu_open(backend, NULL, NULL);
    check_entities(w, &m, 0);

    static const unsigned add_percent[3] = {85, 20, 50};
    size_t step = 0;
    for (int phase = 0; phase < 3; phase++) {
        for (int i = 0; i < 900; i++) {
            step++;
            percept_id id;
            int want_add = below(&rng, 100) < add_percent[phase];
            /* Draw an ID in the state the step wants, a few tries, then take what came. */
            for (int tries = 0;; tries++) {
                id = pool[below(&rng, POOL_SIZE)];
                if (model_has(&m, id) != want_add || tries == 8)
                    break;
            }
            if (model_has(&m, id)) {
                if (below(&rng, 10) == 0) {
                    percept_entity_desc d = random_desc(&rng);
                    assert_int_equal(percept_add(w, id, &d), PERCEPT_EEXIST);
                } else {
                    TU_OK(w, percept_remove(w, id));
                    model_remove(&m, id);
                }
            } else {
                if (below(&rng, 10) == 0)
                    assert_int_equal(percept_remove(w, id), PERCEPT_ENOENT);
                else {
                    tu_add(w, id, random_desc(&rng));
                    model_add(&m, id);
                }
            }
            /* Moves change nothing the listing shows. */
            if (m.n > 0 && below(&rng, 4) == 0) {
                percept_id mover = m.ids[below(&rng, (uint32_t)m.n)];
                TU_OK(w,
                      percept_move(w, mover, (double)below(&rng, 1024), (double)below(&rng, 1024)));
            }
            check_entities(w, &m, step);
        }
    }
    /* Empty it entirely, then check once more. */
    while (m.n > 0) {
        TU_OK(w, percept_remove(w, m.ids[m.n - 1]));
        model_remove(&m, m.ids[m.n - 1]);
    }
    check_entities(w, &m, ++step);
    percept_world_close(w);
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
    assert_int_equal(count, 12345);
    assert_true(all_sentinel(buf, 4));
    assert_int_equal(percept_entities(NULL, NULL, 0, &count), PERCEPT_EINVAL);
    assert_int_equal(count, 12345);
    assert_int_equal(percept_entities(w, buf, 4, NULL), PERCEPT_EINVAL);
    assert_true(all_sentinel(buf, 4));
    assert_int_equal(percept_entities(w, NULL, 0, NULL), PERCEPT_EINVAL);
    assert_int_equal(percept_entities(w, NULL, 1, &count), PERCEPT_EINVAL);
    assert_int_equal(count, 12345);
    assert_string_equal(percept_errmsg(w), msg);

    assert_int_equal(percept_entities(w, buf, 4, &count), PERCEPT_OK);
    assert_int_equal(count, 2);
    assert_int_equal(buf[0], 3);
    assert_int_equal(buf[1], 7);
    assert_int_equal(buf[2], SENTINEL);
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

/* What the header promises: the bounds do not limit positions. Entities on
 * them and outside them are accepted and perceive one another there. */
static void check_outside(const char *backend)
{
    percept_world *w = tu_open(backend, "[world]\nmax_x = 100\nmax_y = 100\n", NULL);
    percept_bounds b;
    TU_OK(w, percept_get_bounds(w, &b));
    tu_add(w, 1, tu_desc(b.max_x, b.max_y, 10, 0, 0, 0));
    tu_add(w, 4, tu_desc(b.max_x - 6, b.max_y + 8, 0, 0, 0, 0)); /* 10 from entity 1 */
    assert_int_equal(percept_perceives(w, 1, 4, PERCEPT_SIGHT), 1);
    tu_add(w, 2, tu_desc(b.max_x + 500, b.min_y - 500, 10, 0, 0, 0));
    tu_add(w, 3, tu_desc(b.max_x + 506, b.min_y - 508, 10, 0, 0, 0)); /* 10 from entity 2 */
    TU_OK(w, percept_move(w, 1, b.min_x - 1e9, b.max_y + 1e9));
    assert_int_equal(percept_perceives(w, 2, 3, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_perceives(w, 3, 2, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SIGHT), 0);
    percept_world_close(w);
}

static void test_bounds_do_not_limit_positions(void **state)
{
    (void)state;
    tu_for_each_backend(check_outside);
}

/* ------------------------------------------------------------------------ */
/* Inside the event callback                                                 */

typedef struct watcher {
    percept_world *w;
    const model *m; /* the state after the call being delivered */
    percept_bounds bounds;
    size_t events;
    size_t problems;
    char first_problem[256];
} watcher;

static void on_event(void *user, const percept_event *e)
{
    (void)e;
    watcher *v = user;
    percept_id buf[POOL_SIZE];
    size_t count = 0;
    percept_bounds b;
    v->events++;
    int rc = percept_entities(v->w, buf, COUNT_OF(buf), &count);
    const char *bad = NULL;
    if (rc != PERCEPT_OK)
        bad = "percept_entities failed";
    else if (count != v->m->n || memcmp(buf, v->m->ids, count * sizeof buf[0]) != 0)
        bad = "percept_entities differs from the state after the call";
    else if (percept_get_bounds(v->w, &b) != PERCEPT_OK)
        bad = "percept_get_bounds failed";
    else if (memcmp(&b, &v->bounds, sizeof b) != 0)
        bad = "percept_get_bounds differs";
    if (bad && v->problems++ == 0)
        snprintf(v->first_problem, sizeof v->first_problem, "event %zu: %s (status %d)", v->events,
                 bad, rc);
}

static void check_inside_callback(const char *backend)
{
    model m;
    m.n = 0;
    watcher v;
    memset(&v, 0, sizeof v);
    v.m = &m;
    v.bounds = (percept_bounds){-50, -60, 700, 800};
    v.w = tu_open(backend, "[world]\nmin_x = -50\nmin_y = -60\nmax_x = 700\nmax_y = 800\n", NULL);
    TU_OK(v.w, percept_set_event_callback(v.w, on_event, &v));

    /* Each change updates the model first: the callback sees the state after the call. */
    static const percept_id ids[] = {UINT32_MAX, 0, 500, 12, 4000000000u, 1};
    for (size_t i = 0; i < COUNT_OF(ids); i++) {
        model_add(&m, ids[i]);
        tu_add(v.w, ids[i], tu_desc((double)(i * 3), 0, 20, 0, 0, 0));
    }
    percept_position moves[] = {{500, 1, 1}, {12, 2, 2}, {0, 900, 900}};
    TU_OK(v.w, percept_move_many(v.w, moves, COUNT_OF(moves)));
    model_remove(&m, 500);
    TU_OK(v.w, percept_remove(v.w, 500));
    model_remove(&m, UINT32_MAX);
    TU_OK(v.w, percept_remove(v.w, UINT32_MAX));
    model_add(&m, UINT32_MAX);
    tu_add(v.w, UINT32_MAX, tu_desc(4, 0, 20, 0, 0, 0));

    if (v.problems) {
        print_error("%zu problems; first: %s\n", v.problems, v.first_problem);
        fail();
    }
    assert_true(v.events > 10); /* the callback did run, often */
    check_entities(v.w, &m, 0);
    percept_world_close(v.w);
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
        tu_backend_test(test_entities_random),
        cmocka_unit_test(test_entities_bad_arguments),
        cmocka_unit_test(test_bounds_default),
        cmocka_unit_test(test_bounds_from_config),
        cmocka_unit_test(test_bounds_from_options),
        cmocka_unit_test(test_bounds_bad_arguments),
        tu_backend_test(test_bounds_do_not_limit_positions),
        tu_backend_test(test_read_inside_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
