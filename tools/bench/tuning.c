/*
 * tuning.c - the world configuration each backend is benchmarked with: the
 * INI text, with cell sizes chosen from the workload's typical ranges.
 */
#include "tuning.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Every cell array stays below this many cells, whatever the world's shape. */
#define MAX_CELLS (1u << 20)

/* The name of `backend`'s size parameter, or NULL when it takes none. */
static const char *size_param(const char *backend)
{
    if (strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0)
        return "cell_size";
    if (strcmp(backend, "tower") == 0)
        return "tower_size";
    return NULL;
}

/* A size near `want` that keeps the bounds within MAX_CELLS cells. */
static double fit_cells(const percept_bounds *b, double want)
{
    double w = b->max_x - b->min_x, h = b->max_y - b->min_y, c = want;
    while ((w / c + 2) * (h / c + 2) > MAX_CELLS)
        c *= 2;
    return c;
}

typedef struct out {
    char *buf;
    size_t size, len;
    int overflow;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->size - o->len) {
        o->overflow = 1;
        return;
    }
    o->len += (size_t)n;
}

int bench_tuning_ini(char *buf, size_t size, const char *backend, const bench_workload *wl)
{
    out o = {buf, size, 0, 0};
    const percept_bounds *b = &wl->bounds;
    const char *param = size_param(backend);

    if (size == 0)
        return -1;
    buf[0] = '\0';
    put(&o, "[percept]\nbackend = %s\nmove_events = off\n", backend);
    put(&o, "[world]\nmin_x = %.17g\nmin_y = %.17g\nmax_x = %.17g\nmax_y = %.17g\n", b->min_x,
        b->min_y, b->max_x, b->max_y);
    /* Every sense gets the sizes of the largest typical range, as the README
     * advises: identical sections share one backend instance and one observer
     * grid, and a move then asks each index once for all three senses. */
    double r = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (wl->typical_range[s] > r)
            r = wl->typical_range[s];
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        put(&o, "[%s]\nobserver_cell_size = %.17g\n", percept_sense_name((percept_sense)s),
            fit_cells(b, BENCH_OBSERVER_CELL_FACTOR * r));
        if (param)
            put(&o, "%s = %.17g\n", param, fit_cells(b, BENCH_CELL_FACTOR * r));
    }
    return o.overflow ? -1 : 0;
}
