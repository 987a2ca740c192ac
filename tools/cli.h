/*
 * cli.h - the command-line conventions the percept tools share: options
 * given as "--opt VALUE" or "--opt=VALUE", one form of usage error, the one
 * rule for backend names, --version, the plugin files a world runs, and the
 * clock the tools time their runs with.
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

/*
 * For an option that takes one value: marks option number `bit` (0..31) of
 * the tool's in *seen, and returns -1; if it was already marked, a usage
 * error naming `opt` (given twice, the last would silently win, and a
 * script that sets one twice has a mistake in it) and its exit status.
 */
int cli_once(const char *program, unsigned *seen, unsigned bit, const char *opt);

/*
 * Whether `name` can name a backend: one or more letters, digits, '_' and
 * '-', the rule the library applies to the INI key and to
 * percept_options.backend. Checked on the command line so that a bad name is
 * a usage error before anything is opened.
 */
int cli_backend_name_ok(const char *name);
/* The same rule for the `len` bytes at `s` (a name inside a longer text). */
int cli_name_span_ok(const char *s, size_t len);

/*
 * For an error from opening a world about the backend of one sense, a name
 * the tool gave, returns the reason (the message after the place it names)
 * and sets *sense to the last sense that backend serves: the name came from
 * percept_options.backend, or, when the tool generated the INI text
 * (`generated`), from a key 'backend' in it. A tool that took the name from
 * its command line names its own option instead of a file or a line the
 * user never wrote; a key of the user's own config keeps its file and line.
 * Returns NULL for any other error.
 */
const char *cli_backend_reason(const percept_error *err, int generated, int *sense);

/*
 * Whether argv[i] is "--version"; if so, prints "PROGRAM (percept) VERSION"
 * to standard output, naming the library the tool is running with (which can
 * differ from the headers it was built with), and returns 1.
 */
int cli_version(const char *program, const char *arg);

/*
 * Prints the files the world's backends were loaded from, each once, in
 * sense order, separated by ", " ("-" if none), with no newline: which copy
 * of a plugin ran when several are installed.
 */
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
