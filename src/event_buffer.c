/*
 * event_buffer.c - growth and ordering of a call's pending events.
 */
#include "event_buffer.h"

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

/* In place and allocation-free: qsort may call malloc behind the world's allocator. */
static void heap_sort(pending_event *a, size_t n)
{
    for (size_t end = n, start = n / 2;;) {
        size_t root;
        if (start > 0) {
            root = --start;
        } else if (end > 1) {
            pending_event top = a[0];
            a[0] = a[--end];
            a[end] = top;
            root = 0;
        } else {
            return;
        }
        for (size_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && before(&a[child], &a[child + 1]))
                child++;
            if (!before(&a[root], &a[child]))
                break;
            pending_event tmp = a[root];
            a[root] = a[child];
            a[child] = tmp;
        }
    }
}

void event_buffer_sort(event_buffer *buf)
{
    /* Most calls yield a handful of events: insertion sort is fastest there;
     * large batches (an add into a crowd) use heapsort. */
    if (buf->len > 32) {
        heap_sort(buf->items, buf->len);
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
