/* cell_blocks.c - entities over a fixed array of cells (see cell_blocks.h). */
#include "cell_blocks.h"

#include <string.h>

int cell_blocks_init(cell_blocks *cb, const percept_backend_setup *setup, size_t ncells,
                     double size, percept_backend_error *error)
{
    memset(cb, 0, sizeof(*cb));
    cb->host = setup->host;
    cb->ncells = ncells;
    cb->ax = setup->min_x + (setup->max_x - setup->min_x) / 2;
    cb->ay = setup->min_y + (setup->max_y - setup->min_y) / 2;
    /* Twice the bounds' longer side, and at least ENTRY_SPAN_CELLS cells:
     * entities up to 1.5 times that side outside the bounds keep their offsets. */
    double w = setup->max_x - setup->min_x, h = setup->max_y - setup->min_y;
    double span = 2 * (w > h ? w : h), cells = entry_span(size);
    span = span > cells ? span : cells;
    cb->span = span < ENTRY_SPAN_MAX ? span : ENTRY_SPAN_MAX;
    cb->cells = backend_new(setup, ncells * sizeof(*cb->cells), error);
    return cb->cells != NULL ? 0 : -1;
}

void cell_blocks_free(cell_blocks *cb)
{
    for (size_t i = 0; i < cb->ncells; i++)
        backend_free(cb->host, cb->cells[i]);
    backend_free(cb->host, cb->slots);
    backend_free(cb->host, cb->cells);
}

void cell_blocks_scan(const cell_blocks *cb, float qx, float qy, float limit, block_hits *hits)
{
    for (uint32_t s = 0; s < cb->slot_limit; s++) {
        const entry_ref *ref = &cb->slots[s];
        if (ref->block == ENTRY_BLOCK_NONE)
            continue;
        const block_entry *e = &cb->cells[ref->block]->items[ref->index];
        float dx = e->dx - qx, dy = e->dy - qy;
        block_hits_add(hits, s, !(dx * dx + dy * dy > limit));
    }
}
