/*
 * fuzz_ops.c - libFuzzer target for the change algorithm and every backend:
 * the input bytes become calls of every kind (add, update, move, move3,
 * turn, remove, set_range, set_hidden, emit, queries) and ticks
 * (percept_tick), run on one world per backend plugin and on the model
 * of the relation (tests/model.h). Each call's status and events must be
 * the model's, and at check points every world must hold what the model
 * does; a failed call must leave a message. Inside the event callback the
 * world must read as already changed and refuse changes with PERCEPT_EBUSY.
 * Each world's allocator counts what it holds, which percept_memory_usage()
 * must report exactly.
 *
 * Input layout (every byte is optional; a short input reads zeros):
 *   byte 0 bounds, 1 backend cell size, 2 observer_cell_size, 3 flags (bit
 *   0: MOVE events off; bits 1-3: the senses, see sense_counts)
 *   then operations: an opcode byte and its arguments (see run_input;
 *   opcode bytes 200-249 are the calls of version 2, see run_v2_op; 250-255
 *   a tick, see run_tick).
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

/* Reads are allowed in the callback and see the world after the change (of
 * a tick, after all of them); changes are refused. */
static void on_event(void *user, const percept_event *ev)
{
    world *wd = user;
    percept_world *w = wd->w;
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    if (ev->kind == PERCEPT_STIMULUS) {
        if (!percept_contains(w, ev->observer) ||
            (ev->has_source && !percept_contains(w, ev->target)))
            fuzz_fail("%s, op %lu: a stimulus's observer or source is not in the world",
                      wd->backend, op);
    } else {
        int p = percept_perceives(w, ev->observer, ev->target, ev->sense);
        int both = percept_contains(w, ev->observer) && percept_contains(w, ev->target);
        if (ev->kind == PERCEPT_LEAVE ? (both ? p != 0 : p >= 0) : p != 1)
            fuzz_fail("%s, op %lu: inside the callback of event %d %u->%u, percept_perceives "
                      "gives %d",
                      wd->backend, op, (int)ev->kind, ev->observer, ev->target, p);
        if (percept_get_entity(w, ev->target, &d) == 0 &&
            !(d.x == ev->x && d.y == ev->y && d.z == ev->z))
            fuzz_fail("%s, op %lu: inside the callback, the target %u reads (%.17g, %.17g, "
                      "%.17g), the event says (%.17g, %.17g, %.17g)",
                      wd->backend, op, ev->target, d.x, d.y, d.z, ev->x, ev->y, ev->z);
    }
    d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    percept_change one = {ev->target, PERCEPT_CHANGE_MOVE, 1, 1, 1, NULL};
    percept_stimulus st = PERCEPT_STIMULUS_INIT;
    int busy;
    switch (wd->count % 10) {
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
    case 5:
        busy = percept_tick(w, &one, 1);
        break;
    case 6:
        busy = percept_update(w, ev->observer, &d);
        break;
    case 7:
        busy = percept_move3(w, ev->target, 1, 1, 1);
        break;
    case 8:
        busy = percept_turn(w, ev->observer, 1, 0, 0);
        break;
    default:
        busy = percept_emit(w, &st);
        break;
    }
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
    int senses; /* 0: the default three, no senses line; else that many of sense_names */
} setup;

/* The senses of a world, by flag bits 1-3: the default ones, or 1 to 8
 * named by the config (every character a name may hold, the longest name). */
static const int sense_counts[8] = {0, 1, 2, 4, 5, 6, 7, 8};
static const char *const sense_names[PERCEPT_MAX_SENSES] = {
    "sight",  "hearing", "smell", "touch",
    "heat_2", "Radio-X", "e",     "a_sense_with_the_longest_name31"};

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
    char ini[4096];
    const char *key = size_key(backend);
    int n =
        snprintf(ini, sizeof ini, "[percept]\nmove_events = %s\n", su->move_events ? "on" : "off");
    int senses = su->senses > 0 ? su->senses : 3;
    if (su->senses > 0) {
        n += snprintf(ini + n, sizeof ini - (size_t)n, "[world]\nsenses =");
        for (int s = 0; s < su->senses; s++)
            n += snprintf(ini + n, sizeof ini - (size_t)n, " %s", sense_names[s]);
        n += snprintf(ini + n, sizeof ini - (size_t)n, "\n");
    }
    for (int s = 0; s < senses; s++) {
        n += snprintf(ini + n, sizeof ini - (size_t)n, "[%s]\n", sense_names[s]);
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
    if (!model_same_events(&m, m.events, st == 0 ? m.n_events : 0, wd->events, wd->count, why,
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

/* One of the world's senses, or (bytes 0xF0 up) a number that is none. */
static int next_sense(reader *r)
{
    const int n = m.senses;
    const int bad[16] = {n, -1, 255, INT_MAX, INT_MIN, n + 1, 8, 9, 31, 32, n, n, n, n, n, n};
    unsigned b = next(r);
    return b < 0xF0 ? (int)(b % (unsigned)n) : bad[b & 15];
}

/* A fov: mostly the common ones, at times any angle or a bad value. */
static double next_fov(reader *r)
{
    static const double common[12] = {0, 360, 90, 180, 270, 45, 120, 60, 1, 359, 0.5, 300};
    static const double special[15] = {NAN,
                                       -1,
                                       360.00000000000006,
                                       INFINITY,
                                       -0.0,
                                       1e-300,
                                       720,
                                       -360,
                                       5e-324,
                                       359.99999999999994,
                                       89.999999999999986,
                                       90.000000000000014,
                                       -INFINITY,
                                       1e15,
                                       0.25};
    unsigned b = next(r);
    if (b < 0xC0)
        return common[b % 12];
    if (b < 0xF0)
        return (double)(b - 0xC0) * 12.5;
    return b < 0xFF ? special[b - 0xF0] : raw_double(r);
}

/* A facing component: small multiples of 1/8, at times an extreme. */
static double next_facing(reader *r)
{
    static const double special[15] = {0,    NAN,   INFINITY, -INFINITY, 1e-200, -1e-200,
                                       1e15, -1e15, 1e300,    5e-324,    -0.0,   0.7071067811865476,
                                       1,    -1,    3};
    unsigned b = next(r);
    if (b < 0xF0)
        return ((double)b - 120.0) / 8.0;
    return b < 0xFF ? special[b - 0xF0] : raw_double(r);
}

/* A tag or ignore mask: a few low bits, one bit anywhere, or any 32 bits. */
static uint32_t next_mask(reader *r)
{
    unsigned b = next(r);
    if (b < 0x80)
        return b & 0xFu;
    if (b < 0xF0)
        return 1u << (b & 31u);
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | next(r);
    return v;
}

/* A hidden mask: the world's senses' bits, at times (0xF8 up) one beyond them. */
static unsigned next_hidden(reader *r)
{
    unsigned hb = next(r), all = (1u << m.senses) - 1;
    return (hb & all) | (hb >= 0xF8 ? 1u << (m.senses + (int)(hb & 3u)) : 0u);
}

static const char *sense_word(int s)
{
    return model_sense_name(&m, s);
}

/*
 * An entity's fields in trace syntax, after its position: for an add (set
 * 0) those that are not zero and its hidden senses, for a set (1) every
 * field, since a set keeps the fields it does not name. What a trace
 * cannot say (a field of a sense the world lacks, a bad bit or size) comes
 * as words of its own.
 */
static void describe_fields(char *buf, size_t size, const percept_entity_desc *d, int set)
{
    int n = 0;
    buf[0] = '\0';
    for (int s = 0; s < PERCEPT_MAX_SENSES && (size_t)n < size; s++) {
        const percept_sense_params *p = &d->sense[s];
        const char *name = s < m.senses ? sense_word(s) : "beyond";
        if (!(set && s < m.senses) && p->range == 0 && p->margin == 0 && p->fov == 0 &&
            p->ignore == 0)
            continue;
        n += snprintf(buf + n, size - (size_t)n,
                      " %s=%.17g %s.margin=%.17g %s.fov=%.17g %s.ignore=%u", name, p->range, name,
                      p->margin, name, p->fov == 0 ? 360 : p->fov, name, (unsigned)p->ignore);
    }
    if ((size_t)n < size)
        n += snprintf(buf + n, size - (size_t)n, " facing=%.17g,%.17g,%.17g tags=%u", d->facing[0],
                      d->facing[1], d->facing[2], (unsigned)d->tags);
    for (int s = 0, first = 1; !set && s < PERCEPT_MAX_SENSES + 4 && (size_t)n < size; s++) {
        if (d->hidden & (1u << s)) {
            n += snprintf(buf + n, size - (size_t)n, "%s%s", first ? " hide=" : ",",
                          s < m.senses ? sense_word(s) : "bad-bit");
            first = 0;
        }
    }
    if (d->size != sizeof *d && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, " bad-size=%zu", d->size);
}

/* A whole description for an add: position, facing, tags, hidden, then
 * each sense's range, margin, fov and ignore mask; a last byte may spoil
 * it (a field of a sense the world lacks, or a bad size). */
static void next_desc(reader *r, percept_entity_desc *d)
{
    *d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    d->x = next_coord(r);
    d->y = next_coord(r);
    d->z = next_coord(r);
    for (int k = 0; k < 3; k++)
        d->facing[k] = next_facing(r);
    d->tags = next_mask(r);
    d->hidden = next_hidden(r);
    for (int s = 0; s < m.senses; s++) {
        d->sense[s].range = next_range(r);
        d->sense[s].margin = next_range(r);
        d->sense[s].fov = next_fov(r);
        d->sense[s].ignore = next_mask(r);
    }
    unsigned spoil = next(r);
    if (spoil >= 0xFC && m.senses < PERCEPT_MAX_SENSES)
        d->sense[m.senses + (m.senses < PERCEPT_MAX_SENSES - 1 ? (int)(spoil & 1u) : 0)].fov = 90;
    else if (spoil >= 0xF8)
        d->size = spoil & 1u ? sizeof *d - 8 : 0;
}

/* A call as trace lines on stderr (FUZZ_OPS_TRACE), a refused one commented out. */
static void trace_op(int status, const char *what)
{
    for (const char *line = what; *line != '\0';) {
        size_t len = strcspn(line, "\n");
        fprintf(stderr, "%s%.*s\n", status ? "# invalid: " : "", (int)len, line);
        line += len + (line[len] == '\n');
    }
}

/* ------------------------------------------------------------------------ */
/* The calls of version 2                                                    */

/* Opcode bytes V2_OPCODE .. TICK_OPCODE - 1: (byte - V2_OPCODE) % 5 picks one. */
#define V2_OPCODE 200u

/*
 * An update's description: entity e's own (zeros for an ID not in the
 * world) with the fields a mask byte names read from the input (bit 0 the
 * position, 1 the facing, 2 the tags, 3 the hidden mask, 4 one sense's
 * range and margin, 5 its fov, 6 its ignore mask, 7 a spoiled size).
 */
static void next_update(reader *r, const model_entity *e, percept_entity_desc *d)
{
    *d = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    if (e != NULL)
        *d = model_desc(&m, e);
    unsigned fields = next(r);
    if (fields & 1u) {
        d->x = next_coord(r);
        d->y = next_coord(r);
        d->z = next_coord(r);
    }
    for (int k = 0; k < 3 && (fields & 2u); k++)
        d->facing[k] = next_facing(r);
    if (fields & 4u)
        d->tags = next_mask(r);
    if (fields & 8u)
        d->hidden = next_hidden(r);
    int s = next_sense(r);
    percept_sense_params *p = s >= 0 && s < PERCEPT_MAX_SENSES ? &d->sense[s] : NULL;
    if ((fields & 16u) && p != NULL) {
        p->range = next_range(r);
        p->margin = next_range(r);
    }
    if ((fields & 32u) && p != NULL)
        p->fov = next_fov(r);
    if ((fields & 64u) && p != NULL)
        p->ignore = next_mask(r);
    if (fields & 128u)
        d->size = next(r) & 1u ? sizeof *d - 1 : sizeof *d / 2;
}

/*
 * An add with every field (next_desc); an update (next_update); a move in
 * three dimensions (or, a first byte from 0x80, a
 * short step from where the entity stands); a turn; a stimulus (a sense,
 * a point, a strength, a source byte: 0 none, else an ID; tags).
 */
static void run_v2_op(reader *r, unsigned kind)
{
    char what[1200], desc[1024];
    int want;
    if (kind == 4) {
        percept_stimulus st = PERCEPT_STIMULUS_INIT;
        char source[16] = "";
        st.sense = next_sense(r);
        st.x = next_coord(r);
        st.y = next_coord(r);
        st.z = next_coord(r);
        st.strength = next_range(r);
        st.has_source = next(r) != 0;
        st.source = st.has_source ? next_id(r) : 0;
        st.tags = next_mask(r);
        if (st.has_source)
            snprintf(source, sizeof source, " source=%u", st.source);
        snprintf(what, sizeof what, "emit %s %.17g %.17g %.17g strength=%.17g%s tags=%u",
                 sense_word(st.sense), st.x, st.y, st.z, st.strength, source, (unsigned)st.tags);
        want = model_emit(&m, &st);
        EACH_WORLD(percept_emit(w, &st));
    } else {
        percept_id id = next_id(r);
        const model_entity *e = model_get(&m, id);
        if (kind == 0) {
            percept_entity_desc d;
            next_desc(r, &d);
            describe_fields(desc, sizeof desc, &d, 0);
            snprintf(what, sizeof what, "add %u %.17g %.17g %.17g%s", id, d.x, d.y, d.z, desc);
            want = model_add(&m, id, &d);
            EACH_WORLD(percept_add(w, id, &d));
        } else if (kind == 1) {
            percept_entity_desc d;
            next_update(r, e, &d);
            /* One change: in a trace, a tick of a move and a set (hiding cannot be said). */
            describe_fields(desc, sizeof desc, &d, 1);
            snprintf(what, sizeof what, "tick\nmove %u %.17g %.17g %.17g\nset %u%s\nend%s", id, d.x,
                     d.y, d.z, id, desc,
                     d.hidden != (e ? e->hidden : 0) ? " # and a hidden mask" : "");
            want = model_update(&m, id, &d);
            EACH_WORLD(percept_update(w, id, &d));
        } else if (kind == 2) {
            double x, y, z;
            if (next(r) >= 0x80) { /* a short step, in height too */
                x = (e ? e->x : 0) + ((double)next(r) - 128.0) / 4.0;
                y = (e ? e->y : 0) + ((double)next(r) - 128.0) / 4.0;
                z = (e ? e->z : 0) + ((double)next(r) - 128.0) / 4.0;
            } else {
                x = next_coord(r);
                y = next_coord(r);
                z = next_coord(r);
            }
            snprintf(what, sizeof what, "move %u %.17g %.17g %.17g", id, x, y, z);
            want = model_move3(&m, id, x, y, z);
            EACH_WORLD(percept_move3(w, id, x, y, z));
        } else {
            double f[3];
            for (int k = 0; k < 3; k++)
                f[k] = next_facing(r);
            snprintf(what, sizeof what, "face %u %.17g %.17g %.17g", id, f[0], f[1], f[2]);
            want = model_turn(&m, id, f[0], f[1], f[2]);
            EACH_WORLD(percept_turn(w, id, f[0], f[1], f[2]));
        }
    }
    if (trace_ops)
        trace_op(want, what);
}

/* ------------------------------------------------------------------------ */
/* Ticks                                                                     */

/* Opcode bytes from TICK_OPCODE up are a tick; below V2_OPCODE, byte % 10. */
#define TICK_OPCODE 250u
#define TICK_NULL 0xFFu /* count byte: changes NULL with a count of 3, which must fail */
#define MAX_TICK 24

/*
 * A tick: a count byte (mod MAX_TICK + 1 entries; TICK_NULL passes NULL
 * with a count of 3; an empty tick passes NULL or a pointer, both valid),
 * then per entry an entity byte and a kind byte, kind % 8: 0-2 a move to
 * three coordinates; 3-4 a short step from where the entity stands (three
 * bytes, as a short move3); 5 a turn (three facing components); 6 an
 * update (next_update); 7 a move whose kind is the next byte (mostly one
 * percept.h does not name). Unknown IDs, bad values and repeats come up by
 * themselves.
 */
static void run_tick(reader *r)
{
    unsigned nb = next(r);
    size_t count = nb == TICK_NULL ? 3 : nb % (MAX_TICK + 1), n = nb == TICK_NULL ? 0 : count;
    percept_change entries[MAX_TICK];
    percept_entity_desc descs[MAX_TICK];
    const percept_change *changes = entries;
    char what[MAX_TICK * 1200 + 64], line[1200], desc[1024];
    size_t bad, len;

    if (nb == TICK_NULL || (count == 0 && (nb / (MAX_TICK + 1)) % 2 == 1))
        changes = NULL;
    len = (size_t)snprintf(what, sizeof what, "tick");
    for (size_t i = 0; i < n; i++) {
        percept_id id = next_id(r);
        const model_entity *e = model_get(&m, id);
        unsigned kind = next(r) % 8;
        percept_change *c = &entries[i];
        *c = (percept_change){id, PERCEPT_CHANGE_MOVE, 0, 0, 0, NULL};
        if (kind <= 2 || kind == 7) {
            c->x = next_coord(r);
            c->y = next_coord(r);
            c->z = next_coord(r);
            if (kind == 7)
                c->kind = (percept_change_kind)(int)(signed char)next(r);
            if (c->kind == PERCEPT_CHANGE_MOVE || c->kind == PERCEPT_CHANGE_TURN)
                snprintf(line, sizeof line, "%s %u %.17g %.17g %.17g",
                         c->kind == PERCEPT_CHANGE_MOVE ? "move" : "face", id, c->x, c->y, c->z);
            else
                snprintf(line, sizeof line, "# an entry of kind %d for %u", (int)c->kind, id);
        } else if (kind <= 4) {
            c->x = (e ? e->x : 0) + ((double)next(r) - 128.0) / 4.0;
            c->y = (e ? e->y : 0) + ((double)next(r) - 128.0) / 4.0;
            c->z = (e ? e->z : 0) + ((double)next(r) - 128.0) / 4.0;
            snprintf(line, sizeof line, "move %u %.17g %.17g %.17g", id, c->x, c->y, c->z);
        } else if (kind == 5) {
            c->kind = PERCEPT_CHANGE_TURN;
            c->x = next_facing(r);
            c->y = next_facing(r);
            c->z = next_facing(r);
            snprintf(line, sizeof line, "face %u %.17g %.17g %.17g", id, c->x, c->y, c->z);
        } else {
            c->kind = PERCEPT_CHANGE_UPDATE;
            next_update(r, e, &descs[i]);
            c->desc = &descs[i];
            describe_fields(desc, sizeof desc, &descs[i], 1);
            snprintf(line, sizeof line, "move %u %.17g %.17g %.17g\nset %u%s%s", id, descs[i].x,
                     descs[i].y, descs[i].z, id, desc,
                     descs[i].hidden != (e ? e->hidden : 0) ? " # and a hidden mask" : "");
        }
        if (len < sizeof what)
            len += (size_t)snprintf(what + len, sizeof what - len, "\n%s", line);
    }
    if (len < sizeof what)
        snprintf(what + len, sizeof what - len, "\nend # %zu entries%s", count,
                 changes == NULL ? ", NULL" : "");
    int want = model_check_tick(&m, changes, count, &bad);
    if (model_tick(&m, changes, count) != want)
        fuzz_fail("op %lu: the model's tick and its check disagree", op);
    for (size_t i = 0; i < world_count; i++) {
        world *wd = &worlds[i];
        wd->count = 0;
        check_call(wd, percept_tick(wd->w, changes, count), want, "a tick");
        if (want != 0 && percept_errindex(wd->w) != bad)
            fuzz_fail("%s, op %lu: a tick: percept_errindex() is %zu, not %zu", wd->backend, op,
                      percept_errindex(wd->w), bad);
    }
    if (trace_ops)
        trace_op(want, what);
    if (want == 0 && n > 0)
        check_all(); /* ticks are rare among the operations: a check after each costs little */
}

/* A check point: every world against the model, and a query around a point
 * of the input (its radius read as a range) in each. */
static void run_check(reader *r)
{
    double x = next_coord(r), y = next_coord(r), z = next_coord(r), radius = next_range(r);
    size_t want_n = 0, room = m.count + 1;
    percept_id *want = malloc(room * sizeof *want), *got = malloc(room * sizeof *got);
    if (want == NULL || got == NULL)
        fuzz_fail("out of memory in the harness");
    int status = model_query(&m, x, y, z, radius, want, &want_n);
    for (size_t i = 0; i < world_count; i++) {
        size_t n = 0;
        int rc = percept_query(worlds[i].w, x, y, z, radius, got, room, &n);
        if (rc != status || (rc == 0 && (n != want_n || memcmp(got, want, n * sizeof *got) != 0)))
            fuzz_fail("%s, op %lu: percept_query(%.17g, %.17g, %.17g, %.17g) gave %d and %zu "
                      "IDs, the model %d and %zu",
                      worlds[i].backend, op, x, y, z, radius, rc, n, status, want_n);
    }
    free(want);
    free(got);
    check_all();
}

/* ------------------------------------------------------------------------ */

static void run_input(reader *r)
{
    char what[1200];
    while (r->left > 0) {
        unsigned byte = next(r), code = byte % 10;
        op++;
        if (byte >= TICK_OPCODE) {
            run_tick(r);
        } else if (byte >= V2_OPCODE) {
            run_v2_op(r, (byte - V2_OPCODE) % 5);
        } else if (code == 8) {
            run_check(r);
            continue;
        } else {
            percept_id id = next_id(r);
            const model_entity *e = model_get(&m, id);
            int want;
            if (code <= 1) { /* positions and ranges only, as version 1's adds */
                percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
                char desc[1024];
                d.x = next_coord(r);
                d.y = next_coord(r);
                for (int s = 0; s < m.senses; s++)
                    d.sense[s].range = next_range(r);
                d.hidden = next_hidden(r);
                describe_fields(desc, sizeof desc, &d, 0);
                snprintf(what, sizeof what, "add %u %.17g %.17g%s", id, d.x, d.y, desc);
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
                /* A trace's move without Z goes to height 0: write the height kept. */
                snprintf(what, sizeof what, "move %u %.17g %.17g %.17g", id, x, y, e ? e->z : 0);
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
                trace_op(want, what);
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
    unsigned flags = next(&r);
    su.move_events = !(flags & 1u);
    su.senses = sense_counts[(flags >> 1) & 7u];
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
    model_init(&m, su.move_events);
    if (su.senses > 0)
        model_set_senses(&m, su.senses, sense_names);
    if (trace_ops) {
        if (su.senses > 0) {
            fprintf(stderr, "senses");
            for (int s = 0; s < su.senses; s++)
                fprintf(stderr, " %s", sense_names[s]);
            fprintf(stderr, "\n");
        }
        fprintf(stderr, "world %.17g %.17g %.17g %.17g\n", su.bounds.min_x, su.bounds.min_y,
                su.bounds.max_x, su.bounds.max_y);
    }
    op = 0;
    run_input(&r);
    close_worlds();
    model_free(&m);
    return 0;
}
