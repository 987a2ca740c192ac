/*
 * hashgrid.c - the "hashgrid" backend: a sparse grid whose cells exist only
 * where entities stand, found through an open-addressing hash table. Memory
 * follows the entities, not the world, and coordinates are unbounded.
 */
#include <percept/backend.h>

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define DEFAULT_CELL_SIZE 64.0
/*
 * Cell coordinates are clamped to +-2^60: far beyond any real position at any
 * sane cell size, and small enough that a rectangle's width fits an int64.
 * Clamping is monotone, so a query still finds every cell it must.
 */
#define COORD_LIMIT 1152921504606846976.0
/* The table holds at most half its capacity: short probes, also for misses. */
#define MIN_TABLE 16u
#define MAX_TABLE 2147483648u

/* One 32-byte record per slot: position and list links are read together. */
typedef struct hg_slot {
    double x, y;
    uint32_t next, prev; /* intrusive doubly-linked list of the cell */
    uint32_t cell;       /* NONE when the slot is not in the index */
    uint32_t unused;
} hg_slot;

/* A live cell, or a free one whose head links the pool's free list. */
typedef struct hg_cell {
    int64_t cx, cy;
    uint32_t head;  /* first slot in the cell (next free cell while free) */
    uint32_t count; /* entities in the cell */
    uint32_t dense; /* position in the occupied list */
    uint32_t hash;  /* hash of (cx, cy), kept for deletion and rehashing */
} hg_cell;

/* Table entry: the hash lets probes skip most key compares and cell loads. */
typedef struct hg_entry {
    uint32_t cell; /* NONE: empty */
    uint32_t hash;
} hg_entry;

struct percept_backend {
    const percept_backend_host *host;
    double inv_cell; /* 1 / cell_size: a multiplication keeps coord_of monotone too */

    hg_slot *slots;
    uint32_t slot_cap;

    hg_cell *cells; /* the pool: [0, cell_used) handed out at least once */
    uint32_t cell_cap;
    uint32_t cell_used;
    uint32_t free_cell; /* head of the pool's free list */

    uint32_t *occupied; /* live cells, dense, so a full scan costs what is there */
    uint32_t occupied_cap;
    uint32_t ncells;

    hg_entry *table;
    uint32_t table_cap; /* a power of two, or 0 before the first reserve */
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
    /* Also refuse sizes whose inverse overflows: coord_of() multiplies by it. */
    if (stop != end || !(v > 0) || !(v <= DBL_MAX) || !(1.0 / v <= DBL_MAX))
        return -1;
    *out = v;
    return 0;
}

/* floor(v / cell_size), clamped; monotone in v, without libm. */
static int64_t coord_of(double v, double inv)
{
    double f = v * inv;
    if (!(f > -COORD_LIMIT)) /* also NaN */
        return -(int64_t)COORD_LIMIT;
    if (f > COORD_LIMIT)
        return (int64_t)COORD_LIMIT;
    int64_t t = (int64_t)f;
    if ((double)t > f)
        t--;
    return t;
}

static uint32_t hash_cell(int64_t cx, int64_t cy)
{
    uint64_t h = (uint64_t)cx * 0x9E3779B97F4A7C15u;
    h ^= ((uint64_t)cy + 0x632BE59BD9B4E019u) * 0xC2B2AE3D27D4EB4Fu;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    return (uint32_t)h;
}

static uint32_t find_cell(const percept_backend *b, int64_t cx, int64_t cy, uint32_t hash)
{
    if (b->table_cap == 0)
        return NONE;
    uint32_t mask = b->table_cap - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        const hg_entry *e = &b->table[i];
        if (e->cell == NONE)
            return NONE;
        if (e->hash == hash) {
            const hg_cell *c = &b->cells[e->cell];
            if (c->cx == cx && c->cy == cy)
                return e->cell;
        }
    }
}

static void table_put(hg_entry *table, uint32_t cap, uint32_t cell, uint32_t hash)
{
    uint32_t mask = cap - 1;
    uint32_t i = hash & mask;
    while (table[i].cell != NONE)
        i = (i + 1) & mask;
    table[i].cell = cell;
    table[i].hash = hash;
}

/* Backward-shift deletion: later entries of the run move up, so no tombstones pile up. */
static void table_delete(percept_backend *b, uint32_t cell)
{
    hg_entry *t = b->table;
    uint32_t mask = b->table_cap - 1;
    uint32_t i = b->cells[cell].hash & mask;
    while (t[i].cell != cell)
        i = (i + 1) & mask;
    for (;;) {
        uint32_t j = i;
        for (;;) {
            j = (j + 1) & mask;
            if (t[j].cell == NONE) {
                t[i].cell = NONE;
                return;
            }
            uint32_t home = t[j].hash & mask;
            /* t[j] may fill the hole at i unless its home lies cyclically in (i, j]. */
            int stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
            if (!stays)
                break;
        }
        t[i] = t[j];
        i = j;
    }
}

static percept_backend *hashgrid_create(const percept_backend_setup *setup,
                                        percept_backend_error *error)
{
    double cell_size = DEFAULT_CELL_SIZE;
    int cell_param = -1;

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
            set_error(error, (int)i, "unknown parameter (hashgrid takes: cell_size)");
            return NULL;
        }
    }

    /* The world bounds do not matter: the grid covers every coordinate. */
    percept_backend *b = host_alloc(setup->host, NULL, sizeof(*b));
    if (b == NULL) {
        set_error(error, -1, "out of memory");
        return NULL;
    }
    memset(b, 0, sizeof(*b));
    b->host = setup->host;
    b->inv_cell = 1.0 / cell_size;
    b->free_cell = NONE;
    return b;
}

static void hashgrid_destroy(percept_backend *b)
{
    if (b == NULL)
        return;
    const percept_backend_host *host = b->host;
    if (b->slots != NULL)
        host_alloc(host, b->slots, 0);
    if (b->cells != NULL)
        host_alloc(host, b->cells, 0);
    if (b->occupied != NULL)
        host_alloc(host, b->occupied, 0);
    if (b->table != NULL)
        host_alloc(host, b->table, 0);
    host_alloc(host, b, 0);
}

/* The next capacity at least `need`, doubling from `cap`. */
static uint32_t grown(uint32_t cap, uint32_t need)
{
    if (cap < 16)
        cap = 16;
    while (cap < need)
        cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
    return cap;
}

/* Whether one more cell fits without growing anything. */
static int has_room(const percept_backend *b)
{
    uint32_t need = b->ncells + 1;
    return (b->free_cell != NONE || b->cell_used < b->cell_cap) && need <= b->occupied_cap &&
           (uint64_t)need * 2 <= b->table_cap;
}

/*
 * Whether the change reserve() prepares for can take a cell from the pool.
 * Asked only when the pool or the table is full, so that a move within a
 * cell, a remove, or a step into an occupied cell still works when memory
 * has run out.
 */
static int needs_new_cell(const percept_backend *b, percept_slot slot, double x, double y)
{
    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    if (find_cell(b, cx, cy, hash_cell(cx, cy)) != NONE)
        return 0;
    /* A slot alone in its cell releases that cell before it takes the new one. */
    if (slot < b->slot_cap && b->slots[slot].cell != NONE &&
        b->cells[b->slots[slot].cell].count == 1)
        return 0;
    return 1;
}

/*
 * Each step either succeeds or leaves its array as it was (a resize that
 * fails keeps the old block), so a failure part-way changes only capacity.
 */
static int hashgrid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                            double y, double range)
{
    (void)range;
    if (slot_count > b->slot_cap) {
        uint32_t cap = grown(b->slot_cap, slot_count);
        hg_slot *slots = host_alloc(b->host, b->slots, (size_t)cap * sizeof(hg_slot));
        if (slots == NULL)
            return -1;
        for (uint32_t i = b->slot_cap; i < cap; i++)
            slots[i].cell = NONE;
        b->slots = slots;
        b->slot_cap = cap;
    }

    /* One more cell may be needed: a free one in the pool, a place in the list. */
    uint32_t need = b->ncells + 1;
    if (has_room(b) || !needs_new_cell(b, slot, x, y))
        return 0;
    if (b->free_cell == NONE && b->cell_used == b->cell_cap) {
        uint32_t cap = grown(b->cell_cap, b->cell_used + 1);
        hg_cell *cells = host_alloc(b->host, b->cells, (size_t)cap * sizeof(hg_cell));
        if (cells == NULL)
            return -1;
        b->cells = cells;
        b->cell_cap = cap;
    }
    if (need > b->occupied_cap) {
        uint32_t cap = grown(b->occupied_cap, need);
        uint32_t *occupied = host_alloc(b->host, b->occupied, (size_t)cap * sizeof(uint32_t));
        if (occupied == NULL)
            return -1;
        b->occupied = occupied;
        b->occupied_cap = cap;
    }

    /* ... and a place in the table within the load factor. */
    if ((uint64_t)need * 2 > b->table_cap) {
        uint64_t cap = b->table_cap < MIN_TABLE ? MIN_TABLE : (uint64_t)b->table_cap * 2;
        while ((uint64_t)need * 2 > cap)
            cap *= 2;
        if (cap > MAX_TABLE)
            return -1;
        hg_entry *table = host_alloc(b->host, NULL, (size_t)cap * sizeof(hg_entry));
        if (table == NULL)
            return -1;
        for (uint64_t i = 0; i < cap; i++)
            table[i].cell = NONE;
        for (uint32_t i = 0; i < b->ncells; i++) {
            uint32_t c = b->occupied[i];
            table_put(table, (uint32_t)cap, c, b->cells[c].hash);
        }
        if (b->table != NULL)
            host_alloc(b->host, b->table, 0);
        b->table = table;
        b->table_cap = (uint32_t)cap;
    }
    return 0;
}

/* The cell at (cx, cy), made live if it was not; reserve() guaranteed the room. */
static uint32_t acquire_cell(percept_backend *b, int64_t cx, int64_t cy)
{
    uint32_t hash = hash_cell(cx, cy);
    uint32_t c = find_cell(b, cx, cy, hash);
    if (c != NONE)
        return c;
    if (b->free_cell != NONE) {
        c = b->free_cell;
        b->free_cell = b->cells[c].head;
    } else {
        c = b->cell_used++;
    }
    hg_cell *cell = &b->cells[c];
    cell->cx = cx;
    cell->cy = cy;
    cell->head = NONE;
    cell->count = 0;
    cell->hash = hash;
    cell->dense = b->ncells;
    b->occupied[b->ncells++] = c;
    table_put(b->table, b->table_cap, c, hash);
    return c;
}

/* An emptied cell leaves the table and the occupied list and returns to the pool. */
static void release_cell(percept_backend *b, uint32_t c)
{
    table_delete(b, c);
    uint32_t pos = b->cells[c].dense;
    uint32_t last = b->occupied[--b->ncells];
    b->occupied[pos] = last;
    b->cells[last].dense = pos;
    b->cells[c].head = b->free_cell;
    b->free_cell = c;
}

static void link_slot(percept_backend *b, percept_slot slot, uint32_t c)
{
    hg_slot *s = &b->slots[slot];
    hg_cell *cell = &b->cells[c];
    s->cell = c;
    s->prev = NONE;
    s->next = cell->head;
    if (cell->head != NONE)
        b->slots[cell->head].prev = slot;
    cell->head = slot;
    cell->count++;
}

static void unlink_slot(percept_backend *b, percept_slot slot)
{
    hg_slot *s = &b->slots[slot];
    uint32_t c = s->cell;
    hg_cell *cell = &b->cells[c];
    if (s->prev != NONE)
        b->slots[s->prev].next = s->next;
    else
        cell->head = s->next;
    if (s->next != NONE)
        b->slots[s->next].prev = s->prev;
    s->cell = NONE;
    if (--cell->count == 0)
        release_cell(b, c);
}

static void hashgrid_update(percept_backend *b, percept_slot slot, double x, double y,
                            double range);

static void hashgrid_insert(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    if (b->slots[slot].cell != NONE) {
        hashgrid_update(b, slot, x, y, range);
        return;
    }
    if (!has_room(b) && needs_new_cell(b, slot, x, y))
        return;
    b->slots[slot].x = x;
    b->slots[slot].y = y;
    link_slot(b, slot, acquire_cell(b, coord_of(x, b->inv_cell), coord_of(y, b->inv_cell)));
}

static void hashgrid_update(percept_backend *b, percept_slot slot, double x, double y, double range)
{
    if (slot >= b->slot_cap)
        return;
    hg_slot *s = &b->slots[slot];
    if (s->cell == NONE) {
        hashgrid_insert(b, slot, x, y, range);
        return;
    }
    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    s->x = x;
    s->y = y;
    const hg_cell *cell = &b->cells[s->cell];
    if (cell->cx == cx && cell->cy == cy)
        return; /* the common small move: nothing to relink */
    if (!has_room(b) && needs_new_cell(b, slot, x, y))
        return; /* the host skipped reserve(); the entity stays where it was */
    /* Unlink first: a released cell goes back to the pool before we take one. */
    unlink_slot(b, slot);
    link_slot(b, slot, acquire_cell(b, cx, cy));
}

static void hashgrid_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].cell == NONE)
        return;
    unlink_slot(b, slot);
}

/* True when (sx, sy) may be within r of (x, y); lenient so rounding never drops a hit. */
static int maybe_within(double sx, double sy, double x, double y, double limit)
{
    double dx = sx - x, dy = sy - y;
    return !(dx * dx + dy * dy > limit);
}

static void visit_cell(const percept_backend *b, const hg_cell *cell, double x, double y,
                       double limit, int filter, percept_backend_visit visit, void *ctx)
{
    const hg_slot *slots = b->slots;
    for (uint32_t s = cell->head; s != NONE; s = slots[s].next) {
        if (!filter || maybe_within(slots[s].x, slots[s].y, x, y, limit))
            visit(ctx, s);
    }
}

static void hashgrid_query(const percept_backend *b, double x, double y, double r,
                           percept_backend_visit visit, void *ctx)
{
    if (x != x || y != y || r != r || b->ncells == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    if (!(x > -1e300 && x < 1e300 && y > -1e300 && y < 1e300 && r < 1e300)) {
        /* Infinite input: every entity may qualify; a superset is allowed. */
        for (uint32_t i = 0; i < b->ncells; i++)
            visit_cell(b, &b->cells[b->occupied[i]], x, y, 0, 0, visit, ctx);
        return;
    }
    /*
     * The host's test dx*dx + dy*dy <= r*r is rounded; it may accept a point a
     * few ulps beyond r (or, below 1e-154, where the squares underflow, any
     * tiny offset). Widening the square and the filter by far more than that
     * costs nothing measurable and keeps the answer a superset.
     */
    double limit = r * r * (1 + 1e-9) + 1e-300;
    double ax = x < 0 ? -x : x, ay = y < 0 ? -y : y;
    double pad_x = r + (ax + r) * 4e-15 + 1e-150;
    double pad_y = r + (ay + r) * 4e-15 + 1e-150;
    int64_t x0 = coord_of(x - pad_x, b->inv_cell), x1 = coord_of(x + pad_x, b->inv_cell);
    int64_t y0 = coord_of(y - pad_y, b->inv_cell), y1 = coord_of(y + pad_y, b->inv_cell);
    /* Widths fit an int64 (coordinates are clamped to +-2^60); the product may not. */
    double area = (double)(x1 - x0 + 1) * (double)(y1 - y0 + 1);
    if (area <= (double)b->ncells) {
        for (int64_t cy = y0; cy <= y1; cy++) {
            for (int64_t cx = x0; cx <= x1; cx++) {
                uint32_t c = find_cell(b, cx, cy, hash_cell(cx, cy));
                if (c != NONE)
                    visit_cell(b, &b->cells[c], x, y, limit, 1, visit, ctx);
            }
        }
        return;
    }
    /* A square wider than the population: walk the live cells instead of empty space. */
    for (uint32_t i = 0; i < b->ncells; i++) {
        const hg_cell *cell = &b->cells[b->occupied[i]];
        if (cell->cx >= x0 && cell->cx <= x1 && cell->cy >= y0 && cell->cy <= y1)
            visit_cell(b, cell, x, y, limit, 1, visit, ctx);
    }
}

static size_t hashgrid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->slot_cap * sizeof(hg_slot) +
           (size_t)b->cell_cap * sizeof(hg_cell) + (size_t)b->occupied_cap * sizeof(uint32_t) +
           (size_t)b->table_cap * sizeof(hg_entry);
}

static const percept_backend_ops hashgrid_ops = {
    .abi_version = PERCEPT_BACKEND_ABI_VERSION,
    .struct_size = sizeof(percept_backend_ops),
    .name = "hashgrid",
    .description = "sparse hashed grid: cells only where entities are, unbounded coordinates",
    .create = hashgrid_create,
    .destroy = hashgrid_destroy,
    .reserve = hashgrid_reserve,
    .insert = hashgrid_insert,
    .update = hashgrid_update,
    .remove = hashgrid_remove,
    .query = hashgrid_query,
    .memory_usage = hashgrid_memory_usage,
};

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void);

PERCEPT_BACKEND_EXPORT const percept_backend_ops *percept_backend_entry(void)
{
    return &hashgrid_ops;
}
