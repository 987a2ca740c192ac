/*
 * world.h - the C side of the Go binding: each call on a world, taking the
 * world as void *. Go 1.19's cgo boxes a pointer to an incomplete C type
 * (percept_world) on Go's heap to check it, an allocation per call; an
 * unsafe.Pointer is checked for free. Results that C writes through a
 * pointer (a count) come back by value instead, so that no Go variable
 * escapes to the heap either.
 */
#ifndef PERCEPT_GO_WORLD_H
#define PERCEPT_GO_WORLD_H

#include <percept.h>

#define W(w) ((percept_world *)(w))

static inline void w_close(void *w)
{
    percept_world_close(W(w));
}
static inline int w_set_event_buffer(void *w, int on)
{
    return percept_set_event_buffer(W(w), on);
}
static inline int w_sense_count(void *w)
{
    return percept_sense_count(W(w));
}
static inline const char *w_sense_name(void *w, percept_sense s)
{
    return percept_sense_name(W(w), s);
}
static inline size_t w_entity_count(void *w)
{
    return percept_entity_count(W(w));
}
static inline int w_contains(void *w, percept_id id)
{
    return percept_contains(W(w), id);
}
static inline const char *w_errmsg(void *w)
{
    return percept_errmsg(W(w));
}
static inline size_t w_errindex(void *w)
{
    return percept_errindex(W(w));
}

static inline int w_add(void *w, percept_id id, const percept_entity_desc *d)
{
    return percept_add(W(w), id, d);
}
static inline int w_update(void *w, percept_id id, const percept_entity_desc *d)
{
    return percept_update(W(w), id, d);
}
static inline int w_get_entity(void *w, percept_id id, percept_entity_desc *d)
{
    return percept_get_entity(W(w), id, d);
}
static inline int w_move(void *w, percept_id id, double x, double y)
{
    return percept_move(W(w), id, x, y);
}
static inline int w_move3(void *w, percept_id id, double x, double y, double z)
{
    return percept_move3(W(w), id, x, y, z);
}
static inline int w_turn(void *w, percept_id id, double fx, double fy, double fz)
{
    return percept_turn(W(w), id, fx, fy, fz);
}
static inline int w_remove(void *w, percept_id id)
{
    return percept_remove(W(w), id);
}
static inline int w_set_range(void *w, percept_id id, percept_sense s, double range)
{
    return percept_set_range(W(w), id, s, range);
}
static inline int w_set_hidden(void *w, percept_id id, percept_sense s, int hidden)
{
    return percept_set_hidden(W(w), id, s, hidden);
}
static inline int w_tick(void *w, const percept_change *changes, size_t count)
{
    return percept_tick(W(w), changes, count);
}

/* percept_emit() with the stimulus built here, from values. */
static inline int w_emit(void *w, percept_sense sense, double x, double y, double z,
                         double strength, int has_source, percept_id source, uint32_t tags)
{
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    st.sense = sense;
    st.x = x;
    st.y = y;
    st.z = z;
    st.strength = strength;
    st.has_source = has_source;
    st.source = source;
    st.tags = tags;
    return percept_emit(W(w), &st);
}

/* The last call's events and their count. */
typedef struct w_event_span {
    const percept_event *events;
    size_t count;
} w_event_span;

static inline w_event_span w_events(void *w)
{
    w_event_span s;
    s.events = percept_events(W(w), &s.count);
    return s;
}

static inline int w_perceives(void *w, percept_id observer, percept_id target, percept_sense s)
{
    return percept_perceives(W(w), observer, target, s);
}

/* percept_perceived()'s status and count. */
typedef struct w_id_count {
    int rc;
    size_t count;
} w_id_count;

static inline w_id_count w_perceived(void *w, percept_id observer, percept_sense s, percept_id *ids,
                                     size_t capacity)
{
    w_id_count r;
    r.rc = percept_perceived(W(w), observer, s, ids, capacity, &r.count);
    return r;
}

#undef W
#endif
