/* backend_util.c - helpers shared by the shipped backends (see backend_util.h). */
#include "backend_util.h"

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

void *backend_new(const percept_backend_setup *setup, size_t size, percept_backend_error *error)
{
    void *p = backend_host_alloc(setup->host, NULL, size);
    if (p == NULL)
        backend_set_error(error, -1, "out of memory");
    else
        memset(p, 0, size);
    return p;
}

int backend_grow(const percept_backend_host *host, void **array, size_t elem, uint32_t *cap,
                 uint32_t need, uint32_t first)
{
    if (need <= *cap)
        return 0;
    uint32_t grown = backend_grown(*cap, need, first);
    if ((uint64_t)grown > SIZE_MAX / elem)
        return -1;
    void *p = backend_host_alloc(host, *array, (size_t)grown * elem);
    if (p == NULL)
        return -1;
    *array = p;
    *cap = grown;
    return 0;
}

int backend_size_param(const percept_backend_setup *setup, const char *backend, const char *key,
                       double min, const char *min_reason, double *value, int *index,
                       percept_backend_error *error)
{
    *index = -1;
    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        char text[256];
        if (p->key == NULL || strcmp(p->key, key) != 0) {
            snprintf(text, sizeof text, "unknown parameter (%s takes: %s)", backend, key);
            backend_set_error(error, (int)i, text);
            return -1;
        }
        if (*index >= 0) {
            backend_set_error(error, (int)i, "given more than once");
            return -1;
        }
        double v;
        int number = p->value != NULL && decimal_parse(p->value, &v) == 0;
        if (number && v >= min && v <= BACKEND_SIZE_MAX) {
            *value = v;
            *index = (int)i;
            continue;
        }
        if (!number)
            snprintf(text, sizeof text, "must be a plain decimal number, at most 1e15");
        else if (v > BACKEND_SIZE_MAX)
            snprintf(text, sizeof text,
                     "must be at most 1e15, the limit of coordinates (a larger size indexes "
                     "nothing otherwise)");
        else if (min_reason != NULL)
            snprintf(text, sizeof text, "%s", min_reason);
        else if (!(v > 0))
            snprintf(text, sizeof text, "must be a number greater than 0");
        else
            snprintf(text, sizeof text,
                     "%s must be at least " BACKEND_SIZE_MIN_TEXT
                     ", the smallest normal double (cells are found by multiplying by 1 / %s)",
                     key, key);
        backend_set_error(error, (int)i, text);
        return -1;
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
        decimal_snprintf(text, sizeof text,
                         "%s %.17g%s is too small for the world bounds: %.3g x %.3g %s (at most "
                         "%.0f); set a larger %s, or use hashgrid, whose cells only exist where "
                         "entities are",
                         key, size, size_param >= 0 ? "" : " (the default)", nx, ny, unit,
                         max_cells, key);
        backend_set_error(error, size_param, text);
        return -1;
    }
    layout->min_x = setup->min_x;
    layout->min_y = setup->min_y;
    layout->size = size;
    layout->inv = 1.0 / size;
    layout->nx = (uint32_t)nx;
    layout->ny = (uint32_t)ny;
    return 0;
}
