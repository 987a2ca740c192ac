/*
 * suite.h - one benchmark case (a workload at one size) run against every
 * backend in interleaved rounds, its events checked against bruteforce's,
 * and reduced to the figures the report prints.
 */
#ifndef PERCEPT_BENCH_SUITE_H
#define PERCEPT_BENCH_SUITE_H

#include <stdio.h>

#include "replay.h"
#include "workload.h"

#define BENCH_MAX_BACKENDS 16
#define BENCH_MAX_ROUNDS 16
#define BENCH_REFERENCE "bruteforce"
/* bruteforce, O(N) a query, runs up to this many entities: above, the
 * backends are held to each other. */
#define BENCH_REFERENCE_LIMIT 10000

/* A move per call, or a tick's moves in one percept_move_many() call: a
 * mode is replay_request.batched. */
enum { MODE_SINGLE, MODE_BATCHED, MODE_COUNT };

typedef struct case_plan {
    const char *workload;
    size_t n, ticks, rounds;
    size_t move_limit; /* single calls stop this many operations after tick 0; 0: never */
    int warmup;        /* replay the populating tick once per backend, untimed, first */
    int batched;       /* replay in batches too */
    int in_sweep;      /* one of --sweep */
} case_plan;

typedef struct backend_figures {
    int ran; /* 0: not run (bruteforce above its limit) */
    int failed;
    char error[448];
    double ns[OP_KIND_COUNT]; /* median time per operation over the rounds; NAN: none */
    double bytes_per_entity;  /* percept_memory_usage() at the end over the entities then */
} backend_figures;

typedef struct case_result {
    case_plan plan;
    percept_bounds bounds;
    const char *const *backends;
    size_t backend_count;
    backend_figures fig[MODE_COUNT][BENCH_MAX_BACKENDS];
    /* Whose events each mode's replays were held to; NULL: no one's. */
    const char *checked_against[MODE_COUNT];
    int failed; /* a replay failed or its events differ */
} case_result;

/* Generates the workload of `plan`, replays it against each backend in
 * rounds, checks every replay's events and fills *out; failures go to `log`.
 * Returns 0, or -1 when out of memory. */
int suite_run(case_result *out, const case_plan *plan, const char *const *backends,
              size_t backend_count, uint64_t seed, FILE *log);

#endif
