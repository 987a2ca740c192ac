/*
 * model.c - the brute-force model of the perception relation (model.h).
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FREE UINT32_MAX

/* The double nearest to pi, as the relation's cone names it. */
static const double PI = 3.141592653589793;

/* The tests cannot go on without memory; there is nothing to recover. */
static void *grow(void *p, size_t n, size_t size)
{
    p = realloc(p, n * size);
    if (p == NULL) {
        fputs("model: out of memory\n", stderr);
        abort();
    }
    return p;
}

static unsigned all_senses(const model *m)
{
    return (1u << m->senses) - 1;
}

/* ------------------------------------------------------------------------ */
/* The rule                                                                  */

/*
 * Rule 6: the offset (dx, dy, dz) from o, at squared distance dd, lies in
 * o's cone for sense s. Every formula as written, left to right; the build
 * forbids fused multiply-add.
 */
static int in_cone(const model_entity *o, int s, double dx, double dy, double dz, double dd)
{
    double fov = o->sense[s].fov;
    if (fov == 360 || dd == 0)
        return 1;
    const double *f = o->facing;
    double c = cos(fov * (PI / 360));
    double dot = f[0] * dx + f[1] * dy + f[2] * dz;
    double q = c * c * (dd * (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]));
    if (c >= 0)
        return dot >= 0 && dot * dot >= q;
    return dot >= 0 || dot * dot <= q;
}

/*
 * The senses by which observer o perceives target t (percept.h, the
 * relation, rules 1 to 6), given `held`: the senses by which o perceived t
 * before the change, which extend each sense's reach by its margin.
 */
static unsigned rule(const model *m, const model_entity *o, const model_entity *t, unsigned held)
{
    unsigned senses = 0;
    if (o == t || !o->alive || !t->alive)
        return 0;
    double dx = t->x - o->x, dy = t->y - o->y, dz = t->z - o->z;
    double dd = dx * dx + dy * dy + dz * dz;
    for (int s = 0; s < m->senses; s++) {
        const model_sense *os = &o->sense[s];
        if (!(os->range > 0) || ((t->hidden >> s) & 1u) || (os->ignore & t->tags))
            continue;
        double l = ((held >> s) & 1u) ? os->range + os->margin : os->range;
        if (dd <= l * l && in_cone(o, s, dx, dy, dz, dd))
            senses |= 1u << s;
    }
    return senses;
}

/*
 * Where an entity stands and its longest range, in an array of their own: a
 * pair not yet held and out of both entities' longest ranges in x and y holds
 * no sense (its dd is no smaller, and without a margin the reach is the
 * range), so scanning this array finds the pairs worth judging quickly. A
 * removed entity stands nowhere (NaN).
 */
struct model_place {
    double x, y, reach;
};

static void set_place(model *m, uint32_t k)
{
    const model_entity *e = &m->ent[k];
    struct model_place *p = &m->place[k];
    p->x = e->alive ? e->x : NAN;
    p->y = e->y;
    p->reach = 0;
    for (int s = 0; s < m->senses; s++)
        p->reach = e->sense[s].range > p->reach ? e->sense[s].range : p->reach;
}

/* ------------------------------------------------------------------------ */
/* Valid values                                                              */

static int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static int valid_length(double r)
{
    return isfinite(r) && r >= 0 && r <= PERCEPT_COORD_LIMIT;
}

static int zero_facing(const double f[3])
{
    return f[0] == 0 && f[1] == 0 && f[2] == 0;
}

/* A sense of fov < 360 (0 means 360) needs a facing that is not zero. */
static int has_cone(const model *m, const model_sense *sense)
{
    for (int s = 0; s < m->senses; s++)
        if (sense[s].fov < 360)
            return 1;
    return 0;
}

/* The status percept_add() and percept_update() give a description. */
static int check_desc(const model *m, const percept_entity_desc *d)
{
    if (d == NULL || d->size != sizeof *d)
        return PERCEPT_EINVAL;
    if (!valid_coord(d->x) || !valid_coord(d->y) || !valid_coord(d->z))
        return PERCEPT_EINVAL;
    /* A facing is held to the limit of coordinates, as every number of a trace. */
    if (!valid_coord(d->facing[0]) || !valid_coord(d->facing[1]) || !valid_coord(d->facing[2]))
        return PERCEPT_EINVAL;
    if (d->hidden & ~all_senses(m))
        return PERCEPT_EINVAL;
    int cone = 0;
    for (int s = 0; s < PERCEPT_MAX_SENSES; s++) {
        const percept_sense_params *p = &d->sense[s];
        if (s >= m->senses) {
            if (p->range != 0 || p->margin != 0 || p->fov != 0 || p->ignore != 0)
                return PERCEPT_EINVAL;
            continue;
        }
        if (!valid_length(p->range) || !valid_length(p->margin))
            return PERCEPT_EINVAL;
        if (!(p->fov >= 0 && p->fov <= 360))
            return PERCEPT_EINVAL;
        cone |= p->fov != 0 && p->fov < 360;
    }
    return cone && zero_facing(d->facing) ? PERCEPT_EINVAL : PERCEPT_OK;
}

/* ------------------------------------------------------------------------ */
/* Entities and their IDs                                                    */

void model_init(model *m, int move_events)
{
    static const char *const defaults[] = {"sight", "hearing", "smell"};
    memset(m, 0, sizeof *m);
    m->move_events = move_events;
    model_set_senses(m, 3, defaults);
}

void model_set_senses(model *m, int count, const char *const *names)
{
    if (count < 1 || count > PERCEPT_MAX_SENSES || m->count > 0) {
        fprintf(stderr, "model_set_senses: %d senses, after %u adds\n", count, m->count);
        abort();
    }
    m->senses = count;
    memset(m->names, 0, sizeof m->names);
    for (int s = 0; s < count; s++)
        snprintf(m->names[s], sizeof m->names[s], "%s", names[s]);
}

const char *model_sense_name(const model *m, int s)
{
    static const char *const defaults[] = {"sight", "hearing", "smell"};
    if (m == NULL)
        return s >= 0 && s < 3 ? defaults[s] : "?";
    return s >= 0 && s < m->senses ? m->names[s] : "?";
}

void model_free(model *m)
{
    for (uint32_t i = 0; i < m->count; i++) {
        free(m->ent[i].out.v);
        free(m->ent[i].in.v);
    }
    free(m->ent);
    free(m->index);
    free(m->events);
    free(m->was_out);
    free(m->was_in);
    free(m->place);
    memset(m, 0, sizeof *m);
}

static size_t home(const model *m, percept_id id)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & m->index_mask;
}

/* The slot of id, or FREE for an ID never added. */
static uint32_t slot_of(const model *m, percept_id id)
{
    if (m->index == NULL)
        return FREE;
    for (size_t i = home(m, id);; i = (i + 1) & m->index_mask)
        if (m->index[i] == FREE || m->ent[m->index[i]].id == id)
            return m->index[i];
}

static void index_put(model *m, uint32_t slot)
{
    size_t i = home(m, m->ent[slot].id);
    while (m->index[i] != FREE)
        i = (i + 1) & m->index_mask;
    m->index[i] = slot;
}

/* A slot for a new ID, the index kept at most half full. */
static uint32_t new_slot(model *m, percept_id id)
{
    if (m->count == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->ent = grow(m->ent, m->cap, sizeof *m->ent);
        m->was_out = grow(m->was_out, m->cap, sizeof *m->was_out);
        m->was_in = grow(m->was_in, m->cap, sizeof *m->was_in);
        m->place = grow(m->place, m->cap, sizeof *m->place);
        memset(m->was_out, 0, m->cap * sizeof *m->was_out);
        memset(m->was_in, 0, m->cap * sizeof *m->was_in);
        free(m->index);
        m->index_mask = 2 * (size_t)m->cap - 1;
        m->index = grow(NULL, m->index_mask + 1, sizeof *m->index);
        memset(m->index, 0xff, (m->index_mask + 1) * sizeof *m->index);
        for (uint32_t i = 0; i < m->count; i++)
            index_put(m, i);
    }
    uint32_t slot = m->count++;
    memset(&m->ent[slot], 0, sizeof m->ent[slot]);
    m->ent[slot].id = id;
    index_put(m, slot);
    return slot;
}

const model_entity *model_get(const model *m, percept_id id)
{
    uint32_t slot = slot_of(m, id);
    return slot != FREE && m->ent[slot].alive ? &m->ent[slot] : NULL;
}

/* The slot of a live entity, or FREE. */
static uint32_t live_slot(const model *m, percept_id id)
{
    uint32_t k = slot_of(m, id);
    return k != FREE && m->ent[k].alive ? k : FREE;
}

percept_entity_desc model_desc(const model *m, const model_entity *e)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    d.x = e->x;
    d.y = e->y;
    d.z = e->z;
    memcpy(d.facing, e->facing, sizeof d.facing);
    d.tags = e->tags;
    d.hidden = e->hidden;
    for (int s = 0; s < m->senses; s++) {
        d.sense[s].range = e->sense[s].range;
        d.sense[s].margin = e->sense[s].margin;
        d.sense[s].fov = e->sense[s].fov;
        d.sense[s].ignore = e->sense[s].ignore;
    }
    return d;
}

/* ------------------------------------------------------------------------ */
/* A change and its events                                                   */

static percept_event *push_event(model *m)
{
    if (m->n_events == m->events_cap) {
        m->events_cap = m->events_cap ? 2 * m->events_cap : 256;
        m->events = grow(m->events, m->events_cap, sizeof *m->events);
    }
    percept_event *e = &m->events[m->n_events++];
    memset(e, 0, sizeof *e);
    return e;
}

static void push_pair_event(model *m, percept_event_kind kind, const model_entity *o,
                            const model_entity *t, int s)
{
    percept_event *e = push_event(m);
    e->kind = kind;
    e->sense = s;
    e->observer = o->id;
    e->target = t->id;
    e->x = t->x;
    e->y = t->y;
    e->z = t->z;
    e->has_source = 1; /* percept.h: 1 for every event but a stimulus */
}

/* Appends `other` to a list that does not hold it yet, if any sense is held. */
static void links_push(model_links *l, uint32_t other, unsigned senses)
{
    if (!senses)
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = grow(l->v, l->cap, sizeof *l->v);
    }
    l->v[l->n++] = (model_link){other, senses};
}

/* Sets the senses of `other` in a list: an entry for each pair held. */
static void links_set(model_links *l, uint32_t other, unsigned senses)
{
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->v[i].other == other) {
            if (senses)
                l->v[i].senses = senses;
            else
                l->v[i] = l->v[--l->n];
            return;
        }
    }
    links_push(l, other, senses);
}

/* Events of one pair whose senses went from `was` to `now`. */
static void pair_events(model *m, const model_entity *o, const model_entity *t, unsigned was,
                        unsigned now, int target_moved)
{
    for (int s = 0; s < m->senses; s++) {
        unsigned bit = 1u << s;
        if ((was ^ now) & bit)
            push_pair_event(m, (now & bit) ? PERCEPT_ENTER : PERCEPT_LEAVE, o, t, s);
        else if (target_moved && (was & now & bit))
            push_pair_event(m, PERCEPT_MOVE, o, t, s);
    }
}

/*
 * Entity k has just changed (its record holds the state after the call):
 * every pair it is part of, both ways, is judged again on what it held
 * before; the differences are the events, appended in order, and the
 * relation kept is brought up to date. `moved`: its position changed, so
 * the observers that keep it get MOVE events (when the world reports them).
 */
static void judge(model *m, uint32_t k, int moved)
{
    model_entity *e = &m->ent[k];
    size_t first = m->n_events;
    set_place(m, k);
    const struct model_place here = m->place[k];
    for (uint32_t i = 0; i < e->out.n; i++)
        m->was_out[e->out.v[i].other] = e->out.v[i].senses;
    for (uint32_t i = 0; i < e->in.n; i++)
        m->was_in[e->in.v[i].other] = e->in.v[i].senses;
    model_links out = {NULL, 0, 0}, in = {NULL, 0, 0};
    for (uint32_t j = 0; j < m->count; j++) {
        const struct model_place *p = &m->place[j];
        double dx = p->x - here.x, dy = p->y - here.y,
               reach = p->reach > here.reach ? p->reach : here.reach;
        unsigned was_out = m->was_out[j], was_in = m->was_in[j];
        if (!(was_out | was_in) && !(dx * dx + dy * dy <= reach * reach))
            continue; /* nothing held, nothing in reach (or no entity) */
        model_entity *o = &m->ent[j];
        if (j == k)
            continue;
        unsigned now_out = rule(m, e, o, was_out), now_in = rule(m, o, e, was_in);
        pair_events(m, e, o, was_out, now_out, 0);
        pair_events(m, o, e, was_in, now_in, moved && m->move_events);
        if (now_out != was_out)
            links_set(&o->in, k, now_out);
        if (now_in != was_in)
            links_set(&o->out, k, now_in);
        links_push(&out, j, now_out);
        links_push(&in, j, now_in);
        m->was_out[j] = m->was_in[j] = 0;
    }
    free(e->out.v);
    free(e->in.v);
    e->out = out;
    e->in = in;
    if (m->n_events > first)
        qsort(m->events + first, m->n_events - first, sizeof *m->events, model_event_cmp);
}

/* Entity k takes every field of d (checked). */
static void set_fields(model *m, uint32_t k, const percept_entity_desc *d)
{
    model_entity *e = &m->ent[k];
    e->x = d->x;
    e->y = d->y;
    e->z = d->z;
    memcpy(e->facing, d->facing, sizeof e->facing);
    e->tags = d->tags;
    e->hidden = d->hidden;
    for (int s = 0; s < m->senses; s++) {
        const percept_sense_params *p = &d->sense[s];
        model_sense *ms = &e->sense[s];
        ms->range = p->range == 0 ? 0 : p->range; /* -0 is 0 */
        ms->margin = p->margin == 0 ? 0 : p->margin;
        ms->fov = p->fov == 0 ? 360 : p->fov;
        ms->ignore = p->ignore;
    }
}

int model_add(model *m, percept_id id, const percept_entity_desc *d)
{
    m->n_events = 0;
    if (model_get(m, id) != NULL)
        return PERCEPT_EEXIST;
    int status = check_desc(m, d);
    if (status != PERCEPT_OK)
        return status;
    uint32_t k = slot_of(m, id);
    if (k == FREE)
        k = new_slot(m, id);
    m->ent[k].alive = 1;
    set_fields(m, k, d);
    m->alive++;
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_update(model *m, percept_id id, const percept_entity_desc *d)
{
    m->n_events = 0;
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    int status = check_desc(m, d);
    if (status != PERCEPT_OK)
        return status;
    const model_entity *e = &m->ent[k];
    int moved = !(e->x == d->x && e->y == d->y && e->z == d->z);
    set_fields(m, k, d);
    judge(m, k, moved);
    return PERCEPT_OK;
}

/* A move, its events appended to those already in m->events. */
static int move(model *m, percept_id id, double x, double y, const double *z)
{
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    if (!valid_coord(x) || !valid_coord(y) || (z != NULL && !valid_coord(*z)))
        return PERCEPT_EINVAL;
    model_entity *e = &m->ent[k];
    double to_z = z != NULL ? *z : e->z;
    if (e->x == x && e->y == y && e->z == to_z)
        return PERCEPT_OK; /* in place: no change, no events */
    e->x = x;
    e->y = y;
    e->z = to_z;
    judge(m, k, 1);
    return PERCEPT_OK;
}

int model_move(model *m, percept_id id, double x, double y)
{
    m->n_events = 0;
    return move(m, id, x, y, NULL);
}

int model_move3(model *m, percept_id id, double x, double y, double z)
{
    m->n_events = 0;
    return move(m, id, x, y, &z);
}

int model_turn(model *m, percept_id id, double fx, double fy, double fz)
{
    m->n_events = 0;
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    model_entity *e = &m->ent[k];
    const double f[3] = {fx, fy, fz};
    if (!valid_coord(fx) || !valid_coord(fy) || !valid_coord(fz) ||
        (zero_facing(f) && has_cone(m, e->sense)))
        return PERCEPT_EINVAL;
    memcpy(e->facing, f, sizeof f);
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_remove(model *m, percept_id id)
{
    m->n_events = 0;
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    m->ent[k].alive = 0;
    m->alive--;
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_set_range(model *m, percept_id id, percept_sense sense, double range)
{
    m->n_events = 0;
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    if (sense < 0 || sense >= m->senses || !valid_length(range))
        return PERCEPT_EINVAL;
    m->ent[k].sense[sense].range = range == 0 ? 0 : range;
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_set_hidden(model *m, percept_id id, percept_sense sense, int hidden)
{
    m->n_events = 0;
    uint32_t k = live_slot(m, id);
    if (k == FREE)
        return PERCEPT_ENOENT;
    if (sense < 0 || sense >= m->senses)
        return PERCEPT_EINVAL;
    if (hidden)
        m->ent[k].hidden |= 1u << sense;
    else
        m->ent[k].hidden &= ~(1u << sense);
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_emit(model *m, const percept_stimulus *st)
{
    m->n_events = 0;
    if (st == NULL || st->size != sizeof *st || st->sense < 0 || st->sense >= m->senses ||
        !valid_coord(st->x) || !valid_coord(st->y) || !valid_coord(st->z) ||
        !valid_length(st->strength))
        return PERCEPT_EINVAL;
    if (st->has_source && model_get(m, st->source) == NULL)
        return PERCEPT_ENOENT;
    double strength = st->strength == 0 ? 1 : st->strength;
    int s = st->sense;
    for (uint32_t j = 0; j < m->count; j++) {
        const model_entity *o = &m->ent[j];
        const model_sense *os = &o->sense[s];
        if (!o->alive || (st->has_source && o->id == st->source) || !(os->range > 0) ||
            (os->ignore & st->tags))
            continue;
        double dx = st->x - o->x, dy = st->y - o->y, dz = st->z - o->z;
        double dd = dx * dx + dy * dy + dz * dz, l = strength * os->range;
        if (!(dd <= l * l && in_cone(o, s, dx, dy, dz, dd)))
            continue;
        percept_event *e = push_event(m);
        e->kind = PERCEPT_STIMULUS;
        e->sense = s;
        e->observer = o->id;
        e->target = st->has_source ? st->source : 0;
        e->x = st->x;
        e->y = st->y;
        e->z = st->z;
        e->has_source = st->has_source != 0;
    }
    if (m->n_events > 1)
        qsort(m->events, m->n_events, sizeof *m->events, model_event_cmp);
    return PERCEPT_OK;
}

/* ------------------------------------------------------------------------ */
/* A tick                                                                    */

/* The status the checks of an entry's own call give it (percept_move3(),
 * percept_turn(), percept_update()), its entity `e` in the world. */
static int check_change(const model *m, const model_entity *e, const percept_change *c)
{
    const double v[3] = {c->x, c->y, c->z};
    switch (c->kind) {
    case PERCEPT_CHANGE_MOVE:
        return valid_coord(v[0]) && valid_coord(v[1]) && valid_coord(v[2]) ? PERCEPT_OK
                                                                           : PERCEPT_EINVAL;
    case PERCEPT_CHANGE_TURN:
        if (!valid_coord(v[0]) || !valid_coord(v[1]) || !valid_coord(v[2]))
            return PERCEPT_EINVAL;
        return zero_facing(v) && has_cone(m, e->sense) ? PERCEPT_EINVAL : PERCEPT_OK;
    case PERCEPT_CHANGE_UPDATE:
        return check_desc(m, c->desc);
    }
    return PERCEPT_EINVAL; /* a kind percept.h does not name */
}

int model_check_tick(const model *m, const percept_change *changes, size_t count, size_t *bad)
{
    *bad = SIZE_MAX;
    if (count == 0)
        return PERCEPT_OK;
    if (changes == NULL || count > UINT32_MAX)
        return PERCEPT_EINVAL;
    for (size_t i = 0; i < count; i++) {
        const model_entity *e = model_get(m, changes[i].id);
        int status = e == NULL ? PERCEPT_ENOENT : check_change(m, e, &changes[i]);
        for (size_t j = 0; j < i && status == PERCEPT_OK; j++)
            if (changes[j].id == changes[i].id)
                status = PERCEPT_EINVAL; /* named twice */
        if (status != PERCEPT_OK) {
            *bad = i;
            return status;
        }
    }
    return PERCEPT_OK;
}

/*
 * The brute-force way: the relation before the tick kept whole, every change
 * made, then every ordered pair of the world judged again against what it
 * held before. A pair of two entities the tick leaves alone comes out as it
 * was (its state is the same, and a pair held stays within R + M), so only
 * the changed entities' pairs can give events; judging them all keeps the
 * model free of any idea of which pairs a tick reaches.
 */
int model_tick(model *m, const percept_change *changes, size_t count)
{
    size_t bad;
    m->n_events = 0;
    int status = model_check_tick(m, changes, count, &bad);
    if (status != PERCEPT_OK || count == 0)
        return status;
    const size_t n = m->count;
    unsigned *before = grow(NULL, n * n, sizeof *before);
    unsigned char *moved = grow(NULL, n, 1);
    memset(before, 0, n * n * sizeof *before);
    memset(moved, 0, n);
    for (size_t o = 0; o < n; o++)
        for (uint32_t i = 0; i < m->ent[o].out.n; i++)
            before[o * n + m->ent[o].out.v[i].other] = m->ent[o].out.v[i].senses;
    for (size_t i = 0; i < count; i++) {
        const percept_change *c = &changes[i];
        uint32_t k = live_slot(m, c->id);
        model_entity *e = &m->ent[k];
        if (c->kind == PERCEPT_CHANGE_MOVE) {
            moved[k] = !(e->x == c->x && e->y == c->y && e->z == c->z);
            if (moved[k]) { /* in place, as percept_move3(): nothing changes */
                e->x = c->x;
                e->y = c->y;
                e->z = c->z;
            }
        } else if (c->kind == PERCEPT_CHANGE_TURN) {
            e->facing[0] = c->x;
            e->facing[1] = c->y;
            e->facing[2] = c->z;
        } else {
            const percept_entity_desc *d = c->desc;
            moved[k] = !(e->x == d->x && e->y == d->y && e->z == d->z);
            set_fields(m, k, d);
        }
        set_place(m, k);
    }
    for (size_t o = 0; o < n; o++) {
        for (size_t t = 0; t < n; t++) {
            if (o == t)
                continue;
            model_entity *eo = &m->ent[o], *et = &m->ent[t];
            unsigned was = before[o * n + t], now = rule(m, eo, et, was);
            pair_events(m, eo, et, was, now, moved[t] && m->move_events);
            if (now != was) {
                links_set(&eo->out, (uint32_t)t, now);
                links_set(&et->in, (uint32_t)o, now);
            }
        }
    }
    if (m->n_events > 1)
        qsort(m->events, m->n_events, sizeof *m->events, model_event_cmp);
    free(before);
    free(moved);
    return PERCEPT_OK;
}

/* ------------------------------------------------------------------------ */
/* Reading the relation                                                      */

static unsigned held(const model_entity *o, uint32_t t)
{
    for (uint32_t i = 0; i < o->out.n; i++)
        if (o->out.v[i].other == t)
            return o->out.v[i].senses;
    return 0;
}

int model_perceives(const model *m, percept_id observer, percept_id target, percept_sense sense)
{
    const model_entity *o = model_get(m, observer);
    if (o == NULL || model_get(m, target) == NULL)
        return -1;
    return (held(o, slot_of(m, target)) >> sense) & 1;
}

static int id_cmp(const void *a, const void *b)
{
    percept_id x = *(const percept_id *)a, y = *(const percept_id *)b;
    return x < y ? -1 : x > y;
}

/* Most lists are short: insertion sort is quicker there than qsort(). */
static void sort_ids(percept_id *ids, size_t n)
{
    if (n > 32) {
        qsort(ids, n, sizeof *ids, id_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            percept_id t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
}

size_t model_perceived(const model *m, percept_id id, percept_sense sense, int by_target,
                       percept_id *out)
{
    const model_entity *e = model_get(m, id);
    if (e == NULL)
        return 0;
    const model_links *l = by_target ? &e->in : &e->out;
    size_t n = 0;
    for (uint32_t i = 0; i < l->n; i++)
        if ((l->v[i].senses >> sense) & 1)
            out[n++] = m->ent[l->v[i].other].id;
    sort_ids(out, n);
    return n;
}

size_t model_ids(const model *m, percept_id *out)
{
    size_t n = 0;
    for (uint32_t i = 0; i < m->count; i++)
        if (m->ent[i].alive)
            out[n++] = m->ent[i].id;
    sort_ids(out, n);
    return n;
}

int model_query(const model *m, double x, double y, double z, double radius, percept_id *out,
                size_t *count)
{
    if (!valid_coord(x) || !valid_coord(y) || !valid_coord(z) || !valid_length(radius))
        return PERCEPT_EINVAL;
    size_t n = 0;
    for (uint32_t i = 0; i < m->count; i++) {
        const model_entity *e = &m->ent[i];
        double dx = e->x - x, dy = e->y - y, dz = e->z - z;
        if (e->alive && dx * dx + dy * dy + dz * dz <= radius * radius)
            out[n++] = e->id;
    }
    sort_ids(out, n);
    *count = n;
    return PERCEPT_OK;
}

/* ------------------------------------------------------------------------ */
/* Comparing with the library                                                */

int model_event_cmp(const void *a, const void *b)
{
    const percept_event *x = a, *y = b;
    if (x->observer != y->observer)
        return x->observer < y->observer ? -1 : 1;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    if (x->sense != y->sense)
        return x->sense < y->sense ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

static const char *kind_name(percept_event_kind kind)
{
    static const char *const names[] = {"enter", "leave", "move", "stimulus"};
    return (unsigned)kind < 4 ? names[kind] : "?";
}

void model_describe_event(const model *m, char *buf, size_t size, const percept_event *e)
{
    if (e == NULL) {
        snprintf(buf, size, "nothing");
        return;
    }
    char target[16];
    if (e->kind == PERCEPT_STIMULUS && !e->has_source)
        snprintf(target, sizeof target, "-");
    else
        snprintf(target, sizeof target, "%u", (unsigned)e->target);
    snprintf(buf, size, "%u %s %s %s at (%.17g, %.17g, %.17g)%s", (unsigned)e->observer, target,
             model_sense_name(m, e->sense), kind_name(e->kind), e->x, e->y, e->z,
             e->kind != PERCEPT_STIMULUS && e->has_source != 1 ? " has_source not 1" : "");
}

static int same_event(const percept_event *a, const percept_event *b)
{
    int unnamed = a->kind == PERCEPT_STIMULUS && !a->has_source;
    return a->kind == b->kind && a->sense == b->sense && a->observer == b->observer &&
           (unnamed || a->target == b->target) && a->x == b->x && a->y == b->y && a->z == b->z &&
           a->has_source == b->has_source;
}

int model_same_events(const model *m, const percept_event *want, size_t n_want,
                      const percept_event *got, size_t n_got, char *why, size_t size)
{
    for (size_t i = 0; i < n_want || i < n_got; i++) {
        const percept_event *a = i < n_want ? &want[i] : NULL, *b = i < n_got ? &got[i] : NULL;
        if (a && b && same_event(a, b))
            continue;
        char wa[160], ga[160];
        model_describe_event(m, wa, sizeof wa, a);
        model_describe_event(m, ga, sizeof ga, b);
        snprintf(why, size, "event %zu of %zu (the model has %zu): expected %s, got %s", i, n_got,
                 n_want, wa, ga);
        return 0;
    }
    return 1;
}

/* percept_get_entity() gives what the model holds, field by field. */
static int same_desc(const model *m, const percept_entity_desc *want,
                     const percept_entity_desc *got, char *why, size_t size, percept_id id)
{
    char field[64] = "";
    if (!(got->x == want->x && got->y == want->y && got->z == want->z))
        snprintf(field, sizeof field, "position");
    else if (!(got->facing[0] == want->facing[0] && got->facing[1] == want->facing[1] &&
               got->facing[2] == want->facing[2]))
        snprintf(field, sizeof field, "facing");
    else if (got->tags != want->tags)
        snprintf(field, sizeof field, "tags");
    else if (got->hidden != want->hidden)
        snprintf(field, sizeof field, "hidden mask");
    for (int s = 0; s < PERCEPT_MAX_SENSES && field[0] == '\0'; s++) {
        const percept_sense_params *a = &want->sense[s], *b = &got->sense[s];
        const char *what = a->range != b->range     ? "range"
                           : a->margin != b->margin ? "margin"
                           : a->fov != b->fov       ? "fov"
                           : a->ignore != b->ignore ? "ignore"
                                                    : NULL;
        if (what != NULL)
            snprintf(field, sizeof field, "%s.%s",
                     s < m->senses ? m->names[s] : "(a sense the world lacks)", what);
    }
    if (field[0] == '\0')
        return 1;
    snprintf(why, size, "entity %u reads back another %s than the model holds", (unsigned)id,
             field);
    return 0;
}

int model_check_world(const model *m, const percept_world *w, char *why, size_t size)
{
    if (percept_sense_count(w) != m->senses) {
        snprintf(why, size, "%d senses, the model has %d", percept_sense_count(w), m->senses);
        return 0;
    }
    for (int s = 0; s < m->senses; s++) {
        const char *name = percept_sense_name(w, s);
        if (name == NULL || strcmp(name, m->names[s]) != 0) {
            snprintf(why, size, "sense %d is named '%s', the model has '%s'", s,
                     name ? name : "(null)", m->names[s]);
            return 0;
        }
    }
    if (percept_entity_count(w) != m->alive) {
        snprintf(why, size, "%zu entities, the model has %zu", percept_entity_count(w), m->alive);
        return 0;
    }
    percept_id *want = grow(NULL, m->count + 1, sizeof *want);
    percept_id *got = grow(NULL, m->count + 1, sizeof *got);
    int ok = 1;
    for (uint32_t i = 0; i < m->count && ok; i++) {
        const model_entity *e = &m->ent[i];
        if (percept_contains(w, e->id) != e->alive) {
            snprintf(why, size, "percept_contains(%u) is %d, the model says %d", (unsigned)e->id,
                     !e->alive, e->alive);
            ok = 0;
            break;
        }
        if (!e->alive)
            continue;
        percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT, expect = model_desc(m, e);
        int rc = percept_get_entity(w, e->id, &d);
        if (rc != PERCEPT_OK) {
            snprintf(why, size, "percept_get_entity(%u) returned %d", (unsigned)e->id, rc);
            ok = 0;
            break;
        }
        if (!same_desc(m, &expect, &d, why, size, e->id)) {
            ok = 0;
            break;
        }
        for (int s = 0; s < m->senses && ok; s++) {
            for (int by = 0; by < 2 && ok; by++) {
                size_t n = 0, nw = model_perceived(m, e->id, s, by, want);
                rc = by ? percept_perceived_by(w, e->id, s, got, m->count, &n)
                        : percept_perceived(w, e->id, s, got, m->count, &n);
                if (rc != PERCEPT_OK || n != nw || memcmp(got, want, n * sizeof *got) != 0) {
                    size_t k = 0;
                    while (rc == PERCEPT_OK && k < n && k < nw && got[k] == want[k])
                        k++;
                    snprintf(why, size,
                             "%s(%u, %s): status %d, %zu IDs, the model has %zu; they part at "
                             "index %zu (%ld vs %ld)",
                             by ? "percept_perceived_by" : "percept_perceived", (unsigned)e->id,
                             m->names[s], rc, n, nw, k,
                             k < n && rc == PERCEPT_OK ? (long)got[k] : -1L,
                             k < nw ? (long)want[k] : -1L);
                    ok = 0;
                }
            }
        }
    }
    free(want);
    free(got);
    return ok;
}
