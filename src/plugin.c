/*
 * plugin.c - backend plugin discovery and loading. Each failing step has its
 * own message naming the file, because "backend failed" is useless to an
 * operator at 3 a.m.; dlerror()'s text is copied at once, before any other
 * dl call can replace it.
 */
#include "plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "config.h" /* pc_backend_name_ok() */
#include "environment_trust.h"
#include "plugin_file.h"

#include "install_dirs.h" /* written by make: the configured paths */

/* Appends `dir`, keeping the last entry for the installed directory, which
 * no length of PERCEPT_PLUGIN_PATH may push out. */
static void add_dir(plugin_search *search, const char *dir, int installed)
{
    size_t room = sizeof search->dirs / sizeof search->dirs[0] - (installed ? 0 : 1);
    if (!dir || !*dir)
        return;
    if (search->count < room)
        search->dirs[search->count++] = dir;
    else
        search->dropped++;
}

int plugin_search_init(const percept_allocator *a, plugin_search *search, const char *option_dir,
                       const char *config_dir, char **env_copy)
{
    memset(search, 0, sizeof *search);
    *env_copy = NULL;
    add_dir(search, option_dir, 0);
    add_dir(search, config_dir, 0);
    const char *env = getenv("PERCEPT_PLUGIN_PATH");
    if (env && *env && !environment_trusted()) {
        search->env_ignored = 1;
        env = NULL;
    }
    if (env && *env) {
        *env_copy = pc_strdup(a, env);
        if (!*env_copy)
            return -1;
        for (char *save = NULL, *dir = strtok_r(*env_copy, ":", &save); dir;
             dir = strtok_r(NULL, ":", &save))
            add_dir(search, dir, 0);
    }
    add_dir(search, PERCEPT_PLUGIN_DIR, 1);
    return 0;
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends "in DIR: a, b; in DIR2: c" for the NAME.so files of the search
 * path to `out`: each directory once, so the names fit the message. */
static void list_available(const plugin_search *search, char *out, size_t size)
{
    size_t used = strlen(out);
    int found = 0;
    for (size_t i = 0; i < search->count && used < size; i++) {
        DIR *d = opendir(search->dirs[i]);
        if (!d)
            continue;
        int in_dir = 0;
        struct dirent *e;
        while ((e = readdir(d)) && used < size) {
            size_t n = strlen(e->d_name);
            if (n <= 3 || strcmp(e->d_name + n - 3, ".so"))
                continue;
            /* Only what could be named: a file, with a backend's name. */
            char name[256], file[4096];
            snprintf(name, sizeof name, "%.*s", (int)(n - 3), e->d_name);
            int len = snprintf(file, sizeof file, "%s/%s", search->dirs[i], e->d_name);
            if (!pc_backend_name_ok(name) || len < 0 || (size_t)len >= sizeof file ||
                !is_file(file))
                continue;
            int w = in_dir ? snprintf(out + used, size - used, ", %s", name)
                           : snprintf(out + used, size - used, "%sin %s: %s", found ? "; " : "",
                                      search->dirs[i], name);
            used += w > 0 ? (size_t)w : 0;
            in_dir = found = 1;
        }
        closedir(d);
    }
    if (!found && used < size)
        snprintf(out + used, size - used, "none");
}

/* A search directory as a message shows it: a relative one with the
 * directory it means from here, one that is not there marked so. */
static int describe_dir(char *out, size_t size, const char *dir)
{
    struct stat st;
    if (stat(dir, &st))
        return snprintf(out, size, "%s (missing)", dir);
    if (!S_ISDIR(st.st_mode))
        return snprintf(out, size, "%s (not a directory)", dir);
    char cwd[4096];
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd)) {
        const char *slash = strcmp(cwd, "/") == 0 ? "" : "/"; /* "/.", not "//." */
        return snprintf(out, size, "%s (%s%s%s)", dir, cwd, slash, dir);
    }
    return snprintf(out, size, "%s", dir);
}

/* What to try and where it was looked for, in that order: a message is cut
 * at 511 characters, and a long search path must not push the backends
 * there are out of it. */
static void not_found(const plugin_search *search, const char *name, char *why, size_t size)
{
    int n = snprintf(why, size, "no backend '%s': available: ", name);
    if (n > 0 && (size_t)n < size)
        list_available(search, why, size);
    n = (int)strlen(why);
    if ((size_t)n < size)
        n += snprintf(why + n, size - (size_t)n, "; %s.so is in none of ", name);
    if (search->dropped && n > 0 && (size_t)n < size)
        n += snprintf(why + n, size - (size_t)n,
                      "the %zu directories searched (%zu more entries of PERCEPT_PLUGIN_PATH "
                      "were not): ",
                      search->count, search->dropped);
    /*
     * The installed directory, searched last, is the one most worth seeing:
     * room is kept for it (and the ignored-variable note), and directories
     * before it that do not fit are counted instead of cut off mid-name.
     */
    char last[8400] = "", note[128] = ""; /* a relative directory comes with the cwd */
    if (search->count > 0)
        describe_dir(last, sizeof last, search->dirs[search->count - 1]);
    if (search->env_ignored)
        snprintf(note, sizeof note,
                 " (PERCEPT_PLUGIN_PATH was ignored: the program runs set-user-ID or "
                 "set-group-ID)");
    size_t tail = strlen(last) + strlen(note) + sizeof ", ... (16 more not shown), ";
    for (size_t i = 0; i + 1 < search->count && n > 0 && (size_t)n < size; i++) {
        char dir[8400];
        describe_dir(dir, sizeof dir, search->dirs[i]);
        if ((size_t)n + strlen(dir) + 2 + tail >= size) {
            n += snprintf(why + n, size - (size_t)n, "%s... (%zu more not shown)", i ? ", " : "",
                          search->count - 1 - i);
            break;
        }
        n += snprintf(why + n, size - (size_t)n, "%s%s", i ? ", " : "", dir);
    }
    if (search->count > 0 && n > 0 && (size_t)n < size)
        n += snprintf(why + n, size - (size_t)n, "%s%s", search->count > 1 ? ", " : "", last);
    if (search->env_ignored && n > 0 && (size_t)n < size)
        snprintf(why + n, size - (size_t)n, "%s", note);
}

/* Checks the table in the order an incompatible plugin is most likely to fail. */
static int check_ops(const percept_backend_ops *ops, const char *name, const char *path, char *why,
                     size_t size)
{
    if (!ops) {
        snprintf(why, size, "%s: entry %s() returned NULL instead of an ops table", path,
                 PERCEPT_BACKEND_ENTRY_SYMBOL);
        return -1;
    }
    unsigned major = ops->abi_version >> 16, minor = ops->abi_version & 0xffffu;
    if (major != PERCEPT_BACKEND_ABI_MAJOR) {
        snprintf(why, size,
                 "%s: ABI version mismatch: the plugin was built for backend ABI %u.%u, this "
                 "percept needs major version %d; set abi_version = PERCEPT_BACKEND_ABI_VERSION "
                 "(never a number by hand) and rebuild the plugin against this percept's "
                 "<percept/backend.h>",
                 path, major, minor, PERCEPT_BACKEND_ABI_MAJOR);
        return -1;
    }
    if (ops->struct_size < PERCEPT_BACKEND_OPS_MIN_SIZE) {
        snprintf(why, size,
                 "%s: struct size check failed: the ops table is %u bytes, ABI %d needs at "
                 "least %zu",
                 path, ops->struct_size, PERCEPT_BACKEND_ABI_MAJOR, PERCEPT_BACKEND_OPS_MIN_SIZE);
        return -1;
    }
    const struct {
        const char *what;
        int present;
    } required[] = {
        {"name", ops->name != NULL},       {"create", ops->create != NULL},
        {"destroy", ops->destroy != NULL}, {"reserve", ops->reserve != NULL},
        {"insert", ops->insert != NULL},   {"update", ops->update != NULL},
        {"remove", ops->remove != NULL},   {"query", ops->query != NULL},
    };
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (!required[i].present) {
            snprintf(why, size, "%s: missing operation '%s' in the ops table", path,
                     required[i].what);
            return -1;
        }
    }
    if (strcmp(ops->name, name)) {
        snprintf(why, size,
                 "%s: name mismatch: the plugin says it is '%s', expected '%s' (backend NAME is "
                 "loaded from NAME.so: set the table's name to \"%s\" or call the file %s.so)",
                 path, ops->name, name, name, ops->name);
        return -1;
    }
    return 0;
}

int plugin_load(const percept_allocator *a, const plugin_search *search, const char *name,
                plugin *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    int found = 0;
    for (size_t i = 0; i < search->count && !found; i++) {
        struct stat st;
        int n = snprintf(path, sizeof path, "%s/%s.so", search->dirs[i], name);
        found = n > 0 && (size_t)n < sizeof path && lstat(path, &st) == 0;
    }
    if (!found) {
        not_found(search, name, why, why_size);
        return PERCEPT_EPLUGIN;
    }
    /* The first NAME.so of the search is the one: whatever it is, a later
     * copy is never used in its place. */
    char odd[128];
    if (plugin_file_odd(path, odd, sizeof odd)) {
        snprintf(why, why_size,
                 "%s: is %s: the search uses the first %s.so it finds, so remove it or put "
                 "the plugin there",
                 path, odd, name);
        return PERCEPT_EPLUGIN;
    }
    void *handle = plugin_file_open(path, why, why_size);
    if (!handle)
        return PERCEPT_EPLUGIN;
    dlerror();
    void *sym = dlsym(handle, PERCEPT_BACKEND_ENTRY_SYMBOL);
    const char *e = dlerror();
    if (e || !sym) {
        snprintf(why, why_size, "%s: dlsym('%s') failed: %s: not a percept backend plugin", path,
                 PERCEPT_BACKEND_ENTRY_SYMBOL,
                 e ? plugin_file_without_path(e, path) : "symbol is NULL");
        dlclose(handle);
        return PERCEPT_EPLUGIN;
    }
    percept_backend_entry_fn entry;
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
    memcpy(&entry, &sym, sizeof entry);
    const percept_backend_ops *ops = entry();
    if (check_ops(ops, name, path, why, why_size)) {
        dlclose(handle);
        return PERCEPT_EPLUGIN;
    }
    /* Copy only what the plugin's table has; later fields read as NULL. */
    size_t n = ops->struct_size < sizeof out->ops ? ops->struct_size : sizeof out->ops;
    memcpy(&out->ops, ops, n);
    out->path = pc_strdup(a, path);
    if (!out->path) {
        dlclose(handle);
        memset(out, 0, sizeof *out);
        snprintf(why, why_size, "out of memory loading %s", path);
        return PERCEPT_ENOMEM;
    }
    out->handle = handle;
    return PERCEPT_OK;
}

void plugin_unload(const percept_allocator *a, plugin *p)
{
    if (p->handle)
        dlclose(p->handle);
    pc_free(a, p->path);
    memset(p, 0, sizeof *p);
}
