/*
 * test_config.c - the INI configuration: every error is refused with its status,
 * line, a message naming file, line, section and key, and percept_error's
 * fields saying the same for programs; valid configs open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "percept.h"

/* The label given to percept_world_open_string(); messages must start with it. */
#define NAME "test.ini"

/* A scratch directory for config files, made by the group setup. */
static char tmp_dir[] = "/tmp/percept-cfg-XXXXXX";

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */

/* The 1-based line of `text` that starts with `prefix` (0 if none): the line at fault. */
static int line_of(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    int line = 1;
    for (const char *p = text; *p != '\0'; line++) {
        if (strncmp(p, prefix, n) == 0)
            return line;
        p = strchr(p, '\n');
        if (p == NULL)
            break;
        p++;
    }
    return 0;
}

/* Fail, showing the message, unless `needle` occurs in the error text. */
static void expect_text(const percept_error *error, const char *needle)
{
    if (strstr(error->text, needle) == NULL) {
        print_error("expected \"%s\" in the message \"%s\"\n", needle, error->text);
        fail();
    }
}

/* A char array of percept_error: NUL-terminated within it, and equal to `want`. */
static void expect_field(const percept_error *error, const char *name, const char *field,
                         size_t size, const char *want)
{
    if (memchr(field, '\0', size) == NULL) {
        print_error("error.%s is not NUL-terminated; message: %s\n", name, error->text);
        fail();
    }
    if (strcmp(field, want) != 0) {
        print_error("error.%s is \"%s\", expected \"%s\"; message: %s\n", name, field, want,
                    error->text);
        fail();
    }
}

/* What a failure names, for programs: section, key, option and senses, exactly. */
static void expect_fields(const percept_error *error, const char *section, const char *key,
                          const char *option, unsigned senses)
{
    assert_non_null(memchr(error->text, '\0', sizeof error->text));
    expect_field(error, "section", error->section, sizeof error->section, section);
    expect_field(error, "key", error->key, sizeof error->key, key);
    expect_field(error, "option", error->option, sizeof error->option, option);
    if (error->senses != senses) {
        print_error("error.senses is 0x%x, expected 0x%x; message: %s\n", error->senses, senses,
                    error->text);
        fail();
    }
}

/*
 * The message is `place` ": " REASON, error.reason the offset of REASON;
 * with no place (NULL) it is all reason, and error.reason 0. text + reason
 * must begin with `reason` (not checked when NULL).
 */
static void expect_reason(const percept_error *error, const char *place, const char *reason)
{
    assert_non_null(memchr(error->text, '\0', sizeof error->text));
    size_t len = strlen(error->text);
    if (error->reason < 0 || (size_t)error->reason > len) {
        print_error("error.reason %d is outside the message (%zu characters): %s\n", error->reason,
                    len, error->text);
        fail();
    }
    size_t n = place != NULL ? strlen(place) : 0;
    size_t want = place != NULL ? n + 2 : 0;
    if ((size_t)error->reason != want ||
        (place != NULL &&
         (strncmp(error->text, place, n) != 0 || strncmp(error->text + n, ": ", 2) != 0))) {
        print_error("error.reason %d, expected %zu: the message should be \"%s: \" and the "
                    "reason; it is: %s\n",
                    error->reason, want, place != NULL ? place : "", error->text);
        fail();
    }
    if (reason != NULL && strncmp(error->text + error->reason, reason, strlen(reason)) != 0) {
        print_error("text + reason is \"%s\", expected it to begin \"%s\"\n",
                    error->text + error->reason, reason);
        fail();
    }
}

/* A failure that names no place and nothing else but `option`: reason 0, all else empty. */
static void expect_bare(const percept_error *error, const char *option)
{
    expect_fields(error, "", "", option, 0);
    expect_reason(error, NULL, NULL);
}

/* Write `text` to a new file in tmp_dir; its path goes to `path`. */
static void write_config(const char *text, char *path, size_t size)
{
    assert_true((size_t)snprintf(path, size, "%s/c-XXXXXX", tmp_dir) < size);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    size_t len = strlen(text);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* Open `text` from memory as NAME, or through a file when `via_file`. */
static int open_config(percept_world **out, const char *text, int via_file,
                       const percept_options *options, percept_error *error, char *file,
                       size_t file_size)
{
    if (!via_file) {
        snprintf(file, file_size, "%s", NAME);
        return percept_world_open_string(out, text, NAME, options, error);
    }
    write_config(text, file, file_size);
    int status = percept_world_open(out, file, options, error);
    unlink(file);
    return status;
}

/* Open a config that must be valid; fail with the library's message if it is not. */
static percept_world *open_ok(const char *text, const percept_options *options)
{
    percept_world *world = NULL;
    percept_error error;
    memset(&error, 0, sizeof error);
    int status = percept_world_open_string(&world, text, NAME, options, &error);
    if (status != PERCEPT_OK) {
        print_error("open failed: %s (%s)\n", percept_status_name(status), error.text);
        fail();
    }
    assert_non_null(world);
    return world;
}

/* Two entities, 3 apart: observer 1 must perceive 2 by every sense. */
static void expect_working_world(percept_world *world)
{
    percept_entity_desc observer = {0.0, 0.0, {10.0, 10.0, 10.0}, 0u};
    percept_entity_desc target = {3.0, 0.0, {0.0, 0.0, 0.0}, 0u};
    assert_int_equal(percept_add(world, 1, &observer), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &target), PERCEPT_OK);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        assert_non_null(percept_backend_name(world, (percept_sense)s));
        assert_int_equal(percept_perceives(world, 1, 2, (percept_sense)s), 1);
        assert_int_equal(percept_perceives(world, 2, 1, (percept_sense)s), 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Error cases: each runs once from memory and once from a file              */

/*
 * What percept_error's structured fields must hold besides the text: the
 * message is PLACE ": " REASON, PLACE being "FILE:LINE" (or "FILE" when the
 * error has no line) followed by `place`. The option field is "" throughout
 * (no percept_options here).
 */
typedef struct error_case {
    const char *title;
    const char *text;
    int status;
    const char *at;        /* the start of the line at fault; NULL: no line (0) */
    const char *needle[3]; /* further substrings the message must contain */
    const char *place;     /* the place's rest after "FILE:LINE" ("" for none) */
    const char *section;   /* percept_error.section, exactly */
    const char *key;       /* percept_error.key, exactly */
    unsigned senses;       /* percept_error.senses, exactly */
    const char *reason;    /* how text + reason begins */
} error_case;

/* Sense bits, for the expected `senses`. */
#define SIGHT PERCEPT_SENSE_BIT(PERCEPT_SIGHT)
#define HEARING PERCEPT_SENSE_BIT(PERCEPT_HEARING)
#define SMELL PERCEPT_SENSE_BIT(PERCEPT_SMELL)
#define ALL_SENSES (SIGHT | HEARING | SMELL)

/* Building blocks of an over-long line. */
#define X10 "0000000000"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10

static const error_case error_cases[] = {
    {"unknown section",
     "[percept]\nbackend = bruteforce\n\n[bogus]\nx = 1\n",
     PERCEPT_ECONFIG,
     "[bogus]",
     {"unknown section [bogus]"},
     "",
     "bogus",
     "",
     0,
     "unknown section [bogus]"},
    {"unknown key in [percept]",
     "[percept]\nbackend = bruteforce\ncolour = blue\n",
     PERCEPT_ECONFIG,
     "colour",
     {"key 'colour' in [percept]:"},
     ": key 'colour' in [percept]",
     "percept",
     "colour",
     0,
     "unknown key"},
    {"unknown key in [world]",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 0\nmin_z = 3\n",
     PERCEPT_ECONFIG,
     "min_z",
     {"key 'min_z' in [world]:"},
     ": key 'min_z' in [world]",
     "world",
     "min_z",
     0,
     "unknown key"},
    {"typo'd backend parameter",
     "[percept]\nbackend = bruteforce\n\n[sight]\nbackend = bruteforce\ncel_size = 3\n",
     PERCEPT_ECONFIG,
     "cel_size",
     {"key 'cel_size' in [sight]:"},
     ": key 'cel_size' in [sight]",
     "sight",
     "cel_size",
     SIGHT,
     "unknown parameter"},
    {"backend parameter of the default backend",
     "[percept]\nbackend = bruteforce\n[hearing]\nobserver_cell_size = 16\nradius = 4\n",
     PERCEPT_ECONFIG,
     "radius",
     {"key 'radius' in [hearing]:"},
     ": key 'radius' in [hearing]",
     "hearing",
     "radius",
     HEARING,
     "unknown parameter"},
    {"bound not a number",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = abc\n",
     PERCEPT_ECONFIG,
     "min_x",
     {"key 'min_x' in [world]:"},
     ": key 'min_x' in [world]",
     "world",
     "min_x",
     0,
     "must be a decimal number"},
    {"bound with trailing garbage",
     "[percept]\nbackend = bruteforce\n[world]\nmin_y = 12abc\n",
     PERCEPT_ECONFIG,
     "min_y",
     {"key 'min_y' in [world]:"},
     ": key 'min_y' in [world]",
     "world",
     "min_y",
     0,
     "must be a decimal number"},
    {"bound NaN",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 0\nmax_y = nan\n",
     PERCEPT_ECONFIG,
     "max_y",
     {"key 'max_y' in [world]:"},
     ": key 'max_y' in [world]",
     "world",
     "max_y",
     0,
     "must be a decimal number"},
    {"bound infinite",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = inf\n",
     PERCEPT_ECONFIG,
     "max_x",
     {"key 'max_x' in [world]:"},
     ": key 'max_x' in [world]",
     "world",
     "max_x",
     0,
     "must be a decimal number"},
    {"bound empty",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x =\n",
     PERCEPT_ECONFIG,
     "max_x",
     {"key 'max_x' in [world]:"},
     ": key 'max_x' in [world]",
     "world",
     "max_x",
     0,
     "must be a decimal number"},
    {"inverted x bounds",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 100\nmax_x = 50\n",
     PERCEPT_ECONFIG,
     "max_x",
     {"max_x", "min_x"},
     ": [world]",
     "world",
     "max_x",
     0,
     "the bounds are inverted"},
    {"inverted y bounds",
     "[percept]\nbackend = bruteforce\n[world]\nmin_y = 8\nmax_y = 7\n",
     PERCEPT_ECONFIG,
     "max_y",
     {"max_y", "min_y"},
     ": [world]",
     "world",
     "max_y",
     0,
     "the bounds are inverted"},
    /* One side set, the other left at its default: the line of the key set. */
    {"inverted x bounds, max_x by default",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 2000\n",
     PERCEPT_ECONFIG,
     "min_x",
     {"min_x 2000", "max_x 1024", "default"},
     ": [world]",
     "world",
     "min_x",
     0,
     "the bounds are inverted"},
    {"inverted y bounds, min_y by default",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 1\nmax_y = -5\nmax_x = 9\n",
     PERCEPT_ECONFIG,
     "max_y",
     {"min_y 0", "max_y -5", "default"},
     ": [world]",
     "world",
     "max_y",
     0,
     "the bounds are inverted"},
    {"move_events bad value",
     "[percept]\nbackend = bruteforce\nmove_events = maybe\n",
     PERCEPT_ECONFIG,
     "move_events",
     {"key 'move_events' in [percept]:"},
     ": key 'move_events' in [percept]",
     "percept",
     "move_events",
     0,
     "must be on or off"},
    {"move_events empty",
     "[percept]\nbackend = bruteforce\nmove_events =\n",
     PERCEPT_ECONFIG,
     "move_events",
     {"key 'move_events' in [percept]:"},
     ": key 'move_events' in [percept]",
     "percept",
     "move_events",
     0,
     "must be on or off"},
    {"duplicate key in [percept]",
     "[percept]\nbackend = bruteforce\nmove_events = on\nmove_events = off\n",
     PERCEPT_ECONFIG,
     "move_events = off",
     {"key 'move_events' in [percept]:"},
     ": key 'move_events' in [percept]",
     "percept",
     "move_events",
     0,
     "set twice (first on line 3)"},
    {"duplicate key in [world]",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 0\nmax_x = 10\nmin_x = 5\n",
     PERCEPT_ECONFIG,
     "min_x = 5",
     {"key 'min_x' in [world]:"},
     ": key 'min_x' in [world]",
     "world",
     "min_x",
     0,
     "set twice (first on line 4)"},
    {"duplicate backend key in [sight]",
     "[percept]\nbackend = bruteforce\n[sight]\nbackend = bruteforce\nbackend=bruteforce\n",
     PERCEPT_ECONFIG,
     "backend=bruteforce",
     {"key 'backend' in [sight]:"},
     ": key 'backend' in [sight]",
     "sight",
     "backend",
     SIGHT,
     "set twice (first on line 4)"},
    {"syntax error: no '='",
     "[percept]\nbackend = bruteforce\nthis line is not a key\n",
     PERCEPT_ECONFIG,
     "this line",
     {"syntax error"},
     "",
     "",
     "",
     0,
     "syntax error"},
    {"syntax error: unclosed section",
     "[percept]\nbackend = bruteforce\n[sight\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     "[sight",
     {"syntax error"},
     "",
     "",
     "",
     0,
     "syntax error"},
    {"no backend at all",
     "[world]\nmin_x = 0\n",
     PERCEPT_ECONFIG,
     NULL,
     {"backend", "sight"},
     "",
     "sight",
     "backend",
     SIGHT,
     "no backend for sense 'sight'"},
    {"no backend for hearing",
     "[sight]\nbackend = bruteforce\n[smell]\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     NULL,
     {"backend", "hearing"},
     "",
     "hearing",
     "backend",
     HEARING,
     "no backend for sense 'hearing'"},
    {"empty backend name",
     "[percept]\nbackend =\n",
     PERCEPT_ECONFIG,
     "backend",
     {"key 'backend' in [percept]:"},
     ": key 'backend' in [percept]",
     "percept",
     "backend",
     0,
     "a backend name is"},
    {"unknown backend",
     "[percept]\nbackend = bruteforce\n[smell]\nbackend = nosuchbackend\n",
     PERCEPT_EPLUGIN,
     "backend = nosuchbackend",
     {"nosuchbackend", "bruteforce"},
     ": key 'backend' in [smell]",
     "smell",
     "backend",
     SMELL,
     "no backend 'nosuchbackend'"},
    {"backend name with a slash",
     "[percept]\nbackend = ../bruteforce\n",
     PERCEPT_ECONFIG,
     "backend",
     {"key 'backend' in [percept]:"},
     ": key 'backend' in [percept]",
     "percept",
     "backend",
     0,
     "a backend name is"},
    {"plugin_dir does not exist",
     "[percept]\nbackend = bruteforce\nplugin_dir = /nonexistent/percept-plugins\n",
     PERCEPT_ECONFIG,
     "plugin_dir",
     {"key 'plugin_dir' in [percept]:", "/nonexistent/percept-plugins"},
     ": key 'plugin_dir' in [percept]",
     "percept",
     "plugin_dir",
     0,
     "'/nonexistent/percept-plugins' is not a directory"},
    {"line too long",
     "[percept]\nbackend = bruteforce\n[world]\nmin_x = 0." X100 X100 X100 "1\nmax_x = 10\n",
     PERCEPT_ECONFIG,
     "min_x",
     {"too long"},
     "",
     "",
     "",
     0,
     "line too long"},
    /* inih drops what follows ']': the key would be lost without a word. */
    {"text after a section's ']'",
     "[percept]\nbackend = bruteforce\n[hearing] backend = nosuch\n",
     PERCEPT_ECONFIG,
     "[hearing]",
     {"text after [hearing]: 'backend = nosuch'", "a line of its own"},
     "",
     "hearing",
     "",
     HEARING,
     "text after [hearing]"},
    /* Old Mac line ends: to inih the whole file is one line. */
    {"carriage returns alone",
     "[percept]\rbackend = bruteforce\r[sight]\rcel_size = 64\r",
     PERCEPT_ECONFIG,
     "[percept]",
     {"a carriage return inside the line"},
     "",
     "",
     "",
     0,
     "a carriage return inside the line"},
    /* inih would skip a leading \v or \f as a blank, and make the line a
     * continuation of the key before it, or hide a section. */
    {"control character before a section",
     "[percept]\nbackend = bruteforce\n\v[bogus]\n",
     PERCEPT_ECONFIG,
     "\v[bogus]",
     {"control character 0x0b in the line"},
     "",
     "",
     "",
     0,
     "control character 0x0b"},
    {"control character inside a value",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = 10\x1b\n",
     PERCEPT_ECONFIG,
     "max_x",
     {"control character 0x1b in the line"},
     "",
     "",
     "",
     0,
     "control character 0x1b"},
    {"byte order mark before an unknown section",
     "\xEF\xBB\xBF[bogus]\n[percept]\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     "\xEF\xBB\xBF[bogus]",
     {"unknown section [bogus]"},
     "",
     "bogus",
     "",
     0,
     "unknown section [bogus]"},
    {"byte order mark after a blank",
     " \xEF\xBB\xBF[hearing] backend = nosuch\n[percept]\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     " \xEF\xBB\xBF[hearing]",
     {"a byte order mark that does not begin the file"},
     "",
     "",
     "",
     0,
     "a byte order mark that does not begin the file"},
    {"two byte order marks",
     "\xEF\xBB\xBF\xEF\xBB\xBF[bogus]\n[percept]\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     "\xEF\xBB\xBF\xEF\xBB\xBF[bogus]",
     {"a byte order mark that does not begin the file"},
     "",
     "",
     "",
     0,
     "a byte order mark that does not begin the file"},
    {"byte order mark before a section given twice",
     "\xEF\xBB\xBF[percept]\nbackend = bruteforce\n[percept]\nmove_events = on\n",
     PERCEPT_ECONFIG,
     "[percept]\nmove_events",
     {"section [percept] given again (first on line 1)"},
     "",
     "percept",
     "",
     0,
     "section [percept] given again (first on line 1)"},
    {"key before any section",
     "backend = bruteforce\n[percept]\nbackend = bruteforce\n",
     PERCEPT_ECONFIG,
     "backend",
     {"backend"},
     "",
     "",
     "backend",
     0,
     "key 'backend' before any [section]"},
    {"observer_cell_size zero",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = 0\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [sight]:"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "must be a number from"},
    {"observer_cell_size negative",
     "[percept]\nbackend = bruteforce\n[hearing]\nbackend = bruteforce\nobserver_cell_size = -8\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [hearing]:"},
     ": key 'observer_cell_size' in [hearing]",
     "hearing",
     "observer_cell_size",
     HEARING,
     "must be a number from"},
    {"observer_cell_size not a number",
     "[percept]\nbackend = bruteforce\n[smell]\nobserver_cell_size = wide\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [smell]:"},
     ": key 'observer_cell_size' in [smell]",
     "smell",
     "observer_cell_size",
     SMELL,
     "must be a number from"},
    /* A thirty-second of it would underflow to 0 (a wrong relation once). */
    {"observer_cell_size subnormal",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = 5e-324\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [sight]: must be a number from 1e-15 to 1e15"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "must be a number from"},
    {"observer_cell_size below 1e-15",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = 0.00000000000000099\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"must be a number from 1e-15 to 1e15"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "must be a number from"},
    {"observer_cell_size NaN",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = nan\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [sight]:"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "must be a number from"},
    /* inih would merge them; the second's keys would meet the first's backend. */
    {"section given twice",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = 8\n[hearing]\n"
     "observer_cell_size = 8\n  [sight]\nobserver_cell_size = 4\n",
     PERCEPT_ECONFIG,
     "  [sight]",
     {"section [sight] given again", "first on line 3"},
     "",
     "sight",
     "",
     SIGHT,
     "section [sight] given again (first on line 3)"},
    {"empty section given twice",
     "[percept]\nbackend = bruteforce\n[world]\n  [world]\n",
     PERCEPT_ECONFIG,
     "  [world]",
     {"section [world] given again", "first on line 3"},
     "",
     "world",
     "",
     0,
     "section [world] given again (first on line 3)"},
    /* The core reads numbers as the backends do: plain decimals only. */
    {"bound in hex",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = 0x10\n",
     PERCEPT_ECONFIG,
     "max_x",
     {"key 'max_x' in [world]:", "read '0x10'"},
     ": key 'max_x' in [world]",
     "world",
     "max_x",
     0,
     "must be a decimal number"},
    {"observer_cell_size with a decimal comma",
     "[percept]\nbackend = bruteforce\n[smell]\nobserver_cell_size = 2,5\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [smell]:", "read '2,5'"},
     ": key 'observer_cell_size' in [smell]",
     "smell",
     "observer_cell_size",
     SMELL,
     "must be a number from"},
    /* 1e-400 is nearest to 0 as a double: the message says why a positive
     * number was refused as not greater than 0. */
    {"observer_cell_size below the smallest double",
     "[percept]\nbackend = bruteforce\n[sight]\nobserver_cell_size = 1e-400\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"read '1e-400', which is too small for a double: 0)"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "must be a number from"},
    {"a backend's cell_size below the smallest double",
     "[percept]\nbackend = grid\n[sight]\ncell_size = 0.00001e-399\n",
     PERCEPT_ECONFIG,
     "cell_size",
     {"read '0.00001e-399', which is too small for a double: 0)"},
     ": key 'cell_size' in [sight]",
     "sight",
     "cell_size",
     SIGHT,
     "must be a number greater than 0"},
    /* inih ends a value at " ;" only: a '#' comment is read as part of it. */
    {"'#' comment after the backend",
     "[percept]\nbackend = bruteforce # the simplest\n",
     PERCEPT_ECONFIG,
     "backend",
     {"read 'bruteforce # the simplest'", "starts with ' ;'"},
     ": key 'backend' in [percept]",
     "percept",
     "backend",
     0,
     "a backend name is"},
    {"'#' comment after a backend parameter",
     "[percept]\nbackend = grid\n[sight]\ncell_size = 48 # tuned\n",
     PERCEPT_ECONFIG,
     "cell_size",
     {"key 'cell_size' in [sight]:", "read '48 # tuned'", "starts with ' ;'"},
     ": key 'cell_size' in [sight]",
     "sight",
     "cell_size",
     SIGHT,
     "must be a plain decimal number"},
    /* The backend refuses its default size for these bounds: no parameter to
     * blame, so the line that chose it, naming every sense it serves. */
    {"grid's default cell size on a huge world",
     "[percept]\nbackend = grid\n[world]\nmax_x = 1e9\nmax_y = 1e9\n",
     PERCEPT_ECONFIG,
     "backend = grid",
     {"used for [sight], [hearing], [smell]", "cell_size 64 (the default)", "hashgrid"},
     ": key 'backend' in [percept] (used for [sight], [hearing], [smell])",
     "percept",
     "backend",
     ALL_SENSES,
     "backend 'grid' ("},
    /* ... and so when the backend comes from a sense's own section. */
    {"grid's default cell size, from [sight] and [hearing]",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = 1e9\nmax_y = 1e9\n"
     "[sight]\nbackend = grid\n[hearing]\nbackend = grid\n",
     PERCEPT_ECONFIG,
     "backend = grid",
     {"key 'backend' in [sight] (used for [sight], [hearing]): ", "cell_size 64 (the default)"},
     ": key 'backend' in [sight] (used for [sight], [hearing])",
     "sight",
     "backend",
     SIGHT | HEARING,
     "backend 'grid' ("},
    {"grid's default cell size, from [hearing] and [percept]",
     "[percept]\nbackend = grid\n[world]\nmax_x = 1e9\nmax_y = 1e9\n"
     "[hearing]\nbackend=grid\n",
     PERCEPT_ECONFIG,
     "backend = grid",
     {"key 'backend' in [percept] (used for [sight], [hearing], [smell]): "},
     ": key 'backend' in [percept] (used for [sight], [hearing], [smell])",
     "percept",
     "backend",
     ALL_SENSES,
     "backend 'grid' ("},
    {"grid's default cell size, from [sight] and [percept]",
     "[percept]\nbackend = grid\n[world]\nmax_x = 1e9\nmax_y = 1e9\n"
     "[sight]\nbackend=grid\n",
     PERCEPT_ECONFIG,
     "backend=grid",
     {"key 'backend' in [sight] (used for [sight], [hearing], [smell]): "},
     ": key 'backend' in [sight] (used for [sight], [hearing], [smell])",
     "sight",
     "backend",
     ALL_SENSES,
     "backend 'grid' ("},
    {"observer_cell_size in [percept]",
     "[percept]\nbackend = bruteforce\nobserver_cell_size = 8\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [percept]:"},
     ": key 'observer_cell_size' in [percept]",
     "percept",
     "observer_cell_size",
     0,
     "unknown key"},
    /* The one instance [percept] names serves all three senses. */
    {"unknown backend named by [percept]",
     "[percept]\nbackend = nosuch_5\n",
     PERCEPT_EPLUGIN,
     "backend",
     {"nosuch_5"},
     ": key 'backend' in [percept] (used for [sight], [hearing], [smell])",
     "percept",
     "backend",
     ALL_SENSES,
     "no backend 'nosuch_5'"},
    /* Named alike in [sight] and [smell]: one instance, blamed on the first. */
    {"unknown backend shared by [sight] and [smell]",
     "[percept]\nbackend = bruteforce\n[sight]\nbackend = nosuch_6\n[smell]\nbackend = nosuch_6\n",
     PERCEPT_EPLUGIN,
     "backend = nosuch_6",
     {"nosuch_6"},
     ": key 'backend' in [sight] (used for [sight], [smell])",
     "sight",
     "backend",
     SIGHT | SMELL,
     "no backend 'nosuch_6'"},
    /* The same backend and parameters in two sections share an instance: a
     * parameter it refuses concerns both senses, the key named is the first's. */
    {"parameter refused by the instance [sight] and [smell] share",
     "[percept]\nbackend = bruteforce\n[sight]\nlevel = 2\n[smell]\nlevel = 2\n",
     PERCEPT_ECONFIG,
     "level",
     {"key 'level' in [sight]:"},
     ": key 'level' in [sight]",
     "sight",
     "level",
     SIGHT | SMELL,
     "unknown parameter"},
    {"parameter refused by the instance [hearing] and [smell] share",
     "[percept]\nbackend = grid\n[hearing]\ncell_size = 0\n[smell]\ncell_size = 0\n",
     PERCEPT_ECONFIG,
     "cell_size",
     {"key 'cell_size' in [hearing]:", "read '0')"},
     ": key 'cell_size' in [hearing]",
     "hearing",
     "cell_size",
     HEARING | SMELL,
     "must be a number"},
    /* The core's observer grid, not a backend: the sense whose key it is. */
    {"observer_cell_size too small for the bounds",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = 1e12\nmax_y = 1e12\n"
     "[sight]\nobserver_cell_size = 1\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"too small for the world bounds"},
     ": key 'observer_cell_size' in [sight]",
     "sight",
     "observer_cell_size",
     SIGHT,
     "1 is too small"},
    /* [hearing] and [smell] share the grid; the specification names only
     * the sense whose key is blamed (bit(S)), not those sharing it. */
    {"observer_cell_size too small, shared by [hearing] and [smell]",
     "[percept]\nbackend = bruteforce\n[world]\nmax_x = 1e12\nmax_y = 1e12\n"
     "[hearing]\nobserver_cell_size = 1\n[smell]\nobserver_cell_size = 1\n",
     PERCEPT_ECONFIG,
     "observer_cell_size",
     {"key 'observer_cell_size' in [hearing]:"},
     ": key 'observer_cell_size' in [hearing]",
     "hearing",
     "observer_cell_size",
     HEARING,
     "1 is too small"},
};

#define ERROR_CASE_COUNT (sizeof error_cases / sizeof error_cases[0])

static void run_error_case(const error_case *c, int via_file)
{
    percept_world *world = (percept_world *)&world; /* not NULL: the call must clear it */
    percept_error error;
    memset(&error, 0x55, sizeof error);
    char file[512];
    int status = open_config(&world, c->text, via_file, NULL, &error, file, sizeof file);
    if (status != c->status)
        print_error("status %s, expected %s; message: %s\n", percept_status_name(status),
                    percept_status_name(c->status), error.text);
    assert_int_equal(status, c->status);
    assert_null(world);
    assert_int_equal(error.status, c->status);
    assert_non_null(memchr(error.text, '\0', sizeof error.text));
    int line = c->at != NULL ? line_of(c->text, c->at) : 0;
    assert_true(c->at == NULL || line > 0); /* a broken table, not a library bug */
    if (error.line != line)
        print_error("line %d, expected %d; message: %s\n", error.line, line, error.text);
    assert_int_equal(error.line, line);
    char prefix[600];
    if (line > 0)
        snprintf(prefix, sizeof prefix, "%s:%d: ", file, line);
    else
        snprintf(prefix, sizeof prefix, "%s", file);
    expect_text(&error, prefix);
    for (size_t i = 0; i < 3 && c->needle[i] != NULL; i++)
        expect_text(&error, c->needle[i]);
    char place[700];
    if (line > 0)
        snprintf(place, sizeof place, "%s:%d%s", file, line, c->place);
    else
        snprintf(place, sizeof place, "%s%s", file, c->place);
    expect_fields(&error, c->section, c->key, "", c->senses);
    expect_reason(&error, place, c->reason);
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

static void test_missing_file(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/does-not-exist.ini", tmp_dir);
    percept_world *world = (percept_world *)&world;
    percept_error error;
    memset(&error, 0x55, sizeof error);
    assert_int_equal(percept_world_open(&world, path, NULL, &error), PERCEPT_EIO);
    assert_null(world);
    assert_int_equal(error.status, PERCEPT_EIO);
    assert_int_equal(error.line, 0);
    char needle[600];
    snprintf(needle, sizeof needle, "cannot open config '%s'", path);
    expect_text(&error, needle);
    expect_text(&error, strerror(ENOENT));
    expect_bare(&error, "");
    expect_reason(&error, NULL, "cannot open config '");
}

static void test_directory_as_file(void **state)
{
    (void)state;
    percept_world *world = (percept_world *)&world;
    percept_error error;
    memset(&error, 0, sizeof error);
    int status = percept_world_open(&world, tmp_dir, NULL, &error);
    assert_true(status == PERCEPT_EIO || status == PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.status, status);
    expect_text(&error, tmp_dir);
    /* The reason, as the system gives it (where fopen() takes a directory,
     * reading it fails with EISDIR). */
    expect_text(&error, strerror(EISDIR));
    if (status == PERCEPT_EIO)
        expect_bare(&error, ""); /* "cannot read config": no place, no key */
}

/* A failure must be reported even to a caller that passes no percept_error. */
static void test_error_without_error_struct(void **state)
{
    (void)state;
    percept_world *world = (percept_world *)&world;
    assert_int_equal(percept_world_open_string(&world, "[bogus]\n", NAME, NULL, NULL),
                     PERCEPT_ECONFIG);
    assert_null(world);
}

/* Without a name the text is labelled "<string>". */
static void test_default_name(void **state)
{
    (void)state;
    percept_world *world = (percept_world *)&world;
    percept_error error;
    memset(&error, 0, sizeof error);
    const char *text = "[percept]\nbackend = bruteforce\n[nope]\n";
    assert_int_equal(percept_world_open_string(&world, text, NULL, NULL, &error), PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.line, 3);
    expect_text(&error, "<string>:3: unknown section [nope]");
    expect_fields(&error, "nope", "", "", 0);
    expect_reason(&error, "<string>:3", "unknown section [nope]");
}

/* The first error wins: a later one must not overwrite its line or message. */
static void test_first_error_reported(void **state)
{
    (void)state;
    const char *text = "[percept]\nbackend = bruteforce\nfirst_bad = 1\n[second_bad]\n";
    percept_world *world = (percept_world *)&world;
    percept_error error;
    memset(&error, 0, sizeof error);
    assert_int_equal(percept_world_open_string(&world, text, NAME, NULL, &error), PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.line, line_of(text, "first_bad"));
    expect_text(&error, "key 'first_bad' in [percept]");
    expect_fields(&error, "percept", "first_bad", "", 0);
    expect_reason(&error, NAME ":3: key 'first_bad' in [percept]", "unknown key");
}

/* Opens `text` with PERCEPT_PLUGIN_PATH set to `path` for the call alone;
 * the world, if any, is closed. Returns the status. */
static int open_with_plugin_path(const char *path, const char *text, const percept_options *options,
                                 percept_error *error)
{
    const char *env = getenv("PERCEPT_PLUGIN_PATH");
    char *saved = env != NULL ? strdup(env) : NULL;
    assert_true(env == NULL || saved != NULL);
    assert_int_equal(setenv("PERCEPT_PLUGIN_PATH", path, 1), 0);
    percept_world *world = NULL;
    int status = percept_world_open_string(&world, text, NAME, options, error);
    if (saved != NULL)
        setenv("PERCEPT_PLUGIN_PATH", saved, 1);
    else
        unsetenv("PERCEPT_PLUGIN_PATH");
    free(saved);
    if (status != PERCEPT_OK)
        assert_null(world); /* a failed open leaves no world behind */
    percept_world_close(world);
    return status;
}

/* An unknown backend: the message says where it looked and what it found there. */
static void test_unknown_backend_lists_search(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = tmp_dir; /* exists and holds no plugin */
    percept_world *world = (percept_world *)&world;
    percept_error error;
    memset(&error, 0, sizeof error);
    /* The shipped plugins through a short link: every directory searched fits
     * in the message whole, however deep the build tree (a message that
     * would not fit leaves out directories, as it should). */
    const char *plugins = getenv("PERCEPT_PLUGIN_PATH");
    if (plugins == NULL || strchr(plugins, ':') != NULL)
        skip(); /* one directory with the shipped plugins, as make check sets */
    char link[sizeof tmp_dir + 16];
    snprintf(link, sizeof link, "%s/plugins", tmp_dir);
    assert_int_equal(symlink(plugins, link), 0);
    const char *text = "[percept]\nbackend = bruteforce\n[hearing]\nbackend = nosuch_2\n";
    int status = open_with_plugin_path(link, text, &options, &error);
    assert_int_equal(unlink(link), 0);
    assert_int_equal(status, PERCEPT_EPLUGIN);
    assert_int_equal(error.line, line_of(text, "backend = nosuch_2"));
    expect_text(&error, "test.ini:4: key 'backend' in [hearing]");
    expect_text(&error, "nosuch_2");
    expect_text(&error, "nosuch_2.so is in none of ");
    expect_text(&error, tmp_dir);
    expect_text(&error, link);
    expect_text(&error, "bruteforce");
    expect_fields(&error, "hearing", "backend", "", HEARING);
    expect_reason(&error, NAME ":4: key 'backend' in [hearing]", "no backend 'nosuch_2'");

    /* A config named by a long path still has its line and key named. */
    char long_name[320];
    memset(long_name, 'd', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_int_equal(percept_world_open_string(&world, text, long_name, &options, &error),
                     PERCEPT_EPLUGIN);
    expect_text(&error, "dd:4: key 'backend' in [hearing]");
    char place[400];
    snprintf(place, sizeof place, "%s:4: key 'backend' in [hearing]", long_name);
    expect_fields(&error, "hearing", "backend", "", HEARING);
    expect_reason(&error, place, "no backend 'nosuch_2'");
}

/* The search path as the message lists it: a directory that is not there
 * marked so, a relative one with what it means from the current directory. */
static void test_unknown_backend_describes_dirs(void **state)
{
    (void)state;
    /* Run from "/" with one missing directory on the path: the message must
     * hold every directory whole, whatever the depth of the build tree (a
     * deep one made the message cut the list, as it should, in distcheck). */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir("/"), 0);
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = ".";
    percept_error error;
    int status = open_with_plugin_path("/nonexistent/percept-plugins",
                                       "[percept]\nbackend = nosuch_3\n", &options, &error);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(status, PERCEPT_EPLUGIN);
    expect_text(&error, "/nonexistent/percept-plugins (missing)");
    expect_text(&error,
                "nosuch_3.so is in none of . (/.), "); /* "." shown with its absolute form */
    /* options.plugin_dir was searched, but the backend's name is the file's. */
    expect_fields(&error, "percept", "backend", "", ALL_SENSES);
    expect_reason(&error,
                  NAME ":2: key 'backend' in [percept] (used for [sight], [hearing], [smell])",
                  "no backend 'nosuch_3'");
}

/* The longest line accepted, with either line end, and one character more. */
static void test_line_length_limit(void **state)
{
    (void)state;
    const int limit = 198; /* GUARANTEES.md, "Limits" */
    for (int crlf = 0; crlf < 2; crlf++) {
        for (int extra = 0; extra < 2; extra++) {
            char text[512];
            int n = snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\n[world]\n");
            int start = n;
            n += snprintf(text + n, sizeof text - (size_t)n, "max_x = 10");
            while (n - start < limit + extra)
                text[n++] = ' '; /* inih drops a value's trailing blanks */
            n += snprintf(text + n, sizeof text - (size_t)n, "%s", crlf ? "\r\n" : "\n");
            percept_world *world = NULL;
            percept_error error;
            int status = percept_world_open_string(&world, text, NAME, NULL, &error);
            percept_world_close(world);
            if (extra == 0 && status != PERCEPT_OK)
                print_error("a line of %d characters: %s\n", limit, error.text);
            assert_int_equal(status, extra == 0 ? PERCEPT_OK : PERCEPT_ECONFIG);
            if (extra) {
                expect_text(&error, "line too long (at most 198 characters)");
                expect_fields(&error, "", "", "", 0);
                expect_reason(&error, NAME ":4", "line too long");
            }
        }
    }
    /* A byte order mark opening the file takes none of the first line's room. */
    for (int bom = 0; bom < 2; bom++) {
        for (int extra = 0; extra < 2; extra++) {
            char text[512];
            int n = snprintf(text, sizeof text, "%s;", bom ? "\xEF\xBB\xBF" : "");
            for (int i = 1; i < limit + extra; i++)
                text[n++] = 'x';
            snprintf(text + n, sizeof text - (size_t)n, "\n[percept]\nbackend = bruteforce\n");
            percept_world *world = NULL;
            percept_error error;
            int status = percept_world_open_string(&world, text, NAME, NULL, &error);
            percept_world_close(world);
            if (extra == 0 && status != PERCEPT_OK)
                print_error("a first line of %d characters%s: %s\n", limit,
                            bom ? " after a byte order mark" : "", error.text);
            assert_int_equal(status, extra == 0 ? PERCEPT_OK : PERCEPT_ECONFIG);
            if (extra) {
                expect_text(&error, "line too long (at most 198 characters)");
                expect_fields(&error, "", "", "", 0);
                expect_reason(&error, NAME ":1", "line too long");
            }
        }
    }
}

/* What editors write is read as meant: a byte order mark, CRLF line ends,
 * comments after a section's ']'. */
static void test_editor_conventions(void **state)
{
    (void)state;
    percept_world *world = open_ok("\xEF\xBB\xBF[percept] ; the library's own\r\n"
                                   "backend = bruteforce\r\n"
                                   "[world]\t# the map\r\n"
                                   "max_x = 64\r\n",
                                   NULL);
    expect_working_world(world);
    percept_world_close(world);
}

/* A quote cut short ends after a whole UTF-8 character ("é" is 0xC3 0xA9),
 * so that the message is still valid UTF-8. */
static void test_quotes_keep_characters_whole(void **state)
{
    (void)state;
    char text[512], e40[81];
    for (int i = 0; i < 40; i++)
        memcpy(e40 + 2 * i, "\xC3\xA9", 2);
    e40[80] = '\0';
    percept_world *world = NULL;
    percept_error error;
    snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\n[world]\nmax_x = %s\n", e40);
    assert_int_equal(percept_world_open_string(&world, text, NAME, NULL, &error), PERCEPT_ECONFIG);
    const char *cut = strstr(error.text, "...'");
    assert_non_null(cut);
    assert_int_equal((unsigned char)cut[-1], 0xA9);
    expect_fields(&error, "world", "max_x", "", 0);
    snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\n[%s]\n", e40);
    assert_int_equal(percept_world_open_string(&world, text, NAME, NULL, &error), PERCEPT_ECONFIG);
    cut = strstr(error.text, "] (expected");
    assert_non_null(cut);
    assert_int_equal((unsigned char)cut[-1], 0xA9);
    /* The section field holds the name as far as it fits: at most 63 bytes,
     * the first byte to go at most a character's away. */
    assert_non_null(memchr(error.section, '\0', sizeof error.section));
    size_t kept = strlen(error.section);
    assert_true(kept <= 63 && kept >= 62);
    assert_memory_equal(error.section, e40, kept);
    assert_string_equal(error.key, "");
    assert_int_equal(error.senses, 0);
}

/* A file that is not text: a NUL byte is an error naming its line, and a
 * device that never ends a line is not read for ever. */
static void test_not_text(void **state)
{
    (void)state;
    char path[512];
    assert_true((size_t)snprintf(path, sizeof path, "%s/nul-XXXXXX", tmp_dir) < sizeof path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    static const char text[] = "[percept]\nbackend = bruteforce\n[world]\nmax_x = 64\0junk\n";
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    assert_int_equal(close(fd), 0);
    percept_world *world = NULL;
    percept_error error;
    int status = percept_world_open(&world, path, NULL, &error);
    unlink(path);
    assert_int_equal(status, PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.line, 4);
    expect_text(&error, ":4: a NUL byte");
    char place[600];
    snprintf(place, sizeof place, "%s:4", path);
    expect_fields(&error, "", "", "", 0);
    expect_reason(&error, place, "a NUL byte");

    if (access("/dev/zero", R_OK) != 0)
        return;
    alarm(20); /* a reader looking for the end of the line would hang here */
    status = percept_world_open(&world, "/dev/zero", NULL, &error);
    alarm(0);
    assert_int_equal(status, PERCEPT_ECONFIG);
    expect_text(&error, "/dev/zero:1: a NUL byte");
    expect_fields(&error, "", "", "", 0);
    expect_reason(&error, "/dev/zero:1", "a NUL byte");
}

/*
 * However long PERCEPT_PLUGIN_PATH is, the installed directory is still
 * searched and named last in the message, the entries left out are
 * counted, and directories that do not fit are counted too rather than cut
 * off mid-name. The entries are long enough that not all fit whatever is
 * installed (what is installed is listed first, so the room left varies).
 */
static void test_long_plugin_path(void **state)
{
    (void)state;
    char path[2048] = "";
    for (int i = 1; i <= 20; i++)
        snprintf(path + strlen(path), sizeof path - strlen(path),
                 "%s/nonexistent/percept-plugin-directory-%d", i > 1 ? ":" : "", i);
    percept_error error;
    assert_int_equal(open_with_plugin_path(path, "[percept]\nbackend = nosuch_4\n", NULL, &error),
                     PERCEPT_EPLUGIN);
    expect_text(&error, "no backend 'nosuch_4': available: ");
    expect_fields(&error, "percept", "backend", "", ALL_SENSES);
    expect_reason(&error,
                  NAME ":2: key 'backend' in [percept] (used for [sight], [hearing], [smell])",
                  "no backend 'nosuch_4': available: ");
    expect_text(&error, "the 16 directories searched (5 more entries of PERCEPT_PLUGIN_PATH "
                        "were not)");
    if (strlen(error.text) + 1 >= sizeof error.text) {
        print_error("the message was cut: %s\n", error.text);
        fail();
    }
    /* The variable's first 15 entries, in order, as many as fit... */
    int shown = 0;
    const char *at = error.text;
    for (int i = 1; i <= 15; i++) {
        char dir[96];
        snprintf(dir, sizeof dir, "/nonexistent/percept-plugin-directory-%d (missing), ", i);
        const char *found = strstr(at, dir);
        if (found == NULL)
            break;
        shown++;
        at = found + strlen(dir);
    }
    char more[64];
    snprintf(more, sizeof more, "... (%d more not shown), ", 15 - shown);
    if (shown == 0 || shown == 15 || strncmp(at, more, strlen(more)) != 0) {
        print_error("expected some of the 15 entries, then '%s': %s\n", more, error.text);
        fail();
    }
    /* ...then the installed directory, last: never a 16th entry of the variable. */
    at += strlen(more);
    if (strstr(error.text, "directory-16 ") != NULL || at[0] != '/' ||
        strstr(at, "percept-plugin-directory") != NULL || strchr(at, ',') != NULL) {
        print_error("the installed directory should end the message: %s\n", error.text);
        fail();
    }
}

/* options.bounds replaces [world] and is checked like it. */
static void test_bad_option_bounds(void **state)
{
    (void)state;
    const percept_bounds inverted = {0.0, 0.0, -10.0, 10.0};
    const percept_bounds not_a_number = {0.0, 0.0, 10.0, NAN};
    const percept_bounds *bad[] = {&inverted, &not_a_number};
    for (size_t i = 0; i < 2; i++) {
        percept_options options = PERCEPT_OPTIONS_INIT;
        options.bounds = bad[i];
        percept_world *world = (percept_world *)&world;
        percept_error error;
        memset(&error, 0, sizeof error);
        int status = percept_world_open_string(&world, "[percept]\nbackend = bruteforce\n", NAME,
                                               &options, &error);
        assert_int_equal(status, PERCEPT_EINVAL);
        assert_null(world);
        assert_int_equal(error.status, PERCEPT_EINVAL);
        /* The limit written as everywhere else, not as %g's "1e+15". */
        expect_text(&error, "the bounds in the options are invalid: they must be finite, within "
                            "1e15,");
        expect_bare(&error, "bounds");
    }
}

/* ------------------------------------------------------------------------ */
/* Valid configurations                                                      */

static const char full_config[] = "; percept test configuration: every section\n"
                                  "# both comment styles\n"
                                  "\n"
                                  "[percept]\n"
                                  "backend = bruteforce\n"
                                  "move_events = on\n"
                                  "\n"
                                  "[world]\n"
                                  "  min_x = -500.5\n"
                                  "min_y=-250\n"
                                  "max_x = 1500\n"
                                  "max_y = 2e3\n"
                                  "\n"
                                  "[sight]\n"
                                  "; sight overrides the default backend with the same one\n"
                                  "backend = bruteforce\n"
                                  "observer_cell_size = 32\n"
                                  "[hearing]\n"
                                  "# hearing keeps the default backend\n"
                                  "observer_cell_size = 64.5\n"
                                  "[smell]\n"
                                  "backend = bruteforce\n";

static void test_full_config(void **state)
{
    (void)state;
    percept_world *world = open_ok(full_config, NULL);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        assert_string_equal(percept_backend_name(world, (percept_sense)s), "bruteforce");
    expect_working_world(world);
    percept_world_close(world);
}

static void test_full_config_from_file(void **state)
{
    (void)state;
    char path[512];
    write_config(full_config, path, sizeof path);
    percept_world *world = NULL;
    percept_error error;
    memset(&error, 0, sizeof error);
    int status = percept_world_open(&world, path, NULL, &error);
    unlink(path);
    if (status != PERCEPT_OK)
        print_error("open failed: %s\n", error.text);
    assert_int_equal(status, PERCEPT_OK);
    assert_non_null(world);
    expect_working_world(world);
    percept_world_close(world);
}

/* Section and key order do not matter, nor do sections without keys. */
static void test_any_order(void **state)
{
    (void)state;
    percept_world *world = open_ok("[smell]\n[world]\nmax_y = 10\nmin_y = -10\n"
                                   "[sight]\nobserver_cell_size = 4\n"
                                   "[percept]\nmove_events = off\nbackend = bruteforce\n",
                                   NULL);
    expect_working_world(world);
    percept_world_close(world);
}

static void test_options_backend_overrides(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.backend = "bruteforce";
    percept_world *world = open_ok("[percept]\nbackend = nosuchbackend\n", &options);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        assert_string_equal(percept_backend_name(world, (percept_sense)s), "bruteforce");
    expect_working_world(world);
    percept_world_close(world);
}

/* options.backend also supplies a backend where the config names none. */
static void test_options_backend_alone(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.backend = "bruteforce";
    percept_world *world = open_ok("", &options);
    expect_working_world(world);
    percept_world_close(world);
}

/* A backend from the options that refuses its setup: the message names every
 * sense it was to serve. */
static void test_options_backend_refused(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.backend = "grid";
    percept_world *world = (percept_world *)&options; /* must come back NULL */
    percept_error error;
    memset(&error, 0, sizeof error);
    int status = percept_world_open_string(&world, "[world]\nmax_x = 1e9\nmax_y = 1e9\n", NAME,
                                           &options, &error);
    assert_int_equal(status, PERCEPT_ECONFIG);
    assert_null(world);
    expect_text(&error, NAME ": backend 'grid' for [sight], [hearing], [smell] (from the options)");
    /* Nothing in the file to blame: the option, for every sense it serves. */
    expect_fields(&error, "", "", "backend", ALL_SENSES);
    expect_reason(&error,
                  NAME ": backend 'grid' for [sight], [hearing], [smell] (from the options)",
                  "backend 'grid' (");
}

/* options.backend is a name, never a path: a bad one is refused before any file is opened. */
static void test_options_backend_bad_name(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "../bruteforce", "bruteforce.so", "/tmp/x", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        percept_options options = PERCEPT_OPTIONS_INIT;
        options.backend = bad[i];
        percept_world *world = (percept_world *)&options; /* must come back NULL */
        percept_error error;
        int status = percept_world_open_string(&world, "", NAME, &options, &error);
        assert_int_equal(status, PERCEPT_EINVAL);
        assert_null(world);
        expect_text(&error, "percept_options.backend");
        expect_text(&error, "not a backend name");
        expect_bare(&error, "backend");
    }
}

static void test_options_bounds(void **state)
{
    (void)state;
    const percept_bounds bounds = {-100.0, -100.0, 100.0, 100.0};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.bounds = &bounds;
    percept_world *world =
        open_ok("[percept]\nbackend = bruteforce\n[world]\nmin_x = 0\nmax_x = 5000\n", &options);
    expect_working_world(world);
    percept_world_close(world);
}

/* Opens `text` with optional bounds, returning the status. */
static int try_open_bounds(const char *text, const percept_bounds *bounds)
{
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.bounds = bounds;
    percept_world *world = NULL;
    percept_error error;
    int status = percept_world_open_string(&world, text, NAME, &options, &error);
    percept_world_close(world);
    return status;
}

/*
 * The bounds are otherwise invisible through the API, but the observer grid
 * is sized from them: where the core refuses a 1-unit cell on a huge world,
 * the options' bounds, not [world], must decide.
 */
static void test_options_bounds_size_the_grid(void **state)
{
    (void)state;
    const char *small = "[percept]\nbackend = bruteforce\n[world]\nmax_x = 100\nmax_y = 100\n"
                        "[sight]\nobserver_cell_size = 1\n";
    const char *huge = "[percept]\nbackend = bruteforce\n[world]\nmax_x = 1e12\nmax_y = 1e12\n"
                       "[sight]\nobserver_cell_size = 1\n";
    const percept_bounds small_bounds = {0.0, 0.0, 100.0, 100.0};
    const percept_bounds huge_bounds = {0.0, 0.0, 1e12, 1e12};
    assert_int_equal(try_open_bounds(small, NULL), PERCEPT_OK);
    if (try_open_bounds(huge, NULL) == PERCEPT_OK)
        skip(); /* this core has no limit on grid cells: nothing to observe */
    assert_int_equal(try_open_bounds(huge, &small_bounds), PERCEPT_OK);
    assert_int_not_equal(try_open_bounds(small, &huge_bounds), PERCEPT_OK);
}

/*
 * A cell size the config's own bounds take, refused for bounds the options
 * gave: the message names the key and line, as for the file, and says that
 * the options' bounds are what it does not fit (`option` "bounds"). Refused
 * with either bounds (an unknown key), the options go unmentioned.
 */
static void test_options_bounds_named_when_they_are_the_cause(void **state)
{
    (void)state;
    const char *text = "[percept]\nbackend = grid\n[world]\nmax_x = 1000\nmax_y = 1000\n"
                       "[sight]\ncell_size = 64\n";
    const percept_bounds vast = {-1e15, -1e15, 1e15, 1e15};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.bounds = &vast;
    percept_world *world = NULL;
    percept_error error;
    assert_int_equal(percept_world_open_string(&world, text, NAME, &options, &error),
                     PERCEPT_ECONFIG);
    assert_null(world);
    assert_int_equal(error.line, 7);
    expect_fields(&error, "sight", "cell_size", "bounds", PERCEPT_SENSE_BIT(PERCEPT_SIGHT));
    expect_text(&error, "too small for the world bounds");
    expect_text(&error, "(the world bounds are percept_options.bounds, -1e15 -1e15 1e15 1e15; "
                        "with the config's own [world] bounds it opens)");
    assert_int_equal(try_open_bounds(text, NULL), PERCEPT_OK);

    const char *typo = "[percept]\nbackend = grid\n[sight]\ncel_size = 64\n";
    assert_int_equal(percept_world_open_string(&world, typo, NAME, &options, &error),
                     PERCEPT_ECONFIG);
    expect_fields(&error, "sight", "cel_size", "", PERCEPT_SENSE_BIT(PERCEPT_SIGHT));
    assert_null(strstr(error.text, "percept_options"));
}

/* Sets a German locale, whose decimal point is ',', or skips the test
 * where none is installed (CI generates de_DE.UTF-8). */
static void comma_locale_or_skip(void)
{
    if (!setlocale(LC_ALL, "de_DE.UTF-8") && !setlocale(LC_ALL, "de_DE.utf8"))
        skip();
    if (strcmp(localeconv()->decimal_point, ",") != 0) {
        setlocale(LC_ALL, "C");
        skip();
    }
}

/*
 * A server may set a locale for its own text; where the decimal point is
 * ',', strtod() would stop at "12.5"'s '.'. Numbers in a configuration are
 * read with '.' whatever the locale: in [world], in observer_cell_size and
 * in a backend's parameters. Skipped where no such locale is installed (CI
 * generates de_DE.UTF-8).
 */
static void test_decimal_point_in_any_locale(void **state)
{
    (void)state;
    comma_locale_or_skip();
    percept_world *world = NULL;
    percept_error error;
    int status = percept_world_open_string(&world,
                                           "[percept]\nbackend = grid\n[world]\nmin_x = -0.5\n"
                                           "max_x = 100.5\nmax_y = 1.005e2\n[sight]\n"
                                           "cell_size = 12.5\nobserver_cell_size = 8.5\n",
                                           NAME, NULL, &error);
    setlocale(LC_ALL, "C");
    if (status != PERCEPT_OK)
        print_error("%s\n", error.text);
    assert_int_equal(status, PERCEPT_OK);
    expect_working_world(world);
    percept_world_close(world);
}

/* The message of a config refused under the current locale contains `needle`. */
static void expect_refused_saying(const char *text, const char *needle)
{
    percept_world *world = NULL;
    percept_error error;
    assert_int_not_equal(percept_world_open_string(&world, text, NAME, NULL, &error), PERCEPT_OK);
    assert_null(world);
    expect_text(&error, needle);
}

/*
 * Messages write numbers with '.' too, whatever the locale: under ',' a
 * refused position (0,1, nan) could not be told from two numbers, and
 * "0,1" would not read back as the value refused. Every kind of message
 * that quotes a number: the core's argument checks, the config's, and a
 * backend's (grid's cell counts).
 */
static void test_messages_in_any_locale(void **state)
{
    (void)state;
    comma_locale_or_skip();
    percept_world *world = open_ok("[percept]\nbackend = grid\n", NULL);
    percept_entity_desc desc = {0.5, 1, {1, 1, 1}, 0};
    assert_int_equal(percept_add(world, 1, &desc), PERCEPT_OK);
    assert_int_equal(percept_move(world, 1, 0.1, NAN), PERCEPT_EINVAL);
    const char *moved = strstr(percept_errmsg(world), "(0.1, nan)");
    assert_int_equal(percept_set_range(world, 1, PERCEPT_SIGHT, -2.5), PERCEPT_EINVAL);
    const char *ranged = strstr(percept_errmsg(world), "range -2.5 ");
    percept_world_close(world);
    expect_refused_saying("[percept]\nbackend = grid\n[world]\nmax_x = 10.5\n"
                          "[sight]\nobserver_cell_size = 0.001\n",
                          "0.001 is too small");
    expect_refused_saying("[percept]\nbackend = bruteforce\n[world]\nmin_x = 10.5\nmax_x = 2.5\n",
                          "min_x 10.5, max_x 2.5");
    /* Bounds that differ past %g's six digits are written in full. */
    expect_refused_saying("[percept]\nbackend = bruteforce\n[world]\nmin_x = 1000000.5\n"
                          "max_x = 1000000.25\n",
                          "min_x 1000000.5, max_x 1000000.25");
    expect_refused_saying("[percept]\nbackend = grid\n[world]\nmax_x = 6.25e14\n"
                          "[sight]\ncell_size = 0.5\n",
                          "1.25e15 x");
    setlocale(LC_ALL, "C");
    assert_non_null(moved);
    assert_non_null(ranged);
}

typedef struct move_counter {
    int enters, moves;
} move_counter;

static void count_events(void *user, const percept_event *event)
{
    move_counter *counter = user;
    if (event->kind == PERCEPT_ENTER)
        counter->enters++;
    else if (event->kind == PERCEPT_MOVE)
        counter->moves++;
}

/* Every accepted spelling of move_events, checked by whether MOVE events come. */
static void test_move_events_values(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        int on;
    } values[] = {{"on", 1},  {"off", 0}, {"true", 1}, {"false", 0},
                  {"yes", 1}, {"no", 0},  {"1", 1},    {"0", 0}};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[percept]\nbackend = bruteforce\nmove_events = %s\n",
                 values[i].value);
        percept_world *world = open_ok(text, NULL);
        move_counter counter = {0, 0};
        assert_int_equal(percept_set_event_callback(world, count_events, &counter), PERCEPT_OK);
        percept_entity_desc observer = {0.0, 0.0, {100.0, 0.0, 0.0}, 0u};
        percept_entity_desc target = {10.0, 0.0, {0.0, 0.0, 0.0}, 0u};
        assert_int_equal(percept_add(world, 1, &observer), PERCEPT_OK);
        assert_int_equal(percept_add(world, 2, &target), PERCEPT_OK);
        assert_int_equal(counter.enters, 1);
        assert_int_equal(percept_move(world, 2, 20.0, 0.0), PERCEPT_OK);
        if (counter.moves != values[i].on)
            print_error("move_events = %s gave %d MOVE events\n", values[i].value, counter.moves);
        assert_int_equal(counter.moves, values[i].on);
        percept_world_close(world);
    }
}

/* Without move_events the default is on. */
static void test_move_events_default(void **state)
{
    (void)state;
    percept_world *world = open_ok("[percept]\nbackend = bruteforce\n", NULL);
    move_counter counter = {0, 0};
    assert_int_equal(percept_set_event_callback(world, count_events, &counter), PERCEPT_OK);
    percept_entity_desc observer = {0.0, 0.0, {100.0, 0.0, 0.0}, 0u};
    percept_entity_desc target = {10.0, 0.0, {0.0, 0.0, 0.0}, 0u};
    assert_int_equal(percept_add(world, 1, &observer), PERCEPT_OK);
    assert_int_equal(percept_add(world, 2, &target), PERCEPT_OK);
    assert_int_equal(percept_move(world, 2, 20.0, 0.0), PERCEPT_OK);
    assert_int_equal(counter.moves, 1);
    percept_world_close(world);
}

/* PERCEPT_PLUGIN_PATH's first directory holding NAME.so, and "/NAME.so". */
static const char *first_in_plugin_path(const char *name, char *out, size_t size)
{
    const char *dirs = getenv("PERCEPT_PLUGIN_PATH");
    assert_non_null(dirs);
    for (const char *d = dirs; *d;) {
        size_t len = strcspn(d, ":");
        snprintf(out, size, "%.*s/%s.so", (int)len, d, name);
        if (access(out, F_OK) == 0)
            return out;
        d += len + (d[len] == ':');
    }
    fail_msg("no %s.so in PERCEPT_PLUGIN_PATH %s", name, dirs);
    return NULL;
}

/* Per-sense backends, with the test plugins' working "badparam" for smell. */
static void test_per_sense_backends(void **state)
{
    (void)state;
    const char *dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    if (dir == NULL)
        skip();
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    percept_world *world = open_ok("[percept]\nbackend = bruteforce\n"
                                   "[smell]\nbackend = badparam\nlevel = 2\n"
                                   "observer_cell_size = 16\n",
                                   &options);
    assert_string_equal(percept_backend_name(world, PERCEPT_SIGHT), "bruteforce");
    assert_string_equal(percept_backend_name(world, PERCEPT_HEARING), "bruteforce");
    assert_string_equal(percept_backend_name(world, PERCEPT_SMELL), "badparam");
    /* Each sense names the file it runs: badparam from the test directory,
     * bruteforce from PERCEPT_PLUGIN_PATH (searched after it: it has none). */
    char want[4096];
    snprintf(want, sizeof want, "%s/badparam.so", dir);
    assert_string_equal(percept_backend_path(world, PERCEPT_SMELL), want);
    assert_string_equal(percept_backend_path(world, PERCEPT_SIGHT),
                        first_in_plugin_path("bruteforce", want, sizeof want));
    assert_string_equal(percept_backend_path(world, PERCEPT_HEARING), want);
    expect_working_world(world);
    percept_world_close(world);
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
    const uint64_t fields[6] = {(uint64_t)e->kind,
                                (uint64_t)e->sense,
                                e->observer,
                                e->target,
                                (uint64_t)(int64_t)(e->x * 1024),
                                (uint64_t)(int64_t)(e->y * 1024)};
    for (int i = 0; i < 6; i++) {
        t->hash ^= fields[i];
        t->hash *= 0x100000001b3ull;
    }
    t->count++;
}

/* A number in [0, 1) from the state *r, the same on every run. */
static double unit_random(uint64_t *r)
{
    *r = *r * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*r >> 11) / 9007199254740992.0;
}

/* A fixed walk of short- and a few long-sighted entities in a world opened
 * from `text`: its events go to *tally; returns the observer grids' bytes. */
static size_t shared_grid_run(const char *text, event_tally *tally)
{
    percept_world *world = open_ok(text, NULL);
    *tally = (event_tally){0, 0xcbf29ce484222325ull};
    assert_int_equal(percept_set_event_callback(world, tally_event, tally), PERCEPT_OK);
    uint64_t r = 12345;
    for (percept_id id = 1; id <= 300; id++) {
        /* Within 1.25 cells of 64 but every tenth: near observers where the grid allows. */
        double reach = id % 10 == 0 ? 200 : 20 + 50 * unit_random(&r);
        percept_entity_desc d = {0, 0, {reach, reach / 2, 0}, 0};
        d.x = 512 * unit_random(&r);
        d.y = 512 * unit_random(&r);
        assert_int_equal(percept_add(world, id, &d), PERCEPT_OK);
    }
    for (int round = 0; round < 5; round++) {
        for (percept_id id = 1; id <= 300; id++) {
            double x = 512 * unit_random(&r);
            double y = 512 * unit_random(&r);
            assert_int_equal(percept_move(world, id, x, y), PERCEPT_OK);
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
 * Swapping the two backends between the sections must change nothing: the
 * same events, the same observer grid bytes, fewer than with no such
 * backend at all (bruteforce for both, where the grid keeps every observer).
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
                 "[percept]\nbackend = bruteforce\n[world]\nmax_x = 512\nmax_y = 512\n"
                 "[sight]\nbackend = %s\nobserver_cell_size = 64\n"
                 "[hearing]\nbackend = %s\nobserver_cell_size = 64\n",
                 pairs[i][0], pairs[i][1]);
        bytes[i] = shared_grid_run(text, &tally[i]);
        print_message("      [sight] %s, [hearing] %s: %zu events, observer grids %zu bytes\n",
                      pairs[i][0], pairs[i][1], tally[i].count, bytes[i]);
    }
    assert_true(tally[0].count > 1000);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(tally[i].count, tally[0].count);
        assert_true(tally[i].hash == tally[0].hash);
    }
    assert_int_equal(bytes[0], bytes[1]);
    assert_true(bytes[0] < bytes[2]);
}

/* plugin_dir in the config is searched too. */
static void test_config_plugin_dir(void **state)
{
    (void)state;
    const char *dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    if (dir == NULL)
        skip();
    char text[1024];
    assert_true((size_t)snprintf(text, sizeof text,
                                 "[percept]\nbackend = bruteforce\nplugin_dir = %s\n"
                                 "[hearing]\nbackend = badparam\n",
                                 dir) < sizeof text);
    percept_world *world = open_ok(text, NULL);
    assert_string_equal(percept_backend_name(world, PERCEPT_HEARING), "badparam");
    assert_string_equal(percept_backend_name(world, PERCEPT_SIGHT), "bruteforce");
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
    memset(&error, 0, sizeof error);
    int status = percept_world_open(&world, path, NULL, &error);
    if (status != PERCEPT_OK)
        print_error("%s: %s\n", path, error.text);
    assert_int_equal(status, PERCEPT_OK);
    assert_non_null(world);
    expect_working_world(world);
    percept_world_close(world);
}

/* ------------------------------------------------------------------------ */
/* The structured fields of percept_error, beyond the table                  */

/* Opens `text`, which must fail with `status` and leave no world. */
static void open_failing(const char *text, const char *name, const percept_options *options,
                         int status, percept_error *error)
{
    percept_world *world = (percept_world *)&world; /* not NULL: the call must clear it */
    memset(error, 0x55, sizeof *error);
    int got = percept_world_open_string(&world, text, name, options, error);
    if (got != status)
        print_error("status %s, expected %s; message: %s\n", percept_status_name(got),
                    percept_status_name(status), error->text);
    assert_int_equal(got, status);
    assert_null(world);
    assert_int_equal(error->status, status);
}

/* Each percept_options field refused names itself in `option`, and nothing else. */
static void test_options_errors_name_the_option(void **state)
{
    (void)state;
    const char *text = "[percept]\nbackend = bruteforce\n";
    percept_error error;

    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = "/nonexistent/percept-plugins";
    open_failing(text, NAME, &options, PERCEPT_EINVAL, &error);
    expect_text(&error, "/nonexistent/percept-plugins");
    expect_bare(&error, "plugin_dir");

    /* Too small, past any version's, and larger with a field this one does not know. */
    struct {
        percept_options options;
        void *newer;
    } grown;
    const size_t sizes[] = {1, 8192, sizeof grown};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        memset(&grown, 0, sizeof grown);
        grown.options.size = sizes[i];
        grown.newer = &grown;
        open_failing(text, NAME, &grown.options, PERCEPT_EINVAL, &error);
        expect_text(&error, "percept_options.size");
        expect_bare(&error, "size");
    }

    const percept_allocator no_alloc = {NULL, NULL};
    options = (percept_options)PERCEPT_OPTIONS_INIT;
    options.allocator = &no_alloc;
    open_failing(text, NAME, &options, PERCEPT_EINVAL, &error);
    expect_bare(&error, "allocator");
}

/* A backend from the options that is not installed: the option is at fault,
 * for all three senses, and the loader's text is the reason. */
static void test_options_backend_missing(void **state)
{
    (void)state;
    static const char *const texts[] = {"", "[percept]\nbackend = bruteforce\n"};
    for (size_t i = 0; i < 2; i++) {
        percept_options options = PERCEPT_OPTIONS_INIT;
        options.backend = "nosuch";
        percept_error error;
        open_failing(texts[i], NAME, &options, PERCEPT_EPLUGIN, &error);
        assert_int_equal(error.line, 0);
        expect_fields(&error, "", "", "backend", ALL_SENSES);
        expect_reason(&error,
                      NAME ": backend 'nosuch' for [sight], [hearing], [smell] (from the options)",
                      "no backend 'nosuch'");
    }
}

/* The options' backend gets a section's parameters when the file names the
 * same one: a parameter it refuses is the file's key, not the option. */
static void test_options_backend_param_refused(void **state)
{
    (void)state;
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.backend = "bruteforce";
    percept_error error;
    open_failing("[percept]\nbackend = bruteforce\n[sight]\nlevel = 1\n", NAME, &options,
                 PERCEPT_ECONFIG, &error);
    assert_int_equal(error.line, 4);
    expect_fields(&error, "sight", "level", "", SIGHT);
    expect_reason(&error, NAME ":4: key 'level' in [sight]", "unknown parameter");
}

/* A key (or section) of 70 characters is cut to 63 bytes and NUL-terminated,
 * wherever the error is found: the config's own keys, a backend parameter, a
 * key before any section, an unknown section. */
static void test_long_names_cut(void **state)
{
    (void)state;
    char name[71];
    for (int i = 0; i < 70; i++)
        name[i] = (char)('a' + i % 26);
    name[70] = '\0';
    static const struct {
        const char *before, *after;      /* the config: before + name + after */
        const char *section;             /* expected; NULL: the name, cut */
        const char *place, *place_after; /* NAME + place [+ name + place_after] */
        const char *reason;
        int line;
        unsigned senses;
    } cases[] = {
        {"[percept]\nbackend = bruteforce\n", " = 1\n", "percept", ":3: key '", "' in [percept]",
         "unknown key", 3, 0},
        {"[percept]\nbackend = bruteforce\n[sight]\n", " = 1\n", "sight", ":4: key '",
         "' in [sight]", "unknown parameter", 4, SIGHT},
        {"", " = 1\n[percept]\nbackend = bruteforce\n", "", ":1", NULL, "key '", 1, 0},
        {"[", "]\n[percept]\nbackend = bruteforce\n", NULL, ":1", NULL, "unknown section [", 1, 0},
    };
    char cut[64];
    memcpy(cut, name, 63); /* the first 63 bytes */
    cut[63] = '\0';
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], place[256];
        snprintf(text, sizeof text, "%s%s%s", cases[i].before, name, cases[i].after);
        if (cases[i].place_after != NULL)
            snprintf(place, sizeof place, "%s%s%s%s", NAME, cases[i].place, name,
                     cases[i].place_after);
        else
            snprintf(place, sizeof place, "%s%s", NAME, cases[i].place);
        percept_error error;
        open_failing(text, NAME, NULL, PERCEPT_ECONFIG, &error);
        assert_int_equal(error.line, cases[i].line);
        if (cases[i].section != NULL) {
            expect_text(&error, name); /* the message names the key whole */
            expect_fields(&error, cases[i].section, cut, "", cases[i].senses);
            assert_int_equal(error.key[63], '\0');
        } else {
            expect_fields(&error, cut, "", "", 0);
            assert_int_equal(error.section[63], '\0');
        }
        expect_reason(&error, place, cases[i].reason);
    }
}

/* Failures before anything is read name nothing: no place, every field empty. */
static void test_null_arguments_name_nothing(void **state)
{
    (void)state;
    percept_error error;
    memset(&error, 0x55, sizeof error);
    assert_int_equal(
        percept_world_open_string(NULL, "[percept]\nbackend = bruteforce\n", NAME, NULL, &error),
        PERCEPT_EINVAL);
    assert_int_equal(error.status, PERCEPT_EINVAL);
    assert_int_equal(error.line, 0);
    expect_bare(&error, "");

    percept_world *world = (percept_world *)&world;
    memset(&error, 0x55, sizeof error);
    assert_int_equal(percept_world_open_string(&world, NULL, NAME, NULL, &error), PERCEPT_EINVAL);
    assert_null(world);
    expect_bare(&error, "");

    world = (percept_world *)&world;
    memset(&error, 0x55, sizeof error);
    assert_int_equal(percept_world_open(&world, NULL, NULL, &error), PERCEPT_EINVAL);
    assert_null(world);
    expect_bare(&error, "");
}

/* A world that opens leaves the error as it was, or all zero: never fields of
 * a failure. */
static void test_success_leaves_error_clear(void **state)
{
    (void)state;
    percept_error error, untouched;
    memset(&error, 0x55, sizeof error);
    memset(&untouched, 0x55, sizeof untouched);
    percept_world *world = NULL;
    assert_int_equal(percept_world_open_string(&world, full_config, NAME, NULL, &error),
                     PERCEPT_OK);
    percept_world_close(world);
    if (memcmp(&error, &untouched, sizeof error) == 0)
        return;
    assert_int_equal(error.status, 0);
    assert_int_equal(error.line, 0);
    assert_string_equal(error.text, "");
    expect_bare(&error, "");
}

/* A place longer than the message's room: the fields still say what is at
 * fault, and the reason's offset stays within the message as it was cut
 * (the specification says no more: at its end, say). */
static void test_place_longer_than_text(void **state)
{
    (void)state;
    char label[700];
    memset(label, 'd', sizeof label - 1);
    label[sizeof label - 1] = '\0';
    percept_error error;
    open_failing("[percept]\nbackend = bruteforce\ncolour = blue\n", label, NULL, PERCEPT_ECONFIG,
                 &error);
    assert_int_equal(error.line, 3);
    expect_fields(&error, "percept", "colour", "", 0);
    assert_non_null(memchr(error.text, '\0', sizeof error.text));
    assert_true(error.reason >= 0 && (size_t)error.reason <= strlen(error.text));
    /* Where some of the reason fits, the place's ": " is whole before it. */
    if (error.reason > 0 && (size_t)error.reason < strlen(error.text))
        assert_memory_equal(error.text + error.reason - 2, ": ", 2);
}

/*
 * Bytes of the config that are not text, or that a terminal would obey
 * (a control, a bidirectional override), reach the message as \xNN
 * (src/safe_text.h): the fields for programs keep them as given, and valid
 * UTF-8 reads as written. A place of such bytes too long for the text is
 * cut on a whole escape and leaves the reason no room.
 */
static void test_messages_escape_what_terminals_obey(void **state)
{
    (void)state;
    percept_error error;
    open_failing("[percept]\nbackend = bruteforce\ncol\xFFour = blue\n", NAME, NULL,
                 PERCEPT_ECONFIG, &error);
    expect_text(&error, NAME ":3: key 'col\\xffour' in [percept]");
    assert_null(memchr(error.text, 0xFF, strlen(error.text)));
    expect_fields(&error, "percept", "col\xFFour", "", 0);

    open_failing("[percept]\nbackend = bruteforce\n[world]\nmax_x = 1\xE2\x80\xAE"
                 "0\n",
                 NAME, NULL, PERCEPT_ECONFIG, &error);
    expect_text(&error, "(read '1\\xe2\\x80\\xae0')");
    assert_null(strstr(error.text, "\xE2\x80\xAE"));

    open_failing("[percept]\nbackend = bruteforce\ngr\xC3\xB6\xC3\x9F"
                 "e = 1\n",
                 NAME, NULL, PERCEPT_ECONFIG, &error);
    expect_text(&error, "key 'gr\xC3\xB6\xC3\x9F"
                        "e' in [percept]");

    char label[201];
    memset(label, 0xFF, sizeof label - 1);
    label[sizeof label - 1] = '\0';
    open_failing("[percept]\nbackend = bruteforce\ncolour = blue\n", label, NULL, PERCEPT_ECONFIG,
                 &error);
    size_t len = strlen(error.text);
    assert_true(len > sizeof error.text - 5 && len % 4 == 0);
    for (size_t i = 0; i < len; i += 4)
        assert_memory_equal(error.text + i, "\\xff", 4);
    assert_int_equal(error.reason, (int)len);
}

/* An allocator that refuses blocks above 1 GiB (badparam's `hungry` asks for 2 GiB). */
static void *modest_alloc(void *user, void *ptr, size_t size)
{
    (void)user;
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return size > ((size_t)1 << 30) ? NULL : realloc(ptr, size);
}

/*
 * Backends from a section that refuse their setup as a whole, run out of
 * memory or blame no parameter given: the section's 'backend' key, for every
 * sense the instance serves, the reason "backend 'B' (PATH): ...". One that
 * blames its parameter without a reason: that key.
 */
static void test_plugin_refusals_name_the_backend_key(void **state)
{
    (void)state;
    const char *dir = getenv("PERCEPT_TEST_PLUGIN_DIR");
    if (dir == NULL)
        skip();
    const percept_allocator modest = {modest_alloc, NULL};
    percept_options options = PERCEPT_OPTIONS_INIT;
    options.plugin_dir = dir;
    options.allocator = &modest;
    char reason[4200];
    snprintf(reason, sizeof reason, "backend 'badparam' (%s/badparam.so): ", dir);
    static const struct {
        const char *key;
        int status;
        const char *then; /* after reason's "backend 'badparam' (PATH): ", or NULL */
    } refusals[] = {
        {"whole", PERCEPT_ECONFIG, "these bounds need a larger size"},
        {"silent", PERCEPT_EPLUGIN, NULL},
        {"misreport", PERCEPT_EPLUGIN, NULL},
        {"hungry", PERCEPT_ENOMEM, "out of memory"},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        char text[256], want[4300];
        snprintf(text, sizeof text,
                 "[percept]\nbackend = bruteforce\n[smell]\nbackend = badparam\n%s = 1\n",
                 refusals[i].key);
        snprintf(want, sizeof want, "%s%s", reason, refusals[i].then ? refusals[i].then : "");
        percept_error error;
        open_failing(text, NAME, &options, refusals[i].status, &error);
        assert_int_equal(error.line, 4);
        expect_fields(&error, "smell", "backend", "", SMELL);
        expect_reason(&error, NAME ":4: key 'backend' in [smell]", want);

        /* The same in [sight] and [hearing]: one instance, both senses. */
        snprintf(text, sizeof text,
                 "[percept]\nbackend = bruteforce\n[sight]\nbackend = badparam\n%s = 1\n"
                 "[hearing]\nbackend = badparam\n%s = 1\n",
                 refusals[i].key, refusals[i].key);
        open_failing(text, NAME, &options, refusals[i].status, &error);
        assert_int_equal(error.line, 4);
        expect_fields(&error, "sight", "backend", "", SIGHT | HEARING);
        expect_reason(&error, NAME ":4: key 'backend' in [sight] (used for [sight], [hearing])",
                      want);
    }

    percept_error error;
    open_failing("[percept]\nbackend = badparam\n[smell]\nmute = 1\n", NAME, &options,
                 PERCEPT_ECONFIG, &error);
    assert_int_equal(error.line, 4);
    expect_fields(&error, "smell", "mute", "", SMELL);
    expect_reason(&error, NAME ":4: key 'mute' in [smell]", NULL);
}

/* ------------------------------------------------------------------------ */

static int make_tmp_dir(void **state)
{
    (void)state;
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
            unlink(path);
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

static const struct CMUnitTest fixed_tests[] = {
    cmocka_unit_test(test_missing_file),
    cmocka_unit_test(test_directory_as_file),
    cmocka_unit_test(test_error_without_error_struct),
    cmocka_unit_test(test_default_name),
    cmocka_unit_test(test_first_error_reported),
    cmocka_unit_test(test_unknown_backend_lists_search),
    cmocka_unit_test(test_unknown_backend_describes_dirs),
    cmocka_unit_test(test_long_plugin_path),
    cmocka_unit_test(test_line_length_limit),
    cmocka_unit_test(test_editor_conventions),
    cmocka_unit_test(test_not_text),
    cmocka_unit_test(test_quotes_keep_characters_whole),
    cmocka_unit_test(test_bad_option_bounds),
    cmocka_unit_test(test_full_config),
    cmocka_unit_test(test_full_config_from_file),
    cmocka_unit_test(test_any_order),
    cmocka_unit_test(test_options_backend_overrides),
    cmocka_unit_test(test_options_backend_alone),
    cmocka_unit_test(test_options_backend_bad_name),
    cmocka_unit_test(test_options_backend_refused),
    cmocka_unit_test(test_options_bounds),
    cmocka_unit_test(test_options_bounds_size_the_grid),
    cmocka_unit_test(test_options_bounds_named_when_they_are_the_cause),
    cmocka_unit_test(test_decimal_point_in_any_locale),
    cmocka_unit_test(test_messages_in_any_locale),
    cmocka_unit_test(test_move_events_values),
    cmocka_unit_test(test_move_events_default),
    cmocka_unit_test(test_per_sense_backends),
    cmocka_unit_test(test_shared_grid_any_order),
    cmocka_unit_test(test_config_plugin_dir),
    cmocka_unit_test(test_default_config),
    cmocka_unit_test(test_options_errors_name_the_option),
    cmocka_unit_test(test_options_backend_missing),
    cmocka_unit_test(test_options_backend_param_refused),
    cmocka_unit_test(test_long_names_cut),
    cmocka_unit_test(test_null_arguments_name_nothing),
    cmocka_unit_test(test_success_leaves_error_clear),
    cmocka_unit_test(test_place_longer_than_text),
    cmocka_unit_test(test_messages_escape_what_terminals_obey),
    cmocka_unit_test(test_plugin_refusals_name_the_backend_key),
};

#define FIXED_TESTS (sizeof fixed_tests / sizeof fixed_tests[0])

int main(void)
{
    static char titles[2 * ERROR_CASE_COUNT][96];
    struct CMUnitTest tests[FIXED_TESTS + 2 * ERROR_CASE_COUNT];
    memcpy(tests, fixed_tests, sizeof fixed_tests);
    for (size_t i = 0; i < ERROR_CASE_COUNT; i++) {
        for (int via_file = 0; via_file < 2; via_file++) {
            size_t k = 2 * i + (size_t)via_file;
            snprintf(titles[k], sizeof titles[k], "%s (%s)", error_cases[i].title,
                     via_file ? "file" : "string");
            struct CMUnitTest t = {titles[k],
                                   via_file ? test_error_from_file : test_error_from_string, NULL,
                                   NULL, (void *)&error_cases[i]};
            tests[FIXED_TESTS + k] = t;
        }
    }
    /* The plain test driver reads any nonzero status as failure, and 77 as a skip. */
    return cmocka_run_group_tests(tests, make_tmp_dir, teardown) == 0 ? 0 : 1;
}
