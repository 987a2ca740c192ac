/*
 * percept-sim - a living town to watch percept at work: villagers, guards,
 * wolves, owls, thieves and players with the senses a game would give them
 * (cones, margins, heights, factions) wander, crowd into the market and
 * flee, wolves howl and the church bell rings, while the library reports
 * who starts and stops perceiving whom, and who hears what. Prints a
 * summary and writes an SVG snapshot and an animated HTML page of the run.
 *
 * Only the public API (percept.h) is used: the tool is also an example.
 */
#include <percept.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/html.h"
#include "sim/scene.h"
#include "sim/svg.h"

#include "cli.h"

#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-sim"

/* The exit status when a library call or writing a file fails; bad usage is CLI_EXIT_USAGE. */
enum { EXIT_RUN = 1 };

#define MAX_ENTITIES 100000
#define MAX_TICKS 100000
/* The page gets a frame every ticks / FRAMES ticks, and the first and last. */
#define FRAMES 100

struct args {
    const char *config, *backend;
    const char *svg, *html, *events, *trace;
    long entities, ticks;
    unsigned long long seed;
    int timing, quiet;
};

static void print_usage(void)
{
    printf("Usage: " PROGRAM " [OPTION]...\n"
           "\n"
           "Play a town of creatures whose senses differ the way a game's do through\n"
           "wandering, a market day and a flight from wolves, with percept reporting every\n"
           "change of who perceives whom and every howl and bell heard. Prints a summary;\n"
           "writes an SVG snapshot and an HTML page that animates the run. The same seed\n"
           "gives the same run.\n"
           "\n"
           "Options:\n"
           "  --config FILE    create the world from the INI file FILE\n"
           "                   (default: " PERCEPT_DEFAULT_CONFIG ")\n"
           "  --backend NAME   use backend NAME for every sense; without --config, every\n"
           "                   other setting keeps its default\n"
           "  --entities N     creatures in the town, 1..%d (default 2000)\n"
           "  --ticks N        length of the run, 1..%d (default 200)\n"
           "  --seed N         random seed (default 1)\n"
           "  --svg FILE       the snapshot picture (default " PROGRAM ".svg)\n"
           "  --html FILE      the animated page (default " PROGRAM ".html)\n"
           "  --events FILE    write every enter/leave event and stimulus heard to FILE as\n"
           "                     TICK OBSERVER TARGET SENSE enter|leave\n"
           "                     TICK OBSERVER SOURCE SENSE stimulus (SOURCE - for the bell)\n"
           "  --trace FILE     write every call of the run to FILE as a trace\n"
           "                   (docs/trace-format.md) for percept-replay\n"
           "  --no-timing      leave out the timing lines (for comparing summaries)\n"
           "  --quiet          no start line and no progress display\n"
           "  --help           print this help and exit\n"
           "  --version        print the version of the percept library and exit\n"
           "\n"
           "Exit status: 0 on success; 1 if a library call or writing a file failed;\n"
           "2 on bad usage, a file that cannot be opened, or a world that cannot be created.\n",
           MAX_ENTITIES, MAX_TICKS);
}

/* The value of a numeric option (r from cli_option_value), from min to max;
 * -1, or the exit status of a usage error. */
static int number_option(const char *opt, int r, const char *v, unsigned long long max,
                         unsigned long long *out)
{
    char *end = NULL;
    errno = 0;
    if (r > 0 && v[0] >= '0' && v[0] <= '9')
        *out = strtoull(v, &end, 10);
    if (end == NULL || *end != '\0' || errno != 0 || *out > max || (max < ULLONG_MAX && *out < 1))
        return cli_usage_error(PROGRAM, "%s needs a whole number from %d to %llu", opt,
                               max < ULLONG_MAX, max);
    return -1;
}

/* -1 when the arguments are fine, else the exit status to end with. */
static int parse_args(int argc, char **argv, struct args *a)
{
    static const char *const file_opts[] = {"--config", "--svg", "--html", "--events", "--trace"};
    unsigned long long entities = 2000, ticks = 200;

    memset(a, 0, sizeof *a);
    a->seed = 1;
    a->timing = 1;
    a->svg = PROGRAM ".svg";
    a->html = PROGRAM ".html";
    const char **files[] = {&a->config, &a->svg, &a->html, &a->events, &a->trace};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int r, st = -1;
        size_t k = 0;
        while (k < 5 && (r = cli_option_value(argc, argv, &i, file_opts[k], files[k])) == 0)
            k++;
        if (k < 5) {
            if (r < 0 || (*files[k])[0] == '\0')
                return cli_usage_error(PROGRAM, "%s needs a FILE", file_opts[k]);
        } else if (strcmp(arg, "--help") == 0) {
            print_usage();
            return EXIT_SUCCESS;
        } else if (cli_version(PROGRAM, arg)) {
            return EXIT_SUCCESS;
        } else if (strcmp(arg, "--no-timing") == 0) {
            a->timing = 0;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--backend", &a->backend)) != 0) {
            if (r < 0 || !cli_backend_name_ok(a->backend))
                return cli_usage_error(PROGRAM,
                                       "--backend needs a NAME: letters, digits, '_', '-'");
        } else if ((r = cli_option_value(argc, argv, &i, "--entities", &v)) != 0) {
            st = number_option("--entities", r, v, MAX_ENTITIES, &entities);
        } else if ((r = cli_option_value(argc, argv, &i, "--ticks", &v)) != 0) {
            st = number_option("--ticks", r, v, MAX_TICKS, &ticks);
        } else if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            st = number_option("--seed", r, v, ULLONG_MAX, &a->seed);
        } else {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        }
        if (st >= 0)
            return st;
    }
    a->entities = (long)entities;
    a->ticks = (long)ticks;
    return -1;
}

/* What the library reports, and where the run's records go. */
typedef struct tally {
    const sim_scene *scene;
    unsigned long long events[4][SIM_SENSES]; /* [kind of event][sense] */
    unsigned long long heard[2];              /* stimuli perceived: [0] howls, [1] bells */
    /* ENTER events by observer kind, target kind and sense: who noticed whom. */
    unsigned long long noticed[KIND_COUNT][KIND_COUNT][SIM_SENSES];
    unsigned long *changes; /* [tick - 1][sense]: enters and leaves, for the page's chart */
    FILE *events_out;       /* --events, or NULL */
    FILE *trace_out;        /* --trace, or NULL */
    int trace_tick;         /* the tick of the trace's last "# tick" line */
} tally;

/* The kinds of event, as --events and the summary name them. */
static const char *const event_name[4] = {"enter", "leave", "move", "stimulus"};

static void on_event(void *user, const percept_event *ev)
{
    tally *t = user;
    const sim_scene *s = t->scene;
    int kind = (int)ev->kind, sense = (int)ev->sense;

    t->events[kind][sense]++;
    if (kind == PERCEPT_STIMULUS)
        t->heard[!ev->has_source]++; /* the bell has no source */
    if (t->events_out != NULL && kind != PERCEPT_MOVE) {
        char target[16] = "-";
        if (kind != PERCEPT_STIMULUS || ev->has_source)
            snprintf(target, sizeof target, "%u", (unsigned)ev->target);
        fprintf(t->events_out, "%d %u %s %s %s\n", s->tick, (unsigned)ev->observer, target,
                sim_sense_names[sense], event_name[kind]);
    }
    if (kind != PERCEPT_ENTER && kind != PERCEPT_LEAVE)
        return;
    if (s->tick > 0)
        t->changes[(size_t)(s->tick - 1) * SIM_SENSES + (size_t)sense]++;
    size_t o = sim_index(s, ev->observer), g = sim_index(s, ev->target);
    if (kind == PERCEPT_ENTER && o != SIZE_MAX && g != SIZE_MAX)
        t->noticed[s->entities[o].kind][s->entities[g].kind][sense]++;
}

/* After each library call of the scene: the call as a line of the trace.
 * %.17g gives every double back exactly, so a replay makes the same calls. */
static void after_call(void *user, const sim_call *c)
{
    tally *t = user;
    FILE *f = t->trace_out;
    unsigned id = (unsigned)c->id;
    const char *sense = sim_sense_names[c->sense];

    if (t->scene->tick != t->trace_tick)
        fprintf(f, "# tick %d\n", t->trace_tick = t->scene->tick);
    switch (c->op) {
    case OP_ADD:
        fprintf(f, "add %u %.17g %.17g %.17g", id, c->desc.x, c->desc.y, c->desc.z);
        for (int k = 0; k < SIM_SENSES; k++) {
            const percept_sense_params *p = &c->desc.sense[k];
            const char *name = sim_sense_names[k];
            if (p->range != 0)
                fprintf(f, " %s=%.17g", name, p->range);
            if (p->margin != 0)
                fprintf(f, " %s.margin=%.17g", name, p->margin);
            if (p->fov != 0)
                fprintf(f, " %s.fov=%.17g", name, p->fov);
            if (p->ignore != 0)
                fprintf(f, " %s.ignore=%lu", name, (unsigned long)p->ignore);
        }
        fprintf(f, " tags=%lu", (unsigned long)c->desc.tags);
        if (c->desc.facing[0] != 0 || c->desc.facing[1] != 0)
            fprintf(f, " facing=%.17g,%.17g", c->desc.facing[0], c->desc.facing[1]);
        for (int k = 0, first = 1; k < SIM_SENSES; k++) {
            if (c->desc.hidden & PERCEPT_SENSE_BIT(k)) {
                fprintf(f, "%s%s", first ? " hide=" : ",", sim_sense_names[k]);
                first = 0;
            }
        }
        fputc('\n', f);
        break;
    case OP_MOVE:
        fprintf(f, "move %u %.17g %.17g %.17g\n", id, c->desc.x, c->desc.y, c->desc.z);
        break;
    case OP_TURN:
        fprintf(f, "face %u %.17g %.17g\n", id, c->desc.facing[0], c->desc.facing[1]);
        break;
    case OP_EMIT:
        fprintf(f, "emit %s %.17g %.17g %.17g strength=%.17g", sim_sense_names[c->stimulus.sense],
                c->stimulus.x, c->stimulus.y, c->stimulus.z, c->stimulus.strength);
        if (c->stimulus.has_source)
            fprintf(f, " source=%u tags=%lu", id, (unsigned long)c->stimulus.tags);
        fputc('\n', f);
        break;
    case OP_REMOVE:
        fprintf(f, "remove %u\n", id);
        break;
    case OP_RANGE:
        fprintf(f, "range %u %s %.17g\n", id, sense, c->range);
        break;
    case OP_HIDE:
        fprintf(f, "%s %u %s\n", c->hidden ? "hide" : "show", id, sense);
        break;
    case OP_COUNT:
        break;
    }
}

/* Whether the world has the senses the town is written for. */
static int town_senses(const percept_world *w)
{
    int same = percept_sense_count(w) == SIM_SENSES;
    for (int k = 0; k < SIM_SENSES && same; k++)
        same = strcmp(percept_sense_name(w, k), sim_sense_names[k]) == 0;
    return same;
}

/* 0, or an exit status after printing why the world did not open. */
static int open_world(const struct args *a, percept_world **world)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_bounds bounds = {0, 0, SIM_WORLD_SIZE, SIM_WORLD_SIZE}; /* the scene's town */
    percept_error err;
    int st;

    opt.bounds = &bounds;
    opt.backend = a->backend;
    memset(&err, 0, sizeof err);
    if (a->config == NULL && a->backend != NULL)
        st = percept_world_open_string(world, "", "<--backend>", &opt, &err);
    else
        st = percept_world_open(world, a->config ? a->config : PERCEPT_DEFAULT_CONFIG, &opt, &err);
    if (st == 0 && !town_senses(*world)) {
        fprintf(stderr, PROGRAM ": the town needs a world of the senses sight, hearing and smell, "
                                "in that order (the config's [world] senses)\n");
        percept_world_close(*world);
        *world = NULL;
        return CLI_EXIT_USAGE;
    }
    if (st == 0)
        return 0;
    fprintf(stderr, PROGRAM ": %s%s\n", err.text[0] ? err.text : percept_strerror(st),
            a->config == NULL && a->backend == NULL && st == PERCEPT_EIO
                ? " (the default config: give --config FILE or --backend NAME)"
                : "");
    return CLI_EXIT_USAGE;
}

/* The line at the start: the run and each sense's backend. */
static void print_start(const struct args *a, percept_world *w)
{
    fprintf(stderr, PROGRAM ": %ld creatures, %ld ticks, seed %llu; backends", a->entities,
            a->ticks, a->seed);
    for (int k = 0; k < SIM_SENSES; k++) {
        const char *b = percept_backend_name(w, (percept_sense)k);
        fprintf(stderr, "%s %s=%s", k ? "," : "", sim_sense_names[k], b ? b : "-");
    }
    if (a->config == NULL && a->backend != NULL)
        fputs(" (no config file)\n", stderr);
    else
        fprintf(stderr, " (%s)\n", a->config ? a->config : PERCEPT_DEFAULT_CONFIG);
}

typedef struct notice {
    unsigned long long count;
    int observer, target, sense;
} notice;

static int by_count(const void *pa, const void *pb)
{
    const notice *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    /* Ties in a fixed order, so that the summary never depends on qsort. */
    if (a->observer != b->observer)
        return a->observer - b->observer;
    if (a->target != b->target)
        return a->target - b->target;
    return a->sense - b->sense;
}

/* The deterministic part of the summary: everything but timings and file locations. */
static void write_summary(FILE *o, const sim_scene *s, const tally *t)
{
    static const char *const verb[SIM_SENSES] = {"saw", "heard", "smelled"};
    unsigned long long total[4] = {0, 0, 0, 0};
    percept_memory m;

    fprintf(o, PROGRAM ": %zu creatures, %d ticks, seed %llu\n", s->count, s->ticks,
            (unsigned long long)s->seed);
    fputs("  creatures ", o);
    for (int k = 0; k < KIND_COUNT; k++)
        fprintf(o, "%s %zu %s", k ? "," : "", s->kind_count[k], sim_profiles[k].plural);
    fputs("\n  backends  ", o);
    for (int k = 0; k < SIM_SENSES; k++) {
        const char *b = percept_backend_name(s->world, (percept_sense)k);
        fprintf(o, " %s=%s", sim_sense_names[k], b ? b : "-");
    }
    fputs("\n  plugins    ", o);
    cli_print_backend_paths(o, s->world);
    fputs("\n  calls     ", o);
    for (int op = 0; op < OP_COUNT; op++)
        fprintf(o, "%s %llu %s", op ? "," : "", s->op_calls[op], sim_op_names[op]);
    fputs("\n  events    ", o);
    for (int e = 0; e < 4; e++)
        fprintf(o, " %12s", event_name[e]);
    for (int k = 0; k <= SIM_SENSES; k++) {
        fprintf(o, "\n    %-8s", k < SIM_SENSES ? sim_sense_names[k] : "all");
        for (int e = 0; e < 4; e++) {
            unsigned long long n = k < SIM_SENSES ? t->events[e][k] : total[e];
            fprintf(o, " %12llu", n);
            total[e] += k < SIM_SENSES ? n : 0;
        }
    }
    fputs("\n  at the end", o);
    for (int k = 0; k < SIM_SENSES; k++) {
        unsigned long long pairs = 0;
        for (size_t i = 0; i < s->count; i++) {
            size_t c = 0;
            if (s->entities[i].present &&
                percept_perceived(s->world, sim_id(i), (percept_sense)k, NULL, 0, &c) == 0)
                pairs += c;
        }
        fprintf(o, "%s %llu %s", k ? "," : "", pairs, sim_sense_names[k]);
    }
    fputs(" pairs perceived\n", o);
    size_t n = percept_entity_count(s->world);
    if (percept_memory_usage(s->world, &m) == 0 && n > 0) {
        fprintf(o, "  memory     %.2f MiB held at the end, ", (double)m.total / (1024.0 * 1024.0));
        cli_print_memory_per(o, &m, n, "creature");
        fputc('\n', o);
    }

    notice top[KIND_COUNT * KIND_COUNT * SIM_SENSES];
    n = 0;
    for (int a = 0; a < KIND_COUNT; a++)
        for (int b = 0; b < KIND_COUNT; b++)
            for (int k = 0; k < SIM_SENSES; k++)
                if (t->noticed[a][b][k] > 0)
                    top[n++] = (notice){t->noticed[a][b][k], a, b, k};
    qsort(top, n, sizeof top[0], by_count);
    fputs("  who noticed whom most (enter events)\n", o);
    for (size_t i = 0; i < n && i < 8; i++) {
        char line[96];
        snprintf(line, sizeof line, "%s %s %s", sim_profiles[top[i].observer].plural,
                 verb[top[i].sense], sim_profiles[top[i].target].plural);
        fprintf(o, "    %-30s %10llu\n", line, top[i].count);
    }
    size_t bells = 0;
    for (size_t i = 0; i < s->noise_count; i++)
        bells += (size_t)s->noises[i].bell;
    fprintf(o, "  stimuli    %zu wolf howls heard %llu times, %zu church bells heard %llu times\n",
            s->noise_count - bells, t->heard[0], bells, t->heard[1]);
    /* The pairs a game would care about, even when they are rare. */
    fprintf(o,
            "  guards saw wolves %llu times, heard thieves %llu times; wolves smelled "
            "players %llu times\n",
            t->noticed[KIND_GUARD][KIND_WOLF][PERCEPT_SIGHT],
            t->noticed[KIND_GUARD][KIND_THIEF][PERCEPT_HEARING],
            t->noticed[KIND_WOLF][KIND_PLAYER][PERCEPT_SMELL]);
}

static void write_timing(FILE *o, const sim_scene *s, double run_seconds)
{
    double in_calls = 0;
    fputs("  time per call", o);
    for (int op = 0; op < OP_COUNT; op++) {
        in_calls += s->op_seconds[op];
        if (s->op_calls[op] > 0)
            fprintf(o, "%s %s %.2f us", op ? "," : "", sim_op_names[op],
                    s->op_seconds[op] * 1e6 / (double)s->op_calls[op]);
    }
    fprintf(o, "\n  time total     %.2f s in percept calls, %.2f s for the whole run\n", in_calls,
            run_seconds);
}

/* Where a file is, with a file:// URL a terminal can open with a click. */
static void write_location(const char *what, const char *path)
{
    char cwd[PATH_MAX];
    int relative = path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL;
    printf("  %-10s %s  (file://%s%s%s)\n", what, path, relative ? cwd : "", relative ? "/" : "",
           path);
}

/* The output files, opened before the run so that a bad path fails at once. */
enum { OUT_SVG, OUT_HTML, OUT_EVENTS, OUT_TRACE, OUT_COUNT };

typedef struct run {
    struct args a;
    percept_world *world;
    sim_scene scene;
    tally tally;
    sim_html html;
    const char *path[OUT_COUNT];
    FILE *out[OUT_COUNT];
} run;

/* The progress line is on the terminal: a message starts on a line of its own. */
static int progress_shown;

/* Reports a failure during the run; returns EXIT_RUN. */
static int run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int run_error(const char *fmt, ...)
{
    va_list ap;
    fputs(progress_shown ? "\n" PROGRAM ": " : PROGRAM ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_RUN;
}

/* Closes output i (if open): 0, or EXIT_RUN after saying that it failed. */
static int close_output(run *r, int i)
{
    FILE *f = r->out[i];
    r->out[i] = NULL;
    if (f == NULL)
        return 0;
    int failed = ferror(f), e = errno;
    if (fclose(f) != 0 || failed)
        return run_error("cannot write %s: %s", r->path[i], strerror(failed ? e ? e : EIO : errno));
    return 0;
}

/* Plays the whole run; 0, or an exit status after printing why. */
static int play(run *r)
{
    const struct args *a = &r->a;
    sim_scene *s = &r->scene;
    long every = (a->ticks + FRAMES - 1) / FRAMES;
    long snapshot = sim_phase_end((int)a->ticks, PHASE_MARKET);
    int progress = !a->quiet && isatty(STDERR_FILENO), st = 0;
    progress_shown = 0;
    double start = cli_now_seconds();

    if (snapshot == 0)
        snapshot = a->ticks;
    if (r->tally.trace_out != NULL) {
        percept_bounds b;
        fprintf(r->tally.trace_out,
                "# percept-sim --entities %ld --ticks %ld --seed %llu: every call of the run\n",
                a->entities, a->ticks, a->seed);
        if (percept_get_bounds(r->world, &b) == PERCEPT_OK)
            fprintf(r->tally.trace_out, "world %.17g %.17g %.17g %.17g\n# tick 0\n", b.min_x,
                    b.min_y, b.max_x, b.max_y);
    }
    if (sim_scene_init(s, r->world, (size_t)a->entities, (int)a->ticks, a->seed, a->timing,
                       r->tally.trace_out != NULL ? after_call : NULL, &r->tally) < 0)
        return run_error("%s", s->error);
    sim_html_start(&r->html, r->out[OUT_HTML], s);
    for (long t = 1; t <= a->ticks; t++) {
        if (sim_scene_step(s) < 0)
            return run_error("tick %ld: %s", t, s->error);
        if ((t == 1 || t % every == 0 || t == a->ticks) && sim_html_frame(&r->html, s) < 0)
            return run_error("tick %ld: out of memory", t);
        if (t == snapshot && sim_svg_write(r->out[OUT_SVG], s) < 0)
            return run_error("tick %ld: out of memory", t);
        if (t == snapshot && close_output(r, OUT_SVG) != 0)
            return EXIT_RUN;
        if (progress)
            fprintf(stderr, "\r" PROGRAM ": tick %ld/%ld, %s\033[K", t, a->ticks,
                    sim_phase_text(s->phase));
        progress_shown = progress;
    }
    if (progress)
        fputs("\r\033[K", stderr);
    progress_shown = 0;
    double seconds = cli_now_seconds() - start;

    /* The summary: printed, and (without timings and locations) shown in the page. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return run_error("out of memory");
    write_summary(mem, s, &r->tally);
    if (fclose(mem) != 0) {
        free(text);
        return run_error("out of memory");
    }
    sim_html_finish(&r->html, r->tally.changes, (int)a->ticks, text);
    for (int i = 0; i < OUT_COUNT; i++)
        st |= close_output(r, i);
    fputs(text, stdout);
    free(text);
    if (a->timing)
        write_timing(stdout, s, seconds);
    if (st != 0)
        return EXIT_RUN;
    write_location("picture", a->svg);
    write_location("animation", a->html);
    printf("  (the picture shows tick %ld; the animation has %zu frames)\n", snapshot,
           r->html.frames);
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    static run r;
    int status = parse_args(argc, argv, &r.a);
    if (status >= 0)
        return status;

    const char *paths[OUT_COUNT] = {r.a.svg, r.a.html, r.a.events, r.a.trace};
    r.tally.scene = &r.scene;
    r.tally.changes = calloc((size_t)r.a.ticks * SIM_SENSES, sizeof *r.tally.changes);
    if (r.tally.changes == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_RUN;
    }
    /* The world first: a bad backend or config then leaves no file behind. */
    status = open_world(&r.a, &r.world);
    for (int i = 0; i < OUT_COUNT && status == 0; i++) {
        r.path[i] = paths[i];
        if (paths[i] != NULL && (r.out[i] = fopen(paths[i], "w")) == NULL) {
            fprintf(stderr, PROGRAM ": cannot open %s: %s\n", paths[i], strerror(errno));
            status = CLI_EXIT_USAGE;
        }
    }
    if (status == 0) {
        r.tally.events_out = r.out[OUT_EVENTS];
        r.tally.trace_out = r.out[OUT_TRACE];
        percept_set_event_callback(r.world, on_event, &r.tally);
        if (!r.a.quiet)
            print_start(&r.a, r.world);
        status = play(&r);
    }
    for (int i = 0; i < OUT_COUNT; i++)
        if (r.out[i] != NULL)
            fclose(r.out[i]);
    sim_html_free(&r.html);
    sim_scene_free(&r.scene);
    percept_world_close(r.world);
    free(r.tally.changes);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output: %s\n", strerror(errno));
        return EXIT_RUN;
    }
    return status;
}
