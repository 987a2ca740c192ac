/*
 * fuzz_ops.c - libFuzzer target for the change algorithm and every backend:
 * the input bytes become a sequence of add/move/remove/set_range/set_hidden
 * calls and batches of moves (percept_move_many), run on one world per
 * backend plugin and on a brute-force model of the relation kept here,
 * independent of src/. Any difference in a call's status, its events (kinds,
 * order, positions) or, at check points and at the end, in the perceived
 * sets aborts. Invalid calls (NaN, unknown ID, duplicate add, negative range,
 * bad sense or mask, an entity named twice in a batch) must fail and change
 * nothing. Inside the event callback the world must read as already changed
 * and refuse changes with PERCEPT_EBUSY. Each world's allocator counts what
 * it holds, which percept_memory_usage() must report exactly.
 *
 * A batch's moves come in an order of the library's choosing, which the
 * model does not compute: it finds the order from the events, each move's
 * events being delivered before the next move is made (check_batch_world).
 *
 * Input layout (every byte is optional; a short input reads zeros):
 *   byte 0 bounds, 1 backend cell size, 2 observer_cell_size, 3 flags
 *   then operations: an opcode byte and its arguments (see run_input;
 *   opcode bytes 250-255 are a batch, see run_batch).
 * FUZZ_OPS_TRACE=1 prints the operations as trace lines on stderr, so that
 * a finding can be replayed with percept-replay.
 */
#include <percept.h>

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

/*
 * The model's inner loops are the harness's own: their comparisons would
 * only slow libFuzzer down and crowd its coverage with features of ours.
 */
#if defined(__clang__)
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ------------------------------------------------------------------------ */
/* Entities and the model                                                    */

/* IDs 0..63 plus 16 far apart ones: collisions are likely, IDs still span 32 bits. */
#define SMALL_IDS 64
#define MAX_ENT (SMALL_IDS + 16)
static const percept_id big_ids[16] = {
    0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu, 1000000u, 64u,       65u,     4096u,
    0x10000u,    0xDEADBEEFu, 100u,        255u,        256u,     12345678u, 0xFFFFu, 3000000000u};

static percept_id id_of(int idx)
{
    return idx < SMALL_IDS ? (percept_id)idx : big_ids[idx - SMALL_IDS];
}

typedef struct ent {
    int present;
    double x, y;
    double range[PERCEPT_SENSE_COUNT];
    unsigned hidden;
} ent;

static ent model[MAX_ENT];
static ent before[MAX_ENT];

NO_COVERAGE static int perceives(const ent *st, int o, int t, int s)
{
    const ent *a = &st[o], *b = &st[t];
    double dx, dy, r;

    if (o == t || !a->present || !b->present || (b->hidden & PERCEPT_SENSE_BIT(s)))
        return 0;
    r = a->range[s];
    dx = b->x - a->x;
    dy = b->y - a->y;
    return r > 0 && dx * dx + dy * dy <= r * r;
}

static int valid_coord(double v)
{
    return isfinite(v) && fabs(v) <= PERCEPT_COORD_LIMIT;
}

static int valid_range(double r)
{
    return isfinite(r) && r >= 0 && r <= PERCEPT_COORD_LIMIT;
}

typedef struct event {
    int kind, sense;
    percept_id observer, target;
    double x, y;
    uint32_t done; /* batch entries first seen at their targets at this event (bit per index) */
} event;

static int event_order(const void *pa, const void *pb)
{
    const event *a = pa, *b = pb;

    if (a->observer != b->observer)
        return a->observer < b->observer ? -1 : 1;
    if (a->target != b->target)
        return a->target < b->target ? -1 : 1;
    return a->sense - b->sense;
}

static event expected[MAX_ENT * 2 * PERCEPT_SENSE_COUNT];
static size_t expected_count;

/*
 * The events of a change to entity c from state `from` to state `to` (the
 * model before and after a call, or around one move of a batch). MOVE only
 * for a target whose position changed and that stays perceived. Computed for
 * valid calls only: a failing call must deliver none, which check_call()
 * checks without them.
 */
NO_COVERAGE static void expect_events(const ent *from, const ent *to, int c, int moved,
                                      int move_events)
{
    expected_count = 0;
    for (int k = 0; k < MAX_ENT; k++) {
        if (k == c || (!from[k].present && !to[k].present))
            continue;
        for (int dir = 0; dir < 2; dir++) {
            int o = dir ? k : c, t = dir ? c : k;
            for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
                int was = perceives(from, o, t, s), is = perceives(to, o, t, s);
                int kind = -1;
                if (!was && is)
                    kind = PERCEPT_ENTER;
                else if (was && !is)
                    kind = PERCEPT_LEAVE;
                else if (was && is && moved && t == c && move_events)
                    kind = PERCEPT_MOVE;
                if (kind < 0)
                    continue;
                event *e = &expected[expected_count++];
                const ent *pos = to[t].present ? &to[t] : &from[t];
                *e = (event){kind, s, id_of(o), id_of(t), pos->x, pos->y, 0};
            }
        }
    }
    qsort(expected, expected_count, sizeof expected[0], event_order);
}

/* ------------------------------------------------------------------------ */
/* Worlds, one per backend                                                   */

typedef struct world {
    percept_world *w;
    const char *backend;
    event *events;
    size_t count, cap;
    unsigned long op;    /* the operation being run, for messages */
    uint32_t batch_done; /* entries of the running batch that read at their targets */
    size_t live_bytes;   /* what the world holds from its allocator, counted there */
} world;

static world worlds[FUZZ_MAX_BACKENDS];
static size_t world_count;
static int trace_ops;

/*
 * A batch for percept_move_many(). Its entries are passed as they are here;
 * a set of entries is a bitmask by index.
 */
#define MAX_BATCH 24
#define ENTRY(i) (UINT32_C(1) << (i))
_Static_assert(MAX_BATCH <= 32, "a uint32_t holds a set of batch entries");

typedef struct batch {
    size_t n;                        /* entries */
    int idx[MAX_BATCH];              /* the model's index of each entry's entity */
    percept_position pos[MAX_BATCH]; /* id and target */
    uint32_t moving; /* entries whose target differs (==) from the start: the moves made */
    int running;     /* inside percept_move_many() */
} batch;

static batch bt;

static const char *kind_name(int kind)
{
    return kind == PERCEPT_ENTER ? "enter" : kind == PERCEPT_LEAVE ? "leave" : "move";
}

/*
 * Reads are allowed in the callback and see the world after the change;
 * changes are refused. In a batch "the change" is the one move whose events
 * these are: the moves after it are not made yet, so the event's position is
 * still the target's.
 */
static void check_in_callback(world *wd, const percept_event *ev)
{
    percept_world *w = wd->w;
    percept_entity_desc d;
    int p = percept_perceives(w, ev->observer, ev->target, ev->sense);
    int both = percept_contains(w, ev->observer) && percept_contains(w, ev->target);
    int busy;

    if (ev->kind == PERCEPT_LEAVE ? (both ? p != 0 : p >= 0) : p != 1)
        fuzz_fail("%s, op %lu: inside the callback of %s %u->%u %s, percept_perceives gives %d",
                  wd->backend, wd->op, kind_name(ev->kind), ev->observer, ev->target,
                  percept_sense_name(ev->sense), p);
    /* a removed target is gone; otherwise it stands where the event says */
    if (percept_get_entity(w, ev->target, &d) == 0 && !(d.x == ev->x && d.y == ev->y))
        fuzz_fail("%s, op %lu: inside the callback of %s %u->%u %s at (%.17g, %.17g), the target "
                  "reads (%.17g, %.17g)",
                  wd->backend, wd->op, kind_name(ev->kind), ev->observer, ev->target,
                  percept_sense_name(ev->sense), ev->x, ev->y, d.x, d.y);
    memset(&d, 0, sizeof d);
    switch (wd->count % 6) {
    case 0:
        busy = percept_add(w, ev->target, &d);
        break;
    case 1:
        busy = percept_move(w, ev->target, 1, 1);
        break;
    case 2:
        busy = percept_remove(w, ev->observer);
        break;
    case 3:
        busy = percept_set_range(w, ev->observer, ev->sense, 0);
        break;
    case 4:
        busy = percept_set_hidden(w, ev->target, ev->sense, 1);
        break;
    default: {
        percept_position one = {ev->target, 1, 1};
        busy = percept_move_many(w, &one, 1);
        break;
    }
    }
    if (busy != PERCEPT_EBUSY)
        fuzz_fail("%s, op %lu: a change from inside the callback returned %d, not EBUSY",
                  wd->backend, wd->op, busy);
}

/*
 * The entries of the running batch that read at their targets for the first
 * time: the moves made since the previous event. An entry that does not
 * move never counts: it reads at its target from the start.
 */
NO_COVERAGE static uint32_t newly_done(world *wd)
{
    uint32_t fresh = 0;

    for (size_t i = 0; i < bt.n; i++) {
        percept_entity_desc d;
        if (!(bt.moving & ENTRY(i)) || (wd->batch_done & ENTRY(i)))
            continue;
        if (percept_get_entity(wd->w, bt.pos[i].id, &d) != 0)
            fuzz_fail("%s, op %lu: entity %u of the batch cannot be read inside the callback",
                      wd->backend, wd->op, bt.pos[i].id);
        if (d.x == bt.pos[i].x && d.y == bt.pos[i].y)
            fresh |= ENTRY(i);
    }
    wd->batch_done |= fresh;
    return fresh;
}

static void on_event(void *user, const percept_event *ev)
{
    world *wd = user;
    uint32_t fresh = bt.running ? newly_done(wd) : 0;

    if (wd->count == wd->cap) {
        size_t cap = wd->cap ? wd->cap * 2 : 256;
        event *p = realloc(wd->events, cap * sizeof *p);
        if (p == NULL)
            fuzz_fail("out of memory in the harness");
        wd->events = p;
        wd->cap = cap;
    }
    check_in_callback(wd, ev);
    wd->events[wd->count++] =
        (event){(int)ev->kind, (int)ev->sense, ev->observer, ev->target, ev->x, ev->y, fresh};
}

/* The world's settings, decoded from the first input bytes. */
typedef struct setup {
    percept_bounds bounds;
    double cell_size;          /* the backend's cell_size / tower_size; 0: default */
    double observer_cell_size; /* 0: default */
    int move_events;
} setup;

static const percept_bounds bounds_table[8] = {
    {0, 0, 1024, 1024},         {-100, -100, 100, 100}, {0, 0, 10, 10},
    {-1e6, -1e6, 1e6, 1e6},     {0, 0, 0, 0},           {5, 5, 5.5, 100},
    {-1e15, -1e15, 1e15, 1e15}, {-50, 0, 50, 1},
};
/*
 * Cell sizes as fractions of the longer side of the bounds (0: the
 * default). A fixed size would give millions of cells for wide bounds and
 * make every input slow; these span one cell larger than the world to a
 * few hundred cells across, so ranges cross many cells and few.
 */
static const double cell_div[8] = {0, 1, 7, 64, 500, 0.5, 3.25, 0.01};
static const double ocell_div[8] = {0, 1, 3, 16, 64, 8, 0.5, 0.01};

static double cell_from(double span, double div)
{
    return div > 0 && span > 0 ? span / div : 0;
}

/* The backend's own size parameter, for the backends that have one. */
static const char *size_key(const char *backend)
{
    if (strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0)
        return "cell_size";
    if (strcmp(backend, "tower") == 0)
        return "tower_size";
    return NULL;
}

/*
 * Each world's allocator counts the bytes the world holds, so that
 * percept_memory_usage() can be checked against it (check_world()). A
 * header in front of each block keeps its size.
 */
typedef union block_header {
    max_align_t align;
    size_t size;
} block_header;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    world *wd = user;
    block_header *h = ptr != NULL ? (block_header *)ptr - 1 : NULL;
    size_t old = h != NULL ? h->size : 0;
    if (size == 0) {
        free(h);
        wd->live_bytes -= old;
        return NULL;
    }
    if (size > SIZE_MAX - sizeof *h)
        return NULL;
    block_header *n = realloc(h, sizeof *n + size);
    if (n == NULL)
        return NULL;
    n->size = size;
    wd->live_bytes = wd->live_bytes - old + size;
    return n + 1;
}

static int open_world(world *wd, const char *backend, const setup *su)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_error err;
    char ini[1024];
    const char *key = size_key(backend);
    int n, st;

    n = snprintf(ini, sizeof ini,
                 "[percept]\nmove_events = %s\n[world]\nmin_x = %.17g\nmin_y = %.17g\n"
                 "max_x = %.17g\nmax_y = %.17g\n",
                 su->move_events ? "on" : "off", su->bounds.min_x, su->bounds.min_y,
                 su->bounds.max_x, su->bounds.max_y);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        n += snprintf(ini + n, sizeof ini - (size_t)n, "[%s]\n",
                      percept_sense_name((percept_sense)s));
        if (su->observer_cell_size > 0)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "observer_cell_size = %.17g\n",
                          su->observer_cell_size);
        if (key != NULL && su->cell_size > 0)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "%s = %.17g\n", key, su->cell_size);
    }
    opt.backend = backend;
    memset(wd, 0, sizeof *wd);
    wd->backend = backend;
    percept_allocator allocator = {counting_alloc, wd}; /* the world keeps a copy */
    opt.allocator = &allocator;
    memset(&err, 0, sizeof err);
    st = percept_world_open_string(&wd->w, ini, "fuzz_ops", &opt, &err);
    if (st == 0) {
        if (percept_set_event_callback(wd->w, on_event, wd) != 0)
            fuzz_fail("%s: percept_set_event_callback failed", backend);
        return 0;
    }
    /*
     * A cell size too small for the bounds is refused by the backend's
     * create(): as a bad parameter (ECONFIG) or, for a default that does
     * not fit, as a failed plugin (EPLUGIN). Either is an answer, not a bug.
     */
    if ((st != PERCEPT_ECONFIG && st != PERCEPT_EPLUGIN) || err.text[0] == '\0')
        fuzz_fail("%s: cannot open a world: %s (%s)\n%s", backend, err.text,
                  percept_status_name(st), ini);
    if (wd->live_bytes != 0)
        fuzz_fail("%s: a world that failed to open left %zu bytes allocated", backend,
                  wd->live_bytes);
    return -1;
}

static void close_worlds(void)
{
    for (size_t i = 0; i < world_count; i++) {
        percept_world_close(worlds[i].w);
        if (worlds[i].live_bytes != 0)
            fuzz_fail("%s: closing the world left %zu bytes allocated", worlds[i].backend,
                      worlds[i].live_bytes);
        free(worlds[i].events);
    }
    world_count = 0;
}

/* ------------------------------------------------------------------------ */
/* Comparing a world with the model                                          */

static int ids_order(const void *pa, const void *pb)
{
    percept_id a = *(const percept_id *)pa, b = *(const percept_id *)pb;
    return (a > b) - (a < b);
}

/* The model's sets at a check point, computed once for every world. */
static percept_id sets[MAX_ENT][PERCEPT_SENSE_COUNT][2][MAX_ENT];
static size_t set_len[MAX_ENT][PERCEPT_SENSE_COUNT][2];

/* [c][s][1]: whom c perceives by s; [c][s][0]: who perceives c by s. Sorted by ID. */
NO_COVERAGE static void model_sets(void)
{
    memset(set_len, 0, sizeof set_len);
    for (int o = 0; o < MAX_ENT; o++) {
        if (!model[o].present)
            continue;
        for (int t = 0; t < MAX_ENT; t++) {
            for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
                if (!perceives(model, o, t, s))
                    continue;
                sets[o][s][1][set_len[o][s][1]++] = id_of(t);
                sets[t][s][0][set_len[t][s][0]++] = id_of(o);
            }
        }
    }
    for (int c = 0; c < MAX_ENT; c++)
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
            for (int dir = 0; dir < 2; dir++)
                qsort(sets[c][s][dir], set_len[c][s][dir], sizeof(percept_id), ids_order);
}

NO_COVERAGE static void check_world(const world *wd, unsigned long op)
{
    percept_id have[MAX_ENT];
    size_t entities = 0;

    for (int c = 0; c < MAX_ENT; c++) {
        percept_id id = id_of(c);
        percept_entity_desc d;
        const ent *m = &model[c];

        entities += (size_t)m->present;
        if (percept_contains(wd->w, id) != m->present)
            fuzz_fail("%s, after op %lu: percept_contains(%u) is %d, model says %d", wd->backend,
                      op, id, !m->present, m->present);
        if (!m->present) {
            size_t count = 0;
            if (percept_perceived(wd->w, id, PERCEPT_SIGHT, NULL, 0, &count) != PERCEPT_ENOENT)
                fuzz_fail("%s, after op %lu: percept_perceived of absent %u is not ENOENT",
                          wd->backend, op, id);
            continue;
        }
        if (percept_get_entity(wd->w, id, &d) != 0 || d.x != m->x || d.y != m->y ||
            d.hidden != m->hidden || d.range[0] != m->range[0] || d.range[1] != m->range[1] ||
            d.range[2] != m->range[2])
            fuzz_fail("%s, after op %lu: entity %u reads back (%.17g, %.17g) hidden %u, model "
                      "(%.17g, %.17g) hidden %u",
                      wd->backend, op, id, d.x, d.y, d.hidden, m->x, m->y, m->hidden);
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            for (int as_observer = 1; as_observer >= 0; as_observer--) {
                const percept_id *want = sets[c][s][as_observer];
                size_t nwant = set_len[c][s][as_observer], count = 0, total = 0;
                int (*list)(const percept_world *, percept_id, percept_sense, percept_id *, size_t,
                            size_t *) = as_observer ? percept_perceived : percept_perceived_by;
                if (list(wd->w, id, (percept_sense)s, NULL, 0, &total) != 0 ||
                    list(wd->w, id, (percept_sense)s, have, MAX_ENT, &count) != 0 ||
                    total != count || count != nwant ||
                    memcmp(have, want, count * sizeof *have) != 0) {
                    fprintf(stderr, "model:");
                    for (size_t i = 0; i < nwant; i++)
                        fprintf(stderr, " %u", want[i]);
                    fprintf(stderr, "\nworld:");
                    for (size_t i = 0; i < count && i < MAX_ENT; i++)
                        fprintf(stderr, " %u", have[i]);
                    fuzz_fail("\n%s, after op %lu: %s set of %u by %s differs from the model "
                              "(%zu/%zu vs %zu)",
                              wd->backend, op, as_observer ? "perceived" : "perceived_by", id,
                              percept_sense_name((percept_sense)s), count, total, nwant);
                }
            }
        }
    }
    if (percept_entity_count(wd->w) != entities)
        fuzz_fail("%s, after op %lu: %zu entities, model has %zu", wd->backend, op,
                  percept_entity_count(wd->w), entities);
    /* Every backend under test reports its memory: the report is exact. */
    percept_memory m;
    memset(&m, 0, sizeof m);
    if (percept_memory_usage(wd->w, &m) != 0 || m.total != wd->live_bytes ||
        m.total != m.entities + m.pairs + m.observer_grids + m.backends + m.scratch + m.world)
        fuzz_fail("%s, after op %lu: percept_memory_usage reports %zu bytes (entities %zu, pairs "
                  "%zu, observer grids %zu, backends %zu, scratch %zu, world %zu), the allocator "
                  "holds %zu",
                  wd->backend, op, m.total, m.entities, m.pairs, m.observer_grids, m.backends,
                  m.scratch, m.world, wd->live_bytes);
}

static void check_all(unsigned long op)
{
    model_sets();
    for (size_t i = 0; i < world_count; i++)
        check_world(&worlds[i], op);
}

static void dump_events(const char *what, const event *ev, size_t n)
{
    fprintf(stderr, "%s (%zu):\n", what, n);
    for (size_t i = 0; i < n; i++) {
        fprintf(stderr, "  %u %u %s %s at (%.17g, %.17g)", ev[i].observer, ev[i].target,
                percept_sense_name((percept_sense)ev[i].sense), kind_name(ev[i].kind), ev[i].x,
                ev[i].y);
        if (ev[i].done != 0)
            fprintf(stderr, "  [batch entries 0x%" PRIx32 " now at their targets]", ev[i].done);
        fputc('\n', stderr);
    }
}

/* 1 if the two lists hold the same events in the same order (the batch marks aside). */
NO_COVERAGE static int same_events(const event *a, size_t na, const event *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!(a[i].kind == b[i].kind && a[i].sense == b[i].sense &&
              a[i].observer == b[i].observer && a[i].target == b[i].target && a[i].x == b[i].x &&
              a[i].y == b[i].y))
            return 0;
    return 1;
}

/* One call's status and events against the model's; `ok_mask` has bit -status of each accepted
 * error. */
NO_COVERAGE static void check_call(world *wd, int st, unsigned ok_mask, const char *what)
{
    if (ok_mask != 0) {
        if (st >= 0 || !(ok_mask & (1u << -st)))
            fuzz_fail("%s, op %lu: %s returned %d (%s), expected an error (mask 0x%x)", wd->backend,
                      wd->op, what, st, percept_status_name(st), ok_mask);
        if (percept_errmsg(wd->w)[0] == '\0')
            fuzz_fail("%s, op %lu: %s failed with an empty percept_errmsg", wd->backend, wd->op,
                      what);
        if (wd->count != 0)
            fuzz_fail("%s, op %lu: %s failed but delivered %zu events", wd->backend, wd->op, what,
                      wd->count);
        return;
    }
    if (st != 0)
        fuzz_fail("%s, op %lu: %s failed: %d %s", wd->backend, wd->op, what, st,
                  percept_errmsg(wd->w));
    if (!same_events(wd->events, wd->count, expected, expected_count)) {
        dump_events("model", expected, expected_count);
        dump_events("world", wd->events, wd->count);
        fuzz_fail("%s, op %lu: %s: events differ from the model", wd->backend, wd->op, what);
    }
}

/* ------------------------------------------------------------------------ */
/* Decoding the input                                                        */

typedef struct reader {
    const uint8_t *p;
    size_t left;
} reader;

static unsigned next(reader *r)
{
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

static double raw_double(reader *r)
{
    uint64_t bits = 0;
    double v;

    for (int i = 0; i < 8; i++)
        bits = bits << 8 | next(r);
    memcpy(&v, &bits, sizeof v);
    return v;
}

static int next_idx(reader *r)
{
    unsigned b = next(r);
    return b < 0xF0 ? (int)(b % SMALL_IDS) : SMALL_IDS + (int)(b & 15);
}

/* Mostly small integers (exact boundaries are frequent), sometimes extremes. */
static double next_coord(reader *r)
{
    unsigned b = next(r);

    if (b < 0xE0)
        return (double)b - 112.0;
    if (b < 0xF0)
        return ((double)next(r) - 128.0) / 8.0 + (double)(b - 0xE8) * 1000.0;
    switch (b) {
    case 0xF0:
        return PERCEPT_COORD_LIMIT;
    case 0xF1:
        return -PERCEPT_COORD_LIMIT;
    case 0xF2:
        return nextafter(PERCEPT_COORD_LIMIT, INFINITY); /* invalid */
    case 0xF3:
        return NAN;
    case 0xF4:
        return INFINITY;
    case 0xF5:
        return -INFINITY;
    case 0xF6:
        return -0.0;
    case 0xF7:
        return 1e-310;
    case 0xF8:
        return 1e6;
    case 0xF9:
        return -3e9 + 0.5;
    case 0xFA:
        return 0.1;
    case 0xFB:
        return 1023.999;
    case 0xFC:
        return 1024;
    case 0xFD:
        return 5e14;
    case 0xFE:
        return -1e15 + 1;
    default:
        return raw_double(r);
    }
}

static double next_range(reader *r)
{
    unsigned b = next(r);

    if (b < 0xC0)
        return (double)b / 4.0;
    if (b < 0xE0)
        return (double)(b - 0xC0) * 16.0;
    if (b < 0xF0)
        return (double)next(r) / 16.0 + 0.0625 * (b - 0xE0);
    switch (b) {
    case 0xF0:
        return 0;
    case 0xF1:
        return PERCEPT_COORD_LIMIT;
    case 0xF2:
        return nextafter(PERCEPT_COORD_LIMIT, INFINITY); /* invalid */
    case 0xF3:
        return -1; /* invalid */
    case 0xF4:
        return -0.0;
    case 0xF5:
        return NAN;
    case 0xF6:
        return INFINITY;
    case 0xF7:
        return 1e-300; /* squares to 0 */
    case 0xF8:
        return 1e300; /* invalid */
    case 0xF9:
        return 2000;
    case 0xFA:
        return 1e7;
    case 0xFB:
        return 5;
    case 0xFC:
        return 0.5;
    case 0xFD:
        return 3e9;
    case 0xFE:
        return -INFINITY;
    default:
        return raw_double(r);
    }
}

static int next_sense(reader *r)
{
    static const int bad[16] = {3, -1, 255, INT_MAX, INT_MIN, 4, 7, 8, 3, 3, 3, 3, 3, 3, 3, 3};
    unsigned b = next(r);
    return b < 0xF0 ? (int)(b % 3) : bad[b & 15];
}

static const char *sense_word(int s)
{
    const char *n = percept_sense_name((percept_sense)s);
    return n != NULL ? n : "?";
}

/* The add option for a hidden mask, in trace syntax ("" when none). */
static const char *hide_option(unsigned hidden)
{
    static char buf[64];
    size_t n = 0;

    if (hidden == 0)
        return "";
    n += (size_t)snprintf(buf, sizeof buf, " hide=");
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (hidden & PERCEPT_SENSE_BIT(s))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n > 6 ? "," : "", sense_word(s));
    if (hidden & ~7u)
        snprintf(buf + n, sizeof buf - n, "%sbad-bits-0x%x", n > 6 ? "," : "", hidden & ~7u);
    return buf;
}

/* Runs one call on every world and checks it; applies nothing to the model. */
#define EACH_WORLD(call)                                                                           \
    for (size_t i_ = 0; i_ < world_count; i_++) {                                                  \
        world *wd = &worlds[i_];                                                                   \
        percept_world *w = wd->w;                                                                  \
        wd->count = 0;                                                                             \
        wd->op = op;                                                                               \
        check_call(wd, (call), bad, what);                                                         \
    }

#define BIT(st) (1u << -(st))

/* ------------------------------------------------------------------------ */
/* Batches of moves                                                          */

/*
 * Opcode bytes from BATCH_OPCODE up are a batch; the others keep their old
 * meaning (byte % 10), so that older inputs and seeds decode as before.
 */
#define BATCH_OPCODE 250u
#define BATCH_NULL 0xFFu /* count byte: moves NULL with a count of 3, which must fail */

/* States around the moves of a batch while its order is being found. */
static ent from_st[MAX_ENT], mid_st[MAX_ENT], to_st[MAX_ENT];

/* The entries in the order found (for the trace), and a candidate order being tried. */
static size_t found[MAX_BATCH], trial[MAX_BATCH];
static size_t found_count, trial_count;

/* Moves entry i in st if that changes no pair's relation; returns whether it did. */
NO_COVERAGE static int move_if_silent(ent *st, size_t i)
{
    unsigned char was[MAX_ENT][2][PERCEPT_SENSE_COUNT];
    int c = bt.idx[i];
    ent old = st[c];

    for (int k = 0; k < MAX_ENT; k++) {
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            was[k][0][s] = (unsigned char)perceives(st, c, k, s);
            was[k][1][s] = (unsigned char)perceives(st, k, c, s);
        }
    }
    st[c].x = bt.pos[i].x;
    st[c].y = bt.pos[i].y;
    for (int k = 0; k < MAX_ENT; k++) {
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
            if (was[k][0][s] != perceives(st, c, k, s) || was[k][1][s] != perceives(st, k, c, s)) {
                st[c] = old;
                return 0;
            }
        }
    }
    return 1;
}

/*
 * Makes the moves of `set` in st in an order in which none of them changes
 * the relation, appending that order to trial[]; 0 if there is none. They
 * delivered no events, so each changed nothing when it was made, in the
 * library's order. Taking any entry that is silent now is safe: a pair's
 * relation depends only on the order of its own two moves, so if some
 * order is silent, the earliest remaining entry of it is silent after any
 * silent choices made before it, and the search never has to back up.
 */
NO_COVERAGE static int move_silently(ent *st, uint32_t set)
{
    while (set != 0) {
        size_t i = 0;
        while (i < bt.n && !((set & ENTRY(i)) && move_if_silent(st, i)))
            i++;
        if (i == bt.n)
            return 0;
        set &= ~ENTRY(i);
        trial[trial_count++] = i;
    }
    return 1;
}

/*
 * Whether entry m, moved after the other entries of `fresh` (silently, in
 * the order move_silently() finds), gives exactly the events ev[0..n) from
 * state from_st. 1: yes, and to_st is the state after m's move, trial[] the
 * order. 0: no, expected[] holds m's events. -1: the others cannot all move
 * without events.
 */
NO_COVERAGE static int explains(uint32_t fresh, size_t m, const event *ev, size_t n,
                                int move_events)
{
    trial_count = 0;
    memcpy(mid_st, from_st, sizeof mid_st);
    if (!move_silently(mid_st, fresh & ~ENTRY(m)))
        return -1;
    memcpy(to_st, mid_st, sizeof to_st);
    to_st[bt.idx[m]].x = bt.pos[m].x;
    to_st[bt.idx[m]].y = bt.pos[m].y;
    trial[trial_count++] = m;
    expect_events(mid_st, to_st, bt.idx[m], 1, move_events);
    return same_events(ev, n, expected, expected_count);
}

/* The batch as passed, for a finding: a trace cannot hold it, and its order is unknown. */
static void dump_batch(const world *wd)
{
    fprintf(stderr, "batch of %zu (entity: start -> target):\n", bt.n);
    for (size_t i = 0; i < bt.n; i++) {
        const ent *e = &before[bt.idx[i]];
        if (!e->present) {
            fprintf(stderr, "  moves[%zu] %u: absent -> (%.17g, %.17g)\n", i, bt.pos[i].id,
                    bt.pos[i].x, bt.pos[i].y);
            continue;
        }
        fprintf(stderr, "  moves[%zu] %u: (%.17g, %.17g) -> (%.17g, %.17g)%s%s\n", i, bt.pos[i].id,
                e->x, e->y, bt.pos[i].x, bt.pos[i].y, (bt.moving & ENTRY(i)) ? "" : " stays",
                wd != NULL && (wd->batch_done & ENTRY(i)) ? ", seen at its target" : "");
    }
}

static int is_mover_candidate(uint32_t fresh, size_t i, const event *e)
{
    return (fresh & ENTRY(i)) && (bt.pos[i].id == e->observer || bt.pos[i].id == e->target);
}

/*
 * A valid batch's events on one world, checked without knowing the
 * library's order. The events fall into groups, each starting at an event
 * where entries are first seen at their targets (on_event marks it): one
 * move's events, in percept_move()'s order, before the next move is made.
 * Its mover is one of those entries and is the observer or target of the
 * group's first event; the other entries moved before it without events.
 * With two candidates both are tried. Entries never seen at their targets
 * during the call moved after the last event, also without events.
 */
NO_COVERAGE static void check_batch_world(world *wd, int move_events)
{
    uint32_t seen = 0, rest;
    size_t k = 0;

    found_count = 0;
    memcpy(from_st, before, sizeof from_st);
    if (wd->count > 0 && wd->events[0].done == 0) {
        dump_batch(wd);
        dump_events("world", wd->events, wd->count);
        fuzz_fail("%s, op %lu: move_many: an event came before any entry read at its target",
                  wd->backend, wd->op);
    }
    while (k < wd->count) {
        const event *e = &wd->events[k];
        uint32_t fresh = e->done;
        size_t end = k + 1, mover = MAX_BATCH;

        while (end < wd->count && wd->events[end].done == 0)
            end++;
        for (size_t i = 0; i < bt.n && mover == MAX_BATCH; i++)
            if (is_mover_candidate(fresh, i, e) && explains(fresh, i, e, end - k, move_events) == 1)
                mover = i;
        if (mover == MAX_BATCH) {
            dump_batch(wd);
            dump_events("world, the whole call", wd->events, wd->count);
            dump_events("world, this group", e, end - k);
            for (size_t i = 0; i < bt.n; i++) {
                char what[64];
                if (!is_mover_candidate(fresh, i, e))
                    continue;
                if (explains(fresh, i, e, end - k, move_events) < 0) {
                    fprintf(stderr, "moves[%zu] as the mover: the others cannot move silently\n",
                            i);
                    continue;
                }
                snprintf(what, sizeof what, "model, moves[%zu] as the mover", i);
                dump_events(what, expected, expected_count);
            }
            fuzz_fail("%s, op %lu: move_many: events %zu-%zu (entries 0x%" PRIx32
                      " first at their targets) are not the events of one move",
                      wd->backend, wd->op, k, end - 1, fresh);
        }
        memcpy(found + found_count, trial, trial_count * sizeof *trial);
        found_count += trial_count;
        memcpy(from_st, to_st, sizeof from_st);
        seen |= fresh;
        k = end;
    }

    rest = bt.moving & ~seen;
    for (size_t i = 0; i < bt.n; i++) {
        percept_entity_desc d;
        if (!(rest & ENTRY(i)))
            continue;
        if (percept_get_entity(wd->w, bt.pos[i].id, &d) != 0 ||
            !(d.x == bt.pos[i].x && d.y == bt.pos[i].y)) {
            dump_batch(wd);
            dump_events("world", wd->events, wd->count);
            fuzz_fail("%s, op %lu: move_many: moves[%zu] (entity %u) was not made: it reads "
                      "(%.17g, %.17g)",
                      wd->backend, wd->op, i, bt.pos[i].id, d.x, d.y);
        }
    }
    trial_count = 0;
    if (!move_silently(from_st, rest)) {
        dump_batch(wd);
        dump_events("world", wd->events, wd->count);
        fuzz_fail("%s, op %lu: move_many: entries 0x%" PRIx32 " moved after the last event, but "
                  "they cannot all move without events",
                  wd->backend, wd->op, rest);
    }
    memcpy(found + found_count, trial, trial_count * sizeof *trial);
    found_count += trial_count;
    /* last, the entries that stay: a move to where an entity stands changes nothing */
    for (size_t i = 0; i < bt.n; i++)
        if (!(bt.moving & ENTRY(i)))
            found[found_count++] = i;
}

/* The order depends on the batch only: every backend delivers the first world's events. */
NO_COVERAGE static void check_same_stream(const world *wd)
{
    const world *first = &worlds[0];
    int same = wd->count == first->count;

    for (size_t i = 0; same && i < wd->count; i++)
        same = same_events(&wd->events[i], 1, &first->events[i], 1) &&
               wd->events[i].done == first->events[i].done;
    if (!same) {
        dump_batch(NULL);
        dump_events(first->backend, first->events, first->count);
        dump_events(wd->backend, wd->events, wd->count);
        fuzz_fail("%s, op %lu: move_many: the events differ from %s's", wd->backend, wd->op,
                  first->backend);
    }
}

/* The status the library must give: the first bad entry decides, and within it ID, position,
 * repeat. */
NO_COVERAGE static int entry_status(size_t i)
{
    const ent *m = &model[bt.idx[i]];

    if (!m->present)
        return PERCEPT_ENOENT;
    if (!valid_coord(bt.pos[i].x) || !valid_coord(bt.pos[i].y))
        return PERCEPT_EINVAL;
    for (size_t j = 0; j < i; j++)
        if (bt.idx[j] == bt.idx[i])
            return PERCEPT_EINVAL;
    return 0;
}

/*
 * A batch: a count byte (mod MAX_BATCH + 1 entries; BATCH_NULL passes NULL
 * with a count of 3; an empty batch passes NULL or a pointer, both valid),
 * then per entry an entity byte and a mode byte: odd, a short step from
 * where the entity stands (two bytes, as opcode 9); even, two coordinates.
 * Unknown IDs, bad positions and repeats come up by themselves.
 */
static void run_batch(reader *r, unsigned long op, int move_events)
{
    unsigned nb = next(r);
    size_t count = nb == BATCH_NULL ? 3 : nb % (MAX_BATCH + 1), bad_at = 0;
    const percept_position *moves = bt.pos;
    int want = 0; /* the expected status */
    char what[64], tag[32];

    memset(&bt, 0, sizeof bt);
    memcpy(before, model, sizeof model);
    if (nb == BATCH_NULL || (count == 0 && (nb / (MAX_BATCH + 1)) % 2 == 1))
        moves = NULL;
    if (nb == BATCH_NULL)
        want = PERCEPT_EINVAL;
    else
        bt.n = count;
    for (size_t i = 0; i < bt.n; i++) {
        int c = next_idx(r);
        const ent *m = &model[c];
        double x, y;
        if (next(r) & 1) {
            x = (m->present ? m->x : 0) + ((double)next(r) - 128.0) / 4.0;
            y = (m->present ? m->y : 0) + ((double)next(r) - 128.0) / 4.0;
        } else {
            x = next_coord(r);
            y = next_coord(r);
        }
        bt.idx[i] = c;
        bt.pos[i] = (percept_position){id_of(c), x, y};
        if (m->present && !(x == m->x && y == m->y))
            bt.moving |= ENTRY(i);
        if (want == 0 && (want = entry_status(i)) != 0)
            bad_at = i;
    }

    snprintf(what, sizeof what, "move_many of %zu%s", count, moves == NULL ? " (NULL)" : "");
    snprintf(tag, sizeof tag, "moves[%zu]", bad_at);
    for (size_t i = 0; i < world_count; i++) {
        world *wd = &worlds[i];
        int st;
        wd->count = 0;
        wd->op = op;
        wd->batch_done = 0;
        bt.running = 1;
        st = percept_move_many(wd->w, moves, count);
        bt.running = 0;
        if (want != 0) {
            if (st != want)
                dump_batch(NULL); /* check_call() fails on it */
            check_call(wd, st, BIT(want), what);
            if (moves != NULL && strstr(percept_errmsg(wd->w), tag) == NULL) {
                dump_batch(NULL);
                fuzz_fail("%s, op %lu: %s: the message does not name %s: %s", wd->backend, op, what,
                          tag, percept_errmsg(wd->w));
            }
            continue;
        }
        if (st != 0) {
            dump_batch(NULL);
            fuzz_fail("%s, op %lu: %s failed: %d %s", wd->backend, op, what, st,
                      percept_errmsg(wd->w));
        }
        check_batch_world(wd, move_events);
        if (i > 0)
            check_same_stream(wd);
    }

    if (trace_ops) {
        /* a trace has no batches: the moves one by one, in the order the events showed */
        fprintf(stderr, "# batch of %zu\n", count);
        if (want != 0 && moves == NULL)
            fprintf(stderr, "# invalid: moves NULL, count %zu\n", count);
        else if (want != 0)
            fprintf(stderr, "# invalid: %s (%s): move %u %.17g %.17g\n", tag,
                    percept_status_name(want), bt.pos[bad_at].id, bt.pos[bad_at].x,
                    bt.pos[bad_at].y);
        else
            for (size_t k = 0; k < found_count; k++)
                fprintf(stderr, "move %u %.17g %.17g\n", bt.pos[found[k]].id, bt.pos[found[k]].x,
                        bt.pos[found[k]].y);
    }
    if (want != 0)
        return;
    for (size_t i = 0; i < bt.n; i++) {
        if (bt.moving & ENTRY(i)) {
            model[bt.idx[i]].x = bt.pos[i].x;
            model[bt.idx[i]].y = bt.pos[i].y;
        }
    }
    /* batches are rare among the operations: a full check after each costs little */
    if (bt.moving != 0)
        check_all(op);
}

static void run_input(reader *r, int move_events)
{
    unsigned long op = 0;
    char what[256];

    while (r->left > 0) {
        unsigned byte = next(r), code = byte % 10;
        if (byte >= BATCH_OPCODE) {
            run_batch(r, ++op, move_events);
            if ((op & 63) == 0)
                check_all(op);
            continue;
        }
        int c = next_idx(r);
        percept_id id = id_of(c);
        ent *m = &model[c];
        unsigned bad = 0;
        int moved = 0;

        op++;
        memcpy(before, model, sizeof model);
        switch (code) {
        case 0:
        case 1: {
            percept_entity_desc d;
            unsigned hb;
            memset(&d, 0, sizeof d);
            d.x = next_coord(r);
            d.y = next_coord(r);
            for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
                d.range[s] = next_range(r);
            hb = next(r);
            d.hidden = (hb & 7u) | (hb >= 0xF8 ? 8u << (hb & 3u) : 0u);
            if (m->present)
                bad |= BIT(PERCEPT_EEXIST);
            if (!valid_coord(d.x) || !valid_coord(d.y) || !valid_range(d.range[0]) ||
                !valid_range(d.range[1]) || !valid_range(d.range[2]) || (d.hidden & ~7u))
                bad |= BIT(PERCEPT_EINVAL);
            snprintf(what, sizeof what,
                     "add %u %.17g %.17g sight=%.17g hearing=%.17g smell=%.17g%s", id, d.x, d.y,
                     d.range[0], d.range[1], d.range[2], hide_option(d.hidden));
            if (!bad) {
                *m = (ent){1, d.x, d.y, {d.range[0], d.range[1], d.range[2]}, d.hidden};
                /* ranges are stored as given: -0 reads back as -0 == 0 */
                expect_events(before, model, c, 0, move_events);
            }
            EACH_WORLD(percept_add(w, id, &d));
            break;
        }
        case 2:
        case 3:
        case 4:
        case 9: {
            double x, y;
            if (code == 9) { /* a short step from where it stands: boundaries get crossed */
                x = (m->present ? m->x : 0) + ((double)next(r) - 128.0) / 4.0;
                y = (m->present ? m->y : 0) + ((double)next(r) - 128.0) / 4.0;
            } else {
                x = next_coord(r);
                y = next_coord(r);
            }
            if (!m->present)
                bad |= BIT(PERCEPT_ENOENT);
            if (!valid_coord(x) || !valid_coord(y))
                bad |= BIT(PERCEPT_EINVAL);
            snprintf(what, sizeof what, "move %u %.17g %.17g", id, x, y);
            if (!bad) {
                moved = !(m->x == x && m->y == y);
                m->x = x;
                m->y = y;
                expect_events(before, model, c, moved, move_events);
            }
            EACH_WORLD(percept_move(w, id, x, y));
            break;
        }
        case 5:
            if (!m->present)
                bad |= BIT(PERCEPT_ENOENT);
            snprintf(what, sizeof what, "remove %u", id);
            if (!bad) {
                m->present = 0;
                expect_events(before, model, c, 0, move_events);
            }
            EACH_WORLD(percept_remove(w, id));
            break;
        case 6: {
            int s = next_sense(r);
            double range = next_range(r);
            if (!m->present)
                bad |= BIT(PERCEPT_ENOENT);
            if (s < 0 || s >= PERCEPT_SENSE_COUNT || !valid_range(range))
                bad |= BIT(PERCEPT_EINVAL);
            snprintf(what, sizeof what, "range %u %s %.17g", id, sense_word(s), range);
            if (!bad) {
                m->range[s] = range;
                expect_events(before, model, c, 0, move_events);
            }
            EACH_WORLD(percept_set_range(w, id, (percept_sense)s, range));
            break;
        }
        case 7: {
            int s = next_sense(r);
            unsigned hb = next(r);
            int hidden = (hb & 1u) ? ((hb & 2u) ? INT_MIN : (int)hb) : 0;
            if (!m->present)
                bad |= BIT(PERCEPT_ENOENT);
            if (s < 0 || s >= PERCEPT_SENSE_COUNT)
                bad |= BIT(PERCEPT_EINVAL);
            snprintf(what, sizeof what, "%s %u %s", hidden ? "hide" : "show", id, sense_word(s));
            if (!bad) {
                if (hidden)
                    m->hidden |= PERCEPT_SENSE_BIT(s);
                else
                    m->hidden &= ~PERCEPT_SENSE_BIT(s);
                expect_events(before, model, c, 0, move_events);
            }
            EACH_WORLD(percept_set_hidden(w, id, (percept_sense)s, hidden));
            break;
        }
        default: /* 8: a check point */
            snprintf(what, sizeof what, "# check");
            check_all(op);
            break;
        }
        if (trace_ops)
            fprintf(stderr, "%s%s\n", bad ? "# invalid: " : "", what);
        if ((op & 63) == 0)
            check_all(op);
    }
    check_all(op);
}

/* ------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_load_backends();
    trace_ops = getenv("FUZZ_OPS_TRACE") != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    setup su;
    size_t backends = fuzz_load_backends();
    double span;

    su.bounds = bounds_table[next(&r) & 7];
    span = su.bounds.max_x - su.bounds.min_x;
    if (su.bounds.max_y - su.bounds.min_y > span)
        span = su.bounds.max_y - su.bounds.min_y;
    su.cell_size = cell_from(span, cell_div[next(&r) & 7]);
    su.observer_cell_size = cell_from(span, ocell_div[next(&r) & 7]);
    su.move_events = !(next(&r) & 1);

    world_count = 0;
    for (size_t i = 0; i < backends; i++) {
        const char *name = fuzz_backend_name(i);
        if (open_world(&worlds[world_count], name, &su) == 0) {
            world_count++;
        } else if (strcmp(name, "bruteforce") == 0) {
            close_worlds(); /* the core itself refused the settings: nothing to compare */
            return 0;
        }
    }
    if (trace_ops)
        fprintf(stderr, "world %.17g %.17g %.17g %.17g\n", su.bounds.min_x, su.bounds.min_y,
                su.bounds.max_x, su.bounds.max_y);
    memset(model, 0, sizeof model);
    run_input(&r, su.move_events);
    close_worlds();
    return 0;
}
