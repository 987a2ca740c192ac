/*
 * percept-sim - a living town to watch percept at work: a few thousand
 * villagers, guards, wolves, owls, thieves and players with the senses a
 * game would give them wander, crowd into the market and flee, while the
 * library reports who starts and stops perceiving whom. Prints a summary
 * and writes an SVG snapshot and an animated HTML page of the run.
 *
 * Only the public API (percept.h) is used: the tool is also an example.
 */
#define _POSIX_C_SOURCE 200809L

#include <percept.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/html.h"
#include "sim/scene.h"
#include "sim/svg.h"

#include "cli.h"

#ifndef PERCEPT_DEFAULT_CONFIG
#define PERCEPT_DEFAULT_CONFIG "/usr/local/etc/percept/percept.ini"
#endif

#define PROGRAM "percept-sim"

/* The exit status when a library call or writing a file fails; bad usage is CLI_EXIT_USAGE. */
enum { EXIT_RUN = 1 };

#define DEFAULT_ENTITIES 2000
#define DEFAULT_TICKS 200
#define DEFAULT_FRAMES 100
#define MAX_ENTITIES 1000000
#define MAX_TICKS 100000

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

struct args {
    const char *config;
    const char *backend;                            /* --backend NAME: every sense */
    const char *sense_backend[PERCEPT_SENSE_COUNT]; /* --backend SENSE=NAME */
    const char *svg, *html, *events;
    long entities, ticks, frames, snapshot;
    unsigned long long seed;
    int timing, quiet;
};

static void print_usage(FILE *out)
{
    fputs("Usage: " PROGRAM " [OPTION]...\n"
          "\n"
          "Play a town of creatures whose senses differ the way a game's do (guards\n"
          "see far and hear little, wolves smell, owls see very far, thieves are\n"
          "hidden from sight, players have large ranges) through wandering, a market\n"
          "day and a flight from wolves, with percept reporting every change of who\n"
          "perceives whom. Prints a summary; writes an SVG snapshot and an HTML page\n"
          "that animates the run (open it in a browser). The same seed gives the same\n"
          "run, pictures and summary (timings aside).\n"
          "\n"
          "Options:\n"
          "  --config FILE         create the world from the INI file FILE\n"
          "                        (default: " PERCEPT_DEFAULT_CONFIG ")\n"
          "  --backend NAME        use backend NAME for every sense\n"
          "  --backend SENSE=NAME  use backend NAME for SENSE (sight, hearing, smell);\n"
          "                        repeatable; the world is then configured by these\n"
          "                        options alone, with each backend's defaults\n"
          "  --entities N          creatures in the town (default 2000)\n"
          "  --ticks N             length of the run (default 200)\n"
          "  --seed N              random seed (default 1)\n"
          "  --svg FILE            the snapshot picture (default percept-sim.svg)\n"
          "  --snapshot TICK       the tick the snapshot shows (default: the end of\n"
          "                        market day, when the crowd fills the square)\n"
          "  --html FILE           the animated page (default percept-sim.html)\n"
          "  --frames N            at most N frames in the page (default 100)\n"
          "  --events FILE         write every enter/leave event to FILE as\n"
          "                          TICK OBSERVER TARGET SENSE enter|leave\n"
          "                        (tick 0 is the set-up), to compare backends with cmp\n"
          "  --no-timing           leave out the timing lines (for comparing summaries)\n"
          "  --quiet               no progress display\n"
          "  --help                print this help and exit\n"
          "\n"
          "Exit status: 0 on success, 1 if a library call or writing a file failed,\n"
          "2 on bad usage or a configuration that fails to load.\n",
          out);
}

static int parse_count(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* Whether any --backend SENSE=NAME was given: then the options configure the world. */
static int per_sense(const struct args *a)
{
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
        if (a->sense_backend[k] != NULL)
            return 1;
    return 0;
}

#define BAD_NAME "bad backend name '%s': letters, digits, '_' and '-' only"

static int parse_backend(struct args *a, const char *v)
{
    const char *eq = strchr(v, '=');
    if (eq == NULL) {
        if (!cli_backend_name_ok(v))
            return cli_usage_error(PROGRAM, BAD_NAME, v);
        a->backend = v;
        return -1;
    }
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const char *name = percept_sense_name((percept_sense)k);
        if (strlen(name) == (size_t)(eq - v) && strncmp(v, name, (size_t)(eq - v)) == 0) {
            if (!cli_backend_name_ok(eq + 1))
                return cli_usage_error(PROGRAM, BAD_NAME, eq + 1);
            a->sense_backend[k] = eq + 1;
            return -1;
        }
    }
    return cli_usage_error(PROGRAM, "'%.*s' is not a sense (sight, hearing, smell)", (int)(eq - v),
                           v);
}

/* Returns -1 when the arguments are fine, else the exit status to end with. */
static int parse_args(int argc, char **argv, struct args *a)
{
    memset(a, 0, sizeof *a);
    a->entities = DEFAULT_ENTITIES;
    a->ticks = DEFAULT_TICKS;
    a->frames = DEFAULT_FRAMES;
    a->seed = 1;
    a->timing = 1;
    a->svg = PROGRAM ".svg";
    a->html = PROGRAM ".html";

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int r;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage(stdout);
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--no-timing") == 0) {
            a->timing = 0;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--config", &a->config)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--svg", &a->svg)) != 0) {
            if (r < 0 || a->svg[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--html", &a->html)) != 0) {
            if (r < 0 || a->html[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--events", &a->events)) != 0) {
            if (r < 0 || a->events[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
        } else if ((r = cli_option_value(argc, argv, &i, "--backend", &v)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a NAME or SENSE=NAME", arg);
            if ((r = parse_backend(a, v)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--entities", &v)) != 0) {
            if (r < 0 || parse_count(v, 1, MAX_ENTITIES, &a->entities) < 0)
                return cli_usage_error(PROGRAM, "--entities needs a number from 1 to %d",
                                       MAX_ENTITIES);
        } else if ((r = cli_option_value(argc, argv, &i, "--ticks", &v)) != 0) {
            if (r < 0 || parse_count(v, 1, MAX_TICKS, &a->ticks) < 0)
                return cli_usage_error(PROGRAM, "--ticks needs a number from 1 to %d", MAX_TICKS);
        } else if ((r = cli_option_value(argc, argv, &i, "--frames", &v)) != 0) {
            if (r < 0 || parse_count(v, 1, MAX_TICKS, &a->frames) < 0)
                return cli_usage_error(PROGRAM, "--frames needs a number from 1 to %d", MAX_TICKS);
        } else if ((r = cli_option_value(argc, argv, &i, "--snapshot", &v)) != 0) {
            if (r < 0 || parse_count(v, 1, MAX_TICKS, &a->snapshot) < 0)
                return cli_usage_error(PROGRAM, "--snapshot needs a tick number");
        } else if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            char *end;
            errno = 0;
            if (r < 0 || v[0] == '-' || (a->seed = strtoull(v, &end, 10), errno != 0) || end == v ||
                *end != '\0')
                return cli_usage_error(PROGRAM, "--seed needs a non-negative number");
        } else {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        }
    }
    if (a->snapshot > a->ticks)
        return cli_usage_error(PROGRAM, "--snapshot must be a tick from 1 to %ld", a->ticks);
    if (a->snapshot == 0)
        a->snapshot = sim_phase_end((int)a->ticks, PHASE_MARKET);
    if (a->snapshot == 0)
        a->snapshot = a->ticks;
    if (per_sense(a) && a->config != NULL)
        return cli_usage_error(PROGRAM,
                               "--backend SENSE=NAME configures the world itself; it cannot be "
                               "combined with --config");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* What the library reports                                                  */

/* An enter or leave event for --events, kept until the call that caused it has returned. */
typedef struct pending_event {
    percept_id observer, target;
    int tick;
    unsigned char sense, enter;
} pending_event;

typedef struct tally {
    const sim_scene *scene;
    unsigned long long events[3][PERCEPT_SENSE_COUNT]; /* [kind of event][sense] */
    /* ENTER events by observer kind, target kind and sense: who noticed whom. */
    unsigned long long noticed[KIND_COUNT][KIND_COUNT][PERCEPT_SENSE_COUNT];
    unsigned long *changes; /* [tick - 1][sense]: enter + leave, for the page's chart */
    FILE *events_out;       /* --events, or NULL */
    /* The running call's events for events_out: written once it returns, so
     * that the calls' timings leave out the writing. */
    pending_event *pending;
    size_t pending_count, pending_cap;
    int pending_lost; /* out of memory: some events are missing from events_out */
} tally;

static void on_event(void *user, const percept_event *ev)
{
    tally *t = user;
    const sim_scene *s = t->scene;
    int kind = (int)ev->kind, sense = (int)ev->sense;

    if (kind < 0 || kind > PERCEPT_MOVE || sense < 0 || sense >= PERCEPT_SENSE_COUNT)
        return;
    t->events[kind][sense]++;
    if (kind == PERCEPT_MOVE)
        return;
    if (s->tick > 0)
        t->changes[(size_t)(s->tick - 1) * PERCEPT_SENSE_COUNT + (size_t)sense]++;
    if (kind == PERCEPT_ENTER) {
        size_t o = sim_index(s, ev->observer), g = sim_index(s, ev->target);
        if (o != SIZE_MAX && g != SIZE_MAX)
            t->noticed[s->entities[o].kind][s->entities[g].kind][sense]++;
    }
    if (t->events_out != NULL) {
        if (t->pending_count == t->pending_cap) {
            size_t cap = t->pending_cap ? 2 * t->pending_cap : 1024;
            pending_event *p = realloc(t->pending, cap * sizeof *p);
            if (p == NULL) {
                t->pending_lost = 1;
                return;
            }
            t->pending = p;
            t->pending_cap = cap;
        }
        t->pending[t->pending_count++] = (pending_event){
            ev->observer, ev->target, s->tick, (unsigned char)sense, kind == PERCEPT_ENTER};
    }
}

/* Runs after each library call of the scene, outside its timing: writes the call's events. */
static void after_call(void *user)
{
    tally *t = user;
    for (size_t i = 0; i < t->pending_count; i++) {
        const pending_event *e = &t->pending[i];
        fprintf(t->events_out, "%d %u %u %s %s\n", e->tick, (unsigned)e->observer,
                (unsigned)e->target, percept_sense_name((percept_sense)e->sense),
                e->enter ? "enter" : "leave");
    }
    t->pending_count = 0;
}

/* ------------------------------------------------------------------------ */
/* Opening the world                                                         */

/* 0, or an exit status after printing why the world did not open. */
static int open_world(const struct args *a, percept_world **world)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_bounds bounds = {0, 0, SIM_WORLD_SIZE, SIM_WORLD_SIZE}; /* the scene's town */
    percept_error err;
    int st;

    opt.bounds = &bounds;
    memset(&err, 0, sizeof err);
    if (per_sense(a)) {
        /* The options name every backend: no config file is needed. A
         * backend per sense takes INI text; the names are checked already. */
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem == NULL) {
            fprintf(stderr, PROGRAM ": out of memory\n");
            return EXIT_RUN;
        }
        fprintf(mem, "[percept]\nbackend = %s\n", a->backend != NULL ? a->backend : "bruteforce");
        for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
            if (a->sense_backend[k] != NULL)
                fprintf(mem, "[%s]\nbackend = %s\n", percept_sense_name((percept_sense)k),
                        a->sense_backend[k]);
        if (fclose(mem) != 0) {
            free(text);
            fprintf(stderr, PROGRAM ": out of memory\n");
            return EXIT_RUN;
        }
        st = percept_world_open_string(world, text, "<--backend>", &opt, &err);
        free(text);
    } else if (a->config == NULL && a->backend != NULL) {
        opt.backend = a->backend;
        st = percept_world_open_string(world, "", "<--backend>", &opt, &err);
    } else {
        opt.backend = a->backend;
        st = percept_world_open(world, a->config ? a->config : PERCEPT_DEFAULT_CONFIG, &opt, &err);
    }
    if (st < 0) {
        fprintf(stderr, PROGRAM ": %s\n", err.text[0] ? err.text : percept_strerror(st));
        return CLI_EXIT_USAGE;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Progress                                                                  */

typedef struct progress {
    int on, tty, last;
} progress;

static void progress_show(progress *p, int tick, int ticks, const char *phase)
{
    if (!p->on)
        return;
    int pct = (int)((long long)tick * 100 / ticks);
    if (p->tty) {
        enum { WIDTH = 40 };
        int fill = (int)((long long)tick * WIDTH / ticks);
        if (pct == p->last && tick != ticks)
            return;
        char bar[WIDTH + 1];
        memset(bar, '#', (size_t)fill);
        memset(bar + fill, '.', (size_t)(WIDTH - fill));
        bar[WIDTH] = '\0';
        fprintf(stderr, "\r" PROGRAM ": [%s] %3d%%  tick %d/%d  %s\033[K", bar, pct, tick, ticks,
                phase);
        if (tick == ticks)
            fputs("\r\033[K", stderr);
    } else {
        /* Not a terminal (a log, CI): a plain line every 10%. */
        if (pct / 10 == p->last / 10 && tick != 1)
            return;
        fprintf(stderr, PROGRAM ": tick %d/%d (%d%%): %s\n", tick, ticks, pct, phase);
    }
    fflush(stderr);
    p->last = pct;
}

/* ------------------------------------------------------------------------ */
/* Summary                                                                   */

typedef struct notice {
    unsigned long long count;
    int observer, target, sense;
} notice;

static int by_count(const void *pa, const void *pb)
{
    const notice *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count < b->count ? 1 : -1;
    /* Ties in a fixed order, so the summary never depends on qsort. */
    if (a->observer != b->observer)
        return a->observer - b->observer;
    if (a->target != b->target)
        return a->target - b->target;
    return a->sense - b->sense;
}

/* The library calls the scene counts, as the summary names them. */
static const char *const op_name[OP_COUNT] = {"add", "move", "remove", "set_range", "set_hidden"};

/* What the world holds at the end, by part (the same run holds the same bytes). */
static void write_memory(FILE *o, const percept_world *w)
{
    percept_memory m;
    size_t n = percept_entity_count(w);
    if (percept_memory_usage(w, &m) != 0 || n == 0)
        return;
    double per = 1.0 / (double)n;
    fprintf(o,
            "  memory     %.2f MiB held at the end, %.0f bytes per creature: pair lists %.0f, "
            "entities %.0f, observer grids %.0f, backends %.0f, working room %.0f\n",
            (double)m.total / (1024.0 * 1024.0), (double)m.total * per, (double)m.pairs * per,
            (double)m.entities * per, (double)m.observer_grids * per, (double)m.backends * per,
            (double)(m.scratch + m.world) * per);
}

/* The deterministic part: everything but timings and file locations. */
static void write_summary(FILE *o, const sim_scene *s, const tally *t)
{
    static const char *const verb[PERCEPT_SENSE_COUNT] = {"saw", "heard", "smelled"};

    fprintf(o, PROGRAM ": %zu creatures, %d ticks, seed %llu\n", s->count, s->ticks,
            (unsigned long long)s->seed);
    fputs("  creatures ", o);
    for (int k = 0; k < KIND_COUNT; k++)
        fprintf(o, "%s %zu %s", k ? "," : "", s->kind_count[k], sim_profiles[k].plural);
    fputs("\n  backends  ", o);
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const char *b = percept_backend_name(s->world, (percept_sense)k);
        fprintf(o, " %s=%s", percept_sense_name((percept_sense)k), b ? b : "-");
    }
    fputs("\n  calls     ", o);
    for (int op = 0; op < OP_COUNT; op++)
        fprintf(o, "%s %llu %s", op ? "," : "", s->op_calls[op], op_name[op]);
    fprintf(o, "\n  events     %12s %12s %12s\n", "enter", "leave", "move");
    unsigned long long total[3] = {0, 0, 0};
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        fprintf(o, "    %-8s %12llu %12llu %12llu\n", percept_sense_name((percept_sense)k),
                t->events[0][k], t->events[1][k], t->events[2][k]);
        for (int e = 0; e < 3; e++)
            total[e] += t->events[e][k];
    }
    fprintf(o, "    %-8s %12llu %12llu %12llu\n", "all", total[0], total[1], total[2]);
    fputs("  at the end", o);
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        unsigned long long pairs = 0;
        for (size_t i = 0; i < s->count; i++) {
            size_t c = 0;
            if (s->entities[i].present &&
                percept_perceived(s->world, sim_id(i), (percept_sense)k, NULL, 0, &c) == 0)
                pairs += c;
        }
        fprintf(o, "%s %llu %s", k ? "," : "", pairs, percept_sense_name((percept_sense)k));
    }
    fputs(" pairs perceived\n", o);
    write_memory(o, s->world);

    notice top[KIND_COUNT * KIND_COUNT * PERCEPT_SENSE_COUNT];
    size_t n = 0;
    for (int a = 0; a < KIND_COUNT; a++)
        for (int b = 0; b < KIND_COUNT; b++)
            for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
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
            fprintf(o, "%s %s %.2f us", op ? "," : "", op_name[op],
                    s->op_seconds[op] * 1e6 / (double)s->op_calls[op]);
    }
    fprintf(o, "\n  time total     %.2f s in percept calls, %.2f s for the whole run\n", in_calls,
            run_seconds);
}

/* An absolute file:// URL for a path, so that a terminal can open it with a click. */
static void write_location(FILE *o, const char *what, const char *path)
{
    char cwd[PATH_MAX];
    if (path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL)
        fprintf(o, "  %-10s %s  (file://%s/%s)\n", what, path, cwd, path);
    else
        fprintf(o, "  %-10s %s  (file://%s)\n", what, path, path);
}

/* ------------------------------------------------------------------------ */

typedef struct run {
    struct args a;
    percept_world *world;
    sim_scene scene;
    tally tally;
    sim_html html;
    int html_open;
    char err[512];
} run;

/* Plays the whole run; 0, or an exit status after printing why. */
static int play(run *r)
{
    const struct args *a = &r->a;
    sim_scene *s = &r->scene;
    progress pr = {!a->quiet, isatty(STDERR_FILENO), -1};
    long every = (a->ticks + a->frames - 1) / a->frames;
    double start = cli_now_seconds();

    if (sim_scene_init(s, r->world, (size_t)a->entities, (int)a->ticks, a->seed, a->timing,
                       r->tally.events_out != NULL ? after_call : NULL, &r->tally) < 0) {
        fprintf(stderr, PROGRAM ": %s\n", s->error);
        return EXIT_RUN;
    }
    if (sim_html_open(&r->html, a->html, s, r->err, sizeof r->err) < 0) {
        fprintf(stderr, PROGRAM ": %s\n", r->err);
        return EXIT_RUN;
    }
    r->html_open = 1;
    for (long t = 1; t <= a->ticks; t++) {
        if (sim_scene_step(s) < 0) {
            if (pr.on && pr.tty)
                fputc('\n', stderr);
            fprintf(stderr, PROGRAM ": tick %ld: %s\n", t, s->error);
            return EXIT_RUN;
        }
        if ((t == 1 || t % every == 0 || t == a->ticks) &&
            sim_html_frame(&r->html, s, r->err, sizeof r->err) < 0) {
            fprintf(stderr, PROGRAM ": %s\n", r->err);
            return EXIT_RUN;
        }
        if (t == a->snapshot && sim_svg_write(a->svg, s, r->err, sizeof r->err) < 0) {
            fprintf(stderr, PROGRAM ": %s\n", r->err);
            return EXIT_RUN;
        }
        progress_show(&pr, (int)t, (int)a->ticks, sim_phase_text(s->phase));
    }
    double seconds = cli_now_seconds() - start;

    /* The summary: printed, and (without timings and locations) shown in the page. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_RUN;
    }
    write_summary(mem, s, &r->tally);
    if (fclose(mem) != 0) {
        free(text);
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_RUN;
    }
    r->html_open = 0;
    int st = sim_html_close(&r->html, r->tally.changes, (int)a->ticks, text, r->err, sizeof r->err);
    fputs(text, stdout);
    free(text);
    if (st < 0) {
        fprintf(stderr, PROGRAM ": %s\n", r->err);
        return EXIT_RUN;
    }
    if (a->timing)
        write_timing(stdout, s, seconds);
    write_location(stdout, "picture", a->svg);
    write_location(stdout, "animation", a->html);
    printf("  (the picture shows tick %ld; the animation has %zu frames)\n", a->snapshot,
           r->html.frames);
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    static run r;
    int status = parse_args(argc, argv, &r.a);
    if (status >= 0)
        return status;

    r.tally.scene = &r.scene;
    r.tally.changes = calloc((size_t)r.a.ticks * PERCEPT_SENSE_COUNT, sizeof *r.tally.changes);
    if (r.tally.changes == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_RUN;
    }
    if (r.a.events != NULL) {
        r.tally.events_out = fopen(r.a.events, "w");
        if (r.tally.events_out == NULL) {
            fprintf(stderr, PROGRAM ": cannot write '%s': %s\n", r.a.events, strerror(errno));
            free(r.tally.changes);
            return EXIT_RUN;
        }
    }
    if ((status = open_world(&r.a, &r.world)) == 0) {
        percept_set_event_callback(r.world, on_event, &r.tally);
        status = play(&r);
    }
    if (r.html_open)
        sim_html_abort(&r.html);
    sim_scene_free(&r.scene);
    percept_world_close(r.world);
    if (r.tally.events_out != NULL && (ferror(r.tally.events_out) | fclose(r.tally.events_out)) &&
        status == EXIT_SUCCESS) {
        fprintf(stderr, PROGRAM ": cannot write '%s': %s\n", r.a.events, strerror(errno));
        status = EXIT_RUN;
    }
    if (r.tally.pending_lost && status == EXIT_SUCCESS) {
        fprintf(stderr, PROGRAM ": cannot write '%s': out of memory\n", r.a.events);
        status = EXIT_RUN;
    }
    free(r.tally.pending);
    free(r.tally.changes);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output\n");
        return EXIT_RUN;
    }
    return status;
}
