/*
 * suite.c - one benchmark case (a workload at one size) run against every
 * backend in interleaved rounds, checked against the reference, and reduced
 * to the figures the report prints.
 */
#include "suite.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
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

/* The operations the reference replays in a case whose backends replay `all`: all of
 * them up to plan.reference_full entities, the populating and first movement tick up
 * to plan.reference_limit, and none (0) above, where O(N) per query is too slow. */
static size_t reference_ops(const case_plan *p, const bench_workload *wl, size_t all)
{
    if (p->n > p->reference_limit)
        return 0;
    if (p->n > p->reference_full && wl->tick_count > 2 && wl->tick_end[1] < all)
        return wl->tick_end[1];
    return all;
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
        if (skip && skip[b]) { /* the caller skips a backend for its time alone */
            br->ran = 0;
            br->skipped_slow = 1;
            snprintf(br->note, sizeof br->note, "%s", skip[b]);
            continue;
        }
        if (strcmp(br->name, BENCH_REFERENCE) != 0)
            continue;
        size_t ref = reference_ops(p, wl, all);
        if (ref == 0) {
            br->ran = 0;
            snprintf(br->note, sizeof br->note, "O(N) per query: not run above %zu entities",
                     p->reference_limit);
        } else if (ref < all) {
            br->partial = 1;
            br->op_limit = ref;
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
    char limit[32];
    br->too_slow = 1;
    bench_fmt_seconds(limit, sizeof limit, out->plan.max_replay);
    snprintf(br->note, sizeof br->note, "too slow: a replay did not finish within %s", limit);
    fprintf(log, "    %s: %s\n", br->name, br->note);
}

/* The single-call twin ran over the time limit: the batched case, which starts with the
 * same populating tick, would too, and is not tried again. */
static void twin_too_slow(case_result *out, size_t b, FILE *log)
{
    backend_result *br = &out->b[b];
    char limit[32];
    br->too_slow = 1;
    bench_fmt_seconds(limit, sizeof limit, out->plan.max_replay);
    snprintf(br->note, sizeof br->note,
             "too slow: its replay with one call per move did not finish within %s", limit);
    fprintf(log, "    %s batched: %s\n", br->name, br->note);
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
        if (!res[r].failed && n->peak_alive && !isnan(res[r].rss_bytes)) /* NAN: not measured */
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
    replay_result ref;                      /* the hidden reference's replay */
    size_t ref_limit;                       /* the operations it replays; 0: it does not run */
    uint64_t *truth;
    int *valid;
    unsigned char *source;  /* [checkpoint]: where truth came from (a truth_source) */
    size_t *agree, *voters; /* [checkpoint]: a majority's size, out of how many */
    size_t *cps;            /* the op counts at which event hashes are taken */
    size_t cp_count;
} case_run;

static void run_free(case_run *run)
{
    replay_result_free(&run->ref);
    free(run->res);
    free(run->warm);
    free(run->truth);
    free(run->valid);
    free(run->source);
    free(run->agree);
    free(run->voters);
    free(run->cps);
}

/* ------------------------------------------------------------------------ */
/* Checking the events                                                       */

/* Where the hash expected at a checkpoint came from. */
enum truth_source {
    TRUTH_NONE,      /* no replay reached it, or the backends disagreed before it */
    TRUTH_REFERENCE, /* the reference's replay */
    TRUTH_MAJORITY,  /* the hash a strict majority of two or more backends agree on */
    TRUTH_ALONE,     /* one backend got there: its other rounds are held to its first */
    TRUTH_DISAGREE   /* no hash has a strict majority: none is blamed */
};

int suite_is_reference(const case_result *c, size_t b)
{
    return strcmp(c->b[b].name, BENCH_REFERENCE) == 0;
}

/* Whether backend b's first round reached checkpoint c without failing, and b was not
 * found wrong at an earlier checkpoint: then its hash there counts. */
static int votes(const case_run *run, size_t b, size_t c, const int *wrong)
{
    const backend_result *br = &run->out->b[b];
    const replay_result *r = &run->res[b][0];
    return br->ran && !br->failed && !wrong[b] && !r->failed && c < r->hash_count;
}

/* The replay holding the reference's events: the reference's among the backends (*index
 * receives which), or the one run for the check alone; NULL when neither completed. */
static const replay_result *reference_replay(const case_run *run, int *index)
{
    const case_result *out = run->out;
    *index = -1;
    for (size_t b = 0; b < out->backend_count; b++) {
        if (!suite_is_reference(out, b))
            continue;
        *index = (int)b;
        return out->b[b].ran && !out->b[b].failed && !run->res[b][0].failed ? &run->res[b][0]
                                                                            : NULL;
    }
    return out->reference_hidden && !run->ref.failed ? &run->ref : NULL;
}

/* Appends to a fixed buffer, truncating. */
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    if (*len >= size)
        return;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    *len = n < 0 ? size : *len + (size_t)n;
}

/* The backends that gave hash h at checkpoint c, as "a, b, c". */
static void voters_of(const case_run *run, size_t c, uint64_t h, const int *wrong, char *buf,
                      size_t size, size_t *len)
{
    int first = 1;
    for (size_t b = 0; b < run->out->backend_count; b++) {
        if (!votes(run, b, c, wrong) || run->res[b][0].hashes[c] != h)
            continue;
        append(buf, size, len, "%s%s", first ? "" : ", ", run->out->b[b].name);
        first = 0;
    }
}

/* Checkpoint c has no majority: says so, naming each hash and who gave it. */
static void note_disagreement(case_run *run, size_t c, const int *wrong, FILE *log)
{
    case_result *out = run->out;
    char *note = out->check_note;
    size_t len = 0, size = sizeof out->check_note;
    int said[BENCH_MAX_BACKENDS] = {0}, first = 1;
    append(note, size, &len, "backends disagree: the events of the first %zu operations hash to ",
           run->cps[c]);
    for (size_t b = 0; b < out->backend_count; b++) {
        if (!votes(run, b, c, wrong) || said[b])
            continue;
        uint64_t h = run->res[b][0].hashes[c];
        append(note, size, &len, "%s%016" PRIx64 " (", first ? "" : ", ", h);
        voters_of(run, c, h, wrong, note, size, &len);
        append(note, size, &len, ")");
        for (size_t k = b; k < out->backend_count; k++)
            said[k] |= votes(run, k, c, wrong) && run->res[k][0].hashes[c] == h;
        first = 0;
    }
    append(note, size, &len, "; no hash has a strict majority, so none is blamed");
    out->disagree = 1;
    fprintf(log, "percept-bench: FAILED: %s N=%zu%s: %s\n", out->plan.workload, out->plan.n,
            out->plan.flags & CASE_BATCHED ? " batched" : "", note);
}

/*
 * The event hash expected at each checkpoint, and where it came from. Wherever the
 * reference ran, its hash: the order of the backends decides nothing. Elsewhere, the
 * hash a strict majority of the backends that got there agree on; without one they
 * disagree, none is blamed, and nothing later is compared. A backend found wrong
 * votes no more. Marks the backends whose events met another replay's.
 */
static void build_truth(case_run *run, FILE *log)
{
    case_result *out = run->out;
    int wrong[BENCH_MAX_BACKENDS] = {0}, ref_index;
    const replay_result *ref = reference_replay(run, &ref_index);
    for (size_t c = 0; c < run->cp_count; c++) {
        int voter[BENCH_MAX_BACKENDS] = {0};
        size_t voters = 0, best = 0;
        uint64_t best_hash = 0;
        run->valid[c] = 0;
        run->source[c] = TRUTH_NONE;
        if (ref && c < ref->hash_count) {
            run->truth[c] = ref->hashes[c];
            run->valid[c] = 1;
            run->source[c] = TRUTH_REFERENCE;
            out->reference_ops = run->cps[c];
            for (size_t b = 0; b < out->backend_count; b++) {
                if ((int)b == ref_index || !votes(run, b, c, wrong))
                    continue;
                out->b[b].compared = 1;
                wrong[b] = run->res[b][0].hashes[c] != run->truth[c];
            }
            continue;
        }
        if (out->disagree)
            continue;
        for (size_t b = 0; b < out->backend_count; b++)
            voters += voter[b] = votes(run, b, c, wrong);
        for (size_t b = 0; b < out->backend_count; b++) {
            size_t same = 0;
            for (size_t k = 0; voter[b] && k < out->backend_count; k++)
                same += voter[k] && run->res[k][0].hashes[c] == run->res[b][0].hashes[c];
            if (same > best) {
                best = same;
                best_hash = run->res[b][0].hashes[c];
            }
        }
        if (voters == 0)
            continue;
        if (2 * best <= voters) {
            run->source[c] = TRUTH_DISAGREE;
            note_disagreement(run, c, wrong, log);
            for (size_t b = 0; b < out->backend_count; b++)
                out->b[b].compared |= voter[b];
            continue;
        }
        run->truth[c] = best_hash;
        run->valid[c] = 1;
        run->source[c] = best > 1 ? TRUTH_MAJORITY : TRUTH_ALONE;
        run->agree[c] = best;
        run->voters[c] = voters;
        out->majority_checks += best > 1;
        for (size_t b = 0; b < out->backend_count; b++) {
            if (!voter[b])
                continue;
            if (run->res[b][0].hashes[c] == best_hash)
                out->b[b].compared |= best > 1;
            else
                wrong[b] = 1;
        }
    }
}

/* Whose hash checkpoint c was checked against, for a message. */
static void truth_name(const case_run *run, size_t c, char *buf, size_t size)
{
    size_t len = 0;
    int none[BENCH_MAX_BACKENDS] = {0};
    if (run->source[c] == TRUTH_REFERENCE) {
        snprintf(buf, size, "%s's%s", BENCH_REFERENCE,
                 run->out->reference_hidden ? " (the reference, run untimed)" : "");
    } else if (run->source[c] == TRUTH_MAJORITY) {
        append(buf, size, &len, "those of %zu of the %zu backends that got there (", run->agree[c],
               run->voters[c]);
        voters_of(run, c, run->truth[c], none, buf, size, &len);
        append(buf, size, &len, ")");
    } else {
        snprintf(buf, size, "its first round's");
    }
}

static void check_replay(case_run *run, size_t b, const replay_result *r, const char *round,
                         FILE *log)
{
    for (size_t c = 0; c < r->hash_count && c < run->cp_count; c++) {
        if (!run->valid[c] || r->hashes[c] == run->truth[c])
            continue;
        char why[768], whose[384];
        truth_name(run, c, whose, sizeof whose);
        snprintf(why, sizeof why,
                 "MISMATCH: the events of the first %zu operations (%s) hash to %016" PRIx64
                 ", but %s to %016" PRIx64,
                 run->cps[c], round, r->hashes[c], whose, run->truth[c]);
        run->out->mismatch = 1;
        flag_failure(run->out, b, why, log);
        return;
    }
}

/* Backends that completed a replay whose events met no other replay's: nothing checked
 * them, so the run cannot say they are right. The reference among the backends is
 * exempt: it is what the others are checked against. */
static void note_unchecked(case_run *run, FILE *log)
{
    case_result *out = run->out;
    const case_plan *p = &out->plan;
    for (size_t b = 0; b < out->backend_count; b++) {
        if (!suite_usable(&out->b[b]) || out->b[b].compared || suite_is_reference(out, b))
            continue;
        char why[256];
        if (p->n > p->reference_limit)
            snprintf(why, sizeof why, "%s does not run above %zu entities", BENCH_REFERENCE,
                     p->reference_limit);
        else
            snprintf(why, sizeof why, "%s did not complete a replay", BENCH_REFERENCE);
        out->unchecked++;
        fprintf(log,
                "percept-bench: UNCHECKED: %s N=%zu%s, backend %s: its events were compared with "
                "no other replay's (%s, and no other backend completed one to compare with)\n",
                p->workload, p->n, p->flags & CASE_BATCHED ? " batched" : "", out->b[b].name, why);
    }
}

/* The reference's replay when it is not among the backends: once, untimed, before the
 * rounds, only for its events. */
static void run_reference(case_run *run, const bench_workload *wl, FILE *log)
{
    case_result *out = run->out;
    replay_request rq = {.wl = wl,
                         .backend = BENCH_REFERENCE,
                         .params = out->plan.params,
                         .op_limit = run->ref_limit,
                         .checkpoints = run->cps,
                         .checkpoint_count = run->cp_count,
                         .timeout = out->plan.max_replay,
                         .batched = (out->plan.flags & CASE_BATCHED) != 0};
    char limit[32];
    replay_run(&rq, &run->ref);
    if (run->ref.timed_out) {
        bench_fmt_seconds(limit, sizeof limit, out->plan.max_replay);
        snprintf(out->check_note, sizeof out->check_note,
                 "%s, the reference, did not finish its replay within %s: the backends were "
                 "checked against each other",
                 BENCH_REFERENCE, limit);
        fprintf(log, "    %s (the reference): too slow: %s\n", BENCH_REFERENCE, out->check_note);
    } else if (run->ref.failed) {
        out->reference_failed = 1;
        snprintf(out->check_note, sizeof out->check_note, "%s, the reference: %s", BENCH_REFERENCE,
                 run->ref.error);
        fprintf(log, "percept-bench: FAILED: %s N=%zu%s, the reference %s: %s\n",
                out->plan.workload, out->plan.n, out->plan.flags & CASE_BATCHED ? " batched" : "",
                BENCH_REFERENCE, run->ref.error);
    }
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
    run->source = calloc(wl->tick_count + 1, sizeof *run->source);
    run->agree = calloc(wl->tick_count + 1, sizeof *run->agree);
    run->voters = calloc(wl->tick_count + 1, sizeof *run->voters);
    run->cps = calloc(wl->tick_count + 1, sizeof *run->cps);
    if (!run->res || !run->warm || !run->truth || !run->valid || !run->source || !run->agree ||
        !run->voters || !run->cps)
        return -1;
    /* The reference checks every case within its limit: when it is not among the
     * backends, it replays once for that alone (run_reference()). */
    int listed = 0;
    for (size_t b = 0; b < out->backend_count; b++)
        listed |= suite_is_reference(out, b);
    run->ref_limit = listed ? 0 : reference_ops(plan, wl, out->replay_ops);
    out->reference_hidden = run->ref_limit > 0;
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
                         .params = out->plan.params,
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
    build_truth(run, log);
    for (size_t b = 0; b < out->backend_count; b++) {
        if (!out->b[b].ran)
            continue;
        char label[32];
        if (warmup && !run->warm[b].failed)
            check_replay(run, b, &run->warm[b], "warm-up", log);
        for (size_t r = 0; r < rounds; r++) {
            snprintf(label, sizeof label, "round %zu", r + 1);
            if (!run->res[b][r].failed)
                check_replay(run, b, &run->res[b][r], label, log);
        }
    }
    for (size_t b = 0; b < out->backend_count; b++) {
        if (out->b[b].ran)
            aggregate(out, b, run->res[b], rounds, &run->counts[b]);
        if (out->b[b].too_slow && out->b[b].rounds == 0) {
            out->b[b].ran = 0; /* nothing measured: shown as skipped, with the note */
            out->b[b].skipped_slow = 1;
        }
    }
    note_unchecked(run, log);

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
    if (out->reference_hidden && !run->ref.failed)
        fprintf(log, "    %-11s the reference, not among the backends: replayed once, untimed%s\n",
                BENCH_REFERENCE, run->ref_limit < out->replay_ops ? " (first tick only)" : "");
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

    /* The reference's own replay where it is not among the backends: untimed, first. */
    for (size_t i = 0; i < count; i++)
        if (runs[i].out->reference_hidden)
            run_reference(&runs[i], wl, log);
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
            char secs[32];
            rounds = r;
            bench_fmt_seconds(secs, sizeof secs, budget);
            fprintf(log, "    (%zu round%s: the time budget of this case, %s, is spent)\n", r,
                    r == 1 ? "" : "s", secs);
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

void suite_check_summary(const case_result *cases, size_t count, suite_check *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < count; i++) {
        const case_result *c = &cases[i];
        if (c->plan.reference_limit > s->reference_limit)
            s->reference_limit = c->plan.reference_limit;
        s->reference_failed += c->reference_failed != 0;
        s->disagree += c->disagree != 0;
        s->unchecked += c->unchecked;
        s->unchecked_cases += c->unchecked > 0;
        s->by_reference += c->reference_ops > 0;
        s->reference_whole += c->reference_ops > 0 && c->reference_ops >= c->replay_ops;
        s->by_majority += c->majority_checks > 0;
        s->hidden += c->reference_hidden != 0;
        for (size_t b = 0; b < c->backend_count; b++)
            s->failed += c->b[b].failed != 0;
    }
    /* Every case runs the same backends, in the same order. */
    for (size_t b = 0; count && b < cases[0].backend_count; b++) {
        int usable = 0, checked = 0, skipped = 0;
        for (size_t i = 0; i < count && b < cases[i].backend_count; i++) {
            usable |= suite_usable(&cases[i].b[b]);
            checked |= suite_usable(&cases[i].b[b]) && cases[i].b[b].compared;
            skipped |= cases[i].b[b].skipped_slow;
        }
        if (usable) {
            s->usable++;
            s->alone = cases[0].b[b].name;
        }
        s->checked += checked != 0;
        s->skipped += skipped != 0;
    }
}

size_t suite_describe_backends(const case_result *cases, size_t count, int skipped,
                               const char *quote, char *out, size_t size)
{
    size_t listed = 0, len = 0;
    if (size)
        out[0] = '\0';
    for (size_t b = 0; count && b < cases[0].backend_count; b++) {
        size_t in = 0; /* the cases that select it */
        for (size_t i = 0; i < count && b < cases[i].backend_count; i++) {
            const backend_result *br = &cases[i].b[b];
            in += skipped ? br->skipped_slow != 0 : suite_usable(br) && br->compared;
        }
        if (!in)
            continue;
        char where[96] = "";
        if (skipped && count == 1)
            snprintf(where, sizeof where, " (too slow)");
        else if (skipped && in == count)
            snprintf(where, sizeof where, " (too slow in every case)");
        else if (skipped)
            snprintf(where, sizeof where, " (too slow in %zu of %zu cases)", in, count);
        int n = snprintf(out + len, len < size ? size - len : 0, "%s%s%s%s%s", listed ? ", " : "",
                         quote, cases[0].b[b].name, quote, where);
        len += n > 0 ? (size_t)n : 0;
        if (len >= size)
            len = size; /* cut: snprintf() ended it where it stopped */
        listed++;
    }
    return listed;
}

int suite_check_failed(const suite_check *s)
{
    return s->failed || s->reference_failed || s->disagree || s->unchecked || s->usable == 0;
}
