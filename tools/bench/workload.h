/*
 * workload.h - the benchmark's named workloads: each is generated once, from
 * a fixed seed, into a flat array of operations that every backend replays.
 */
#ifndef PERCEPT_BENCH_WORKLOAD_H
#define PERCEPT_BENCH_WORKLOAD_H

#include <percept.h>

#include <stddef.h>
#include <stdint.h>

/* The kinds of operation a workload is made of; timed separately. */
typedef enum bench_op_kind {
    OP_ADD = 0,      /* an entity enters (the initial population, churn) */
    OP_MOVE = 1,     /* a step of a few tenths of a range at most */
    OP_TELEPORT = 2, /* a move to anywhere in the world */
    OP_REMOVE = 3,   /* an entity leaves */
    OP_LOGIN = 4,    /* an add into a login storm: many entities at one spot */
    OP_TURN = 5,     /* a new facing: (x, y, z) */
    OP_EMIT = 6,     /* a stimulus of the workload's emit_sense from entity id at (x, y, z) */
    OP_KIND_COUNT = 7
} bench_op_kind;

/* One call to replay. 32 bytes: millions of them are held at once. */
typedef struct bench_op {
    double x, y, z;
    uint32_t id;
    uint32_t kind; /* bench_op_kind */
} bench_op;

/* The senses of every workload's world. */
#define BENCH_SENSES 3

/* What an entity perceives with when it is added; indexed by its ID. */
typedef struct bench_profile {
    double range[BENCH_SENSES];
    uint32_t desc; /* the rest of its description: bench_workload.descs[desc] */
} bench_profile;

/* The most descriptions a workload's entities share. */
#define BENCH_DESCS 5

typedef struct bench_workload {
    const char *name;
    size_t n;      /* the nominal entity count */
    bench_op *ops; /* every operation, in replay order */
    size_t op_count;
    size_t *tick_end;        /* tick t is ops [tick_end[t-1], tick_end[t]); tick 0 populates */
    size_t tick_count;       /* including tick 0 */
    bench_profile *profiles; /* [profile_count]: by entity ID */
    size_t profile_count;
    percept_bounds bounds;
    /* Descriptions but the position and ranges; descs[0] is an entity
     * with ranges alone, as every workload of version 1 has. */
    percept_entity_desc descs[BENCH_DESCS];
    const char *senses[BENCH_SENSES]; /* the world's senses; NULL: the default ones */
    double cell;                      /* cells of the world's indexes; 0: BENCH_RANGE */
    int moves_3d;                     /* moves carry a height: made by percept_move3() */
    percept_sense emit_sense;
} bench_workload;

/* The workloads, in report order: each one's name and a one-line description. */
typedef struct bench_workload_info {
    const char *name, *description;
} bench_workload_info;

extern const bench_workload_info bench_workloads[];
extern const size_t bench_workload_count;

/* The index of workload `name` in bench_workloads[], or bench_workload_count if unknown. */
size_t bench_workload_index(const char *name);

/* The base sight range: the unit every workload's geometry is expressed in,
 * and the size of the worlds' cells. */
#define BENCH_RANGE 10.0

/*
 * Generate workload `name` with `n` entities and `ticks` movement ticks
 * (after the populating tick 0) from `seed`. Returns 0, or -1 when out of
 * memory or the name is unknown.
 */
int bench_workload_generate(bench_workload *wl, const char *name, size_t n, size_t ticks,
                            uint64_t seed);
void bench_workload_free(bench_workload *wl);

const char *bench_op_kind_name(int kind);

#endif
