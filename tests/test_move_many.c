/*
 * test_move_many.c - percept_move_many(), a tick's moves in one call, held to
 * the model (model.h) on every backend: each move delivers its events as
 * percept_move() would before the next is made; validation; EBUSY; and a
 * batch stopped part-way when memory runs out.
 *
 * The library makes a batch's moves in an order of its choosing, from the
 * batch and the world bounds alone (percept.h). The test learns that order
 * (model_batch_order()) and makes the same moves in the model one by one: the
 * world must deliver exactly the model's events, and inside the callback
 * exactly the moves before the event's own must read as made.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE for the huge-count test */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../tools/splitmix.h"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL

static uint32_t below(uint64_t *r, uint32_t n)
{
    return (uint32_t)(splitmix_next(r) % n);
}

static int chance(uint64_t *r, uint32_t percent)
{
    return below(r, 100) < percent;
}

/* ------------------------------------------------------------------------ */
/* The library's order, and the events it must give                         */

/* The library's order of the batch's moves (model_batch_order()); returns their number. */
static size_t order_of(const percept_bounds *b, const model *m, const percept_position *batch,
                       size_t n, size_t *order)
{
    size_t count = model_batch_order(m, b, batch, n, order);
    if (count == SIZE_MAX)
        fail_msg("the order of a batch of %zu moves could not be learned", n);
    return count;
}

/*
 * The callback: records each event and, while a batch is watched, how many
 * of its moves read as made (the entity at its target) when it came. They
 * must be the first of the order: where that count grows, every move of the
 * batch is looked at, and one made out of turn counts as SIZE_MAX.
 */
typedef struct probe {
    percept_world *w;
    tu_recorder rec;
    const percept_position *batch;
    const size_t *order;
    size_t n_order, now;
    size_t *made;
    size_t cap;
} probe;

static int at_target(const probe *p, size_t k)
{
    const percept_position *q = &p->batch[p->order[k]];
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    return percept_get_entity(p->w, q->id, &d) == PERCEPT_OK && d.x == q->x && d.y == q->y;
}

static void probe_event(void *user, const percept_event *e)
{
    probe *p = user;
    if (p->rec.count == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->made = realloc(p->made, p->cap * sizeof *p->made);
        assert_non_null(p->made);
    }
    size_t before = p->now;
    while (p->now < p->n_order && at_target(p, p->now))
        p->now++;
    size_t made = p->now;
    for (size_t k = p->now; k < p->n_order && (made != before || p->rec.count == 0); k++)
        if (at_target(p, k))
            made = SIZE_MAX;
    p->made[p->rec.count] = made;
    tu_recorder_push(&p->rec, e);
}

static void probe_watch(probe *p, const percept_position *batch, const size_t *order, size_t n)
{
    tu_recorder_clear(&p->rec);
    p->batch = batch;
    p->order = order;
    p->n_order = n;
    p->now = 0;
}

static void probe_free(probe *p)
{
    tu_recorder_free(&p->rec);
    free(p->made);
    memset(p, 0, sizeof *p);
}

/* The delivered stream is the model's batch, each event after exactly its move. */
static void expect_stream(const probe *p, const model *m, size_t made_before, const char *what)
{
    tu_expect_events(&p->rec, m->events, m->n_events, what);
    for (size_t k = 0; k < p->rec.count; k++)
        if (p->made[k] != made_before + m->event_move[k])
            fail_msg("%s: at event %zu, %zu moves of the batch read as made, the event is of "
                     "move %zu",
                     what, k, p->made[k], made_before + m->event_move[k]);
}

/* ------------------------------------------------------------------------ */
/* Random worlds and batches                                                 */

typedef struct mm_config {
    const char *name;
    uint64_t seed;
    int moves_on;
    int crowd; /* most positions in a 12 x 12 square */
    percept_bounds b;
    const char *ini; /* after "backend = NAME" */
    int v2;          /* heights, cones, margins and masks besides */
} mm_config;

#define N_ENT 180
#define TICKS 12
#define MAX_BATCH 80

static double random_range(uint64_t *r)
{
    static const double common[] = {1, 2, 2.5, 5, 5, 10, 10, 13, 15, 20, 25, 26, 40, 65};
    uint32_t k = below(r, 100);
    if (k < 20)
        return 0;
    if (k < 80)
        return common[below(r, COUNT_OF(common))];
    return k < 98 ? splitmix_unit(r) * 50 : 1e7;
}

/* Mostly a half-unit grid over the bounds and a margin around them; sometimes anywhere. */
static void random_position(uint64_t *r, const mm_config *c, double *x, double *y)
{
    const percept_bounds *b = &c->b;
    uint32_t k = below(r, 100);
    double cx = floor((b->min_x + b->max_x) / 2), cy = floor((b->min_y + b->max_y) / 2);
    if (c->crowd && k < 75) {
        *x = cx - 6 + below(r, 25) * 0.5;
        *y = cy - 6 + below(r, 25) * 0.5;
    } else if (k < 80) {
        *x = b->min_x - 20 + below(r, (uint32_t)((b->max_x - b->min_x + 40) * 2) + 1) * 0.5;
        *y = b->min_y - 20 + below(r, (uint32_t)((b->max_y - b->min_y + 40) * 2) + 1) * 0.5;
    } else if (k < 95) {
        *x = splitmix_between(r, b->min_x - 30, b->max_x + 30);
        *y = splitmix_between(r, b->min_y - 30, b->max_y + 30);
    } else {
        *x = cx; /* coincident entities */
        *y = cy;
    }
}

/* A point on the boundary of some observer's range, with integer offsets. */
static int boundary_position(uint64_t *r, const model *m, double *x, double *y)
{
    for (int tries = 0; tries < 8; tries++) {
        const model_entity *o = &m->ent[below(r, m->count)];
        double rr = o->sense[below(r, 3)].range, a = rr, b = 0;
        if (!(rr > 0) || rr > 1000 || rr != floor(rr))
            continue;
        if (fmod(rr, 5) == 0 && chance(r, 60)) {
            a = rr / 5 * 3;
            b = rr / 5 * 4;
        }
        *x = o->x + (chance(r, 50) ? a : -a);
        *y = o->y + (chance(r, 50) ? b : -b);
        return 1;
    }
    return 0;
}

/* A batch of distinct entities (all of the model's are in the world), in random order. */
static size_t random_batch(uint64_t *r, const model *m, const mm_config *c, percept_position *out)
{
    uint32_t perm[N_ENT];
    size_t n = 1 + below(r, MAX_BATCH);
    for (uint32_t i = 0; i < m->count; i++)
        perm[i] = i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + below(r, m->count - (uint32_t)i);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        const model_entity *e = &m->ent[perm[i]];
        percept_position *q = &out[i];
        uint32_t k = below(r, 100);
        q->id = e->id;
        if (k < 50) { /* a step on the half grid */
            q->x = e->x + ((int)below(r, 17) - 8) * 0.5;
            q->y = e->y + ((int)below(r, 17) - 8) * 0.5;
        } else if (k < 60) { /* a fractional step */
            q->x = e->x + (splitmix_unit(r) - 0.5) * 12;
            q->y = e->y + (splitmix_unit(r) - 0.5) * 12;
        } else if (k < 72) { /* a teleport */
            random_position(r, c, &q->x, &q->y);
        } else if (k < 80) { /* in place */
            q->x = e->x;
            q->y = e->y;
        } else if (k < 88) { /* onto another entity */
            const model_entity *o = &m->ent[below(r, m->count)];
            q->x = o->x;
            q->y = o->y;
        } else if (k < 96) {
            if (!boundary_position(r, m, &q->x, &q->y))
                random_position(r, c, &q->x, &q->y);
        } else if (k < 98) { /* far outside the bounds */
            q->x = (chance(r, 50) ? -1 : 1) * (1e6 + below(r, 1000));
            q->y = (chance(r, 50) ? -1 : 1) * 1e9;
        } else { /* at the limit of what a position may be */
            q->x = chance(r, 50) ? PERCEPT_COORD_LIMIT : -PERCEPT_COORD_LIMIT;
            q->y = chance(r, 50) ? e->y : -PERCEPT_COORD_LIMIT;
        }
        if (fabs(q->x) > PERCEPT_COORD_LIMIT || fabs(q->y) > PERCEPT_COORD_LIMIT)
            random_position(r, c, &q->x, &q->y); /* a step from the limit crossed it */
    }
    return n;
}

#define WORLD_200 "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 200\nmax_y = 200\n"
#define WORLD_STRIP "[world]\nmin_x = -100\nmin_y = 50\nmax_x = 300\nmax_y = 120\n"

/* The order may depend on the batch and the bounds alone: the crowd's worlds
 * have observer grids of their own, which the order's world has not. */
/* A height, a facing, tags, and per sense a margin, a cone and an ignore mask. */
static void random_v2_fields(uint64_t *r, uint32_t senses, percept_entity_desc *d)
{
    static const double fovs[] = {0, 0, 90, 180, 270, 45};
    d->z = chance(r, 50) ? 0 : below(r, 9) * 0.5 - 2;
    d->facing[0] = (double)below(r, 5) - 2;
    d->facing[1] = (double)below(r, 5) - 2;
    d->facing[2] = d->facing[0] == 0 && d->facing[1] == 0 ? 1 : 0;
    d->tags = below(r, 4);
    for (uint32_t s = 0; s < senses; s++) {
        d->sense[s].margin = chance(r, 40) ? below(r, 6) * 0.5 : 0;
        d->sense[s].fov = fovs[below(r, COUNT_OF(fovs))];
        d->sense[s].ignore = chance(r, 20) ? 1u << below(r, 2) : 0;
    }
}

static const mm_config configs[] = {
    {"open", 1, 1, 0, {0, 0, 200, 200}, "move_events = on\n" WORLD_200, 0},
    {"strip", 2, 0, 0, {-100, 50, 300, 120}, "move_events = off\n" WORLD_STRIP, 0},
    {"crowd",
     3,
     1,
     1,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200 "[sight]\nobserver_cell_size = 3\n"
     "[hearing]\nobserver_cell_size = 41\n[smell]\nobserver_cell_size = 7\n",
     0},
    /* A batch moves in x and y: each entity keeps its height, and the
     * cones and margins of version 2 judge the pairs. */
    {"version 2",
     4,
     1,
     1,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200
     "senses = eyes ears nose fins\n[fins]\nobserver_cell_size = 9\n",
     1},
};

static const mm_config *config_now;

static void run_batches(const char *backend)
{
    const mm_config *c = config_now;
    model m;
    probe p;
    percept_position batch[MAX_BATCH];
    size_t order[MAX_BATCH];
    uint64_t r = c->seed * 0x2545F4914F6CDD1Dull;
    char what[256];
    memset(&p, 0, sizeof p);
    p.w = tu_open(backend, c->ini, NULL);
    tu_model_init(&m, c->moves_on, p.w);
    const uint32_t senses = (uint32_t)m.senses;
    assert_int_equal(percept_set_event_callback(p.w, probe_event, &p), PERCEPT_OK);
    for (int i = 0; i < N_ENT; i++) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        random_position(&r, c, &d.x, &d.y);
        for (uint32_t s = 0; s < senses; s++)
            d.sense[s].range = random_range(&r);
        d.hidden = chance(&r, 15) ? below(&r, 8) : 0;
        if (c->v2)
            random_v2_fields(&r, senses, &d);
        percept_id id = tu_spread_id((uint32_t)(i * 7 + (int)c->seed));
        tu_add(p.w, id, d);
        assert_int_equal(model_add(&m, id, &d), PERCEPT_OK);
    }
    size_t events = 0;
    for (int t = 0; t < TICKS; t++) {
        snprintf(what, sizeof what, "config %s, backend %s, batch %d", c->name, backend, t);
        if (t > 0 && chance(&r, 50)) { /* between batches, a range or a hidden flag changes */
            tu_op o = {.kind = chance(&r, 50) ? TU_RANGE : TU_HIDE};
            o.id = m.ent[below(&r, m.count)].id;
            o.sense = (percept_sense)below(&r, senses);
            o.value = o.kind == TU_RANGE ? random_range(&r) : chance(&r, 50);
            p.n_order = 0;
            tu_call(p.w, &p.rec, &m, &o, what);
        }
        size_t n = random_batch(&r, &m, c, batch);
        size_t n_order = order_of(&c->b, &m, batch, n, order);
        model_move_batch(&m, batch, order, n_order);
        probe_watch(&p, batch, order, n_order);
        TU_OK(p.w, percept_move_many(p.w, batch, n));
        expect_stream(&p, &m, 0, what);
        tu_expect_world(&m, p.w, what);
        events += p.rec.count;
    }
    assert_true(events > 100 * TICKS); /* not vacuous */
    percept_world_close(p.w);
    probe_free(&p);
    model_free(&m);
}

static void test_batches(void **state)
{
    config_now = *state;
    tu_for_each_backend(run_batches);
}

/* ------------------------------------------------------------------------ */
/* Validation, empty batches and moves in place                              */

typedef struct fixture {
    percept_world *w;
    tu_recorder rec;
    model m;
} fixture;

/* 1-4 and 0 perceive each other by various senses; UINT32_MAX is hidden from sight. */
static void fixture_open(fixture *f, const char *backend)
{
    static const struct {
        percept_id id;
        double x, y, s, h, m;
        unsigned hidden;
    } ents[] = {{1, 10, 10, 5, 5, 5, 0}, {2, 13, 14, 3, 0, 5, 1u << H},
                {3, 10, 10, 0, 0, 0, 0}, {4, 11, 11, 8, 1, 0, 0},
                {0, 12, 10, 9, 9, 9, 0}, {UINT32_MAX, 14, 10, 2, 20, 0, 1u << S}};
    tu_recorder_init(&f->rec);
    model_init(&f->m, 1);
    f->w = tu_open(backend, "move_events = on\n", &f->rec);
    for (size_t i = 0; i < COUNT_OF(ents); i++) {
        tu_op o = {.kind = TU_ADD, .id = ents[i].id};
        o.desc = tu_desc(ents[i].x, ents[i].y, ents[i].s, ents[i].h, ents[i].m, ents[i].hidden);
        tu_call(f->w, &f->rec, &f->m, &o, "the fixture");
    }
    tu_recorder_clear(&f->rec);
}

static void fixture_close(fixture *f)
{
    percept_world_close(f->w);
    tu_recorder_free(&f->rec);
    model_free(&f->m);
}

/* A batch the model refuses: the same status, the bad entry's index in
 * percept_errindex() and in the message, no event, the world unchanged. */
static void expect_refused(fixture *f, const percept_position *moves, size_t count,
                           const char *what)
{
    size_t bad;
    int want = model_check_batch(&f->m, moves, count, &bad);
    tu_recorder_clear(&f->rec);
    int rc = percept_move_many(f->w, moves, count);
    if (rc != want || want == PERCEPT_OK)
        fail_msg("%s: returned %s, the model says %s", what, percept_status_name(rc),
                 percept_status_name(want));
    if (percept_errindex(f->w) != bad)
        fail_msg("%s: percept_errindex() is %zu, expected %zu", what, percept_errindex(f->w), bad);
    if (bad != SIZE_MAX) {
        char tag[32];
        snprintf(tag, sizeof tag, "moves[%zu]", bad);
        if (strstr(percept_errmsg(f->w), tag) == NULL)
            fail_msg("%s: the message does not name %s: %s", what, tag, percept_errmsg(f->w));
    }
    tu_expect_no_events(&f->rec, what);
    tu_expect_world(&f->m, f->w, what);
}

static void check_validation(const char *backend)
{
    const double lim = PERCEPT_COORD_LIMIT, beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    /* Entries before the bad one are valid moves that would deliver events. */
    static const struct {
        const char *what;
        size_t count;
        percept_position moves[5];
    } bad[] = {
        {"unknown ID at index 3", 4, {{1, 20, 20}, {2, 5, 5}, {3, 12, 12}, {77, 1, 1}}},
        {"unknown ID at index 0", 2, {{99, 1, 1}, {1, 20, 20}}},
        {"NaN x", 3, {{1, 20, 20}, {2, 5, 5}, {3, NAN, 12}}},
        {"NaN y", 2, {{4, 20, 20}, {0, 5, NAN}}},
        {"infinite y", 3, {{1, 20, 20}, {2, 5, INFINITY}, {3, 1, 1}}},
        {"-infinite x", 3, {{1, 20, 20}, {2, 5, 5}, {3, -INFINITY, 1}}},
        {"y = -2e15", 5, {{1, 20, 20}, {2, 5, 5}, {3, 1, 1}, {4, 5, -5}, {0, 3, -2e15}}},
        {"a repeated ID", 4, {{1, 20, 20}, {2, 5, 5}, {3, 12, 12}, {2, 6, 6}}},
        {"a repeated ID, the same target", 2, {{1, 20, 20}, {1, 20, 20}}},
        {"ID 0 repeated", 3, {{0, 20, 20}, {1, 2, 2}, {0, 21, 21}}},
        /* The first bad entry decides, whatever the kind of the later ones. */
        {"NaN, then unknown", 3, {{1, 20, 20}, {2, NAN, 5}, {99, 1, 1}}},
        {"unknown, then NaN", 3, {{1, 20, 20}, {99, 1, 1}, {2, NAN, 5}}},
        {"repeated, then unknown", 3, {{1, 20, 20}, {1, 3, 3}, {99, 1, 1}}},
        {"unknown, then repeated", 3, {{1, 20, 20}, {99, 1, 1}, {1, 3, 3}}},
        {"an unknown ID twice", 3, {{3, 1, 2}, {99, 1, 1}, {99, 2, 2}}},
    };
    fixture f;
    fixture_open(&f, backend);
    assert_true(percept_errindex(f.w) == SIZE_MAX); /* nothing has failed yet */
    for (size_t i = 0; i < COUNT_OF(bad); i++)
        expect_refused(&f, bad[i].moves, bad[i].count, bad[i].what);
    const percept_position past[] = {{1, 20, 20}, {2, 5, 5}, {3, beyond, 1}};
    expect_refused(&f, past, COUNT_OF(past), "x beyond the limit");
    expect_refused(&f, NULL, 3, "NULL moves, count 3");
    /* A later failure of another call names no entry. */
    assert_int_equal(percept_move(f.w, 99, 1, 1), PERCEPT_ENOENT);
    assert_true(percept_errindex(f.w) == SIZE_MAX);

    /* Then a valid batch works, positions at the limit included. */
    const percept_position ok[] = {{3, 10, 10}, {4, -lim, lim}};
    size_t order[2];
    model_move_batch(&f.m, ok, order, order_of(NULL, &f.m, ok, 2, order));
    tu_recorder_clear(&f.rec);
    TU_OK(f.w, percept_move_many(f.w, ok, COUNT_OF(ok)));
    tu_expect_events(&f.rec, f.m.events, f.m.n_events, "a valid batch after refused ones");
    assert_true(f.rec.count > 0);
    tu_expect_world(&f.m, f.w, "a valid batch after refused ones");
    fixture_close(&f);
}

/* With no memory left for the batch's working room, a bad batch is still
 * refused for what is wrong with it, and a good one with ENOMEM naming no
 * entry; nothing moves either way. */
static void check_validation_without_memory(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, NULL, NULL, &fa);
    tu_add(w, 1, tu_desc(10, 10, 5, 5, 5, 0));
    tu_add(w, 2, tu_desc(12, 10, 5, 5, 5, 0));
    fa.fail_at = fa.counted + 1;
    fa.sticky = 1;
    const percept_position unknown[] = {{1, 30, 30}, {77, 1, 1}};
    const percept_position twice[] = {{1, 30, 30}, {2, 5, 5}, {1, 31, 31}};
    const percept_position good[] = {{1, 30, 30}, {2, 5, 5}};
    assert_int_equal(percept_move_many(w, unknown, COUNT_OF(unknown)), PERCEPT_ENOENT);
    assert_int_equal(percept_errindex(w), 1);
    assert_int_equal(percept_move_many(w, twice, COUNT_OF(twice)), PERCEPT_EINVAL);
    assert_int_equal(percept_errindex(w), 2);
    assert_int_equal(percept_move_many(w, good, COUNT_OF(good)), PERCEPT_ENOMEM);
    assert_true(percept_errindex(w) == SIZE_MAX && fa.hit);
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    TU_OK(w, percept_get_entity(w, 1, &d));
    assert_true(d.x == 10 && d.y == 10);
    assert_int_equal(percept_perceives(w, 1, 2, S), 1);
    percept_world_close(w);
    tu_expect_no_leak(&fa, "a batch refused without memory");
}

/*
 * More than UINT32_MAX entries: EINVAL, nothing moved. The array is real
 * (zero pages mapped on demand): every entry is {0, 0, 0}, so a count cut
 * to 32 bits (1) would move entity 0 from (12, 10) to (0, 0).
 */
static void check_huge_count(const char *backend)
{
    size_t count = (size_t)UINT32_MAX + 2;
    if (sizeof(size_t) <= 4)
        return;
    size_t bytes = count * sizeof(percept_position);
    void *mem = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        print_message("      %s: no address space for %zu bytes: not tested\n", backend, bytes);
        return;
    }
    fixture f;
    fixture_open(&f, backend);
    assert_int_equal(percept_move_many(f.w, mem, count), PERCEPT_EINVAL);
    munmap(mem, bytes);
    assert_true(percept_errindex(f.w) == SIZE_MAX);
    tu_expect_no_events(&f.rec, "more than UINT32_MAX entries");
    tu_expect_world(&f.m, f.w, "more than UINT32_MAX entries");
    fixture_close(&f);
}

static void check_empty_and_in_place(const char *backend)
{
    fixture f;
    fixture_open(&f, backend);
    percept_position here[6];
    TU_OK(f.w, percept_move_many(f.w, NULL, 0));
    TU_OK(f.w, percept_move_many(f.w, here, 0));
    size_t n = 0;
    for (uint32_t i = 0; i < f.m.count; i++)
        here[n++] = (percept_position){f.m.ent[i].id, f.m.ent[i].x, f.m.ent[i].y};
    TU_OK(f.w, percept_move_many(f.w, here, n));
    tu_expect_no_events(&f.rec, "empty batches and every entity in place");
    /* In place but for one: only its events, as percept_move gives them. */
    here[1].y -= 1; /* entity 2 */
    assert_int_equal(here[1].id, 2);
    TU_OK(f.w, percept_move_many(f.w, here, n));
    assert_int_equal(model_move(&f.m, 2, here[1].x, here[1].y), PERCEPT_OK);
    assert_true(f.m.n_events > 3);
    tu_expect_events(&f.rec, f.m.events, f.m.n_events, "one move among moves in place");
    fixture_close(&f);
}

static void test_null_world(void **state)
{
    percept_position one = {1, 2, 3};
    (void)state;
    assert_int_equal(percept_move_many(NULL, &one, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_move_many(NULL, NULL, 0), PERCEPT_EINVAL);
    assert_true(percept_errindex(NULL) == SIZE_MAX);
}

/* ------------------------------------------------------------------------ */
/* EBUSY from inside the callback                                            */

typedef struct busy {
    percept_world *w;
    tu_recorder rec;
    int attempts; /* events at which the nested calls were tried */
    int failures; /* nested calls that did not return EBUSY with a message */
} busy;

static void busy_event(void *user, const percept_event *e)
{
    busy *b = user;
    static const percept_position nested[] = {{1, 50, 50}, {2, 60, 60}};
    tu_recorder_push(&b->rec, e);
    b->attempts++;
    b->failures += percept_move_many(b->w, nested, COUNT_OF(nested)) != PERCEPT_EBUSY ||
                   percept_errmsg(b->w)[0] == '\0';
    b->failures += percept_move(b->w, e->target, 70, 70) != PERCEPT_EBUSY;
}

static void check_busy(const char *backend)
{
    busy b = {0};
    model m;
    model_init(&m, 1);
    tu_recorder_init(&b.rec);
    b.w = tu_open(backend, "move_events = on\n", NULL);
    const percept_entity_desc d[] = {tu_desc(10, 10, 5, 5, 5, 0), tu_desc(13, 14, 3, 0, 5, 0),
                                     tu_desc(30, 30, 10, 0, 0, 0), tu_desc(11, 11, 0, 8, 0, 0)};
    for (percept_id i = 0; i < 4; i++) {
        tu_add(b.w, i + 1, d[i]);
        assert_int_equal(model_add(&m, i + 1, &d[i]), PERCEPT_OK);
    }
    assert_int_equal(percept_set_event_callback(b.w, busy_event, &b), PERCEPT_OK);
    const percept_position batches[][3] = {{{3, 12, 12}, {1, 28, 28}},
                                           {{2, 29, 29}, {4, 10, 10}, {3, 31, 30}}};
    const size_t counts[] = {2, 3};
    for (int k = 0; k < 2; k++) {
        size_t order[3];
        model_move_batch(&m, batches[k], order, order_of(NULL, &m, batches[k], counts[k], order));
        tu_recorder_clear(&b.rec);
        b.attempts = 0;
        TU_OK(b.w, percept_move_many(b.w, batches[k], counts[k]));
        assert_true(b.attempts > 0 && b.failures == 0);
        tu_expect_events(&b.rec, m.events, m.n_events, "a batch with nested calls");
        tu_expect_world(&m, b.w, "a batch with nested calls");
    }
    percept_world_close(b.w);
    tu_recorder_free(&b.rec);
    model_free(&m);
}

/* ------------------------------------------------------------------------ */
/* Out of memory part-way through a batch                                    */

#define OOM_CROWD 30
#define OOM_MOVERS 36
#define OOM_STEPPERS 6
#define OOM_BOUNDS "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 400\nmax_y = 400\n"
static const percept_bounds oom_bounds = {0, 0, 400, 400};

/* A crowd near (100, 100), movers far away that all walk into it, a few crowd
 * members that step: every move grows pair lists, and the crowd's cell
 * outgrows a 64-entry block of the backends' indexes mid-batch. */
static void oom_scenario(model *m, percept_position *batch, size_t *count)
{
    uint64_t r = 4242;
    model_init(m, 1);
    for (int i = 0; i < OOM_CROWD + OOM_MOVERS; i++) {
        int crowd = i < OOM_CROWD;
        percept_entity_desc d =
            tu_desc(crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i % 6),
                    crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i / 6 % 8), 0, 0, 0,
                    chance(&r, 10) ? 1u << below(&r, 3) : 0);
        for (int s = 0; s < 3; s++)
            d.sense[s].range = chance(&r, 15) ? 0 : splitmix_between(&r, 20, 60);
        assert_int_equal(model_add(m, tu_spread_id((uint32_t)i + 500), &d), PERCEPT_OK);
    }
    size_t n = 0;
    for (int i = 0; i < OOM_MOVERS; i++)
        batch[n++] = (percept_position){m->ent[OOM_CROWD + i].id, splitmix_between(&r, 80, 120),
                                        splitmix_between(&r, 80, 120)};
    for (int i = 0; i < OOM_STEPPERS; i++) {
        const model_entity *e = &m->ent[i * 3];
        batch[n++] = (percept_position){e->id, e->x + 2.5, e->y - 1.5};
    }
    for (size_t i = n - 1; i > 0; i--) { /* array order mixes movers and steppers */
        size_t j = below(&r, (uint32_t)i + 1);
        percept_position t = batch[i];
        batch[i] = batch[j];
        batch[j] = t;
    }
    *count = n;
}

/* 1 if `msg` holds `number` as a whole decimal number. */
static int has_number(const char *msg, size_t number)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%zu", number);
    size_t len = strlen(digits);
    for (const char *at = strstr(msg, digits); at != NULL; at = strstr(at + 1, digits))
        if ((at == msg || at[-1] < '0' || at[-1] > '9') && (at[len] < '0' || at[len] > '9'))
            return 1;
    return 0;
}

/*
 * Each allocation the batch makes fails in turn, on a fresh world: ENOMEM,
 * the moves made are the first of the library's order, each whole, with
 * the model's events; the message counts them (percept.h); the same batch
 * again finishes it with the rest of the events; nothing leaks.
 */
static void check_out_of_memory(const char *backend)
{
    model start;
    percept_position batch[OOM_MOVERS + OOM_STEPPERS];
    size_t count, order[OOM_MOVERS + OOM_STEPPERS];
    oom_scenario(&start, batch, &count);
    size_t n_order = order_of(&oom_bounds, &start, batch, count, order);
    percept_world *pin = tu_open(backend, NULL, NULL); /* keeps the plugin loaded */
    size_t partway = 0, injected = 0;
    for (size_t k = 1;; k++) {
        char what[200];
        snprintf(what, sizeof what, "backend %s, allocation %zu of the batch failed", backend, k);
        tu_fault_alloc fa;
        tu_fault_init(&fa);
        probe p;
        memset(&p, 0, sizeof p);
        p.w = tu_open_faulty(backend, "move_events = on\n" OOM_BOUNDS, NULL, &fa);
        assert_int_equal(percept_set_event_callback(p.w, probe_event, &p), PERCEPT_OK);
        for (uint32_t i = 0; i < start.count; i++) {
            const model_entity *e = &start.ent[i];
            tu_add(p.w, e->id,
                   tu_desc(e->x, e->y, e->sense[0].range, e->sense[1].range, e->sense[2].range,
                           e->hidden));
        }
        fa.fail_at = fa.counted + k;
        probe_watch(&p, batch, order, n_order);
        int rc = percept_move_many(p.w, batch, count);
        /* The moves made, and the model after them. */
        size_t made = 0;
        for (size_t i = 0; i < n_order; i++) {
            percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
            TU_OK(p.w, percept_get_entity(p.w, batch[order[i]].id, &d));
            if (d.x == batch[order[i]].x && d.y == batch[order[i]].y && made == i)
                made++;
        }
        model m;
        model_init(&m, 1);
        for (uint32_t i = 0; i < start.count; i++) {
            const model_entity *e = &start.ent[i];
            percept_entity_desc d = tu_desc(e->x, e->y, e->sense[0].range, e->sense[1].range,
                                            e->sense[2].range, e->hidden);
            assert_int_equal(model_add(&m, e->id, &d), PERCEPT_OK);
        }
        model_move_batch(&m, batch, order, made);
        expect_stream(&p, &m, 0, what);
        tu_expect_world(&m, p.w, what); /* also: no move beyond the first `made` */
        if (fa.hit) {
            injected++;
            partway += made > 0 && made < n_order;
            if (rc != PERCEPT_ENOMEM || (made > 0 && !has_number(percept_errmsg(p.w), made)))
                fail_msg("%s: returned %s after %zu moves: %s", what, percept_status_name(rc), made,
                         percept_errmsg(p.w));
            /* The same batch again, memory healthy: the rest of the moves. */
            fa.fail_at = 0;
            model_move_batch(&m, batch, order + made, n_order - made);
            probe_watch(&p, batch, order, n_order);
            TU_OK(p.w, percept_move_many(p.w, batch, count));
            expect_stream(&p, &m, made, what); /* from the state checked: the state after */
        } else {
            TU_OK(p.w, rc);
            assert_int_equal(made, n_order);
        }
        percept_world_close(p.w);
        tu_expect_no_leak(&fa, what);
        probe_free(&p);
        model_free(&m);
        if (!fa.hit)
            break;
    }
    print_message("      %s: %zu allocations failed in turn, %zu of them part-way\n", backend,
                  injected, partway);
    assert_true(partway > 0); /* not vacuous */
    percept_world_close(pin);
    model_free(&start);
}

/* ------------------------------------------------------------------------ */
/* An entity parked far outside does not change the order of the others     */

#define PARK_SIDE 20 /* movers on a PARK_SIDE x PARK_SIDE lattice */

/* The movers' order in one batch of moves onto a lattice, shuffled, with
 * entity 99999 parked at 5e14 moving too when `parked`; how many of the
 * movers come right after a lattice neighbour. */
static size_t neighbours_in_order(int parked)
{
    model m;
    model_init(&m, 1);
    percept_position batch[PARK_SIDE * PARK_SIDE + 1];
    size_t n = 0, order[PARK_SIDE * PARK_SIDE + 1];
    for (int i = 0; i < PARK_SIDE * PARK_SIDE; i++) {
        percept_entity_desc d = tu_desc(500, 500, 0, 0, 0, 0);
        assert_int_equal(model_add(&m, (percept_id)(1 + i), &d), PERCEPT_OK);
        batch[n++] = (percept_position){(percept_id)(1 + i), 25 + 50 * (i % PARK_SIDE),
                                        25 + 50 * (i / PARK_SIDE)};
    }
    if (parked) {
        percept_entity_desc d = tu_desc(5e14, 5e14, 0, 0, 0, 0);
        assert_int_equal(model_add(&m, 99999, &d), PERCEPT_OK);
        batch[n++] = (percept_position){99999, 6e14, 6e14};
    }
    uint64_t r = 42;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = below(&r, (uint32_t)(i + 1));
        percept_position t = batch[i];
        batch[i] = batch[j];
        batch[j] = t;
    }
    const percept_bounds bounds = {0, 0, 1000, 1000};
    size_t count = order_of(&bounds, &m, batch, n, order);
    size_t near = 0;
    for (size_t k = 1; k < count; k++) {
        int a = (int)batch[order[k - 1]].id - 1, b = (int)batch[order[k]].id - 1;
        near += a < PARK_SIDE * PARK_SIDE && b < PARK_SIDE * PARK_SIDE &&
                abs(a % PARK_SIDE - b % PARK_SIDE) + abs(a / PARK_SIDE - b / PARK_SIDE) == 1;
    }
    model_free(&m);
    return near;
}

/*
 * The moves go along a curve over the batch's extent, cut to the world
 * bounds (percept.h), so that each move finds the previous one's
 * neighbourhood in the cache: one entity far outside must not undo that
 * (stretching the extent so far that every other move fell into one step of
 * the curve, in the order given). The order does not depend on the backend:
 * it is learned from bruteforce.
 */
static void test_parked_outside(void **state)
{
    (void)state;
    size_t plain = neighbours_in_order(0), parked = neighbours_in_order(1);
    if (plain <= PARK_SIDE * PARK_SIDE / 2 || parked <= PARK_SIDE * PARK_SIDE / 2)
        fail_msg("lattice neighbours one after the other: %zu of %d moves, %zu with an entity "
                 "parked far outside; more than half expected",
                 plain, PARK_SIDE * PARK_SIDE, parked);
}

#define BACKEND_TEST(name, check)                                                                  \
    static void name(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        tu_for_each_backend(check);                                                                \
    }
BACKEND_TEST(test_validation, check_validation)
BACKEND_TEST(test_validation_without_memory, check_validation_without_memory)
BACKEND_TEST(test_huge_count, check_huge_count)
BACKEND_TEST(test_empty_and_in_place, check_empty_and_in_place)
BACKEND_TEST(test_busy, check_busy)
BACKEND_TEST(test_out_of_memory, check_out_of_memory)

int main(void)
{
    const struct CMUnitTest tests[] = {
        {"batches: open", test_batches, NULL, tu_report_backend, (void *)&configs[0]},
        {"batches: strip", test_batches, NULL, tu_report_backend, (void *)&configs[1]},
        {"batches: crowd", test_batches, NULL, tu_report_backend, (void *)&configs[2]},
        {"batches: version 2", test_batches, NULL, tu_report_backend, (void *)&configs[3]},
        tu_backend_test(test_validation),
        tu_backend_test(test_validation_without_memory),
        tu_backend_test(test_huge_count),
        tu_backend_test(test_empty_and_in_place),
        tu_backend_test(test_busy),
        tu_backend_test(test_out_of_memory),
        cmocka_unit_test(test_null_world),
        cmocka_unit_test(test_parked_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
