/*
 * report.h - what a run's cases come to: a plain table on standard output,
 * one line per workload, size and contender, for comparing one run with
 * another; and the Markdown report, a table per workload, the ticks against
 * homemade, and the scaling at constant density.
 */
#ifndef PERCEPT_BENCH_REPORT_H
#define PERCEPT_BENCH_REPORT_H

#include <stdio.h>

#include "suite.h"

typedef struct bench_report {
    const case_result *cases;
    size_t count;
    const char *command; /* the command line, as the report shows it */
    uint64_t seed;
    double seconds;
    const char *chart; /* the scaling chart as the report links it; NULL: none */
} bench_report;

/* The plain table's header lines, with columns for each of the `count`
 * thread counts of the ticked replays, and the lines of one case. */
void report_print_header(FILE *out, const size_t *threads, size_t count);
void report_print_case(FILE *out, const case_result *c);

/* How the events were checked, in a line ("FAILED ..." or "every ..."). */
void report_verdict(const bench_report *r, char *buf, size_t size);

/* How homemade's counts were checked, in a line; empty if it ran nowhere. */
void report_homemade_verdict(const bench_report *r, char *buf, size_t size);

/* Writes the Markdown report. Returns 0, or -1 on an I/O error. */
int report_write_markdown(FILE *out, const bench_report *r);

/* Writes the SVG chart of the sweep's time per move against N to `path`.
 * Returns 0, or -1 on an I/O error. */
int report_write_chart(const char *path, const bench_report *r);

#endif
