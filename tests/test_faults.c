/*
 * test_faults.c - allocation failure injection through percept_options.allocator:
 * each allocation of world creation and of every change call fails in turn, on
 * every backend, ticks (percept_tick()) among them. The call must return
 * PERCEPT_ENOMEM, deliver nothing and leave the world as it was; retried, it
 * must deliver the reference events, which are the model's; and closing the
 * world must give every block back.
 *
 * How: a reference run, held to the model (model.h), records per call its
 * events and how many allocations it made. For call i and each N, a fresh
 * world replays calls 0..i-1 (the same state, capacities included, since
 * everything is deterministic), then call i runs with its Nth allocation
 * failing; the world must then hold what the model holds before call i. N
 * goes up from 1 until call i no longer reaches the failure. A fresh world
 * per N matters: a failed call may keep blocks it grew (invisibly), so
 * retrying on the same world would skip points.
 *
 * PERCEPT_FAULT_FOLLOW=K (default 6): after each failure and retry, run K more
 * calls of the scenario and compare their events too, so that an index left
 * subtly wrong by a failure shows up.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../tools/splitmix.h"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define SB(s) PERCEPT_SENSE_BIT(s)

/* The first directory of PERCEPT_PLUGIN_PATH, or NULL. */
static const char *first_plugin_dir(char *buf, size_t size)
{
    const char *path = getenv("PERCEPT_PLUGIN_PATH");
    if (path == NULL || *path == '\0')
        return NULL;
    snprintf(buf, size, "%.*s", (int)strcspn(path, ":"), path);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Scenarios: deterministic call sequences                                   */

typedef struct scenario {
    const char *name;
    char ini_extra[512]; /* continues [percept] after "backend = NAME" */
    int moves_on;        /* what ini_extra says of move_events */
    tu_op *ops;
    size_t count, cap;
    void *ticks[8]; /* the entries of its ticks, and their descriptions */
    size_t n_ticks;
} scenario;

static void push_op(scenario *sc, tu_op o)
{
    if (sc->count == sc->cap) {
        sc->cap = sc->cap ? 2 * sc->cap : 64;
        sc->ops = realloc(sc->ops, sc->cap * sizeof *sc->ops);
        assert_non_null(sc->ops);
    }
    sc->ops[sc->count++] = o;
}

/* A tick of `count` entries; those of kind UPDATE take the next of `descs`
 * in turn. The scenario keeps a copy of both. */
static void push_tick(scenario *sc, const percept_change *changes, size_t count,
                      const percept_entity_desc *descs)
{
    size_t updates = 0;
    for (size_t i = 0; i < count; i++)
        updates += changes[i].kind == PERCEPT_CHANGE_UPDATE;
    assert_true(sc->n_ticks < COUNT_OF(sc->ticks));
    percept_entity_desc *d = malloc(updates * sizeof *d + count * sizeof *changes + 1);
    assert_non_null(d);
    percept_change *c = (percept_change *)(void *)(d + updates);
    memcpy(c, changes, count * sizeof *c);
    for (size_t i = 0, k = 0; i < count; i++) {
        if (c[i].kind == PERCEPT_CHANGE_UPDATE) {
            d[k] = descs[k];
            c[i].desc = &d[k++];
        }
    }
    sc->ticks[sc->n_ticks++] = d;
    push_op(sc, TU_OP_TICK(c, count));
}

static void scenario_free(scenario *sc)
{
    for (size_t i = 0; i < sc->n_ticks; i++)
        free(sc->ticks[i]);
    free(sc->ops);
    memset(sc, 0, sizeof *sc);
}

/*
 * A tick of `count` distinct entities of `alive`: moves into the crowd,
 * out of bounds and across cells, turns, and updates of ranges and hiding.
 * The first `still` of alive[] only turn (they have no cones), so that the
 * calls the scenario makes of them later find them where it says.
 */
static void crowd_tick(scenario *sc, uint64_t *rnd, const percept_id *alive, size_t n_alive,
                       size_t still, size_t count)
{
    size_t order[256];
    percept_change changes[256];
    percept_entity_desc descs[256];
    size_t updates = 0;
    for (size_t i = 0; i < n_alive; i++)
        order[i] = i;
    for (size_t i = 0; i < count; i++) {
        size_t j = i + splitmix_next(rnd) % (n_alive - i), k = order[j];
        order[j] = order[i];
        order[i] = k;
        switch (k < still ? 4 : i % 6) {
        case 0:
        case 1:
        case 2:
            changes[i] = TU_CH_MOVE(alive[k], splitmix_between(rnd, 100, 160),
                                    splitmix_between(rnd, 100, 160), 0);
            break;
        case 3:
            changes[i] = TU_CH_MOVE(alive[k], splitmix_between(rnd, -500, 1500),
                                    splitmix_between(rnd, -100, 1100), 0);
            break;
        case 4:
            changes[i] = TU_CH_TURN(alive[k], 1, -1, 0);
            break;
        default:
            descs[updates] =
                tu_desc(splitmix_between(rnd, 90, 170), splitmix_between(rnd, 90, 170),
                        splitmix_between(rnd, 0, 90), 40, 0, (unsigned)(splitmix_next(rnd) % 8));
            changes[i] = TU_CH_UPDATE(alive[k], &descs[updates++]);
            break;
        }
    }
    push_tick(sc, changes, count, descs);
}

/*
 * A crowd that grows past the first capacities: slot arrays (64), the ID map
 * (32 entities per 64 buckets), pair lists and the event buffer (doubling from
 * 8), backend arrays; then moves across cells and out of bounds, ranges grown
 * to huge values, hide and show in the crowd, removal and re-adding of IDs.
 */
static void gen_crowd(scenario *sc)
{
    uint64_t rnd = 20240611;
    percept_id alive[256];
    size_t n_alive = 0;
    uint32_t next_index = 0;

    sc->name = "crowd";
    sc->moves_on = 1;
    snprintf(sc->ini_extra, sizeof sc->ini_extra,
             "move_events = on\n[sight]\nobserver_cell_size = 128\n"
             "[hearing]\nobserver_cell_size = 128\n[smell]\nobserver_cell_size = 128\n");
    for (int i = 0; i < 72; i++) {
        percept_id id = tu_spread_id(next_index++);
        double r[3];
        if (i % 5 < 3) {
            for (int s = 0; s < 3; s++)
                r[s] = splitmix_next(&rnd) % 5 == 0 ? 0 : splitmix_between(&rnd, 20, 80);
            unsigned hidden =
                splitmix_next(&rnd) % 7 == 0 ? (unsigned)(splitmix_next(&rnd) % 7 + 1) : 0;
            push_op(sc, TU_OP_ADD(id, splitmix_between(&rnd, 80, 200),
                                  splitmix_between(&rnd, 80, 200), r[0], r[1], r[2], hidden));
        } else {
            for (int s = 0; s < 3; s++)
                r[s] = splitmix_next(&rnd) % 3 == 0 ? 0 : splitmix_between(&rnd, 1, 40);
            push_op(sc, TU_OP_ADD(id, splitmix_between(&rnd, 0, 1024),
                                  splitmix_between(&rnd, 0, 1024), r[0], r[1], r[2], 0));
        }
        alive[n_alive++] = id;
    }
    /* Early, where a failure is quick to replay. */
    crowd_tick(sc, &rnd, alive, n_alive, 11, 30);
    /* Crowd members sit at indexes 0-2, 5-7, ... of alive[]. */
    percept_id c0 = alive[0], c1 = alive[1], c2 = alive[2], c5 = alive[5], c6 = alive[6];
    percept_id far = alive[3];
    push_op(sc, TU_OP_MOVE(c0, 900, 900));   /* out of the crowd, across cells */
    push_op(sc, TU_OP_MOVE(c0, 130, 131));   /* back in */
    push_op(sc, TU_OP_MOVE(far, 131, 130));  /* a far one into the crowd */
    push_op(sc, TU_OP_MOVE(c1, -300, 2000)); /* out of bounds */
    push_op(sc, TU_OP_MOVE(c1, 2500, -40));  /* out of bounds, elsewhere */
    push_op(sc, TU_OP_MOVE(c1, 140, 140));   /* back into the crowd */
    push_op(sc, TU_OP_MOVE(c2, 141, 140));   /* a small step */
    push_op(sc, TU_OP_RANGE(c2, S, 300));    /* ranges grow */
    push_op(sc, TU_OP_RANGE(c2, H, 2000));   /* past the bounds */
    push_op(sc, TU_OP_RANGE(c2, M, 1e6));    /* huge */
    push_op(sc, TU_OP_RANGE(c5, S, 1e12));   /* huge */
    push_op(sc, TU_OP_RANGE(c2, S, 0));      /* sense off */
    push_op(sc, TU_OP_RANGE(c2, S, 75));     /* back on */
    for (int s = 0; s < 3; s++)              /* hide in the crowd */
        push_op(sc, TU_OP_HIDE(c6, (percept_sense)s, 1));
    for (int i = 0; i < 8; i++) { /* the crowd grows meanwhile */
        percept_id id = tu_spread_id(next_index++);
        push_op(sc, TU_OP_ADD(id, splitmix_between(&rnd, 110, 150),
                              splitmix_between(&rnd, 110, 150), 70, 70, 70, 0));
        alive[n_alive++] = id;
    }
    for (int s = 0; s < 3; s++) /* show after hide in a crowd */
        push_op(sc, TU_OP_HIDE(c6, (percept_sense)s, 0));
    push_op(sc, TU_OP_REMOVE(c5)); /* removal, then reuse of its ID and slot */
    push_op(sc, TU_OP_REMOVE(alive[10]));
    push_op(sc, TU_OP_ADD(c5, 120, 120, 90, 90, 90, 0));
    push_op(sc, TU_OP_ADD(alive[10], 800, 200, 5, 5, 5, SB(H)));
    push_op(sc, TU_OP_REMOVE(0)); /* ID 0 leaves and comes back */
    push_op(sc, TU_OP_ADD(0, 125, 125, 100, 0, 100, SB(S)));
    push_op(sc, TU_OP_MOVE(c5, 125, 126));
    push_op(sc, TU_OP_MOVE(UINT32_MAX, 126, 125));
    crowd_tick(sc, &rnd, alive, n_alive, 0, 12);
    /* A few random calls over the whole population. */
    for (int i = 0; i < 16; i++) {
        percept_id id = alive[splitmix_next(&rnd) % n_alive];
        switch (splitmix_next(&rnd) % 4) {
        case 0:
            push_op(sc, TU_OP_MOVE(id, splitmix_between(&rnd, 0, 1024),
                                   splitmix_between(&rnd, 0, 1024)));
            break;
        case 1:
            push_op(sc, TU_OP_MOVE(id, splitmix_between(&rnd, 100, 160),
                                   splitmix_between(&rnd, 100, 160)));
            break;
        case 2:
            push_op(sc, TU_OP_RANGE(id, (percept_sense)(splitmix_next(&rnd) % 3),
                                    splitmix_between(&rnd, 0, 400)));
            break;
        default:
            push_op(sc, TU_OP_HIDE(id, (percept_sense)(splitmix_next(&rnd) % 3),
                                   (int)(splitmix_next(&rnd) % 2)));
            break;
        }
    }
}

/*
 * Observers whose ranges reach many cells of the observer grid: reach lists
 * are made in every cell, then grown past 8 sources; a huge-range newcomer,
 * moves of far-reaching observers across the grid, hide and show.
 */
static void gen_reach(scenario *sc)
{
    sc->name = "reach";
    snprintf(sc->ini_extra, sizeof sc->ini_extra,
             "move_events = off\n[sight]\nobserver_cell_size = 48\n"
             "[hearing]\nobserver_cell_size = 32\n[smell]\nobserver_cell_size = 48\n");
    for (uint32_t i = 0; i < 12; i++)
        push_op(sc, TU_OP_ADD(100 + i, 40 + 80.0 * i, 1000 - 75.0 * i, 3, 0, 0, 0));
    for (uint32_t i = 0; i < 10; i++)
        push_op(sc, TU_OP_RANGE(100 + i, S, i % 2 ? 1e6 : 900));
    push_op(sc, TU_OP_RANGE(100, H, 400));
    push_op(sc, TU_OP_MOVE(101, 1000, 20));                     /* a far-reaching observer moves */
    push_op(sc, TU_OP_MOVE(102, -5000, 3000));                  /* out of bounds */
    push_op(sc, TU_OP_ADD(200, 512, 512, 5000, 5000, 5000, 0)); /* reaches every cell */
    push_op(sc, TU_OP_HIDE(200, S, 1));
    push_op(sc, TU_OP_HIDE(200, S, 0));
    push_op(sc, TU_OP_RANGE(200, H, 10));
    push_op(sc, TU_OP_RANGE(200, H, 1e15));
    push_op(sc, TU_OP_REMOVE(101));
    push_op(sc, TU_OP_ADD(101, 0, 0, 2000, 0, 2000, 0));
    /* Far-reaching observers move across the grid together, 200 shrinks. */
    const percept_entity_desc small = tu_desc(500, 520, 30, 30, 0, 0);
    const percept_change tick[] = {TU_CH_MOVE(101, 900, 900, 0), TU_CH_MOVE(103, 10, 990, 0),
                                   TU_CH_UPDATE(200, NULL), TU_CH_MOVE(105, 512, 500, 0),
                                   TU_CH_MOVE(100, -40, 2000, 0)};
    push_tick(sc, tick, COUNT_OF(tick), &small);
}

/*
 * Two observers in one cell of the observer grid: A reaches a few cells, B
 * (added later) every cell, while eight far observers keep every reach list
 * full. Staging B grows the far cells' lists and only counts B in A's cells
 * (first in row order), so a failure there must take back exactly B's counts:
 * A must still be found when a target then steps into its range.
 */
static void gen_shared_cell(scenario *sc)
{
    sc->name = "shared-cell";
    sc->moves_on = 1;
    snprintf(sc->ini_extra, sizeof sc->ini_extra,
             "move_events = on\n[sight]\nobserver_cell_size = 96\n"
             "[hearing]\nobserver_cell_size = 96\n[smell]\nobserver_cell_size = 96\n");
    for (uint32_t i = 0; i < 8; i++)
        push_op(sc, TU_OP_ADD(10 + i, 96 * (3 + i % 4) + 48, 96 * (5 + i / 4) + 48, 1e6, 1e6, 1e6,
                              0));                       /* eight distinct cells */
    push_op(sc, TU_OP_ADD(1, 10, 10, 100, 100, 100, 0)); /* A */
    push_op(sc, TU_OP_ADD(3, 900, 900, 0, 0, 0, 0));     /* a target far from A */
    push_op(sc, TU_OP_ADD(2, 20, 20, 1e6, 0, 0, 0));     /* B: sight everywhere */
    push_op(sc, TU_OP_MOVE(3, 60, 15));                  /* into A's reach, the next cell */
    push_op(sc, TU_OP_MOVE(3, 900, 900));
    push_op(sc, TU_OP_RANGE(2, H, 1e6)); /* B: hearing everywhere */
    push_op(sc, TU_OP_MOVE(3, 15, 100));
    push_op(sc, TU_OP_MOVE(3, 900, 900));
    push_op(sc, TU_OP_REMOVE(2));
    push_op(sc, TU_OP_ADD(2, 30, 5, 0, 0, 1e6, 0)); /* B again: smell everywhere */
    push_op(sc, TU_OP_MOVE(3, 40, 40));
    push_op(sc, TU_OP_MOVE(1, 12, 12)); /* A moves within its cell */
    push_op(sc, TU_OP_MOVE(3, 100, 10));
    /* A and B move as the target comes back between them. */
    const percept_change tick[] = {TU_CH_MOVE(3, 60, 15, 0), TU_CH_MOVE(1, 20, 30, 0),
                                   TU_CH_MOVE(2, 900, 20, 0)};
    push_tick(sc, tick, COUNT_OF(tick), NULL);
}

/*
 * Version 2 in a world of five named senses: entities with heights, cones,
 * margins and masks join a crowd (past the first capacities), then every
 * version 2 call: updates of several fields at once, moves in height,
 * turns that sweep a cone across the crowd, and stimuli (whose working
 * room grows with the crowd that perceives them).
 */
static void gen_v2(scenario *sc)
{
    uint64_t rnd = 20250301;
    static const double fovs[] = {360, 90, 180, 270, 45};
    sc->name = "v2";
    sc->moves_on = 1;
    snprintf(sc->ini_extra, sizeof sc->ini_extra,
             "move_events = on\n[world]\nsenses = eyes ears nose touch heat\n"
             "[eyes]\nobserver_cell_size = 64\n[heat]\nobserver_cell_size = 128\n");
    for (uint32_t i = 0; i < 70; i++) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        d.x = splitmix_between(&rnd, 100, 220);
        d.y = splitmix_between(&rnd, 100, 220);
        d.z = (double)(splitmix_next(&rnd) % 7) - 3;
        d.facing[0] = splitmix_between(&rnd, -1, 1);
        d.facing[1] = splitmix_between(&rnd, -1, 1);
        d.tags = (uint32_t)(splitmix_next(&rnd) % 4);
        for (int s = 0; s < 5; s++) {
            percept_sense_params *p = &d.sense[s];
            p->range = splitmix_next(&rnd) % 4 == 0 ? 0 : splitmix_between(&rnd, 10, 70);
            p->margin = splitmix_next(&rnd) % 2 ? splitmix_between(&rnd, 0, 10) : 0;
            p->fov = fovs[(i + (uint32_t)s) % COUNT_OF(fovs)];
            p->ignore = s == 3 ? 1 : 0;
        }
        d.hidden = i % 9 == 0 ? PERCEPT_SENSE_BIT(4) : 0;
        push_op(sc, TU_OP_ADD_DESC(i + 1, d));
    }
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    d.x = 160;
    d.y = 160;
    d.facing[0] = 1;
    for (int s = 0; s < 5; s++)
        d.sense[s] = (percept_sense_params){200, 20, s % 2 ? 90 : 0, 0};
    push_op(sc, TU_OP_ADD_DESC(1000, d)); /* reaches the whole crowd */
    /* A tick of the crowd: moves in height, turns that sweep cones, updates;
     * early, where a failure is quick to replay. */
    percept_change tick[24];
    percept_entity_desc descs[24];
    size_t updates = 0;
    for (uint32_t i = 0; i < 24; i++) {
        percept_id id = 1 + 3 * i;
        if (i % 4 == 0) {
            tick[i] = TU_CH_TURN(id, splitmix_between(&rnd, -1, 1), 1, 0);
        } else if (i % 4 == 1) {
            descs[updates] = d;
            descs[updates].x = splitmix_between(&rnd, 140, 180);
            descs[updates].y = splitmix_between(&rnd, 140, 180);
            descs[updates].sense[i % 5].range = splitmix_between(&rnd, 0, 50);
            descs[updates].tags = i % 3;
            tick[i] = TU_CH_UPDATE(id, &descs[updates++]);
        } else {
            tick[i] = TU_CH_MOVE(id, splitmix_between(&rnd, 120, 200),
                                 splitmix_between(&rnd, 120, 200), (double)(i % 5) - 2);
        }
    }
    push_tick(sc, tick, COUNT_OF(tick), descs);
    for (int k = 0; k < 4; k++) /* its cones sweep round */
        push_op(sc, TU_OP_TURN(1000, k % 2 ? 0 : 1 - k, k % 2 ? 2 - k : 0, 0));
    d.sense[1].range = 30; /* range and margin at once: the margin keeps some */
    d.sense[1].margin = 60;
    d.tags = 3;
    push_op(sc, TU_OP_UPDATE(1000, d));
    d.x = 170;
    d.z = 5;
    d.sense[3].ignore = 0;
    push_op(sc, TU_OP_UPDATE(1000, d));            /* moved: MOVE events besides */
    push_op(sc, TU_OP_MOVE3(1000, 170, 160, -40)); /* straight down, out of most reaches */
    push_op(sc, TU_OP_MOVE3(1000, 170, 160, 0));
    push_op(sc, TU_OP_MOVE3(5, 160, 161, 2));
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.x = 160;
    st.y = 160;
    for (int s = 0; s < 5; s++) {
        st.sense = s;
        st.strength = s == 2 ? 3 : 0;
        st.has_source = s % 2;
        st.source = 1000;
        st.tags = s == 4 ? 1 : 0;
        push_op(sc, TU_OP_EMIT(st));
    }
    for (uint32_t i = 71; i < 90; i++) { /* the crowd grows: every list with it */
        percept_entity_desc e = d;
        e.x = splitmix_between(&rnd, 150, 170);
        e.y = splitmix_between(&rnd, 150, 170);
        e.facing[1] = 1;
        push_op(sc, TU_OP_ADD_DESC(i, e));
    }
    st.sense = 0;
    st.strength = 0;
    st.has_source = 0;
    push_op(sc, TU_OP_EMIT(st));
    push_op(sc, TU_OP_RANGE(1000, 2, 0));
    push_op(sc, TU_OP_HIDE(1000, 4, 1));
    push_op(sc, TU_OP_REMOVE(1000));
    push_op(sc, TU_OP_ADD_DESC(1000, d)); /* new: nothing kept by a margin */
}

/* ------------------------------------------------------------------------ */
/* The reference run                                                         */

typedef struct reference {
    tu_recorder events; /* of every call, in order */
    size_t *first;      /* [i]: index of call i's first event; [count]: the total */
    size_t *allocs;     /* [i]: the allocations made before call i; [count]: after all */
} reference;

static size_t follow_count(void)
{
    const char *env = getenv("PERCEPT_FAULT_FOLLOW");
    return env != NULL ? (size_t)strtoul(env, NULL, 10) : 6;
}

static percept_world *open_world(const char *backend, const scenario *sc, tu_fault_alloc *fa,
                                 tu_recorder *rec)
{
    return tu_open_faulty(backend, sc->ini_extra, rec, fa);
}

static void run_op_ok(percept_world *w, const scenario *sc, size_t i)
{
    int rc = tu_apply(w, &sc->ops[i]);
    if (rc != PERCEPT_OK) {
        char what[1200];
        tu_describe(NULL, what, sizeof what, &sc->ops[i]);
        print_error("scenario %s, call %zu (%s): %s: %s\n", sc->name, i, what,
                    percept_status_name(rc), percept_errmsg(w));
        fail();
    }
}

/* The scenario's calls, each held to the model: their events, and the allocations before each. */
static void reference_run(const char *backend, const scenario *sc, reference *ref)
{
    tu_fault_alloc fa;
    tu_recorder one;
    model m;
    tu_fault_init(&fa);
    tu_recorder_init(&one);
    tu_recorder_init(&ref->events);
    ref->first = calloc(sc->count + 1, sizeof *ref->first);
    ref->allocs = calloc(sc->count + 1, sizeof *ref->allocs);
    assert_true(ref->first != NULL && ref->allocs != NULL);
    percept_world *w = open_world(backend, sc, &fa, &one);
    tu_model_init(&m, sc->moves_on, w);
    for (size_t i = 0; i < sc->count; i++) {
        ref->first[i] = ref->events.count;
        ref->allocs[i] = fa.counted;
        assert_int_equal(tu_call(w, &one, &m, &sc->ops[i], sc->name), PERCEPT_OK);
        for (size_t k = 0; k < one.count; k++)
            tu_recorder_push(&ref->events, &one.events[k]);
    }
    ref->first[sc->count] = ref->events.count;
    ref->allocs[sc->count] = fa.counted;
    /* Else every failure below would be skipped: the world must allocate through fa. */
    assert_true(ref->allocs[0] > 0 && ref->allocs[sc->count] > ref->allocs[0]);
    tu_expect_world(&m, w, sc->name);
    percept_world_close(w);
    tu_expect_no_leak(&fa, "the reference run");
    tu_recorder_free(&one);
    model_free(&m);
}

static void reference_free(reference *ref)
{
    tu_recorder_free(&ref->events);
    free(ref->first);
    free(ref->allocs);
}

/* Fail unless the recorder holds exactly reference call i's events. */
static void expect_call_events(const tu_recorder *rec, const reference *ref, const scenario *sc,
                               size_t i, const char *when, size_t n)
{
    char what[1400], op_text[1200];
    tu_describe(NULL, op_text, sizeof op_text, &sc->ops[i]);
    snprintf(what, sizeof what, "scenario %s, call %zu (%s), %s (N = %zu)", sc->name, i, op_text,
             when, n);
    tu_expect_events(rec, ref->events.events + ref->first[i], ref->first[i + 1] - ref->first[i],
                     what);
}

/* ------------------------------------------------------------------------ */
/* Injection into each call of a scenario                                    */

typedef struct fault_stats {
    size_t injected; /* failures injected (and survived) */
    size_t calls;    /* calls injected into */
    size_t max_n;    /* the most allocations one call made */
} fault_stats;

/* Call i of the scenario fails at each of its allocations in turn; `m` holds
 * the state before it. */
static void inject_call(const char *backend, const scenario *sc, const reference *ref, size_t i,
                        const model *m, size_t follow, fault_stats *st)
{
    const size_t expected_allocs = ref->allocs[i + 1] - ref->allocs[i];
    char op_text[1200];
    tu_describe(m, op_text, sizeof op_text, &sc->ops[i]);

    for (size_t n = 1;; n++) {
        tu_fault_alloc fa;
        tu_recorder rec;
        tu_fault_init(&fa);
        tu_recorder_init(&rec);
        percept_world *w = open_world(backend, sc, &fa, &rec);
        for (size_t k = 0; k < i; k++)
            run_op_ok(w, sc, k);
        /* The replay must have allocated exactly as the reference did. */
        assert_int_equal(fa.counted, ref->allocs[i]);
        tu_recorder_clear(&rec);
        fa.fail_at = fa.counted + n;
        int rc = tu_apply(w, &sc->ops[i]);

        if (!fa.hit) {
            /* Past the last allocation: the call runs normally. */
            if (rc != PERCEPT_OK) {
                print_error("scenario %s, call %zu (%s), N = %zu beyond its allocations: %s: %s\n",
                            sc->name, i, op_text, n, percept_status_name(rc), percept_errmsg(w));
                fail();
            }
            expect_call_events(&rec, ref, sc, i, "no failure injected", n);
            if (n - 1 != expected_allocs) {
                print_error("scenario %s, call %zu (%s): %zu allocations here, %zu in the "
                            "reference run\n",
                            sc->name, i, op_text, n - 1, expected_allocs);
                fail();
            }
            percept_world_close(w);
            tu_expect_no_leak(&fa, "after a call without failure");
            tu_recorder_free(&rec);
            break;
        }

        /* The failure was injected: ENOMEM, a message, no events, the world as before. */
        char what[1400];
        snprintf(what, sizeof what, "scenario %s, call %zu (%s), allocation %zu failed", sc->name,
                 i, op_text, n);
        if (rc != PERCEPT_ENOMEM) {
            print_error("%s: returned %d (%s), expected PERCEPT_ENOMEM\n", what, rc,
                        percept_status_name(rc) ? percept_status_name(rc) : "?");
            fail();
        }
        if (percept_errmsg(w)[0] == '\0')
            fail_msg("%s: no message", what);
        tu_expect_no_events(&rec, what);
        tu_expect_world(m, w, what);

        /* The same call, the allocator healthy again, gives the reference events. */
        fa.fail_at = 0;
        tu_recorder_clear(&rec);
        rc = tu_apply(w, &sc->ops[i]);
        if (rc != PERCEPT_OK) {
            print_error("%s: the retry returned %s: %s\n", what, percept_status_name(rc),
                        percept_errmsg(w));
            fail();
        }
        expect_call_events(&rec, ref, sc, i, "the retry after a failure", n);
        for (size_t k = i + 1; k < sc->count && k <= i + follow; k++) {
            tu_recorder_clear(&rec);
            run_op_ok(w, sc, k);
            expect_call_events(&rec, ref, sc, k, "a later call after a failure", n);
        }
        percept_world_close(w);
        tu_expect_no_leak(&fa, what);
        tu_recorder_free(&rec);
        st->injected++;
        if (n > st->max_n)
            st->max_n = n;
    }
    st->calls++;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_scenario(const char *backend, void (*gen)(scenario *))
{
    double start = now_seconds();
    scenario sc;
    reference ref;
    fault_stats st = {0, 0, 0};
    memset(&sc, 0, sizeof sc);
    gen(&sc);

    /* Keep the plugin loaded between the many short-lived worlds. */
    tu_fault_alloc pin_fa;
    tu_recorder pin_rec;
    tu_fault_init(&pin_fa);
    tu_recorder_init(&pin_rec);
    percept_world *pin = open_world(backend, &sc, &pin_fa, &pin_rec);

    reference_run(backend, &sc, &ref);
    size_t follow = follow_count();
    model m; /* the state before call i */
    tu_model_init(&m, sc.moves_on, pin);
    for (size_t i = 0; i < sc.count; i++) {
        inject_call(backend, &sc, &ref, i, &m, follow, &st);
        assert_int_equal(tu_apply_model(&m, &sc.ops[i]), PERCEPT_OK);
    }
    model_free(&m);
    print_message("      %s/%s: %zu calls, %zu failures injected, at most %zu allocations in one "
                  "call (%.2f s)\n",
                  backend, sc.name, st.calls, st.injected, st.max_n, now_seconds() - start);

    percept_world_close(pin);
    tu_expect_no_leak(&pin_fa, "the pinning world");
    tu_recorder_free(&pin_rec);
    reference_free(&ref);
    scenario_free(&sc);
}

static void check_crowd(const char *backend)
{
    run_scenario(backend, gen_crowd);
}

static void check_reach(const char *backend)
{
    run_scenario(backend, gen_reach);
}

static void check_shared_cell(const char *backend)
{
    run_scenario(backend, gen_shared_cell);
}

static void check_v2(const char *backend)
{
    run_scenario(backend, gen_v2);
}

static void test_calls_crowd(void **state)
{
    (void)state;
    tu_for_each_backend(check_crowd);
}

static void test_calls_reach(void **state)
{
    (void)state;
    tu_for_each_backend(check_reach);
}

static void test_calls_shared_cell(void **state)
{
    (void)state;
    tu_for_each_backend(check_shared_cell);
}

static void test_calls_v2(void **state)
{
    (void)state;
    tu_for_each_backend(check_v2);
}

/* ------------------------------------------------------------------------ */
/* World creation                                                            */

/* A plugin's own parameter, so that its parsing allocates too. */
static const char *backend_param(const char *backend)
{
    if (strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0)
        return "cell_size = 24\n";
    if (strcmp(backend, "tower") == 0)
        return "tower_size = 48\n";
    return "";
}

/* The world works and gives its memory back. */
static void use_and_close(percept_world *w, tu_fault_alloc *fa, const char *what)
{
    percept_entity_desc a = tu_desc(10, 10, 0, 0, 0, 0), b = tu_desc(13, 14, 0, 0, 0, 0);
    for (int s = 0; s < percept_sense_count(w); s++)
        a.sense[s].range = 5;
    fa->fail_at = 0;
    TU_OK(w, percept_add(w, 1, &a));
    TU_OK(w, percept_add(w, 2, &b));
    for (int s = 0; s < percept_sense_count(w); s++)
        assert_int_equal(percept_perceives(w, 1, 2, (percept_sense)s), 1);
    percept_world_close(w);
    tu_expect_no_leak(fa, what);
}

typedef int (*open_fn)(percept_world **out, const char *source, const percept_options *options,
                       percept_error *error);

static int open_from_string(percept_world **out, const char *text, const percept_options *options,
                            percept_error *error)
{
    return percept_world_open_string(out, text, "<faults>", options, error);
}

/*
 * Fail allocation N of world creation for N = 1, 2, ... until creation no
 * longer reaches the failure. Each failure: ENOMEM (inside a plugin's
 * create() too), no world, nothing leaked.
 */
static size_t open_with_faults(const char *backend, open_fn open, const char *source,
                               const char *what)
{
    for (size_t n = 1;; n++) {
        tu_fault_alloc fa;
        percept_allocator allocator = {tu_fault_fn, &fa};
        percept_options options = PERCEPT_OPTIONS_INIT;
        percept_error error;
        static char dummy;
        percept_world *w = (percept_world *)(void *)&dummy;
        tu_fault_init(&fa);
        fa.fail_at = n;
        options.allocator = &allocator;
        memset(&error, 0, sizeof error);
        int rc = open(&w, source, &options, &error);
        if (!fa.hit) {
            if (rc != PERCEPT_OK) {
                print_error("%s, backend %s: creation without failure returned %s: %s\n", what,
                            backend, percept_status_name(rc), error.text);
                fail();
            }
            use_and_close(w, &fa, what);
            return n - 1;
        }
        if (rc != PERCEPT_ENOMEM || strstr(error.text, "out of memory") == NULL) {
            print_error("%s, backend %s, allocation %zu failed: returned %d (%s): %s\n", what,
                        backend, n, rc, percept_status_name(rc) ? percept_status_name(rc) : "?",
                        error.text);
            fail();
        }
        if (w != NULL) {
            print_error("%s, backend %s, allocation %zu failed: *out is not NULL\n", what, backend,
                        n);
            fail();
        }
        assert_int_equal(error.status, rc);
        if (error.text[0] == '\0') {
            print_error("%s, backend %s, allocation %zu failed: no message\n", what, backend, n);
            fail();
        }
        char leak_what[256];
        snprintf(leak_what, sizeof leak_what, "%s, backend %s, allocation %zu failed", what,
                 backend, n);
        tu_expect_no_leak(&fa, leak_what);
    }
}

static void check_open_string(const char *backend)
{
    char ini[2048], dir_buf[4096];
    const char *dir = first_plugin_dir(dir_buf, sizeof dir_buf);
    const char *param = backend_param(backend);
    /* Every kind of string the parser keeps: backend names, plugin_dir, parameters. */
    int len = snprintf(ini, sizeof ini,
                       "[percept]\nbackend = %s\n%s%s%smove_events = off\n"
                       "[world]\nmin_x = -100\nmin_y = -100\nmax_x = 900\nmax_y = 700\n"
                       "[sight]\nbackend = %s\nobserver_cell_size = 20\n%s"
                       "[hearing]\n%s"
                       "[smell]\nbackend = %s\n%s",
                       backend, dir ? "plugin_dir = " : "", dir ? dir : "", dir ? "\n" : "",
                       backend, param, param, backend, param);
    assert_true(len > 0 && (size_t)len < sizeof ini);
    size_t n = open_with_faults(backend, open_from_string, ini, "percept_world_open_string");
    print_message("      %s: world creation from a string: %zu allocations, each failed once\n",
                  backend, n);
}

/* A world of eight named senses, each with a section: every name is kept. */
static void check_open_senses(const char *backend)
{
    static const char *const names[] = {
        "sight", "hearing", "smell",   "touch",
        "heat",  "radio",   "Sonar-2", "a_sense_with_the_longest_name31"};
    char ini[2048];
    int len = snprintf(ini, sizeof ini, "[percept]\nbackend = %s\n[world]\nsenses =", backend);
    for (size_t s = 0; s < COUNT_OF(names); s++)
        len += snprintf(ini + len, sizeof ini - (size_t)len, " %s", names[s]);
    len += snprintf(ini + len, sizeof ini - (size_t)len, "\n");
    for (size_t s = 0; s < COUNT_OF(names); s++)
        len += snprintf(ini + len, sizeof ini - (size_t)len, "[%s]\nobserver_cell_size = %zu\n%s",
                        names[s], 8 + s, s % 3 ? "" : backend_param(backend));
    assert_true(len > 0 && (size_t)len < sizeof ini);
    size_t n = open_with_faults(backend, open_from_string, ini, "eight senses");
    print_message("      %s: a world of eight senses: %zu allocations, each failed once\n", backend,
                  n);
}

static char tmp_dir[] = "/tmp/percept-faults-XXXXXX";

/* From a file whose plugin_dir is relative to the file's directory. */
static void check_open_file(const char *backend)
{
    char dir_buf[4096], text[8192], path[sizeof tmp_dir + 32];
    const char *dir = first_plugin_dir(dir_buf, sizeof dir_buf);
    if (dir == NULL || dir[0] != '/')
        return;
    /* tmp_dir is /tmp/NAME: "../.." leads from it to the root. */
    int len =
        snprintf(text, sizeof text, "[percept]\nbackend = %s\nplugin_dir = ../..%s\n[hearing]\n%s",
                 backend, dir, backend_param(backend));
    assert_true(len > 0 && (size_t)len < sizeof text);
    snprintf(path, sizeof path, "%s/faults.ini", tmp_dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    size_t n = open_with_faults(backend, percept_world_open, path, "percept_world_open");
    unlink(path);
    print_message("      %s: world creation from a file: %zu allocations, each failed once\n",
                  backend, n);
}

static void test_world_open_string(void **state)
{
    (void)state;
    tu_for_each_backend(check_open_string);
}

static void test_world_open_file(void **state)
{
    (void)state;
    tu_for_each_backend(check_open_file);
}

static void test_world_open_senses(void **state)
{
    (void)state;
    tu_for_each_backend(check_open_senses);
}

/* ------------------------------------------------------------------------ */
/* The allocator itself, so that a passing run means something               */

static void test_allocator_counts(void **state)
{
    tu_fault_alloc fa;
    (void)state;
    tu_fault_init(&fa);
    void *p = tu_fault_fn(&fa, NULL, 10);
    assert_non_null(p);
    p = tu_fault_fn(&fa, p, 5); /* a shrink: not counted */
    assert_non_null(p);
    assert_int_equal(fa.counted, 1);
    fa.fail_at = 2;
    assert_null(tu_fault_fn(&fa, p, 50)); /* growth: counted, and failed */
    assert_true(fa.hit);
    assert_int_equal(fa.live_blocks, 1);
    assert_int_equal(fa.live_bytes, 5);
    p = tu_fault_fn(&fa, p, 50);
    assert_non_null(p);
    assert_int_equal(fa.live_bytes, 50);
    assert_null(tu_fault_fn(&fa, p, 0));
    tu_expect_no_leak(&fa, "the allocator's own test");
}

/* ------------------------------------------------------------------------ */
/* Reusing a slot allocates nothing                                           */

/*
 * 64 entities fill the slot arrays of the core and of every shipped backend
 * exactly; one removed and another added takes the freed slot, so the slot
 * count stays 64 and no array may grow: reserve() is told the count after
 * the change, not one more (which doubled a backend's per-slot arrays).
 * The entities stand apart with no ranges, so the add makes no pair either.
 */
static void check_slot_reuse(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, NULL, NULL, &fa);
    for (uint32_t i = 0; i < 64; i++)
        tu_add(w, i + 1, tu_desc(8 + 16 * (i % 8), 8 + 16 * (i / 8), 0, 0, 0, 0));
    percept_memory before, after;
    TU_OK(w, percept_memory_usage(w, &before));
    size_t counted = fa.counted;
    TU_OK(w, percept_remove(w, 30));
    tu_add(w, 1000, tu_desc(8 + 16 * (29 % 8), 8 + 16 * (29 / 8), 0, 0, 0, 0));
    TU_OK(w, percept_memory_usage(w, &after));
    if (after.backends != before.backends || after.total != before.total || fa.counted != counted) {
        print_error("%s: one remove and one add at 64 entities: backends %zu -> %zu bytes, "
                    "total %zu -> %zu bytes, %zu allocations\n",
                    backend, before.backends, after.backends, before.total, after.total,
                    fa.counted - counted);
        fail();
    }
    percept_world_close(w);
    tu_expect_no_leak(&fa, backend);
}

static void test_slot_reuse(void **state)
{
    (void)state;
    tu_for_each_backend(check_slot_reuse);
}

static int make_tmp_dir(void **state)
{
    (void)state;
    return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

static int remove_tmp_dir(void **state)
{
    char path[sizeof tmp_dir + 32];
    (void)state;
    snprintf(path, sizeof path, "%s/faults.ini", tmp_dir);
    unlink(path);
    return rmdir(tmp_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocator_counts), tu_backend_test(test_world_open_string),
        tu_backend_test(test_world_open_file),   tu_backend_test(test_calls_crowd),
        tu_backend_test(test_calls_reach),       tu_backend_test(test_calls_shared_cell),
        tu_backend_test(test_slot_reuse),        tu_backend_test(test_calls_v2),
        tu_backend_test(test_world_open_senses),
    };
    return cmocka_run_group_tests(tests, make_tmp_dir, remove_tmp_dir);
}
