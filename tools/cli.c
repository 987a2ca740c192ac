/*
 * cli.c - command-line conventions shared by the tools (see cli.h).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cli_option_value(int argc, char **argv, int *i, const char *opt, const char **value)
{
    size_t n = strlen(opt);
    const char *arg = argv[*i];

    if (strncmp(arg, opt, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

int cli_usage_error(const char *program, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see %s --help)\n", program);
    return CLI_EXIT_USAGE;
}

int cli_backend_name_ok(const char *name)
{
    if (name[0] == '\0')
        return 0;
    for (const char *p = name; *p != '\0'; p++) {
        int c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}
