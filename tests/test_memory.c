/*
 * test_memory.c - percept_memory_usage(): on a counting allocator, what the
 * world reports must equal, byte for byte, what it holds from the allocator
 * (every backend under test reports its memory), after every kind of call,
 * inside the event callback, and after calls that ran out of memory part-way.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include "../tools/splitmix.h"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING

static size_t parts_sum(const percept_memory *m)
{
    return m->entities + m->pairs + m->observer_grids + m->backends + m->scratch + m->world;
}

/* The report must add up and equal the allocator's live bytes. */
static void expect_exact(percept_world *w, const tu_fault_alloc *fa, const char *when)
{
    percept_memory m;
    memset(&m, 0xA5, sizeof m);
    assert_int_equal(percept_memory_usage(w, &m), PERCEPT_OK);
    if (m.total != parts_sum(&m) || m.total != fa->live_bytes) {
        print_error("%s: reported %zu (entities %zu, pairs %zu, observer grids %zu, backends %zu, "
                    "scratch %zu, world %zu; parts sum to %zu), the allocator holds %zu\n",
                    when, m.total, m.entities, m.pairs, m.observer_grids, m.backends, m.scratch,
                    m.world, parts_sum(&m), fa->live_bytes);
        fail();
    }
}

static percept_memory usage(const percept_world *w)
{
    percept_memory m;
    assert_int_equal(percept_memory_usage(w, &m), PERCEPT_OK);
    return m;
}

/* n entities in a 200 x 200 world, half of them in a crowd, ranges 5 to 12. */
static void populate(percept_world *w, uint64_t *rng, uint32_t first, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        double x, y;
        if (i % 2) {
            x = splitmix_between(rng, 90, 110);
            y = splitmix_between(rng, 90, 110);
        } else {
            x = splitmix_between(rng, 0, 200);
            y = splitmix_between(rng, 0, 200);
        }
        percept_entity_desc d =
            tu_desc(x, y, splitmix_between(rng, 5, 12), splitmix_between(rng, 5, 12), 0, 0);
        TU_OK(w, percept_add(w, first + i, &d));
    }
}

static const char world_ini[] = "[world]\nmax_x = 200\nmax_y = 200\n";

/* ------------------------------------------------------------------------ */

static void exact_through_a_life(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    uint64_t rng = 7;
    percept_world *w = tu_open_faulty(backend, world_ini, NULL, &fa);
    expect_exact(w, &fa, "just opened");
    percept_memory empty = usage(w);
    assert_true(empty.world >= 512); /* the record holds the 512-byte message */
    assert_int_equal(empty.pairs, 0);

    populate(w, &rng, 1, 600);
    expect_exact(w, &fa, "after 600 adds");
    percept_memory full = usage(w);
    assert_true(full.entities >= 600 * 64); /* one 64-byte record each, at least */
    assert_true(full.pairs > 300 * 8);      /* the crowd perceives each other */
    assert_true(full.observer_grids > 0);
    assert_true(full.backends > empty.backends);
    assert_int_equal(full.world, empty.world);

    for (uint32_t i = 1; i <= 600; i += 3)
        TU_OK(w,
              percept_move(w, i, splitmix_between(&rng, 0, 200), splitmix_between(&rng, 0, 200)));
    expect_exact(w, &fa, "after moves");

    percept_position batch[500];
    for (uint32_t i = 0; i < 500; i++)
        batch[i] = (percept_position){i + 1, splitmix_between(&rng, 80, 120),
                                      splitmix_between(&rng, 80, 120)};
    TU_OK(w, percept_move_many(w, batch, 500));
    expect_exact(w, &fa, "after a batch of 500");
    /* The batch's room stays for the next one. */
    assert_true(usage(w).scratch >= 500 * (16 + 16));

    TU_OK(w, percept_set_range(w, 7, H, 150));
    TU_OK(w, percept_set_hidden(w, 8, S, 1));
    expect_exact(w, &fa, "after a range and a hide");

    for (uint32_t i = 1; i <= 600; i += 2)
        TU_OK(w, percept_remove(w, i));
    expect_exact(w, &fa, "after removing half");
    populate(w, &rng, 1000, 300); /* reuses the freed slots and their lists */
    expect_exact(w, &fa, "after adding into freed slots");

    percept_world_close(w);
    tu_expect_no_leak(&fa, "closed");
}

static void test_exact_through_a_life(void **state)
{
    (void)state;
    tu_for_each_backend(exact_through_a_life);
}

/* ------------------------------------------------------------------------ */
/* Inside the callback: a call's working room is held, and counted           */

typedef struct probe {
    percept_world *w;
    tu_fault_alloc *fa;
    size_t calls;
} probe;

static void check_in_callback(void *user, const percept_event *ev)
{
    (void)ev;
    probe *p = user;
    p->calls++;
    expect_exact(p->w, p->fa, "inside the callback");
}

static void exact_in_callback(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    uint64_t rng = 11;
    percept_world *w = tu_open_faulty(backend, world_ini, NULL, &fa);
    probe p = {w, &fa, 0};
    assert_int_equal(percept_set_event_callback(w, check_in_callback, &p), PERCEPT_OK);
    populate(w, &rng, 1, 200);
    percept_entity_desc d = tu_desc(100, 100, 30, 30, 30, 0);
    TU_OK(w, percept_add(w, 5000, &d));
    TU_OK(w, percept_move(w, 5000, 10, 10));
    assert_true(p.calls > 100);
    percept_world_close(w);
    tu_expect_no_leak(&fa, "closed");
}

static void test_exact_in_callback(void **state)
{
    (void)state;
    tu_for_each_backend(exact_in_callback);
}

/* ------------------------------------------------------------------------ */
/* After running out of memory part-way, nothing is left uncounted           */

/* Calls that grow every structure: the slots (past 64), pair lists, the
 * observer grids, a call's change list (past 64), a batch's room. Few
 * enough requests for memory that failing each in turn stays quick. */
static int growing_calls(percept_world *w, uint64_t *rng)
{
    for (uint32_t i = 0; i < 12; i++) {
        percept_entity_desc d =
            tu_desc(splitmix_between(rng, 95, 105), splitmix_between(rng, 95, 105), 8, 8, 0, 0);
        int rc = percept_add(w, 1000 + i, &d);
        if (rc)
            return rc;
    }
    percept_position batch[12];
    for (uint32_t i = 0; i < 12; i++)
        batch[i] = (percept_position){1000 + i, splitmix_between(rng, 90, 110),
                                      splitmix_between(rng, 90, 110)};
    int rc = percept_move_many(w, batch, 12);
    if (rc)
        return rc;
    /* Both ways with the crowd and the nearest others: past 64 changes. */
    percept_entity_desc far = tu_desc(100, 100, 60, 60, 60, 0);
    rc = percept_add(w, 1999, &far);
    if (rc)
        return rc;
    return percept_remove(w, 1999);
}

/*
 * Each request for memory fails in turn, once (the next one succeeds) or for
 * good (memory stays short for the rest of the call), and the world must
 * still report exactly what it holds: a structure that grew part-way must
 * either give the growth back or count it.
 */
static void exact_after_failures(const char *backend)
{
    for (int sticky = 0; sticky <= 1; sticky++) {
        int failures = 0;
        for (size_t k = 1;; k++) {
            tu_fault_alloc fa;
            tu_fault_init(&fa);
            uint64_t rng = 3;
            percept_world *w = tu_open_faulty(backend, world_ini, NULL, &fa);
            populate(w, &rng, 100000, 60);
            fa.fail_at = fa.counted + k;
            fa.sticky = sticky;
            int rc = growing_calls(w, &rng);
            char when[80];
            snprintf(when, sizeof when, "after failing allocation %zu%s", k,
                     sticky ? " and every one after it" : "");
            expect_exact(w, &fa, when);
            fa.fail_at = 0;
            percept_world_close(w);
            tu_expect_no_leak(&fa, when);
            if (!fa.hit) {
                assert_int_equal(rc, PERCEPT_OK);
                break;
            }
            assert_int_equal(rc, PERCEPT_ENOMEM);
            failures++;
        }
        /* The calls above grow many things (some 130 requests): each failed in turn. */
        assert_true(failures > 100);
    }
}

static void test_exact_after_failures(void **state)
{
    (void)state;
    tu_for_each_backend(exact_after_failures);
}

/* ------------------------------------------------------------------------ */

static void test_arguments(void **state)
{
    (void)state;
    percept_memory m;
    assert_int_equal(percept_memory_usage(NULL, &m), PERCEPT_EINVAL);
    percept_world *w = tu_open(tu_backend_name(0), NULL, NULL);
    assert_int_equal(percept_memory_usage(w, NULL), PERCEPT_EINVAL);
    /* The C library's allocator: the same report, without a counter to compare with. */
    assert_int_equal(percept_memory_usage(w, &m), PERCEPT_OK);
    assert_true(m.total > 0 && m.total == parts_sum(&m));
    percept_world_close(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_exact_through_a_life),
        tu_backend_test(test_exact_in_callback),
        tu_backend_test(test_exact_after_failures),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
