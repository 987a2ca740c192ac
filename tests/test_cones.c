/*
 * test_cones.c - heights, facings and cones (rules 5 and 6 of the relation,
 * include/percept.h) through the public API on every backend, with every
 * expected event worked out by hand from the formulas as written:
 * c = cos(fov * (PI / 360)), dot = F . d, q = c * c * (dd * (F . F)).
 *
 * The numbers the cases turn on, in IEEE double precision:
 *   fov  90: c = 0x1.6a09e667f3bcdp-1, c * c = 0.50000000000000011
 *   fov 180: c = 0x1.1a62633145c07p-54 (above 0), c * c = 3.7e-33
 *   fov 270: c = -0x1.6a09e667f3bccp-1, c * c = 0.49999999999999989
 * So a point exactly 45 degrees off a 90 degree cone's axis has
 * dot * dot = dd / 2 < q: outside. At 90 degrees dot = 0: outside a 180
 * degree cone (0 < q), inside a 270 degree one (dot >= 0). Straight behind,
 * dot * dot = dd > q: outside even a 270 degree cone; 135 degrees off,
 * dot * dot = dd / 2 > q: outside it too.
 */
#include "handworked.h"

#include <math.h>
#include <string.h>

/* An observer at (x, y) facing (fx, fy, 0) with sight, hearing and smell of
 * `range`, their cones 90, 180 and 270 degrees wide. */
static percept_entity_desc three_cones(double x, double y, double fx, double fy, double range)
{
    percept_entity_desc d = tu_desc(x, y, range, range, range, 0);
    d.facing[0] = fx;
    d.facing[1] = fy;
    d.sense[S].fov = 90;
    d.sense[H].fov = 180;
    d.sense[M].fov = 270;
    return d;
}

/* ------------------------------------------------------------------------ */
/* The edges of 90, 180 and 270 degree cones                                 */

/*
 * Observer 1 at (100, 100) faces +x. Around it: 2 at 45 degrees (3, 3), 3
 * at 90 (0, 4), 4 straight behind (-4, 0), 5 on its very point, 6 inside
 * every cone (4, 3: 36.9 degrees, dot^2 16 >= q 12.500000000000004), 7 at
 * 135 degrees (-3, 3).
 */
static void check_cone_edges(const char *backend)
{
    BEGIN(NOMOVE);
    ADD(2, 103, 103, 0, 0, 0, 0);
    ADD(3, 100, 104, 0, 0, 0, 0);
    ADD(4, 96, 100, 0, 0, 0, 0);
    ADD(5, 100, 100, 0, 0, 0, 0);
    ADD(6, 104, 103, 0, 0, 0, 0);
    ADD(7, 97, 103, 0, 0, 0, 0);
    EXPECT_NONE("targets without senses");
    ADD_DESC(1, three_cones(100, 100, 1, 0, 50));
    EXPECT("the observer's cones", EN(1, 2, H, 103, 103), EN(1, 2, M, 103, 103),
           EN(1, 3, M, 100, 104), EN(1, 5, S, 100, 100), EN(1, 5, H, 100, 100),
           EN(1, 5, M, 100, 100), EN(1, 6, S, 104, 103), EN(1, 6, H, 104, 103),
           EN(1, 6, M, 104, 103));
    EXPECT_LIST(1, S, 5, 6);
    EXPECT_LIST(1, H, 2, 5, 6);
    EXPECT_LIST(1, M, 2, 3, 5, 6);
    EXPECT_EMPTY_BY(4, M);
    EXPECT_EMPTY_BY(7, M);

    /*
     * A turn to +y: 3 straight ahead; 4 at 90 degrees (smell only); 6 at
     * 53.1 degrees (dot^2 9 < q 12.5): out of sight; 7 at 45 degrees, like 2
     * before: heard and smelled, not seen.
     */
    TURN(1, 0, 1, 0);
    EXPECT("turn to +y", EN(1, 3, S, 100, 104), EN(1, 3, H, 100, 104), EN(1, 4, M, 96, 100),
           LV(1, 6, S, 104, 103), EN(1, 7, H, 97, 103), EN(1, 7, M, 97, 103));
    /* The same direction at another length: dot^2 and q grow alike (2 at 45
     * degrees: 441 < 441.0000000000001), nothing changes. */
    TURN(1, 0, 7, 0);
    EXPECT_NONE("the same direction, seven times as long");
    TURN(1, 0, 7, 0);
    EXPECT_NONE("the same facing again");
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    TU_OK(w, percept_get_entity(w, 1, &d));
    assert_true(d.facing[0] == 0 && d.facing[1] == 7 && d.facing[2] == 0);
    assert_true(d.sense[S].fov == 90 && d.sense[H].fov == 180 && d.sense[M].fov == 270);
    END();
}

static void test_cone_edges(void **state)
{
    (void)state;
    tu_for_each_backend(check_cone_edges);
}

/*
 * dd == 0 is inside any cone: on the observer's point, and where the
 * offsets are not 0 but their squares underflow to it (1e-170 behind an
 * observer at the origin: dot < 0, yet dd == 0). 1e-150 behind is no
 * underflow (dd 1e-300): outside.
 */
static void check_dd_zero(const char *backend)
{
    BEGIN(NOMOVE);
    ADD_DESC(1, three_cones(0, 0, 1, 0, 5));
    ADD(2, 0, 0, 0, 0, 0, 0);
    EXPECT("on the observer's point", EN(1, 2, S, 0, 0), EN(1, 2, H, 0, 0), EN(1, 2, M, 0, 0));
    MOVE(2, -1e-170, 0);
    EXPECT_NONE("1e-170 behind: dd underflows to 0");
    MOVE3(2, 0, -1e-170, -1e-170);
    EXPECT_NONE("1e-170 aside and below: dd still 0");
    MOVE3(2, -1e-150, 0, 0);
    EXPECT("1e-150 behind: outside every cone", LV(1, 2, S, -1e-150, 0), LV(1, 2, H, -1e-150, 0),
           LV(1, 2, M, -1e-150, 0));
    END();
}

static void test_dd_zero(void **state)
{
    (void)state;
    tu_for_each_backend(check_dd_zero);
}

/*
 * A facing so short that its square underflows: F . F = 0, so q = 0, and
 * only the sign of dot decides (dot * dot underflows to 0 as well): ahead
 * and to the side are in a 90 degree cone, behind is not; behind is still
 * in a 270 degree cone (dot * dot <= q: 0 <= 0).
 */
static void check_tiny_facing(const char *backend)
{
    BEGIN(NOMOVE);
    ADD_DESC(1, three_cones(0, 0, 1e-200, 0, 10));
    ADD(2, 3, 0, 0, 0, 0, 0);
    ADD(3, 0, 3, 0, 0, 0, 0);
    ADD(4, -3, 0, 0, 0, 0, 0);
    tu_recorder_clear(&rec);
    EXPECT_LIST(1, S, 2, 3);
    EXPECT_LIST(1, H, 2, 3);
    EXPECT_LIST(1, M, 2, 3, 4);
    END();
}

static void test_tiny_facing(void **state)
{
    (void)state;
    tu_for_each_backend(check_tiny_facing);
}

/* ------------------------------------------------------------------------ */
/* Heights                                                                   */

/*
 * Distance in three dimensions: 3-4-5 across x and z is on the boundary, one
 * ulp higher is beyond. A move in height alone is a move (MOVE events for
 * the pairs that hold); percept_move() keeps the height, and a tick's
 * move names it.
 */
static void check_heights(const char *backend)
{
    const double above4 = nextafter(4.0, INFINITY);
    BEGIN("move_events = on\n");
    assert_true(9.0 + above4 * above4 > 25.0); /* the test's own premise */
    ADD(1, 0, 0, 5, 10, 0, 0);
    percept_entity_desc d = tu_desc(3, 0, 0, 0, 0, 0);
    d.z = 4;
    ADD_DESC(2, d);
    EXPECT("3-4-5 in x and z", EN3(1, 2, S, 3, 0, 4), EN3(1, 2, H, 3, 0, 4));
    MOVE3(2, 3, 0, above4);
    EXPECT("one ulp higher", LV3(1, 2, S, 3, 0, above4), MV3(1, 2, H, 3, 0, above4));
    MOVE3(2, 3, 0, -4);
    EXPECT("4 below: on the boundary again", EN3(1, 2, S, 3, 0, -4), MV3(1, 2, H, 3, 0, -4));
    MOVE3(2, 3, 0, -4);
    EXPECT_NONE("a move to where it is");
    MOVE(2, 3, 0);
    EXPECT_NONE("percept_move to its own x and y: the height is kept, nothing moves");
    MOVE(2, 0, 3);
    EXPECT("a move in x and y keeps the height", MV3(1, 2, S, 0, 3, -4), MV3(1, 2, H, 0, 3, -4));
    TICK(TU_CH_MOVE(2, 4, 0, -4));
    EXPECT("a tick's move, at the same height", LV3(1, 2, S, 4, 0, -4), MV3(1, 2, H, 4, 0, -4));
    d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    TU_OK(w, percept_get_entity(w, 2, &d));
    assert_true(d.x == 4 && d.y == 0 && d.z == -4);

    /* The observer rises: its own pairs change, no MOVE for them; 2 perceives nothing. */
    MOVE3(1, 0, 0, -1);
    EXPECT("the observer moves down", EN3(1, 2, S, 4, 0, -4));
    MOVE3(1, 0, 0, 11);
    EXPECT("the observer rises far above", LV3(1, 2, S, 4, 0, -4), LV3(1, 2, H, 4, 0, -4));

    /* percept_query() counts heights too: 3-4-5 from (0, 0, 7) reaches 1 (4 below), not 2. */
    percept_id ids[4];
    size_t count = 0;
    TU_OK(w, percept_query(w, 3, 0, 7, 5, ids, 4, &count));
    assert_int_equal(count, 1);
    assert_int_equal(ids[0], 1);
    TU_OK(w, percept_query(w, 4, 0, 1, 5, ids, 4, &count));
    assert_int_equal(count, 1);
    assert_int_equal(ids[0], 2);
    END();
}

static void test_heights(void **state)
{
    (void)state;
    tu_for_each_backend(check_heights);
}

/*
 * A cone around a vertical facing: 1 at (100, 100, 0) looks up (0, 0, 1)
 * with a 90 degree cone of sight. 3-4-5 with 4 up is 36.9 degrees off the
 * axis (16 >= 12.500000000000004): in; 4 across and 3 up (53.1) is out; 3
 * and 3 is 45 degrees: out; straight down is out; straight up is in.
 */
static void check_vertical_cone(const char *backend)
{
    BEGIN(NOMOVE);
    const double z[] = {4, 3, 3, -5, 6};
    const double x[] = {103, 104, 103, 100, 100};
    for (percept_id i = 0; i < 5; i++) {
        percept_entity_desc t = tu_desc(x[i], 100, 0, 0, 0, 0);
        t.z = z[i];
        ADD_DESC(10 + i, t);
    }
    percept_entity_desc o = tu_desc(100, 100, 10, 0, 0, 0);
    o.facing[2] = 1;
    o.sense[S].fov = 90;
    ADD_DESC(1, o);
    EXPECT("looking up", EN3(1, 10, S, 103, 100, 4), EN3(1, 14, S, 100, 100, 6));
    /* Turned to face down: straight below is in, the rest not. */
    TURN(1, 0, 0, -2);
    EXPECT("looking down", LV3(1, 10, S, 103, 100, 4), EN3(1, 13, S, 100, 100, -5),
           LV3(1, 14, S, 100, 100, 6));
    END();
}

static void test_vertical_cone(void **state)
{
    (void)state;
    tu_for_each_backend(check_vertical_cone);
}

/*
 * A turn changes only the turning entity's view: the pairs it is the
 * target of stay, whoever faces where, and a turn delivers no MOVE event.
 */
static void check_turn_is_the_observers(const char *backend)
{
    BEGIN("move_events = on\n");
    ADD_DESC(1, three_cones(0, 0, 1, 0, 10));
    ADD(2, 5, 0, 10, 0, 0, 0);
    EXPECT("2 ahead of 1", EN(1, 2, S, 5, 0), EN(1, 2, H, 5, 0), EN(1, 2, M, 5, 0),
           EN(2, 1, S, 0, 0));
    TURN(1, -1, 0, 0);
    EXPECT("1 turns its back", LV(1, 2, S, 5, 0), LV(1, 2, H, 5, 0), LV(1, 2, M, 5, 0));
    TURN(2, 0, -1, 0);
    EXPECT_NONE("2 turns: it has no cone");
    TURN(2, 0, 0, 0);
    EXPECT_NONE("2 faces nowhere: allowed without a cone");
    END();
}

static void test_turn_is_the_observers(void **state)
{
    (void)state;
    tu_for_each_backend(check_turn_is_the_observers);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_cone_edges),    tu_backend_test(test_dd_zero),
        tu_backend_test(test_tiny_facing),   tu_backend_test(test_heights),
        tu_backend_test(test_vertical_cone), tu_backend_test(test_turn_is_the_observers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
