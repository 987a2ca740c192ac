/*
 * plugin_check.h - the conformance checks of a backend plugin, driven
 * through its ops table with no core in between and compared with a
 * brute-force model of what the index holds. percept-plugin-check runs them
 * on the files it is given, tests/test_backend_ops on every shipped backend.
 */
#ifndef PERCEPT_PLUGIN_CHECK_H
#define PERCEPT_PLUGIN_CHECK_H

#include <stddef.h>

#include "percept/backend.h"

/* A plugin file, loaded (or not: ops NULL and load_error says why). */
typedef struct pc_plugin {
    char name[128]; /* the file's name without ".so": the name ops->name must have */
    char path[4096];
    const percept_backend_ops *ops;
    char load_error[512];
    int memory_required; /* fail "table" when memory_usage() is missing */
    /* What every instance is created with (none: its defaults), but in
     * the check of create()'s refusals. */
    const percept_backend_param *params;
    size_t param_count;
} pc_plugin;

/* Fills in p's path and name (the file must be NAME.so) without loading
 * it; 0, or -1 with p->load_error set. */
int pc_plugin_name(pc_plugin *p, const char *path);

/* Loads the plugin at `path` with dlopen(). 0, or -1 with p->load_error
 * set (dlerror()'s text): the "table" check then fails with it. */
int pc_plugin_load(pc_plugin *p, const char *path);

/* One check: 0 when the plugin passes, else -1 after printing why to
 * standard error ("backend 'NAME' fails CHECK: WHY"). */
typedef struct pc_check {
    const char *name;
    int (*run)(const pc_plugin *p);
} pc_check;

/* The checks in the order they run. The first, "table", checks the ops
 * table itself; run the others only on a plugin that passes it. */
extern const pc_check pc_checks[];
extern const size_t pc_check_count;

/* The plugin and the check running, for the reports and after a crash. */
extern const pc_plugin *pc_current;
extern const char *pc_current_check;

#endif
