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
 *
 * Seeds 21-28 are version 2: worlds of 1 to 8 senses named by the config
 * (their order shuffled, so that "sight" is not always sense 0), entities
 * with heights, facings, cones, margins, tags and ignore masks, and the
 * calls that change them (percept_move3, percept_turn, percept_update),
 * stimuli (percept_emit) and queries (percept_query). Positions aim at the
 * edges version 2 adds: a cone's edge, R + M, 3D Pythagorean distances.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

#define POOL 160 /* distinct IDs */
#define OPS_PER_SEED 3000
#define OPS_PER_V2_SEED 2000 /* each call judges more; keep make check quick */
#define CHECK_EVERY 64
#define MIN_ALIVE 60
#define MAX_ALIVE 150
#define CROWD_SIDE 12 /* the crowd seeds' square: smaller than most ranges */
#define SEEDS 28

/* ------------------------------------------------------------------------ */
/* Random calls                                                              */

typedef struct run_state {
    uint64_t r;
    int crowd;
    int v2; /* version 2 fields and calls too */
    percept_id pool[POOL];
    model m;
} run_state;

/* Mostly a half-unit grid in and around the bounds, sometimes anywhere. */
static void random_position(uint64_t *r, int crowd, double *x, double *y)
{
    uint32_t k = splitmix_below(r, 100);
    if (crowd && k < 80) {
        *x = 100 - CROWD_SIDE / 2 + splitmix_below(r, 2 * CROWD_SIDE + 1) * 0.5;
        *y = 100 - CROWD_SIDE / 2 + splitmix_below(r, 2 * CROWD_SIDE + 1) * 0.5;
    } else if (k < 70) {
        *x = ((int)splitmix_below(r, 521) - 60) * 0.5; /* -30 .. 230 */
        *y = ((int)splitmix_below(r, 521) - 60) * 0.5;
    } else if (k < 90) {
        *x = -40 + splitmix_unit(r) * 280;
        *y = -40 + splitmix_unit(r) * 280;
    } else if (k < 95) { /* far outside the bounds */
        *x = (splitmix_chance(r, 50) ? -1 : 1) * (1e6 + splitmix_below(r, 1000));
        *y = (splitmix_chance(r, 50) ? -1 : 1) * 1e9;
    } else { /* one point, so that entities coincide */
        *x = 100;
        *y = 100;
    }
}

/* An ID of the pool in the world (alive 1) or not (0); the first of the pool if none is. */
static percept_id random_id(run_state *st, int alive)
{
    uint32_t start = splitmix_below(&st->r, POOL);
    for (uint32_t i = 0; i < POOL; i++) {
        percept_id id = st->pool[(start + i) % POOL];
        if ((model_get(&st->m, id) != NULL) == alive)
            return id;
    }
    return st->pool[0];
}

/*
 * A point exactly on the boundary of some observer's reach, with integer
 * offsets: (R, 0), or a scaled 3-4-5 or 5-12-13, sometimes one ulp beyond.
 * The reach is the range, or in version 2 at times range + margin, and
 * the second offset at times vertical. 0 if no observer with a suitable
 * reach was found.
 */
static int boundary_point(run_state *st, double *x, double *y, double *z)
{
    uint64_t *r = &st->r;
    for (int tries = 0; tries < 8 && st->m.alive > 0; tries++) {
        const model_entity *e = model_get(&st->m, random_id(st, 1));
        const model_sense *es = &e->sense[splitmix_below(r, (uint32_t)st->m.senses)];
        double range = es->range;
        if (st->v2 && es->margin > 0 && splitmix_chance(r, 50))
            range += es->margin;
        double a = range, b = 0;
        if (!(range > 0) || range > 1000 || range != floor(range))
            continue;
        if (fmod(range, 13) == 0 && splitmix_chance(r, 50)) {
            a = range / 13 * 5;
            b = range / 13 * 12;
        } else if (fmod(range, 5) == 0 && splitmix_chance(r, 70)) {
            a = range / 5 * 3;
            b = range / 5 * 4;
        }
        if (splitmix_chance(r, 50)) {
            double t = a;
            a = b;
            b = t;
        }
        int vertical = st->v2 && splitmix_chance(r, 30);
        *x = e->x + (splitmix_chance(r, 50) ? -a : a);
        *y = e->y + (vertical ? 0 : splitmix_chance(r, 50) ? -b : b);
        *z = e->z + (vertical ? (splitmix_chance(r, 50) ? -b : b) : 0);
        if (splitmix_chance(r, 25))
            *x = nextafter(*x, *x >= e->x ? INFINITY : -INFINITY);
        return 1;
    }
    return 0;
}

static int boundary_position(run_state *st, double *x, double *y)
{
    double z;
    return boundary_point(st, x, y, &z);
}

/*
 * A point on or near an edge of some observer's cone: its offset a whole
 * multiple of the facing plus one of the facing turned a right angle in x
 * and y, so that it lies 45, 90 or 135 degrees off the axis (or straight
 * ahead or behind) exactly, and the formula's rounding decides. 0 if no
 * observer faces along x and y with whole numbers.
 */
static int cone_point(run_state *st, double *x, double *y, double *z)
{
    static const int steps[][2] = {{1, 1}, {1, -1}, {0, 1}, {0, -1}, {-1, 1}, {-1, 0},
                                   {1, 0}, {2, 1},  {1, 2}, {-2, 1}, {3, 3}};
    uint64_t *r = &st->r;
    for (int tries = 0; tries < 8 && st->m.alive > 0; tries++) {
        const model_entity *e = model_get(&st->m, random_id(st, 1));
        double fx = e->facing[0], fy = e->facing[1];
        if (e->facing[2] != 0 || fx != floor(fx) || fy != floor(fy) || (fx == 0 && fy == 0))
            continue;
        const int *k = steps[splitmix_below(r, COUNT_OF(steps))];
        double scale = 1 + splitmix_below(r, 3);
        *x = e->x + scale * (k[0] * fx - k[1] * fy);
        *y = e->y + scale * (k[0] * fy + k[1] * fx);
        *z = e->z;
        return 1;
    }
    return 0;
}

/* Version 2 values: heights, facings, fovs, margins and masks. */
static double random_height(uint64_t *r)
{
    return splitmix_chance(r, 60) ? 0 : ((int)splitmix_below(r, 41) - 20) * 0.5;
}

static void random_facing(uint64_t *r, double f[3])
{
    /* The last is so short that its square underflows: the cone's q is 0. */
    static const double facings[][3] = {{1, 0, 0}, {0, 1, 0},  {-1, 0, 0},   {0, -1, 0},
                                        {3, 4, 0}, {-2, 5, 0}, {1, 1, 0},    {0, 0, 1},
                                        {1, 1, 1}, {2, 0, -1}, {0.5, -3, 0}, {1e-200, -1e-200, 0}};
    if (splitmix_chance(r, 25)) {
        f[0] = splitmix_unit(r) * 2 - 1;
        f[1] = splitmix_unit(r) * 2 - 1;
        f[2] = splitmix_chance(r, 50) ? 0 : splitmix_unit(r) - 0.5;
    } else {
        memcpy(f, facings[splitmix_below(r, COUNT_OF(facings))], 3 * sizeof *f);
    }
}

static double random_fov(uint64_t *r)
{
    static const double fovs[] = {90, 90, 180, 270, 45, 120, 60, 1, 359, 0.5, 300, 360};
    return splitmix_chance(r, 45) ? 0 : fovs[splitmix_below(r, COUNT_OF(fovs))];
}

static double random_margin(uint64_t *r)
{
    static const double margins[] = {0.5, 1, 2, 5, 5, 10};
    uint32_t k = splitmix_below(r, 100);
    return k < 50   ? 0
           : k < 90 ? margins[splitmix_below(r, COUNT_OF(margins))]
                    : splitmix_unit(r) * 8;
}

static uint32_t random_mask(uint64_t *r, uint32_t percent)
{
    return splitmix_chance(r, percent)
               ? (uint32_t)splitmix_below(r, 16) << (splitmix_chance(r, 10) ? 28 : 0)
               : 0;
}

/* The version 2 fields of sense s. */
static void random_sense(uint64_t *r, percept_sense_params *p)
{
    p->range = tu_random_range(r);
    p->margin = random_margin(r);
    p->fov = random_fov(r);
    p->ignore = random_mask(r, 20);
}

/* A description for an add: every field random, the position often on an edge. */
static void random_desc(run_state *st, percept_entity_desc *d)
{
    uint64_t *r = &st->r;
    int n = st->m.senses;
    *d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    if (splitmix_chance(r, 3)) { /* by the origin: offsets whose squares underflow, dd == 0 */
        static const double tiny[] = {0, 1e-170, -1e-170};
        d->x = tiny[splitmix_below(r, 3)];
        d->y = tiny[splitmix_below(r, 3)];
        d->z = tiny[splitmix_below(r, 3)];
    } else if (!(splitmix_chance(r, 30) &&
                 (splitmix_chance(r, 50) ? boundary_point(st, &d->x, &d->y, &d->z)
                                         : cone_point(st, &d->x, &d->y, &d->z)))) {
        random_position(r, st->crowd, &d->x, &d->y);
        d->z = random_height(r);
    }
    for (int s = 0; s < n; s++)
        random_sense(r, &d->sense[s]);
    if (splitmix_chance(r, 95))
        random_facing(r, d->facing);
    d->tags = random_mask(r, 40);
    d->hidden = splitmix_chance(r, 20) ? splitmix_below(r, 1u << n) : 0;
}

/* Some fields of an entity changed at once, for an update; at times none. */
static void random_update(run_state *st, const model_entity *e, percept_entity_desc *d)
{
    uint64_t *r = &st->r;
    *d = model_desc(&st->m, e);
    for (uint32_t changes = splitmix_below(r, 4); changes > 0; changes--) {
        percept_sense_params *p = &d->sense[splitmix_below(r, (uint32_t)st->m.senses)];
        switch (splitmix_below(r, 8)) {
        case 0: /* range and margin at once */
            p->range = tu_random_range(r);
            p->margin = random_margin(r);
            break;
        case 1:
            p->fov = random_fov(r);
            break;
        case 2:
            p->ignore = random_mask(r, 60);
            break;
        case 3:
            d->tags = random_mask(r, 60);
            break;
        case 4:
            random_facing(r, d->facing);
            break;
        case 5:
            d->hidden = splitmix_below(r, 1u << st->m.senses);
            break;
        case 6:
            d->x += ((int)splitmix_below(r, 9) - 4) * 0.5;
            d->z += ((int)splitmix_below(r, 5) - 2) * 0.5;
            break;
        default:
            if (!boundary_point(st, &d->x, &d->y, &d->z))
                cone_point(st, &d->x, &d->y, &d->z);
            break;
        }
    }
}

/* A stimulus, often exactly strength * R from an observer. */
static void random_stimulus(run_state *st, percept_stimulus *s)
{
    static const double strengths[] = {0, 0, 1, 2, 0.5, 1.5};
    uint64_t *r = &st->r;
    *s = (percept_stimulus)PERCEPT_STIMULUS_INIT;
    s->sense = (percept_sense)splitmix_below(r, (uint32_t)st->m.senses);
    s->strength = strengths[splitmix_below(r, COUNT_OF(strengths))];
    s->tags = random_mask(r, 30);
    const model_entity *o = st->m.alive > 0 ? model_get(&st->m, random_id(st, 1)) : NULL;
    double reach = o != NULL ? o->sense[s->sense].range * (s->strength == 0 ? 1 : s->strength) : 0;
    uint32_t k = splitmix_below(r, 100);
    if (o != NULL && k < 50 && reach > 0 && reach == floor(reach)) {
        double a = splitmix_chance(r, 50) ? -reach : reach;
        s->x = o->x + (k < 20 ? a : 0);
        s->y = o->y + (k >= 20 && k < 35 ? a : 0);
        s->z = o->z + (k >= 35 ? a : 0);
    } else if (o != NULL && k < 70) { /* on an entity */
        s->x = o->x;
        s->y = o->y;
        s->z = o->z;
    } else if (!(k < 85 && cone_point(st, &s->x, &s->y, &s->z))) {
        random_position(r, st->crowd, &s->x, &s->y);
        s->z = random_height(r);
    }
    if (st->m.alive > 0 && splitmix_chance(r, 50)) {
        s->has_source = 1;
        s->source = random_id(st, 1);
    }
}

/* A version 2 call that must fail: one bad value, the model says with what. */
static void invalid_v2_op(run_state *st, tu_op *o)
{
    uint64_t *r = &st->r;
    int n = st->m.senses;
    const model_entity *e = model_get(&st->m, random_id(st, 1));
    percept_sense_params *p = &o->desc.sense[splitmix_below(r, (uint32_t)n)];
    o->id = e->id;
    o->kind = TU_UPDATE;
    o->desc = model_desc(&st->m, e);
    switch (splitmix_below(r, 12)) {
    case 0:
        p->margin = splitmix_chance(r, 50) ? NAN : -1;
        break;
    case 1: {
        static const double bad_fovs[] = {-1, 360.5, NAN, 720, -90, INFINITY};
        p->fov = bad_fovs[splitmix_below(r, COUNT_OF(bad_fovs))];
        break;
    }
    case 2: /* a cone without a facing */
        p->fov = 90;
        memset(o->desc.facing, 0, sizeof o->desc.facing);
        break;
    case 3: /* a sense the world lacks: its hidden bit, or any of its fields */
        if (n == PERCEPT_MAX_SENSES) {
            o->desc.facing[splitmix_below(r, 3)] = NAN;
        } else if (splitmix_chance(r, 30)) {
            o->desc.hidden |= 1u << n;
        } else {
            percept_sense_params *beyond =
                &o->desc.sense[n + (int)splitmix_below(r, (uint32_t)(8 - n))];
            switch (splitmix_below(r, 4)) {
            case 0:
                beyond->range = 1;
                break;
            case 1:
                beyond->margin = 1;
                break;
            case 2:
                beyond->fov = 90;
                break;
            default:
                beyond->ignore = 1;
                break;
            }
        }
        break;
    case 4: {
        static const size_t sizes[] = {0, sizeof(percept_entity_desc) - 1, 8};
        o->desc.size = sizes[splitmix_below(r, COUNT_OF(sizes))];
        break;
    }
    case 5:
        o->kind = TU_TURN;
        o->x = o->y = o->z = 0;
        if (!splitmix_chance(r, 60))
            o->y = NAN;
        break;
    case 6:
        o->kind = TU_MOVE3;
        o->x = e->x;
        o->y = e->y;
        o->z = splitmix_chance(r, 50) ? NAN : nextafter(PERCEPT_COORD_LIMIT, INFINITY);
        break;
    case 7:
        o->kind = TU_RANGE;
        o->sense = splitmix_chance(r, 50) ? n : -1;
        o->value = 1;
        break;
    case 8:
        o->id = random_id(st, 0);
        if (model_get(&st->m, o->id) != NULL)
            o->desc.size = 0;
        break;
    default: { /* a stimulus: bad sense, point, strength or source */
        static const double bad_strengths[] = {-1, NAN, INFINITY, -0.5};
        o->kind = TU_EMIT;
        random_stimulus(st, &o->stimulus);
        o->stimulus.has_source = 0;
        switch (splitmix_below(r, 4)) {
        case 0:
            o->stimulus.sense = splitmix_chance(r, 50) ? n : -1;
            break;
        case 1:
            o->stimulus.z = NAN;
            break;
        case 2:
            o->stimulus.strength = bad_strengths[splitmix_below(r, COUNT_OF(bad_strengths))];
            break;
        default:
            o->stimulus.has_source = 1;
            o->stimulus.source = random_id(st, 0);
            if (model_get(&st->m, o->stimulus.source) != NULL)
                o->stimulus.x = NAN;
            break;
        }
        break;
    }
    }
}

/* A version 2 call: mostly valid ones, one in twenty that must fail. */
static void random_v2_op(run_state *st, tu_op *o)
{
    uint64_t *r = &st->r;
    uint32_t k = splitmix_below(r, 100);
    memset(o, 0, sizeof *o);
    if ((st->m.alive < MIN_ALIVE && k < 70) || st->m.alive == 0)
        k = 0;
    else if (st->m.alive >= MAX_ALIVE && k < 20)
        k = 20;
    if (k < 12) {
        o->kind = TU_ADD;
        o->id = random_id(st, 0);
        random_desc(st, &o->desc);
        return;
    }
    if (k >= 95) {
        invalid_v2_op(st, o);
        return;
    }
    o->id = random_id(st, 1);
    const model_entity *e = model_get(&st->m, o->id);
    if (k < 18) {
        o->kind = TU_REMOVE;
    } else if (k < 36) {
        o->kind = TU_MOVE;
        o->x = e->x + ((int)splitmix_below(r, 17) - 8) * 0.5;
        o->y = e->y + ((int)splitmix_below(r, 17) - 8) * 0.5;
        if (splitmix_chance(r, 30) && !boundary_position(st, &o->x, &o->y))
            random_position(r, st->crowd, &o->x, &o->y);
    } else if (k < 46) {
        o->kind = TU_MOVE3;
        o->x = e->x;
        o->y = e->y;
        o->z = e->z + ((int)splitmix_below(r, 9) - 4) * 0.5; /* often a height-only move */
        if (splitmix_chance(r, 40) && !boundary_point(st, &o->x, &o->y, &o->z))
            cone_point(st, &o->x, &o->y, &o->z);
    } else if (k < 55) {
        double f[3];
        o->kind = TU_TURN;
        random_facing(r, f);
        if (splitmix_chance(r, 5))
            f[0] = f[1] = f[2] = 0; /* refused while it has a cone */
        o->x = f[0];
        o->y = f[1];
        o->z = f[2];
    } else if (k < 67) {
        o->kind = TU_UPDATE;
        random_update(st, e, &o->desc);
    } else if (k < 79) {
        o->kind = TU_EMIT;
        random_stimulus(st, &o->stimulus);
    } else {
        o->kind = k < 89 ? TU_RANGE : TU_HIDE;
        o->sense = (percept_sense)splitmix_below(r, (uint32_t)st->m.senses);
        o->value = k < 89 ? tu_random_range(r) : splitmix_chance(r, 50);
    }
}

/* A call: mostly valid ones, one in twenty that must fail (the model says with what). */
static void random_op(run_state *st, tu_op *o)
{
    uint64_t *r = &st->r;
    uint32_t k = splitmix_below(r, 100);
    memset(o, 0, sizeof *o);
    if ((st->m.alive < MIN_ALIVE && k < 70) || st->m.alive == 0)
        k = 0;
    else if (st->m.alive >= MAX_ALIVE && k < 20)
        k = 20;
    if (k < 14) {
        o->kind = TU_ADD;
        o->id = random_id(st, 0);
        if (!(splitmix_chance(r, 30) && boundary_position(st, &o->desc.x, &o->desc.y)))
            random_position(r, st->crowd, &o->desc.x, &o->desc.y);
        o->desc.size = sizeof o->desc;
        for (int s = 0; s < 3; s++)
            o->desc.sense[s].range = tu_random_range(r);
        o->desc.hidden = splitmix_chance(r, 20) ? splitmix_below(r, 8) : 0;
    } else if (k < 22) {
        o->kind = TU_REMOVE;
        o->id = random_id(st, 1);
    } else if (k < 74) {
        o->kind = TU_MOVE;
        o->id = random_id(st, 1);
        const model_entity *e = model_get(&st->m, o->id);
        if (k < 48) { /* a step on the half grid */
            o->x = e->x + ((int)splitmix_below(r, 17) - 8) * 0.5;
            o->y = e->y + ((int)splitmix_below(r, 17) - 8) * 0.5;
        } else if (k < 57) { /* a fractional step */
            o->x = e->x + (splitmix_unit(r) - 0.5) * 12;
            o->y = e->y + (splitmix_unit(r) - 0.5) * 12;
        } else if (k >= 67 || !boundary_position(st, &o->x, &o->y)) { /* a teleport */
            random_position(r, st->crowd, &o->x, &o->y);
        }
    } else if (k < 95) {
        o->kind = k < 86 ? TU_RANGE : TU_HIDE;
        o->id = random_id(st, 1);
        o->sense = (percept_sense)splitmix_below(r, 3);
        o->value = k < 86 ? tu_random_range(r) : splitmix_chance(r, 50);
    } else {
        /* Invalid: an ID that is there added again, one that is not changed, a bad value. */
        static const tu_op_kind kinds[] = {TU_ADD, TU_MOVE, TU_RANGE, TU_MOVE, TU_REMOVE, TU_HIDE};
        uint32_t bad = splitmix_below(r, COUNT_OF(kinds));
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
    int senses;                                  /* the world's */
    const char *sense_names[PERCEPT_MAX_SENSES]; /* the config's */
    const char *names[PERCEPT_MAX_SENSES];       /* the backend of each sense */
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
    int n = snprintf(text, sizeof text, "[%s]\nbackend = %s\n", su->sense_names[sense], backend);
    if (key != NULL && size > 0)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s = %g\n", key, size);
    if (cell > 0)
        snprintf(text + n, sizeof text - (size_t)n, "observer_cell_size = %g\n", cell);
    ini_append(su, text);
    su->names[sense] = backend;
}

#define WORLD_200 "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 200\nmax_y = 200\n"
#define WORLD_STRIP "[world]\nmin_x = -100\nmin_y = 50\nmax_x = 300\nmax_y = 120\n"

/* Every character a sense's name may hold, and a name of the most bytes (31). */
static const char *const v2_names[PERCEPT_MAX_SENSES] = {
    "sight",  "hearing", "smell", "touch",
    "heat_2", "Radio-X", "e",     "a_sense_with_the_longest_name31"};

/*
 * Seeds 21-28: seed - 20 senses, named from v2_names in an order of the
 * seed's; odd seeds with MOVE events, in a crowd from seed 27; even seeds
 * alternate the backend under test with another, sense by sense, each
 * sense with its own observer grid.
 */
static void seed_config_v2(uint64_t seed, const char *backend, seed_setup *su)
{
    char text[512];
    int n = (int)(seed - 20), used = 0;
    su->senses = n;
    su->moves_on = (int)(seed % 2);
    used += snprintf(text, sizeof text,
                     "move_events = %s\n[world]\nsenses =", su->moves_on ? "on" : "off");
    for (int s = 0; s < n; s++) {
        su->sense_names[s] = v2_names[(s + 3 * (int)seed) % PERCEPT_MAX_SENSES];
        used += snprintf(text + used, sizeof text - (size_t)used, " %s", su->sense_names[s]);
    }
    snprintf(text + used, sizeof text - (size_t)used, "\nmin_x = 0\nmin_y = 0\n%s",
             seed % 4 == 0 ? "max_x = 400\nmax_y = 80\n" : "max_x = 200\nmax_y = 200\n");
    ini_append(su, text);
    if (seed % 2 == 0) {
        const char *other = other_backend(backend);
        for (int s = 0; s < n; s++)
            ini_sense(su, s, s % 2 ? other : backend, 11, 4 + 7 * s);
    }
}

static void seed_config(uint64_t seed, const char *backend, seed_setup *su)
{
    memset(su, 0, sizeof *su);
    for (int s = 0; s < PERCEPT_MAX_SENSES; s++)
        su->names[s] = backend;
    if (seed > 20) {
        seed_config_v2(seed, backend, su);
        return;
    }
    su->senses = 3;
    for (int s = 0; s < 3; s++)
        su->sense_names[s] = v2_names[s];

    int mixed = (int)((seed - 1) / 8 % 2);
    const char *other = other_backend(backend);
    /* A parameterless backend cannot get a second instance by parameters:
     * there another backend stands in for the second instance. */
    int sized = tu_size_key(backend) != NULL;

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

/* percept_query() around a few points: on an entity, its reach, anywhere. */
static void expect_queries(run_state *st, const percept_world *w, const char *what)
{
    for (int q = 0; q < 4 && st->m.alive > 0; q++) {
        const model_entity *e = model_get(&st->m, random_id(st, 1));
        double x = e->x, y = e->y, z = e->z, radius = e->sense[0].range;
        if (q == 3) {
            random_position(&st->r, st->crowd, &x, &y);
            radius = splitmix_unit(&st->r) * 30;
        } else if (q == 2) {
            radius = 1e7;
        }
        tu_expect_query(&st->m, w, x, y, z, radius, what);
    }
}

static void run_seed(const char *backend)
{
    run_state *st = calloc(1, sizeof *st);
    seed_setup su;
    tu_recorder rec;
    assert_non_null(st);
    st->crowd = (current_seed > 16 && current_seed <= 20) || current_seed >= 27;
    st->v2 = current_seed > 20;
    st->r = current_seed * 0x2545F4914F6CDD1Dull;
    seed_config(current_seed, backend, &su);
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, su.ini, &rec);
    if (percept_sense_count(w) != su.senses)
        fail_msg("seed %llu: the world has %d senses, the config %d\n%s",
                 (unsigned long long)current_seed, percept_sense_count(w), su.senses, su.ini);
    for (int s = 0; s < su.senses; s++) {
        const char *name = percept_backend_name(w, (percept_sense)s);
        const char *sense = percept_sense_name(w, (percept_sense)s);
        if (sense == NULL || strcmp(sense, su.sense_names[s]) != 0)
            fail_msg("seed %llu: sense %d is named '%s', the config says '%s'\n%s",
                     (unsigned long long)current_seed, s, sense ? sense : "(null)",
                     su.sense_names[s], su.ini);
        if (name == NULL || strcmp(name, su.names[s]) != 0)
            fail_msg("seed %llu: %s is served by '%s', the config says '%s'\n%s",
                     (unsigned long long)current_seed, su.sense_names[s], name ? name : "(null)",
                     su.names[s], su.ini);
    }
    tu_model_init(&st->m, su.moves_on, w);
    /* The ID pool: 0, 2^32-1, small numbers and random 32-bit values, all distinct. */
    for (int i = 0; i < POOL; i++) {
        percept_id id;
        int unique;
        do {
            id = i == 0   ? 0
                 : i == 1 ? UINT32_MAX
                 : i < 60 ? splitmix_below(&st->r, 200)
                          : (percept_id)splitmix_next(&st->r);
            unique = 1;
            for (int j = 0; j < i; j++)
                unique &= st->pool[j] != id;
        } while (!unique);
        st->pool[i] = id;
    }

    const size_t ops = st->v2 ? OPS_PER_V2_SEED : OPS_PER_SEED;
    for (size_t index = 0; index < ops; index++) {
        char what[1200];
        tu_op o;
        if (st->v2)
            random_v2_op(st, &o);
        else
            random_op(st, &o);
        snprintf(what, sizeof what, "backend %s, seed %llu, call %zu; config:\n%s", backend,
                 (unsigned long long)current_seed, index, su.ini);
        tu_call(w, &rec, &st->m, &o, what);
        if (index % CHECK_EVERY == 0 || index + 1 == ops) {
            tu_expect_world(&st->m, w, what);
            if (st->v2)
                expect_queries(st, w, what);
        }
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
    if (!model_same_events(m, want, n, m->events, m->n_events, why, sizeof why))
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

/* docs/trace-format.md's version 2 example: a cone, a margin, a stimulus. */
static void test_model_example_v2(void **state)
{
    model m;
    (void)state;
    model_init(&m, 0);
    percept_entity_desc one = tu_desc(10, 10, 5, 0, 0, 0), two = tu_desc(13, 14, 0, 2, 0, 0),
                        three = tu_desc(10, 20, 20, 0, 0, 0);
    three.facing[1] = -1;
    three.sense[PERCEPT_SIGHT].fov = 90;
    three.sense[PERCEPT_SIGHT].margin = 5;
    assert_int_equal(model_add(&m, 1, &one), PERCEPT_OK);
    assert_int_equal(model_add(&m, 2, &two), PERCEPT_OK);
    const percept_event line3[] = {EV(ENTER, 1, 2, SIGHT, 13, 14)};
    expect_model(&m, line3, 1, "line 3");
    assert_int_equal(model_move(&m, 2, 30, 30), PERCEPT_OK);
    const percept_event line4[] = {EV(LEAVE, 1, 2, SIGHT, 30, 30)};
    expect_model(&m, line4, 1, "line 4");
    assert_int_equal(model_add(&m, 3, &three), PERCEPT_OK);
    const percept_event line5[] = {EV(ENTER, 3, 1, SIGHT, 10, 10)};
    expect_model(&m, line5, 1, "line 5: 1 in 3's cone, 2 behind it");
    assert_int_equal(model_move(&m, 3, 10, 33), PERCEPT_OK);
    expect_model(&m, NULL, 0, "line 6: 23 away, kept by the margin");
    assert_int_equal(model_move(&m, 3, 10, 36), PERCEPT_OK);
    const percept_event line7[] = {EV(LEAVE, 3, 1, SIGHT, 10, 10)};
    expect_model(&m, line7, 1, "line 7: 26 away");
    percept_stimulus noise = PERCEPT_STIMULUS_INIT;
    noise.sense = PERCEPT_HEARING;
    noise.x = 20;
    noise.y = 25;
    noise.strength = 10;
    noise.has_source = 1;
    noise.source = 1;
    assert_int_equal(model_emit(&m, &noise), PERCEPT_OK);
    const percept_event line8[] = {tu_stim_ev(2, PERCEPT_HEARING, 1, 20, 25, 0)};
    expect_model(&m, line8, 1, "line 8");
    model_free(&m);
}

/*
 * The cone's edges as the formula rounds them (c = cos(fov * (PI / 360))):
 * 45 degrees off a 90 degree cone and 90 off a 180 degree cone are outside,
 * 90 off a 270 degree cone inside; straight behind is outside a 270 degree
 * cone, and the observer's own point (dd == 0) inside any.
 */
static void test_model_cones(void **state)
{
    static const struct {
        double fov, x, y;
        int in;
    } cases[] = {{90, 1, 1, 0},    {90, 4, 3, 1},  {90, -1, 0, 0},  {180, 0, 1, 0},
                 {180, 1, 100, 1}, {270, 0, 1, 1}, {270, -1, 0, 0}, {270, -1, 1, 0},
                 {360, -1, 0, 1},  {90, 0, 0, 1}};
    (void)state;
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        model m;
        model_init(&m, 0);
        percept_entity_desc o = tu_desc(0, 0, 1000, 0, 0, 0),
                            t = tu_desc(cases[i].x, cases[i].y, 0, 0, 0, 0);
        o.facing[0] = 1;
        o.sense[PERCEPT_SIGHT].fov = cases[i].fov;
        assert_int_equal(model_add(&m, 1, &o), PERCEPT_OK);
        assert_int_equal(model_add(&m, 2, &t), PERCEPT_OK);
        if (model_perceives(&m, 1, 2, PERCEPT_SIGHT) != cases[i].in)
            fail_msg("fov %g, target at (%g, %g): the model says %d", cases[i].fov, cases[i].x,
                     cases[i].y, !cases[i].in);
        model_free(&m);
    }
}

/* A margin keeps what was perceived out to R + M, and only that; tags and
 * ignore masks; a cone left without a facing is refused. */
static void test_model_margins_masks(void **state)
{
    model m;
    (void)state;
    model_init(&m, 1);
    percept_entity_desc o = tu_desc(0, 0, 10, 12, 0, 0), t = tu_desc(10, 0, 0, 0, 0, 0);
    o.sense[PERCEPT_SIGHT].margin = 2;
    o.sense[PERCEPT_HEARING].ignore = 6;
    t.tags = 4;
    assert_int_equal(model_add(&m, 1, &o), PERCEPT_OK);
    assert_int_equal(model_add(&m, 2, &t), PERCEPT_OK);
    const percept_event seen[] = {EV(ENTER, 1, 2, SIGHT, 10, 0)};
    expect_model(&m, seen, 1, "on the range, the hearing ignores its tags");
    assert_int_equal(model_move(&m, 2, 12, 0), PERCEPT_OK);
    const percept_event kept[] = {EV(MOVE, 1, 2, SIGHT, 12, 0)};
    expect_model(&m, kept, 1, "on R + M, kept");
    assert_int_equal(model_move(&m, 2, nextafter(12, 13), 0), PERCEPT_OK);
    const percept_event lost[] = {EV(LEAVE, 1, 2, SIGHT, nextafter(12, 13), 0)};
    expect_model(&m, lost, 1, "beyond R + M, lost");
    assert_int_equal(model_move(&m, 2, 11, 0), PERCEPT_OK);
    expect_model(&m, NULL, 0, "within R + M but not within R: not perceived again");
    t = tu_desc(11, 0, 0, 0, 0, 0);
    assert_int_equal(model_update(&m, 2, &t), PERCEPT_OK);
    const percept_event heard[] = {EV(ENTER, 1, 2, HEARING, 11, 0)};
    expect_model(&m, heard, 1, "tags gone: heard; no move, no MOVE");
    o.sense[PERCEPT_SIGHT].fov = 90;
    assert_int_equal(model_update(&m, 1, &o), PERCEPT_EINVAL);
    assert_int_equal(model_turn(&m, 1, 0, 0, 0), PERCEPT_OK);
    o.facing[2] = 1;
    assert_int_equal(model_update(&m, 1, &o), PERCEPT_OK);
    assert_int_equal(model_turn(&m, 1, 0, 0, 0), PERCEPT_EINVAL);
    model_free(&m);
}

int main(void)
{
    struct CMUnitTest tests[5 + SEEDS] = {
        cmocka_unit_test(test_model_example),       cmocka_unit_test(test_model_moves),
        cmocka_unit_test(test_model_example_v2),    cmocka_unit_test(test_model_cones),
        cmocka_unit_test(test_model_margins_masks),
    };
    static char names[SEEDS][16];
    for (int seed = 1; seed <= SEEDS; seed++) {
        snprintf(names[seed - 1], sizeof names[0], "seed %d", seed);
        tests[4 + seed] = (struct CMUnitTest){names[seed - 1], test_seed, NULL, tu_report_backend,
                                              (void *)(uintptr_t)seed};
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
