/*
 * test_differential.c - randomized differential test: thousands of random
 * operations per fixed seed, each checked against an independent brute-force
 * model of the relation kept inside this file.
 *
 * The model knows nothing of the library: its own entity table and relation,
 * evaluated from the definition in TRACE.md. After every operation it
 * re-evaluates each pair the operation's entity is part of (no other pair can
 * change: the relation of two entities depends on those two alone) and diffs
 * the result against the previous one. That diff, plus a MOVE for each pair
 * that holds before and after a move of its target when move_events is on,
 * sorted by observer, target and sense, is exactly the list the world must
 * deliver. At every query check the model also re-evaluates the whole
 * relation, so a slip in that shortcut cannot pass silently. A seeded PRNG
 * (tools/splitmix.h) makes every run identical.
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

#define POOL 160 /* distinct IDs; an ID always maps to the same model slot */
#define OPS_PER_SEED 3000
#define CHECK_EVERY 64 /* full query comparison every so many operations */
#define MIN_ALIVE 60
#define MAX_ALIVE 150

/* ------------------------------------------------------------------------ */
/* PRNG: splitmix64, fully specified, so the same seed means the same run    */

typedef struct rng {
    uint64_t state;
} rng;

/* Uniform in 0 .. n-1 (n small, so the modulo bias is negligible and fixed). */
static uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)(splitmix_next(&r->state) % n);
}

static int rng_chance(rng *r, uint32_t percent)
{
    return rng_below(r, 100) < percent;
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */

typedef struct mentity {
    percept_id id;
    int alive;
    double x, y; /* kept after removal: a leave reports the last position */
    double range[PERCEPT_SENSE_COUNT];
    unsigned hidden;
} mentity;

typedef struct model {
    mentity ent[POOL];
    /* rel[i][j]: bit s set when slot i perceives slot j by sense s. */
    unsigned char rel[POOL][POOL];
    size_t alive;
} model;

/* The relation's definition, literally. */
static int model_perceives(const mentity *o, const mentity *t, int s)
{
    double dx, dy, r;
    if (o == t || !o->alive || !t->alive)
        return 0;
    r = o->range[s];
    if (!(r > 0))
        return 0;
    if (t->hidden & PERCEPT_SENSE_BIT(s))
        return 0;
    dx = t->x - o->x;
    dy = t->y - o->y;
    return dx * dx + dy * dy <= r * r;
}

/* The senses by which slot i perceives slot j now. */
static unsigned char model_bits(const model *m, int i, int j)
{
    unsigned char bits = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (model_perceives(&m->ent[i], &m->ent[j], s))
            bits |= (unsigned char)PERCEPT_SENSE_BIT(s);
    return bits;
}

static void push_expected(percept_event **out, size_t *n, size_t *cap, percept_event ev)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *out = realloc(*out, *cap * sizeof **out);
        assert_non_null(*out);
    }
    (*out)[(*n)++] = ev;
}

/*
 * Re-evaluate pair (i, j) and append its events: ENTER/LEAVE for each sense
 * that changed; MOVE for each sense that holds before and after when `moved`
 * says the target j has just moved. Events carry the target's position now
 * (its last one after a removal).
 */
static void model_pair(model *m, int i, int j, int moved, percept_event **out, size_t *n,
                       size_t *cap)
{
    unsigned char was = m->rel[i][j], now = model_bits(m, i, j);
    const mentity *t = &m->ent[j];
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        unsigned bit = PERCEPT_SENSE_BIT(s);
        percept_event_kind kind;
        if ((was ^ now) & bit)
            kind = (now & bit) ? PERCEPT_ENTER : PERCEPT_LEAVE;
        else if (moved && (was & now & bit))
            kind = PERCEPT_MOVE;
        else
            continue;
        push_expected(out, n, cap, tu_ev(kind, m->ent[i].id, t->id, (percept_sense)s, t->x, t->y));
    }
    m->rel[i][j] = now;
}

/*
 * The events of an operation on `slot` (already applied to the entity table),
 * in the documented order, and make the new relation current. `moved`: the
 * operation was a move that changed the entity's position and MOVE events are
 * on. Returns the event count.
 */
static size_t model_update(model *m, int slot, int moved, percept_event **out, size_t *cap)
{
    size_t n = 0;
    for (int j = 0; j < POOL; j++)
        if (j != slot)
            model_pair(m, slot, j, 0, out, &n, cap); /* what slot perceives: no target moved */
    for (int i = 0; i < POOL; i++)
        if (i != slot)
            model_pair(m, i, slot, moved, out, &n, cap); /* who perceives slot */
    tu_sort_events(*out, n);
    return n;
}

/*
 * The whole relation evaluated afresh equals the one the model keeps; else
 * print the first pair that differs and return 0. Guards the shortcut of
 * model_update(), which only looks at the operation's own pairs.
 */
static int model_consistent(const model *m)
{
    for (int i = 0; i < POOL; i++) {
        for (int j = 0; j < POOL; j++) {
            unsigned char bits = model_bits(m, i, j);
            if (bits != m->rel[i][j]) {
                print_error("model self-check: slot %d -> %d has senses %u, kept %u\n", i, j,
                            (unsigned)bits, (unsigned)m->rel[i][j]);
                return 0;
            }
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Random operations                                                         */

enum op_kind { OP_ADD, OP_MOVE, OP_REMOVE, OP_RANGE, OP_HIDE, OP_BAD };

typedef struct op {
    enum op_kind kind;
    int slot;
    double x, y;
    double range[PERCEPT_SENSE_COUNT];
    unsigned hidden;
    int sense;
    double value;
    int bad; /* which invalid call, for OP_BAD */
    int expect_status;
} op;

/*
 * A world's setup for one seed and backend: the INI text that follows
 * tu_open()'s "[percept]\nbackend = NAME\n", whether MOVE events are on, and
 * the backend each sense must report (a mixed config that the core silently
 * ignored would otherwise test nothing).
 */
typedef struct seed_setup {
    char ini[1024];
    int moves_on;
    const char *names[PERCEPT_SENSE_COUNT];
} seed_setup;

typedef struct run_state {
    const char *backend;
    uint64_t seed;
    int crowd; /* most positions in CROWD_SIDE square around (100, 100) */
    seed_setup setup;
    rng r;
    model m;
    percept_world *w;
    tu_recorder rec;
    percept_event *expected;
    size_t expected_cap;
} run_state;

/* Ranges favour integers whose boundary points have integer offsets (3-4-5, 5-12-13). */
static double random_range(rng *r)
{
    static const double common[] = {1, 2, 2.5, 5, 5, 10, 10, 13, 15, 20, 25, 26, 40, 65};
    uint32_t k = rng_below(r, 100);
    if (k < 20)
        return 0;
    if (k < 80)
        return common[rng_below(r, sizeof common / sizeof common[0])];
    if (k < 97)
        return splitmix_unit(&r->state) * 50;
    return 1e7; /* reaches everyone, inside and far outside the bounds */
}

/* The side of the crowd seeds' square: smaller than most ranges. */
#define CROWD_SIDE 12

/* Positions: mostly a half-unit grid in and around the bounds, sometimes anywhere. */
static void random_position(rng *r, int crowd, double *x, double *y)
{
    uint32_t k = rng_below(r, 100);
    if (crowd && k < 80) {
        *x = 100 - CROWD_SIDE / 2 + (double)rng_below(r, 2 * CROWD_SIDE + 1) * 0.5;
        *y = 100 - CROWD_SIDE / 2 + (double)rng_below(r, 2 * CROWD_SIDE + 1) * 0.5;
    } else if (k < 70) {
        *x = (double)((int)rng_below(r, 521) - 60) * 0.5; /* -30 .. 230 */
        *y = (double)((int)rng_below(r, 521) - 60) * 0.5;
    } else if (k < 90) {
        *x = -40 + splitmix_unit(&r->state) * 280;
        *y = -40 + splitmix_unit(&r->state) * 280;
    } else if (k < 95) {
        /* Far outside the bounds, negative or huge. */
        *x = (rng_chance(r, 50) ? -1 : 1) * (1e6 + (double)rng_below(r, 1000));
        *y = (rng_chance(r, 50) ? -1 : 1) * 1e9;
    } else {
        /* Clustered on one point, so coincident entities happen. */
        *x = 100;
        *y = 100;
    }
}

static int random_alive(run_state *st)
{
    int start = (int)rng_below(&st->r, POOL);
    for (int i = 0; i < POOL; i++) {
        int s = (start + i) % POOL;
        if (st->m.ent[s].alive)
            return s;
    }
    return -1;
}

static int random_dead(run_state *st)
{
    int start = (int)rng_below(&st->r, POOL);
    for (int i = 0; i < POOL; i++) {
        int s = (start + i) % POOL;
        if (!st->m.ent[s].alive)
            return s;
    }
    return -1;
}

/*
 * A point exactly on the boundary of some alive observer's range, with
 * integer offsets: (R, 0)-style, or scaled 3-4-5 / 5-12-13 when R allows.
 * Returns 0 if no observer with a suitable range was found.
 */
static int boundary_position(run_state *st, double *x, double *y)
{
    for (int tries = 0; tries < 8; tries++) {
        int o = random_alive(st);
        int s = (int)rng_below(&st->r, PERCEPT_SENSE_COUNT);
        const mentity *e;
        double r, a, b;
        if (o < 0)
            return 0;
        e = &st->m.ent[o];
        r = e->range[s];
        if (!(r > 0) || r > 1000 || r != floor(r))
            continue;
        if (fmod(r, 13) == 0 && rng_chance(&st->r, 50)) {
            a = r / 13 * 5;
            b = r / 13 * 12;
        } else if (fmod(r, 5) == 0 && rng_chance(&st->r, 70)) {
            a = r / 5 * 3;
            b = r / 5 * 4;
        } else {
            a = r;
            b = 0;
        }
        if (rng_chance(&st->r, 50)) {
            double t = a;
            a = b;
            b = t;
        }
        if (rng_chance(&st->r, 50))
            a = -a;
        if (rng_chance(&st->r, 50))
            b = -b;
        *x = e->x + a;
        *y = e->y + b;
        /* One ulp beyond, sometimes. */
        if (rng_chance(&st->r, 25))
            *x = nextafter(*x, a >= 0 ? INFINITY : -INFINITY);
        return 1;
    }
    return 0;
}

static void random_op(run_state *st, op *o)
{
    rng *r = &st->r;
    uint32_t k = rng_below(r, 100);
    memset(o, 0, sizeof *o);
    o->expect_status = PERCEPT_OK;

    if ((st->m.alive < MIN_ALIVE && k < 70) || st->m.alive == 0)
        k = 0; /* add */
    else if (st->m.alive >= MAX_ALIVE && k < 20)
        k = 20; /* remove instead of add */

    if (k < 14) {
        o->kind = OP_ADD;
        o->slot = random_dead(st);
        if (o->slot < 0) {
            o->kind = OP_REMOVE;
            o->slot = random_alive(st);
            return;
        }
        if (!(rng_chance(r, 30) && boundary_position(st, &o->x, &o->y)))
            random_position(r, st->crowd, &o->x, &o->y);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            o->range[s] = random_range(r);
        o->hidden = rng_chance(r, 20) ? rng_below(r, 8) : 0;
    } else if (k < 22) {
        o->kind = OP_REMOVE;
        o->slot = random_alive(st);
    } else if (k < 57) {
        const mentity *e;
        o->kind = OP_MOVE;
        o->slot = random_alive(st);
        e = &st->m.ent[o->slot];
        /* A step on the half grid, or a fractional one. */
        if (rng_chance(r, 70)) {
            o->x = e->x + (double)((int)rng_below(r, 17) - 8) * 0.5;
            o->y = e->y + (double)((int)rng_below(r, 17) - 8) * 0.5;
        } else {
            o->x = e->x + (splitmix_unit(&r->state) - 0.5) * 12;
            o->y = e->y + (splitmix_unit(&r->state) - 0.5) * 12;
        }
    } else if (k < 67) {
        o->kind = OP_MOVE;
        o->slot = random_alive(st);
        if (!boundary_position(st, &o->x, &o->y))
            random_position(r, st->crowd, &o->x, &o->y);
    } else if (k < 74) {
        o->kind = OP_MOVE; /* teleport */
        o->slot = random_alive(st);
        random_position(r, st->crowd, &o->x, &o->y);
    } else if (k < 86) {
        o->kind = OP_RANGE;
        o->slot = random_alive(st);
        o->sense = (int)rng_below(r, PERCEPT_SENSE_COUNT);
        o->value = random_range(r);
    } else if (k < 95) {
        o->kind = OP_HIDE;
        o->slot = random_alive(st);
        o->sense = (int)rng_below(r, PERCEPT_SENSE_COUNT);
        o->value = rng_chance(r, 50);
    } else {
        o->kind = OP_BAD;
        o->bad = (int)rng_below(r, 6);
        switch (o->bad) {
        case 0: /* add an ID that is in the world */
        case 2: /* set_range negative */
        case 3: /* move to NaN */
            o->slot = random_alive(st);
            break;
        default: /* 1, 4, 5: name an ID that is not in the world */
            o->slot = random_dead(st);
            if (o->slot < 0) {
                o->bad = 0;
                o->slot = random_alive(st);
            }
            break;
        }
        o->expect_status = o->bad == 0   ? PERCEPT_EEXIST
                           : o->bad == 2 ? PERCEPT_EINVAL
                           : o->bad == 3 ? PERCEPT_EINVAL
                                         : PERCEPT_ENOENT;
    }
}

static void describe_op(const run_state *st, const op *o, char *buf, size_t size)
{
    percept_id id = st->m.ent[o->slot].id;
    switch (o->kind) {
    case OP_ADD:
        snprintf(buf, size, "add %u (%.17g, %.17g) sight=%.17g hearing=%.17g smell=%.17g hide=%u",
                 (unsigned)id, o->x, o->y, o->range[0], o->range[1], o->range[2], o->hidden);
        break;
    case OP_MOVE:
        snprintf(buf, size, "move %u (%.17g, %.17g)", (unsigned)id, o->x, o->y);
        break;
    case OP_REMOVE:
        snprintf(buf, size, "remove %u", (unsigned)id);
        break;
    case OP_RANGE:
        snprintf(buf, size, "range %u %s %.17g", (unsigned)id,
                 percept_sense_name((percept_sense)o->sense), o->value);
        break;
    case OP_HIDE:
        snprintf(buf, size, "%s %u %s", o->value != 0 ? "hide" : "show", (unsigned)id,
                 percept_sense_name((percept_sense)o->sense));
        break;
    case OP_BAD:
        snprintf(buf, size, "invalid call #%d on %u", o->bad, (unsigned)id);
        break;
    }
}

/* Apply the operation to the world; returns its status. */
static int apply_world(run_state *st, const op *o)
{
    percept_world *w = st->w;
    percept_id id = st->m.ent[o->slot].id;
    percept_entity_desc d;
    switch (o->kind) {
    case OP_ADD:
        d = tu_desc(o->x, o->y, o->range[0], o->range[1], o->range[2], o->hidden);
        return percept_add(w, id, &d);
    case OP_MOVE:
        return percept_move(w, id, o->x, o->y);
    case OP_REMOVE:
        return percept_remove(w, id);
    case OP_RANGE:
        return percept_set_range(w, id, (percept_sense)o->sense, o->value);
    case OP_HIDE:
        return percept_set_hidden(w, id, (percept_sense)o->sense, o->value != 0);
    case OP_BAD:
        switch (o->bad) {
        case 0:
            d = tu_desc(1, 1, 1, 1, 1, 0);
            return percept_add(w, id, &d);
        case 1:
            return percept_move(w, id, 1, 1);
        case 2:
            return percept_set_range(w, id, PERCEPT_HEARING, -1);
        case 3:
            return percept_move(w, id, NAN, 0);
        case 4:
            return percept_remove(w, id);
        default:
            return percept_set_hidden(w, id, PERCEPT_SMELL, 1);
        }
    }
    return PERCEPT_EINVAL;
}

/* Apply the operation to the model (only for operations that succeed). */
static void apply_model(model *m, const op *o)
{
    mentity *e = &m->ent[o->slot];
    switch (o->kind) {
    case OP_ADD:
        e->alive = 1;
        e->x = o->x;
        e->y = o->y;
        memcpy(e->range, o->range, sizeof e->range);
        e->hidden = o->hidden;
        m->alive++;
        break;
    case OP_MOVE:
        e->x = o->x;
        e->y = o->y;
        break;
    case OP_REMOVE:
        e->alive = 0;
        m->alive--;
        break;
    case OP_RANGE:
        e->range[o->sense] = o->value;
        break;
    case OP_HIDE:
        if (o->value != 0)
            e->hidden |= PERCEPT_SENSE_BIT(o->sense);
        else
            e->hidden &= ~PERCEPT_SENSE_BIT(o->sense);
        break;
    case OP_BAD:
        break;
    }
}

static void report(const run_state *st, size_t index, const op *o, const char *what)
{
    char desc[256];
    describe_op(st, o, desc, sizeof desc);
    print_error("differential mismatch: backend %s, seed %llu, operation %zu: %s\n", st->backend,
                (unsigned long long)st->seed, index, desc);
    print_error("  %s\n", what);
    print_error("  config (after [percept] backend = %s):\n%s", st->backend, st->setup.ini);
}

/* Every query of the world against the model. */
static void compare_queries(run_state *st, size_t index, const op *o)
{
    percept_id got[POOL], want[POOL];
    char what[256];

    if (!model_consistent(&st->m)) {
        report(st, index, o, "the model contradicts itself (a bug of this test, not the library)");
        fail();
    }
    if (percept_entity_count(st->w) != st->m.alive) {
        snprintf(what, sizeof what, "entity count %zu, model %zu", percept_entity_count(st->w),
                 st->m.alive);
        report(st, index, o, what);
        fail();
    }
    for (int i = 0; i < POOL; i++) {
        const mentity *e = &st->m.ent[i];
        percept_entity_desc d;
        if (percept_contains(st->w, e->id) != e->alive) {
            snprintf(what, sizeof what, "percept_contains(%u) is %d, model %d", (unsigned)e->id,
                     percept_contains(st->w, e->id), e->alive);
            report(st, index, o, what);
            fail();
        }
        if (!e->alive)
            continue;
        if (percept_get_entity(st->w, e->id, &d) != PERCEPT_OK || d.x != e->x || d.y != e->y ||
            d.range[0] != e->range[0] || d.range[1] != e->range[1] || d.range[2] != e->range[2] ||
            d.hidden != e->hidden) {
            snprintf(what, sizeof what, "percept_get_entity(%u) differs from the model",
                     (unsigned)e->id);
            report(st, index, o, what);
            fail();
        }
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            for (int by = 0; by < 2; by++) {
                size_t n = 0, nw = 0;
                int rc = by ? percept_perceived_by(st->w, e->id, (percept_sense)s, got, POOL, &n)
                            : percept_perceived(st->w, e->id, (percept_sense)s, got, POOL, &n);
                for (int j = 0; j < POOL; j++) {
                    unsigned char bits = by ? st->m.rel[j][i] : st->m.rel[i][j];
                    if (bits & PERCEPT_SENSE_BIT(s))
                        want[nw++] = st->m.ent[j].id;
                }
                /* The model's slots are not in ID order; sort its list like the API's. */
                for (size_t a = 1; a < nw; a++)
                    for (size_t b = a; b > 0 && want[b - 1] > want[b]; b--) {
                        percept_id t = want[b];
                        want[b] = want[b - 1];
                        want[b - 1] = t;
                    }
                if (rc != PERCEPT_OK || n != nw || memcmp(got, want, n * sizeof *got) != 0) {
                    snprintf(what, sizeof what,
                             "%s(%u, %s): status %d, %zu IDs, model has %zu (first %u vs %u)",
                             by ? "percept_perceived_by" : "percept_perceived", (unsigned)e->id,
                             percept_sense_name((percept_sense)s), rc, n, nw,
                             n ? (unsigned)got[0] : 0u, nw ? (unsigned)want[0] : 0u);
                    report(st, index, o, what);
                    fail();
                }
            }
        }
    }
}

/* The one size parameter of the shipped backends that take one, or NULL:
 * bruteforce, crosslist and unknown plugins get no parameter (an unknown key
 * is an error). */
static const char *size_key(const char *backend)
{
    if (!strcmp(backend, "grid") || !strcmp(backend, "hashgrid"))
        return "cell_size";
    if (!strcmp(backend, "tower"))
        return "tower_size";
    return NULL;
}

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
 * A backend other than `backend` for a sense that must not share its
 * instance: bruteforce, or for bruteforce itself another backend under test,
 * else another shipped plugin that loads (a run of bruteforce alone, as under
 * valgrind, still mixes backends), else bruteforce again.
 */
static const char *other_backend(const char *backend)
{
    static const char *const shipped[] = {"grid", "crosslist", "hashgrid", "tower"};
    if (strcmp(backend, "bruteforce") != 0)
        return "bruteforce";
    for (size_t i = 0; i < tu_backend_count(); i++)
        if (strcmp(tu_backend_name(i), "bruteforce") != 0)
            return tu_backend_name(i);
    for (size_t i = 0; i < sizeof shipped / sizeof shipped[0]; i++)
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
 * and the backend takes one, and observer_cell_size when `cell` > 0 (else the
 * core's default). */
static void ini_sense(seed_setup *su, int sense, const char *backend, double size, double cell)
{
    char text[256];
    const char *key = size_key(backend);
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

/*
 * The setup for a seed. Seeds 1-8 (cases 0-3): the backend under test on
 * every sense, MOVE events on or off, varied bounds and observer grids.
 * Seeds 9-16 (cases 4-7): backends, parameters and observer grids mixed, so
 * that the core's sharing of backend instances (same backend, same
 * parameters) and of observer grids (same observer_cell_size) meets senses
 * that share and senses that do not, in the same pairs. Seeds 17-20 repeat
 * cases 1, 2, 3 and 0 in a crowd (see run_state.crowd).
 */
static void seed_config(uint64_t seed, const char *backend, seed_setup *su)
{
    int mixed = (int)((seed - 1) / 8 % 2);
    const char *other = other_backend(backend);
    /* A parameterless backend cannot be given a second instance by parameters:
     * there another backend stands in for the second instance. */
    int sized = size_key(backend) != NULL;

    memset(su, 0, sizeof *su);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        su->names[s] = backend;
    switch (mixed * 4 + (int)(seed % 4)) {
    case 0:
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_200 "[sight]\nobserver_cell_size = 5\n"
                       "[hearing]\nobserver_cell_size = 17\n"
                       "[smell]\nobserver_cell_size = 64\n");
        break;
    case 1:
        su->moves_on = 1;
        ini_append(su, "move_events = on\n" WORLD_200);
        break;
    case 2:
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_STRIP);
        break;
    case 3:
        su->moves_on = 1;
        ini_append(su, "move_events = on\n" WORLD_200 "[sight]\nobserver_cell_size = 3\n");
        break;
    case 4:
        /* Sight and hearing share one instance and one grid; smell has its own
         * backend but the same grid. */
        su->moves_on = 1;
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 7, 9);
        ini_sense(su, PERCEPT_HEARING, backend, 7, 9);
        ini_sense(su, PERCEPT_SMELL, other, 0, 9);
        break;
    case 5:
        /* Sight and smell share instance and grid; hearing has another instance:
         * the same backend with another parameter on the same grid, or (no
         * parameter to vary) another backend on another grid. */
        su->moves_on = 1;
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 7, 16);
        ini_sense(su, PERCEPT_HEARING, sized ? backend : other, 23, sized ? 16 : 5);
        ini_sense(su, PERCEPT_SMELL, backend, 7, 16);
        break;
    case 6:
        /* One instance for all three senses, but two observer grids: sight and
         * smell share one, hearing has another. */
        su->moves_on = 1;
        ini_append(su, "move_events = on\n" WORLD_200);
        ini_sense(su, PERCEPT_SIGHT, backend, 23, 5);
        ini_sense(su, PERCEPT_HEARING, backend, 23, 37);
        ini_sense(su, PERCEPT_SMELL, backend, 23, 5);
        break;
    default:
        /* A parameter left out beside its shipped default (64) written out (the
         * core may or may not share them: the relation must not care), a
         * third sense on another backend, odd bounds, no MOVE events. */
        su->moves_on = 0;
        ini_append(su, "move_events = off\n" WORLD_STRIP);
        ini_sense(su, PERCEPT_SIGHT, backend, 0, 0);
        ini_sense(su, PERCEPT_HEARING, backend, 64, 3);
        ini_sense(su, PERCEPT_SMELL, other, 0, 3);
        break;
    }
}

static uint64_t current_seed;

static void run_seed(const char *backend)
{
    run_state *st = calloc(1, sizeof *st);
    char what[64];
    assert_non_null(st);
    st->backend = backend;
    st->seed = current_seed;
    st->crowd = current_seed > 16;
    st->r.state = current_seed * 0x2545F4914F6CDD1Dull;
    seed_config(current_seed, backend, &st->setup);
    tu_recorder_init(&st->rec);
    st->w = tu_open(backend, st->setup.ini, &st->rec);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        const char *name = percept_backend_name(st->w, (percept_sense)s);
        if (name == NULL || strcmp(name, st->setup.names[s]) != 0) {
            print_error("seed %llu: %s is served by '%s', the config says '%s'\n%s",
                        (unsigned long long)current_seed, percept_sense_name((percept_sense)s),
                        name != NULL ? name : "(null)", st->setup.names[s], st->setup.ini);
            fail();
        }
    }

    /* The ID pool: 0, 2^32-1, small numbers and random 32-bit values, all distinct. */
    for (int i = 0; i < POOL; i++) {
        percept_id id;
        int unique;
        do {
            if (i == 0)
                id = 0;
            else if (i == 1)
                id = 0xFFFFFFFFu;
            else if (i < 60)
                id = (percept_id)rng_below(&st->r, 200);
            else
                id = (percept_id)splitmix_next(&st->r.state);
            unique = 1;
            for (int j = 0; j < i; j++)
                if (st->m.ent[j].id == id)
                    unique = 0;
        } while (!unique);
        st->m.ent[i].id = id;
    }

    for (size_t index = 0; index < OPS_PER_SEED; index++) {
        op o;
        size_t n_expected = 0;
        int rc, moved;

        random_op(st, &o);
        tu_recorder_clear(&st->rec);
        rc = apply_world(st, &o);
        if (rc != o.expect_status) {
            snprintf(what, sizeof what, "status %d, expected %d", rc, o.expect_status);
            report(st, index, &o, what);
            fail();
        }
        /* MOVE events are due only for a move that changes the position:
         * percept.h promises that a move in place delivers nothing. */
        moved = st->setup.moves_on && rc == PERCEPT_OK && o.kind == OP_MOVE &&
                (o.x != st->m.ent[o.slot].x || o.y != st->m.ent[o.slot].y);
        if (rc == PERCEPT_OK)
            apply_model(&st->m, &o);
        n_expected = model_update(&st->m, o.slot, moved, &st->expected, &st->expected_cap);

        /* With move_events = off any MOVE is wrong: say so before the general comparison. */
        if (!st->setup.moves_on) {
            for (size_t i = 0; i < st->rec.count; i++) {
                if (st->rec.events[i].kind == PERCEPT_MOVE) {
                    report(st, index, &o, "a MOVE event with move_events = off");
                    tu_print_events("delivered", st->rec.events, st->rec.count);
                    fail();
                }
            }
        }
        if (!tu_events_match(&st->rec, st->expected, n_expected, "the events of this operation")) {
            report(st, index, &o, "the events above differ from the model's");
            fail();
        }
        if (index % CHECK_EVERY == 0 || index + 1 == OPS_PER_SEED)
            compare_queries(st, index, &o);
    }

    percept_world_close(st->w);
    tu_recorder_free(&st->rec);
    free(st->expected);
    free(st);
}

static void run_seed_for_backends(uint64_t seed)
{
    current_seed = seed;
    tu_for_each_backend(run_seed);
}

#define SEED_TEST(n)                                                                               \
    static void test_seed_##n(void **state)                                                        \
    {                                                                                              \
        (void)state;                                                                               \
        run_seed_for_backends(n);                                                                  \
    }

SEED_TEST(1)
SEED_TEST(2)
SEED_TEST(3)
SEED_TEST(4)
SEED_TEST(5)
SEED_TEST(6)
SEED_TEST(7)
SEED_TEST(8)
SEED_TEST(9)
SEED_TEST(10)
SEED_TEST(11)
SEED_TEST(12)
SEED_TEST(13)
SEED_TEST(14)
SEED_TEST(15)
SEED_TEST(16)
SEED_TEST(17)
SEED_TEST(18)
SEED_TEST(19)
SEED_TEST(20)

/* Fail unless the model's event `got` is (kind, observer, target, sense) at (x, y). */
static void expect_model_event(const percept_event *got, percept_event_kind kind,
                               percept_id observer, percept_id target, percept_sense sense,
                               double x, double y)
{
    assert_int_equal(got->kind, kind);
    assert_int_equal(got->observer, observer);
    assert_int_equal(got->target, target);
    assert_int_equal(got->sense, sense);
    assert_true(got->x == x && got->y == y);
}

/* An empty model whose slot i holds ID i + 1. */
static void model_reset(model *m)
{
    memset(m, 0, sizeof *m);
    for (int i = 0; i < POOL; i++)
        m->ent[i].id = (percept_id)(i + 1);
}

/* The model itself, on the example of TRACE.md, so a broken model cannot pass silently. */
static void test_model_sanity(void **state)
{
    static model m;
    percept_event *ev = NULL;
    size_t cap = 0, n;
    (void)state;
    model_reset(&m);
    /* add 1 10 10 sight=5; add 2 13 14 hearing=2 -> "1 2 sight enter" */
    m.ent[0] = (mentity){1, 1, 10, 10, {5, 0, 0}, 0};
    assert_int_equal(model_update(&m, 0, 0, &ev, &cap), 0);
    m.ent[1] = (mentity){2, 1, 13, 14, {0, 2, 0}, 0};
    n = model_update(&m, 1, 0, &ev, &cap);
    assert_int_equal(n, 1);
    expect_model_event(&ev[0], PERCEPT_ENTER, 1, 2, PERCEPT_SIGHT, 13, 14);
    /* move 2 30 30 -> "1 2 sight leave" */
    m.ent[1].x = 30;
    m.ent[1].y = 30;
    n = model_update(&m, 1, 1, &ev, &cap);
    assert_int_equal(n, 1);
    expect_model_event(&ev[0], PERCEPT_LEAVE, 1, 2, PERCEPT_SIGHT, 30, 30);
    /* hidden and range 0 */
    m.ent[1] = (mentity){2, 1, 10, 10, {0, 0, 0}, PERCEPT_SENSE_BIT(PERCEPT_SIGHT)};
    assert_int_equal(model_update(&m, 1, 0, &ev, &cap), 0);
    assert_true(model_consistent(&m));
    free(ev);
}

/*
 * MOVE in the model: one per (observer, sense) that perceives the moved
 * target before and after, in order among the ENTER/LEAVE of the same call;
 * none for what the moving entity itself perceives.
 */
static void test_model_moves(void **state)
{
    static model m;
    percept_event *ev = NULL;
    size_t cap = 0, n;
    (void)state;
    model_reset(&m);
    m.ent[0] = (mentity){1, 1, 10, 10, {5, 10, 0}, 0};
    assert_int_equal(model_update(&m, 0, 0, &ev, &cap), 0);
    m.ent[1] = (mentity){2, 1, 13, 14, {0, 0, 0}, 0};
    n = model_update(&m, 1, 0, &ev, &cap);
    assert_int_equal(n, 2);
    expect_model_event(&ev[0], PERCEPT_ENTER, 1, 2, PERCEPT_SIGHT, 13, 14);
    expect_model_event(&ev[1], PERCEPT_ENTER, 1, 2, PERCEPT_HEARING, 13, 14);
    /* 3 is 8.06 from 1: in 1's hearing, not its sight; 2 is 4 away, beyond 3's sight. */
    m.ent[2] = (mentity){3, 1, 17, 14, {3, 0, 0}, 0};
    n = model_update(&m, 2, 0, &ev, &cap);
    assert_int_equal(n, 1);
    expect_model_event(&ev[0], PERCEPT_ENTER, 1, 3, PERCEPT_HEARING, 17, 14);
    /* move 2 14 14: out of 1's sight (5.66), still in its hearing, onto 3's sight boundary. */
    m.ent[1].x = 14;
    n = model_update(&m, 1, 1, &ev, &cap);
    assert_int_equal(n, 3);
    expect_model_event(&ev[0], PERCEPT_LEAVE, 1, 2, PERCEPT_SIGHT, 14, 14);
    expect_model_event(&ev[1], PERCEPT_MOVE, 1, 2, PERCEPT_HEARING, 14, 14);
    expect_model_event(&ev[2], PERCEPT_ENTER, 3, 2, PERCEPT_SIGHT, 14, 14);
    /* move 2 14 15: 1 still hears it, 3 loses sight of it (3.16). */
    m.ent[1].y = 15;
    n = model_update(&m, 1, 1, &ev, &cap);
    assert_int_equal(n, 2);
    expect_model_event(&ev[0], PERCEPT_MOVE, 1, 2, PERCEPT_HEARING, 14, 15);
    expect_model_event(&ev[1], PERCEPT_LEAVE, 3, 2, PERCEPT_SIGHT, 14, 15);
    /* move 2 14 14 with MOVE events off: only the relation's changes. */
    m.ent[1].y = 14;
    n = model_update(&m, 1, 0, &ev, &cap);
    assert_int_equal(n, 1);
    expect_model_event(&ev[0], PERCEPT_ENTER, 3, 2, PERCEPT_SIGHT, 14, 14);
    /* move 1 10 9: 1 still hears 2 and 3 and sees neither, nobody perceives 1: nothing. */
    m.ent[0].y = 9;
    assert_int_equal(model_update(&m, 0, 1, &ev, &cap), 0);
    assert_true(model_consistent(&m));
    free(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_sanity), cmocka_unit_test(test_model_moves),
        tu_backend_test(test_seed_1),        tu_backend_test(test_seed_2),
        tu_backend_test(test_seed_3),        tu_backend_test(test_seed_4),
        tu_backend_test(test_seed_5),        tu_backend_test(test_seed_6),
        tu_backend_test(test_seed_7),        tu_backend_test(test_seed_8),
        tu_backend_test(test_seed_9),        tu_backend_test(test_seed_10),
        tu_backend_test(test_seed_11),       tu_backend_test(test_seed_12),
        tu_backend_test(test_seed_13),       tu_backend_test(test_seed_14),
        tu_backend_test(test_seed_15),       tu_backend_test(test_seed_16),
        tu_backend_test(test_seed_17),       tu_backend_test(test_seed_18),
        tu_backend_test(test_seed_19),       tu_backend_test(test_seed_20),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
