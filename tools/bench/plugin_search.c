/*
 * plugin_search.c - which backend plugins percept-bench can run (see
 * plugin_search.h).
 */
#include "plugin_search.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../cli.h"
/* The library's own rule, compiled into the bench too (Makefile.am): a
 * set-ID bench must list exactly the plugins its worlds would load. */
#include "../../src/environment_trust.h"

#include "install_dirs.h" /* written by make: the configured paths */

/* The preferred order of the shipped backends in tables; others follow by name. */
static const char *const known_order[] = {"bruteforce", "grid", "hashgrid", "tower", "crosslist"};

int search_init(search_path *s)
{
    memset(s, 0, sizeof *s);
    const char *env = getenv("PERCEPT_PLUGIN_PATH");
    if (env && *env && !environment_trusted()) {
        s->env_ignored = 1;
        env = NULL;
    }
    if (env && *env) {
        if (!(s->env_copy = strdup(env)))
            return -1;
        /* Empty entries ("a::b") are skipped, as the library's strtok_r() does. */
        for (char *save = NULL, *dir = strtok_r(s->env_copy, ":", &save);
             dir && s->count < SEARCH_MAX_DIRS - 1; dir = strtok_r(NULL, ":", &save))
            s->dirs[s->count++] = dir;
    }
    s->dirs[s->count++] = PERCEPT_PLUGIN_DIR;
    return 0;
}

/* "DIR1, DIR2, ..." for messages. */
void search_describe(const search_path *s, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->count && len < size; i++) {
        int n = snprintf(out + len, size - len, "%s%s", i ? ", " : "", s->dirs[i]);
        len += n > 0 ? (size_t)n : 0;
    }
}

/* The first directory of the search path holding NAME.so, or NULL. As for
 * the library, whatever NAME.so is there (a directory, a dangling link) is
 * the one: the library then refuses it, naming it, and never looks further. */
const char *search_find(const search_path *s, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    for (size_t i = 0; i < s->count; i++) {
        int n = snprintf(path, sizeof path, "%s/%s.so", s->dirs[i], name);
        if (n > 0 && (size_t)n < sizeof path && lstat(path, &st) == 0)
            return s->dirs[i];
    }
    return NULL;
}

static int is_file(const char *dir, const char *entry)
{
    char path[PATH_MAX];
    struct stat st;
    int n = snprintf(path, sizeof path, "%s/%s", dir, entry);
    return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int list_add(name_list *l, const char *name, const char *dir)
{
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->names[i], name) == 0)
            return 0;
    if (l->count == BENCH_MAX_BACKENDS)
        return -1;
    if (!(l->names[l->count] = strdup(name)))
        return -1;
    l->dirs[l->count++] = dir;
    return 0;
}

void list_free(name_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->names[i]);
    l->count = 0;
}

/* Every backend of the search path, each from the first directory holding it. */
void search_all(const search_path *s, name_list *l)
{
    for (size_t i = 0; i < s->count; i++) {
        DIR *d = opendir(s->dirs[i]);
        struct dirent *e;
        if (!d)
            continue;
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            char name[256];
            if (len <= 3 || len - 3 >= sizeof name || strcmp(e->d_name + len - 3, ".so") != 0)
                continue;
            memcpy(name, e->d_name, len - 3);
            name[len - 3] = '\0';
            /* Others cannot be loaded by name; an earlier directory's entry wins,
             * and only a file is offered. */
            if (cli_backend_name_ok(name) && search_find(s, name) == s->dirs[i] &&
                is_file(s->dirs[i], e->d_name))
                list_add(l, name, s->dirs[i]);
        }
        closedir(d);
    }
}

/* "a, b (in DIR1); c (in DIR2)", or "none", for messages. */
void list_describe(const search_path *s, const name_list *l, char *out, size_t size)
{
    size_t len = 0;
    snprintf(out, size, "none");
    for (size_t i = 0; i < s->count && len < size; i++) {
        int first = 1, n;
        for (size_t b = 0; b < l->count && len < size; b++) {
            if (l->dirs[b] != s->dirs[i])
                continue;
            n = snprintf(out + len, size - len, "%s%s", first ? (len ? "; " : "") : ", ",
                         l->names[b]);
            len += n > 0 ? (size_t)n : 0;
            first = 0;
        }
        if (!first && len < size) {
            n = snprintf(out + len, size - len, " (in %s)", s->dirs[i]);
            len += n > 0 ? (size_t)n : 0;
        }
    }
}

static int rank_of(const char *name)
{
    for (size_t i = 0; i < sizeof known_order / sizeof known_order[0]; i++)
        if (strcmp(known_order[i], name) == 0)
            return (int)i;
    return 100;
}

/* Sorts names and their directories together. */
void list_sort(name_list *l)
{
    for (size_t i = 1; i < l->count; i++) {
        for (size_t j = i; j > 0; j--) {
            const char *a = l->names[j - 1], *b = l->names[j];
            int ra = rank_of(a), rb = rank_of(b);
            if (ra < rb || (ra == rb && strcmp(a, b) <= 0))
                break;
            char *tn = l->names[j];
            const char *td = l->dirs[j];
            l->names[j] = l->names[j - 1];
            l->dirs[j] = l->dirs[j - 1];
            l->names[j - 1] = tn;
            l->dirs[j - 1] = td;
        }
    }
}
