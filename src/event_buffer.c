/*
 * event_buffer.c - a world's events kept as one array, for callers that
 * would rather read a call's events after it than be called back: each
 * successful change replaces them. The room is made before a change is
 * applied, so that keeping the events cannot fail once it is.
 */
#include "world.h"

#include "alloc.h"

int percept_set_event_buffer(percept_world *w, int on)
{
    int rc = world_check_caller(w, __func__);
    if (rc)
        return rc;
    w->buffering = on != 0;
    w->events_len = 0;
    return PERCEPT_OK;
}

const percept_event *percept_events(const percept_world *w, size_t *count)
{
    size_t n = w && w->buffering ? w->events_len : 0;
    if (count)
        *count = n;
    return n ? w->events_buf : NULL;
}

int world_reserve_events(percept_world *w, size_t most)
{
    if (!w->buffering || most <= w->events_cap)
        return 0;
    void *buf = w->events_buf;
    if (pc_grow(&w->alloc, &buf, sizeof(percept_event), &w->events_cap, most))
        return -1;
    w->events_buf = buf;
    return 0;
}
