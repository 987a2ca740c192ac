/*
 * replay.h - replays a workload's operations against one backend in a
 * forked child process, timing each kind of operation and each tick, hashing
 * every event, counting allocations and measuring the resident memory used.
 * How many operations of each kind a replay runs depends on the workload and
 * op_limit alone: the caller counts them (suite.c), not the timed loop.
 */
#ifndef PERCEPT_BENCH_REPLAY_H
#define PERCEPT_BENCH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "tuning.h"
#include "workload.h"

typedef struct replay_request {
    const bench_workload *wl;
    const char *backend;
    const bench_params *params; /* the --param settings (for `backend`, and others); NULL: none */
    size_t op_limit;            /* run ops [0, op_limit) only */
    const size_t *checkpoints;  /* ascending op counts after which the event hash is taken */
    size_t checkpoint_count;
    double timeout; /* seconds after which the replay is stopped (timed_out); 0: none */
    /* Each maximal run of moves and teleports within a tick is made by one
     * percept_move_many() call, timed as moves; its events are hashed with the
     * index of the run's first operation. */
    int batched;
} replay_request;

typedef struct replay_result {
    int failed;      /* the world could not be made, a call failed, or the child died */
    int timed_out;   /* stopped after the request's timeout (failed is set too) */
    char error[768]; /* why, when failed */
    /* Per operation kind (in a batched replay teleports count as moves):
     * nanoseconds, events delivered, allocator calls. */
    double ns[OP_KIND_COUNT];
    uint64_t events[OP_KIND_COUNT], allocs[OP_KIND_COUNT];
    /* The nanoseconds up to the end of tick 1: what the reference's prefix replays. */
    double prefix_ns[OP_KIND_COUNT];
    uint64_t enters, leaves; /* events by kind, over the whole replay */
    double *tick_ns;         /* [ticks]: complete ticks only, tick 0 first */
    size_t ticks;
    uint64_t *hashes; /* [hash_count]: the event hash at each checkpoint reached */
    size_t hash_count;
    double rss_bytes;  /* growth of the peak resident set during the replay; NAN: not
                          measured (a replay in this process: see replay_forks()) */
    double heap_bytes; /* peak of the bytes the library held through its allocator (0: unknown) */
} replay_result;

/* The kind an operation is timed and counted as: in a batched replay the
 * moves and teleports of a run are one call, so a teleport counts as a move. */
static inline uint32_t replay_timed_kind(uint32_t kind, int batched)
{
    return batched && kind == OP_TELEPORT ? OP_MOVE : kind;
}

/* Runs the request in a child process and fills *out; out->failed and out->error
 * say whether and why it failed, including a child that could not be started. */
void replay_run(const replay_request *req, replay_result *out);

void replay_result_free(replay_result *r);

/*
 * Whether replay_run() forks a child for each replay: yes unless
 * PERCEPT_BENCH_NO_FORK is set to anything but "" or "0", for profilers that do
 * not follow fork(). Without a child the replays run one after another in this
 * process: no timeout stops them, and their resident memory is not measured
 * (rss_bytes is NAN), as the process's peak holds every earlier replay's.
 */
int replay_forks(void);

/* The cost of one clock read, in nanoseconds: the timing's resolution. */
double replay_clock_cost_ns(void);

#endif
