/*
 * test_plugin_load.c - loading backend plugins: each deliberately broken test
 * plugin (tests/plugins/) is refused with a message naming the path and step.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <link.h> /* ElfW(): to find where a plugin's segments end */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_machine.h" /* ELF_MACHINE_OURS: whether the check is built in */
#include "percept.h"
#include "percept/backend.h"
#include "testutil.h"

#define NAME "test.ini"

/* The build tree's test plugins (from the harness), or NULL: then the tests skip. */
static const char *plugin_dir;

/* A scratch plugin directory holding files that are not shared objects. */
static char tmp_dir[] = "/tmp/percept-plg-XXXXXX";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

static void expect_text(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL) {
        print_error("expected \"%s\" in the message \"%s\"\n", needle, text);
        fail();
    }
}

/* The 1-based line of `text` that starts with `prefix`. */
static int line_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    int line = 1;
    for (const char *p = text; p != NULL && *p != '\0'; line++) {
        if (strncmp(p, prefix, n) == 0)
            return line;
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    fail_msg("no line starts with '%s'", prefix);
    return 0;
}

static void plugin_path(char *buf, size_t size, const char *dir, const char *name)
{
    assert_true((size_t)snprintf(buf, size, "%s/%s.so", dir, name) < size);
}

/*
 * Open `text` with `dir` as options.plugin_dir and expect failure with
 * `status`. The message is left in *error.
 */
/* The C library's allocator, refusing anything above 1 GiB: a request a
 * test plugin makes to be refused, without the run relying on malloc()
 * failing (a sanitizer's would abort instead). */
static void *capped_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return size > ((size_t)1 << 30) ? NULL : realloc(ptr, size);
}

static void open_fails(const char *text, const char *dir, int status, percept_error *error)
{
    static const percept_allocator capped = {capped_alloc, NULL};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    options.allocator = &capped;
    percept_world *world = (percept_world *)&world; /* not NULL: the call must clear it */
    memset(error, 0x55, sizeof *error);
    int got = percept_world_open_string(&world, text, NAME, &options, error);
    if (got != status)
        print_error("status %s, expected %s; message: %s\n", percept_status_name(got),
                    percept_status_name(status), got != PERCEPT_OK ? error->text : "(none)");
    if (got == PERCEPT_OK && world != NULL && world != (percept_world *)&world)
        percept_world_close(world);
    assert_int_equal(got, status);
    assert_null(world);
    assert_int_equal(error->status, status);
    assert_non_null(memchr(error->text, '\0', sizeof error->text));
}

/*
 * [sight] names the broken plugin `name` while bruteforce serves the other
 * senses: the load must fail with PERCEPT_EPLUGIN and name the full path.
 */
static void load_broken(const char *name, percept_error *error, char *path, size_t path_size)
{
    if (plugin_dir == NULL)
        skip();
    char text[256];
    snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\n[sight]\nbackend = %s\n", name);
    open_fails(text, plugin_dir, PERCEPT_EPLUGIN, error);
    plugin_path(path, path_size, plugin_dir, name);
    expect_text(error->text, path);
    /* Once: dlerror()'s own copy of it would push the hint out of a long message. */
    const char *first = strstr(error->text, path);
    if (first != NULL && strstr(first + strlen(path), path) != NULL) {
        print_error("the path is named twice in: %s\n", error->text);
        fail();
    }
}

/* `why`, dlerror()'s text, without the file's path where it starts with it:
 * the loader's message names the path once, before "dlopen failed". */
static void drop_path(const char *path, char *why, size_t size)
{
    size_t len = strlen(path);
    if (strncmp(why, path, len) == 0 && strncmp(why + len, ": ", 2) == 0)
        memmove(why, why + len + 2, strnlen(why, size) - len - 1);
}

/* What dlerror() says after the loader's own attempt at the same step. */
static void dlopen_error(const char *path, char *buf, size_t size)
{
    dlerror();
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_null(handle);
    const char *why = dlerror();
    assert_non_null(why);
    snprintf(buf, size, "%s", why);
    drop_path(path, buf, size);
}

static void dlsym_error(const char *path, char *buf, size_t size)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(handle);
    dlerror();
    void *sym = dlsym(handle, PERCEPT_BACKEND_ENTRY_SYMBOL);
    const char *why = dlerror();
    assert_null(sym);
    assert_non_null(why);
    snprintf(buf, size, "%s", why);
    drop_path(path, buf, size);
    dlclose(handle);
}

/* Write a file that is not a shared object to tmp_dir/NAME.so. */
static void write_garbage(const char *name, char *path, size_t size)
{
    plugin_path(path, size, tmp_dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("this is a text file, not a shared object\n", f);
    assert_int_equal(fclose(f), 0);
}

/* A world from `ini` whose plugins are searched first in `dir`; it must open. */
static percept_world *open_with_plugin_dir(const char *ini, const char *dir)
{
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    percept_world *world = NULL;
    percept_error error;
    memset(&error, 0, sizeof error);
    int status = percept_world_open_string(&world, ini, NAME, &options, &error);
    if (status != PERCEPT_OK)
        print_error("%s\n", error.text);
    assert_int_equal(status, PERCEPT_OK);
    return world;
}

/* The same, searching the test plugins first. */
static percept_world *open_with_test_plugins(const char *ini)
{
    return open_with_plugin_dir(ini, plugin_dir);
}

/* ------------------------------------------------------------------------ */
/* The broken plugins                                                        */

/* Control: the working test plugin loads from the same directory. */
static void test_working_plugin_loads(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *world = open_with_test_plugins(
        "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\nlevel = 3\n");
    assert_string_equal(percept_backend_name(world, PERCEPT_SIGHT), "badparam");
    percept_entity_desc a = {0.0, 0.0, {5.0, 0.0, 0.0}, 0u};
    percept_entity_desc b = {3.0, 4.0, {0.0, 0.0, 0.0}, 0u};
    assert_int_equal(percept_add(world, 1, &a), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &b), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 1);
    assert_int_equal(percept_move(world, 2, 3.0, 4.5), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 0);
    percept_world_close(world);
}

/* Counts the ENTER and LEAVE events a world delivers. */
typedef struct event_count {
    int enter, leave;
} event_count;

static void count_event(void *user, const percept_event *ev)
{
    event_count *c = user;
    c->enter += ev->kind == PERCEPT_ENTER;
    c->leave += ev->kind == PERCEPT_LEAVE;
}

/*
 * A plugin of an older minor ABI (1.0: its table ends before query_hints)
 * loads and serves every sense exactly; the host reads nothing past its
 * struct_size (AddressSanitizer would report the read in the sanitizer run).
 */
static void test_older_minor_abi_plugin_works(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *world =
        open_with_test_plugins("[percept]\nbackend = abi10\n[world]\nmax_x = 100\nmax_y = 100\n");
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        assert_string_equal(percept_backend_name(world, (percept_sense)s), "abi10");
    event_count count = {0, 0};
    assert_int_equal(percept_set_event_callback(world, count_event, &count), PERCEPT_OK);

    /* A short-sighted guard (5 in every sense) and a wanderer at 3-4-5. */
    percept_entity_desc guard = {10.0, 10.0, {5.0, 5.0, 5.0}, 0u};
    percept_entity_desc wanderer = {13.0, 14.0, {1.0, 0.0, 0.0}, 0u};
    assert_int_equal(percept_add(world, 1, &guard), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &wanderer), PERCEPT_OK);
    assert_int_equal(count.enter, 3); /* the guard perceives the wanderer in three senses */
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        assert_int_equal(percept_perceives(world, 1, 2, (percept_sense)s), 1);
        assert_int_equal(percept_perceives(world, 2, 1, (percept_sense)s), 0);
    }
    /* One step out of range: three LEAVEs; back in, three ENTERs. */
    assert_int_equal(percept_move(world, 2, 13.0, 14.5), PERCEPT_OK);
    assert_int_equal(count.leave, 3);
    assert_int_equal(percept_move(world, 2, 13.0, 14.0), PERCEPT_OK);
    assert_int_equal(count.enter, 6);
    /* The wanderer comes next to the guard: it now sees the guard too. */
    assert_int_equal(percept_move(world, 2, 10.5, 10.0), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 2, 1, PERCEPT_SIGHT), 1);
    assert_int_equal(count.enter, 7);
    /* Its table has no memory_usage: its index counts as nothing, the rest as usual. */
    percept_memory m;
    assert_int_equal(percept_memory_usage(world, &m), PERCEPT_OK);
    assert_int_equal(m.backends, 0);
    assert_true(m.entities > 0 && m.pairs > 0 && m.total > m.entities + m.pairs);
    percept_world_close(world);
}

static void test_no_entry_symbol(void **state)
{
    (void)state;
    percept_error error;
    char path[1024], why[512];
    load_broken("noentry", &error, path, sizeof path);
    expect_text(error.text, "dlsym");
    expect_text(error.text, PERCEPT_BACKEND_ENTRY_SYMBOL);
    dlsym_error(path, why, sizeof why);
    expect_text(error.text, why);
}

/* A plugin referring to a symbol nothing defines: dlopen() fails, and the
 * message gives the loader's words and says what to check. */
static void test_undefined_symbol(void **state)
{
    (void)state;
    percept_error error;
    char path[1024], why[512];
    load_broken("undefsym", &error, path, sizeof path);
    dlopen_error(path, why, sizeof why);
    expect_text(error.text, why);
    expect_text(error.text, "percept_test_symbol_nothing_defines");
    expect_text(error.text, "link it against the libraries it needs");
}

static void test_wrong_abi_major(void **state)
{
    (void)state;
    percept_error error;
    char path[1024];
    load_broken("badabi", &error, path, sizeof path);
    expect_text(error.text, "ABI");
    /* Both majors, after the path (which may itself hold digits). */
    const char *rest = strstr(error.text, path) + strlen(path);
    expect_text(rest, "2");
    expect_text(rest, "1");
}

static void test_missing_operation(void **state)
{
    (void)state;
    percept_error error;
    char path[1024];
    load_broken("noquery", &error, path, sizeof path);
    expect_text(error.text, "missing operation 'query'");
}

static void test_wrong_name(void **state)
{
    (void)state;
    percept_error error;
    char path[1024];
    load_broken("wrongname", &error, path, sizeof path);
    expect_text(error.text, "name");
    expect_text(error.text, "somethingelse");
    const char *rest = strstr(error.text, path) + strlen(path);
    expect_text(rest, "wrongname");
    /* Which of the two to change. */
    expect_text(rest, "set the table's name to \"wrongname\" or call the file somethingelse.so");
}

static void test_entry_returns_null(void **state)
{
    (void)state;
    percept_error error;
    char path[1024];
    load_broken("nullops", &error, path, sizeof path);
    expect_text(error.text, "NULL");
}

static void test_struct_too_small(void **state)
{
    (void)state;
    percept_error error;
    char path[1024];
    load_broken("smallsize", &error, path, sizeof path);
    expect_text(error.text, "struct size");
    const char *rest = strstr(error.text, path) + strlen(path);
    expect_text(rest, "16");
}

/* A plugin's own parameter check: reported like any key error, with the plugin's reason. */
static void test_parameter_rejected(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    const char *text = "[percept]\nbackend = bruteforce\n\n[sight]\nbackend = badparam\n"
                       "observer_cell_size = 8\nlevel = 9\n";
    percept_error error;
    open_fails(text, plugin_dir, PERCEPT_ECONFIG, &error);
    int line = line_of(text, "level");
    assert_int_equal(error.line, line);
    char needle[128];
    snprintf(needle, sizeof needle, "%s:%d: key 'level' in [sight]: ", NAME, line);
    expect_text(error.text, needle);
    expect_text(error.text, "must be an integer from 1 to 3"); /* badparam.c's reason */
}

/* A plugin that blames a parameter it was not given: its bug, named as
 * such on the line that chose it, never pinned on some key. */
static void test_parameter_index_out_of_range(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    const char *text = "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\n"
                       "misreport = 1\n";
    percept_error error;
    open_fails(text, plugin_dir, PERCEPT_EPLUGIN, &error);
    assert_int_equal(error.line, line_of(text, "backend = badparam"));
    expect_text(error.text, "rejected");
    expect_text(error.text, "the plugin blamed parameter 7, but it was given 1");
}

/* A plugin that blames a parameter with no reason: the key is named, and
 * the message does not guess at "out of memory". */
static void test_parameter_without_reason(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    const char *text = "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\n"
                       "mute = 1\n";
    percept_error error;
    open_fails(text, plugin_dir, PERCEPT_ECONFIG, &error);
    assert_int_equal(error.line, line_of(text, "mute"));
    expect_text(error.text, "key 'mute' in [sight]: refused by the backend, which gave no reason");
    if (strstr(error.text, "memory") != NULL) {
        print_error("a refused parameter reported as memory: %s\n", error.text);
        fail();
    }
}

/*
 * create() failing without a parameter to blame: a setup refused with a
 * reason is the configuration's fault (ECONFIG), a refusal without one the
 * plugin's (EPLUGIN), and one after the host's allocator refused a block is
 * out of memory (ENOMEM), whatever the backend's text says. Each on the line
 * that chose the backend.
 */
static void test_create_fails_as_a_whole(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    static const struct {
        const char *key;
        int status;
        const char *says;
    } cases[] = {
        {"whole", PERCEPT_ECONFIG, "backend 'badparam' ("},
        {"whole", PERCEPT_ECONFIG, "): these bounds need a larger size"},
        {"silent", PERCEPT_EPLUGIN, "): creation failed; the backend gave no reason"},
        {"hungry", PERCEPT_ENOMEM, "): out of memory: cannot allocate its index"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[160];
        snprintf(text, sizeof text,
                 "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\n%s = 1\n",
                 cases[i].key);
        percept_error error;
        open_fails(text, plugin_dir, cases[i].status, &error);
        assert_int_equal(error.line, line_of(text, "backend = badparam"));
        expect_text(error.text, cases[i].says);
    }
}

/* A backend whose reserve() refuses: ENOMEM naming the call, the entity and
 * the backend, and the world unchanged. */
static void test_reserve_refused(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_world *w = open_with_test_plugins("[percept]\nbackend = bruteforce\n[sight]\n"
                                              "backend = badparam\ncrowded = 1\n");
    percept_entity_desc d = {.x = 0, .y = 0, .range = {5, 5, 5}};
    assert_int_equal(percept_add(w, 1, &d), PERCEPT_OK);
    d.x = 1;
    assert_int_equal(percept_add(w, 2, &d), PERCEPT_ENOMEM);
    expect_text(percept_errmsg(w), "percept_add: entity 2: out of memory: backend 'badparam' (");
    expect_text(percept_errmsg(w), "could not make room (its reserve() failed); the world is "
                                   "unchanged");
    assert_int_equal(percept_entity_count(w), 1);
    assert_int_equal(percept_contains(w, 2), 0);
    percept_world_close(w);
}

/* The host's own key is taken out before the plugin sees the rest. */
static void test_parameter_unknown_key(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    const char *text = "[percept]\nbackend = badparam\nmove_events = off\n"
                       "[hearing]\nlevel = 2\nobserver_cell_size = 8\nlevle = 2\n";
    percept_error error;
    open_fails(text, plugin_dir, PERCEPT_ECONFIG, &error);
    int line = line_of(text, "levle");
    assert_int_equal(error.line, line);
    char needle[128];
    snprintf(needle, sizeof needle, "%s:%d: key 'levle' in [hearing]: ", NAME, line);
    expect_text(error.text, needle);
    expect_text(error.text, "unknown key");
}

static void test_not_a_shared_object(void **state)
{
    (void)state;
    char path[1024], why[512];
    write_garbage("garbage", path, sizeof path);
    percept_error error;
    open_fails("[percept]\nbackend = bruteforce\n[sight]\nbackend = garbage\n", tmp_dir,
               PERCEPT_EPLUGIN, &error);
    dlopen_error(path, why, sizeof why); /* what dlopen says of this very file */
    unlink(path);
    expect_text(error.text, path);
    expect_text(error.text, "dlopen");
    expect_text(error.text, why);
    /* The hint fits the failure: not a missing dependency, a file that is no plugin. */
    expect_text(error.text, "file(1)");
    if (strstr(error.text, "ldd") != NULL) {
        print_error("a hint about dependencies for a text file: %s\n", error.text);
        fail();
    }
}

/* A broken plugin named as the default backend fails too, for every sense. */
static void test_broken_default_backend(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    percept_error error;
    open_fails("[percept]\nbackend = badabi\n", plugin_dir, PERCEPT_EPLUGIN, &error);
    char path[1024];
    plugin_path(path, sizeof path, plugin_dir, "badabi");
    expect_text(error.text, path);
    expect_text(error.text, "ABI");
}

/*
 * A broken bruteforce.so found first must not be skipped in favour of the
 * good one further down the search path.
 */
static void test_no_fallback_to_later_dir(void **state)
{
    (void)state;
    char path[1024];
    write_garbage("bruteforce", path, sizeof path);
    percept_error error;
    open_fails("[percept]\nbackend = bruteforce\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    unlink(path);
    expect_text(error.text, path);
    expect_text(error.text, "dlopen");
}

/* Nor in favour of a good one when the first NAME.so is no file at all. */
static void test_no_fallback_past_a_non_file(void **state)
{
    (void)state;
    char path[1024];
    plugin_path(path, sizeof path, tmp_dir, "bruteforce");
    percept_error error;
    assert_int_equal(mkdir(path, 0755), 0);
    open_fails("[percept]\nbackend = bruteforce\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    assert_int_equal(rmdir(path), 0);
    expect_text(error.text, path);
    expect_text(error.text, ": is a directory");

    assert_int_equal(symlink("/nonexistent/percept/bruteforce.so", path), 0);
    open_fails("[percept]\nbackend = bruteforce\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    assert_int_equal(unlink(path), 0);
    expect_text(error.text, path);
    expect_text(error.text, ": is a symbolic link to nothing");

    assert_int_equal(symlink(path, path), 0); /* a link to itself */
    open_fails("[percept]\nbackend = bruteforce\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    assert_int_equal(unlink(path), 0);
    expect_text(error.text, ": is a loop of symbolic links");

    assert_int_equal(mkfifo(path, 0600), 0); /* opening it would block: never opened */
    open_fails("[percept]\nbackend = bruteforce\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    assert_int_equal(unlink(path), 0);
    expect_text(error.text, ": is not a regular file");
}

/* A backend that is nowhere: the message offers only what could be named
 * (files with a backend's name), and says what a search entry is not. */
static void test_not_found_lists_only_plugins(void **state)
{
    (void)state;
    char good[1024], spaced[1024], dir[1024];
    write_garbage("candidate_1", good, sizeof good);
    write_garbage("my plugin", spaced, sizeof spaced);
    plugin_path(dir, sizeof dir, tmp_dir, "subdir");
    assert_int_equal(mkdir(dir, 0755), 0);
    char *saved = getenv("PERCEPT_PLUGIN_PATH") ? strdup(getenv("PERCEPT_PLUGIN_PATH")) : NULL;
    assert_int_equal(setenv("PERCEPT_PLUGIN_PATH", good, 1), 0); /* a file, not a directory */
    percept_error error;
    open_fails("[percept]\nbackend = nosuch_7\n", tmp_dir, PERCEPT_EPLUGIN, &error);
    if (saved) {
        setenv("PERCEPT_PLUGIN_PATH", saved, 1);
        free(saved);
    } else {
        unsetenv("PERCEPT_PLUGIN_PATH");
    }
    unlink(good);
    unlink(spaced);
    rmdir(dir);
    char in_dir[1100];
    snprintf(in_dir, sizeof in_dir, "in %s: candidate_1;", tmp_dir);
    expect_text(error.text, in_dir);
    if (strstr(error.text, "my plugin") || strstr(error.text, "subdir")) {
        print_error("offered a name no config can give: %s\n", error.text);
        fail();
    }
    char not_dir[1100];
    snprintf(not_dir, sizeof not_dir, "%s (not a directory)", good);
    expect_text(error.text, not_dir);
}

/* Each broken plugin, again through options.backend. */
static void test_broken_via_options_backend(void **state)
{
    (void)state;
    if (plugin_dir == NULL)
        skip();
    static const char *const names[] = {"noentry", "badabi",    "noquery",
                                        "nullops", "smallsize", "wrongname"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        percept_options options = PERCEPT_OPTIONS_INIT;
        options.plugin_dir = plugin_dir;
        options.backend = names[i];
        percept_world *world = (percept_world *)&world;
        percept_error error;
        memset(&error, 0, sizeof error);
        int status = percept_world_open_string(&world, "[percept]\nbackend = bruteforce\n", NAME,
                                               &options, &error);
        if (status != PERCEPT_EPLUGIN)
            print_error("%s: status %s: %s\n", names[i], percept_status_name(status), error.text);
        assert_int_equal(status, PERCEPT_EPLUGIN);
        assert_null(world);
        char path[1024];
        plugin_path(path, sizeof path, plugin_dir, names[i]);
        expect_text(error.text, path);
    }
}

/* Failing loads leave nothing behind: the same broken plugin fails the same way again. */
static void test_repeated_failure(void **state)
{
    (void)state;
    percept_error first, second;
    char path[1024];
    load_broken("noquery", &first, path, sizeof path);
    load_broken("noquery", &second, path, sizeof path);
    assert_string_equal(first.text, second.text);
}

/* ------------------------------------------------------------------------ */
/* Plugin files cut short                                                    */

/* A working test plugin's bytes, and where its headers and segments end. */
typedef struct plugin_image {
    unsigned char *bytes;
    size_t size;
    size_t headers_end; /* the end of its program header table */
    size_t loaded_end;  /* the end of its last loaded segment's bytes in the file */
} plugin_image;

/* badparam.so, read whole; the test skips without the test plugins. */
static void read_image(plugin_image *img)
{
    if (plugin_dir == NULL)
        skip();
    char path[1024];
    plugin_path(path, sizeof path, plugin_dir, "badparam");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct stat st;
    assert_int_equal(fstat(fileno(f), &st), 0);
    img->size = (size_t)st.st_size;
    img->bytes = malloc(img->size);
    assert_non_null(img->bytes);
    assert_int_equal(fread(img->bytes, 1, img->size, f), img->size);
    fclose(f);
    ElfW(Ehdr) eh;
    assert_true(img->size >= sizeof eh);
    memcpy(&eh, img->bytes, sizeof eh);
    assert_int_equal(eh.e_phentsize, sizeof(ElfW(Phdr)));
    img->headers_end = (size_t)eh.e_phoff + (size_t)eh.e_phnum * sizeof(ElfW(Phdr));
    img->loaded_end = 0;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        memcpy(&ph, img->bytes + eh.e_phoff + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD && (size_t)(ph.p_offset + ph.p_filesz) > img->loaded_end)
            img->loaded_end = (size_t)(ph.p_offset + ph.p_filesz);
    }
    /* Cut anywhere between the two, a segment loses bytes. */
    assert_true(img->headers_end < img->loaded_end && img->loaded_end <= img->size);
}

/* tmp_dir/badparam.so holding the first `length` bytes of `bytes`. */
static void write_copy(const unsigned char *bytes, size_t length, char *path, size_t size)
{
    plugin_path(path, size, tmp_dir, "badparam");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, length, f), length);
    assert_int_equal(fclose(f), 0);
}

static const char truncated_ini[] =
    "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\n";

/* The copy at `path` is refused as cut short, before dlopen() could touch it. */
static void expect_truncated(const char *path, size_t length, percept_error *error)
{
    open_fails(truncated_ini, tmp_dir, PERCEPT_EPLUGIN, error);
    expect_text(error->text, path);
    expect_text(error->text, ": file is truncated");
    char has[64];
    snprintf(has, sizeof has, "the file has %zu bytes", length);
    if (strstr(error->text, "or corrupt") == NULL)
        expect_text(error->text, has);
#ifdef RTLD_NOLOAD
    void *loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (loaded != NULL)
        dlclose(loaded);
    assert_null(loaded);
#endif
}

/* The copy at `path` loads and serves [sight]. */
static void expect_loads(const char *path)
{
    percept_world *world = open_with_plugin_dir(truncated_ini, tmp_dir);
    assert_string_equal(percept_backend_path(world, PERCEPT_SIGHT), path);
    percept_entity_desc a = {0.0, 0.0, {5.0, 0.0, 0.0}, 0u}, b = {3.0, 4.0, {0.0, 0.0, 0.0}, 0u};
    assert_int_equal(percept_add(world, 1, &a), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &b), PERCEPT_OK);
    assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 1);
    percept_world_close(world);
}

/*
 * A plugin cut short (an interrupted copy or install), at each kind of
 * place: glibc's dlopen() maps the missing bytes and dies of SIGBUS, so the
 * host must refuse the file first, in this very process, leaving no world
 * and nothing loaded. The whole copy, and one that ends where its last
 * segment's bytes do (only section headers and symbols lost), still load.
 */
static void test_truncated_plugin(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    const size_t cuts[] = {
        20,                        /* inside the ELF header */
        sizeof(ElfW(Ehdr)),        /* the ELF header, no program headers */
        sizeof(ElfW(Ehdr)) + 1,    /* one byte of them */
        img.headers_end - 1,       /* all but the table's last byte */
        img.headers_end,           /* the headers, no segment */
        img.headers_end + 1,       /* one byte of the first segment */
        img.loaded_end / 2,        /* half the segments' bytes */
        img.loaded_end - 4096 - 1, /* a page and a byte short */
        img.loaded_end - 1,        /* the last segment's last byte short */
    };
    char path[1024];
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        percept_error error;
        write_copy(img.bytes, cuts[i], path, sizeof path);
        expect_truncated(path, cuts[i], &error);
        if (cuts[i] < sizeof(ElfW(Ehdr)))
            expect_text(error.text, "an ELF header is");
        else if (cuts[i] < img.headers_end)
            expect_text(error.text, "(to the end of its program headers)");
        else
            expect_text(error.text, "its program headers say");
    }
    /* Without its section headers, the copy says it has none (valgrind's
     * reader of debug information fails an assertion on a table past the end). */
    ElfW(Ehdr) eh, bare;
    memcpy(&eh, img.bytes, sizeof eh);
    bare = eh;
    bare.e_shoff = 0;
    bare.e_shnum = 0;
    bare.e_shstrndx = SHN_UNDEF;
    memcpy(img.bytes, &bare, sizeof bare);
    write_copy(img.bytes, img.loaded_end, path, sizeof path);
    memcpy(img.bytes, &eh, sizeof eh);
    expect_loads(path);
    write_copy(img.bytes, img.size, path, sizeof path);
    expect_loads(path);
    unlink(path);
    free(img.bytes);
}

/* Program headers no file could hold: "truncated or corrupt", never a crash. */
static void test_corrupt_program_headers(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh;
    memcpy(&eh, img.bytes, sizeof eh);
    char path[1024];
    percept_error error;

    ElfW(Ehdr) odd = eh; /* a program header size that is not this machine's */
    odd.e_phentsize = (ElfW(Half))(sizeof(ElfW(Phdr)) + 8);
    memcpy(img.bytes, &odd, sizeof odd);
    write_copy(img.bytes, img.size, path, sizeof path);
    expect_truncated(path, img.size, &error);
    expect_text(error.text, "truncated or corrupt: its ELF header says program headers are");

    odd = eh; /* a table whose offset wraps around */
    odd.e_phoff = (ElfW(Off)) - 8;
    memcpy(img.bytes, &odd, sizeof odd);
    write_copy(img.bytes, img.size, path, sizeof path);
    expect_truncated(path, img.size, &error);
    memcpy(img.bytes, &eh, sizeof eh);

    /* A loaded segment past the end of any file: its end wraps around. */
    for (size_t i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph, far;
        unsigned char *at = img.bytes + eh.e_phoff + i * sizeof ph;
        memcpy(&ph, at, sizeof ph);
        if (ph.p_type != PT_LOAD || ph.p_filesz == 0)
            continue;
        far = ph;
        far.p_offset = (ElfW(Off)) - 8;
        memcpy(at, &far, sizeof far);
        write_copy(img.bytes, img.size, path, sizeof path);
        expect_truncated(path, img.size, &error);
        memcpy(at, &ph, sizeof ph);
        break;
    }
    write_copy(img.bytes, img.size, path, sizeof path); /* restored: it loads */
    expect_loads(path);
    unlink(path);
    free(img.bytes);
}

/*
 * A program header table longer than the few headers the host reads at a
 * time: 16 empty entries, then the plugin's own, moved to the end of the
 * file. It loads as it is; when its last loaded segment promises a page and
 * a byte more than the file holds, it is refused like a file cut short.
 */
static void test_long_program_header_table(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh;
    memcpy(&eh, img.bytes, sizeof eh);
    size_t at = (img.size + 7) & ~(size_t)7, count = 16 + (size_t)eh.e_phnum;
    size_t size = at + count * sizeof(ElfW(Phdr));
    unsigned char *bytes = calloc(size, 1); /* zeros: PT_NULL entries */
    assert_non_null(bytes);
    memcpy(bytes, img.bytes, img.size);
    memcpy(bytes + at + 16 * sizeof(ElfW(Phdr)), img.bytes + eh.e_phoff,
           eh.e_phnum * sizeof(ElfW(Phdr)));
    ElfW(Ehdr) moved = eh;
    moved.e_phoff = (ElfW(Off))at;
    moved.e_phnum = (ElfW(Half))count;
    memcpy(bytes, &moved, sizeof moved);
    char path[1024];
    write_copy(bytes, size, path, sizeof path);
    expect_loads(path);

    size_t last = count;
    ElfW(Phdr) ph;
    for (size_t i = 0; i < count; i++) {
        memcpy(&ph, bytes + at + i * sizeof ph, sizeof ph);
        if (ph.p_type == PT_LOAD)
            last = i;
    }
    assert_true(last >= 16 && last < count);
    memcpy(&ph, bytes + at + last * sizeof ph, sizeof ph);
    size_t more = size - (size_t)(ph.p_offset + ph.p_filesz) + 4097;
    ph.p_filesz += more;
    ph.p_memsz += more;
    memcpy(bytes + at + last * sizeof ph, &ph, sizeof ph);
    write_copy(bytes, size, path, sizeof path);
    percept_error error;
    expect_truncated(path, size, &error);
    char says[96];
    snprintf(says, sizeof says, "its program headers say %zu bytes", size + 4097);
    expect_text(error.text, says);
    unlink(path);
    free(bytes);
    free(img.bytes);
}

/*
 * An ELF file of another class or byte order is not this check's to judge,
 * cut short or not: dlopen() refuses it safely, with its own words and the
 * hint about a file that is no shared object for this machine.
 */
static void test_other_elf_falls_through(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    const int fields[] = {EI_CLASS, EI_DATA};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        unsigned char saved = img.bytes[fields[i]];
        img.bytes[fields[i]] = fields[i] == EI_CLASS
                                   ? (saved == ELFCLASS64 ? ELFCLASS32 : ELFCLASS64)
                                   : (saved == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB);
        char path[1024], why[512];
        write_copy(img.bytes, sizeof(ElfW(Ehdr)), path, sizeof path);
        img.bytes[fields[i]] = saved;
        percept_error error;
        open_fails(truncated_ini, tmp_dir, PERCEPT_EPLUGIN, &error);
        dlopen_error(path, why, sizeof why);
        expect_text(error.text, path);
        expect_text(error.text, ": dlopen failed: ");
        expect_text(error.text, why);
        expect_text(error.text, "file(1)");
        if (strstr(error.text, "truncated") != NULL) {
            print_error("judged a file of another class or byte order: %s\n", error.text);
            fail();
        }
    }
    free(img.bytes);
}

/*
 * A plugin of this build's class and byte order but for another processor
 * (a cross-build copied to the wrong server): glibc's dlopen() says "No
 * such file or directory" of a file that is there, so the host names the
 * processor the file is built for and the one percept runs on, before
 * dlopen() is asked; nothing is loaded. Known and unknown machines, and a
 * copy cut short, whose machine is the first thing wrong with it.
 */
static void test_other_machine(void **state)
{
    (void)state;
#if ELF_MACHINE_OURS == EM_NONE
    skip(); /* the library leaves such files to dlopen() here */
#endif
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh;
    memcpy(&eh, img.bytes, sizeof eh);
    const unsigned real = eh.e_machine; /* what this build's plugins are built for */
    const struct {
        ElfW(Half) machine;
        const char *says;
        size_t length; /* of the copy: 0, the whole file */
    } cases[] = {
        {real == EM_AARCH64 ? EM_X86_64 : EM_AARCH64,
         real == EM_AARCH64 ? "x86-64 (amd64)" : "AArch64 (arm64)", 0},
        {0x7777, "a processor percept has no name for", 0},
        {real == EM_386 ? EM_X86_64 : EM_386,
         real == EM_386 ? "x86-64 (amd64)" : "32-bit x86 (i386)", sizeof eh},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eh.e_machine = cases[i].machine;
        memcpy(img.bytes, &eh, sizeof eh);
        char path[1024], says[1400];
        write_copy(img.bytes, cases[i].length ? cases[i].length : img.size, path, sizeof path);
        percept_error error;
        open_fails(truncated_ini, tmp_dir, PERCEPT_EPLUGIN, &error);
        snprintf(says, sizeof says,
                 "%s: built for another processor: ELF machine %u, %s; this percept runs on ELF "
                 "machine %u, ",
                 path, (unsigned)cases[i].machine, cases[i].says, real);
        expect_text(error.text, says);
        expect_text(error.text, "Build the plugin for this one");
        if (strstr(error.text, "dlopen") != NULL || strstr(error.text, "truncated") != NULL) {
            print_error("not judged by its machine: %s\n", error.text);
            fail();
        }
#ifdef RTLD_NOLOAD
        void *loaded = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (loaded != NULL)
            dlclose(loaded);
        assert_null(loaded);
#endif
    }
    free(img.bytes);
}

/* tmp_dir/badparam.so refused by dlopen() with the loader's words and,
 * where those are glibc's `loader_says`, the hint `hint`. */
static void expect_hint(const char *loader_says, const char *hint)
{
    char path[1024], why[512];
    plugin_path(path, sizeof path, tmp_dir, "badparam");
    percept_error error;
    open_fails(truncated_ini, tmp_dir, PERCEPT_EPLUGIN, &error);
    dlopen_error(path, why, sizeof why); /* what dlopen says of this very file */
    expect_text(error.text, path);
    expect_text(error.text, ": dlopen failed: ");
    expect_text(error.text, why);
    if (strstr(why, loader_says) != NULL)
        expect_text(error.text, hint);
    if (strstr(error.text, "ldd") != NULL) {
        print_error("a hint about dependencies for a file that is no plugin: %s\n", error.text);
        fail();
    }
}

/*
 * An object file left unlinked, and a program, in a plugin's place (a
 * build without -shared): each is told apart from a file that is no ELF
 * at all, with what to build instead. The object file and the program
 * without PIE are copies of a plugin with another e_type; the PIE is this
 * test program itself.
 */
static void test_object_file_or_program(void **state)
{
    (void)state;
    plugin_image img;
    read_image(&img);
    ElfW(Ehdr) eh;
    memcpy(&eh, img.bytes, sizeof eh);
    char path[1024];
    eh.e_type = ET_REL;
    memcpy(img.bytes, &eh, sizeof eh);
    write_copy(img.bytes, img.size, path, sizeof path);
    expect_hint("only ET_DYN and ET_EXEC", "This is an object file (cc -c), not a shared object");
    eh.e_type = ET_EXEC;
    memcpy(img.bytes, &eh, sizeof eh);
    write_copy(img.bytes, img.size, path, sizeof path);
    expect_hint("cannot dynamically load", "This is a program, not a shared object");
    free(img.bytes);

    /* This program, PIE or not: glibc refuses either to dlopen(). */
    if (access("/proc/self/exe", R_OK) != 0)
        return; /* no /proc: the copies above stand for it */
    tu_copy_file("/proc/self/exe", path);
    expect_hint("cannot dynamically load", "This is a program, not a shared object");
}

/* ------------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    plugin_dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

/* Empty and remove tmp_dir, even after a failed test left files behind. */
static int remove_tmp_dir(void)
{
    DIR *dir = opendir(tmp_dir);
    if (dir != NULL) {
        struct dirent *e;
        char path[sizeof tmp_dir + 256 + 2];
        while ((e = readdir(dir)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
            if (unlink(path) != 0)
                rmdir(path); /* a test's directory named like a plugin */
        }
        closedir(dir);
    }
    return rmdir(tmp_dir);
}

static int teardown(void **state)
{
    (void)state;
    return remove_tmp_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_working_plugin_loads),
        cmocka_unit_test(test_older_minor_abi_plugin_works),
        cmocka_unit_test(test_no_entry_symbol),
        cmocka_unit_test(test_undefined_symbol),
        cmocka_unit_test(test_wrong_abi_major),
        cmocka_unit_test(test_missing_operation),
        cmocka_unit_test(test_wrong_name),
        cmocka_unit_test(test_entry_returns_null),
        cmocka_unit_test(test_struct_too_small),
        cmocka_unit_test(test_parameter_rejected),
        cmocka_unit_test(test_parameter_unknown_key),
        cmocka_unit_test(test_parameter_index_out_of_range),
        cmocka_unit_test(test_parameter_without_reason),
        cmocka_unit_test(test_create_fails_as_a_whole),
        cmocka_unit_test(test_reserve_refused),
        cmocka_unit_test(test_not_a_shared_object),
        cmocka_unit_test(test_broken_default_backend),
        cmocka_unit_test(test_no_fallback_to_later_dir),
        cmocka_unit_test(test_no_fallback_past_a_non_file),
        cmocka_unit_test(test_not_found_lists_only_plugins),
        cmocka_unit_test(test_broken_via_options_backend),
        cmocka_unit_test(test_repeated_failure),
        cmocka_unit_test(test_truncated_plugin),
        cmocka_unit_test(test_other_machine),
        cmocka_unit_test(test_object_file_or_program),
        cmocka_unit_test(test_corrupt_program_headers),
        cmocka_unit_test(test_long_program_header_table),
        cmocka_unit_test(test_other_elf_falls_through),
    };
    /* The plain test driver reads any nonzero status as failure, and 77 as a skip. */
    if (cmocka_run_group_tests(tests, setup, teardown) != 0)
        return 1;
    /* Without the test plugins most of this suite did not run: say so rather than pass. */
    return plugin_dir != NULL ? 0 : 77;
}
