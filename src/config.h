/*
 * config.h - the INI configuration of a world, parsed and checked: world
 * bounds, where plugins live, MOVE notifications, and per sense a backend
 * and the parameters that are passed through to it.
 */
#ifndef PERCEPT_CONFIG_H
#define PERCEPT_CONFIG_H

#include <stddef.h>

#include "percept.h"
#include "percept/backend.h"

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
    sense_config sense[PERCEPT_SENSE_COUNT];
} pc_config;

/*
 * Parse the INI file at `path` or, when `path` is NULL, the string `text`
 * labelled `label`. On failure fills *err with "SOURCE:LINE: ..." and returns
 * PERCEPT_ECONFIG, PERCEPT_EIO or PERCEPT_ENOMEM; *cfg must still be freed.
 */
int pc_config_parse(const percept_allocator *a, pc_config *cfg, const char *path, const char *text,
                    const char *label, percept_error *err);
void pc_config_free(const percept_allocator *a, pc_config *cfg);

/* Whether `name` can name a backend: letters, digits, '_' and '-', so that
 * NAME.so is a file inside a plugin directory and nothing else. */
int pc_backend_name_ok(const char *name);

/* " (read 'VALUE')" for a message about a bad value, cut to fit, with a
 * hint when a '#' suggests a comment inih took as part of the value. */
void pc_describe_value(char *out, size_t size, const char *value);

/* Store a formatted message in *err (no-op when err is NULL), which names
 * no place: reason 0, and section, key, option and senses empty. */
void pc_error_set(percept_error *err, int status, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The same for a message that starts by naming a place ("FILE:LINE: key 'K'
 * in [S]"): the text is PLACE ": " REASON, and err->reason points at REASON. */
void pc_error_set_at(percept_error *err, int status, int line, const char *place, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));

/* The same for a message about a key, placed "SOURCE:LINE: key 'KEY' in
 * [SECTION]", which also says so in err's fields for programs. */
void pc_error_set_key(percept_error *err, int status, const char *source, int line,
                      const char *section, const char *key, unsigned senses, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* What the message in *err is about, for programs (see percept_error):
 * each of section, key and option may be NULL for none. */
void pc_error_about(percept_error *err, const char *section, const char *key, const char *option,
                    unsigned senses);

/* PERCEPT_SENSE_BIT() of the sense a section is named after, or 0. */
unsigned pc_section_senses(const char *section);

#endif
