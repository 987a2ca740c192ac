/*
 * cli.h - the command-line conventions the percept tools share: options
 * given as "--opt VALUE" or "--opt=VALUE", and one form of usage error.
 */
#ifndef PERCEPT_TOOLS_CLI_H
#define PERCEPT_TOOLS_CLI_H

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

#endif
