/*
 * world_read.c - the calls that read a world. None writes it, not even its
 * message, so that several threads may read one world at once while nobody
 * changes it.
 */
#include "world.h"

size_t percept_entity_count(const percept_world *w)
{
    return w ? w->ids.count : 0;
}

int percept_contains(const percept_world *w, percept_id id)
{
    return w && id_map_find(&w->ids, id) != ID_MAP_NONE;
}

int percept_get_bounds(const percept_world *w, percept_bounds *out)
{
    if (!w || !out)
        return PERCEPT_EINVAL;
    *out = w->bounds;
    return PERCEPT_OK;
}

int percept_get_entity(const percept_world *w, percept_id id, percept_entity_desc *out)
{
    if (!w || !out)
        return PERCEPT_EINVAL;
    uint32_t slot = id_map_find(&w->ids, id);
    if (slot == ID_MAP_NONE)
        return PERCEPT_ENOENT;
    const entity *e = &w->ents[slot];
    *out = (percept_entity_desc){e->x, e->y, {0}, e->hidden};
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        out->range[s] = isnan(e->range[s]) ? 0 : e->range[s]; /* NaN: a lacking sense */
    return PERCEPT_OK;
}

int percept_perceives(const percept_world *w, percept_id observer, percept_id target,
                      percept_sense sense)
{
    if (!w || !valid_sense(sense))
        return PERCEPT_EINVAL;
    uint32_t o = id_map_find(&w->ids, observer), t = id_map_find(&w->ids, target);
    if (o == ID_MAP_NONE || t == ID_MAP_NONE)
        return PERCEPT_ENOENT;
    /* Scan the shorter of the two lists holding the pair. */
    unsigned bit = PERCEPT_SENSE_BIT(sense);
    const pair_list *list = &w->pairs[o];
    uint32_t partner = t;
    if (w->pairs[t].len < list->len) {
        list = &w->pairs[t];
        partner = o;
        bit <<= PAIR_IN_SHIFT; /* t's list: o perceiving t is t's "in" half */
    }
    uint32_t i = pair_list_find(list, partner);
    return i != PAIR_NONE && (pair_mask(list->items[i].entry) & bit) != 0;
}

/* Heapsort: in place and allocation-free (qsort may call malloc behind the
 * caller's allocator), O(n log n) however large an observer's crowd. */
static void sort_ids(percept_id *a, size_t n)
{
    for (size_t end = n, start = n / 2;;) {
        size_t root;
        if (start > 0) {
            root = --start;
        } else if (end > 1) {
            percept_id top = a[0];
            a[0] = a[--end];
            a[end] = top;
            root = 0;
        } else {
            return;
        }
        for (size_t child; (child = 2 * root + 1) < end; root = child) {
            if (child + 1 < end && a[child + 1] > a[child])
                child++;
            if (a[root] >= a[child])
                break;
            percept_id tmp = a[root];
            a[root] = a[child];
            a[child] = tmp;
        }
    }
}

static int list_ids(const percept_world *w, percept_id id, percept_sense sense, int reverse,
                    percept_id *ids, size_t capacity, size_t *count)
{
    if (!w || !valid_sense(sense) || !count || (capacity && !ids))
        return PERCEPT_EINVAL;
    uint32_t slot = id_map_find(&w->ids, id);
    if (slot == ID_MAP_NONE)
        return PERCEPT_ENOENT;
    const pair_list *list = &w->pairs[slot];
    unsigned bit = PERCEPT_SENSE_BIT(sense) << (reverse ? PAIR_IN_SHIFT : 0);
    size_t n = 0;
    for (uint32_t i = 0; i < list->len; i++)
        n += (pair_mask(list->items[i].entry) & bit) != 0;
    *count = n;
    if (capacity < n)
        return PERCEPT_OK;
    n = 0;
    for (uint32_t i = 0; i < list->len; i++)
        if (pair_mask(list->items[i].entry) & bit)
            ids[n++] = w->ents[pair_slot(list->items[i].entry)].id;
    sort_ids(ids, n);
    return PERCEPT_OK;
}

int percept_perceived(const percept_world *w, percept_id observer, percept_sense sense,
                      percept_id *ids, size_t capacity, size_t *count)
{
    return list_ids(w, observer, sense, 0, ids, capacity, count);
}

int percept_perceived_by(const percept_world *w, percept_id target, percept_sense sense,
                         percept_id *ids, size_t capacity, size_t *count)
{
    return list_ids(w, target, sense, 1, ids, capacity, count);
}

int percept_entities(const percept_world *w, percept_id *ids, size_t capacity, size_t *count)
{
    if (!w || !count || (capacity && !ids))
        return PERCEPT_EINVAL;
    size_t n = w->ids.count;
    *count = n;
    if (capacity < n)
        return PERCEPT_OK;
    /* The live records up to the high-water mark, in slot order: hence the sort. */
    size_t k = 0;
    for (uint32_t slot = 0; slot < w->slot_count && k < n; slot++)
        if (w->ents[slot].alive)
            ids[k++] = w->ents[slot].id;
    sort_ids(ids, k);
    return PERCEPT_OK;
}

const char *percept_backend_name(const percept_world *w, percept_sense sense)
{
    return w && valid_sense(sense) ? w->backends[w->backend_of[sense]].plugin.ops.name : NULL;
}

const char *percept_backend_path(const percept_world *w, percept_sense sense)
{
    return w && valid_sense(sense) ? w->backends[w->backend_of[sense]].plugin.path : NULL;
}
