/*
 * targets.h - the performance targets of the benchmark issue, checked
 * against a run's figures: met, missed, or not measured in this run.
 */
#ifndef PERCEPT_BENCH_TARGETS_H
#define PERCEPT_BENCH_TARGETS_H

#include <stddef.h>

#include "suite.h"

typedef enum target_status { TARGET_MET, TARGET_MISSED, TARGET_UNMEASURED } target_status;

typedef struct target_result {
    const char *name;
    const char *goal;
    char measured[512];
    target_status status;
} target_result;

/* Five goals, the move and scaling ones measured twice: with one call per
 * move, and with a tick's moves in percept_move_many() calls. */
#define TARGET_COUNT 7

/* Evaluate every target over the run's cases. */
void targets_evaluate(const case_result *cases, size_t case_count, target_result out[TARGET_COUNT]);
const char *target_status_name(target_status s);
/* The status as the report and the summary show it: in a --quick run (`quick`),
 * whose sizes are too small to judge by, "not judged (--quick)" instead of met
 * or missed. */
const char *target_status_label(const target_result *t, int quick);

/* The case of `workload` at size n, batched (CASE_BATCHED) or not, or NULL. */
const case_result *targets_find_case(const case_result *cases, size_t case_count,
                                     const char *workload, size_t n, int batched);
/* The fewest sweep sizes a scaling exponent is computed from, and the factor in N they
 * must span at least: the report shows no exponent from less, nor do the targets judge one. */
#define TARGETS_SWEEP_MIN_SIZES 3
#define TARGETS_SWEEP_SPAN 16

/* The scaling exponent of backend `name` over the sweep cases, batched or not (NAN over
 * fewer than TARGETS_SWEEP_MIN_SIZES sizes, or a span under TARGETS_SWEEP_SPAN); *points
 * receives the number of sizes used, *lo and *hi the extreme sizes. */
double targets_sweep_exponent(const case_result *cases, size_t case_count, const char *name,
                              int batched, size_t *points, size_t *lo, size_t *hi);

#endif
