/*
 * suite.h - one benchmark case (a workload at one size) run against every
 * backend in interleaved rounds, checked against the reference, and reduced
 * to the figures the report prints.
 */
#ifndef PERCEPT_BENCH_SUITE_H
#define PERCEPT_BENCH_SUITE_H

#include <stdio.h>

#include "replay.h"
#include "workload.h"

#define BENCH_MAX_BACKENDS 16
#define BENCH_MAX_ROUNDS 16
#define BENCH_REFERENCE "bruteforce"

/* What a case is made of, before it runs. */
typedef struct case_plan {
    const char *workload;
    size_t n, ticks, rounds;
    size_t move_limit;       /* replay only this many operations after tick 0; 0: all */
    size_t move_limit_above; /* the rule move_limit follows: set for worlds above this N */
    double max_replay;       /* seconds: a longer replay is stopped and its backend skipped */
    int warmup;              /* replay the populating tick once per backend, untimed, first */
    size_t reference_full;   /* the reference backend runs everything up to this N, */
    size_t reference_limit;  /* the populating and first tick up to this N, and nothing above */
    double budget;           /* seconds: no round starts that would end beyond it; 0: no limit */
    unsigned flags;
    const bench_params *params; /* what --param gives the backends (NULL: nothing) */
} case_plan;

/* The operations after tick 0 that a replay of the plan runs, out of `moves`. */
static inline size_t case_plan_moves(const case_plan *p, size_t moves)
{
    return p->move_limit && moves > p->move_limit ? p->move_limit : moves;
}

#define CASE_SWEEP 1u  /* a point of the constant-density sweep */
#define CASE_MEMORY 2u /* the large memory run */
#define CASE_TABLE 4u  /* listed among the workload's sizes */
/* Each tick's moves and teleports made in percept_move_many() calls (see
 * replay_request.batched): a twin of the case with the same workload and N,
 * whose events come in another order and are checked among the batched ones. */
#define CASE_BATCHED 8u
/* A user's trace (trace.h), loaded rather than generated: in no table of the
 * named workloads, and without their targets. */
#define CASE_TRACE 16u

/* Whether a case of `plan` is among those `flags` select: it has any of the
 * other flags, and CASE_BATCHED exactly when `flags` has it. */
static inline int suite_case_in(const case_plan *plan, unsigned flags)
{
    return (plan->flags & flags & ~CASE_BATCHED) != 0 &&
           (plan->flags & CASE_BATCHED) == (flags & CASE_BATCHED);
}

typedef struct backend_result {
    const char *name;
    int ran;         /* 0: skipped at this size (note says why) */
    int partial;     /* the reference's prefix only: the populating and first tick */
    size_t op_limit; /* the operations each replay ran */
    int failed;      /* a replay failed or its events differ from the reference */
    /* Its events were checked against another replay's: the reference's, or a hash that
     * a strict majority including some other backend agree on (see suite.c). */
    int compared;
    int too_slow; /* a replay ran over plan.max_replay: skipped at larger sizes */
    /* Skipped for its time (--max-replay: too slow here, at a smaller size, or as its
     * smaller sizes predict) without a completed round: its events were not checked. */
    int skipped_slow;
    char error[768];
    char note[256]; /* why it was skipped */
    size_t rounds;
    double med_ns[OP_KIND_COUNT], min_ns[OP_KIND_COUNT]; /* per operation */
    uint64_t ops[OP_KIND_COUNT], events[OP_KIND_COUNT];  /* per replay */
    double events_per_op[OP_KIND_COUNT], allocs_per_op[OP_KIND_COUNT];
    /* The same figures over the reference's prefix (the populating and first
     * movement tick), for ratios to a reference that ran only that. */
    double prefix_ns[OP_KIND_COUNT], prefix_tick;
    double tick_p50, tick_p99;              /* ns per movement tick; NAN without a complete one */
    double rss_per_entity, heap_per_entity; /* bytes */
    double total_ns;                        /* median time of one replay */
} backend_result;

typedef struct case_result {
    case_plan plan; /* plan.rounds: the rounds actually run */
    size_t op_count, tick_count;
    size_t replay_ops;   /* the operations every backend replays (the reference maybe fewer) */
    size_t populate_ops; /* the operations of tick 0 */
    percept_bounds bounds;
    double pairs_per_observer; /* live pairs per entity and sense at the end */
    backend_result b[BENCH_MAX_BACKENDS];
    size_t backend_count;
    int base;     /* index of the ratio base: the reference, or grid above its limit */
    int mismatch; /* some backend's events differ */
    /* How the events were checked. Up to plan.reference_limit entities the truth is the
     * reference's events (BENCH_REFERENCE, whatever the order of the backends); where it
     * did not run, the hash a strict majority of the backends agree on. */
    int reference_hidden;   /* the reference, not among the backends, ran once, untimed */
    int reference_failed;   /* that replay failed: nothing could be checked against it */
    size_t reference_ops;   /* the operations its events were compared over; 0: none */
    size_t majority_checks; /* checkpoints whose hash two or more backends agreed on */
    int disagree;           /* a checkpoint without a majority: none blamed, the case fails */
    size_t unchecked;       /* usable backends, not the reference, compared with nothing */
    /* The disagreement, or what became of the hidden reference (its whole
     * error, with a few words before it). */
    char check_note[sizeof((replay_result *)0)->error + 64];
    double seconds; /* wall time of the whole case */
} case_result;

/* Whether backend b's figures can be shown: it ran, at least one round, without failing. */
static inline int suite_usable(const backend_result *br)
{
    return br->ran && br->rounds > 0 && !br->failed;
}

/* Backend b's median time per operation of `kind`, over what the case's base
 * replayed when the base ran only a prefix: the numerator of a fair ratio. */
double suite_comparable_ns(const case_result *c, size_t b, int kind);
/* The same for the time of a movement tick. */
double suite_comparable_tick(const case_result *c, size_t b, double full);

/* The most points a series holds. */
#define SUITE_MAX_POINTS 64
/* The figure suite_series() collects: a median time per operation of one kind
 * (a bench_op_kind), or this for the resident bytes per entity. */
#define SUITE_RSS_PER_ENTITY (-1)

/*
 * One backend's figure against N over the cases `flags` selects (see
 * suite_case_in(); and of `workload`, unless that is NULL), where the backend is usable
 * and the figure known: x[i] is N, y[i] the figure, in case order. Returns
 * the number of points (at most SUITE_MAX_POINTS); *lo and *hi (may be NULL)
 * receive the smallest and largest N among them, 0 without points.
 */
size_t suite_series(const case_result *cases, size_t case_count, unsigned flags,
                    const char *workload, const char *backend, int figure,
                    double x[SUITE_MAX_POINTS], double y[SUITE_MAX_POINTS], size_t *lo, size_t *hi);

/* The most cases run together: a single-call case and its batched twin. */
#define SUITE_MAX_TWINS 2

/*
 * Generate the workload of plans[0..count-1] (count is 1, or 2 for a case and its
 * batched twin: the same workload, N and ticks), run it against each backend in
 * rounds (A B C, then the twin's A B C, and again) and fill out[0..count-1]. A
 * backend whose skip[i][b] is not NULL does not run in case i (skip may be NULL).
 * The cases share one time budget, the sum of the plans'. Progress and every
 * mismatch go to `log`. Returns 0, or -1 if the workload could not be generated.
 */
int suite_run_cases(case_result *out, const case_plan *plans, size_t count,
                    const char *const *backends, size_t backend_count,
                    const char *const skip[][BENCH_MAX_BACKENDS], uint64_t seed, FILE *log);

/*
 * Run one case on a workload the caller made (a loaded trace), as
 * suite_run_cases() runs a generated one: plan->workload names it in the log.
 * Returns 0, or -1 when out of memory.
 */
int suite_run_workload(case_result *out, const case_plan *plan, const bench_workload *wl,
                       const char *const *backends, size_t backend_count, FILE *log);

/* Whether backend b of case c is the reference among the backends, which the others
 * are checked against, rather than checked itself. */
int suite_is_reference(const case_result *c, size_t b);

/* How a run's events were checked, over all its cases. */
typedef struct suite_check {
    size_t failed;           /* backends, case by case, whose replay failed or events differ */
    size_t reference_failed; /* cases whose hidden reference replay failed */
    size_t disagree;         /* cases where the backends disagree without a majority */
    size_t unchecked;        /* backends, case by case, whose events were compared with nothing */
    size_t unchecked_cases;  /* the cases they were in */
    size_t by_reference;     /* cases checked against the reference, */
    size_t reference_whole;  /* over everything the backends replayed */
    size_t by_majority;      /* cases with a checkpoint that a majority decided */
    size_t hidden;           /* cases where the reference ran for the check alone */
    size_t usable;           /* backends that completed a replay in some case */
    size_t checked;          /* backends whose events were checked in some case (not the
                                reference among them: the others are checked against it) */
    size_t skipped;          /* backends skipped for their time in some case (skipped_slow):
                                not checked there, which the verdict must say */
    const char *alone;       /* one of them */
    size_t reference_limit;  /* the largest N the reference runs at */
} suite_check;

void suite_check_summary(const case_result *cases, size_t count, suite_check *s);
/*
 * The backends (in the cases' order) whose events were checked in some case, or,
 * with `skipped`, those skipped for their time in some case: ", "-separated into
 * out, each name between two `quote`s, a skipped one followed by " (too slow)" or,
 * in a run of more than one case, " (too slow in every case)" or " (too slow in K
 * of N cases)". Returns how many.
 */
size_t suite_describe_backends(const case_result *cases, size_t count, int skipped,
                               const char *quote, char *out, size_t size);

/* Whether the summary fails the run: a failure, a disagreement, a backend compared with
 * nothing, or no backend that completed a replay. */
int suite_check_failed(const suite_check *s);

/* Seconds one replay of backend b took (the median), or NAN. */
double suite_replay_seconds(const case_result *c, size_t b);
/* Operations one replay of backend b ran. */
size_t suite_replay_ops(const case_result *c, size_t b);

#endif
