/*
 * test_event_buffer.c - percept_set_event_buffer() and percept_events(): a
 * call's events kept as an array. On every backend, random calls of every
 * kind (adds, moves, ticks, turns, range changes, removes, stimuli) must
 * leave in the buffer exactly the model's events for that call, with a
 * callback set and without; a call that changes nothing empties it, a
 * failed one leaves it; the buffer is off inside the callback's reach; and
 * a call whose buffer cannot grow fails whole.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../tools/splitmix.h"

#define ENTITIES 60

/* Fail the test unless the world's buffer holds the model's last events. */
static void expect_buffer(const percept_world *w, const model *m, const char *what)
{
    size_t n = 99;
    const percept_event *ev = percept_events(w, &n);
    tu_recorder kept;
    tu_recorder_init(&kept);
    for (size_t i = 0; i < n; i++)
        tu_recorder_push(&kept, &ev[i]);
    assert_true((n == 0) == (ev == NULL));
    tu_expect_events(&kept, m->events, m->n_events, what);
    tu_recorder_free(&kept);
}

/* A random call of any kind on the entities 1 .. ENTITIES, all in the world. */
static tu_op random_op(uint64_t *rng, percept_change *tick, percept_stimulus *st)
{
    percept_id id = 1 + (percept_id)(splitmix_next(rng) % ENTITIES);
    double x = splitmix_between(rng, 0, 100), y = splitmix_between(rng, 0, 100);
    switch ((splitmix_next(rng) % 6)) {
    case 0:
        return TU_OP_MOVE(id, x, y);
    case 1: {
        /* Distinct entities: a run of consecutive IDs. */
        size_t n = 1 + (size_t)(splitmix_next(rng) % 20);
        for (size_t i = 0; i < n; i++) {
            percept_id e = 1 + (percept_id)((id - 1 + i) % ENTITIES);
            tick[i] = (percept_change){e,
                                       PERCEPT_CHANGE_MOVE,
                                       splitmix_between(rng, 0, 100),
                                       splitmix_between(rng, 0, 100),
                                       0,
                                       NULL};
        }
        return TU_OP_TICK(tick, n);
    }
    case 2:
        return TU_OP_RANGE(id, PERCEPT_HEARING, splitmix_between(rng, 0, 30));
    case 3:
        return TU_OP_HIDE(id, PERCEPT_SIGHT, (double)(splitmix_next(rng) % 2));
    case 4:
        *st = (percept_stimulus)PERCEPT_STIMULUS_INIT;
        st->sense = PERCEPT_SMELL;
        st->x = x;
        st->y = y;
        st->strength = 2;
        return TU_OP_EMIT(*st);
    default:
        return TU_OP_MOVE3(id, x, y, splitmix_between(rng, -5, 5));
    }
}

/* The same calls on a world with a callback and a buffer, one with a buffer
 * alone, and the model: both buffers hold the model's events each time. */
static void check_random_calls(const char *backend)
{
    tu_recorder rec;
    tu_recorder_init(&rec);
    percept_world *w = tu_open(backend, "move_events = on\n", &rec);
    percept_world *alone = tu_open(backend, "move_events = on\n", NULL);
    TU_OK(w, percept_set_event_buffer(w, 1));
    TU_OK(alone, percept_set_event_buffer(alone, 1));
    model m;
    tu_model_init(&m, 1, w);
    uint64_t rng = 7;
    size_t events = 0;
    for (percept_id id = 1; id <= ENTITIES; id++) {
        tu_op o = TU_OP_ADD(id, splitmix_between(&rng, 0, 100), splitmix_between(&rng, 0, 100), 15,
                            10, 8, 0);
        tu_call(w, &rec, &m, &o, "add");
        assert_int_equal(tu_apply(alone, &o), PERCEPT_OK);
        expect_buffer(w, &m, "add");
        expect_buffer(alone, &m, "add, buffer alone");
        tu_recorder_clear(&rec);
    }
    for (int i = 0; i < 300; i++) {
        percept_change tick[20];
        percept_stimulus st;
        tu_op o = random_op(&rng, tick, &st);
        char what[160];
        tu_describe(&m, what, sizeof what, &o);
        assert_int_equal(tu_call(w, &rec, &m, &o, what), PERCEPT_OK);
        assert_int_equal(tu_apply(alone, &o), PERCEPT_OK);
        expect_buffer(w, &m, what);
        expect_buffer(alone, &m, what);
        events += m.n_events;
        tu_recorder_clear(&rec);
    }
    assert_true(events > 1000); /* not vacuous */
    model_free(&m);
    percept_world_close(w);
    percept_world_close(alone);
    tu_recorder_free(&rec);
}

static void test_random_calls(void **state)
{
    (void)state;
    tu_for_each_backend(check_random_calls);
}

/* What the buffer holds between calls. */
static void test_lifetime(void **state)
{
    (void)state;
    percept_world *w = tu_open("bruteforce", "move_events = off\n", NULL);
    size_t n = 99;
    assert_null(percept_events(w, &n)); /* off */
    assert_int_equal(n, 0);
    tu_add(w, 1, tu_desc(0, 0, 10, 0, 0, 0));
    assert_null(percept_events(w, &n)); /* still off: nothing kept */
    TU_OK(w, percept_set_event_buffer(w, 1));
    tu_add(w, 2, tu_desc(5, 0, 10, 0, 0, 0));
    const percept_event *ev = percept_events(w, &n);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].kind, PERCEPT_ENTER);
    assert_int_equal(ev[0].observer, 1);
    assert_int_equal(ev[0].target, 2);
    assert_int_equal(ev[1].observer, 2);
    assert_int_equal(ev[1].target, 1);
    /* Reading calls and failed calls leave the events. */
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_move(w, 99, 0, 0), PERCEPT_ENOENT);
    assert_int_equal(percept_move(w, 1, NAN, 0), PERCEPT_EINVAL);
    assert_ptr_equal(percept_events(w, &n), ev);
    assert_int_equal(n, 2);
    /* The world may change at once; a call that changes nothing empties it. */
    TU_OK(w, percept_move(w, 2, 5, 0));
    assert_null(percept_events(w, &n));
    assert_int_equal(n, 0);
    TU_OK(w, percept_move(w, 2, 50, 0));
    assert_int_equal(percept_events(w, NULL) != NULL, 1);
    TU_OK(w, percept_tick(w, NULL, 0));
    assert_null(percept_events(w, &n));
    /* A stimulus nobody has the sense of empties it too. */
    TU_OK(w, percept_move(w, 2, 5, 0));
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = PERCEPT_HEARING;
    TU_OK(w, percept_emit(w, &st));
    assert_null(percept_events(w, &n));
    st.sense = PERCEPT_SIGHT;
    st.x = 1;
    TU_OK(w, percept_emit(w, &st));
    ev = percept_events(w, &n);
    assert_int_equal(n, 2);
    assert_int_equal(ev[0].kind, PERCEPT_STIMULUS);
    assert_int_equal(ev[0].has_source, 0);
    /* Off: nothing, and nothing kept. */
    TU_OK(w, percept_set_event_buffer(w, 0));
    TU_OK(w, percept_move(w, 2, 50, 0));
    assert_null(percept_events(w, &n));
    assert_int_equal(n, 0);
    assert_null(percept_events(NULL, &n));
    assert_int_equal(percept_set_event_buffer(NULL, 1), PERCEPT_EINVAL);
    percept_world_close(w);
}

/* Inside the callback: the buffer cannot be switched, and holds the events
 * delivered so far. */
typedef struct inside {
    percept_world *w;
    size_t calls, this_call, busy, seen_wrong;
} inside;

static void inside_event(void *user, const percept_event *e)
{
    inside *in = user;
    size_t n = 0;
    const percept_event *ev = percept_events(in->w, &n);
    in->calls++;
    in->this_call++;
    in->busy += percept_set_event_buffer(in->w, 0) == PERCEPT_EBUSY;
    in->seen_wrong += n != in->this_call || memcmp(&ev[n - 1], e, sizeof *e) != 0;
}

static void test_inside_callback(void **state)
{
    (void)state;
    percept_world *w = tu_open("grid", "move_events = off\n", NULL);
    inside in = {.w = w};
    TU_OK(w, percept_set_event_buffer(w, 1));
    TU_OK(w, percept_set_event_callback(w, inside_event, &in));
    for (percept_id id = 1; id <= 5; id++) {
        in.this_call = 0;
        tu_add(w, id, tu_desc(id, 0, 10, 0, 0, 0));
    }
    assert_true(in.calls > 0);
    assert_int_equal(in.busy, in.calls);
    assert_int_equal(in.seen_wrong, 0);
    percept_world_close(w);
}

/* Every allocation of a move into a crowd fails in turn, the buffer's
 * growth among them: the call fails whole, the buffer keeps the last
 * call's events, and the retry keeps the model's. */
static void check_out_of_memory(const char *backend)
{
    size_t injected = 0;
    for (size_t k = 1;; k++) {
        char what[160];
        snprintf(what, sizeof what, "backend %s, allocation %zu of a move failed", backend, k);
        tu_fault_alloc fa;
        tu_fault_init(&fa);
        percept_world *w = tu_open_faulty(backend, "move_events = on\n", NULL, &fa);
        model m;
        tu_model_init(&m, 1, w);
        TU_OK(w, percept_set_event_buffer(w, 1));
        for (percept_id id = 1; id <= 40; id++) {
            tu_op o = TU_OP_ADD(id, 50 + id % 7, 50 + id / 7, 20, 20, 20, 0);
            assert_int_equal(tu_apply(w, &o), PERCEPT_OK);
            assert_int_equal(tu_apply_model(&m, &o), PERCEPT_OK);
        }
        tu_op far = TU_OP_ADD(41, 500, 500, 20, 20, 20, 0);
        assert_int_equal(tu_apply(w, &far), PERCEPT_OK);
        assert_int_equal(tu_apply_model(&m, &far), PERCEPT_OK);
        tu_op into = TU_OP_MOVE(41, 53, 53);
        fa.fail_at = fa.counted + k;
        int rc = tu_apply(w, &into);
        if (fa.hit) {
            injected++;
            assert_int_equal(rc, PERCEPT_ENOMEM);
            expect_buffer(w, &m, what); /* still the add's (none: it was far) */
            tu_expect_world(&m, w, what);
            fa.fail_at = 0;
            rc = tu_apply(w, &into);
        }
        TU_OK(w, rc);
        assert_int_equal(tu_apply_model(&m, &into), PERCEPT_OK);
        assert_true(m.n_events > 200); /* the buffer must grow */
        expect_buffer(w, &m, what);
        tu_expect_world(&m, w, what);
        percept_world_close(w);
        tu_expect_no_leak(&fa, what);
        model_free(&m);
        if (!fa.hit)
            break;
    }
    assert_true(injected > 0);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    tu_for_each_backend(check_out_of_memory);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_random_calls),
        cmocka_unit_test(test_lifetime),
        cmocka_unit_test(test_inside_callback),
        tu_backend_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
