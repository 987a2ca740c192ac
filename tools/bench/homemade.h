/*
 * homemade.h - the benchmark's honest competitor: what a game programmer
 * would write in an afternoon instead of using percept. Every tick it sorts
 * all entities into a uniform grid, recomputes each one's sorted list of the
 * targets within its range and diffs it against the last tick's, counting
 * the pairs that entered and left. One sense with plain ranges (no margins,
 * cones, tags or hiding) and a population fixed when it is opened.
 */
#ifndef PERCEPT_BENCH_HOMEMADE_H
#define PERCEPT_BENCH_HOMEMADE_H

#include <percept.h>

#include <stddef.h>
#include <stdint.h>

/* The most threads a tick runs on. */
#define HOMEMADE_MAX_THREADS 64

typedef struct homemade homemade;

/*
 * Entities 0 to n - 1 in `bounds`, entity i perceiving the targets T with
 * dx*dx + dy*dy + dz*dz <= range[i]*range[i] (percept's relation for a
 * plain range); every entity starts at (0, 0, 0). A tick runs on `threads`
 * threads, 1 to HOMEMADE_MAX_THREADS. NULL when out of memory or a thread
 * cannot start.
 */
homemade *homemade_open(const percept_bounds *bounds, size_t n, const double *range,
                        size_t threads);

/* Puts entity `id` (below n) at (x, y, z) for the next tick. */
void homemade_place(homemade *h, uint32_t id, double x, double y, double z);

/*
 * Recomputes every entity's neighbour list from the positions placed so
 * far and counts the (observer, target) pairs that entered and left since
 * the last tick (in the first, every pair enters). Allocates only when a
 * tick needs more room than every tick before. Returns 0, or -1 when out of
 * memory (the counts are then unknown).
 */
int homemade_tick(homemade *h, uint64_t *enters, uint64_t *leaves);

void homemade_close(homemade *h);

#endif
