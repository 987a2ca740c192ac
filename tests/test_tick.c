/*
 * test_tick.c - percept_tick(): a batch of moves, turns and updates made at
 * once, on every backend. Cases worked out by hand show what "at once"
 * means (pairs that would enter and leave within the tick give nothing,
 * margins are judged against the relation before it, MOVE events go to the
 * pairs that hold through it); the checks of the entries, all-or-nothing;
 * the callback during a tick's delivery; and random ticks held to the model
 * (model_tick()) on worlds of 1, 2 and 4 threads, which must all deliver the
 * same events.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE for the huge-count test */
#include "handworked.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../tools/splitmix.h"

#define CH_MOVE TU_CH_MOVE
#define CH_TURN TU_CH_TURN
#define CH_UPDATE TU_CH_UPDATE

/* ------------------------------------------------------------------------ */
/* At once, worked out by hand                                               */

/*
 * Made one after the other, these ticks would bring a pair in and out (or
 * out and in) again; made at once, the relation before and after is the
 * same, and nothing is delivered.
 */
static void check_transient_pairs(const char *backend)
{
    BEGIN(NOMOVE);
    ADD(1, 0, 0, 5, 0, 0, 0);
    ADD(2, 10, 0, 0, 0, 0, 0);
    EXPECT_NONE("2 beyond 1's sight");
    TICK(CH_MOVE(2, 3, 0, 0), CH_MOVE(1, 20, 0, 0));
    EXPECT_NONE("2 comes within 1's former reach as 1 leaves: 17 apart");
    TICK(CH_MOVE(1, 0, 0, 0), CH_MOVE(2, 30, 0, 0));
    EXPECT_NONE("1 comes back to where 2 was as 2 leaves: 30 apart");
    EXPECT_EMPTY(1, S);
    MOVE(2, 4, 0);
    EXPECT("within sight", EN(1, 2, S, 4, 0));
    TICK(CH_MOVE(1, 100, 0, 0), CH_MOVE(2, 103, 0, 0));
    EXPECT_NONE("both go far, together: still 3 apart");
    EXPECT_LIST(1, S, 2);
    END();
}

/*
 * Rule 5's "before" is before the tick. Observer 1 (sight 10, margin 5)
 * perceives 2 at 8: 2 goes to 30 while 1 follows to 18, 12 apart: kept by
 * the margin, a MOVE. Observer 3 (the same) does not perceive 4 at 30:
 * 4 comes to 5 from where 3 was while 3 steps back to 12 from it: not
 * within R, and not perceived before, so nothing.
 */
static void check_margins_before_the_tick(const char *backend)
{
    BEGIN("move_events = on\n");
    percept_entity_desc keeper = tu_desc(0, 0, 10, 0, 0, 0);
    keeper.sense[S].margin = 5;
    ADD_DESC(1, keeper);
    ADD(2, 8, 0, 0, 0, 0, 0);
    EXPECT("within R", EN(1, 2, S, 8, 0));
    keeper.x = 100;
    ADD_DESC(3, keeper);
    ADD(4, 130, 0, 0, 0, 0, 0);
    EXPECT_NONE("30 apart");
    TICK(CH_MOVE(2, 30, 0, 0), CH_MOVE(1, 18, 0, 0));
    EXPECT("12 apart, perceived before: kept", MV(1, 2, S, 30, 0));
    EXPECT_LIST(1, S, 2);
    TICK(CH_MOVE(4, 105, 0, 0), CH_MOVE(3, 93, 0, 0));
    EXPECT_NONE("12 apart, not perceived before: not within R");
    EXPECT_EMPTY(3, S);
    /* Beyond R + M at once, though one of the moves alone would keep it. */
    TICK(CH_MOVE(1, 14, 0, 0), CH_MOVE(2, 30, 0, 1));
    EXPECT("16 apart in x, 1 in z", LV3(1, 2, S, 30, 0, 1));
    END();
}

/* 1 and 2 walk towards each other and meet; then they pass and part. */
static void check_movers_meet(const char *backend)
{
    BEGIN("move_events = on\n");
    ADD(1, 0, 0, 5, 0, 0, 0);
    ADD(2, 100, 0, 5, 3, 0, 0);
    EXPECT_NONE("100 apart");
    TICK(CH_MOVE(1, 50, 0, 0), CH_MOVE(2, 52, 0, 1));
    EXPECT("they meet: dd 5", EN3(1, 2, S, 52, 0, 1), EN3(2, 1, S, 50, 0, 0),
           EN3(2, 1, H, 50, 0, 0));
    TICK(CH_MOVE(2, 40, 0, 0), CH_MOVE(1, 60, 0, 0));
    EXPECT("they pass each other: 20 apart", LV(1, 2, S, 40, 0), LV(2, 1, S, 60, 0),
           LV(2, 1, H, 60, 0));
    END();
}

/*
 * Observer 1 faces +x with a 90 degree cone of sight; 2 stands 5 ahead. 1
 * turns to +y as 2 steps round to (0, 5): ahead again, a MOVE. Made one
 * after the other, the turn would lose 2 and the move find it again.
 */
static void check_turn_and_move(const char *backend)
{
    BEGIN("move_events = on\n");
    percept_entity_desc one = tu_desc(0, 0, 10, 0, 0, 0);
    one.facing[0] = 1;
    one.sense[S].fov = 90;
    ADD_DESC(1, one);
    ADD(2, 5, 0, 0, 0, 0, 0);
    EXPECT("ahead", EN(1, 2, S, 5, 0));
    TICK(CH_TURN(1, 0, 1, 0), CH_MOVE(2, 0, 5, 0));
    EXPECT("a turn and a move together", MV(1, 2, S, 0, 5));
    TICK(CH_MOVE(2, 5, 0, 0), CH_TURN(1, 2, 0, 0));
    EXPECT("the move listed first", MV(1, 2, S, 5, 0));
    TICK(CH_TURN(1, -1, 0, 0), CH_MOVE(2, 6, 0, 0));
    EXPECT("turned away as 2 moves", LV(1, 2, S, 6, 0));
    END();
}

/*
 * Updates among the entries. 1 hears 2 (8 away) and 3 sees it (12 away).
 * One tick: 1's sight grows to 9 (2 enters), 2 takes tags 1 (3 ignores
 * them) and hides from hearing (1 loses it), 3 steps to 17 (1 is 17 away:
 * beyond 3's sight). Then 2's update moves it: a MOVE to 1, which keeps it.
 */
static void check_updates(const char *backend)
{
    BEGIN("move_events = on\n");
    percept_entity_desc one = tu_desc(0, 0, 5, 10, 0, 0), two = tu_desc(8, 0, 0, 0, 0, 0),
                        three = tu_desc(20, 0, 15, 0, 0, 0);
    three.sense[S].ignore = 1;
    ADD_DESC(1, one);
    ADD_DESC(2, two);
    ADD_DESC(3, three);
    EXPECT("before", EN(1, 2, H, 8, 0), EN(3, 2, S, 8, 0));
    one.sense[S].range = 9;
    two.tags = 1;
    two.hidden = SB(H);
    TICK(CH_UPDATE(2, &two), CH_MOVE(3, 17, 0, 0), CH_UPDATE(1, &one));
    EXPECT("ranges, tags and hiding at once", EN(1, 2, S, 8, 0), LV(1, 2, H, 8, 0),
           LV(3, 2, S, 8, 0));
    two.y = 1;
    TICK(CH_TURN(1, 0, 1, 0), CH_UPDATE(2, &two));
    EXPECT("an update with a new position", MV(1, 2, S, 8, 1));
    EXPECT_LIST(1, S, 2);
    EXPECT_EMPTY(1, H);
    EXPECT_EMPTY(3, S);
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    TU_OK(w, percept_get_entity(w, 2, &d));
    assert_true(d.x == 8 && d.y == 1 && d.tags == 1 && d.hidden == SB(H));
    TU_OK(w, percept_get_entity(w, 3, &d));
    assert_true(d.x == 17 && d.sense[S].ignore == 1);
    END();
}

/*
 * MOVE events: to each observer that perceives a moved target before and
 * after the tick; none for a target in place (a move to where it is, an
 * update that keeps its position), none when the world does not report them.
 */
static void check_move_events(const char *backend)
{
    for (int on = 1; on >= 0; on--) {
        BEGIN(on ? "move_events = on\n" : NOMOVE);
        ADD(1, 0, 0, 10, 0, 0, 0);
        ADD(2, 5, 0, 10, 0, 0, 0);
        ADD(3, 50, 0, 10, 0, 0, 0);
        EXPECT("1 and 2", EN(1, 2, S, 5, 0), EN(2, 1, S, 0, 0));
        TICK(CH_MOVE(1, 1, 0, 0), CH_MOVE(2, 5, 0, 0), CH_MOVE(3, 51, 0, 0));
        if (on)
            EXPECT("1 moves, 2 stays, 3 moves unseen", MV(2, 1, S, 1, 0));
        else
            EXPECT_NONE("1 moves, 2 stays, 3 moves unseen: no MOVE reported");
        percept_entity_desc one = tu_desc(1, 0, 10, 0, 0, 0);
        TICK(CH_UPDATE(1, &one), CH_MOVE(2, 6, 0, 0));
        if (on)
            EXPECT("2 moves, 1 is updated in place", MV(1, 2, S, 6, 0));
        else
            EXPECT_NONE("2 moves, 1 is updated in place: no MOVE reported");
        TICK(CH_MOVE(2, 30, 0, 0));
        EXPECT("2 leaves", LV(1, 2, S, 30, 0), LV(2, 1, S, 1, 0));
        END();
    }
}

#define BACKEND_TEST(name, check)                                                                  \
    static void name(void **state)                                                                 \
    {                                                                                              \
        (void)state;                                                                               \
        tu_for_each_backend(check);                                                                \
    }
BACKEND_TEST(test_transient_pairs, check_transient_pairs)
BACKEND_TEST(test_margins_before_the_tick, check_margins_before_the_tick)
BACKEND_TEST(test_movers_meet, check_movers_meet)
BACKEND_TEST(test_turn_and_move, check_turn_and_move)
BACKEND_TEST(test_updates, check_updates)
BACKEND_TEST(test_move_events, check_move_events)

/* ------------------------------------------------------------------------ */
/* The checks of the entries, empty ticks, entries in place                  */

typedef struct fixture {
    percept_world *w;
    tu_recorder rec;
    model m;
} fixture;

/* 1-4 and 0 perceive each other by various senses; UINT32_MAX is hidden
 * from sight; 5 has a cone of sight, facing +x. */
static void fixture_open(fixture *f, const char *backend, tu_fault_alloc *fa)
{
    static const struct {
        percept_id id;
        double x, y, s, h, m;
        unsigned hidden;
    } ents[] = {{1, 10, 10, 5, 5, 5, 0}, {2, 13, 14, 3, 0, 5, SB(H)},
                {3, 10, 10, 0, 0, 0, 0}, {4, 11, 11, 8, 1, 0, 0},
                {0, 12, 10, 9, 9, 9, 0}, {UINT32_MAX, 14, 10, 2, 20, 0, SB(S)},
                {5, 16, 12, 10, 0, 0, 0}};
    tu_recorder_init(&f->rec);
    model_init(&f->m, 1);
    f->w = tu_open_faulty(backend, "move_events = on\n", &f->rec, fa);
    for (size_t i = 0; i < COUNT_OF(ents); i++) {
        tu_op o = {.kind = TU_ADD, .id = ents[i].id};
        o.desc = tu_desc(ents[i].x, ents[i].y, ents[i].s, ents[i].h, ents[i].m, ents[i].hidden);
        if (o.id == 5) {
            o.desc.facing[0] = 1;
            o.desc.sense[S].fov = 90;
        }
        tu_call(f->w, &f->rec, &f->m, &o, "the fixture");
    }
    tu_recorder_clear(&f->rec);
}

static void fixture_close(fixture *f)
{
    percept_world_close(f->w);
    tu_recorder_free(&f->rec);
    model_free(&f->m);
}

/* A tick refused with `want` for entry `bad` (SIZE_MAX: as a whole): the
 * model agrees, no event, a message, the world unchanged. */
static void expect_refused(fixture *f, const percept_change *changes, size_t count, int want,
                           size_t bad, const char *what)
{
    size_t model_bad;
    int model_status = model_check_tick(&f->m, changes, count, &model_bad);
    if (model_status != want || model_bad != bad)
        fail_msg("%s: the model says %s at %zu, the case %s at %zu", what,
                 percept_status_name(model_status), model_bad, percept_status_name(want), bad);
    tu_recorder_clear(&f->rec);
    int rc = percept_tick(f->w, changes, count);
    if (rc != want)
        fail_msg("%s: returned %s, expected %s: %s", what, percept_status_name(rc),
                 percept_status_name(want), percept_errmsg(f->w));
    if (percept_errindex(f->w) != bad)
        fail_msg("%s: percept_errindex() is %zu, expected %zu", what, percept_errindex(f->w), bad);
    if (percept_errmsg(f->w)[0] == '\0')
        fail_msg("%s: no message", what);
    tu_expect_no_events(&f->rec, what);
    tu_expect_world(&f->m, f->w, what);
}

/* Descriptions for the entries that update: a good one (a cone, and a
 * facing for it), and one bad in each way percept_update() refuses. */
static const percept_entity_desc good_desc = {
    sizeof(percept_entity_desc), 20, 20, 1, {0, 1, 0}, 0, 0, {{4, 1, 90, 0}, {6, 0, 0, 0}}};
static const percept_entity_desc negative_range = {
    sizeof(percept_entity_desc), 20, 20, 0, {0, 0, 0}, 0, 0, {{0, 0, 0, 0}, {-1, 0, 0, 0}}};
static const percept_entity_desc cone_unfaced = {
    sizeof(percept_entity_desc), 20, 20, 0, {0, 0, 0}, 0, 0, {{4, 0, 90, 0}}};
static const percept_entity_desc hidden_beyond = {
    sizeof(percept_entity_desc), 20, 20, 0, {0, 0, 0}, 0, 1u << 3, {{4, 0, 0, 0}}};
static const percept_entity_desc no_size = {0, 20, 20, 0, {0, 0, 0}, 0, 0, {{4, 0, 0, 0}}};

#define UNKNOWN_KIND(i, k) ((percept_change){(i), (percept_change_kind)(k), 1, 1, 0, NULL})

static void check_refused(const char *backend)
{
    const double lim = PERCEPT_COORD_LIMIT, beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    /* Entries before the bad one are valid changes that would deliver events. */
    const struct {
        const char *what;
        int status;
        size_t bad, count;
        percept_change changes[5];
    } cases[] = {
        {"unknown ID at index 3",
         PERCEPT_ENOENT,
         3,
         4,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_TURN(3, 1, 0, 0), CH_MOVE(77, 1, 1, 0)}},
        {"unknown ID at index 0",
         PERCEPT_ENOENT,
         0,
         2,
         {CH_MOVE(99, 1, 1, 0), CH_MOVE(1, 20, 20, 0)}},
        {"an update of an unknown ID",
         PERCEPT_ENOENT,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_UPDATE(98, &good_desc)}},
        {"NaN x",
         PERCEPT_EINVAL,
         2,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_MOVE(3, NAN, 12, 0)}},
        {"NaN y", PERCEPT_EINVAL, 1, 2, {CH_MOVE(4, 20, 20, 0), CH_MOVE(0, 5, NAN, 0)}},
        {"infinite z",
         PERCEPT_EINVAL,
         1,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, INFINITY), CH_MOVE(3, 1, 1, 0)}},
        {"z = -2e15",
         PERCEPT_EINVAL,
         4,
         5,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_MOVE(3, 1, 1, 0), CH_MOVE(4, 5, -5, 0),
          CH_MOVE(0, 3, 3, -2e15)}},
        {"x one step beyond the limit",
         PERCEPT_EINVAL,
         2,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_MOVE(3, beyond, 1, 0)}},
        {"a facing NaN", PERCEPT_EINVAL, 0, 2, {CH_TURN(1, NAN, 0, 0), CH_MOVE(2, 5, 5, 0)}},
        {"a facing -infinite in z",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(2, 5, 5, 0), CH_TURN(4, 1, 0, -INFINITY)}},
        {"a zero facing with a cone",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_TURN(5, 0, 0, 0)}},
        {"an update without a description",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_UPDATE(2, NULL)}},
        {"an update with a negative range",
         PERCEPT_EINVAL,
         0,
         2,
         {CH_UPDATE(2, &negative_range), CH_MOVE(1, 20, 20, 0)}},
        {"an update with a cone and no facing",
         PERCEPT_EINVAL,
         2,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_UPDATE(3, &cone_unfaced)}},
        {"an update hidden from a sense the world lacks",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_UPDATE(0, &hidden_beyond)}},
        {"an update of size 0",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_UPDATE(4, &no_size)}},
        {"a repeated ID",
         PERCEPT_EINVAL,
         3,
         4,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, 5, 5, 0), CH_MOVE(3, 12, 12, 0), CH_TURN(2, 1, 0, 0)}},
        {"a repeated ID, the same change",
         PERCEPT_EINVAL,
         1,
         2,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(1, 20, 20, 0)}},
        {"ID 0 repeated by an update",
         PERCEPT_EINVAL,
         2,
         3,
         {CH_MOVE(0, 20, 20, 0), CH_MOVE(1, 2, 2, 0), CH_UPDATE(0, &good_desc)}},
        {"kind 3", PERCEPT_EINVAL, 1, 2, {CH_MOVE(1, 20, 20, 0), UNKNOWN_KIND(2, 3)}},
        {"kind -1", PERCEPT_EINVAL, 0, 1, {UNKNOWN_KIND(4, -1)}},
        /* The first bad entry decides, whatever the kind of the later ones. */
        {"NaN, then unknown",
         PERCEPT_EINVAL,
         1,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(2, NAN, 5, 0), CH_MOVE(99, 1, 1, 0)}},
        {"unknown, then NaN",
         PERCEPT_ENOENT,
         1,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(99, 1, 1, 0), CH_MOVE(2, NAN, 5, 0)}},
        {"repeated, then unknown",
         PERCEPT_EINVAL,
         1,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_TURN(1, 3, 3, 0), CH_MOVE(99, 1, 1, 0)}},
        {"unknown, then repeated",
         PERCEPT_ENOENT,
         1,
         3,
         {CH_MOVE(1, 20, 20, 0), CH_MOVE(99, 1, 1, 0), CH_MOVE(1, 3, 3, 0)}},
        {"an unknown ID twice",
         PERCEPT_ENOENT,
         1,
         3,
         {CH_MOVE(3, 1, 2, 0), CH_MOVE(99, 1, 1, 0), CH_MOVE(99, 2, 2, 0)}},
    };
    fixture f;
    fixture_open(&f, backend, NULL);
    assert_true(percept_errindex(f.w) == SIZE_MAX); /* nothing has failed yet */
    for (size_t i = 0; i < COUNT_OF(cases); i++)
        expect_refused(&f, cases[i].changes, cases[i].count, cases[i].status, cases[i].bad,
                       cases[i].what);
    expect_refused(&f, NULL, 3, PERCEPT_EINVAL, SIZE_MAX, "NULL changes, count 3");
    /* A later failure of another call names no entry. */
    assert_int_equal(percept_move(f.w, 99, 1, 1), PERCEPT_ENOENT);
    assert_true(percept_errindex(f.w) == SIZE_MAX);

    /* Then a valid tick works: positions at the limit, a zero facing
     * without a cone, an update with a cone. */
    const percept_change ok[] = {CH_MOVE(3, 10, 10, 2), CH_MOVE(4, -lim, lim, -lim),
                                 CH_TURN(1, 0, 0, 0), CH_UPDATE(2, &good_desc)};
    tu_op o = TU_OP_TICK(ok, COUNT_OF(ok));
    tu_call(f.w, &f.rec, &f.m, &o, "a valid tick after refused ones");
    assert_true(f.rec.count > 0);
    tu_expect_world(&f.m, f.w, "a valid tick after refused ones");
    fixture_close(&f);
}

/*
 * More than UINT32_MAX entries: EINVAL for the whole, nothing changed. The
 * array is real (zero pages mapped on demand): every entry moves entity 0
 * to (0, 0, 0), so a count cut to 32 bits (1) would move it from (12, 10),
 * and one read entry by entry would be refused at index 1 (named twice).
 */
static void check_huge_count(const char *backend)
{
    size_t count = (size_t)UINT32_MAX + 2;
    if (sizeof(size_t) <= 4)
        return;
    size_t bytes = count * sizeof(percept_change);
    void *mem = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        print_message("      %s: no address space for %zu bytes: not tested\n", backend, bytes);
        return;
    }
    fixture f;
    fixture_open(&f, backend, NULL);
    assert_int_equal(percept_tick(f.w, mem, count), PERCEPT_EINVAL);
    munmap(mem, bytes);
    assert_true(percept_errindex(f.w) == SIZE_MAX);
    tu_expect_no_events(&f.rec, "more than UINT32_MAX entries");
    tu_expect_world(&f.m, f.w, "more than UINT32_MAX entries");
    fixture_close(&f);
}

/* Empty ticks, and ticks of entries that change nothing, deliver nothing. */
static void check_empty_and_in_place(const char *backend)
{
    fixture f;
    fixture_open(&f, backend, NULL);
    percept_change here[8];
    percept_entity_desc descs[8];
    TU_OK(f.w, percept_tick(f.w, NULL, 0));
    TU_OK(f.w, percept_tick(f.w, here, 0));
    size_t n = 0;
    for (uint32_t i = 0; i < f.m.count; i++) {
        const model_entity *e = &f.m.ent[i];
        descs[n] = model_desc(&f.m, e);
        here[n] = i % 3 == 0   ? CH_MOVE(e->id, e->x, e->y, e->z)
                  : i % 3 == 1 ? CH_TURN(e->id, e->facing[0], e->facing[1], e->facing[2])
                               : CH_UPDATE(e->id, &descs[n]);
        n++;
    }
    TU_OK(f.w, percept_tick(f.w, here, n));
    tu_expect_no_events(&f.rec, "empty ticks and every entity in place");
    /* In place but for one: only its events, as percept_move3() gives them. */
    assert_true(here[1].id == 2 && here[1].kind == PERCEPT_CHANGE_TURN);
    here[1] = CH_MOVE(2, 13, 13, 1);
    TU_OK(f.w, percept_tick(f.w, here, n));
    assert_int_equal(model_move3(&f.m, 2, 13, 13, 1), PERCEPT_OK);
    assert_true(f.m.n_events > 3);
    tu_expect_events(&f.rec, f.m.events, f.m.n_events, "one move among entries in place");
    tu_expect_world(&f.m, f.w, "one move among entries in place");
    fixture_close(&f);
}

/* With no memory for the tick: ENOMEM naming no entry, nothing changed. */
static void check_without_memory(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    fixture f;
    fixture_open(&f, backend, &fa);
    fa.fail_at = fa.counted + 1;
    fa.sticky = 1;
    const percept_change good[] = {CH_MOVE(1, 30, 30, 0), CH_MOVE(2, 5, 5, 0),
                                   CH_UPDATE(4, &good_desc)};
    assert_int_equal(percept_tick(f.w, good, COUNT_OF(good)), PERCEPT_ENOMEM);
    assert_true(percept_errindex(f.w) == SIZE_MAX && fa.hit);
    assert_true(percept_errmsg(f.w)[0] != '\0');
    tu_expect_no_events(&f.rec, "a tick without memory");
    tu_expect_world(&f.m, f.w, "a tick without memory");
    fa.fail_at = 0;
    tu_op o = TU_OP_TICK(good, COUNT_OF(good));
    tu_call(f.w, &f.rec, &f.m, &o, "the same tick with memory");
    fixture_close(&f);
    tu_expect_no_leak(&fa, "a tick without memory");
}

/*
 * Each allocation of a tick on 2 threads fails in turn, on a fresh world:
 * ENOMEM naming no entry, no event, the world as before; the same tick
 * again gives the model's events; nothing leaks. The threads take turns at
 * the allocator, in an order that may differ from run to run: whichever
 * allocation fails, the world must come out whole.
 */
#define OOM_CROWD 16
#define OOM_MOVERS 16

static void oom_world(const char *backend, tu_fault_alloc *fa, model *m, percept_world **w,
                      tu_recorder *rec)
{
    uint64_t r = 4242;
    model_init(m, 1);
    *w = tu_open_with(backend, "move_events = on\n", rec, fa, 2);
    for (int i = 0; i < OOM_CROWD + OOM_MOVERS; i++) {
        int crowd = i < OOM_CROWD;
        tu_op o = {.kind = TU_ADD, .id = tu_spread_id((uint32_t)i + 500)};
        o.desc = tu_desc(crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i % 6),
                         crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i / 6 % 8), 0, 0, 0,
                         splitmix_chance(&r, 10) ? 1u << splitmix_below(&r, 3) : 0);
        for (int s = 0; s < 3; s++)
            o.desc.sense[s].range = splitmix_chance(&r, 15) ? 0 : splitmix_between(&r, 20, 60);
        tu_call(*w, rec, m, &o, "the crowd and the movers");
    }
}

static void check_out_of_memory_on_threads(const char *backend)
{
    percept_change tick[OOM_CROWD + OOM_MOVERS];
    percept_entity_desc changed = tu_desc(100, 100, 40, 0, 40, 0);
    size_t injected = 0;
    for (size_t k = 1;; k++) {
        char what[200];
        snprintf(what, sizeof what, "backend %s, allocation %zu of a tick on 2 threads failed",
                 backend, k);
        tu_fault_alloc fa;
        tu_recorder rec;
        model m;
        percept_world *w;
        tu_fault_init(&fa);
        tu_recorder_init(&rec);
        oom_world(backend, &fa, &m, &w, &rec);
        uint64_t r = 99;
        size_t n = 0;
        for (int i = 0; i < OOM_MOVERS; i++) /* the movers walk into the crowd */
            tick[n++] = CH_MOVE(m.ent[OOM_CROWD + i].id, splitmix_between(&r, 80, 120),
                                splitmix_between(&r, 80, 120), 0);
        for (int i = 0; i < OOM_CROWD; i += 3) /* some of the crowd steps or changes */
            tick[n++] = i % 2 ? CH_UPDATE(m.ent[i].id, &changed)
                              : CH_MOVE(m.ent[i].id, m.ent[i].x + 2.5, m.ent[i].y - 1.5, 0);
        tu_recorder_clear(&rec);
        fa.fail_at = fa.counted + k;
        int rc = percept_tick(w, tick, n);
        if (fa.hit) {
            injected++;
            if (rc != PERCEPT_ENOMEM || percept_errindex(w) != SIZE_MAX)
                fail_msg("%s: returned %s, index %zu", what, percept_status_name(rc),
                         percept_errindex(w));
            tu_expect_no_events(&rec, what);
            tu_expect_world(&m, w, what);
            fa.fail_at = 0;
            tu_op o = TU_OP_TICK(tick, n);
            tu_call(w, &rec, &m, &o, what);
        } else {
            TU_OK(w, rc);
            assert_int_equal(model_tick(&m, tick, n), PERCEPT_OK);
            tu_expect_events(&rec, m.events, m.n_events, what);
        }
        assert_true(m.n_events > 100); /* not vacuous */
        tu_expect_world(&m, w, what);
        percept_world_close(w);
        tu_expect_no_leak(&fa, what);
        tu_recorder_free(&rec);
        model_free(&m);
        if (!fa.hit)
            break;
    }
    print_message("      %s: %zu allocations of a tick on 2 threads failed in turn\n", backend,
                  injected);
    assert_true(injected > 0);
}

static void test_null_world(void **state)
{
    percept_change one = CH_MOVE(1, 2, 3, 0);
    (void)state;
    assert_int_equal(percept_tick(NULL, &one, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_tick(NULL, NULL, 0), PERCEPT_EINVAL);
    assert_true(percept_errindex(NULL) == SIZE_MAX);
}

BACKEND_TEST(test_refused, check_refused)
BACKEND_TEST(test_huge_count, check_huge_count)
BACKEND_TEST(test_empty_and_in_place, check_empty_and_in_place)
BACKEND_TEST(test_without_memory, check_without_memory)
BACKEND_TEST(test_out_of_memory_on_threads, check_out_of_memory_on_threads)

/* ------------------------------------------------------------------------ */
/* The callback during a tick's delivery                                     */

/* Whether entity `c->id` reads as `c` leaves it. */
static int reads_as_made(const percept_world *w, const percept_change *c)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    if (percept_get_entity(w, c->id, &d) != PERCEPT_OK)
        return 0;
    if (c->kind == PERCEPT_CHANGE_MOVE)
        return d.x == c->x && d.y == c->y && d.z == c->z;
    if (c->kind == PERCEPT_CHANGE_TURN)
        return d.facing[0] == c->x && d.facing[1] == c->y && d.facing[2] == c->z;
    return d.x == c->desc->x && d.y == c->desc->y && d.z == c->desc->z && d.tags == c->desc->tags &&
           d.hidden == c->desc->hidden && d.sense[0].range == c->desc->sense[0].range;
}

typedef struct busy {
    percept_world *w;
    tu_recorder rec;
    const percept_change *tick;
    size_t count;
    int attempts; /* events at which the nested calls were tried */
    int failures; /* nested calls that did not return EBUSY with a message */
    int unmade;   /* entries of the tick not read as made at an event */
} busy;

static void busy_event(void *user, const percept_event *e)
{
    busy *b = user;
    static const percept_change nested[] = {CH_MOVE(1, 50, 50, 0), CH_TURN(2, 0, 1, 0)};
    tu_recorder_push(&b->rec, e);
    b->attempts++;
    for (size_t i = 0; i < b->count; i++)
        b->unmade += !reads_as_made(b->w, &b->tick[i]);
    b->failures += percept_tick(b->w, nested, COUNT_OF(nested)) != PERCEPT_EBUSY ||
                   percept_errmsg(b->w)[0] == '\0';
    b->failures += percept_tick(b->w, NULL, 0) != PERCEPT_EBUSY;
    b->failures += percept_move(b->w, e->target, 70, 70) != PERCEPT_EBUSY;
}

/* Changes tried inside the callback are refused; every entry of the tick
 * reads as made from its first event on. */
static void check_busy(const char *backend)
{
    busy b = {0};
    model m;
    model_init(&m, 1);
    tu_recorder_init(&b.rec);
    b.w = tu_open(backend, "move_events = on\n", NULL);
    const percept_entity_desc d[] = {tu_desc(10, 10, 5, 5, 5, 0), tu_desc(13, 14, 3, 0, 5, 0),
                                     tu_desc(30, 30, 10, 0, 0, 0), tu_desc(11, 11, 0, 8, 0, 0)};
    for (percept_id i = 0; i < 4; i++) {
        tu_add(b.w, i + 1, d[i]);
        assert_int_equal(model_add(&m, i + 1, &d[i]), PERCEPT_OK);
    }
    assert_int_equal(percept_set_event_callback(b.w, busy_event, &b), PERCEPT_OK);
    percept_entity_desc four = tu_desc(29, 29, 4, 8, 0, SB(M));
    const percept_change first[] = {CH_MOVE(3, 12, 12, 0), CH_MOVE(1, 28, 28, 1)};
    const percept_change second[] = {CH_MOVE(2, 29, 29, 0), CH_UPDATE(4, &four),
                                     CH_MOVE(3, 31, 30, 0), CH_TURN(1, 1, 0, 0)};
    const percept_change *ticks[] = {first, second};
    const size_t counts[] = {COUNT_OF(first), COUNT_OF(second)};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(model_tick(&m, ticks[k], counts[k]), PERCEPT_OK);
        tu_recorder_clear(&b.rec);
        b.attempts = 0;
        b.tick = ticks[k];
        b.count = counts[k];
        TU_OK(b.w, percept_tick(b.w, ticks[k], counts[k]));
        assert_true(b.attempts > 0 && b.failures == 0 && b.unmade == 0);
        tu_expect_events(&b.rec, m.events, m.n_events, "a tick with nested calls");
        tu_expect_world(&m, b.w, "a tick with nested calls");
    }
    percept_world_close(b.w);
    tu_recorder_free(&b.rec);
    model_free(&m);
}

/* The callback closes the world at event `close_at`; nothing comes after. */
typedef struct closer {
    percept_world *w;
    size_t close_at, events, after_close;
} closer;

static void close_event(void *user, const percept_event *e)
{
    closer *c = user;
    (void)e;
    if (c->close_at != 0 && c->events == c->close_at) {
        c->after_close++;
        return;
    }
    if (++c->events == c->close_at)
        percept_world_close(c->w);
}

/* A tick of a crowd's moves; the callback closes the world at event
 * close_at (0: never). Returns the events delivered. */
static size_t run_close(const char *backend, size_t close_at)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, "move_events = on\n", NULL, &fa);
    for (percept_id id = 1; id <= 6; id++)
        tu_add(w, id, tu_desc(id, 0, 10, 8, 5, 0));
    closer c = {w, close_at, 0, 0};
    assert_int_equal(percept_set_event_callback(w, close_event, &c), PERCEPT_OK);
    const percept_change tick[] = {CH_MOVE(1, 30, 0, 0), CH_MOVE(2, 31, 0, 0), CH_MOVE(3, 60, 0, 0),
                                   CH_TURN(4, 0, 1, 0), CH_MOVE(5, 4, 1, 0)};
    /* Not TU_OK(): its message would read a world closed inside. */
    assert_int_equal(percept_tick(w, tick, COUNT_OF(tick)), PERCEPT_OK);
    assert_int_equal(c.after_close, 0);
    if (close_at == 0 || c.events < close_at)
        percept_world_close(w);
    else
        assert_int_equal(c.events, close_at);
    tu_expect_no_leak(&fa, "a world closed inside a tick's callback");
    return c.events;
}

static void check_close_inside(const char *backend)
{
    size_t all = run_close(backend, 0);
    assert_true(all >= 3); /* so first, middle and last differ */
    const size_t at[] = {1, all / 2 + 1, all};
    for (size_t i = 0; i < COUNT_OF(at); i++)
        assert_int_equal(run_close(backend, at[i]), at[i]);
}

BACKEND_TEST(test_busy, check_busy)
BACKEND_TEST(test_close_inside, check_close_inside)

/* ------------------------------------------------------------------------ */
/* Random ticks against the model, on 1, 2 and 4 threads                     */

typedef struct tick_config {
    const char *name;
    uint64_t seed;
    int moves_on;
    int crowd; /* most positions in a 12 x 12 square */
    percept_bounds b;
    const char *ini; /* after "backend = NAME" */
    int v2;          /* heights, cones, margins and masks besides */
} tick_config;

#define N_ENT 160
#define TICKS 10
#define MAX_TICK 70
#define WORLDS 3
static const size_t thread_counts[WORLDS] = {1, 2, 4};

/* Mostly a half-unit grid over the bounds and a margin around them; sometimes anywhere. */
static void random_position(uint64_t *r, const tick_config *c, double *x, double *y)
{
    const percept_bounds *b = &c->b;
    uint32_t k = splitmix_below(r, 100);
    double cx = floor((b->min_x + b->max_x) / 2), cy = floor((b->min_y + b->max_y) / 2);
    if (c->crowd && k < 75) {
        *x = cx - 6 + splitmix_below(r, 25) * 0.5;
        *y = cy - 6 + splitmix_below(r, 25) * 0.5;
    } else if (k < 80) {
        *x =
            b->min_x - 20 + splitmix_below(r, (uint32_t)((b->max_x - b->min_x + 40) * 2) + 1) * 0.5;
        *y =
            b->min_y - 20 + splitmix_below(r, (uint32_t)((b->max_y - b->min_y + 40) * 2) + 1) * 0.5;
    } else if (k < 95) {
        *x = splitmix_between(r, b->min_x - 30, b->max_x + 30);
        *y = splitmix_between(r, b->min_y - 30, b->max_y + 30);
    } else {
        *x = cx; /* coincident entities */
        *y = cy;
    }
}

/* A point on the boundary of some observer's range, with integer offsets. */
static int boundary_position(uint64_t *r, const model *m, double *x, double *y)
{
    for (int tries = 0; tries < 8; tries++) {
        const model_entity *o = &m->ent[splitmix_below(r, m->count)];
        double rr = o->sense[splitmix_below(r, (uint32_t)m->senses)].range, a = rr, b = 0;
        if (!(rr > 0) || rr > 1000 || rr != floor(rr))
            continue;
        if (fmod(rr, 5) == 0 && splitmix_chance(r, 60)) {
            a = rr / 5 * 3;
            b = rr / 5 * 4;
        }
        *x = o->x + (splitmix_chance(r, 50) ? a : -a);
        *y = o->y + (splitmix_chance(r, 50) ? b : -b);
        return 1;
    }
    return 0;
}

/* A height, a facing, tags, and per sense a margin, a cone and an ignore mask. */
static void random_v2_fields(uint64_t *r, uint32_t senses, percept_entity_desc *d)
{
    static const double fovs[] = {0, 0, 90, 180, 270, 45};
    d->z = splitmix_chance(r, 50) ? 0 : splitmix_below(r, 9) * 0.5 - 2;
    d->facing[0] = (double)splitmix_below(r, 5) - 2;
    d->facing[1] = (double)splitmix_below(r, 5) - 2;
    d->facing[2] = d->facing[0] == 0 && d->facing[1] == 0 ? 1 : 0;
    d->tags = splitmix_below(r, 4);
    for (uint32_t s = 0; s < senses; s++) {
        d->sense[s].margin = splitmix_chance(r, 40) ? splitmix_below(r, 6) * 0.5 : 0;
        d->sense[s].fov = fovs[splitmix_below(r, COUNT_OF(fovs))];
        d->sense[s].ignore = splitmix_chance(r, 20) ? 1u << splitmix_below(r, 2) : 0;
    }
}

/* Where a move takes entity e: steps, teleports, in place, onto another
 * entity, onto a range's boundary, far away, to the limit. */
static void random_move(uint64_t *r, const model *m, const tick_config *c, const model_entity *e,
                        percept_change *q)
{
    uint32_t k = splitmix_below(r, 100);
    q->z = e->z;
    if (k < 50) { /* a step on the half grid */
        q->x = e->x + ((int)splitmix_below(r, 17) - 8) * 0.5;
        q->y = e->y + ((int)splitmix_below(r, 17) - 8) * 0.5;
    } else if (k < 60) { /* a fractional step */
        q->x = e->x + (splitmix_unit(r) - 0.5) * 12;
        q->y = e->y + (splitmix_unit(r) - 0.5) * 12;
    } else if (k < 72) { /* a teleport */
        random_position(r, c, &q->x, &q->y);
    } else if (k < 80) { /* in place */
        q->x = e->x;
        q->y = e->y;
    } else if (k < 88) { /* onto another entity */
        const model_entity *o = &m->ent[splitmix_below(r, m->count)];
        q->x = o->x;
        q->y = o->y;
        q->z = o->z;
    } else if (k < 96) {
        if (!boundary_position(r, m, &q->x, &q->y))
            random_position(r, c, &q->x, &q->y);
    } else if (k < 98) { /* far outside the bounds */
        q->x = (splitmix_chance(r, 50) ? -1 : 1) * (1e6 + splitmix_below(r, 1000));
        q->y = (splitmix_chance(r, 50) ? -1 : 1) * 1e9;
    } else { /* at the limit of what a position may be */
        q->x = splitmix_chance(r, 50) ? PERCEPT_COORD_LIMIT : -PERCEPT_COORD_LIMIT;
        q->y = splitmix_chance(r, 50) ? e->y : -PERCEPT_COORD_LIMIT;
    }
    if (c->v2 && splitmix_chance(r, 30))
        q->z = e->z + ((int)splitmix_below(r, 9) - 4) * 0.5;
    if (fabs(q->x) > PERCEPT_COORD_LIMIT || fabs(q->y) > PERCEPT_COORD_LIMIT)
        random_position(r, c, &q->x, &q->y); /* a step from the limit crossed it */
}

/* A tick of distinct entities in random order: mostly moves, then turns and
 * updates (of ranges, margins, tags, hiding, cones, and at times the
 * position); `every`: each entity of the world in it. */
static size_t random_tick(uint64_t *r, const model *m, const tick_config *c, int every,
                          percept_change *out, percept_entity_desc *descs)
{
    uint32_t perm[N_ENT];
    const uint32_t senses = (uint32_t)m->senses;
    size_t n = every ? m->count : 1 + splitmix_below(r, MAX_TICK);
    for (uint32_t i = 0; i < m->count; i++)
        perm[i] = i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + splitmix_below(r, m->count - (uint32_t)i);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        const model_entity *e = &m->ent[perm[i]];
        percept_change *q = &out[i];
        uint32_t k = splitmix_below(r, 100);
        *q = CH_MOVE(e->id, 0, 0, 0);
        if (k < 65) {
            random_move(r, m, c, e, q);
        } else if (k < 80) { /* a turn: a zero facing only without a cone */
            int cone = 0;
            for (uint32_t s = 0; s < senses; s++)
                cone |= e->sense[s].fov < 360;
            *q = CH_TURN(e->id, (double)splitmix_below(r, 5) - 2, (double)splitmix_below(r, 5) - 2,
                         c->v2 ? (double)splitmix_below(r, 3) - 1 : 0);
            if (cone && q->x == 0 && q->y == 0 && q->z == 0)
                q->x = 1;
        } else {
            percept_entity_desc *d = &descs[i];
            *d = model_desc(m, e);
            uint32_t s = splitmix_below(r, senses);
            d->sense[s].range = tu_random_range(r);
            if (splitmix_chance(r, 30))
                d->hidden ^= 1u << splitmix_below(r, senses);
            if (c->v2) {
                d->sense[s].margin = splitmix_chance(r, 50) ? splitmix_below(r, 6) * 0.5 : 0;
                d->tags = splitmix_below(r, 4);
                if (splitmix_chance(r, 30))
                    random_v2_fields(r, senses, d);
            }
            if (splitmix_chance(r, 30)) {
                percept_change where;
                random_move(r, m, c, e, &where);
                d->x = where.x;
                d->y = where.y;
                d->z = where.z;
            }
            *q = CH_UPDATE(e->id, d);
        }
    }
    return n;
}

/* A world under test: its events, and whether the tick's entries read as
 * made at its first event. */
typedef struct ticked {
    percept_world *w;
    tu_recorder rec;
    const percept_change *tick;
    size_t count;
    size_t unmade;
} ticked;

static void ticked_event(void *user, const percept_event *e)
{
    ticked *t = user;
    if (t->rec.count == 0)
        for (size_t i = 0; i < t->count; i++)
            t->unmade += !reads_as_made(t->w, &t->tick[i]);
    tu_recorder_push(&t->rec, e);
}

#define WORLD_200 "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 200\nmax_y = 200\n"
#define WORLD_STRIP "[world]\nmin_x = -100\nmin_y = 50\nmax_x = 300\nmax_y = 120\n"

static const tick_config configs[] = {
    {"open", 1, 1, 0, {0, 0, 200, 200}, "move_events = on\n" WORLD_200, 0},
    {"strip", 2, 0, 0, {-100, 50, 300, 120}, "move_events = off\n" WORLD_STRIP, 0},
    {"crowd",
     3,
     1,
     1,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200 "[sight]\nobserver_cell_size = 3\n"
     "[hearing]\nobserver_cell_size = 41\n[smell]\nobserver_cell_size = 7\n",
     0},
    {"version 2",
     4,
     1,
     1,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200
     "senses = eyes ears nose fins\n[fins]\nobserver_cell_size = 9\n",
     1},
};

static const tick_config *config_now;

static void run_ticks(const char *backend)
{
    const tick_config *c = config_now;
    model m;
    ticked worlds[WORLDS];
    percept_change tick[N_ENT];
    percept_entity_desc descs[N_ENT];
    uint64_t r = c->seed * 0x2545F4914F6CDD1Dull;
    char what[256];
    memset(worlds, 0, sizeof worlds);
    for (int k = 0; k < WORLDS; k++) {
        worlds[k].w = tu_open_with(backend, c->ini, NULL, NULL, thread_counts[k]);
        assert_int_equal(percept_set_event_callback(worlds[k].w, ticked_event, &worlds[k]),
                         PERCEPT_OK);
    }
    tu_model_init(&m, c->moves_on, worlds[0].w);
    const uint32_t senses = (uint32_t)m.senses;
    for (int i = 0; i < N_ENT; i++) {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        random_position(&r, c, &d.x, &d.y);
        for (uint32_t s = 0; s < senses; s++)
            d.sense[s].range = tu_random_range(&r);
        d.hidden = splitmix_chance(&r, 15) ? splitmix_below(&r, 8) : 0;
        if (c->v2)
            random_v2_fields(&r, senses, &d);
        percept_id id = tu_spread_id((uint32_t)(i * 7 + (int)c->seed));
        for (int k = 0; k < WORLDS; k++)
            tu_add(worlds[k].w, id, d);
        assert_int_equal(model_add(&m, id, &d), PERCEPT_OK);
    }
    size_t events = 0;
    for (int t = 0; t < TICKS; t++) {
        if (t > 0 &&
            splitmix_chance(&r, 50)) { /* between ticks, a range or a hidden flag changes */
            tu_op o = {.kind = splitmix_chance(&r, 50) ? TU_RANGE : TU_HIDE};
            o.id = m.ent[splitmix_below(&r, m.count)].id;
            o.sense = (percept_sense)splitmix_below(&r, senses);
            o.value = o.kind == TU_RANGE ? tu_random_range(&r) : splitmix_chance(&r, 50);
            assert_int_equal(tu_apply_model(&m, &o), PERCEPT_OK);
            for (int k = 0; k < WORLDS; k++) {
                snprintf(what, sizeof what, "config %s, backend %s, %zu threads, before tick %d",
                         c->name, backend, thread_counts[k], t);
                tu_recorder_clear(&worlds[k].rec);
                worlds[k].count = 0;
                TU_OK(worlds[k].w, tu_apply(worlds[k].w, &o));
                tu_expect_events(&worlds[k].rec, m.events, m.n_events, what);
            }
        }
        size_t n = random_tick(&r, &m, c, t % 4 == 3, tick, descs);
        assert_int_equal(model_tick(&m, tick, n), PERCEPT_OK);
        for (int k = 0; k < WORLDS; k++) {
            ticked *wd = &worlds[k];
            snprintf(what, sizeof what, "config %s, backend %s, %zu threads, tick %d of %zu",
                     c->name, backend, thread_counts[k], t, n);
            tu_recorder_clear(&wd->rec);
            wd->tick = tick;
            wd->count = n;
            TU_OK(wd->w, percept_tick(wd->w, tick, n));
            if (wd->unmade != 0)
                fail_msg("%s: %zu entries did not read as made at the first event", what,
                         wd->unmade);
            tu_expect_events(&wd->rec, m.events, m.n_events, what);
            /* Reading every list is the test's own cost: the threaded
             * worlds, whose events already match, every third tick. */
            if (k == 0 || t % 3 == 2 || t == TICKS - 1)
                tu_expect_world(&m, wd->w, what);
        }
        events += m.n_events;
    }
    assert_true(events > 100 * TICKS); /* not vacuous */
    for (int k = 0; k < WORLDS; k++) {
        percept_world_close(worlds[k].w);
        tu_recorder_free(&worlds[k].rec);
    }
    model_free(&m);
}

static void test_random_ticks(void **state)
{
    config_now = *state;
    tu_for_each_backend(run_ticks);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        tu_backend_test(test_transient_pairs),
        tu_backend_test(test_margins_before_the_tick),
        tu_backend_test(test_movers_meet),
        tu_backend_test(test_turn_and_move),
        tu_backend_test(test_updates),
        tu_backend_test(test_move_events),
        tu_backend_test(test_refused),
        tu_backend_test(test_huge_count),
        tu_backend_test(test_empty_and_in_place),
        tu_backend_test(test_without_memory),
        tu_backend_test(test_out_of_memory_on_threads),
        tu_backend_test(test_busy),
        tu_backend_test(test_close_inside),
        cmocka_unit_test(test_null_world),
        {"random ticks: open", test_random_ticks, NULL, tu_report_backend, (void *)&configs[0]},
        {"random ticks: strip", test_random_ticks, NULL, tu_report_backend, (void *)&configs[1]},
        {"random ticks: crowd", test_random_ticks, NULL, tu_report_backend, (void *)&configs[2]},
        {"random ticks: version 2", test_random_ticks, NULL, tu_report_backend,
         (void *)&configs[3]},
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
