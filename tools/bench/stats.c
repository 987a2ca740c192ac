/*
 * stats.c - the few statistics the benchmark reports: median, minimum,
 * percentiles and the slope of a least-squares line through log-log points;
 * and how a duration is written.
 */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int compare_doubles(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

double stats_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double stats_min(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        if (isnan(m) || v[i] < m)
            m = v[i];
    return m;
}

double stats_percentile(double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, compare_doubles);
    double rank = ceil(p / 100.0 * (double)n);
    size_t i = rank < 1 ? 0 : (size_t)rank - 1;
    return v[i < n ? i : n - 1];
}

double stats_loglog_slope(const double *x, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0))
            continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        m++;
    }
    if (m < 2)
        return NAN;
    double den = (double)m * sxx - sx * sx;
    if (fabs(den) < 1e-12)
        return NAN;
    return ((double)m * sxy - sx * sy) / den;
}

void bench_fmt_seconds(char *buf, size_t size, double seconds)
{
    /* Whole seconds from one up; below, two significant digits at most. */
    if (seconds >= 0.95)
        snprintf(buf, size, "%.0f s", seconds);
    else if (seconds >= 0.001)
        snprintf(buf, size, "%.2g s", seconds);
    else if (seconds > 0)
        snprintf(buf, size, "under 0.001 s");
    else
        snprintf(buf, size, "0 s");
}
