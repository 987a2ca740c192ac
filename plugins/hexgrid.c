/*
 * hexgrid.c - the "hexgrid" backend: lighthouse towers with hexagonal
 * cells over the world bounds. Each hexagon keeps the entities standing in
 * it (cell_blocks.h); a query reads every hexagon the query's disc can
 * touch, those whose centre is within r + hex_size of the point.
 *
 * The hexagons stand in rows (pointy side up) 1.5 hex_size apart, each
 * row's centres sqrt(3) hex_size apart, every other row shifted by half
 * that. A position belongs to the nearest centre, found among the two rows
 * around it; one outside the bounds is first moved onto their edge, as a
 * grid clamps it into its edge cells. Moving onto a box takes no two points
 * farther apart, so the entities within r of the point are within r of it
 * after the move, and their hexagons' centres within r + hex_size. The
 * array reaches one hexagon beyond the bounds on every side, so the nearest
 * centre of every point of the bounds is in it.
 *
 * Costs: per entity about 28 bytes (a 12-byte entry in its hexagon's block,
 * which grows by doubling, and an 8-byte slot record), per hexagon of the
 * bounds an 8-byte pointer, per occupied hexagon a block of at least 4
 * entries. A query reads about 1.2 (r / hex_size + 1)^2 hexagons and
 * gathers their entities, from an area of about pi (r + hex_size)^2, where
 * grid reads (2r + cell_size)^2: less than squares of the same area once a
 * range spans a few hexagons, more when they are wide. A hex_size of a
 * third to a half of the common range reads the least. Heights are ignored
 * (backend.h: the planar query is a superset).
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "cell_blocks.h"

#define DEFAULT_HEX_SIZE 64.0
/* As grid's: 2^24 hexagons, 128 MiB of pointers. */
#define MAX_HEXES 16777216.0
#define SQRT3 1.7320508075688772
/* The centres a query reads reach r + hex_size, widened by this share for
 * the roundings of positions, centres and the test (all far smaller). */
#define REACH_SLACK 1e-6
/* A query gathers the hexagons it finds in runs of up to this many. */
#define QUERY_HEXES 32u

struct percept_backend {
    double min_x, min_y, max_x, max_y; /* the bounds, onto which positions are moved */
    double ox, oy;                     /* the centre of hexagon (0, 0), below left of the bounds */
    double size;                       /* hex_size: the circumradius */
    double col, row;                   /* centres' spacing along a row, and between rows */
    double inv_col, inv_row;
    uint32_t ncols, nrows;
    cell_blocks cb; /* the hexagons' entities, ncols * nrows blocks, row-major */
};

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The column of the centre nearest to u (from the origin) in row j, clamped. */
static inline uint32_t column_in(const percept_backend *b, double u, uint32_t j)
{
    double f = u * b->inv_col - (j & 1 ? 0.5 : 0) + 0.5;
    if (!(f >= 0))
        return 0;
    return f < (double)b->ncols ? (uint32_t)f : b->ncols - 1;
}

/* The squared distance from (u, v) to the centre of hexagon (i, j). */
static inline double centre_d2(const percept_backend *b, double u, double v, uint32_t i, uint32_t j)
{
    double dx = ((double)i + (j & 1 ? 0.5 : 0)) * b->col - u, dy = (double)j * b->row - v;
    return dx * dx + dy * dy;
}

/* The hexagon (row-major index) holding (x, y): the nearest centre to its
 * place on the bounds, in the row below it or the one above. */
static inline uint32_t hex_of(const percept_backend *b, double x, double y)
{
    double u = clamp(x, b->min_x, b->max_x) - b->ox, v = clamp(y, b->min_y, b->max_y) - b->oy;
    double f = v * b->inv_row;
    uint32_t j = f >= 0 ? (f < (double)(b->nrows - 1) ? (uint32_t)f : b->nrows - 2) : 0;
    uint32_t i = column_in(b, u, j), i1 = column_in(b, u, j + 1);
    if (centre_d2(b, u, v, i1, j + 1) < centre_d2(b, u, v, i, j))
        return (j + 1) * b->ncols + i1;
    return j * b->ncols + i;
}

static percept_backend *hexgrid_create(const percept_backend_setup *setup,
                                       percept_backend_error *error)
{
    backend_size size = {.key = "hex_size", .min = BACKEND_SIZE_MIN, .value = DEFAULT_HEX_SIZE};
    uint32_t ncols, nrows;
    if (backend_sizes(setup, "hexgrid", &size, 1, error) != 0)
        return NULL;
    double s = size.value, col = s * SQRT3, row = s * 1.5;
    /* Three more than the bounds need: one beyond each side, one for the shifted rows. */
    if (backend_cells_over(setup, col, row, 3, s, size.index, "hex_size", "hexagons", MAX_HEXES,
                           &ncols, &nrows, error) != 0)
        return NULL;

    percept_backend *b = backend_new(setup, sizeof(*b), error);
    if (b == NULL)
        return NULL;
    b->min_x = setup->min_x, b->min_y = setup->min_y;
    b->max_x = setup->max_x, b->max_y = setup->max_y;
    b->ox = setup->min_x - col, b->oy = setup->min_y - row;
    b->size = s, b->col = col, b->row = row;
    b->inv_col = 1.0 / col, b->inv_row = 1.0 / row;
    b->ncols = ncols, b->nrows = nrows;
    if (cell_blocks_init(&b->cb, setup, (size_t)ncols * nrows, s, error) != 0) {
        backend_free(setup->host, b);
        return NULL;
    }
    return b;
}

static void hexgrid_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->cb.host;
    cell_blocks_free(&b->cb);
    backend_free(host, b);
}

static int hexgrid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                           double y, double z, double range)
{
    (void)z, (void)range;
    return cell_blocks_reserve(&b->cb, slot_count, slot, hex_of(b, x, y));
}

static void hexgrid_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                        double range)
{
    (void)z, (void)range;
    cell_blocks_put(&b->cb, slot, hex_of(b, x, y), x, y);
}

static void hexgrid_remove(percept_backend *b, percept_slot slot)
{
    cell_blocks_remove(&b->cb, slot);
}

/* The indexes from floor(lo * inv) to floor(hi * inv), within [0, n - 1];
 * 0 when none is. */
static int index_range(double lo, double hi, double inv, uint32_t n, uint32_t *first,
                       uint32_t *last)
{
    double a = lo * inv, z = hi * inv;
    if (!(z >= 0 && a < (double)n))
        return 0;
    *first = a > 0 ? (uint32_t)a : 0;
    *last = z < (double)(n - 1) ? (uint32_t)z : n - 1;
    return 1;
}

static void hexgrid_query(const percept_backend *b, double x, double y, double z, double r,
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
    float limit = INFINITY; /* no window: every entity may qualify */
    float qx = entry_query_offset(x, cb->ax), qy = entry_query_offset(y, cb->ay);
    if (backend_query_window(x, y, r, &w)) {
        limit = entry_gather_limit(r, cb->span);
        /* The hexagons whose centre is within reach of the point moved onto the bounds. */
        double reach = (r + b->size) * (1 + REACH_SLACK) + 1e-150, reach2 = reach * reach;
        double u = clamp(x, b->min_x, b->max_x) - b->ox, v = clamp(y, b->min_y, b->max_y) - b->oy;
        uint32_t j0, j1;
        double rows = 2 * reach * b->inv_row + 2, cols = 2 * reach * b->inv_col + 2;
        rows = rows < (double)b->nrows ? rows : (double)b->nrows;
        cols = cols < (double)b->ncols ? cols : (double)b->ncols;
        if (rows * cols <= (double)cb->slot_limit) {
            const entry_block *found[QUERY_HEXES];
            unsigned n = 0;
            if (index_range(v - reach, v + reach, b->inv_row, b->nrows, &j0, &j1)) {
                for (uint32_t j = j0; j <= j1; j++) {
                    double shift = j & 1 ? 0.5 * b->col : 0;
                    uint32_t i0, i1;
                    if (!index_range(u - reach - shift, u + reach - shift, b->inv_col, b->ncols,
                                     &i0, &i1))
                        continue;
                    /* The centres within reach are a run of the row: trim its ends. */
                    while (i0 <= i1 && !(centre_d2(b, u, v, i0, j) <= reach2))
                        i0++;
                    while (i1 > i0 && !(centre_d2(b, u, v, i1, j) <= reach2))
                        i1--;
                    entry_block *const *hexes = &cb->cells[(size_t)j * b->ncols];
                    for (uint32_t i = i0; i <= i1; i++) {
                        if (hexes[i] == NULL)
                            continue;
                        found[n++] = hexes[i];
                        entry_block_prefetch(hexes[i]);
                        if (n == QUERY_HEXES) {
                            for (unsigned k = 0; k < n; k++)
                                entry_block_gather(found[k], qx, qy, limit, &hits);
                            n = 0;
                        }
                    }
                }
            }
            for (unsigned k = 0; k < n; k++)
                entry_block_gather(found[k], qx, qy, limit, &hits);
            block_hits_flush(&hits);
            return;
        }
    }
    /* No window, or more hexagons than slots: scanning the slots is cheaper. */
    cell_blocks_scan(cb, qx, qy, limit, &hits);
    block_hits_flush(&hits);
}

static size_t hexgrid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + cell_blocks_bytes(&b->cb);
}

BACKEND_DEFINE_OPS(hexgrid, "hexgrid",
                   "hexagonal lighthouse towers over the world bounds, each keeping the entities "
                   "standing in it",
                   PERCEPT_BACKEND_QUERY_LOCAL)
