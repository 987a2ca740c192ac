/*
 * targets.c - the performance targets of the benchmark issue, checked
 * against a run's figures: met, missed, or not measured in this run.
 */
#include "targets.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

#define MOVE_TARGET_NS 150.0
#define MOVE_SPEEDUP 100.0
#define TELEPORT_TARGET_NS 2000.0
#define EXPONENT_TARGET 0.15
#define MEMORY_TARGET 1024.0
#define TARGET_N 10000

const char *target_status_name(target_status s)
{
    return s == TARGET_MET ? "met" : s == TARGET_MISSED ? "missed" : "not measured";
}

const char *target_status_label(const target_result *t, int quick)
{
    return quick && t->status != TARGET_UNMEASURED ? "not judged (--quick)"
                                                   : target_status_name(t->status);
}

const case_result *targets_find_case(const case_result *cases, size_t case_count,
                                     const char *workload, size_t n, int batched)
{
    for (size_t i = 0; i < case_count; i++)
        if (cases[i].plan.n == n && strcmp(cases[i].plan.workload, workload) == 0 &&
            !(cases[i].plan.flags & CASE_BATCHED) == !batched)
            return &cases[i];
    return NULL;
}

/* The fastest backend other than the reference for one kind, or -1; none where the
 * backends disagree on the events, whose figures are then not known good. */
static int fastest(const case_result *c, int kind)
{
    int best = -1;
    for (size_t b = 0; !c->disagree && b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        if (!suite_usable(br) || strcmp(br->name, BENCH_REFERENCE) == 0 || isnan(br->med_ns[kind]))
            continue;
        if (best < 0 || br->med_ns[kind] < c->b[best].med_ns[kind])
            best = (int)b;
    }
    return best;
}

/* Why a target's case (NULL: not in the run) has no fastest backend. */
static const char *not_measured(const case_result *c)
{
    return !c ? "not run" : c->disagree ? "the backends disagree on the events" : "not run";
}

static int find_backend(const case_result *c, const char *name)
{
    for (size_t b = 0; b < c->backend_count; b++)
        if (strcmp(c->b[b].name, name) == 0)
            return (int)b;
    return -1;
}

double targets_sweep_exponent(const case_result *cases, size_t case_count, const char *name,
                              int batched, size_t *points, size_t *lo, size_t *hi)
{
    double x[SUITE_MAX_POINTS], y[SUITE_MAX_POINTS];
    unsigned flags = CASE_SWEEP | (batched ? CASE_BATCHED : 0);
    *points = suite_series(cases, case_count, flags, NULL, name, OP_MOVE, x, y, lo, hi);
    /* A slope over fewer sizes, or less than a factor TARGETS_SWEEP_SPAN in N, says little. */
    if (*points < TARGETS_SWEEP_MIN_SIZES || *hi < TARGETS_SWEEP_SPAN * *lo)
        return NAN;
    return stats_loglog_slope(x, y, *points);
}

/* With `batched`, the moves of the batched case, and the ratio to the reference's batches. */
static void move_target(const case_result *cases, size_t n, int batched, target_result *t)
{
    t->name = batched ? "uniform_walk, 10k entities, moves in one percept_move_many call per tick"
                      : "uniform_walk, 10k entities, three senses, mixed ranges";
    t->goal = "best backend <= 150 ns per move and >= 100x faster than bruteforce";
    const case_result *c = targets_find_case(cases, n, "uniform_walk", TARGET_N, batched);
    int best = c ? fastest(c, OP_MOVE) : -1;
    if (best < 0) {
        t->status = TARGET_UNMEASURED;
        snprintf(t->measured, sizeof t->measured, "%s", not_measured(c));
        return;
    }
    double ns = c->b[best].med_ns[OP_MOVE];
    int ref = find_backend(c, BENCH_REFERENCE);
    /* Over what the reference replayed: its first tick, at this size. */
    double speedup = ref >= 0 && suite_usable(&c->b[ref])
                         ? c->b[ref].med_ns[OP_MOVE] / suite_comparable_ns(c, (size_t)best, OP_MOVE)
                         : NAN;
    if (isnan(speedup)) {
        snprintf(t->measured, sizeof t->measured, "%s: %.0f ns per move; %s did not run",
                 c->b[best].name, ns, BENCH_REFERENCE);
        t->status = TARGET_UNMEASURED;
        return;
    }
    snprintf(t->measured, sizeof t->measured, "%s: %.0f ns per move, %.1fx faster than %s%s",
             c->b[best].name, ns, speedup, BENCH_REFERENCE, batched ? " in batches too" : "");
    t->status = ns <= MOVE_TARGET_NS && speedup >= MOVE_SPEEDUP ? TARGET_MET : TARGET_MISSED;
}

/* Single calls only: batched, a tick's moves and teleports are one call, whose
 * time per moved entity says nothing of a teleport's (see the batched tables). */
static void teleport_target(const case_result *cases, size_t n, target_result *t)
{
    t->name = "teleport, 10k entities";
    t->goal = "best backend <= 2 us per teleport";
    const case_result *c = targets_find_case(cases, n, "teleport", TARGET_N, 0);
    int best = c ? fastest(c, OP_TELEPORT) : -1;
    if (best < 0) {
        t->status = TARGET_UNMEASURED;
        snprintf(t->measured, sizeof t->measured, "%s", not_measured(c));
        return;
    }
    double ns = c->b[best].med_ns[OP_TELEPORT];
    snprintf(t->measured, sizeof t->measured, "%s: %.2f us per teleport", c->b[best].name,
             ns / 1000);
    t->status = ns <= TELEPORT_TARGET_NS ? TARGET_MET : TARGET_MISSED;
}

static void exponent_target(const case_result *cases, size_t n, int batched, target_result *t)
{
    static const char *const names[] = {"grid", "hashgrid"};
    t->name = batched ? "constant-density sweep 1k to 256k, batched"
                      : "constant-density sweep 1k to 256k";
    t->goal = "scaling exponent <= 0.15 for grid and hashgrid";
    t->status = TARGET_MET;
    size_t len = 0;
    t->measured[0] = '\0';
    for (size_t i = 0; i < 2; i++) {
        size_t points, lo, hi;
        double e = targets_sweep_exponent(cases, n, names[i], batched, &points, &lo, &hi);
        if (points == 0) {
            t->status = TARGET_UNMEASURED;
            len += (size_t)snprintf(t->measured + len, sizeof t->measured - len, "%s%s: not run",
                                    i ? "; " : "", names[i]);
        } else if (isnan(e)) {
            t->status = TARGET_UNMEASURED;
            len += (size_t)snprintf(t->measured + len, sizeof t->measured - len,
                                    "%s%s: too few sizes (%zu, N = %zu to %zu; an exponent takes "
                                    "at least %d spanning a factor %d)",
                                    i ? "; " : "", names[i], points, lo, hi,
                                    TARGETS_SWEEP_MIN_SIZES, TARGETS_SWEEP_SPAN);
        } else {
            if (e > EXPONENT_TARGET && t->status == TARGET_MET)
                t->status = TARGET_MISSED;
            len += (size_t)snprintf(t->measured + len, sizeof t->measured - len,
                                    "%s%s: %.3f (%zu sizes, %zu to %zu)", i ? "; " : "", names[i],
                                    e, points, lo, hi);
        }
        if (len >= sizeof t->measured)
            len = sizeof t->measured - 1;
    }
}

static void memory_target(const case_result *cases, size_t n, target_result *t)
{
    t->name = "memory, about 20 neighbours per sense, three senses";
    t->goal = "<= 1 KiB resident per entity (uniform_walk, largest size run, >= 100k)";
    const case_result *c = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cases[i].plan.workload, "uniform_walk") == 0 && cases[i].plan.n >= 100000 &&
            !(cases[i].plan.flags & CASE_BATCHED) && (!c || cases[i].plan.n > c->plan.n))
            c = &cases[i];
    int best = -1, unmeasured = 0;
    for (size_t b = 0; c && !c->disagree && b < c->backend_count; b++) {
        const backend_result *br = &c->b[b];
        unmeasured |= suite_usable(br) && isnan(br->rss_per_entity);
        if (suite_usable(br) && !isnan(br->rss_per_entity) &&
            (best < 0 || br->rss_per_entity < c->b[best].rss_per_entity))
            best = (int)b;
    }
    if (best < 0 && unmeasured) { /* replays in one process: PERCEPT_BENCH_NO_FORK */
        t->status = TARGET_UNMEASURED;
        snprintf(t->measured, sizeof t->measured,
                 "resident memory not measured at N=%zu: the replays ran in one process",
                 c->plan.n);
        return;
    }
    if (best < 0) {
        t->status = TARGET_UNMEASURED;
        snprintf(t->measured, sizeof t->measured, "%s",
                 c && c->disagree ? not_measured(c)
                                  : "no uniform_walk run of 100k entities or more");
        return;
    }
    double v = c->b[best].rss_per_entity;
    snprintf(t->measured, sizeof t->measured, "%s at N=%zu: %.0f bytes per entity", c->b[best].name,
             c->plan.n, v);
    t->status = v <= MEMORY_TARGET ? TARGET_MET : TARGET_MISSED;
}

static void crowd_target(const case_result *cases, size_t n, target_result *t)
{
    t->name = "town_square, hundreds in range";
    t->goal = "no backend slower than bruteforce (per operation, every kind it ran)";
    double worst = NAN;
    const char *worst_name = NULL, *worst_kind = NULL;
    size_t worst_n = 0, compared = 0;
    for (size_t i = 0; i < n; i++) {
        const case_result *c = &cases[i];
        if (strcmp(c->plan.workload, "town_square") != 0)
            continue;
        int ref = find_backend(c, BENCH_REFERENCE);
        if (ref < 0 || !suite_usable(&c->b[ref]))
            continue;
        for (size_t b = 0; b < c->backend_count; b++) {
            if ((int)b == ref || !suite_usable(&c->b[b]))
                continue;
            for (int k = 0; k < OP_KIND_COUNT; k++) {
                double base = c->b[ref].med_ns[k], v = suite_comparable_ns(c, b, k);
                if (isnan(base) || isnan(v))
                    continue;
                compared++;
                if (isnan(worst) || v / base > worst) {
                    worst = v / base;
                    worst_name = c->b[b].name;
                    worst_kind = bench_op_kind_name(k);
                    worst_n = c->plan.n;
                }
            }
        }
    }
    if (!compared) {
        t->status = TARGET_UNMEASURED;
        snprintf(t->measured, sizeof t->measured, "not run with %s", BENCH_REFERENCE);
        return;
    }
    snprintf(t->measured, sizeof t->measured,
             "slowest relative to %s: %s, %s at N=%zu, %.2fx %s's time", BENCH_REFERENCE,
             worst_name, worst_kind, worst_n, worst, BENCH_REFERENCE);
    t->status = worst <= 1.0 ? TARGET_MET : TARGET_MISSED;
}

void targets_evaluate(const case_result *cases, size_t case_count, target_result out[TARGET_COUNT])
{
    memset(out, 0, TARGET_COUNT * sizeof *out);
    move_target(cases, case_count, 0, &out[0]);
    move_target(cases, case_count, 1, &out[1]);
    teleport_target(cases, case_count, &out[2]);
    exponent_target(cases, case_count, 0, &out[3]);
    exponent_target(cases, case_count, 1, &out[4]);
    memory_target(cases, case_count, &out[5]);
    crowd_target(cases, case_count, &out[6]);
}
