/*
 * suite.h - one benchmark case (a workload at one size) run against every
 * backend, and homemade, in interleaved rounds, its events checked against
 * bruteforce's, and reduced to the figures the report prints.
 */
#ifndef PERCEPT_BENCH_SUITE_H
#define PERCEPT_BENCH_SUITE_H

#include <stdio.h>

#include "replay.h"
#include "workload.h"

#define BENCH_MAX_BACKENDS 16
#define BENCH_MAX_ROUNDS 16
#define BENCH_MAX_THREADS 8 /* thread counts of one run */
#define BENCH_REFERENCE "bruteforce"
#define BENCH_HOMEMADE "homemade"
/* bruteforce, O(N) a query, runs up to this many entities: above, the
 * backends are held to each other. */
#define BENCH_REFERENCE_LIMIT 10000

/* The ways a case is replayed: MODE_SINGLE makes one call per operation;
 * mode 1 + i makes each tick's changes in one percept_tick() call on
 * plan.threads[i] threads (replay_request.ticked). */
#define MODE_SINGLE 0
#define BENCH_MAX_MODES (1 + BENCH_MAX_THREADS)

typedef struct case_plan {
    const char *workload;
    size_t n, ticks, rounds;
    size_t move_limit; /* single calls stop this many operations after tick 0; 0: never */
    int warmup;        /* replay the populating tick once per backend, untimed, first */
    int ticked;        /* replay tick by tick too, on each of threads[] */
    size_t threads[BENCH_MAX_THREADS], thread_count;
    int in_sweep; /* one of --sweep */
} case_plan;

/* The modes a case runs: MODE_SINGLE, then one per thread count if ticked. */
static inline int case_modes(const case_plan *p)
{
    return 1 + (p->ticked ? (int)p->thread_count : 0);
}

typedef struct backend_figures {
    int ran; /* 0: not run (bruteforce above its limit, homemade one call at a time) */
    int failed;
    char error[448];
    double ns[OP_KIND_COUNT]; /* median time per operation over the rounds; NAN: none.
                                 Ticked: ns[OP_MOVE] is per entry of a tick */
    double per_tick;          /* ticked: median time per tick call; NAN: none */
    double bytes_per_entity;  /* percept_memory_usage() at the end over the entities then */
} backend_figures;

typedef struct case_result {
    case_plan plan;
    percept_bounds bounds;
    /* The backends, then BENCH_HOMEMADE if the workload suits it
     * (replay_homemade_fits()): it runs in the ticked modes only. */
    const char *contenders[BENCH_MAX_BACKENDS + 1];
    size_t contender_count;
    int homemade; /* contenders[contender_count - 1] is homemade */
    backend_figures fig[BENCH_MAX_MODES][BENCH_MAX_BACKENDS + 1];
    /* Whose events each mode's replays were held to; NULL: no one's. */
    const char *checked_against[BENCH_MAX_MODES];
    int homemade_checked; /* homemade's counts were compared with percept's in every mode */
    int failed;           /* a replay failed or its events differ */
} case_result;

/* Whether contender b of c is homemade. */
static inline int case_is_homemade(const case_result *c, size_t b)
{
    return c->homemade && b + 1 == c->contender_count;
}

/* Generates the workload of `plan`, replays it against each backend, and
 * homemade, in rounds, checks every replay's events and fills *out;
 * failures go to `log`. Returns 0, or -1 when out of memory. */
int suite_run(case_result *out, const case_plan *plan, const char *const *backends,
              size_t backend_count, uint64_t seed, FILE *log);

#endif
