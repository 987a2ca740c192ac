/*
 * suite.c - one benchmark case run against every backend in interleaved
 * rounds, so that a slow spell of a shared machine hits all of them alike;
 * every replay's events checked against the reference's.
 */
#include "suite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A case's replays while its rounds run. */
typedef struct case_run {
    const bench_workload *wl;
    int modes;                /* MODE_SINGLE only, or both */
    size_t limit[MODE_COUNT]; /* the operations each mode's replays run */
    uint64_t ops[MODE_COUNT][OP_KIND_COUNT];
    size_t alive[MODE_COUNT]; /* entities after the last operation */
    replay_result res[MODE_COUNT][BENCH_MAX_BACKENDS][BENCH_MAX_ROUNDS];
    replay_result reference[MODE_COUNT]; /* bruteforce's, when it is not among the backends */
    int has_reference;                   /* reference[] holds those replays */
} case_run;

static int is_reference(const char *name)
{
    return strcmp(name, BENCH_REFERENCE) == 0;
}

/* What a replay of ops [0, limit) runs: the operations of each kind, and the
 * entities in the world at the end. The timed loop need not count them. */
static void count_ops(case_run *run, int mode)
{
    size_t alive = 0;
    for (size_t i = 0; i < run->limit[mode]; i++) {
        uint32_t kind = replay_timed_kind(run->wl->ops[i].kind, mode == MODE_BATCHED);
        run->ops[mode][kind]++;
        alive += kind == OP_ADD || kind == OP_LOGIN;
        alive -= kind == OP_REMOVE;
    }
    run->alive[mode] = alive;
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

static void fail(case_result *out, int mode, size_t b, const char *why, FILE *log)
{
    backend_figures *f = &out->fig[mode][b];
    if (!f->failed)
        snprintf(f->error, sizeof f->error, "%s", why);
    f->failed = 1;
    out->failed = 1;
    fprintf(log, "percept-bench: FAILED: %s N=%zu%s, %s: %s\n", out->plan.workload, out->plan.n,
            mode == MODE_BATCHED ? " batched" : "", out->backends[b], why);
}

/* Holds every replay of `mode` to the reference's events: bruteforce's up to
 * its limit, else the first backend's. Each backend's first round is held to
 * them, and its later rounds to its first. */
static void check(case_result *out, case_run *run, int mode, size_t rounds, FILE *log)
{
    const replay_result *ref = run->has_reference ? &run->reference[mode] : NULL;
    const char *ref_name = BENCH_REFERENCE;
    size_t compared = 0;
    for (size_t b = 0; b < out->backend_count && !ref; b++)
        if (out->fig[mode][b].ran && !run->res[mode][b][0].failed &&
            (out->plan.n > BENCH_REFERENCE_LIMIT || is_reference(out->backends[b])))
            ref = &run->res[mode][b][0], ref_name = out->backends[b];
    if (ref && ref->failed) { /* only the unlisted reference gets here */
        out->failed = 1;
        fprintf(log, "percept-bench: FAILED: %s N=%zu, the reference %s: %s\n", out->plan.workload,
                out->plan.n, BENCH_REFERENCE, ref->error);
        return;
    }
    for (size_t b = 0; ref && b < out->backend_count; b++) {
        for (size_t r = 0; r < rounds && out->fig[mode][b].ran; r++) {
            const replay_result *got = &run->res[mode][b][r];
            const replay_result *want = r ? &run->res[mode][b][0] : ref;
            if (got->failed || want->failed || got == ref)
                continue;
            compared += r == 0;
            if (got->hash != want->hash || got->events != want->events) {
                char why[128];
                snprintf(why, sizeof why, "round %zu: its events differ from %s's", r + 1,
                         r ? "its first round" : ref_name);
                fail(out, mode, b, why, log);
            }
        }
    }
    out->checked_against[mode] = compared ? ref_name : NULL;
}

/* Reduces backend b's rounds of `mode` to its figures. */
static void figures(case_result *out, case_run *run, int mode, size_t b, size_t rounds)
{
    backend_figures *f = &out->fig[mode][b];
    double v[BENCH_MAX_ROUNDS];
    f->bytes_per_entity = NAN;
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        size_t m = 0;
        for (size_t r = 0; r < rounds && run->ops[mode][k]; r++)
            if (!run->res[mode][b][r].failed)
                v[m++] = run->res[mode][b][r].ns[k] / (double)run->ops[mode][k];
        f->ns[k] = median(v, m);
    }
    const replay_result *first = &run->res[mode][b][0];
    if (!first->failed && run->alive[mode])
        f->bytes_per_entity = (double)first->memory / (double)run->alive[mode];
}

static void run_case(case_result *out, case_run *run, FILE *log)
{
    const case_plan *p = &out->plan;
    const bench_workload *wl = run->wl;
    size_t rounds = p->rounds < BENCH_MAX_ROUNDS ? p->rounds : BENCH_MAX_ROUNDS;
    int listed = 0;
    for (size_t b = 0; b < out->backend_count; b++)
        listed |= is_reference(out->backends[b]);
    for (int mode = 0; mode < run->modes; mode++) {
        size_t moves = wl->op_count - wl->tick_end[0];
        int cut = mode == MODE_SINGLE && p->move_limit && moves > p->move_limit;
        run->limit[mode] = cut ? wl->tick_end[0] + p->move_limit : wl->op_count;
        count_ops(run, mode);
        for (size_t b = 0; b < out->backend_count; b++)
            out->fig[mode][b].ran =
                !is_reference(out->backends[b]) || p->n <= BENCH_REFERENCE_LIMIT;
        /* The reference checks every case within its limit, listed or not. */
        run->has_reference = !listed && p->n <= BENCH_REFERENCE_LIMIT;
        if (run->has_reference)
            replay_run(&(replay_request){wl, BENCH_REFERENCE, run->limit[mode], mode},
                       &run->reference[mode]);
        for (size_t b = 0; p->warmup && b < out->backend_count; b++) {
            replay_result warm; /* caches, allocator, clocks */
            if (out->fig[mode][b].ran)
                replay_run(&(replay_request){wl, out->backends[b], wl->tick_end[0], mode}, &warm);
        }
    }
    for (size_t r = 0; r < rounds; r++)
        for (int mode = 0; mode < run->modes; mode++)
            for (size_t b = 0; b < out->backend_count; b++) {
                replay_result *res = &run->res[mode][b][r];
                backend_figures *f = &out->fig[mode][b];
                res->failed = 1; /* unless it runs */
                if (!f->ran || f->failed)
                    continue;
                replay_run(&(replay_request){wl, out->backends[b], run->limit[mode], mode}, res);
                if (res->failed)
                    fail(out, mode, b, res->error, log);
            }
    for (int mode = 0; mode < run->modes; mode++) {
        check(out, run, mode, rounds, log);
        for (size_t b = 0; b < out->backend_count; b++)
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
    out->backends = backends;
    out->backend_count = backend_count < BENCH_MAX_BACKENDS ? backend_count : BENCH_MAX_BACKENDS;
    case_run *run = calloc(1, sizeof *run);
    if (!run || bench_workload_generate(&wl, plan->workload, plan->n, plan->ticks, seed)) {
        free(run);
        return -1;
    }
    out->bounds = wl.bounds;
    run->wl = &wl;
    run->modes = plan->batched ? MODE_COUNT : 1;
    run_case(out, run, log);
    bench_workload_free(&wl);
    free(run);
    return 0;
}
