/*
 * replay.c - one replay of a workload against one backend, or homemade, in
 * a forked child process: every backend starts from the same heap, and a
 * backend that crashes takes its replay down, not the whole run.
 */
#include "replay.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "homemade.h"

/* Every cell array stays below this many cells, whatever the world's shape. */
#define MAX_CELLS (1u << 20)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A cell size near `want` that keeps the bounds within MAX_CELLS cells. */
static double fit_cells(const percept_bounds *b, double want)
{
    double w = b->max_x - b->min_x, h = b->max_y - b->min_y, c = want;
    while ((w / c + 2) * (h / c + 2) > MAX_CELLS)
        c *= 2;
    return c;
}

void replay_config(char *buf, size_t size, const char *backend, const bench_workload *wl)
{
    const percept_bounds *b = &wl->bounds;
    const char *param = !strcmp(backend, "tower")                                  ? "tower_size"
                        : !strcmp(backend, "grid") || !strcmp(backend, "hashgrid") ? "cell_size"
                                                                                   : NULL;
    /* Every sense gets the same sizes: identical sections share one backend
     * instance and one observer grid. */
    static const char *const defaults[BENCH_SENSES] = {"sight", "hearing", "smell"};
    const char *const *senses = wl->senses[0] ? wl->senses : defaults;
    double cell = fit_cells(b, wl->cell > 0 ? wl->cell : BENCH_RANGE);
    size_t len = (size_t)snprintf(buf, size,
                                  "[percept]\nbackend = %s\nmove_events = off\n[world]\nmin_x = "
                                  "%.17g\nmin_y = %.17g\nmax_x = %.17g\nmax_y = %.17g\n",
                                  backend, b->min_x, b->min_y, b->max_x, b->max_y);
    if (wl->senses[0] && len < size)
        len += (size_t)snprintf(buf + len, size - len, "senses = %s %s %s\n", senses[0], senses[1],
                                senses[2]);
    for (int s = 0; s < BENCH_SENSES && len < size; s++) {
        len += (size_t)snprintf(buf + len, size - len, "[%s]\nobserver_cell_size = %.17g\n",
                                senses[s], cell);
        if (param && len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s = %.17g\n", param, cell);
    }
}

/* The library finds the plugin; the same name in the text gives it the
 * sections' parameters. */
static int open_world(percept_world **w, const char *backend, const bench_workload *wl,
                      size_t threads, percept_error *err)
{
    char ini[1024];
    percept_options opt = PERCEPT_OPTIONS_INIT;
    opt.backend = backend;
    opt.threads = threads;
    replay_config(ini, sizeof ini, backend, wl);
    return percept_world_open_string(w, ini, "percept-bench's config", &opt, err);
}

int replay_check_backend(const char *backend, percept_error *err)
{
    bench_workload small = {.bounds = {0, 0, 100, 100}};
    percept_world *w;
    int rc = open_world(&w, backend, &small, 0, err);
    if (rc == PERCEPT_OK)
        percept_world_close(w);
    return rc;
}

int replay_homemade_fits(const bench_workload *wl)
{
    for (size_t i = 0; i < wl->profile_count; i++) {
        const percept_entity_desc *d = &wl->descs[wl->profiles[i].desc];
        const percept_sense_params *p = &d->sense[0];
        if (p->margin != 0 || (p->fov != 0 && p->fov < 360) || p->ignore || (d->hidden & 1u))
            return 0;
    }
    for (size_t i = 0; i < wl->op_count; i++) {
        uint32_t kind = wl->ops[i].kind;
        if (i < wl->tick_end[0] ? kind != OP_ADD : kind != OP_MOVE && kind != OP_TELEPORT)
            return 0;
    }
    return wl->tick_count > 0;
}

typedef struct sink {
    uint64_t hash;             /* sum of one mixed word per event: independent of order */
    uint64_t count;            /* events delivered */
    uint64_t op_key;           /* the running call's index, premultiplied */
    uint64_t *enters, *leaves; /* the running tick's counters of the first sense */
} sink;

/*
 * The callback stands for a game server's event queue, so it must cost next
 * to nothing, the same for every backend. Each event is folded into the hash
 * with the index of the call that caused it, so an event reported by the
 * wrong call changes the hash too.
 */
static void on_event(void *user, const percept_event *ev)
{
    sink *s = user;
    uint64_t x = (((uint64_t)ev->observer << 32) | ev->target) ^ s->op_key ^
                 ((uint64_t)((unsigned)ev->kind * 4u + (unsigned)ev->sense) << 58);
    x *= 0xD6E8FEB86659FD93ull;
    s->hash += x ^ (x >> 32);
    s->count++;
    if (ev->sense == 0) {
        *s->enters += ev->kind == PERCEPT_ENTER;
        *s->leaves += ev->kind == PERCEPT_LEAVE;
    }
}

static int apply(percept_world *w, const bench_workload *wl, const bench_op *op)
{
    const bench_profile *p = &wl->profiles[op->id];
    switch (op->kind) {
    case OP_ADD:
    case OP_LOGIN: {
        percept_entity_desc d = wl->descs[p->desc];
        d.x = op->x;
        d.y = op->y;
        d.z = op->z;
        for (int s = 0; s < BENCH_SENSES; s++)
            d.sense[s].range = p->range[s];
        return percept_add(w, op->id, &d);
    }
    case OP_MOVE:
    case OP_TELEPORT:
        return wl->moves_3d ? percept_move3(w, op->id, op->x, op->y, op->z)
                            : percept_move(w, op->id, op->x, op->y);
    case OP_REMOVE:
        return percept_remove(w, op->id);
    case OP_TURN:
        return percept_turn(w, op->id, op->x, op->y, op->z);
    case OP_EMIT: {
        percept_stimulus st = PERCEPT_STIMULUS_INIT;
        st.sense = wl->emit_sense;
        st.x = op->x;
        st.y = op->y;
        st.z = op->z;
        st.has_source = 1;
        st.source = op->id;
        st.tags = wl->descs[p->desc].tags;
        return percept_emit(w, &st);
    }
    default:
        return PERCEPT_EINVAL;
    }
}

static void fail(replay_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(replay_result *r, const char *fmt, ...)
{
    va_list ap;
    r->failed = 1;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

/* The operations percept_tick() takes: a ticked replay makes them in its ticks. */
static int in_tick(uint32_t kind)
{
    return kind == OP_MOVE || kind == OP_TELEPORT || kind == OP_TURN;
}

/* A ticked replay's percept_tick() calls, laid out before any timing. */
typedef struct tick_plan {
    percept_change *changes; /* every tick's entries, tick after tick */
    size_t *begin, *count;   /* by tick: its entries in changes[] */
    size_t *first;           /* by tick: its first operation in_tick(), made by its call */
} tick_plan;

static void free_tick_plan(tick_plan *tp)
{
    free(tp->changes);
    free(tp->begin);
    free(tp->count);
    free(tp->first);
}

/* Each tick's operations in_tick() as percept_change entries. An entity
 * the workload names twice in a tick (npc_cones turns a guard at random)
 * gets one entry: its last change, where the operations would leave it. */
static int lay_out_ticks(const bench_workload *wl, size_t limit, tick_plan *tp)
{
    size_t ticks = wl->tick_count, entries = 0;
    size_t *slot = calloc(wl->profile_count + 1, sizeof *slot); /* by ID: its entry + 1 */
    tp->changes = malloc((limit + 1) * sizeof *tp->changes);
    tp->begin = malloc(ticks * sizeof *tp->begin);
    tp->count = malloc(ticks * sizeof *tp->count);
    tp->first = malloc(ticks * sizeof *tp->first);
    for (size_t t = 0; slot && tp->changes && tp->begin && tp->count && tp->first && t < ticks;
         t++) {
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        tp->begin[t] = entries;
        tp->first[t] = SIZE_MAX;
        for (size_t i = t ? wl->tick_end[t - 1] : 0; i < end; i++) {
            const bench_op *op = &wl->ops[i];
            if (!in_tick(op->kind))
                continue;
            if (tp->first[t] == SIZE_MAX)
                tp->first[t] = i;
            size_t e = slot[op->id] > tp->begin[t] ? slot[op->id] - 1 : entries++;
            slot[op->id] = e + 1;
            tp->changes[e] =
                (percept_change){op->id, PERCEPT_CHANGE_MOVE, op->x, op->y, op->z, NULL};
            if (op->kind == OP_TURN)
                tp->changes[e].kind = PERCEPT_CHANGE_TURN;
        }
        tp->count[t] = entries - tp->begin[t];
    }
    int ok = slot && tp->changes && tp->begin && tp->count && tp->first;
    free(slot);
    return ok ? 0 : -1;
}

/* What the replay will run, counted before any timing: the operations of
 * each kind (a tick's entries as moves), the ticks, the entities at the end. */
static void count_ops(const replay_request *req, const tick_plan *tp, replay_result *r)
{
    const bench_workload *wl = req->wl;
    size_t limit = req->op_limit < wl->op_count ? req->op_limit : wl->op_count;
    for (size_t i = 0; i < limit; i++) {
        uint32_t kind = wl->ops[i].kind;
        if (!req->ticked || !in_tick(kind))
            r->ops[kind]++;
        r->alive += kind == OP_ADD || kind == OP_LOGIN;
        r->alive -= kind == OP_REMOVE;
    }
    for (size_t t = 0; req->ticked && t < wl->tick_count; t++) {
        r->ops[OP_MOVE] += tp->count[t];
        r->ticks += tp->count[t] > 0;
    }
}

static void replay_world(const replay_request *req, replay_result *r, percept_world *w,
                         const tick_plan *tp)
{
    const bench_workload *wl = req->wl;
    uint64_t spare;
    sink s = {0, 0, 0, &spare, &spare};
    percept_set_event_callback(w, on_event, &s);
    size_t limit = req->op_limit < wl->op_count ? req->op_limit : wl->op_count;
    for (size_t t = 0; t < wl->tick_count; t++) {
        size_t begin = t ? wl->tick_end[t - 1] : 0;
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        if (begin >= end)
            break;
        s.enters = t < BENCH_MAX_TICKS ? &r->enters[t] : &spare;
        s.leaves = t < BENCH_MAX_TICKS ? &r->leaves[t] : &spare;
        /* Consecutive operations of one kind are timed as one run: few clock
         * reads, so the clock's own cost stays out of the figures. A tick's
         * call is timed as a move. */
        uint32_t kind = req->ticked && in_tick(wl->ops[begin].kind) ? OP_MOVE : wl->ops[begin].kind;
        uint64_t run_start = now_ns();
        for (size_t i = begin; i < end; i++) {
            const bench_op *op = &wl->ops[i];
            int ticked = req->ticked && in_tick(op->kind);
            if (ticked && i != tp->first[t])
                continue; /* an entry of the tick's call */
            uint32_t op_kind = ticked ? OP_MOVE : op->kind;
            if (op_kind != kind) {
                uint64_t t1 = now_ns();
                r->ns[kind] += (double)(t1 - run_start);
                kind = op_kind;
                run_start = t1;
            }
            s.op_key = (uint64_t)i * 0x9E3779B97F4A7C15ull;
            if (ticked ? percept_tick(w, tp->changes + tp->begin[t], tp->count[t]) != PERCEPT_OK
                       : apply(w, wl, op) != PERCEPT_OK) {
                if (ticked)
                    fail(r, "the tick of operations %zu to %zu failed at its entry %zu: %.300s",
                         begin, end - 1, percept_errindex(w), percept_errmsg(w));
                else
                    fail(r, "%s of entity %u (operation %zu) failed: %.300s",
                         bench_op_kind_name((int)op->kind), op->id, i, percept_errmsg(w));
                return;
            }
        }
        r->ns[kind] += (double)(now_ns() - run_start);
    }
    r->hash = s.hash;
    r->events = s.count;
    percept_memory m;
    if (percept_memory_usage(w, &m) == PERCEPT_OK)
        r->memory = m.total;
}

/* Homemade's replay: each tick its placing of the tick's entities and its
 * whole recomputation, timed together. */
static void replay_homemade(const replay_request *req, replay_result *r)
{
    const bench_workload *wl = req->wl;
    size_t n = wl->profile_count,
           limit = req->op_limit < wl->op_count ? req->op_limit : wl->op_count;
    double *range = malloc((n + 1) * sizeof *range);
    for (size_t i = 0; range && i < n; i++)
        range[i] = wl->profiles[i].range[0];
    homemade *h =
        range ? homemade_open(&wl->bounds, n, range, req->threads ? req->threads : 1) : NULL;
    free(range);
    if (!h) {
        fail(r, "cannot open homemade on %zu threads", req->threads);
        return;
    }
    for (size_t t = 0; t < wl->tick_count; t++) {
        size_t begin = t ? wl->tick_end[t - 1] : 0;
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        if (begin >= end)
            break;
        uint64_t enters, leaves, start = now_ns();
        for (size_t i = begin; i < end; i++)
            homemade_place(h, wl->ops[i].id, wl->ops[i].x, wl->ops[i].y, wl->ops[i].z);
        if (homemade_tick(h, &enters, &leaves)) {
            fail(r, "homemade ran out of memory in tick %zu", t);
            break;
        }
        r->ns[t ? OP_MOVE : OP_ADD] += (double)(now_ns() - start);
        r->ops[t ? OP_MOVE : OP_ADD] += end - begin;
        r->ticks += t > 0;
        r->events += enters + leaves;
        if (t < BENCH_MAX_TICKS)
            r->enters[t] = enters, r->leaves[t] = leaves;
    }
    r->alive = n;
    homemade_close(h);
}

static void child(const replay_request *req, replay_result *r)
{
    tick_plan tp = {NULL, NULL, NULL, NULL};
    percept_world *w;
    percept_error err;
    if (!req->backend)
        replay_homemade(req, r);
    else if (req->ticked && lay_out_ticks(req->wl, req->op_limit, &tp))
        fail(r, "out of memory laying out the ticks");
    else if (open_world(&w, req->backend, req->wl, req->threads, &err) != PERCEPT_OK)
        fail(r, "cannot create the world: %.300s", err.text);
    else {
        count_ops(req, &tp, r);
        replay_world(req, r, w, &tp);
        percept_world_close(w);
    }
    free_tick_plan(&tp);
}

void replay_run(const replay_request *req, replay_result *out)
{
    int fds[2];
    memset(out, 0, sizeof *out);
    fflush(NULL); /* or the child would repeat our buffered output */
    if (pipe(fds) != 0) {
        fail(out, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        child(req, out);
        _exit(write(fds[1], out, sizeof *out) == (ssize_t)sizeof *out ? 0 : 3);
    }
    close(fds[1]);
    /* The result is under PIPE_BUF bytes: written at once, it is read at once. */
    ssize_t got = pid > 0 ? read(fds[0], out, sizeof *out) : 0;
    int status = 0;
    close(fds[0]);
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0)
        fail(out, "fork: %s", strerror(errno));
    else if (WIFSIGNALED(status))
        fail(out, "the replay died of signal %d", WTERMSIG(status));
    else if (got != (ssize_t)sizeof *out)
        fail(out, "the replay ended without a result (exit status %d)", WEXITSTATUS(status));
}
