/*
 * backend_util.h - helpers the shipped backends share: allocation through
 * the host, error reporting, the strict parsing of numeric parameters,
 * capacity growth and the layout of a uniform grid over the world bounds.
 * Linked into each plugin as a convenience library; nothing here is exported.
 */
#ifndef PERCEPT_BACKEND_UTIL_H
#define PERCEPT_BACKEND_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

/* Allocate, resize or free (size 0) through the host's allocator. */
void *backend_host_alloc(const percept_backend_host *host, void *ptr, size_t size);

/* Fill *error (when not NULL) with the index of the parameter to blame, or -1, and a reason. */
void backend_set_error(percept_backend_error *error, int param_index, const char *text);

/*
 * A plain decimal number greater than 0, read as decimal_parse() reads the
 * core's numbers (src/decimal.h: no "inf", "nan" or hex forms, '.' whatever
 * the locale), whose inverse is finite too, as cell arithmetic multiplies by
 * it. Returns 0 and sets *out, or -1.
 */
int backend_parse_positive(const char *text, double *out);

/*
 * The parameters of a backend that takes one size, `key` (cell_size,
 * tower_size): a positive number no larger than `limit` whose inverse is
 * no larger either. Any other key, a repeat or a bad value fills *error and
 * returns -1. On success *value holds the size (left as the caller's
 * default when the key is absent), *index the parameter's index or -1.
 */
int backend_size_param(const percept_backend_setup *setup, const char *backend, const char *key,
                       double limit, double *value, int *index, percept_backend_error *error);

/*
 * The capacity to grow an array of `cap` elements to so it holds `need`:
 * `cap` (at least `first`) doubled until it does, saturating at UINT32_MAX.
 * Doubling keeps reserve() amortized O(1) when slots arrive one by one.
 */
static inline uint32_t backend_grown(uint32_t cap, uint32_t need, uint32_t first)
{
    if (cap < first)
        cap = first;
    while (cap < need)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    return cap;
}

/*
 * nx * ny square cells of side 1 / inv from (min_x, min_y): the layout of
 * grid's cells and tower's towers. Positions outside the bounds belong to
 * the edge cells.
 */
typedef struct backend_layout {
    double min_x, min_y;
    double inv; /* 1 / cell side: a multiplication keeps backend_cell_of monotone */
    uint32_t nx, ny;
} backend_layout;

/*
 * Lays cells of side `size` over setup's world bounds, at most `max_cells`
 * of them. `key` and `unit` name the size parameter and the cells in the
 * error ("cell_size", "cells"); `size_param` is the parameter's index, or
 * -1 when `size` is the default. Returns 0, or -1 with *error filled.
 */
int backend_layout_init(backend_layout *layout, const percept_backend_setup *setup, double size,
                        int size_param, const char *key, const char *unit, double max_cells,
                        percept_backend_error *error);

/*
 * The cell along one axis: clamped, and monotone in v, so a rectangle built
 * from the ends of an interval holds the cells of every point inside it.
 */
static inline uint32_t backend_cell_of(double v, double min, double inv, uint32_t n)
{
    double f = (v - min) * inv;
    if (!(f >= 0)) /* also NaN */
        return 0;
    if (f >= (double)n)
        return n - 1;
    return (uint32_t)f;
}

/* The index (row-major) of the cell holding (x, y). */
static inline uint32_t backend_cell_index(const backend_layout *l, double x, double y)
{
    return backend_cell_of(y, l->min_y, l->inv, l->ny) * l->nx +
           backend_cell_of(x, l->min_x, l->inv, l->nx);
}

#endif
