/*
 * fuzz_ops.c - libFuzzer target for the change algorithm and every backend:
 * the input bytes become add/move/remove/set_range/set_hidden calls and
 * batches of moves (percept_move_many), run on one world per backend plugin
 * and on the model of the relation (tests/model.h). Each call's status and
 * events must be the model's, and at check points every world must hold
 * what the model does; a failed call must leave a message. Inside the event
 * callback the world must read as already changed and refuse changes with
 * PERCEPT_EBUSY. Each world's allocator counts what it holds, which
 * percept_memory_usage() must report exactly.
 *
 * Input layout (every byte is optional; a short input reads zeros):
 *   byte 0 bounds, 1 backend cell size, 2 observer_cell_size, 3 flags
 *   then operations: an opcode byte and its arguments (see run_input;
 *   opcode bytes 250-255 are a batch, see run_batch).
 * FUZZ_OPS_TRACE=1 prints the operations as trace lines on stderr, so that
 * a finding can be replayed with percept-replay.
 */
#include <percept.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* IDs 0..63 plus 16 far apart ones: collisions are likely, IDs still span 32 bits. */
#define SMALL_IDS 64
static const percept_id big_ids[16] = {
    0xFFFFFFFFu, 0xFFFFFFFEu, 0x80000000u, 0x7FFFFFFFu, 1000000u, 64u,       65u,     4096u,
    0x10000u,    0xDEADBEEFu, 100u,        255u,        256u,     12345678u, 0xFFFFu, 3000000000u};

/* ------------------------------------------------------------------------ */
/* Worlds, one per backend                                                   */

typedef struct world {
    percept_world *w;
    const char *backend;
    percept_event *events;
    size_t count, cap;
    size_t live_bytes; /* what the world holds from its allocator, counted there */
} world;

static world worlds[FUZZ_MAX_BACKENDS];
static size_t world_count;
static model m;
static percept_bounds bounds; /* the worlds' */
static unsigned long op;      /* the operation being run, for messages */
static int trace_ops;

/* Reads are allowed in the callback and see the world after the change (in
 * a batch, after this event's move); changes are refused. */
static void on_event(void *user, const percept_event *ev)
{
    world *wd = user;
    percept_world *w = wd->w;
    percept_entity_desc d;
    int p = percept_perceives(w, ev->observer, ev->target, ev->sense);
    int both = percept_contains(w, ev->observer) && percept_contains(w, ev->target);
    if (ev->kind == PERCEPT_LEAVE ? (both ? p != 0 : p >= 0) : p != 1)
        fuzz_fail("%s, op %lu: inside the callback of event %d %u->%u, percept_perceives gives %d",
                  wd->backend, op, (int)ev->kind, ev->observer, ev->target, p);
    if (percept_get_entity(w, ev->target, &d) == 0 && !(d.x == ev->x && d.y == ev->y))
        fuzz_fail("%s, op %lu: inside the callback, the target %u reads (%.17g, %.17g), the "
                  "event says (%.17g, %.17g)",
                  wd->backend, op, ev->target, d.x, d.y, ev->x, ev->y);
    memset(&d, 0, sizeof d);
    percept_position one = {ev->target, 1, 1};
    int busy = wd->count % 6 == 0   ? percept_add(w, ev->target, &d)
               : wd->count % 6 == 1 ? percept_move(w, ev->target, 1, 1)
               : wd->count % 6 == 2 ? percept_remove(w, ev->observer)
               : wd->count % 6 == 3 ? percept_set_range(w, ev->observer, ev->sense, 0)
               : wd->count % 6 == 4 ? percept_set_hidden(w, ev->target, ev->sense, 1)
                                    : percept_move_many(w, &one, 1);
    if (busy != PERCEPT_EBUSY)
        fuzz_fail("%s, op %lu: a change from inside the callback returned %d", wd->backend, op,
                  busy);
    if (wd->count == wd->cap) {
        wd->cap = wd->cap ? 2 * wd->cap : 256;
        wd->events = realloc(wd->events, wd->cap * sizeof *wd->events);
        if (wd->events == NULL)
            fuzz_fail("out of memory in the harness");
    }
    wd->events[wd->count++] = *ev;
}

/* Each world's allocator counts the bytes the world holds (a header keeps each block's size). */
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
/* Cell sizes as fractions of the longer side of the bounds (0: the default):
 * from one cell larger than the world to a few hundred across. */
static const double cell_div[8] = {0, 1, 7, 64, 500, 0.5, 3.25, 0.01};
static const double ocell_div[8] = {0, 1, 3, 16, 64, 8, 0.5, 0.01};

static double cell_from(double span, double div)
{
    return div > 0 && span > 0 ? span / div : 0;
}

static const char *size_key(const char *backend)
{
    if (strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0)
        return "cell_size";
    return strcmp(backend, "tower") == 0 ? "tower_size" : NULL;
}

static int open_world(world *wd, const char *backend, const setup *su)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_error err;
    char ini[1024];
    const char *key = size_key(backend);
    int n =
        snprintf(ini, sizeof ini, "[percept]\nmove_events = %s\n", su->move_events ? "on" : "off");
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        n += snprintf(ini + n, sizeof ini - (size_t)n, "[%s]\n",
                      percept_sense_name((percept_sense)s));
        if (su->observer_cell_size > 0)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "observer_cell_size = %.17g\n",
                          su->observer_cell_size);
        if (key != NULL && su->cell_size > 0)
            n += snprintf(ini + n, sizeof ini - (size_t)n, "%s = %.17g\n", key, su->cell_size);
    }
    memset(wd, 0, sizeof *wd);
    wd->backend = backend;
    percept_allocator allocator = {counting_alloc, wd}; /* the world keeps a copy */
    opt.backend = backend;
    opt.bounds = &su->bounds;
    opt.allocator = &allocator;
    int st = percept_world_open_string(&wd->w, ini, "fuzz_ops", &opt, &err);
    if (st == 0) {
        if (percept_set_event_callback(wd->w, on_event, wd) != 0)
            fuzz_fail("%s: percept_set_event_callback failed", backend);
        return 0;
    }
    /* A cell size too small for the bounds is refused by the backend's
     * create(): as a bad parameter, or for a default that does not fit as a
     * failed plugin. Either is an answer, not a bug. */
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
/* Checks                                                                    */

static void check_all(void)
{
    char why[512];
    for (size_t i = 0; i < world_count; i++) {
        const world *wd = &worlds[i];
        if (!model_check_world(&m, wd->w, why, sizeof why))
            fuzz_fail("%s, after op %lu: %s", wd->backend, op, why);
        /* Every backend under test reports its memory: the report is exact. */
        percept_memory mem;
        if (percept_memory_usage(wd->w, &mem) != 0 || mem.total != wd->live_bytes ||
            mem.total != mem.entities + mem.pairs + mem.observer_grids + mem.backends +
                             mem.scratch + mem.world)
            fuzz_fail("%s, after op %lu: percept_memory_usage reports %zu bytes, the allocator "
                      "holds %zu",
                      wd->backend, op, mem.total, wd->live_bytes);
    }
}

/* A call made on every world (by `call`) and on the model (status `want`, events in m). */
#define EACH_WORLD(call)                                                                           \
    for (size_t i_ = 0; i_ < world_count; i_++) {                                                  \
        world *wd = &worlds[i_];                                                                   \
        percept_world *w = wd->w;                                                                  \
        wd->count = 0;                                                                             \
        check_call(wd, (call), want, what);                                                        \
    }

static void check_call(world *wd, int st, int want, const char *what)
{
    char why[512];
    if (st != want)
        fuzz_fail("%s, op %lu: %s returned %d, the model says %d: %s", wd->backend, op, what, st,
                  want, percept_errmsg(wd->w));
    if (st != 0 && percept_errmsg(wd->w)[0] == '\0')
        fuzz_fail("%s, op %lu: %s failed with an empty message", wd->backend, op, what);
    if (!model_same_events(m.events, st == 0 ? m.n_events : 0, wd->events, wd->count, why,
                           sizeof why))
        fuzz_fail("%s, op %lu: %s: %s", wd->backend, op, what, why);
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

static percept_id next_id(reader *r)
{
    unsigned b = next(r);
    return b < 0xF0 ? (percept_id)(b % SMALL_IDS) : big_ids[b & 15];
}

/* Mostly small integers (exact boundaries are frequent), sometimes extremes. */
static double next_coord(reader *r)
{
    static const double special[15] = {PERCEPT_COORD_LIMIT,
                                       -PERCEPT_COORD_LIMIT,
                                       1000000000000000.125, /* invalid */
                                       NAN,
                                       INFINITY,
                                       -INFINITY,
                                       -0.0,
                                       1e-310,
                                       1e6,
                                       -3e9 + 0.5,
                                       0.1,
                                       1023.999,
                                       1024,
                                       5e14,
                                       -1e15 + 1};
    unsigned b = next(r);
    if (b < 0xE0)
        return (double)b - 112.0;
    if (b < 0xF0)
        return ((double)next(r) - 128.0) / 8.0 + (double)(b - 0xE8) * 1000.0;
    return b < 0xFF ? special[b - 0xF0] : raw_double(r);
}

static double next_range(reader *r)
{
    static const double special[15] = {0,
                                       PERCEPT_COORD_LIMIT,
                                       1000000000000000.125,
                                       -1,
                                       -0.0,
                                       NAN,
                                       INFINITY,
                                       1e-300,
                                       /* squares to 0 */ 1e300,
                                       2000,
                                       1e7,
                                       5,
                                       0.5,
                                       3e9,
                                       -INFINITY};
    unsigned b = next(r);
    if (b < 0xC0)
        return (double)b / 4.0;
    if (b < 0xE0)
        return (double)(b - 0xC0) * 16.0;
    if (b < 0xF0)
        return (double)next(r) / 16.0 + 0.0625 * (b - 0xE0);
    return b < 0xFF ? special[b - 0xF0] : raw_double(r);
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
    int n = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (hidden & PERCEPT_SENSE_BIT(s))
            n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s",
                          n ? "," : " hide=", sense_word(s));
    if (hidden & ~7u)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%sbad-bits-0x%x",
                      n ? "," : " hide=", hidden & ~7u);
    buf[n] = '\0';
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Batches of moves                                                          */

/* Opcode bytes from BATCH_OPCODE up are a batch; the others are byte % 10. */
#define BATCH_OPCODE 250u
#define BATCH_NULL 0xFFu /* count byte: moves NULL with a count of 3, which must fail */
#define MAX_BATCH 24

/*
 * A batch: a count byte (mod MAX_BATCH + 1 entries; BATCH_NULL passes NULL
 * with a count of 3; an empty batch passes NULL or a pointer, both valid),
 * then per entry an entity byte and a mode byte: odd, a short step from
 * where the entity stands (two bytes, as opcode 9); even, two coordinates.
 * Unknown IDs, bad positions and repeats come up by themselves.
 */
static void run_batch(reader *r)
{
    unsigned nb = next(r);
    size_t count = nb == BATCH_NULL ? 3 : nb % (MAX_BATCH + 1), n = nb == BATCH_NULL ? 0 : count;
    percept_position pos[MAX_BATCH];
    size_t order[MAX_BATCH], bad, n_order = 0;
    const percept_position *moves = pos;
    char what[64];

    if (nb == BATCH_NULL || (count == 0 && (nb / (MAX_BATCH + 1)) % 2 == 1))
        moves = NULL;
    for (size_t i = 0; i < n; i++) {
        percept_id id = next_id(r);
        const model_entity *e = model_get(&m, id);
        if (next(r) & 1) {
            pos[i].x = (e ? e->x : 0) + ((double)next(r) - 128.0) / 4.0;
            pos[i].y = (e ? e->y : 0) + ((double)next(r) - 128.0) / 4.0;
        } else {
            pos[i].x = next_coord(r);
            pos[i].y = next_coord(r);
        }
        pos[i].id = id;
    }
    int want = model_check_batch(&m, moves, count, &bad);
    if (want == 0) {
        n_order = model_batch_order(&m, &bounds, pos, n, order);
        if (n_order == SIZE_MAX)
            fuzz_fail("op %lu: the order of a batch of %zu could not be learned", op, n);
        model_move_batch(&m, pos, order, n_order);
    }
    snprintf(what, sizeof what, "move_many of %zu%s", count, moves == NULL ? " (NULL)" : "");
    for (size_t i = 0; i < world_count; i++) {
        world *wd = &worlds[i];
        wd->count = 0;
        check_call(wd, percept_move_many(wd->w, moves, count), want, what);
        if (want != 0 && percept_errindex(wd->w) != bad)
            fuzz_fail("%s, op %lu: %s: percept_errindex() is %zu, not %zu", wd->backend, op, what,
                      percept_errindex(wd->w), bad);
    }
    if (trace_ops) {
        /* A trace has no batches: the moves one by one, in the library's order. */
        fprintf(stderr, "# batch of %zu%s\n", count, want ? ", refused" : "");
        for (size_t k = 0; k < n_order; k++)
            fprintf(stderr, "move %u %.17g %.17g\n", pos[order[k]].id, pos[order[k]].x,
                    pos[order[k]].y);
    }
    if (n_order > 0)
        check_all(); /* batches are rare among the operations: a check after each costs little */
}

/* ------------------------------------------------------------------------ */

static void run_input(reader *r)
{
    char what[256];
    while (r->left > 0) {
        unsigned byte = next(r), code = byte % 10;
        op++;
        if (byte >= BATCH_OPCODE) {
            run_batch(r);
        } else if (code == 8) { /* a check point */
            check_all();
            continue;
        } else {
            percept_id id = next_id(r);
            const model_entity *e = model_get(&m, id);
            int want;
            if (code <= 1) {
                percept_entity_desc d;
                memset(&d, 0, sizeof d);
                d.x = next_coord(r);
                d.y = next_coord(r);
                for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
                    d.range[s] = next_range(r);
                unsigned hb = next(r);
                d.hidden = (hb & 7u) | (hb >= 0xF8 ? 8u << (hb & 3u) : 0u);
                snprintf(what, sizeof what,
                         "add %u %.17g %.17g sight=%.17g hearing=%.17g smell=%.17g%s", id, d.x, d.y,
                         d.range[0], d.range[1], d.range[2], hide_option(d.hidden));
                want = model_add(&m, id, &d);
                EACH_WORLD(percept_add(w, id, &d));
            } else if (code <= 4 || code == 9) {
                double x, y;
                if (code == 9) { /* a short step from where it stands: boundaries get crossed */
                    x = (e ? e->x : 0) + ((double)next(r) - 128.0) / 4.0;
                    y = (e ? e->y : 0) + ((double)next(r) - 128.0) / 4.0;
                } else {
                    x = next_coord(r);
                    y = next_coord(r);
                }
                snprintf(what, sizeof what, "move %u %.17g %.17g", id, x, y);
                want = model_move(&m, id, x, y);
                EACH_WORLD(percept_move(w, id, x, y));
            } else if (code == 5) {
                snprintf(what, sizeof what, "remove %u", id);
                want = model_remove(&m, id);
                EACH_WORLD(percept_remove(w, id));
            } else if (code == 6) {
                int s = next_sense(r);
                double range = next_range(r);
                snprintf(what, sizeof what, "range %u %s %.17g", id, sense_word(s), range);
                want = model_set_range(&m, id, (percept_sense)s, range);
                EACH_WORLD(percept_set_range(w, id, (percept_sense)s, range));
            } else {
                int s = next_sense(r);
                unsigned hb = next(r);
                int hidden = (hb & 1u) ? ((hb & 2u) ? INT_MIN : (int)hb) : 0;
                snprintf(what, sizeof what, "%s %u %s", hidden ? "hide" : "show", id,
                         sense_word(s));
                want = model_set_hidden(&m, id, (percept_sense)s, hidden);
                EACH_WORLD(percept_set_hidden(w, id, (percept_sense)s, hidden));
            }
            if (trace_ops)
                fprintf(stderr, "%s%s\n", want ? "# invalid: " : "", what);
        }
        if ((op & 63) == 0)
            check_all();
    }
    check_all();
}

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
    su.bounds = bounds_table[next(&r) & 7];
    double span = su.bounds.max_x - su.bounds.min_x;
    if (su.bounds.max_y - su.bounds.min_y > span)
        span = su.bounds.max_y - su.bounds.min_y;
    su.cell_size = cell_from(span, cell_div[next(&r) & 7]);
    su.observer_cell_size = cell_from(span, ocell_div[next(&r) & 7]);
    su.move_events = !(next(&r) & 1);
    bounds = su.bounds;

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
    model_init(&m, su.move_events);
    op = 0;
    run_input(&r);
    close_worlds();
    model_free(&m);
    return 0;
}
