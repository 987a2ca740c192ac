/*
 * tick_grid.h - where a tick's entities stand after it: a uniform grid
 * rebuilt for each tick by counting sort, so that two entities that both
 * move find each other at their new places. The backends and observer grids
 * still hold the places before the tick, which is what the rest of the
 * world is judged against.
 */
#ifndef PERCEPT_TICK_GRID_H
#define PERCEPT_TICK_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "percept.h"

/* One of the tick's entities: its place after the tick and its longest range. */
typedef struct tick_point {
    double x, y, z;
    double reach;
    uint32_t index; /* its entry in the tick */
} tick_point;

typedef struct tick_grid {
    tick_point *points;   /* [count], sorted by cell, row by row */
    uint32_t *cell_start; /* [cols * rows + 1]: each cell's first point */
    size_t point_cap, cell_cap;
    size_t count;
    double min_x, min_y, inv_cell;
    int32_t cols, rows;
} tick_grid;

/* Sort `count` points (unsorted, in `in`) into the grid, its cells about
 * half their mean reach wide. 0, or -1 out of memory (the grid then holds
 * nothing). */
int tick_grid_build(const percept_allocator *a, tick_grid *g, const tick_point *in, size_t count);

/* The columns and rows of the cells a disk of radius r around (x, y) may
 * touch, for a point whose exact test may round a little beyond r. */
void tick_grid_span(const tick_grid *g, double x, double y, double r, int32_t *c0, int32_t *c1,
                    int32_t *r0, int32_t *r1);

/* The row of the cells at height y. */
int32_t tick_grid_row(const tick_grid *g, double y);

void tick_grid_free(const percept_allocator *a, tick_grid *g);
size_t tick_grid_bytes(const tick_grid *g);

#endif
