/*
 * test_margins.c - margins (rule 5 of the relation, include/percept.h): a
 * target perceived before a call is kept out to R + M, one not perceived
 * must come within R; percept_update() changing several fields at once; and
 * which calls deliver MOVE events. Through the public API on every backend,
 * every expected event worked out by hand.
 */
#include "handworked.h"

#include <math.h>
#include <string.h>

/* An observer at (x, y) with sight `range` and margin `margin`. */
static percept_entity_desc with_margin(double x, double y, double range, double margin)
{
    percept_entity_desc d = tu_desc(x, y, range, 0, 0, 0);
    d.sense[S].margin = margin;
    return d;
}

/* ------------------------------------------------------------------------ */
/* A margin keeps, and loses                                                 */

/*
 * Observer 1 at the origin, sight 10 and margin 2; target 2 on the x axis.
 * It enters at 10, is kept at 12 (R + M exactly), lost one ulp beyond; back
 * at 11 it is not perceived again (not perceived before, and 11 > R). The
 * observer's own moves are judged the same way.
 */
static void check_margin_keeps_and_loses(const char *backend)
{
    const double beyond = nextafter(12.0, INFINITY);
    BEGIN(NOMOVE);
    ADD_DESC(1, with_margin(0, 0, 10, 2));
    ADD(2, 11, 0, 0, 0, 0, 0);
    EXPECT_NONE("added at 11: beyond R, and not perceived before");
    MOVE(2, 10, 0);
    EXPECT("on R", EN(1, 2, S, 10, 0));
    MOVE(2, 12, 0);
    EXPECT_NONE("on R + M: kept");
    EXPECT_LIST(1, S, 2);
    MOVE(2, beyond, 0);
    EXPECT("one ulp beyond R + M: lost", LV(1, 2, S, beyond, 0));
    MOVE(2, 11, 0);
    EXPECT_NONE("back within R + M, but not within R");
    EXPECT_EMPTY(1, S);
    MOVE(2, 6, 8);
    EXPECT("within R (6-8-10)", EN(1, 2, S, 6, 8));
    /* The observer moves: (6, 10) from it is sqrt(136), kept; (6, 10.5) is
     * sqrt(146.25) > 12, lost; (6, 9) is sqrt(117) > 10, not seen again. */
    MOVE(1, 0, -2);
    EXPECT_NONE("the observer steps back: kept");
    MOVE(1, 0, -2.5);
    EXPECT("the observer steps further: lost", LV(1, 2, S, 6, 8));
    MOVE(1, 0, -1);
    EXPECT_NONE("the observer comes closer, not within R");
    END();
}

static void test_margin_keeps_and_loses(void **state)
{
    (void)state;
    tu_for_each_backend(check_margin_keeps_and_loses);
}

/*
 * What was perceived before is the relation as it stood, nothing older: a
 * pair ended by a range of 0, by hiding or by removal is not kept by the
 * margin when it could be again. The margin is the observer's, per sense.
 */
static void check_margin_needs_the_pair(const char *backend)
{
    BEGIN(NOMOVE);
    percept_entity_desc o = with_margin(0, 0, 10, 5);
    o.sense[H].range = 10; /* hearing: no margin */
    ADD_DESC(1, o);
    percept_entity_desc t = with_margin(8, 0, 10, 100);
    ADD_DESC(2, t);
    EXPECT("2 at 8, both ways", EN(1, 2, S, 8, 0), EN(1, 2, H, 8, 0), EN(2, 1, S, 0, 0));
    MOVE(2, 14, 0);
    EXPECT("at 14: kept by 1's sight margin, not its hearing; 2 keeps 1 by its own margin",
           LV(1, 2, H, 14, 0));
    RANGE(1, S, 0);
    EXPECT("sight off", LV(1, 2, S, 14, 0));
    RANGE(1, S, 10);
    EXPECT_NONE("sight back: 14 > R, and not perceived just before");
    MOVE(2, 9, 0);
    EXPECT("within R again", EN(1, 2, S, 9, 0), EN(1, 2, H, 9, 0));
    MOVE(2, 13, 0);
    EXPECT("kept by the sight margin", LV(1, 2, H, 13, 0));
    HIDE(2, S, 1);
    EXPECT("hidden", LV(1, 2, S, 13, 0));
    HIDE(2, S, 0);
    EXPECT_NONE("shown at 13: not within R");
    MOVE(2, 10, 0);
    EXPECT("on R", EN(1, 2, S, 10, 0), EN(1, 2, H, 10, 0));
    MOVE(2, 15, 0);
    EXPECT("on R + M", LV(1, 2, H, 15, 0));
    REMOVE(2);
    EXPECT("removed", LV(1, 2, S, 15, 0), LV(2, 1, S, 0, 0));
    t.x = 15;
    ADD_DESC(2, t);
    EXPECT_NONE("the same ID added again at 15: a new entity, nothing kept either way");
    END();
}

static void test_margin_needs_the_pair(void **state)
{
    (void)state;
    tu_for_each_backend(check_margin_needs_the_pair);
}

/* ------------------------------------------------------------------------ */
/* percept_update(): several fields at once                                  */

/*
 * Range and margin changed in one update: the pair held before is judged
 * by the new R + M. 2 stands 10 from 1.
 */
static void check_update_range_and_margin(const char *backend)
{
    BEGIN(NOMOVE);
    ADD_DESC(1, with_margin(0, 0, 10, 0));
    ADD(2, 6, 8, 0, 0, 0, 0);
    EXPECT("on R", EN(1, 2, S, 6, 8));
    percept_entity_desc o = with_margin(0, 0, 8, 3);
    UPDATE(1, o);
    EXPECT_NONE("range 8 and margin 3 at once: 10 <= 11, kept");
    o = with_margin(0, 0, 8, 1.5);
    UPDATE(1, o);
    EXPECT("margin 1.5: 10 > 9.5, lost", LV(1, 2, S, 6, 8));
    o = with_margin(0, 0, 6, 10);
    UPDATE(1, o);
    EXPECT_NONE("range 6, margin 10: 10 > 6, and not perceived before");
    o = with_margin(0, 0, 12, 0);
    UPDATE(1, o);
    EXPECT("range 12, no margin", EN(1, 2, S, 6, 8));
    UPDATE(1, o);
    EXPECT_NONE("the same description again");
    /* One update changing many fields: the cone, the height, the hearing and the facing. */
    o.z = 10;
    o.facing[0] = -1;
    o.sense[S].fov = 180;
    o.sense[H].range = 20;
    UPDATE(1, o);
    EXPECT("up 10: sqrt 200 away, beyond R + M, within hearing", LV(1, 2, S, 6, 8),
           EN(1, 2, H, 6, 8));
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    TU_OK(w, percept_get_entity(w, 1, &d));
    assert_true(d.z == 10 && d.facing[0] == -1 && d.sense[S].fov == 180 && d.sense[S].range == 12 &&
                d.sense[H].range == 20 && d.sense[S].margin == 0);
    END();
}

static void test_update_range_and_margin(void **state)
{
    (void)state;
    tu_for_each_backend(check_update_range_and_margin);
}

/* ------------------------------------------------------------------------ */
/* MOVE events: only for a target's own move                                 */

/*
 * 1 and 2 perceive each other by sight; 1 has a 270 degree cone of hearing
 * facing 2. Only a call that moves the target delivers MOVE for the pairs
 * that hold through it: its move, move3, a tick, an update with a new
 * position. An observer's move or turn, a change of range, margin or tags,
 * a stimulus: ENTER and LEAVE only.
 */
static void check_move_events_own_moves(const char *backend)
{
    BEGIN("move_events = on\n");
    percept_entity_desc one = tu_desc(0, 0, 10, 10, 0, 0);
    one.facing[0] = 1;
    one.sense[H].fov = 270;
    ADD_DESC(1, one);
    ADD(2, 5, 0, 10, 0, 0, 0);
    EXPECT("both ways", EN(1, 2, S, 5, 0), EN(1, 2, H, 5, 0), EN(2, 1, S, 0, 0));
    MOVE(2, 6, 0);
    EXPECT("2 moves: 1 keeps it", MV(1, 2, S, 6, 0), MV(1, 2, H, 6, 0));
    MOVE3(1, 0, 0, 1);
    EXPECT("1 moves up: 2 keeps it", MV3(2, 1, S, 0, 0, 1));
    TURN(1, -1, 0, 0);
    EXPECT("1 turns: 2 behind it, no MOVE", LV(1, 2, H, 6, 0));
    TURN(1, 0, 1, 0);
    EXPECT("1 turns: 2 at 90 degrees of a 270 degree cone", EN(1, 2, H, 6, 0));
    RANGE(1, S, 20);
    EXPECT_NONE("a range grows: nothing enters or leaves, no MOVE");
    percept_entity_desc two = tu_desc(6, 0, 10, 0, 0, 0);
    two.tags = 4;
    two.sense[S].margin = 3;
    UPDATE(2, two);
    EXPECT_NONE("an update in place: no MOVE");
    two.y = 1;
    UPDATE(2, two);
    EXPECT("an update with a new position", MV(1, 2, S, 6, 1), MV(1, 2, H, 6, 1));
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.x = 1;
    EMIT(st);
    EXPECT("a stimulus", ST(1, S, -1, 1, 0, 0), ST(2, S, -1, 1, 0, 0));
    TICK(TU_CH_MOVE(1, 0, 1, 1), TU_CH_MOVE(2, 6, 2, 0));
    EXPECT("a tick moves both", MV3(1, 2, S, 6, 2, 0), MV3(1, 2, H, 6, 2, 0),
           MV3(2, 1, S, 0, 1, 1));
    MOVE3(2, 6, 2, 0);
    EXPECT_NONE("a move to where it is");
    END();
}

static void test_move_events_own_moves(void **state)
{
    (void)state;
    tu_for_each_backend(check_move_events_own_moves);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_margin_keeps_and_loses),
        tu_backend_test(test_margin_needs_the_pair),
        tu_backend_test(test_update_range_and_margin),
        tu_backend_test(test_move_events_own_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
