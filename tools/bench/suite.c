/*
 * suite.c - one benchmark case run against every backend, and homemade, in
 * interleaved rounds, so that a slow spell of a shared machine hits all of
 * them alike; every replay's events checked against the reference's.
 */
#include "suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONTENDERS (BENCH_MAX_BACKENDS + 1)

/* A case's replays while its rounds run. */
typedef struct case_run {
    const bench_workload *wl;
    int modes;
    size_t limit[BENCH_MAX_MODES]; /* the operations each mode's replays run */
    replay_result res[BENCH_MAX_MODES][MAX_CONTENDERS][BENCH_MAX_ROUNDS];
    /* bruteforce's, one call per operation and ticked on the first thread
     * count, when it is not among the backends */
    replay_result reference[2];
    int has_reference; /* reference[] holds those replays */
} case_run;

static int is_reference(const char *name)
{
    return strcmp(name, BENCH_REFERENCE) == 0;
}

/* The first mode of mode's kind: every ticked mode is held to the first's
 * reference, so that the events are the same on any number of threads. */
static int first_of_kind(int mode)
{
    return mode == MODE_SINGLE ? MODE_SINGLE : 1;
}

static replay_request request(const case_result *out, const case_run *run, int mode, size_t b,
                              size_t limit)
{
    return (replay_request){run->wl, case_is_homemade(out, b) ? NULL : out->contenders[b], limit,
                            mode != MODE_SINGLE,
                            mode != MODE_SINGLE ? out->plan.threads[mode - 1] : 0};
}

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* a handful of rounds: insertion sort */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* " tick by tick on 2 threads" and the like, for messages; "" for MODE_SINGLE. */
static void describe_mode(char *buf, size_t size, const case_result *out, int mode)
{
    size_t t = mode == MODE_SINGLE ? 0 : out->plan.threads[mode - 1];
    if (t)
        snprintf(buf, size, " tick by tick on %zu thread%s", t, t == 1 ? "" : "s");
    else if (size)
        buf[0] = '\0';
}

static void fail(case_result *out, int mode, size_t b, const char *why, FILE *log)
{
    backend_figures *f = &out->fig[mode][b];
    char where[64];
    if (!f->failed)
        snprintf(f->error, sizeof f->error, "%s", why);
    f->failed = 1;
    out->failed = 1;
    describe_mode(where, sizeof where, out, mode);
    fprintf(log, "percept-bench: FAILED: %s N=%zu%s, %s: %s\n", out->plan.workload, out->plan.n,
            where, out->contenders[b], why);
}

/* Whether homemade's counts of ENTER and LEAVE events differ from `want`'s
 * in some tick; if so, says which in why. */
static int counts_differ(const replay_result *got, const replay_result *want, char *why,
                         size_t size, size_t round, const char *want_name)
{
    for (size_t t = 0; t < BENCH_MAX_TICKS; t++)
        if (got->enters[t] != want->enters[t] || got->leaves[t] != want->leaves[t]) {
            snprintf(why, size,
                     "round %zu: %llu ENTER and %llu LEAVE in tick %zu; %s: %llu and %llu",
                     round + 1, (unsigned long long)got->enters[t],
                     (unsigned long long)got->leaves[t], t, want_name,
                     (unsigned long long)want->enters[t], (unsigned long long)want->leaves[t]);
            return 1;
        }
    return 0;
}

/* The replay mode's events are held to: bruteforce's up to its limit, else
 * the first backend's, in the first mode of mode's kind; NULL: none. */
static const replay_result *reference_of(const case_result *out, const case_run *run, int mode,
                                         const char **name)
{
    int first = first_of_kind(mode);
    *name = BENCH_REFERENCE;
    if (run->has_reference)
        return &run->reference[first != MODE_SINGLE];
    for (size_t b = 0; b < out->contender_count; b++)
        if (out->fig[first][b].ran && !case_is_homemade(out, b) && !run->res[first][b][0].failed &&
            (out->plan.n > BENCH_REFERENCE_LIMIT || is_reference(out->contenders[b]))) {
            *name = out->contenders[b];
            return &run->res[first][b][0];
        }
    return NULL;
}

/* Holds every replay of `mode` to the reference's events (homemade: to its
 * counts of the first sense's ENTER and LEAVE events in each tick). Each
 * contender's first round is held to them, and its later rounds to its first. */
static void check(case_result *out, case_run *run, int mode, size_t rounds, FILE *log)
{
    const char *ref_name;
    const replay_result *ref = reference_of(out, run, mode, &ref_name);
    size_t compared = 0, homemade_compared = 0;
    char ref_mode[64], ref_label[160]; /* "bruteforce's, tick by tick on 1 thread" */
    describe_mode(ref_mode, sizeof ref_mode, out, first_of_kind(mode));
    snprintf(ref_label, sizeof ref_label, "%s's%s%s", ref_name, ref_mode[0] ? "," : "", ref_mode);
    if (ref && ref->failed) { /* only the unlisted reference gets here */
        out->failed = 1;
        if (mode == first_of_kind(mode))
            fprintf(log, "percept-bench: FAILED: %s N=%zu%s, the reference %s: %s\n",
                    out->plan.workload, out->plan.n, ref_mode, BENCH_REFERENCE, ref->error);
        ref = NULL;
    }
    for (size_t b = 0; ref && b < out->contender_count; b++) {
        int homemade = case_is_homemade(out, b);
        for (size_t r = 0; r < rounds && out->fig[mode][b].ran; r++) {
            const replay_result *got = &run->res[mode][b][r];
            const replay_result *want = r ? &run->res[mode][b][0] : ref;
            const char *want_name = r ? "its first round's" : ref_label;
            char why[256];
            if (got->failed || want->failed || got == ref)
                continue;
            if (r == 0)
                *(homemade ? &homemade_compared : &compared) += 1;
            if (homemade ? counts_differ(got, want, why, sizeof why, r, want_name)
                         : got->hash != want->hash || got->events != want->events) {
                if (!homemade)
                    snprintf(why, sizeof why, "round %zu: its events differ from %s", r + 1,
                             want_name);
                fail(out, mode, b, why, log);
            }
        }
    }
    out->checked_against[mode] = compared ? ref_name : NULL;
    if (out->homemade && mode != MODE_SINGLE)
        out->homemade_checked &= homemade_compared > 0;
}

/* Reduces contender b's rounds of `mode` to its figures. */
static void figures(case_result *out, case_run *run, int mode, size_t b, size_t rounds)
{
    backend_figures *f = &out->fig[mode][b];
    const replay_result *res = run->res[mode][b];
    double v[BENCH_MAX_ROUNDS];
    size_t m;
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        m = 0;
        for (size_t r = 0; r < rounds; r++)
            if (!res[r].failed && res[r].ops[k])
                v[m++] = res[r].ns[k] / (double)res[r].ops[k];
        f->ns[k] = median(v, m);
    }
    m = 0;
    for (size_t r = 0; r < rounds; r++)
        if (!res[r].failed && res[r].ticks)
            v[m++] = res[r].ns[OP_MOVE] / (double)res[r].ticks;
    f->per_tick = median(v, m);
    f->bytes_per_entity = !res[0].failed && res[0].alive && res[0].memory
                              ? (double)res[0].memory / (double)res[0].alive
                              : NAN;
}

static void run_case(case_result *out, case_run *run, FILE *log)
{
    const case_plan *p = &out->plan;
    const bench_workload *wl = run->wl;
    size_t rounds = p->rounds < BENCH_MAX_ROUNDS ? p->rounds : BENCH_MAX_ROUNDS;
    int listed = 0;
    for (size_t b = 0; b < out->contender_count; b++)
        listed |= is_reference(out->contenders[b]);
    /* The reference checks every case within its limit, listed or not. */
    run->has_reference = !listed && p->n <= BENCH_REFERENCE_LIMIT;
    for (int mode = 0; mode < run->modes; mode++) {
        size_t moves = wl->op_count - wl->tick_end[0];
        int cut = mode == MODE_SINGLE && p->move_limit && moves > p->move_limit;
        run->limit[mode] = cut ? wl->tick_end[0] + p->move_limit : wl->op_count;
        for (size_t b = 0; b < out->contender_count; b++)
            out->fig[mode][b].ran = case_is_homemade(out, b) ? mode != MODE_SINGLE
                                                             : !is_reference(out->contenders[b]) ||
                                                                   p->n <= BENCH_REFERENCE_LIMIT;
        if (run->has_reference && mode == first_of_kind(mode)) {
            replay_request req = {wl, BENCH_REFERENCE, run->limit[mode], mode != MODE_SINGLE,
                                  mode != MODE_SINGLE ? p->threads[mode - 1] : 0};
            replay_run(&req, &run->reference[mode != MODE_SINGLE]);
        }
        for (size_t b = 0; p->warmup && b < out->contender_count; b++) {
            replay_result warm; /* caches, allocator, clocks */
            replay_request req = request(out, run, mode, b, wl->tick_end[0]);
            if (out->fig[mode][b].ran)
                replay_run(&req, &warm);
        }
    }
    for (size_t r = 0; r < rounds; r++)
        for (int mode = 0; mode < run->modes; mode++)
            for (size_t b = 0; b < out->contender_count; b++) {
                replay_result *res = &run->res[mode][b][r];
                backend_figures *f = &out->fig[mode][b];
                replay_request req = request(out, run, mode, b, run->limit[mode]);
                res->failed = 1; /* unless it runs */
                if (!f->ran || f->failed)
                    continue;
                replay_run(&req, res);
                if (res->failed)
                    fail(out, mode, b, res->error, log);
            }
    for (int mode = 0; mode < run->modes; mode++) {
        check(out, run, mode, rounds, log);
        for (size_t b = 0; b < out->contender_count; b++)
            if (out->fig[mode][b].ran)
                figures(out, run, mode, b, rounds);
    }
}

int suite_run(case_result *out, const case_plan *plan, const char *const *backends,
              size_t backend_count, uint64_t seed, FILE *log)
{
    bench_workload wl;
    memset(out, 0, sizeof *out);
    out->plan = *plan;
    if (out->plan.thread_count > BENCH_MAX_THREADS)
        out->plan.thread_count = BENCH_MAX_THREADS;
    out->plan.ticked &= out->plan.thread_count > 0;
    case_run *run = calloc(1, sizeof *run);
    if (!run || bench_workload_generate(&wl, plan->workload, plan->n, plan->ticks, seed)) {
        free(run);
        return -1;
    }
    for (size_t b = 0; b < backend_count && b < BENCH_MAX_BACKENDS; b++)
        out->contenders[out->contender_count++] = backends[b];
    out->homemade = out->plan.ticked && replay_homemade_fits(&wl);
    out->homemade_checked = out->homemade;
    if (out->homemade)
        out->contenders[out->contender_count++] = BENCH_HOMEMADE;
    out->bounds = wl.bounds;
    run->wl = &wl;
    run->modes = case_modes(&out->plan);
    run_case(out, run, log);
    bench_workload_free(&wl);
    free(run);
    return 0;
}
