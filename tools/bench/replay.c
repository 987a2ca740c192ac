/*
 * replay.c - one replay of a workload against one backend, in a forked
 * child process: every backend starts from the same heap, and a backend
 * that crashes takes its replay down, not the whole run.
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
                      percept_error *err)
{
    char ini[1024];
    percept_options opt = PERCEPT_OPTIONS_INIT;
    opt.backend = backend;
    replay_config(ini, sizeof ini, backend, wl);
    return percept_world_open_string(w, ini, "percept-bench's config", &opt, err);
}

int replay_check_backend(const char *backend, percept_error *err)
{
    bench_workload small = {.bounds = {0, 0, 100, 100}};
    percept_world *w;
    int rc = open_world(&w, backend, &small, err);
    if (rc == PERCEPT_OK)
        percept_world_close(w);
    return rc;
}

typedef struct sink {
    uint64_t hash;   /* sum of one mixed word per event: independent of order */
    uint64_t count;  /* events delivered */
    uint64_t op_key; /* the running call's index, premultiplied */
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

/* A batched replay's calls, laid out before any timing: every operation as
 * a percept_position, and at each move or teleport the length of the run of
 * them, within its tick, that it starts. */
static int lay_out_batches(const bench_workload *wl, size_t limit, percept_position **moves,
                           size_t **len)
{
    *moves = malloc((limit + 1) * sizeof **moves);
    *len = malloc((limit + 1) * sizeof **len);
    for (size_t t = 0; *moves && *len && t < wl->tick_count; t++) {
        size_t run = 0, begin = t ? wl->tick_end[t - 1] : 0; /* a tick ends a run */
        for (size_t i = wl->tick_end[t] < limit ? wl->tick_end[t] : limit; i-- > begin;) {
            const bench_op *op = &wl->ops[i];
            (*moves)[i] = (percept_position){op->id, op->x, op->y};
            run = (*len)[i] = replay_timed_kind(op->kind, 1) == OP_MOVE ? run + 1 : 0;
        }
    }
    return *moves && *len ? 0 : -1;
}

static void replay_world(const replay_request *req, replay_result *r, percept_world *w,
                         const percept_position *moves, const size_t *batch_len)
{
    const bench_workload *wl = req->wl;
    sink s = {0, 0, 0};
    percept_set_event_callback(w, on_event, &s);
    size_t limit = req->op_limit < wl->op_count ? req->op_limit : wl->op_count;
    for (size_t t = 0; t < wl->tick_count; t++) {
        size_t begin = t ? wl->tick_end[t - 1] : 0;
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        if (begin >= end)
            break;
        /* Consecutive operations of one kind are timed as one run: few clock
         * reads, so the clock's own cost stays out of the figures. */
        uint32_t kind = replay_timed_kind(wl->ops[begin].kind, req->batched);
        uint64_t run_start = now_ns();
        for (size_t i = begin; i < end; i++) {
            const bench_op *op = &wl->ops[i];
            uint32_t op_kind = replay_timed_kind(op->kind, req->batched);
            if (op_kind != kind) {
                uint64_t t1 = now_ns();
                r->ns[kind] += (double)(t1 - run_start);
                kind = op_kind;
                run_start = t1;
            }
            s.op_key = (uint64_t)i * 0x9E3779B97F4A7C15ull;
            size_t last = i; /* the last operation this call makes */
            int rc;
            if (req->batched && op_kind == OP_MOVE) {
                rc = percept_move_many(w, moves + i, batch_len[i]);
                last = i + batch_len[i] - 1;
            } else {
                rc = apply(w, wl, op);
            }
            if (rc != PERCEPT_OK) {
                fail(r, "%s of entity %u (operation %zu) failed: %.300s",
                     bench_op_kind_name((int)op->kind), op->id, i, percept_errmsg(w));
                return;
            }
            i = last;
        }
        r->ns[kind] += (double)(now_ns() - run_start);
    }
    r->hash = s.hash;
    r->events = s.count;
    percept_memory m;
    if (percept_memory_usage(w, &m) == PERCEPT_OK)
        r->memory = m.total;
}

static void child(const replay_request *req, replay_result *r)
{
    percept_position *moves = NULL;
    size_t *batch_len = NULL;
    percept_world *w;
    percept_error err;
    if (req->batched && lay_out_batches(req->wl, req->op_limit, &moves, &batch_len))
        fail(r, "out of memory laying out the batches");
    else if (open_world(&w, req->backend, req->wl, &err) != PERCEPT_OK)
        fail(r, "cannot create the world: %.300s", err.text);
    else {
        replay_world(req, r, w, moves, batch_len);
        percept_world_close(w);
    }
    free(moves);
    free(batch_len);
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
