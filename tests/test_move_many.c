/*
 * test_move_many.c - percept_move_many(), a tick's moves in one call, against
 * an independent brute-force model of the relation: move by move on every
 * backend, the same events from every backend, validation, EBUSY and failure
 * part-way through a batch when memory runs out.
 *
 * The model knows nothing of the library: it evaluates the definition of
 * TRACE.md literally. The library chooses the order of a batch's moves, so
 * the model cannot predict the event stream; it checks it instead. The event
 * callback reads the positions of the batch's entities (reading is allowed
 * there), which tells which moves have been made when each event arrives, so
 * the stream splits into the groups of the individual moves. Each group must
 * equal, event for event, what the model delivers for that move alone in the
 * state the earlier moves left. Moves that deliver nothing are invisible to
 * that probe; where several were made between two events, a small search
 * looks for an order of them in which each is silent, as the contract says.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE for the huge-count test */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../tools/splitmix.h"

#define S PERCEPT_SIGHT
#define H PERCEPT_HEARING
#define M PERCEPT_SMELL
#define SB(s) PERCEPT_SENSE_BIT(s)
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#define MAXN 256 /* entities in a model */

/* ------------------------------------------------------------------------ */
/* Random numbers: splitmix64, so that every run is the same                 */

static uint32_t below(uint64_t *r, uint32_t n)
{
    return (uint32_t)(splitmix_next(r) % n);
}

static int chance(uint64_t *r, uint32_t percent)
{
    return below(r, 100) < percent;
}

/* ------------------------------------------------------------------------ */
/* Event lists                                                               */

typedef struct evlist {
    percept_event *v;
    size_t n, cap;
} evlist;

static void ev_push(evlist *l, const percept_event *e)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n++] = *e;
}

static void ev_free(evlist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int same_event(const percept_event *a, const percept_event *b)
{
    return a->kind == b->kind && a->sense == b->sense && a->observer == b->observer &&
           a->target == b->target && a->x == b->x && a->y == b->y;
}

static int same_events(const percept_event *a, size_t na, const percept_event *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!same_event(&a[i], &b[i]))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The model: the relation of TRACE.md, evaluated literally                  */

typedef struct ment {
    percept_id id;
    double x, y;
    double range[PERCEPT_SENSE_COUNT];
    unsigned hidden;
} ment;

typedef struct id_slot {
    percept_id id;
    int slot;
} id_slot;

typedef struct model {
    int n;
    int moves_on; /* MOVE events are delivered */
    ment e[MAXN];
    id_slot index[MAXN]; /* by ascending ID */
    /* rel[i][j]: bit s set when slot i perceives slot j by sense s. */
    unsigned char rel[MAXN][MAXN];
} model;

static int spec_perceives(const ment *o, const ment *t, int s)
{
    double dx, dy, r;
    if (o == t)
        return 0;
    r = o->range[s];
    if (!(r > 0))
        return 0;
    if (t->hidden & SB(s))
        return 0;
    dx = t->x - o->x;
    dy = t->y - o->y;
    return dx * dx + dy * dy <= r * r;
}

static unsigned char model_bits(const model *m, int i, int j)
{
    unsigned char bits = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (spec_perceives(&m->e[i], &m->e[j], s))
            bits |= (unsigned char)SB(s);
    return bits;
}

/* The whole relation, afresh. */
static void model_fill(model *m)
{
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            m->rel[i][j] = model_bits(m, i, j);
}

static int cmp_id_slot(const void *a, const void *b)
{
    percept_id x = ((const id_slot *)a)->id, y = ((const id_slot *)b)->id;
    return x < y ? -1 : x > y;
}

static void model_add(model *m, percept_id id, percept_entity_desc d)
{
    assert_true(m->n < MAXN);
    ment *e = &m->e[m->n];
    e->id = id;
    e->x = d.x;
    e->y = d.y;
    memcpy(e->range, d.range, sizeof e->range);
    e->hidden = d.hidden;
    m->index[m->n].id = id;
    m->index[m->n].slot = m->n;
    m->n++;
    qsort(m->index, (size_t)m->n, sizeof m->index[0], cmp_id_slot);
}

static int slot_of(const model *m, percept_id id)
{
    id_slot key = {id, 0};
    const id_slot *f = bsearch(&key, m->index, (size_t)m->n, sizeof key, cmp_id_slot);
    return f != NULL ? f->slot : -1;
}

/* Append pair (i, j)'s events: ENTER/LEAVE per changed sense, MOVE per kept one when
 * `moved` (the target j has just moved). */
static void model_pair(model *m, int i, int j, int moved, evlist *out)
{
    unsigned char was = m->rel[i][j], now = model_bits(m, i, j);
    const ment *t = &m->e[j];
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        unsigned bit = SB(s);
        percept_event_kind kind;
        if ((was ^ now) & bit)
            kind = (now & bit) ? PERCEPT_ENTER : PERCEPT_LEAVE;
        else if (moved && (was & now & bit))
            kind = PERCEPT_MOVE;
        else
            continue;
        percept_event ev = tu_ev(kind, m->e[i].id, t->id, (percept_sense)s, t->x, t->y);
        ev_push(out, &ev);
    }
    m->rel[i][j] = now;
}

/*
 * What percept_move(slot, x, y) delivers, in the documented order, into `out`
 * (cleared first); the move is made in the model. A move in place delivers
 * nothing. Returns the event count.
 */
static size_t model_move(model *m, int slot, double x, double y, evlist *out)
{
    ment *e = &m->e[slot];
    out->n = 0;
    if (e->x == x && e->y == y)
        return 0;
    e->x = x;
    e->y = y;
    for (int j = 0; j < m->n; j++)
        if (j != slot)
            model_pair(m, slot, j, 0, out);
    for (int i = 0; i < m->n; i++)
        if (i != slot)
            model_pair(m, i, slot, m->moves_on, out);
    tu_sort_events(out->v, out->n);
    return out->n;
}

/* 1 if both models hold the same positions and relation; else say where they differ. */
static int model_same(const model *a, const model *b, const char *what)
{
    if (a->n != b->n) {
        print_error("%s: %d vs %d entities\n", what, a->n, b->n);
        return 0;
    }
    for (int i = 0; i < a->n; i++) {
        if (a->e[i].x != b->e[i].x || a->e[i].y != b->e[i].y) {
            print_error("%s: entity %u at (%.17g, %.17g) vs (%.17g, %.17g)\n", what,
                        (unsigned)a->e[i].id, a->e[i].x, a->e[i].y, b->e[i].x, b->e[i].y);
            return 0;
        }
        for (int j = 0; j < a->n; j++) {
            if (a->rel[i][j] != b->rel[i][j]) {
                print_error("%s: %u -> %u by senses %u vs %u\n", what, (unsigned)a->e[i].id,
                            (unsigned)a->e[j].id, (unsigned)a->rel[i][j], (unsigned)b->rel[i][j]);
                return 0;
            }
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Checks of a world and of an event stream against the model                */

/* (a) The world holds the model's positions and relation, by every query of the relation. */
static int check_world(const model *m, const percept_world *w, const char *what)
{
    percept_id got[MAXN], want[MAXN];
    if (percept_entity_count(w) != (size_t)m->n) {
        print_error("%s: %zu entities, the model has %d\n", what, percept_entity_count(w), m->n);
        return 0;
    }
    for (int i = 0; i < m->n; i++) {
        const ment *e = &m->e[i];
        percept_entity_desc d;
        int rc = percept_get_entity(w, e->id, &d);
        if (rc != PERCEPT_OK || d.x != e->x || d.y != e->y) {
            print_error("%s: entity %u: status %d, at (%.17g, %.17g), model (%.17g, %.17g)\n", what,
                        (unsigned)e->id, rc, d.x, d.y, e->x, e->y);
            return 0;
        }
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            for (int by = 0; by < 2; by++) {
                size_t n = 0, nw = 0;
                rc = by ? percept_perceived_by(w, e->id, (percept_sense)s, got, MAXN, &n)
                        : percept_perceived(w, e->id, (percept_sense)s, got, MAXN, &n);
                /* The index is in ID order, like the API's lists. */
                for (int k = 0; k < m->n; k++) {
                    int j = m->index[k].slot;
                    if ((by ? m->rel[j][i] : m->rel[i][j]) & SB(s))
                        want[nw++] = m->e[j].id;
                }
                if (rc != PERCEPT_OK || n != nw || memcmp(got, want, n * sizeof *got) != 0) {
                    print_error("%s: %s(%u, %s): status %d, %zu IDs, the model has %zu\n", what,
                                by ? "percept_perceived_by" : "percept_perceived", (unsigned)e->id,
                                percept_sense_name((percept_sense)s), rc, n, nw);
                    print_error("  got:  ");
                    for (size_t k = 0; k < n && k < MAXN; k++)
                        print_error(" %u", (unsigned)got[k]);
                    print_error("\n  model:");
                    for (size_t k = 0; k < nw; k++)
                        print_error(" %u", (unsigned)want[k]);
                    print_error("\n");
                    return 0;
                }
            }
        }
    }
    return 1;
}

/*
 * (b) Starting from `before`'s relation, each event must change it (ENTER of
 * a pair not held, LEAVE of a pair held) or, for MOVE, name a pair held while
 * MOVE events are on; applied one by one they must end at `after`'s relation.
 * This also rules out two ENTERs (or two LEAVEs) of a pair with nothing
 * between them (d).
 */
static int check_stream(const model *before, const model *after, const percept_event *ev, size_t n,
                        const char *what)
{
    unsigned char(*rel)[MAXN] = malloc(sizeof before->rel);
    char line[200];
    int ok = 1;
    assert_non_null(rel);
    memcpy(rel, before->rel, sizeof before->rel);
    for (size_t k = 0; ok && k < n; k++) {
        const percept_event *e = &ev[k];
        int o = slot_of(before, e->observer), t = slot_of(before, e->target);
        const char *bad = NULL;
        if (o < 0 || t < 0 || (unsigned)e->sense >= PERCEPT_SENSE_COUNT) {
            bad = "names an unknown entity or sense";
        } else {
            unsigned char bit = (unsigned char)SB(e->sense);
            int held = (rel[o][t] & bit) != 0;
            switch (e->kind) {
            case PERCEPT_ENTER:
                if (held)
                    bad = "ENTER of a pair already held";
                rel[o][t] |= bit;
                break;
            case PERCEPT_LEAVE:
                if (!held)
                    bad = "LEAVE of a pair not held";
                rel[o][t] &= (unsigned char)~bit;
                break;
            case PERCEPT_MOVE:
                if (!before->moves_on)
                    bad = "MOVE with move_events = off";
                else if (!held)
                    bad = "MOVE of a pair not held";
                break;
            default:
                bad = "an unknown event kind";
                break;
            }
        }
        if (bad != NULL) {
            tu_format_event(line, sizeof line, e);
            print_error("%s: event [%zu] (%s): %s\n", what, k, line, bad);
            ok = 0;
        }
    }
    for (int i = 0; ok && i < before->n; i++) {
        for (int j = 0; ok && j < before->n; j++) {
            if (rel[i][j] != after->rel[i][j]) {
                print_error("%s: after the events %u -> %u by senses %u, the model says %u\n", what,
                            (unsigned)before->e[i].id, (unsigned)before->e[j].id,
                            (unsigned)rel[i][j], (unsigned)after->rel[i][j]);
                ok = 0;
            }
        }
    }
    free(rel);
    if (!ok)
        tu_print_events("the stream", ev, n);
    return ok;
}

/* 1 if slot i's position differs between the models. */
static int moved_between(const model *a, const model *b, int i)
{
    return a->e[i].x != b->e[i].x || a->e[i].y != b->e[i].y;
}

/*
 * (c) Every event names an entity that moved: the target of a MOVE, the
 * observer or target of an ENTER or LEAVE. (d) The stream is a run of sorted
 * groups, one per move at most: it descends fewer times than entities moved.
 */
static int check_shape(const model *before, const model *after, const percept_event *ev, size_t n,
                       const char *what)
{
    char line[200];
    size_t moved = 0, descents = 0;
    for (int i = 0; i < before->n; i++)
        moved += (size_t)moved_between(before, after, i);
    for (size_t k = 0; k < n; k++) {
        int o = slot_of(before, ev[k].observer), t = slot_of(before, ev[k].target);
        int ok = o >= 0 && t >= 0 &&
                 (ev[k].kind == PERCEPT_MOVE
                      ? moved_between(before, after, t)
                      : moved_between(before, after, o) || moved_between(before, after, t));
        if (!ok) {
            tu_format_event(line, sizeof line, &ev[k]);
            print_error("%s: event [%zu] (%s) names no entity that moved\n", what, k, line);
            return 0;
        }
        if (k > 0 && tu_event_cmp(&ev[k - 1], &ev[k]) >= 0)
            descents++;
    }
    if (n > 0 && descents >= moved) {
        print_error("%s: the stream falls out of order %zu times, %zu entities moved\n", what,
                    descents, moved);
        tu_print_events("the stream", ev, n);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The probe: which moves were made when each event arrived                  */

typedef struct probe {
    percept_world *w;
    tu_recorder rec;
    const percept_position *batch;
    size_t count;
    size_t *pending; /* entries not yet seen at their target */
    size_t n_pending;
    id_slot *by_id; /* the pending entries by ID (.slot: the entry) */
    size_t n_by_id;
    unsigned char *seen; /* [entry]: seen at its target */
    size_t *log_entry;   /* entries in the order they were seen at their target ... */
    size_t *log_event;   /* ... and the event at which each was first seen */
    size_t log_n;
    size_t problems;
    char problem[400];
    int active;
} probe;

static void probe_init(probe *p, percept_world *w)
{
    memset(p, 0, sizeof *p);
    p->w = w;
    tu_recorder_init(&p->rec);
}

static void probe_free(probe *p)
{
    tu_recorder_free(&p->rec);
    free(p->pending);
    free(p->by_id);
    free(p->seen);
    free(p->log_entry);
    free(p->log_event);
    memset(p, 0, sizeof *p);
}

static void probe_problem(probe *p, const percept_event *e, const char *text)
{
    char line[200];
    if (p->problems++ > 0)
        return;
    tu_format_event(line, sizeof line, e);
    snprintf(p->problem, sizeof p->problem, "event [%zu] (%s): %s", p->rec.count - 1, line, text);
}

static int at_target(const probe *p, size_t i)
{
    percept_entity_desc d;
    return percept_get_entity(p->w, p->batch[i].id, &d) == PERCEPT_OK && d.x == p->batch[i].x &&
           d.y == p->batch[i].y;
}

/*
 * The callback. Every event is recorded. While a batch is watched, the
 * entries not yet seen at their targets are looked up: those now there were
 * made before this event. Every event of a move names the entity moved, so
 * a new move shows at its first event as a named entity newly at its
 * target; only then (and at the first event) are all pending entries looked
 * up, which also finds the silent moves made before it. The pair the event
 * names must already be in the state the event announces.
 */
static void probe_event(void *user, const percept_event *e)
{
    probe *p = user;
    tu_recorder_push(&p->rec, e);
    if (!p->active)
        return;
    int rescan = p->log_n == 0;
    const percept_id named[2] = {e->observer, e->target};
    for (int k = 0; k < 2 && !rescan; k++) {
        id_slot key = {named[k], 0};
        const id_slot *f = bsearch(&key, p->by_id, p->n_by_id, sizeof key, cmp_id_slot);
        rescan = f != NULL && !p->seen[f->slot] && at_target(p, (size_t)f->slot);
    }
    if (rescan) {
        size_t kept = 0;
        for (size_t k = 0; k < p->n_pending; k++) {
            size_t i = p->pending[k];
            if (at_target(p, i)) {
                p->seen[i] = 1;
                p->log_entry[p->log_n] = i;
                p->log_event[p->log_n] = p->rec.count - 1;
                p->log_n++;
            } else {
                p->pending[kept++] = i;
            }
        }
        p->n_pending = kept;
    }
    if (p->log_n == 0)
        probe_problem(p, e, "delivered before any move of the batch was made");
    int held = percept_perceives(p->w, e->observer, e->target, e->sense);
    if (held != (e->kind == PERCEPT_LEAVE ? 0 : 1))
        probe_problem(p, e, "percept_perceives() inside the callback contradicts the event");
}

/* Watch `batch`: every entry not at its target now is a move to be made. */
static void probe_begin(probe *p, const percept_position *batch, size_t count)
{
    tu_recorder_clear(&p->rec);
    free(p->pending);
    free(p->by_id);
    free(p->seen);
    free(p->log_entry);
    free(p->log_event);
    p->pending = calloc(count + 1, sizeof *p->pending);
    p->by_id = calloc(count + 1, sizeof *p->by_id);
    p->seen = calloc(count + 1, sizeof *p->seen);
    p->log_entry = calloc(count + 1, sizeof *p->log_entry);
    p->log_event = calloc(count + 1, sizeof *p->log_event);
    assert_true(p->pending != NULL && p->by_id != NULL && p->seen != NULL && p->log_entry != NULL &&
                p->log_event != NULL);
    p->batch = batch;
    p->count = count;
    p->n_pending = 0;
    p->n_by_id = 0;
    p->log_n = 0;
    p->problems = 0;
    p->problem[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        percept_entity_desc d;
        if (percept_get_entity(p->w, batch[i].id, &d) == PERCEPT_OK &&
            (d.x != batch[i].x || d.y != batch[i].y)) {
            p->pending[p->n_pending++] = i;
            p->by_id[p->n_by_id].id = batch[i].id;
            p->by_id[p->n_by_id].slot = (int)i;
            p->n_by_id++;
        }
    }
    qsort(p->by_id, p->n_by_id, sizeof *p->by_id, cmp_id_slot);
    p->active = 1;
}

static void probe_end(probe *p)
{
    p->active = 0;
}

/*
 * Make the moves `entries` (indexes into `batch`) in the model, in some order
 * in which each but the last delivers nothing and the last delivers exactly
 * `g` (gn > 0) - or, `g` NULL, every one delivers nothing. On success the
 * model holds the state after them and 1 is returned; on failure 0, the model
 * then undefined.
 */
static int solve(model *m, const size_t *entries, size_t n, const percept_position *batch,
                 const percept_event *g, size_t gn, evlist *scratch)
{
    if (n == 0)
        return g == NULL;
    if (n == 1 && g != NULL) {
        int slot = slot_of(m, batch[entries[0]].id);
        model_move(m, slot, batch[entries[0]].x, batch[entries[0]].y, scratch);
        return same_events(scratch->v, scratch->n, g, gn);
    }
    size_t rest[8];
    model *copy = malloc(sizeof *copy);
    assert_non_null(copy);
    for (size_t i = 0; i < n; i++) {
        *copy = *m;
        int slot = slot_of(copy, batch[entries[i]].id);
        if (model_move(copy, slot, batch[entries[i]].x, batch[entries[i]].y, scratch) != 0)
            continue;
        size_t r = 0;
        for (size_t k = 0; k < n; k++)
            if (k != i)
                rest[r++] = entries[k];
        if (solve(copy, rest, n - 1, batch, g, gn, scratch)) {
            *m = *copy;
            free(copy);
            return 1;
        }
    }
    free(copy);
    return 0;
}

typedef struct group_stats {
    size_t groups;     /* groups checked event for event */
    size_t ambiguous;  /* of them, with silent moves made just before */
    size_t unverified; /* groups after too many silent moves to search */
    size_t silent;     /* moves made that delivered nothing */
} group_stats;

#define MAX_SEARCH 5

/*
 * (f) The stream, move by move: `m` holds the state before the call and ends
 * with the state after the moves made. Every group of events must be what
 * percept_move() of one of the moves made since the previous group delivers.
 */
static int verify_groups(model *m, const probe *p, const percept_world *w, group_stats *st,
                         const char *what)
{
    const percept_event *ev = p->rec.events;
    size_t n_ev = p->rec.count;
    evlist scratch = {NULL, 0, 0};
    int ok = 1;

    if (p->problems > 0) {
        print_error("%s: %s (%zu problem(s) in the callback)\n", what, p->problem, p->problems);
        return 0;
    }
    for (size_t k = 0; ok && k < p->log_n;) {
        size_t first = p->log_event[k], end = k;
        while (end < p->log_n && p->log_event[end] == first)
            end++;
        size_t stop = end < p->log_n ? p->log_event[end] : n_ev;
        size_t n = end - k;
        /* The state before the group, for the report of a failure: only where a search may
         * leave the model undefined (n == 1 leaves the model's own events in scratch). */
        model *before = NULL;
        if (n > 1 && n <= MAX_SEARCH) {
            before = malloc(sizeof *before);
            assert_non_null(before);
            *before = *m;
        }
        if (n > MAX_SEARCH) {
            /* Too many silent moves to search their orders: make them, check nothing here. */
            for (size_t i = k; i < end; i++) {
                const percept_position *q = &p->batch[p->log_entry[i]];
                model_move(m, slot_of(m, q->id), q->x, q->y, &scratch);
            }
            st->unverified++;
        } else if (solve(m, p->log_entry + k, n, p->batch, ev + first, stop - first, &scratch)) {
            st->groups++;
            st->ambiguous += n > 1;
            st->silent += n - 1;
        } else {
            print_error("%s: events [%zu, %zu) are not the events of one move made after %zu "
                        "silent one(s) among:\n",
                        what, first, stop, n - 1);
            for (size_t i = k; i < end; i++) {
                const percept_position *q = &p->batch[p->log_entry[i]];
                print_error("  moves[%zu]: %u to (%.17g, %.17g)\n", p->log_entry[i],
                            (unsigned)q->id, q->x, q->y);
                if (before != NULL) {
                    model *tmp = malloc(sizeof *tmp);
                    assert_non_null(tmp);
                    *tmp = *before;
                    model_move(tmp, slot_of(tmp, q->id), q->x, q->y, &scratch);
                    free(tmp);
                }
                tu_print_events("    the model's events for it alone", scratch.v, scratch.n);
            }
            tu_print_events("delivered", ev + first, stop - first);
            ok = 0;
        }
        free(before);
        k = end;
    }
    /* The moves made after the last event (or in a call without events) deliver nothing. */
    if (ok) {
        size_t trailing[MAX_SEARCH + 1], nt = 0;
        for (size_t k = 0; k < p->n_pending; k++) {
            const percept_position *q = &p->batch[p->pending[k]];
            percept_entity_desc d;
            if (percept_get_entity(w, q->id, &d) == PERCEPT_OK && d.x == q->x && d.y == q->y) {
                if (nt < MAX_SEARCH) {
                    trailing[nt++] = p->pending[k];
                } else {
                    model_move(m, slot_of(m, q->id), q->x, q->y, &scratch);
                    st->unverified++;
                }
            }
        }
        if (!solve(m, trailing, nt, p->batch, NULL, 0, &scratch)) {
            print_error("%s: %zu move(s) were made after the last event, but in no order do they "
                        "all deliver nothing\n",
                        what, nt);
            ok = 0;
        }
        st->silent += nt;
    }
    ev_free(&scratch);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Random worlds and batches                                                 */

typedef struct mm_config {
    const char *name;
    uint64_t seed;
    int moves_on;
    int crowd; /* most positions in a 12 x 12 square */
    percept_bounds b;
    const char *ini;     /* after "backend = NAME": for the backends under test */
    const char *ref_ini; /* the same bounds, for the bruteforce reference */
} mm_config;

#define N_ENT 180
#define TICKS 12
#define MAX_BATCH 80

static double random_range(uint64_t *r)
{
    static const double common[] = {1, 2, 2.5, 5, 5, 10, 10, 13, 15, 20, 25, 26, 40, 65};
    uint32_t k = below(r, 100);
    if (k < 20)
        return 0;
    if (k < 80)
        return common[below(r, COUNT_OF(common))];
    if (k < 98)
        return splitmix_unit(r) * 50;
    return 1e7; /* reaches everyone */
}

/* Mostly a half-unit grid over the bounds and a margin around them; sometimes anywhere. */
static void random_position(uint64_t *r, const mm_config *c, double *x, double *y)
{
    const percept_bounds *b = &c->b;
    uint32_t k = below(r, 100);
    double cx = (b->min_x + b->max_x) / 2, cy = (b->min_y + b->max_y) / 2;
    if (c->crowd && k < 75) {
        *x = floor(cx) - 6 + below(r, 25) * 0.5;
        *y = floor(cy) - 6 + below(r, 25) * 0.5;
    } else if (k < 80) {
        uint32_t wx = (uint32_t)((b->max_x - b->min_x + 40) * 2);
        uint32_t wy = (uint32_t)((b->max_y - b->min_y + 40) * 2);
        *x = b->min_x - 20 + below(r, wx + 1) * 0.5;
        *y = b->min_y - 20 + below(r, wy + 1) * 0.5;
    } else if (k < 95) {
        *x = splitmix_between(r, b->min_x - 30, b->max_x + 30);
        *y = splitmix_between(r, b->min_y - 30, b->max_y + 30);
    } else {
        *x = floor(cx);
        *y = floor(cy); /* coincident entities */
    }
}

/* A point on the boundary of some observer's range, with integer offsets. */
static int boundary_position(uint64_t *r, const model *m, double *x, double *y)
{
    for (int tries = 0; tries < 8; tries++) {
        const ment *o = &m->e[below(r, (uint32_t)m->n)];
        double rr = o->range[below(r, PERCEPT_SENSE_COUNT)], a, b;
        if (!(rr > 0) || rr > 1000 || rr != floor(rr))
            continue;
        if (fmod(rr, 5) == 0 && chance(r, 60)) {
            a = rr / 5 * 3;
            b = rr / 5 * 4;
        } else {
            a = rr;
            b = 0;
        }
        *x = o->x + (chance(r, 50) ? a : -a);
        *y = o->y + (chance(r, 50) ? b : -b);
        return 1;
    }
    return 0;
}

/* A batch of distinct entities, in random array order. */
static size_t random_batch(uint64_t *r, const model *m, const mm_config *c, percept_position *out)
{
    int perm[MAXN];
    size_t n = 1 + below(r, MAX_BATCH);
    for (int i = 0; i < m->n; i++)
        perm[i] = i;
    for (size_t i = 0; i < n; i++) {
        size_t j = i + below(r, (uint32_t)(m->n - (int)i));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        const ment *e = &m->e[perm[i]];
        percept_position *q = &out[i];
        uint32_t k = below(r, 100);
        q->id = e->id;
        if (k < 50) { /* a step on the half grid */
            q->x = e->x + ((int)below(r, 17) - 8) * 0.5;
            q->y = e->y + ((int)below(r, 17) - 8) * 0.5;
        } else if (k < 60) { /* a fractional step */
            q->x = e->x + (splitmix_unit(r) - 0.5) * 12;
            q->y = e->y + (splitmix_unit(r) - 0.5) * 12;
        } else if (k < 72) { /* a teleport */
            random_position(r, c, &q->x, &q->y);
        } else if (k < 80) { /* in place */
            q->x = e->x;
            q->y = e->y;
        } else if (k < 88) { /* onto another entity */
            const ment *o = &m->e[below(r, (uint32_t)m->n)];
            q->x = o->x;
            q->y = o->y;
        } else if (k < 96) {
            if (!boundary_position(r, m, &q->x, &q->y))
                random_position(r, c, &q->x, &q->y);
        } else if (k < 98) { /* far outside the bounds */
            q->x = (chance(r, 50) ? -1 : 1) * (1e6 + below(r, 1000));
            q->y = (chance(r, 50) ? -1 : 1) * 1e9;
        } else { /* at the limit of what a position may be */
            q->x = chance(r, 50) ? PERCEPT_COORD_LIMIT : -PERCEPT_COORD_LIMIT;
            q->y = chance(r, 50) ? e->y : -PERCEPT_COORD_LIMIT;
        }
        /* A step from the limit may cross it: such an entity teleports back instead. */
        if (fabs(q->x) > PERCEPT_COORD_LIMIT || fabs(q->y) > PERCEPT_COORD_LIMIT)
            random_position(r, c, &q->x, &q->y);
    }
    return n;
}

static void print_batch(const percept_position *batch, size_t n)
{
    print_error("  the batch (%zu moves):\n", n);
    for (size_t i = 0; i < n; i++)
        print_error("    moves[%zu] = {%u, %.17g, %.17g}\n", i, (unsigned)batch[i].id, batch[i].x,
                    batch[i].y);
}

/* ------------------------------------------------------------------------ */
/* 1. Differential: random batches on every backend                          */

typedef struct recording {
    tu_recorder all;         /* the events of every batch, in order */
    size_t first[TICKS + 1]; /* [t]: index of batch t's first event; [TICKS]: the total */
} recording;

/*
 * Build the config's world with `backend`, run its batches, check each
 * against the model (a)-(d) and move by move (f), and record the events.
 */
static void run_batches(const char *backend, const mm_config *c, const char *ini, recording *out,
                        group_stats *st)
{
    model *m = calloc(1, sizeof *m), *after = calloc(1, sizeof *after),
          *check = calloc(1, sizeof *check);
    percept_position *batch = calloc(MAX_BATCH, sizeof *batch);
    uint64_t r = c->seed * 0x2545F4914F6CDD1Dull;
    char what[256];
    probe p;
    assert_true(m != NULL && after != NULL && check != NULL && batch != NULL);
    m->moves_on = c->moves_on;

    percept_world *w = tu_open(backend, ini, NULL);
    probe_init(&p, w);
    assert_int_equal(percept_set_event_callback(w, probe_event, &p), PERCEPT_OK);
    for (int i = 0; i < N_ENT; i++) {
        percept_entity_desc d;
        random_position(&r, c, &d.x, &d.y);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            d.range[s] = random_range(&r);
        d.hidden = chance(&r, 15) ? below(&r, 8) : 0;
        percept_id id = tu_spread_id((uint32_t)(i * 7 + (int)c->seed));
        tu_add(w, id, d);
        model_add(m, id, d);
    }
    model_fill(m);
    snprintf(what, sizeof what, "config %s, backend %s, after the adds", c->name, backend);
    assert_true(check_world(m, w, what));
    tu_recorder_init(&out->all);

    for (int t = 0; t < TICKS; t++) {
        if (t > 0 && chance(&r, 50)) {
            /* Between ticks a range or hidden flag changes, so batches meet those too. */
            int i = (int)below(&r, (uint32_t)m->n);
            percept_sense s = (percept_sense)below(&r, PERCEPT_SENSE_COUNT);
            if (chance(&r, 50)) {
                double v = random_range(&r);
                TU_OK(w, percept_set_range(w, m->e[i].id, s, v));
                m->e[i].range[s] = v;
            } else {
                int hide = chance(&r, 50);
                TU_OK(w, percept_set_hidden(w, m->e[i].id, s, hide));
                m->e[i].hidden = hide ? m->e[i].hidden | SB(s) : m->e[i].hidden & ~SB(s);
            }
            model_fill(m);
            snprintf(what, sizeof what, "config %s, backend %s, before batch %d", c->name, backend,
                     t);
            assert_true(check_world(m, w, what));
        }
        size_t n = random_batch(&r, m, c, batch);
        *after = *m;
        for (size_t i = 0; i < n; i++) {
            int slot = slot_of(after, batch[i].id);
            after->e[slot].x = batch[i].x;
            after->e[slot].y = batch[i].y;
        }
        model_fill(after);

        probe_begin(&p, batch, n);
        int rc = percept_move_many(w, batch, n);
        probe_end(&p);
        snprintf(what, sizeof what, "config %s, backend %s, batch %d (%zu moves)", c->name, backend,
                 t, n);
        if (rc != PERCEPT_OK) {
            print_error("%s: returned %d (%s): %s\n", what, rc, percept_status_name(rc),
                        percept_errmsg(w));
            print_batch(batch, n);
            fail();
        }
        *check = *m;
        if (!check_world(after, w, what) ||
            !check_stream(m, after, p.rec.events, p.rec.count, what) ||
            !check_shape(m, after, p.rec.events, p.rec.count, what) ||
            !verify_groups(check, &p, w, st, what)) {
            print_batch(batch, n);
            fail();
        }
        /* The move-by-move replay must land where the whole batch does (guards the model). */
        assert_true(model_same(check, after, "the model's move-by-move replay vs its batch"));
        out->first[t] = out->all.count;
        for (size_t k = 0; k < p.rec.count; k++)
            tu_recorder_push(&out->all, &p.rec.events[k]);
        *m = *after;
    }
    out->first[TICKS] = out->all.count;

    percept_world_close(w);
    probe_free(&p);
    free(batch);
    free(check);
    free(after);
    free(m);
}

#define WORLD_200 "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 200\nmax_y = 200\n"
#define WORLD_STRIP "[world]\nmin_x = -100\nmin_y = 50\nmax_x = 300\nmax_y = 120\n"

static const mm_config configs[] = {
    {"open",
     1,
     1,
     0,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200,
     "move_events = on\n" WORLD_200},
    {"strip",
     2,
     0,
     0,
     {-100, 50, 300, 120},
     "move_events = off\n" WORLD_STRIP,
     "move_events = off\n" WORLD_STRIP},
    /* The order may depend on the batch and the bounds alone: the observer grids of the
     * worlds under test differ from the reference's. */
    {"crowd",
     3,
     1,
     1,
     {0, 0, 200, 200},
     "move_events = on\n" WORLD_200 "[sight]\nobserver_cell_size = 3\n"
     "[hearing]\nobserver_cell_size = 41\n[smell]\nobserver_cell_size = 7\n",
     "move_events = on\n" WORLD_200},
};

static const mm_config *config_now;
static recording reference_rec;

/* (e) Every backend delivers the bruteforce reference's events, batch by batch. */
static void check_config_backend(const char *backend)
{
    recording rec;
    group_stats st = {0, 0, 0, 0};
    run_batches(backend, config_now, config_now->ini, &rec, &st);
    for (int t = 0; t < TICKS; t++) {
        tu_recorder one = {rec.all.events + rec.first[t], rec.first[t + 1] - rec.first[t], 0};
        char what[200];
        snprintf(what, sizeof what,
                 "config %s, batch %d: backend %s against the bruteforce reference",
                 config_now->name, t, backend);
        tu_expect_events(&one, reference_rec.all.events + reference_rec.first[t],
                         reference_rec.first[t + 1] - reference_rec.first[t], what);
    }
    print_message("      %s/%s: %zu events, %zu groups checked move by move (%zu after silent "
                  "moves), %zu silent moves, %zu unsearched\n",
                  backend, config_now->name, rec.all.count, st.groups, st.ambiguous, st.silent,
                  st.unverified);
    /* Not vacuous: nearly every group must have been checked event for event. */
    assert_true(st.groups > 10 * st.unverified && st.groups > TICKS);
    tu_recorder_free(&rec.all);
}

static void run_config(const mm_config *c)
{
    group_stats st = {0, 0, 0, 0};
    config_now = c;
    run_batches("bruteforce", c, c->ref_ini, &reference_rec, &st);
    tu_for_each_backend(check_config_backend);
    tu_recorder_free(&reference_rec.all);
}

static void test_batches_open(void **state)
{
    (void)state;
    run_config(&configs[0]);
}

static void test_batches_strip(void **state)
{
    (void)state;
    run_config(&configs[1]);
}

static void test_batches_crowd(void **state)
{
    (void)state;
    run_config(&configs[2]);
}

/* ------------------------------------------------------------------------ */
/* 2. Moves far apart: the same events as one percept_move() per entry       */

#define CLUSTERS_SIDE 5
#define PER_CLUSTER 6
#define CLUSTER_GAP 1200.0

static void cluster_point(uint64_t *r, int cluster, double *x, double *y)
{
    double cx = 600 + CLUSTER_GAP * (cluster % CLUSTERS_SIDE);
    double cy = 600 + CLUSTER_GAP * (cluster / CLUSTERS_SIDE);
    *x = cx + ((int)below(r, 81) - 40);
    *y = cy + ((int)below(r, 81) - 40) * 0.5;
}

static void check_far_apart(const char *backend)
{
    enum { NC = CLUSTERS_SIDE * CLUSTERS_SIDE, NE = NC * PER_CLUSTER };
    const char *ini = "move_events = on\n[world]\nmin_x = 0\nmin_y = 0\nmax_x = 6000\nmax_y = "
                      "6000\n";
    tu_recorder rec_many, rec_one;
    percept_id ids[NE];
    int where[NE]; /* each entity's cluster */
    percept_position batch[NC];
    uint64_t r = 77;
    tu_recorder_init(&rec_many);
    tu_recorder_init(&rec_one);
    percept_world *many = tu_open(backend, ini, &rec_many);
    percept_world *one = tu_open(backend, ini, &rec_one);

    for (int i = 0; i < NE; i++) {
        percept_entity_desc d;
        where[i] = i % NC;
        cluster_point(&r, where[i], &d.x, &d.y);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            d.range[s] = chance(&r, 20) ? 0 : (double)below(&r, 61); /* far below the gap */
        d.hidden = chance(&r, 15) ? below(&r, 8) : 0;
        ids[i] = tu_spread_id((uint32_t)i + 1000);
        tu_add(many, ids[i], d);
        tu_add(one, ids[i], d);
    }
    size_t total = 0;
    for (int round = 0; round < 8; round++) {
        int claimed[NC] = {0}, used[NE] = {0};
        size_t n = 0;
        /* At most one mover touches a cluster, as its origin or its destination. */
        for (int tries = 0; tries < 3 * NC; tries++) {
            int i = (int)below(&r, NE);
            int from = where[i], to = chance(&r, 25) ? (int)below(&r, NC) : from;
            if (used[i] || claimed[from] || claimed[to])
                continue;
            used[i] = claimed[from] = claimed[to] = 1;
            batch[n].id = ids[i];
            if (chance(&r, 10)) {
                percept_entity_desc d;
                TU_OK(many, percept_get_entity(many, ids[i], &d));
                batch[n].x = d.x; /* in place */
                batch[n].y = d.y;
            } else {
                cluster_point(&r, to, &batch[n].x, &batch[n].y);
                where[i] = to;
            }
            n++;
        }
        tu_recorder_clear(&rec_many);
        tu_recorder_clear(&rec_one);
        TU_OK(many, percept_move_many(many, batch, n));
        for (size_t i = 0; i < n; i++)
            TU_OK(one, percept_move(one, batch[i].id, batch[i].x, batch[i].y));
        /* Both sorted: only the multiset is promised to match. */
        tu_sort_events(rec_many.events, rec_many.count);
        tu_sort_events(rec_one.events, rec_one.count);
        char what[160];
        snprintf(what, sizeof what, "round %d: percept_move_many vs percept_move per entry", round);
        if (!tu_events_match(&rec_many, rec_one.events, rec_one.count, what)) {
            print_batch(batch, n);
            fail();
        }
        total += rec_one.count;
        tu_snapshot a, b;
        tu_snapshot_take(many, ids, NE, &a);
        tu_snapshot_take(one, ids, NE, &b);
        assert_true(tu_snapshot_equal(&a, &b, what));
        tu_snapshot_free(&a);
        tu_snapshot_free(&b);
    }
    /* Not vacuous: the rounds did change the relation. */
    assert_true(total > 50);
    percept_world_close(many);
    percept_world_close(one);
    tu_recorder_free(&rec_many);
    tu_recorder_free(&rec_one);
}

static void test_far_apart(void **state)
{
    (void)state;
    tu_for_each_backend(check_far_apart);
}

/* ------------------------------------------------------------------------ */
/* 3, 4. Validation, empty batches and moves in place                        */

static const percept_id watched[] = {0, 1, 2, 3, 4, 5, 6, 99, UINT32_MAX};

typedef struct fixture {
    percept_world *w;
    tu_recorder rec;
    tu_snapshot before;
} fixture;

/* 1-4 and 0 perceive each other by various senses; UINT32_MAX is hidden from sight. */
static void fixture_open(fixture *f, const char *backend)
{
    tu_recorder_init(&f->rec);
    f->w = tu_open(backend, "move_events = on\n", &f->rec);
    tu_add(f->w, 1, tu_desc(10, 10, 5, 5, 5, 0));
    tu_add(f->w, 2, tu_desc(13, 14, 3, 0, 5, SB(H)));
    tu_add(f->w, 3, tu_desc(10, 10, 0, 0, 0, 0));
    tu_add(f->w, 4, tu_desc(11, 11, 8, 1, 0, 0));
    tu_add(f->w, 0, tu_desc(12, 10, 9, 9, 9, 0));
    tu_add(f->w, UINT32_MAX, tu_desc(14, 10, 2, 20, 0, SB(S)));
    tu_recorder_clear(&f->rec);
    tu_snapshot_take(f->w, watched, COUNT_OF(watched), &f->before);
}

static void fixture_close(fixture *f)
{
    tu_snapshot_free(&f->before);
    percept_world_close(f->w);
    tu_recorder_free(&f->rec);
}

/* The call gave `want`, no event came, every watched entity is as before. */
static void expect_unchanged(fixture *f, int rc, int want, const char *what)
{
    if (rc != want) {
        print_error("%s: returned %d (%s), expected %s: %s\n", what, rc,
                    percept_status_name(rc) ? percept_status_name(rc) : "?",
                    percept_status_name(want), percept_errmsg(f->w));
        fail();
    }
    tu_expect_no_events(&f->rec, what);
    tu_snapshot after;
    tu_snapshot_take(f->w, watched, COUNT_OF(watched), &after);
    assert_true(tu_snapshot_equal(&f->before, &after, what));
    tu_snapshot_free(&after);
}

/* The message names the function and `index` ("moves[3]"), and not `other` (a later bad one,
 * or -1); percept_errindex() gives `index` (SIZE_MAX for -1). */
static void expect_names_index(fixture *f, long index, long other, const char *what)
{
    size_t want_index = index < 0 ? SIZE_MAX : (size_t)index;
    if (percept_errindex(f->w) != want_index) {
        print_error("%s: percept_errindex() is %zu, expected %zu\n", what, percept_errindex(f->w),
                    want_index);
        fail();
    }
    if (index < 0)
        return;
    char want[32], unwanted[32];
    const char *msg = percept_errmsg(f->w);
    snprintf(want, sizeof want, "moves[%ld]", index);
    snprintf(unwanted, sizeof unwanted, "moves[%ld]", other);
    if (msg == NULL || strstr(msg, "percept_move_many") == NULL || strstr(msg, want) == NULL ||
        (other >= 0 && strstr(msg, unwanted) != NULL)) {
        print_error("%s: the message '%s' should name percept_move_many and %s%s%s\n", what,
                    msg ? msg : "(null)", want, other >= 0 ? ", not " : "",
                    other >= 0 ? unwanted : "");
        fail();
    }
}

typedef struct bad_batch {
    const char *what;
    int status;
    long index; /* the first bad entry */
    long other; /* a later bad entry the message must not name, or -1 */
    size_t count;
    percept_position moves[6];
} bad_batch;

static void check_validation(const char *backend)
{
    const double lim = PERCEPT_COORD_LIMIT;
    const double beyond = nextafter(PERCEPT_COORD_LIMIT, INFINITY);
    const int NOENT = PERCEPT_ENOENT, INVAL = PERCEPT_EINVAL;
    /* Entries before the bad one are valid moves that would deliver events. */
    // clang-format off
    const bad_batch bad[] = {
        {"unknown ID at index 3", NOENT, 3, -1, 4,
         {{1, 20, 20}, {2, 5, 5}, {3, 12, 12}, {77, 1, 1}}},
        {"unknown ID at index 0", NOENT, 0, -1, 2, {{99, 1, 1}, {1, 20, 20}}},
        {"NaN x at index 2", INVAL, 2, -1, 3, {{1, 20, 20}, {2, 5, 5}, {3, NAN, 12}}},
        {"NaN y at index 1", INVAL, 1, -1, 2, {{4, 20, 20}, {0, 5, NAN}}},
        {"infinite y at index 1", INVAL, 1, -1, 3, {{1, 20, 20}, {2, 5, INFINITY}, {3, 1, 1}}},
        {"-infinite x at index 2", INVAL, 2, -1, 3, {{1, 20, 20}, {2, 5, 5}, {3, -INFINITY, 1}}},
        {"x beyond the limit at 2", INVAL, 2, -1, 3, {{1, 20, 20}, {2, 5, 5}, {3, beyond, 1}}},
        {"y = -2e15 at index 4", INVAL, 4, -1, 5,
         {{1, 20, 20}, {2, 5, 5}, {3, 1, 1}, {4, lim, -lim}, {0, 3, -2e15}}},
        {"duplicate ID at index 3", INVAL, 3, -1, 4,
         {{1, 20, 20}, {2, 5, 5}, {3, 12, 12}, {2, 6, 6}}},
        {"duplicate, same target, at 1", INVAL, 1, -1, 2, {{1, 20, 20}, {1, 20, 20}}},
        {"duplicate ID 0 at index 2", INVAL, 2, -1, 3, {{0, 20, 20}, {1, 2, 2}, {0, 21, 21}}},
        /* The first bad entry decides, whatever the kind of the later ones. */
        {"NaN at 1, then unknown at 2", INVAL, 1, 2, 3, {{1, 20, 20}, {2, NAN, 5}, {99, 1, 1}}},
        {"unknown at 1, then NaN at 2", NOENT, 1, 2, 3, {{1, 20, 20}, {99, 1, 1}, {2, NAN, 5}}},
        {"duplicate at 1, then unknown at 2", INVAL, 1, 2, 3, {{1, 20, 20}, {1, 3, 3}, {99, 1, 1}}},
        {"unknown at 1, then duplicate at 2", NOENT, 1, 2, 3, {{1, 20, 20}, {99, 1, 1}, {1, 3, 3}}},
        {"duplicate at 2, then NaN at 3", INVAL, 2, 3, 4,
         {{1, 20, 20}, {2, 3, 3}, {1, 3, 3}, {3, NAN, 0}}},
        {"an unknown ID twice", NOENT, 1, 2, 3, {{3, 1, 2}, {99, 1, 1}, {99, 2, 2}}},
    };
    // clang-format on
    fixture f;
    fixture_open(&f, backend);
    assert_true(percept_errindex(f.w) == SIZE_MAX); /* nothing has failed yet */
    for (size_t i = 0; i < COUNT_OF(bad); i++) {
        char what[160];
        snprintf(what, sizeof what, "percept_move_many with %s", bad[i].what);
        tu_recorder_clear(&f.rec);
        int rc = percept_move_many(f.w, bad[i].moves, bad[i].count);
        expect_unchanged(&f, rc, bad[i].status, what);
        expect_names_index(&f, bad[i].index, bad[i].other, what);
    }
    /* A later failure of another call names no entry. */
    assert_int_equal(percept_move(f.w, 99, 1, 1), PERCEPT_ENOENT);
    assert_true(percept_errindex(f.w) == SIZE_MAX);

    /* NULL moves with entries: no entry to name. */
    tu_recorder_clear(&f.rec);
    expect_unchanged(&f, percept_move_many(f.w, NULL, 3), PERCEPT_EINVAL, "NULL moves, count 3");
    expect_names_index(&f, -1, -1, "NULL moves, count 3");
    const char *msg = percept_errmsg(f.w);
    if (msg == NULL || strstr(msg, "percept_move_many") == NULL) {
        print_error("NULL moves: the message '%s' does not name percept_move_many\n",
                    msg ? msg : "(null)");
        fail();
    }

    /* Then a valid batch still works, positions at the limit included (percept_move allows
     * them), and delivers what the fixture's geometry says: 4 leaves 1's and 0's ranges. */
    percept_position ok[] = {{3, 10, 10}, {4, -lim, lim}};
    tu_recorder_clear(&f.rec);
    TU_OK(f.w, percept_move_many(f.w, ok, COUNT_OF(ok)));
    assert_int_equal(percept_perceives(f.w, 1, 4, S), 0);
    assert_int_equal(percept_perceives(f.w, 0, 4, S), 0);
    percept_entity_desc d;
    TU_OK(f.w, percept_get_entity(f.w, 4, &d));
    assert_true(d.x == -lim && d.y == lim);
    assert_true(f.rec.count > 0);
    fixture_close(&f);
}

static void test_validation(void **state)
{
    (void)state;
    tu_for_each_backend(check_validation);
}

/* With no memory left for the batch's working room, a bad batch is still
 * refused for what is wrong with it, and a good one with ENOMEM; nothing
 * moves either way. */
static void check_validation_without_memory(const char *backend)
{
    tu_fault_alloc fa;
    tu_fault_init(&fa);
    percept_world *w = tu_open_faulty(backend, NULL, NULL, &fa);
    tu_add(w, 1, tu_desc(10, 10, 5, 5, 5, 0));
    tu_add(w, 2, tu_desc(12, 10, 5, 5, 5, 0));
    fa.fail_at = fa.counted + 1; /* from the next request on */
    fa.sticky = 1;
    const percept_position unknown[] = {{1, 30, 30}, {77, 1, 1}};
    const percept_position twice[] = {{1, 30, 30}, {2, 5, 5}, {1, 31, 31}};
    const percept_position good[] = {{1, 30, 30}, {2, 5, 5}};
    assert_int_equal(percept_move_many(w, unknown, COUNT_OF(unknown)), PERCEPT_ENOENT);
    assert_non_null(strstr(percept_errmsg(w), "moves[1]"));
    assert_int_equal(percept_errindex(w), 1);
    assert_int_equal(percept_move_many(w, twice, COUNT_OF(twice)), PERCEPT_EINVAL);
    assert_non_null(strstr(percept_errmsg(w), "moves[2]"));
    assert_int_equal(percept_errindex(w), 2);
    /* Out of memory is the batch's failure, not an entry's. */
    assert_int_equal(percept_move_many(w, good, COUNT_OF(good)), PERCEPT_ENOMEM);
    assert_true(percept_errindex(w) == SIZE_MAX);
    assert_true(fa.hit);
    percept_entity_desc d;
    TU_OK(w, percept_get_entity(w, 1, &d));
    assert_true(d.x == 10 && d.y == 10);
    assert_int_equal(percept_perceives(w, 1, 2, S), 1);
    percept_world_close(w);
    tu_expect_no_leak(&fa, "a batch refused without memory");
}

static void test_validation_without_memory(void **state)
{
    (void)state;
    tu_for_each_backend(check_validation_without_memory);
}

static void test_null_world(void **state)
{
    percept_position one = {1, 2, 3};
    (void)state;
    assert_int_equal(percept_move_many(NULL, &one, 1), PERCEPT_EINVAL);
    assert_int_equal(percept_move_many(NULL, NULL, 0), PERCEPT_EINVAL);
    assert_int_equal(percept_move_many(NULL, NULL, 2), PERCEPT_EINVAL);
    assert_true(percept_errindex(NULL) == SIZE_MAX);
}

/*
 * More than UINT32_MAX entries: EINVAL, nothing moved. The array is real
 * (zero pages mapped read-only on demand): every entry is {0, 0, 0}, so a
 * count cut to 32 bits (1) would move entity 0 from (12, 10) to (0, 0).
 */
static void check_huge_count(const char *backend)
{
    size_t count = (size_t)UINT32_MAX + 2;
    if (sizeof(size_t) <= 4)
        return;
    size_t bytes = count * sizeof(percept_position);
    void *mem = mmap(NULL, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        print_message("      %s: no address space for %zu bytes: huge count not tested\n", backend,
                      bytes);
        return;
    }
    fixture f;
    fixture_open(&f, backend);
    int rc = percept_move_many(f.w, mem, count);
    munmap(mem, bytes);
    expect_unchanged(&f, rc, PERCEPT_EINVAL, "more than UINT32_MAX entries");
    fixture_close(&f);
}

static void test_huge_count(void **state)
{
    (void)state;
    tu_for_each_backend(check_huge_count);
}

static void check_empty_and_in_place(const char *backend)
{
    fixture f;
    fixture_open(&f, backend);
    percept_position some = {1, 30, 30};
    expect_unchanged(&f, percept_move_many(f.w, NULL, 0), PERCEPT_OK, "count 0, NULL moves");
    expect_unchanged(&f, percept_move_many(f.w, &some, 0), PERCEPT_OK, "count 0, moves given");

    /* Every entity to where it is. */
    percept_position here[COUNT_OF(watched)];
    size_t n = 0;
    for (size_t i = 0; i < COUNT_OF(watched); i++) {
        percept_entity_desc d;
        if (percept_get_entity(f.w, watched[i], &d) != PERCEPT_OK)
            continue;
        here[n].id = watched[i];
        here[n].x = d.x;
        here[n].y = d.y;
        n++;
    }
    assert_int_equal(n, 6);
    expect_unchanged(&f, percept_move_many(f.w, here, n), PERCEPT_OK, "every entity in place");

    /* In place but for one: only that one's events, as percept_move gives them. 2 steps
     * from (13, 14) to (13, 13): 0, 1 and 4 still perceive it (MOVE), and its sight (3)
     * now reaches 4 at (11, 11) (4 + 4 <= 9, before 4 + 9 > 9). */
    here[2].y -= 1; /* watched[2] is entity 2 */
    assert_int_equal(here[2].id, 2);
    tu_recorder_clear(&f.rec);
    TU_OK(f.w, percept_move_many(f.w, here, n));
    const percept_event expected[] = {
        tu_ev(PERCEPT_MOVE, 0, 2, S, 13, 13),  tu_ev(PERCEPT_MOVE, 0, 2, M, 13, 13),
        tu_ev(PERCEPT_MOVE, 1, 2, S, 13, 13),  tu_ev(PERCEPT_MOVE, 1, 2, M, 13, 13),
        tu_ev(PERCEPT_ENTER, 2, 4, S, 11, 11), tu_ev(PERCEPT_MOVE, 4, 2, S, 13, 13),
    };
    tu_expect_events(&f.rec, expected, COUNT_OF(expected), "one move among moves in place");
    fixture_close(&f);
}

static void test_empty_and_in_place(void **state)
{
    (void)state;
    tu_for_each_backend(check_empty_and_in_place);
}

/* ------------------------------------------------------------------------ */
/* 5. EBUSY from inside the callback                                         */

typedef struct busy {
    percept_world *w;
    tu_recorder rec;
    int nest;      /* try the nested calls at the next event */
    int attempts;  /* events at which they were tried */
    int failures;  /* nested calls that did not return EBUSY with a message */
    char msg[300]; /* the first failure */
} busy;

static void busy_event(void *user, const percept_event *e)
{
    busy *b = user;
    static const percept_position nested[] = {{1, 50, 50}, {2, 60, 60}};
    tu_recorder_push(&b->rec, e);
    if (!b->nest)
        return;
    b->nest = 0;
    b->attempts++;
    int rc[2] = {percept_move_many(b->w, nested, COUNT_OF(nested)),
                 percept_move(b->w, e->target, 70, 70)};
    const char *names[2] = {"percept_move_many", "percept_move"};
    for (int i = 0; i < 2; i++) {
        const char *msg = percept_errmsg(b->w);
        if (rc[i] != PERCEPT_EBUSY || msg == NULL || msg[0] == '\0') {
            if (b->failures++ == 0)
                snprintf(b->msg, sizeof b->msg, "%s inside the callback returned %d (%s), '%s'",
                         names[i], rc[i],
                         percept_status_name(rc[i]) ? percept_status_name(rc[i]) : "?",
                         msg ? msg : "(null)");
        }
    }
}

static void check_busy(const char *backend)
{
    const percept_id ids[] = {1, 2, 3, 4};
    busy a, b; /* a tries the nested calls, its twin b does not */
    busy *both[2] = {&a, &b};
    for (int k = 0; k < 2; k++) {
        memset(both[k], 0, sizeof *both[k]);
        tu_recorder_init(&both[k]->rec);
        both[k]->w = tu_open(backend, "move_events = on\n", NULL);
        assert_int_equal(percept_set_event_callback(both[k]->w, busy_event, both[k]), PERCEPT_OK);
        tu_add(both[k]->w, 1, tu_desc(10, 10, 5, 5, 5, 0));
        tu_add(both[k]->w, 2, tu_desc(13, 14, 3, 0, 5, 0));
        tu_add(both[k]->w, 3, tu_desc(30, 30, 10, 0, 0, 0));
        tu_add(both[k]->w, 4, tu_desc(11, 11, 0, 8, 0, 0));
    }
    const percept_position batch1[] = {{3, 12, 12}, {1, 28, 28}};
    const percept_position batch2[] = {{2, 29, 29}, {4, 10, 10}, {3, 31, 30}};
    for (int round = 0; round < 3; round++) {
        char what[120];
        for (int k = 0; k < 2; k++) {
            tu_recorder_clear(&both[k]->rec);
            both[k]->nest = k == 0;
            int rc = round == 0   ? percept_move(both[k]->w, 4, 28, 29)
                     : round == 1 ? percept_move_many(both[k]->w, batch1, COUNT_OF(batch1))
                                  : percept_move_many(both[k]->w, batch2, COUNT_OF(batch2));
            TU_OK(both[k]->w, rc);
        }
        snprintf(what, sizeof what, "round %d: nested calls from the callback", round);
        if (a.failures > 0) {
            print_error("%s: %s\n", what, a.msg);
            fail();
        }
        /* Not vacuous: the nested calls were tried in this round. */
        assert_int_equal(a.attempts, round + 1);
        tu_expect_events(&a.rec, b.rec.events, b.rec.count, what);
        tu_snapshot sa, sb;
        tu_snapshot_take(a.w, ids, COUNT_OF(ids), &sa);
        tu_snapshot_take(b.w, ids, COUNT_OF(ids), &sb);
        assert_true(tu_snapshot_equal(&sa, &sb, what));
        tu_snapshot_free(&sa);
        tu_snapshot_free(&sb);
    }
    for (int k = 0; k < 2; k++) {
        percept_world_close(both[k]->w);
        tu_recorder_free(&both[k]->rec);
    }
}

static void test_busy(void **state)
{
    (void)state;
    tu_for_each_backend(check_busy);
}

/* ------------------------------------------------------------------------ */
/* 6. Out of memory part-way through a batch                                 */

#define OOM_CROWD 30
#define OOM_MOVERS 36
#define OOM_STEPPERS 6

/* The scenario: a crowd near (100, 100), movers far away that all walk into it, and a
 * few crowd members that step. Every move grows pair lists; with 30 + 36 entities the
 * crowd's cell also outgrows a 64-entry block of the backends' indexes mid-batch. */
static void oom_scenario(model *m, percept_position *batch, size_t *count)
{
    uint64_t r = 4242;
    memset(m, 0, sizeof *m);
    m->moves_on = 1;
    for (int i = 0; i < OOM_CROWD + OOM_MOVERS; i++) {
        percept_entity_desc d;
        int crowd = i < OOM_CROWD;
        d.x = crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i % 6);
        d.y = crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i / 6 % 8);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            d.range[s] = chance(&r, 15) ? 0 : splitmix_between(&r, 20, 60);
        d.hidden = chance(&r, 10) ? SB(below(&r, 3)) : 0;
        model_add(m, tu_spread_id((uint32_t)i + 500), d);
    }
    model_fill(m);
    size_t n = 0;
    for (int i = 0; i < OOM_MOVERS; i++) {
        batch[n].id = m->e[OOM_CROWD + i].id;
        batch[n].x = splitmix_between(&r, 80, 120);
        batch[n].y = splitmix_between(&r, 80, 120);
        n++;
    }
    for (int i = 0; i < OOM_STEPPERS; i++) {
        const ment *e = &m->e[i * 3];
        batch[n].id = e->id;
        batch[n].x = e->x + 2.5;
        batch[n].y = e->y - 1.5;
        n++;
    }
    /* Array order mixes movers and steppers. */
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = below(&r, (uint32_t)i + 1);
        percept_position t = batch[i];
        batch[i] = batch[j];
        batch[j] = t;
    }
    *count = n;
}

static percept_world *oom_world(const char *backend, const model *m, tu_fault_alloc *fa, probe *p)
{
    percept_world *w = tu_open_faulty(backend,
                                      "move_events = on\n"
                                      "[world]\nmin_x = 0\nmin_y = 0\nmax_x = 400\nmax_y = 400\n",
                                      NULL, fa);
    probe_init(p, w);
    assert_int_equal(percept_set_event_callback(w, probe_event, p), PERCEPT_OK);
    for (int i = 0; i < m->n; i++) {
        percept_entity_desc d = tu_desc(m->e[i].x, m->e[i].y, m->e[i].range[0], m->e[i].range[1],
                                        m->e[i].range[2], m->e[i].hidden);
        tu_add(w, m->e[i].id, d);
    }
    tu_recorder_clear(&p->rec);
    return w;
}

/* 1 if `msg` holds `number` as a whole decimal number. */
static int has_number(const char *msg, size_t number)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%zu", number);
    size_t len = strlen(digits);
    for (const char *at = strstr(msg, digits); at != NULL; at = strstr(at + 1, digits)) {
        int before = at > msg && at[-1] >= '0' && at[-1] <= '9';
        int after = at[len] >= '0' && at[len] <= '9';
        if (!before && !after)
            return 1;
    }
    return 0;
}

static void check_out_of_memory(const char *backend)
{
    model *start = calloc(1, sizeof *start), *final = calloc(1, sizeof *final),
          *now = calloc(1, sizeof *now), *replay = calloc(1, sizeof *replay);
    percept_position batch[OOM_MOVERS + OOM_STEPPERS];
    size_t count;
    assert_true(start != NULL && final != NULL && now != NULL && replay != NULL);
    oom_scenario(start, batch, &count);
    *final = *start;
    for (size_t i = 0; i < count; i++) {
        int slot = slot_of(final, batch[i].id);
        final->e[slot].x = batch[i].x;
        final->e[slot].y = batch[i].y;
    }
    model_fill(final);

    /* Keeps the plugin loaded across the many short-lived worlds. */
    percept_world *pin = tu_open(backend, NULL, NULL);

    /* The reference: no failure. Its events, and how many allocations the batch makes. */
    tu_fault_alloc fa;
    probe p;
    tu_recorder ref;
    group_stats st = {0, 0, 0, 0};
    tu_fault_init(&fa);
    percept_world *w = oom_world(backend, start, &fa, &p);
    size_t setup_allocs = fa.counted;
    probe_begin(&p, batch, count);
    TU_OK(w, percept_move_many(w, batch, count));
    probe_end(&p);
    size_t batch_allocs = fa.counted - setup_allocs;
    *replay = *start;
    assert_true(check_world(final, w, "the reference batch"));
    assert_true(check_stream(start, final, p.rec.events, p.rec.count, "the reference batch"));
    assert_true(verify_groups(replay, &p, w, &st, "the reference batch"));
    tu_recorder_init(&ref);
    for (size_t k = 0; k < p.rec.count; k++)
        tu_recorder_push(&ref, &p.rec.events[k]);
    percept_world_close(w);
    probe_free(&p);
    tu_expect_no_leak(&fa, backend);
    /* Not vacuous: the batch allocates, and delivers plenty. */
    assert_true(batch_allocs > 0 && ref.count > 100);

    size_t partway = 0, none = 0, injected = 0;
    for (size_t k = 1;; k++) {
        char what[200];
        snprintf(what, sizeof what, "backend %s, allocation %zu of the batch failed", backend, k);
        tu_fault_init(&fa);
        w = oom_world(backend, start, &fa, &p);
        assert_int_equal(fa.counted, setup_allocs);
        fa.fail_at = setup_allocs + k;
        probe_begin(&p, batch, count);
        int rc = percept_move_many(w, batch, count);
        probe_end(&p);
        if (!fa.hit) {
            /* Past the batch's last allocation: it runs normally, as the reference did. */
            TU_OK(w, rc);
            tu_expect_events(&p.rec, ref.events, ref.count, "a batch without failure");
            assert_int_equal(k - 1, batch_allocs);
            percept_world_close(w);
            probe_free(&p);
            tu_expect_no_leak(&fa, backend);
            break;
        }
        injected++;
        if (rc != PERCEPT_ENOMEM) {
            print_error("%s: returned %d (%s), expected PERCEPT_ENOMEM\n", what, rc,
                        percept_status_name(rc) ? percept_status_name(rc) : "?");
            fail();
        }
        /* Every entity at its old or its new position; count the moves made. */
        *now = *start;
        size_t made = 0;
        for (size_t i = 0; i < count; i++) {
            percept_entity_desc d;
            int slot = slot_of(now, batch[i].id);
            TU_OK(w, percept_get_entity(w, batch[i].id, &d));
            if (d.x == batch[i].x && d.y == batch[i].y) {
                now->e[slot].x = d.x;
                now->e[slot].y = d.y;
                made++;
            } else if (d.x != start->e[slot].x || d.y != start->e[slot].y) {
                print_error("%s: entity %u at (%.17g, %.17g): neither its old nor its new "
                            "position\n",
                            what, (unsigned)batch[i].id, d.x, d.y);
                fail();
            }
        }
        model_fill(now);
        partway += made > 0 && made < count;
        none += made == 0;
        const char *msg = percept_errmsg(w);
        int says_count = msg != NULL &&
                         (has_number(msg, made) || (made == 0 && (strstr(msg, "nothing") != NULL ||
                                                                  strstr(msg, "no move") != NULL ||
                                                                  strstr(msg, "none") != NULL)));
        if (msg == NULL || strstr(msg, "out of memory") == NULL || !says_count) {
            print_error("%s: the message '%s' should say 'out of memory' and that %zu move(s) "
                        "were made\n",
                        what, msg ? msg : "(null)", made);
            fail();
        }
        *replay = *start;
        if (!check_world(now, w, what) ||
            !check_stream(start, now, p.rec.events, p.rec.count, what) ||
            !verify_groups(replay, &p, w, &st, what) || !model_same(replay, now, what))
            fail();
        /* The same order again (it depends on the batch alone), the made moves first:
         * what came is the start of the reference's stream. */
        if (p.rec.count > ref.count ||
            !same_events(p.rec.events, p.rec.count, ref.events, p.rec.count)) {
            print_error("%s: the events delivered are not the start of the reference's\n", what);
            tu_print_events("delivered", p.rec.events, p.rec.count);
            fail();
        }
        size_t delivered = p.rec.count;

        /* The same batch again, memory healthy: it finishes, with the rest of the stream. */
        fa.fail_at = 0;
        probe_begin(&p, batch, count);
        rc = percept_move_many(w, batch, count);
        probe_end(&p);
        if (rc != PERCEPT_OK) {
            print_error("%s: the retry returned %s: %s\n", what, percept_status_name(rc),
                        percept_errmsg(w));
            fail();
        }
        *replay = *now;
        if (!check_world(final, w, what) ||
            !check_stream(now, final, p.rec.events, p.rec.count, what) ||
            !verify_groups(replay, &p, w, &st, what) || !model_same(replay, final, what))
            fail();
        tu_expect_events(&p.rec, ref.events + delivered, ref.count - delivered,
                         "the retry: the rest of the reference's stream");
        percept_world_close(w);
        probe_free(&p);
        tu_expect_no_leak(&fa, backend);
    }
    print_message("      %s: %zu allocations in the batch, %zu failed in turn: %zu stopped it "
                  "part-way, %zu before any move\n",
                  backend, batch_allocs, injected, partway, none);
    /* Not vacuous: some failure came after some moves were made and before the last. */
    assert_true(partway > 0);
    percept_world_close(pin);
    tu_recorder_free(&ref);
    free(start);
    free(final);
    free(now);
    free(replay);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    tu_for_each_backend(check_out_of_memory);
}

/* ------------------------------------------------------------------------ */
/* 7. The message of a batch stopped part-way                                */

#define MSG_CROWD 24

/* Messages that named the backend whose reserve() refused, over the backends run. */
static size_t oom_named_backend;

/* The number right after `prefix` in `msg`, or -1 when `prefix` is not there. */
static long number_after(const char *msg, const char *prefix)
{
    const char *at = strstr(msg, prefix);
    if (at == NULL || at[strlen(prefix)] < '0' || at[strlen(prefix)] > '9')
        return -1;
    return strtol(at + strlen(prefix), NULL, 10);
}

/*
 * Half the batch names entities already where it sends them: those entries
 * are no moves, and the count of moves made must not include them. Each
 * allocation of the batch fails in turn; the message must give the number
 * of entities that really moved, and keep what run_change() said of the
 * failed move: its entity, one not moved yet, and the backend that refused
 * with its path.
 */
static void check_oom_message(const char *backend)
{
    percept_position batch[2 * MSG_CROWD];
    percept_entity_desc start[2 * MSG_CROWD];
    uint64_t r = 77;
    for (int i = 0; i < 2 * MSG_CROWD; i++) {
        int crowd = i < MSG_CROWD;
        start[i] =
            tu_desc(crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i % 6),
                    crowd ? splitmix_between(&r, 75, 125) : 330 + 10 * (i / 6 % 8), 40, 25, 0, 0);
    }
    /* Interleaved, so that the curve puts entries in place among the moves. */
    for (int i = 0; i < MSG_CROWD; i++) {
        batch[2 * i] = (percept_position){(percept_id)i + 1, start[i].x, start[i].y};
        batch[2 * i + 1] =
            (percept_position){(percept_id)(MSG_CROWD + i) + 1, splitmix_between(&r, 80, 120),
                               splitmix_between(&r, 80, 120)};
    }
    size_t count = COUNT_OF(batch), partway = 0, named_before = oom_named_backend, k;
    for (k = 1;; k++) {
        tu_fault_alloc fa;
        tu_fault_init(&fa);
        percept_world *w =
            tu_open_faulty(backend, "[world]\nmax_x = 400\nmax_y = 400\n", NULL, &fa);
        for (int i = 0; i < 2 * MSG_CROWD; i++)
            tu_add(w, (percept_id)i + 1, start[i]);
        fa.fail_at = fa.counted + k;
        int rc = percept_move_many(w, batch, count);
        if (!fa.hit) {
            TU_OK(w, rc);
            percept_world_close(w);
            tu_expect_no_leak(&fa, backend);
            break;
        }
        assert_int_equal(rc, PERCEPT_ENOMEM);
        long moved = 0;
        for (int i = MSG_CROWD; i < 2 * MSG_CROWD; i++) {
            percept_entity_desc d;
            TU_OK(w, percept_get_entity(w, (percept_id)i + 1, &d));
            moved += d.x != start[i].x || d.y != start[i].y;
        }
        const char *msg = percept_errmsg(w);
        if (moved == 0 && strstr(msg, "out of memory; nothing was moved") != NULL) {
            /* The batch's own room, refused before any move. */
            percept_world_close(w);
            tu_expect_no_leak(&fa, backend);
            continue;
        }
        char entries[64];
        snprintf(entries, sizeof entries, "moves of the batch's %zu entries", count);
        long named = number_after(msg, "; entity ");
        int named_ok = named > MSG_CROWD && named <= 2 * MSG_CROWD;
        if (named_ok) {
            percept_entity_desc d;
            TU_OK(w, percept_get_entity(w, (percept_id)named, &d));
            named_ok = d.x == start[named - 1].x && d.y == start[named - 1].y;
        }
        if (number_after(msg, "out of memory after ") != moved || strstr(msg, entries) == NULL ||
            !named_ok || strstr(msg, ": out of memory") == NULL) {
            print_error("%s, allocation %zu of the batch failed after %ld moves: the message "
                        "'%s' should count them, out of %zu entries, and name an entity not "
                        "moved yet\n",
                        backend, k, moved, msg, count);
            fail();
        }
        if (strstr(msg, "backend '") != NULL) {
            char refused[600];
            snprintf(refused, sizeof refused,
                     "out of memory: backend '%s' (%s) could not make room", backend,
                     percept_backend_path(w, S));
            if (strstr(msg, refused) == NULL) {
                print_error("%s: the message '%s' should name the backend as '%s'\n", backend, msg,
                            refused);
                fail();
            }
            oom_named_backend++;
        }
        partway += moved > 0;
        percept_world_close(w);
        tu_expect_no_leak(&fa, backend);
    }
    print_message("      %s: %zu allocations failed in turn: %zu after some moves, %zu in "
                  "the backend's reserve()\n",
                  backend, k - 1, partway, oom_named_backend - named_before);
    assert_true(partway > 0); /* not vacuous: some failure came after some moves */
}

static void test_out_of_memory_message(void **state)
{
    (void)state;
    oom_named_backend = 0;
    tu_for_each_backend(check_oom_message);
    /* grid's cells grow as movers arrive: its reserve() refuses some move. */
    if (oom_named_backend == 0)
        check_oom_message("grid");
    assert_true(oom_named_backend > 0);
}

/* ------------------------------------------------------------------------ */
/* The checkers themselves, on hand-made input, so that a passing run means something */

static void test_checkers(void **state)
{
    model *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    evlist ev = {NULL, 0, 0};
    (void)state;
    assert_true(a != NULL && b != NULL);
    /* TRACE.md's example: 1 at (10, 10) sees 5 far; 2 at (13, 14) hears 2 far. */
    a->moves_on = 1;
    model_add(a, 1, tu_desc(10, 10, 5, 0, 0, 0));
    model_add(a, 2, tu_desc(13, 14, 0, 2, 0, 0));
    model_add(a, 3, tu_desc(40, 40, 0, 0, 0, SB(S)));
    model_fill(a);
    assert_int_equal(a->rel[0][1], SB(S));
    assert_int_equal(a->rel[1][0], 0);
    *b = *a;
    /* 2 steps away: 1 stops seeing it. */
    assert_int_equal(model_move(b, 1, 30, 30, &ev), 1);
    assert_true(same_event(&ev.v[0], &(percept_event){PERCEPT_LEAVE, S, 1, 2, 30, 30}));
    assert_true(check_stream(a, b, ev.v, ev.n, "checker self-test: the right stream"));
    assert_true(check_shape(a, b, ev.v, ev.n, "checker self-test: the right stream"));
    /* A doubled LEAVE, an ENTER of a held pair, a missing event, a MOVE of a pair not held,
     * an event naming no moved entity: each refused. */
    percept_event leave = ev.v[0];
    percept_event twice[2] = {leave, leave};
    percept_event enter = tu_ev(PERCEPT_ENTER, 1, 2, S, 13, 14);
    percept_event move = tu_ev(PERCEPT_MOVE, 2, 1, H, 10, 10);
    percept_event other = tu_ev(PERCEPT_LEAVE, 1, 3, S, 40, 40);
    print_message("      (the checkers' complaints below are expected)\n");
    assert_false(check_stream(a, b, twice, 2, "checker self-test: doubled leave"));
    assert_false(check_stream(a, b, &enter, 1, "checker self-test: enter of a held pair"));
    assert_false(check_stream(a, b, NULL, 0, "checker self-test: no events"));
    assert_false(check_stream(a, b, &move, 1, "checker self-test: move of a pair not held"));
    assert_false(check_shape(a, b, &other, 1, "checker self-test: 3 did not move"));
    /* Two moves delivering out of order within one group: more descents than moves. */
    percept_event desc[3] = {tu_ev(PERCEPT_LEAVE, 2, 1, S, 0, 0),
                             tu_ev(PERCEPT_LEAVE, 1, 2, S, 0, 0),
                             tu_ev(PERCEPT_LEAVE, 1, 2, H, 0, 0)};
    /* Only 2 moved, so one group: a descent is one too many. */
    assert_false(check_shape(a, b, desc, 3, "checker self-test: a descent with one move"));
    /* solve(): the right group is found, a wrong one is not. */
    percept_position q = {2, 30, 30};
    size_t entry = 0;
    *b = *a;
    assert_true(solve(b, &entry, 1, &q, &leave, 1, &ev));
    *b = *a;
    assert_false(solve(b, &entry, 1, &q, &enter, 1, &ev));
    /* Two moves made before one group: 3 moves silently (nobody perceives it), then 2. */
    percept_position two[2] = {{2, 30, 30}, {3, 41, 41}};
    size_t entries[2] = {0, 1};
    *b = *a;
    assert_true(solve(b, entries, 2, two, &leave, 1, &ev));
    assert_true(b->e[2].x == 41 && b->e[1].x == 30);
    /* ... but not when neither can go first silently: 1 walking off loses sight of 2. */
    percept_position loud[2] = {{2, 30, 30}, {1, 31, 31}};
    *b = *a;
    assert_false(solve(b, entries, 2, loud, &leave, 1, &ev));
    /* has_number: whole numbers only. */
    assert_true(has_number("out of memory after 12 of 32 moves", 12));
    assert_false(has_number("out of memory after 12 of 32 moves", 2));
    assert_false(has_number("out of memory after 12 of 32 moves", 3));
    ev_free(&ev);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------------ */
/* An entity parked far outside does not change the order of the others      */

#define PARK_SIDE 20 /* movers on a PARK_SIDE x PARK_SIDE lattice */

/* Each mover's first event in a batch is its ENTER of its own marker:
 * recording the observers of ENTER events by markers gives the order. */
typedef struct mover_order {
    percept_id order[PARK_SIDE * PARK_SIDE];
    size_t count;
} mover_order;

static void record_mover(void *user, const percept_event *e)
{
    mover_order *o = user;
    if (e->kind == PERCEPT_ENTER && e->target >= 10000 && o->count < COUNT_OF(o->order))
        o->order[o->count++] = e->observer;
}

/* The movers' order in one batch, with entity 99999 parked at 5e14 moving too
 * when `parked`. The batch lists the moves shuffled. */
static void batch_order(const char *backend, int parked, mover_order *out)
{
    percept_world *w = tu_open(backend, "[world]\nmax_x = 1000\nmax_y = 1000\n", NULL);
    percept_position batch[PARK_SIDE * PARK_SIDE + 1];
    size_t n = 0;
    for (int i = 0; i < PARK_SIDE * PARK_SIDE; i++) {
        double x = 25 + 50 * (i % PARK_SIDE), y = 25 + 50 * (i / PARK_SIDE);
        tu_add(w, (percept_id)(1 + i), tu_desc(x, y + 10, 1, 0, 0, 0));
        tu_add(w, (percept_id)(10000 + i), tu_desc(x + 0.5, y, 0, 0, 0, 0));
        batch[n++] = (percept_position){(percept_id)(1 + i), x, y};
    }
    if (parked) {
        tu_add(w, 99999, tu_desc(5e14, 5e14, 1, 0, 0, 0));
        batch[n++] = (percept_position){99999, 6e14, 6e14};
    }
    uint64_t r = 42;
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = below(&r, (uint32_t)(i + 1));
        percept_position t = batch[i];
        batch[i] = batch[j];
        batch[j] = t;
    }
    out->count = 0;
    assert_int_equal(percept_set_event_callback(w, record_mover, out), PERCEPT_OK);
    TU_OK(w, percept_move_many(w, batch, n));
    assert_int_equal(out->count, PARK_SIDE * PARK_SIDE);
    percept_world_close(w);
}

/* How many consecutive movers in `o` are lattice neighbours. */
static size_t neighbours_in_order(const mover_order *o)
{
    size_t near = 0;
    for (size_t i = 1; i < o->count; i++) {
        int a = (int)o->order[i - 1] - 1, b = (int)o->order[i] - 1;
        int dx = abs(a % PARK_SIDE - b % PARK_SIDE), dy = abs(a / PARK_SIDE - b / PARK_SIDE);
        near += dx + dy == 1;
    }
    return near;
}

/*
 * The order of a batch's moves follows their places along a curve over the
 * batch's extent, cut to the world bounds: one entity far outside them must
 * not undo it (it used to stretch the extent so far that every other move
 * fell in the same step of the curve, and the batch ran in the order given,
 * losing the cache locality the order is for). The order is the library's
 * to choose; what is checked is that neighbours follow each other with the
 * parked entity as without it, where the shuffled order given has few.
 */
static void check_parked_outside(const char *backend)
{
    static mover_order plain, parked;
    batch_order(backend, 0, &plain);
    batch_order(backend, 1, &parked);
    size_t near_plain = neighbours_in_order(&plain), near_parked = neighbours_in_order(&parked);
    if (near_plain <= plain.count / 2 || near_parked <= parked.count / 2) {
        print_error("%s: lattice neighbours one after the other: %zu of %zu moves, %zu with an "
                    "entity parked far outside; more than half expected\n",
                    backend, near_plain, plain.count, near_parked);
        fail();
    }
}

static void test_parked_outside(void **state)
{
    (void)state;
    tu_for_each_backend(check_parked_outside);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkers),
        tu_backend_test(test_batches_open),
        tu_backend_test(test_batches_strip),
        tu_backend_test(test_batches_crowd),
        tu_backend_test(test_far_apart),
        tu_backend_test(test_validation),
        cmocka_unit_test(test_null_world),
        tu_backend_test(test_huge_count),
        tu_backend_test(test_empty_and_in_place),
        tu_backend_test(test_busy),
        tu_backend_test(test_validation_without_memory),
        tu_backend_test(test_out_of_memory),
        tu_backend_test(test_out_of_memory_message),
        tu_backend_test(test_parked_outside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
