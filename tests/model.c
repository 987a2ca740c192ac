/*
 * model.c - the brute-force model of the perception relation (model.h).
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENSES PERCEPT_SENSE_COUNT
#define ALL_SENSES ((1u << SENSES) - 1)
#define FREE UINT32_MAX

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

/* ------------------------------------------------------------------------ */
/* The rule                                                                  */

/* dx*dx + dy*dy as the rule computes it; the same either way round (negating is exact). */
static double squared_distance(const model_entity *o, const model_entity *t)
{
    double dx = t->x - o->x, dy = t->y - o->y;
    return dx * dx + dy * dy;
}

/*
 * The senses by which observer o perceives target t (percept.h, the
 * relation): two entities in the world, o has the sense, t is not hidden
 * from it, and dd = dx*dx + dy*dy <= R*R, computed as written. `held` (the
 * senses by which o perceived t before the change) is what the next
 * version's margins depend on.
 */
static unsigned rule(const model_entity *o, const model_entity *t, double dd, unsigned held)
{
    (void)held;
    unsigned senses = 0;
    if (o == t || !o->alive || !t->alive)
        return 0;
    for (int s = 0; s < SENSES; s++) {
        double r = o->range[s];
        if (r > 0 && !(t->hidden & (1u << s)) && dd <= r * r)
            senses |= 1u << s;
    }
    return senses;
}

/*
 * Where an entity stands and its longest range, in an array of their own:
 * a pair out of both entities' longest ranges holds no sense (rule() would
 * find nothing), and scanning this array finds the pairs worth judging
 * quickly. A removed entity stands nowhere (NaN).
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
    for (int s = 0; s < SENSES; s++)
        p->reach = e->range[s] > p->reach ? e->range[s] : p->reach;
}

static int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static int valid_range(double r)
{
    return isfinite(r) && r >= 0 && r <= PERCEPT_COORD_LIMIT;
}

/* ------------------------------------------------------------------------ */
/* Entities and their IDs                                                    */

void model_init(model *m, int move_events)
{
    memset(m, 0, sizeof *m);
    m->move_events = move_events;
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
    free(m->event_move);
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

/* ------------------------------------------------------------------------ */
/* A change and its events                                                   */

static void push_event(model *m, percept_event_kind kind, const model_entity *o,
                       const model_entity *t, int s)
{
    if (m->n_events == m->events_cap) {
        m->events_cap = m->events_cap ? 2 * m->events_cap : 256;
        m->events = grow(m->events, m->events_cap, sizeof *m->events);
        m->event_move = grow(m->event_move, m->events_cap, sizeof *m->event_move);
    }
    m->event_move[m->n_events] = 0;
    percept_event *e = &m->events[m->n_events++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->sense = (percept_sense)s;
    e->observer = o->id;
    e->target = t->id;
    e->x = t->x;
    e->y = t->y;
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
    for (int s = 0; s < SENSES; s++) {
        unsigned bit = 1u << s;
        if ((was ^ now) & bit)
            push_event(m, (now & bit) ? PERCEPT_ENTER : PERCEPT_LEAVE, o, t, s);
        else if (target_moved && (was & now & bit))
            push_event(m, PERCEPT_MOVE, o, t, s);
    }
}

/*
 * Entity k has just changed (its record holds the state after the call):
 * every pair it is part of, both ways, is judged again; the differences are
 * the events, appended in order, and the relation kept is brought up to date.
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
        double dd = squared_distance(e, o);
        unsigned now_out = rule(e, o, dd, was_out), now_in = rule(o, e, dd, was_in);
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

int model_add(model *m, percept_id id, const percept_entity_desc *d)
{
    m->n_events = 0;
    if (model_get(m, id) != NULL)
        return PERCEPT_EEXIST;
    if (d == NULL || !valid_coord(d->x) || !valid_coord(d->y) || (d->hidden & ~ALL_SENSES))
        return PERCEPT_EINVAL;
    for (int s = 0; s < SENSES; s++)
        if (!valid_range(d->range[s]))
            return PERCEPT_EINVAL;
    uint32_t k = slot_of(m, id);
    if (k == FREE)
        k = new_slot(m, id);
    model_entity *e = &m->ent[k];
    e->alive = 1;
    e->x = d->x;
    e->y = d->y;
    for (int s = 0; s < SENSES; s++)
        e->range[s] = d->range[s] == 0 ? 0 : d->range[s]; /* -0 is 0 */
    e->hidden = d->hidden;
    m->alive++;
    judge(m, k, 0);
    return PERCEPT_OK;
}

/* A move, its events appended to those already in m->events. */
static int move(model *m, percept_id id, double x, double y)
{
    uint32_t k = slot_of(m, id);
    if (k == FREE || !m->ent[k].alive)
        return PERCEPT_ENOENT;
    if (!valid_coord(x) || !valid_coord(y))
        return PERCEPT_EINVAL;
    model_entity *e = &m->ent[k];
    if (e->x == x && e->y == y)
        return PERCEPT_OK; /* in place: no change, no events */
    e->x = x;
    e->y = y;
    judge(m, k, 1);
    return PERCEPT_OK;
}

int model_move(model *m, percept_id id, double x, double y)
{
    m->n_events = 0;
    return move(m, id, x, y);
}

void model_move_batch(model *m, const percept_position *batch, const size_t *order, size_t count)
{
    m->n_events = 0;
    for (size_t k = 0; k < count; k++) {
        size_t first = m->n_events;
        const percept_position *q = &batch[order[k]];
        if (move(m, q->id, q->x, q->y) != PERCEPT_OK) {
            fprintf(stderr, "model_move_batch: moves[%zu] is no valid move\n", order[k]);
            abort();
        }
        for (size_t e = first; e < m->n_events; e++)
            m->event_move[e] = k + 1;
    }
}

int model_remove(model *m, percept_id id)
{
    m->n_events = 0;
    uint32_t k = slot_of(m, id);
    if (k == FREE || !m->ent[k].alive)
        return PERCEPT_ENOENT;
    m->ent[k].alive = 0;
    m->alive--;
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_set_range(model *m, percept_id id, percept_sense sense, double range)
{
    m->n_events = 0;
    uint32_t k = slot_of(m, id);
    if (k == FREE || !m->ent[k].alive)
        return PERCEPT_ENOENT;
    if ((unsigned)sense >= SENSES || !valid_range(range))
        return PERCEPT_EINVAL;
    m->ent[k].range[sense] = range == 0 ? 0 : range;
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_set_hidden(model *m, percept_id id, percept_sense sense, int hidden)
{
    m->n_events = 0;
    uint32_t k = slot_of(m, id);
    if (k == FREE || !m->ent[k].alive)
        return PERCEPT_ENOENT;
    if ((unsigned)sense >= SENSES)
        return PERCEPT_EINVAL;
    if (hidden)
        m->ent[k].hidden |= 1u << sense;
    else
        m->ent[k].hidden &= ~(1u << sense);
    judge(m, k, 0);
    return PERCEPT_OK;
}

int model_check_batch(const model *m, const percept_position *moves, size_t count, size_t *bad)
{
    *bad = SIZE_MAX;
    if (count == 0)
        return PERCEPT_OK;
    if (moves == NULL || count > UINT32_MAX)
        return PERCEPT_EINVAL;
    for (size_t i = 0; i < count; i++) {
        int status = PERCEPT_OK;
        if (model_get(m, moves[i].id) == NULL)
            status = PERCEPT_ENOENT;
        else if (!valid_coord(moves[i].x) || !valid_coord(moves[i].y))
            status = PERCEPT_EINVAL;
        for (size_t j = 0; j < i && status == PERCEPT_OK; j++)
            if (moves[j].id == moves[i].id)
                status = PERCEPT_EINVAL; /* named twice */
        if (status != PERCEPT_OK) {
            *bad = i;
            return status;
        }
    }
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

/* ------------------------------------------------------------------------ */
/* Comparing with the library                                                */

typedef struct order_probe {
    const percept_position *batch;
    size_t n, *order, count;
    int stray;
} order_probe;

/* Each event names the moving entity as its target: the first of a run is its move. */
static void order_event(void *user, const percept_event *e)
{
    order_probe *p = user;
    size_t i = 0;
    while (i < p->n && p->batch[i].id != e->target)
        i++;
    if (i == p->n || (p->count > 0 && p->order[p->count - 1] == i))
        p->stray |= i == p->n;
    else if (p->count < p->n)
        p->order[p->count++] = i;
    else
        p->stray = 1;
}

/*
 * From a bruteforce world with the same bounds where every move shows:
 * each entity of the batch stands where the model has it and perceives
 * nothing, and a watcher stands on each target. With MOVE events on, each
 * move delivers events naming its entity as the target before the next
 * move is made: the order of their first appearance is that of the moves.
 */
size_t model_batch_order(const model *m, const percept_bounds *bounds,
                         const percept_position *batch, size_t n, size_t *order)
{
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.backend = "bruteforce";
    options.bounds = bounds;
    percept_world *w = NULL;
    percept_error error;
    if (percept_world_open_string(&w, "[percept]\nmove_events = on\n", "<order>", &options,
                                  &error) != PERCEPT_OK)
        return SIZE_MAX;
    int ok = 1;
    size_t moving = 0;
    percept_id watcher = 0;
    for (size_t i = 0; i < n && ok; i++) {
        const model_entity *e = model_get(m, batch[i].id);
        percept_entity_desc d = {0};
        ok = e != NULL;
        if (ok) {
            d.x = e->x;
            d.y = e->y;
            ok = percept_add(w, batch[i].id, &d) == PERCEPT_OK;
            moving += !(e->x == batch[i].x && e->y == batch[i].y);
        }
    }
    for (size_t i = 0; i < n && ok; i++) {
        for (int taken = 1; taken;) { /* an ID that no entry of the batch has */
            taken = 0;
            watcher++;
            for (size_t j = 0; j < n; j++)
                taken |= batch[j].id == watcher;
        }
        percept_entity_desc d = {batch[i].x, batch[i].y, {0.5, 0, 0}, 0};
        ok = percept_add(w, watcher, &d) == PERCEPT_OK;
    }
    order_probe p = {batch, n, order, 0, 0};
    ok = ok && percept_set_event_callback(w, order_event, &p) == PERCEPT_OK &&
         percept_move_many(w, batch, n) == PERCEPT_OK;
    percept_world_close(w);
    return ok && !p.stray && p.count == moving ? p.count : SIZE_MAX;
}

int model_event_cmp(const void *a, const void *b)
{
    const percept_event *x = a, *y = b;
    if (x->observer != y->observer)
        return x->observer < y->observer ? -1 : 1;
    if (x->target != y->target)
        return x->target < y->target ? -1 : 1;
    if (x->sense != y->sense)
        return (int)x->sense < (int)y->sense ? -1 : 1;
    return (int)x->kind - (int)y->kind;
}

static const char *kind_name(percept_event_kind kind)
{
    return kind == PERCEPT_ENTER ? "enter" : kind == PERCEPT_LEAVE ? "leave" : "move";
}

static void describe(char *buf, size_t size, const percept_event *e)
{
    if (e == NULL) {
        snprintf(buf, size, "nothing");
        return;
    }
    const char *sense = percept_sense_name(e->sense);
    snprintf(buf, size, "%u %u %s %s at (%.17g, %.17g)", (unsigned)e->observer, (unsigned)e->target,
             sense ? sense : "?", kind_name(e->kind), e->x, e->y);
}

int model_same_events(const percept_event *want, size_t n_want, const percept_event *got,
                      size_t n_got, char *why, size_t size)
{
    for (size_t i = 0; i < n_want || i < n_got; i++) {
        const percept_event *a = i < n_want ? &want[i] : NULL, *b = i < n_got ? &got[i] : NULL;
        if (a && b && a->kind == b->kind && a->sense == b->sense && a->observer == b->observer &&
            a->target == b->target && a->x == b->x && a->y == b->y)
            continue;
        char wa[128], ga[128];
        describe(wa, sizeof wa, a);
        describe(ga, sizeof ga, b);
        snprintf(why, size, "event %zu of %zu (the model has %zu): expected %s, got %s", i, n_got,
                 n_want, wa, ga);
        return 0;
    }
    return 1;
}

int model_check_world(const model *m, const percept_world *w, char *why, size_t size)
{
    if (percept_entity_count(w) != m->alive) {
        snprintf(why, size, "%zu entities, the model has %zu", percept_entity_count(w), m->alive);
        return 0;
    }
    percept_id *want = grow(NULL, m->count + 1, sizeof *want);
    percept_id *got = grow(NULL, m->count + 1, sizeof *got);
    int ok = 1;
    for (uint32_t i = 0; i < m->count && ok; i++) {
        const model_entity *e = &m->ent[i];
        percept_entity_desc d;
        if (percept_contains(w, e->id) != e->alive) {
            snprintf(why, size, "percept_contains(%u) is %d, the model says %d", (unsigned)e->id,
                     !e->alive, e->alive);
            ok = 0;
            break;
        }
        if (!e->alive)
            continue;
        if (percept_get_entity(w, e->id, &d) != PERCEPT_OK || d.x != e->x || d.y != e->y ||
            d.hidden != e->hidden || d.range[0] != e->range[0] || d.range[1] != e->range[1] ||
            d.range[2] != e->range[2]) {
            snprintf(why, size, "entity %u reads back otherwise than the model holds it",
                     (unsigned)e->id);
            ok = 0;
            break;
        }
        for (int s = 0; s < SENSES && ok; s++) {
            for (int by = 0; by < 2 && ok; by++) {
                size_t n = 0, nw = model_perceived(m, e->id, (percept_sense)s, by, want);
                int rc = by ? percept_perceived_by(w, e->id, (percept_sense)s, got, m->count, &n)
                            : percept_perceived(w, e->id, (percept_sense)s, got, m->count, &n);
                if (rc != PERCEPT_OK || n != nw || memcmp(got, want, n * sizeof *got) != 0) {
                    size_t k = 0;
                    while (rc == PERCEPT_OK && k < n && k < nw && got[k] == want[k])
                        k++;
                    snprintf(why, size,
                             "%s(%u, %s): status %d, %zu IDs, the model has %zu; they part at "
                             "index %zu (%ld vs %ld)",
                             by ? "percept_perceived_by" : "percept_perceived", (unsigned)e->id,
                             percept_sense_name((percept_sense)s), rc, n, nw, k,
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
