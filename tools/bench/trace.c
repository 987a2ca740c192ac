/*
 * trace.c - a user's perception trace (docs/trace-format.md, version 1)
 * loaded whole into a benchmark workload, so that every backend replays it
 * as it replays a named workload.
 *
 * The rules are percept-replay's, and so are the messages: a trace that
 * replays there loads here, and a line refused there is refused here with
 * the same words. Both read and check each line with trace_syntax.c; what
 * percept-replay leaves to the library as it runs a line (an entity in the
 * world or not, a position or range beyond the limits) is checked here for
 * the whole trace before anything is timed, so that no replay fails half-way.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The library's own number formatting, compiled into the bench too
 * (Makefile.am), so that a refused value reads as the library writes it. */
#include "../../src/decimal.h"
#include "../trace_syntax.h"
#include "stats.h"

/* ------------------------------------------------------------------------ */
/* Trace IDs to dense IDs                                                    */

/* An open-addressing table, since trace IDs may be anywhere in 0..2^32-1.
 * An ID once seen keeps its slot: removing it only marks it out of the world,
 * which is what a later re-add of the same ID finds. */
enum { SLOT_EMPTY = 0, SLOT_GONE = 1 }; /* other values: the dense ID + 2 */
#define MAX_DENSE (UINT32_MAX - 2)

typedef struct id_table {
    uint32_t *keys, *vals;
    size_t cap, used; /* cap: a power of two */
} id_table;

static size_t id_slot(const id_table *m, uint32_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (m->cap - 1);
    while (m->vals[i] != SLOT_EMPTY && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int id_grow(id_table *m)
{
    id_table n = {NULL, NULL, m->cap ? m->cap * 2 : 1024, m->used};
    n.keys = malloc(n.cap * sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i] == SLOT_EMPTY)
            continue;
        size_t j = id_slot(&n, m->keys[i]);
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    *m = n;
    return 0;
}

/* The slot of `key`, made if new (then its value is SLOT_EMPTY); NULL when out of memory. */
static uint32_t *id_find(id_table *m, uint32_t key)
{
    if ((m->used + 1) * 2 > m->cap && id_grow(m))
        return NULL;
    size_t i = id_slot(m, key);
    if (m->vals[i] == SLOT_EMPTY) {
        m->keys[i] = key;
        m->used++;
    }
    return &m->vals[i];
}

static void id_free(id_table *m)
{
    free(m->keys);
    free(m->vals);
}

/* ------------------------------------------------------------------------ */
/* The loader's state                                                        */

typedef struct loader {
    bench_trace *t;
    trace_reader r; /* its name ("<stdin>" for "-") and line go into messages */
    char *err;
    size_t err_size;
    int oom;
    id_table ids;
    size_t op_cap, profile_cap, alive, peak;
    double *ranges[PERCEPT_SENSE_COUNT]; /* the non-zero ranges given to each sense */
    size_t range_cap[PERCEPT_SENSE_COUNT];
    int have_world, have_box;
    percept_bounds world, box;
} loader;

static int trace_error(loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Notes the trace's fault as "PATH:LINE: message", the form percept-replay uses. */
static int trace_error(loader *l, const char *fmt, ...)
{
    int n = snprintf(l->err, l->err_size, "%s:%lu: ", l->r.name, l->r.line);
    if (n >= 0 && (size_t)n < l->err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->err + n, l->err_size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int out_of_memory(loader *l)
{
    l->oom = 1;
    return -1;
}

/* Makes room for one more element of an array of `elem` bytes holding `len`. */
static int reserve(void **p, size_t *cap, size_t len, size_t elem)
{
    if (len < *cap)
        return 0;
    size_t n = *cap ? *cap * 2 : 4096;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

static int push_op(loader *l, uint32_t kind, uint32_t id, double x, double y)
{
    bench_workload *wl = &l->t->wl;
    if (reserve((void **)&wl->ops, &l->op_cap, wl->op_count, sizeof *wl->ops))
        return out_of_memory(l);
    wl->ops[wl->op_count++] = (bench_op){x, y, id, kind};
    l->t->op_counts[kind]++;
    return 0;
}

static int note_range(loader *l, int sense, double r)
{
    size_t *n = &l->t->range_samples[sense];
    if (r == 0)
        return 0;
    if (reserve((void **)&l->ranges[sense], &l->range_cap[sense], *n, sizeof(double)))
        return out_of_memory(l);
    l->ranges[sense][(*n)++] = r;
    return 0;
}

static void note_position(loader *l, double x, double y)
{
    percept_bounds *b = &l->box;
    if (!l->have_box) {
        *b = (percept_bounds){x, y, x, y};
        l->have_box = 1;
        return;
    }
    b->min_x = x < b->min_x ? x : b->min_x;
    b->min_y = y < b->min_y ? y : b->min_y;
    b->max_x = x > b->max_x ? x : b->max_x;
    b->max_y = y > b->max_y ? y : b->max_y;
}

/* ------------------------------------------------------------------------ */
/* The library's checks                                                      */

/*
 * The faults the library finds in a call's values, caught here rather than
 * half-way through a replay, and worded as percept-replay reports them: the
 * library's text (src/world.c), then its status's name. `fn` is the library
 * call the command makes.
 */
static int bad_position(loader *l, const char *cmd, const char *fn, uint32_t id, double x, double y)
{
    char xs[32], ys[32];
    if (fabs(x) <= PERCEPT_COORD_LIMIT && fabs(y) <= PERCEPT_COORD_LIMIT)
        return 0;
    return trace_error(l,
                       "%s: %s: entity %lu: position (%s, %s) must be finite and within "
                       "[-1e15, 1e15] (%s)",
                       cmd, fn, (unsigned long)id, decimal_exact_text(xs, sizeof xs, x),
                       decimal_exact_text(ys, sizeof ys, y), percept_status_name(PERCEPT_EINVAL));
}

static int bad_range(loader *l, const char *cmd, const char *fn, uint32_t id, int sense, double r)
{
    char rs[32];
    if (r <= PERCEPT_COORD_LIMIT)
        return 0;
    return trace_error(l, "%s: %s: entity %lu: %s range %s must be a number from 0 to 1e15 (%s)",
                       cmd, fn, (unsigned long)id, percept_sense_name((percept_sense)sense),
                       decimal_exact_text(rs, sizeof rs, r), percept_status_name(PERCEPT_EINVAL));
}

/* The dense ID of trace ID `id`, which must be in the world; *slot (may be
 * NULL) receives its slot in the table. */
static int get_alive(loader *l, const char *cmd, uint32_t id, uint32_t *dense, uint32_t **slot)
{
    uint32_t *v;
    if (!(v = id_find(&l->ids, id)))
        return out_of_memory(l);
    if (*v < 2)
        return trace_error(l, "%s: unknown entity %lu", cmd, (unsigned long)id);
    *dense = *v - 2;
    if (slot)
        *slot = v;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Commands, each after trace_parse_line() has checked its line               */

static int cmd_add(loader *l, const trace_line *c)
{
    bench_workload *wl = &l->t->wl;
    bench_profile p;
    uint32_t *v;
    /* percept_add's order: the ID already in the world, the position, each
     * sense's range in turn. */
    if (!(v = id_find(&l->ids, c->id)))
        return out_of_memory(l);
    if (*v >= 2)
        return trace_error(l, "add: entity %lu is already in the world", (unsigned long)c->id);
    if (bad_position(l, "add", "percept_add", c->id, c->desc.x, c->desc.y) < 0)
        return -1;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (bad_range(l, "add", "percept_add", c->id, s, c->desc.range[s]) < 0)
            return -1;
    if (wl->profile_count == MAX_DENSE)
        return trace_error(l, "add: more than %lu adds in one trace", (unsigned long)MAX_DENSE);
    if (reserve((void **)&wl->profiles, &l->profile_cap, wl->profile_count, sizeof p))
        return out_of_memory(l);
    memset(&p, 0, sizeof p);
    memcpy(p.range, c->desc.range, sizeof p.range);
    p.hidden = c->desc.hidden;
    uint32_t dense = (uint32_t)wl->profile_count;
    wl->profiles[wl->profile_count++] = p;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (note_range(l, s, p.range[s]))
            return -1;
    *v = dense + 2;
    if (++l->alive > l->peak)
        l->peak = l->alive;
    note_position(l, c->desc.x, c->desc.y);
    return push_op(l, OP_ADD, dense, c->desc.x, c->desc.y);
}

static int cmd_move(loader *l, const trace_line *c)
{
    uint32_t dense = 0; /* set when get_alive() succeeds; gcc cannot always tell */
    /* As percept_move: whether the entity is in the world before its new position. */
    if (get_alive(l, "move", c->id, &dense, NULL) < 0 ||
        bad_position(l, "move", "percept_move", c->id, c->desc.x, c->desc.y) < 0)
        return -1;
    note_position(l, c->desc.x, c->desc.y);
    return push_op(l, OP_MOVE, dense, c->desc.x, c->desc.y);
}

static int cmd_remove(loader *l, const trace_line *c)
{
    uint32_t dense = 0, *slot = NULL;
    if (get_alive(l, "remove", c->id, &dense, &slot) < 0)
        return -1;
    *slot = SLOT_GONE; /* the ID may be added again: as a new entity */
    l->alive--;
    return push_op(l, OP_REMOVE, dense, 0, 0);
}

static int cmd_range(loader *l, const trace_line *c)
{
    uint32_t dense = 0;
    /* As percept_set_range: whether the entity is in the world, and only then
     * whether the range is within the library's limit. */
    if (get_alive(l, "range", c->id, &dense, NULL) < 0 ||
        bad_range(l, "range", "percept_set_range", c->id, (int)c->sense, c->range) < 0 ||
        note_range(l, (int)c->sense, c->range) < 0)
        return -1;
    return push_op(l, OP_RANGE, dense, c->range, (double)c->sense);
}

static int cmd_hidden(loader *l, const trace_line *c)
{
    uint32_t kind = c->command == TRACE_HIDE ? OP_HIDE : OP_SHOW;
    uint32_t dense = 0;
    if (get_alive(l, kind == OP_HIDE ? "hide" : "show", c->id, &dense, NULL) < 0)
        return -1;
    return push_op(l, kind, dense, 0, (double)c->sense);
}

static int load_command(loader *l, const trace_line *c)
{
    switch (c->command) {
    case TRACE_WORLD:
        l->world = c->bounds;
        l->have_world = 1;
        return 0;
    case TRACE_ADD:
        return cmd_add(l, c);
    case TRACE_MOVE:
        return cmd_move(l, c);
    case TRACE_REMOVE:
        return cmd_remove(l, c);
    case TRACE_RANGE:
        return cmd_range(l, c);
    case TRACE_HIDE:
    case TRACE_SHOW:
        return cmd_hidden(l, c);
    }
    return -1;
}

/* Loads every line: the first fault of the trace ends the load, as it ends
 * percept-replay's run. */
static int read_lines(loader *l, FILE *log)
{
    trace_line c;
    int st, known;
    while ((st = trace_read_line(&l->r)) > 0) {
        if ((known = trace_parse_line(&l->r, &c)) < 0)
            return trace_error(l, "%s", l->r.msg);
        if (known > 0 && load_command(l, &c) < 0)
            return -1;
        /* As percept-replay: a file cut off in "hearing=83" would load as "hearing=8". */
        if (l->r.cut)
            fprintf(log,
                    "percept-bench: %s:%lu: warning: the last line has no newline; if the file "
                    "was cut off, this line was loaded incomplete\n",
                    l->r.name, l->r.line);
    }
    if (st < 0 && l->r.read_errno == ENOMEM)
        return out_of_memory(l);
    if (st < 0) {
        snprintf(l->err, l->err_size, "cannot read trace '%s' after line %lu: %s", l->r.name,
                 l->r.line, l->r.read_errno ? strerror(l->r.read_errno) : "read error");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* What the replay needs besides the operations                              */

/* Each sense's typical range: the median of the non-zero ranges given to it,
 * else another sense's, else the named workloads' base range. */
static void typical_ranges(loader *l)
{
    bench_trace *t = l->t;
    double median[PERCEPT_SENSE_COUNT];
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        median[s] = stats_median(l->ranges[s], t->range_samples[s]);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        t->range_source[s] = TRACE_RANGE_DEFAULT;
        t->wl.typical_range[s] = BENCH_RANGE;
        for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
            int o = (s + k) % PERCEPT_SENSE_COUNT; /* itself first, then the next senses */
            if (t->range_samples[o]) {
                t->range_source[s] = o;
                t->wl.typical_range[s] = median[o];
                break;
            }
        }
    }
}

/* The world line's bounds, else the box around every position, widened on an
 * axis narrower than the largest typical range so that cells of that size fit.
 * The widened interval stays within the library's coordinate limit, shifted
 * inward rather than cut: the box fits in it, since it is narrower than r and
 * r <= 1e15 (a range beyond the limit was refused). */
static void bounds(loader *l)
{
    bench_trace *t = l->t;
    const double lim = PERCEPT_COORD_LIMIT;
    t->bounds_from_world = l->have_world;
    if (l->have_world) {
        t->wl.bounds = l->world;
        return;
    }
    double r = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        r = t->wl.typical_range[s] > r ? t->wl.typical_range[s] : r;
    percept_bounds b = l->box;
    double *lo[2] = {&b.min_x, &b.min_y}, *hi[2] = {&b.max_x, &b.max_y};
    for (int a = 0; a < 2; a++) {
        if (*hi[a] - *lo[a] >= r)
            continue;
        double mid = *lo[a] / 2 + *hi[a] / 2;
        *lo[a] = mid - r / 2;
        *hi[a] = mid + r / 2;
        if (*hi[a] > lim) {
            *hi[a] = lim;
            *lo[a] = lim - r;
        }
        if (*lo[a] < -lim) {
            *lo[a] = -lim;
            *hi[a] = -lim + r;
        }
        t->widened = 1;
    }
    t->wl.bounds = b;
}

/* Tick 0 is the leading adds; the rest is cut into slices, the hashes'
 * checkpoints (a trace has no ticks of its own). A slice is as long as the
 * leading adds, or the most entities alive at once, or BENCH_TRACE_MIN_SLICE
 * operations, whichever is most: a trace that starts with one add and a move
 * would otherwise get slices of one operation, and the clock reads at their
 * ends would count in the per-operation figures. */
static int cut_slices(loader *l)
{
    bench_workload *wl = &l->t->wl;
    size_t first = 0;
    while (first < wl->op_count && wl->ops[first].kind == OP_ADD)
        first++;
    size_t slice = first > l->peak ? first : l->peak;
    slice = slice > BENCH_TRACE_MIN_SLICE ? slice : BENCH_TRACE_MIN_SLICE;
    size_t count = 1 + (wl->op_count - first + slice - 1) / slice;
    wl->tick_end = malloc(count * sizeof *wl->tick_end);
    if (!wl->tick_end)
        return out_of_memory(l);
    wl->tick_end[0] = first;
    for (size_t i = 1; i < count; i++)
        wl->tick_end[i] = wl->op_count - first > i * slice ? first + i * slice : wl->op_count;
    wl->tick_count = count;
    l->t->slice = slice;
    return 0;
}

int bench_trace_load(bench_trace *t, const char *path, FILE *log, char *err, size_t size)
{
    loader l;
    memset(t, 0, sizeof *t);
    memset(&l, 0, sizeof l);
    l.t = t;
    l.err = err;
    l.err_size = size;
    if (size)
        err[0] = '\0';

    int st = 0;
    const char *why = trace_open(&l.r, path);
    if (why) {
        snprintf(err, size, "cannot open trace '%s': %s", path, why);
        st = -1;
    }
    const char *base = strrchr(l.r.name, '/');
    snprintf(t->name, sizeof t->name, "%s", base && base[1] ? base + 1 : l.r.name);
    t->wl.name = t->name;
    if (st == 0)
        st = read_lines(&l, log);
    trace_close(&l.r);
    t->lines = l.r.line;
    if (st == 0 && t->wl.profile_count == 0) {
        /* No entity, nothing to time: say where the trace ended without one. */
        l.r.line = l.r.line ? l.r.line : 1;
        st = trace_error(&l, "the trace adds no entity: nothing to benchmark");
    }
    if (st == 0) {
        typical_ranges(&l);
        bounds(&l);
        t->wl.n = l.peak;
        st = cut_slices(&l);
    }
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        free(l.ranges[s]);
    id_free(&l.ids);
    if (st != 0)
        bench_trace_free(t);
    return l.oom ? -2 : st;
}

void bench_trace_free(bench_trace *t)
{
    bench_workload_free(&t->wl);
    t->wl.name = t->name;
}
