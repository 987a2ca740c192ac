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

/* Why value v (or a value that is no number) does not fit `size`. */
static void size_refused(const backend_size *size, int number, double v, char *text, size_t n)
{
    if (!number)
        snprintf(text, n, "must be a plain decimal number, at most 1e15");
    else if (v > BACKEND_SIZE_MAX)
        snprintf(text, n,
                 "must be at most 1e15, the limit of coordinates (a larger size indexes "
                 "nothing otherwise)");
    else if (size->min_reason != NULL)
        snprintf(text, n, "%s", size->min_reason);
    else if (!(v > 0))
        snprintf(text, n, "must be a number greater than 0");
    else
        snprintf(text, n,
                 "%s must be at least " BACKEND_SIZE_MIN_TEXT
                 ", the smallest normal double (cells are found by multiplying by 1 / %s)",
                 size->key, size->key);
}

int backend_sizes(const percept_backend_setup *setup, const char *backend, backend_size *sizes,
                  size_t count, percept_backend_error *error)
{
    for (size_t k = 0; k < count; k++)
        sizes[k].index = -1;
    for (size_t i = 0; i < setup->param_count; i++) {
        const percept_backend_param *p = &setup->params[i];
        char text[256];
        backend_size *size = NULL;
        for (size_t k = 0; k < count && size == NULL; k++)
            if (p->key != NULL && strcmp(p->key, sizes[k].key) == 0)
                size = &sizes[k];
        if (size == NULL) {
            char keys[128] = "";
            for (size_t k = 0, used = 0; k < count && used < sizeof keys; k++)
                used += (size_t)snprintf(keys + used, sizeof keys - used, "%s%s", k > 0 ? ", " : "",
                                         sizes[k].key);
            snprintf(text, sizeof text, "unknown parameter (%s takes: %s)", backend, keys);
            backend_set_error(error, (int)i, text);
            return -1;
        }
        if (size->index >= 0) {
            backend_set_error(error, (int)i, "given more than once");
            return -1;
        }
        double v = 0;
        int number = p->value != NULL && decimal_parse(p->value, &v) == 0;
        if (number && ((v >= size->min && v <= BACKEND_SIZE_MAX) || (size->zero && v == 0))) {
            size->value = v;
            size->index = (int)i;
            continue;
        }
        size_refused(size, number, v, text, sizeof text);
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

int backend_cells_over(const percept_backend_setup *setup, double step_x, double step_y,
                       uint32_t extra, double size, int size_param, const char *key,
                       const char *unit, double max_cells, uint32_t *nx, uint32_t *ny,
                       percept_backend_error *error)
{
    double w = setup->max_x - setup->min_x;
    double h = setup->max_y - setup->min_y;
    /* The comparisons also reject NaN and infinite bounds. */
    if (!(w >= 0 && w <= 1.0e300 && h >= 0 && h <= 1.0e300)) {
        backend_set_error(error, -1, "world bounds must be finite with min <= max");
        return -1;
    }
    double cx = cells_along(w, step_x) + extra, cy = cells_along(h, step_y) + extra;
    if (!(cx * cy <= max_cells)) {
        char text[256];
        decimal_snprintf(text, sizeof text,
                         "%s %.17g%s is too small for the world bounds: %.3g x %.3g %s (at most "
                         "%.0f); set a larger %s, or use hashgrid, whose cells only exist where "
                         "entities are",
                         key, size, size_param >= 0 ? "" : " (the default)", cx, cy, unit,
                         max_cells, key);
        backend_set_error(error, size_param, text);
        return -1;
    }
    *nx = (uint32_t)cx;
    *ny = (uint32_t)cy;
    return 0;
}

int backend_layout_init(backend_layout *layout, const percept_backend_setup *setup, double size,
                        int size_param, const char *key, const char *unit, double max_cells,
                        percept_backend_error *error)
{
    if (backend_cells_over(setup, size, size, 0, size, size_param, key, unit, max_cells,
                           &layout->nx, &layout->ny, error) != 0)
        return -1;
    layout->min_x = setup->min_x;
    layout->min_y = setup->min_y;
    layout->size = size;
    layout->inv = 1.0 / size;
    return 0;
}
