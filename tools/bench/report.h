/*
 * report.h - the benchmark's report: docs/BENCHMARKS.md in Markdown, and
 * the SVG charts it shows.
 */
#ifndef PERCEPT_BENCH_REPORT_H
#define PERCEPT_BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "machine.h"
#include "suite.h"
#include "trace.h"
#include "tuning.h"

typedef struct bench_report {
    const bench_machine *machine;
    const case_result *cases;
    size_t case_count;
    const char *const *backends;
    size_t backend_count;
    const char *command; /* the command line, as run */
    const char *date;
    uint64_t seed;
    double seconds;
    const char *svg_dir;  /* charts are written here; NULL: no charts */
    const char *svg_link; /* what the Markdown puts before a chart's file name */
    const char *notes;    /* hand-written analysis appended to the report, or NULL */
    const char *label;    /* what was measured (--label: a commit, say), or NULL */
    int quick;            /* a --quick run: sizes too small to judge the targets by */
    /* A --trace run: the one case replays this trace, and the report is about it
     * alone (no targets, no charts, none of the named workloads' sections). */
    const bench_trace *trace;
    const bench_params *params; /* what --param gave the backends, or NULL */
    /* PERCEPT_BENCH_NO_FORK: the replays ran one after another in this process (see
     * replay_forks()), none was stopped for its time, and no memory was measured. */
    int in_process;
} bench_report;

/* The longest --label, in bytes: one row of the machine table. */
#define BENCH_LABEL_MAX 100
#define BENCH_LABEL_MAX_TEXT "100"

/* Write the Markdown report. Returns 0, or -1 on an output error. */
int report_write_markdown(FILE *f, const bench_report *r);
/* Write the charts into r->svg_dir. Returns the number of charts that failed. */
int report_write_charts(const bench_report *r, FILE *log);

#endif
