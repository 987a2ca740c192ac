/*
 * entry_block.h - the entities of one cell (or tower) as one block: what a
 * query reads of each entity, in a single array, so a cell's candidates are
 * one sequential read rather than a chain of misses. grid, hashgrid and tower
 * keep one block per occupied cell and, per slot, where its entry is
 * (entry_ref). Also the batch in which queries hand their finds to the host.
 */
#ifndef PERCEPT_ENTRY_BLOCK_H
#define PERCEPT_ENTRY_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "percept/backend.h"

typedef struct block_entry {
    double x, y;
    uint32_t slot;
} block_entry;

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

/* Appends an entry (reserve() made room); returns its index. */
uint32_t entry_block_push(entry_block *block, uint32_t slot, double x, double y);

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
                    double x, double y);

/*
 * Takes slot's entry out of `block`, the one refs[slot] names, by moving the
 * block's last entry into its place (the array stays dense) and fixing that
 * entry's ref.
 */
void entry_ref_unlink(entry_ref *refs, percept_slot slot, entry_block *block);

/* A move within the same block: the entry is rewritten in place. */
static inline void entry_ref_move(entry_block *block, const entry_ref *ref, double x, double y)
{
    block_entry *e = &block->items[ref->index];
    e->x = x;
    e->y = y;
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
 * Asks the processor to start loading a block's first entries (its first
 * three lines: up to seven entries) without waiting for them. A query reads
 * some ten to sixteen blocks, each on its own in the heap: asked for all
 * before the first is gathered, in a world no cache holds, their loads
 * overlap instead of following one another. A hint: reading past a small
 * block's end is no fault, and nothing changes without the builtin.
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
 * Gathers the entries of `block` whose squared distance to (x, y) is not
 * above `limit`, visiting whenever the batch fills. Inline: a query calls it
 * for each of the ten or so cells it reads, most holding a handful of
 * entries, where a call's set-up cost as much as the scan (callgrind).
 * The entries go in runs that fit the batch's free room, so the loop calls
 * nothing: the position, the limit and the count stay in registers, and no
 * entry pays a test for a full batch.
 */
static inline void entry_block_gather(const entry_block *block, double x, double y, double limit,
                                      block_hits *hits)
{
    const block_entry *e = block->items;
    uint32_t left = block->count;
    while (left > 0) {
        uint32_t n = hits->count, room = BLOCK_HITS - n;
        uint32_t take = left < room ? left : room;
        for (uint32_t i = 0; i < take; i++) {
            double dx = e[i].x - x, dy = e[i].y - y;
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
