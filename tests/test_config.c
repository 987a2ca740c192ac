/*
 * test_config.c - the INI configuration: each error is refused with its
 * status, the line at fault and the section and key it names (percept_error),
 * from memory and from a file; valid configurations open and work.
 */
#include "testutil.h"

#include <dirent.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../tools/splitmix.h"

/* The label given to percept_world_open_string(). */
#define NAME "test.ini"

/* A scratch directory for config files, made by the group setup. */
static char tmp_dir[] = "/tmp/percept-cfg-XXXXXX";

/* The 1-based line of `text` that starts with `prefix` (0 if none). */
static int line_of(const char *text, const char *prefix)
{
    int line = 1;
    for (const char *p = text; *p != '\0'; line++) {
        if (strncmp(p, prefix, strlen(prefix)) == 0)
            return line;
        p = strchr(p, '\n');
        if (p == NULL)
            break;
        p++;
    }
    return 0;
}

/* Write `text` to a new file in tmp_dir; its path goes to `path`. */
static void write_config(const char *text, size_t len, char *path, size_t size)
{
    assert_true((size_t)snprintf(path, size, "%s/c-XXXXXX", tmp_dir) < size);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* Opens `text` (from memory, or through a file when `via_file`); the call
 * must fail with `status` and leave no world. */
static void open_failing(const char *text, int via_file, const percept_options *options, int status,
                         percept_error *error)
{
    percept_world *world = (percept_world *)&world; /* not NULL: the call must clear it */
    char path[512];
    memset(error, 0x55, sizeof *error);
    int got;
    if (via_file) {
        write_config(text, strlen(text), path, sizeof path);
        got = percept_world_open(&world, path, options, error);
        unlink(path);
    } else {
        got = percept_world_open_string(&world, text, NAME, options, error);
    }
    if (got != status)
        fail_msg("status %s, expected %s: %s", percept_status_name(got),
                 percept_status_name(status), got ? error->text : "");
    assert_null(world);
    assert_int_equal(error->status, status);
    assert_non_null(memchr(error->text, '\0', sizeof error->text));
    assert_true(error->text[0] != '\0');
}

/* The error names line `line`, [section] and key, exactly ("" where it names none). */
static void expect_place(const percept_error *error, int line, const char *section, const char *key)
{
    assert_non_null(memchr(error->section, '\0', sizeof error->section));
    assert_non_null(memchr(error->key, '\0', sizeof error->key));
    if (error->line != line || strcmp(error->section, section) != 0 || strcmp(error->key, key) != 0)
        fail_msg("line %d, [%s], key '%s'; expected line %d, [%s], key '%s': %s", error->line,
                 error->section, error->key, line, section, key, error->text);
}

/* Open a config that must be valid; fail with the library's message if it is not. */
static percept_world *open_ok(const char *text, const percept_options *options)
{
    percept_world *world = NULL;
    percept_error error;
    int status = percept_world_open_string(&world, text, NAME, options, &error);
    if (status != PERCEPT_OK)
        fail_msg("open failed: %s (%s)", percept_status_name(status), error.text);
    return world;
}

/* Two entities, 3 apart: observer 1 must perceive 2 by every sense the world has. */
static void expect_working_world(percept_world *world)
{
    percept_entity_desc observer = PERCEPT_ENTITY_DESC_INIT, target = PERCEPT_ENTITY_DESC_INIT;
    int senses = percept_sense_count(world);
    assert_true(senses >= 1 && senses <= PERCEPT_MAX_SENSES);
    for (int s = 0; s < senses; s++)
        observer.sense[s].range = 10;
    target.x = 3;
    assert_int_equal(percept_add(world, 1, &observer), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &target), PERCEPT_OK);
    for (int s = 0; s < senses; s++) {
        assert_non_null(percept_backend_name(world, (percept_sense)s));
        assert_int_equal(percept_perceives(world, 1, 2, (percept_sense)s), 1);
        assert_int_equal(percept_perceives(world, 2, 1, (percept_sense)s), 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Errors: each runs once from memory and once from a file                   */

typedef struct error_case {
    const char *title;
    const char *text;
    int status;
    const char *at;      /* the start of the line at fault; NULL: no line (0) */
    const char *section; /* percept_error.section */
    const char *key;     /* percept_error.key */
} error_case;

#define BF "[percept]\nbackend = bruteforce\n"
#define X100                                                                                       \
    "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" \
    "00000000"
#define HUGE_WORLD "[world]\nmax_x = 1e9\nmax_y = 1e9\n"
#define ECONFIG PERCEPT_ECONFIG
#define EPLUGIN PERCEPT_EPLUGIN

static const error_case error_cases[] = {
    {"unknown section", BF "\n[bogus]\nx = 1\n", ECONFIG, "[bogus]", "bogus", ""},
    {"unknown key in [percept]", BF "colour = blue\n", ECONFIG, "colour", "percept", "colour"},
    {"unknown key in [world]", BF "[world]\nmin_x = 0\nmin_z = 3\n", ECONFIG, "min_z", "world",
     "min_z"},
    {"observer_cell_size in [percept]", BF "observer_cell_size = 8\n", ECONFIG,
     "observer_cell_size", "percept", "observer_cell_size"},
    {"a backend parameter misspelt", BF "\n[sight]\nbackend = bruteforce\ncel_size = 3\n", ECONFIG,
     "cel_size", "sight", "cel_size"},
    {"a parameter of the default backend", BF "[hearing]\nobserver_cell_size = 16\nradius = 4\n",
     ECONFIG, "radius", "hearing", "radius"},
    {"a bound not a number", BF "[world]\nmin_x = abc\n", ECONFIG, "min_x", "world", "min_x"},
    {"a bound with trailing text", BF "[world]\nmin_y = 12abc\n", ECONFIG, "min_y", "world",
     "min_y"},
    {"a bound NaN", BF "[world]\nmin_x = 0\nmax_y = nan\n", ECONFIG, "max_y", "world", "max_y"},
    {"a bound infinite", BF "[world]\nmax_x = inf\n", ECONFIG, "max_x", "world", "max_x"},
    {"a bound empty", BF "[world]\nmax_x =\n", ECONFIG, "max_x", "world", "max_x"},
    {"a bound in hex", BF "[world]\nmax_x = 0x10\n", ECONFIG, "max_x", "world", "max_x"},
    {"inverted x bounds", BF "[world]\nmin_x = 100\nmax_x = 50\n", ECONFIG, "max_x", "world",
     "max_x"},
    {"inverted y bounds", BF "[world]\nmin_y = 8\nmax_y = 7\n", ECONFIG, "max_y", "world", "max_y"},
    /* One side set, the other at its default: the line of the key set. */
    {"inverted by max_x's default", BF "[world]\nmin_x = 2000\n", ECONFIG, "min_x", "world",
     "min_x"},
    {"inverted by min_y's default", BF "[world]\nmin_x = 1\nmax_y = -5\nmax_x = 9\n", ECONFIG,
     "max_y", "world", "max_y"},
    {"reserve negative", BF "[world]\nreserve = -1\n", ECONFIG, "reserve", "world", "reserve"},
    {"reserve not whole", BF "[world]\nreserve = 1.5\n", ECONFIG, "reserve", "world", "reserve"},
    {"reserve beyond a world's entities", BF "[world]\nreserve = 1e12\n", ECONFIG, "reserve",
     "world", "reserve"},
    {"threads 0", BF "[world]\nthreads = 0\n", ECONFIG, "threads", "world", "threads"},
    {"threads beyond 64", BF "[world]\nmin_x = 0\nthreads = 65\n", ECONFIG, "threads", "world",
     "threads"},
    {"threads not a number", BF "[world]\nthreads = x\n", ECONFIG, "threads", "world", "threads"},
    {"threads negative", BF "[world]\nthreads = -1\n", ECONFIG, "threads", "world", "threads"},
    {"move_events neither on nor off", BF "move_events = maybe\n", ECONFIG, "move_events",
     "percept", "move_events"},
    {"move_events empty", BF "move_events =\n", ECONFIG, "move_events", "percept", "move_events"},
    {"a key set twice in [percept]", BF "move_events = on\nmove_events = off\n", ECONFIG,
     "move_events = off", "percept", "move_events"},
    {"a key set twice in [world]", BF "[world]\nmin_x = 0\nmax_x = 10\nmin_x = 5\n", ECONFIG,
     "min_x = 5", "world", "min_x"},
    {"backend set twice in [sight]", BF "[sight]\nbackend = bruteforce\nbackend=bruteforce\n",
     ECONFIG, "backend=bruteforce", "sight", "backend"},
    {"a line without '='", BF "this line is not a key\n", ECONFIG, "this line", "", ""},
    {"an unclosed section", BF "[sight\nbackend = bruteforce\n", ECONFIG, "[sight", "", ""},
    {"a key before any section", "backend = bruteforce\n" BF, ECONFIG, "backend", "", "backend"},
    {"a section given twice",
     BF "[sight]\nobserver_cell_size = 8\n[hearing]\n  [sight]\nobserver_cell_size = 4\n", ECONFIG,
     "  [sight]", "sight", ""},
    {"an empty section given twice", BF "[world]\n  [world]\n", ECONFIG, "  [world]", "world", ""},
    /* inih drops what follows ']': the key would be lost without a word. */
    {"text after a section's ']'", BF "[hearing] backend = nosuch\n", ECONFIG, "[hearing]",
     "hearing", ""},
    {"a line too long", BF "[world]\nmin_x = 0." X100 X100 "1\nmax_x = 10\n", ECONFIG, "min_x", "",
     ""},
    /* Old Mac line ends: to inih the whole file is one line. */
    {"carriage returns alone", "[percept]\rbackend = bruteforce\r[sight]\rcel_size = 64\r", ECONFIG,
     "[percept]", "", ""},
    /* inih would skip a leading \v as a blank, and hide a section. */
    {"a control character before a section", BF "\v[bogus]\n", ECONFIG, "\v[bogus]", "", ""},
    {"a control character in a value", BF "[world]\nmax_x = 10\x1b\n", ECONFIG, "max_x", "", ""},
    {"a byte order mark before an unknown section", "\xEF\xBB\xBF[bogus]\n" BF, ECONFIG,
     "\xEF\xBB\xBF[bogus]", "bogus", ""},
    {"a byte order mark before a section given twice",
     "\xEF\xBB\xBF" BF "[percept]\nmove_events = on\n", ECONFIG, "[percept]\nmove_events",
     "percept", ""},
    {"no backend at all", "[world]\nmin_x = 0\n", ECONFIG, NULL, "sight", "backend"},
    {"no backend for hearing", "[sight]\nbackend = bruteforce\n[smell]\nbackend = bruteforce\n",
     ECONFIG, NULL, "hearing", "backend"},
    {"an empty backend name", "[percept]\nbackend =\n", ECONFIG, "backend", "percept", "backend"},
    {"a backend name with a slash", "[percept]\nbackend = ../bruteforce\n", ECONFIG, "backend",
     "percept", "backend"},
    /* inih ends a value at " ;" only: a '#' comment is read as part of it. */
    {"a '#' comment after the backend", "[percept]\nbackend = bruteforce # the simplest\n", ECONFIG,
     "backend", "percept", "backend"},
    {"a '#' comment after a parameter", "[percept]\nbackend = grid\n[sight]\ncell_size = 48 # x\n",
     ECONFIG, "cell_size", "sight", "cell_size"},
    {"an unknown backend", BF "[smell]\nbackend = nosuchbackend\n", EPLUGIN,
     "backend = nosuchbackend", "smell", "backend"},
    {"an unknown backend named by [percept]", "[percept]\nbackend = nosuch_5\n", EPLUGIN, "backend",
     "percept", "backend"},
    /* Named alike in [sight] and [smell]: one instance, blamed on the first. */
    {"an unknown backend shared", BF "[sight]\nbackend = nosuch_6\n[smell]\nbackend = nosuch_6\n",
     EPLUGIN, "backend = nosuch_6", "sight", "backend"},
    {"plugin_dir missing", BF "plugin_dir = /nonexistent/percept-plugins\n", ECONFIG, "plugin_dir",
     "percept", "plugin_dir"},
    {"observer_cell_size 0", BF "[sight]\nobserver_cell_size = 0\n", ECONFIG, "observer_cell_size",
     "sight", "observer_cell_size"},
    {"observer_cell_size negative", BF "[hearing]\nbackend = bruteforce\nobserver_cell_size = -8\n",
     ECONFIG, "observer_cell_size", "hearing", "observer_cell_size"},
    {"observer_cell_size not a number", BF "[smell]\nobserver_cell_size = wide\n", ECONFIG,
     "observer_cell_size", "smell", "observer_cell_size"},
    {"observer_cell_size NaN", BF "[sight]\nobserver_cell_size = nan\n", ECONFIG,
     "observer_cell_size", "sight", "observer_cell_size"},
    {"observer_cell_size with a decimal comma", BF "[smell]\nobserver_cell_size = 2,5\n", ECONFIG,
     "observer_cell_size", "smell", "observer_cell_size"},
    /* A thirty-second of it would underflow to 0 (a wrong relation once). */
    {"observer_cell_size subnormal", BF "[sight]\nobserver_cell_size = 5e-324\n", ECONFIG,
     "observer_cell_size", "sight", "observer_cell_size"},
    {"observer_cell_size below 1e-15", BF "[sight]\nobserver_cell_size = 0.00000000000000099\n",
     ECONFIG, "observer_cell_size", "sight", "observer_cell_size"},
    {"observer_cell_size read as 0", BF "[sight]\nobserver_cell_size = 1e-400\n", ECONFIG,
     "observer_cell_size", "sight", "observer_cell_size"},
    {"cell_size read as 0", "[percept]\nbackend = grid\n[sight]\ncell_size = 0.00001e-399\n",
     ECONFIG, "cell_size", "sight", "cell_size"},
    /* The core's observer grid: the sense whose key it is. */
    {"observer_cell_size too small for the bounds",
     BF "[world]\nmax_x = 1e12\nmax_y = 1e12\n[sight]\nobserver_cell_size = 1\n", ECONFIG,
     "observer_cell_size", "sight", "observer_cell_size"},
    {"a shared observer grid too small",
     BF "[world]\nmax_x = 1e12\nmax_y = 1e12\n[hearing]\nobserver_cell_size = 1\n"
        "[smell]\nobserver_cell_size = 1\n",
     ECONFIG, "observer_cell_size", "hearing", "observer_cell_size"},
    /* The same backend and parameters in two sections share an instance: a
     * parameter it refuses is blamed on the first section's key. */
    {"a parameter refused by a shared instance", BF "[sight]\nlevel = 2\n[smell]\nlevel = 2\n",
     ECONFIG, "level", "sight", "level"},
    {"cell_size 0 in a shared instance",
     "[percept]\nbackend = grid\n[hearing]\ncell_size = 0\n[smell]\ncell_size = 0\n", ECONFIG,
     "cell_size", "hearing", "cell_size"},
    /* The backend refuses its default size for these bounds: no parameter to
     * blame, so the key that chose the backend. */
    {"grid's default cell size on a huge world", "[percept]\nbackend = grid\n" HUGE_WORLD, ECONFIG,
     "backend = grid", "percept", "backend"},
    {"the same, from [sight] and [hearing]",
     BF HUGE_WORLD "[sight]\nbackend = grid\n[hearing]\nbackend = grid\n", ECONFIG,
     "backend = grid", "sight", "backend"},
    {"the same, from [hearing] and [percept]",
     "[percept]\nbackend = grid\n" HUGE_WORLD "[hearing]\nbackend=grid\n", ECONFIG,
     "backend = grid", "percept", "backend"},
    {"the same, from [sight] and [percept]",
     "[percept]\nbackend = grid\n" HUGE_WORLD "[sight]\nbackend=grid\n", ECONFIG, "backend=grid",
     "sight", "backend"},
    /* [world] senses: 1 to 8 distinct names, each a letter, then letters,
     * digits, '_' or '-', at most 31 bytes. */
    {"a ninth sense", BF "[world]\nmax_x = 10\nsenses = a b c d e f g h i\n", ECONFIG, "senses",
     "world", "senses"},
    {"nine senses, the last a default's", BF "[world]\nsenses = s1 s2 s3 s4 s5 s6 s7 s8 sight\n",
     ECONFIG, "senses", "world", "senses"},
    {"a sense named twice", BF "[world]\nsenses = sight hearing sight\n", ECONFIG, "senses",
     "world", "senses"},
    {"no sense", BF "[world]\nsenses =\n", ECONFIG, "senses", "world", "senses"},
    {"a sense name starting with a digit", BF "[world]\nsenses = sight 2nd\n", ECONFIG, "senses",
     "world", "senses"},
    {"a sense name starting with '_'", BF "[world]\nsenses = _sight\n", ECONFIG, "senses", "world",
     "senses"},
    {"a sense name starting with '-'", BF "[world]\nsenses = eyes -ears\n", ECONFIG, "senses",
     "world", "senses"},
    {"a sense name with a dot", BF "[world]\nsenses = sight.far\n", ECONFIG, "senses", "world",
     "senses"},
    {"a sense name with a comma", BF "[world]\nsenses = sight,hearing\n", ECONFIG, "senses",
     "world", "senses"},
    {"a sense name not ASCII",
     BF "[world]\nsenses = sight v\xC3\xBC"
        "e\n",
     ECONFIG, "senses", "world", "senses"},
    {"a sense name of 32 bytes", BF "[world]\nsenses = a_sense_with_a_name_of_32_bytes_\n", ECONFIG,
     "senses", "world", "senses"},
    {"senses set twice", BF "[world]\nsenses = eyes\nmax_x = 5\nsenses = ears\n", ECONFIG,
     "senses = ears", "world", "senses"},
    {"senses in [percept]", BF "senses = eyes\n", ECONFIG, "senses", "percept", "senses"},
    {"a section of a default sense the world lacks",
     BF "[world]\nsenses = eyes ears\n[eyes]\nobserver_cell_size = 8\n[sight]\n", ECONFIG,
     "[sight]", "sight", ""},
    {"no backend for a named sense", "[world]\nsenses = eyes ears\n[eyes]\nbackend = bruteforce\n",
     ECONFIG, NULL, "ears", "backend"},
    {"a named sense's backend unknown",
     BF "[world]\nsenses = eyes ears\n[ears]\nbackend = nosuch\n", EPLUGIN, "backend = nosuch",
     "ears", "backend"},
    {"a named sense's parameter misspelt",
     BF "[world]\nsenses = eyes ears\n[ears]\nobserver_cel_size = 8\n", ECONFIG,
     "observer_cel_size", "ears", "observer_cel_size"},
};

static void run_error_case(const error_case *c, int via_file)
{
    percept_error error;
    open_failing(c->text, via_file, NULL, c->status, &error);
    int line = c->at != NULL ? line_of(c->text, c->at) : 0;
    assert_true(c->at == NULL || line > 0); /* a broken table, not a library bug */
    expect_place(&error, line, c->section, c->key);
}

static void test_error_from_string(void **state)
{
    run_error_case(*state, 0);
}

static void test_error_from_file(void **state)
{
    run_error_case(*state, 1);
}

/* ------------------------------------------------------------------------ */
/* Other failures                                                            */

static void test_missing_file_or_directory(void **state)
{
    (void)state;
    char path[512];
    percept_world *world = (percept_world *)&world;
    percept_error error;
    snprintf(path, sizeof path, "%s/does-not-exist.ini", tmp_dir);
    assert_int_equal(percept_world_open(&world, path, NULL, &error), PERCEPT_EIO);
    assert_null(world);
    assert_int_equal(error.status, PERCEPT_EIO);
    expect_place(&error, 0, "", "");
    /* A directory: refused as a file that cannot be read, or is no config. */
    world = (percept_world *)&world;
    int status = percept_world_open(&world, tmp_dir, NULL, &error);
    assert_true(status == PERCEPT_EIO || status == PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.status, status);
    /* Reported even to a caller that passes no percept_error. */
    world = (percept_world *)&world;
    assert_int_equal(percept_world_open_string(&world, "[bogus]\n", NAME, NULL, NULL),
                     PERCEPT_ECONFIG);
    assert_null(world);
}

/* The first error wins, and the message names the config's label ("<string>" by default). */
static void test_first_error_reported(void **state)
{
    (void)state;
    const char *text = BF "first_bad = 1\n[second_bad]\n";
    percept_world *world = NULL;
    percept_error error;
    assert_int_equal(percept_world_open_string(&world, text, NULL, NULL, &error), PERCEPT_ECONFIG);
    expect_place(&error, 3, "percept", "first_bad");
    assert_non_null(strstr(error.text, "<string>"));
}

/* The longest line accepted (GUARANTEES.md, "Limits"), with either line end,
 * and one character more; a byte order mark takes none of the first line's room. */
static void test_line_length_limit(void **state)
{
    (void)state;
    const int limit = 198;
    for (int kind = 0; kind < 3; kind++) {
        for (int extra = 0; extra < 2; extra++) {
            char text[512];
            int n = kind < 2 ? snprintf(text, sizeof text, BF "[world]\nmax_x = 10")
                             : snprintf(text, sizeof text, "\xEF\xBB\xBF;");
            int start = kind < 2 ? n - 10 : 3;
            while (n - start < limit + extra)
                text[n++] = kind < 2 ? ' ' : 'x'; /* inih drops a value's trailing blanks */
            snprintf(text + n, sizeof text - (size_t)n, "%s",
                     kind == 0   ? "\n"
                     : kind == 1 ? "\r\n"
                                 : "\n" BF);
            percept_world *world = NULL;
            percept_error error;
            int status = percept_world_open_string(&world, text, NAME, NULL, &error);
            percept_world_close(world);
            if (status != (extra ? PERCEPT_ECONFIG : PERCEPT_OK))
                fail_msg("a line of %d characters (kind %d): %s", limit + extra, kind,
                         status ? error.text : "opens");
            if (extra)
                expect_place(&error, kind < 2 ? 4 : 1, "", "");
        }
    }
}

/* A file that is not text: a NUL byte is an error at its line, and a device
 * that never ends a line is refused rather than read for ever. */
static void test_not_text(void **state)
{
    (void)state;
    static const char text[] = BF "[world]\nmax_x = 64\0junk\n";
    char path[512];
    percept_world *world = NULL;
    percept_error error;
    write_config(text, sizeof text - 1, path, sizeof path);
    int status = percept_world_open(&world, path, NULL, &error);
    unlink(path);
    assert_int_equal(status, PERCEPT_ECONFIG);
    assert_null(world);
    expect_place(&error, 4, "", "");
    if (access("/dev/zero", R_OK) != 0)
        return;
    alarm(20); /* a reader looking for the end of the line would hang here */
    status = percept_world_open(&world, "/dev/zero", NULL, &error);
    alarm(0);
    assert_true(status < 0 && world == NULL);
}

/* A config is a page of text: a FIFO in its place is refused at once (the
 * reader must not wait for a writer), and so is more than 1 MiB, from a
 * file or from memory; 1 MiB itself opens. */
static void test_size_and_kind_bounded(void **state)
{
    (void)state;
    char path[512];
    percept_world *world = (percept_world *)&world;
    percept_error error;
    snprintf(path, sizeof path, "%s/fifo.ini", tmp_dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(20);
    int status = percept_world_open(&world, path, NULL, &error);
    alarm(0);
    unlink(path);
    assert_int_equal(status, PERCEPT_EIO);
    assert_null(world);
    expect_place(&error, 0, "", "");

    const size_t limit = 1u << 20;
    char *text = malloc(limit + 2);
    assert_non_null(text);
    size_t head = strlen(BF);
    memcpy(text, BF, head);
    memset(text + head, ';', limit - head); /* one long comment line... */
    for (size_t i = head + 100; i < limit; i += 101)
        text[i] = '\n'; /* ...cut into lines inih takes */
    text[limit] = '\0';
    world = open_ok(text, NULL);
    percept_world_close(world);
    write_config(text, limit, path, sizeof path);
    assert_int_equal(percept_world_open(&world, path, NULL, &error), PERCEPT_OK);
    percept_world_close(world);
    unlink(path);

    text[limit] = '\n';
    text[limit + 1] = '\0';
    open_failing(text, 0, NULL, PERCEPT_ECONFIG, &error);
    expect_place(&error, 0, "", "");
    open_failing(text, 1, NULL, PERCEPT_ECONFIG, &error);
    expect_place(&error, 0, "", "");
    free(text);
}

/* [world] reserve makes the room for its entities at creation, and
 * percept_options.reserve replaces it: adding that many grows no array. */
static void test_reserve(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    for (int via_options = 0; via_options < 2; via_options++) {
        options.reserve = via_options ? 3000 : 0;
        percept_world *world = open_ok(
            via_options ? BF "[world]\nreserve = 10\n" : BF "[world]\nreserve = 3000\n", &options);
        percept_memory before, after;
        assert_int_equal(percept_memory_usage(world, &before), PERCEPT_OK);
        for (percept_id id = 0; id < 3000; id++) {
            percept_entity_desc d = tu_desc(id % 60, id / 60, 0, 0, 0, 0);
            assert_int_equal(percept_add(world, id, &d), PERCEPT_OK);
        }
        assert_int_equal(percept_memory_usage(world, &after), PERCEPT_OK);
        assert_int_equal(after.entities, before.entities);
        percept_entity_desc d = tu_desc(0, 0, 0, 0, 0, 0);
        assert_int_equal(percept_add(world, 3000, &d), PERCEPT_OK); /* beyond: it grows */
        assert_int_equal(percept_memory_usage(world, &after), PERCEPT_OK);
        assert_true(after.entities > before.entities);
        percept_world_close(world);
    }
    options.reserve = (size_t)1 << 30; /* beyond a world's 2^24 - 1 entities */
    open_failing(BF, 0, &options, PERCEPT_EINVAL, &(percept_error){0});
}

/*
 * [world] threads takes 1 to 64 (the error cases refuse the rest), and
 * percept_options.threads replaces it, up to 64 too. Each world's tick
 * works whatever its threads.
 */
static void test_threads(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    for (int n = 1; n <= 64; n++) {
        char text[128];
        snprintf(text, sizeof text, BF "[world]\nthreads = %d\n", n);
        options.threads = n % 2 ? 0 : (size_t)(65 - n);
        percept_world *world = open_ok(text, &options);
        expect_working_world(world);
        const percept_change tick[] = {TU_CH_MOVE(1, 20, 0, 0), TU_CH_MOVE(2, 22, 0, 0)};
        assert_int_equal(percept_tick(world, tick, COUNT_OF(tick)), PERCEPT_OK);
        assert_int_equal(percept_perceives(world, 1, 2, PERCEPT_SIGHT), 1);
        percept_world_close(world);
    }
    percept_error error;
    options.threads = 65;
    open_failing(BF, 0, &options, PERCEPT_EINVAL, &error);
    options.threads = SIZE_MAX;
    open_failing(BF "[world]\nthreads = 2\n", 0, &options, PERCEPT_EINVAL, &error);
}

/* A key or section of 70 characters is cut to 63 bytes in its field, wherever found. */
static void test_long_names_cut(void **state)
{
    (void)state;
    char name[71], cut[64];
    for (int i = 0; i < 70; i++)
        name[i] = (char)('a' + i % 26);
    name[70] = '\0';
    memcpy(cut, name, 63);
    cut[63] = '\0';
    static const struct {
        const char *before, *after, *section; /* NULL: the name, cut */
        int line, name_is_key;
    } cases[] = {
        {BF, " = 1\n", "percept", 3, 1},
        {BF "[sight]\n", " = 1\n", "sight", 4, 1},
        {"[", "]\n" BF, NULL, 1, 0},
    };
    for (size_t i = 0; i < COUNT_OF(cases); i++) {
        char text[256];
        percept_error error;
        snprintf(text, sizeof text, "%s%s%s", cases[i].before, name, cases[i].after);
        open_failing(text, 0, NULL, PERCEPT_ECONFIG, &error);
        expect_place(&error, cases[i].line, cases[i].section ? cases[i].section : cut,
                     cases[i].name_is_key ? cut : "");
    }
}

/* A label longer than the message's room: the fields still name what is at fault. */
static void test_long_label(void **state)
{
    (void)state;
    char label[700];
    percept_world *world = NULL;
    percept_error error;
    memset(label, 'd', sizeof label - 1);
    label[sizeof label - 1] = '\0';
    assert_int_equal(percept_world_open_string(&world, BF "colour = blue\n", label, NULL, &error),
                     PERCEPT_ECONFIG);
    expect_place(&error, 3, "percept", "colour");
    assert_non_null(memchr(error.text, '\0', sizeof error.text));
}

/* A control byte of the config text reaches the message as \xNN; the field keeps it. */
static void test_control_bytes_escaped(void **state)
{
    (void)state;
    percept_error error;
    open_failing(BF "col\tour = blue\n", 0, NULL, PERCEPT_ECONFIG, &error);
    expect_place(&error, 3, "percept", "col\tour");
    if (strstr(error.text, "col\\x09our") == NULL || strchr(error.text, '\t') != NULL)
        fail_msg("the tab is not shown as \\x09: %s", error.text);
}

/* Failures before anything is read name nothing; a world that opens leaves the
 * error as it was, or clear. */
static void test_what_errors_name(void **state)
{
    (void)state;
    percept_world *world = (percept_world *)&world;
    percept_error error, untouched;
    memset(&error, 0x55, sizeof error);
    assert_int_equal(percept_world_open_string(&world, NULL, NAME, NULL, &error), PERCEPT_EINVAL);
    assert_null(world);
    expect_place(&error, 0, "", "");
    memset(&error, 0x55, sizeof error);
    memset(&untouched, 0x55, sizeof untouched);
    world = NULL;
    assert_int_equal(percept_world_open_string(&world, BF, NAME, NULL, &error), PERCEPT_OK);
    percept_world_close(world);
    if (memcmp(&error, &untouched, sizeof error) != 0) {
        assert_int_equal(error.status, 0);
        expect_place(&error, 0, "", "");
    }
}

/* ------------------------------------------------------------------------ */
/* Valid configurations                                                      */

static const char full_config[] = "; percept test configuration: every section\n"
                                  "# both comment styles\n\n"
                                  "[percept]\nbackend = bruteforce\nmove_events = on\n\n"
                                  "[world]\n  min_x = -500.5\nmin_y=-250\nmax_x = 1500\n"
                                  "max_y = 2e3\n\n"
                                  "[sight]\n; the default backend again\nbackend = bruteforce\n"
                                  "observer_cell_size = 32\n"
                                  "[hearing]\n# the default backend\nobserver_cell_size = 64.5\n"
                                  "[smell]\nbackend = bruteforce\n";

static void test_full_config(void **state)
{
    (void)state;
    percept_world *world = open_ok(full_config, NULL);
    expect_working_world(world);
    percept_world_close(world);
    char path[512];
    write_config(full_config, sizeof full_config - 1, path, sizeof path);
    percept_error error;
    int status = percept_world_open(&world, path, NULL, &error);
    unlink(path);
    if (status != PERCEPT_OK)
        fail_msg("from a file: %s", error.text);
    expect_working_world(world);
    percept_world_close(world);
}

/* Section and key order do not matter, nor do sections without keys; what
 * editors write is read as meant: a byte order mark, CRLF, comments after ']'. */
static void test_any_order_and_editors(void **state)
{
    (void)state;
    percept_world *world = open_ok("[smell]\n[world]\nmax_y = 10\nmin_y = -10\n"
                                   "[sight]\nobserver_cell_size = 4\n"
                                   "[percept]\nmove_events = off\nbackend = bruteforce\n",
                                   NULL);
    expect_working_world(world);
    percept_world_close(world);
    world = open_ok("\xEF\xBB\xBF[percept] ; the library's own\r\nbackend = bruteforce\r\n"
                    "[world]\t# the map\r\nmax_x = 64\r\n",
                    NULL);
    expect_working_world(world);
    percept_world_close(world);
}

/* The senses a world names: their count, names and indexes, in the config's
 * order, each with the section of its name; the default ones otherwise. */
static void test_named_senses(void **state)
{
    (void)state;
    static const char *const eight[] = {
        "Radio-X", "a_sense_with_the_longest_name31", "e", "heat_2", "sight", "smell2", "t0uch",
        "z"};
    char text[1024];
    int n = snprintf(text, sizeof text, BF "[world]\nsenses =");
    for (int s = 0; s < 8; s++)
        n += snprintf(text + n, sizeof text - (size_t)n, " %s", eight[s]);
    snprintf(text + n, sizeof text - (size_t)n,
             "\n[a_sense_with_the_longest_name31]\nobserver_cell_size = 8\n[z]\nbackend = grid\n"
             "cell_size = 16\n");
    percept_world *world = open_ok(text, NULL);
    assert_int_equal(percept_sense_count(world), 8);
    for (int s = 0; s < 8; s++) {
        assert_string_equal(percept_sense_name(world, s), eight[s]);
        assert_int_equal(percept_sense_index(world, eight[s]), s);
    }
    assert_null(percept_sense_name(world, 8));
    assert_int_equal(percept_sense_index(world, "hearing"), PERCEPT_ENOENT);
    assert_string_equal(percept_backend_name(world, 7), "grid");
    assert_string_equal(percept_backend_name(world, 1), "bruteforce");
    expect_working_world(world);
    percept_world_close(world);

    /* One sense; and the default names in another order: the constants
     * PERCEPT_SIGHT, ... are indexes, naming those senses only by default. */
    world = open_ok(BF "[world]\nsenses = eyes\n[eyes]\nobserver_cell_size = 4\n", NULL);
    assert_int_equal(percept_sense_count(world), 1);
    assert_string_equal(percept_sense_name(world, 0), "eyes");
    assert_null(percept_sense_name(world, 1));
    expect_working_world(world);
    percept_world_close(world);
    world = open_ok(BF "[world]\nsenses = smell sight\n", NULL);
    assert_int_equal(percept_sense_index(world, "sight"), 1);
    assert_string_equal(percept_sense_name(world, PERCEPT_SIGHT), "smell");
    assert_int_equal(percept_sense_index(world, "hearing"), PERCEPT_ENOENT);
    percept_world_close(world);
    world = open_ok(BF, NULL);
    assert_int_equal(percept_sense_count(world), 3);
    assert_string_equal(percept_sense_name(world, PERCEPT_SIGHT), "sight");
    assert_string_equal(percept_sense_name(world, PERCEPT_HEARING), "hearing");
    assert_string_equal(percept_sense_name(world, PERCEPT_SMELL), "smell");
    assert_int_equal(percept_sense_index(world, "smell"), PERCEPT_SMELL);
    assert_null(percept_sense_name(world, 3));
    assert_null(percept_sense_name(world, -1));
    percept_world_close(world);
}

/* Every accepted spelling of move_events, and its default, by whether MOVE events come. */
static void count_moves(void *user, const percept_event *event)
{
    *(int *)user += event->kind == PERCEPT_MOVE;
}

static void test_move_events_values(void **state)
{
    (void)state;
    static const char *const values[] = {"on", "off", "true", "false", "yes", "no", "1", "0", NULL};
    for (size_t i = 0; i < COUNT_OF(values); i++) {
        char text[128];
        snprintf(text, sizeof text, BF "%s%s\n", values[i] ? "move_events = " : "",
                 values[i] ? values[i] : "");
        percept_world *world = open_ok(text, NULL);
        int moves = 0;
        assert_int_equal(percept_set_event_callback(world, count_moves, &moves), PERCEPT_OK);
        percept_entity_desc observer = tu_desc(0, 0, 100, 0, 0, 0),
                            target = tu_desc(10, 0, 0, 0, 0, 0);
        assert_int_equal(percept_add(world, 1, &observer), PERCEPT_OK);
        assert_int_equal(percept_add(world, 2, &target), PERCEPT_OK);
        assert_int_equal(percept_move(world, 2, 20.0, 0.0), PERCEPT_OK);
        if (moves != (i % 2 == 0))
            fail_msg("move_events = %s gave %d MOVE events", values[i] ? values[i] : "(unset)",
                     moves);
        percept_world_close(world);
    }
}

/* A server may set a locale whose decimal point is ','; numbers in a
 * configuration are read with '.' whatever the locale. Skipped where no such
 * locale is installed. */
static void test_decimal_point_in_any_locale(void **state)
{
    (void)state;
    if (!setlocale(LC_ALL, "de_DE.UTF-8") && !setlocale(LC_ALL, "de_DE.utf8"))
        skip();
    if (strcmp(localeconv()->decimal_point, ",") != 0) {
        setlocale(LC_ALL, "C");
        skip();
    }
    percept_world *world = NULL;
    percept_error error;
    int status = percept_world_open_string(&world,
                                           "[percept]\nbackend = grid\n[world]\nmin_x = -0.5\n"
                                           "max_x = 100.5\nmax_y = 1.005e2\n[sight]\n"
                                           "cell_size = 12.5\nobserver_cell_size = 8.5\n",
                                           NAME, NULL, &error);
    setlocale(LC_ALL, "C");
    if (status != PERCEPT_OK)
        fail_msg("%s", error.text);
    expect_working_world(world);
    percept_world_close(world);
}

/* PERCEPT_PLUGIN_PATH's first directory holding NAME.so, and "/NAME.so". */
static void first_in_plugin_path(const char *name, char *out, size_t size)
{
    const char *dirs = getenv("PERCEPT_PLUGIN_PATH");
    assert_non_null(dirs);
    for (const char *d = dirs; *d;) {
        size_t len = strcspn(d, ":");
        snprintf(out, size, "%.*s/%s.so", (int)len, d, name);
        if (access(out, F_OK) == 0)
            return;
        d += len + (d[len] == ':');
    }
    fail_msg("no %s.so in PERCEPT_PLUGIN_PATH %s", name, dirs);
}

/* Per-sense backends (the test plugins' working "badparam" for smell), each
 * named with the file it runs; and plugin_dir in the config is searched too. */
static void test_per_sense_backends(void **state)
{
    (void)state;
    const char *dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    if (dir == NULL)
        skip();
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    percept_world *world =
        open_ok(BF "[smell]\nbackend = badparam\nlevel = 2\nobserver_cell_size = 16\n", &options);
    assert_string_equal(percept_backend_name(world, PERCEPT_SIGHT), "bruteforce");
    assert_string_equal(percept_backend_name(world, PERCEPT_HEARING), "bruteforce");
    assert_string_equal(percept_backend_name(world, PERCEPT_SMELL), "badparam");
    char want[4096];
    snprintf(want, sizeof want, "%s/badparam.so", dir);
    assert_string_equal(percept_backend_path(world, PERCEPT_SMELL), want);
    first_in_plugin_path("bruteforce", want, sizeof want);
    assert_string_equal(percept_backend_path(world, PERCEPT_SIGHT), want);
    expect_working_world(world);
    percept_world_close(world);

    char text[1024];
    snprintf(text, sizeof text, BF "plugin_dir = %s\n[hearing]\nbackend = badparam\n", dir);
    world = open_ok(text, NULL);
    assert_string_equal(percept_backend_name(world, PERCEPT_HEARING), "badparam");
    expect_working_world(world);
    percept_world_close(world);
}

/* The repository's default config must open as shipped. */
static void test_default_config(void **state)
{
    (void)state;
    const char *path = getenv("PERCEPT_TEST_CONF");
    if (path == NULL)
        skip();
    percept_world *world = NULL;
    percept_error error;
    if (percept_world_open(&world, path, NULL, &error) != PERCEPT_OK)
        fail_msg("%s: %s", path, error.text);
    expect_working_world(world);
    percept_world_close(world);
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

static void test_options_backend(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    percept_error error;
    /* It overrides the config's backend, and supplies one where it names none. */
    options.backend = "bruteforce";
    percept_world *world = open_ok("[percept]\nbackend = nosuchbackend\n", &options);
    for (int s = 0; s < percept_sense_count(world); s++)
        assert_string_equal(percept_backend_name(world, (percept_sense)s), "bruteforce");
    expect_working_world(world);
    percept_world_close(world);
    world = open_ok("", &options);
    expect_working_world(world);
    percept_world_close(world);
    /* It gets a section's parameters where the file names the same backend:
     * one it refuses is the file's key. */
    open_failing(BF "[sight]\nlevel = 1\n", 0, &options, PERCEPT_ECONFIG, &error);
    expect_place(&error, 4, "sight", "level");
    /* One that refuses its setup, or is not installed: nothing in the file to blame. */
    options.backend = "grid";
    open_failing(HUGE_WORLD, 0, &options, PERCEPT_ECONFIG, &error);
    expect_place(&error, 0, "", "");
    options.backend = "nosuch";
    open_failing(BF, 0, &options, PERCEPT_EPLUGIN, &error);
    expect_place(&error, 0, "", "");
    /* A name, never a path: a bad one is refused before any file is opened. */
    static const char *const bad[] = {"", "../bruteforce", "bruteforce.so", "/tmp/x", "a b"};
    for (size_t i = 0; i < COUNT_OF(bad); i++) {
        options.backend = bad[i];
        open_failing("", 0, &options, PERCEPT_EINVAL, &error);
        expect_place(&error, 0, "", "");
    }
    options = (percept_options)PERCEPT_OPTIONS_INIT;
    options.plugin_dir = "/nonexistent/percept-plugins";
    open_failing(BF, 0, &options, PERCEPT_EINVAL, &error);
    expect_place(&error, 0, "", "");
}

/* Opens `text` with `bounds` in the options (may be NULL); returns the status. */
static int try_open_bounds(const char *text, const percept_bounds *bounds, percept_error *error)
{
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.bounds = bounds;
    percept_world *world = NULL;
    int status = percept_world_open_string(&world, text, NAME, &options, error);
    percept_world_close(world);
    return status;
}

/*
 * options.bounds replaces [world], which is still checked, and is checked
 * like it. The observer grid is sized from the bounds: where the core refuses
 * a 1-unit cell on a huge world, the options' bounds, not [world], decide.
 */
static void test_options_bounds(void **state)
{
    (void)state;
    const percept_bounds inverted = {0, 0, -10, 10}, not_a_number = {0, 0, 10, NAN};
    const percept_bounds small = {0, 0, 100, 100}, huge = {0, 0, 1e12, 1e12};
    const percept_bounds vast = {-1e15, -1e15, 1e15, 1e15};
    percept_error error;
    assert_int_equal(try_open_bounds(BF, &inverted, &error), PERCEPT_EINVAL);
    assert_int_equal(try_open_bounds(BF, &not_a_number, &error), PERCEPT_EINVAL);
    assert_int_equal(try_open_bounds(BF "[world]\nmin_x = 0\nmax_x = 5000\n", &small, &error),
                     PERCEPT_OK);
    assert_int_equal(try_open_bounds(BF "[world]\nmin_x = 5\nmax_x = 1\n", &small, &error),
                     PERCEPT_ECONFIG);
    const char *cell_1 =
        BF "[world]\nmax_x = 1e12\nmax_y = 1e12\n[sight]\nobserver_cell_size = 1\n";
    const char *cell_1_small = BF "[world]\nmax_x = 100\nmax_y = 100\n[sight]\n"
                                  "observer_cell_size = 1\n";
    assert_int_equal(try_open_bounds(cell_1, &small, &error), PERCEPT_OK);
    assert_int_equal(try_open_bounds(cell_1_small, &huge, &error), PERCEPT_ECONFIG);
    /* A cell size the config's bounds take, refused for the options': the key and line. */
    const char *grid = "[percept]\nbackend = grid\n[world]\nmax_x = 1000\nmax_y = 1000\n"
                       "[sight]\ncell_size = 64\n";
    assert_int_equal(try_open_bounds(grid, NULL, &error), PERCEPT_OK);
    assert_int_equal(try_open_bounds(grid, &vast, &error), PERCEPT_ECONFIG);
    expect_place(&error, 7, "sight", "cell_size");
}

/* ------------------------------------------------------------------------ */
/* Senses sharing an observer grid                                           */

typedef struct event_tally {
    size_t count;
    uint64_t hash; /* FNV-1a over every field, in delivery order */
} event_tally;

static void tally_event(void *user, const percept_event *e)
{
    event_tally *t = user;
    const uint64_t fields[6] = {
        (uint64_t)e->kind, (uint64_t)e->sense,      e->observer,
        e->target,         (uint64_t)(e->x * 1024), (uint64_t)(e->y * 1024)};
    for (int i = 0; i < 6; i++)
        t->hash = (t->hash ^ fields[i]) * 0x100000001b3ull;
    t->count++;
}

/* A fixed walk of short- and a few long-sighted entities in a world opened
 * from `text`: its events go to *tally; returns the observer grids' bytes. */
static size_t shared_grid_run(const char *text, event_tally *tally)
{
    percept_world *world = open_ok(text, NULL);
    *tally = (event_tally){0, 0xcbf29ce484222325ull};
    assert_int_equal(percept_set_event_callback(world, tally_event, tally), PERCEPT_OK);
    uint64_t r = 12345;
    for (int round = 0; round < 6; round++) {
        for (percept_id id = 1; id <= 300; id++) {
            double x = 512 * splitmix_unit(&r), y = 512 * splitmix_unit(&r);
            if (round > 0) {
                assert_int_equal(percept_move(world, id, x, y), PERCEPT_OK);
                continue;
            }
            /* Within 1.25 cells of 64 but every tenth: near observers where the grid allows. */
            double reach = id % 10 == 0 ? 200 : 20 + 50 * splitmix_unit(&r);
            percept_entity_desc d = tu_desc(x, y, reach, reach / 2, 0, 0);
            assert_int_equal(percept_add(world, id, &d), PERCEPT_OK);
        }
    }
    percept_memory memory;
    assert_int_equal(percept_memory_usage(world, &memory), PERCEPT_OK);
    percept_world_close(world);
    return memory.observer_grids;
}

/*
 * [sight] and [hearing] share an observer grid (one cell size) but not a
 * backend: the grid leaves short-sighted observers to whichever of its
 * backends answers small queries cheaply (grid), whatever the sense order.
 * Swapping the two backends must change nothing: the same events, the same
 * grid bytes, fewer than with no such backend (bruteforce for both).
 */
static void test_shared_grid_any_order(void **state)
{
    (void)state;
    static const char *const pairs[3][2] = {
        {"bruteforce", "grid"}, {"grid", "bruteforce"}, {"bruteforce", "bruteforce"}};
    size_t bytes[3];
    event_tally tally[3];
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text,
                 BF "[world]\nmax_x = 512\nmax_y = 512\n[sight]\nbackend = %s\n"
                    "observer_cell_size = 64\n[hearing]\nbackend = %s\nobserver_cell_size = 64\n",
                 pairs[i][0], pairs[i][1]);
        bytes[i] = shared_grid_run(text, &tally[i]);
    }
    assert_true(tally[0].count > 1000);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(tally[i].count, tally[0].count);
        assert_true(tally[i].hash == tally[0].hash);
    }
    assert_int_equal(bytes[0], bytes[1]);
    assert_true(bytes[0] < bytes[2]);
}

/* ------------------------------------------------------------------------ */

static int make_tmp_dir(void **state)
{
    (void)state;
    return mkdtemp(tmp_dir) != NULL ? 0 : -1;
}

/* Empty and remove tmp_dir, even after a failed test left files behind. */
static int remove_tmp_dir(void **state)
{
    (void)state;
    DIR *dir = opendir(tmp_dir);
    if (dir != NULL) {
        struct dirent *e;
        char path[sizeof tmp_dir + 256 + 2];
        while ((e = readdir(dir)) != NULL) {
            snprintf(path, sizeof path, "%s/%s", tmp_dir, e->d_name);
            if (e->d_name[0] != '.')
                unlink(path);
        }
        closedir(dir);
    }
    return rmdir(tmp_dir);
}

static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_missing_file_or_directory),
    cmocka_unit_test(test_first_error_reported),
    cmocka_unit_test(test_line_length_limit),
    cmocka_unit_test(test_not_text),
    cmocka_unit_test(test_size_and_kind_bounded),
    cmocka_unit_test(test_reserve),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_long_names_cut),
    cmocka_unit_test(test_long_label),
    cmocka_unit_test(test_control_bytes_escaped),
    cmocka_unit_test(test_what_errors_name),
    cmocka_unit_test(test_full_config),
    cmocka_unit_test(test_any_order_and_editors),
    cmocka_unit_test(test_named_senses),
    cmocka_unit_test(test_move_events_values),
    cmocka_unit_test(test_decimal_point_in_any_locale),
    cmocka_unit_test(test_per_sense_backends),
    cmocka_unit_test(test_default_config),
    cmocka_unit_test(test_options_backend),
    cmocka_unit_test(test_options_bounds),
    cmocka_unit_test(test_shared_grid_any_order),
};

#define ERROR_CASES COUNT_OF(error_cases)

int main(void)
{
    static char titles[2 * ERROR_CASES][96];
    struct CMUnitTest tests[COUNT_OF(fixed_tests) + 2 * ERROR_CASES];
    memcpy(tests, fixed_tests, sizeof fixed_tests);
    for (size_t k = 0; k < 2 * ERROR_CASES; k++) {
        const error_case *c = &error_cases[k / 2];
        snprintf(titles[k], sizeof titles[k], "%s (%s)", c->title, k % 2 ? "file" : "string");
        tests[COUNT_OF(fixed_tests) + k] =
            (struct CMUnitTest){titles[k], k % 2 ? test_error_from_file : test_error_from_string,
                                NULL, NULL, (void *)c};
    }
    /* The plain test driver reads any nonzero status as failure, and 77 as a skip. */
    return cmocka_run_group_tests(tests, make_tmp_dir, remove_tmp_dir) == 0 ? 0 : 1;
}
