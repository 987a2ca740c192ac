/*
 * backend_util.h - helpers the shipped backends share: allocation through
 * the host, error reporting, the strict parsing of numeric parameters,
 * capacity growth, the ops table and the layout of a uniform grid over the
 * world bounds. Linked into each plugin as a convenience library; nothing
 * here is exported but the entry point BACKEND_DEFINE_OPS defines.
 */
#ifndef PERCEPT_BACKEND_UTIL_H
#define PERCEPT_BACKEND_UTIL_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

#include "../src/ieee_double.h"

/* Allocate, resize or free (size 0) through the host's allocator. */
void *backend_host_alloc(const percept_backend_host *host, void *ptr, size_t size);

/* Frees ptr through the host unless it is NULL, which the host's alloc() does not take. */
static inline void backend_free(const percept_backend_host *host, void *ptr)
{
    if (ptr != NULL)
        host->alloc(host->user, ptr, 0);
}

/* Fill *error (when not NULL) with the index of the parameter to blame, or -1, and a reason. */
void backend_set_error(percept_backend_error *error, int param_index, const char *text);

/* `size` bytes of zeros from setup's host, or NULL with *error saying out of memory. */
void *backend_new(const percept_backend_setup *setup, size_t size, percept_backend_error *error);

/*
 * The smallest size any backend takes: the smallest normal double. Cell
 * arithmetic multiplies by 1 / size, which is finite from here up, and a
 * subnormal size would have lost precision already.
 */
#define BACKEND_SIZE_MIN DBL_MIN
#define BACKEND_SIZE_MIN_TEXT "2.2250738585072014e-308" /* DBL_MIN, as read back exactly */
/* The largest: PERCEPT_COORD_LIMIT, as every number of a configuration. */
#define BACKEND_SIZE_MAX 1e15

/*
 * One size a backend takes (cell_size, tower_size, ...): a plain decimal
 * number, read as the core reads its numbers (src/decimal.h: no "inf", "nan"
 * or hex forms, '.' whatever the locale), from `min` to BACKEND_SIZE_MAX, or
 * 0 too when `zero` (a size that turns a feature off). With min >
 * BACKEND_SIZE_MIN, `min_reason` is the message for a number below it,
 * naming the key and the limit and saying why (written out: printf's
 * numbers follow the locale); else NULL.
 */
typedef struct backend_size {
    const char *key;
    double min;
    const char *min_reason;
    int zero;
    double value; /* the default before backend_sizes(), the value after */
    int index;    /* after backend_sizes(): the parameter's index, or -1 when absent */
} backend_size;

/*
 * Reads the parameters of a backend that takes the `count` sizes of
 * `sizes`, and nothing else. Any other key, a repeat or a bad value fills
 * *error and returns -1; else 0.
 */
int backend_sizes(const percept_backend_setup *setup, const char *backend, backend_size *sizes,
                  size_t count, percept_backend_error *error);

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
 * Makes *array, of *cap elements of `elem` bytes, hold `need` elements,
 * growing it as backend_grown() says. Returns 0, or -1 with *array and *cap
 * unchanged (a resize that fails keeps the old block).
 */
int backend_grow(const percept_backend_host *host, void **array, size_t elem, uint32_t *cap,
                 uint32_t need, uint32_t first);

/*
 * The ops table of a backend whose operations are PREFIX_create, ...,
 * PREFIX_memory_usage, with PREFIX_put as both insert() and update() (a slot
 * not in the index enters it, one in it moves), and the entry point.
 */
#define BACKEND_DEFINE_OPS(prefix, name_, description_, hints_)                                    \
    static const percept_backend_ops prefix##_ops = {                                              \
        .abi_version = PERCEPT_BACKEND_ABI_VERSION,                                                \
        .struct_size = sizeof(percept_backend_ops),                                                \
        .name = name_,                                                                             \
        .description = description_,                                                               \
        .create = prefix##_create,                                                                 \
        .destroy = prefix##_destroy,                                                               \
        .reserve = prefix##_reserve,                                                               \
        .insert = prefix##_put,                                                                    \
        .update = prefix##_put,                                                                    \
        .remove = prefix##_remove,                                                                 \
        .query = prefix##_query,                                                                   \
        .memory_usage = prefix##_memory_usage,                                                     \
        .query_hints = hints_,                                                                     \
    };                                                                                             \
    PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)                  \
    {                                                                                              \
        return &prefix##_ops;                                                                      \
    }

/*
 * nx * ny square cells of side `size` from (min_x, min_y): the layout of
 * grid's cells and tower's towers. Positions outside the bounds belong to
 * the edge cells.
 */
typedef struct backend_layout {
    double min_x, min_y;
    double size;
    double inv; /* 1 / size: a multiplication keeps backend_cell_of monotone */
    uint32_t nx, ny;
} backend_layout;

/*
 * How many cells, `step_x` apart along x and `step_y` along y, cover
 * setup's world bounds, plus `extra` along each: *nx and *ny, at most
 * `max_cells` in all. `size` is the size parameter, `key` and `unit` name
 * it and the cells in the error ("cell_size", "cells"); `size_param` is the
 * parameter's index, or -1 when `size` is the default. Returns 0, or -1
 * with *error filled.
 */
int backend_cells_over(const percept_backend_setup *setup, double step_x, double step_y,
                       uint32_t extra, double size, int size_param, const char *key,
                       const char *unit, double max_cells, uint32_t *nx, uint32_t *ny,
                       percept_backend_error *error);

/* Lays cells of side `size` over setup's world bounds, as backend_cells_over() counts them. */
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

/*
 * What a query of radius r around (x, y) must read, whatever the index:
 * the host accepts an entity at (px, py, pz) when, rounded, (px - x)^2 +
 * (py - y)^2 + (pz - z)^2 <= r*r, and an index that prunes by a window of
 * coordinates computed as x - pad and x + pad (rounded too) must hold every
 * such px in it; a cell or list position monotone in the coordinate then
 * holds the entity too. The margin, with u = 2^-53:
 *  - the accepted |px - x| is at most r (1 + 2u) beyond its rounding, as
 *    the squares, r*r and the difference each round by u at most (the
 *    other axes only add terms that are not negative);
 *  - x + pad rounds by u (|x| + pad), and pad by a few u of itself;
 *  - below about 1e-154 the squares underflow, and any difference whose
 *    square is below 2^-1074 passes: a few 1e-162 in all;
 * so pad = r + (|x| + r) * 4e-15 + 1e-150 (4e-15 is about 36u) covers all
 * with room, for any |x| and r whose square is finite. It serves every
 * index that compares coordinates with the window's ends (grid, tower and
 * hashgrid through their cells, crosslist directly), on any axis.
 */
typedef struct backend_window {
    double pad_x, pad_y, pad_z; /* half-widths about x, y and z */
} backend_window;

/* The half-width about coordinate v of the window of radius r. */
static inline double backend_pad(double v, double r)
{
    double a = v < 0 ? -v : v;
    return r + (a + r) * 4e-15 + 1e-150;
}

/*
 * Fills w->pad_x and w->pad_y for a query with r >= 0 (not NaN) and returns
 * 1. Returns 0 when x or y is beyond +-1e300 or r*r beyond 1e300, near
 * where it overflows: once it does, the host accepts any entity whose
 * squared distance overflows too, however far, so the query must report
 * every entity.
 */
static inline int backend_query_window(double x, double y, double r, backend_window *w)
{
    if (!(x > -1e300 && x < 1e300 && y > -1e300 && y < 1e300 && r * r <= 1e300))
        return 0;
    w->pad_x = backend_pad(x, r);
    w->pad_y = backend_pad(y, r);
    return 1;
}

/* The same over z as well, with w->pad_z. */
static inline int backend_query_box(double x, double y, double z, double r, backend_window *w)
{
    if (!(z > -1e300 && z < 1e300) || !backend_query_window(x, y, r, w))
        return 0;
    w->pad_z = backend_pad(z, r);
    return 1;
}

#endif
