/*
 * world.c - the calls that change a world, and the algorithm each change
 * goes through: compute its pair changes without touching the pair state,
 * make every allocation it needs (each undoable), apply it with operations
 * that cannot fail, and only then deliver its events. So a call either
 * happens whole or, on any error, leaves the world as it was.
 */
#include "world.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "ieee_double.h"
#include "message.h"
#include "prefetch.h"
#include "relation.h"

/* How much wider than its own reach a mover's query may grow to find the
 * near observers too, on a backend whose queries are not local. */
#define NEAR_WIDENING 1.25

int world_error(percept_world *w, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message_vformat(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
    w->err_index = SIZE_MAX;
    return status;
}

/* ---------------------------------------------------------------- callback and message */

int percept_set_event_callback(percept_world *w, percept_event_fn fn, void *user)
{
    if (!w)
        return PERCEPT_EINVAL;
    if (w->in_callback)
        return world_error(w, PERCEPT_EBUSY,
                           "percept_set_event_callback: called from inside the event callback");
    w->on_event = fn;
    w->on_event_user = user;
    return PERCEPT_OK;
}

const char *percept_errmsg(const percept_world *w)
{
    return w ? w->errmsg : "the world is NULL";
}

size_t percept_errindex(const percept_world *w)
{
    return w ? w->err_index : SIZE_MAX;
}

/* ---------------------------------------------------------------- computing a call's changes */

static uint32_t next_epoch(percept_world *w)
{
    if (++w->epoch == 0) {
        /* After 2^32 passes, old stamps could collide with new ones: reset. */
        for (size_t i = 0; i < w->slot_cap; i++)
            ent(w, (uint32_t)i)->mark = 0;
        w->epoch = 1;
    }
    return w->epoch;
}

/* One entity's change: its state after the call. */
typedef struct change {
    uint32_t slot;
    entity next;
    const shape *shp; /* its shape after the call: its own, w->next_shape, or NULL */
    int adding, removing, moved;
    int reshaped; /* w->next_shape is its new shape, to store if next.shaped */
} change;

/* A call's search for the changing entity's pair changes. */
typedef struct pass {
    percept_world *w;
    const change *ch;
    unsigned out;        /* the senses in which its perceiving others can change */
    unsigned in_visible; /* those in which its being perceived can, less hidden ones */
    uint32_t epoch;
} pass;

static void push_change(pass *p, uint32_t partner, uint32_t index, unsigned before, unsigned after,
                        int moved)
{
    percept_world *w = p->w;
    /* Applying a change of senses reads the partner's list head: ask for
     * it now, so that prefetch_entries() can ask for the entry in time. */
    if (before != after)
        prefetch_read(&w->pairs[partner]);
    pair_change c = {
        .partner_id = ent(w, partner)->id,
        .partner = partner,
        .index = index,
        .before = (uint16_t)before,
        .after = (uint16_t)after,
        .moved = (uint8_t)moved,
    };
    change_buffer_push(&w->alloc, &w->changes, &c);
}

/* visit_candidate() when either entity has a shape: apart, so that the
 * common case saves no registers for it. */
static __attribute__((noinline)) void visit_shaped(pass *p, percept_slot t, const entity *e)
{
    percept_world *w = p->w;
    unsigned after = pair_mask_of(w->sense_count, &p->ch->next, p->ch->shp, e, shape_at(w, e, t),
                                  p->out, p->in_visible, 0);
    if (after)
        push_change(p, t, PAIR_NONE, 0, after, 0);
}

/* A candidate from a backend or an observer grid: tested once, and only if a
 * live entity other than the changing one (a faulty plugin cannot corrupt us). */
static void visit_candidate(void *ctx, percept_slot t)
{
    pass *p = ctx;
    percept_world *w = p->w;
    if (t == p->ch->slot || t >= w->slot_count)
        return;
    entity *e = ent(w, t);
    if (!e->alive || e->mark == p->epoch)
        return;
    e->mark = p->epoch;
    if (p->ch->shp || e->shaped) {
        visit_shaped(p, t, e);
        return;
    }
    unsigned after =
        pair_mask_of(w->sense_count, &p->ch->next, NULL, e, NULL, p->out, p->in_visible, 0);
    if (after)
        push_change(p, t, PAIR_NONE, 0, after, 0);
}

double world_query_radius(const percept_world *w, int g, const entity *e, unsigned out,
                          unsigned in_visible)
{
    double reach = reach_of(e, w->backends[g].senses & out), radius = reach;
    int local = (w->backends[g].plugin.ops.query_hints & PERCEPT_BACKEND_QUERY_LOCAL) != 0;
    for (int i = 0; i < w->grid_count; i++) {
        if (w->near_of[i] >= 0 || w->near_backend[i] != g || !(w->grids[i].senses & in_visible))
            continue;
        /* A backend whose queries are not local widens its query only a
         * little for the near observers; else the near grid answers. */
        double near = og_near_radius(&w->grids[i]);
        if (near > radius && (local || near <= NEAR_WIDENING * reach))
            radius = near;
    }
    return radius;
}

void world_find_candidates(const percept_world *w, const entity *e, unsigned out, unsigned visible,
                           og_visit visit, void *ctx)
{
    /* A backend holds every entity, so its query met all within its radius:
     * the observer grids need not name them again. */
    double covered2 = -1;
    for (int g = 0; g < w->backend_count; g++) {
        const backend_group *bg = &w->backends[g];
        double r = world_query_radius(w, g, e, out, visible);
        if (r > 0) {
            bg->plugin.ops.query(bg->backend, e->x, e->y, e->z, r, visit, ctx);
            if (r * r > covered2)
                covered2 = r * r; /* the backend's contract: dx*dx + dy*dy + dz*dz <= r*r */
        }
    }
    for (int g = 0; visible && g < w->grid_count; g++) {
        const observer_grid *grid = &w->grids[g];
        if (!(grid->senses & visible))
            continue;
        /* A query that reached the near radius met every near observer. */
        int of = w->near_of[g];
        if (of >= 0) {
            double near = og_near_radius(&w->grids[of]);
            if (covered2 >= near * near)
                continue;
        }
        og_query(grid, e->x, e->y, e->z, grid->senses & visible, covered2, visit, ctx);
    }
}

/* The changing entity's pairs re-tested, then its candidates: from each
 * backend, those within its reach or a near observer's; from each observer
 * grid, the far-sighted observers that may reach it. Each is tested once. */
static int compute_changes(percept_world *w, const change *ch, unsigned out, unsigned in)
{
    w->changes.len = 0;
    w->changes.failed = 0;
    const entity *me = &ch->next;
    unsigned visible = in & ~(unsigned)me->hidden;
    pass p = {.w = w, .ch = ch, .out = out, .in_visible = visible, .epoch = next_epoch(w)};
    const pair_list *pairs = &w->pairs[ch->slot];
    /* The bits the call cannot change are kept as they were. */
    unsigned keep = PAIR_MASK & ~(out | in << PAIR_IN_SHIFT);
    /* MOVE notifications are records only a callback reads. */
    int notify_moves = ch->moved && w->move_events && world_wants_events(w);
    /* Ask for every partner's record first: the walk waits for memory once. */
    for (uint32_t i = 0; i < pairs->len; i++)
        prefetch_read(ent(w, pair_slot(&pairs->items[i])));
    for (uint32_t i = 0; i < pairs->len; i++) {
        uint32_t t = pair_slot(&pairs->items[i]);
        unsigned before = pair_mask(&pairs->items[i]);
        entity *e = ent(w, t);
        e->mark = p.epoch;
        unsigned after =
            ch->removing ? 0
                         : (before & keep) | pair_mask_of(w->sense_count, me, ch->shp, e,
                                                          shape_at(w, e, t), out, visible, before);
        int moved = notify_moves && (pair_in(before) & pair_in(after));
        if (after != before || moved)
            push_change(&p, t, i, before, after, moved);
    }
    if (ch->removing)
        return w->changes.failed ? PERCEPT_ENOMEM : PERCEPT_OK;
    world_find_candidates(w, me, out, visible, visit_candidate, &p);
    return w->changes.failed ? PERCEPT_ENOMEM : PERCEPT_OK;
}

/* ---------------------------------------------------------------- applying a change */

/* Whether a backend must hear of the change; `reach`: the entity's new one for it. */
static int backend_touched(const percept_world *w, const change *ch, const backend_group *bg,
                           double reach)
{
    return ch->adding || ch->removing ||
           world_backend_moved(ent(w, ch->slot), &ch->next, bg, reach);
}

/* Asks for the entry of each partner's list that applying the changes
 * writes (the pair's, or the end for a new one), before phase 1 runs. */
static void prefetch_entries(const percept_world *w, uint32_t slot)
{
    const pair_list *own = &w->pairs[slot];
    for (size_t i = 0; i < w->changes.len; i++) {
        const pair_change *c = &w->changes.items[i];
        const pair_list *partner = &w->pairs[c->partner];
        if (c->before == c->after)
            continue;
        if (c->before != 0)
            prefetch_write(&partner->items[pair_back(&own->items[c->index])]);
        else if (partner->len < partner->cap)
            prefetch_write(&partner->items[partner->len]);
    }
}

/* Room for the shapes of every slot, all defaults (see world.h). */
int world_alloc_shapes(percept_world *w)
{
    size_t cap = w->slot_cap;
    if (cap > (SIZE_MAX - sizeof(shape)) / w->shape_bytes)
        return -1;
    unsigned char *shapes = pc_alloc(&w->alloc, cap * w->shape_bytes + sizeof(shape));
    if (!shapes)
        return -1;
    memset(shapes, 0, cap * w->shape_bytes + sizeof(shape));
    if (w->shapes)
        memcpy(shapes, w->shapes, w->slot_cap * w->shape_bytes);
    pc_free(&w->alloc, w->shapes);
    w->shapes = shapes;
    return 0;
}

/* The bucket of range r (> 0) in w->range_exp: its binary exponent, read
 * from its bits (a subnormal reads as the lowest, which it belongs in). */
static int range_bucket(double r)
{
    uint64_t bits;
    memcpy(&bits, &r, sizeof bits);
    int e = (int)(bits >> 52 & 0x7ff) - 1023 + RANGE_EXP_BIAS;
    return e < 0 ? 0 : e >= RANGE_EXP_BUCKETS ? RANGE_EXP_BUCKETS - 1 : e;
}

void world_count_ranges(percept_world *w, const entity *before, const entity *after)
{
    for (int s = 0; s < w->sense_count; s++) {
        if (before && before->range[s] > 0)
            w->range_exp[s][range_bucket(before->range[s])]--;
        if (after && after->range[s] > 0)
            w->range_exp[s][range_bucket(after->range[s])]++;
    }
}

static int apply_change(percept_world *w, const change *ch)
{
    const percept_allocator *a = &w->alloc;
    uint32_t slot = ch->slot;
    og_registration reg[2 * PERCEPT_MAX_SENSES];
    static const double no_range[PERCEPT_MAX_SENSES];
    const double *ranges = ch->removing ? no_range : ch->next.range;
    int staged = 0, touched[PERCEPT_MAX_SENSES];
    double reach[PERCEPT_MAX_SENSES]; /* per backend instance: what its index must cover */

    prefetch_entries(w, slot);
    /* Phase 1: every allocation, each undoable; nothing observable yet. */
    if (ch->adding && id_map_reserve(a, &w->ids, w->ids.count + 1))
        return PERCEPT_ENOMEM;
    /* The first entity with a shape makes room for every slot's (kept if
     * the change fails later: room only). */
    if (ch->reshaped && ch->next.shaped && !w->shapes && world_alloc_shapes(w))
        return PERCEPT_ENOMEM;
    /* The slot count after the change, as reserve() is promised: an add
     * that reuses a freed slot leaves it as it is. */
    uint32_t slot_count = w->slot_count + (slot == w->slot_count ? 1 : 0);
    for (int g = 0; g < w->backend_count; g++) {
        backend_group *bg = &w->backends[g];
        reach[g] = reach_of(&ch->next, bg->senses);
        touched[g] = backend_touched(w, ch, bg, reach[g]);
        if (!ch->removing && touched[g] &&
            bg->plugin.ops.reserve(bg->backend, slot_count, slot, ch->next.x, ch->next.y,
                                   ch->next.z, reach[g])) {
            w->refused_by = bg;
            return PERCEPT_ENOMEM;
        }
    }
    for (; staged < w->grid_count; staged++) {
        observer_grid *g = &w->grids[staged];
        /* A near grid holds those its grid counts as near (it comes after it). */
        int of = w->near_of[staged];
        reg[staged] = of < 0 || reg[of].cell == OG_NEAR
                          ? og_registration_for(g, ch->next.x, ch->next.y, ranges)
                          : og_registration_for(g, ch->next.x, ch->next.y, no_range);
        if (og_stage(a, g, slot, &reg[staged]))
            goto undo_grid;
    }
    /* The entity's own list takes all its new pairs at once: one growth,
     * not one per pair, when an entity arrives in a crowd. */
    pair_list *own = &w->pairs[slot];
    uint32_t new_pairs = 0;
    for (size_t i = 0; i < w->changes.len; i++)
        new_pairs += w->changes.items[i].before == 0;
    if (pair_list_reserve(a, own, new_pairs))
        goto undo_grid;
    size_t pushed = 0;
    for (; pushed < w->changes.len; pushed++) {
        const pair_change *c = &w->changes.items[pushed];
        if (c->before != 0)
            continue;
        pair_list *partner = &w->pairs[c->partner];
        uint32_t own_index = own->len, partner_index = partner->len;
        if (pair_list_push(a, own, pair_make(c->partner, partner_index, c->after)))
            goto undo_pairs;
        if (pair_list_push(a, partner, pair_make(slot, own_index, pair_swap(c->after)))) {
            own->len--;
            goto undo_pairs;
        }
    }

    /* Phase 2: apply; nothing here can fail. Backwards, so the entity's own
     * list loses its entries in falling index order: the last entry,
     * swapped into a removed one's place, is never one still to go. */
    for (size_t i = w->changes.len; i-- > 0;) {
        const pair_change *c = &w->changes.items[i];
        if (c->before == 0 || c->before == c->after)
            continue;
        pair_list *partner = &w->pairs[c->partner];
        pair *mine = &own->items[c->index];
        uint32_t partner_index = pair_back(mine);
        if (c->after) {
            pair_set_mask(mine, c->after);
            pair_set_mask(&partner->items[partner_index], pair_swap(c->after));
        } else {
            pair_list_remove_at(partner, partner_index, w->pairs);
            pair_list_remove_at(own, c->index, w->pairs);
            /* Each partner list loses at most this one entry in a call. */
            pair_list_shrink(a, partner);
        }
    }
    pair_list_shrink(a, own);
    for (int g = 0; g < w->grid_count; g++)
        og_commit(a, &w->grids[g], slot, &reg[g], ch->next.x, ch->next.y, ch->next.z, ranges);
    for (int g = 0; g < w->backend_count; g++) {
        backend_group *bg = &w->backends[g];
        if (ch->adding)
            bg->plugin.ops.insert(bg->backend, slot, ch->next.x, ch->next.y, ch->next.z, reach[g]);
        else if (ch->removing)
            bg->plugin.ops.remove(bg->backend, slot);
        else if (touched[g])
            bg->plugin.ops.update(bg->backend, slot, ch->next.x, ch->next.y, ch->next.z, reach[g]);
    }
    if (ch->adding) {
        id_map_insert(&w->ids, ch->next.id, slot);
        if (slot == w->slot_count)
            w->slot_count++;
        else
            w->free_count--; /* the slot was the top of the free stack */
    }
    entity *e = ent(w, slot);
    if (ch->adding || ch->removing || !ch->moved || ch->reshaped) /* a plain move keeps them */
        world_count_ranges(w, ch->adding ? NULL : e, ch->removing ? NULL : &ch->next);
    if (ch->removing) {
        pair_list_free(a, own);
        id_map_erase(&w->ids, e->id);
        e->alive = 0;
        e->shaped = 0;
        w->free_slots[w->free_count++] = slot;
    } else {
        uint32_t mark = e->mark; /* the copy in ch may be stale */
        memcpy(e, &ch->next, w->ent_bytes);
        e->mark = mark;
        if (ch->reshaped && ch->next.shaped)
            memcpy(w->shapes + (size_t)slot * w->shape_bytes, &w->next_shape, w->shape_bytes);
    }
    return PERCEPT_OK;

undo_pairs: /* each new pair was appended last */
    while (pushed-- > 0) {
        const pair_change *c = &w->changes.items[pushed];
        if (c->before == 0) {
            own->len--;
            w->pairs[c->partner].len--;
        }
    }
undo_grid:
    while (staged-- > 0)
        og_unstage(a, &w->grids[staged], slot, &reg[staged]);
    return PERCEPT_ENOMEM;
}

/* One pair's events in one direction, in sense order: ENTER for a sense
 * gained, LEAVE for one lost, and if `moved` MOVE for one held throughout.
 * Returns nonzero when the callback closed the world. */
static inline int deliver_pair(percept_world *w, percept_id observer, percept_id target,
                               const entity *t, unsigned before, unsigned after, unsigned moved)
{
    unsigned changed = before ^ after;
    unsigned fire = changed | (moved ? before & after : 0);
    for (; fire; fire &= fire - 1) {
        int s = __builtin_ctz(fire);
        unsigned bit = PERCEPT_SENSE_BIT(s);
        /* A struct for each call: a callback that writes through its
         * pointer must not change the next event. */
        percept_event out = {
            .observer = observer,
            .target = target,
            .x = t->x,
            .y = t->y,
            .z = t->z,
            .has_source = 1,
            .kind = !(changed & bit) ? PERCEPT_MOVE
                    : after & bit    ? PERCEPT_ENTER
                                     : PERCEPT_LEAVE,
            .sense = (percept_sense)s,
        };
        if (world_emit(w, &out))
            return 1;
    }
    return 0;
}

int world_deliver_pair(percept_world *w, percept_id observer, percept_id target, const entity *t,
                       unsigned before, unsigned after, unsigned moved)
{
    return deliver_pair(w, observer, target, t, before, after, moved);
}

/* The events where a partner observes the changing entity, for places
 * [from, to) of the partner ID order; its position is ch's (a removed
 * entity's record is gone). */
static int deliver_observed(percept_world *w, const change *ch, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const pair_change *c = change_buffer_nth(&w->changes, i);
        if (deliver_pair(w, c->partner_id, ch->next.id, &ch->next, pair_in(c->before),
                         pair_in(c->after), c->moved))
            return 1;
    }
    return 0;
}

/* Delivers the call's events by observer ID, target ID, then sense; stops
 * when the callback closes the world (the caller then frees it). */
static void deliver(percept_world *w, const change *ch)
{
    size_t n = w->changes.len;
    if (!world_wants_events(w) || n == 0)
        return;
    size_t below = change_buffer_order(&w->changes, ch->next.id);
    w->in_callback = 1;
    if (deliver_observed(w, ch, 0, below))
        goto closed;
    for (size_t i = 0; i < n; i++) {
        const pair_change *c = change_buffer_nth(&w->changes, i);
        if (deliver_pair(w, ch->next.id, c->partner_id, ent(w, c->partner), pair_out(c->before),
                         pair_out(c->after), 0))
            goto closed;
    }
    deliver_observed(w, ch, below, n);
closed:
    w->in_callback = 0;
}

/* A change that ran out of memory: the message names the entity, and the
 * backend if its reserve() refused (a plugin author's first question),
 * between the call's `before` and `after` words. */
static int out_of_memory(percept_world *w, const char *fn, const change *ch, const char *before,
                         const char *after)
{
    const backend_group *bg = w->refused_by;
    if (bg)
        return world_error(w, PERCEPT_ENOMEM,
                           "%s: %sentity %" PRIu32 ": out of memory: backend '%s' (%s) could not "
                           "make room (its reserve() failed)%s",
                           fn, before, ch->next.id, bg->plugin.ops.name, bg->plugin.path, after);
    return world_error(w, PERCEPT_ENOMEM, "%s: %sentity %" PRIu32 ": out of memory%s", fn, before,
                       ch->next.id, after);
}

/* run_change(): the callback closed the world, which is gone. */
#define WORLD_CLOSED 1

/* Compute, apply and deliver one entity's change. */
static int run_change(percept_world *w, const char *fn, const change *ch, unsigned observe_mask,
                      unsigned target_mask)
{
    w->refused_by = NULL;
    int rc = compute_changes(w, ch, observe_mask, target_mask);
    /* Each pair change brings at most one event per sense each way. */
    if (rc == PERCEPT_OK && world_reserve_events(w, w->changes.len * 2 * (size_t)w->sense_count))
        rc = PERCEPT_ENOMEM;
    if (rc == PERCEPT_OK)
        rc = apply_change(w, ch);
    if (rc != PERCEPT_OK) {
        w->changes.len = 0;
        return out_of_memory(w, fn, ch, "", "; the world is unchanged");
    }
    w->events_len = 0;
    deliver(w, ch);
    w->changes.len = 0;
    if (w->close_requested) {
        free_world(w);
        return WORLD_CLOSED;
    }
    return PERCEPT_OK;
}

/* A public call's status from run_change(): a closed world is no failure. */
static int change_made(int rc)
{
    return rc == WORLD_CLOSED ? PERCEPT_OK : rc;
}

/* ---------------------------------------------------------------- the calls that change a world */

int world_bad_position(percept_world *w, const char *fn, const char *where, percept_id id, double x,
                       double y, double z)
{
    return world_error(w, PERCEPT_EINVAL,
                       "%s: %sentity %" PRIu32 ": position (%.17g, %.17g, %.17g) must be finite "
                       "and within [-%g, %g]",
                       fn, where, id, x, y, z, PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT);
}

/* A number from 0 to PERCEPT_COORD_LIMIT: a range or a margin. */
static int valid_length(double v)
{
    return isfinite(v) && v >= 0 && v <= PERCEPT_COORD_LIMIT;
}

static int check_range(percept_world *w, const char *fn, percept_id id, percept_sense sense,
                       double range)
{
    if (valid_length(range))
        return PERCEPT_OK;
    return world_error(w, PERCEPT_EINVAL,
                       "%s: entity %" PRIu32 ": %s range %.17g must be a number from 0 to %g", fn,
                       id, w->sense_names[sense], range, PERCEPT_COORD_LIMIT);
}

/* Every changing call's first check (a NULL world has no message). */
int world_check_caller(percept_world *w, const char *fn)
{
    if (!w)
        return PERCEPT_EINVAL;
    if (w->in_callback)
        return world_error(w, PERCEPT_EBUSY,
                           "%s: called from inside the event callback; queue the change and "
                           "apply it after the call that delivered the event returns",
                           fn);
    return PERCEPT_OK;
}

/* Common checks of every changing call; on success *slot is the entity's.
 * Inline: with must_exist a constant, each call keeps only its own branch. */
static inline int enter_call(percept_world *w, const char *fn, percept_id id, int must_exist,
                             uint32_t *slot)
{
    int rc = world_check_caller(w, fn);
    if (rc)
        return rc;
    *slot = id_map_find(&w->ids, id);
    if (must_exist && *slot == ID_MAP_NONE)
        return world_error(w, PERCEPT_ENOENT, "%s: unknown entity %" PRIu32, fn, id);
    if (!must_exist && *slot != ID_MAP_NONE)
        return world_error(w, PERCEPT_EEXIST, "%s: entity %" PRIu32 " is already in the world", fn,
                           id);
    return PERCEPT_OK;
}

static int check_sense(percept_world *w, const char *fn, percept_id id, percept_sense sense)
{
    if (!valid_sense(w, sense))
        return world_error(w, PERCEPT_EINVAL,
                           "%s: entity %" PRIu32 ": sense %d is not one of the world's %d senses",
                           fn, id, (int)sense, w->sense_count);
    return PERCEPT_OK;
}

/* A struct of the size protocol (unknown_bytes_zero()) whose `size` is at
 * least what this library knows of it: no older version of it exists. */
static int check_size(percept_world *w, const char *fn, const char *type, const void *p,
                      size_t known)
{
    size_t size = *(const size_t *)p;
    if (size >= known && size <= 4096 && unknown_bytes_zero(p, known, size))
        return PERCEPT_OK;
    return world_error(w, PERCEPT_EINVAL,
                       "%s: %s.size is %zu: initialise it with its _INIT macro (this percept "
                       "knows %zu bytes of it)",
                       fn, type, size, known);
}

/* The fov a record keeps: 0 means 360. */
static double record_fov(double fov)
{
    return fov == 0 ? 360 : fov;
}

/* Whether a facing is all zeros, which no cone can use. */
static int no_facing(const double *f)
{
    return f[0] == 0 && f[1] == 0 && f[2] == 0;
}

/* The cone constant of the relation's rule 6, with PI the double nearest pi. */
static double cone_c(double fov)
{
    return cos(fov * (3.141592653589793 / 360));
}

/*
 * Check `desc` and make it the change's next state (the record and, in
 * w->next_shape, the shape), keeping ch->next's id, mark and alive.
 */
int world_read_desc(percept_world *w, const char *fn, percept_id id, const percept_entity_desc *d,
                    entity *next, shape *sh)
{
    if (!d)
        return world_error(w, PERCEPT_EINVAL, "%s: entity %" PRIu32 ": desc is NULL", fn, id);
    int rc = check_size(w, fn, "percept_entity_desc", d, sizeof *d);
    if (rc)
        return rc;
    if (!valid_coord(d->x) || !valid_coord(d->y) || !valid_coord(d->z))
        return world_bad_position(w, fn, "", id, d->x, d->y, d->z);
    if (!valid_coord(d->facing[0]) || !valid_coord(d->facing[1]) || !valid_coord(d->facing[2]))
        return world_error(w, PERCEPT_EINVAL,
                           "%s: entity %" PRIu32 ": facing (%.17g, %.17g, %.17g) must be finite "
                           "and within [-%g, %g]",
                           fn, id, d->facing[0], d->facing[1], d->facing[2], PERCEPT_COORD_LIMIT,
                           PERCEPT_COORD_LIMIT);
    if (d->hidden & ~w->all_senses)
        return world_error(w, PERCEPT_EINVAL,
                           "%s: entity %" PRIu32 ": hidden mask 0x%x has bits beyond the world's "
                           "%d senses",
                           fn, id, d->hidden, w->sense_count);
    memset(sh, 0, sizeof *sh);
    int shaped = !no_facing(d->facing);
    for (int s = 0; s < PERCEPT_MAX_SENSES; s++) {
        const percept_sense_params *p = &d->sense[s];
        if (s >= w->sense_count) {
            if (p->range != 0 || p->margin != 0 || p->fov != 0 || p->ignore != 0)
                return world_error(w, PERCEPT_EINVAL,
                                   "%s: entity %" PRIu32 ": sense[%d] is set, but the world has "
                                   "%d senses",
                                   fn, id, s, w->sense_count);
            continue;
        }
        const char *name = w->sense_names[s];
        if ((rc = check_range(w, fn, id, s, p->range)))
            return rc;
        if (!valid_length(p->margin))
            return world_error(w, PERCEPT_EINVAL,
                               "%s: entity %" PRIu32 ": %s.margin %.17g must be a number from 0 "
                               "to %g",
                               fn, id, name, p->margin, PERCEPT_COORD_LIMIT);
        if (!(p->fov >= 0 && p->fov <= 360))
            return world_error(w, PERCEPT_EINVAL,
                               "%s: entity %" PRIu32 ": %s.fov %.17g must be above 0 and at most "
                               "360 degrees (0: no cone)",
                               fn, id, name, p->fov);
        double fov = record_fov(p->fov);
        if (fov < 360 && no_facing(d->facing))
            return world_error(w, PERCEPT_EINVAL,
                               "%s: entity %" PRIu32 ": %s.fov %.17g is a cone, which needs a "
                               "facing; the facing is (0, 0, 0)",
                               fn, id, name, fov);
        sh->sense[s] = (sense_shape){
            .margin = p->margin > 0 ? p->margin : 0,
            .fov = fov,
            .c = fov < 360 ? cone_c(fov) : -1, /* no cone: never read */
            .ignore = p->ignore,
        };
        shaped |= p->margin > 0 || fov < 360 || p->ignore != 0;
        next->range[s] = entity_range(p->range);
    }
    memcpy(sh->facing, d->facing, sizeof sh->facing);
    sh->ff =
        d->facing[0] * d->facing[0] + d->facing[1] * d->facing[1] + d->facing[2] * d->facing[2];
    next->x = d->x;
    next->y = d->y;
    next->z = d->z;
    next->tags = d->tags;
    next->hidden = (uint8_t)d->hidden;
    next->shaped = (uint8_t)shaped;
    return PERCEPT_OK;
}

/* world_read_desc() into a single call's change, its shape in w->next_shape. */
static int read_desc(percept_world *w, const char *fn, percept_id id, const percept_entity_desc *d,
                     change *ch)
{
    int rc = world_read_desc(w, fn, id, d, &ch->next, &w->next_shape);
    if (rc)
        return rc;
    ch->shp = ch->next.shaped ? &w->next_shape : NULL;
    ch->reshaped = 1;
    return PERCEPT_OK;
}

/* Grow every per-slot array to hold `cap` slots. Invisible if it fails: the
 * new arrays take over only when all of them exist, so slot_cap always
 * tells what is held (memory reports count on it). */
static int grow_slots(percept_world *w, size_t cap)
{
    const percept_allocator *a = &w->alloc;
    if (cap > PAIR_SLOT_LIMIT)
        cap = PAIR_SLOT_LIMIT;
    size_t stride = (size_t)1 << w->ent_shift;
    if (cap > (SIZE_MAX - sizeof(entity) - 64) / stride)
        return -1;
    /* A whole struct past the last record, so that a copy of any record as
     * a struct stays inside the block; and room to align by hand, as the
     * allocator promises malloc's alignment only. */
    size_t bytes = cap * stride + sizeof(entity) + 64;
    void *block = pc_alloc(a, bytes);
    uint32_t *free_slots = pc_alloc(a, cap * sizeof *w->free_slots);
    pair_list *pairs = pc_alloc(a, cap * sizeof *w->pairs);
    unsigned char *shapes = NULL;
    int failed = !block || !free_slots || !pairs;
    if (!failed && w->shapes) {
        shapes = pc_alloc(a, cap * w->shape_bytes + sizeof(shape));
        failed = !shapes;
    }
    /* An observer grid keeps its own capacity: growing one and not the
     * next leaves nothing to undo. */
    for (int g = 0; g < w->grid_count && !failed; g++)
        failed = og_reserve_slots(a, &w->grids[g], cap) != 0;
    if (failed) {
        pc_free(a, block);
        pc_free(a, free_slots);
        pc_free(a, pairs);
        pc_free(a, shapes);
        return -1;
    }
    unsigned char *ents = (unsigned char *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
    size_t old = w->slot_cap;
    memset(ents, 0, cap * stride + sizeof(entity));
    if (old) {
        memcpy(ents, w->ents, old * stride);
        memcpy(free_slots, w->free_slots, old * sizeof *free_slots);
        memcpy(pairs, w->pairs, old * sizeof *pairs);
    }
    memset(pairs + old, 0, (cap - old) * sizeof *pairs);
    if (shapes) {
        memset(shapes, 0, cap * w->shape_bytes + sizeof(shape));
        memcpy(shapes, w->shapes, old * w->shape_bytes);
        pc_free(a, w->shapes);
        w->shapes = shapes;
    }
    pc_free(a, w->ents_block);
    pc_free(a, w->free_slots);
    pc_free(a, w->pairs);
    w->ents_block = block;
    w->ents = ents;
    w->free_slots = free_slots;
    w->pairs = pairs;
    for (int g = 0; g < w->grid_count; g++)
        for (size_t i = old; i < cap; i++)
            og_clear_slot(&w->grids[g], (uint32_t)i);
    w->slot_cap = cap;
    return 0;
}

int world_reserve(percept_world *w, size_t count)
{
    if (count > w->slot_cap && grow_slots(w, count))
        return -1;
    return id_map_reserve(&w->alloc, &w->ids, count);
}

int percept_add(percept_world *w, percept_id id, const percept_entity_desc *desc)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 0, &slot);
    if (rc)
        return rc;
    change ch = {.adding = 1, .next = {.id = id, .alive = 1}};
    if ((rc = read_desc(w, __func__, id, desc, &ch)))
        return rc;
    if (w->slot_count == PAIR_SLOT_LIMIT && w->free_count == 0)
        return world_error(w, PERCEPT_ENOMEM, "%s: the world is full", __func__);
    if (w->free_count == 0 && w->slot_count == w->slot_cap &&
        grow_slots(w, w->slot_cap ? w->slot_cap * 2 : 64))
        return world_error(w, PERCEPT_ENOMEM,
                           "%s: entity %" PRIu32 ": out of memory; the world is unchanged",
                           __func__, id);
    ch.slot = w->free_count ? w->free_slots[w->free_count - 1] : w->slot_count;
    return change_made(run_change(w, __func__, &ch, w->all_senses, w->all_senses));
}

/* The change of the entity in `slot` that keeps it as it is, to be edited. */
static change unchanged(const percept_world *w, uint32_t slot)
{
    return (change){.slot = slot, .next = *ent(w, slot), .shp = shape_of(w, slot)};
}

int percept_update(percept_world *w, percept_id id, const percept_entity_desc *desc)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc)
        return rc;
    change ch = unchanged(w, slot);
    if ((rc = read_desc(w, __func__, id, desc, &ch)))
        return rc;
    const entity *old = ent(w, slot);
    ch.moved = old->x != ch.next.x || old->y != ch.next.y || old->z != ch.next.z;
    return change_made(run_change(w, __func__, &ch, w->all_senses, w->all_senses));
}

/* The change moving the entity in `slot` to (x, y, z), for the moves; 0
 * when it is there already: no change, no events. */
static int move_change(const percept_world *w, uint32_t slot, double x, double y, double z,
                       change *ch)
{
    *ch = unchanged(w, slot);
    if (ch->next.x == x && ch->next.y == y && ch->next.z == z)
        return 0;
    ch->next.x = x;
    ch->next.y = y;
    ch->next.z = z;
    ch->moved = 1;
    return 1;
}

int percept_move3(percept_world *w, percept_id id, double x, double y, double z)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc)
        return rc;
    if (!valid_coord(x) || !valid_coord(y) || !valid_coord(z))
        return world_bad_position(w, __func__, "", id, x, y, z);
    change ch;
    if (!move_change(w, slot, x, y, z, &ch))
        return world_no_events(w);
    return change_made(run_change(w, __func__, &ch, w->all_senses, w->all_senses));
}

int percept_move(percept_world *w, percept_id id, double x, double y)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc)
        return rc;
    double z = ent(w, slot)->z;
    if (!valid_coord(x) || !valid_coord(y))
        return world_bad_position(w, __func__, "", id, x, y, z);
    change ch;
    if (!move_change(w, slot, x, y, z, &ch))
        return world_no_events(w);
    return change_made(run_change(w, __func__, &ch, w->all_senses, w->all_senses));
}

int percept_turn(percept_world *w, percept_id id, double fx, double fy, double fz)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc)
        return rc;
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    world_describe(w, slot, &d);
    d.facing[0] = fx;
    d.facing[1] = fy;
    d.facing[2] = fz;
    change ch = unchanged(w, slot);
    if ((rc = read_desc(w, __func__, id, &d, &ch)))
        return rc;
    /* Facing is the observer's alone: what others perceive of it stays. */
    return change_made(run_change(w, __func__, &ch, w->all_senses, 0));
}

int percept_remove(percept_world *w, percept_id id)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc)
        return rc;
    change ch = unchanged(w, slot);
    ch.removing = 1;
    return change_made(run_change(w, __func__, &ch, w->all_senses, w->all_senses));
}

int percept_set_range(percept_world *w, percept_id id, percept_sense sense, double range)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc || (rc = check_sense(w, __func__, id, sense)) ||
        (rc = check_range(w, __func__, id, sense, range)))
        return rc;
    change ch = unchanged(w, slot);
    ch.next.range[sense] = entity_range(range);
    return change_made(run_change(w, __func__, &ch, PERCEPT_SENSE_BIT(sense), 0));
}

int percept_set_hidden(percept_world *w, percept_id id, percept_sense sense, int hidden)
{
    uint32_t slot;
    int rc = enter_call(w, __func__, id, 1, &slot);
    if (rc || (rc = check_sense(w, __func__, id, sense)))
        return rc;
    change ch = unchanged(w, slot);
    unsigned bit = PERCEPT_SENSE_BIT(sense);
    ch.next.hidden = (uint8_t)(hidden ? ch.next.hidden | bit : ch.next.hidden & ~bit);
    return change_made(run_change(w, __func__, &ch, 0, bit));
}

/* ---------------------------------------------------------------- stimuli */

/* An emit's search for its observers. */
typedef struct emission {
    percept_world *w;
    const percept_stimulus *st;
    double strength;
    uint32_t source; /* its slot, or UINT32_MAX */
    uint32_t epoch;
} emission;

/* A candidate observer of a stimulus, tested once by the rules of
 * docs/trace-format.md, "Stimuli". */
static void visit_listener(void *ctx, percept_slot o)
{
    emission *em = ctx;
    percept_world *w = em->w;
    const percept_stimulus *st = em->st;
    if (o == em->source || o >= w->slot_count)
        return;
    entity *e = ent(w, o);
    if (!e->alive || e->mark == em->epoch)
        return;
    e->mark = em->epoch;
    int s = st->sense;
    const shape *os = shape_at(w, e, o);
    if (!(e->range[s] > 0) || (os && (os->sense[s].ignore & st->tags)))
        return;
    double dx = st->x - e->x, dy = st->y - e->y, dz = st->z - e->z;
    double dd = dx * dx + dy * dy + dz * dz, l = em->strength * e->range[s];
    if (!(dd <= l * l))
        return;
    if (os && os->sense[s].fov != 360 && dd != 0 && !in_cone(os, os->sense[s].c, dx, dy, dz, dd))
        return;
    pair_change c = {.partner_id = e->id, .partner = o};
    change_buffer_push(&w->alloc, &w->changes, &c);
}

/* A bound on the ranges of `sense`: 0 when no entity has it. */
static double range_bound(const percept_world *w, int sense)
{
    for (int b = RANGE_EXP_BUCKETS - 1; b >= 0; b--)
        if (w->range_exp[sense][b])
            return ldexp(1, b - RANGE_EXP_BIAS + 1);
    return 0;
}

int percept_emit(percept_world *w, const percept_stimulus *st)
{
    int rc = world_check_caller(w, __func__);
    if (rc)
        return rc;
    if (!st)
        return world_error(w, PERCEPT_EINVAL, "%s: stimulus is NULL", __func__);
    if ((rc = check_size(w, __func__, "percept_stimulus", st, sizeof *st)))
        return rc;
    if (!valid_sense(w, st->sense))
        return world_error(w, PERCEPT_EINVAL, "%s: sense %d is not one of the world's %d senses",
                           __func__, (int)st->sense, w->sense_count);
    if (!valid_coord(st->x) || !valid_coord(st->y) || !valid_coord(st->z))
        return world_error(w, PERCEPT_EINVAL,
                           "%s: point (%.17g, %.17g, %.17g) must be finite and within [-%g, %g]",
                           __func__, st->x, st->y, st->z, PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT);
    if (!valid_length(st->strength))
        return world_error(w, PERCEPT_EINVAL,
                           "%s: strength %.17g must be a number above 0 and at most %g (0: 1)",
                           __func__, st->strength, PERCEPT_COORD_LIMIT);
    emission em = {
        .w = w, .st = st, .strength = st->strength > 0 ? st->strength : 1, .source = UINT32_MAX};
    if (st->has_source) {
        em.source = id_map_find(&w->ids, st->source);
        if (em.source == ID_MAP_NONE)
            return world_error(w, PERCEPT_ENOENT, "%s: unknown source entity %" PRIu32, __func__,
                               st->source);
    }
    double bound = range_bound(w, st->sense);
    if (bound == 0)
        return world_no_events(w);
    w->changes.len = 0;
    w->changes.failed = 0;
    em.epoch = next_epoch(w);
    const backend_group *bg = &w->backends[w->backend_of[st->sense]];
    bg->plugin.ops.query(bg->backend, st->x, st->y, st->z, em.strength * bound, visit_listener,
                         &em);
    if (w->changes.failed) {
        w->changes.len = 0;
        return world_error(w, PERCEPT_ENOMEM, "%s: out of memory; nothing was delivered", __func__);
    }
    size_t n = w->changes.len;
    if (world_reserve_events(w, n)) {
        w->changes.len = 0;
        return world_error(w, PERCEPT_ENOMEM, "%s: out of memory; nothing was delivered", __func__);
    }
    w->events_len = 0;
    if (!world_wants_events(w) || n == 0) {
        w->changes.len = 0;
        return PERCEPT_OK;
    }
    change_buffer_order(&w->changes, 0);
    w->in_callback = 1;
    for (size_t i = 0; i < n && !w->close_requested; i++) {
        percept_event out = {
            .kind = PERCEPT_STIMULUS,
            .sense = st->sense,
            .observer = change_buffer_nth(&w->changes, i)->partner_id,
            .target = st->has_source ? st->source : 0,
            .x = st->x,
            .y = st->y,
            .z = st->z,
            .has_source = st->has_source != 0,
        };
        world_emit(w, &out);
    }
    w->in_callback = 0;
    w->changes.len = 0;
    if (w->close_requested)
        free_world(w);
    return PERCEPT_OK;
}
