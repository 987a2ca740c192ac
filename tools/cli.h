/*
 * cli.h - what the percept tools share: options given as "--opt VALUE" or
 * "--opt=VALUE", one form of usage error, the rule for backend names,
 * --version, what a world runs and holds, and the clock.
 */
#ifndef PERCEPT_TOOLS_CLI_H
#define PERCEPT_TOOLS_CLI_H

#include <stdio.h>
#include <time.h>

#include <percept.h>

/* The exit status of every tool for bad usage. */
#define CLI_EXIT_USAGE 2

/*
 * Takes the value of an option given as "--opt VALUE" or "--opt=VALUE".
 * Returns 1 if argv[*i] is that option (advancing *i past a separate value),
 * 0 if it is not, -1 if its value is missing.
 */
int cli_option_value(int argc, char **argv, int *i, const char *opt, const char **value);

/* Prints "PROGRAM: message (see PROGRAM --help)" to standard error; returns CLI_EXIT_USAGE. */
int cli_usage_error(const char *program, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* For an option that takes one value: marks option number `bit` (0..31) in
 * *seen and returns -1; if it was marked already, reports a usage error
 * naming `opt` and returns its exit status. */
int cli_once(const char *program, unsigned *seen, unsigned bit, const char *opt);

/* Whether `name` can name a backend: one or more letters, digits, '_' and
 * '-', the library's rule, checked before anything is opened. */
int cli_backend_name_ok(const char *name);
/* The same rule for the `len` bytes at `s` (a name inside a longer text). */
int cli_name_span_ok(const char *s, size_t len);

/* Whether `arg` is "--version"; if so, prints "PROGRAM (percept) VERSION",
 * the version of the library the tool runs with, and returns 1. */
int cli_version(const char *program, const char *arg);

/* Prints the files the world's backends were loaded from, each once,
 * separated by ", " ("-" if none), with no newline. */
void cli_print_backend_paths(FILE *out, const percept_world *world);

/* Writes the world's memory (percept_memory_usage()) per `noun` of the
 * `count` there: "N bytes per NOUN: pair lists N, entities N, observer
 * grids N, backends N, working room N", without a newline. */
void cli_print_memory_per(FILE *out, const percept_memory *m, size_t count, const char *noun);

/* Writes all `len` bytes to fd, again after EINTR or a short write; 0, or -1
 * with errno (a write that wrote nothing counts as a failure). */
int cli_write_all(int fd, const void *data, size_t len);

/* The monotonic clock, in seconds. */
static inline double cli_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
