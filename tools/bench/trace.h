/*
 * trace.h - a user's perception trace (docs/trace-format.md, version 1)
 * loaded whole into a benchmark workload, so that every backend replays it
 * as it replays a named workload.
 */
#ifndef PERCEPT_BENCH_TRACE_H
#define PERCEPT_BENCH_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "workload.h"

/* The shortest slice (bench_trace.slice), in operations. */
#define BENCH_TRACE_MIN_SLICE 1024

/* Where a sense's typical range came from (bench_trace.range_source). */
#define TRACE_RANGE_DEFAULT (-1) /* no sense has a non-zero range: BENCH_RANGE */

typedef struct bench_trace {
    /* The operations in trace order. Each add makes a new entity with the next
     * dense ID (its profile's index), so a removed ID added again is another
     * entity; every other op names the dense ID its trace ID stands for then.
     * Tick 0 is the trace's leading adds; the rest is cut into slices of
     * `slice` operations (the largest of the leading adds, the most entities
     * alive at once and BENCH_TRACE_MIN_SLICE), where the event hashes are
     * compared. */
    bench_workload wl;
    char name[256];      /* the file's base name, or "<stdin>" */
    unsigned long lines; /* lines in the file */
    size_t slice;
    int bounds_from_world; /* 1: the world line's bounds; 0: the positions' bounding box */
    int widened;           /* the bounding box was narrower than a typical range on an axis */
    size_t range_samples[PERCEPT_SENSE_COUNT]; /* the non-zero ranges given to each sense */
    /* The sense whose median is this sense's typical range (itself when it has
     * samples), or TRACE_RANGE_DEFAULT. */
    int range_source[PERCEPT_SENSE_COUNT];
    uint64_t op_counts[OP_KIND_COUNT];
} bench_trace;

/*
 * Reads the trace at `path` ("-": standard input) into *t, checking as it
 * goes what a replay would refuse (a malformed line, an add of an ID in the
 * world, any other command on an ID that is not), so that no replay can fail
 * on the trace's fault. Returns 0; -1 with a message in err: "PATH:LINE:
 * message" for a fault of the trace, "cannot open trace 'PATH': reason" or
 * "cannot read ..." otherwise; -2 when out of memory. A last line without a
 * newline is loaded, with a warning to `log`.
 */
int bench_trace_load(bench_trace *t, const char *path, FILE *log, char *err, size_t size);
void bench_trace_free(bench_trace *t);

#endif
