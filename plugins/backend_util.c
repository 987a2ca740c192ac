/*
 * backend_util.c - helpers shared by the shipped backends (see backend_util.h).
 */
#include "backend_util.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"

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
    double v;
    if (decimal_parse(text, &v) || !(v > 0) || !(1.0 / v <= DBL_MAX))
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

/* ceil(len / size), at least 1, without libm (plugins link nothing but libc). */
static double cells_along(double len, double size)
{
    double f = len / size;
    if (!(f < 1e18))
        return f;
    double n = (double)(uint64_t)f;
    if (n < f)
        n += 1;
    return n < 1 ? 1 : n;
}

int backend_layout_init(backend_layout *layout, const percept_backend_setup *setup, double size,
                        int size_param, const char *key, const char *unit, double max_cells,
                        percept_backend_error *error)
{
    double w = setup->max_x - setup->min_x;
    double h = setup->max_y - setup->min_y;
    /* The comparisons also reject NaN and infinite bounds. */
    if (!(w >= 0 && w <= 1.0e300 && h >= 0 && h <= 1.0e300)) {
        backend_set_error(error, -1, "world bounds must be finite with min <= max");
        return -1;
    }
    double nx = cells_along(w, size), ny = cells_along(h, size);
    if (!(nx * ny <= max_cells)) {
        char text[256];
        if (size_param >= 0)
            snprintf(text, sizeof(text),
                     "too small for the world bounds: %.0f x %.0f %s (at most %.0f); set a "
                     "larger %s, or use hashgrid, whose cells only exist where entities are",
                     nx, ny, unit, max_cells, key);
        else
            snprintf(text, sizeof(text),
                     "%s %g (the default) is too small for the world bounds: "
                     "%.0f x %.0f %s (at most %.0f); set a larger %s in the section, or use "
                     "hashgrid, whose cells only exist where entities are",
                     key, size, nx, ny, unit, max_cells, key);
        backend_set_error(error, size_param, text);
        return -1;
    }
    layout->min_x = setup->min_x;
    layout->min_y = setup->min_y;
    layout->inv = 1.0 / size;
    layout->nx = (uint32_t)nx;
    layout->ny = (uint32_t)ny;
    return 0;
}
