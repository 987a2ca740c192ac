/*
 * test_observer_grid.c - the observer grid on its own, against a brute-force
 * model of what a query must name: the observers (far ones only, once near
 * observers are left to a backend) whose largest range among the grid's
 * senses reaches the point in the plane (the core then judges each by the
 * whole relation) and that stand beyond the radius the caller has covered.
 * Ranges run from a fraction of a cell to beyond the world, so that
 * observers stand on every level; each query must name each of them
 * exactly once.
 * Also: how many reach entries an observer may cost, that og_bytes() is the
 * allocator's count, and that a failed og_stage() leaves every answer as it
 * was.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc.h"
#include "observer_grid.h"

#define OBSERVERS 300
#define QUERIES 400
#define WORLD 1000.0
#define CELL 10.0 /* 100 x 100 cells: three levels (100, 25 and 7 columns) */
#define SENSES 3  /* each observer's ranges; the grid holds some of these senses */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static double unit(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* An allocator that counts the bytes it holds and refuses once `fail_at`
 * allocations (or growths) have been made, when set. */
typedef struct counting {
    size_t live_bytes;
    long calls, fail_at;
} counting;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    counting *c = user;
    size_t old = ptr ? ((size_t *)ptr)[-2] : 0;
    if (size == 0) {
        if (ptr) {
            c->live_bytes -= old;
            free((size_t *)ptr - 2);
        }
        return NULL;
    }
    if (size > old && c->fail_at >= 0 && c->calls++ >= c->fail_at)
        return NULL;
    size_t *block = realloc(ptr ? (size_t *)ptr - 2 : NULL, size + 2 * sizeof(size_t));
    if (!block)
        return NULL;
    block[0] = size;
    c->live_bytes += size - old;
    return block + 2;
}

/* The model: what each observer is, as the grid was told. */
typedef struct model_observer {
    int live;
    double x, y, range[SENSES];
} model_observer;

typedef struct fixture {
    counting count;
    percept_allocator alloc;
    observer_grid grid;
    model_observer obs[OBSERVERS];
    int near;        /* og_set_near() was given 1 */
    unsigned senses; /* the grid's senses, as og_init() was given them */
} fixture;

static double random_range(void)
{
    double u = unit();
    if (u < 0.1)
        return 0; /* lacks the sense */
    /* Log-uniform from a twentieth of a cell to three worlds. */
    return CELL / 20 * pow(3 * WORLD / (CELL / 20), unit());
}

static double random_coord(void)
{
    /* Mostly inside, sometimes beyond the bounds (clamped into edge cells). */
    return -0.1 * WORLD + 1.2 * WORLD * unit();
}

/* Register (or move, or drop with all ranges 0) observer i through the
 * staged protocol the core uses. */
static int place(fixture *f, uint32_t i, double x, double y, const double range[SENSES])
{
    og_registration next = og_registration_for(&f->grid, x, y, range);
    if (og_stage(&f->alloc, &f->grid, i, &next))
        return -1;
    og_commit(&f->alloc, &f->grid, i, &next, x, y, 0, range);
    model_observer *m = &f->obs[i];
    m->live = 0;
    for (int s = 0; s < SENSES; s++)
        m->live |= ((f->senses >> s) & 1u) && range[s] > 0;
    m->x = x;
    m->y = y;
    memcpy(m->range, range, sizeof m->range);
    return 0;
}

static void setup_grid(fixture *f, int near, unsigned senses)
{
    memset(f, 0, sizeof *f);
    f->count.fail_at = -1;
    f->alloc = (percept_allocator){counting_alloc, &f->count};
    f->senses = senses;
    percept_bounds b = {0, 0, WORLD, WORLD};
    assert_int_equal(og_init(&f->alloc, &f->grid, &b, CELL, senses), 0);
    assert_int_equal(f->grid.level_count, 3);
    og_set_near(&f->grid, near);
    f->near = near;
    assert_int_equal(og_reserve_slots(&f->alloc, &f->grid, OBSERVERS), 0);
    for (uint32_t i = 0; i < OBSERVERS; i++)
        og_clear_slot(&f->grid, i);
}

static void populate(fixture *f)
{
    for (uint32_t i = 0; i < OBSERVERS; i++) {
        double range[SENSES] = {random_range(), random_range(), random_range()};
        assert_int_equal(place(f, i, random_coord(), random_coord(), range), 0);
    }
}

/* Whether the model says a query must name observer i: its longest range
 * among the grid's senses reaches the point, whatever senses the query
 * names (the core judges each sense after). */
static int expected(const fixture *f, uint32_t i, double x, double y, double covered2)
{
    const model_observer *m = &f->obs[i];
    if (!m->live)
        return 0;
    double longest = 0;
    for (int s = 0; s < SENSES; s++)
        if (((f->senses >> s) & 1u) && m->range[s] > longest)
            longest = m->range[s];
    if (f->near && longest <= OG_NEAR_FACTOR * CELL)
        return 0; /* near: left to a backend query */
    double dx = x - m->x, dy = y - m->y, d2 = dx * dx + dy * dy;
    return d2 > covered2 && d2 <= longest * longest;
}

typedef struct seen {
    int times[OBSERVERS];
    int bad; /* a slot out of range was named */
} seen;

static void count_visit(void *ctx, uint32_t observer)
{
    seen *s = ctx;
    if (observer >= OBSERVERS)
        s->bad = 1;
    else
        s->times[observer]++;
}

/* Every query against the model: each observer named once if expected, else never. */
static void check_queries(const fixture *f, int queries)
{
    for (int q = 0; q < queries; q++) {
        double x = random_coord(), y = random_coord();
        unsigned senses = f->senses & (1u + (unsigned)(unit() * 7)); /* some of the grid's */
        if (senses == 0)
            senses = f->senses;
        double covered2 = unit() < 0.3 ? -1 : pow(unit() * 3 * CELL, 2);
        const model_observer *m = &f->obs[(int)(unit() * OBSERVERS)];
        if (unit() < 0.3) {
            /* Exactly one observer's squared distance: it is covered, not named. */
            double dx = x - m->x, dy = y - m->y;
            covered2 = dx * dx + dy * dy;
        }
        seen s = {{0}, 0};
        og_query(&f->grid, x, y, 0, senses, covered2, count_visit, &s);
        assert_false(s.bad);
        for (uint32_t i = 0; i < OBSERVERS; i++) {
            int want = expected(f, i, x, y, covered2);
            if (s.times[i] != want)
                fail_msg("query %d at (%g, %g), senses %u, covered2 %g: observer %u (at (%g, "
                         "%g), ranges %g %g %g) named %d times, expected %d",
                         q, x, y, senses, covered2, i, f->obs[i].x, f->obs[i].y, f->obs[i].range[0],
                         f->obs[i].range[1], f->obs[i].range[2], s.times[i], want);
        }
    }
}

/* Observers move (a step or a jump), change ranges and leave, with queries between. */
static void churn(fixture *f, int rounds)
{
    for (int r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < OBSERVERS; i++) {
            model_observer *m = &f->obs[i];
            double u = unit(), x = m->x, y = m->y, range[SENSES];
            memcpy(range, m->range, sizeof range);
            if (u < 0.6) {
                x += (unit() - 0.5) * CELL;
                y += (unit() - 0.5) * CELL;
            } else if (u < 0.7) {
                x = random_coord();
                y = random_coord();
            } else if (u < 0.8) {
                range[(int)(unit() * 3)] = random_range();
            } else if (u < 0.85) {
                range[0] = range[1] = range[2] = 0; /* leaves */
            } else if (u < 0.9 && !m->live) {
                for (int s = 0; s < SENSES; s++)
                    range[s] = random_range();
            } else {
                continue;
            }
            assert_int_equal(place(f, i, x, y, range), 0);
        }
        check_queries(f, QUERIES / rounds);
    }
}

/* A grid of OBSERVERS random observers, as populate() leaves it. */
static fixture *new_populated(int near, unsigned senses)
{
    fixture *f = malloc(sizeof *f);
    assert_non_null(f);
    setup_grid(f, near, senses);
    populate(f);
    return f;
}

/* Frees the grid, which must give back every byte it took. */
static void free_fixture(fixture *f)
{
    og_free(&f->alloc, &f->grid);
    assert_int_equal(f->count.live_bytes, 0);
    free(f);
}

static void check_bytes(const fixture *f)
{
    /* og_bytes() is the allocator's count, byte for byte (the model's own
     * arrays are not the allocator's). */
    assert_int_equal(og_bytes(&f->grid), f->count.live_bytes);
}

static void test_query_matches_model(void **state)
{
    (void)state;
    /* All three senses, then two: the range of a sense another grid holds
     * must not count. */
    for (int near = 0; near <= 1; near++) {
        for (unsigned senses = 7; senses >= 5; senses -= 2) {
            fixture *f = new_populated(near, senses);
            check_queries(f, QUERIES);
            churn(f, 8);
            check_bytes(f);
            free_fixture(f);
        }
    }
}

/* No observer costs more than OG_REACH_CELLS reach entries, however long its
 * range, and the reach lists hold exactly what the registrations say. */
static void test_reach_entries_bounded(void **state)
{
    (void)state;
    fixture *f = new_populated(0, 7);
    churn(f, 2);
    uint64_t listed = 0, registered = 0;
    int levels_used[OG_MAX_LEVELS] = {0};
    for (uint32_t i = 0; i < OBSERVERS; i++) {
        const og_registration *r = &f->grid.slots[i].reg;
        if (r->cell == OG_NONE)
            continue;
        int64_t cells = (int64_t)(r->x1 - r->x0 + 1) * (r->y1 - r->y0 + 1);
        assert_true(cells >= 1 && cells <= OG_REACH_CELLS);
        registered += (uint64_t)cells;
        levels_used[r->level]++;
    }
    for (size_t c = 0; c < f->grid.cell_count; c++)
        for (uint32_t k = 0; k < f->grid.cells[c].reach_len; k++)
            listed += f->grid.cells[c].reach[k].count;
    assert_int_equal(listed, registered);
    /* The ranges span all three levels, and each level counts its own (a
     * query skips a level whose count is 0). */
    for (int l = 0; l < f->grid.level_count; l++) {
        assert_true(levels_used[l] > 0);
        assert_int_equal(f->grid.levels[l].observers, levels_used[l]);
    }

    /* One observer seeing the whole world from its middle: the top level. */
    double huge[SENSES] = {10 * WORLD, 0, 0};
    assert_int_equal(place(f, 0, WORLD / 2, WORLD / 2, huge), 0);
    assert_int_equal(f->grid.slots[0].reg.level, f->grid.level_count - 1);
    check_queries(f, 50);
    free_fixture(f);
}

/* A refused allocation in og_stage() leaves the grid's answers as they were
 * (the observer stays where it was registered before). */
static void test_failed_stage_changes_nothing(void **state)
{
    (void)state;
    fixture *f = new_populated(0, 7);
    int refused = 0;
    for (int trial = 0; trial < 200; trial++) {
        uint32_t i = (uint32_t)(unit() * OBSERVERS);
        double range[SENSES] = {random_range(), random_range(), random_range()};
        double x = random_coord(), y = random_coord();
        f->count.calls = 0;
        f->count.fail_at = (long)(unit() * 4);
        int rc = place(f, i, x, y, range);
        f->count.fail_at = -1;
        /* Refused: the model keeps the old registration, and so must the grid
         * (a grown observer array may stay: spare room is invisible). */
        refused += rc != 0;
        check_bytes(f);
        check_queries(f, 4);
    }
    assert_true(refused > 0);
    free_fixture(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_matches_model),
        cmocka_unit_test(test_reach_entries_bounded),
        cmocka_unit_test(test_failed_stage_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
