/*
 * grid.c - the "grid" backend: a uniform grid over the world bounds (the
 * classic nine-square layout). Each cell keeps its entities in one array, so a
 * query reads memory sequentially. Positions outside the bounds fall into the
 * edge cells, so no answer misses anyone; best when entities stay inside.
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_CELL_SIZE 64.0
/* 2^24 cells: 128 MiB of cell pointers, beyond which the grid is the wrong tool. */
#define MAX_CELLS 16777216.0
/* Entries of a cell's first block; it doubles from there. */
#define FIRST_CELL_CAP 4u

/*
 * Where a slot's entry is, for moves and removal. cell == NONE means the
 * slot is not in the index.
 */
typedef struct grid_slot {
    uint32_t cell;
    uint32_t index; /* in cells[cell]->items */
} grid_slot;

struct percept_backend {
    const percept_backend_host *host;
    double min_x, min_y;
    double inv_cell; /* 1 / cell_size: a multiplication keeps cell_of monotone too */
    uint32_t nx, ny;
    entry_block **cells; /* nx * ny blocks, NULL until a cell first takes an entity */
    size_t cell_bytes;   /* bytes of all blocks, for memory_usage */
    grid_slot *slots;    /* slot_cap records */
    uint32_t slot_cap;   /* records allocated */
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
};

/* Clamped, monotone in v: a query rectangle built from it never misses a cell. */
static uint32_t cell_of(double v, double min, double inv, uint32_t n)
{
    double f = (v - min) * inv;
    if (!(f >= 0)) /* also NaN */
        return 0;
    if (f >= (double)n)
        return n - 1;
    return (uint32_t)f;
}

/* ceil(len / cell_size), at least 1, without libm (plugins link nothing but libc). */
static double cells_along(double len, double cell_size)
{
    double f = len / cell_size;
    if (!(f < 1e18))
        return f;
    double n = (double)(uint64_t)f;
    if (n < f)
        n += 1;
    return n < 1 ? 1 : n;
}

static uint32_t cell_index(const percept_backend *b, double x, double y)
{
    return cell_of(y, b->min_y, b->inv_cell, b->ny) * b->nx +
           cell_of(x, b->min_x, b->inv_cell, b->nx);
}

static percept_backend *grid_create(const percept_backend_setup *setup,
                                    percept_backend_error *error)
{
    double cell_size = DEFAULT_CELL_SIZE;
    int cell_param;
    char text[256];

    if (backend_size_param(setup, "grid", "cell_size", DBL_MAX, &cell_size, &cell_param, error) !=
        0)
        return NULL;

    double w = setup->max_x - setup->min_x;
    double h = setup->max_y - setup->min_y;
    /* The comparisons also reject NaN and infinite bounds. */
    if (!(w >= 0 && w <= 1.0e300 && h >= 0 && h <= 1.0e300)) {
        backend_set_error(error, -1, "world bounds must be finite with min <= max");
        return NULL;
    }
    double nxd = cells_along(w, cell_size), nyd = cells_along(h, cell_size);
    if (nxd * nyd > MAX_CELLS) {
        if (cell_param >= 0)
            snprintf(text, sizeof(text),
                     "too small for the world bounds: %.0f x %.0f cells (at most %.0f)", nxd, nyd,
                     MAX_CELLS);
        else
            snprintf(text, sizeof(text),
                     "cell_size %g (the default) is too small for the world bounds: "
                     "%.0f x %.0f cells (at most %.0f)",
                     cell_size, nxd, nyd, MAX_CELLS);
        backend_set_error(error, cell_param, text);
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
    b->inv_cell = 1.0 / cell_size;
    b->nx = (uint32_t)nxd;
    b->ny = (uint32_t)nyd;
    size_t ncells = (size_t)b->nx * b->ny;
    b->cells = backend_host_alloc(b->host, NULL, ncells * sizeof(*b->cells));
    if (b->cells == NULL) {
        backend_host_alloc(b->host, b, 0);
        backend_set_error(error, -1, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < ncells; i++)
        b->cells[i] = NULL;
    return b;
}

static void grid_destroy(percept_backend *b)
{
    if (b == NULL)
        return;
    const percept_backend_host *host = b->host;
    size_t ncells = (size_t)b->nx * b->ny;
    for (size_t i = 0; i < ncells; i++)
        if (b->cells[i] != NULL)
            backend_host_alloc(host, b->cells[i], 0);
    if (b->slots != NULL)
        backend_host_alloc(host, b->slots, 0);
    backend_host_alloc(host, b->cells, 0);
    backend_host_alloc(host, b, 0);
}

static int grow_slots(percept_backend *b, uint32_t slot_count)
{
    if (slot_count <= b->slot_cap)
        return 0;
    /* Geometric growth keeps reserve amortized O(1) when slots arrive one by one. */
    uint32_t cap = b->slot_cap < 16 ? 16 : b->slot_cap;
    while (cap < slot_count)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    if ((uint64_t)cap * sizeof(grid_slot) > SIZE_MAX)
        return -1;
    grid_slot *slots = backend_host_alloc(b->host, b->slots, (size_t)cap * sizeof(grid_slot));
    if (slots == NULL)
        return -1; /* the old block is still ours and unchanged */
    for (uint32_t i = b->slot_cap; i < cap; i++)
        slots[i].cell = NONE;
    b->slots = slots;
    b->slot_cap = cap;
    return 0;
}

/*
 * Room for slot_count slots, and for `slot` in the cell of (x, y) unless it
 * is there already. Each step either succeeds or changes only capacity.
 */
static int grid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double range)
{
    (void)range;
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (grow_slots(b, slot_count) != 0)
        return -1;
    uint32_t cell = cell_index(b, x, y);
    if (slot < b->slot_cap && b->slots[slot].cell == cell)
        return 0; /* a move within the cell rewrites the entry in place */
    return entry_block_reserve(b->host, &b->cells[cell], FIRST_CELL_CAP, &b->cell_bytes);
}

/* Whether `cell` can take one more entry without allocating. */
static int cell_has_room(const percept_backend *b, uint32_t cell)
{
    const entry_block *c = b->cells[cell];
    return c != NULL && c->count < c->cap;
}

/* Appends slot's entry to `cell`, which reserve() made room in. */
static void link_slot(percept_backend *b, percept_slot slot, uint32_t cell, double x, double y)
{
    b->slots[slot].cell = cell;
    b->slots[slot].index = entry_block_push(b->cells[cell], slot, x, y);
}

/* Swap-remove: the cell's last entry fills the hole, so the array stays dense. */
static void unlink_slot(percept_backend *b, percept_slot slot)
{
    grid_slot *s = &b->slots[slot];
    uint32_t moved = entry_block_remove(b->cells[s->cell], s->index);
    if (moved != ENTRY_BLOCK_NONE)
        b->slots[moved].index = s->index;
    s->cell = NONE;
}

static void grid_update(percept_backend *b, percept_slot slot, double x, double y, double range);

static void grid_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    if (b->slots[slot].cell != NONE) {
        grid_update(b, slot, x, y, range);
        return;
    }
    uint32_t cell = cell_index(b, x, y);
    if (!cell_has_room(b, cell))
        return; /* the host skipped reserve() */
    link_slot(b, slot, cell, x, y);
    b->count++;
    if (slot >= b->slot_limit)
        b->slot_limit = slot + 1;
}

static void grid_update(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    (void)range;
    if (slot >= b->slot_cap)
        return;
    grid_slot *s = &b->slots[slot];
    if (s->cell == NONE) {
        grid_insert(b, slot, x, y, range);
        return;
    }
    uint32_t cell = cell_index(b, x, y);
    if (cell == s->cell) {
        block_entry *e = &b->cells[cell]->items[s->index];
        e->x = x;
        e->y = y;
    } else if (cell_has_room(b, cell)) {
        unlink_slot(b, slot);
        link_slot(b, slot, cell, x, y);
    }
    /* else the host skipped reserve(): the entity stays where it was, still found there */
}

static void grid_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].cell == NONE)
        return;
    unlink_slot(b, slot);
    b->count--;
}

/* True when (sx, sy) may be within r of (x, y); lenient so rounding never drops a hit. */
static int maybe_within(double sx, double sy, double x, double y, double limit)
{
    double dx = sx - x, dy = sy - y;
    return !(dx * dx + dy * dy > limit);
}

static void grid_query(const percept_backend *b, double x, double y, double r,
                       percept_backend_visit visit, void *ctx)
{
    if (x != x || y != y || r != r || b->count == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    /*
     * The host's test dx*dx + dy*dy <= r*r is rounded; it may accept a point a
     * few ulps beyond r (or, below 1e-154, where the squares underflow, any
     * tiny offset). Widening the square and the filter by far more than that
     * costs nothing measurable and keeps the answer a superset.
     */
    double limit = r * r * (1 + 1e-9) + 1e-300;
    int finite = x > -1e300 && x < 1e300 && y > -1e300 && y < 1e300 && r < 1e300;
    if (finite) {
        double ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
        double pad_x = r + (ax + r) * 4e-15 + 1e-150;
        double pad_y = r + (ay + r) * 4e-15 + 1e-150;
        uint32_t x0 = cell_of(x - pad_x, b->min_x, b->inv_cell, b->nx);
        uint32_t x1 = cell_of(x + pad_x, b->min_x, b->inv_cell, b->nx);
        uint32_t y0 = cell_of(y - pad_y, b->min_y, b->inv_cell, b->ny);
        uint32_t y1 = cell_of(y + pad_y, b->min_y, b->inv_cell, b->ny);
        uint64_t ncells = (uint64_t)(x1 - x0 + 1) * (y1 - y0 + 1);
        if (ncells <= b->slot_limit) {
            block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
            for (uint32_t cy = y0; cy <= y1; cy++) {
                entry_block *const *row = &b->cells[(size_t)cy * b->nx];
                for (uint32_t cx = x0; cx <= x1; cx++) {
                    if (row[cx] != NULL)
                        entry_block_gather(row[cx], x, y, limit, &hits);
                }
            }
            block_hits_flush(&hits);
            return;
        }
    }
    /* More cells than slots (or an infinite query): scanning the slots is cheaper. */
    const grid_slot *slots = b->slots;
    for (uint32_t s = 0; s < b->slot_limit; s++) {
        if (slots[s].cell == NONE)
            continue;
        const block_entry *e = &b->cells[slots[s].cell]->items[slots[s].index];
        if (!finite || maybe_within(e->x, e->y, x, y, limit))
            visit(ctx, s);
    }
}

static size_t grid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->nx * b->ny * sizeof(*b->cells) +
           (size_t)b->slot_cap * sizeof(grid_slot) + b->cell_bytes;
}

static const percept_backend_ops grid_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "grid",
    .description = "uniform grid over the world bounds (nine-square); edge cells take the outside",
    .create = grid_create,
    .destroy = grid_destroy,
    .reserve = grid_reserve,
    .insert = grid_insert,
    .update = grid_update,
    .remove = grid_remove,
    .query = grid_query,
    .memory_usage = grid_memory_usage,
    .query_hints = PERCEPT_BACKEND_QUERY_LOCAL,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &grid_ops;
}
