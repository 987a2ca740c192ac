/*
 * replay.c - replays a workload's operations against one backend in a
 * forked child process, timing each kind of operation and each tick, hashing
 * every event, counting allocations and measuring the resident memory used.
 *
 * A fresh child per replay gives every backend the same starting heap and
 * its own peak resident set (ru_maxrss starts afresh in a child), and keeps
 * a crashing backend from taking the whole run with it.
 */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "../cli.h"
#include "stats.h"
#include "tuning.h"

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double replay_clock_cost_ns(void)
{
    enum { READS = 200000 };
    uint64_t t0 = now_ns(), t = t0;
    for (int i = 0; i < READS; i++)
        t = now_ns();
    return (double)(t - t0) / READS;
}

/* ------------------------------------------------------------------------ */
/* What the library sees: a counting allocator and a hashing event sink      */

typedef struct counters {
    uint64_t calls; /* allocations and resizes: the calls that may reach malloc */
    size_t live, peak;
} counters;

static void *counting_alloc(void *user, void *ptr, size_t size)
{
    counters *c = user;
#ifdef __GLIBC__
    size_t old = ptr ? malloc_usable_size(ptr) : 0;
#else
    size_t old = 0;
#endif
    if (size == 0) {
        free(ptr);
        c->live -= old;
        return NULL;
    }
    void *p = realloc(ptr, size);
    if (!p)
        return NULL;
    c->calls++;
#ifdef __GLIBC__
    c->live += malloc_usable_size(p) - old;
    if (c->live > c->peak)
        c->peak = c->live;
#endif
    return p;
}

typedef struct sink {
    uint64_t hash;           /* sum of one mixed word per event: independent of order */
    uint64_t count;          /* events delivered */
    uint64_t enters, leaves; /* of them ENTER and LEAVE */
    uint64_t op_key;         /* the running call's index, premultiplied */
} sink;

/*
 * The callback stands for a game server's event queue, so it must cost next
 * to nothing: a few instructions per event, the same for every backend. Each
 * event is folded into the hash with the index of the call that caused it,
 * so an event reported by the wrong call changes the hash too.
 */
static void on_event(void *user, const percept_event *ev)
{
    sink *s = user;
    uint64_t x = (((uint64_t)ev->observer << 32) | ev->target) ^ s->op_key ^
                 ((uint64_t)((unsigned)ev->kind * 4u + (unsigned)ev->sense) << 58);
    x *= 0xD6E8FEB86659FD93ull;
    s->hash += x ^ (x >> 32);
    s->count++;
    s->enters += ev->kind == PERCEPT_ENTER;
    s->leaves += ev->kind == PERCEPT_LEAVE;
}

/* ------------------------------------------------------------------------ */
/* The child: one replay                                                     */

static long current_rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages_total, pages_resident;
    if (!f)
        return -1;
    int n = fscanf(f, "%ld %ld", &pages_total, &pages_resident);
    fclose(f);
    if (n != 2)
        return -1;
    return pages_resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return ru.ru_maxrss;
}

/*
 * The peak resident set as the replay starts. The child inherits the parent's
 * pages and with them its high-water mark, which the trim above may leave far
 * above what is resident now: reset the mark (Linux's clear_refs "5") so that
 * the peak after the replay is the replay's own. Where that is impossible the
 * inherited mark is the baseline, which can only understate the growth.
 */
static long start_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
    long peak = peak_rss_kib(), now = current_rss_kib();
    return peak > now ? peak : now;
}

static int apply(percept_world *w, const bench_workload *wl, const bench_op *op)
{
    switch (op->kind) {
    case OP_ADD:
    case OP_LOGIN: {
        const bench_profile *p = &wl->profiles[op->id];
        percept_entity_desc d = {op->x, op->y, {p->range[0], p->range[1], p->range[2]}, p->hidden};
        return percept_add(w, op->id, &d);
    }
    case OP_MOVE:
    case OP_TELEPORT:
        return percept_move(w, op->id, op->x, op->y);
    case OP_REMOVE:
        return percept_remove(w, op->id);
    case OP_RANGE:
        return percept_set_range(w, op->id, bench_op_sense(op), op->x);
    case OP_HIDE:
    case OP_SHOW:
        return percept_set_hidden(w, op->id, bench_op_sense(op), op->kind == OP_HIDE);
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

/*
 * A batched replay's calls, laid out before any timing so that the timed loop
 * only hands them over: every move and teleport as a percept_position, in
 * replay order, and the length of each run of them within a tick, in order.
 */
typedef struct batches {
    percept_position *moves;
    size_t *len;
} batches;

static void batches_free(batches *b)
{
    free(b->moves);
    free(b->len);
}

/* Lays out the batches of ops [0, limit) as the replay loop walks them. */
static int batches_build(batches *b, const bench_workload *wl, size_t limit)
{
    if (limit > wl->op_count)
        limit = wl->op_count;
    b->moves = malloc((limit + 1) * sizeof *b->moves);
    b->len = malloc((limit + 1) * sizeof *b->len);
    if (!b->moves || !b->len)
        return -1;
    size_t moves = 0, runs = 0;
    for (size_t t = 0; t < wl->tick_count; t++) {
        size_t begin = t ? wl->tick_end[t - 1] : 0;
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        size_t run = 0; /* a run ends at a tick's end too: a tick is what a batch stands for */
        for (size_t i = begin; i < end; i++) {
            const bench_op *op = &wl->ops[i];
            if (replay_timed_kind(op->kind, 1) == OP_MOVE) {
                b->moves[moves++] = (percept_position){op->id, op->x, op->y};
                run++;
            } else if (run) {
                b->len[runs++] = run;
                run = 0;
            }
        }
        if (run)
            b->len[runs++] = run;
    }
    return 0;
}

static void replay_world(const replay_request *req, replay_result *r, double *tick_ns,
                         uint64_t *hashes, const batches *batch)
{
    const bench_workload *wl = req->wl;
    static char ini[BENCH_INI_SIZE];
    counters cnt = {0, 0, 0};
    percept_allocator allocator = {counting_alloc, &cnt};
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_error err;
    percept_world *w;
    sink s;

    memset(&s, 0, sizeof s);
    opt.allocator = &allocator;
    if (bench_tuning_ini(ini, sizeof ini, req->backend, req->params, wl)) {
        fail(r, "%s: the configuration does not fit its buffer", req->backend);
        return;
    }
#ifdef __GLIBC__
    malloc_trim(0); /* so that the world's memory is new resident memory */
#endif
    long base = start_peak_rss_kib();
    /* The library names the config's source in its messages: name it by what it is,
     * and drop the line numbers, of a text the user never sees. */
    char label[300];
    bench_tuning_label(label, sizeof label, req->backend);
    if (percept_world_open_string(&w, ini, label, &opt, &err)) {
        char why[sizeof err.text + sizeof label + 200];
        bench_tuning_open_error(why, sizeof why, &err, label);
        fail(r, "cannot create the world: %.600s", why);
        return;
    }
    percept_set_event_callback(w, on_event, &s);

    size_t limit = req->op_limit < wl->op_count ? req->op_limit : wl->op_count;
    size_t cp = 0, runs = 0, moved = 0; /* runs and moves of `batch` made so far */
    while (cp < req->checkpoint_count && req->checkpoints[cp] == 0)
        hashes[cp++] = 0;
    for (size_t t = 0; t < wl->tick_count; t++) {
        size_t begin = t ? wl->tick_end[t - 1] : 0;
        size_t end = wl->tick_end[t] < limit ? wl->tick_end[t] : limit;
        if (begin >= end)
            break;
        /* Consecutive operations of one kind are timed as one run: few clock
         * reads, so the clock's own cost stays out of the figures. */
        uint32_t kind = replay_timed_kind(wl->ops[begin].kind, req->batched);
        uint64_t tick_start = now_ns(), run_start = tick_start;
        uint64_t run_events = s.count, run_allocs = cnt.calls;
        for (size_t i = begin; i < end; i++) {
            const bench_op *op = &wl->ops[i];
            uint32_t op_kind = replay_timed_kind(op->kind, req->batched);
            if (op_kind != kind) {
                uint64_t t1 = now_ns();
                r->ns[kind] += (double)(t1 - run_start);
                r->events[kind] += s.count - run_events;
                r->allocs[kind] += cnt.calls - run_allocs;
                kind = op_kind;
                run_start = t1;
                run_events = s.count;
                run_allocs = cnt.calls;
            }
            s.op_key = (uint64_t)i * 0x9E3779B97F4A7C15ull;
            size_t last = i; /* the last operation this call makes */
            int rc;
            if (req->batched && op_kind == OP_MOVE) {
                size_t count = batch->len[runs++];
                rc = percept_move_many(w, batch->moves + moved, count);
                moved += count;
                last = i + count - 1;
            } else {
                rc = apply(w, wl, op);
            }
            if (rc != PERCEPT_OK) {
                if (last > i)
                    fail(r, "percept_move_many() of operations %zu to %zu failed: %.600s", i, last,
                         percept_errmsg(w));
                else
                    fail(r, "%s of entity %u (operation %zu) failed: %.600s",
                         bench_op_kind_name((int)op->kind), op->id, i, percept_errmsg(w));
                percept_world_close(w);
                return;
            }
            while (cp < req->checkpoint_count && req->checkpoints[cp] <= last + 1)
                hashes[cp++] = s.hash;
            i = last;
        }
        uint64_t t_end = now_ns();
        r->ns[kind] += (double)(t_end - run_start);
        r->events[kind] += s.count - run_events;
        r->allocs[kind] += cnt.calls - run_allocs;
        if (end == wl->tick_end[t])
            tick_ns[r->ticks++] = (double)(t_end - tick_start);
        if (t <= 1)
            memcpy(r->prefix_ns, r->ns, sizeof r->ns);
    }
    r->hash_count = cp;
    r->enters = s.enters;
    r->leaves = s.leaves;
    long peak = peak_rss_kib();
    r->rss_bytes = peak >= base ? (double)(peak - base) * 1024.0 : 0;
    r->heap_bytes = (double)cnt.peak;
    percept_world_close(w);
}

/* The batches are laid out before the world is made: the resident set they
 * take is part of the baseline the memory figure subtracts. */
static void replay(const replay_request *req, replay_result *r, double *tick_ns, uint64_t *hashes)
{
    batches batch = {NULL, NULL};
    if (req->batched && batches_build(&batch, req->wl, req->op_limit))
        fail(r, "%s: out of memory laying out the batches", req->backend);
    else
        replay_world(req, r, tick_ns, hashes, &batch);
    batches_free(&batch);
}

static void child(const replay_request *req, int fd)
{
    const bench_workload *wl = req->wl;
    replay_result r;
    memset(&r, 0, sizeof r);
    double *tick_ns = calloc(wl->tick_count + 1, sizeof *tick_ns);
    uint64_t *hashes = calloc(req->checkpoint_count + 1, sizeof *hashes);
    if (!tick_ns || !hashes)
        fail(&r, "%s: out of memory", req->backend);
    else
        replay(req, &r, tick_ns, hashes);
    int bad = cli_write_all(fd, &r, sizeof r) ||
              cli_write_all(fd, tick_ns, r.ticks * sizeof *tick_ns) ||
              cli_write_all(fd, hashes, r.hash_count * sizeof *hashes);
    _exit(bad ? 3 : 0);
}

/* ------------------------------------------------------------------------ */
/* The parent                                                                */

static int read_all(int fd, char **data, size_t *len)
{
    size_t cap = 1 << 16;
    *len = 0;
    *data = malloc(cap);
    if (!*data)
        return -1;
    for (;;) {
        if (*len == cap) {
            char *p = realloc(*data, cap * 2);
            if (!p)
                return -1;
            *data = p;
            cap *= 2;
        }
        ssize_t n = read(fd, *data + *len, cap - *len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        *len += (size_t)n;
    }
}

int replay_forks(void)
{
    const char *in_process = getenv("PERCEPT_BENCH_NO_FORK");
    return !in_process || !*in_process || strcmp(in_process, "0") == 0;
}

/* Without a child, for profilers that do not follow fork(). The process's peak
 * resident set is then the highest of every replay so far, and memory an earlier
 * world freed is reused by the next: the growth of the peak says nothing of this
 * world (mostly 0), so no memory figure is given rather than a wrong one. */
static void replay_in_process(const replay_request *req, replay_result *out)
{
    out->tick_ns = calloc(req->wl->tick_count + 1, sizeof *out->tick_ns);
    out->hashes = calloc(req->checkpoint_count + 1, sizeof *out->hashes);
    if (!out->tick_ns || !out->hashes) {
        replay_result_free(out);
        fail(out, "%s: out of memory", req->backend);
        return;
    }
    replay(req, out, out->tick_ns, out->hashes);
    out->rss_bytes = NAN;
}

void replay_run(const replay_request *req, replay_result *out)
{
    int fds[2];
    memset(out, 0, sizeof *out);
    if (!replay_forks()) {
        replay_in_process(req, out);
        return;
    }
    fflush(NULL); /* or the child would repeat our buffered output */
    if (pipe(fds) != 0) {
        fail(out, "pipe: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fail(out, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        if (req->timeout > 0) { /* SIGALRM's default action ends the child */
            /* A timer to the microsecond: a limit under a second is one too. */
            double whole = floor(req->timeout);
            struct itimerval t = {{0, 0},
                                  {(time_t)whole, (suseconds_t)((req->timeout - whole) * 1e6)}};
            if (t.it_value.tv_sec == 0 && t.it_value.tv_usec == 0)
                t.it_value.tv_usec = 1;
            setitimer(ITIMER_REAL, &t, NULL);
        }
        child(req, fds[1]);
    }
    close(fds[1]);
    char *data = NULL;
    size_t len = 0;
    int rd = read_all(fds[0], &data, &len);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status) || rd != 0 || len < sizeof *out) {
        out->failed = 1;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM && req->timeout > 0) {
            char limit[32];
            out->timed_out = 1;
            bench_fmt_seconds(limit, sizeof limit, req->timeout);
            snprintf(out->error, sizeof out->error, "did not finish a replay within %s", limit);
        } else if (WIFSIGNALED(status))
            snprintf(out->error, sizeof out->error, "the %s replay died of signal %d", req->backend,
                     WTERMSIG(status));
        else
            snprintf(out->error, sizeof out->error,
                     "the %s replay ended without a result (exit status %d)", req->backend,
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        free(data);
        return;
    }
    memcpy(out, data, sizeof *out);
    size_t need = sizeof *out + out->ticks * sizeof(double) + out->hash_count * sizeof(uint64_t);
    out->tick_ns = NULL;
    out->hashes = NULL;
    if (len != need) {
        out->failed = 1;
        snprintf(out->error, sizeof out->error, "the %s replay sent a truncated result",
                 req->backend);
        out->ticks = out->hash_count = 0;
        free(data);
        return;
    }
    out->tick_ns = malloc((out->ticks + 1) * sizeof *out->tick_ns);
    out->hashes = malloc((out->hash_count + 1) * sizeof *out->hashes);
    if (!out->tick_ns || !out->hashes) {
        free(data);
        replay_result_free(out);
        out->failed = 1;
        snprintf(out->error, sizeof out->error, "out of memory");
        return;
    }
    memcpy(out->tick_ns, data + sizeof *out, out->ticks * sizeof(double));
    memcpy(out->hashes, data + sizeof *out + out->ticks * sizeof(double),
           out->hash_count * sizeof(uint64_t));
    free(data);
}

void replay_result_free(replay_result *r)
{
    free(r->tick_ns);
    free(r->hashes);
    r->tick_ns = NULL;
    r->hashes = NULL;
    r->ticks = r->hash_count = 0;
}
