/*
 * suite.c - one benchmark case (a workload at one size) run against every
 * backend in interleaved rounds, checked against the reference, and reduced
 * to the figures the report prints.
 */
#include "suite.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "stats.h"

/* What a replay of ops [0, limit) runs, known before it runs: it depends on
 * the workload alone, so the timed loop need not count it. */
typedef struct op_counts {
    uint64_t all[OP_KIND_COUNT];    /* operations of each kind */
    uint64_t prefix[OP_KIND_COUNT]; /* the same up to the end of tick 1 */
    size_t peak_alive;              /* the most entities in the world at once */
} op_counts;

static void count_ops(const bench_workload *wl, size_t limit, int batched, op_counts *c)
{
    size_t prefix_end = wl->tick_end[wl->tick_count > 1 ? 1 : 0], alive = 0;
    if (limit > wl->op_count)
        limit = wl->op_count;
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < limit; i++) {
        uint32_t kind = replay_timed_kind(wl->ops[i].kind, batched);
        if (i == prefix_end)
            memcpy(c->prefix, c->all, sizeof c->all);
        c->all[kind]++;
        if (kind == OP_REMOVE)
            alive--;
        else if (kind == OP_ADD || kind == OP_LOGIN)
            alive++;
        if (alive > c->peak_alive)
            c->peak_alive = alive;
    }
    if (limit <= prefix_end)
        memcpy(c->prefix, c->all, sizeof c->all);
}

/* Where each backend's replays stop: everything (or the plan's share of the
 * movement ticks), the reference's prefix, or nothing; and what each runs. */
static void plan_limits(case_result *out, const bench_workload *wl, const char *const *backends,
                        const char *const *skip, op_counts *counts)
{
    const case_plan *p = &out->plan;
    size_t all = wl->tick_end[0] + case_plan_moves(p, wl->op_count - wl->tick_end[0]);
    out->replay_ops = all;
    out->populate_ops = wl->tick_end[0];
    for (size_t b = 0; b < out->backend_count; b++) {
        backend_result *br = &out->b[b];
        br->name = backends[b];
        br->ran = 1;
        br->op_limit = all;
        br->tick_p50 = br->tick_p99 = NAN;
        if (skip && skip[b]) {
            br->ran = 0;
            snprintf(br->note, sizeof br->note, "%s", skip[b]);
            continue;
        }
        if (strcmp(br->name, BENCH_REFERENCE) != 0)
            continue;
        if (p->n > p->reference_limit) {
            br->ran = 0;
            snprintf(br->note, sizeof br->note, "O(N) per query: not run above %zu entities",
                     p->reference_limit);
        } else if (p->n > p->reference_full && wl->tick_count > 2 && wl->tick_end[1] < all) {
            br->partial = 1;
            br->op_limit = wl->tick_end[1];
        }
    }
    for (size_t b = 0; b < out->backend_count; b++)
        if (out->b[b].ran)
            count_ops(wl, out->b[b].op_limit, (p->flags & CASE_BATCHED) != 0, &counts[b]);
}

static void flag_failure(case_result *out, size_t b, const char *why, FILE *log)
{
    backend_result *br = &out->b[b];
    if (!br->failed)
        snprintf(br->error, sizeof br->error, "%s", why);
    br->failed = 1;
    fprintf(log, "percept-bench: FAILED: %s N=%zu%s, backend %s: %s\n", out->plan.workload,
            out->plan.n, out->plan.flags & CASE_BATCHED ? " batched" : "", br->name, why);
}

/* A replay ran over the time limit: the backend stops here, and is no failure. */
static void too_slow(case_result *out, size_t b, FILE *log)
{
    backend_result *br = &out->b[b];
    br->too_slow = 1;
    snprintf(br->note, sizeof br->note, "too slow: a replay did not finish within %.0f s",
             out->plan.max_replay);
    fprintf(log, "    %s: %s\n", br->name, br->note);
}

/* The single-call twin ran over the time limit: the batched case, which starts with the
 * same populating tick, would too, and is not tried again. */
static void twin_too_slow(case_result *out, size_t b, FILE *log)
{
    backend_result *br = &out->b[b];
    br->too_slow = 1;
    snprintf(br->note, sizeof br->note,
             "too slow: its replay with one call per move did not finish within %.0f s",
             out->plan.max_replay);
    fprintf(log, "    %s batched: %s\n", br->name, br->note);
}

/*
 * The event hash expected at each checkpoint: the reference's where it ran,
 * beyond that the first backend that got there. valid[c] is 0 when no one did.
 */
static const char *build_truth(case_result *out, replay_result (*res)[BENCH_MAX_ROUNDS],
                               size_t checkpoint_count, uint64_t *truth, int *valid)
{
    const char *first = NULL;
    for (size_t c = 0; c < checkpoint_count; c++)
        valid[c] = 0;
    /* The reference first, then the others in order. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t b = 0; b < out->backend_count; b++) {
            const backend_result *br = &out->b[b];
            int is_ref = strcmp(br->name, BENCH_REFERENCE) == 0;
            if (!br->ran || br->failed || is_ref != (pass == 0) || res[b][0].failed)
                continue;
            for (size_t c = 0; c < res[b][0].hash_count && c < checkpoint_count; c++) {
                if (valid[c])
                    continue;
                truth[c] = res[b][0].hashes[c];
                valid[c] = 1;
                if (!first)
                    first = br->name;
            }
        }
    }
    return first;
}

static void check_replay(case_result *out, size_t b, const replay_result *r, const char *round,
                         const size_t *checkpoints, const uint64_t *truth, const int *valid,
                         const char *truth_name, FILE *log)
{
    for (size_t c = 0; c < r->hash_count; c++) {
        if (!valid[c] || r->hashes[c] == truth[c])
            continue;
        char why[512];
        snprintf(why, sizeof why,
                 "MISMATCH: the events of the first %zu operations (%s) hash to %016" PRIx64
                 ", but %s's to %016" PRIx64,
                 checkpoints[c], round, r->hashes[c], truth_name, truth[c]);
        out->mismatch = 1;
        flag_failure(out, b, why, log);
        return;
    }
}

static void aggregate(case_result *out, size_t b, replay_result *res, size_t rounds,
                      const op_counts *n)
{
    backend_result *br = &out->b[b];
    double v[BENCH_MAX_ROUNDS], totals[BENCH_MAX_ROUNDS];
    size_t samples = 0, ok = 0;
    for (size_t r = 0; r < rounds; r++)
        if (!res[r].failed)
            samples += res[r].ticks;
    double *ticks = malloc((samples + 1) * sizeof *ticks);
    samples = 0;
    for (size_t r = 0; r < rounds; r++) {
        if (res[r].failed)
            continue;
        totals[ok++] = 0;
        for (int k = 0; k < OP_KIND_COUNT; k++)
            totals[ok - 1] += res[r].ns[k];
        for (size_t t = 1; ticks && t < res[r].ticks; t++)
            ticks[samples++] = res[r].tick_ns[t];
    }
    br->rounds = ok;
    if (ok == 0) {
        free(ticks);
        return;
    }
    const replay_result *last = NULL;
    for (size_t r = 0; r < rounds; r++)
        if (!res[r].failed)
            last = &res[r];
    for (int k = 0; k < OP_KIND_COUNT; k++) {
        size_t m = 0;
        for (size_t r = 0; r < rounds; r++)
            if (!res[r].failed && n->prefix[k])
                v[m++] = res[r].prefix_ns[k] / (double)n->prefix[k];
        br->prefix_ns[k] = stats_median(v, m);
        m = 0;
        for (size_t r = 0; r < rounds; r++)
            if (!res[r].failed && n->all[k])
                v[m++] = res[r].ns[k] / (double)n->all[k];
        br->min_ns[k] = stats_min(v, m);
        br->med_ns[k] = stats_median(v, m);
        br->ops[k] = n->all[k];
        br->events[k] = last->events[k];
        br->events_per_op[k] = n->all[k] ? (double)last->events[k] / (double)n->all[k] : NAN;
        br->allocs_per_op[k] = n->all[k] ? (double)last->allocs[k] / (double)n->all[k] : NAN;
    }
    br->total_ns = stats_median(totals, ok);
    size_t m1 = 0;
    for (size_t r = 0; r < rounds; r++)
        if (!res[r].failed && res[r].ticks > 1)
            v[m1++] = res[r].tick_ns[1];
    br->prefix_tick = stats_median(v, m1);
    br->tick_p50 = stats_percentile(ticks, samples, 50);
    br->tick_p99 = stats_percentile(ticks, samples, 99);
    free(ticks);
    size_t m = 0;
    for (size_t r = 0; r < rounds; r++)
        if (!res[r].failed && n->peak_alive)
            v[m++] = res[r].rss_bytes / (double)n->peak_alive;
    br->rss_per_entity = stats_median(v, m);
    br->heap_per_entity =
        n->peak_alive && last->heap_bytes > 0 ? last->heap_bytes / (double)n->peak_alive : NAN;
    if (br->op_limit == out->replay_ops && isnan(out->pairs_per_observer)) {
        double alive =
            (double)n->all[OP_ADD] + (double)n->all[OP_LOGIN] - (double)n->all[OP_REMOVE];
        if (alive > 0)
            out->pairs_per_observer =
                ((double)last->enters - (double)last->leaves) / alive / PERCEPT_SENSE_COUNT;
    }
}

static void log_backend(FILE *log, const backend_result *br)
{
    if (!br->ran) {
        fprintf(log, "    %-11s skipped: %s\n", br->name, br->note);
        return;
    }
    if (br->rounds == 0) {
        fprintf(log, "    %-11s FAILED\n", br->name);
        return;
    }
    fprintf(log, "    %-11s", br->name);
    for (int k = 0; k < OP_KIND_COUNT; k++)
        if (br->ops[k] && !isnan(br->med_ns[k]))
            fprintf(log, " %s %.0f ns", bench_op_kind_name(k), br->med_ns[k]);
    if (!isnan(br->rss_per_entity))
        fprintf(log, ", %.0f B/entity", br->rss_per_entity);
    fprintf(log, "%s%s\n", br->partial ? " (first tick only)" : "",
            br->failed ? "  << FAILED" : "");
}

double suite_comparable_ns(const case_result *c, size_t b, int kind)
{
    const backend_result *base = c->base >= 0 ? &c->b[c->base] : NULL;
    int prefix = base && base->partial && (int)b != c->base;
    return prefix ? c->b[b].prefix_ns[kind] : c->b[b].med_ns[kind];
}

double suite_comparable_tick(const case_result *c, size_t b, double full)
{
    const backend_result *base = c->base >= 0 ? &c->b[c->base] : NULL;
    return base && base->partial && (int)b != c->base ? c->b[b].prefix_tick : full;
}

double suite_replay_seconds(const case_result *c, size_t b)
{
    return suite_usable(&c->b[b]) ? c->b[b].total_ns * 1e-9 : NAN;
}

size_t suite_series(const case_result *cases, size_t case_count, unsigned flags,
                    const char *workload, const char *backend, int figure,
                    double x[SUITE_MAX_POINTS], double y[SUITE_MAX_POINTS], size_t *lo, size_t *hi)
{
    size_t m = 0, n_lo = 0, n_hi = 0;
    for (size_t i = 0; i < case_count && m < SUITE_MAX_POINTS; i++) {
        const case_result *c = &cases[i];
        if (!suite_case_in(&c->plan, flags) ||
            (workload && strcmp(c->plan.workload, workload) != 0))
            continue;
        const backend_result *br = NULL;
        for (size_t b = 0; b < c->backend_count && !br; b++)
            if (strcmp(c->b[b].name, backend) == 0)
                br = &c->b[b];
        if (!br || !suite_usable(br))
            continue;
        double v = figure == SUITE_RSS_PER_ENTITY ? br->rss_per_entity : br->med_ns[figure];
        if (isnan(v))
            continue;
        x[m] = (double)c->plan.n;
        y[m] = v;
        if (!n_lo || c->plan.n < n_lo)
            n_lo = c->plan.n;
        if (c->plan.n > n_hi)
            n_hi = c->plan.n;
        m++;
    }
    if (lo)
        *lo = n_lo;
    if (hi)
        *hi = n_hi;
    return m;
}

size_t suite_replay_ops(const case_result *c, size_t b)
{
    const backend_result *br = &c->b[b];
    size_t n = 0;
    for (int k = 0; k < OP_KIND_COUNT; k++)
        n += br->ops[k];
    return n;
}

/* One case while its rounds run: its replays so far, and what they are checked against. */
typedef struct case_run {
    case_result *out;
    const char *const *skip;
    op_counts counts[BENCH_MAX_BACKENDS];
    replay_result (*res)[BENCH_MAX_ROUNDS]; /* [backend][round] */
    replay_result *warm;                    /* [backend] */
    uint64_t *truth;
    int *valid;
    size_t *cps; /* the op counts at which event hashes are taken */
    size_t cp_count;
} case_run;

static void run_free(case_run *run)
{
    free(run->res);
    free(run->warm);
    free(run->truth);
    free(run->valid);
    free(run->cps);
}

/* Sets the case up: its limits, its checkpoints, room for its replays. */
static int run_start(case_run *run, const bench_workload *wl, const char *const *backends,
                     size_t rounds, FILE *log)
{
    case_result *out = run->out;
    const case_plan *plan = &out->plan;
    out->op_count = wl->op_count;
    out->tick_count = wl->tick_count;
    out->bounds = wl->bounds;
    plan_limits(out, wl, backends, run->skip, run->counts);
    fprintf(log, "  %s N=%zu%s: %zu %s%s, %zu operations", plan->workload, plan->n,
            plan->flags & CASE_BATCHED ? " batched" : "", wl->tick_count - 1,
            plan->flags & CASE_TRACE ? "slice" : "tick", wl->tick_count == 2 ? "" : "s",
            wl->op_count);
    if (out->replay_ops < wl->op_count)
        fprintf(log, " (replayed: tick 0 and %zu more)", out->replay_ops - out->populate_ops);
    fprintf(log, ", up to %zu round%s\n", rounds, rounds == 1 ? "" : "s");
    fflush(log);

    run->res = calloc(out->backend_count, sizeof *run->res);
    run->warm = calloc(out->backend_count, sizeof *run->warm);
    run->truth = calloc(wl->tick_count + 1, sizeof *run->truth);
    run->valid = calloc(wl->tick_count + 1, sizeof *run->valid);
    run->cps = calloc(wl->tick_count + 1, sizeof *run->cps);
    if (!run->res || !run->warm || !run->truth || !run->valid || !run->cps)
        return -1;
    /* Event hashes are compared at the end of every tick, and where the replays stop. */
    for (size_t t = 0; t < wl->tick_count; t++) {
        if (t > 0 && wl->tick_end[t - 1] < out->replay_ops && wl->tick_end[t] > out->replay_ops)
            run->cps[run->cp_count++] = out->replay_ops;
        run->cps[run->cp_count++] = wl->tick_end[t];
    }
    return 0;
}

/* Backend b's replay of ops [0, op_limit) into *res; a failure or a timeout is noted. */
static void run_replay(case_run *run, const bench_workload *wl, size_t b, size_t op_limit,
                       replay_result *res, FILE *log)
{
    case_result *out = run->out;
    replay_request rq = {.wl = wl,
                         .backend = out->b[b].name,
                         .op_limit = op_limit,
                         .checkpoints = run->cps,
                         .checkpoint_count = run->cp_count,
                         .timeout = out->plan.max_replay,
                         .batched = (out->plan.flags & CASE_BATCHED) != 0};
    replay_run(&rq, res);
    if (res->timed_out)
        too_slow(out, b, log);
    else if (res->failed)
        flag_failure(out, b, res->error, log);
}

/* Checks every replay against the case's truth, reduces them to figures, picks the base. */
static void run_finish(case_run *run, size_t rounds, FILE *log)
{
    case_result *out = run->out;
    int warmup = out->plan.warmup;
    out->plan.rounds = rounds;
    out->truth = build_truth(out, run->res, run->cp_count, run->truth, run->valid);
    for (size_t b = 0; b < out->backend_count; b++) {
        if (!out->b[b].ran)
            continue;
        char label[32];
        if (warmup && !run->warm[b].failed)
            check_replay(out, b, &run->warm[b], "warm-up", run->cps, run->truth, run->valid,
                         out->truth, log);
        for (size_t r = 0; r < rounds; r++) {
            snprintf(label, sizeof label, "round %zu", r + 1);
            if (!run->res[b][r].failed)
                check_replay(out, b, &run->res[b][r], label, run->cps, run->truth, run->valid,
                             out->truth, log);
        }
    }
    for (size_t b = 0; b < out->backend_count; b++) {
        if (out->b[b].ran)
            aggregate(out, b, run->res[b], rounds, &run->counts[b]);
        if (out->b[b].too_slow && out->b[b].rounds == 0)
            out->b[b].ran = 0; /* nothing measured: shown as skipped, with the note */
    }

    /* Ratios are to the reference when it ran, else to the grid, else to the first. */
    for (size_t b = 0; b < out->backend_count && out->base < 0; b++)
        if (out->b[b].ran && out->b[b].rounds && strcmp(out->b[b].name, BENCH_REFERENCE) == 0)
            out->base = (int)b;
    for (size_t b = 0; b < out->backend_count && out->base < 0; b++)
        if (out->b[b].ran && out->b[b].rounds && strcmp(out->b[b].name, "grid") == 0)
            out->base = (int)b;
    for (size_t b = 0; b < out->backend_count && out->base < 0; b++)
        if (out->b[b].ran && out->b[b].rounds)
            out->base = (int)b;

    if (out->plan.flags & CASE_BATCHED)
        fprintf(log, "    batched:\n");
    for (size_t b = 0; b < out->backend_count; b++) {
        log_backend(log, &out->b[b]);
        replay_result_free(&run->warm[b]);
        for (size_t r = 0; r < rounds; r++)
            replay_result_free(&run->res[b][r]);
    }
}

/* Whether backend b of case runs[i] is to replay now: it runs, has neither failed nor been
 * too slow, and in a batched twin, its single-call case was not too slow either. */
static int runnable(case_run *runs, size_t i, size_t b, FILE *log)
{
    backend_result *br = &runs[i].out->b[b];
    if (i > 0 && br->ran && !br->too_slow && runs[0].out->b[b].too_slow)
        twin_too_slow(runs[i].out, b, log);
    return br->ran && !br->failed && !br->too_slow;
}

/* Runs the cases of plans[0..count-1] on `wl`, which they share (see suite_run_cases()). */
static int run_cases(case_result *out, const case_plan *plans, size_t count,
                     const bench_workload *wl, const char *const *backends, size_t backend_count,
                     const char *const skip[][BENCH_MAX_BACKENDS], FILE *log)
{
    double start = cli_now_seconds(), budget = 0;
    case_run runs[SUITE_MAX_TWINS];
    size_t rounds = 1;
    int unlimited = 0;

    memset(runs, 0, sizeof runs);
    for (size_t i = 0; i < count; i++) {
        case_result *o = &out[i];
        memset(o, 0, sizeof *o);
        o->plan = plans[i];
        o->base = -1;
        o->pairs_per_observer = NAN;
        o->backend_count = backend_count < BENCH_MAX_BACKENDS ? backend_count : BENCH_MAX_BACKENDS;
        runs[i].out = o;
        runs[i].skip = skip ? skip[i] : NULL;
        if (plans[i].rounds > rounds)
            rounds = plans[i].rounds;
        budget += plans[i].budget;
        unlimited |= plans[i].budget <= 0;
    }
    if (unlimited)
        budget = 0;
    if (rounds > BENCH_MAX_ROUNDS)
        rounds = BENCH_MAX_ROUNDS;
    int bad = 0;
    for (size_t i = 0; i < count && !bad; i++) {
        if (i > 0) /* under the first, past the caller's "[ 12s]" stamp */
            fputs("       ", log);
        bad = run_start(&runs[i], wl, backends, rounds, log);
    }
    if (bad) {
        for (size_t i = 0; i < count; i++)
            run_free(&runs[i]);
        return -1;
    }

    /* Untimed warm-up: the populating tick once per backend (caches, allocator, clocks). */
    for (size_t i = 0; i < count; i++) {
        case_result *o = runs[i].out;
        for (size_t b = 0; o->plan.warmup && b < o->backend_count; b++)
            if (runnable(runs, i, b, log))
                run_replay(&runs[i], wl, b, wl->tick_end[0], &runs[i].warm[b], log);
    }
    /* Interleaved rounds: every backend once per round, and the twins' rounds in turn,
     * so that a slow spell of the machine hits all of them alike. */
    for (size_t r = 0; r < rounds; r++) {
        /* At least one round; another only if it should end within the budget. */
        double spent = cli_now_seconds() - start;
        if (r > 0 && budget > 0 && spent + spent / (double)r > budget) {
            rounds = r;
            fprintf(log, "    (%zu round%s: the time budget of this case, %.0f s, is spent)\n", r,
                    r == 1 ? "" : "s", budget);
            break;
        }
        for (size_t i = 0; i < count; i++) {
            case_result *o = runs[i].out;
            for (size_t b = 0; b < o->backend_count; b++) {
                if (runnable(runs, i, b, log))
                    run_replay(&runs[i], wl, b, o->b[b].op_limit, &runs[i].res[b][r], log);
                else
                    runs[i].res[b][r].failed = 1;
            }
        }
    }

    for (size_t i = 0; i < count; i++) {
        run_finish(&runs[i], rounds, log);
        run_free(&runs[i]);
        runs[i].out->seconds = cli_now_seconds() - start;
    }
    fflush(log);
    return 0;
}

int suite_run_cases(case_result *out, const case_plan *plans, size_t count,
                    const char *const *backends, size_t backend_count,
                    const char *const skip[][BENCH_MAX_BACKENDS], uint64_t seed, FILE *log)
{
    bench_workload wl;
    if (count < 1 || count > SUITE_MAX_TWINS)
        return -1;
    if (bench_workload_generate(&wl, plans[0].workload, plans[0].n, plans[0].ticks, seed))
        return -1;
    int rc = run_cases(out, plans, count, &wl, backends, backend_count, skip, log);
    bench_workload_free(&wl);
    return rc;
}

int suite_run_workload(case_result *out, const case_plan *plan, const bench_workload *wl,
                       const char *const *backends, size_t backend_count, FILE *log)
{
    return run_cases(out, plan, 1, wl, backends, backend_count, NULL, log);
}
