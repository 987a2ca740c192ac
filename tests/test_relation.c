/*
 * test_relation.c - the perception relation (include/percept.h) checked through
 * the public API, rule by rule, with every expected event worked out by hand.
 */
#include "handworked.h"

#include <math.h>
#include <string.h>

#define ALL_HIDDEN (SB(S) | SB(H) | SB(M))
#define SENSES 3 /* a world's default senses: sight, hearing, smell */
#define BIG 0xFFFFFFFFu

/* ------------------------------------------------------------------------ */
/* Rule 1: different entities only                                           */

static void check_self(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(1, 10, 10, 100, 100, 100, 0);
    EXPECT_NONE("a lone entity perceives nothing, not even itself");
    for (int s = 0; s < SENSES; s++) {
        assert_int_equal(percept_perceives(w, 1, 1, (percept_sense)s), 0);
        EXPECT_EMPTY(1, (percept_sense)s);
        EXPECT_EMPTY_BY(1, (percept_sense)s);
    }

    /* A second entity on the very same point is perceived; the first still not by itself. */
    ADD(2, 10, 10, 0, 0, 0, 0);
    EXPECT("add a coincident target", EN(1, 2, S, 10, 10), EN(1, 2, H, 10, 10),
           EN(1, 2, M, 10, 10));
    for (int s = 0; s < SENSES; s++) {
        assert_int_equal(percept_perceives(w, 1, 1, (percept_sense)s), 0);
        assert_int_equal(percept_perceives(w, 2, 2, (percept_sense)s), 0);
        assert_int_equal(percept_perceives(w, 1, 2, (percept_sense)s), 1);
        assert_int_equal(percept_perceives(w, 2, 1, (percept_sense)s), 0);
        EXPECT_LIST(1, (percept_sense)s, 2);
        EXPECT_EMPTY_BY(1, (percept_sense)s);
    }

    /* Moving the observer onto and off its own old spot changes nothing for itself. */
    MOVE(1, 11, 10);
    EXPECT_NONE("observer moves within range");
    assert_int_equal(percept_perceives(w, 1, 1, PERCEPT_SIGHT), 0);
    END();
}

static void test_self_never_perceived(void **state)
{
    (void)state;
    tu_for_each_backend(check_self);
}

/* ------------------------------------------------------------------------ */
/* Rule 2: range 0 means the entity lacks the sense                          */

static void check_range_zero(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(1, 50, 50, 10, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, 51, 50, 0, 0, 0, 0);
    EXPECT("only sight reaches", EN(1, 2, S, 51, 50));
    /* 2 and 3 stand on one point (0 <= 0*0 would hold): range 0 still perceives nothing. */
    ADD(3, 51, 50, 0, 0, 0, 0);
    EXPECT("range 0 perceives nothing, even at distance 0", EN(1, 3, S, 51, 50));

    for (int s = 0; s < SENSES; s++) {
        assert_int_equal(percept_perceives(w, 2, 3, (percept_sense)s), 0);
        assert_int_equal(percept_perceives(w, 3, 2, (percept_sense)s), 0);
        assert_int_equal(percept_perceives(w, 2, 1, (percept_sense)s), 0);
    }
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_HEARING), 0);
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SMELL), 0);
    EXPECT_LIST_BY(2, S, 1);
    EXPECT_EMPTY_BY(2, H);
    EXPECT_EMPTY_BY(2, M);
    EXPECT_LIST(1, S, 2, 3);
    EXPECT_EMPTY(1, H);

    /* The smallest positive range is a sense: it perceives entities on its own point. */
    ADD(4, 51, 50, nextafter(0.0, 1.0), 0, 0, 0);
    EXPECT("add 4 with the smallest range", EN(1, 4, S, 51, 50), EN(4, 2, S, 51, 50),
           EN(4, 3, S, 51, 50));
    assert_int_equal(percept_perceives(w, 4, 1, PERCEPT_SIGHT), 0);
    RANGE(4, S, 0);
    EXPECT("4's sight off", LV(4, 2, S, 51, 50), LV(4, 3, S, 51, 50));
    END();
}

static void test_range_zero_lacks_sense(void **state)
{
    (void)state;
    tu_for_each_backend(check_range_zero);
}

/* ------------------------------------------------------------------------ */
/* Rule 3: hidden per sense                                                   */

static void check_hidden_per_sense(const char *backend)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    BEGIN(NOMOVE);

    ADD(1, 100, 100, 10, 10, 10, 0);
    EXPECT_NONE("add 1");
    /* Stealth: hidden from sight, still heard and smelled. 2's ranges 5 reach 1 exactly. */
    ADD(2, 103, 104, 5, 5, 5, SB(S));
    EXPECT("add a stealthy entity", EN(1, 2, H, 103, 104), EN(1, 2, M, 103, 104),
           EN(2, 1, S, 100, 100), EN(2, 1, H, 100, 100), EN(2, 1, M, 100, 100));
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SIGHT), 0);
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_HEARING), 1);
    assert_int_equal(percept_get_entity(w, 2, &d), PERCEPT_OK);
    assert_int_equal(d.hidden, SB(S));

    /* Hidden from everything, but not blind: it perceives 1, nobody perceives it. */
    ADD(3, 100, 100, 1, 1, 1, ALL_HIDDEN);
    EXPECT("add an entity hidden from every sense", EN(3, 1, S, 100, 100), EN(3, 1, H, 100, 100),
           EN(3, 1, M, 100, 100));
    EXPECT_EMPTY_BY(3, S);
    EXPECT_EMPTY_BY(3, H);
    EXPECT_EMPTY_BY(3, M);

    /* Hidden from hearing and smell: seen by everyone whose sight reaches (2 at distance sqrt 18).
     */
    ADD(4, 100, 101, 0, 0, 0, SB(H) | SB(M));
    EXPECT("add an entity only visible", EN(1, 4, S, 100, 101), EN(2, 4, S, 100, 101),
           EN(3, 4, S, 100, 101));
    EXPECT_LIST_BY(4, S, 1, 2, 3);
    EXPECT_EMPTY_BY(4, H);
    EXPECT_LIST(1, S, 4);
    EXPECT_LIST(1, H, 2);
    EXPECT_LIST(1, M, 2);
    END();
}

static void test_hidden_per_sense(void **state)
{
    (void)state;
    tu_for_each_backend(check_hidden_per_sense);
}

/* ------------------------------------------------------------------------ */
/* Rule 4: the boundary counts as inside; just beyond is outside             */

static void check_boundary(const char *backend)
{
    const double y_out = nextafter(14.0, INFINITY);
    const double x_out = nextafter(15.0, INFINITY);
    const double x_out2 = nextafter(7.0, -INFINITY);
    const double r_in = nextafter(5.0, 0.0);
    BEGIN(NOMOVE);

    /* The test's own premises: these points lie beyond 5 by the formula's arithmetic. */
    assert_true(3.0 * 3.0 + (y_out - 10) * (y_out - 10) > 25.0);
    assert_true((x_out - 10) * (x_out - 10) > 25.0);
    assert_true((x_out2 - 10) * (x_out2 - 10) + 16.0 > 25.0);
    assert_true(r_in * r_in < 25.0);

    ADD(1, 10, 10, 5, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, 13, 14, 0, 0, 0, 0);
    EXPECT("3-4-5: distance exactly the range", EN(1, 2, S, 13, 14));
    ADD(3, 7, 6, 0, 0, 0, 0);
    EXPECT("-3,-4: distance exactly the range", EN(1, 3, S, 7, 6));
    ADD(4, 15, 10, 0, 0, 0, 0);
    EXPECT("on the x axis at the range", EN(1, 4, S, 15, 10));
    ADD(5, 10, 5, 0, 0, 0, 0);
    EXPECT("on the y axis at the range", EN(1, 5, S, 10, 5));
    ADD(6, 13, y_out, 0, 0, 0, 0);
    EXPECT_NONE("one ulp beyond in y");
    ADD(7, x_out, 10, 0, 0, 0, 0);
    EXPECT_NONE("one ulp beyond in x");
    ADD(8, x_out2, 6, 0, 0, 0, 0);
    EXPECT_NONE("one ulp beyond at -3,-4");
    EXPECT_LIST(1, S, 2, 3, 4, 5);

    MOVE(2, 13, y_out);
    EXPECT("step one ulp outside", LV(1, 2, S, 13, y_out));
    MOVE(2, 13, 14);
    EXPECT("step back onto the boundary", EN(1, 2, S, 13, 14));

    /* The observer's range one ulp short of 5 loses all four boundary targets. */
    RANGE(1, S, r_in);
    EXPECT("range one ulp short", LV(1, 2, S, 13, 14), LV(1, 3, S, 7, 6), LV(1, 4, S, 15, 10),
           LV(1, 5, S, 10, 5));
    RANGE(1, S, 5);
    EXPECT("range back to 5", EN(1, 2, S, 13, 14), EN(1, 3, S, 7, 6), EN(1, 4, S, 15, 10),
           EN(1, 5, S, 10, 5));

    /*
     * The observer moving one ulp right (x1 = 10 + 2^-49) puts 7 exactly 5 away
     * and 3 just beyond 5; 2, 4 and 5 stay inside, 6 and 8 outside.
     */
    {
        const double x1 = nextafter(10.0, INFINITY);
        assert_true((x_out - x1) * (x_out - x1) == 25.0);
        assert_true((7.0 - x1) * (7.0 - x1) + 16.0 > 25.0);
        MOVE(1, x1, 10);
        EXPECT("observer one ulp right", LV(1, 3, S, 7, 6), EN(1, 7, S, x_out, 10));
        EXPECT_LIST(1, S, 2, 4, 5, 7);
        MOVE(1, 10, 10);
        EXPECT("observer back", EN(1, 3, S, 7, 6), LV(1, 7, S, x_out, 10));
    }

    /* Binary fractions are exact as well: 0.75, 1, 1.25. */
    ADD(9, 600, 600, 1.25, 0, 0, 0);
    EXPECT_NONE("add 9");
    ADD(10, 600.75, 601, 0, 0, 0, 0);
    EXPECT("fractional 3-4-5", EN(9, 10, S, 600.75, 601));
    MOVE(10, 600.75, nextafter(601.0, INFINITY));
    EXPECT("fractional just beyond", LV(9, 10, S, 600.75, nextafter(601.0, INFINITY)));
    END();
}

static void test_boundary_inside(void **state)
{
    (void)state;
    tu_for_each_backend(check_boundary);
}

/* v moved by k ulps (k < 0: down). */
static double ulps(double v, int k)
{
    for (; k > 0; k--)
        v = nextafter(v, INFINITY);
    for (; k < 0; k++)
        v = nextafter(v, -INFINITY);
    return v;
}

/*
 * The relation rounds the difference of the coordinates: a target a few
 * ulps beyond fl(o - R), the edge of the observer's reach as the observer
 * grid would compute it, can still give fl(t - o) == -R, and be perceived
 * (an observer at y = 128 with range 64 sees a target at
 * 63.99999999999999). Observers whose reach ends on a cell edge of the
 * observer grid (cells of 32, ranges in the grid's middle band: neither
 * short-sighted nor wide), targets a few ulps either side of that edge on
 * each side of the observer, arriving by add and by move: percept must
 * agree with the test computed here, case by case.
 */
static void check_rounded_reach(const char *backend)
{
    BEGIN(NOMOVE "[sight]\nobserver_cell_size = 32\n");
    static const double edges[] = {64, 256, 512, 992};
    static const double ranges[] = {48, 64, 80};
    int cases = 0, inside = 0, beyond_edge = 0;
    for (size_t e = 0; e < COUNT_OF(edges); e++)
        for (size_t r = 0; r < COUNT_OF(ranges); r++)
            for (int side = 0; side < 4; side++)
                for (int j = -2; j <= 2; j++)
                    for (int k = -3; k <= 3; k++) {
                        double R = ranges[r], sign = side & 1 ? -1 : 1;
                        /* The observer stands R from the edge, and the target
                         * near the observer's rounded reach on that side. */
                        double o = ulps(edges[e] + sign * R, j);
                        double reach = o - sign * R;
                        double t = ulps(reach, k);
                        double ox = side < 2 ? o : 512, oy = side < 2 ? 512 : o;
                        double tx = side < 2 ? t : 512, ty = side < 2 ? 512 : t;
                        double dx = tx - ox, dy = ty - oy;
                        int expect = dx * dx + dy * dy <= R * R;
                        cases++;
                        inside += expect;
                        beyond_edge += expect && (sign > 0 ? t < reach : t > reach);
                        ADD(1, ox, oy, R, 0, 0, 0);
                        ADD(2, tx, ty, 0, 0, 0, 0);
                        tu_recorder_clear(&rec);
                        if (percept_perceives(w, 1, 2, S) != expect)
                            fail_msg("%s: observer at (%.17g, %.17g) range %g, target added at "
                                     "(%.17g, %.17g): perceives %d, the relation says %d",
                                     backend, ox, oy, R, tx, ty, !expect, expect);
                        MOVE(2, 5, 5);
                        MOVE(2, tx, ty);
                        tu_recorder_clear(&rec);
                        if (percept_perceives(w, 1, 2, S) != expect)
                            fail_msg("%s: observer at (%.17g, %.17g) range %g, target moved to "
                                     "(%.17g, %.17g): perceives %d, the relation says %d",
                                     backend, ox, oy, R, tx, ty, !expect, expect);
                        REMOVE(2);
                        REMOVE(1);
                        tu_recorder_clear(&rec);
                    }
    /* The cases must include the one that matters, and both outcomes. */
    assert_true(beyond_edge > 0);
    assert_true(inside > 0 && inside < cases);
    END();
}

static void test_rounded_reach(void **state)
{
    (void)state;
    tu_for_each_backend(check_rounded_reach);
}

/*
 * The relation rounds each square before adding: fl(fl(dx*dx) + fl(dy*dy)).
 * A fused multiply-add rounds once, fl(dx*dx + fl(dy*dy)), and a compiler
 * may use one for the sum (-ffp-contract=fast on a processor with FMA, or
 * -ffast-math). These two pairs come out the other way fused, whichever
 * square is fused: the first is perceived only without fusing, the second
 * only with it. The answers are worked out here with each product stored
 * through a volatile, which no compiler may fuse with the addition.
 */
static void check_unfused_sum(const char *backend)
{
    static const struct {
        double dx, dy, r;
    } pairs[] = {
        {0x1.32f53024edc59p+6, 0x1.73bd8bb35c424p+4, 0x1.40b7cb91f441fp+6},
        {0x1.05e205c472dep+5, 0x1.6ca1bb1b49672p+6, 0x1.836e12c5f647fp+6},
    };
    BEGIN(NOMOVE);
    int perceived = 0;
    for (size_t i = 0; i < COUNT_OF(pairs); i++) {
        double dx = pairs[i].dx, dy = pairs[i].dy, r = pairs[i].r;
        volatile double xx = dx * dx, yy = dy * dy, rr = r * r;
        double sum = xx + yy;
        int expect = sum <= rr;
        /* A case only if fusing either square would decide it otherwise. */
        assert_true((fma(dx, dx, yy) <= rr) != expect);
        assert_true((fma(dy, dy, xx) <= rr) != expect);
        perceived += expect;
        /* Target added to the observer, and observer added to the target. */
        ADD(1, 0, 0, r, 0, 0, 0);
        ADD(2, dx, dy, 0, 0, 0, 0);
        if (percept_perceives(w, 1, 2, S) != expect)
            fail_msg("%s: observer at (0, 0) range %a, target added at (%a, %a): perceives %d, "
                     "the relation (squares rounded apart) says %d",
                     backend, r, dx, dy, !expect, expect);
        REMOVE(1);
        ADD(1, 0, 0, r, 0, 0, 0);
        if (percept_perceives(w, 1, 2, S) != expect)
            fail_msg("%s: target at (%a, %a), observer added at (0, 0) range %a: perceives %d, "
                     "the relation (squares rounded apart) says %d",
                     backend, dx, dy, r, !expect, expect);
        REMOVE(2);
        REMOVE(1);
        tu_recorder_clear(&rec);
    }
    assert_int_equal(perceived, 1); /* one case of each outcome */
    END();
}

static void test_unfused_sum(void **state)
{
    (void)state;
    tu_for_each_backend(check_unfused_sum);
}

/* ------------------------------------------------------------------------ */
/* Asymmetric ranges                                                          */

static void check_asymmetric(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(1, 100, 100, 10, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, 106, 108, 3, 0, 0, 0);
    EXPECT("1 sees 2 at distance 10, 2 does not see 1", EN(1, 2, S, 106, 108));
    assert_int_equal(percept_perceives(w, 2, 1, PERCEPT_SIGHT), 0);
    RANGE(2, S, 10);
    EXPECT("2's sight grows to 10", EN(2, 1, S, 100, 100));
    RANGE(1, S, 9.5);
    EXPECT("1's sight shrinks below 10", LV(1, 2, S, 106, 108));
    assert_int_equal(percept_perceives(w, 2, 1, PERCEPT_SIGHT), 1);
    RANGE(2, S, 10);
    EXPECT_NONE("the same range again");
    RANGE(1, H, 20);
    EXPECT("1 gains hearing; 2 has none", EN(1, 2, H, 106, 108));
    assert_int_equal(percept_perceives(w, 2, 1, PERCEPT_HEARING), 0);
    END();
}

static void test_asymmetric_ranges(void **state)
{
    (void)state;
    tu_for_each_backend(check_asymmetric);
}

/* ------------------------------------------------------------------------ */
/* add and remove report both directions, ordered by observer, target, sense  */

static void check_add_remove_both(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(BIG, 500, 500, 10, 10, 0, 0);
    EXPECT_NONE("add 4294967295");
    ADD(7, 500, 503, 0, 5, 5, 0);
    EXPECT("add 7 at distance 3", EN(7, BIG, H, 500, 500), EN(7, BIG, M, 500, 500),
           EN(BIG, 7, S, 500, 503), EN(BIG, 7, H, 500, 503));
    /* 100 is 4 from BIG and exactly 5 from 7. */
    ADD(100, 504, 500, 4, 0, 4, 0);
    EXPECT("add 100", EN(7, 100, H, 504, 500), EN(7, 100, M, 504, 500), EN(100, BIG, S, 500, 500),
           EN(100, BIG, M, 500, 500), EN(BIG, 100, S, 504, 500), EN(BIG, 100, H, 504, 500));
    /* ID 0 sorts before everyone, 4294967295 after (unsigned order). */
    ADD(0, 500, 500, 0, 0, 0, 0);
    EXPECT("add 0", EN(7, 0, H, 500, 500), EN(7, 0, M, 500, 500), EN(100, 0, S, 500, 500),
           EN(100, 0, M, 500, 500), EN(BIG, 0, S, 500, 500), EN(BIG, 0, H, 500, 500));
    assert_int_equal(percept_entity_count(w), 4);
    EXPECT_LIST_BY(0, S, 100, BIG);
    EXPECT_LIST(BIG, H, 0, 7, 100);

    /* Removal: every pair of 100 leaves, positions are the targets' (100's last one). */
    REMOVE(100);
    EXPECT("remove 100", LV(7, 100, H, 504, 500), LV(7, 100, M, 504, 500), LV(100, 0, S, 500, 500),
           LV(100, 0, M, 500, 500), LV(100, BIG, S, 500, 500), LV(100, BIG, M, 500, 500),
           LV(BIG, 100, S, 504, 500), LV(BIG, 100, H, 504, 500));
    assert_int_equal(percept_contains(w, 100), 0);
    assert_int_equal(percept_entity_count(w), 3);
    assert_int_equal(percept_perceives(w, 7, 100, PERCEPT_HEARING), PERCEPT_ENOENT);
    EXPECT_LIST_BY(0, S, BIG);

    REMOVE(0);
    EXPECT("remove 0", LV(7, 0, H, 500, 500), LV(7, 0, M, 500, 500), LV(BIG, 0, S, 500, 500),
           LV(BIG, 0, H, 500, 500));
    REMOVE(BIG);
    EXPECT("remove 4294967295", LV(7, BIG, H, 500, 500), LV(7, BIG, M, 500, 500),
           LV(BIG, 7, S, 500, 503), LV(BIG, 7, H, 500, 503));
    REMOVE(7);
    EXPECT_NONE("remove the last one");
    assert_int_equal(percept_entity_count(w), 0);
    END();
}

static void test_add_remove_both_directions(void **state)
{
    (void)state;
    tu_for_each_backend(check_add_remove_both);
}

/* The documented order within one call, with different senses per entity. */
static void check_event_order(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(30, 600, 602, 10, 10, 10, SB(H));
    EXPECT_NONE("add 30");
    ADD(20, 602, 600, 0, 10, 10, 0);
    EXPECT("add 20", EN(20, 30, M, 600, 602), EN(30, 20, S, 602, 600), EN(30, 20, H, 602, 600),
           EN(30, 20, M, 602, 600));
    ADD(10, 600, 600, 10, 0, 10, 0);
    EXPECT("add 10", EN(10, 20, S, 602, 600), EN(10, 20, M, 602, 600), EN(10, 30, S, 600, 602),
           EN(10, 30, M, 600, 602), EN(20, 10, H, 600, 600), EN(20, 10, M, 600, 600),
           EN(30, 10, S, 600, 600), EN(30, 10, H, 600, 600), EN(30, 10, M, 600, 600));
    /* 15 is sqrt(2) from each, its ranges 1.5 reach them all. */
    ADD(15, 601, 601, 1.5, 1.5, 1.5, 0);
    EXPECT("add 15 in the middle", EN(10, 15, S, 601, 601), EN(10, 15, M, 601, 601),
           EN(15, 10, S, 600, 600), EN(15, 10, H, 600, 600), EN(15, 10, M, 600, 600),
           EN(15, 20, S, 602, 600), EN(15, 20, H, 602, 600), EN(15, 20, M, 602, 600),
           EN(15, 30, S, 600, 602), EN(15, 30, M, 600, 602), EN(20, 15, H, 601, 601),
           EN(20, 15, M, 601, 601), EN(30, 15, S, 601, 601), EN(30, 15, H, 601, 601),
           EN(30, 15, M, 601, 601));
    REMOVE(15);
    EXPECT("remove 15", LV(10, 15, S, 601, 601), LV(10, 15, M, 601, 601), LV(15, 10, S, 600, 600),
           LV(15, 10, H, 600, 600), LV(15, 10, M, 600, 600), LV(15, 20, S, 602, 600),
           LV(15, 20, H, 602, 600), LV(15, 20, M, 602, 600), LV(15, 30, S, 600, 602),
           LV(15, 30, M, 600, 602), LV(20, 15, H, 601, 601), LV(20, 15, M, 601, 601),
           LV(30, 15, S, 601, 601), LV(30, 15, H, 601, 601), LV(30, 15, M, 601, 601));
    /* A move that both gains and loses: 10 to (612,600) leaves 30 (dist 12.2), keeps 20 (10). */
    MOVE(10, 612, 600);
    EXPECT("move 10 away", LV(10, 30, S, 600, 602), LV(10, 30, M, 600, 602),
           LV(30, 10, S, 612, 600), LV(30, 10, H, 612, 600), LV(30, 10, M, 612, 600));
    END();
}

static void test_event_order(void **state)
{
    (void)state;
    tu_for_each_backend(check_event_order);
}

/* ------------------------------------------------------------------------ */
/* hide/show                                                                  */

static void check_hide_show(const char *backend)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    BEGIN(NOMOVE);

    ADD(1, 200, 200, 10, 10, 10, 0);
    EXPECT_NONE("add 1");
    ADD(2, 200, 200, 10, 10, 10, 0);
    EXPECT("add 2", EN(1, 2, S, 200, 200), EN(1, 2, H, 200, 200), EN(1, 2, M, 200, 200),
           EN(2, 1, S, 200, 200), EN(2, 1, H, 200, 200), EN(2, 1, M, 200, 200));
    ADD(3, 206, 208, 0, 0, 0, 0);
    EXPECT("add 3 at distance 10", EN(1, 3, S, 206, 208), EN(1, 3, H, 206, 208),
           EN(1, 3, M, 206, 208), EN(2, 3, S, 206, 208), EN(2, 3, H, 206, 208),
           EN(2, 3, M, 206, 208));

    HIDE(3, S, 1);
    EXPECT("hide 3 from sight", LV(1, 3, S, 206, 208), LV(2, 3, S, 206, 208));
    HIDE(3, S, 1);
    EXPECT_NONE("hide again");
    assert_int_equal(percept_get_entity(w, 3, &d), PERCEPT_OK);
    assert_int_equal(d.hidden, SB(S));
    HIDE(3, H, 2); /* any non-zero value hides */
    EXPECT("hide 3 from hearing", LV(1, 3, H, 206, 208), LV(2, 3, H, 206, 208));
    assert_int_equal(percept_get_entity(w, 3, &d), PERCEPT_OK);
    assert_int_equal(d.hidden, SB(S) | SB(H));

    /* Hidden is not blind: 1 still smells 2 while 2 no longer smells 1. */
    HIDE(1, M, 1);
    EXPECT("hide 1 from smell", LV(2, 1, M, 200, 200));
    assert_int_equal(percept_perceives(w, 1, 2, PERCEPT_SMELL), 1);
    assert_int_equal(percept_perceives(w, 1, 3, PERCEPT_SMELL), 1);

    MOVE(3, 500, 500);
    EXPECT("3 goes away", LV(1, 3, M, 500, 500), LV(2, 3, M, 500, 500));
    HIDE(3, S, 0);
    EXPECT_NONE("show while nobody is near");
    MOVE(3, 206, 208);
    EXPECT("3 comes back, still hidden from hearing", EN(1, 3, S, 206, 208), EN(1, 3, M, 206, 208),
           EN(2, 3, S, 206, 208), EN(2, 3, M, 206, 208));
    HIDE(3, H, 0);
    EXPECT("show 3 to hearing", EN(1, 3, H, 206, 208), EN(2, 3, H, 206, 208));
    HIDE(3, H, 0);
    EXPECT_NONE("show again");
    HIDE(1, M, 0);
    EXPECT("show 1 to smell", EN(2, 1, M, 200, 200));
    assert_int_equal(percept_get_entity(w, 3, &d), PERCEPT_OK);
    assert_int_equal(d.hidden, 0);

    /* Hiding an entity whose observers lack the sense changes nothing. */
    RANGE(1, M, 0);
    EXPECT("1 loses smell", LV(1, 2, M, 200, 200), LV(1, 3, M, 206, 208));
    RANGE(2, M, 0);
    EXPECT("2 loses smell", LV(2, 1, M, 200, 200), LV(2, 3, M, 206, 208));
    HIDE(3, M, 1);
    EXPECT_NONE("hide from a sense nobody has");
    END();
}

static void test_hide_show(void **state)
{
    (void)state;
    tu_for_each_backend(check_hide_show);
}

/* ------------------------------------------------------------------------ */
/* Range changes, including to 0 and back                                    */

static void check_range_changes(const char *backend)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    BEGIN(NOMOVE);

    ADD(1, 300, 300, 10, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, 303, 304, 0, 0, 0, 0);
    EXPECT("2 at 5", EN(1, 2, S, 303, 304));
    ADD(3, 308, 300, 0, 0, 0, 0);
    EXPECT("3 at 8", EN(1, 3, S, 308, 300));
    ADD(4, 310, 300, 0, 0, 0, 0);
    EXPECT("4 at 10", EN(1, 4, S, 310, 300));
    ADD(5, 320, 300, 0, 0, 0, 0);
    EXPECT_NONE("5 at 20");

    RANGE(1, S, 0);
    EXPECT("sight off", LV(1, 2, S, 303, 304), LV(1, 3, S, 308, 300), LV(1, 4, S, 310, 300));
    EXPECT_EMPTY(1, S);
    assert_int_equal(percept_get_entity(w, 1, &d), PERCEPT_OK);
    assert_true(d.sense[PERCEPT_SIGHT].range == 0.0);
    RANGE(1, S, 0);
    EXPECT_NONE("sight off again");
    RANGE(1, S, 8);
    EXPECT("sight back at 8", EN(1, 2, S, 303, 304), EN(1, 3, S, 308, 300));
    RANGE(1, S, 20);
    EXPECT("sight 20", EN(1, 4, S, 310, 300), EN(1, 5, S, 320, 300));
    RANGE(1, S, 5);
    EXPECT("sight 5", LV(1, 3, S, 308, 300), LV(1, 4, S, 310, 300), LV(1, 5, S, 320, 300));
    EXPECT_LIST(1, S, 2);
    RANGE(1, H, 1e12);
    EXPECT("hearing far beyond the world", EN(1, 2, H, 303, 304), EN(1, 3, H, 308, 300),
           EN(1, 4, H, 310, 300), EN(1, 5, H, 320, 300));
    RANGE(1, S, 5);
    EXPECT_NONE("same range");
    assert_int_equal(percept_get_entity(w, 1, &d), PERCEPT_OK);
    assert_true(d.sense[PERCEPT_SIGHT].range == 5.0);
    assert_true(d.sense[PERCEPT_HEARING].range == 1e12);
    assert_true(d.sense[PERCEPT_SMELL].range == 0.0);
    /* A target's own range does not matter for being perceived. */
    RANGE(5, S, 100);
    EXPECT("5 gains sight", EN(5, 1, S, 300, 300), EN(5, 2, S, 303, 304), EN(5, 3, S, 308, 300),
           EN(5, 4, S, 310, 300));
    RANGE(5, S, 0);
    EXPECT("5 loses sight", LV(5, 1, S, 300, 300), LV(5, 2, S, 303, 304), LV(5, 3, S, 308, 300),
           LV(5, 4, S, 310, 300));
    END();
}

static void test_range_changes(void **state)
{
    (void)state;
    tu_for_each_backend(check_range_changes);
}

/* ------------------------------------------------------------------------ */
/* Coincident entities                                                        */

static void check_coincident(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(4, 64, 64, 1, 0, 0, 0);
    EXPECT_NONE("add 4");
    ADD(3, 64, 64, 1, 0, 0, 0);
    EXPECT("add 3", EN(3, 4, S, 64, 64), EN(4, 3, S, 64, 64));
    ADD(2, 64, 64, 1, 0, 0, 0);
    EXPECT("add 2", EN(2, 3, S, 64, 64), EN(2, 4, S, 64, 64), EN(3, 2, S, 64, 64),
           EN(4, 2, S, 64, 64));
    ADD(1, 64, 64, 1, 0, 0, 0);
    EXPECT("add 1", EN(1, 2, S, 64, 64), EN(1, 3, S, 64, 64), EN(1, 4, S, 64, 64),
           EN(2, 1, S, 64, 64), EN(3, 1, S, 64, 64), EN(4, 1, S, 64, 64));
    EXPECT_LIST(1, S, 2, 3, 4);
    EXPECT_LIST(3, S, 1, 2, 4);
    EXPECT_LIST_BY(4, S, 1, 2, 3);

    MOVE(1, 65, 64);
    EXPECT_NONE("step to the boundary of everyone's range");
    MOVE(1, nextafter(65.0, INFINITY), 64);
    EXPECT("one ulp further", LV(1, 2, S, 64, 64), LV(1, 3, S, 64, 64), LV(1, 4, S, 64, 64),
           LV(2, 1, S, nextafter(65.0, INFINITY), 64), LV(3, 1, S, nextafter(65.0, INFINITY), 64),
           LV(4, 1, S, nextafter(65.0, INFINITY), 64));
    MOVE(1, 64, 64);
    EXPECT("back", EN(1, 2, S, 64, 64), EN(1, 3, S, 64, 64), EN(1, 4, S, 64, 64),
           EN(2, 1, S, 64, 64), EN(3, 1, S, 64, 64), EN(4, 1, S, 64, 64));
    REMOVE(2);
    EXPECT("remove 2", LV(1, 2, S, 64, 64), LV(2, 1, S, 64, 64), LV(2, 3, S, 64, 64),
           LV(2, 4, S, 64, 64), LV(3, 2, S, 64, 64), LV(4, 2, S, 64, 64));
    END();
}

static void test_coincident(void **state)
{
    (void)state;
    tu_for_each_backend(check_coincident);
}

/* ------------------------------------------------------------------------ */
/* Teleports, across the world and far outside it                            */

static void check_teleport(const char *backend)
{
    BEGIN(NOMOVE);

    ADD(1, 10, 10, 5, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, 12, 10, 5, 0, 0, 0);
    EXPECT("add 2", EN(1, 2, S, 12, 10), EN(2, 1, S, 10, 10));
    ADD(3, 1000, 1000, 5, 0, 0, 0);
    EXPECT_NONE("add 3 far away");
    ADD(4, 1003, 1004, 0, 0, 0, 0);
    EXPECT("add 4 near 3", EN(3, 4, S, 1003, 1004));

    MOVE(2, 1003, 1000);
    EXPECT("teleport across the world", LV(1, 2, S, 1003, 1000), LV(2, 1, S, 10, 10),
           EN(2, 3, S, 1000, 1000), EN(2, 4, S, 1003, 1004), EN(3, 2, S, 1003, 1000));
    MOVE(2, 1e12, -1e12);
    EXPECT("teleport far outside", LV(2, 3, S, 1000, 1000), LV(2, 4, S, 1003, 1004),
           LV(3, 2, S, 1e12, -1e12));
    MOVE(2, -1e12, 1e12);
    EXPECT_NONE("teleport between far places");
    MOVE(2, 10, 13);
    EXPECT("teleport back home", EN(1, 2, S, 10, 13), EN(2, 1, S, 10, 10));
    EXPECT_LIST(2, S, 1);
    EXPECT_EMPTY_BY(4, H);
    EXPECT_LIST_BY(4, S, 3);
    END();
}

static void test_teleport(void **state)
{
    (void)state;
    tu_for_each_backend(check_teleport);
}

/* ------------------------------------------------------------------------ */
/* An ID removed and added again is a new entity                             */

static void check_id_reuse(const char *backend)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    BEGIN(NOMOVE);

    ADD(5, 400, 400, 10, 10, 10, SB(S));
    EXPECT_NONE("add 5");
    ADD(6, 401, 400, 10, 0, 0, 0);
    EXPECT("add 6 (5 is hidden from sight)", EN(5, 6, S, 401, 400), EN(5, 6, H, 401, 400),
           EN(5, 6, M, 401, 400));
    REMOVE(5);
    EXPECT("remove 5", LV(5, 6, S, 401, 400), LV(5, 6, H, 401, 400), LV(5, 6, M, 401, 400));
    assert_int_equal(percept_contains(w, 5), 0);
    assert_int_equal(percept_get_entity(w, 5, &d), PERCEPT_ENOENT);
    assert_int_equal(percept_perceives(w, 6, 5, PERCEPT_SIGHT), PERCEPT_ENOENT);

    /* Nothing of the old 5 survives: no hidden flag, other ranges. */
    ADD(5, 402, 400, 0, 0, 2, 0);
    EXPECT("add 5 again", EN(5, 6, M, 401, 400), EN(6, 5, S, 402, 400));
    memset(&d, 0xff, sizeof d);
    d.size = sizeof d;
    assert_int_equal(percept_get_entity(w, 5, &d), PERCEPT_OK);
    assert_true(d.x == 402 && d.y == 400);
    assert_true(d.sense[0].range == 0 && d.sense[1].range == 0 && d.sense[2].range == 2);
    assert_int_equal(d.hidden, 0);
    EXPECT_LIST(5, M, 6);
    EXPECT_EMPTY(5, S);

    REMOVE(5);
    EXPECT("remove 5 again", LV(5, 6, M, 401, 400), LV(6, 5, S, 402, 400));
    ADD(5, 900, 900, 1, 1, 1, 0);
    EXPECT_NONE("add 5 far away");
    assert_int_equal(percept_entity_count(w), 2);
    END();
}

static void test_id_reuse(void **state)
{
    (void)state;
    tu_for_each_backend(check_id_reuse);
}

/* ------------------------------------------------------------------------ */
/* Entities outside the world bounds                                          */

static void check_outside_bounds(const char *backend)
{
    const double big = 1e14; /* integers up to 2^53 are exact; the ulp here is 1/64 */
    BEGIN(NOMOVE "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 100\nmax_y = 100\n");

    ADD(1, -500, -500, 5, 0, 0, 0);
    EXPECT_NONE("add 1");
    ADD(2, -497, -496, 0, 0, 0, 0);
    EXPECT("3-4-5 at negative coordinates", EN(1, 2, S, -497, -496));
    ADD(3, big, big, 0, 5, 0, 0);
    EXPECT_NONE("add 3");
    ADD(4, big + 3, big + 4, 0, 0, 0, 0);
    EXPECT("3-4-5 at huge coordinates", EN(3, 4, H, big + 3, big + 4));
    ADD(5, PERCEPT_COORD_LIMIT, -PERCEPT_COORD_LIMIT, 0, 0, 0, 0);
    EXPECT_NONE("add at the coordinate limit");
    ADD(6, 50, 50, 0, 0, 1e13, 0);
    EXPECT("a range of 1e13 from inside the world", EN(6, 1, M, -500, -500),
           EN(6, 2, M, -497, -496));
    /* 7 is just under 1e15 from 1 and 2, more from the others. */
    ADD(7, -PERCEPT_COORD_LIMIT, 0, 0, 0, PERCEPT_COORD_LIMIT, 0);
    EXPECT("a range at the limit", EN(7, 1, M, -500, -500), EN(7, 2, M, -497, -496));

    MOVE(4, big + 3, big + 4.0625);
    EXPECT("just beyond at huge coordinates", LV(3, 4, H, big + 3, big + 4.0625));
    MOVE(4, big, big - 5);
    EXPECT("boundary below", EN(3, 4, H, big, big - 5));
    /* 1 to the far corner: exactly 1e15 below 7, on the boundary of 7's smell. */
    MOVE(1, -PERCEPT_COORD_LIMIT, -PERCEPT_COORD_LIMIT);
    EXPECT("1 to the far corner", LV(1, 2, S, -497, -496),
           LV(6, 1, M, -PERCEPT_COORD_LIMIT, -PERCEPT_COORD_LIMIT));
    assert_int_equal(percept_perceives(w, 7, 1, PERCEPT_SMELL), 1);
    /* 5 along the limit: first exactly 1e15 above 7, then far from everyone. */
    MOVE(5, -PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT);
    EXPECT("5 onto 7's boundary", EN(7, 5, M, -PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT));
    MOVE(5, PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT);
    EXPECT("5 to the other corner", LV(7, 5, M, PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT));
    assert_int_equal(percept_entity_count(w), 7);
    END();
}

static void test_outside_bounds(void **state)
{
    (void)state;
    tu_for_each_backend(check_outside_bounds);
}

/* ------------------------------------------------------------------------ */
/* MOVE events                                                                */

/*
 * One scenario run with MOVE events on (explicitly or by default) and off.
 * 4 moves from (705,700) to (705,704): 1 keeps it (5 -> sqrt 41), 3 loses it
 * (10 -> sqrt 116), 5 gains it (12 -> 8). 4's own smell keeps 1, 3 and 5:
 * pairs where the mover is the observer have no moved target, so no MOVE.
 */
static void move_scenario(const char *backend, const char *extra, int moves_on)
{
    BEGIN(extra);

    ADD(1, 700, 700, 10, 10, 0, 0);
    EXPECT_NONE("add 1");
    ADD(3, 695, 700, 10, 0, 0, 0);
    EXPECT("add 3", EN(1, 3, S, 695, 700), EN(1, 3, H, 695, 700), EN(3, 1, S, 700, 700));
    ADD(5, 705, 712, 10, 0, 0, 0);
    EXPECT_NONE("add 5");
    ADD(4, 705, 700, 0, 0, 100, 0);
    EXPECT("add 4", EN(1, 4, S, 705, 700), EN(1, 4, H, 705, 700), EN(3, 4, S, 705, 700),
           EN(4, 1, M, 700, 700), EN(4, 3, M, 695, 700), EN(4, 5, M, 705, 712));

    MOVE(4, 705, 704);
    if (moves_on)
        EXPECT("move 4 with MOVE events", MV(1, 4, S, 705, 704), MV(1, 4, H, 705, 704),
               LV(3, 4, S, 705, 704), EN(5, 4, S, 705, 704));
    else
        EXPECT("move 4 without MOVE events", LV(3, 4, S, 705, 704), EN(5, 4, S, 705, 704));

    /* 1 moves: 3 (sight) and 4 (smell) keep perceiving it; 1's own pairs get nothing. */
    MOVE(1, 700, 701);
    if (moves_on)
        EXPECT("move 1 with MOVE events", MV(3, 1, S, 700, 701), MV(4, 1, M, 700, 701));
    else
        EXPECT_NONE("move 1 without MOVE events");

    /* A move that nobody perceives gives nothing either way. */
    RANGE(3, S, 0);
    EXPECT("3 goes blind", LV(3, 1, S, 700, 701));
    MOVE(3, 691, 700); /* sqrt(82) from 1 */
    if (moves_on)
        EXPECT("move 3", MV(1, 3, S, 691, 700), MV(1, 3, H, 691, 700), MV(4, 3, M, 691, 700));
    else
        EXPECT_NONE("move 3 without MOVE events");
    HIDE(3, S, 1);
    EXPECT("hide 3 from sight", LV(1, 3, S, 691, 700));
    MOVE(3, 692, 700);
    if (moves_on)
        EXPECT("move hidden 3", MV(1, 3, H, 692, 700), MV(4, 3, M, 692, 700));
    else
        EXPECT_NONE("move hidden 3 without MOVE events");
    END();
}

static void check_move_events_on(const char *backend)
{
    move_scenario(backend, "move_events = on\n", 1);
    move_scenario(backend, NULL, 1); /* on by default */
}

static void check_move_events_off(const char *backend)
{
    move_scenario(backend, "move_events = off\n", 0);
}

static void test_move_events_on(void **state)
{
    (void)state;
    tu_for_each_backend(check_move_events_on);
}

static void test_move_events_off(void **state)
{
    (void)state;
    tu_for_each_backend(check_move_events_off);
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                    */

/* The lists: their size for capacity 0; a buffer too short is left untouched. */
static void check_queries(const char *backend)
{
    percept_id ids[3] = {777, 777, 777};
    size_t count = 12345;
    BEGIN(NOMOVE);
    ADD(10, 100, 100, 5, 3, 0, 0);
    ADD(20, 103, 104, 0, 0, 0, 0);
    ADD(30, 100, 103, 0, 0, 0, SB(H));
    ADD(5, 100, 100, 0, 0, 0, 0);
    assert_int_equal(percept_perceived(w, 10, S, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, 3);
    count = 12345;
    assert_int_equal(percept_perceived(w, 10, S, ids, 2, &count), PERCEPT_OK);
    assert_int_equal(count, 3);
    assert_true(ids[0] == 777 && ids[1] == 777 && ids[2] == 777);
    assert_int_equal(percept_perceived_by(w, 5, S, NULL, 0, &count), PERCEPT_OK);
    assert_int_equal(count, 1);
    assert_int_equal(percept_perceived_by(w, 20, M, ids, 3, &count), PERCEPT_OK);
    assert_int_equal(count, 0);
    EXPECT_LIST(10, S, 5, 20, 30);
    EXPECT_LIST_BY(5, H, 10);
    for (int s = 0; s < SENSES; s++)
        assert_string_equal(percept_backend_name(w, (percept_sense)s), backend);
    END();
}

static void test_queries(void **state)
{
    (void)state;
    tu_for_each_backend(check_queries);
}

static void test_names(void **state)
{
    static const struct {
        int status;
        const char *name;
    } statuses[] = {
        {PERCEPT_OK, "PERCEPT_OK"},           {PERCEPT_EINVAL, "PERCEPT_EINVAL"},
        {PERCEPT_ENOMEM, "PERCEPT_ENOMEM"},   {PERCEPT_EEXIST, "PERCEPT_EEXIST"},
        {PERCEPT_ENOENT, "PERCEPT_ENOENT"},   {PERCEPT_EBUSY, "PERCEPT_EBUSY"},
        {PERCEPT_ECONFIG, "PERCEPT_ECONFIG"}, {PERCEPT_EPLUGIN, "PERCEPT_EPLUGIN"},
        {PERCEPT_EIO, "PERCEPT_EIO"},
    };
    (void)state;
    for (size_t i = 0; i < COUNT_OF(statuses); i++) {
        const char *text = percept_strerror(statuses[i].status);
        assert_non_null(text);
        assert_true(text[0] != '\0');
        assert_string_equal(percept_status_name(statuses[i].status), statuses[i].name);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_self_never_perceived),
        tu_backend_test(test_range_zero_lacks_sense),
        tu_backend_test(test_hidden_per_sense),
        tu_backend_test(test_boundary_inside),
        tu_backend_test(test_rounded_reach),
        tu_backend_test(test_unfused_sum),
        tu_backend_test(test_asymmetric_ranges),
        tu_backend_test(test_add_remove_both_directions),
        tu_backend_test(test_event_order),
        tu_backend_test(test_hide_show),
        tu_backend_test(test_range_changes),
        tu_backend_test(test_coincident),
        tu_backend_test(test_teleport),
        tu_backend_test(test_id_reuse),
        tu_backend_test(test_outside_bounds),
        tu_backend_test(test_move_events_on),
        tu_backend_test(test_move_events_off),
        tu_backend_test(test_queries),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
