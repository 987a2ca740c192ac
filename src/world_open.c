/*
 * world_open.c - creating and destroying a world: the configuration wired
 * into backend instances (one per group of senses configured alike, each
 * plugin loaded and created) and observer grids, and everything freed again.
 */
#include "world.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "config.h"

static void *host_alloc(void *user, void *ptr, size_t size)
{
    backend_host_state *state = user;
    void *p = state->alloc->alloc(state->alloc->user, ptr, size);
    if (p == NULL && size > 0)
        state->refused = 1;
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
    /* Up to the capacity, not the slots in use: an add that ran out of
     * memory may have left room in the lists of the slot it was to take. */
    for (size_t i = 0; i < w->slot_cap; i++)
        pair_list_free(a, &w->pairs[i]);
    pc_free(a, w->pairs);
    id_map_free(a, &w->ids);
    change_buffer_free(a, &w->changes);
    pc_free(a, w->batch);
    pc_free(a, w->batch_keys);
    pc_free(a, w->ents_block);
    pc_free(a, w->free_slots);
    percept_allocator copy = *a;
    pc_free(&copy, w);
}

static int valid_bounds(const percept_bounds *b)
{
    const double v[4] = {b->min_x, b->min_y, b->max_x, b->max_y};
    for (int i = 0; i < 4; i++)
        if (!valid_coord(v[i]))
            return 0;
    return b->min_x <= b->max_x && b->min_y <= b->max_y;
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
    const char *override = opt ? opt->backend : NULL;
    sense_backend sb = {override ? override : sc->backend ? sc->backend : cfg->backend, NULL, 0};
    /* The section's parameters belong to the backend it names; with another
     * backend forced by the options they would only be rejected as unknown. */
    const char *configured = sc->backend ? sc->backend : cfg->backend;
    if (!override || (configured && !strcmp(configured, override))) {
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
    const char *sense = percept_sense_name((percept_sense)s);
    if (!sb.name) {
        pc_error(err, PERCEPT_ECONFIG, cfg->source, 0, sense, "backend",
                 "no backend: set 'backend' in [%s] or in [percept]", sense);
        return PERCEPT_ECONFIG;
    }
    for (int t = 0; t < s; t++) {
        sense_backend other = backend_of_sense(cfg, opt, t);
        if (same_backend(&sb, &other)) {
            w->backend_of[s] = w->backend_of[t];
            w->backends[w->backend_of[t]].senses |= PERCEPT_SENSE_BIT(s);
            return PERCEPT_OK;
        }
    }

    /* Where the name came from, for messages about the plugin. */
    const char *section = opt && opt->backend ? NULL : cfg->sense[s].backend ? sense : "percept";
    int line = !section                ? 0
               : cfg->sense[s].backend ? cfg->sense[s].backend_line
                                       : cfg->backend_line;
    const char *key = section ? "backend" : NULL;
    backend_group *bg = &w->backends[w->backend_count];
    w->backend_of[s] = (uint8_t)w->backend_count++; /* counted now: free_world() unloads it */
    bg->senses = PERCEPT_SENSE_BIT(s);
    char why[512];
    int rc = plugin_load(&w->alloc, search, sb.name, &bg->plugin, why, sizeof why);
    if (rc) {
        pc_error(err, rc, cfg->source, line, section, key, "%s", why);
        return rc;
    }

    bg->host_state = (backend_host_state){&w->alloc, 0};
    bg->host = (percept_backend_host){host_alloc, &bg->host_state};
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
    if (bg->host_state.refused) {
        /* Whatever the backend says, the caller's allocator is what failed. */
        pc_error(err, PERCEPT_ENOMEM, cfg->source, line, section, key,
                 "backend '%s' (%s): out of memory", sb.name, bg->plugin.path);
        return PERCEPT_ENOMEM;
    }
    if (berr.param_index >= 0 && (size_t)berr.param_index < setup.param_count) {
        const percept_backend_param *p = &setup.params[berr.param_index];
        pc_error(err, PERCEPT_ECONFIG, cfg->source, p->line, sense, p->key, "%s (read '%.40s')",
                 text, p->value);
        return PERCEPT_ECONFIG;
    }
    /* A setup refused as a whole, with a reason (a default size that does
     * not fit the bounds), is the configuration's fault; a refusal without
     * one, or blaming a parameter it was not given, is the plugin's. */
    rc = berr.text[0] && berr.param_index < 0 ? PERCEPT_ECONFIG : PERCEPT_EPLUGIN;
    pc_error(err, rc, cfg->source, line, section, key, "backend '%s' (%s): %s", sb.name,
             bg->plugin.path, text);
    return rc;
}

/* Give sense s an observer grid: that of an earlier sense with the same cell size, or a new one. */
static int open_grid(percept_world *w, const pc_config *cfg, int s, percept_error *err)
{
    const sense_config *sc = &cfg->sense[s];
    for (int t = 0; t < s; t++) {
        if (cfg->sense[t].observer_cell_size == sc->observer_cell_size) {
            for (int g = 0; g < w->grid_count; g++)
                if (w->grids[g].senses & PERCEPT_SENSE_BIT(t))
                    w->grids[g].senses |= PERCEPT_SENSE_BIT(s);
            return PERCEPT_OK;
        }
    }
    int rc = og_init(&w->alloc, &w->grids[w->grid_count], &w->bounds, sc->observer_cell_size,
                     PERCEPT_SENSE_BIT(s));
    if (rc == -2) {
        pc_error(err, PERCEPT_ECONFIG, cfg->source, sc->observer_cell_size_line,
                 percept_sense_name((percept_sense)s), "observer_cell_size",
                 "%.17g is too small for the world bounds (more than %u cells)",
                 sc->observer_cell_size, OG_MAX_CELLS);
        return PERCEPT_ECONFIG;
    }
    if (rc) {
        pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, "out of memory creating the world");
        return PERCEPT_ENOMEM;
    }
    w->grid_count++;
    return PERCEPT_OK;
}

/*
 * Once every sense has its backend and grid: who finds each grid's
 * short-sighted observers. The first of its senses' backends (sight,
 * hearing, smell) to declare PERCEPT_BACKEND_QUERY_LOCAL does, by widening
 * its query around the target. Without one, a widened query that is not
 * local (a scan, a strip through the world) may cost far more than a few
 * cells, so the near observers stand in a near grid of their own (same
 * cells), read only when the backends' queries did not reach the near
 * radius. Returns 0, or -1 out of memory.
 */
static int choose_near_backends(percept_world *w)
{
    int grids = w->grid_count;
    for (int g = 0; g < 2 * PERCEPT_SENSE_COUNT; g++)
        w->near_of[g] = -1;
    for (int g = 0; g < grids; g++) {
        observer_grid *grid = &w->grids[g];
        int first = -1, local = -1;
        for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
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

/* A plugin directory that does not exist is a mistake worth naming, not a silent skip. */
static int check_plugin_dirs(const pc_config *cfg, const percept_options *opt, percept_error *err)
{
    struct stat st;
    if (opt && opt->plugin_dir && (stat(opt->plugin_dir, &st) || !S_ISDIR(st.st_mode))) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.plugin_dir '%s' is not a directory", opt->plugin_dir);
        return PERCEPT_EINVAL;
    }
    if (cfg->plugin_dir && (stat(cfg->plugin_dir, &st) || !S_ISDIR(st.st_mode))) {
        pc_error(err, PERCEPT_ECONFIG, cfg->source, cfg->plugin_dir_line, "percept", "plugin_dir",
                 "'%s' is not a directory", cfg->plugin_dir);
        return PERCEPT_ECONFIG;
    }
    return PERCEPT_OK;
}

/* The size of the first percept_options, which every later one starts with. */
#define OPTIONS_FIRST_SIZE                                                                         \
    (offsetof(percept_options, allocator) + sizeof(const percept_allocator *))

/*
 * A program built against an older percept.h passes a smaller struct: its
 * fields are all this library reads. One built against a newer header may
 * pass a larger one: accepted when the fields this library does not know
 * are zero, so an option it cannot honour is never ignored silently. The
 * fields are copied into *out, those the program did not have left 0.
 */
static int read_options(const percept_options *opt, percept_options *out, percept_error *err)
{
    memset(out, 0, sizeof *out);
    /* Every field is a pointer or a size_t, so each version's size is a
     * multiple of one; no version will grow the struct past a page. */
    if (opt->size < OPTIONS_FIRST_SIZE || opt->size % sizeof(size_t) || opt->size > 4096) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.size is %zu: initialise the options with PERCEPT_OPTIONS_INIT",
                 opt->size);
        return PERCEPT_EINVAL;
    }
    const unsigned char *bytes = (const unsigned char *)opt;
    for (size_t i = sizeof(percept_options); i < opt->size; i++) {
        if (bytes[i]) {
            pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                     "percept_options.size is %zu: this percept (%s) knows only %zu bytes of "
                     "options, and the program sets later ones",
                     opt->size, PERCEPT_VERSION, sizeof(percept_options));
            return PERCEPT_EINVAL;
        }
    }
    memcpy(out, opt, opt->size < sizeof *out ? opt->size : sizeof *out);
    if (out->allocator && !out->allocator->alloc) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.allocator: its alloc function is NULL");
        return PERCEPT_EINVAL;
    }
    if (out->backend && !pc_backend_name_ok(out->backend)) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.backend '%.200s' is not a backend name: letters, digits, "
                 "'_' and '-'",
                 out->backend);
        return PERCEPT_EINVAL;
    }
    if (out->bounds && !valid_bounds(out->bounds)) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.bounds: each must be finite, within %g, and each min must not "
                 "exceed its max",
                 PERCEPT_COORD_LIMIT);
        return PERCEPT_EINVAL;
    }
    if (out->reserve > PAIR_SLOT_LIMIT) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "percept_options.reserve %zu is more than a world holds (%lu)", out->reserve,
                 (unsigned long)PAIR_SLOT_LIMIT);
        return PERCEPT_EINVAL;
    }
    return PERCEPT_OK;
}

static int world_open(percept_world **out, const char *path, const char *text, const char *label,
                      const percept_options *options, percept_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    if (!out) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL, "the 'out' argument is NULL");
        return PERCEPT_EINVAL;
    }
    *out = NULL;
    if (!path && !text) {
        pc_error(err, PERCEPT_EINVAL, NULL, 0, NULL, NULL,
                 "no configuration: the path or text is NULL");
        return PERCEPT_EINVAL;
    }
    percept_options opts, *opt = NULL;
    if (options) {
        int rc = read_options(options, &opts, err);
        if (rc)
            return rc;
        opt = &opts;
    }
    percept_allocator a = {percept_default_alloc, NULL};
    if (opt && opt->allocator)
        a = *opt->allocator;

    percept_world *w = pc_alloc(&a, sizeof *w);
    if (!w) {
        pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, "out of memory creating the world");
        return PERCEPT_ENOMEM;
    }
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->err_index = SIZE_MAX;

    pc_config cfg;
    int rc = pc_config_parse(&w->alloc, &cfg, path, text, label, err);
    if (rc == PERCEPT_OK)
        rc = check_plugin_dirs(&cfg, opt, err);
    char *env_copy = NULL;
    if (rc == PERCEPT_OK) {
        w->bounds = opt && opt->bounds ? *opt->bounds : cfg.bounds;
        w->move_events = cfg.move_events;
        plugin_search search;
        if (plugin_search_init(&w->alloc, &search, opt ? opt->plugin_dir : NULL, cfg.plugin_dir,
                               &env_copy)) {
            pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, "out of memory creating the world");
            rc = PERCEPT_ENOMEM;
        }
        for (int s = 0; s < PERCEPT_SENSE_COUNT && rc == PERCEPT_OK; s++) {
            rc = open_backend(w, &cfg, opt, &search, s, err);
            if (rc == PERCEPT_OK)
                rc = open_grid(w, &cfg, s, err);
        }
        if (rc == PERCEPT_OK && choose_near_backends(w)) {
            pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, "out of memory creating the world");
            rc = PERCEPT_ENOMEM;
        }
        size_t reserve = opt && opt->reserve ? opt->reserve : cfg.reserve;
        if (rc == PERCEPT_OK && reserve && world_reserve(w, reserve)) {
            pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL,
                     "out of memory making room for %zu entities (reserve)", reserve);
            rc = PERCEPT_ENOMEM;
        }
    }
    pc_free(&w->alloc, env_copy);
    pc_config_free(&w->alloc, &cfg);
    if (rc != PERCEPT_OK) {
        free_world(w);
        return rc;
    }
    *out = w;
    return PERCEPT_OK;
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
    if (!world)
        return;
    if (world->in_callback) {
        /* The call delivering events still reads the world: it closes it
         * when the callback returns. */
        world->close_requested = 1;
        return;
    }
    free_world(world);
}
