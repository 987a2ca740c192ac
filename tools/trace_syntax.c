/*
 * trace_syntax.c - the syntax of a trace line (see trace_syntax.h).
 */
#include "trace_syntax.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t trace_split_fields(char *s, char **fields, size_t max)
{
    size_t n = 0;

    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            return n;
        if (n < max)
            fields[n] = s;
        n++;
        while (*s != '\0' && *s != ' ' && *s != '\t')
            s++;
        if (*s != '\0')
            *s++ = '\0';
    }
}

int trace_parse_id(const char *s, uint32_t *out)
{
    uint64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int trace_parse_number(const char *s, double *out)
{
    char *end;

    if (*s == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    *out = strtod(s, &end);
    if (*end != '\0' || !isfinite(*out))
        return -1;
    return 0;
}

int trace_parse_range(const char *s, double *out)
{
    if (trace_parse_number(s, out) < 0 || !(*out >= 0))
        return -1;
    *out += 0.0; /* turns -0 into +0 */
    return 0;
}

int trace_parse_sense(const char *s, size_t n, percept_sense *out)
{
    for (int i = 0; i < PERCEPT_SENSE_COUNT; i++) {
        const char *name = percept_sense_name((percept_sense)i);
        if (name != NULL && strlen(name) == n && memcmp(name, s, n) == 0) {
            *out = (percept_sense)i;
            return 0;
        }
    }
    return -1;
}

int trace_check_bytes(const char *s, size_t len, char *msg, size_t size)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            snprintf(msg, size, "control character 0x%02x in column %zu", c, i + 1);
            return -1;
        }
    }
    return 0;
}

static const struct {
    const char *name;
    trace_command command;
    size_t min_fields, max_fields; /* including the command's name */
    const char *usage;
} commands[] = {
    {"move", TRACE_MOVE, 4, 4, "move ID X Y"},
    {"add", TRACE_ADD, 4, TRACE_MAX_FIELDS,
     "add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE,...]"},
    {"remove", TRACE_REMOVE, 2, 2, "remove ID"},
    {"range", TRACE_RANGE, 4, 4, "range ID SENSE R"},
    {"hide", TRACE_HIDE, 3, 3, "hide ID SENSE"},
    {"show", TRACE_SHOW, 3, 3, "show ID SENSE"},
    {"world", TRACE_WORLD, 5, 5, "world MINX MINY MAXX MAXY"},
};

int trace_command_of(char **fields, size_t n, trace_command *command, char *msg, size_t size)
{
    if (n == 0 || fields[0][0] == '#')
        return 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(fields[0], commands[i].name) != 0)
            continue;
        if (n < commands[i].min_fields || n > commands[i].max_fields) {
            snprintf(msg, size, "%s: wrong number of fields (%zu): expected '%s'", commands[i].name,
                     n, commands[i].usage);
            return -1;
        }
        *command = commands[i].command;
        return 1;
    }
    snprintf(msg, size,
             "unknown command '%s': expected world, add, move, remove, range, hide or show",
             fields[0]);
    return -1;
}
