/*
 * test_differential.c - randomized differential test: thousands of random
 * calls per fixed seed, each made on the world and on the model (model.h),
 * which must agree on its status and its events; every CHECK_EVERY calls
 * the world's every query is compared with the model.
 *
 * Seeds 1-8 put the backend under test on every sense; seeds 9-16 mix
 * backends, backend parameters and observer grids inside one world, so that
 * senses sharing a backend instance or an observer grid, and senses that
 * share neither, all meet in the same pairs. Seeds 17-20 are seeds 1-4 in a
 * crowd: most positions fall in one small square, so a query meets a
 * hundred entities or observers at once (indexes that hand over their finds
 * in batches cross a batch boundary there).
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

#define POOL 160 /* distinct IDs */
#define OPS_PER_SEED 3000
#define CHECK_EVERY 64
#define MIN_ALIVE 60
#define MAX_ALIVE 150
#define CROWD_SIDE 12 /* the crowd seeds' square: smaller than most ranges */

static uint32_t below(uint64_t *r, uint32_t n)
{
    return (uint32_t)(splitmix_next(r) % n);
}

static int chance(uint64_t *r, uint32_t percent)
{
    return below(r, 100) < percent;
}

/* ------------------------------------------------------------------------ */
/* Random calls                                                              */

typedef struct run_state {
    uint64_t r;
    int crowd;
    percept_id pool[POOL];
    model m;
} run_state;

/* Ranges favour integers whose boundary points have integer offsets (3-4-5, 5-12-13). */
static double random_range(uint64_t *r)
{
    static const double common[] = {1, 2, 2.5, 5, 5, 10, 10, 13, 15, 20, 25, 26, 40, 65};
    uint32_t k = below(r, 100);
    if (k < 20)
        return 0;
    if (k < 80)
        return common[below(r, COUNT_OF(common))];
    if (k < 97)
        return splitmix_unit(r) * 50;
    return 1e7; /* reaches everyone, inside and far outside the bounds */
}

/* Mostly a half-unit grid in and around the bounds, sometimes anywhere. */
static void random_position(uint64_t *r, int crowd, double *x, double *y)
{
    uint32_t k = below(r, 100);
    if (crowd && k < 80) {
        *x = 100 - CROWD_SIDE / 2 + below(r, 2 * CROWD_SIDE + 1) * 0.5;
        *y = 100 - CROWD_SIDE / 2 + below(r, 2 * CROWD_SIDE + 1) * 0.5;
    } else if (k < 70) {
        *x = ((int)below(r, 521) - 60) * 0.5; /* -30 .. 230 */
        *y = ((int)below(r, 521) - 60) * 0.5;
    } else if (k < 90) {
        *x = -40 + splitmix_unit(r) * 280;
        *y = -40 + splitmix_unit(r) * 280;
    } else if (k < 95) { /* far outside the bounds */
        *x = (chance(r, 50) ? -1 : 1) * (1e6 + below(r, 1000));
        *y = (chance(r, 50) ? -1 : 1) * 1e9;
    } else { /* one point, so that entities coincide */
        *x = 100;
        *y = 100;
    }
}

/* An ID of the pool in the world (alive 1) or not (0); the first of the pool if none is. */
static percept_id random_id(run_state *st, int alive)
{
    uint32_t start = below(&st->r, POOL);
    for (uint32_t i = 0; i < POOL; i++) {
        percept_id id = st->pool[(start + i) % POOL];
        if ((model_get(&st->m, id) != NULL) == alive)
            return id;
    }
    return st->pool[0];
}

/*
 * A point exactly on the boundary of some observer's range, with integer
 * offsets: (R, 0), or a scaled 3-4-5 or 5-12-13, sometimes one ulp beyond.
 * 0 if no observer with a suitable range was found.
 */
static int boundary_position(run_state *st, double *x, double *y)
{
    uint64_t *r = &st->r;
    for (int tries = 0; tries < 8 && st->m.alive > 0; tries++) {
        const model_entity *e = model_get(&st->m, random_id(st, 1));
        double range = e->range[below(r, PERCEPT_SENSE_COUNT)], a = range, b = 0;
        if (!(range > 0) || range > 1000 || range != floor(range))
            continue;
        if (fmod(range, 13) == 0 && chance(r, 50)) {
            a = range / 13 * 5;
            b = range / 13 * 12;
        } else if (fmod(range, 5) == 0 && chance(r, 70)) {
            a = range / 5 * 3;
            b = range / 5 * 4;
        }
        if (chance(r, 50)) {
            double t = a;
            a = b;
            b = t;
        }
        *x = e->x + (chance(r, 50) ? -a : a);
        *y = e->y + (chance(r, 50) ? -b : b);
        if (chance(r, 25))
            *x = nextafter(*x, *x >= e->x ? INFINITY : -INFINITY);
        return 1;
    }
    return 0;
}

/* A call: mostly valid ones, one in twenty that must fail (the model says with what). */
static void random_op(run_state *st, tu_op *o)
{
    uint64_t *r = &st->r;
    uint32_t k = below(r, 100);
    memset(o, 0, sizeof *o);
    if ((st->m.alive < MIN_ALIVE && k < 70) || st->m.alive == 0)
        k = 0;
    else if (st->m.alive >= MAX_ALIVE && k < 20)
        k = 20;
    if (k < 14) {
        o->kind = TU_ADD;
        o->id = random_id(st, 0);
        if (!(chance(r, 30) && boundary_position(st, &o->desc.x, &o->desc.y)))
            random_position(r, st->crowd, &o->desc.x, &o->desc.y);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            o->desc.range[s] = random_range(r);
        o->desc.hidden = chance(r, 20) ? below(r, 8) : 0;
    } else if (k < 22) {
        o->kind = TU_REMOVE;
        o->id = random_id(st, 1);
    } else if (k < 74) {
        o->kind = TU_MOVE;
        o->id = random_id(st, 1);
        const model_entity *e = model_get(&st->m, o->id);
        if (k < 48) { /* a step on the half grid */
            o->x = e->x + ((int)below(r, 17) - 8) * 0.5;
            o->y = e->y + ((int)below(r, 17) - 8) * 0.5;
        } else if (k < 57) { /* a fractional step */
            o->x = e->x + (splitmix_unit(r) - 0.5) * 12;
            o->y = e->y + (splitmix_unit(r) - 0.5) * 12;
        } else if (k >= 67 || !boundary_position(st, &o->x, &o->y)) { /* a teleport */
            random_position(r, st->crowd, &o->x, &o->y);
        }
    } else if (k < 95) {
        o->kind = k < 86 ? TU_RANGE : TU_HIDE;
        o->id = random_id(st, 1);
        o->sense = (percept_sense)below(r, PERCEPT_SENSE_COUNT);
        o->value = k < 86 ? random_range(r) : chance(r, 50);
    } else {
        /* Invalid: an ID that is there added again, one that is not changed, a bad value. */
        static const tu_op_kind kinds[] = {TU_ADD, TU_MOVE, TU_RANGE, TU_MOVE, TU_REMOVE, TU_HIDE};
        uint32_t bad = below(r, COUNT_OF(kinds));
        o->kind = kinds[bad];
        o->id = random_id(st, bad == 0 || bad == 2 || bad == 3);
        o->desc = tu_desc(1, 1, 1, 1, 1, 0);
        o->x = bad == 3 ? NAN : 1;
        o->sense = PERCEPT_HEARING;
        o->value = -1;
    }
}

/* ------------------------------------------------------------------------ */
/* A world's setup for a seed                                                */

/*
 * The INI text after tu_open()'s "[percept]\nbackend = NAME\n", whether MOVE
 * events are on, and the backend each sense must report (a mixed config the
 * core silently ignored would otherwise test nothing).
 */
typedef struct seed_setup {
    char ini[1024];
    int moves_on;
    const char *names[PERCEPT_SENSE_COUNT];
} seed_setup;

/* 1 if a world with `backend` on every sense opens: the plugin is there and loads. */
static int backend_loads(const char *backend)
{
    char ini[128];
    percept_world *w = NULL;
    percept_error error;
    snprintf(ini, sizeof ini, "[percept]\nbackend = %s\n", backend);
    if (percept_world_open_string(&w, ini, "<probe>", NULL, &error) != PERCEPT_OK)
        return 0;
    percept_world_close(w);
    return 1;
}

/*
 * A backend other than `backend`, for a sense that must not share its
 * instance: bruteforce, or for bruteforce itself another backend under test,
 * else another shipped plugin that loads, else bruteforce again.
 */
static const char *other_backend(const char *backend)
{
    static const char *const shipped[] = {"grid", "crosslist", "hashgrid", "tower"};
    if (strcmp(backend, "bruteforce") != 0)
        return "bruteforce";
    for (size_t i = 0; i < tu_backend_count(); i++)
        if (strcmp(tu_backend_name(i), "bruteforce") != 0)
            return tu_backend_name(i);
    for (size_t i = 0; i < COUNT_OF(shipped); i++)
        if (backend_loads(shipped[i]))
            return shipped[i];
    return "bruteforce";
}

static void ini_append(seed_setup *su, const char *text)
{
    size_t used = strlen(su->ini);
    int n = snprintf(su->ini + used, sizeof su->ini - used, "%s", text);
    assert_true(n >= 0 && (size_t)n < sizeof su->ini - used);
}

/* A sense's section: its backend, the backend's size parameter when `size` > 0
 * and it takes one, observer_cell_size when `cell` > 0. */
static void ini_sense(seed_setup *su, int sense, const char *backend, double size, double cell)
{
    char text[256];
    const char *key = tu_size_key(backend);
    int n = snprintf(text, sizeof text, "[%s]\nbackend = %s\n",
                     percept_sense_name((percept_sense)sense), backend);
    if (key != NULL && size > 0)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s = %g\n", key, size);
    if (cell > 0)
        snprintf(text + n, sizeof text - (size_t)n, "observer_cell_size = %g\n", cell);
    ini_append(su, text);
    su->names[sense] = backend;
}

#define WORLD_200 "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 200\nmax_y = 200\n"
#define WORLD_STRIP "[world]\nmin_x = -100\nmin_y = 50\nmax_x = 300\nmax_y = 120\n"

static void seed_config(uint64_t seed, const char *backend, seed_setup *su)
{
    int mixed = (int)((seed - 1) / 8 % 2);
    const char *other = other_backend(backend);
    /* A parameterless backend cannot get a second instance by parameters:
     * there another backend stands in for the second instance. */
    int sized = tu_size_key(backend) != NULL;

    memset(su, 0, sizeof *su);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        su->names[s] = backend;
    su->moves_on = 1;
    switch (mixed * 4 + (int)(seed % 4)) {
    case 0:
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_200 "[sight]\nobserver_cell_size = 5\n"
                       "[hearing]\nobserver_cell_size = 17\n[smell]\nobserver_cell_size = 64\n");
        break;
    case 1:
        ini_append(su, "move_events = on\n" WORLD_200);
        break;
    case 2:
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_STRIP);
        break;
    case 3:
        ini_append(su, "move_events = on\n" WORLD_200 "[sight]\nobserver_cell_size = 3\n");
        break;
    case 4: /* sight and hearing share an instance and a grid; smell has its own backend */
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 7, 9);
        ini_sense(su, PERCEPT_HEARING, backend, 7, 9);
        ini_sense(su, PERCEPT_SMELL, other, 0, 9);
        break;
    case 5: /* sight and smell share instance and grid; hearing has another instance */
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 7, 16);
        ini_sense(su, PERCEPT_HEARING, sized ? backend : other, 23, sized ? 16 : 5);
        ini_sense(su, PERCEPT_SMELL, backend, 7, 16);
        break;
    case 6: /* one instance for all three senses, two observer grids */
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 23, 5);
        ini_sense(su, PERCEPT_HEARING, backend, 23, 37);
        ini_sense(su, PERCEPT_SMELL, backend, 23, 5);
        break;
    default: /* a default parameter beside the same written out, odd bounds, no MOVE */
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_STRIP);
        ini_sense(su, PERCEPT_SIGHT, backend, 0, 0);
        ini_sense(su, PERCEPT_HEARING, backend, 64, 3);
        ini_sense(su, PERCEPT_SMELL, other, 0, 3);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* A run                                                                     */

static uint64_t current_seed;

static void run_seed(const char *backend)
{
    run_state *st = calloc(1, sizeof *st);
    seed_setup su;
    tu_recorder rec;
    assert_non_null(st);
    st->crowd = current_seed > 16;
    st->r = current_seed * 0x2545F4914F6CDD1Dull;
    seed_config(current_seed, backend, &su);
    model_init(&st->m, su.moves_on);
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, su.ini, &rec);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        const char *name = percept_backend_name(w, (percept_sense)s);
        if (name == NULL || strcmp(name, su.names[s]) != 0)
            fail_msg("seed %llu: %s is served by '%s', the config says '%s'\n%s",
                     (unsigned long long)current_seed, percept_sense_name((percept_sense)s),
                     name ? name : "(null)", su.names[s], su.ini);
    }
    /* The ID pool: 0, 2^32-1, small numbers and random 32-bit values, all distinct. */
    for (int i = 0; i < POOL; i++) {
        percept_id id;
        int unique;
        do {
            id = i == 0   ? 0
                 : i == 1 ? UINT32_MAX
                 : i < 60 ? below(&st->r, 200)
                          : (percept_id)splitmix_next(&st->r);
            unique = 1;
            for (int j = 0; j < i; j++)
                unique &= st->pool[j] != id;
        } while (!unique);
        st->pool[i] = id;
    }

    for (size_t index = 0; index < OPS_PER_SEED; index++) {
        char what[1200];
        tu_op o;
        random_op(st, &o);
        snprintf(what, sizeof what, "backend %s, seed %llu, call %zu; config:\n%s", backend,
                 (unsigned long long)current_seed, index, su.ini);
        tu_call(w, &rec, &st->m, &o, what);
        if (index % CHECK_EVERY == 0 || index + 1 == OPS_PER_SEED)
            tu_expect_world(&st->m, w, what);
    }
    percept_world_close(w);
    tu_recorder_free(&rec);
    model_free(&st->m);
    free(st);
}

static void test_seed(void **state)
{
    current_seed = (uint64_t)(uintptr_t)*state;
    tu_for_each_backend(run_seed);
}

/* ------------------------------------------------------------------------ */
/* The model itself, on worked examples, so that a broken model cannot pass  */

#define EV(kind, o, t, s, x, y) tu_ev(PERCEPT_##kind, o, t, PERCEPT_##s, x, y)

static void expect_model(const model *m, const percept_event *want, size_t n, const char *what)
{
    char why[512];
    if (!model_same_events(want, n, m->events, m->n_events, why, sizeof why))
        fail_msg("the model, %s: %s", what, why);
}

/* docs/trace-format.md's example, hiding and a range of 0 besides. */
static void test_model_example(void **state)
{
    model m;
    (void)state;
    model_init(&m, 0);
    percept_entity_desc one = tu_desc(10, 10, 5, 0, 0, 0), two = tu_desc(13, 14, 0, 2, 0, 0);
    assert_int_equal(model_add(&m, 1, &one), PERCEPT_OK);
    expect_model(&m, NULL, 0, "add 1");
    assert_int_equal(model_add(&m, 2, &two), PERCEPT_OK);
    const percept_event enter[] = {EV(ENTER, 1, 2, SIGHT, 13, 14)};
    expect_model(&m, enter, 1, "add 2 on 1's boundary");
    assert_int_equal(model_move(&m, 2, 30, 30), PERCEPT_OK);
    const percept_event leave[] = {EV(LEAVE, 1, 2, SIGHT, 30, 30)};
    expect_model(&m, leave, 1, "move 2 away");
    assert_int_equal(model_move(&m, 2, 13, 14), PERCEPT_OK);
    assert_int_equal(model_set_hidden(&m, 2, PERCEPT_SIGHT, 1), PERCEPT_OK);
    const percept_event hidden[] = {EV(LEAVE, 1, 2, SIGHT, 13, 14)};
    expect_model(&m, hidden, 1, "hide 2");
    assert_int_equal(model_perceives(&m, 1, 2, PERCEPT_SIGHT), 0);
    assert_int_equal(model_set_range(&m, 2, PERCEPT_HEARING, 0), PERCEPT_OK);
    expect_model(&m, NULL, 0, "2 loses the hearing it used on no one");
    assert_int_equal(model_remove(&m, 1), PERCEPT_OK);
    assert_int_equal(model_add(&m, 1, &one), PERCEPT_OK);
    assert_int_equal(model_add(&m, 1, &one), PERCEPT_EEXIST);
    assert_int_equal(model_move(&m, 7, 1, 1), PERCEPT_ENOENT);
    assert_int_equal(model_move(&m, 1, NAN, 1), PERCEPT_EINVAL);
    model_free(&m);
}

/*
 * MOVE: one per (observer, sense) that perceives the moved target before and
 * after, in order among the ENTER/LEAVE of the same call; none for what the
 * mover itself perceives.
 */
static void test_model_moves(void **state)
{
    model m;
    (void)state;
    model_init(&m, 1);
    percept_entity_desc d1 = tu_desc(10, 10, 5, 10, 0, 0), d2 = tu_desc(13, 14, 0, 0, 0, 0),
                        d3 = tu_desc(17, 14, 3, 0, 0, 0);
    assert_int_equal(model_add(&m, 1, &d1), PERCEPT_OK);
    assert_int_equal(model_add(&m, 2, &d2), PERCEPT_OK);
    assert_int_equal(model_add(&m, 3, &d3), PERCEPT_OK);
    /* 2 to (14, 14): out of 1's sight (5.66), still in its hearing, onto 3's sight boundary. */
    assert_int_equal(model_move(&m, 2, 14, 14), PERCEPT_OK);
    const percept_event a[] = {EV(LEAVE, 1, 2, SIGHT, 14, 14), EV(MOVE, 1, 2, HEARING, 14, 14),
                               EV(ENTER, 3, 2, SIGHT, 14, 14)};
    expect_model(&m, a, COUNT_OF(a), "move 2 to (14, 14)");
    /* 2 to (14, 15): 1 still hears it, 3 loses sight of it. */
    assert_int_equal(model_move(&m, 2, 14, 15), PERCEPT_OK);
    const percept_event b[] = {EV(MOVE, 1, 2, HEARING, 14, 15), EV(LEAVE, 3, 2, SIGHT, 14, 15)};
    expect_model(&m, b, COUNT_OF(b), "move 2 to (14, 15)");
    /* 1 moves: nobody perceives it, and its own pairs are no MOVE. */
    assert_int_equal(model_move(&m, 1, 10, 9), PERCEPT_OK);
    expect_model(&m, NULL, 0, "move 1");
    assert_int_equal(model_move(&m, 1, 10, 9), PERCEPT_OK);
    expect_model(&m, NULL, 0, "move 1 in place");
    /* A removal: every pair leaves, both ways, at the last position. */
    assert_int_equal(model_remove(&m, 2), PERCEPT_OK);
    const percept_event c[] = {EV(LEAVE, 1, 2, HEARING, 14, 15)};
    expect_model(&m, c, COUNT_OF(c), "remove 2");
    model_free(&m);
}

int main(void)
{
    struct CMUnitTest tests[2 + 20] = {
        cmocka_unit_test(test_model_example),
        cmocka_unit_test(test_model_moves),
    };
    static char names[20][16];
    for (int seed = 1; seed <= 20; seed++) {
        snprintf(names[seed - 1], sizeof names[0], "seed %d", seed);
        tests[1 + seed] = (struct CMUnitTest){names[seed - 1], test_seed, NULL, tu_report_backend,
                                              (void *)(uintptr_t)seed};
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
