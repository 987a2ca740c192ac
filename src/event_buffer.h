/*
 * event_buffer.h - the changes one call computes before it applies them:
 * kept, reused from call to call, so the hot path does not allocate, and
 * sorted into the documented delivery order before the callback sees them.
 */
#ifndef PERCEPT_EVENT_BUFFER_H
#define PERCEPT_EVENT_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

typedef struct pending_event {
    uint64_t key;              /* observer ID << 32 | target ID: the delivery order */
    uint32_t observer, target; /* slots */
    uint8_t sense, kind;
} pending_event;

typedef struct event_buffer {
    pending_event *items;
    pending_event *scratch; /* as long as items: the radix sort's second buffer */
    size_t len, cap;
} event_buffer;

int event_buffer_push(const percept_allocator *a, event_buffer *buf, const pending_event *ev);
/* Order by observer ID, target ID, then sense: the order promised in percept.h.
 * Never fails and never allocates: push() already grew the scratch space. */
void event_buffer_sort(event_buffer *buf);
void event_buffer_free(const percept_allocator *a, event_buffer *buf);

#endif
