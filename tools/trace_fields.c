/*
 * trace_fields.c - the fields of a trace line (see trace_fields.h).
 */
#include "trace_fields.h"

#include <math.h>
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
