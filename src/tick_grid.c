/*
 * tick_grid.c - the tick's grid: a counting sort of its entities by cell.
 */
#include "tick_grid.h"

#include <math.h>

#include "alloc.h"

/* Cells per point at most: a grid much finer than its points only costs
 * empty cells to walk. */
#define CELLS_PER_POINT 2
/* Cells per mean reach: a query of radius r reads the points of a square
 * about 2r + r / CELLS_PER_REACH wide, so finer cells read fewer points
 * beyond r, for one run of points per row. */
#define CELLS_PER_REACH 2

static int32_t cell_of(double v, double min, double inv, int32_t n)
{
    double c = (v - min) * inv; /* below 1 (or NaN-free negative): the first cell */
    return c < 1 ? 0 : c >= n ? n - 1 : (int32_t)c;
}

static int32_t point_cell(const tick_grid *g, const tick_point *p)
{
    return cell_of(p->y, g->min_y, g->inv_cell, g->rows) * g->cols +
           cell_of(p->x, g->min_x, g->inv_cell, g->cols);
}

int tick_grid_build(const percept_allocator *a, tick_grid *g, const tick_point *in, size_t count)
{
    g->count = 0;
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, sum = 0;
    size_t reaching = 0;
    for (size_t i = 0; i < count; i++) {
        x0 = fmin(x0, in[i].x);
        x1 = fmax(x1, in[i].x);
        y0 = fmin(y0, in[i].y);
        y1 = fmax(y1, in[i].y);
        if (in[i].reach > 0) {
            sum += in[i].reach;
            reaching++;
        }
    }
    double cell = reaching ? sum / (double)reaching / CELLS_PER_REACH : 1;
    double w = x1 - x0, h = y1 - y0, limit = (double)CELLS_PER_POINT * (double)count + 1;
    if (!(cell > 0) || (w / cell + 1) * (h / cell + 1) > limit)
        cell = fmax(w, h) / floor(sqrt(limit)) * 1.0001 + 1e-300;
    if (count == 0) {
        x0 = y0 = 0;
        cell = 1;
    }
    g->min_x = x0;
    g->min_y = y0;
    g->inv_cell = 1 / cell;
    g->cols = (int32_t)fmin(floor(w * g->inv_cell) + 1, limit);
    g->rows = (int32_t)fmin(floor(h * g->inv_cell) + 1, limit / g->cols + 1);
    if (count == 0)
        g->cols = g->rows = 1;
    size_t cells = (size_t)g->cols * (size_t)g->rows;
    void *points = g->points, *starts = g->cell_start;
    if (pc_grow(a, &points, sizeof(tick_point), &g->point_cap, count ? count : 1) ||
        (g->points = points, pc_grow(a, &starts, sizeof(uint32_t), &g->cell_cap, cells + 1)))
        return -1;
    g->cell_start = starts;
    uint32_t *start = g->cell_start;
    for (size_t c = 0; c <= cells; c++)
        start[c] = 0;
    for (size_t i = 0; i < count; i++)
        start[point_cell(g, &in[i]) + 1]++;
    for (size_t c = 0; c < cells; c++)
        start[c + 1] += start[c];
    /* Place each point at its cell's next free place, then restore the
     * starts: a cell's run ends where the next begins. */
    for (size_t i = 0; i < count; i++)
        g->points[start[point_cell(g, &in[i])]++] = in[i];
    for (size_t c = cells; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
    g->count = count;
    return 0;
}

void tick_grid_span(const tick_grid *g, double x, double y, double r, int32_t *c0, int32_t *c1,
                    int32_t *r0, int32_t *r1)
{
    /* The exact test rounds: a point it admits lies within r of (x, y) but
     * for a few units in the last place. */
    double wide = r + r * 0x1p-40;
    *c0 = cell_of(x - wide, g->min_x, g->inv_cell, g->cols);
    *c1 = cell_of(x + wide, g->min_x, g->inv_cell, g->cols);
    *r0 = cell_of(y - wide, g->min_y, g->inv_cell, g->rows);
    *r1 = cell_of(y + wide, g->min_y, g->inv_cell, g->rows);
}

int32_t tick_grid_row(const tick_grid *g, double y)
{
    return cell_of(y, g->min_y, g->inv_cell, g->rows);
}

void tick_grid_free(const percept_allocator *a, tick_grid *g)
{
    pc_free(a, g->points);
    pc_free(a, g->cell_start);
    *g = (tick_grid){0};
}

size_t tick_grid_bytes(const tick_grid *g)
{
    return g->point_cap * sizeof(tick_point) + g->cell_cap * sizeof(uint32_t);
}
