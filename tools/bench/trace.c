/*
 * trace.c - a user's perception trace (docs/trace-format.md, version 1)
 * loaded whole into a benchmark workload, so that every backend replays it
 * as it replays a named workload.
 *
 * The rules are percept-replay's, and so are the messages: a trace that
 * replays there loads here, and a line refused there is refused here with
 * the same words. Nothing is timed while the file is read.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../trace_syntax.h"
#include "stats.h"

#define SENSE_EXPECTED "expected sight, hearing or smell"
#define ID_EXPECTED "must be a decimal integer in 0..4294967295"

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
    const char *name; /* the trace as messages name it: its path, or "<stdin>" */
    char *err;
    size_t err_size;
    int oom;
    unsigned long line, first_add_line;
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
    int n = snprintf(l->err, l->err_size, "%s:%lu: ", l->name, l->line);
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
/* Fields                                                                    */

static int get_id(loader *l, const char *cmd, const char *s, uint32_t *id)
{
    if (trace_parse_id(s, id) < 0)
        return trace_error(l, "%s: bad ID '%s': " ID_EXPECTED, cmd, s);
    return 0;
}

static int get_number(loader *l, const char *cmd, const char *what, const char *s, double *v)
{
    if (trace_parse_number(s, v) < 0)
        return trace_error(l, "%s: bad %s '%s': must be a finite decimal number", cmd, what, s);
    return 0;
}

/* A number as the library's messages print it: the fewest digits from six
 * up that read back as the same double. */
static const char *exact_number(char *buf, size_t size, double v)
{
    for (int digits = 6; digits < 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return buf;
    }
    snprintf(buf, size, "%.17g", v);
    return buf;
}

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
                       cmd, fn, (unsigned long)id, exact_number(xs, sizeof xs, x),
                       exact_number(ys, sizeof ys, y), percept_status_name(PERCEPT_EINVAL));
}

static int bad_range(loader *l, const char *cmd, const char *fn, uint32_t id, int sense, double r)
{
    char rs[32];
    if (r <= PERCEPT_COORD_LIMIT)
        return 0;
    return trace_error(l, "%s: %s: entity %lu: %s range %s must be a number from 0 to 1e15 (%s)",
                       cmd, fn, (unsigned long)id, percept_sense_name((percept_sense)sense),
                       exact_number(rs, sizeof rs, r), percept_status_name(PERCEPT_EINVAL));
}

static int get_position(loader *l, const char *cmd, char **f, double *x, double *y)
{
    if (get_number(l, cmd, "X", f[0], x) < 0 || get_number(l, cmd, "Y", f[1], y) < 0)
        return -1;
    return 0;
}

static int get_sense(loader *l, const char *cmd, const char *s, int *sense)
{
    percept_sense parsed;
    if (trace_parse_sense(s, strlen(s), &parsed) < 0)
        return trace_error(l, "%s: unknown sense '%s': " SENSE_EXPECTED, cmd, s);
    *sense = (int)parsed;
    return 0;
}

/* The dense ID of the trace ID in field s, which must be in the world; *slot
 * (may be NULL) receives its slot in the table. */
static int get_alive(loader *l, const char *cmd, const char *s, uint32_t *dense, uint32_t **slot)
{
    uint32_t id, *v;
    if (get_id(l, cmd, s, &id) < 0)
        return -1;
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
/* Commands                                                                  */

static int cmd_world(loader *l, char **f)
{
    static const char *const name[4] = {"MINX", "MINY", "MAXX", "MAXY"};
    double v[4];
    if (l->first_add_line)
        return trace_error(l, "world: must come before the first add (line %lu)",
                           l->first_add_line);
    for (int i = 0; i < 4; i++)
        if (get_number(l, "world", name[i], f[i + 1], &v[i]) < 0)
            return -1;
    for (int i = 0; i < 4; i++)
        if (fabs(v[i]) > PERCEPT_COORD_LIMIT)
            return trace_error(l,
                               "world: %s %s is beyond the coordinate limit: must be within "
                               "[-1e15, 1e15]",
                               name[i], f[i + 1]);
    if (v[0] > v[2])
        return trace_error(l, "world: MINX %s is greater than MAXX %s", f[1], f[3]);
    if (v[1] > v[3])
        return trace_error(l, "world: MINY %s is greater than MAXY %s", f[2], f[4]);
    l->world = (percept_bounds){v[0], v[1], v[2], v[3]};
    l->have_world = 1;
    return 0;
}

/* One add option (sight=R, hearing=R, smell=R, hide=SENSE[,SENSE...]). */
static int add_option(loader *l, const char *opt, bench_profile *p, unsigned *seen)
{
    const char *eq = strchr(opt, '=');
    size_t keylen = eq ? (size_t)(eq - opt) : 0;
    percept_sense sense = PERCEPT_SIGHT;
    unsigned bit;
    if (eq && keylen == 4 && memcmp(opt, "hide", 4) == 0)
        bit = 1u << PERCEPT_SENSE_COUNT;
    else if (eq && trace_parse_sense(opt, keylen, &sense) == 0)
        bit = 1u << sense;
    else
        return trace_error(l,
                           "add: unknown option '%s': expected sight=R, hearing=R, smell=R "
                           "or hide=SENSE[,SENSE...]",
                           opt);
    if (*seen & bit)
        return trace_error(l, "add: option '%.*s' given more than once", (int)keylen, opt);
    *seen |= bit;
    if (bit != 1u << PERCEPT_SENSE_COUNT) {
        if (trace_parse_range(eq + 1, &p->range[sense]) < 0)
            return trace_error(l, "add: bad range '%s': must be a number >= 0", opt);
        return 0; /* its limit is the library's check, made after the line's */
    }
    for (const char *s = eq + 1;;) {
        size_t n = strcspn(s, ",");
        if (trace_parse_sense(s, n, &sense) < 0)
            return trace_error(l, "add: unknown sense '%.*s' in '%s': " SENSE_EXPECTED, (int)n, s,
                               opt);
        p->hidden |= PERCEPT_SENSE_BIT(sense);
        if (s[n] == '\0')
            return 0;
        s += n + 1;
    }
}

static int cmd_add(loader *l, char **f, size_t n)
{
    bench_workload *wl = &l->t->wl;
    bench_profile p;
    unsigned seen = 0;
    uint32_t id, *v;
    double x, y;
    memset(&p, 0, sizeof p);
    /* percept-replay's order: the line's own checks, then percept_add's (the
     * ID already in the world, the position, each sense's range in turn). */
    if (get_id(l, "add", f[1], &id) < 0 || get_position(l, "add", f + 2, &x, &y) < 0)
        return -1;
    for (size_t i = 4; i < n; i++)
        if (add_option(l, f[i], &p, &seen) < 0)
            return -1;
    if (!(v = id_find(&l->ids, id)))
        return out_of_memory(l);
    if (*v >= 2)
        return trace_error(l, "add: entity %lu is already in the world", (unsigned long)id);
    if (bad_position(l, "add", "percept_add", id, x, y) < 0)
        return -1;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (bad_range(l, "add", "percept_add", id, s, p.range[s]) < 0)
            return -1;
    if (wl->profile_count == MAX_DENSE)
        return trace_error(l, "add: more than %lu adds in one trace", (unsigned long)MAX_DENSE);
    if (!l->first_add_line)
        l->first_add_line = l->line;
    if (reserve((void **)&wl->profiles, &l->profile_cap, wl->profile_count, sizeof p))
        return out_of_memory(l);
    uint32_t dense = (uint32_t)wl->profile_count;
    wl->profiles[wl->profile_count++] = p;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (note_range(l, s, p.range[s]))
            return -1;
    *v = dense + 2;
    if (++l->alive > l->peak)
        l->peak = l->alive;
    note_position(l, x, y);
    return push_op(l, OP_ADD, dense, x, y);
}

static int cmd_move(loader *l, char **f)
{
    uint32_t dense, id;
    double x, y;
    /* As percept_move: whether the entity is in the world before its new position. */
    if (get_id(l, "move", f[1], &id) < 0 || get_position(l, "move", f + 2, &x, &y) < 0 ||
        get_alive(l, "move", f[1], &dense, NULL) < 0 ||
        bad_position(l, "move", "percept_move", id, x, y) < 0)
        return -1;
    note_position(l, x, y);
    return push_op(l, OP_MOVE, dense, x, y);
}

static int cmd_remove(loader *l, char **f)
{
    uint32_t dense, *slot;
    if (get_alive(l, "remove", f[1], &dense, &slot) < 0)
        return -1;
    *slot = SLOT_GONE; /* the ID may be added again: as a new entity */
    l->alive--;
    return push_op(l, OP_REMOVE, dense, 0, 0);
}

static int cmd_range(loader *l, char **f)
{
    uint32_t dense;
    int sense = 0;
    double r;
    uint32_t id;
    /* percept-replay checks the line first (ID, sense, a number >= 0); then
     * percept_set_range asks whether the entity is in the world, and only
     * then whether the range is within the library's limit. */
    if (get_id(l, "range", f[1], &id) < 0 || get_sense(l, "range", f[2], &sense) < 0)
        return -1;
    if (trace_parse_range(f[3], &r) < 0)
        return trace_error(l, "range: bad range '%s': must be a number >= 0", f[3]);
    if (get_alive(l, "range", f[1], &dense, NULL) < 0 ||
        bad_range(l, "range", "percept_set_range", id, sense, r) < 0 || note_range(l, sense, r) < 0)
        return -1;
    return push_op(l, OP_RANGE, dense, r, (double)sense);
}

static int cmd_hidden(loader *l, char **f, uint32_t kind)
{
    const char *cmd = kind == OP_HIDE ? "hide" : "show";
    uint32_t dense, id;
    int sense = 0;
    if (get_id(l, cmd, f[1], &id) < 0 || get_sense(l, cmd, f[2], &sense) < 0 ||
        get_alive(l, cmd, f[1], &dense, NULL) < 0)
        return -1;
    return push_op(l, kind, dense, 0, (double)sense);
}

static int load_line(loader *l, char *line)
{
    char *f[TRACE_MAX_FIELDS], msg[256];
    size_t n = trace_split_fields(line, f, TRACE_MAX_FIELDS);
    trace_command command;
    int known = trace_command_of(f, n, &command, msg, sizeof msg);
    if (known < 0)
        return trace_error(l, "%s", msg);
    if (known == 0)
        return 0;
    switch (command) {
    case TRACE_WORLD:
        return cmd_world(l, f);
    case TRACE_ADD:
        return cmd_add(l, f, n);
    case TRACE_MOVE:
        return cmd_move(l, f);
    case TRACE_REMOVE:
        return cmd_remove(l, f);
    case TRACE_RANGE:
        return cmd_range(l, f);
    case TRACE_HIDE:
        return cmd_hidden(l, f, OP_HIDE);
    case TRACE_SHOW:
        return cmd_hidden(l, f, OP_SHOW);
    }
    return -1;
}

static int read_lines(loader *l, FILE *in, FILE *log)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int st = 0;
    errno = 0;
    while (st == 0 && (len = getline(&buf, &cap, in)) > 0) {
        l->line++;
        int cut = buf[len - 1] != '\n';
        if (!cut)
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r')
            buf[--len] = '\0';
        char msg[64];
        st = trace_check_bytes(buf, (size_t)len, msg, sizeof msg) < 0 ? trace_error(l, "%s", msg)
                                                                      : 0;
        if (st == 0)
            st = load_line(l, buf);
        /* As percept-replay: a file cut off in "hearing=83" would load as "hearing=8". */
        if (st == 0 && cut)
            fprintf(log,
                    "percept-bench: %s:%lu: warning: the last line has no newline; if the file "
                    "was cut off, this line was loaded incomplete\n",
                    l->name, l->line);
        errno = 0;
    }
    if (st == 0 && ferror(in)) {
        snprintf(l->err, l->err_size, "cannot read trace '%s' after line %lu: %s", l->name, l->line,
                 errno ? strerror(errno) : "read error");
        st = -1;
    }
    if (st == 0 && errno == ENOMEM)
        st = out_of_memory(l);
    free(buf);
    return st;
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

static int open_trace(loader *l, const char *path, FILE **in)
{
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0;
    const char *why = NULL;
    *in = is_stdin ? stdin : fopen(path, "r");
    if (!*in)
        why = strerror(errno);
    else if (fstat(fileno(*in), &sb) != 0)
        why = strerror(errno);
    else if (S_ISDIR(sb.st_mode))
        why = strerror(EISDIR); /* it opens, and would fail at the first read */
    else if (!is_stdin && !S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode))
        why = "not a regular file or a pipe";
    if (!why)
        return 0;
    snprintf(l->err, l->err_size, "cannot open trace '%s': %s", path, why);
    if (*in && *in != stdin)
        fclose(*in);
    *in = NULL;
    return -1;
}

int bench_trace_load(bench_trace *t, const char *path, FILE *log, char *err, size_t size)
{
    loader l;
    FILE *in;
    memset(t, 0, sizeof *t);
    memset(&l, 0, sizeof l);
    l.t = t;
    l.err = err;
    l.err_size = size;
    l.name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    const char *base = strrchr(l.name, '/');
    snprintf(t->name, sizeof t->name, "%s", base && base[1] ? base + 1 : l.name);
    t->wl.name = t->name;
    if (size)
        err[0] = '\0';

    int st = open_trace(&l, path, &in);
    if (st == 0) {
        st = read_lines(&l, in, log);
        if (in != stdin)
            fclose(in);
    }
    t->lines = l.line;
    if (st == 0 && t->wl.profile_count == 0) {
        /* No entity, nothing to time: say where the trace ended without one. */
        l.line = l.line ? l.line : 1;
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
