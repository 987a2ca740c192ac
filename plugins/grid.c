/*
 * grid.c - the "grid" backend: a uniform grid over the world bounds (the
 * classic nine-square layout). Positions outside the bounds fall into the
 * edge cells, so no answer misses anyone; best when entities stay inside.
 */
#include <percept/backend.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_CELL_SIZE 64.0
/* 2^24 cells: 64 MiB of list heads, beyond which the grid is the wrong tool. */
#define MAX_CELLS 16777216.0

/*
 * One 32-byte record per slot, so that visiting an entity touches one place:
 * its position (for the distance pre-filter) and its list links together.
 * cell == NONE means the slot is not in the index.
 */
typedef struct grid_slot {
    double x, y;
    uint32_t next, prev; /* intrusive doubly-linked list of the cell */
    uint32_t cell;
    uint32_t unused;
} grid_slot;

struct percept_backend {
    const percept_backend_host *host;
    double min_x, min_y;
    double inv_cell; /* 1 / cell_size: a multiplication keeps cell_of monotone too */
    uint32_t nx, ny;
    uint32_t *heads;     /* nx * ny list heads, NONE when the cell is empty */
    grid_slot *slots;    /* slot_cap records */
    uint32_t slot_cap;   /* records allocated */
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
};

static void *host_alloc(const percept_backend_host *host, void *ptr, size_t size)
{
    return host->alloc(host->user, ptr, size);
}

static void set_error(percept_backend_error *error, int param_index, const char *text)
{
    if (error == NULL)
        return;
    error->param_index = param_index;
    snprintf(error->text, sizeof(error->text), "%s", text);
}

/*
 * A plain decimal number (digits, optional fraction and exponent), so that
 * "inf", "nan" and hex forms, which strtod would take, are refused.
 */
static int parse_positive(const char *text, double *out)
{
    const char *p = text;
    int digits = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *start = p;
    if (*p == '+')
        p++;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    const char *end = p;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '\0')
        return -1;
    char *stop;
    double v = strtod(start, &stop);
    /* Also refuse sizes whose inverse overflows: cell_of() multiplies by it. */
    if (stop != end || !(v > 0) || !(v <= DBL_MAX) || !(1.0 / v <= DBL_MAX))
        return -1;
    *out = v;
    return 0;
}

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
    int cell_param = -1;
    char text[256];

    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        if (p->key != NULL && strcmp(p->key, "cell_size") == 0) {
            if (cell_param >= 0) {
                set_error(error, (int)i, "given more than once");
                return NULL;
            }
            if (p->value == NULL || parse_positive(p->value, &cell_size) != 0) {
                set_error(error, (int)i, "must be a number greater than 0");
                return NULL;
            }
            cell_param = (int)i;
        } else {
            set_error(error, (int)i, "unknown parameter (grid takes: cell_size)");
            return NULL;
        }
    }

    double w = setup->max_x - setup->min_x;
    double h = setup->max_y - setup->min_y;
    /* The comparisons also reject NaN and infinite bounds. */
    if (!(w >= 0 && w <= 1.0e300 && h >= 0 && h <= 1.0e300)) {
        set_error(error, -1, "world bounds must be finite with min <= max");
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
        set_error(error, cell_param, text);
        return NULL;
    }

    percept_backend *b = host_alloc(setup->host, NULL, sizeof(*b));
    if (b == NULL) {
        set_error(error, -1, "out of memory");
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
    b->heads = host_alloc(b->host, NULL, ncells * sizeof(*b->heads));
    if (b->heads == NULL) {
        host_alloc(b->host, b, 0);
        set_error(error, -1, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < ncells; i++)
        b->heads[i] = NONE;
    return b;
}

static void grid_destroy(percept_backend *b)
{
    if (b == NULL)
        return;
    const percept_backend_host *host = b->host;
    if (b->slots != NULL)
        host_alloc(host, b->slots, 0);
    host_alloc(host, b->heads, 0);
    host_alloc(host, b, 0);
}

static int grid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                        double y, double range)
{
    (void)slot;
    (void)x;
    (void)y;
    (void)range;
    if (slot_count <= b->slot_cap)
        return 0;
    /* Geometric growth keeps reserve amortized O(1) when slots arrive one by one. */
    uint32_t cap = b->slot_cap < 16 ? 16 : b->slot_cap;
    while (cap < slot_count)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    if ((uint64_t)cap * sizeof(grid_slot) > SIZE_MAX)
        return -1;
    grid_slot *slots = host_alloc(b->host, b->slots, (size_t)cap * sizeof(grid_slot));
    if (slots == NULL)
        return -1; /* the old block is still ours and unchanged */
    for (uint32_t i = b->slot_cap; i < cap; i++)
        slots[i].cell = NONE;
    b->slots = slots;
    b->slot_cap = cap;
    return 0;
}

static void link_slot(percept_backend *b, percept_slot slot, uint32_t cell)
{
    grid_slot *s = &b->slots[slot];
    uint32_t head = b->heads[cell];
    s->cell = cell;
    s->prev = NONE;
    s->next = head;
    if (head != NONE)
        b->slots[head].prev = slot;
    b->heads[cell] = slot;
}

static void unlink_slot(percept_backend *b, percept_slot slot)
{
    grid_slot *s = &b->slots[slot];
    if (s->prev != NONE)
        b->slots[s->prev].next = s->next;
    else
        b->heads[s->cell] = s->next;
    if (s->next != NONE)
        b->slots[s->next].prev = s->prev;
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
    b->slots[slot].x = x;
    b->slots[slot].y = y;
    link_slot(b, slot, cell_index(b, x, y));
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
    s->x = x;
    s->y = y;
    if (cell != s->cell) {
        unlink_slot(b, slot);
        link_slot(b, slot, cell);
    }
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
    const grid_slot *slots = b->slots;
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
            for (uint32_t cy = y0; cy <= y1; cy++) {
                const uint32_t *row = &b->heads[(size_t)cy * b->nx];
                for (uint32_t cx = x0; cx <= x1; cx++) {
                    for (uint32_t s = row[cx]; s != NONE; s = slots[s].next) {
                        if (maybe_within(slots[s].x, slots[s].y, x, y, limit))
                            visit(ctx, s);
                    }
                }
            }
            return;
        }
    }
    /* More cells than slots (or an infinite query): scanning the slots is cheaper. */
    for (uint32_t s = 0; s < b->slot_limit; s++) {
        if (slots[s].cell != NONE && (!finite || maybe_within(slots[s].x, slots[s].y, x, y, limit)))
            visit(ctx, s);
    }
}

static size_t grid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->nx * b->ny * sizeof(*b->heads) +
           (size_t)b->slot_cap * sizeof(grid_slot);
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
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &grid_ops;
}
