/*
 * test_soak.c - long random runs (fixed seed) over many entities, on every
 * backend and on three at once: each call's status and events are the
 * model's (model.h), and every K calls the whole world is compared with it.
 *
 * make check runs a small soak (1000 entities, 100000 calls, full check every
 * 10000), and one of version 2 an eighth as long (a world of five named
 * senses; entities with heights, cones, margins and masks; updates, turns,
 * moves in height and stimuli besides). The full one (10000 entities,
 * 1000000 calls, every 10000) runs with `make soak`, i.e. PERCEPT_SOAK=full,
 * or with arguments (or the same words in PERCEPT_SOAK):
 *   test_soak [full] [entities=N] [ops=N] [every=N] [seed=N]
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../tools/splitmix.h"

typedef struct soak_settings {
    size_t entities; /* the ID pool; about nine in ten are in the world at a time */
    size_t ops;      /* calls, the initial adds included */
    size_t every;    /* full check after this many calls, and at the end */
    uint64_t seed;
} soak_settings;

static soak_settings settings = {1000, 100000, 10000, 20240611};

static void parse_setting(const char *arg)
{
    unsigned long long v;
    if (strcmp(arg, "full") == 0) {
        settings.entities = 10000;
        settings.ops = 1000000;
        settings.every = 10000;
    } else if (sscanf(arg, "entities=%llu", &v) == 1 && v >= 2) {
        settings.entities = (size_t)v;
    } else if (sscanf(arg, "ops=%llu", &v) == 1) {
        settings.ops = (size_t)v;
    } else if (sscanf(arg, "every=%llu", &v) == 1 && v > 0) {
        settings.every = (size_t)v;
    } else if (sscanf(arg, "seed=%llu", &v) == 1) {
        settings.seed = v;
    } else {
        fprintf(stderr, "test_soak: unknown argument '%s'\n", arg);
        exit(2);
    }
}

static int chance(uint64_t *r, unsigned percent)
{
    return splitmix_next(r) % 100 < percent;
}

typedef struct soak {
    uint64_t r;
    double side; /* the world bounds: 0 .. side in x and y */
    int v2;      /* version 2 fields and calls too */
    model m;
} soak;

static double random_range(soak *k)
{
    unsigned c = (unsigned)(splitmix_next(&k->r) % 1000);
    if (c < 150)
        return 0;
    if (c < 750)
        return splitmix_between(&k->r, 0, 40);
    if (c < 998)
        return splitmix_between(&k->r, 40, 120);
    return splitmix_between(&k->r, 300, 1500); /* rare: far-reaching */
}

static void random_position(soak *k, double *x, double *y)
{
    unsigned c = (unsigned)(splitmix_next(&k->r) % 100);
    if (c < 90) {
        *x = splitmix_between(&k->r, 0, k->side);
        *y = splitmix_between(&k->r, 0, k->side);
    } else if (c < 97) { /* outside the bounds */
        *x = splitmix_between(&k->r, -k->side, 2 * k->side);
        *y = splitmix_between(&k->r, -k->side, 2 * k->side);
    } else { /* on a whole number: exact distances, boundary cases */
        *x = (double)(splitmix_next(&k->r) % 64);
        *y = (double)(splitmix_next(&k->r) % 64);
    }
}

/* Version 2 fields of an entity: a height, a facing, and per sense a
 * margin, a cone and an ignore mask; its tags. */
static void random_v2_fields(soak *k, percept_entity_desc *d)
{
    static const double fovs[] = {90, 180, 270, 45, 120, 300};
    d->z = chance(&k->r, 50) ? 0 : splitmix_between(&k->r, -20, 20);
    d->facing[0] = splitmix_between(&k->r, -1, 1);
    d->facing[1] = splitmix_between(&k->r, -1, 1);
    d->facing[2] = chance(&k->r, 80) ? 0 : splitmix_between(&k->r, -1, 1);
    d->tags = chance(&k->r, 30) ? (uint32_t)(splitmix_next(&k->r) % 8) : 0;
    for (int s = 0; s < k->m.senses; s++) {
        percept_sense_params *p = &d->sense[s];
        p->margin = chance(&k->r, 40) ? splitmix_between(&k->r, 0, 15) : 0;
        p->fov = chance(&k->r, 40) ? fovs[splitmix_next(&k->r) % COUNT_OF(fovs)] : 0;
        p->ignore = chance(&k->r, 15) ? (uint32_t)(splitmix_next(&k->r) % 8) : 0;
    }
}

/* A version 2 call on the live entity e: an update, a turn, a move in
 * height or a stimulus. */
static void random_v2_call(soak *k, const model_entity *e, tu_op *o)
{
    unsigned c = (unsigned)(splitmix_next(&k->r) % 4);
    int s = (int)(splitmix_next(&k->r) % (unsigned)k->m.senses);
    if (c == 0) {
        o->kind = TU_UPDATE;
        o->desc = model_desc(&k->m, e);
        o->desc.sense[s].range = random_range(k);
        o->desc.sense[s].margin = chance(&k->r, 50) ? splitmix_between(&k->r, 0, 15) : 0;
        if (chance(&k->r, 30))
            random_v2_fields(k, &o->desc);
    } else if (c == 1) {
        o->kind = TU_TURN;
        o->x = splitmix_between(&k->r, -1, 1);
        o->y = splitmix_between(&k->r, -1, 1);
    } else if (c == 2) {
        o->kind = TU_MOVE3;
        o->x = e->x + splitmix_between(&k->r, -4, 4);
        o->y = e->y + splitmix_between(&k->r, -4, 4);
        o->z = e->z + splitmix_between(&k->r, -8, 8);
    } else {
        percept_stimulus *st = &o->stimulus;
        o->kind = TU_EMIT;
        *st = (percept_stimulus)PERCEPT_STIMULUS_INIT;
        st->sense = s;
        st->x = e->x + splitmix_between(&k->r, -30, 30);
        st->y = e->y + splitmix_between(&k->r, -30, 30);
        st->z = e->z;
        st->strength = chance(&k->r, 50) ? 0 : splitmix_between(&k->r, 0.5, 3);
        st->has_source = chance(&k->r, 50);
        st->source = e->id;
        st->tags = chance(&k->r, 30) ? (uint32_t)(splitmix_next(&k->r) % 8) : 0;
    }
}

/* A call on the pool's entity i: an add if it is out of the world, else a
 * move, removal, range or hiding (in version 2 also an update, turn, move
 * in height or stimulus); one in fifty must fail. */
static void random_call(soak *k, uint32_t i, int add_only, tu_op *o)
{
    const model_entity *e = model_get(&k->m, tu_spread_id(i));
    unsigned c = (unsigned)(splitmix_next(&k->r) % 100);
    memset(o, 0, sizeof *o);
    o->id = tu_spread_id(i);
    if (!add_only && c < 2) { /* add what is there, change what is not, or a NaN */
        o->kind = e == NULL ? TU_MOVE : chance(&k->r, 50) ? TU_ADD : TU_MOVE;
        o->desc = tu_desc(1, 1, 1, 1, 1, 0);
        o->x = e == NULL ? 1 : e->x;
        o->y = e == NULL ? 1 : NAN;
    } else if (e == NULL) {
        o->kind = TU_ADD;
        o->desc = tu_desc(0, 0, 0, 0, 0, 0);
        random_position(k, &o->desc.x, &o->desc.y);
        for (int s = 0; s < k->m.senses; s++)
            o->desc.sense[s].range = random_range(k);
        o->desc.hidden = chance(&k->r, 10) ? (unsigned)(splitmix_next(&k->r) % 8) : 0;
        if (k->v2)
            random_v2_fields(k, &o->desc);
    } else if (k->v2 && c >= 30 && c < 60) {
        random_v2_call(k, e, o);
    } else if (c < 60) {
        o->kind = TU_MOVE;
        unsigned how = (unsigned)(splitmix_next(&k->r) % 100);
        if (how < 75) { /* a step */
            o->x = e->x + splitmix_between(&k->r, -8, 8);
            o->y = e->y + splitmix_between(&k->r, -8, 8);
        } else if (how < 80) { /* staying put */
            o->x = e->x;
            o->y = e->y;
        } else {
            random_position(k, &o->x, &o->y);
        }
    } else if (c < 66) {
        o->kind = TU_REMOVE;
    } else {
        o->kind = c < 84 ? TU_RANGE : TU_HIDE;
        o->sense = (percept_sense)(splitmix_next(&k->r) % (unsigned)k->m.senses);
        o->value = c < 84 ? random_range(k) : chance(&k->r, 50);
    }
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * `sections` may name other backends for some senses; `v2`: a world of the
 * senses `senses` names (in [world]), its calls of version 2 too, `ops`
 * calls of them.
 */
static void soak_run(const char *label, const char *backend, const char *sections, int v2,
                     const char *senses, size_t ops)
{
    soak k;
    char ini[1024], what[300];
    tu_recorder rec;
    double start = now_seconds();
    k.r = settings.seed;
    k.v2 = v2;
    /* The same density whatever the population: about one entity per 1000 square units. */
    k.side = floor(1024.0 * sqrt((double)settings.entities / 1000.0));
    tu_recorder_init(&rec);
    snprintf(ini, sizeof ini, "move_events = on\n[world]\nmax_x = %.0f\nmax_y = %.0f\n%s%s%s%s",
             k.side, k.side, senses ? "senses = " : "", senses ? senses : "", senses ? "\n" : "",
             sections);
    percept_world *w = tu_open(backend, ini, &rec);
    tu_model_init(&k.m, 1, w);
    size_t calls = 0, events = 0;
    /* Nine in ten of the pool enter first, in order of index; then random calls. */
    for (uint32_t next = 0; calls < ops; calls++) {
        tu_op o;
        while (next < settings.entities && !chance(&k.r, 90))
            next++;
        if (next < settings.entities)
            random_call(&k, next++, 1, &o);
        else
            random_call(&k, (uint32_t)(splitmix_next(&k.r) % settings.entities), 0, &o);
        snprintf(what, sizeof what, "%s: call %zu", label, calls);
        tu_call(w, &rec, &k.m, &o, what);
        events += rec.count;
        if ((calls + 1) % settings.every == 0 || calls + 1 == ops)
            tu_expect_world(&k.m, w, what);
    }
    print_message("      %s: %zu calls on %zu IDs, %zu events (%.2f s)\n", label, calls,
                  settings.entities, events, now_seconds() - start);
    percept_world_close(w);
    tu_recorder_free(&rec);
    model_free(&k.m);
}

static void check_backend(const char *backend)
{
    soak_run(backend, backend, "", 0, NULL, settings.ops);
}

/* Five senses, two of them with a section of their own; an eighth of the calls. */
static void check_backend_v2(const char *backend)
{
    char label[128];
    snprintf(label, sizeof label, "%s, version 2", backend);
    soak_run(label, backend, "[heat]\nobserver_cell_size = 16\n[e]\nobserver_cell_size = 200\n", 1,
             "sight heat e Radio-X smell", settings.ops / 8);
}

static void test_soak_v2(void **state)
{
    (void)state;
    tu_for_each_backend(check_backend_v2);
}

static void test_soak_each_backend(void **state)
{
    (void)state;
    tu_for_each_backend(check_backend);
}

/* Three backends at once, one per sense: the senses must not disturb each other. */
static void test_soak_mixed_backends(void **state)
{
    char ini[512], label[256];
    size_t n = tu_backend_count();
    (void)state;
    if (n < 2)
        skip();
    const char *a = tu_backend_name(0), *b = tu_backend_name(1), *c = tu_backend_name(2 % n);
    snprintf(ini, sizeof ini, "[hearing]\nbackend = %s\n[smell]\nbackend = %s\n", b, c);
    snprintf(label, sizeof label, "%s+%s+%s", a, b, c);
    soak_run(label, a, ini, 0, NULL, settings.ops);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_soak_each_backend),
        cmocka_unit_test(test_soak_mixed_backends),
        tu_backend_test(test_soak_v2),
    };
    /* PERCEPT_SOAK: "full", or settings as the arguments give them. */
    const char *env = getenv("PERCEPT_SOAK");
    char words[256];
    snprintf(words, sizeof words, "%s", env != NULL ? env : "");
    for (char *save = NULL, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save))
        parse_setting(w);
    for (int i = 1; i < argc; i++)
        parse_setting(argv[i]);
    print_message("soak: %zu IDs, %zu calls, full check every %zu, seed %llu\n", settings.entities,
                  settings.ops, settings.every, (unsigned long long)settings.seed);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
