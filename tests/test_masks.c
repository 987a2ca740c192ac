/*
 * test_masks.c - tags and ignore masks (rule 4 of the relation,
 * include/percept.h): by a sense, an observer perceives no target whose tags
 * share a bit with its ignore mask for that sense; and a world of eight
 * named senses, each with a mask of its own. Through the public API on
 * every backend, every expected event worked out by hand.
 */
#include "handworked.h"

#include <string.h>

/*
 * Observer 1 at the origin ignores tag 0x2 by sight and nothing by hearing;
 * targets on the x axis: 2 (tags 0x2), 3 (0x4), 4 (0x6: shares 0x2), 5 (none).
 */
static void check_tag_filter(const char *backend)
{
    static const uint32_t tags[] = {0x2, 0x4, 0x6, 0};
    BEGIN(NOMOVE);
    for (percept_id i = 0; i < 4; i++) {
        percept_entity_desc t = tu_desc(1.0 + i, 0, 0, 0, 0, 0);
        t.tags = tags[i];
        ADD_DESC(2 + i, t);
    }
    percept_entity_desc o = tu_desc(0, 0, 10, 10, 0, 0);
    o.sense[S].ignore = 0x2;
    ADD_DESC(1, o);
    EXPECT("sight ignores tag 0x2", EN(1, 2, H, 1, 0), EN(1, 3, S, 2, 0), EN(1, 3, H, 2, 0),
           EN(1, 4, H, 3, 0), EN(1, 5, S, 4, 0), EN(1, 5, H, 4, 0));

    percept_entity_desc four = tu_desc(3, 0, 0, 0, 0, 0);
    four.tags = 0x4;
    UPDATE(4, four);
    EXPECT("4 drops tag 0x2", EN(1, 4, S, 3, 0));
    o.sense[S].ignore = 0x4;
    UPDATE(1, o);
    EXPECT("sight ignores 0x4 instead", EN(1, 2, S, 1, 0), LV(1, 3, S, 2, 0), LV(1, 4, S, 3, 0));
    o.sense[S].ignore = 0xFFFFFFFFu;
    UPDATE(1, o);
    EXPECT("sight ignores every tag: only the untagged stays", LV(1, 2, S, 1, 0));
    EXPECT_LIST(1, S, 5);
    EXPECT_LIST(1, H, 2, 3, 4, 5);

    /* Tags are the target's, masks the observer's: 5 sees 1 (no tags),
     * whatever 1 ignores, until 5 ignores a tag 1 takes. */
    percept_entity_desc five = tu_desc(4, 0, 10, 0, 0, 0);
    UPDATE(5, five);
    EXPECT("5 gains sight", EN(5, 1, S, 0, 0), EN(5, 2, S, 1, 0), EN(5, 3, S, 2, 0),
           EN(5, 4, S, 3, 0));
    five.sense[S].ignore = 0x80000000u;
    UPDATE(5, five);
    EXPECT_NONE("5 ignores the high bit: no one has it");
    o.tags = 0x80000001u;
    UPDATE(1, o);
    EXPECT("1 takes the high bit", LV(5, 1, S, 0, 0));
    END();
}

static void test_tag_filter(void **state)
{
    (void)state;
    tu_for_each_backend(check_tag_filter);
}

/*
 * Eight senses, a to h: observer 1 has all of them, sense k ignoring tag
 * bit k; target 2 carries bits 1, 3, 5 and 7 and hides from g. Events come
 * in the world's order of senses.
 */
static void check_eight_senses(const char *backend)
{
    BEGIN(NOMOVE "[world]\nsenses = a b c d e f g h\n");
    assert_int_equal(percept_sense_count(w), 8);
    const int g = percept_sense_index(w, "g");
    assert_int_equal(g, 6);
    percept_entity_desc o = PERCEPT_ENTITY_DESC_INIT;
    for (int s = 0; s < 8; s++) {
        o.sense[s].range = 5;
        o.sense[s].ignore = 1u << s;
    }
    ADD_DESC(1, o);
    percept_entity_desc t = tu_desc(1, 0, 0, 0, 0, PERCEPT_SENSE_BIT(g));
    t.tags = 0xAA;
    ADD_DESC(2, t);
    EXPECT("a, c and e: g is hidden from", EN(1, 2, 0, 1, 0), EN(1, 2, 2, 1, 0), EN(1, 2, 4, 1, 0));
    HIDE(2, g, 0);
    EXPECT("shown to g", EN(1, 2, 6, 1, 0));
    RANGE(1, 7, 0);
    EXPECT_NONE("h off: it ignored 2 anyway");
    t.tags = 0;
    t.hidden = 0;
    UPDATE(2, t);
    EXPECT("2 without tags: b, d and f too", EN(1, 2, 1, 1, 0), EN(1, 2, 3, 1, 0),
           EN(1, 2, 5, 1, 0));
    REMOVE(1);
    EXPECT("1 leaves: every sense but h", LV(1, 2, 0, 1, 0), LV(1, 2, 1, 1, 0), LV(1, 2, 2, 1, 0),
           LV(1, 2, 3, 1, 0), LV(1, 2, 4, 1, 0), LV(1, 2, 5, 1, 0), LV(1, 2, 6, 1, 0));
    END();
}

static void test_eight_senses(void **state)
{
    (void)state;
    tu_for_each_backend(check_eight_senses);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_tag_filter),
        tu_backend_test(test_eight_senses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
