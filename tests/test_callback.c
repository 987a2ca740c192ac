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
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define SB(s) PERCEPT_SENSE_BIT(s)

#define EN(o, t, s, x, y) tu_ev(PERCEPT_ENTER, (o), (t), (s), (x), (y))
#define LV(o, t, s, x, y) tu_ev(PERCEPT_LEAVE, (o), (t), (s), (x), (y))
#define MV(o, t, s, x, y) tu_ev(PERCEPT_MOVE, (o), (t), (s), (x), (y))
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The IDs the tests use, plus ones that must never appear. */
static const percept_id watched[] = {1, 2, 3, 4, 99, 4242};

/*
 * World A has a callback that checks what queries return and, when
 * `attempt` is set, tries every kind of change. World B, its twin, gets the
 * same calls with a plain recorder: after each call both must agree.
 */
typedef struct fixture {
    percept_world *a;
    tu_recorder rec;
    int attempt;
    size_t expect_count; /* the entity count after the current call */
    int depth;
    size_t attempts;
    size_t problems;
    char first_problem[512];

    percept_world *b;
    tu_recorder brec;
} fixture;

static void problem(fixture *f, const percept_event *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void problem(fixture *f, const percept_event *e, const char *fmt, ...)
{
    if (f->problems++ == 0) {
        char ev[160], what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        tu_format_event(ev, sizeof ev, e);
        snprintf(f->first_problem, sizeof f->first_problem, "during event %s: %s", ev, what);
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
        percept_backend_path(w, e->sense) == NULL)
        problem(f, e, "percept_get_bounds or percept_backend_name/path failed inside the callback");
    if (has_t) {
        percept_entity_desc d;
        rc = percept_get_entity(w, e->target, &d);
        if (rc != PERCEPT_OK || d.x != e->x || d.y != e->y)
            problem(f, e, "percept_get_entity(target) returned %d at (%.17g, %.17g)", rc, d.x, d.y);
    }
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
    tu_recorder_init(&f->brec);
    f->a = tu_open(backend, "move_events = on\n", NULL);
    assert_int_equal(percept_set_event_callback(f->a, nesting_callback, f), PERCEPT_OK);
    f->b = tu_open(backend, "move_events = on\n", &f->brec);
    f->attempt = attempt;
}

static void fixture_close(fixture *f)
{
    percept_world_close(f->a);
    percept_world_close(f->b);
    tu_recorder_free(&f->rec);
    tu_recorder_free(&f->brec);
}

typedef tu_op op;

/*
 * Run one call on both worlds; A's callback tries its nested calls. Then
 * check: the call succeeded, nothing went wrong inside the callback, A's
 * events are the expected ones, and A equals its twin B in every query.
 */
static void run(fixture *f, const op *o, size_t count_after, const percept_event *expected,
                size_t n_expected, const char *what)
{
    tu_snapshot sa, sb;
    int rc;

    tu_recorder_clear(&f->rec);
    tu_recorder_clear(&f->brec);
    f->expect_count = count_after;
    f->attempts = 0;
    f->problems = 0;
    rc = tu_apply(f->a, o);
    if (rc != PERCEPT_OK) {
        print_error("%s: the outer call returned %d: %s\n", what, rc, percept_errmsg(f->a));
        fail();
    }
    if (f->problems != 0) {
        print_error("%s: %zu problem(s) inside the callback; the first: %s\n", what, f->problems,
                    f->first_problem);
        fail();
    }
    tu_expect_events(&f->rec, expected, n_expected, what);
    /* Each delivered event made the full set of nested attempts. */
    if (f->attempt)
        assert_int_equal(f->attempts, 12 * n_expected);

    TU_OK(f->b, tu_apply(f->b, o));
    tu_expect_events(&f->brec, f->rec.events, f->rec.count, "the twin world without nesting");
    tu_snapshot_take(f->a, watched, COUNT_OF(watched), &sa);
    tu_snapshot_take(f->b, watched, COUNT_OF(watched), &sb);
    assert_true(tu_snapshot_equal(&sa, &sb, what));
    tu_snapshot_free(&sa);
    tu_snapshot_free(&sb);
}

static op op_add(percept_id id, double x, double y, double s, double h, double m, unsigned hidden)
{
    op o;
    memset(&o, 0, sizeof o);
    o.kind = TU_ADD;
    o.id = id;
    o.desc = tu_desc(x, y, s, h, m, hidden);
    return o;
}

static op op_move(percept_id id, double x, double y)
{
    op o;
    memset(&o, 0, sizeof o);
    o.kind = TU_MOVE;
    o.id = id;
    o.x = x;
    o.y = y;
    return o;
}

static op op_remove(percept_id id)
{
    op o;
    memset(&o, 0, sizeof o);
    o.kind = TU_REMOVE;
    o.id = id;
    return o;
}

static op op_range(percept_id id, percept_sense sense, double r)
{
    op o;
    memset(&o, 0, sizeof o);
    o.kind = TU_RANGE;
    o.id = id;
    o.sense = sense;
    o.value = r;
    return o;
}

static op op_hide(percept_id id, percept_sense sense, int hidden)
{
    op o;
    memset(&o, 0, sizeof o);
    o.kind = TU_HIDE;
    o.id = id;
    o.sense = sense;
    o.value = hidden;
    return o;
}

#define RUN(f, o, count_after, what, ...)                                                          \
    do {                                                                                           \
        const op op_ = (o);                                                                        \
        const percept_event exp_[] = {__VA_ARGS__};                                                \
        run((f), &op_, (count_after), exp_, COUNT_OF(exp_), (what));                               \
    } while (0)

#define RUN_NONE(f, o, count_after, what)                                                          \
    do {                                                                                           \
        const op op_ = (o);                                                                        \
        run((f), &op_, (count_after), NULL, 0, (what));                                            \
    } while (0)

/* The entities every test starts from: 1 and 3 far apart, no events yet. */
static void populate(fixture *f)
{
    int attempt = f->attempt;
    f->attempt = 0;
    RUN_NONE(f, op_add(1, 100, 100, 10, 10, 10, 0), 1, "add 1");
    RUN_NONE(f, op_add(3, 300, 300, 0, 0, 0, 0), 2, "add 3");
    f->attempt = attempt;
}

/* Entity descriptions after the calls, checked field by field. */
static void expect_entity(percept_world *w, percept_id id, percept_entity_desc want)
{
    percept_entity_desc d;
    assert_int_equal(percept_get_entity(w, id, &d), PERCEPT_OK);
    if (d.x != want.x || d.y != want.y || d.range[0] != want.range[0] ||
        d.range[1] != want.range[1] || d.range[2] != want.range[2] || d.hidden != want.hidden) {
        print_error("entity %u: got (%g, %g) ranges %g %g %g hidden %u, expected (%g, %g) "
                    "ranges %g %g %g hidden %u\n",
                    (unsigned)id, d.x, d.y, d.range[0], d.range[1], d.range[2], d.hidden, want.x,
                    want.y, want.range[0], want.range[1], want.range[2], want.hidden);
        fail();
    }
}

/* ------------------------------------------------------------------------ */

static void check_during_add(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 1);
    populate(&f);

    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2 with nested changes", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    assert_int_equal(percept_contains(f.a, 4242), 0);
    expect_entity(f.a, 1, tu_desc(100, 100, 10, 10, 10, 0));
    expect_entity(f.a, 2, tu_desc(105, 100, 10, 0, 0, 0));
    expect_entity(f.a, 3, tu_desc(300, 300, 0, 0, 0, 0));
    assert_int_equal(percept_perceives(f.a, 1, 2, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_perceives(f.a, 2, 1, PERCEPT_SIGHT), 1);
    fixture_close(&f);
}

static void test_nested_during_add(void **state)
{
    (void)state;
    tu_for_each_backend(check_during_add);
}

static void check_during_move(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);
    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    f.attempt = 1;

    /* 2 stays in 1's ranges: MOVE events, and 2 keeps seeing 1 (no event as observer). */
    RUN(&f, op_move(2, 108, 100), 3, "move 2 nearby with nested changes", MV(1, 2, S, 108, 100),
        MV(1, 2, H, 108, 100), MV(1, 2, M, 108, 100));
    expect_entity(f.a, 2, tu_desc(108, 100, 10, 0, 0, 0));
    /* Into 3's neighbourhood: both directions with 1 leave; 3 has no senses. */
    RUN(&f, op_move(2, 300, 306), 3, "move 2 away with nested changes", LV(1, 2, S, 300, 306),
        LV(1, 2, H, 300, 306), LV(1, 2, M, 300, 306), LV(2, 1, S, 100, 100), EN(2, 3, S, 300, 300));
    expect_entity(f.a, 1, tu_desc(100, 100, 10, 10, 10, 0));
    expect_entity(f.a, 2, tu_desc(300, 306, 10, 0, 0, 0));
    expect_entity(f.a, 3, tu_desc(300, 300, 0, 0, 0, 0));
    fixture_close(&f);
}

static void test_nested_during_move(void **state)
{
    (void)state;
    tu_for_each_backend(check_during_move);
}

static void check_during_remove(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);
    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    f.attempt = 1;

    /* Removing 2 again, or re-adding it, from inside must be refused too. */
    RUN(&f, op_remove(2), 2, "remove 2 with nested changes", LV(1, 2, S, 105, 100),
        LV(1, 2, H, 105, 100), LV(1, 2, M, 105, 100), LV(2, 1, S, 100, 100));
    assert_int_equal(percept_contains(f.a, 2), 0);
    assert_int_equal(percept_contains(f.a, 4242), 0);
    expect_entity(f.a, 1, tu_desc(100, 100, 10, 10, 10, 0));

    /* Removing the observer side. */
    f.attempt = 0;
    RUN(&f, op_add(4, 100, 103, 0, 0, 5, 0), 3, "add 4", EN(1, 4, S, 100, 103),
        EN(1, 4, H, 100, 103), EN(1, 4, M, 100, 103), EN(4, 1, M, 100, 100));
    f.attempt = 1;
    RUN(&f, op_remove(1), 2, "remove observer 1 with nested changes", LV(1, 4, S, 100, 103),
        LV(1, 4, H, 100, 103), LV(1, 4, M, 100, 103), LV(4, 1, M, 100, 100));
    assert_int_equal(percept_contains(f.a, 1), 0);
    expect_entity(f.a, 4, tu_desc(100, 103, 0, 0, 5, 0));
    fixture_close(&f);
}

static void test_nested_during_remove(void **state)
{
    (void)state;
    tu_for_each_backend(check_during_remove);
}

static void check_during_range_hide(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);
    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    f.attempt = 1;

    RUN(&f, op_range(1, S, 0), 3, "1's sight off with nested changes", LV(1, 2, S, 105, 100));
    RUN(&f, op_range(1, S, 300), 3, "1's sight 300 with nested changes", EN(1, 2, S, 105, 100),
        EN(1, 3, S, 300, 300));
    RUN(&f, op_hide(1, S, 1), 3, "hide 1 from sight with nested changes", LV(2, 1, S, 100, 100));
    RUN(&f, op_hide(2, H, 1), 3, "hide 2 from hearing with nested changes", LV(1, 2, H, 105, 100));
    RUN(&f, op_hide(2, H, 0), 3, "show 2 to hearing with nested changes", EN(1, 2, H, 105, 100));
    expect_entity(f.a, 1, tu_desc(100, 100, 300, 10, 10, SB(S)));
    expect_entity(f.a, 2, tu_desc(105, 100, 10, 0, 0, 0));
    fixture_close(&f);
}

static void test_nested_during_range_and_hidden(void **state)
{
    (void)state;
    tu_for_each_backend(check_during_range_hide);
}

/* Queries alone, over calls that deliver every kind of event (no nested changes). */
static void check_queries_inside(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, 0);
    populate(&f);

    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    RUN(&f, op_move(1, 103, 104), 3, "move 1", MV(2, 1, S, 103, 104));
    RUN(&f, op_move(2, 296, 297), 3, "move 2 next to 3", LV(1, 2, S, 296, 297),
        LV(1, 2, H, 296, 297), LV(1, 2, M, 296, 297), LV(2, 1, S, 103, 104), EN(2, 3, S, 300, 300));
    RUN(&f, op_range(3, M, 5), 3, "3 gains smell", EN(3, 2, M, 296, 297));
    RUN(&f, op_hide(2, M, 1), 3, "hide 2 from smell", LV(3, 2, M, 296, 297));
    RUN(&f, op_remove(3), 2, "remove 3", LV(2, 3, S, 300, 300));
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

    RUN(&f, op_add(2, 105, 100, 10, 0, 0, 0), 3, "add 2 with nested changes", EN(1, 2, S, 105, 100),
        EN(1, 2, H, 105, 100), EN(1, 2, M, 105, 100), EN(2, 1, S, 100, 100));
    f.attempt = 0;
    /* What the nested calls tried, now from outside: they all take effect. */
    RUN(&f, op_add(4242, 105, 100, 50, 50, 50, 0), 4, "add 4242", EN(1, 4242, S, 105, 100),
        EN(1, 4242, H, 105, 100), EN(1, 4242, M, 105, 100), EN(2, 4242, S, 105, 100),
        EN(4242, 1, S, 100, 100), EN(4242, 1, H, 100, 100), EN(4242, 1, M, 100, 100),
        EN(4242, 2, S, 105, 100), EN(4242, 2, H, 105, 100), EN(4242, 2, M, 105, 100));
    RUN(&f, op_remove(4242), 3, "remove 4242", LV(1, 4242, S, 105, 100), LV(1, 4242, H, 105, 100),
        LV(1, 4242, M, 105, 100), LV(2, 4242, S, 105, 100), LV(4242, 1, S, 100, 100),
        LV(4242, 1, H, 100, 100), LV(4242, 1, M, 100, 100), LV(4242, 2, S, 105, 100),
        LV(4242, 2, H, 105, 100), LV(4242, 2, M, 105, 100));
    RUN(&f, op_move(2, 1000, 1000), 3, "move 2 away", LV(1, 2, S, 1000, 1000),
        LV(1, 2, H, 1000, 1000), LV(1, 2, M, 1000, 1000), LV(2, 1, S, 100, 100));
    RUN_NONE(&f, op_range(1, S, 0), 3, "1's sight off");
    RUN_NONE(&f, op_hide(2, S, 1), 3, "hide 2");
    RUN_NONE(&f, op_remove(2), 2, "remove 2");
    assert_int_equal(percept_contains(f.a, 2), 0);

    /* A refused round again, then outer calls again. */
    f.attempt = 1;
    RUN(&f, op_add(2, 100, 101, 0, 0, 0, 0), 3, "add 2 again with nested changes",
        EN(1, 2, H, 100, 101), EN(1, 2, M, 100, 101));
    f.attempt = 0;
    RUN(&f, op_move(2, 100, 100), 3, "move 2 onto 1", MV(1, 2, H, 100, 100), MV(1, 2, M, 100, 100));
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

enum { CLOSE_ADD, CLOSE_MOVE, CLOSE_REMOVE, CLOSE_RANGE, CLOSE_HIDE, CLOSE_BATCH, CLOSE_KINDS };
static const char *const close_kind_name[CLOSE_KINDS] = {"add",       "move",       "remove",
                                                         "set_range", "set_hidden", "move_many"};

/*
 * Four entities in range of each other, then one call of `kind` with the
 * callback closing at event `close_at`. Returns the events delivered; the
 * world is closed and checked for leaks before returning.
 */
static size_t run_close(const char *backend, int kind, size_t close_at)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, "move_events = on\n", NULL, &fa);
    for (percept_id id = 1; id <= 4; id++)
        tu_add(w, id, tu_desc(id, 0, 10, 8, 5, 0));
    closer c = {.w = w, .close_at = close_at};
    assert_int_equal(percept_set_event_callback(w, close_in_callback, &c), PERCEPT_OK);
    percept_entity_desc d = tu_desc(2.5, 1, 10, 8, 5, 0);
    const percept_position batch[] = {{1, 30, 0}, {2, 31, 0}, {3, 60, 0}};
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
    default:
        rc = percept_move_many(w, batch, COUNT_OF(batch));
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_nested_during_add),
        tu_backend_test(test_nested_during_move),
        tu_backend_test(test_nested_during_remove),
        tu_backend_test(test_nested_during_range_and_hidden),
        tu_backend_test(test_queries_inside_callback),
        tu_backend_test(test_changes_work_after_return),
        tu_backend_test(test_no_callback),
        tu_backend_test(test_close_inside_callback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
