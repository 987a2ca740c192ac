/*
 * hashgrid.c - the "hashgrid" backend: a sparse grid whose cells exist only
 * where entities stand, found through an open-addressing hash table. Memory
 * follows the entities, not the world, and coordinates are unbounded. Each
 * cell keeps its entities in one block (entry_block.h).
 */
#include <percept/backend.h>

#include "backend_util.h"
#include "entry_block.h"

#define NONE ENTRY_BLOCK_NONE
#define DEFAULT_CELL_SIZE 64.0
/*
 * Cell coordinates are clamped to +-2^60: beyond the cell of any position the
 * core accepts at any cell size taken (MIN_CELL_SIZE), and small enough that
 * a rectangle's width fits an int64. Clamping is monotone, so a query still
 * finds every cell it must.
 */
#define COORD_LIMIT 1152921504606846976.0
/*
 * The smallest cell_size that clamps no entity: a coordinate within +-1e15
 * (PERCEPT_COORD_LIMIT) gets a cell number within +-2^60 from 1e15 / 2^60 =
 * 0.00087 up. Clamped, far entities would share a few cells that a query,
 * promised local, reads whole.
 */
#define MIN_CELL_SIZE 0.001
#define MIN_CELL_SIZE_REASON                                                                       \
    "cell_size must be a number of at least 0.001: cell numbers stop at +-2^60, and a "            \
    "coordinate within +-1e15 must get a number of its own, not a clamped one (1e15 / 2^60 = "     \
    "0.00087)"
/* The table holds at most half its capacity: short probes, also for misses. */
#define MIN_TABLE 16u
#define MAX_TABLE 2147483648u
#define FIRST_CELL_CAP 4u /* entries of a cell's first block */
/* A query gathers the cells it finds in runs of up to this many (five by
 * five: a window of a radius up to two cells is one run). */
#define QUERY_CELLS 25u

/*
 * A live cell, or a free one linked into the pool's free list. A cell keeps
 * its block while free, so a cell taken from the pool already has room.
 */
typedef struct hg_cell {
    int64_t cx, cy;
    entry_block *block; /* at least one entry of capacity */
    uint32_t dense;     /* position in the occupied list (next free cell while free) */
    uint32_t hash;      /* hash of (cx, cy), kept for deletion and rehashing */
} hg_cell;

/* Table entry: the hash lets probes skip most key compares and cell loads. */
typedef struct hg_entry {
    uint32_t cell; /* NONE: empty */
    uint32_t hash;
} hg_entry;

struct percept_backend {
    const percept_backend_host *host;
    double inv_cell;  /* 1 / cell_size: a multiplication keeps coord_of monotone too */
    double cell_size; /* a cell's anchor, the corner its entries' offsets are taken from,
                         is its coordinates times this (entry_block.h) */
    double span;      /* how far an entry's offsets may be from its cell's anchor */

    entry_ref *slots; /* slot_cap records: the cell (in the pool) and entry of each slot */
    uint32_t slot_cap;

    hg_cell *cells; /* the pool: [0, cell_used) handed out at least once */
    uint32_t cell_cap;
    uint32_t cell_used;
    uint32_t cell_ready; /* [0, cell_ready) have a block: cell_used <= cell_ready <= cell_cap */
    uint32_t free_cell;  /* head of the pool's free list */
    size_t block_bytes;  /* bytes of all blocks, for memory_usage */

    uint32_t *occupied; /* live cells, dense, so a full scan costs what is there */
    uint32_t occupied_cap;
    uint32_t ncells;

    hg_entry *table;
    uint32_t table_cap; /* a power of two, or 0 before the first reserve */
};

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
    int cell_param;

    if (backend_size_param(setup, "hashgrid", "cell_size", MIN_CELL_SIZE, MIN_CELL_SIZE_REASON,
                           &cell_size, &cell_param, error) != 0)
        return NULL;

    /* The world bounds do not matter: the grid covers every coordinate. */
    percept_backend *b = backend_new(setup, sizeof(*b), error);
    if (b == NULL)
        return NULL;
    b->host = setup->host;
    b->inv_cell = 1.0 / cell_size;
    b->cell_size = cell_size;
    b->span = entry_span(cell_size);
    b->free_cell = NONE;
    return b;
}

static void hashgrid_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    backend_free(host, b->slots);
    for (uint32_t i = 0; i < b->cell_ready; i++)
        backend_free(host, b->cells[i].block);
    backend_free(host, b->cells);
    backend_free(host, b->occupied);
    backend_free(host, b->table);
    backend_free(host, b);
}

/* Whether one more live cell fits without growing anything. */
static int has_room(const percept_backend *b)
{
    uint32_t need = b->ncells + 1;
    return (b->free_cell != NONE || b->cell_used < b->cell_ready) && need <= b->occupied_cap &&
           (uint64_t)need * 2 <= b->table_cap;
}

/*
 * Whether slot can enter cell c (NONE: a cell not yet live) without
 * allocating. A slot alone in its cell releases that cell, block included,
 * before it takes the new one, so it needs no room of its own.
 */
static int can_enter(const percept_backend *b, percept_slot slot, uint32_t c)
{
    if (c != NONE)
        return entry_block_has_room(b->cells[c].block);
    if (has_room(b))
        return 1;
    return slot < b->slot_cap && b->slots[slot].block != NONE &&
           b->cells[b->slots[slot].block].block->count == 1;
}

/*
 * Each step either succeeds or leaves its array as it was (a resize that
 * fails keeps the old block), so a failure part-way changes only capacity.
 */
static int hashgrid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                            double y, double z, double range)
{
    (void)z, (void)range;
    if (entry_refs_reserve(b->host, &b->slots, &b->slot_cap, slot_count) != 0)
        return -1;

    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    if (slot < b->slot_cap && b->slots[slot].block != NONE) {
        /* The common small move, as in put(): the entry is rewritten in place. */
        const hg_cell *cell = &b->cells[b->slots[slot].block];
        if (cell->cx == cx && cell->cy == cy)
            return 0;
    }
    uint32_t target = find_cell(b, cx, cy, hash_cell(cx, cy));
    if (target != NONE) {
        /* A live cell, not the slot's own: room for one more entry. */
        return entry_block_reserve(b->host, &b->cells[target].block, FIRST_CELL_CAP,
                                   &b->block_bytes);
    }

    /* One more cell may be needed: a free one in the pool with its block, a place in the list. */
    uint32_t need = b->ncells + 1;
    if (can_enter(b, slot, NONE))
        return 0;
    if (b->free_cell == NONE && b->cell_used == b->cell_ready) {
        entry_block *block = NULL;
        if (backend_grow(b->host, (void **)&b->cells, sizeof(hg_cell), &b->cell_cap,
                         b->cell_ready + 1, 16) != 0 ||
            entry_block_reserve(b->host, &block, FIRST_CELL_CAP, &b->block_bytes) != 0)
            return -1;
        b->cells[b->cell_ready++].block = block;
    }
    if (backend_grow(b->host, (void **)&b->occupied, sizeof(uint32_t), &b->occupied_cap, need,
                     16) != 0)
        return -1;

    /* ... and a place in the table within the load factor. */
    if ((uint64_t)need * 2 > b->table_cap) {
        uint64_t cap = b->table_cap < MIN_TABLE ? MIN_TABLE : (uint64_t)b->table_cap * 2;
        while ((uint64_t)need * 2 > cap)
            cap *= 2;
        if (cap > MAX_TABLE)
            return -1;
        hg_entry *table = backend_host_alloc(b->host, NULL, (size_t)cap * sizeof(hg_entry));
        if (table == NULL)
            return -1;
        for (uint64_t i = 0; i < cap; i++)
            table[i].cell = NONE;
        for (uint32_t i = 0; i < b->ncells; i++) {
            uint32_t c = b->occupied[i];
            table_put(table, (uint32_t)cap, c, b->cells[c].hash);
        }
        backend_free(b->host, b->table);
        b->table = table;
        b->table_cap = (uint32_t)cap;
    }
    return 0;
}

/*
 * The cell at (cx, cy): c when it is live already (find_cell's answer), else
 * a cell from the pool made live; reserve() guaranteed the room.
 */
static uint32_t acquire_cell(percept_backend *b, int64_t cx, int64_t cy, uint32_t hash, uint32_t c)
{
    if (c != NONE)
        return c;
    if (b->free_cell != NONE) {
        c = b->free_cell;
        b->free_cell = b->cells[c].dense;
    } else {
        c = b->cell_used++;
    }
    /* Its block is empty already: fresh from reserve(), or emptied before the release. */
    hg_cell *cell = &b->cells[c];
    cell->cx = cx;
    cell->cy = cy;
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
    b->cells[c].dense = b->free_cell;
    b->free_cell = c;
}

/* The offset of v from the anchor of the cell with coordinate c (entry_block.h). */
static float offset_in(const percept_backend *b, double v, int64_t c)
{
    return entry_offset(v, (double)c * b->cell_size, b->span);
}

/* The query point's offset from the anchor of the cell with coordinate c. */
static float query_offset_in(const percept_backend *b, double v, int64_t c)
{
    return entry_query_offset(v, (double)c * b->cell_size);
}

/* Appends slot's entry to cell c, which has room (can_enter). */
static void link_slot(percept_backend *b, percept_slot slot, uint32_t c, double x, double y)
{
    const hg_cell *cell = &b->cells[c];
    entry_ref_link(b->slots, slot, cell->block, c, offset_in(b, x, cell->cx),
                   offset_in(b, y, cell->cy));
}

/* Takes slot's entry out of its cell, which returns to the pool when emptied. */
static void unlink_slot(percept_backend *b, percept_slot slot)
{
    uint32_t c = b->slots[slot].block;
    entry_ref_unlink(b->slots, slot, b->cells[c].block);
    /* Never below FIRST_CELL_CAP, so a cell in the pool keeps room for the
     * entry that takes it again (can_enter() counts on it). */
    entry_block_shrink(b->host, &b->cells[c].block, FIRST_CELL_CAP, &b->block_bytes);
    if (b->cells[c].block->count == 0)
        release_cell(b, c);
}

static void hashgrid_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                         double range)
{
    (void)z, (void)range;
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    const entry_ref *s = &b->slots[slot];
    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    if (s->block != NONE) {
        const hg_cell *cell = &b->cells[s->block];
        if (cell->cx == cx && cell->cy == cy) {
            /* The common small move: rewrite the entry in place. */
            entry_ref_move(cell->block, s, offset_in(b, x, cx), offset_in(b, y, cy));
            return;
        }
    }
    uint32_t hash = hash_cell(cx, cy);
    uint32_t c = find_cell(b, cx, cy, hash);
    if (!can_enter(b, slot, c))
        return; /* the host skipped reserve(); the entity stays where it was */
    /*
     * Unlink first: a released cell goes back to the pool before we take one.
     * A live target is another cell than the one left, so c stays valid.
     */
    if (s->block != NONE)
        unlink_slot(b, slot);
    link_slot(b, slot, acquire_cell(b, cx, cy, hash, c), x, y);
}

static void hashgrid_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].block == NONE)
        return;
    unlink_slot(b, slot);
}

/* Gathers the entries of n cells within the query's limit (entry_block.h). */
static void gather_cells(const percept_backend *b, const hg_cell *const *cells, unsigned n,
                         double x, double y, float limit, block_hits *hits)
{
    for (unsigned i = 0; i < n; i++)
        entry_block_gather(cells[i]->block, query_offset_in(b, x, cells[i]->cx),
                           query_offset_in(b, y, cells[i]->cy), limit, hits);
}

static void hashgrid_query(const percept_backend *b, double x, double y, double z, double r,
                           percept_backend_visit visit, void *ctx)
{
    (void)z;
    if (x != x || y != y || r != r || b->ncells == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    float limit = INFINITY; /* no window: every entity may qualify */
    int64_t x0 = INT64_MIN, x1 = INT64_MAX, y0 = INT64_MIN, y1 = INT64_MAX;
    backend_window w;
    if (backend_query_window(x, y, r, &w)) {
        limit = entry_gather_limit(r, b->span);
        /* The cells of the window's ends hold every entity the host accepts (backend_util.h). */
        x0 = coord_of(x - w.pad_x, b->inv_cell), x1 = coord_of(x + w.pad_x, b->inv_cell);
        y0 = coord_of(y - w.pad_y, b->inv_cell), y1 = coord_of(y + w.pad_y, b->inv_cell);
        /* Widths fit an int64 (coordinates are clamped to +-2^60); the product may not. */
        if ((double)(x1 - x0 + 1) * (double)(y1 - y0 + 1) <= (double)b->ncells) {
            /* The window's cells, looked up once each, in runs of QUERY_CELLS:
             * every block of a run is asked for before the first is gathered
             * (entry_block_prefetch()). */
            const hg_cell *found[QUERY_CELLS];
            unsigned n = 0;
            for (int64_t cy = y0; cy <= y1; cy++) {
                for (int64_t cx = x0; cx <= x1; cx++) {
                    uint32_t c = find_cell(b, cx, cy, hash_cell(cx, cy));
                    if (c == NONE)
                        continue;
                    found[n++] = &b->cells[c];
                    entry_block_prefetch(b->cells[c].block);
                    if (n == QUERY_CELLS) {
                        gather_cells(b, found, n, x, y, limit, &hits);
                        n = 0;
                    }
                }
            }
            gather_cells(b, found, n, x, y, limit, &hits);
            block_hits_flush(&hits);
            return;
        }
    }
    /* No window, or a square wider than the population: walk the live cells. */
    for (uint32_t i = 0; i < b->ncells; i++) {
        const hg_cell *cell = &b->cells[b->occupied[i]];
        if (cell->cx >= x0 && cell->cx <= x1 && cell->cy >= y0 && cell->cy <= y1)
            gather_cells(b, &cell, 1, x, y, limit, &hits);
    }
    block_hits_flush(&hits);
}

static size_t hashgrid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->slot_cap * sizeof(entry_ref) +
           (size_t)b->cell_cap * sizeof(hg_cell) + (size_t)b->occupied_cap * sizeof(uint32_t) +
           (size_t)b->table_cap * sizeof(hg_entry) + b->block_bytes;
}

BACKEND_DEFINE_OPS(hashgrid, "hashgrid",
                   "sparse hashed grid: cells only where entities are, unbounded coordinates",
                   PERCEPT_BACKEND_QUERY_LOCAL)
