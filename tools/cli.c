/*
 * cli.c - command-line conventions shared by the tools (see cli.h).
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <percept.h>

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

int cli_once(const char *program, unsigned *seen, unsigned bit, const char *opt)
{
    if (*seen & (1u << bit))
        return cli_usage_error(program, "option '%s' given more than once", opt);
    *seen |= 1u << bit;
    return -1;
}

int cli_backend_name_ok(const char *name)
{
    return cli_name_span_ok(name, strlen(name));
}

int cli_name_span_ok(const char *s, size_t len)
{
    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

int cli_version(const char *program, const char *arg)
{
    if (strcmp(arg, "--version") != 0)
        return 0;
    printf("%s (percept) %s\n", program, percept_version());
    return 1;
}

void cli_print_backend_paths(FILE *out, const percept_world *world)
{
    const char *printed[PERCEPT_MAX_SENSES];
    int count = 0;
    for (int s = 0; s < percept_sense_count(world); s++) {
        const char *path = percept_backend_path(world, s);
        int again = 0;
        for (int i = 0; i < count && path != NULL; i++)
            again |= strcmp(printed[i], path) == 0;
        if (path == NULL || again)
            continue;
        fprintf(out, "%s%s", count ? ", " : "", path);
        printed[count++] = path;
    }
    if (count == 0)
        fputs("-", out);
}

void cli_print_memory_per(FILE *out, const percept_memory *m, size_t count, const char *noun)
{
    double per = 1.0 / (double)count;
    fprintf(out,
            "%.0f bytes per %s: pair lists %.0f, entities %.0f, observer grids %.0f, "
            "backends %.0f, working room %.0f",
            (double)m->total * per, noun, (double)m->pairs * per, (double)m->entities * per,
            (double)m->observer_grids * per, (double)m->backends * per,
            (double)(m->scratch + m->world) * per);
}

int cli_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}
