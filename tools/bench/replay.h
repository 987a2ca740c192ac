/*
 * replay.h - one replay of a workload's operations against one backend, or
 * against the homemade competitor, in a forked child process: the time of
 * each kind of operation, a hash of every event, and the world's memory at
 * the end.
 */
#ifndef PERCEPT_BENCH_REPLAY_H
#define PERCEPT_BENCH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/* The ticks whose ENTER and LEAVE events a replay counts, from tick 0. */
#define BENCH_MAX_TICKS 16

typedef struct replay_request {
    const bench_workload *wl;
    const char *backend; /* NULL: homemade (homemade.h), for a workload replay_homemade_fits() */
    size_t op_limit;     /* run ops [0, op_limit) only */
    /* Each tick's moves, teleports and turns in one percept_tick() call,
     * timed as moves (per entry) and its events hashed with the index of the
     * tick's first such operation; the other operations stay single calls. */
    int ticked;
    size_t threads; /* percept_options.threads (0: the config's); homemade's threads */
} replay_request;

typedef struct replay_result {
    int failed;                  /* the world could not be made, a call failed, or the child died */
    char error[400];             /* with the rest, under PIPE_BUF bytes */
    double ns[OP_KIND_COUNT];    /* the time of all operations of each kind */
    uint64_t ops[OP_KIND_COUNT]; /* how many: a tick's entries count as moves */
    uint64_t ticks;              /* percept_tick() calls; homemade: its ticks after tick 0 */
    uint64_t hash;               /* of every event and the call that caused it, in any order */
    uint64_t events;
    /* ENTER and LEAVE events of the world's first sense in each tick */
    uint64_t enters[BENCH_MAX_TICKS], leaves[BENCH_MAX_TICKS];
    size_t alive;  /* entities after the last operation */
    size_t memory; /* percept_memory_usage()'s total then */
} replay_result;

/* Runs the request in a child process and fills *out. */
void replay_run(const replay_request *req, replay_result *out);

/* Whether homemade can replay `wl`: every entity added in tick 0 and only
 * moved after, its first sense a plain range (no margin, cone, ignore mask,
 * tags or hiding). Homemade replays that sense alone; its time per tick is
 * charged to the tick's moves (tick 0's to its adds). */
int replay_homemade_fits(const bench_workload *wl);

/* The INI text of a world of `backend` for `wl`: its bounds, move_events
 * off, and in every sense cells of BENCH_RANGE. 1024 bytes hold it for a
 * name of up to 63 bytes. */
void replay_config(char *buf, size_t size, const char *backend, const bench_workload *wl);

/* Opens and closes a small world of `backend` as a replay would. */
int replay_check_backend(const char *backend, percept_error *err);

#endif
