/*
 * test_backend_ops.c - the conformance checks of tools/plugin_check.c (the
 * ones percept-plugin-check runs) on every backend plugin in the first
 * directory of PERCEPT_PLUGIN_PATH, or those PERCEPT_TEST_BACKENDS names:
 * one CMocka test per check, each run on every backend.
 *
 * Each test runs every backend and names each one that fails, so one broken
 * plugin never hides the results of the others.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_check.h"

#define MAX_BACKENDS 32

static pc_plugin backends[MAX_BACKENDS];
static size_t backend_count;
static char plugin_dir[4096];

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const pc_plugin *)a)->name, ((const pc_plugin *)b)->name);
}

/* The next name of a blank- or newline-separated list (as testutil.c splits
 * PERCEPT_TEST_BACKENDS): sets *len and returns its start, advancing *p past
 * it; NULL at the end. */
static const char *next_name(const char **p, size_t *len)
{
    static const char blanks[] = " \t\n";
    *p += strspn(*p, blanks);
    if (**p == '\0')
        return NULL;
    const char *name = *p;
    *len = strcspn(name, blanks);
    *p += *len;
    return name;
}

/* Whether the list in environment variable `var` names `name`; *any says whether it names any. */
static int listed(const char *var, const char *name, int *any)
{
    const char *p = getenv(var), *item;
    size_t len, n = strlen(name);
    *any = 0;
    while (p != NULL && (item = next_name(&p, &len)) != NULL) {
        *any = 1;
        if (len == n && strncmp(item, name, n) == 0)
            return 1;
    }
    return 0;
}

/* Whether `name` is in PERCEPT_TEST_BACKENDS, when that names any. */
static int wanted(const char *name)
{
    int any;
    return listed("PERCEPT_TEST_BACKENDS", name, &any) || !any;
}

/* Loads every *.so of the first directory of PERCEPT_PLUGIN_PATH, or those
 * of them that PERCEPT_TEST_BACKENDS names. PERCEPT_TEST_EXACT_MEMORY lists
 * the backends whose memory_usage() is required: `make check` names the
 * shipped ones, so that one that lost it fails instead of being skipped;
 * for any other plugin it stays optional, as backend.h says. */
static int load_backends(void)
{
    const char *env = getenv("PERCEPT_PLUGIN_PATH");
    size_t len = env != NULL ? strcspn(env, ":") : 0;
    char names[MAX_BACKENDS][256];
    size_t found = 0;
    DIR *dir;
    struct dirent *de;

    if (len == 0 || len >= sizeof plugin_dir)
        return -1;
    memcpy(plugin_dir, env, len);
    plugin_dir[len] = '\0';
    dir = opendir(plugin_dir);
    if (dir == NULL)
        return -1;
    while ((de = readdir(dir)) != NULL && found < MAX_BACKENDS) {
        size_t n = strlen(de->d_name);
        if (n <= 3 || strcmp(de->d_name + n - 3, ".so") != 0 || n >= sizeof names[0])
            continue;
        memcpy(names[found], de->d_name, n + 1);
        names[found][n - 3] = '\0';
        if (wanted(names[found]))
            found++;
    }
    closedir(dir);
    for (size_t i = 0; i < found; i++) {
        pc_plugin *b = &backends[backend_count];
        char path[sizeof b->path];
        int k = snprintf(path, sizeof path, "%s/%s.so", plugin_dir, names[i]);
        if (k < 0 || (size_t)k >= sizeof path)
            continue;
        pc_plugin_load(b, path); /* a failure is the "table" check's to report */
        int any;
        b->memory_required = listed("PERCEPT_TEST_EXACT_MEMORY", b->name, &any);
        backend_count++;
    }
    qsort(backends, backend_count, sizeof backends[0], cmp_name);
    return 0;
}

/* Runs one check (the test's state) on every loaded backend; fails the test
 * naming each backend that failed. A backend that could not be loaded is
 * checked by "table" alone, which reports why. */
static void run_check(void **state)
{
    const pc_check *c = *state;
    char names[1024] = "";
    int failures = 0;

    pc_current_check = c->name;
    for (size_t i = 0; i < backend_count; i++) {
        if (backends[i].ops == NULL && c != &pc_checks[0])
            continue;
        pc_current = &backends[i];
        if (c->run(pc_current) != 0) {
            failures++;
            strncat(names, " ", sizeof names - strlen(names) - 1);
            strncat(names, pc_current->name, sizeof names - strlen(names) - 1);
        }
    }
    pc_current = NULL;
    if (failures > 0)
        fail_msg("%s failed for %d backend(s):%s", c->name, failures, names);
}

/* A cmocka teardown: names the backend when a test stopped inside one (a crash). */
static int report_crash(void **state)
{
    (void)state;
    if (pc_current != NULL)
        print_error("the check %s stopped inside backend '%s'\n", pc_current_check,
                    pc_current->name);
    pc_current = NULL;
    return 0;
}

/* The C library aborts on a block it did not hand out (a plugin that free()s
 * what host->alloc gave, say): name the backend and test before dying. Only
 * write(), which a signal handler may call. */
static void say(const char *text)
{
    ssize_t unused = write(STDERR_FILENO, text, strlen(text));
    (void)unused;
}

static void on_abort(int sig)
{
    if (pc_current != NULL) {
        say("test_backend_ops: aborted in ");
        say(pc_current_check != NULL ? pc_current_check : "?");
        say(" inside backend '");
        say(pc_current->name);
        say("' (a block freed or resized around host->alloc?)\n");
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(void)
{
    struct CMUnitTest tests[64];
    size_t n = 0;

    if (pc_check_count > sizeof tests / sizeof tests[0]) {
        fprintf(stderr, "test_backend_ops: more checks than room for tests\n");
        return 1;
    }
    for (size_t i = 0; i < pc_check_count; i++) {
        memset(&tests[n], 0, sizeof tests[n]);
        tests[n].name = pc_checks[i].name;
        tests[n].test_func = run_check;
        tests[n].teardown_func = report_crash;
        tests[n].initial_state = (void *)&pc_checks[i];
        n++;
    }

    signal(SIGABRT, on_abort);
    if (load_backends() != 0) {
        fprintf(stderr, "test_backend_ops: PERCEPT_PLUGIN_PATH does not name a readable "
                        "directory; skipped\n");
        return 77;
    }
    /* A backend asked for by name must be there: a typo must not pass as a
     * test of nothing. */
    const char *p = getenv("PERCEPT_TEST_BACKENDS"), *item;
    size_t len;
    int missing = 0;
    while (p != NULL && (item = next_name(&p, &len)) != NULL) {
        size_t i = 0;
        while (i < backend_count &&
               (strlen(backends[i].name) != len || strncmp(backends[i].name, item, len) != 0))
            i++;
        if (i == backend_count) {
            fprintf(stderr,
                    "test_backend_ops: PERCEPT_TEST_BACKENDS names '%.*s', but %s has no %.*s.so\n",
                    (int)len, item, plugin_dir, (int)len, item);
            missing++;
        }
    }
    if (missing > 0)
        return 1;
    if (backend_count == 0) {
        fprintf(stderr, "test_backend_ops: no *.so in %s\n", plugin_dir);
        return 1;
    }
    fprintf(stderr, "test_backend_ops: %zu backend(s) in %s:", backend_count, plugin_dir);
    for (size_t i = 0; i < backend_count; i++)
        fprintf(stderr, " %s", backends[i].name);
    fputc('\n', stderr);

    int failed = _cmocka_run_group_tests("test_backend_ops", tests, n, NULL, NULL);
    return failed == 0 ? 0 : 1;
}
