/*
 * test_callback.c - calls made from inside the event callback: every change
 * is refused with PERCEPT_EBUSY and changes nothing, while queries are
 * allowed and already see the state after the whole call.
 *
 * Closing the world from inside the callback is deferred: the call stops
 * delivering, frees the world and returns PERCEPT_OK.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#define S PERCEPT_SIGHT

#define LV(o, t, s, x, y) tu_ev(PERCEPT_LEAVE, (o), (t), (s), (x), (y))

/* The changes attempt_changes() tries for each event. */
#define ATTEMPTS 18

/*
 * The world has a callback that checks what queries return and, when
 * `attempt` is set, tries every kind of change; the model (model.h) gets the
 * same calls: after each, the events and the world must be the model's.
 */
typedef struct fixture {
    percept_world *a;
    tu_recorder rec;
    model m;
    int attempt;
    size_t expect_count; /* the entity count after the current call */
    int depth;
    size_t attempts;
    size_t problems;
    char first_problem[512];
} fixture;

static void problem(fixture *f, const percept_event *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(fixture *f, const percept_event *e, const char *fmt, ...)
{
    if (f->problems++ == 0) {
        char what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(f->first_problem, sizeof f->first_problem, "during event %d of %u %u sense %d: %s",
                 (int)e->kind, (unsigned)e->observer, (unsigned)e->target, (int)e->sense, what);
    }
}

static int list_has(const percept_world *w, percept_id id, percept_sense sense, int by_target,
                    percept_id wanted, int *status)
{
    percept_id ids[64];
    size_t n = 0;
    *status = by_target ? percept_perceived_by(w, id, sense, ids, 64, &n)
                        : percept_perceived(w, id, sense, ids, 64, &n);
    if (*status != PERCEPT_OK || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ids[i] == wanted)
            return 1;
    return 0;
}

/* What the queries must say while the event is delivered: the state after the call. */
static void check_view(fixture *f, const percept_event *e)
{
    const percept_world *w = f->a;
    int has_o = percept_contains(w, e->observer);
    int has_t = percept_contains(w, e->target);
    int rc, p;

    if (percept_entity_count(w) != f->expect_count)
        problem(f, e, "entity count %zu, expected %zu", percept_entity_count(w), f->expect_count);
    if (e->kind == PERCEPT_STIMULUS) {
        /* A stimulus changes nothing: its observer is in the world, and so is its source. */
        if (!has_o || (e->has_source && !has_t))
            problem(f, e, "the observer or the source of a stimulus is not in the world");
        return;
    }
    p = percept_perceives(w, e->observer, e->target, e->sense);
    if (e->kind == PERCEPT_ENTER || e->kind == PERCEPT_MOVE) {
        if (!has_o || !has_t)
            problem(f, e, "an entity of a perceived pair is not in the world");
        if (p != 1)
            problem(f, e, "percept_perceives returned %d, expected 1", p);
        if (!list_has(w, e->observer, e->sense, 0, e->target, &rc))
            problem(f, e, "target missing from percept_perceived (status %d)", rc);
        if (!list_has(w, e->target, e->sense, 1, e->observer, &rc))
            problem(f, e, "observer missing from percept_perceived_by (status %d)", rc);
    } else if (has_o && has_t) {
        if (p != 0)
            problem(f, e, "percept_perceives returned %d after leave, expected 0", p);
        if (list_has(w, e->observer, e->sense, 0, e->target, &rc) || rc != PERCEPT_OK)
            problem(f, e, "target still in percept_perceived (status %d)", rc);
        if (list_has(w, e->target, e->sense, 1, e->observer, &rc) || rc != PERCEPT_OK)
            problem(f, e, "observer still in percept_perceived_by (status %d)", rc);
    } else if (p != PERCEPT_ENOENT) {
        problem(f, e, "percept_perceives with a removed entity returned %d, expected ENOENT", p);
    }
    /* The other reading calls answer too (docs/GUARANTEES.md, section 3). */
    percept_memory m;
    percept_bounds b;
    if (percept_memory_usage(w, &m) != PERCEPT_OK || m.total == 0 || m.entities == 0)
        problem(f, e, "percept_memory_usage failed or counted nothing inside the callback");
    if (percept_get_bounds(w, &b) != PERCEPT_OK || percept_backend_name(w, e->sense) == NULL ||
        percept_backend_path(w, e->sense) == NULL || percept_sense_name(w, e->sense) == NULL)
        problem(f, e, "percept_get_bounds or percept_backend_name/path failed inside the callback");
    if (has_t) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        rc = percept_get_entity(w, e->target, &d);
        if (rc != PERCEPT_OK || d.x != e->x || d.y != e->y || d.z != e->z)
            problem(f, e, "percept_get_entity(target) returned %d at (%.17g, %.17g, %.17g)", rc,
                    d.x, d.y, d.z);
    }
    percept_id ids[64];
    size_t n = 0;
    if (has_t && (percept_query(w, e->x, e->y, e->z, 0, ids, 64, &n) != PERCEPT_OK || n == 0))
        problem(f, e, "percept_query at the target's position failed or found nothing");
}

static void expect_busy(fixture *f, const percept_event *e, int rc, const char *what)
{
    const char *msg;
    f->attempts++;
    if (rc != PERCEPT_EBUSY) {
        problem(f, e, "%s returned %d (%s), expected PERCEPT_EBUSY", what, rc,
                percept_status_name(rc) ? percept_status_name(rc) : "?");
        return;
    }
    msg = percept_errmsg(f->a);
    if (msg == NULL || msg[0] == '\0')
        problem(f, e, "%s: percept_errmsg() is empty after PERCEPT_EBUSY", what);
}

/* Every change the world offers, aimed at the entities of the event being delivered. */
static void attempt_changes(fixture *f, const percept_event *e)
{
    percept_world *w = f->a;
    percept_entity_desc d = tu_desc(e->x, e->y, 50, 50, 50, 0);

    expect_busy(f, e, percept_add(w, 4242, &d), "percept_add(new entity)");
    expect_busy(f, e, percept_add(w, e->target, &d), "percept_add(the target's ID)");
    expect_busy(f, e, percept_remove(w, e->target), "percept_remove(target)");
    expect_busy(f, e, percept_remove(w, e->observer), "percept_remove(observer)");
    expect_busy(f, e, percept_move(w, e->target, 1000, 1000), "percept_move(target)");
    expect_busy(f, e, percept_move(w, e->observer, e->x, e->y), "percept_move(observer)");
    expect_busy(f, e, percept_set_range(w, e->observer, e->sense, 0),
                "percept_set_range(observer, 0)");
    expect_busy(f, e, percept_set_range(w, e->observer, e->sense, 1e6),
                "percept_set_range(observer, 1e6)");
    expect_busy(f, e, percept_set_range(w, e->target, PERCEPT_SMELL, 3),
                "percept_set_range(target)");
    expect_busy(f, e, percept_set_hidden(w, e->target, e->sense, 1),
                "percept_set_hidden(target, 1)");
    expect_busy(f, e, percept_set_hidden(w, e->target, e->sense, 0),
                "percept_set_hidden(target, 0)");
    expect_busy(f, e, percept_set_hidden(w, e->observer, PERCEPT_HEARING, 1),
                "percept_set_hidden(observer)");
    expect_busy(f, e, percept_update(w, e->observer, &d), "percept_update(observer)");
    expect_busy(f, e, percept_move3(w, e->target, e->x, e->y, e->z + 1), "percept_move3(target)");
    expect_busy(f, e, percept_turn(w, e->observer, 0, 1, 0), "percept_turn(observer)");
    const percept_change tick[] = {TU_CH_MOVE(e->target, 1000, 1000, 0),
                                   TU_CH_UPDATE(e->observer, &d)};
    expect_busy(f, e, percept_tick(w, tick, COUNT_OF(tick)), "percept_tick(target, observer)");
    expect_busy(f, e, percept_tick(w, NULL, 0), "percept_tick(nothing)");
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.x = e->x;
    st.y = e->y;
    expect_busy(f, e, percept_emit(w, &st), "percept_emit()");
}

static void nesting_callback(void *user, const percept_event *event)
{
    fixture *f = user;
    tu_recorder_push(&f->rec, event);
    if (++f->depth > 1) {
        /* Only a nested change that wrongly succeeded can deliver events in here. */
        problem(f, event, "the callback was re-entered: a change made inside it was applied");
        f->depth--;
        return;
    }
    check_view(f, event);
    if (f->attempt)
        attempt_changes(f, event);
    f->depth--;
}

static void fixture_open(fixture *f, const char *backend, int attempt)
{
    memset(f, 0, sizeof *f);
    tu_recorder_init(&f->rec);
    model_init(&f->m, 1);
    f->a = tu_open(backend, "move_events = on\n", NULL);
    assert_int_equal(percept_set_event_callback(f->a, nesting_callback, f), PERCEPT_OK);
    f->attempt = attempt;
}

static void fixture_close(fixture *f)
{
    percept_world_close(f->a);
    tu_recorder_free(&f->rec);
    model_free(&f->m);
}

/*
 * One call on the world, whose callback tries its nested changes, and on
 * the model: the call succeeds, nothing went wrong inside the callback, each
 * event made the full set of attempts, and the events and the world are the
 * model's. Returns the number of events.
 */
static size_t run(fixture *f, tu_op o, const char *what)
{
    f->expect_count = f->m.alive + (o.kind == TU_ADD) - (o.kind == TU_REMOVE);
    f->attempts = 0;
    f->problems = 0;
    assert_int_equal(tu_call(f->a, &f->rec, &f->m, &o, what), PERCEPT_OK);
    if (f->problems != 0)
        fail_msg("%s: %zu problem(s) inside the callback; the first: %s", what, f->problems,
                 f->first_problem);
    if (f->attempt)
        assert_int_equal(f->attempts, ATTEMPTS * f->rec.count);
    tu_expect_world(&f->m, f->a, what);
    return f->rec.count;
}

/* The entities every test starts from: 1 and 3 far apart, 2 near 1. */
static void populate(fixture *f)
{
    int attempt = f->attempt;
    f->attempt = 0;
    run(f, TU_OP_ADD(1, 100, 100, 10, 10, 10, 0), "add 1");
    run(f, TU_OP_ADD(3, 300, 300, 0, 0, 0, 0), "add 3");
    run(f, TU_OP_ADD(2, 105, 100, 10, 0, 0, 0), "add 2");
    f->attempt = attempt;
}

/* ------------------------------------------------------------------------ */

static void check_nested(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);
    f.attempt = 1;
    assert_true(run(&f, TU_OP_ADD(4, 100, 103, 0, 0, 5, 0), "add 4 with nested changes") > 0);
    assert_int_equal(percept_contains(f.a, 4242), 0);
    assert_true(run(&f, TU_OP_MOVE(2, 108, 100), "move 2 nearby with nested changes") > 0);
    assert_true(run(&f, TU_OP_MOVE(2, 300, 306), "move 2 away with nested changes") > 0);
    assert_true(run(&f, TU_OP_RANGE(1, PERCEPT_SIGHT, 0), "1's sight off with nested changes") > 0);
    assert_true(run(&f, TU_OP_RANGE(1, PERCEPT_SIGHT, 300), "1's sight 300 with nested changes") >
                0);
    assert_true(run(&f, TU_OP_HIDE(4, PERCEPT_SIGHT, 1), "hide 4 from sight with nested changes") >
                0);
    assert_true(run(&f, TU_OP_HIDE(4, PERCEPT_HEARING, 1), "hide 4 with nested changes") > 0);
    assert_true(run(&f, TU_OP_HIDE(4, PERCEPT_HEARING, 0), "show 4 with nested changes") > 0);
    assert_true(run(&f, TU_OP_MOVE3(4, 100, 103, 1), "move 4 up with nested changes") > 0);
    /* 1 hears 4 (3 ahead, 1 up) in a 90 degree cone facing +y, not facing -y. */
    percept_entity_desc d = tu_desc(100, 100, 300, 10, 10, 0);
    d.facing[1] = -1;
    d.sense[PERCEPT_HEARING].fov = 90;
    assert_true(run(&f, TU_OP_UPDATE(1, d), "a cone for 1 with nested changes") > 0);
    assert_true(run(&f, TU_OP_TURN(1, 0, 1, 0), "turn 1 with nested changes") > 0);
    /* 2 steps behind 1 as 1 turns away; 4 rises; 3 stays: a tick. */
    const percept_change tick[] = {TU_CH_MOVE(2, 100, 95, 0), TU_CH_TURN(1, 0, -1, 0),
                                   TU_CH_MOVE(4, 100, 103, 2), TU_CH_MOVE(3, 300, 300, 0)};
    assert_true(run(&f, TU_OP_TICK(tick, COUNT_OF(tick)), "a tick with nested changes") > 0);
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = PERCEPT_SMELL;
    st.x = 101;
    st.y = 101;
    assert_true(run(&f, TU_OP_EMIT(st), "a stimulus with nested changes") > 0);
    assert_true(run(&f, TU_OP_REMOVE(2), "remove 2 with nested changes") > 0);
    assert_true(run(&f, TU_OP_REMOVE(1), "remove observer 1 with nested changes") > 0);
    fixture_close(&f);
}

static void test_nested_changes_refused(void **state)
{
    (void)state;
    tu_for_each_backend(check_nested);
}

/* Queries alone, over calls that deliver every kind of event. */
static void check_queries_inside(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);
    run(&f, TU_OP_MOVE(1, 103, 104), "move 1");
    run(&f, TU_OP_MOVE(2, 296, 297), "move 2 next to 3");
    run(&f, TU_OP_RANGE(3, PERCEPT_SMELL, 5), "3 gains smell");
    run(&f, TU_OP_HIDE(2, PERCEPT_SMELL, 1), "hide 2 from smell");
    run(&f, TU_OP_MOVE3(2, 296, 297, 2), "move 2 up");
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = PERCEPT_SMELL;
    st.x = 298;
    st.y = 298;
    st.has_source = 1;
    st.source = 2;
    run(&f, TU_OP_EMIT(st), "a scent from 2");
    run(&f, TU_OP_REMOVE(3), "remove 3");
    fixture_close(&f);
}

static void test_queries_inside_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_queries_inside);
}

/* After calls refused inside the callback, the next outer calls work normally. */
static void check_changes_after_return(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 1);
    populate(&f);
    run(&f, TU_OP_ADD(5, 101, 100, 1, 1, 1, 0), "add 5 with nested changes");
    f.attempt = 0;
    /* What the nested calls tried, now from outside: they all take effect. */
    assert_true(run(&f, TU_OP_ADD(4242, 105, 100, 50, 50, 50, 0), "add 4242") > 0);
    assert_true(run(&f, TU_OP_REMOVE(4242), "remove 4242") > 0);
    assert_true(run(&f, TU_OP_MOVE(2, 1000, 1000), "move 2 away") > 0);
    run(&f, TU_OP_RANGE(1, PERCEPT_SIGHT, 0), "1's sight off");
    run(&f, TU_OP_REMOVE(2), "remove 2");
    f.attempt = 1;
    assert_true(run(&f, TU_OP_ADD(2, 100, 101, 0, 0, 0, 0), "add 2 again with nested changes") > 0);
    fixture_close(&f);
}

static void test_changes_work_after_return(void **state)
{
    (void)state;
    tu_for_each_backend(check_changes_after_return);
}

/* Without a callback calls still work; setting one again resumes delivery. */
static void check_no_callback(const char *backend)
{
    tu_recorder rec;
    percept_world *w;
    percept_entity_desc d = tu_desc(0, 0, 10, 0, 0, 0);
    tu_recorder_init(&rec);
    w = tu_open(backend, "move_events = on\n", &rec);

    assert_int_equal(percept_set_event_callback(w, NULL, NULL), PERCEPT_OK);
    TU_OK(w, percept_add(w, 1, &d));
    d.x = 3;
    TU_OK(w, percept_add(w, 2, &d));
    TU_OK(w, percept_move(w, 2, 4, 0));
    assert_int_equal(rec.count, 0);
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SIGHT), 1);

    assert_int_equal(percept_set_event_callback(w, tu_record, &rec), PERCEPT_OK);
    TU_OK(w, percept_move(w, 2, 20, 0));
    {
        const percept_event exp[] = {LV(1, 2, S, 20, 0), LV(2, 1, S, 0, 0)};
        tu_expect_events(&rec, exp, COUNT_OF(exp), "events resume with the callback");
    }
    percept_world_close(w);
    tu_recorder_free(&rec);
}

static void test_no_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_no_callback);
}

/* ------------------------------------------------------------------------ */
/* Closing the world from inside its callback                                */

/* The callback closes the world at event number close_at (1-based; 0:
 * never), then reads it once; events after the close are counted apart. */
typedef struct closer {
    percept_world *w;
    size_t close_at;
    size_t events;      /* delivered up to and including the close */
    size_t after_close; /* delivered after it: must stay 0 */
    int read_after;     /* percept_entity_count() inside, after the close */
} closer;

static void close_in_callback(void *user, const percept_event *ev)
{
    (void)ev;
    closer *c = user;
    if (c->close_at != 0 && c->events == c->close_at) {
        c->after_close++;
        return;
    }
    c->events++;
    if (c->events == c->close_at) {
        percept_world_close(c->w);
        percept_world_close(c->w); /* a second close inside is the same request */
        c->read_after = (int)percept_entity_count(c->w);
    }
}

enum {
    CLOSE_ADD,
    CLOSE_MOVE,
    CLOSE_REMOVE,
    CLOSE_RANGE,
    CLOSE_HIDE,
    CLOSE_TICK,
    CLOSE_UPDATE,
    CLOSE_MOVE3,
    CLOSE_TURN,
    CLOSE_EMIT,
    CLOSE_KINDS
};
static const char *const close_kind_name[CLOSE_KINDS] = {
    "add", "move", "remove", "set_range", "set_hidden", "tick", "update", "move3", "turn", "emit"};

/*
 * Four entities in range of each other (facing along x, smell in a 270
 * degree cone, so that entity 4 smells no one behind it until it turns),
 * then one call of `kind` with the callback closing at event `close_at`.
 * Returns the events delivered; the world is closed and checked for leaks
 * before returning.
 */
static size_t run_close(const char *backend, int kind, size_t close_at)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, "move_events = on\n", NULL, &fa);
    for (percept_id id = 1; id <= 4; id++) {
        percept_entity_desc e = tu_desc(id, 0, 10, 8, 5, 0);
        e.facing[0] = 1;
        e.sense[PERCEPT_SMELL].fov = 270;
        tu_add(w, id, e);
    }
    closer c = {.w = w, .close_at = close_at};
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.x = 2.5;
    st.y = 1;
    assert_int_equal(percept_set_event_callback(w, close_in_callback, &c), PERCEPT_OK);
    percept_entity_desc d = tu_desc(2.5, 1, 10, 8, 5, 0);
    const percept_change tick[] = {TU_CH_MOVE(1, 30, 0, 0), TU_CH_MOVE(2, 31, 0, 0),
                                   TU_CH_MOVE(3, 60, 0, 0), TU_CH_TURN(4, -1, 0, 0)};
    int rc;
    switch (kind) {
    case CLOSE_ADD:
        rc = percept_add(w, 5, &d);
        break;
    case CLOSE_MOVE:
        rc = percept_move(w, 2, 2, 3);
        break;
    case CLOSE_REMOVE:
        rc = percept_remove(w, 3);
        break;
    case CLOSE_RANGE:
        rc = percept_set_range(w, 4, PERCEPT_SIGHT, 0);
        break;
    case CLOSE_HIDE:
        rc = percept_set_hidden(w, 1, PERCEPT_HEARING, 1);
        break;
    case CLOSE_TICK:
        rc = percept_tick(w, tick, COUNT_OF(tick));
        break;
    case CLOSE_UPDATE:
        rc = percept_update(w, 2, &d);
        break;
    case CLOSE_MOVE3:
        rc = percept_move3(w, 1, 1, 0, 9);
        break;
    case CLOSE_TURN:
        rc = percept_turn(w, 4, -1, 0, 0);
        break;
    default:
        rc = percept_emit(w, &st);
        break;
    }
    if (rc != PERCEPT_OK) {
        print_error("%s: %s with a close at event %zu returned %d\n", backend,
                    close_kind_name[kind], close_at, rc);
        fail();
    }
    if (close_at != 0 && c.events >= close_at) {
        /* The world is gone: nothing more was delivered, and no block is left. */
        assert_int_equal(c.after_close, 0);
        assert_int_equal(c.events, close_at);
        assert_int_equal(c.read_after, kind == CLOSE_ADD ? 5 : kind == CLOSE_REMOVE ? 3 : 4);
        tu_expect_no_leak(&fa, "closed inside the callback");
    } else {
        percept_world_close(w);
        tu_expect_no_leak(&fa, "closed after the call");
    }
    return c.events;
}

static void check_close_inside(const char *backend)
{
    for (int kind = 0; kind < CLOSE_KINDS; kind++) {
        size_t all = run_close(backend, kind, 0);
        assert_true(all >= 3); /* so first, middle and last differ */
        const size_t at[] = {1, all / 2 + 1, all};
        for (size_t i = 0; i < COUNT_OF(at); i++)
            assert_int_equal(run_close(backend, kind, at[i]), at[i]);
    }
}

static void test_close_inside_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_close_inside);
}

/* ------------------------------------------------------------------------ */
/* A callback that writes through its event pointer                          */

/* Records each event, then scribbles over it (casting its const away). */
static void record_and_scribble(void *user, const percept_event *ev)
{
    tu_record(user, ev);
    percept_event *e = (percept_event *)(void *)ev;
    e->kind = PERCEPT_LEAVE;
    e->sense = PERCEPT_SMELL;
    e->observer = e->target = 999;
    e->x = e->y = e->z = -1;
    e->has_source = 0;
}

/* The events of one call must not depend on what the callback did to the
 * ones before: each event is a struct of its own. */
static void check_scribbling_callback(const char *backend)
{
    tu_recorder rec;
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, NULL, NULL);
    assert_int_equal(percept_set_event_callback(w, record_and_scribble, &rec), PERCEPT_OK);
    tu_add(w, 1, tu_desc(0, 0, 10, 10, 10, 0));
    tu_recorder_clear(&rec);
    tu_add(w, 2, tu_desc(3, 4, 0, 0, 0, 0));
    const percept_event expected[] = {
        tu_ev(PERCEPT_ENTER, 1, 2, PERCEPT_SIGHT, 3, 4),
        tu_ev(PERCEPT_ENTER, 1, 2, PERCEPT_HEARING, 3, 4),
        tu_ev(PERCEPT_ENTER, 1, 2, PERCEPT_SMELL, 3, 4),
    };
    tu_expect_events(&rec, expected, 3, "a callback that writes to its events");
    percept_world_close(w);
    tu_recorder_free(&rec);
}

static void test_scribbling_callback(void **state)
{
    (void)state;
    tu_for_each_backend(check_scribbling_callback);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_nested_changes_refused),
        tu_backend_test(test_queries_inside_callback),
        tu_backend_test(test_changes_work_after_return),
        tu_backend_test(test_no_callback),
        tu_backend_test(test_close_inside_callback),
        tu_backend_test(test_scribbling_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
