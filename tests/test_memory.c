/*
 * test_memory.c - percept_memory_usage(): on a counting allocator, what the
 * world reports must equal, byte for byte, what it holds from the allocator,
 * after every kind of call, inside the event callback, and after calls that
 * ran out of memory part-way. A backend without the optional memory_usage()
 * gets the checks that remain possible, and a note saying so, unless
 * PERCEPT_TEST_EXACT_MEMORY names it: `make check` names the shipped
 * backends there, so that one that stops reporting its memory fails.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL

static size_t parts_sum(const percept_memory *m)
{
    return m->entities + m->pairs + m->observer_grids + m->backends + m->scratch + m->world;
}

static percept_memory usage(const percept_world *w)
{
    percept_memory m;
    assert_int_equal(percept_memory_usage(w, &m), PERCEPT_OK);
    return m;
}

/*
 * memory_usage() is optional (backend.h): a backend without it counts as 0,
 * so the report leaves out what it holds and can never equal the allocator's
 * count. Such a backend shows itself in a world that holds an entity and
 * reports 0 bytes of backends (one that reports counts its instance at
 * least). Each backend is asked once, in a world of its own, so that a world
 * just opened is judged too; the answer is kept by name, and the note that
 * the exact check is skipped is printed once per backend.
 */
#define KNOWN_MAX 64
static struct {
    char name[128];
    int silent;
} known[KNOWN_MAX];
static size_t known_count;

/* Whether PERCEPT_TEST_EXACT_MEMORY (blank-separated names) names `name`. */
static int memory_required(const char *name)
{
    const char *p = getenv("PERCEPT_TEST_EXACT_MEMORY");
    size_t n = strlen(name);
    while (p != NULL && *p != '\0') {
        p += strspn(p, " \t\n");
        size_t len = strcspn(p, " \t\n");
        if (len == n && len > 0 && strncmp(p, name, n) == 0)
            return 1;
        p += len;
    }
    return 0;
}

static int backend_silent(const char *name)
{
    for (size_t i = 0; i < known_count; i++)
        if (strcmp(known[i].name, name) == 0)
            return known[i].silent;
    percept_world *w = tu_open(name, NULL, NULL);
    percept_entity_desc d = tu_desc(10, 10, 5, 5, 5, 0);
    TU_OK(w, percept_add(w, 1, &d));
    int silent = usage(w).backends == 0;
    percept_world_close(w);
    if (silent && memory_required(name)) {
        print_error("backend '%s' reports no memory (memory_usage() is absent or says 0 with an "
                    "entity in the index), but PERCEPT_TEST_EXACT_MEMORY requires an exact "
                    "report of it\n",
                    name);
        fail();
    }
    if (silent)
        fprintf(stderr,
                "note: backend '%s' reports no memory (memory_usage() is absent or says 0 with "
                "an entity in the index): the world's report cannot equal what the allocator "
                "holds, so for '%s' the exact check is skipped; the report must still add up and "
                "stay at or below what the allocator holds\n",
                name, name);
    /* A name that does not fit is asked again next time (and noted again). */
    if (known_count < KNOWN_MAX && strlen(name) < sizeof known[0].name) {
        strcpy(known[known_count].name, name);
        known[known_count++].silent = silent;
    }
    return silent;
}

/* Whether every backend of w reports its memory, so that w's report is exact. */
static int reports_memory(const percept_world *w)
{
    for (int s = 0; s < percept_sense_count(w); s++) {
        const char *name = percept_backend_name(w, (percept_sense)s);
        if (name != NULL && backend_silent(name))
            return 0;
    }
    return 1;
}

/* The report must add up and equal the allocator's live bytes; with a
 * backend that reports no memory, it may only be less. */
static void expect_exact(percept_world *w, const tu_fault_alloc *fa, const char *when)
{
    percept_memory m;
    memset(&m, 0xA5, sizeof m);
    assert_int_equal(percept_memory_usage(w, &m), PERCEPT_OK);
    int exact = reports_memory(w);
    if (m.total != parts_sum(&m) ||
        (exact ? m.total != fa->live_bytes : m.total > fa->live_bytes)) {
        print_error("%s: reported %zu (entities %zu, pairs %zu, observer grids %zu, backends %zu, "
                    "scratch %zu, world %zu; parts sum to %zu), the allocator holds %zu%s\n",
                    when, m.total, m.entities, m.pairs, m.observer_grids, m.backends, m.scratch,
                    m.world, parts_sum(&m), fa->live_bytes,
                    exact ? "" : " (its backend reports no memory: only less may be reported)");
        fail();
    }
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
    if (reports_memory(w)) /* a backend without memory_usage() counts as 0 */
        assert_true(full.backends > empty.backends);
    assert_int_equal(full.world, empty.world);

    for (uint32_t i = 1; i <= 600; i += 3)
        TU_OK(w,
              percept_move(w, i, splitmix_between(&rng, 0, 200), splitmix_between(&rng, 0, 200)));
    expect_exact(w, &fa, "after moves");

    static percept_change tick[500];
    for (uint32_t i = 0; i < 500; i++)
        tick[i] = TU_CH_MOVE(i + 1, splitmix_between(&rng, 80, 120),
                             splitmix_between(&rng, 80, 120), i % 7 ? 0 : 1);
    size_t scratch_before = usage(w).scratch;
    TU_OK(w, percept_tick(w, tick, 500));
    expect_exact(w, &fa, "after a tick of 500");
    /* The tick's room stays for the next one. */
    size_t scratch_after = usage(w).scratch;
    assert_true(scratch_after > scratch_before);
    TU_OK(w, percept_tick(w, tick, 10));            /* in place: nothing changes, nothing grows */
    assert_true(usage(w).scratch >= scratch_after); /* room is kept, never given back */
    expect_exact(w, &fa, "after a smaller tick");

    TU_OK(w, percept_set_range(w, 7, H, 150));
    TU_OK(w, percept_set_hidden(w, 8, S, 1));
    expect_exact(w, &fa, "after a range and a hide");

    /* Version 2: cones, margins and heights by updates, moves in height,
     * turns; a stimulus the whole world perceives, whose room is kept; a
     * query of the whole world, whose room is given back. */
    for (uint32_t i = 2; i <= 600; i += 5) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        TU_OK(w, percept_get_entity(w, i, &d));
        d.z = 2;
        d.facing[0] = 1;
        d.sense[S].fov = 90;
        d.sense[H].margin = 4;
        TU_OK(w, percept_update(w, i, &d));
        TU_OK(w, percept_move3(w, i + 1, d.x, d.y, 1));
        TU_OK(w, percept_turn(w, i, 0, 1, 0));
    }
    expect_exact(w, &fa, "after updates, moves in height and turns");
    for (uint32_t i = 1; i <= 600; i++)
        TU_OK(w, percept_set_range(w, i, M, i % 2 ? 1 : 0));
    percept_stimulus scent = PERCEPT_STIMULUS_INIT;
    scent.sense = M;
    scent.x = scent.y = 100;
    scent.strength = 1000;
    TU_OK(w, percept_emit(w, &scent));
    expect_exact(w, &fa, "after a stimulus 300 perceive");
    static percept_id ids[600];
    size_t found = 0;
    TU_OK(w, percept_query(w, 100, 100, 0, 300, ids, 600, &found));
    assert_int_equal(found, 600);
    expect_exact(w, &fa, "after a query of the whole world");

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
 * observer grids, a call's change list (past 64), a tick's room. Few
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
    percept_change tick[12];
    percept_entity_desc d = tu_desc(100, 100, 30, 0, 8, 0);
    for (uint32_t i = 0; i < 12; i++)
        tick[i] =
            TU_CH_MOVE(1000 + i, splitmix_between(rng, 90, 110), splitmix_between(rng, 90, 110), 0);
    tick[5] = TU_CH_UPDATE(1005, &d);
    tick[7] = TU_CH_TURN(1007, 0, 1, 0);
    int rc = percept_tick(w, tick, 12);
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
        /* The calls above grow many things (some 70 requests, one pair list per entity): each
         * failed in turn. */
        assert_true(failures > 60);
    }
}

static void test_exact_after_failures(void **state)
{
    (void)state;
    tu_for_each_backend(exact_after_failures);
}

/* ------------------------------------------------------------------------ */

/* A crowd that disperses gives its pair lists' room back                    */

#define SPREAD_N 1600
#define CROWD_N 400
#define LIST_CAP 2048

/* The distinct partners of `id` over the world's senses: the length of its
 * pair list on that side (the core keeps one list for all senses). */
static size_t partners(const percept_world *w, percept_id id, int by_target)
{
    static percept_id ids[PERCEPT_MAX_SENSES][LIST_CAP];
    size_t n[PERCEPT_MAX_SENSES], at[PERCEPT_MAX_SENSES] = {0}, distinct = 0;
    int senses = percept_sense_count(w);
    for (int s = 0; s < senses; s++) {
        int rc = by_target ? percept_perceived_by(w, id, (percept_sense)s, ids[s], LIST_CAP, &n[s])
                           : percept_perceived(w, id, (percept_sense)s, ids[s], LIST_CAP, &n[s]);
        assert_true(rc == PERCEPT_OK && n[s] <= LIST_CAP);
    }
    for (;;) { /* merge the ascending lists, counting each ID once */
        int low = -1;
        for (int s = 0; s < senses; s++)
            if (at[s] < n[s] && (low < 0 || ids[s][at[s]] < ids[low][at[low]]))
                low = s;
        if (low < 0)
            return distinct;
        percept_id next = ids[low][at[low]];
        distinct++;
        for (int s = 0; s < senses; s++)
            if (at[s] < n[s] && ids[s][at[s]] == next)
                at[s]++;
    }
}

/* The most the pair lists may hold once none keeps more than four times its
 * length in room (lists with room for up to 8 entries keep it whatever
 * their length): 8 bytes an entry. */
static size_t pairs_bound_of(const percept_world *w, uint32_t first, uint32_t last)
{
    size_t bytes = 0;
    for (uint32_t i = first; i <= last; i++)
        for (int side = 0; side < 2; side++) {
            size_t len = partners(w, i, side);
            bytes += 8 * (4 * len > 8 ? 4 * len : 8);
        }
    return bytes;
}

static size_t pairs_bound(const percept_world *w)
{
    return pairs_bound_of(w, 1, SPREAD_N);
}

/* The events delivered, and a hash of their sequence: two worlds given the
 * same calls must agree on both. */
typedef struct event_tally {
    uint64_t events, hash;
} event_tally;

static void tally_reset(event_tally *t)
{
    t->events = 0;
    t->hash = 0xcbf29ce484222325u;
}

static void tally_event(void *user, const percept_event *ev)
{
    event_tally *t = user;
    uint64_t fields[] = {ev->kind, ev->sense, ev->observer, ev->target};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        t->hash = (t->hash ^ fields[i]) * 0x100000001b3u;
    t->events++;
}

typedef struct spread_world {
    tu_fault_alloc fa;
    percept_world *w;
    event_tally tally;
    double x[SPREAD_N + 1], y[SPREAD_N + 1];
} spread_world;

/* SPREAD_N entities over a 400 x 400 world, about 3 in range of each. */
static void spread_open(spread_world *sw, const char *backend)
{
    uint64_t rng = 23;
    tu_fault_init(&sw->fa);
    tally_reset(&sw->tally);
    sw->w = tu_open_faulty(backend, "[world]\nmax_x = 400\nmax_y = 400\n", NULL, &sw->fa);
    assert_int_equal(percept_set_event_callback(sw->w, tally_event, &sw->tally), PERCEPT_OK);
    for (uint32_t i = 1; i <= SPREAD_N; i++) {
        sw->x[i] = splitmix_between(&rng, 0, 400);
        sw->y[i] = splitmix_between(&rng, 0, 400);
        tu_add(sw->w, i, tu_desc(sw->x[i], sw->y[i], 10, 8, 5, 0));
    }
}

/* The crowd of day `day`: CROWD_N entities, a different group each day,
 * gather in a disk of radius 5 (each then perceives all of them by every
 * sense), a different place each day; or go back to where they were added. */
static void spread_gather(spread_world *sw, int day, int gather)
{
    uint64_t rng = 31 + (uint64_t)day;
    double cx = 200, cy = 200;
    if (day > 0) {
        cx = splitmix_between(&rng, 20, 380);
        cy = splitmix_between(&rng, 20, 380);
    }
    for (uint32_t k = 0; k < CROWD_N; k++) {
        uint32_t i = (uint32_t)(day * 97 + k) % SPREAD_N + 1;
        double x = sw->x[i], y = sw->y[i];
        if (gather)
            do {
                x = splitmix_between(&rng, -5, 5);
                y = splitmix_between(&rng, -5, 5);
            } while (x * x + y * y > 25);
        TU_OK(sw->w, percept_move(sw->w, i, gather ? cx + x : x, gather ? cy + y : y));
    }
}

static void spread_close(spread_world *sw)
{
    percept_world_close(sw->w);
    tu_expect_no_leak(&sw->fa, "closed");
}

static void lists_give_back_room(const char *backend)
{
    static spread_world kept, refused;
    spread_open(&kept, backend);
    spread_open(&refused, backend);
    size_t spread = usage(kept.w).pairs;

    spread_gather(&kept, 0, 1);
    spread_gather(&refused, 0, 1);
    size_t crowd = usage(kept.w).pairs;
    assert_true(crowd > 10 * spread);

    refused.fa.refuse_shrinks = 1;
    spread_gather(&kept, 0, 0);
    spread_gather(&refused, 0, 0);
    expect_exact(kept.w, &kept.fa, "after the crowd dispersed");
    expect_exact(refused.w, &refused.fa, "after the crowd dispersed, shrinks refused");
    size_t after = usage(kept.w).pairs, bound = pairs_bound(kept.w);
    /* Lists that kept the crowd's room (some 400 entries each) would be far
     * past the bound, so the check can tell. */
    assert_true(crowd > 3 * bound);
    if (after > bound) {
        print_error("%s: pair lists hold %zu bytes after the crowd dispersed (%zu before it "
                    "gathered, %zu in it); at most %zu expected\n",
                    backend, after, spread, crowd, bound);
        fail();
    }
    /* Refused shrinks cost only memory: every call succeeded (spread_gather
     * checks), and the events and the relation are the same. */
    assert_true(refused.fa.shrinks > CROWD_N);
    assert_true(usage(refused.w).pairs > 3 * after);
    assert_true(kept.tally.events > 2 * CROWD_N * CROWD_N);
    assert_int_equal(refused.tally.events, kept.tally.events);
    assert_int_equal(refused.tally.hash, kept.tally.hash);
    for (uint32_t i = 1; i <= SPREAD_N; i++)
        for (int side = 0; side < 2; side++)
            assert_int_equal(partners(refused.w, i, side), partners(kept.w, i, side));
    spread_close(&kept);
    spread_close(&refused);
}

static void test_lists_give_back_room(void **state)
{
    (void)state;
    tu_for_each_backend(lists_give_back_room);
}

/*
 * Those who stay: watchers standing where a crowd gathers see their lists
 * grow with it and shrink one entry at a time as it leaves (each leaver's
 * move takes one pair from each watcher's list). They must give the room
 * back too; the crowd's homes are far apart, so that nothing else holds
 * memory the bound would allow.
 */
static void watchers_give_back_room(const char *backend)
{
    enum { WATCHERS = 50, VISITORS = 400 };
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, "[world]\nmax_x = 2000\nmax_y = 2000\n", NULL, &fa);
    uint64_t rng = 5;
    for (uint32_t i = 1; i <= WATCHERS; i++) {
        double x, y;
        do {
            x = splitmix_between(&rng, -3, 3);
            y = splitmix_between(&rng, -3, 3);
        } while (x * x + y * y > 9);
        tu_add(w, i, tu_desc(1000 + x, 1000 + y, 10, 8, 5, 0));
    }
    for (uint32_t k = 0; k < VISITORS; k++) /* homes 90 apart, out of everyone's range */
        tu_add(w, WATCHERS + 1 + k, tu_desc(100 + 90 * (k % 20), 100 + 90 * (k / 20), 10, 8, 5, 0));
    for (int gather = 1; gather >= 0; gather--)
        for (uint32_t k = 0; k < VISITORS; k++) {
            double x = 100 + 90 * (k % 20), y = 100 + 90 * (k / 20);
            if (gather)
                do {
                    x = splitmix_between(&rng, -5, 5);
                    y = splitmix_between(&rng, -5, 5);
                } while (x * x + y * y > 25);
            TU_OK(w,
                  percept_move(w, WATCHERS + 1 + k, gather ? 1000 + x : x, gather ? 1000 + y : y));
        }
    expect_exact(w, &fa, "after the visitors left");
    size_t after = usage(w).pairs, bound = pairs_bound_of(w, 1, WATCHERS + VISITORS);
    /* Watchers that kept the crowd's room would hold some 450 entries a list. */
    assert_true(2 * WATCHERS * 450 * 8 > bound + bound / 2);
    if (after > bound) {
        print_error("%s: pair lists hold %zu bytes after the visitors left; at most %zu "
                    "expected\n",
                    backend, after, bound);
        fail();
    }
    percept_world_close(w);
    tu_expect_no_leak(&fa, "closed");
}

static void test_watchers_give_back_room(void **state)
{
    (void)state;
    tu_for_each_backend(watchers_give_back_room);
}

/*
 * A shard's days: each day another group gathers somewhere else and goes
 * home. Memory must not ratchet up from day to day: the pair lists stay
 * within the bound, and the backend's part (a grid's cells, which a crowd
 * fills) stays near the first day's, where a cell keeping the largest size
 * a crowd gave it added a crowd's worth every day.
 */
static void crowds_come_and_go(const char *backend)
{
    static spread_world sw;
    spread_open(&sw, backend);
    spread_gather(&sw, 1, 1);
    spread_gather(&sw, 1, 0);
    percept_memory first = usage(sw.w);
    for (int day = 2; day <= 12; day++) {
        spread_gather(&sw, day, 1);
        spread_gather(&sw, day, 0);
    }
    expect_exact(sw.w, &sw.fa, "after twelve days of crowds");
    percept_memory last = usage(sw.w);
    size_t bound = pairs_bound(sw.w);
    if (last.pairs > bound || last.backends > first.backends + first.backends / 4) {
        print_error("%s: after the first day's crowd, pairs %zu and backends %zu bytes; after "
                    "the twelfth, pairs %zu (at most %zu expected) and backends %zu\n",
                    backend, first.pairs, first.backends, last.pairs, bound, last.backends);
        fail();
    }
    spread_close(&sw);
}

static void test_crowds_come_and_go(void **state)
{
    (void)state;
    tu_for_each_backend(crowds_come_and_go);
}

/*
 * The observer grids too: each day a crowd of observers gathers somewhere
 * else and goes home. Ranges of 10 in cells of 4 keep every observer in the
 * grid with every backend (none counts as near), each in its cell's array
 * and counted in the reach lists of the cells around. The crowd is hidden
 * from every sense, so nobody perceives it and its pairs stay few (each day
 * one bystander stands in the crowd, for the crowd to perceive): what a
 * crowd grows is the grid's arrays. A grid that kept the room a crowd gave
 * it would add a crowd's worth every day; one that gives room back keeps at
 * most OG_SHRINK_FROM (8) entries of it in each array the crowd filled.
 */
#define OG_CROWD 1000
#define OG_DAYS 8
#define OG_CELL 4.0

typedef struct og_world {
    tu_fault_alloc fa;
    percept_world *w;
    event_tally tally;
} og_world;

/* The grids' bytes before the first crowd, with the first crowd gathered,
 * and after the last went home. */
typedef struct og_days {
    size_t before, crowd, after;
} og_days;

static void og_home(uint32_t i, double *x, double *y)
{
    uint64_t rng = 1000 + i;
    *x = splitmix_between(&rng, 0, 400);
    *y = splitmix_between(&rng, 0, 400);
}

/* The centre of day `day`'s crowd: the centre of a cell. */
static void og_centre(int day, double *cx, double *cy)
{
    uint64_t rng = 77 + (uint64_t)day;
    *cx = OG_CELL * floor(splitmix_between(&rng, 5, 95)) + OG_CELL / 2;
    *cy = OG_CELL * floor(splitmix_between(&rng, 5, 95)) + OG_CELL / 2;
}

static void og_open(og_world *ow, const char *backend)
{
    static const char ini[] = "[world]\nmax_x = 400\nmax_y = 400\n"
                              "[sight]\nobserver_cell_size = 4\n"
                              "[hearing]\nobserver_cell_size = 4\n"
                              "[smell]\nobserver_cell_size = 4\n";
    tu_fault_init(&ow->fa);
    tally_reset(&ow->tally);
    ow->w = tu_open_faulty(backend, ini, NULL, &ow->fa);
    assert_int_equal(percept_set_event_callback(ow->w, tally_event, &ow->tally), PERCEPT_OK);
    unsigned hidden = PERCEPT_SENSE_BIT(PERCEPT_SIGHT) | PERCEPT_SENSE_BIT(PERCEPT_HEARING) |
                      PERCEPT_SENSE_BIT(PERCEPT_SMELL);
    for (uint32_t i = 1; i <= OG_CROWD; i++) {
        double x, y;
        og_home(i, &x, &y);
        tu_add(ow->w, i, tu_desc(x, y, 10, 8, 5, hidden));
    }
    for (int day = 1; day <= OG_DAYS; day++) { /* the bystanders perceive nothing */
        double cx, cy;
        og_centre(day, &cx, &cy);
        tu_add(ow->w, OG_CROWD + (percept_id)day, tu_desc(cx + 0.5, cy + 0.5, 0, 0, 0, 0));
    }
}

/* Day `day`'s crowd: everyone within `radius` of its centre. */
static void og_gather(og_world *ow, int day, double radius)
{
    uint64_t rng = 99 + (uint64_t)day;
    double cx, cy;
    og_centre(day, &cx, &cy);
    for (uint32_t i = 1; i <= OG_CROWD; i++) {
        double x, y;
        do {
            x = splitmix_between(&rng, -radius, radius);
            y = splitmix_between(&rng, -radius, radius);
        } while (x * x + y * y > radius * radius);
        TU_OK(ow->w, percept_move(ow->w, i, cx + x, cy + y));
    }
}

static void og_disperse(og_world *ow)
{
    for (uint32_t i = 1; i <= OG_CROWD; i++) {
        double x, y;
        og_home(i, &x, &y);
        TU_OK(ow->w, percept_move(ow->w, i, x, y));
    }
}

/*
 * OG_DAYS crowds of `radius` in a world that gives room back and in one
 * whose allocator refuses every shrink: refused shrinks cost only memory,
 * so every move succeeds (TU_OK) and the events are the same.
 */
static og_days og_run_days(const char *backend, double radius)
{
    static og_world kept, refused;
    og_days d;
    og_open(&kept, backend);
    og_open(&refused, backend);
    refused.fa.refuse_shrinks = 1;
    d.before = usage(kept.w).observer_grids;
    for (int day = 1; day <= OG_DAYS; day++) {
        og_gather(&kept, day, radius);
        og_gather(&refused, day, radius);
        if (day == 1)
            d.crowd = usage(kept.w).observer_grids - d.before;
        og_disperse(&kept);
        og_disperse(&refused);
    }
    expect_exact(kept.w, &kept.fa, "after the crowds dispersed");
    expect_exact(refused.w, &refused.fa, "after the crowds dispersed, shrinks refused");
    d.after = usage(kept.w).observer_grids;
    assert_true(refused.fa.shrinks > OG_DAYS);
    assert_true(kept.tally.events >= (uint64_t)OG_DAYS * OG_CROWD);
    assert_int_equal(refused.tally.events, kept.tally.events);
    assert_int_equal(refused.tally.hash, kept.tally.hash);
    percept_world_close(kept.w);
    tu_expect_no_leak(&kept.fa, "closed");
    percept_world_close(refused.w);
    tu_expect_no_leak(&refused.fa, "closed");
    return d;
}

static void observer_grids_give_back_room(const char *backend)
{
    /* Crowds in one cell: the cell's observer array is nearly all a crowd
     * grows. Everyone is home again; what may be left is each day's cell
     * with room for 8 observers, a few percent of a crowd's room. */
    og_days one = og_run_days(backend, 1);
    if (one.after > one.before + one.crowd / 4) {
        print_error("%s: observer grids hold %zu bytes after %d crowds in one cell came and "
                    "went, %zu before the first (a crowd took %zu more); at most %zu expected\n",
                    backend, one.after, OG_DAYS, one.before, one.crowd, one.before + one.crowd / 4);
        fail();
    }
    /* Crowds of radius 12, some 35 observers a cell: every cell within reach
     * of the crowd counts dozens of cells in its reach list. An array may
     * keep 8 entries of room (OG_SHRINK_FROM), so the days leave something
     * in every cell they touched, but less than two crowds' worth in all
     * (about 1.4 here); grids that kept every crowd's room would hold eight
     * crowds' worth, and reach lists that kept theirs about three. */
    og_days wide = og_run_days(backend, 12);
    if (wide.after > wide.before + 2 * wide.crowd) {
        print_error("%s: observer grids hold %zu bytes after %d crowds of radius 12 came and "
                    "went, %zu before the first (a crowd took %zu more); at most %zu expected\n",
                    backend, wide.after, OG_DAYS, wide.before, wide.crowd,
                    wide.before + 2 * wide.crowd);
        fail();
    }
}

static void test_observer_grids_give_back_room(void **state)
{
    (void)state;
    tu_for_each_backend(observer_grids_give_back_room);
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
        tu_backend_test(test_lists_give_back_room),
        tu_backend_test(test_watchers_give_back_room),
        tu_backend_test(test_crowds_come_and_go),
        tu_backend_test(test_observer_grids_give_back_room),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
