/*
 * backend_util.c - helpers shared by the shipped backends (see backend_util.h).
 */
#include "backend_util.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *backend_host_alloc(const percept_backend_host *host, void *ptr, size_t size)
{
    return host->alloc(host->user, ptr, size);
}

void backend_set_error(percept_backend_error *error, int param_index, const char *text)
{
    if (error == NULL)
        return;
    error->param_index = param_index;
    snprintf(error->text, sizeof(error->text), "%s", text);
}

int backend_parse_positive(const char *text, double *out)
{
    const char *p = text;
    int digits = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    const char *start = p;
    if (*p == '+')
        p++;
    while (*p >= '0' && *p <= '9') {
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            p++;
            digits++;
        }
    }
    if (digits == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    const char *end = p;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p != '\0')
        return -1;
    char *stop;
    double v = strtod(start, &stop);
    if (stop != end || !(v > 0) || !(v <= DBL_MAX) || !(1.0 / v <= DBL_MAX))
        return -1;
    *out = v;
    return 0;
}

int backend_size_param(const percept_backend_setup *setup, const char *backend, const char *key,
                       double limit, double *value, int *index, percept_backend_error *error)
{
    *index = -1;
    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        if (p->key == NULL || strcmp(p->key, key) != 0) {
            char text[128];
            snprintf(text, sizeof text, "unknown parameter (%s takes: %s)", backend, key);
            backend_set_error(error, (int)i, text);
            return -1;
        }
        if (*index >= 0) {
            backend_set_error(error, (int)i, "given more than once");
            return -1;
        }
        double v;
        if (p->value == NULL || backend_parse_positive(p->value, &v) != 0 || v > limit ||
            1.0 / v > limit) {
            backend_set_error(error, (int)i, "must be a number greater than 0");
            return -1;
        }
        *value = v;
        *index = (int)i;
    }
    return 0;
}
