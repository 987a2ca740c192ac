/*
 * world_open.c - creating a world from its configuration (a backend
 * instance per group of senses configured alike, observer grids) and
 * freeing it again.
 */
#include "world.h"

#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "config.h"
#include "decimal.h"

#define NO_MEMORY "out of memory creating the world"

/* pc_error() that returns the status. */
static int fail(percept_error *err, int status, const char *source, int line, const char *section,
                const char *key, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static int fail(percept_error *err, int status, const char *source, int line, const char *section,
                const char *key, const char *fmt, ...)
{
    char text[512]; /* pc_error()'s room for the reason */
    va_list ap;
    va_start(ap, fmt);
    decimal_vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pc_error(err, status, source, line, section, key, "%s", text);
    return status;
}

static void *host_alloc(void *user, void *ptr, size_t size)
{
    backend_group *bg = user;
    void *p = bg->alloc->alloc(bg->alloc->user, ptr, size);
    if (p == NULL && size > 0)
        bg->refused = 1;
    return p;
}

void free_world(percept_world *w)
{
    const percept_allocator *a = &w->alloc;
    for (int g = 0; g < w->backend_count; g++) {
        backend_group *bg = &w->backends[g];
        if (bg->backend)
            bg->plugin.ops.destroy(bg->backend);
        plugin_unload(a, &bg->plugin);
    }
    for (int g = 0; g < w->grid_count; g++)
        og_free(a, &w->grids[g]);
    for (size_t i = 0; i < w->slot_cap; i++)
        pair_list_free(a, &w->pairs[i]);
    pc_free(a, w->pairs);
    id_map_free(a, &w->ids);
    change_buffer_free(a, &w->changes);
    tick_free(w);
    pc_free(a, w->events_buf);
    pc_free(a, w->ents_block);
    pc_free(a, w->shapes);
    pc_free(a, w->free_slots);
    percept_allocator copy = *a;
    pc_free(&copy, w);
}

static int valid_bounds(const percept_bounds *b)
{
    return valid_coord(b->min_x) && valid_coord(b->min_y) && valid_coord(b->max_x) &&
           valid_coord(b->max_y) && b->min_x <= b->max_x && b->min_y <= b->max_y;
}

/* The backend a sense uses and the parameters it gets. */
typedef struct sense_backend {
    const char *name;
    const percept_backend_param *params;
    size_t param_count;
} sense_backend;

static sense_backend backend_of_sense(const pc_config *cfg, const percept_options *opt, int s)
{
    const sense_config *sc = &cfg->sense[s];
    const char *configured = sc->backend ? sc->backend : cfg->backend;
    sense_backend sb = {opt->backend ? opt->backend : configured, NULL, 0};
    /* The section's parameters belong to the backend it names; with another
     * backend forced by the options they would only be rejected as unknown. */
    if (!opt->backend || (configured && !strcmp(configured, opt->backend))) {
        sb.params = sc->params;
        sb.param_count = sc->param_count;
    }
    return sb;
}

/* Same backend, same parameters in the same order: one instance serves both. */
static int same_backend(const sense_backend *a, const sense_backend *b)
{
    if (strcmp(a->name, b->name) || a->param_count != b->param_count)
        return 0;
    for (size_t i = 0; i < a->param_count; i++)
        if (strcmp(a->params[i].key, b->params[i].key) ||
            strcmp(a->params[i].value, b->params[i].value))
            return 0;
    return 1;
}

/* Give sense s a backend: the instance of an earlier sense configured alike, or a new one. */
static int open_backend(percept_world *w, const pc_config *cfg, const percept_options *opt,
                        const plugin_search *search, int s, percept_error *err)
{
    sense_backend sb = backend_of_sense(cfg, opt, s);
    const char *sense = w->sense_names[s];
    if (!sb.name)
        return fail(err, PERCEPT_ECONFIG, cfg->source, 0, sense, "backend",
                    "no backend: set 'backend' in [%s] or in [percept]", sense);
    for (int t = 0; t < s; t++) {
        sense_backend other = backend_of_sense(cfg, opt, t);
        if (same_backend(&sb, &other)) {
            w->backend_of[s] = w->backend_of[t];
            w->backends[w->backend_of[t]].senses |= PERCEPT_SENSE_BIT(s);
            return PERCEPT_OK;
        }
    }

    /* Where the name came from, for messages about the plugin. */
    const char *section = opt->backend ? NULL : cfg->sense[s].backend ? sense : "percept";
    int line = !section                ? 0
               : cfg->sense[s].backend ? cfg->sense[s].backend_line
                                       : cfg->backend_line;
    const char *key = section ? "backend" : NULL;
    backend_group *bg = &w->backends[w->backend_count];
    w->backend_of[s] = (uint8_t)w->backend_count++; /* counted now: free_world() unloads it */
    bg->senses = PERCEPT_SENSE_BIT(s);
    char why[512];
    int rc = plugin_load(&w->alloc, search, sb.name, &bg->plugin, why, sizeof why);
    if (rc)
        return fail(err, rc, cfg->source, line, section, key, "%s", why);

    bg->alloc = &w->alloc;
    bg->host = (percept_backend_host){host_alloc, bg};
    percept_backend_setup setup = {
        .host = &bg->host,
        .min_x = w->bounds.min_x,
        .min_y = w->bounds.min_y,
        .max_x = w->bounds.max_x,
        .max_y = w->bounds.max_y,
        .params = sb.params,
        .param_count = sb.param_count,
    };
    percept_backend_error berr = {.param_index = -1};
    bg->backend = bg->plugin.ops.create(&setup, &berr);
    if (bg->backend)
        return PERCEPT_OK;
    berr.text[sizeof berr.text - 1] = '\0';
    const char *text = berr.text[0] ? berr.text : "the backend gave no reason";
    if (bg->refused) /* whatever the backend says, the allocator failed */
        return fail(err, PERCEPT_ENOMEM, cfg->source, line, section, key,
                    "backend '%s' (%s): out of memory", sb.name, bg->plugin.path);
    if (berr.param_index >= 0 && (size_t)berr.param_index < setup.param_count) {
        const percept_backend_param *p = &setup.params[berr.param_index];
        return fail(err, PERCEPT_ECONFIG, cfg->source, p->line, sense, p->key, "%s (read '%.40s')",
                    text, p->value);
    }
    /* A setup refused as a whole, with a reason (a default size that does
     * not fit the bounds), is the configuration's fault; a refusal without
     * one, or blaming a parameter it was not given, is the plugin's. */
    rc = berr.text[0] && berr.param_index < 0 ? PERCEPT_ECONFIG : PERCEPT_EPLUGIN;
    return fail(err, rc, cfg->source, line, section, key, "backend '%s' (%s): %s", sb.name,
                bg->plugin.path, text);
}

/* Give sense s an observer grid: that of an earlier sense with the same cell size, or a new one. */
static int open_grid(percept_world *w, const pc_config *cfg, int s, percept_error *err)
{
    const sense_config *sc = &cfg->sense[s];
    for (int t = 0; t < s; t++)
        if (cfg->sense[t].observer_cell_size == sc->observer_cell_size) {
            for (int g = 0; g < w->grid_count; g++)
                if (w->grids[g].senses & PERCEPT_SENSE_BIT(t))
                    w->grids[g].senses |= PERCEPT_SENSE_BIT(s);
            return PERCEPT_OK;
        }
    int rc = og_init(&w->alloc, &w->grids[w->grid_count], &w->bounds, sc->observer_cell_size,
                     PERCEPT_SENSE_BIT(s));
    if (rc == -2)
        return fail(err, PERCEPT_ECONFIG, cfg->source, sc->observer_cell_size_line,
                    w->sense_names[s], "observer_cell_size",
                    "%.17g is too small for the world bounds (more than %u cells)",
                    sc->observer_cell_size, OG_MAX_CELLS);
    if (rc)
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, NO_MEMORY);
    w->grid_count++;
    return PERCEPT_OK;
}

/*
 * Who finds each grid's short-sighted observers: the first of its senses'
 * backends to declare PERCEPT_BACKEND_QUERY_LOCAL, by widening its query.
 * Without one, a widened query (a scan, a strip) may cost far more than a
 * few cells, so they stand in a near grid of their own, read only when the
 * backends' queries did not reach the near radius. 0, or -1 out of memory.
 */
static int choose_near_backends(percept_world *w)
{
    int grids = w->grid_count;
    memset(w->near_of, -1, sizeof w->near_of);
    for (int g = 0; g < grids; g++) {
        observer_grid *grid = &w->grids[g];
        int first = -1, local = -1;
        for (int s = 0; s < w->sense_count; s++) {
            if (!(grid->senses & PERCEPT_SENSE_BIT(s)))
                continue;
            int b = w->backend_of[s];
            if (first < 0)
                first = b;
            if (local < 0 && (w->backends[b].plugin.ops.query_hints & PERCEPT_BACKEND_QUERY_LOCAL))
                local = b;
        }
        w->near_backend[g] = (uint8_t)(local >= 0 ? local : first);
        og_set_near(grid, 1);
        if (local < 0) {
            int n = w->grid_count;
            if (og_init(&w->alloc, &w->grids[n], &w->bounds, grid->levels[0].cell_size,
                        grid->senses))
                return -1;
            w->near_of[n] = (int8_t)g;
            w->grid_count++;
        }
    }
    return 0;
}

static int not_a_dir(const char *path)
{
    struct stat st;
    return path && (stat(path, &st) || !S_ISDIR(st.st_mode));
}

/* The size of the first percept_options, which every later one starts with. */
#define OPTIONS_FIRST_SIZE                                                                         \
    (offsetof(percept_options, allocator) + sizeof(const percept_allocator *))

/*
 * A program built against an older percept.h passes a smaller struct, one
 * built against a newer header a larger one: accepted when the fields this
 * library does not know are zero, so that no option is ignored silently.
 * *out gets the fields, 0 for those the program did not have (or no opt).
 */
static int read_options(const percept_options *opt, percept_options *out, percept_error *err)
{
    memset(out, 0, sizeof *out);
    if (!opt)
        return PERCEPT_OK;
    /* Every field is a pointer or a size_t; no version will pass a page. */
    if (opt->size < OPTIONS_FIRST_SIZE || opt->size % sizeof(size_t) || opt->size > 4096)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.size is %zu: initialise the options with PERCEPT_OPTIONS_INIT",
                    opt->size);
    if (!unknown_bytes_zero(opt, sizeof(percept_options), opt->size))
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.size is %zu: this percept (%s) knows only %zu "
                    "bytes of options, and the program sets later ones",
                    opt->size, PERCEPT_VERSION, sizeof(percept_options));
    memcpy(out, opt, opt->size < sizeof *out ? opt->size : sizeof *out);
    if (out->allocator && !out->allocator->alloc)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.allocator: its alloc function is NULL");
    if (out->backend && !pc_backend_name_ok(out->backend))
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.backend '%.200s' is not a backend name: letters, "
                    "digits, '_' and '-'",
                    out->backend);
    if (out->bounds && !valid_bounds(out->bounds))
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.bounds: each must be finite, within %g, and each min "
                    "must not exceed its max",
                    PERCEPT_COORD_LIMIT);
    if (out->reserve > PAIR_SLOT_LIMIT)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.reserve %zu is more than a world holds (%lu)", out->reserve,
                    (unsigned long)PAIR_SLOT_LIMIT);
    if (out->threads > PERCEPT_MAX_THREADS)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.threads %zu is more than %d", out->threads,
                    PERCEPT_MAX_THREADS);
    return PERCEPT_OK;
}

/* Wire the parsed configuration into the world: backends, grids and room. */
static int build_world(percept_world *w, const pc_config *cfg, const percept_options *opt,
                       percept_error *err)
{
    /* A plugin directory that does not exist is a mistake worth naming, not a silent skip. */
    if (not_a_dir(opt->plugin_dir))
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "percept_options.plugin_dir '%s' is not a directory", opt->plugin_dir);
    if (not_a_dir(cfg->plugin_dir))
        return fail(err, PERCEPT_ECONFIG, cfg->source, cfg->plugin_dir_line, "percept",
                    "plugin_dir", "'%s' is not a directory", cfg->plugin_dir);
    w->bounds = opt->bounds ? *opt->bounds : cfg->bounds;
    w->sense_count = cfg->sense_count;
    memcpy(w->sense_names, cfg->sense_names, sizeof w->sense_names);
    w->all_senses = (1u << w->sense_count) - 1;
    w->ent_shift = ENTITY_SHIFT(w->sense_count);
    w->ent_bytes = ENTITY_BYTES(w->sense_count);
    w->shape_bytes = SHAPE_BYTES(w->sense_count);
    w->move_events = cfg->move_events;
    plugin_search search;
    char *env_copy;
    if (plugin_search_init(&w->alloc, &search, opt->plugin_dir, cfg->plugin_dir, &env_copy))
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, NO_MEMORY);
    int rc = PERCEPT_OK;
    for (int s = 0; s < w->sense_count && rc == PERCEPT_OK; s++)
        if ((rc = open_backend(w, cfg, opt, &search, s, err)) == PERCEPT_OK)
            rc = open_grid(w, cfg, s, err);
    pc_free(&w->alloc, env_copy);
    if (rc)
        return rc;
    if (choose_near_backends(w))
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, NO_MEMORY);
    size_t reserve = opt->reserve ? opt->reserve : cfg->reserve;
    if (reserve && world_reserve(w, reserve))
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL,
                    "out of memory making room for %zu entities (reserve)", reserve);
    unsigned threads = opt->threads ? (unsigned)opt->threads : cfg->threads;
    if (tick_init(w, threads))
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL,
                    "out of memory or threads starting the tick's %u threads", threads);
    return PERCEPT_OK;
}

static int world_open(percept_world **out, const char *path, const char *text, const char *label,
                      const percept_options *options, percept_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!out)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL, "the 'out' argument is NULL");
    *out = NULL;
    if (!path && !text)
        return fail(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                    "no configuration: the path or text is NULL");
    percept_options opt;
    int rc = read_options(options, &opt, err);
    if (rc)
        return rc;
    percept_allocator a = {percept_default_alloc, NULL};
    if (opt.allocator)
        a = *opt.allocator;

    percept_world *w = pc_alloc(&a, sizeof *w);
    if (!w)
        return fail(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, NO_MEMORY);
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->err_index = SIZE_MAX;

    pc_config cfg;
    rc = pc_config_parse(&w->alloc, &cfg, path, text, label, err);
    if (rc == PERCEPT_OK)
        rc = build_world(w, &cfg, &opt, err);
    pc_config_free(&w->alloc, &cfg);
    if (rc == PERCEPT_OK)
        *out = w;
    else
        free_world(w);
    return rc;
}

int percept_world_open(percept_world **out, const char *path, const percept_options *options,
                       percept_error *error)
{
    return world_open(out, path, NULL, NULL, options, error);
}

int percept_world_open_string(percept_world **out, const char *ini_text, const char *name,
                              const percept_options *options, percept_error *error)
{
    return world_open(out, NULL, ini_text, name, options, error);
}

void percept_world_close(percept_world *world)
{
    if (world && world->in_callback)
        world->close_requested = 1; /* the call delivering events frees it */
    else if (world)
        free_world(world);
}
