/*
 * tuning.h - the world configuration each backend is benchmarked with: the
 * INI text, with cell sizes chosen from the workload's typical ranges.
 */
#ifndef PERCEPT_BENCH_TUNING_H
#define PERCEPT_BENCH_TUNING_H

#include <stddef.h>

#include "workload.h"

/* A backend's size parameter (cell_size of grid and hashgrid, tower_size of tower) and the
 * observer cell size, as multiples of a sense's typical range. */
#define BENCH_CELL_FACTOR 1.0
#define BENCH_OBSERVER_CELL_FACTOR 1.0

/*
 * Write into buf the INI text of a world for `backend` tuned to `wl`: its
 * bounds, move_events off, and per sense the backend's size parameter and
 * the observer grid's cell size. Returns 0, or -1 if buf is too small.
 */
int bench_tuning_ini(char *buf, size_t size, const char *backend, const bench_workload *wl);

#endif
