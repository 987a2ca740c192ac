/*
 * grid.c - the "grid" backend: a uniform grid over the world bounds (the
 * classic nine-square layout). Each cell keeps its entities in one block
 * (entry_block.h). Positions outside the bounds fall into the edge cells, so
 * no answer misses anyone; best when entities stay inside.
 *
 * Built with GRID_AS_TOWER, the same source is the "tower" backend. Classic
 * lighthouse towers are square regions each keeping the entities standing in
 * it, which is this grid, and each listing the observers watching it, which
 * the core's observer grid keeps (no operation of the ABI would read such
 * lists). So the two differ only in name, size key and wording.
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#ifdef GRID_AS_TOWER
#define GRID_NAME "tower"
#define GRID_SIZE_KEY "tower_size"
#define GRID_UNIT "towers"
#define GRID_DESCRIPTION                                                                           \
    "lighthouse towers over the world bounds, each keeping the entities standing in it"
#else
#define GRID_NAME "grid"
#define GRID_SIZE_KEY "cell_size"
#define GRID_UNIT "cells"
#define GRID_DESCRIPTION                                                                           \
    "uniform grid over the world bounds (nine-square); edge cells take the outside"
#endif

#define NONE ENTRY_BLOCK_NONE
#define DEFAULT_CELL_SIZE 64.0
/* 2^24 cells: 128 MiB of cell pointers, beyond which the grid is the wrong tool. */
#define MAX_CELLS 16777216.0
#define FIRST_CELL_CAP 4u /* entries of a cell's first block */

struct percept_backend {
    const percept_backend_host *host;
    backend_layout grid; /* nx * ny cells */
    entry_block **cells; /* nx * ny blocks, NULL until a cell first takes an entity */
    size_t cell_bytes;   /* bytes of all blocks, for memory_usage */
    entry_ref *slots;    /* slot_cap records: the cell (block) and entry of each slot */
    uint32_t slot_cap;   /* records allocated */
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
    /* The anchor of every entry's offsets (entry_block.h): the centre of the
     * bounds, so that a query computes the point's offsets once, not once a
     * cell. Their rounding, a few ten-millionths of the span, widens a
     * query's radius by some 0.004 cells at 4096 cells a side. */
    double ax, ay;
    double span;
};

/* Twice the bounds' longer side, and at least ENTRY_SPAN_CELLS cells:
 * entities up to 1.5 times that side outside the bounds keep their offsets. */
static double grid_span(const percept_backend_setup *setup, double size)
{
    double w = setup->max_x - setup->min_x, h = setup->max_y - setup->min_y;
    double span = 2 * (w > h ? w : h);
    double cells = entry_span(size);
    span = span > cells ? span : cells;
    return span < ENTRY_SPAN_MAX ? span : ENTRY_SPAN_MAX;
}

static percept_backend *grid_create(const percept_backend_setup *setup,
                                    percept_backend_error *error)
{
    /*
     * Above BACKEND_SIZE_MIN a tiny size needs no limit of its own: the
     * layout refuses more than MAX_CELLS cells, and over bounds of no area
     * any size makes one cell (whose edges take everyone).
     */
    backend_size size = {.key = GRID_SIZE_KEY, .min = BACKEND_SIZE_MIN, .value = DEFAULT_CELL_SIZE};
    backend_layout grid;
    if (backend_sizes(setup, GRID_NAME, &size, 1, error) != 0 ||
        backend_layout_init(&grid, setup, size.value, size.index, GRID_SIZE_KEY, GRID_UNIT,
                            MAX_CELLS, error) != 0)
        return NULL;

    percept_backend *b = backend_new(setup, sizeof(*b), error);
    if (b == NULL)
        return NULL;
    b->host = setup->host;
    b->grid = grid;
    b->ax = setup->min_x + (setup->max_x - setup->min_x) / 2;
    b->ay = setup->min_y + (setup->max_y - setup->min_y) / 2;
    b->span = grid_span(setup, grid.size);
    b->cells = backend_new(setup, (size_t)grid.nx * grid.ny * sizeof(*b->cells), error);
    if (b->cells == NULL) {
        backend_free(b->host, b);
        return NULL;
    }
    return b;
}

static void grid_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    for (size_t i = 0; i < (size_t)b->grid.nx * b->grid.ny; i++)
        backend_free(host, b->cells[i]);
    backend_free(host, b->slots);
    backend_free(host, b->cells);
    backend_free(host, b);
}

/*
 * Room for slot_count slots, and for `slot` in the cell of (x, y) unless it
 * is there already. Each step either succeeds or changes only capacity.
 */
static int grid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double z, double range)
{
    (void)z, (void)range;
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (entry_refs_reserve(b->host, &b->slots, &b->slot_cap, slot_count) != 0)
        return -1;
    uint32_t cell = backend_cell_index(&b->grid, x, y);
    if (slot < b->slot_cap && b->slots[slot].block == cell)
        return 0; /* a move within the cell rewrites the entry in place */
    return entry_block_reserve(b->host, &b->cells[cell], FIRST_CELL_CAP, sizeof(block_entry),
                               &b->cell_bytes);
}

static void grid_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                     double range)
{
    (void)z, (void)range;
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    const entry_ref *s = &b->slots[slot];
    uint32_t cell = backend_cell_index(&b->grid, x, y);
    float dx = entry_offset(x, b->ax, b->span), dy = entry_offset(y, b->ay, b->span);
    if (cell == s->block) {
        entry_ref_move(b->cells[cell], s, dx, dy);
        return;
    }
    if (!entry_block_has_room(b->cells[cell]))
        return; /* the host skipped reserve(): the entity stays where it was */
    uint32_t from = s->block;
    if (from != NONE) {
        entry_ref_unlink(b->slots, slot, b->cells[from]);
        entry_block_shrink(b->host, &b->cells[from], FIRST_CELL_CAP, sizeof(block_entry),
                           &b->cell_bytes);
    } else {
        b->count++;
        if (slot >= b->slot_limit)
            b->slot_limit = slot + 1;
    }
    entry_ref_link(b->slots, slot, b->cells[cell], cell, dx, dy);
}

static void grid_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].block == NONE)
        return;
    uint32_t from = b->slots[slot].block;
    entry_ref_unlink(b->slots, slot, b->cells[from]);
    entry_block_shrink(b->host, &b->cells[from], FIRST_CELL_CAP, sizeof(block_entry),
                       &b->cell_bytes);
    b->count--;
}

static void grid_query(const percept_backend *b, double x, double y, double z, double r,
                       percept_backend_visit visit, void *ctx)
{
    (void)z; /* the planar query is a superset of the one in three dimensions */
    if (x != x || y != y || r != r || b->count == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    backend_window w;
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    const backend_layout *g = &b->grid;
    float limit = INFINITY; /* no window: every entity may qualify */
    float qx = entry_query_offset(x, b->ax), qy = entry_query_offset(y, b->ay);
    if (backend_query_window(x, y, r, &w)) {
        limit = entry_gather_limit(r, b->span);
        /* The cells of the window's ends hold every entity the host accepts (backend_util.h). */
        uint32_t x0 = backend_cell_of(x - w.pad_x, g->min_x, g->inv, g->nx);
        uint32_t x1 = backend_cell_of(x + w.pad_x, g->min_x, g->inv, g->nx);
        uint32_t y0 = backend_cell_of(y - w.pad_y, g->min_y, g->inv, g->ny);
        uint32_t y1 = backend_cell_of(y + w.pad_y, g->min_y, g->inv, g->ny);
        if ((uint64_t)(x1 - x0 + 1) * (y1 - y0 + 1) <= b->slot_limit) {
            /* Every block asked for first, then gathered (entry_block_prefetch()). */
            for (uint32_t cy = y0; cy <= y1; cy++) {
                entry_block *const *row = &b->cells[(size_t)cy * g->nx];
                for (uint32_t cx = x0; cx <= x1; cx++) {
                    if (row[cx] != NULL)
                        entry_block_prefetch(row[cx]);
                }
            }
            for (uint32_t cy = y0; cy <= y1; cy++) {
                entry_block *const *row = &b->cells[(size_t)cy * g->nx];
                for (uint32_t cx = x0; cx <= x1; cx++) {
                    if (row[cx] != NULL)
                        entry_block_gather(row[cx], qx, qy, limit, &hits);
                }
            }
            block_hits_flush(&hits);
            return;
        }
    }
    /* No window, or more cells than slots: scanning the slots is cheaper. */
    for (uint32_t s = 0; s < b->slot_limit; s++) {
        const entry_ref *ref = &b->slots[s];
        if (ref->block == NONE)
            continue;
        const block_entry *e = &b->cells[ref->block]->items[ref->index];
        float dx = e->dx - qx, dy = e->dy - qy;
        block_hits_add(&hits, s, !(dx * dx + dy * dy > limit));
    }
    block_hits_flush(&hits);
}

static size_t grid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->grid.nx * b->grid.ny * sizeof(*b->cells) +
           (size_t)b->slot_cap * sizeof(entry_ref) + b->cell_bytes;
}

BACKEND_DEFINE_OPS(grid, GRID_NAME, GRID_DESCRIPTION, PERCEPT_BACKEND_QUERY_LOCAL)
