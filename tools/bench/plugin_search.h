/*
 * plugin_search.h - which backend plugins percept-bench can run: found in
 * the directories, and in the order, the library itself searches.
 */
#ifndef PERCEPT_BENCH_PLUGIN_SEARCH_H
#define PERCEPT_BENCH_PLUGIN_SEARCH_H

#include <stddef.h>

#include "suite.h"

/*
 * Where the library looks for NAME.so when neither the options nor the config
 * name a plugin_dir, as the bench's worlds do (src/plugin.c, README
 * "Backends"): each directory of PERCEPT_PLUGIN_PATH, then the install
 * directory; the first directory holding the file wins. The library keeps at
 * most 16 directories, the last for the install directory, and drops the
 * variable's entries beyond; and a set-user-ID or set-group-ID program does
 * not take the variable from its caller at all. The same here, so that the
 * bench lists what the library will load.
 */
#define SEARCH_MAX_DIRS 16

typedef struct search_path {
    char *env_copy; /* the directories point into it */
    const char *dirs[SEARCH_MAX_DIRS];
    size_t count;
    int env_ignored; /* PERCEPT_PLUGIN_PATH was set, in a set-ID program: see SEARCH_ENV_IGNORED */
} search_path;

/* Why the directories of PERCEPT_PLUGIN_PATH are not searched, in the library's words. */
#define SEARCH_ENV_IGNORED                                                                         \
    "PERCEPT_PLUGIN_PATH was ignored: the program runs set-user-ID or set-group-ID"

/* Fills *s from PERCEPT_PLUGIN_PATH; free s->env_copy when done. Returns -1 when out of memory. */
int search_init(search_path *s);

/* "DIR1, DIR2, ..." for messages. */
void search_describe(const search_path *s, char *out, size_t size);

/* The first directory of the search path holding NAME.so, or NULL. */
const char *search_find(const search_path *s, const char *name);

/* Backend names, each with the directory it was found in. */
typedef struct name_list {
    char *names[BENCH_MAX_BACKENDS];
    const char *dirs[BENCH_MAX_BACKENDS]; /* where each was found */
    size_t count;
} name_list;

/* Adds `name` (copied) unless listed already. Returns -1 when full or out of memory. */
int list_add(name_list *l, const char *name, const char *dir);
void list_free(name_list *l);

/* Every backend of the search path, each from the first directory holding it. */
void search_all(const search_path *s, name_list *l);

/* "a, b (in DIR1); c (in DIR2)", or "none", for messages. */
void list_describe(const search_path *s, const name_list *l, char *out, size_t size);

/* The shipped backends first, in the tables' order, then the others by name. */
void list_sort(name_list *l);

#endif
