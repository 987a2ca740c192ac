/*
 * replay.h - one replay of a workload's operations against one backend, in a
 * forked child process: the time of each kind of operation, a hash of every
 * event, and the world's memory at the end.
 */
#ifndef PERCEPT_BENCH_REPLAY_H
#define PERCEPT_BENCH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

typedef struct replay_request {
    const bench_workload *wl;
    const char *backend;
    size_t op_limit; /* run ops [0, op_limit) only */
    /* Each run of moves and teleports within a tick in one percept_move_many()
     * call, timed as moves, its events hashed with its first operation's index. */
    int batched;
} replay_request;

typedef struct replay_result {
    int failed;               /* the world could not be made, a call failed, or the child died */
    char error[400];          /* with the rest, under PIPE_BUF bytes */
    double ns[OP_KIND_COUNT]; /* the time of all operations of each kind */
    uint64_t hash;            /* of every event and the call that caused it, in any order */
    uint64_t events;
    size_t memory; /* percept_memory_usage()'s total after the last operation */
} replay_result;

/* The kind an operation is timed and counted as: in a batched replay the
 * moves and teleports of a run are one call, so a teleport counts as a move. */
static inline uint32_t replay_timed_kind(uint32_t kind, int batched)
{
    return batched && kind == OP_TELEPORT ? OP_MOVE : kind;
}

/* Runs the request in a child process and fills *out. */
void replay_run(const replay_request *req, replay_result *out);

/* The INI text of a world of `backend` for `wl`: its bounds, move_events
 * off, and in every sense cells of BENCH_RANGE. 1024 bytes hold it for a
 * name of up to 63 bytes. */
void replay_config(char *buf, size_t size, const char *backend, const bench_workload *wl);

/* Opens and closes a small world of `backend` as a replay would. */
int replay_check_backend(const char *backend, percept_error *err);

#endif
