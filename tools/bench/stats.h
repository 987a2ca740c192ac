/*
 * stats.h - the few statistics the benchmark reports: median, minimum,
 * percentiles and the slope of a least-squares line through log-log points;
 * and how a duration is written.
 */
#ifndef PERCEPT_BENCH_STATS_H
#define PERCEPT_BENCH_STATS_H

#include <stddef.h>

/* The median of v[0..n-1] (v is reordered), or NAN when n is 0. */
double stats_median(double *v, size_t n);
double stats_min(const double *v, size_t n);
/* The p-th percentile (0..100, nearest rank) of v (reordered), or NAN when n is 0. */
double stats_percentile(double *v, size_t n, double p);
/* The slope of log(y) against log(x) by least squares over points with x, y > 0;
 * NAN when fewer than two such points or all x are equal. */
double stats_loglog_slope(const double *x, const double *y, size_t n);

/* A duration for people: "270 s", "2 s", and below a second "0.4 s" or "0.04 s", not
 * "0 s". */
void bench_fmt_seconds(char *buf, size_t size, double seconds);

#endif
