/*
 * hashgrid.c - the "hashgrid" backend: a sparse grid whose cells exist only
 * where entities stand, found through an open-addressing hash table. Memory
 * follows the entities, not the world, and coordinates are unbounded. Each
 * cell keeps its entities in one block (entry_block.h).
 *
 * With cell_height > 0 the cells are boxes, cell_size x cell_size x
 * cell_height, and a query reads the boxes its sphere's bounding box
 * touches: for worlds about as tall as they are wide (flying, space, under
 * water). With cell_height 0, the default, cells are columns over the
 * plane, heights are ignored (a superset, backend.h), and an entry is 12
 * bytes instead of 16. Each operation picks the one or the other once, so
 * that the plane's code has no test of height in it (USE_Z below).
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
 * The smallest cell_size (and cell_height) that clamps no entity: a
 * coordinate within +-1e15 (PERCEPT_COORD_LIMIT) gets a cell number within
 * +-2^60 from 1e15 / 2^60 = 0.00087 up. Clamped, far entities would share a
 * few cells that a query, promised local, reads whole.
 */
#define MIN_CELL_SIZE 0.001
#define MIN_CELL_SIZE_REASON                                                                       \
    "cell_size must be a number of at least 0.001: cell numbers stop at +-2^60, and a "            \
    "coordinate within +-1e15 must get a number of its own, not a clamped one (1e15 / 2^60 = "     \
    "0.00087)"
#define MIN_CELL_HEIGHT_REASON                                                                     \
    "cell_height must be 0 (cells over the plane, heights ignored) or a number of at least "       \
    "0.001: cell numbers stop at +-2^60, and a height within +-1e15 must get a number of its own"
/* The table holds at most half its capacity: short probes, also for misses. */
#define MIN_TABLE 16u
#define MAX_TABLE 2147483648u
#define FIRST_CELL_CAP 4u /* entries of a cell's first block */
/* A query gathers the cells it finds in runs of up to this many (five by
 * five: a window of a radius up to two cells is one run). */
#define QUERY_CELLS 25u

/*
 * A cell of the pool: live (in the table, with entries) or free (on the
 * free stack, its block empty). A cell keeps its block while free, so a
 * cell taken from the pool already has room. 32 bytes: two a cache line.
 */
typedef struct hg_cell {
    int64_t cx, cy, cz; /* cz is 0 over the plane */
    entry_block *block; /* at least FIRST_CELL_CAP entries of capacity */
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
                         is its coordinates times the sizes (entry_block.h) */
    double inv_height, cell_height; /* both 0 over the plane */
    double span;                    /* how far an entry's offsets may be from its cell's anchor */
    size_t entry;                   /* bytes of an entry: block_entry, or block_entry3 in boxes */

    entry_ref *slots; /* slot_cap records: the cell (in the pool) and entry of each slot */
    uint32_t slot_cap;

    hg_cell *cells;       /* the pool: [0, cell_ready) have a block, live or free */
    uint32_t cell_cap;    /* cells allocated */
    uint32_t cell_ready;  /* cells made */
    uint32_t *free_cells; /* a stack of the free ones, with room for every cell made */
    uint32_t free_cap, free_count;
    uint32_t ncells;    /* live cells */
    size_t block_bytes; /* bytes of all blocks, for memory_usage */

    hg_entry *table;
    uint32_t table_cap; /* a power of two, or 0 before the first reserve */
};

/*
 * The functions below taking `use_z` are called with a constant, once for
 * boxes (1) and once for the plane (0) from each operation, so the
 * compiler makes a copy of each without the other's tests.
 */
#define USE_Z(b) ((b)->cell_height > 0)

/* floor(v * inv), clamped; monotone in v, without libm. */
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

/* Over the plane cz is a constant 0, and its term vanishes. */
static inline uint32_t hash_cell(int64_t cx, int64_t cy, int64_t cz)
{
    uint64_t h = (uint64_t)cx * 0x9E3779B97F4A7C15u;
    h ^= ((uint64_t)cy + 0x632BE59BD9B4E019u) * 0xC2B2AE3D27D4EB4Fu;
    h ^= (uint64_t)cz * 0x165667B19E3779F9u;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    return (uint32_t)h;
}

static inline int is_cell(const hg_cell *c, int64_t cx, int64_t cy, int64_t cz, int use_z)
{
    return c->cx == cx && c->cy == cy && (!use_z || c->cz == cz);
}

static inline uint32_t find_cell(const percept_backend *b, int64_t cx, int64_t cy, int64_t cz,
                                 uint32_t hash, int use_z)
{
    if (b->table_cap == 0)
        return NONE;
    uint32_t mask = b->table_cap - 1;
    for (uint32_t i = hash & mask;; i = (i + 1) & mask) {
        const hg_entry *e = &b->table[i];
        if (e->cell == NONE)
            return NONE;
        if (e->hash == hash && is_cell(&b->cells[e->cell], cx, cy, cz, use_z))
            return e->cell;
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
    const hg_cell *c = &b->cells[cell];
    uint32_t i = hash_cell(c->cx, c->cy, c->cz) & mask;
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
    backend_size sizes[] = {
        {.key = "cell_size",
         .min = MIN_CELL_SIZE,
         .min_reason = MIN_CELL_SIZE_REASON,
         .value = DEFAULT_CELL_SIZE},
        {.key = "cell_height",
         .min = MIN_CELL_SIZE,
         .min_reason = MIN_CELL_HEIGHT_REASON,
         .zero = 1,
         .value = 0},
    };
    if (backend_sizes(setup, "hashgrid", sizes, 2, error) != 0)
        return NULL;

    /* The world bounds do not matter: the grid covers every coordinate. */
    percept_backend *b = backend_new(setup, sizeof(*b), error);
    if (b == NULL)
        return NULL;
    b->host = setup->host;
    b->cell_size = sizes[0].value;
    b->inv_cell = 1.0 / b->cell_size;
    b->cell_height = sizes[1].value;
    b->span = entry_span(b->cell_size);
    b->entry = sizeof(block_entry);
    if (USE_Z(b)) {
        double span = entry_span(b->cell_height);
        b->inv_height = 1.0 / b->cell_height;
        b->span = span > b->span ? span : b->span;
        b->entry = sizeof(block_entry3);
    }
    return b;
}

static void hashgrid_destroy(percept_backend *b)
{
    const percept_backend_host *host = b->host;
    backend_free(host, b->slots);
    for (uint32_t i = 0; i < b->cell_ready; i++)
        backend_free(host, b->cells[i].block);
    backend_free(host, b->cells);
    backend_free(host, b->free_cells);
    backend_free(host, b->table);
    backend_free(host, b);
}

/* Whether one more live cell fits without growing anything. */
static int has_room(const percept_backend *b)
{
    return b->free_count > 0 && (uint64_t)(b->ncells + 1) * 2 <= b->table_cap;
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

/* One more cell made, with its block, on the free stack; 0 or -1. */
static int make_cell(percept_backend *b)
{
    entry_block *block = NULL;
    if (backend_grow(b->host, (void **)&b->cells, sizeof(hg_cell), &b->cell_cap, b->cell_ready + 1,
                     16) != 0 ||
        backend_grow(b->host, (void **)&b->free_cells, sizeof(uint32_t), &b->free_cap,
                     b->cell_ready + 1, 16) != 0 ||
        entry_block_reserve(b->host, &block, FIRST_CELL_CAP, b->entry, &b->block_bytes) != 0)
        return -1;
    b->cells[b->cell_ready] = (hg_cell){0, 0, 0, block};
    b->free_cells[b->free_count++] = b->cell_ready++;
    return 0;
}

/* A table of twice the capacity, or more, that takes one more live cell; 0 or -1. */
static int grow_table(percept_backend *b)
{
    uint64_t need = (uint64_t)(b->ncells + 1) * 2;
    uint64_t cap = b->table_cap < MIN_TABLE ? MIN_TABLE : (uint64_t)b->table_cap * 2;
    while (need > cap)
        cap *= 2;
    if (cap > MAX_TABLE)
        return -1;
    hg_entry *table = backend_host_alloc(b->host, NULL, (size_t)cap * sizeof(hg_entry));
    if (table == NULL)
        return -1;
    for (uint64_t i = 0; i < cap; i++)
        table[i].cell = NONE;
    for (uint32_t i = 0; i < b->table_cap; i++)
        if (b->table[i].cell != NONE)
            table_put(table, (uint32_t)cap, b->table[i].cell, b->table[i].hash);
    backend_free(b->host, b->table);
    b->table = table;
    b->table_cap = (uint32_t)cap;
    return 0;
}

/*
 * Each step either succeeds or leaves its array as it was (a resize that
 * fails keeps the old block), so a failure part-way changes only capacity.
 */
static inline int reserve_in(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                             double y, double z, int use_z)
{
    if (entry_refs_reserve(b->host, &b->slots, &b->slot_cap, slot_count) != 0)
        return -1;

    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    int64_t cz = use_z ? coord_of(z, b->inv_height) : 0;
    /* The common small move, as in put(): the entry is rewritten in place. */
    if (slot < b->slot_cap && b->slots[slot].block != NONE &&
        is_cell(&b->cells[b->slots[slot].block], cx, cy, cz, use_z))
        return 0;
    uint32_t target = find_cell(b, cx, cy, cz, hash_cell(cx, cy, cz), use_z);
    if (target != NONE) {
        /* A live cell, not the slot's own: room for one more entry. */
        return entry_block_reserve(b->host, &b->cells[target].block, FIRST_CELL_CAP, b->entry,
                                   &b->block_bytes);
    }
    /* One more live cell may be needed: a free one, and a place in the table. */
    if (can_enter(b, slot, NONE))
        return 0;
    if (b->free_count == 0 && make_cell(b) != 0)
        return -1;
    if ((uint64_t)(b->ncells + 1) * 2 > b->table_cap && grow_table(b) != 0)
        return -1;
    return 0;
}

static int hashgrid_reserve(percept_backend *b, uint32_t slot_count, percept_slot slot, double x,
                            double y, double z, double range)
{
    (void)range;
    if (USE_Z(b))
        return reserve_in(b, slot_count, slot, x, y, z, 1);
    return reserve_in(b, slot_count, slot, x, y, 0, 0);
}

/*
 * The cell at (cx, cy, cz): c when it is live already (find_cell's answer),
 * else a free cell made live; reserve() guaranteed the room.
 */
static uint32_t acquire_cell(percept_backend *b, int64_t cx, int64_t cy, int64_t cz, uint32_t hash,
                             uint32_t c)
{
    if (c != NONE)
        return c;
    /* Its block is empty already: fresh from reserve(), or emptied before the release. */
    c = b->free_cells[--b->free_count];
    hg_cell *cell = &b->cells[c];
    cell->cx = cx;
    cell->cy = cy;
    cell->cz = cz;
    b->ncells++;
    table_put(b->table, b->table_cap, c, hash);
    return c;
}

/* An emptied cell leaves the table and returns to the free stack. */
static void release_cell(percept_backend *b, uint32_t c)
{
    table_delete(b, c);
    b->free_cells[b->free_count++] = c;
    b->ncells--;
}

/* The offset of v from the anchor of the cell with coordinate c, of side `size`. */
static inline float offset_in(const percept_backend *b, double v, int64_t c, double size)
{
    return entry_offset(v, (double)c * size, b->span);
}

/* The query point's offset from the anchor of the cell with coordinate c. */
static inline float query_offset_in(double v, int64_t c, double size)
{
    return entry_query_offset(v, (double)c * size);
}

/* Appends slot's entry to cell c, which has room (can_enter). */
static inline void link_slot(percept_backend *b, percept_slot slot, uint32_t c, double x, double y,
                             double z, int use_z)
{
    const hg_cell *cell = &b->cells[c];
    float dx = offset_in(b, x, cell->cx, b->cell_size),
          dy = offset_in(b, y, cell->cy, b->cell_size);
    if (use_z)
        entry_ref_link3(b->slots, slot, cell->block, c, dx, dy,
                        offset_in(b, z, cell->cz, b->cell_height));
    else
        entry_ref_link(b->slots, slot, cell->block, c, dx, dy);
}

/* Takes slot's entry out of its cell, which returns to the pool when emptied. */
static inline void unlink_slot(percept_backend *b, percept_slot slot, int use_z)
{
    uint32_t c = b->slots[slot].block;
    if (use_z)
        entry_ref_unlink3(b->slots, slot, b->cells[c].block);
    else
        entry_ref_unlink(b->slots, slot, b->cells[c].block);
    /* Never below FIRST_CELL_CAP, so a cell in the pool keeps room for the
     * entry that takes it again (can_enter() counts on it). */
    entry_block_shrink(b->host, &b->cells[c].block, FIRST_CELL_CAP, b->entry, &b->block_bytes);
    if (b->cells[c].block->count == 0)
        release_cell(b, c);
}

static inline void put_in(percept_backend *b, percept_slot slot, double x, double y, double z,
                          int use_z)
{
    if (slot >= b->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    const entry_ref *s = &b->slots[slot];
    int64_t cx = coord_of(x, b->inv_cell), cy = coord_of(y, b->inv_cell);
    int64_t cz = use_z ? coord_of(z, b->inv_height) : 0;
    if (s->block != NONE) {
        const hg_cell *cell = &b->cells[s->block];
        if (is_cell(cell, cx, cy, cz, use_z)) {
            /* The common small move: rewrite the entry in place. */
            float dx = offset_in(b, x, cx, b->cell_size), dy = offset_in(b, y, cy, b->cell_size);
            if (use_z)
                entry_ref_move3(cell->block, s, dx, dy, offset_in(b, z, cz, b->cell_height));
            else
                entry_ref_move(cell->block, s, dx, dy);
            return;
        }
    }
    uint32_t hash = hash_cell(cx, cy, cz);
    uint32_t c = find_cell(b, cx, cy, cz, hash, use_z);
    if (!can_enter(b, slot, c))
        return; /* the host skipped reserve(); the entity stays where it was */
    /*
     * Unlink first: a released cell goes back to the pool before we take one.
     * A live target is another cell than the one left, so c stays valid.
     */
    if (s->block != NONE)
        unlink_slot(b, slot, use_z);
    link_slot(b, slot, acquire_cell(b, cx, cy, cz, hash, c), x, y, z, use_z);
}

static void hashgrid_put(percept_backend *b, percept_slot slot, double x, double y, double z,
                         double range)
{
    (void)range;
    if (USE_Z(b))
        put_in(b, slot, x, y, z, 1);
    else
        put_in(b, slot, x, y, 0, 0);
}

static void hashgrid_remove(percept_backend *b, percept_slot slot)
{
    if (slot >= b->slot_cap || b->slots[slot].block == NONE)
        return;
    if (USE_Z(b))
        unlink_slot(b, slot, 1);
    else
        unlink_slot(b, slot, 0);
}

/* Gathers the entries of n cells within the query's limit (entry_block.h). */
static inline void gather_cells(const percept_backend *b, const hg_cell *const *cells, unsigned n,
                                double x, double y, double z, float limit, block_hits *hits,
                                int use_z)
{
    for (unsigned i = 0; i < n; i++) {
        const hg_cell *c = cells[i];
        float qx = query_offset_in(x, c->cx, b->cell_size);
        float qy = query_offset_in(y, c->cy, b->cell_size);
        if (use_z)
            entry_block_gather3(c->block, qx, qy, query_offset_in(z, c->cz, b->cell_height), limit,
                                hits);
        else
            entry_block_gather(c->block, qx, qy, limit, hits);
    }
}

static inline void query_in(const percept_backend *b, double x, double y, double z, double r,
                            percept_backend_visit visit, void *ctx, int use_z)
{
    block_hits hits = {.visit = visit, .ctx = ctx, .count = 0};
    float limit = INFINITY; /* no window: every entity may qualify */
    int64_t x0 = INT64_MIN, x1 = INT64_MAX, y0 = INT64_MIN, y1 = INT64_MAX;
    int64_t z0 = use_z ? INT64_MIN : 0, z1 = use_z ? INT64_MAX : 0;
    backend_window w = {0, 0, 0};
    if (use_z ? backend_query_box(x, y, z, r, &w) : backend_query_window(x, y, r, &w)) {
        limit = entry_gather_limit(r, b->span);
        /* The cells of the window's ends hold every entity the host accepts (backend_util.h). */
        x0 = coord_of(x - w.pad_x, b->inv_cell), x1 = coord_of(x + w.pad_x, b->inv_cell);
        y0 = coord_of(y - w.pad_y, b->inv_cell), y1 = coord_of(y + w.pad_y, b->inv_cell);
        if (use_z)
            z0 = coord_of(z - w.pad_z, b->inv_height), z1 = coord_of(z + w.pad_z, b->inv_height);
        /* Widths fit an int64 (coordinates are clamped to +-2^60); the product may not. */
        if ((double)(x1 - x0 + 1) * (double)(y1 - y0 + 1) * (double)(z1 - z0 + 1) <=
            (double)b->cell_ready) {
            /* The window's cells, looked up once each, in runs of QUERY_CELLS:
             * every block of a run is asked for before the first is gathered
             * (entry_block_prefetch()). */
            const hg_cell *found[QUERY_CELLS];
            unsigned n = 0;
            for (int64_t cz = z0; cz <= z1; cz++) {
                for (int64_t cy = y0; cy <= y1; cy++) {
                    for (int64_t cx = x0; cx <= x1; cx++) {
                        uint32_t c = find_cell(b, cx, cy, cz, hash_cell(cx, cy, cz), use_z);
                        if (c == NONE)
                            continue;
                        found[n++] = &b->cells[c];
                        entry_block_prefetch(b->cells[c].block);
                        if (n == QUERY_CELLS) {
                            gather_cells(b, found, n, x, y, z, limit, &hits, use_z);
                            n = 0;
                        }
                    }
                }
            }
            gather_cells(b, found, n, x, y, z, limit, &hits, use_z);
            block_hits_flush(&hits);
            return;
        }
    }
    /* No window, or one of more cells than the pool: walk the pool. A free
     * cell's block is empty, so it adds nothing. */
    for (uint32_t i = 0; i < b->cell_ready; i++) {
        const hg_cell *cell = &b->cells[i];
        if (cell->cx >= x0 && cell->cx <= x1 && cell->cy >= y0 && cell->cy <= y1 &&
            (!use_z || (cell->cz >= z0 && cell->cz <= z1)))
            gather_cells(b, &cell, 1, x, y, z, limit, &hits, use_z);
    }
    block_hits_flush(&hits);
}

static void hashgrid_query(const percept_backend *b, double x, double y, double z, double r,
                           percept_backend_visit visit, void *ctx)
{
    if (x != x || y != y || r != r || b->ncells == 0)
        return; /* NaN: no distance compares <= with it */
    if (r < 0)
        r = -r;
    if (USE_Z(b))
        query_in(b, x, y, z, r, visit, ctx, 1);
    else
        query_in(b, x, y, 0, r, visit, ctx, 0);
}

static size_t hashgrid_memory_usage(const percept_backend *b)
{
    return sizeof(*b) + (size_t)b->slot_cap * sizeof(entry_ref) +
           (size_t)b->cell_cap * sizeof(hg_cell) + (size_t)b->free_cap * sizeof(uint32_t) +
           (size_t)b->table_cap * sizeof(hg_entry) + b->block_bytes;
}

BACKEND_DEFINE_OPS(hashgrid, "hashgrid",
                   "sparse hashed grid: cells only where entities are, unbounded coordinates; "
                   "boxes over heights too with cell_height",
                   PERCEPT_BACKEND_QUERY_LOCAL)
