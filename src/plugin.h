/*
 * plugin.h - finds a backend plugin by name, loads it with dlopen and checks
 * its ops table before anything else touches it.
 */
#ifndef PERCEPT_PLUGIN_H
#define PERCEPT_PLUGIN_H

#include <stddef.h>

#include "percept.h"
#include "percept/backend.h"

typedef struct plugin {
    void *handle;            /* from dlopen */
    percept_backend_ops ops; /* the plugin's table, copied; fields it lacks are NULL */
    char *path;              /* the file it came from */
} plugin;

/* The directories searched, in order. */
typedef struct plugin_search {
    const char *dirs[16];
    size_t count;
} plugin_search;

/*
 * Build the search list: options' plugin_dir, the config's plugin_dir, every
 * entry of $PERCEPT_PLUGIN_PATH (unless the program runs set-user-ID or
 * set-group-ID), then the installed plugin directory. `env_copy` receives a
 * copy of the variable that the list points into.
 */
int plugin_search_init(const percept_allocator *a, plugin_search *search, const char *option_dir,
                       const char *config_dir, char **env_copy);

/*
 * Load backend `name` from the first directory holding NAME.so. Never falls
 * back to another file once one is found: a broken plugin is an error. On
 * failure writes a message naming the path, the step and the cause to
 * `why` and returns PERCEPT_EPLUGIN or PERCEPT_ENOMEM.
 */
int plugin_load(const percept_allocator *a, const plugin_search *search, const char *name,
                plugin *out, char *why, size_t why_size);
void plugin_unload(const percept_allocator *a, plugin *p);

#endif
