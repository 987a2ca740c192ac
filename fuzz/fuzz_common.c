/*
 * fuzz_common.c - plugin discovery and pinning for the libFuzzer targets
 * (see fuzz_common.h for why the plugins are kept loaded).
 */
#include "fuzz_common.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FUZZ_PLUGIN_DIR
#define FUZZ_PLUGIN_DIR "plugins/.libs"
#endif

static char names[FUZZ_MAX_BACKENDS][64];
static size_t name_count;
static int loaded;

void fuzz_fail(const char *fmt, ...)
{
    va_list ap;

    fputs("fuzz: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

static int by_name(const void *a, const void *b)
{
    const char *x = a, *y = b;

    /* bruteforce first: it is the exact reference the others are held to. */
    if (strcmp(x, "bruteforce") == 0 || strcmp(y, "bruteforce") == 0)
        return (strcmp(y, "bruteforce") == 0) - (strcmp(x, "bruteforce") == 0);
    return strcmp(x, y);
}

size_t fuzz_load_backends(void)
{
    char dir[4096], path[4200];
    const char *env;
    DIR *d;
    struct dirent *e;

    if (loaded)
        return name_count;
    loaded = 1;
    env = getenv("PERCEPT_PLUGIN_PATH");
    if (env == NULL || env[0] == '\0') {
        setenv("PERCEPT_PLUGIN_PATH", FUZZ_PLUGIN_DIR, 1);
        env = FUZZ_PLUGIN_DIR;
    }
    snprintf(dir, sizeof dir, "%.*s", (int)strcspn(env, ":"), env);

    d = opendir(dir);
    if (d == NULL)
        fuzz_fail("cannot open the plugin directory '%s' (set PERCEPT_PLUGIN_PATH)", dir);
    while ((e = readdir(d)) != NULL && name_count < FUZZ_MAX_BACKENDS) {
        size_t n = strlen(e->d_name);
        if (n <= 3 || n - 3 >= sizeof names[0] || strcmp(e->d_name + n - 3, ".so") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        /* Never closed: see fuzz_common.h. */
        if (dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == NULL)
            fuzz_fail("dlopen %s: %s", path, dlerror());
        memcpy(names[name_count], e->d_name, n - 3);
        names[name_count][n - 3] = '\0';
        name_count++;
    }
    closedir(d);
    if (name_count == 0)
        fuzz_fail("no backend plugin (*.so) in '%s'", dir);
    qsort(names, name_count, sizeof names[0], by_name);
    return name_count;
}

const char *fuzz_backend_name(size_t i)
{
    return i < name_count ? names[i] : NULL;
}
