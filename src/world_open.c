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
#include "decimal.h"

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

/* Where a sense's backend name came from: the place its messages start by
 * naming, and what they are about (see percept_error). */
typedef struct origin {
    char place[1024];
    int line;            /* the config line of the key 'backend', or 0 */
    const char *section; /* that key's section, or NULL */
    const char *option;  /* "backend" when the name came from the options, or NULL */
    unsigned senses;     /* the senses the instance serves */
} origin;

/* The place names every sense the instance will serve when it serves more
 * than one (`sharing`: sense s and those configured alike), wherever the
 * name came from: a backend that refuses its setup refuses it for all. */
static void describe_origin(origin *o, const pc_config *cfg, const char *override, int s,
                            unsigned sharing)
{
    const sense_config *sc = &cfg->sense[s];
    char senses[48] = "", used_for[64] = "";
    for (int t = 0; t < PERCEPT_SENSE_COUNT; t++)
        if (sharing & PERCEPT_SENSE_BIT(t))
            snprintf(senses + strlen(senses), sizeof senses - strlen(senses), "%s[%s]",
                     senses[0] ? ", " : "", percept_sense_name((percept_sense)t));
    if (sharing & (sharing - 1)) /* more than one sense */
        snprintf(used_for, sizeof used_for, " (used for %s)", senses);
    *o = (origin){.line = 0, .section = NULL, .option = NULL, .senses = sharing};
    if (override) {
        o->option = "backend";
        snprintf(o->place, sizeof o->place, "%s: backend '%s' for %s (from the options)",
                 cfg->source, override, senses);
    } else if (sc->backend) {
        o->line = sc->backend_line;
        o->section = percept_sense_name((percept_sense)s);
        snprintf(o->place, sizeof o->place, "%s:%d: key 'backend' in [%s]%s", cfg->source, o->line,
                 o->section, used_for);
    } else {
        /* The [percept] key speaks for every sense: say which it served here. */
        o->line = cfg->backend_line;
        o->section = "percept";
        snprintf(o->place, sizeof o->place, "%s:%d: key 'backend' in [percept] (used for %s)",
                 cfg->source, o->line, senses);
    }
}

/* Says in *err what a message placed at `o` is about. */
static void error_about_origin(percept_error *err, const origin *o)
{
    pc_error_about(err, o->section, o->section ? "backend" : NULL, o->option, o->senses);
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
    const char *sense_name = percept_sense_name((percept_sense)s);
    if (!sb.name) {
        pc_error_set_at(err, PERCEPT_ECONFIG, 0, cfg->source,
                        "no backend for sense '%s': set 'backend' in [%s] or in [percept]",
                        sense_name, sense_name);
        pc_error_about(err, sense_name, "backend", NULL, PERCEPT_SENSE_BIT(s));
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

    unsigned sharing = PERCEPT_SENSE_BIT(s);
    for (int t = s + 1; t < PERCEPT_SENSE_COUNT; t++) {
        sense_backend later = backend_of_sense(cfg, opt, t);
        if (later.name && same_backend(&sb, &later))
            sharing |= PERCEPT_SENSE_BIT(t);
    }
    origin from;
    char why[1536]; /* cut to the 511 characters of percept_error.text last */
    describe_origin(&from, cfg, opt ? opt->backend : NULL, s, sharing);
    backend_group *bg = &w->backends[w->backend_count];
    w->backend_of[s] = (uint8_t)w->backend_count++; /* counted now: free_world() unloads it */
    bg->senses = PERCEPT_SENSE_BIT(s);
    /* The reason gets the room the origin leaves in percept_error.text, so
     * that the loader can fit what matters (the installed directory, say)
     * into what the caller will see. */
    size_t taken = strlen(from.place) + 2, room = sizeof err->text;
    size_t why_size = taken + 128 < room ? room - taken : 128;
    int rc = plugin_load(&w->alloc, search, sb.name, &bg->plugin, why, why_size);
    if (rc) {
        pc_error_set_at(err, rc, from.line, from.place, "%s", why);
        error_about_origin(err, &from);
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
    if (!bg->backend) {
        berr.text[sizeof berr.text - 1] = '\0';
        if (bg->host_state.refused) {
            /* Whatever the backend says, the caller's allocator is what failed. */
            pc_error_set_at(err, PERCEPT_ENOMEM, from.line, from.place,
                            "backend '%s' (%s): out of memory%s%s", sb.name, bg->plugin.path,
                            berr.text[0] ? ": " : "", berr.text);
            error_about_origin(err, &from);
            return PERCEPT_ENOMEM;
        }
        const char *text = berr.text[0] ? berr.text : "creation failed; the backend gave no reason";
        if (berr.param_index >= 0 && (size_t)berr.param_index < setup.param_count) {
            if (!berr.text[0])
                text = "refused by the backend, which gave no reason";
            const percept_backend_param *p = &setup.params[berr.param_index];
            char read[96];
            pc_describe_value(read, sizeof read, p->value);
            pc_error_set_key(err, PERCEPT_ECONFIG, cfg->source, p->line, sense_name, p->key,
                             sharing, "%s%s", text, read);
            return PERCEPT_ECONFIG;
        }
        /* No parameter to blame and no allocation refused: a setup the
         * backend refuses as a whole, with its reason (a default size that
         * does not fit the world bounds), is the configuration's fault. A
         * refusal without a reason, or naming a parameter past the ones it
         * was given, is the plugin's own: say so rather than blame a key. */
        char bad_index[96] = "";
        if (berr.param_index >= 0)
            snprintf(bad_index, sizeof bad_index,
                     " (the plugin blamed parameter %d, but it was given %zu)", berr.param_index,
                     setup.param_count);
        rc = berr.text[0] && berr.param_index < 0 ? PERCEPT_ECONFIG : PERCEPT_EPLUGIN;
        pc_error_set_at(err, rc, from.line, from.place, "backend '%s' (%s): %s%s", sb.name,
                        bg->plugin.path, text, bad_index);
        error_about_origin(err, &from);
        return rc;
    }
    return PERCEPT_OK;
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
        char size[32];
        pc_error_set_key(
            err, PERCEPT_ECONFIG, cfg->source, sc->observer_cell_size_line,
            percept_sense_name((percept_sense)s), "observer_cell_size", PERCEPT_SENSE_BIT(s),
            "%s is too small for the world bounds (more than %u cells)",
            decimal_exact_text(size, sizeof size, sc->observer_cell_size), OG_MAX_CELLS);
        return PERCEPT_ECONFIG;
    }
    if (rc) {
        pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory creating the world");
        return PERCEPT_ENOMEM;
    }
    w->grid_count++;
    return PERCEPT_OK;
}

static int open_sense(percept_world *w, const pc_config *cfg, const percept_options *opt,
                      const plugin_search *search, int s, percept_error *err)
{
    int rc = open_backend(w, cfg, opt, search, s, err);
    return rc ? rc : open_grid(w, cfg, s, err);
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
        pc_error_set(err, PERCEPT_EINVAL, 0,
                     "the plugin_dir in the options, '%s', is not a directory", opt->plugin_dir);
        pc_error_about(err, NULL, NULL, "plugin_dir", 0);
        return PERCEPT_EINVAL;
    }
    if (cfg->plugin_dir && (stat(cfg->plugin_dir, &st) || !S_ISDIR(st.st_mode))) {
        pc_error_set_key(err, PERCEPT_ECONFIG, cfg->source, cfg->plugin_dir_line, "percept",
                         "plugin_dir", 0, "'%s' is not a directory", cfg->plugin_dir);
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
 * are zero, so an option it cannot honour is never ignored silently.
 */
static int check_options_size(const percept_options *opt, percept_error *err)
{
    if (opt->size < OPTIONS_FIRST_SIZE) {
        pc_error_set(err, PERCEPT_EINVAL, 0,
                     "percept_options.size is %zu, expected at least %zu: initialise the "
                     "options with PERCEPT_OPTIONS_INIT",
                     opt->size, (size_t)OPTIONS_FIRST_SIZE);
        pc_error_about(err, NULL, NULL, "size", 0);
        return PERCEPT_EINVAL;
    }
    /* No version will grow the struct past a page: a larger size is garbage
     * (options not made with PERCEPT_OPTIONS_INIT), not to be read. */
    if (opt->size > 4096) {
        pc_error_set(err, PERCEPT_EINVAL, 0,
                     "percept_options.size is %zu, which no version has: initialise the "
                     "options with PERCEPT_OPTIONS_INIT",
                     opt->size);
        pc_error_about(err, NULL, NULL, "size", 0);
        return PERCEPT_EINVAL;
    }
    const unsigned char *bytes = (const unsigned char *)opt;
    for (size_t i = sizeof(percept_options); i < opt->size; i++) {
        if (bytes[i]) {
            pc_error_set(err, PERCEPT_EINVAL, 0,
                         "percept_options.size is %zu, and this percept (%s) knows only the "
                         "first %zu bytes: the program sets options of a newer version",
                         opt->size, PERCEPT_VERSION, sizeof(percept_options));
            pc_error_about(err, NULL, NULL, "size", 0);
            return PERCEPT_EINVAL;
        }
    }
    return PERCEPT_OK;
}

static int world_open_once(percept_world **out, const char *path, const char *text,
                           const char *label, const percept_options *opt, percept_error *err)
{
    int rc;
    if (err)
        memset(err, 0, sizeof *err);
    if (!out) {
        pc_error_set(err, PERCEPT_EINVAL, 0, "the 'out' argument is NULL");
        return PERCEPT_EINVAL;
    }
    *out = NULL;
    if (!path && !text) {
        pc_error_set(err, PERCEPT_EINVAL, 0, "no configuration: the path or text is NULL");
        return PERCEPT_EINVAL;
    }
    if (opt && (rc = check_options_size(opt, err)) != PERCEPT_OK)
        return rc;
    percept_allocator a = {percept_default_alloc, NULL};
    if (opt && opt->allocator) {
        if (!opt->allocator->alloc) {
            pc_error_set(err, PERCEPT_EINVAL, 0, "the allocator's alloc function is NULL");
            pc_error_about(err, NULL, NULL, "allocator", 0);
            return PERCEPT_EINVAL;
        }
        a = *opt->allocator;
    }
    if (opt && opt->backend && !pc_backend_name_ok(opt->backend)) {
        pc_error_set(err, PERCEPT_EINVAL, 0,
                     "percept_options.backend '%.200s' is not a backend name: letters, digits, "
                     "'_' and '-' (the plugin file is NAME.so in the plugin directories)",
                     opt->backend);
        pc_error_about(err, NULL, NULL, "backend", 0);
        return PERCEPT_EINVAL;
    }
    if (opt && opt->bounds && !valid_bounds(opt->bounds)) {
        char limit[32];
        pc_error_set(err, PERCEPT_EINVAL, 0,
                     "the bounds in the options are invalid: they must be finite, within "
                     "%s, and each min must not exceed its max",
                     decimal_limit_text(limit, sizeof limit, PERCEPT_COORD_LIMIT));
        pc_error_about(err, NULL, NULL, "bounds", 0);
        return PERCEPT_EINVAL;
    }

    percept_world *w = pc_alloc(&a, sizeof *w);
    if (!w) {
        pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory creating the world");
        return PERCEPT_ENOMEM;
    }
    memset(w, 0, sizeof *w);
    w->alloc = a;
    w->err_index = SIZE_MAX;

    pc_config cfg;
    rc = pc_config_parse(&w->alloc, &cfg, path, text, label, err);
    if (rc == PERCEPT_OK)
        rc = check_plugin_dirs(&cfg, opt, err);
    char *env_copy = NULL;
    if (rc == PERCEPT_OK) {
        w->bounds = opt && opt->bounds ? *opt->bounds : cfg.bounds;
        w->move_events = cfg.move_events;
        plugin_search search;
        if (plugin_search_init(&w->alloc, &search, opt ? opt->plugin_dir : NULL, cfg.plugin_dir,
                               &env_copy)) {
            pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory creating the world");
            rc = PERCEPT_ENOMEM;
        }
        for (int s = 0; s < PERCEPT_SENSE_COUNT && rc == PERCEPT_OK; s++)
            rc = open_sense(w, &cfg, opt, &search, s, err);
        if (rc == PERCEPT_OK && choose_near_backends(w)) {
            pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory creating the world");
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

/*
 * A configuration refused for the world bounds (a cell_size too small for
 * them, say) names its key, which is right for the file; but when the
 * bounds came from percept_options, a program that set them is pointed at
 * a line it did not get wrong. So when the same configuration opens with
 * its own [world] bounds, the message says that the options' bounds are
 * what it does not fit, and `option` names them. (A second opening, on
 * this failure only.)
 */
static int world_open(percept_world **out, const char *path, const char *text, const char *label,
                      const percept_options *opt, percept_error *err)
{
    int rc = world_open_once(out, path, text, label, opt, err);
    if (rc != PERCEPT_ECONFIG || !err || !opt || !opt->bounds || err->option[0])
        return rc;
    percept_options own;
    memset(&own, 0, sizeof own);
    memcpy(&own, opt, opt->size < sizeof own ? opt->size : sizeof own);
    own.size = sizeof own;
    own.bounds = NULL;
    percept_world *probe = NULL;
    percept_error probe_err;
    if (world_open_once(&probe, path, text, label, &own, &probe_err) != PERCEPT_OK)
        return rc;
    percept_world_close(probe);
    const percept_bounds *b = opt->bounds;
    char n[4][32];
    size_t len = strlen(err->text);
    decimal_snprintf(err->text + len, sizeof err->text - len,
                     " (the world bounds are percept_options.bounds, %s %s %s %s; with the "
                     "config's own [world] bounds it opens)",
                     decimal_exact_text(n[0], sizeof n[0], b->min_x),
                     decimal_exact_text(n[1], sizeof n[1], b->min_y),
                     decimal_exact_text(n[2], sizeof n[2], b->max_x),
                     decimal_exact_text(n[3], sizeof n[3], b->max_y));
    snprintf(err->option, sizeof err->option, "bounds");
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
