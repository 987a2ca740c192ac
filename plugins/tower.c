/*
 * tower.c - the "tower" backend (lighthouses): square tower regions over the
 * world bounds; each tower lists the entities inside it and the observers
 * whose range square overlaps it. Queries read the towers under the query
 * square, whose entities lie in one array per tower, and filter by exact
 * distance.
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_TOWER_SIZE 64.0
/*
 * 2^22 towers: 48 MiB of entity block pointers and watcher list heads; beyond
 * that towers are too small.
 */
#define MAX_TOWERS 4194304.0
/* Entries of a tower's first entity block; it doubles from there. */
#define FIRST_TOWER_CAP 4u

/*
 * Where a slot's entry is, for moves and removal.
 * tower == NONE means the slot is not in the index.
 */
typedef struct tower_slot {
    uint32_t tower;
    uint32_t index; /* in blocks[tower]->items */
} tower_slot;

/*
 * Cold per-slot record: the rectangle of towers the slot watches (empty when
 * x0 > x1, i.e. range 0) and its chain of subscription nodes. Only moves that
 * cross tower boundaries read it.
 */
typedef struct tower_watch {
    uint32_t x0, y0, x1, y1;
    uint32_t first; /* first subscription node of this slot (owner chain) */
    uint32_t count; /* subscription nodes held, = the rectangle's area */
} tower_watch;

/*
 * One (watcher, tower) subscription. A node sits on two lists: the tower's
 * doubly-linked watcher list (prev/next, O(1) unlink) and its owner's
 * singly-linked chain (owner_next). Free nodes chain through next.
 */
typedef struct tower_sub {
    uint32_t slot, tower;
    uint32_t prev, next;
    uint32_t owner_next;
} tower_sub;

typedef struct tower_rect {
    uint32_t x0, y0, x1, y1;
} tower_rect;

struct percept_backend {
    const percept_backend_host *host;
    double min_x, min_y;
    double inv_size; /* 1 / tower_size: multiplying keeps tower_of monotone */
    double tower_size;
    uint32_t nx, ny;
    entry_block **blocks; /* nx * ny entity blocks, NULL until a tower first takes an entity */
    size_t block_bytes;   /* bytes of all entity blocks, for memory_usage */
    uint32_t *watchers;   /* nx * ny watcher list heads (subscription nodes), NONE when none */
    tower_slot *slots;    /* slot_cap records */
    tower_watch *watch;   /* slot_cap records */
    uint32_t slot_cap;
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
    tower_sub *subs;     /* sub_cap subscription nodes */
    uint32_t sub_cap;
    uint32_t sub_free;       /* head of the free node list */
    uint32_t sub_free_count; /* nodes on it */
};

/* ceil(len / size), at least 1, without libm (plugins link nothing but libc). */
static double towers_along(double len, double size)
{
    double f = len / size;
    if (!(f < 1e18))
        return f;
    double n = (double)(uint64_t)f;
    if (n < f)
        n += 1;
    return n < 1 ? 1 : n;
}

/*
 * Clamped and monotone in v, so a rectangle built from the ends of an
 * interval holds every tower of the points inside it, and positions outside
 * the bounds land in the edge towers.
 */
static uint32_t tower_of(double v, double min, double inv, uint32_t n)
{
    double f = (v - min) * inv;
    if (!(f >= 0)) /* also NaN */
        return 0;
    if (f >= (double)n)
        return n - 1;
    return (uint32_t)f;
}

static uint32_t tower_index(const percept_backend *b, double x, double y)
{
    return tower_of(y, b->min_y, b->inv_size, b->ny) * b->nx +
           tower_of(x, b->min_x, b->inv_size, b->nx);
}

/*
 * The exact test of the relation, written as the specification writes it, so
 * the backend agrees with the host to the last bit (boundary included).
 */
static int within(double sx, double sy, double x, double y, double r2)
{
    double dx = sx - x, dy = sy - y;
    return dx * dx + dy * dy <= r2;
}

/*
 * Half-width of an axis window that holds every point passing within():
 * the rounded test may accept a point a few ulps beyond r (or, below about
 * 1e-154 where the squares underflow, any tiny offset), so widen by far more
 * than that. Returns 0 when r*r overflows: then every point passes.
 */
static int pad_of(double q, double r, double *pad)
{
    if (!(r * r <= 1e300) || !(q > -1e300 && q < 1e300))
        return 0;
    double aq = q < 0 ? -q : q;
    *pad = r + (aq + r) * 1e-12 + 1e-150;
    return 1;
}

/* Towers under the square of half-width r around (x, y); empty (x0 > x1) for r <= 0. */
static tower_rect rect_of(const percept_backend *b, double x, double y, double r)
{
    tower_rect rc = {1, 1, 0, 0};
    if (!(r > 0))
        return rc;
    double px, py;
    if (pad_of(x, r, &px) && pad_of(y, r, &py)) {
        rc.x0 = tower_of(x - px, b->min_x, b->inv_size, b->nx);
        rc.x1 = tower_of(x + px, b->min_x, b->inv_size, b->nx);
        rc.y0 = tower_of(y - py, b->min_y, b->inv_size, b->ny);
        rc.y1 = tower_of(y + py, b->min_y, b->inv_size, b->ny);
    } else {
        rc.x0 = rc.y0 = 0;
        rc.x1 = b->nx - 1;
        rc.y1 = b->ny - 1;
    }
    return rc;
}

static uint32_t rect_area(tower_rect rc)
{
    if (rc.x0 > rc.x1)
        return 0;
    /* At most MAX_TOWERS, so the product fits. */
    return (rc.x1 - rc.x0 + 1) * (rc.y1 - rc.y0 + 1);
}

static percept_backend *tower_create(const percept_backend_setup *setup,
                                     percept_backend_error *error)
{
    double size = DEFAULT_TOWER_SIZE;
    int size_param;
    char text[256];

    /* Tower arithmetic stays well inside double's range: 1e300 at most. */
    if (backend_size_param(setup, "tower", "tower_size", 1e300, &size, &size_param, error) != 0)
        return NULL;

    double w = setup->max_x - setup->min_x;
    double h = setup->max_y - setup->min_y;
    /* The comparisons also reject NaN and infinite bounds. */
    if (!(w >= 0 && w <= 1.0e300 && h >= 0 && h <= 1.0e300)) {
        backend_set_error(error, -1, "world bounds must be finite with min <= max");
        return NULL;
    }
    double nxd = towers_along(w, size), nyd = towers_along(h, size);
    if (!(nxd * nyd <= MAX_TOWERS)) {
        if (size_param >= 0)
            snprintf(text, sizeof(text),
                     "tower_size too small for the world bounds: %.0f x %.0f towers (at most %.0f)",
                     nxd, nyd, MAX_TOWERS);
        else
            snprintf(text, sizeof(text),
                     "tower_size %g (the default) is too small for the world bounds: "
                     "%.0f x %.0f towers (at most %.0f)",
                     size, nxd, nyd, MAX_TOWERS);
        backend_set_error(error, size_param, text);
        return NULL;
    }

    percept_backend *b = backend_host_alloc(setup->host, NULL, sizeof(*b));
    if (b == NULL) {
        backend_set_error(error, -1, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof(*b));
    b->host = setup->host;
    b->min_x = setup->min_x;
    b->min_y = setup->min_y;
    b->tower_size = size;
    b->inv_size = 1.0 / size;
    b->nx = (uint32_t)nxd;
    b->ny = (uint32_t)nyd;
    b->sub_free = NONE;
    size_t n = (size_t)b->nx * b->ny;
    b->blocks = backend_host_alloc(b->host, NULL, n * sizeof(*b->blocks));
    b->watchers =
        b->blocks == NULL ? NULL : backend_host_alloc(b->host, NULL, n * sizeof(uint32_t));
    if (b->watchers == NULL) {
        if (b->blocks != NULL)
            backend_host_alloc(b->host, b->blocks, 0);
        backend_host_alloc(b->host, b, 0);
        backend_set_error(error, -1, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        b->blocks[i] = NULL;
        b->watchers[i] = NONE;
    }
    return b;
}

static void tower_destroy(percept_backend *b)
{
    if (b == NULL)
        return;
    const percept_backend_host *host = b->host;
    size_t n = (size_t)b->nx * b->ny;
    for (size_t i = 0; i < n; i++)
        if (b->blocks[i] != NULL)
            backend_host_alloc(host, b->blocks[i], 0);
    if (b->subs != NULL)
        backend_host_alloc(host, b->subs, 0);
    if (b->watch != NULL)
        backend_host_alloc(host, b->watch, 0);
    if (b->slots != NULL)
        backend_host_alloc(host, b->slots, 0);
    backend_host_alloc(host, b->watchers, 0);
    backend_host_alloc(host, b->blocks, 0);
    backend_host_alloc(host, b, 0);
}

/* Grow the per-slot arrays to hold slot_count slots. Capacity is not state: a failure leaks none.
 */
static int grow_slots(percept_backend *b, uint32_t slot_count)
{
    if (slot_count <= b->slot_cap)
        return 0;
    /* Geometric growth keeps reserve amortized O(1) when slots arrive one by one. */
    uint32_t cap = b->slot_cap < 16 ? 16 : b->slot_cap;
    while (cap < slot_count)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    if ((uint64_t)cap * sizeof(tower_slot) > SIZE_MAX)
        return -1;
    tower_slot *slots = backend_host_alloc(b->host, b->slots, (size_t)cap * sizeof(tower_slot));
    if (slots == NULL)
        return -1; /* the old block is still ours and unchanged */
    b->slots = slots;
    tower_watch *watch = backend_host_alloc(b->host, b->watch, (size_t)cap * sizeof(tower_watch));
    if (watch == NULL)
        return -1; /* slot_cap unchanged: the larger slots block is only spare room */
    b->watch = watch;
    for (uint32_t i = b->slot_cap; i < cap; i++)
        slots[i].tower = NONE;
    b->slot_cap = cap;
    return 0;
}

/* Make sure `need` subscription nodes are free. */
static int grow_subs(percept_backend *b, uint32_t need)
{
    if (b->sub_free_count >= need)
        return 0;
    uint64_t want = (uint64_t)b->sub_cap + (need - b->sub_free_count);
    uint64_t cap = b->sub_cap < 64 ? 64 : (uint64_t)b->sub_cap * 2;
    if (cap < want)
        cap = want;
    if (cap >= NONE)
        cap = NONE - 1;
    if (cap < want || cap * sizeof(tower_sub) > SIZE_MAX)
        return -1;
    tower_sub *subs = backend_host_alloc(b->host, b->subs, (size_t)cap * sizeof(tower_sub));
    if (subs == NULL)
        return -1;
    b->subs = subs;
    /* Push the new nodes so the lowest index comes off first: fewer cache lines in use. */
    for (uint32_t i = (uint32_t)cap; i-- > b->sub_cap;) {
        subs[i].next = b->sub_free;
        b->sub_free = i;
    }
    b->sub_free_count += (uint32_t)cap - b->sub_cap;
    b->sub_cap = (uint32_t)cap;
    return 0;
}

/*
 * The next change needs at most: per-slot room for slot_count slots, room in
 * the entity block of slot's new tower unless it is there already, and
 * enough free subscription nodes for slot's new rectangle. update() releases
 * the towers it leaves before taking the ones it enters, so the worst case is
 * the new area minus the nodes the slot already holds.
 */
static int tower_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                         double y, double range)
{
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (grow_slots(b, slot_count) != 0)
        return -1;
    uint32_t t = tower_index(b, x, y);
    int in_index = slot < b->slot_cap && b->slots[slot].tower != NONE;
    if (!(in_index && b->slots[slot].tower == t) &&
        entry_block_reserve(b->host, &b->blocks[t], FIRST_TOWER_CAP, &b->block_bytes) != 0)
        return -1;
    uint32_t area = rect_area(rect_of(b, x, y, range));
    uint32_t held = in_index ? b->watch[slot].count : 0;
    return area > held ? grow_subs(b, area - held) : 0;
}

/* Whether tower t can take one more entity without allocating. */
static int tower_has_room(const percept_backend *b, uint32_t t)
{
    const entry_block *blk = b->blocks[t];
    return blk != NULL && blk->count < blk->cap;
}

/* Appends slot's entry to tower t, which reserve() made room in. */
static void link_slot(percept_backend *b, percept_slot slot, uint32_t t, double x, double y)
{
    b->slots[slot].tower = t;
    b->slots[slot].index = entry_block_push(b->blocks[t], slot, x, y);
}

/* Swap-remove: the tower's last entry fills the hole, so the array stays dense. */
static void unlink_slot(percept_backend *b, percept_slot slot)
{
    tower_slot *s = &b->slots[slot];
    uint32_t moved = entry_block_remove(b->blocks[s->tower], s->index);
    if (moved != ENTRY_BLOCK_NONE)
        b->slots[moved].index = s->index;
    s->tower = NONE;
}

/* Subscribe slot to towers [x0, x1] of row y (x0 > x1: none; x1 < nx, so x++ cannot wrap). */
static void subscribe_row(percept_backend *b, percept_slot slot, uint32_t y, uint32_t x0,
                          uint32_t x1)
{
    tower_watch *w = &b->watch[slot];
    for (uint32_t x = x0; x <= x1; x++) {
        uint32_t n = b->sub_free;
        if (n == NONE)
            return; /* reserve() was skipped: keep the index sound, lose the watch */
        tower_sub *node = &b->subs[n];
        b->sub_free = node->next;
        b->sub_free_count--;
        uint32_t t = y * b->nx + x;
        uint32_t head = b->watchers[t];
        node->slot = slot;
        node->tower = t;
        node->prev = NONE;
        node->next = head;
        if (head != NONE)
            b->subs[head].prev = n;
        b->watchers[t] = n;
        node->owner_next = w->first;
        w->first = n;
        w->count++;
    }
}

static void release_node(percept_backend *b, uint32_t n)
{
    tower_sub *node = &b->subs[n];
    if (node->prev != NONE)
        b->subs[node->prev].next = node->next;
    else
        b->watchers[node->tower] = node->next;
    if (node->next != NONE)
        b->subs[node->next].prev = node->prev;
    node->next = b->sub_free;
    b->sub_free = n;
    b->sub_free_count++;
}

static int in_rect(tower_rect rc, uint32_t x, uint32_t y)
{
    return x >= rc.x0 && x <= rc.x1 && y >= rc.y0 && y <= rc.y1;
}

/*
 * Move slot's subscriptions from its current rectangle to nr, touching only
 * the towers that change: nodes outside nr go back to the pool first (which
 * is what reserve() counted on), then the towers of nr missing from the old
 * rectangle get new nodes, found row by row as at most two runs per row.
 */
static void resubscribe(percept_backend *b, percept_slot slot, tower_rect nr)
{
    tower_watch *w = &b->watch[slot];
    tower_rect old = {w->x0, w->y0, w->x1, w->y1};
    if (old.x0 == nr.x0 && old.x1 == nr.x1 && old.y0 == nr.y0 && old.y1 == nr.y1)
        return;
    uint32_t *link = &w->first;
    while (*link != NONE) {
        uint32_t n = *link;
        tower_sub *node = &b->subs[n];
        if (in_rect(nr, node->tower % b->nx, node->tower / b->nx)) {
            link = &node->owner_next;
        } else {
            *link = node->owner_next;
            w->count--;
            release_node(b, n);
        }
    }
    int old_empty = old.x0 > old.x1;
    if (nr.x0 <= nr.x1) {
        for (uint32_t y = nr.y0; y <= nr.y1; y++) {
            if (old_empty || y < old.y0 || y > old.y1) {
                subscribe_row(b, slot, y, nr.x0, nr.x1);
            } else {
                if (nr.x0 < old.x0)
                    subscribe_row(b, slot, y, nr.x0, nr.x1 < old.x0 ? nr.x1 : old.x0 - 1);
                if (nr.x1 > old.x1)
                    subscribe_row(b, slot, y, nr.x0 > old.x1 ? nr.x0 : old.x1 + 1, nr.x1);
            }
        }
    }
    w->x0 = nr.x0;
    w->y0 = nr.y0;
    w->x1 = nr.x1;
    w->y1 = nr.y1;
}

static void tower_update(percept_backend *b, percept_slot slot, double x, double y, double range);

static void tower_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    if (b->slots[slot].tower != NONE) {
        tower_update(b, slot, x, y, range);
        return;
    }
    uint32_t t = tower_index(b, x, y);
    if (!tower_has_room(b, t))
        return; /* the host skipped reserve() */
    link_slot(b, slot, t, x, y);
    tower_watch *w = &b->watch[slot];
    w->x0 = w->y0 = 1; /* empty: resubscribe() adds the whole new rectangle */
    w->x1 = w->y1 = 0;
    w->first = NONE;
    w->count = 0;
    resubscribe(b, slot, rect_of(b, x, y, range));
    b->count++;
    if (slot >= b->slot_limit)
        b->slot_limit = slot + 1;
}

static void tower_update(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return;
    tower_slot *s = &b->slots[slot];
    if (s->tower == NONE) {
        tower_insert(b, slot, x, y, range);
        return;
    }
    uint32_t t = tower_index(b, x, y);
    if (t == s->tower) {
        block_entry *e = &b->blocks[t]->items[s->index];
        e->x = x;
        e->y = y;
    } else if (tower_has_room(b, t)) {
        unlink_slot(b, slot);
        link_slot(b, slot, t, x, y);
    } else {
        return; /* the host skipped reserve(): the entity stays where it was, still found there */
    }
    resubscribe(b, slot, rect_of(b, x, y, range));
}

static void tower_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].tower == NONE)
        return;
    unlink_slot(b, slot);
    tower_watch *w = &b->watch[slot];
    for (uint32_t n = w->first; n != NONE;) {
        uint32_t next = b->subs[n].owner_next;
        release_node(b, n);
        n = next;
    }
    w->first = NONE;
    w->count = 0;
    b->count--;
}

static void tower_query(const percept_backend *b, double x, double y, double r,
                        percept_backend_visit visit, void *ctx)
{
    if (!(r >= 0) || x != x || y != y || b->count == 0)
        return; /* NaN compares false with everything: nothing is within it */
    double r2 = r * r;
    tower_rect rc = rect_of(b, x, y, r > 0 ? r : 1e-300);
    /* More towers than slots (or an unbounded square): scanning the slots is cheaper. */
    if (rect_area(rc) > b->slot_limit) {
        const tower_slot *slots = b->slots;
        for (uint32_t s = 0; s < b->slot_limit; s++) {
            if (slots[s].tower == NONE)
                continue;
            const block_entry *e = &b->blocks[slots[s].tower]->items[slots[s].index];
            if (within(e->x, e->y, x, y, r2))
                visit(ctx, s);
        }
        return;
    }
    /* The same test as within(): coordinates are finite, so no distance is NaN. */
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    for (uint32_t ty = rc.y0; ty <= rc.y1; ty++) {
        entry_block *const *row = &b->blocks[(size_t)ty * b->nx];
        for (uint32_t tx = rc.x0; tx <= rc.x1; tx++) {
            if (row[tx] != NULL)
                entry_block_gather(row[tx], x, y, r2, &hits);
        }
    }
    block_hits_flush(&hits);
}

static size_t tower_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->nx * b->ny * (sizeof(*b->blocks) + sizeof(uint32_t)) +
           (size_t)b->slot_cap * (sizeof(tower_slot) + sizeof(tower_watch)) +
           (size_t)b->sub_cap * sizeof(tower_sub) + b->block_bytes;
}

static const percept_backend_ops tower_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "tower",
    .description = "lighthouse towers: square regions listing their entities and their watchers",
    .create = tower_create,
    .destroy = tower_destroy,
    .reserve = tower_reserve,
    .insert = tower_insert,
    .update = tower_update,
    .remove = tower_remove,
    .query = tower_query,
    .memory_usage = tower_memory_usage,
    .query_hints = PERCEPT_BACKEND_QUERY_LOCAL,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &tower_ops;
}
