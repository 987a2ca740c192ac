/*
 * event_buffer.c - growth and ordering of a call's pending events.
 */
#include "event_buffer.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

int event_buffer_push(const percept_allocator *a, event_buffer *buf, const pending_event *ev)
{
    if (buf->len == buf->cap) {
        /* Grow both buffers before the call commits, so sorting cannot fail. */
        size_t cap = buf->cap ? buf->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *ev)
            return -1;
        pending_event *items = a->alloc(a->user, buf->items, cap * sizeof *ev);
        if (!items)
            return -1;
        buf->items = items;
        pending_event *scratch = a->alloc(a->user, buf->scratch, cap * sizeof *ev);
        if (!scratch)
            return -1; /* items grew; cap stays, so the next push grows both again */
        buf->scratch = scratch;
        buf->cap = cap;
    }
    buf->items[buf->len++] = *ev;
    return 0;
}

static inline int before(const pending_event *a, const pending_event *b)
{
    return a->key != b->key ? a->key < b->key : a->sense < b->sense;
}

static void insertion_sort(pending_event *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        pending_event ev = a[i];
        size_t j = i;
        while (j > 0 && before(&ev, &a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = ev;
    }
}

/* Digit d of the sort key, least significant first: the sense, then the
 * eight bytes of the (observer, target) key. */
static inline unsigned digit(const pending_event *ev, int d)
{
    return d == 0 ? ev->sense : (unsigned)(ev->key >> (8 * (d - 1))) & 0xffu;
}

/*
 * LSD radix sort: a crowd can give one move hundreds of events (MOVE
 * notifications above all), where comparison sorts dominate the call. IDs
 * are often small, so passes whose digit is the same for every event are
 * skipped.
 */
static void radix_sort(event_buffer *buf)
{
    size_t n = buf->len;
    pending_event *src = buf->items, *dst = buf->scratch;
    /* One read pass counts every digit: a tenth of the work of nine. */
    uint32_t count[9][256];
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < 9; d++)
            count[d][digit(&src[i], d)]++;
    for (int d = 0; d < 9; d++) {
        uint32_t *c_d = count[d];
        if (c_d[digit(&src[0], d)] == n)
            continue;
        uint32_t sum = 0;
        for (int v = 0; v < 256; v++) {
            uint32_t c = c_d[v];
            c_d[v] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[c_d[digit(&src[i], d)]++] = src[i];
        pending_event *t = src;
        src = dst;
        dst = t;
    }
    if (src != buf->items)
        memcpy(buf->items, src, n * sizeof *src);
}

void event_buffer_sort(event_buffer *buf)
{
    /* Most calls yield a handful of events: insertion sort is fastest there. */
    if (buf->len <= 48)
        insertion_sort(buf->items, buf->len);
    else
        radix_sort(buf);
}

void event_buffer_free(const percept_allocator *a, event_buffer *buf)
{
    pc_free(a, buf->items);
    pc_free(a, buf->scratch);
    buf->items = buf->scratch = NULL;
    buf->len = buf->cap = 0;
}
