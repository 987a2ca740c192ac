/*
 * cell_blocks.h - the entities of a backend over a fixed array of cells
 * (grid's squares, tower's towers, hexgrid's hexagons): one entry block per
 * occupied cell, and per slot where its entry is. The backend says which
 * cell holds a position; this keeps the rest.
 *
 * Every entry's offsets are taken from one anchor, the centre of the
 * bounds, so that a query computes the point's offsets once, not once a
 * cell. Their rounding, a few ten-millionths of the span, widens a query's
 * radius by some 0.004 cells at 4096 cells a side.
 */
#ifndef PERCEPT_CELL_BLOCKS_H
#define PERCEPT_CELL_BLOCKS_H

#include "backend_util.h"
#include "entry_block.h"

#define CELL_BLOCKS_FIRST_CAP 4u /* entries of a cell's first block */

typedef struct cell_blocks {
    const percept_backend_host *host;
    entry_block **cells; /* ncells blocks, NULL until a cell first takes an entity */
    size_t ncells;
    size_t cell_bytes;   /* bytes of all blocks, for memory_usage */
    entry_ref *slots;    /* slot_cap records: the cell (block) and entry of each slot */
    uint32_t slot_cap;   /* records allocated */
    uint32_t slot_limit; /* 1 + the highest slot ever inserted: bounds a full scan */
    uint32_t count;      /* entities in the index */
    double ax, ay;       /* the anchor */
    double span;         /* how far an entry's offsets may be from it */
} cell_blocks;

/* ncells empty cells of about `size` across over setup's bounds; 0, or -1
 * with *error filled (out of memory). */
int cell_blocks_init(cell_blocks *cb, const percept_backend_setup *setup, size_t ncells,
                     double size, percept_backend_error *error);
void cell_blocks_free(cell_blocks *cb);

/* The bytes held, but for the backend's own record. */
static inline size_t cell_blocks_bytes(const cell_blocks *cb)
{
    return cb->ncells * sizeof(*cb->cells) + (size_t)cb->slot_cap * sizeof(entry_ref) +
           cb->cell_bytes;
}

/*
 * Room for slot_count slots, and for `slot` in `cell` unless it is there
 * already. Each step either succeeds or changes only capacity.
 */
static inline int cell_blocks_reserve(cell_blocks *cb, uint32_t slot_count, percept_slot slot,
                                      uint32_t cell)
{
    if (slot >= slot_count)
        slot_count = slot == UINT32_MAX ? UINT32_MAX : slot + 1;
    if (entry_refs_reserve(cb->host, &cb->slots, &cb->slot_cap, slot_count) != 0)
        return -1;
    if (slot < cb->slot_cap && cb->slots[slot].block == cell)
        return 0; /* a move within the cell rewrites the entry in place */
    return entry_block_reserve(cb->host, &cb->cells[cell], CELL_BLOCKS_FIRST_CAP,
                               sizeof(block_entry), &cb->cell_bytes);
}

/* Inserts or moves `slot` to (x, y), in `cell`, after a reserve(). */
static inline void cell_blocks_put(cell_blocks *cb, percept_slot slot, uint32_t cell, double x,
                                   double y)
{
    if (slot >= cb->slot_cap)
        return; /* the host skipped reserve(); refuse rather than corrupt */
    const entry_ref *s = &cb->slots[slot];
    float dx = entry_offset(x, cb->ax, cb->span), dy = entry_offset(y, cb->ay, cb->span);
    if (cell == s->block) {
        entry_ref_move(cb->cells[cell], s, dx, dy);
        return;
    }
    if (!entry_block_has_room(cb->cells[cell]))
        return; /* the host skipped reserve(): the entity stays where it was */
    uint32_t from = s->block;
    if (from != ENTRY_BLOCK_NONE) {
        entry_ref_unlink(cb->slots, slot, cb->cells[from]);
        entry_block_shrink(cb->host, &cb->cells[from], CELL_BLOCKS_FIRST_CAP, sizeof(block_entry),
                           &cb->cell_bytes);
    } else {
        cb->count++;
        if (slot >= cb->slot_limit)
            cb->slot_limit = slot + 1;
    }
    entry_ref_link(cb->slots, slot, cb->cells[cell], cell, dx, dy);
}

static inline void cell_blocks_remove(cell_blocks *cb, percept_slot slot)
{
    if (slot >= cb->slot_cap || cb->slots[slot].block == ENTRY_BLOCK_NONE)
        return;
    uint32_t from = cb->slots[slot].block;
    entry_ref_unlink(cb->slots, slot, cb->cells[from]);
    entry_block_shrink(cb->host, &cb->cells[from], CELL_BLOCKS_FIRST_CAP, sizeof(block_entry),
                       &cb->cell_bytes);
    cb->count--;
}

/* Gathers every entry within `limit` of the query's offsets (qx, qy) by
 * scanning the slots: for a query without a window, or with more cells in
 * it than slots. */
void cell_blocks_scan(const cell_blocks *cb, float qx, float qy, float limit, block_hits *hits);

#endif
