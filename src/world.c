/*
 * world.c - the core manager once a world exists (world_open.c creates it,
 * world_read.c answers the calls that read its entities and pairs): entity
 * records, pair state, the last message, and the one algorithm every change
 * goes through. A call first computes its pair
 * changes from the stored pair state without touching it, then makes every
 * allocation the change needs (each undoable), then applies the change with
 * operations that cannot fail, and only then delivers the events, one per
 * sense a pair gains, loses or (MOVE) keeps. So a call
 * either happens whole or, on any error, leaves the world as it was.
 */
#include "world.h"

#include <inttypes.h>
#include <math.h>
#if defined(__SSE2__) && !defined(PERCEPT_NO_SIMD)
#include <emmintrin.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ieee_double.h"
#include "key_sort.h"
#include "prefetch.h"
#include "message.h"

#define ALL_SENSES ((1u << PERCEPT_SENSE_COUNT) - 1)
/* How much wider than its own reach a mover's query may grow to find the
 * near observers too, on a backend whose queries are not local: a strip
 * or a scan a quarter wider, against a near grid's cells read. */
#define NEAR_WIDENING 1.25

_Static_assert(PERCEPT_SENSE_COUNT == 3, "senses_within() tests three senses");

static int set_error(percept_world *w, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int set_error(percept_world *w, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message_vformat(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
    w->err_index = SIZE_MAX;
    return status;
}

/* After set_error(): the failure is that of entry i of a batch. */
static int entry_error(percept_world *w, int status, size_t i)
{
    w->err_index = i;
    return status;
}

/* ====================================================================== */
/* The event callback and the last message                                 */

int percept_set_event_callback(percept_world *w, percept_event_fn fn, void *user)
{
    if (!w)
        return PERCEPT_EINVAL;
    if (w->in_callback)
        return set_error(w, PERCEPT_EBUSY,
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

/* ====================================================================== */
/* Computing a call's pair changes                                        */

/*
 * Which of the three senses hold both ways at squared distance d2: bit s of
 * *sees when d2 <= r[s] * r[s], of *seen when d2 <= q[s] * q[s]. Each compare
 * is the specification's dx*dx + dy*dy <= r*r; a NaN range (a lacking
 * sense, see entity_range()) satisfies none, so "the range is greater than
 * 0" needs no test of its own. Branch-free: a list walk tests every pair,
 * and which senses hold is as good as random to the branch predictor.
 *
 * With SSE2 (every x86-64) the six products and compares go two at a time:
 * the same IEEE operations on the same numbers, so the same bits, in about
 * a third of the instructions (a move tests some 25 pairs: 6% of its
 * instructions, callgrind). PERCEPT_NO_SIMD selects the plain form, which
 * other processors use; CI's sanitizer build runs the suite with it.
 */
static inline void senses_within(double d2, const double *r, const double *q, unsigned *sees,
                                 unsigned *seen)
{
#if defined(__SSE2__) && !defined(PERCEPT_NO_SIMD)
    __m128d d = _mm_set1_pd(d2);
    __m128d r01 = _mm_loadu_pd(r), q01 = _mm_loadu_pd(q), rq2 = _mm_set_pd(q[2], r[2]);
    unsigned lo = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(r01, r01)));
    unsigned hi = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(q01, q01)));
    unsigned third = (unsigned)_mm_movemask_pd(_mm_cmple_pd(d, _mm_mul_pd(rq2, rq2)));
    *sees = lo | (third & 1) << 2;
    *seen = hi | (third & 2) << 1;
#else
    *sees = (unsigned)(d2 <= r[0] * r[0]) | (unsigned)(d2 <= r[1] * r[1]) << 1 |
            (unsigned)(d2 <= r[2] * r[2]) << 2;
    *seen = (unsigned)(d2 <= q[0] * q[0]) | (unsigned)(d2 <= q[1] * q[1]) << 1 |
            (unsigned)(d2 <= q[2] * q[2]) << 2;
#endif
}

/*
 * The relation between the changing entity `me` and `t`, as me's pair list
 * keeps it (see pair_list.h): the senses of `out` in which me perceives t,
 * and those of `in_visible` (the call's `in` less the senses me is hidden
 * from, the same for every partner) in which t perceives me. One squared
 * distance serves every sense and both directions: negating a difference is
 * exact, so it is the same number either way.
 */
static inline unsigned pair_mask_of(const entity *me, const entity *t, unsigned out,
                                    unsigned in_visible)
{
    double dx = t->x - me->x, dy = t->y - me->y, d2 = dx * dx + dy * dy;
    unsigned sees, seen;
    senses_within(d2, me->range, t->range, &sees, &seen);
    return (sees & out & ~(unsigned)t->hidden) | (seen & in_visible) << PAIR_IN_SHIFT;
}

/* A public range as an entity record keeps it: NaN for 0 or -0, a lacking sense. */
static double entity_range(double range)
{
    return range > 0 ? range : NAN;
}

/* The largest of an entity's ranges among `senses`: what an index must cover. */
static double reach_of(const entity *e, unsigned senses)
{
    double r = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if ((senses & PERCEPT_SENSE_BIT(s)) && e->range[s] > r)
            r = e->range[s];
    return r;
}

static uint32_t next_epoch(percept_world *w)
{
    if (++w->epoch == 0) {
        /* After 2^32 passes, old stamps could collide with new ones: reset. */
        for (size_t i = 0; i < w->slot_cap; i++)
            w->ents[i].mark = 0;
        w->epoch = 1;
    }
    return w->epoch;
}

/* One entity's change: its state after the call. */
typedef struct change {
    uint32_t slot;
    entity next;
    int adding, removing, moved;
} change;

/* A call's search for the changing entity's pair changes. */
typedef struct pass {
    percept_world *w;
    const change *ch;
    unsigned out; /* the senses in which its perceiving others can change */
    /* Those in which its being perceived can change, less those it is hidden from. */
    unsigned in_visible;
    uint32_t epoch;
} pass;

static void push_change(pass *p, uint32_t partner, uint32_t index, unsigned before, unsigned after,
                        int moved)
{
    percept_world *w = p->w;
    /* Applying a change of senses reads the partner's list: its head now,
     * so that apply_change() can ask for the entry ahead (prefetch_entries()).
     * A change of MOVE events alone writes no list. */
    if (before != after)
        prefetch_read(&w->pairs[partner]);
    pair_change c = {
        .partner_id = w->ents[partner].id,
        .partner = partner,
        .index = index,
        .before = (uint8_t)before,
        .after = (uint8_t)after,
        .moved = (uint8_t)moved,
    };
    change_buffer_push(&w->alloc, &w->changes, &c);
}

/* A candidate partner from a backend or an observer grid: tested unless the
 * call met it already, and only if it is a live entity other than the
 * changing one (checked so a faulty plugin cannot corrupt us). */
static void visit_candidate(void *ctx, percept_slot t)
{
    pass *p = ctx;
    percept_world *w = p->w;
    if (t == p->ch->slot || t >= w->slot_count)
        return;
    entity *e = &w->ents[t];
    if (!e->alive || e->mark == p->epoch)
        return;
    e->mark = p->epoch;
    unsigned after = pair_mask_of(&p->ch->next, e, p->out, p->in_visible);
    if (after)
        push_change(p, t, PAIR_NONE, 0, after, 0);
}

/* The radius backend g must be asked with for the call's candidates (0:
 * none): the entity's reach in the backend's senses where its perceiving
 * can change, and the near radius of each observer grid this backend finds
 * near observers for, where its being perceived can. One query of the
 * largest serves all: every candidate is tested both ways. */
static double query_radius(const pass *p, int g)
{
    const percept_world *w = p->w;
    double reach = reach_of(&p->ch->next, w->backends[g].senses & p->out), radius = reach;
    int local = (w->backends[g].plugin.ops.query_hints & PERCEPT_BACKEND_QUERY_LOCAL) != 0;
    for (int i = 0; i < w->grid_count; i++) {
        if (w->near_of[i] >= 0 || w->near_backend[i] != g || !(w->grids[i].senses & p->in_visible))
            continue;
        /* A backend whose queries are not local widens its query only a
         * little for the near observers; else the near grid answers. */
        double near = og_near_radius(&w->grids[i]);
        if (near > radius && (local || near <= NEAR_WIDENING * reach))
            radius = near;
    }
    return radius;
}

/*
 * The changing entity's pairs re-tested, then its candidates: from each
 * backend, those within its reach or that of a near observer; from each
 * observer grid, the far-sighted observers that may reach it. Every entity
 * met is marked, so one met twice is tested once, both ways.
 */
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
    int notify_moves = ch->moved && w->move_events && w->on_event;
    /* Every partner's record is asked for before the first is read: the
     * walk then waits for memory about once, not once a partner. */
    for (uint32_t i = 0; i < pairs->len; i++)
        prefetch_read(&w->ents[pair_slot(pairs->items[i].entry)]);
    for (uint32_t i = 0; i < pairs->len; i++) {
        uint32_t t = pair_slot(pairs->items[i].entry);
        unsigned before = pair_mask(pairs->items[i].entry);
        entity *e = &w->ents[t];
        e->mark = p.epoch;
        unsigned after = ch->removing ? 0 : (before & keep) | pair_mask_of(me, e, out, visible);
        int moved = notify_moves && (pair_in(before) & pair_in(after));
        if (after != before || moved)
            push_change(&p, t, i, before, after, moved);
    }
    if (ch->removing)
        return w->changes.failed ? PERCEPT_ENOMEM : PERCEPT_OK;
    /* Every backend holds every entity, so its query met all those within
     * its radius, whatever their senses: the observer grids need not name
     * them again (in a crowd, hundreds of observers a call). */
    double covered2 = -1;
    for (int g = 0; g < w->backend_count; g++) {
        const backend_group *bg = &w->backends[g];
        double r = query_radius(&p, g);
        if (r > 0) {
            bg->plugin.ops.query(bg->backend, me->x, me->y, r, visit_candidate, &p);
            if (r * r > covered2)
                covered2 = r * r; /* the backend's own test: dx*dx + dy*dy <= r*r */
        }
    }
    for (int g = 0; visible && g < w->grid_count; g++) {
        const observer_grid *grid = &w->grids[g];
        if (!(grid->senses & visible))
            continue;
        /* Every near observer that perceives the entity stands within the
         * near radius of it: a query that reached that far met them all. */
        int of = w->near_of[g];
        if (of >= 0) {
            double near = og_near_radius(&w->grids[of]);
            if (covered2 >= near * near)
                continue;
        }
        og_query(grid, me->x, me->y, grid->senses & visible, covered2, visit_candidate, &p);
    }
    return w->changes.failed ? PERCEPT_ENOMEM : PERCEPT_OK;
}

/* ====================================================================== */
/* Applying a change                                                       */

/* Take back the first `done` changes' new pairs (each was appended last). */
static void undo_new_pairs(percept_world *w, const change *ch, size_t done)
{
    while (done-- > 0) {
        const pair_change *c = &w->changes.items[done];
        if (c->before == 0) {
            w->pairs[ch->slot].len--;
            w->pairs[c->partner].len--;
        }
    }
}

/* Whether a backend must hear of the change; `reach`: the entity's new one for it. */
static int backend_touched(const percept_world *w, const change *ch, const backend_group *bg,
                           double reach)
{
    if (ch->adding || ch->removing)
        return 1;
    const entity *old = &w->ents[ch->slot];
    return old->x != ch->next.x || old->y != ch->next.y || reach_of(old, bg->senses) != reach;
}

/* Asks for the entry of each partner's list that applying the changes
 * writes (the pair's, or the end for a new one with room there), before the
 * steps of phase 1 below: a teleport writes some fifty lists. A change of
 * MOVE events alone writes none. */
static void prefetch_entries(const percept_world *w, uint32_t slot)
{
    const pair_list *own = &w->pairs[slot];
    for (size_t i = 0; i < w->changes.len; i++) {
        const pair_change *c = &w->changes.items[i];
        const pair_list *partner = &w->pairs[c->partner];
        if (c->before == c->after)
            continue;
        if (c->before != 0)
            prefetch_write(&partner->items[own->items[c->index].back]);
        else if (partner->len < partner->cap)
            prefetch_write(&partner->items[partner->len]);
    }
}

static int apply_change(percept_world *w, const change *ch)
{
    const percept_allocator *a = &w->alloc;
    uint32_t slot = ch->slot;
    og_registration reg[2 * PERCEPT_SENSE_COUNT];
    static const double no_range[PERCEPT_SENSE_COUNT];
    const double *ranges = ch->removing ? no_range : ch->next.range;
    int staged = 0, touched[PERCEPT_SENSE_COUNT];
    double reach[PERCEPT_SENSE_COUNT]; /* per backend instance: what its index must cover */

    prefetch_entries(w, slot);
    /* Phase 1: every allocation, each undoable; nothing observable yet. */
    if (ch->adding && id_map_reserve(a, &w->ids, w->ids.count + 1))
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
                                   reach[g])) {
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
        if (pair_list_push(a, own, pair_entry(c->partner, c->after), partner_index))
            goto undo_pairs;
        if (pair_list_push(a, partner, pair_entry(slot, pair_swap(c->after)), own_index)) {
            own->len--;
            goto undo_pairs;
        }
    }

    /*
     * Phase 2: apply; nothing here can fail. Backwards, so the entity's own
     * list loses its entries in falling index order: the last entry,
     * swapped into a removed one's place, is never one still to go.
     */
    for (size_t i = w->changes.len; i-- > 0;) {
        const pair_change *c = &w->changes.items[i];
        if (c->before == 0 || c->before == c->after)
            continue;
        pair_list *partner = &w->pairs[c->partner];
        pair *mine = &own->items[c->index];
        uint32_t partner_index = mine->back;
        if (c->after) {
            mine->entry = pair_entry(c->partner, c->after);
            partner->items[partner_index].entry = pair_entry(slot, pair_swap(c->after));
        } else {
            pair_list_remove_at(partner, partner_index, w->pairs);
            pair_list_remove_at(own, c->index, w->pairs);
            /* Each partner list loses at most this one entry in a call. */
            pair_list_shrink(a, partner);
        }
    }
    pair_list_shrink(a, own);
    for (int g = 0; g < w->grid_count; g++)
        og_commit(a, &w->grids[g], slot, &reg[g], ch->next.x, ch->next.y, ranges);
    for (int g = 0; g < w->backend_count; g++) {
        backend_group *bg = &w->backends[g];
        if (ch->adding)
            bg->plugin.ops.insert(bg->backend, slot, ch->next.x, ch->next.y, reach[g]);
        else if (ch->removing)
            bg->plugin.ops.remove(bg->backend, slot);
        else if (touched[g])
            bg->plugin.ops.update(bg->backend, slot, ch->next.x, ch->next.y, reach[g]);
    }
    if (ch->adding) {
        id_map_insert(&w->ids, ch->next.id, slot);
        if (slot == w->slot_count)
            w->slot_count++;
        else
            w->free_count--; /* the slot was the top of the free stack */
    }
    if (ch->removing) {
        pair_list_free(a, own);
        id_map_erase(&w->ids, w->ents[slot].id);
        w->ents[slot].alive = 0;
        w->free_slots[w->free_count++] = slot;
    } else {
        uint32_t mark = w->ents[slot].mark; /* the copy in ch may be stale */
        w->ents[slot] = ch->next;
        w->ents[slot].mark = mark;
    }
    return PERCEPT_OK;

undo_pairs:
    undo_new_pairs(w, ch, pushed);
undo_grid:
    while (staged-- > 0)
        og_unstage(a, &w->grids[staged], slot, &reg[staged]);
    return PERCEPT_ENOMEM;
}

/* One pair's events in one direction, in sense order: ENTER for a sense
 * gained, LEAVE for one lost, and with MOVE records MOVE for one held
 * throughout. Each call of the callback gets its own event. Returns nonzero
 * when the callback closed the world. */
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
            .kind = !(changed & bit) ? PERCEPT_MOVE
                    : after & bit    ? PERCEPT_ENTER
                                     : PERCEPT_LEAVE,
            .sense = (percept_sense)s,
        };
        w->on_event(w->on_event_user, &out);
        if (w->close_requested)
            return 1;
    }
    return 0;
}

/* The events where a partner observes the changing entity, for the changes
 * at places [from, to) of the partner ID order. After a removal the
 * entity's record is gone: its last position is taken from ch. */
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

/* Delivers the call's events, in order (by observer ID, target ID, then
 * sense); stops early when the callback closes the world (the caller then
 * frees it). */
static void deliver(percept_world *w, const change *ch)
{
    size_t n = w->changes.len;
    if (!w->on_event || n == 0)
        return;
    size_t below = change_buffer_order(&w->changes, ch->next.id);
    w->in_callback = 1;
    if (deliver_observed(w, ch, 0, below))
        goto closed;
    for (size_t i = 0; i < n; i++) {
        const pair_change *c = change_buffer_nth(&w->changes, i);
        if (deliver_pair(w, ch->next.id, c->partner_id, &w->ents[c->partner], pair_out(c->before),
                         pair_out(c->after), 0))
            goto closed;
    }
    deliver_observed(w, ch, below, n);
closed:
    w->in_callback = 0;
}

/* Why a change ran out of memory, for messages: the entity, and the backend
 * if it was its reserve() that refused (a plugin author's first question). */
static void out_of_memory_detail(const percept_world *w, const change *ch, char *out, size_t size)
{
    const backend_group *bg = w->refused_by;
    if (bg)
        snprintf(out, size,
                 "entity %" PRIu32 ": out of memory: backend '%s' (%s) could not make room (its "
                 "reserve() failed)",
                 ch->next.id, bg->plugin.ops.name, bg->plugin.path);
    else
        snprintf(out, size, "entity %" PRIu32 ": out of memory", ch->next.id);
}

/* A change that ran out of memory: the call's message. */
static int out_of_memory(percept_world *w, const char *fn, const change *ch)
{
    char detail[sizeof w->errmsg];
    out_of_memory_detail(w, ch, detail, sizeof detail);
    return set_error(w, PERCEPT_ENOMEM, "%s: %s; the world is unchanged", fn, detail);
}

/* What run_change() returns when the callback closed the world, which is
 * gone when it returns: the public call returns PERCEPT_OK at once. */
#define WORLD_CLOSED 1

/* Compute, apply and deliver one entity's change. */
static int run_change(percept_world *w, const char *fn, const change *ch, unsigned observe_mask,
                      unsigned target_mask)
{
    w->refused_by = NULL;
    int rc = compute_changes(w, ch, observe_mask, target_mask);
    if (rc == PERCEPT_OK)
        rc = apply_change(w, ch);
    if (rc != PERCEPT_OK) {
        w->changes.len = 0;
        return out_of_memory(w, fn, ch);
    }
    deliver(w, ch);
    w->changes.len = 0;
    if (w->close_requested) {
        free_world(w);
        return WORLD_CLOSED;
    }
    return PERCEPT_OK;
}

/* A public call's status from run_change(): the change was made, and a
 * world its callback closed is no failure of the call. */
static int change_made(int rc)
{
    return rc == WORLD_CLOSED ? PERCEPT_OK : rc;
}

/* ====================================================================== */
/* The public calls that change the world                                  */

static int valid_range(double r)
{
    return isfinite(r) && r >= 0 && r <= PERCEPT_COORD_LIMIT;
}

static int bad_position(percept_world *w, const char *fn, const char *where, percept_id id,
                        double x, double y)
{
    return set_error(w, PERCEPT_EINVAL,
                     "%s: %sentity %" PRIu32 ": position (%.17g, %.17g) must be finite and "
                     "within [-%g, %g]",
                     fn, where, id, x, y, PERCEPT_COORD_LIMIT, PERCEPT_COORD_LIMIT);
}

static int bad_range(percept_world *w, const char *fn, percept_id id, percept_sense sense,
                     double range)
{
    return set_error(w, PERCEPT_EINVAL,
                     "%s: entity %" PRIu32 ": %s range %.17g must be a number from 0 to %g", fn, id,
                     percept_sense_name(sense), range, PERCEPT_COORD_LIMIT);
}

static int check_not_in_callback(percept_world *w, const char *fn)
{
    if (w->in_callback)
        return set_error(w, PERCEPT_EBUSY,
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
    int rc = check_not_in_callback(w, fn);
    if (rc)
        return rc;
    *slot = id_map_find(&w->ids, id);
    if (must_exist && *slot == ID_MAP_NONE)
        return set_error(w, PERCEPT_ENOENT, "%s: unknown entity %" PRIu32, fn, id);
    if (!must_exist && *slot != ID_MAP_NONE)
        return set_error(w, PERCEPT_EEXIST, "%s: entity %" PRIu32 " is already in the world", fn,
                         id);
    return PERCEPT_OK;
}

static int check_sense(percept_world *w, const char *fn, percept_id id, percept_sense sense)
{
    if (!valid_sense(sense))
        return set_error(w, PERCEPT_EINVAL,
                         "%s: entity %" PRIu32 ": sense %d is not a sense (0 sight, 1 hearing, "
                         "2 smell)",
                         fn, id, (int)sense);
    return PERCEPT_OK;
}

/*
 * Grow every per-slot array to hold `cap` slots. Invisible if it fails: the
 * new arrays are made first and take over only when all of them exist, so
 * slot_cap always tells what is held (memory reports count on it).
 */
static int grow_slots(percept_world *w, size_t cap)
{
    const percept_allocator *a = &w->alloc;
    if (cap > PAIR_SLOT_LIMIT)
        cap = PAIR_SLOT_LIMIT;
    if (cap > SIZE_MAX / sizeof *w->ents - 1)
        return -1;
    /* The entity records get one spare record of room, to be aligned by
     * hand: the allocator promises malloc's alignment only. */
    void *block = pc_alloc(a, (cap + 1) * sizeof *w->ents);
    uint32_t *free_slots = pc_alloc(a, cap * sizeof *w->free_slots);
    pair_list *pairs = pc_alloc(a, cap * sizeof *w->pairs);
    int failed = !block || !free_slots || !pairs;
    /* An observer grid keeps its own capacity: growing one and not the
     * next leaves nothing to undo. */
    for (int g = 0; g < w->grid_count && !failed; g++)
        failed = og_reserve_slots(a, &w->grids[g], cap) != 0;
    if (failed) {
        pc_free(a, block);
        pc_free(a, free_slots);
        pc_free(a, pairs);
        return -1;
    }
    entity *ents =
        (entity *)(((uintptr_t)block + sizeof *ents - 1) & ~(uintptr_t)(sizeof *ents - 1));
    size_t old = w->slot_cap;
    if (old) {
        memcpy(ents, w->ents, old * sizeof *ents);
        memcpy(free_slots, w->free_slots, old * sizeof *free_slots);
        memcpy(pairs, w->pairs, old * sizeof *pairs);
    }
    memset(ents + old, 0, (cap - old) * sizeof *ents);
    memset(pairs + old, 0, (cap - old) * sizeof *pairs);
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
    static const char fn[] = "percept_add";
    if (!w)
        return PERCEPT_EINVAL;
    uint32_t slot;
    int rc = enter_call(w, fn, id, 0, &slot);
    if (rc)
        return rc;
    if (!desc)
        return set_error(w, PERCEPT_EINVAL, "%s: entity %" PRIu32 ": desc is NULL", fn, id);
    if (!valid_coord(desc->x) || !valid_coord(desc->y))
        return bad_position(w, fn, "", id, desc->x, desc->y);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (!valid_range(desc->range[s]))
            return bad_range(w, fn, id, (percept_sense)s, desc->range[s]);
    if (desc->hidden & ~ALL_SENSES)
        return set_error(w, PERCEPT_EINVAL,
                         "%s: entity %" PRIu32 ": hidden mask 0x%x has bits beyond the three "
                         "senses",
                         fn, id, desc->hidden);
    if (w->slot_count == PAIR_SLOT_LIMIT && w->free_count == 0)
        return set_error(w, PERCEPT_ENOMEM, "%s: the world is full", fn);
    if (w->free_count == 0 && w->slot_count == w->slot_cap &&
        grow_slots(w, w->slot_cap ? w->slot_cap * 2 : 64))
        return set_error(w, PERCEPT_ENOMEM,
                         "%s: entity %" PRIu32 ": out of memory; the world is unchanged", fn, id);

    change ch = {
        .slot = w->free_count ? w->free_slots[w->free_count - 1] : w->slot_count,
        .adding = 1,
    };
    ch.next = (entity){
        .x = desc->x,
        .y = desc->y,
        .range = {entity_range(desc->range[0]), entity_range(desc->range[1]),
                  entity_range(desc->range[2])},
        .id = id,
        .hidden = (uint8_t)desc->hidden,
        .alive = 1,
    };
    return change_made(run_change(w, fn, &ch, ALL_SENSES, ALL_SENSES));
}

/* The change moving the entity in `slot` to (x, y), for percept_move() and
 * each move of a batch; 0 when it is there already: no change, no events. */
static int move_change(const percept_world *w, uint32_t slot, double x, double y, change *ch)
{
    *ch = (change){.slot = slot, .next = w->ents[slot]};
    if (ch->next.x == x && ch->next.y == y)
        return 0;
    ch->next.x = x;
    ch->next.y = y;
    ch->moved = 1;
    return 1;
}

int percept_move(percept_world *w, percept_id id, double x, double y)
{
    static const char fn[] = "percept_move";
    if (!w)
        return PERCEPT_EINVAL;
    uint32_t slot;
    int rc = enter_call(w, fn, id, 1, &slot);
    if (rc)
        return rc;
    if (!valid_coord(x) || !valid_coord(y))
        return bad_position(w, fn, "", id, x, y);
    change ch;
    if (!move_change(w, slot, x, y, &ch))
        return PERCEPT_OK;
    return change_made(run_change(w, fn, &ch, ALL_SENSES, ALL_SENSES));
}

/* ---------------------------------------------------------------------- */
/* Many moves in one call                                                   */

/* v's place among 65536 equal steps from lo to hi (0 when they are one point). */
static uint32_t grid_step(double v, double lo, double hi)
{
    double t = hi > lo ? (v - lo) / (hi - lo) * 65536.0 : 0;
    return t >= 65535 ? 65535 : t > 0 ? (uint32_t)t : 0;
}

/*
 * The span [*lo, *hi] of one axis that the batch's curve spreads over: the
 * batch's own, cut to the world bounds [min, max], so that an entity parked
 * far outside (a despawned NPC at 1e15, say) does not squeeze every other
 * move into one step of the curve and the batch back into its given order;
 * moves outside fall on the edge. A batch wholly outside the bounds on this
 * axis keeps its own span.
 */
static void curve_span(double *lo, double *hi, double min, double max)
{
    double l = *lo > min ? *lo : min, h = *hi < max ? *hi : max;
    if (h > l) {
        *lo = l;
        *hi = h;
    }
}

/* The low 16 bits of v with a zero bit put between each two. */
static uint32_t spread_bits(uint32_t v)
{
    v &= 0xffffu;
    v = (v | v << 8) & 0x00ff00ffu;
    v = (v | v << 4) & 0x0f0f0f0fu;
    v = (v | v << 2) & 0x33333333u;
    v = (v | v << 1) & 0x55555555u;
    return v;
}

/* The batch's room for n moves; invisible if it fails. */
static int reserve_batch(percept_world *w, size_t n)
{
    if (n <= w->batch_cap)
        return 0;
    const percept_allocator *a = &w->alloc;
    if (n > SIZE_MAX / (2 * sizeof *w->batch_keys))
        return -1;
    batch_move *batch = pc_alloc(a, n * sizeof *batch);
    uint64_t *keys = pc_alloc(a, 2 * n * sizeof *keys);
    if (!batch || !keys) {
        pc_free(a, batch);
        pc_free(a, keys);
        return -1;
    }
    pc_free(a, w->batch);
    pc_free(a, w->batch_keys);
    w->batch = batch;
    w->batch_keys = keys;
    w->batch_cap = n;
    return 0;
}

/* The first entry before `before` that names `id` (there is one: the caller saw it). */
static size_t first_entry_of(const percept_position *moves, size_t before, percept_id id)
{
    size_t j = 0;
    while (j < before && moves[j].id != id)
        j++;
    return j;
}

/*
 * The moves go in the order of their new positions along a Z-order curve
 * over the batch's bounding box: a move reads its neighbours' records and
 * pair lists and the index cells around it, and the next move, nearby,
 * finds most of them still in the cache. In random order, at 256k entities,
 * each move waits on those reads from memory.
 */
int percept_move_many(percept_world *w, const percept_position *moves, size_t count)
{
    static const char fn[] = "percept_move_many";
    if (!w)
        return PERCEPT_EINVAL;
    int rc = check_not_in_callback(w, fn);
    if (rc)
        return rc;
    if (count == 0)
        return PERCEPT_OK;
    if (!moves)
        return set_error(w, PERCEPT_EINVAL, "%s: moves is NULL but count is %zu", fn, count);
    if (count > UINT32_MAX)
        return set_error(w, PERCEPT_EINVAL, "%s: count %zu is more than %" PRIu32 " moves", fn,
                         count, UINT32_MAX);

    /* Check the whole batch before any move; the visit stamp finds repeats.
     * Without room for the batch, the check still runs (storing nothing), so
     * that a bad batch is named as such whatever the memory. */
    int no_room = reserve_batch(w, count) != 0;
    uint32_t epoch = next_epoch(w);
    double lo_x = INFINITY, lo_y = INFINITY, hi_x = -INFINITY, hi_y = -INFINITY;
    for (size_t i = 0; i < count; i++) {
        const percept_position *m = &moves[i];
        uint32_t slot = id_map_find(&w->ids, m->id);
        if (slot == ID_MAP_NONE)
            return entry_error(w,
                               set_error(w, PERCEPT_ENOENT,
                                         "%s: moves[%zu]: unknown entity %" PRIu32, fn, i, m->id),
                               i);
        if (!valid_coord(m->x) || !valid_coord(m->y)) {
            char where[48];
            snprintf(where, sizeof where, "moves[%zu]: ", i);
            return entry_error(w, bad_position(w, fn, where, m->id, m->x, m->y), i);
        }
        if (w->ents[slot].mark == epoch)
            return entry_error(w,
                               set_error(w, PERCEPT_EINVAL,
                                         "%s: moves[%zu]: entity %" PRIu32
                                         " is already moved by moves[%zu]; name each entity once",
                                         fn, i, m->id, first_entry_of(moves, i, m->id)),
                               i);
        w->ents[slot].mark = epoch;
        if (no_room)
            continue;
        w->batch[i] = (batch_move){m->x, m->y, slot};
        lo_x = m->x < lo_x ? m->x : lo_x;
        hi_x = m->x > hi_x ? m->x : hi_x;
        lo_y = m->y < lo_y ? m->y : lo_y;
        hi_y = m->y > hi_y ? m->y : hi_y;
    }
    if (no_room)
        return set_error(w, PERCEPT_ENOMEM, "%s: out of memory; nothing was moved", fn);

    curve_span(&lo_x, &hi_x, w->bounds.min_x, w->bounds.max_x);
    curve_span(&lo_y, &hi_y, w->bounds.min_y, w->bounds.max_y);
    const batch_move *batch = w->batch;
    uint64_t *keys = w->batch_keys;
    for (size_t i = 0; i < count; i++) {
        uint32_t z = spread_bits(grid_step(batch[i].x, lo_x, hi_x)) |
                     spread_bits(grid_step(batch[i].y, lo_y, hi_y)) << 1;
        keys[i] = (uint64_t)z << 32 | i;
    }
    key_sort(keys, keys + count, count);

    /* The moves made: entries whose entity is already there are no move. */
    size_t made = 0;
    for (size_t k = 0; k < count; k++) {
        const batch_move *m = &batch[(uint32_t)keys[k]];
        change ch;
        if (!move_change(w, m->slot, m->x, m->y, &ch))
            continue;
        rc = run_change(w, fn, &ch, ALL_SENSES, ALL_SENSES);
        if (rc == WORLD_CLOSED)
            return PERCEPT_OK; /* the rest of the batch goes with the world */
        if (rc != PERCEPT_OK) {
            /* run_change() said which entity and which backend: keep that. */
            char detail[sizeof w->errmsg];
            out_of_memory_detail(w, &ch, detail, sizeof detail);
            return set_error(w, PERCEPT_ENOMEM,
                             "%s: out of memory after %zu moves of the batch's %zu entries: "
                             "those moves were made, with their events, and the others were "
                             "not; call again with the same moves to finish; %s",
                             fn, made, count, detail);
        }
        made++;
    }
    return PERCEPT_OK;
}

int percept_remove(percept_world *w, percept_id id)
{
    static const char fn[] = "percept_remove";
    if (!w)
        return PERCEPT_EINVAL;
    uint32_t slot;
    int rc = enter_call(w, fn, id, 1, &slot);
    if (rc)
        return rc;
    change ch = {.slot = slot, .next = w->ents[slot], .removing = 1};
    return change_made(run_change(w, fn, &ch, ALL_SENSES, ALL_SENSES));
}

int percept_set_range(percept_world *w, percept_id id, percept_sense sense, double range)
{
    static const char fn[] = "percept_set_range";
    if (!w)
        return PERCEPT_EINVAL;
    uint32_t slot;
    int rc = enter_call(w, fn, id, 1, &slot);
    if (rc || (rc = check_sense(w, fn, id, sense)))
        return rc;
    if (!valid_range(range))
        return bad_range(w, fn, id, sense, range);
    change ch = {.slot = slot, .next = w->ents[slot]};
    ch.next.range[sense] = entity_range(range);
    return change_made(run_change(w, fn, &ch, PERCEPT_SENSE_BIT(sense), 0));
}

int percept_set_hidden(percept_world *w, percept_id id, percept_sense sense, int hidden)
{
    static const char fn[] = "percept_set_hidden";
    if (!w)
        return PERCEPT_EINVAL;
    uint32_t slot;
    int rc = enter_call(w, fn, id, 1, &slot);
    if (rc || (rc = check_sense(w, fn, id, sense)))
        return rc;
    change ch = {.slot = slot, .next = w->ents[slot]};
    if (hidden)
        ch.next.hidden |= (uint8_t)PERCEPT_SENSE_BIT(sense);
    else
        ch.next.hidden &= (uint8_t)~PERCEPT_SENSE_BIT(sense);
    return change_made(run_change(w, fn, &ch, 0, PERCEPT_SENSE_BIT(sense)));
}
