/*
 * plugin_check.h - the conformance checks of a backend plugin, driven
 * through its ops table with no core in between: the table itself,
 * parameters, the query contract (a superset of the exact answer, never a
 * slot that is not in the index, no allocation), reserve() under a failing
 * host allocator, and memory_usage() against what the instance holds.
 * percept-plugin-check runs them on the plugins it is given, and
 * tests/test_backend_ops on every plugin of a directory.
 */
#ifndef PERCEPT_PLUGIN_CHECK_H
#define PERCEPT_PLUGIN_CHECK_H

#include <stddef.h>

#include "percept/backend.h"

/* A plugin file, loaded (or not: ops NULL and load_error says why). */
typedef struct pc_plugin {
    char name[128]; /* the file's name without ".so": the name ops->name must have */
    char path[4096];
    void *handle;
    const percept_backend_ops *ops;
    char load_error[512];
    int memory_required; /* memory_usage() must exist (it is checked when it does) */
} pc_plugin;

/*
 * Fills in p's path and name for the plugin at `path` without loading it.
 * Returns 0, or -1 with p->load_error set when the file name is not
 * NAME.so.
 */
int pc_plugin_locate(pc_plugin *p, const char *path);

/*
 * Loads the plugin at `path` (a file ending in ".so") into *p. Returns 0,
 * or -1 with p->load_error set: the "table" check then reports it, so a
 * plugin that cannot be loaded fails like one with a bad table.
 */
int pc_plugin_load(pc_plugin *p, const char *path);
void pc_plugin_unload(pc_plugin *p);

/* One check: returns 0 when the plugin passes, PC_NOT_APPLICABLE when the
 * check has nothing to test in it (size_limits knows the size parameters of
 * the shipped backends only), else -1 after reporting why. */
#define PC_NOT_APPLICABLE 1
typedef struct pc_check {
    const char *name;
    int (*run)(const pc_plugin *p);
} pc_check;

/* The checks in the order they run. The first, "table", checks the ops
 * table itself: run it first, and the others only on a plugin that passes
 * it, since they drive that table. */
extern const pc_check pc_checks[];
extern const size_t pc_check_count;

/* Where failures go, one line each ("backend 'NAME' fails CHECK: WHY"): by
 * default standard error. */
void pc_set_reporter(void (*report)(const char *line));

/* The plugin and the check running, NULL between checks: for a runner that
 * must name them when a check stopped inside the plugin (a crash). */
extern const pc_plugin *pc_current;
extern const char *pc_current_check;

/* Whether the checks' own counting allocator holds up (no plugin): 0 or -1. */
int pc_check_host_allocator(void);

#endif
