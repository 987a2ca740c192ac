/* entry_block.c - per-cell entity blocks of the shipped backends (see entry_block.h). */
#include "entry_block.h"

#include "backend_util.h"

static size_t entry_block_bytes(uint32_t cap, size_t entry)
{
    return sizeof(entry_block) + (size_t)cap * entry;
}

int entry_block_reserve(const percept_backend_host *host, entry_block **block, uint32_t first,
                        size_t entry, size_t *bytes)
{
    entry_block *old = *block;
    uint32_t old_cap = old != NULL ? old->cap : 0;
    if (old != NULL && old->count < old_cap)
        return 0;
    if (old_cap == UINT32_MAX)
        return -1;
    uint32_t cap = old == NULL ? first : old_cap > UINT32_MAX / 2 ? UINT32_MAX : old_cap * 2;
    if ((uint64_t)cap * entry > SIZE_MAX - sizeof(entry_block))
        return -1;
    entry_block *grown = backend_host_alloc(host, old, entry_block_bytes(cap, entry));
    if (grown == NULL)
        return -1; /* the old block is still the caller's, unchanged */
    if (old == NULL)
        grown->count = 0;
    grown->cap = cap;
    *bytes += entry_block_bytes(cap, entry) - (old != NULL ? entry_block_bytes(old_cap, entry) : 0);
    *block = grown;
    return 0;
}

void entry_block_give_back(const percept_backend_host *host, entry_block **block, uint32_t first,
                           size_t entry, size_t *bytes)
{
    entry_block *old = *block;
    uint32_t old_cap = old->cap;
    uint32_t cap = old->count * 2 > first ? old->count * 2 : first;
    entry_block *smaller = backend_host_alloc(host, old, entry_block_bytes(cap, entry));
    if (smaller == NULL)
        return; /* a resize that fails leaves the block as it was */
    smaller->cap = cap;
    *bytes -= entry_block_bytes(old_cap, entry) - entry_block_bytes(cap, entry);
    *block = smaller;
}

int entry_refs_reserve(const percept_backend_host *host, entry_ref **refs, uint32_t *cap,
                       uint32_t need)
{
    uint32_t old = *cap;
    if (need <= old)
        return 0; /* the common case, without a call */
    if (backend_grow(host, (void **)refs, sizeof(entry_ref), cap, need, 16) != 0)
        return -1;
    for (uint32_t i = old; i < *cap; i++)
        (*refs)[i].block = ENTRY_BLOCK_NONE;
    return 0;
}

void entry_ref_link(entry_ref *refs, percept_slot slot, entry_block *block, uint32_t where,
                    float dx, float dy)
{
    refs[slot].block = where;
    refs[slot].index = block->count;
    block->items[block->count++] = (block_entry){dx, dy, slot};
}

void entry_ref_unlink(entry_ref *refs, percept_slot slot, entry_block *block)
{
    entry_ref *r = &refs[slot];
    uint32_t last = --block->count;
    if (r->index != last) {
        block->items[r->index] = block->items[last];
        refs[block->items[r->index].slot].index = r->index;
    }
    r->block = ENTRY_BLOCK_NONE;
}

void entry_ref_link3(entry_ref *refs, percept_slot slot, entry_block *block, uint32_t where,
                     float dx, float dy, float dz)
{
    refs[slot].block = where;
    refs[slot].index = block->count;
    entry_items3(block)[block->count++] = (block_entry3){dx, dy, dz, slot};
}

void entry_ref_unlink3(entry_ref *refs, percept_slot slot, entry_block *block)
{
    block_entry3 *items = entry_items3(block);
    entry_ref *r = &refs[slot];
    uint32_t last = --block->count;
    if (r->index != last) {
        items[r->index] = items[last];
        refs[items[r->index].slot].index = r->index;
    }
    r->block = ENTRY_BLOCK_NONE;
}

void block_hits_flush(block_hits *hits)
{
    for (uint32_t i = 0; i < hits->count; i++)
        hits->visit(hits->ctx, hits->slot[i]);
    hits->count = 0;
}
