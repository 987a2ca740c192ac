/*
 * grid.c - the "grid" backend: a uniform grid over the world bounds (the
 * classic nine-square layout). Each cell keeps its entities in one block
 * (cell_blocks.h). Positions outside the bounds fall into the edge cells, so
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
#include "cell_blocks.h"

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

#define DEFAULT_CELL_SIZE 64.0
/* 2^24 cells: 128 MiB of cell pointers, beyond which the grid is the wrong tool. */
#define MAX_CELLS 16777216.0

struct percept_backend {
    backend_layout grid; /* nx * ny cells */
    cell_blocks cb;      /* their entities */
};

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
    b->grid = grid;
    if (cell_blocks_init(&b->cb, setup, (size_t)grid.nx * grid.ny, grid.size, error) != 0) {
        backend_free(setup->host, b);
        return NULL;
    }
    return b;
}

static void grid_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->cb.host;
    cell_blocks_free(&b->cb);
    backend_free(host, b);
}

static int grid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double z, double range)
{
    (void)z, (void)range;
    return cell_blocks_reserve(&b->cb, slot_count, slot, backend_cell_index(&b->grid, x, y));
}

static void grid_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                     double range)
{
    (void)z, (void)range;
    cell_blocks_put(&b->cb, slot, backend_cell_index(&b->grid, x, y), x, y);
}

static void grid_remove(percept_backend *b, percept_slot slot)
{
    cell_blocks_remove(&b->cb, slot);
}

static void grid_query(const percept_backend *b, double x, double y, double z, double r,
                       percept_backend_visit visit, void *ctx)
{
    (void)z; /* the planar query is a superset of the one in three dimensions */
    const cell_blocks *cb = &b->cb;
    if (x != x || y != y || r != r || cb->count == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    backend_window w;
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    const backend_layout *g = &b->grid;
    float limit = INFINITY; /* no window: every entity may qualify */
    float qx = entry_query_offset(x, cb->ax), qy = entry_query_offset(y, cb->ay);
    if (backend_query_window(x, y, r, &w)) {
        limit = entry_gather_limit(r, cb->span);
        /* The cells of the window's ends hold every entity the host accepts (backend_util.h). */
        uint32_t x0 = backend_cell_of(x - w.pad_x, g->min_x, g->inv, g->nx);
        uint32_t x1 = backend_cell_of(x + w.pad_x, g->min_x, g->inv, g->nx);
        uint32_t y0 = backend_cell_of(y - w.pad_y, g->min_y, g->inv, g->ny);
        uint32_t y1 = backend_cell_of(y + w.pad_y, g->min_y, g->inv, g->ny);
        if ((uint64_t)(x1 - x0 + 1) * (y1 - y0 + 1) <= cb->slot_limit) {
            /* Every block asked for first, then gathered (entry_block_prefetch()). */
            for (uint32_t cy = y0; cy <= y1; cy++) {
                entry_block *const *row = &cb->cells[(size_t)cy * g->nx];
                for (uint32_t cx = x0; cx <= x1; cx++) {
                    if (row[cx] != NULL)
                        entry_block_prefetch(row[cx]);
                }
            }
            for (uint32_t cy = y0; cy <= y1; cy++) {
                entry_block *const *row = &cb->cells[(size_t)cy * g->nx];
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
    cell_blocks_scan(cb, qx, qy, limit, &hits);
    block_hits_flush(&hits);
}

static size_t grid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + cell_blocks_bytes(&b->cb);
}

BACKEND_DEFINE_OPS(grid, GRID_NAME, GRID_DESCRIPTION, PERCEPT_BACKEND_QUERY_LOCAL)
