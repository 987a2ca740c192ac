/*
 * world_read.c - the calls that read a world. None writes it, not even its
 * message, so that several threads may read one world at once while nobody
 * changes it.
 */
#include "world.h"

#include <string.h>

#include "alloc.h"

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

int percept_sense_count(const percept_world *w)
{
    return w ? w->sense_count : 0;
}

int percept_sense_index(const percept_world *w, const char *name)
{
    if (!w || !name)
        return PERCEPT_EINVAL;
    for (int s = 0; s < w->sense_count; s++)
        if (!strcmp(w->sense_names[s], name))
            return s;
    return PERCEPT_ENOENT;
}

const char *percept_sense_name(const percept_world *w, percept_sense sense)
{
    return w && valid_sense(w, sense) ? w->sense_names[sense] : NULL;
}

void world_describe(const percept_world *w, uint32_t slot, percept_entity_desc *out)
{
    const entity *e = ent(w, slot);
    const shape *sh = shape_of(w, slot);
    memset(out, 0, sizeof *out);
    out->size = sizeof *out;
    out->x = e->x;
    out->y = e->y;
    out->z = e->z;
    out->tags = e->tags;
    out->hidden = e->hidden;
    if (sh)
        memcpy(out->facing, sh->facing, sizeof out->facing);
    for (int s = 0; s < w->sense_count; s++) {
        percept_sense_params *p = &out->sense[s];
        p->range = isnan(e->range[s]) ? 0 : e->range[s]; /* NaN: a lacking sense */
        p->fov = 360;
        if (sh) {
            p->margin = sh->sense[s].margin;
            p->fov = sh->sense[s].fov;
            p->ignore = sh->sense[s].ignore;
        }
    }
}

int percept_get_entity(const percept_world *w, percept_id id, percept_entity_desc *out)
{
    if (!w || !out || out->size < sizeof *out)
        return PERCEPT_EINVAL;
    uint32_t slot = id_map_find(&w->ids, id);
    if (slot == ID_MAP_NONE)
        return PERCEPT_ENOENT;
    world_describe(w, slot, out);
    return PERCEPT_OK;
}

int percept_perceives(const percept_world *w, percept_id observer, percept_id target,
                      percept_sense sense)
{
    if (!w || !valid_sense(w, sense))
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
    return i != PAIR_NONE && (pair_mask(&list->items[i]) & bit) != 0;
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
    if (!w || !valid_sense(w, sense) || !count || (capacity && !ids))
        return PERCEPT_EINVAL;
    uint32_t slot = id_map_find(&w->ids, id);
    if (slot == ID_MAP_NONE)
        return PERCEPT_ENOENT;
    const pair_list *list = &w->pairs[slot];
    unsigned bit = PERCEPT_SENSE_BIT(sense) << (reverse ? PAIR_IN_SHIFT : 0);
    size_t n = 0;
    for (uint32_t i = 0; i < list->len; i++)
        n += (pair_mask(&list->items[i]) & bit) != 0;
    *count = n;
    if (capacity < n)
        return PERCEPT_OK;
    n = 0;
    for (uint32_t i = 0; i < list->len; i++)
        if (pair_mask(&list->items[i]) & bit)
            ids[n++] = ent(w, pair_slot(&list->items[i]))->id;
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
        if (ent(w, slot)->alive)
            ids[k++] = ent(w, slot)->id;
    sort_ids(ids, k);
    return PERCEPT_OK;
}

const char *percept_backend_name(const percept_world *w, percept_sense sense)
{
    return w && valid_sense(w, sense) ? w->backends[w->backend_of[sense]].plugin.ops.name : NULL;
}

const char *percept_backend_path(const percept_world *w, percept_sense sense)
{
    return w && valid_sense(w, sense) ? w->backends[w->backend_of[sense]].plugin.path : NULL;
}

/* What percept_query() collects: slots within the radius, in room that
 * grows from the world's allocator (the world itself is not written). */
typedef struct query_finds {
    const percept_world *w;
    double x, y, z, r;
    uint32_t *slots;
    size_t len, cap;
    int failed;
} query_finds;

static void visit_found(void *ctx, percept_slot slot)
{
    query_finds *q = ctx;
    const percept_world *w = q->w;
    if (q->failed || slot >= w->slot_count || !ent(w, slot)->alive)
        return;
    const entity *e = ent(w, slot);
    double dx = e->x - q->x, dy = e->y - q->y, dz = e->z - q->z;
    if (!(dx * dx + dy * dy + dz * dz <= q->r * q->r))
        return;
    if (q->len == q->cap) {
        void *slots = q->slots;
        if (pc_grow(&w->alloc, &slots, sizeof *q->slots, &q->cap, q->len + 1)) {
            q->failed = 1;
            return;
        }
        q->slots = slots;
    }
    q->slots[q->len++] = slot;
}

int percept_query(const percept_world *w, double x, double y, double z, double radius,
                  percept_id *ids, size_t capacity, size_t *count)
{
    if (!w || !count || (capacity && !ids) || !valid_coord(x) || !valid_coord(y) ||
        !valid_coord(z) || !(radius >= 0 && radius <= PERCEPT_COORD_LIMIT))
        return PERCEPT_EINVAL;
    query_finds q = {.w = w, .x = x, .y = y, .z = z, .r = radius};
    const backend_group *bg = &w->backends[w->backend_of[0]];
    bg->plugin.ops.query(bg->backend, x, y, z, radius, visit_found, &q);
    if (q.failed) {
        pc_free(&w->alloc, q.slots);
        return PERCEPT_ENOMEM;
    }
    /* A backend may report an entity twice: keep each once. */
    sort_ids(q.slots, q.len);
    size_t n = 0;
    for (size_t i = 0; i < q.len; i++)
        if (n == 0 || q.slots[n - 1] != q.slots[i])
            q.slots[n++] = q.slots[i];
    *count = n;
    if (capacity >= n) {
        for (size_t i = 0; i < n; i++)
            ids[i] = ent(w, q.slots[i])->id;
        sort_ids(ids, n);
    }
    pc_free(&w->alloc, q.slots);
    return PERCEPT_OK;
}
