/*
 * tuning.c - the world configuration each backend is benchmarked with: the
 * INI text, with cell sizes chosen from the workload's typical ranges, and
 * the parameters the user gives a backend (--param BACKEND.KEY=VALUE).
 */
#include "tuning.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../cli.h"

/* Every cell array stays below this many cells, whatever the world's shape. */
#define MAX_CELLS (1u << 20)

const char *bench_tuning_size_param(const char *backend)
{
    if (strcmp(backend, "grid") == 0 || strcmp(backend, "hashgrid") == 0)
        return "cell_size";
    if (strcmp(backend, "tower") == 0)
        return "tower_size";
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* --param settings                                                          */

/* Why `value` cannot follow "KEY = " on a line of the configuration, or NULL:
 * the library would read another value, or none, than the one given. */
static const char *value_fault(const char *value)
{
    size_t len = strlen(value);
    if (len == 0)
        return "the value is empty";
    if (len > BENCH_PARAM_VALUE_MAX)
        return "the value is longer than 100 bytes";
    for (const unsigned char *c = (const unsigned char *)value; *c; c++)
        if (*c < 0x20 || *c == 0x7f)
            return "the value must be one line of text, without control characters";
    if (value[0] == ' ' || value[len - 1] == ' ')
        return "the value begins or ends with a blank, which the configuration would drop";
    if (strchr(value, ';'))
        return "the value holds ';', which would start a comment in the configuration";
    return NULL;
}

/* Why `key` is not one a --param may set, or NULL: the library reads these
 * two keys of a sense section itself, and percept-bench writes them. */
static const char *key_fault(const char *key)
{
    if (strcmp(key, "backend") == 0)
        return "'backend' is a key of the library's own, not a parameter of the backend "
               "(--backends chooses the backends)";
    if (strcmp(key, "observer_cell_size") == 0)
        return "'observer_cell_size' is a key of the library's own, not a parameter of the "
               "backend (percept-bench sets it)";
    return NULL;
}

int bench_param_is_for(const bench_param *p, const char *backend)
{
    return strlen(backend) == p->backend_len && strncmp(p->text, backend, p->backend_len) == 0;
}

const bench_param *bench_params_find(const bench_params *params, const char *backend,
                                     const char *key)
{
    for (size_t i = 0; params && i < params->count; i++)
        if (bench_param_is_for(&params->p[i], backend) && strcmp(params->p[i].key, key) == 0)
            return &params->p[i];
    return NULL;
}

/* Fills *p from `text`, BACKEND.KEY=VALUE. Returns 0, or -1 and why. */
static int param_parse(bench_param *p, const char *text, char *why, size_t why_size)
{
    const char *eq = strchr(text, '=');
    const char *dot = eq ? memchr(text, '.', (size_t)(eq - text)) : NULL;
    if (!dot || dot == text || dot + 1 == eq) {
        snprintf(why, why_size, "not of the form BACKEND.KEY=VALUE");
        return -1;
    }
    size_t key_len = (size_t)(eq - dot - 1);
    if (!cli_name_span_ok(text, (size_t)(dot - text))) {
        snprintf(why, why_size, "bad backend name '%.*s': letters, digits, '_' and '-' only",
                 (int)(dot - text), text);
        return -1;
    }
    if (!cli_name_span_ok(dot + 1, key_len)) {
        snprintf(why, why_size, "bad key '%.*s': letters, digits, '_' and '-' only", (int)key_len,
                 dot + 1);
        return -1;
    }
    if (key_len > BENCH_PARAM_KEY_MAX) {
        snprintf(why, why_size, "the key is longer than %d bytes", BENCH_PARAM_KEY_MAX);
        return -1;
    }
    p->text = text;
    p->backend_len = (size_t)(dot - text);
    memcpy(p->key, dot + 1, key_len);
    p->key[key_len] = '\0';
    p->value = eq + 1;
    const char *fault = key_fault(p->key);
    if (fault || (fault = value_fault(p->value))) {
        snprintf(why, why_size, "%s", fault);
        return -1;
    }
    return 0;
}

int bench_params_add(bench_params *params, const char *text, char *why, size_t why_size)
{
    bench_param p;
    if (param_parse(&p, text, why, why_size))
        return -1;
    for (size_t i = 0; i < params->count; i++) {
        const bench_param *q = &params->p[i];
        if (q->backend_len == p.backend_len && strncmp(q->text, p.text, p.backend_len) == 0 &&
            strcmp(q->key, p.key) == 0) {
            /* Given twice, one would silently win: a mistake in the command line. */
            snprintf(why, why_size, "%.*s.%s is given twice (first as --param %s)",
                     (int)p.backend_len, p.text, p.key, q->text);
            return -1;
        }
    }
    if (params->count == BENCH_MAX_PARAMS) {
        snprintf(why, why_size, "at most %d --param options", BENCH_MAX_PARAMS);
        return -1;
    }
    params->p[params->count++] = p;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The INI text                                                              */

/* A size near `want` that keeps the bounds within MAX_CELLS cells. */
static double fit_cells(const percept_bounds *b, double want)
{
    double w = b->max_x - b->min_x, h = b->max_y - b->min_y, c = want;
    while ((w / c + 2) * (h / c + 2) > MAX_CELLS)
        c *= 2;
    return c;
}

typedef struct out {
    char *buf;
    size_t size, len;
    int overflow;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->size - o->len) {
        o->overflow = 1;
        return;
    }
    o->len += (size_t)n;
}

/* A sense section's size parameter: the value --param gives it, else the tuned one. */
static void put_size_param(out *o, const char *param, const char *backend,
                           const bench_params *params, double tuned)
{
    const bench_param *given = bench_params_find(params, backend, param);
    if (given)
        put(o, "%s = %s\n", param, given->value);
    else
        put(o, "%s = %.17g\n", param, tuned);
}

/* A sense section's other --param settings for `backend`: the size parameter is set. */
static void put_params(out *o, const char *backend, const bench_params *params,
                       const char *size_param)
{
    for (size_t i = 0; params && i < params->count; i++) {
        const bench_param *p = &params->p[i];
        if (bench_param_is_for(p, backend) && !(size_param && strcmp(p->key, size_param) == 0))
            put(o, "%s = %s\n", p->key, p->value);
    }
}

int bench_tuning_ini(char *buf, size_t size, const char *backend, const bench_params *params,
                     const bench_workload *wl)
{
    out o = {buf, size, 0, 0};
    const percept_bounds *b = &wl->bounds;
    const char *param = bench_tuning_size_param(backend);

    if (size == 0)
        return -1;
    buf[0] = '\0';
    put(&o, "[percept]\nbackend = %s\nmove_events = off\n", backend);
    put(&o, "[world]\nmin_x = %.17g\nmin_y = %.17g\nmax_x = %.17g\nmax_y = %.17g\n", b->min_x,
        b->min_y, b->max_x, b->max_y);
    /* Every sense gets the sizes of the largest typical range, as the README
     * advises: identical sections share one backend instance and one observer
     * grid, and a move then asks each index once for all three senses. */
    double r = 0;
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (wl->typical_range[s] > r)
            r = wl->typical_range[s];
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        put(&o, "[%s]\nobserver_cell_size = %.17g\n", percept_sense_name((percept_sense)s),
            fit_cells(b, BENCH_OBSERVER_CELL_FACTOR * r));
        if (param)
            put_size_param(&o, param, backend, params, fit_cells(b, BENCH_CELL_FACTOR * r));
        put_params(&o, backend, params, param);
    }
    return o.overflow ? -1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Opening a world of it                                                     */

void bench_tuning_label(char *buf, size_t size, const char *backend)
{
    snprintf(buf, size, "percept-bench's config for %s", backend);
}

void bench_tuning_open_error(char *buf, size_t size, const percept_error *err, const char *label)
{
    const char *reason = err->text + err->reason;
    if (err->reason == 0) /* the message names no place in the config */
        snprintf(buf, size, "%s", err->text);
    else if (err->key[0] && err->section[0])
        snprintf(buf, size, "%s: key '%s' in [%s]: %s", label, err->key, err->section, reason);
    else
        snprintf(buf, size, "%s: %s", label, reason);
}

int bench_tuning_try(const char *backend, const bench_params *params, percept_error *err)
{
    static char ini[BENCH_INI_SIZE];
    char label[300];
    bench_workload stub;
    memset(&stub, 0, sizeof stub);
    stub.bounds = (percept_bounds){0, 0, 1024, 1024}; /* the library's default bounds */
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        stub.typical_range[s] = BENCH_RANGE;
    bench_tuning_label(label, sizeof label, backend);
    if (bench_tuning_ini(ini, sizeof ini, backend, params, &stub)) {
        memset(err, 0, sizeof *err);
        err->status = PERCEPT_ENOMEM;
        snprintf(err->text, sizeof err->text, "%s does not fit its buffer", label);
        return -1;
    }
    percept_world *w;
    if (percept_world_open_string(&w, ini, label, NULL, err))
        return -1;
    percept_world_close(w);
    return 0;
}
