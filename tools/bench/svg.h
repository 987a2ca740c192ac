/*
 * svg.h - log-log line charts as plain SVG text, so the report shows its
 * figures at a glance without any plotting tool.
 */
#ifndef PERCEPT_BENCH_SVG_H
#define PERCEPT_BENCH_SVG_H

#include <stddef.h>

/* How axis values are labelled. */
typedef enum svg_format {
    SVG_COUNT, /* 1k, 10k, 1M */
    SVG_NS,    /* nanoseconds: 100 ns, 1 µs, 10 ms */
    SVG_PLAIN  /* 0.1, 1, 10, 100 */
} svg_format;

typedef struct svg_series {
    const char *name;
    int colour; /* palette index: keeps one backend's colour across charts */
    const double *x, *y;
    size_t n;   /* points with a value <= 0 or NaN are skipped */
    int dashed; /* a dashed line with hollow points: a variant of the solid series of its colour */
} svg_series;

typedef struct svg_chart {
    const char *title, *x_label, *y_label;
    svg_format x_format, y_format;
    double ref_y;          /* > 0: a dashed horizontal line at this value, e.g. a target */
    const char *ref_label; /* its label */
} svg_chart;

/* Write a chart with log-scaled axes to `path`. Returns 0, or -1 on an I/O error. */
int svg_write_chart(const char *path, const svg_chart *chart, const svg_series *series,
                    size_t count);

#endif
