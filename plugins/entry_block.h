/*
 * entry_block.h - the entities of one cell (or tower) as one block: what a
 * query reads of each entity, in a single array, so a cell's candidates are
 * one sequential read rather than a chain of misses. grid, hashgrid and tower
 * keep one block per occupied cell and, per slot, where its entry is
 * (entry_ref). Also the batch in which queries hand their finds to the host.
 */
#ifndef PERCEPT_ENTRY_BLOCK_H
#define PERCEPT_ENTRY_BLOCK_H

#include <math.h> /* NAN, INFINITY: constants, nothing of libm is linked */
#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

/*
 * An entry keeps its position as float offsets from an anchor, a point the
 * backend computes the same way whenever it writes or reads the entry (one
 * point for every cell in grid and tower, each cell's corner in hashgrid):
 * 12 bytes an entry instead of 24 with doubles. Once the world outgrows the
 * caches, the cells' lines are much of what a query waits for.
 *
 * A float keeps 24 bits, so the offsets are near, not exact. A gather
 * compares them with a limit widened past every rounding error
 * (entry_gather_limit()) and may report a few entities just beyond the
 * radius, which the ABI allows: the host tests every candidate with the
 * exact coordinates. An offset beyond `span` (entry_offset()) would make
 * that margin too wide, so it is stored as NaN instead, which every gather
 * keeps: an entity far outside the world bounds, held by an edge cell, is
 * reported whenever its cell is read.
 */
typedef struct block_entry {
    float dx, dy; /* from the anchor, or NaN */
    uint32_t slot;
} block_entry;

/* How far from its anchor an entry's offset may be, in cells, where the
 * anchor is a cell's corner: a margin of some ten millionths of a cell
 * (entry_gather_limit()). */
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
 *  - the host accepts at most rho = r (1 + 1e-9) + 1e-150 away (the lenient
 *    bound of backend_window, its square root);
 *  - each axis' float difference errs by at most err = (2 rho + 2 span)
 *    2^-23 + 1e-44: the offset, the query's offset and their difference
 *    each round to 24 bits (of at most span, span + rho and the result),
 *    and float subnormals add an absolute 1.4e-45 each;
 *  - so the float distance is at most rho + 2 err, and its square, summed
 *    in floats, is within 2^-22 of the exact one; 2^-18 covers that and
 *    the rounding of the bound to a float.
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

/* No entry: what entry_block_remove() returns when nothing moved. */
#define ENTRY_BLOCK_NONE UINT32_MAX

/*
 * Room for one more entry in *block: makes it with `first` entries when it
 * is NULL, doubles it when full. Returns 0, or -1 when out of memory with
 * *block unchanged. *bytes, the caller's total of block bytes, follows.
 */
int entry_block_reserve(const percept_backend_host *host, entry_block **block, uint32_t first,
                        size_t *bytes);

/* Blocks of up to this many entries keep their room: a cell's count comes
 * and goes with every crossing, and resizing on each would cost a call. */
#define ENTRY_BLOCK_SHRINK_FROM 16u

/*
 * Gives back room once *block holds a quarter of it or less (and more than
 * ENTRY_BLOCK_SHRINK_FROM entries of room), keeping twice its count and at
 * least `first`: a cell a crowd passed through would otherwise keep the
 * crowd's size for good. Never fails: if the host refuses, the block stays
 * as it was. *bytes follows.
 */
void entry_block_give_back(const percept_backend_host *host, entry_block **block, uint32_t first,
                           size_t *bytes);
static inline void entry_block_shrink(const percept_backend_host *host, entry_block **block,
                                      uint32_t first, size_t *bytes)
{
    const entry_block *b = *block;
    if (b != NULL && b->cap > ENTRY_BLOCK_SHRINK_FROM && b->count <= b->cap / 4)
        entry_block_give_back(host, block, first, bytes);
}

/* Appends an entry (reserve() made room), at offsets (entry_offset()) from
 * the block's anchor; returns its index. */
uint32_t entry_block_push(entry_block *block, uint32_t slot, float dx, float dy);

/* Removes entry i by moving the last one into its place; returns the slot
 * of the entry now at i, for the caller's index, or ENTRY_BLOCK_NONE. */
uint32_t entry_block_remove(entry_block *block, uint32_t i);

/* Bytes of a block of `cap` entries. */
size_t entry_block_bytes(uint32_t cap);

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

/*
 * Room in *refs, a backend's per-slot array of *cap records, for `need`
 * slots: doubled from 16 until it holds them, the new records out of the
 * index. Returns 0, or -1 with *refs and *cap unchanged (a resize that
 * fails keeps the old block).
 */
int entry_refs_reserve(const percept_backend_host *host, entry_ref **refs, uint32_t *cap,
                       uint32_t need);

/* Appends slot's entry to `block`, number `where`, which has room; records it in refs[slot]. */
void entry_ref_link(entry_ref *refs, percept_slot slot, entry_block *block, uint32_t where,
                    float dx, float dy);

/*
 * Takes slot's entry out of `block`, the one refs[slot] names, by moving the
 * block's last entry into its place (the array stays dense) and fixing that
 * entry's ref.
 */
void entry_ref_unlink(entry_ref *refs, percept_slot slot, entry_block *block);

/* A move within the same block: the entry is rewritten in place. */
static inline void entry_ref_move(entry_block *block, const entry_ref *ref, float dx, float dy)
{
    block_entry *e = &block->items[ref->index];
    e->dx = dx;
    e->dy = dy;
}

/*
 * A query's finds on their way to the host's visit callback, in batches.
 * In a crowd, whether an entry lies within the query's circle is a coin
 * toss to the branch predictor; gathering the finds without a branch and
 * visiting them afterwards keeps the per-entry loop free of mispredictions.
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

/*
 * Adds slot s to the batch when `keep` (0 or 1) says so, without a branch:
 * the slot is always written and the count advances by `keep`. Visits
 * whenever the batch fills.
 */
static inline void block_hits_add(block_hits *hits, percept_slot s, int keep)
{
    uint32_t n = hits->count;
    hits->slot[n] = s;
    hits->count = n + (uint32_t)keep;
    if (hits->count == BLOCK_HITS)
        block_hits_flush(hits);
}

/*
 * Asks the processor to start loading a block's first three cache lines.
 * A query reads some ten blocks, each on its own in the heap: asked for
 * all before the first is gathered, their loads overlap once the world
 * outgrows the caches. A hint: reading past a small block's end is no
 * fault.
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
 * point's offsets from the block's anchor (entry_query_offset()). Visits
 * whenever the batch fills. Inline: a query calls it for each of the ten or
 * so cells it reads, most holding a handful of entries, where a call's
 * set-up would cost as much as the scan. The entries go in runs that
 * fit the batch's free room, so the loop calls nothing: the position, the
 * limit and the count stay in registers, and no entry pays a test for a
 * full batch. A NaN offset fails the "beyond" test, so it is kept.
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

#endif
