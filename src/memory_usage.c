/*
 * memory_usage.c - percept_memory_usage(): what a world holds from its
 * allocator, part by part, counted from the capacities the structures keep
 * (each grows all or nothing, so a capacity is exactly what is held).
 */
#include <string.h>

#include "world.h"

int percept_memory_usage(const percept_world *w, percept_memory *out)
{
    if (!w || !out)
        return PERCEPT_EINVAL;
    percept_memory m = {0};

    if (w->slot_cap) /* a whole struct and a line more than the records: see grow_slots() */
        m.entities = (w->slot_cap << w->ent_shift) + sizeof(entity) + 64 +
                     w->slot_cap * sizeof *w->free_slots;
    if (w->shapes)
        m.entities += w->slot_cap * w->shape_bytes + sizeof(shape);
    m.entities += id_map_bytes(&w->ids);

    m.pairs = w->slot_cap * sizeof *w->pairs;
    for (size_t i = 0; i < w->slot_cap; i++)
        m.pairs += pair_list_bytes(&w->pairs[i]);

    for (int g = 0; g < w->grid_count; g++)
        m.observer_grids += og_bytes(&w->grids[g]);

    m.world = sizeof *w;
    for (int g = 0; g < w->backend_count; g++) {
        const backend_group *bg = &w->backends[g];
        if (bg->plugin.ops.memory_usage)
            m.backends += bg->plugin.ops.memory_usage(bg->backend);
        if (bg->plugin.path)
            m.world += strlen(bg->plugin.path) + 1;
    }

    m.scratch =
        change_buffer_bytes(&w->changes) + tick_bytes(w) + w->events_cap * sizeof(percept_event);

    m.total = m.entities + m.pairs + m.observer_grids + m.backends + m.scratch + m.world;
    *out = m;
    return PERCEPT_OK;
}
