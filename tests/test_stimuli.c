/*
 * test_stimuli.c - percept_emit(): which observers perceive a one-shot
 * stimulus (include/percept.h): not its source, a range R above 0 for its
 * sense, an ignore mask sharing no bit with its tags, the point within
 * strength * R (no margin) and within the observer's cone; hiding does not
 * apply, and nothing in the world changes. Through the public API on every
 * backend, every expected event worked out by hand.
 */
#include "handworked.h"

#include <math.h>
#include <string.h>

/* A stimulus of hearing at (x, y, z), of strength 1, without source or tags. */
static percept_stimulus noise(double x, double y, double z)
{
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = H;
    st.x = x;
    st.y = y;
    st.z = z;
    return st;
}

/*
 * The listeners: 1 at the origin (hearing 10, margin 5), 2 at (6, 8) (hearing
 * 5), 3 at (20, 0) facing -x with a 90 degree cone (hearing 10), 4 above 1
 * at height 3 (hearing 2, ignoring tag 0x1), 5 far away without hearing.
 */
static void add_listeners(percept_world *w, tu_recorder *rec)
{
    percept_entity_desc d = tu_desc(0, 0, 0, 10, 0, 0);
    d.sense[H].margin = 5;
    tu_add(w, 1, d);
    tu_add(w, 2, tu_desc(6, 8, 0, 5, 0, 0));
    d = tu_desc(20, 0, 0, 10, 0, 0);
    d.facing[0] = -1;
    d.sense[H].fov = 90;
    tu_add(w, 3, d);
    d = tu_desc(0, 0, 0, 2, 0, 0);
    d.z = 3;
    d.sense[H].ignore = 0x1;
    tu_add(w, 4, d);
    tu_add(w, 5, tu_desc(100, 100, 10, 0, 10, 0));
    tu_recorder_clear(rec);
}

static void check_stimuli(const char *backend)
{
    BEGIN("move_events = on\n");
    add_listeners(w, &rec);

    /* At 1's point: 2 is 10 away (> 5), 3 is 20 away, 4 is 3 above (> 2). */
    percept_stimulus st = noise(0, 0, 0);
    EMIT(st);
    EXPECT("no source, strength 1", ST(1, H, -1, 0, 0, 0));

    /* At 2's point, from 2, strength 2: 1 is 10 away (<= 20); 3 is sqrt 260
     * away, 29.7 degrees off its axis (dot^2 196 >= q 130.00000000000003);
     * 4 is sqrt 109 away (> 4); 2 is the source. */
    st = noise(6, 8, 0);
    st.has_source = 1;
    st.source = 2;
    st.strength = 2;
    EMIT(st);
    EXPECT("from 2, strength 2", ST(1, H, 2, 6, 8, 0), ST(3, H, 2, 6, 8, 0));

    /* The source only excludes: its position is not the point. 5, far from
     * the point and deaf, is a source as good as any. */
    st = noise(0, 0, 3);
    st.has_source = 1;
    st.source = 5;
    EMIT(st);
    EXPECT("at 4's point, from 5", ST(1, H, 5, 0, 0, 3), ST(4, H, 5, 0, 0, 3));
    st.tags = 0x3;
    EMIT(st);
    EXPECT("tagged 0x3: 4 ignores it", ST(1, H, 5, 0, 0, 3));

    /* Strength 0.5 puts 1's reach at exactly 5; the next strength down, just short. */
    st = noise(5, 0, 0);
    st.strength = 0.5;
    EMIT(st);
    EXPECT("strength 0.5, on the reach", ST(1, H, -1, 5, 0, 0));
    st.strength = nextafter(0.5, 0);
    EMIT(st);
    EXPECT_NONE("strength an ulp under 0.5");

    /* No margin for a stimulus: 11 from 1 is beyond 10, whatever its margin. */
    st = noise(11, 0, 0);
    EMIT(st);
    EXPECT("11 from 1, 9 ahead of 3", ST(3, H, -1, 11, 0, 0));
    /* 45 degrees off 3's axis (7, 7 from it) is outside its 90 degree cone. */
    st = noise(13, 7, 0);
    EMIT(st);
    EXPECT_NONE("45 degrees off 3's cone, beyond 1 and 2");
    st = noise(13, 6, 0);
    EMIT(st);
    EXPECT("40.6 degrees off 3's cone (49 >= 42.5)", ST(3, H, -1, 13, 6, 0));

    /* Hiding does not apply: a stimulus is no entity. */
    HIDE(1, H, 1);
    tu_recorder_clear(&rec);
    st = noise(1, 0, 0);
    EMIT(st);
    EXPECT("1 hidden from hearing still hears", ST(1, H, -1, 1, 0, 0));

    /* Another sense: smell, which only 5 has. */
    st = noise(100, 104, 0);
    st.sense = M;
    EMIT(st);
    EXPECT("a scent by 5", ST(5, M, -1, 100, 104, 0));
    st.has_source = 1;
    st.source = 5;
    EMIT(st);
    EXPECT_NONE("the same from 5 itself");

    /* Emitting changes nothing: the relation (1 hears 2 and 4) and the entities stay. */
    EXPECT_LIST(1, H, 2, 4);
    EXPECT_EMPTY(3, H);
    assert_int_equal(percept_entity_count(w), 5);
    END();
}

static void test_stimuli(void **state)
{
    (void)state;
    tu_for_each_backend(check_stimuli);
}

/* Observers come in ID order, each once, over the whole 32-bit range. */
static void check_stimulus_order(const char *backend)
{
    static const percept_id ids[] = {UINT32_MAX, 7, 0, 1u << 31, 8};
    BEGIN(NOMOVE);
    for (size_t i = 0; i < COUNT_OF(ids); i++)
        tu_add(w, ids[i], tu_desc((double)i, 0, 10, 10, 10, 0));
    tu_recorder_clear(&rec);
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = S;
    st.x = 2;
    st.has_source = 1;
    st.source = 7;
    EMIT(st);
    EXPECT("in ID order", ST(0, S, 7, 2, 0, 0), ST(8, S, 7, 2, 0, 0), ST(1u << 31, S, 7, 2, 0, 0),
           ST(UINT32_MAX, S, 7, 2, 0, 0));
    END();
}

static void test_stimulus_order(void **state)
{
    (void)state;
    tu_for_each_backend(check_stimulus_order);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_stimuli),
        tu_backend_test(test_stimulus_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
