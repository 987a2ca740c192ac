/*
 * cli.c - command-line conventions shared by the tools (see cli.h).
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *cli_backend_reason(const char *text, const char *source, int generated, int *sense)
{
    const char *p;

    if (!starts_with(text, source))
        return NULL;
    p = text + strlen(source);
    if (*p++ != ':')
        return NULL;
    if (*p >= '0' && *p <= '9') { /* SOURCE:LINE: for a key of the INI text */
        p += strspn(p, "0123456789");
        if (*p++ != ':')
            return NULL;
    }
    /* A key of a file the user wrote is theirs to fix there: only the text
     * the tool generated stands for its options. */
    if (!starts_with(p, " backend '") && !(generated && starts_with(p, " key 'backend' in [")))
        return NULL;
    /* The account ends at the first ']' of a sense followed by one of these
     * (backend names cannot hold ']', and the reason comes after). */
    static const char *const ends[] = {": ", " (from the options): ", "): "};
    for (const char *close = strchr(p, ']'); close != NULL; close = strchr(close + 1, ']')) {
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
            if (!starts_with(close + 1, ends[e]))
                continue;
            const char *open = close;
            while (open > p && *open != '[')
                open--;
            for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
                const char *name = percept_sense_name((percept_sense)k);
                if (strlen(name) == (size_t)(close - open - 1) &&
                    strncmp(open + 1, name, strlen(name)) == 0) {
                    *sense = k;
                    return close + 1 + strlen(ends[e]);
                }
            }
            return NULL;
        }
    }
    return NULL;
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
    const char *printed[PERCEPT_SENSE_COUNT];
    int count = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        const char *path = percept_backend_path(world, (percept_sense)s);
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
