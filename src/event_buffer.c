/*
 * event_buffer.c - growth and ordering of a call's pending events.
 */
#include "event_buffer.h"

#include <stdlib.h>

#include "alloc.h"

int event_buffer_push(const percept_allocator *a, event_buffer *buf, const pending_event *ev)
{
    if (buf->len == buf->cap) {
        void *items = buf->items;
        if (pc_grow(a, &items, sizeof *ev, &buf->cap, buf->len + 1))
            return -1;
        buf->items = items;
    }
    buf->items[buf->len++] = *ev;
    return 0;
}

static int before(const pending_event *a, const pending_event *b)
{
    if (a->observer_id != b->observer_id)
        return a->observer_id < b->observer_id;
    if (a->target_id != b->target_id)
        return a->target_id < b->target_id;
    return a->sense < b->sense;
}

static int compare(const void *pa, const void *pb)
{
    const pending_event *a = pa, *b = pb;
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

void event_buffer_sort(event_buffer *buf)
{
    /* Most calls yield a handful of events: insertion sort is fastest there
     * and allocation-free; large batches (an add into a crowd) use qsort. */
    if (buf->len > 32) {
        qsort(buf->items, buf->len, sizeof *buf->items, compare);
        return;
    }
    for (size_t i = 1; i < buf->len; i++) {
        pending_event ev = buf->items[i];
        size_t j = i;
        while (j > 0 && before(&ev, &buf->items[j - 1])) {
            buf->items[j] = buf->items[j - 1];
            j--;
        }
        buf->items[j] = ev;
    }
}

void event_buffer_free(const percept_allocator *a, event_buffer *buf)
{
    pc_free(a, buf->items);
    buf->items = NULL;
    buf->len = buf->cap = 0;
}
