/*
 * handworked.h - the shorthand of the suites whose expected events are
 * worked out by hand: a world `w` per backend (BEGIN ... END) whose events
 * go to `rec`, calls that must succeed, and the events or lists they must
 * give, written as literals.
 */
#ifndef PERCEPT_TEST_HANDWORKED_H
#define PERCEPT_TEST_HANDWORKED_H

#include "testutil.h"

/* Most tests look at ENTER/LEAVE only; MOVE has its own tests. */
#define NOMOVE "move_events = off\n"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define SB(s) PERCEPT_SENSE_BIT(s)

#define EN(o, t, s, x, y) tu_ev(PERCEPT_ENTER, (o), (t), (s), (x), (y))
#define LV(o, t, s, x, y) tu_ev(PERCEPT_LEAVE, (o), (t), (s), (x), (y))
#define MV(o, t, s, x, y) tu_ev(PERCEPT_MOVE, (o), (t), (s), (x), (y))
/* The same with the target's height. */
#define EN3(o, t, s, x, y, z) tu_ev3(PERCEPT_ENTER, (o), (t), (s), (x), (y), (z))
#define LV3(o, t, s, x, y, z) tu_ev3(PERCEPT_LEAVE, (o), (t), (s), (x), (y), (z))
#define MV3(o, t, s, x, y, z) tu_ev3(PERCEPT_MOVE, (o), (t), (s), (x), (y), (z))
/* A stimulus of sense s at (x, y, z) perceived by o; src -1: it has no source. */
#define ST(o, s, src, x, y, z) tu_stim_ev((o), (s), (src), (x), (y), (z))

/* Check the events of the last call against a literal list, then forget them. */
#define EXPECT(what, ...)                                                                          \
    do {                                                                                           \
        const percept_event exp_[] = {__VA_ARGS__};                                                \
        tu_expect_events(&rec, exp_, COUNT_OF(exp_), what);                                        \
        tu_recorder_clear(&rec);                                                                   \
    } while (0)

#define EXPECT_NONE(what)                                                                          \
    do {                                                                                           \
        tu_expect_no_events(&rec, what);                                                           \
        tu_recorder_clear(&rec);                                                                   \
    } while (0)

#define ADD(id, x, y, sight, hearing, smell, hidden)                                               \
    tu_add(w, (id), tu_desc((x), (y), (sight), (hearing), (smell), (hidden)))
#define ADD_DESC(id, d) tu_add(w, (id), (d))
#define UPDATE(id, d) TU_OK(w, percept_update(w, (id), &(d)))
#define MOVE(id, x, y) TU_OK(w, percept_move(w, (id), (x), (y)))
#define MOVE3(id, x, y, z) TU_OK(w, percept_move3(w, (id), (x), (y), (z)))
#define TURN(id, fx, fy, fz) TU_OK(w, percept_turn(w, (id), (fx), (fy), (fz)))
#define EMIT(st) TU_OK(w, percept_emit(w, &(st)))
#define REMOVE(id) TU_OK(w, percept_remove(w, (id)))
#define RANGE(id, s, r) TU_OK(w, percept_set_range(w, (id), (s), (r)))
#define HIDE(id, s, h) TU_OK(w, percept_set_hidden(w, (id), (s), (h)))
/* A tick of the entries given: TU_CH_MOVE(), TU_CH_TURN(), TU_CH_UPDATE(). */
#define TICK(...)                                                                                  \
    do {                                                                                           \
        const percept_change ch_[] = {__VA_ARGS__};                                                \
        TU_OK(w, percept_tick(w, ch_, COUNT_OF(ch_)));                                             \
    } while (0)

#define EXPECT_LIST(id, s, ...)                                                                    \
    do {                                                                                           \
        const percept_id ids_[] = {__VA_ARGS__};                                                   \
        tu_expect_perceived(w, (id), (s), ids_, COUNT_OF(ids_));                                   \
    } while (0)
#define EXPECT_LIST_BY(id, s, ...)                                                                 \
    do {                                                                                           \
        const percept_id ids_[] = {__VA_ARGS__};                                                   \
        tu_expect_perceived_by(w, (id), (s), ids_, COUNT_OF(ids_));                                \
    } while (0)
#define EXPECT_EMPTY(id, s) tu_expect_perceived(w, (id), (s), NULL, 0)
#define EXPECT_EMPTY_BY(id, s) tu_expect_perceived_by(w, (id), (s), NULL, 0)

#define BEGIN(extra)                                                                               \
    tu_recorder rec;                                                                               \
    tu_recorder_init(&rec);                                                                        \
    percept_world *w = tu_open(backend, (extra), &rec)

#define END()                                                                                      \
    percept_world_close(w);                                                                        \
    tu_recorder_free(&rec)

#endif
