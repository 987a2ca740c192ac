/*
 * config.h - the INI configuration of a world, parsed and checked: world
 * bounds and reserve, where plugins live, MOVE notifications, and per sense
 * a backend and the parameters that are passed through to it.
 */
#ifndef PERCEPT_CONFIG_H
#define PERCEPT_CONFIG_H

#include <stddef.h>

#include "percept.h"
#include "percept/backend.h"

/* The largest configuration read, file or string: a config is a page of
 * text, and a device or a huge file must not be read for ever. */
#define CONFIG_MAX_BYTES (1u << 20)

typedef struct sense_config {
    char *backend; /* NULL: use the [percept] default */
    int backend_line;
    double observer_cell_size; /* 0: derive from the bounds */
    int observer_cell_size_line;
    percept_backend_param *params; /* key and value strings owned here */
    size_t param_count, param_cap;
} sense_config;

typedef struct pc_config {
    char *source; /* the file name, or the caller's label for a string */
    char *plugin_dir;
    int plugin_dir_line;
    char *backend; /* [percept] backend: the default for every sense */
    int backend_line;
    int move_events;
    int move_events_line;
    percept_bounds bounds;
    int bound_lines[4]; /* min_x, min_y, max_x, max_y */
    size_t reserve;     /* [world] reserve: entities to make room for at creation */
    int reserve_line;
    unsigned threads; /* [world] threads: how many threads a tick runs on */
    int threads_line;
    int sense_count; /* [world] senses, or sight, hearing and smell */
    char sense_names[PERCEPT_MAX_SENSES][32];
    int senses_line;
    sense_config sense[PERCEPT_MAX_SENSES];
} pc_config;

/*
 * Parse the INI file at `path` or, when `path` is NULL, the string `text`
 * labelled `label`. On failure fills *err and returns PERCEPT_ECONFIG,
 * PERCEPT_EIO or PERCEPT_ENOMEM; *cfg must still be freed.
 */
int pc_config_parse(const percept_allocator *a, pc_config *cfg, const char *path, const char *text,
                    const char *label, percept_error *err);
void pc_config_free(const percept_allocator *a, pc_config *cfg);

/* Whether `name` can name a backend: letters, digits, '_' and '-', so that
 * NAME.so is a file inside a plugin directory and nothing else. */
int pc_backend_name_ok(const char *name);

/*
 * Fill *err (no-op when NULL) and return `status`: the message starts with
 * its place, "SOURCE:", "SOURCE:LINE:", then "key 'KEY' in [SECTION]:" or
 * "[SECTION]:" for what is given (source, section and key may be NULL, line
 * 0), and the fields say the same.
 */
int pc_error(percept_error *err, int status, const char *source, int line, const char *section,
             const char *key, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

#endif
