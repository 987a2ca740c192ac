/*
 * tuning.h - the world configuration each backend is benchmarked with: the
 * INI text, with cell sizes chosen from the workload's typical ranges, and
 * the parameters the user gives a backend (--param BACKEND.KEY=VALUE).
 */
#ifndef PERCEPT_BENCH_TUNING_H
#define PERCEPT_BENCH_TUNING_H

#include <stddef.h>

#include "workload.h"

/* A backend's size parameter (cell_size of grid and hashgrid, tower_size of tower) and the
 * observer cell size, as multiples of a sense's typical range. */
#define BENCH_CELL_FACTOR 1.0
#define BENCH_OBSERVER_CELL_FACTOR 1.0

/* The most --param settings a run takes, and the longest KEY and VALUE, in
 * bytes: a line "KEY = VALUE" then stays within the 198 characters the
 * library reads of a line, and a world's INI text within BENCH_INI_SIZE. */
#define BENCH_MAX_PARAMS 32
#define BENCH_PARAM_KEY_MAX 63
#define BENCH_PARAM_VALUE_MAX 100

/* One --param BACKEND.KEY=VALUE: `KEY = VALUE` in every sense section of the
 * worlds of BACKEND. */
typedef struct bench_param {
    const char *text;   /* as given, BACKEND.KEY=VALUE: messages name it so */
    size_t backend_len; /* BACKEND is the first backend_len bytes of text */
    char key[BENCH_PARAM_KEY_MAX + 1];
    const char *value; /* the rest of text, after the first '=' */
} bench_param;

typedef struct bench_params {
    bench_param p[BENCH_MAX_PARAMS];
    size_t count;
} bench_params;

/* The size of a buffer that holds any world's INI text (bench_tuning_ini()):
 * 1024 bytes for the sections percept-bench writes itself, with a backend
 * name of up to 255 bytes (the longest --backends takes), and in each sense
 * section every --param setting, "KEY = VALUE\n". */
#define BENCH_INI_SIZE                                                                             \
    (1024 +                                                                                        \
     PERCEPT_SENSE_COUNT * BENCH_MAX_PARAMS * (BENCH_PARAM_KEY_MAX + BENCH_PARAM_VALUE_MAX + 4))

/*
 * Adds `text`, the value of a --param option, to *params, if it is a
 * setting BACKEND.KEY=VALUE percept-bench can write into a configuration
 * (see percept-bench --help), not the second of its BACKEND.KEY nor one
 * more than BENCH_MAX_PARAMS. Whether BACKEND runs, and whether it takes
 * KEY = VALUE, is for the caller to check. Returns 0, or -1 and why in
 * `why` (a text to follow "--param TEXT: ").
 */
int bench_params_add(bench_params *params, const char *text, char *why, size_t why_size);

/* Whether `p` is a setting for `backend`. */
int bench_param_is_for(const bench_param *p, const char *backend);

/* The setting of `key` for `backend` in `params` (NULL: none), or NULL. */
const bench_param *bench_params_find(const bench_params *params, const char *backend,
                                     const char *key);

/* The name of `backend`'s size parameter, which percept-bench tunes, or NULL when it
 * takes none. */
const char *bench_tuning_size_param(const char *backend);

/*
 * Write into buf the INI text of a world for `backend` tuned to `wl`: its
 * bounds, move_events off, and per sense the backend's size parameter and
 * the observer grid's cell size, then the settings `params` (may be NULL)
 * gives `backend`, one of which may replace the tuned size. Returns 0, or
 * -1 if buf is too small (BENCH_INI_SIZE is not).
 */
int bench_tuning_ini(char *buf, size_t size, const char *backend, const bench_params *params,
                     const bench_workload *wl);

/* The name the library's messages give the INI text of a world of `backend`. */
void bench_tuning_label(char *buf, size_t size, const char *backend);

/* Why a world of the INI text named `label` did not open: the library's message, with
 * the text named by `label` and without its line numbers: the user never sees it. */
void bench_tuning_open_error(char *buf, size_t size, const percept_error *err, const char *label);

/*
 * Opens, and closes at once, a world of `backend` configured as a replay
 * would be, with the settings `params` (may be NULL) gives it, in a small
 * world: so that a setting the backend refuses is found before anything
 * runs. Returns 0, or -1 with *err filled in by the library (a status of
 * PERCEPT_ENOMEM when its text did not fit its buffer).
 */
int bench_tuning_try(const char *backend, const bench_params *params, percept_error *err);

#endif
