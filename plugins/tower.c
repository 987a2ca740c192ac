/*
 * tower.c - the "tower" backend (lighthouses): square tower regions over the
 * world bounds; each tower keeps the entities standing in it, in one array.
 * Queries read the towers under the query square and filter by exact
 * distance.
 *
 * The classic scheme also has each tower list the observers watching it, so
 * that a moving entity finds who perceives it. Here the core's observer grid
 * answers that question, and no operation of the ABI would read such lists:
 * the backend does not keep them.
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#include <string.h>

#define NONE ENTRY_BLOCK_NONE
#define DEFAULT_TOWER_SIZE 64.0
/* 2^22 towers: 32 MiB of entity block pointers; beyond that towers are too small. */
#define MAX_TOWERS 4194304.0
/* Entries of a tower's first entity block; it doubles from there. */
#define FIRST_TOWER_CAP 4u

typedef struct tower_rect {
    uint32_t x0, y0, x1, y1;
} tower_rect;

struct percept_backend {
    const percept_backend_host *host;
    backend_layout towers; /* nx * ny towers */
    entry_block **blocks;  /* nx * ny entity blocks, NULL until a tower first takes an entity */
    size_t block_bytes;    /* bytes of all entity blocks, for memory_usage */
    entry_ref *slots;      /* slot_cap records: the tower (block) and entry of each slot */
    uint32_t slot_cap;
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
};

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

/* Towers under the square of half-width r >= 0 around (x, y); all of them when it is unbounded. */
static tower_rect rect_of(const percept_backend *b, double x, double y, double r)
{
    const backend_layout *t = &b->towers;
    tower_rect rc;
    double px, py;
    if (pad_of(x, r, &px) && pad_of(y, r, &py)) {
        rc.x0 = backend_cell_of(x - px, t->min_x, t->inv, t->nx);
        rc.x1 = backend_cell_of(x + px, t->min_x, t->inv, t->nx);
        rc.y0 = backend_cell_of(y - py, t->min_y, t->inv, t->ny);
        rc.y1 = backend_cell_of(y + py, t->min_y, t->inv, t->ny);
    } else {
        rc.x0 = rc.y0 = 0;
        rc.x1 = t->nx - 1;
        rc.y1 = t->ny - 1;
    }
    return rc;
}

static percept_backend *tower_create(const percept_backend_setup *setup,
                                     percept_backend_error *error)
{
    double size = DEFAULT_TOWER_SIZE;
    int size_param;
    backend_layout towers;

    /* Tower arithmetic stays well inside double's range: 1e300 at most. */
    if (backend_size_param(setup, "tower", "tower_size", 1e300, &size, &size_param, error) != 0 ||
        backend_layout_init(&towers, setup, size, size_param, "tower_size", "towers", MAX_TOWERS,
                            error) != 0)
        return NULL;

    percept_backend *b = backend_host_alloc(setup->host, NULL, sizeof(*b));
    if (b == NULL) {
        backend_set_error(error, -1, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof(*b));
    b->host = setup->host;
    b->towers = towers;
    size_t n = (size_t)towers.nx * towers.ny;
    b->blocks = backend_host_alloc(b->host, NULL, n * sizeof(*b->blocks));
    if (b->blocks == NULL) {
        backend_host_alloc(b->host, b, 0);
        backend_set_error(error, -1, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        b->blocks[i] = NULL;
    return b;
}

static void tower_destroy(percept_backend *b)
{
    if (b == NULL)
        return;
    const percept_backend_host *host = b->host;
    size_t n = (size_t)b->towers.nx * b->towers.ny;
    for (size_t i = 0; i < n; i++)
        if (b->blocks[i] != NULL)
            backend_host_alloc(host, b->blocks[i], 0);
    if (b->slots != NULL)
        backend_host_alloc(host, b->slots, 0);
    backend_host_alloc(host, b->blocks, 0);
    backend_host_alloc(host, b, 0);
}

/* Grow the per-slot records to hold slot_count slots. Capacity is not state: a failure leaks none.
 */
static int grow_slots(percept_backend *b, uint32_t slot_count)
{
    if (slot_count <= b->slot_cap)
        return 0;
    uint32_t cap = backend_grown(b->slot_cap, slot_count, 16);
    if ((uint64_t)cap * sizeof(entry_ref) > SIZE_MAX)
        return -1;
    entry_ref *slots = backend_host_alloc(b->host, b->slots, (size_t)cap * sizeof(entry_ref));
    if (slots == NULL)
        return -1; /* the old block is still ours and unchanged */
    for (uint32_t i = b->slot_cap; i < cap; i++)
        slots[i].block = NONE;
    b->slots = slots;
    b->slot_cap = cap;
    return 0;
}

/*
 * The next change needs at most per-slot room for slot_count slots and room
 * in the entity block of slot's new tower, unless it is there already. The
 * range plays no part: a range change alone never needs memory.
 */
static int tower_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                         double y, double range)
{
    (void)range;
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (grow_slots(b, slot_count) != 0)
        return -1;
    uint32_t t = backend_cell_index(&b->towers, x, y);
    if (slot < b->slot_cap && b->slots[slot].block == t)
        return 0; /* a move within the tower rewrites the entry in place */
    return entry_block_reserve(b->host, &b->blocks[t], FIRST_TOWER_CAP, &b->block_bytes);
}

static void tower_update(percept_backend *b, percept_slot slot, double x, double y, double range);

static void tower_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    if (b->slots[slot].block != NONE) {
        tower_update(b, slot, x, y, range);
        return;
    }
    uint32_t t = backend_cell_index(&b->towers, x, y);
    if (!entry_block_has_room(b->blocks[t]))
        return; /* the host skipped reserve() */
    entry_ref_link(b->slots, slot, b->blocks[t], t, x, y);
    b->count++;
    if (slot >= b->slot_limit)
        b->slot_limit = slot + 1;
}

static void tower_update(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return;
    const entry_ref *s = &b->slots[slot];
    if (s->block == NONE) {
        tower_insert(b, slot, x, y, range);
        return;
    }
    uint32_t t = backend_cell_index(&b->towers, x, y);
    if (t == s->block) {
        entry_ref_move(b->blocks[t], s, x, y);
    } else if (entry_block_has_room(b->blocks[t])) {
        entry_ref_unlink(b->slots, slot, b->blocks[s->block]);
        entry_ref_link(b->slots, slot, b->blocks[t], t, x, y);
    }
    /* else the host skipped reserve(): the entity stays where it was, still found there */
}

static void tower_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].block == NONE)
        return;
    entry_ref_unlink(b->slots, slot, b->blocks[b->slots[slot].block]);
    b->count--;
}

static void tower_query(const percept_backend *b, double x, double y, double r,
                        percept_backend_visit visit, void *ctx)
{
    if (!(r >= 0) || x != x || y != y || b->count == 0)
        return; /* NaN compares false with everything: nothing is within it */
    double r2 = r * r;
    tower_rect rc = rect_of(b, x, y, r);
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    /* At most MAX_TOWERS, so the product fits. */
    uint32_t area = (rc.x1 - rc.x0 + 1) * (rc.y1 - rc.y0 + 1);
    if (area > b->slot_limit) {
        /* More towers than slots (or an unbounded square): scanning the slots is cheaper. */
        const entry_ref *slots = b->slots;
        for (uint32_t s = 0; s < b->slot_limit; s++) {
            if (slots[s].block == NONE)
                continue;
            const block_entry *e = &b->blocks[slots[s].block]->items[slots[s].index];
            block_hits_add(&hits, s, within(e->x, e->y, x, y, r2));
        }
    } else {
        /* The same test as within(): coordinates are finite, so no distance is NaN. */
        for (uint32_t ty = rc.y0; ty <= rc.y1; ty++) {
            entry_block *const *row = &b->blocks[(size_t)ty * b->towers.nx];
            for (uint32_t tx = rc.x0; tx <= rc.x1; tx++) {
                if (row[tx] != NULL)
                    entry_block_gather(row[tx], x, y, r2, &hits);
            }
        }
    }
    block_hits_flush(&hits);
}

static size_t tower_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->towers.nx * b->towers.ny * sizeof(*b->blocks) +
           (size_t)b->slot_cap * sizeof(entry_ref) + b->block_bytes;
}

static const percept_backend_ops tower_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "tower",
    .description = "lighthouse towers: square regions, each keeping the entities standing in it",
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
