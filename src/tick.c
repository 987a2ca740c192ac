/*
 * tick.c - percept_tick(): a batch of changes made at once. The relation
 * after a tick depends only on the states after it and the relation before
 * it, so a pair needs judging only if one of its entities changes, and
 * once: when both do, by one of the two, chosen by a rule both can apply
 * (judge_pairs(), meet_movers()).
 *
 * The work is that of a single call, for every entry at once: check every
 * entry; find each pair's change against the world before the tick, where
 * the backends and observer grids find the neighbours that stand still and
 * the tick's own grid those that change too; make every allocation (each
 * undoable); apply; deliver in the order of percept.h. Finding the changes
 * reads the world and writes only a worker's own room, so the entries are
 * split among the world's threads.
 */
#include "world.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "key_sort.h"
#include "prefetch.h"
#include "relation.h"

/* One entry, checked: its entity's state after the tick. Two cache lines,
 * the first holding what a plain pair's test reads for up to three senses. */
typedef struct tick_entry {
    entity next;
    const shape *shp; /* its shape after the tick, or NULL */
    uint32_t slot;
    uint8_t moved;    /* its position changes */
    uint8_t reshaped; /* shp is the tick's (w->tick.shapes), to be stored */
    uint8_t lost;     /* its list holds pairs the tick ends (mask 0), to be removed */
} __attribute__((aligned(64))) tick_entry;

/* A pair whose senses change (or whose target moved, for MOVE events):
 * both directions, as a's list keeps them. */
typedef struct tick_pair {
    uint32_t a, b; /* slots: a is the entry that judged the pair, b its partner */
    percept_id a_id, b_id;
    uint32_t index; /* the pair's place in a's list, or PAIR_NONE for a new pair */
    uint16_t before, after;
} tick_pair;

/* One direction of a tick_pair, to be delivered. */
typedef struct tick_event {
    percept_id observer, target;
    uint32_t target_slot;
    uint8_t before, after, moved;
} tick_event;

/* A thread's part of the search: its pairs and its visit stamps. */
typedef struct tick_worker {
    tick_pair *pairs;
    size_t len, cap;
    uint32_t *stamps; /* per slot: the pass that last met it */
    size_t stamp_cap;
    uint32_t epoch;
    int failed; /* out of memory: the tick fails whole */
} tick_worker;

/* One tick, as the workers see it. */
typedef struct tick_job {
    percept_world *w;
    const tick_entry *entries;
    int notify_moves;
    int none_still;             /* every entity is in the tick: no neighbour stands still */
    int uniform_reach;          /* every entry has the same reach */
    pthread_mutex_t alloc_lock; /* the allocator is called by one thread at a time */
} tick_job;

/* One entry's search: what its visits need. */
typedef struct tick_pass {
    tick_job *job;
    tick_worker *wk;
    const tick_entry *me;
    uint32_t index;
    unsigned visible; /* the senses others may perceive it in */
} tick_pass;

static int in_tick(const percept_world *w, uint32_t slot)
{
    return (w->tick.in_tick[slot >> 6] >> (slot & 63)) & 1;
}

static void set_in_tick(percept_world *w, uint32_t slot, int on)
{
    uint64_t bit = (uint64_t)1 << (slot & 63);
    w->tick.in_tick[slot >> 6] =
        on ? w->tick.in_tick[slot >> 6] | bit : w->tick.in_tick[slot >> 6] & ~bit;
}

static void push_pair(tick_pass *p, uint32_t b, percept_id b_id, uint32_t index, unsigned before,
                      unsigned after)
{
    tick_worker *wk = p->wk;
    if (wk->len == wk->cap) {
        pthread_mutex_lock(&p->job->alloc_lock);
        void *pairs = wk->pairs;
        int failed = pc_grow(&p->job->w->alloc, &pairs, sizeof(tick_pair), &wk->cap, wk->len + 1);
        pthread_mutex_unlock(&p->job->alloc_lock);
        if (failed) {
            wk->failed = 1;
            return;
        }
        wk->pairs = pairs;
    }
    wk->pairs[wk->len++] =
        (tick_pair){p->me->slot, b, p->me->next.id, b_id, index, (uint16_t)before, (uint16_t)after};
}

/* A neighbour that stands still, from a backend or an observer grid. */
static void visit_still(void *ctx, percept_slot t)
{
    tick_pass *p = ctx;
    percept_world *w = p->job->w;
    if (t >= w->slot_count || in_tick(w, t) || p->wk->stamps[t] == p->wk->epoch)
        return;
    p->wk->stamps[t] = p->wk->epoch;
    const entity *e = ent(w, t);
    if (!e->alive)
        return;
    unsigned after = pair_mask_of(w->sense_count, &p->me->next, p->me->shp, e, shape_at(w, e, t),
                                  w->all_senses, p->visible, 0);
    if (after)
        push_pair(p, t, e->id, PAIR_NONE, 0, after);
}

/* The entry's pairs before the tick, judged again. */
static void judge_pairs(tick_pass *p)
{
    tick_job *job = p->job;
    percept_world *w = job->w;
    const tick_entry *me = p->me;
    const pair_list *pairs = &w->pairs[me->slot];
    /* Ask for every partner's state first: the walk waits for memory once. */
    for (uint32_t k = 0; k < pairs->len; k++) {
        uint32_t t = pair_slot(&pairs->items[k]);
        if (in_tick(w, t))
            prefetch_read(&job->entries[w->tick.entry_of[t]]);
        else
            prefetch_read(ent(w, t));
    }
    for (uint32_t k = 0; k < pairs->len; k++) {
        uint32_t t = pair_slot(&pairs->items[k]);
        unsigned before = pair_mask(&pairs->items[k]);
        const entity *next;
        const shape *sh;
        int t_moved = 0;
        p->wk->stamps[t] = p->wk->epoch;
        if (in_tick(w, t)) {
            uint32_t j = w->tick.entry_of[t];
            if (j < p->index)
                continue; /* the pair is the earlier entry's */
            const tick_entry *other = &job->entries[j];
            next = &other->next;
            sh = next->shaped ? other->shp : NULL;
            t_moved = other->moved;
        } else {
            next = ent(w, t);
            sh = shape_at(w, next, t);
        }
        unsigned after = pair_mask_of(w->sense_count, &me->next, me->shp, next, sh, w->all_senses,
                                      p->visible, before);
        unsigned held = before & after;
        if (after != before ||
            (job->notify_moves && ((me->moved && pair_in(held)) || (t_moved && pair_out(held)))))
            push_pair(p, t, next->id, k, before, after);
    }
}

/* New pairs with the tick's other entries: the one of longer reach finds
 * the pair, as its radius covers both ways; on equal reach, the one earlier
 * in the tick grid's order, this one being at `at`. When every reach is
 * equal, that is every point after `at`: the rows above are skipped whole. */
static void meet_movers(tick_pass *p, size_t at, double reach)
{
    percept_world *w = p->job->w;
    const tick_grid *g = &w->tick.grid;
    const tick_entry *me = p->me;
    double reach2 = reach * reach;
    int uniform = p->job->uniform_reach;
    int32_t c0, c1, r0, r1, mine = tick_grid_row(g, me->next.y);
    tick_grid_span(g, me->next.x, me->next.y, reach, &c0, &c1, &r0, &r1);
    for (int32_t row = uniform ? mine : r0; row <= r1; row++) {
        const uint32_t *start = &g->cell_start[(size_t)row * (size_t)g->cols];
        size_t k = start[c0];
        if (uniform && row == mine)
            k = at + 1;
        for (; k < start[c1 + 1]; k++) {
            const tick_point *q = &g->points[k];
            if (!uniform && (q->reach > reach || (q->reach == reach && k <= at)))
                continue;
            double dx = q->x - me->next.x, dy = q->y - me->next.y, dz = q->z - me->next.z;
            if (!(dx * dx + dy * dy + dz * dz <= reach2))
                continue; /* beyond every range of both */
            const tick_entry *other = &p->job->entries[q->index];
            if (p->wk->stamps[other->slot] == p->wk->epoch)
                continue; /* a pair before the tick: judge_pairs() has it */
            unsigned after = pair_mask_of(w->sense_count, &me->next, me->shp, &other->next,
                                          other->shp, w->all_senses, p->visible, 0);
            if (after)
                push_pair(p, other->slot, other->next.id, PAIR_NONE, 0, after);
        }
    }
}

/* Every pair change of entry i, into the worker's room. */
static void search_entry(tick_job *job, tick_worker *wk, size_t at)
{
    percept_world *w = job->w;
    uint32_t i = w->tick.grid.points[at].index;
    double reach = w->tick.grid.points[at].reach;
    const tick_entry *me = &job->entries[i];
    if (++wk->epoch == 0) {
        memset(wk->stamps, 0, wk->stamp_cap * sizeof *wk->stamps);
        wk->epoch = 1;
    }
    tick_pass p = {.job = job,
                   .wk = wk,
                   .me = me,
                   .index = i,
                   .visible = w->all_senses & ~(unsigned)me->next.hidden};
    wk->stamps[me->slot] = wk->epoch;
    judge_pairs(&p);
    if (!job->none_still) /* new pairs with neighbours that stand still */
        world_find_candidates(w, &me->next, w->all_senses, p.visible, visit_still, &p);
    if (reach > 0)
        meet_movers(&p, at, reach);
}

/* A worker's part: a run of the tick grid's points, neighbours together. */
static void search_part(void *ctx, unsigned part)
{
    tick_job *job = ctx;
    percept_world *w = job->w;
    tick_worker *wk = &w->tick.workers[part];
    size_t n = w->tick.grid.count, threads = w->tick.threads;
    size_t from = n * part / threads, to = n * (part + 1) / threads;
    wk->len = 0;
    wk->failed = 0;
    const tick_point *points = w->tick.grid.points;
    for (size_t k = from; k < to && !wk->failed; k++) {
        /* Ask for the lists ahead of their turn: the list two entries on,
         * the pairs of the next. */
        if (k + 2 < to)
            prefetch_read(&w->pairs[job->entries[points[k + 2].index].slot]);
        if (k + 1 < to) {
            const pair_list *next = &w->pairs[job->entries[points[k + 1].index].slot];
            for (uint32_t i = 0; i < next->len; i += 8)
                prefetch_read(&next->items[i]);
        }
        search_entry(job, wk, k);
    }
}

/* ---------------------------------------------------------------- room */

int tick_init(percept_world *w, unsigned threads)
{
    tick_room *t = &w->tick;
    t->workers = pc_alloc(&w->alloc, threads * sizeof *t->workers);
    if (!t->workers)
        return -1;
    memset(t->workers, 0, threads * sizeof *t->workers);
    t->threads = threads;
    if (threads > 1 && !(t->pool = pool_create(&w->alloc, threads)))
        return -1;
    return 0;
}

void tick_free(percept_world *w)
{
    const percept_allocator *a = &w->alloc;
    tick_room *t = &w->tick;
    pool_destroy(a, t->pool);
    for (unsigned i = 0; t->workers && i < t->threads; i++) {
        pc_free(a, t->workers[i].pairs);
        pc_free(a, t->workers[i].stamps);
    }
    pc_free(a, t->workers);
    pc_free(a, t->entries_block);
    pc_free(a, t->entry_of);
    pc_free(a, t->shapes);
    pc_free(a, t->regs);
    pc_free(a, t->in_tick);
    pc_free(a, t->points);
    tick_grid_free(a, &t->grid);
    pc_free(a, t->events);
    pc_free(a, t->keys);
    *t = (tick_room){0};
}

size_t tick_bytes(const percept_world *w)
{
    const tick_room *t = &w->tick;
    size_t n = (t->entry_cap ? t->entry_cap * sizeof(tick_entry) + 64 : 0) +
               t->entry_of_cap * sizeof(uint32_t) + t->shape_cap * sizeof(shape) +
               t->reg_cap * sizeof(og_registration) + t->in_tick_words * sizeof(uint64_t) +
               t->point_cap * sizeof(tick_point) + tick_grid_bytes(&t->grid) +
               t->event_cap * (sizeof(tick_event) + 4 * sizeof(uint64_t)) +
               t->threads * sizeof(tick_worker);
    for (unsigned i = 0; t->workers && i < t->threads; i++)
        n += t->workers[i].cap * sizeof(tick_pair) + t->workers[i].stamp_cap * sizeof(uint32_t);
    return n;
}

static int grow(percept_world *w, void *array, size_t elem, size_t *cap, size_t need)
{
    void *p = *(void **)array;
    if (pc_grow(&w->alloc, &p, elem, cap, need))
        return -1;
    *(void **)array = p;
    return 0;
}

/* The room a tick of `count` entries, `shapes` of them turns or updates,
 * needs before its first check; 0, or -1 with only room changed. */
static int reserve_room(percept_world *w, size_t count, size_t shapes)
{
    tick_room *t = &w->tick;
    size_t words = (w->slot_cap + 63) / 64;
    if (words > t->in_tick_words) {
        uint64_t *bits = pc_alloc(&w->alloc, words * sizeof *bits);
        if (!bits)
            return -1;
        memset(bits, 0, words * sizeof *bits);
        pc_free(&w->alloc, t->in_tick);
        t->in_tick = bits;
        t->in_tick_words = words;
    }
    if (grow(w, &t->entry_of, sizeof(uint32_t), &t->entry_of_cap, w->slot_cap))
        return -1;
    if (count > t->entry_cap) {
        /* Aligned by hand: the allocator promises malloc's alignment only. */
        if (count > (SIZE_MAX - 64) / sizeof(tick_entry))
            return -1;
        void *block = pc_alloc(&w->alloc, count * sizeof(tick_entry) + 64);
        if (!block)
            return -1;
        pc_free(&w->alloc, t->entries_block);
        t->entries_block = block;
        t->entries = (tick_entry *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
        t->entry_cap = count;
    }
    for (unsigned i = 0; i < t->threads; i++) {
        tick_worker *wk = &t->workers[i];
        if (wk->stamp_cap < w->slot_cap) {
            uint32_t *stamps = pc_alloc(&w->alloc, w->slot_cap * sizeof *stamps);
            if (!stamps)
                return -1;
            memset(stamps, 0, w->slot_cap * sizeof *stamps);
            pc_free(&w->alloc, wk->stamps);
            wk->stamps = stamps;
            wk->stamp_cap = w->slot_cap;
            wk->epoch = 0;
        }
    }
    return grow(w, &t->shapes, sizeof(shape), &t->shape_cap, shapes) ||
           grow(w, &t->points, sizeof(tick_point), &t->point_cap, count) ||
           grow(w, &t->regs, sizeof(og_registration), &t->reg_cap, count * (size_t)w->grid_count);
}

/* ---------------------------------------------------------------- checking the entries */

/* Take the bits of the first `count` entries back. */
static void release_entries(percept_world *w, size_t count)
{
    for (size_t i = 0; i < count; i++)
        set_in_tick(w, w->tick.entries[i].slot, 0);
}

/* Check entry i and make its state after the tick; *shapes counts the
 * tick's new shapes. Marks its entity as in the tick, at entry i. */
static int read_entry(percept_world *w, const percept_change *c, size_t i, size_t *shapes)
{
    static const char where[] = "percept_tick";
    uint32_t slot = id_map_find(&w->ids, c->id);
    if (slot == ID_MAP_NONE)
        return world_error(w, PERCEPT_ENOENT, "%s: unknown entity %" PRIu32, where, c->id);
    entity *e = ent(w, slot);
    if (in_tick(w, slot))
        return world_error(w, PERCEPT_EINVAL,
                           "%s: entity %" PRIu32 " is already changed by changes[%" PRIu32
                           "]; name each entity once",
                           where, c->id, w->tick.entry_of[slot]);
    tick_entry *te = &w->tick.entries[i];
    te->slot = slot;
    te->next = *e;
    te->shp = shape_at(w, e, slot);
    te->reshaped = 0;
    te->lost = 0;
    int rc = PERCEPT_OK;
    switch (c->kind) {
    case PERCEPT_CHANGE_MOVE:
        if (!valid_coord(c->x) || !valid_coord(c->y) || !valid_coord(c->z))
            return world_bad_position(w, where, "", c->id, c->x, c->y, c->z);
        te->next.x = c->x;
        te->next.y = c->y;
        te->next.z = c->z;
        break;
    case PERCEPT_CHANGE_TURN: {
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
        world_describe(w, slot, &d);
        d.facing[0] = c->x;
        d.facing[1] = c->y;
        d.facing[2] = c->z;
        rc = world_read_desc(w, where, c->id, &d, &te->next, &w->tick.shapes[*shapes]);
        break;
    }
    case PERCEPT_CHANGE_UPDATE:
        rc = world_read_desc(w, where, c->id, c->desc, &te->next, &w->tick.shapes[*shapes]);
        break;
    default:
        return world_error(w, PERCEPT_EINVAL,
                           "%s: entity %" PRIu32 ": kind %d is none of PERCEPT_CHANGE_MOVE, "
                           "_TURN and _UPDATE",
                           where, c->id, (int)c->kind);
    }
    if (rc)
        return rc;
    if (c->kind != PERCEPT_CHANGE_MOVE) {
        te->shp = te->next.shaped ? &w->tick.shapes[*shapes] : NULL;
        te->reshaped = 1;
        ++*shapes;
    }
    te->moved = e->x != te->next.x || e->y != te->next.y || e->z != te->next.z;
    set_in_tick(w, slot, 1);
    w->tick.entry_of[slot] = (uint32_t)i;
    return PERCEPT_OK;
}

/* ---------------------------------------------------------------- applying */

/* The k-th entry in the tick grid's order: neighbours one after the
 * other, so that a list or record one reads is still in the cache for
 * the next. */
static size_t in_place_order(const percept_world *w, size_t k)
{
    return w->tick.grid.points[k].index;
}

/* Move the backends' entries of the first `done` entries back (a later
 * reserve() failed), newest first, each after a reserve() of its old place. */
static void backends_back(percept_world *w, size_t done, int last_group)
{
    for (size_t i = done + 1; i-- > 0;) {
        const tick_entry *te = &w->tick.entries[i];
        const entity *old = ent(w, te->slot);
        for (int g = (i == done ? last_group : w->backend_count) - 1; g >= 0; g--) {
            backend_group *bg = &w->backends[g];
            if (!world_backend_moved(ent(w, te->slot), &te->next, bg,
                                     reach_of(&te->next, bg->senses)))
                continue;
            double reach = reach_of(old, bg->senses);
            bg->plugin.ops.reserve(bg->backend, w->slot_count, te->slot, old->x, old->y, old->z,
                                   reach);
            bg->plugin.ops.update(bg->backend, te->slot, old->x, old->y, old->z, reach);
        }
    }
}

/* The backends take every entry's new place; all of them or none. */
static int update_backends(percept_world *w, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        const tick_entry *te = &w->tick.entries[i];
        for (int g = 0; g < w->backend_count; g++) {
            backend_group *bg = &w->backends[g];
            double reach = reach_of(&te->next, bg->senses);
            if (!world_backend_moved(ent(w, te->slot), &te->next, bg, reach))
                continue;
            if (bg->plugin.ops.reserve(bg->backend, w->slot_count, te->slot, te->next.x, te->next.y,
                                       te->next.z, reach)) {
                w->refused_by = bg;
                backends_back(w, i, g);
                return -1;
            }
            bg->plugin.ops.update(bg->backend, te->slot, te->next.x, te->next.y, te->next.z, reach);
        }
    }
    return 0;
}

/* Stage every entry's registration in every observer grid; -1 out of memory
 * with nothing staged. */
static int stage_grids(percept_world *w, size_t count)
{
    static const double no_range[PERCEPT_MAX_SENSES];
    size_t i = 0;
    int g = 0;
    for (; i < count; i++) {
        const tick_entry *te = &w->tick.entries[i];
        og_registration *reg = &w->tick.regs[i * (size_t)w->grid_count];
        for (g = 0; g < w->grid_count; g++) {
            /* A near grid holds those its grid counts as near (it comes after it). */
            int of = w->near_of[g];
            reg[g] =
                og_registration_for(&w->grids[g], te->next.x, te->next.y,
                                    of < 0 || reg[of].cell == OG_NEAR ? te->next.range : no_range);
            if (og_stage(&w->alloc, &w->grids[g], te->slot, &reg[g]))
                goto undo;
        }
    }
    return 0;
undo:
    for (;;) {
        while (g-- > 0)
            og_unstage(&w->alloc, &w->grids[g], w->tick.entries[i].slot,
                       &w->tick.regs[i * (size_t)w->grid_count + (size_t)g]);
        if (i-- == 0)
            return -1;
        g = w->grid_count;
    }
}

static void unstage_grids(percept_world *w, size_t count)
{
    for (size_t i = count; i-- > 0;)
        for (int g = w->grid_count; g-- > 0;)
            og_unstage(&w->alloc, &w->grids[g], w->tick.entries[i].slot,
                       &w->tick.regs[i * (size_t)w->grid_count + (size_t)g]);
}

/* Take back the new pairs of workers before k and, of worker k, before its
 * pair i: each went last into both lists, so newest first. */
static void take_back_new_pairs(percept_world *w, unsigned k, size_t i)
{
    for (;;) {
        const tick_worker *wk = &w->tick.workers[k];
        while (i-- > 0)
            if (wk->pairs[i].before == 0) {
                w->pairs[wk->pairs[i].a].len--;
                w->pairs[wk->pairs[i].b].len--;
            }
        if (k-- == 0)
            return;
        i = w->tick.workers[k].len;
    }
}

/* Append every new pair to both lists; -1 out of memory with none added.
 * Existing entries keep their places, so the pairs' indexes stay true. */
static int add_new_pairs(percept_world *w)
{
    const percept_allocator *a = &w->alloc;
    for (unsigned k = 0; k < w->tick.threads; k++) {
        const tick_worker *wk = &w->tick.workers[k];
        for (size_t i = 0; i < wk->len; i++) {
            const tick_pair *c = &wk->pairs[i];
            if (c->before != 0)
                continue;
            pair_list *own = &w->pairs[c->a], *partner = &w->pairs[c->b];
            if (pair_list_push(a, own, pair_make(c->b, partner->len, c->after)) == 0) {
                if (pair_list_push(a, partner,
                                   pair_make(c->a, own->len - 1, pair_swap(c->after))) == 0)
                    continue;
                own->len--;
            }
            take_back_new_pairs(w, k, i);
            return -1;
        }
    }
    return 0;
}

/* The changed masks of pairs that held before; a lost pair's entries get
 * mask 0, and its first entry `lost`, for drop_lost_pairs(). */
static void set_masks(percept_world *w)
{
    for (unsigned k = 0; k < w->tick.threads; k++) {
        const tick_worker *wk = &w->tick.workers[k];
        for (size_t i = 0; i < wk->len; i++) {
            const tick_pair *c = &wk->pairs[i];
            if (c->before == 0 || c->before == c->after)
                continue;
            pair *mine = &w->pairs[c->a].items[c->index];
            pair_set_mask(&w->pairs[c->b].items[pair_back(mine)], pair_swap(c->after));
            pair_set_mask(mine, c->after);
            if (!c->after)
                w->tick.entries[w->tick.entry_of[c->a]].lost = 1;
        }
    }
}

/* Remove the pairs of mask 0 from both lists. The list of each pair's
 * first entry is walked from its end: an entry swapped into a removed
 * one's place has been walked already. */
static void drop_lost_pairs(percept_world *w, size_t count)
{
    const percept_allocator *a = &w->alloc;
    for (size_t k = 0; k < count; k++) {
        const tick_entry *te = &w->tick.entries[in_place_order(w, k)];
        if (!te->lost)
            continue;
        pair_list *own = &w->pairs[te->slot];
        for (uint32_t i = own->len; i-- > 0;) {
            if (pair_mask(&own->items[i]))
                continue;
            pair_list *partner = &w->pairs[pair_slot(&own->items[i])];
            pair_list_remove_at(partner, pair_back(&own->items[i]), w->pairs);
            pair_list_remove_at(own, i, w->pairs);
            pair_list_shrink(a, partner);
        }
        pair_list_shrink(a, own);
    }
}

/* Each entry's new state into its record, shape, grids and range counts. */
static void store_entries(percept_world *w, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        size_t i = in_place_order(w, k);
        const tick_entry *te = &w->tick.entries[i];
        for (int g = 0; g < w->grid_count; g++)
            og_commit(&w->alloc, &w->grids[g], te->slot,
                      &w->tick.regs[i * (size_t)w->grid_count + (size_t)g], te->next.x, te->next.y,
                      te->next.z, te->next.range);
        entity *e = ent(w, te->slot);
        if (te->reshaped)
            world_count_ranges(w, e, &te->next);
        memcpy(e, &te->next, w->ent_bytes);
        if (te->reshaped && te->next.shaped)
            memcpy(w->shapes + (size_t)te->slot * w->shape_bytes, te->shp, w->shape_bytes);
    }
}

/* ---------------------------------------------------------------- delivering */

static size_t pair_count(const percept_world *w)
{
    size_t n = 0;
    for (unsigned k = 0; k < w->tick.threads; k++)
        n += w->tick.workers[k].len;
    return n;
}

/* Whether the entity in `slot` moved in the tick (read before its bit goes). */
static int moved_in_tick(const percept_world *w, uint32_t slot)
{
    return in_tick(w, slot) && w->tick.entries[w->tick.entry_of[slot]].moved;
}

/* The events of the tick's pairs, both directions, sorted by observer ID,
 * then target ID; returns how many. The room is reserve_events()'s. */
static size_t order_events(percept_world *w, int notify_moves)
{
    tick_event *ev = w->tick.events;
    size_t n = 0;
    for (unsigned k = 0; k < w->tick.threads; k++) {
        const tick_worker *wk = &w->tick.workers[k];
        for (size_t i = 0; i < wk->len; i++) {
            const tick_pair *c = &wk->pairs[i];
            percept_id ia = c->a_id, ib = c->b_id;
            unsigned ab_before = pair_out(c->before), ab_after = pair_out(c->after);
            unsigned ba_before = pair_in(c->before), ba_after = pair_in(c->after);
            uint8_t b_moved = notify_moves && moved_in_tick(w, c->b) && (ab_before & ab_after);
            uint8_t a_moved = notify_moves && moved_in_tick(w, c->a) && (ba_before & ba_after);
            if (ab_before != ab_after || b_moved)
                ev[n++] =
                    (tick_event){ia, ib, c->b, (uint8_t)ab_before, (uint8_t)ab_after, b_moved};
            if (ba_before != ba_after || a_moved)
                ev[n++] =
                    (tick_event){ib, ia, c->a, (uint8_t)ba_before, (uint8_t)ba_after, a_moved};
        }
    }
    if (n == 0)
        return 0;
    /* By target, then (the sort keeps equal keys in order) by observer. */
    uint64_t *keys = w->tick.keys, *by_target = keys + 2 * n;
    for (size_t i = 0; i < n; i++)
        by_target[i] = (uint64_t)ev[i].target << 32 | i;
    key_sort(by_target, keys, n);
    for (size_t i = 0; i < n; i++)
        keys[i] = (uint64_t)ev[(uint32_t)by_target[i]].observer << 32 | i;
    key_sort(keys, keys + n, n);
    for (size_t i = 0; i < n; i++)
        keys[i] = (uint32_t)by_target[(uint32_t)keys[i]];
    return n;
}

static int reserve_events(percept_world *w)
{
    tick_room *t = &w->tick;
    size_t n = 2 * pair_count(w);
    if (n <= t->event_cap)
        return 0;
    if (n > SIZE_MAX / (4 * sizeof(uint64_t)))
        return -1;
    tick_event *events = pc_alloc(&w->alloc, n * sizeof *events);
    uint64_t *keys = pc_alloc(&w->alloc, 4 * n * sizeof *keys);
    if (!events || !keys) {
        pc_free(&w->alloc, events);
        pc_free(&w->alloc, keys);
        return -1;
    }
    pc_free(&w->alloc, t->events);
    pc_free(&w->alloc, t->keys);
    t->events = events;
    t->keys = keys;
    t->event_cap = n;
    return 0;
}

/* Stops when the callback closes the world (the caller then frees it). */
static void deliver(percept_world *w, size_t n)
{
    w->in_callback = 1;
    for (size_t i = 0; i < n; i++) {
        const tick_event *e = &w->tick.events[w->tick.keys[i]];
        if (world_deliver_pair(w, e->observer, e->target, ent(w, e->target_slot), e->before,
                               e->after, e->moved))
            break;
    }
    w->in_callback = 0;
}

/* ---------------------------------------------------------------- the call */

/* Find every entry's pair changes, on the world's threads. */
static int search(percept_world *w, size_t count)
{
    tick_room *t = &w->tick;
    for (size_t i = 0; i < count; i++) {
        const tick_entry *te = &t->entries[i];
        t->points[i] = (tick_point){te->next.x, te->next.y, te->next.z,
                                    reach_of(&te->next, w->all_senses), (uint32_t)i};
    }
    if (tick_grid_build(&w->alloc, &t->grid, t->points, count))
        return -1;
    tick_job job = {.w = w,
                    .entries = t->entries,
                    .notify_moves = w->move_events && world_wants_events(w),
                    .none_still = count == w->ids.count,
                    .uniform_reach = 1};
    for (size_t i = 1; i < count; i++)
        job.uniform_reach &= t->points[i].reach == t->points[0].reach;
    if (pthread_mutex_init(&job.alloc_lock, NULL))
        return -1;
    if (t->pool)
        pool_run(t->pool, search_part, &job);
    else
        search_part(&job, 0);
    pthread_mutex_destroy(&job.alloc_lock);
    for (unsigned k = 0; k < t->threads; k++)
        if (t->workers[k].failed)
            return -1;
    return 0;
}

/* The indexes' side of applying: observer grids staged, backends updated;
 * -1 with neither changed. */
static int stage_indexes(percept_world *w, size_t count)
{
    if (stage_grids(w, count))
        return -1;
    if (update_backends(w, count)) {
        unstage_grids(w, count);
        return -1;
    }
    return 0;
}

static void unstage_indexes(percept_world *w, size_t count)
{
    backends_back(w, count - 1, w->backend_count);
    unstage_grids(w, count);
}

/* Applying on two threads: the indexes and records on one, the pair lists
 * and events on the other, which share nothing but the allocator. */
typedef struct apply_job {
    percept_world *w;
    size_t count;
    int failed[2];
    size_t events;
    percept_allocator inner; /* the world's allocator, called under the lock */
    pthread_mutex_t lock;
} apply_job;

static void *alloc_locked(void *user, void *ptr, size_t size)
{
    apply_job *job = user;
    pthread_mutex_lock(&job->lock);
    void *p = job->inner.alloc(job->inner.user, ptr, size);
    pthread_mutex_unlock(&job->lock);
    return p;
}

static void stage_part(void *ctx, unsigned part)
{
    apply_job *job = ctx;
    if (part == 0)
        job->failed[0] = stage_indexes(job->w, job->count);
    else if (part == 1)
        job->failed[1] = add_new_pairs(job->w);
}

static void commit_part(void *ctx, unsigned part)
{
    apply_job *job = ctx;
    if (part == 0) {
        store_entries(job->w, job->count);
    } else if (part == 1) {
        set_masks(job->w);
        drop_lost_pairs(job->w, job->count);
        job->events = world_wants_events(job->w) ? order_events(job->w, job->w->move_events) : 0;
    }
}

/* Every allocation first, each undoable; then the changes, which cannot
 * fail. Returns the number of events to deliver, or -1 (nothing changed). */
static ptrdiff_t apply(percept_world *w, size_t count)
{
    int needs_shapes = 0;
    for (size_t i = 0; i < count; i++)
        needs_shapes |= w->tick.entries[i].reshaped && w->tick.entries[i].next.shaped;
    if ((needs_shapes && !w->shapes && world_alloc_shapes(w)) || reserve_events(w) ||
        world_reserve_events(w, 2 * pair_count(w) * (size_t)w->sense_count))
        return -1;
    apply_job job = {.w = w, .count = count};
    if (w->tick.pool && pthread_mutex_init(&job.lock, NULL) == 0) {
        job.inner = w->alloc;
        w->alloc = (percept_allocator){alloc_locked, &job};
        pool_run(w->tick.pool, stage_part, &job);
        if (!job.failed[0] && !job.failed[1])
            pool_run(w->tick.pool, commit_part, &job);
        w->alloc = job.inner;
        pthread_mutex_destroy(&job.lock);
        if (job.failed[0] && !job.failed[1])
            take_back_new_pairs(w, w->tick.threads - 1, w->tick.workers[w->tick.threads - 1].len);
        if (job.failed[1] && !job.failed[0])
            unstage_indexes(w, count);
        return job.failed[0] || job.failed[1] ? -1 : (ptrdiff_t)job.events;
    }
    if (stage_indexes(w, count))
        return -1;
    if (add_new_pairs(w)) {
        unstage_indexes(w, count);
        return -1;
    }
    commit_part(&job, 0);
    commit_part(&job, 1);
    return (ptrdiff_t)job.events;
}

int percept_tick(percept_world *w, const percept_change *changes, size_t count)
{
    static const char fn[] = "percept_tick";
    int rc = world_check_caller(w, fn);
    if (rc)
        return rc;
    if (count == 0)
        return world_no_events(w);
    if (!changes)
        return world_error(w, PERCEPT_EINVAL, "%s: changes is NULL but count is %zu", fn, count);
    if (count > UINT32_MAX)
        return world_error(w, PERCEPT_EINVAL, "%s: count %zu is more than %" PRIu32 " changes", fn,
                           count, UINT32_MAX);
    size_t shapes = 0;
    for (size_t i = 0; i < count; i++)
        shapes += changes[i].kind != PERCEPT_CHANGE_MOVE;
    if (reserve_room(w, count, shapes))
        return world_error(w, PERCEPT_ENOMEM, "%s: out of memory; the world is unchanged", fn);
    shapes = 0;
    for (size_t i = 0; i < count; i++) {
        if ((rc = read_entry(w, &changes[i], i, &shapes))) {
            release_entries(w, i);
            /* The message names the entry; made only now, as every entry
             * passes here. */
            char rest[sizeof w->errmsg];
            snprintf(rest, sizeof rest, "%s", w->errmsg + sizeof fn + 1);
            world_error(w, rc, "%s: changes[%zu]: %s", fn, i, rest);
            w->err_index = i;
            return rc;
        }
    }
    w->refused_by = NULL;
    ptrdiff_t events = -1;
    if (search(w, count) || (events = apply(w, count)) < 0) {
        release_entries(w, count);
        const backend_group *bg = w->refused_by;
        if (bg)
            return world_error(w, PERCEPT_ENOMEM,
                               "%s: out of memory: backend '%s' (%s) could not make room (its "
                               "reserve() failed); the world is unchanged",
                               fn, bg->plugin.ops.name, bg->plugin.path);
        return world_error(w, PERCEPT_ENOMEM, "%s: out of memory; the world is unchanged", fn);
    }
    release_entries(w, count);
    w->events_len = 0;
    deliver(w, (size_t)events);
    if (w->close_requested)
        free_world(w);
    return PERCEPT_OK;
}
