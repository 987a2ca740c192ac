/*
 * entry_block.h - the entities of one cell (or tower) as one block: what a
 * query reads of each entity, in a single array, so a cell's candidates are
 * one sequential read rather than a chain of misses. grid, hashgrid, hexgrid
 * and tower keep one block per occupied cell and, per slot, where its entry
 * is (entry_ref). Also the batch in which queries hand their finds to the host.
 */
#ifndef PERCEPT_ENTRY_BLOCK_H
#define PERCEPT_ENTRY_BLOCK_H

#include <math.h> /* NAN, INFINITY: constants, nothing of libm is linked */
#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

/*
 * An entry keeps its position as float offsets from an anchor the backend
 * computes alike on every write and read (one point for all cells in grid
 * and tower, each cell's corner in hashgrid): 12 bytes instead of 24, as a
 * query in a world beyond the caches mostly waits for the cells' lines.
 * Floats are near, not exact: a gather compares with a limit widened past
 * every rounding (entry_gather_limit()) and may report a few entities just
 * beyond the radius, which the host filters out. An offset beyond `span`
 * would widen that margin too much, so it is stored as NaN, which every
 * gather keeps: a far outsider in an edge cell is reported whenever its
 * cell is read.
 */
typedef struct block_entry {
    float dx, dy; /* from the anchor, or NaN */
    uint32_t slot;
} block_entry;

/* An entry of a block over heights too (hashgrid's boxes): 16 bytes. Such
 * a block holds these in place of block_entry (entry_items3()). */
typedef struct block_entry3 {
    float dx, dy, dz;
    uint32_t slot;
} block_entry3;

/* How far from its anchor an entry's offset may be, in cells: a margin of
 * some ten millionths of a cell (entry_gather_limit()). */
#define ENTRY_SPAN_CELLS 64.0
/* The largest span: keeps offsets and their margin far inside a float. */
#define ENTRY_SPAN_MAX 1e30

/* The span of cells of side `size`. */
static inline double entry_span(double size)
{
    double span = size * ENTRY_SPAN_CELLS;
    return span < ENTRY_SPAN_MAX ? span : ENTRY_SPAN_MAX;
}

/* The offset of coordinate v from an anchor's coordinate: NaN beyond span. */
static inline float entry_offset(double v, double anchor, double span)
{
    double d = v - anchor;
    return d >= -span && d <= span ? (float)d : NAN;
}

/*
 * A query point's offset from an anchor, as a gather takes it: held within
 * +-1e38, as a float must be. An offset that large is farther from every
 * entry's (at most ENTRY_SPAN_MAX, or NaN) than any radius whose limit is
 * finite (entry_gather_limit()), and its square is infinite.
 */
static inline float entry_query_offset(double v, double anchor)
{
    double d = v - anchor;
    d = d < 1e38 ? d : 1e38;
    d = d > -1e38 ? d : -1e38;
    return (float)d;
}

/*
 * The bound a gather compares an entry's squared float distance with, for a
 * query of radius r (0 <= r, r*r <= 1e300) over offsets of at most `span`.
 * Every entity the host accepts passes it, whatever the roundings:
 *  - the host accepts at most rho = r (1 + 1e-9) + 1e-150 away, with room
 *    for every rounding of its test;
 *  - each axis' float difference errs by at most err = (2 rho + 2 span)
 *    2^-23 + 1e-44: the offset, the query's offset and their difference
 *    each round to 24 bits (of at most span, span + rho and the result),
 *    and float subnormals add an absolute 1.4e-45 each;
 *  - so the float distance, over two axes or three, is at most rho + 2 err,
 *    and its square, summed in floats, is within 2^-22 of the exact one;
 *    2^-18 covers that and the rounding of the bound to a float.
 * Beyond a float's range the bound is infinite: every entry passes. Below
 * 1e-30 it is 1e-30, since float squares that small underflow anyway.
 */
static inline float entry_gather_limit(double r, double span)
{
    double rho = r * (1 + 1e-9) + 1e-150;
    double err = (2 * rho + 2 * span) * 0x1p-23 + 1e-44;
    double bound = rho + 2 * err;
    double limit = bound * bound * (1 + 0x1p-18);
    if (!(limit < 1e38))
        return INFINITY;
    return limit > 1e-30 ? (float)limit : 1e-30f;
}

/* The count and capacity in front of the entries. */
typedef struct entry_block {
    uint32_t count, cap;
    block_entry items[];
} entry_block;

/* The entries of a block that holds block_entry3. */
static inline block_entry3 *entry_items3(entry_block *block)
{
    return (block_entry3 *)(void *)block->items;
}

/* No block: a slot not in the index (entry_ref). */
#define ENTRY_BLOCK_NONE UINT32_MAX

/*
 * Room for one more entry, of `entry` bytes (sizeof block_entry or
 * block_entry3), in *block: makes it with `first` entries when it is NULL,
 * doubles it when full. Returns 0, or -1 when out of memory with *block
 * unchanged. *bytes, the caller's total of block bytes, follows.
 */
int entry_block_reserve(const percept_backend_host *host, entry_block **block, uint32_t first,
                        size_t entry, size_t *bytes);

/* Blocks of up to this many entries keep their room: a cell's count comes
 * and goes with every crossing, and resizing on each would cost a call. */
#define ENTRY_BLOCK_SHRINK_FROM 16u

/*
 * Gives back room once *block holds a quarter of it or less (and more than
 * ENTRY_BLOCK_SHRINK_FROM entries), keeping twice its count and at least
 * `first`, lest a cell a crowd passed through keep the crowd's size. If the
 * host refuses, the block stays as it was. *bytes follows.
 */
void entry_block_give_back(const percept_backend_host *host, entry_block **block, uint32_t first,
                           size_t entry, size_t *bytes);
static inline void entry_block_shrink(const percept_backend_host *host, entry_block **block,
                                      uint32_t first, size_t entry, size_t *bytes)
{
    const entry_block *b = *block;
    if (b != NULL && b->cap > ENTRY_BLOCK_SHRINK_FROM && b->count <= b->cap / 4)
        entry_block_give_back(host, block, first, entry, bytes);
}

/* Whether `block` (maybe NULL) takes one more entry without allocating. */
static inline int entry_block_has_room(const entry_block *block)
{
    return block != NULL && block->count < block->cap;
}

/*
 * Where a slot's entry is, in a backend's per-slot array: the number of its
 * block (a cell or tower) and the entry's index there. block ==
 * ENTRY_BLOCK_NONE means the slot is not in the index.
 */
typedef struct entry_ref {
    uint32_t block;
    uint32_t index;
} entry_ref;

/* Room in *refs, a backend's per-slot array of *cap records, for `need`
 * slots (backend_grow() from 16), the new ones out of the index. */
int entry_refs_reserve(const percept_backend_host *host, entry_ref **refs, uint32_t *cap,
                       uint32_t need);

/* Appends slot's entry, at offsets (entry_offset()) from the anchor, to
 * `block`, number `where`, which has room; records it in refs[slot]. */
void entry_ref_link(entry_ref *refs, percept_slot slot, entry_block *block, uint32_t where,
                    float dx, float dy);

/* Takes slot's entry out of `block`, the one refs[slot] names, moving the
 * block's last entry into its place (the array stays dense). */
void entry_ref_unlink(entry_ref *refs, percept_slot slot, entry_block *block);

/* A move within the same block rewrites the entry in place. */
static inline void entry_ref_move(entry_block *block, const entry_ref *ref, float dx, float dy)
{
    block_entry *e = &block->items[ref->index];
    e->dx = dx;
    e->dy = dy;
}

/* The same three for a block of block_entry3. */
void entry_ref_link3(entry_ref *refs, percept_slot slot, entry_block *block, uint32_t where,
                     float dx, float dy, float dz);
void entry_ref_unlink3(entry_ref *refs, percept_slot slot, entry_block *block);
static inline void entry_ref_move3(entry_block *block, const entry_ref *ref, float dx, float dy,
                                   float dz)
{
    block_entry3 *e = &entry_items3(block)[ref->index];
    e->dx = dx;
    e->dy = dy;
    e->dz = dz;
}

/*
 * A query's finds on their way to the host's visit callback, in batches.
 * In a crowd, whether an entry is within the circle is a coin toss to the
 * branch predictor: gathered without a branch, the finds cost no misses.
 */
#define BLOCK_HITS 64
typedef struct block_hits {
    percept_backend_visit visit;
    void *ctx;
    uint32_t count;
    percept_slot slot[BLOCK_HITS];
} block_hits;

/* Visits what is gathered and empties the batch: call at the query's end. */
void block_hits_flush(block_hits *hits);

/* Adds slot s to the batch when `keep` (0 or 1) says so, without a branch:
 * the slot is always written, the count advances by `keep`. */
static inline void block_hits_add(block_hits *hits, percept_slot s, int keep)
{
    uint32_t n = hits->count;
    hits->slot[n] = s;
    hits->count = n + (uint32_t)keep;
    if (hits->count == BLOCK_HITS)
        block_hits_flush(hits);
}

/*
 * Asks the processor to start loading a block's first three cache lines: a
 * query asks for its some ten blocks before gathering the first, so their
 * loads overlap. A hint: reading past a small block's end is no fault.
 */
static inline void entry_block_prefetch(const entry_block *block)
{
#if defined(__GNUC__) || defined(__clang__)
    const char *p = (const char *)block;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
#else
    (void)block;
#endif
}

/*
 * Gathers the entries of `block` whose squared float distance to the query
 * point is not above `limit` (entry_gather_limit()); qx and qy are the
 * point's offsets from the block's anchor (entry_query_offset()). Inline,
 * as most cells hold a handful of entries and a call would cost as much as
 * the scan. The entries go in runs that fit the batch's free room, so the
 * loop calls nothing and no entry pays a test for a full batch. A NaN
 * offset fails the "beyond" test, so it is kept.
 */
static inline void entry_block_gather(const entry_block *block, float qx, float qy, float limit,
                                      block_hits *hits)
{
    const block_entry *e = block->items;
    uint32_t left = block->count;
    while (left > 0) {
        uint32_t n = hits->count, room = BLOCK_HITS - n;
        uint32_t take = left < room ? left : room;
        for (uint32_t i = 0; i < take; i++) {
            float dx = e[i].dx - qx, dy = e[i].dy - qy;
            hits->slot[n] = e[i].slot; /* n < BLOCK_HITS: at most i hits so far */
            n += !(dx * dx + dy * dy > limit);
        }
        hits->count = n;
        e += take;
        left -= take;
        if (n == BLOCK_HITS)
            block_hits_flush(hits);
    }
}

/* entry_block_gather() for a block of block_entry3, by the distance in space. */
static inline void entry_block_gather3(entry_block *block, float qx, float qy, float qz,
                                       float limit, block_hits *hits)
{
    const block_entry3 *e = entry_items3(block);
    uint32_t left = block->count;
    while (left > 0) {
        uint32_t n = hits->count, room = BLOCK_HITS - n;
        uint32_t take = left < room ? left : room;
        for (uint32_t i = 0; i < take; i++) {
            float dx = e[i].dx - qx, dy = e[i].dy - qy, dz = e[i].dz - qz;
            hits->slot[n] = e[i].slot;
            n += !(dx * dx + dy * dy + dz * dz > limit);
        }
        hits->count = n;
        e += take;
        left -= take;
        if (n == BLOCK_HITS)
            block_hits_flush(hits);
    }
}

#endif
