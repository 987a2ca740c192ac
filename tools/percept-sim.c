/*
 * percept-sim - a living town to watch percept at work: a few thousand
 * villagers, guards, wolves, owls, thieves and players with the senses a
 * game would give them wander, crowd into the market and flee, while the
 * library reports who starts and stops perceiving whom. Prints a summary
 * and writes an SVG snapshot and an animated HTML page of the run.
 *
 * Only the public API (percept.h) is used: the tool is also an example.
 */
#define _XOPEN_SOURCE 700 /* POSIX.1-2008 with realpath(), an XSI function */

#include <percept.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/html.h"
#include "sim/scene.h"
#include "sim/svg.h"

#include "cli.h"
#include "unused_params.h"

#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-sim"

/* The exit status when a library call or writing a file fails; bad usage is CLI_EXIT_USAGE. */
enum { EXIT_RUN = 1 };

#define DEFAULT_ENTITIES 2000
#define DEFAULT_TICKS 200
#define DEFAULT_FRAMES 100
#define MAX_ENTITIES 100000
#define MAX_TICKS 100000

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

/* The INI text's label when the --backend options configure the world;
 * messages name the options instead (see report_open_error). */
#define BACKEND_SOURCE "<--backend>"

struct args {
    const char *config;
    const char *backend;                            /* --backend NAME */
    const char *sense_backend[PERCEPT_SENSE_COUNT]; /* --backend SENSE=NAME: the NAMEs */
    const char *svg, *html, *events, *trace;
    long entities, ticks, frames, snapshot;
    unsigned long long seed;
    int timing, quiet;
    unsigned seen; /* the options with a value given so far (cli_once) */
};

static void print_usage(FILE *out)
{
    fprintf(out,
            "Usage: " PROGRAM " [OPTION]...\n"
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
            "  --backend NAME        use backend NAME for every sense not named by\n"
            "                        --backend SENSE=NAME; with --config it replaces the\n"
            "                        config's backends, without it no config file is\n"
            "                        read and every setting keeps its default\n"
            "  --backend SENSE=NAME  use backend NAME for SENSE (sight, hearing, smell);\n"
            "                        repeatable. Every sense must get a backend this way\n"
            "                        or from --backend NAME: there is no hidden default.\n"
            "                        No config file is read (so not with --config): each\n"
            "                        backend runs with its default parameters\n"
            "  --entities N          creatures in the town, 1..%d (default %d)\n"
            "  --ticks N             length of the run, 1..%d (default %d)\n"
            "  --seed N              random seed, 0..18446744073709551615 (default 1)\n"
            "  --svg FILE            the snapshot picture (default " PROGRAM ".svg)\n"
            "  --snapshot TICK       the tick the snapshot shows, 1..the last tick\n"
            "                        (default: the end of market day, when the crowd\n"
            "                        fills the square)\n"
            "  --html FILE           the animated page (default " PROGRAM ".html)\n"
            "  --frames N            a frame every TICKS/N ticks, plus the first and the\n"
            "                        last tick: about N + 1 frames in the page, N 1..%d\n"
            "                        (default %d)\n"
            "  --events FILE         write every enter/leave event to FILE as\n"
            "                          TICK OBSERVER TARGET SENSE enter|leave\n"
            "                        (tick 0 is the set-up), to compare backends with cmp\n"
            "  --trace FILE          write every call of the run to FILE as a trace\n"
            "                        (docs/trace-format.md) that percept-replay and\n"
            "                        percept-bench --trace play again: a test of a backend\n"
            "                        with crowds, flight and stealth\n"
            "  --no-timing           leave out the timing lines (for comparing summaries)\n"
            "  --quiet               no start line and no progress display\n"
            "  --help                print this help and exit\n"
            "  --version             print the version of the percept library and exit\n"
            "\n"
            "The line printed at the start (on standard error, unless --quiet) names\n"
            "each sense's backend and the option or config file it came from.\n"
            "FILE - for --events or --trace (not both) is standard output; the\n"
            "summary then goes to standard error.\n"
            "\n"
            "The town keeps its size whatever --entities says: more creatures crowd\n"
            "it, so time and memory grow about with the square of their number.\n"
            "With the default config, a tick took about 0.09 s at 10000 creatures,\n"
            "2 s at 50000 and 14 s at 100000 while they wander (33 MB, 670 MB and\n"
            "2.6 GB held at most); a whole run of 200 ticks, market day's crowd\n"
            "included, took 22 s and 82 MB at 10000 and 11 min and 1.8 GB at 50000;\n"
            "at 100000 it had not finished after 39 min, holding 6.9 GB.\n"
            "\n"
            "Every output file is opened before the run starts: one that cannot be\n"
            "written is an error and no file is left behind. A regular file is\n"
            "written to a temporary file beside it (.NAME.XXXXXX), renamed over it\n"
            "only when the whole run has succeeded: a run that fails (a full disk,\n"
            "say) or is ended by SIGINT, SIGTERM or SIGHUP changes no file and\n"
            "removes its temporary files; a failed run says which files were not\n"
            "written. Other files (/dev/null, a pipe, -) are written directly.\n"
            "A summary that cannot be written to standard output fails the run too\n"
            "(exit status 1) but keeps the files, complete by then.\n"
            "\n"
            "Exit status: 0 on success; 1 if a library call or writing an output file\n"
            "failed during the run; 2 on bad usage, an output file that cannot be\n"
            "opened, or a configuration that fails to load.\n",
            MAX_ENTITIES, DEFAULT_ENTITIES, MAX_TICKS, DEFAULT_TICKS, MAX_TICKS, DEFAULT_FRAMES);
}

/* A whole number from min to max: decimal digits only (no sign, no blanks). */
static int parse_count(const char *s, long min, long max, long *out)
{
    if (s[0] == '\0' || strspn(s, "0123456789") != strlen(s))
        return -1;
    errno = 0;
    long v = strtol(s, NULL, 10);
    if (errno != 0 || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* The value of a numeric option (r from cli_option_value); -1, or the exit status. */
static int count_option(const char *opt, int r, const char *v, long min, long max, long *out)
{
    if (r < 0)
        return cli_usage_error(PROGRAM, "option '%s' needs a number from %ld to %ld", opt, min,
                               max);
    if (parse_count(v, min, max, out) < 0)
        return cli_usage_error(PROGRAM, "%s %s: expected a whole number from %ld to %ld", opt, v,
                               min, max);
    return -1;
}

/* Whether any --backend SENSE=NAME was given: then the options configure the world. */
static int per_sense(const struct args *a)
{
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
        if (a->sense_backend[k] != NULL)
            return 1;
    return 0;
}

#define BAD_NAME "--backend %s: bad backend name '%s': letters, digits, '_' and '-' only"

static int parse_backend(struct args *a, const char *v)
{
    const char *eq = strchr(v, '=');
    if (eq == NULL) {
        if (!cli_backend_name_ok(v))
            return cli_usage_error(PROGRAM, BAD_NAME, v, v);
        if (a->backend != NULL)
            return cli_usage_error(
                PROGRAM, "--backend given twice for every sense ('%s', then '%s')", a->backend, v);
        a->backend = v;
        return -1;
    }
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const char *name = percept_sense_name((percept_sense)k);
        if (strlen(name) == (size_t)(eq - v) && strncmp(v, name, (size_t)(eq - v)) == 0) {
            if (!cli_backend_name_ok(eq + 1))
                return cli_usage_error(PROGRAM, BAD_NAME, v, eq + 1);
            if (a->sense_backend[k] != NULL)
                return cli_usage_error(PROGRAM, "--backend %s=... given twice ('%s', then '%s')",
                                       name, a->sense_backend[k], eq + 1);
            a->sense_backend[k] = eq + 1;
            return -1;
        }
    }
    return cli_usage_error(PROGRAM, "--backend %s: '%.*s' is not a sense (sight, hearing, smell)",
                           v, (int)(eq - v), v);
}

/*
 * With --backend SENSE=NAME every sense needs a backend from the options:
 * silently filling the rest with some default is what surprised users.
 * (Keeping the config's backends for them is not possible without the
 * config's parameters, which belong to the config's backends.)
 */
static int check_backends(const struct args *a)
{
    char missing[64] = "";

    if (!per_sense(a) || a->backend != NULL)
        return -1;
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        if (a->sense_backend[k] != NULL)
            continue;
        if (missing[0] != '\0')
            strcat(missing, " and ");
        strcat(missing, percept_sense_name((percept_sense)k));
    }
    if (missing[0] == '\0')
        return -1;
    return cli_usage_error(PROGRAM,
                           "--backend SENSE=NAME: no backend for %s: name each sense with "
                           "--backend SENSE=NAME, or add --backend NAME for the senses not named",
                           missing);
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
        int r, once;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage(stdout);
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (cli_version(PROGRAM, arg)) {
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--no-timing") == 0) {
            a->timing = 0;
        } else if (strcmp(arg, "--quiet") == 0) {
            a->quiet = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--config", &a->config)) != 0) {
            if (r < 0 || a->config[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 0, "--config")) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--svg", &a->svg)) != 0) {
            if (r < 0 || a->svg[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 1, "--svg")) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--html", &a->html)) != 0) {
            if (r < 0 || a->html[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 2, "--html")) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--events", &a->events)) != 0) {
            if (r < 0 || a->events[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 3, "--events")) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--trace", &a->trace)) != 0) {
            if (r < 0 || a->trace[0] == '\0')
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 9, "--trace")) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--backend", &v)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a NAME or SENSE=NAME", arg);
            if ((r = parse_backend(a, v)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--entities", &v)) != 0) {
            if ((once = cli_once(PROGRAM, &a->seen, 4, "--entities")) >= 0)
                return once;
            if ((r = count_option("--entities", r, v, 1, MAX_ENTITIES, &a->entities)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--ticks", &v)) != 0) {
            if ((once = cli_once(PROGRAM, &a->seen, 5, "--ticks")) >= 0)
                return once;
            if ((r = count_option("--ticks", r, v, 1, MAX_TICKS, &a->ticks)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--frames", &v)) != 0) {
            if ((once = cli_once(PROGRAM, &a->seen, 6, "--frames")) >= 0)
                return once;
            if ((r = count_option("--frames", r, v, 1, MAX_TICKS, &a->frames)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--snapshot", &v)) != 0) {
            if ((once = cli_once(PROGRAM, &a->seen, 7, "--snapshot")) >= 0)
                return once;
            /* Checked against --ticks below, which may come later. */
            if ((r = count_option("--snapshot", r, v, 1, MAX_TICKS, &a->snapshot)) >= 0)
                return r;
        } else if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a number", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 8, "--seed")) >= 0)
                return r;
            errno = 0;
            if (v[0] == '\0' || strspn(v, "0123456789") != strlen(v) ||
                (a->seed = strtoull(v, NULL, 10), errno != 0))
                return cli_usage_error(PROGRAM,
                                       "--seed %s: expected a whole number from 0 to "
                                       "18446744073709551615",
                                       v);
        } else if (arg[0] == '-') {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        } else {
            return cli_usage_error(PROGRAM, "unexpected argument '%s': every setting is an option",
                                   arg);
        }
    }
    /* Two streams in one would be neither a trace nor an events file. */
    if (a->events != NULL && a->trace != NULL && strcmp(a->events, "-") == 0 &&
        strcmp(a->trace, "-") == 0)
        return cli_usage_error(PROGRAM,
                               "--events - and --trace -: only one of them can go to standard "
                               "output");
    if (a->snapshot > a->ticks)
        return cli_usage_error(PROGRAM, "--snapshot %ld: expected a tick from 1 to %ld (--ticks)",
                               a->snapshot, a->ticks);
    if (a->snapshot == 0)
        a->snapshot = sim_phase_end((int)a->ticks, PHASE_MARKET);
    if (a->snapshot == 0)
        a->snapshot = a->ticks;
    if (per_sense(a) && a->config != NULL)
        return cli_usage_error(PROGRAM,
                               "--backend SENSE=NAME configures the world itself; it cannot be "
                               "combined with --config");
    return check_backends(a);
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
    FILE *trace_out;        /* --trace, or NULL */
    int trace_tick;         /* the tick the trace's last "# tick" line named */
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

/* Writes `call` as a line of the trace format (docs/trace-format.md). %.17g
 * gives every double back exactly, so a replay makes the same calls. */
static void write_trace_line(FILE *f, const sim_call *c)
{
    unsigned id = (unsigned)c->id;
    switch (c->op) {
    case OP_ADD:
        fprintf(f, "add %u %.17g %.17g", id, c->desc.x, c->desc.y);
        for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
            if (c->desc.range[k] != 0)
                fprintf(f, " %s=%.17g", percept_sense_name((percept_sense)k), c->desc.range[k]);
        for (int k = 0, first = 1; k < PERCEPT_SENSE_COUNT; k++) {
            if (c->desc.hidden & PERCEPT_SENSE_BIT(k)) {
                fprintf(f, "%s%s", first ? " hide=" : ",", percept_sense_name((percept_sense)k));
                first = 0;
            }
        }
        fputc('\n', f);
        break;
    case OP_MOVE:
        fprintf(f, "move %u %.17g %.17g\n", id, c->desc.x, c->desc.y);
        break;
    case OP_REMOVE:
        fprintf(f, "remove %u\n", id);
        break;
    case OP_RANGE:
        fprintf(f, "range %u %s %.17g\n", id, percept_sense_name(c->sense), c->range);
        break;
    case OP_HIDE:
        fprintf(f, "%s %u %s\n", c->hidden ? "hide" : "show", id, percept_sense_name(c->sense));
        break;
    case OP_COUNT:
        break;
    }
}

/* Runs after each library call of the scene, outside its timing: writes the
 * call's events and the call itself. */
static void after_call(void *user, const sim_call *call)
{
    tally *t = user;
    for (size_t i = 0; t->events_out != NULL && i < t->pending_count; i++) {
        const pending_event *e = &t->pending[i];
        fprintf(t->events_out, "%d %u %u %s %s\n", e->tick, (unsigned)e->observer,
                (unsigned)e->target, percept_sense_name((percept_sense)e->sense),
                e->enter ? "enter" : "leave");
    }
    t->pending_count = 0;
    if (t->trace_out != NULL) {
        if (t->scene->tick != t->trace_tick) {
            t->trace_tick = t->scene->tick;
            fprintf(t->trace_out, "# tick %d\n", t->trace_tick);
        }
        write_trace_line(t->trace_out, call);
    }
}

/* The trace's opening lines: what made it, and the world's bounds. */
static void start_trace(FILE *f, const struct args *a, percept_world *world)
{
    percept_bounds b;
    fprintf(f,
            "# percept-sim --entities %ld --ticks %ld --seed %llu: every call of the run, "
            "in order\n",
            a->entities, a->ticks, a->seed);
    fprintf(f, "# (docs/trace-format.md); tick 0 is the set-up\n");
    if (percept_get_bounds(world, &b) == PERCEPT_OK)
        fprintf(f, "world %.17g %.17g %.17g %.17g\n", b.min_x, b.min_y, b.max_x, b.max_y);
    fprintf(f, "# tick 0\n");
}

/* ------------------------------------------------------------------------ */
/* Opening the world                                                         */

/*
 * Prints why the world did not open. An error about a backend the command
 * line named is reported as that option, as the user typed it: the library
 * would name the INI text the tool generated, or "the options".
 */
static void report_open_error(const struct args *a, const percept_error *err, int st)
{
    const char *reason = NULL;
    int k = 0;

    if (err->text[0] == '\0') {
        fprintf(stderr, PROGRAM ": %s\n", percept_strerror(st));
        return;
    }
    if (per_sense(a) || a->backend != NULL)
        reason = cli_backend_reason(err, a->config == NULL, &k);
    if (reason != NULL && a->sense_backend[k] != NULL)
        fprintf(stderr, PROGRAM ": --backend %s=%s: %s\n", percept_sense_name((percept_sense)k),
                a->sense_backend[k], reason);
    else if (reason != NULL && a->backend != NULL)
        fprintf(stderr, PROGRAM ": --backend %s: %s\n", a->backend, reason);
    else
        fprintf(stderr, PROGRAM ": %s%s\n", err->text,
                a->config == NULL && a->backend == NULL && st == PERCEPT_EIO
                    ? " (the default config: give --config FILE or --backend NAME)"
                    : "");
}

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
        /* The options name every backend (check_backends), and only INI text
         * can give each sense its own; the names are checked already. */
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        if (mem == NULL) {
            fprintf(stderr, PROGRAM ": out of memory\n");
            return EXIT_RUN;
        }
        if (a->backend != NULL)
            fprintf(mem, "[percept]\nbackend = %s\n", a->backend);
        for (int k = 0; k < PERCEPT_SENSE_COUNT; k++)
            if (a->sense_backend[k] != NULL)
                fprintf(mem, "[%s]\nbackend = %s\n", percept_sense_name((percept_sense)k),
                        a->sense_backend[k]);
        if (fclose(mem) != 0) {
            free(text);
            fprintf(stderr, PROGRAM ": out of memory\n");
            return EXIT_RUN;
        }
        st = percept_world_open_string(world, text, BACKEND_SOURCE, &opt, &err);
        free(text);
    } else if (a->config == NULL && a->backend != NULL) {
        opt.backend = a->backend;
        st = percept_world_open_string(world, "", BACKEND_SOURCE, &opt, &err);
    } else {
        opt.backend = a->backend;
        st = percept_world_open(world, a->config ? a->config : PERCEPT_DEFAULT_CONFIG, &opt, &err);
    }
    if (st < 0) {
        report_open_error(a, &err, st);
        return CLI_EXIT_USAGE;
    }
    if (a->config != NULL && a->backend != NULL && !per_sense(a))
        note_unused_params(stderr, PROGRAM, a->config, a->backend);
    return 0;
}

/* The line at the start: the run, and each sense's backend with where it came from. */
static void print_start(const struct args *a, percept_world *w)
{
    const char *config = a->config ? a->config : PERCEPT_DEFAULT_CONFIG;

    fprintf(stderr, PROGRAM ": %ld creatures, %ld ticks, seed %llu; backends", a->entities,
            a->ticks, a->seed);
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const char *sense = percept_sense_name((percept_sense)k);
        const char *b = percept_backend_name(w, (percept_sense)k);
        fprintf(stderr, "%s %s=%s", k ? "," : "", sense, b ? b : "-");
        if (a->sense_backend[k] != NULL)
            fprintf(stderr, " (--backend %s=%s)", sense, a->sense_backend[k]);
        else if (a->backend != NULL)
            fprintf(stderr, " (--backend %s)", a->backend);
    }
    if (per_sense(a) || (a->backend != NULL && a->config == NULL))
        fputs("; no config file: default parameters\n", stderr);
    else if (a->backend != NULL)
        fprintf(stderr, "; other settings from %s\n", config);
    else
        fprintf(stderr, " (from %s)\n", config);
}

/* ------------------------------------------------------------------------ */
/* Output files                                                              */

/*
 * An output file of the run. All are opened before the run starts, so that a
 * path that cannot be written fails at once rather than late in a long run.
 *
 * A regular file, or one that does not exist yet, is written to a temporary
 * file beside it, renamed over it only once the whole run has succeeded: a
 * run that fails or is killed leaves no half-written file, and a file that
 * was there keeps its old contents. Anything else (/dev/null, a pipe, a
 * terminal, "-" for standard output) is written directly: there is nothing
 * to rename over, and a reader may be waiting for the data as it comes.
 */
typedef struct output {
    const char *option; /* "--svg" */
    const char *path;   /* as given */
    const char *target; /* the file the temporary one replaces: path, or where a symlink leads */
    char *resolved;     /* target when it was resolved from a symlink (malloc'd), else NULL */
    const char *error;  /* what failed when opening it, for the message */
    FILE *f;            /* NULL before it is opened and after it is closed */
    int slot;           /* its temporary file in temps[], or -1 when written directly */
    int std;            /* "-": standard output, which is never closed here */
    int created;        /* written directly, and the file did not exist before */
    int known;          /* dev and ino name the file (it exists, or is open directly) */
    int regular;        /* the file is a regular one */
    dev_t dev, dir_dev; /* dir_dev, dir_ino and name: where the temporary file goes */
    ino_t ino, dir_ino;
    const char *name;
} output;

enum { OUT_SVG, OUT_HTML, OUT_EVENTS, OUT_TRACE, OUT_COUNT };

/*
 * The temporary files, for the signal handler, which may only unlink() them:
 * a path is complete before `live` is set, and `live` is cleared once the
 * file is renamed or removed.
 */
static struct {
    char path[PATH_MAX];
    volatile sig_atomic_t live;
} temps[OUT_COUNT];

/* The signals that end the run (by default) and are caught to remove the temporary files
 * first; SIGPIPE for a reader of "-" that goes away, SIGXFSZ for a file size limit. */
static const int fatal_signals[] = {SIGHUP, SIGINT, SIGTERM, SIGPIPE, SIGXFSZ};
#define FATAL_SIGNAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < OUT_COUNT; i++)
        if (temps[i].live)
            unlink(temps[i].path);
    /* The default action, once the handler returns (sig is blocked until then), so that the
     * exit status still says which signal ended the run. */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Catches the fatal signals, but not one ignored on entry (nohup, a background job): it
 * must stay ignored. */
static void catch_fatal_signals(void)
{
    struct sigaction sa, old;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++)
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
            sigaction(fatal_signals[i], &sa, NULL);
}

/* Holds the fatal signals back (until restore_signals), while temporary files are created
 * and renamed: no file is then left unknown to the handler, nor half the outputs renamed. */
static void block_fatal_signals(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    for (size_t i = 0; i < FATAL_SIGNAL_COUNT; i++)
        sigaddset(&set, fatal_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

/* Removes temporary file `slot`, if it is still there. */
static void drop_temp(int slot)
{
    if (slot >= 0 && temps[slot].live) {
        unlink(temps[slot].path);
        temps[slot].live = 0;
    }
}

/* Flushes o: 0, or -1 with the reason in errno (EIO for an earlier error that left none). */
static int output_flush(output *o)
{
    if (fflush(o->f) != 0)
        return -1;
    if (ferror(o->f)) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* Closes o (standard output is only flushed): 0, or -1 with the reason in errno. */
static int output_close(output *o)
{
    int st = output_flush(o), e = errno;

    /* On the disk before the rename makes it the file: a crash then leaves the old
     * file or the new one, never an empty one. */
    if (st == 0 && o->slot >= 0 && fsync(fileno(o->f)) != 0) {
        st = -1;
        e = errno;
    }
    if (!o->std && fclose(o->f) != 0 && st == 0) {
        st = -1;
        e = errno;
    }
    o->f = NULL;
    errno = e;
    return st;
}

/* Reports that writing o failed, with errno's reason; returns EXIT_RUN. */
static int output_error(const output *o)
{
    fprintf(stderr, PROGRAM ": %s %s: cannot write: %s\n", o->option, o->path, strerror(errno));
    return EXIT_RUN;
}

/* Notes the file open as fd (dev, ino, regular); 0 or -1 with errno. */
static int output_identify(output *o, int fd)
{
    struct stat sb;

    if (fstat(fd, &sb) != 0)
        return -1;
    o->known = 1;
    o->regular = S_ISREG(sb.st_mode);
    o->dev = sb.st_dev;
    o->ino = sb.st_ino;
    return 0;
}

/* Whether sb is the file of standard output or standard error (say /dev/stdout, the shell
 * having sent it to a file): written directly, since a file renamed over it would leave the
 * stream writing to the old one. */
static int is_std_stream(const struct stat *sb)
{
    struct stat s;

    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        if (fstat(fd, &s) == 0 && s.st_dev == sb->st_dev && s.st_ino == sb->st_ino)
            return 1;
    return 0;
}

/* Opens o to be written in place, without truncating it yet; 0 or -1 with errno. */
static int output_open_direct(output *o)
{
    int fd = open(o->path, O_WRONLY | O_CREAT | O_EXCL, 0666);

    o->created = fd >= 0;
    if (fd < 0 && errno == EEXIST)
        fd = open(o->path, O_WRONLY | O_CREAT, 0666); /* O_CREAT: a dangling symlink's target */
    if (fd < 0)
        return -1;
    if (output_identify(o, fd) != 0 || (o->f = fdopen(fd, "w")) == NULL) {
        int e = errno;
        close(fd);
        if (o->created)
            unlink(o->path);
        errno = e;
        return -1;
    }
    return 0;
}

/*
 * Opens a temporary file for o in the directory of its target, as temps[slot]:
 * ".NAME.XXXXXX", with the mode of the target if it exists (sb), else that of
 * a file open() would create. 0 or -1 with errno.
 */
static int output_open_temp(output *o, int slot, const struct stat *sb, mode_t mask)
{
    /* Room in the temporary's name for ".", ".XXXXXX" and the target's name cut to this
     * many bytes, within any file system's limit of 255. */
    enum { NAME_KEPT = 200 };
    struct stat lsb, dsb;
    char dir[PATH_MAX];
    sigset_t old;
    int fd;

    /* A symlink stays one: the file it leads to is replaced. */
    if (sb != NULL && lstat(o->path, &lsb) == 0 && S_ISLNK(lsb.st_mode)) {
        if ((o->resolved = realpath(o->path, NULL)) == NULL)
            return -1;
        o->target = o->resolved;
    } else {
        o->target = o->path;
    }
    /* A file that could not be written in place is not replaced either. */
    if (sb != NULL && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS) != 0)
        return -1;
    const char *slash = strrchr(o->target, '/');
    o->name = slash != NULL ? slash + 1 : o->target;
    int dir_len = slash != NULL ? (int)(slash + 1 - o->target) : 0;
    size_t name_len = strlen(o->name);
    if (name_len == 0) {
        errno = EISDIR;
        return -1;
    }
    if (snprintf(temps[slot].path, sizeof temps[slot].path, "%.*s.%.*s.XXXXXX", dir_len, o->target,
                 (int)(name_len < NAME_KEPT ? name_len : NAME_KEPT),
                 o->name) >= (int)sizeof temps[slot].path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* Shorter than the temporary's path, so it fits. */
    snprintf(dir, sizeof dir, "%.*s", dir_len > 0 ? dir_len : 1, dir_len > 0 ? o->target : ".");
    if (stat(dir, &dsb) != 0)
        return -1;
    o->dir_dev = dsb.st_dev;
    o->dir_ino = dsb.st_ino;
    if (sb != NULL) {
        o->known = 1;
        o->dev = sb->st_dev;
        o->ino = sb->st_ino;
        /* The file is writable, so only its directory can be at fault below. */
        o->error = "cannot create a temporary file beside it to replace it";
    }
    o->regular = 1;

    block_fatal_signals(&old);
    fd = mkstemp(temps[slot].path);
    if (fd >= 0) {
        temps[slot].live = 1;
        o->slot = slot;
    }
    restore_signals(&old);
    if (fd < 0)
        return -1;
    if (fchmod(fd, sb != NULL ? sb->st_mode & 07777 : 0666 & ~mask) != 0 ||
        (o->f = fdopen(fd, "w")) == NULL) {
        int e = errno;
        close(fd);
        drop_temp(slot);
        o->slot = -1;
        errno = e;
        return -1;
    }
    return 0;
}

/* Opens o, as output number `slot`, `mask` being the umask; 0 or -1 with errno (and the
 * message's words in o->error). */
static int output_open(output *o, int slot, mode_t mask)
{
    struct stat sb, lsb;

    o->error = "cannot open for writing";
    if (o->std) {
        if (output_identify(o, STDOUT_FILENO) != 0)
            return -1;
        o->f = stdout;
        return 0;
    }
    if (stat(o->path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode) || is_std_stream(&sb))
            return output_open_direct(o);
        return output_open_temp(o, slot, &sb, mask);
    }
    if (errno != ENOENT)
        return -1;
    /* A dangling symlink: its target is created, as it always was. */
    if (lstat(o->path, &lsb) == 0 && S_ISLNK(lsb.st_mode))
        return output_open_direct(o);
    return output_open_temp(o, slot, NULL, mask);
}

/* Whether outputs a and b would write one file. Only regular files count: /dev/null may well
 * take the picture and the page. */
static int same_output(const output *a, const output *b)
{
    if (a->known && b->known && a->regular && b->regular && a->dev == b->dev && a->ino == b->ino)
        return 1;
    return a->slot >= 0 && b->slot >= 0 && a->dir_dev == b->dir_dev && a->dir_ino == b->dir_ino &&
           strcmp(a->name, b->name) == 0;
}

/* Closes o, if open, and removes its temporary file. */
static void output_abandon(output *o)
{
    if (o->f != NULL && !o->std)
        fclose(o->f);
    o->f = NULL;
    drop_temp(o->slot);
}

/*
 * Opens every output (those with a path). On failure nothing is left
 * behind: the files created are removed and none that existed is truncated.
 * Returns 0, or an exit status after printing why.
 */
static int open_outputs(output *out, mode_t mask)
{
    int i, j, st = 0;

    catch_fatal_signals();
    for (i = 0; i < OUT_COUNT && st == 0; i++) {
        if (out[i].path == NULL)
            continue;
        if (output_open(&out[i], i, mask) < 0) {
            fprintf(stderr, PROGRAM ": %s %s: %s: %s\n", out[i].option, out[i].path, out[i].error,
                    strerror(errno));
            st = CLI_EXIT_USAGE;
            break;
        }
        for (j = 0; j < i && st == 0; j++) {
            if (out[j].f != NULL && same_output(&out[j], &out[i])) {
                fprintf(stderr, PROGRAM ": %s %s and %s %s are the same file\n", out[j].option,
                        out[j].path, out[i].option, out[i].path);
                st = CLI_EXIT_USAGE;
            }
        }
    }
    /* Only now that every file is open may one written in place lose its contents (one
     * reached through /dev/stdout, say; a temporary file is empty already). */
    for (i = 0; i < OUT_COUNT && st == 0; i++) {
        if (out[i].f != NULL && out[i].slot < 0 && !out[i].std && out[i].regular &&
            ftruncate(fileno(out[i].f), 0) != 0) {
            output_error(&out[i]);
            st = CLI_EXIT_USAGE;
        }
    }
    for (i = 0; i < OUT_COUNT && st != 0; i++) {
        int was_open = out[i].f != NULL;
        output_abandon(&out[i]);
        if (was_open && out[i].created)
            unlink(out[i].path);
    }
    return st;
}

/*
 * After the run has succeeded and closed every output: renames each temporary
 * file over its target. Returns 0, or -1 after saying which one could not be
 * renamed (errno's reason); the rest are then left for discard_outputs.
 */
static int commit_outputs(output *out)
{
    sigset_t old;
    int st = 0;

    block_fatal_signals(&old);
    for (int i = 0; i < OUT_COUNT && st == 0; i++) {
        int slot = out[i].slot;
        if (slot < 0 || !temps[slot].live)
            continue;
        if (rename(temps[slot].path, out[i].target) != 0) {
            fprintf(stderr, PROGRAM ": %s %s: cannot rename the finished file %s to %s: %s\n",
                    out[i].option, out[i].path, temps[slot].path, out[i].target, strerror(errno));
            st = -1;
        } else {
            temps[slot].live = 0;
        }
    }
    restore_signals(&old);
    return st;
}

/* After a failed run: closes the outputs and removes the temporary files, so that no file of a
 * failed run takes the place of one, and says which files were not written. */
static void discard_outputs(output *out)
{
    int n = 0;

    for (int i = 0; i < OUT_COUNT; i++) {
        int pending = out[i].slot >= 0 && temps[out[i].slot].live;
        output_abandon(&out[i]);
        if (pending)
            fprintf(stderr, "%s %s",
                    n++ ? "," : PROGRAM ": not written (a file that existed is left as it was):",
                    out[i].path);
    }
    if (n)
        fputc('\n', stderr);
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
    fprintf(o, "  memory     %.2f MiB held at the end, ", (double)m.total / (1024.0 * 1024.0));
    cli_print_memory_per(o, &m, n, "creature");
    fputc('\n', o);
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
    fputs("\n  plugins    ", o);
    cli_print_backend_paths(o, s->world);
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

/* `path` as a URL's path: every byte but letters, digits, "-._~" and '/'
 * as %XX (RFC 3986), so that a space, a '#' or a '%' in a directory's name
 * does not end or change the URL a terminal opens. */
static void write_url_path(FILE *o, const char *path)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p) != NULL)
            fputc(*p, o);
        else
            fprintf(o, "%%%02X", *p);
    }
}

/* An absolute file:// URL for a path, so that a terminal can open it with a click. */
static void write_location(FILE *o, const char *what, const char *path)
{
    char cwd[PATH_MAX];
    fprintf(o, "  %-10s %s  (file://", what, path);
    if (path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL) {
        write_url_path(o, cwd);
        fputc('/', o);
    }
    write_url_path(o, path);
    fputs(")\n", o);
}

/* ------------------------------------------------------------------------ */

typedef struct run {
    struct args a;
    percept_world *world;
    sim_scene scene;
    tally tally;
    sim_html html;
    output out[OUT_COUNT];
    FILE *report; /* the summary's stream: standard error when an output is standard output */
    progress progress;
} run;

/* Reports a failure during the run (after ending a progress bar); returns EXIT_RUN. */
static int run_error(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int run_error(run *r, const char *fmt, ...)
{
    va_list ap;

    if (r->progress.on && r->progress.tty && r->progress.last >= 0)
        fputc('\n', stderr);
    fputs(PROGRAM ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return EXIT_RUN;
}

/* Reports that writing output o failed (errno holds why); returns EXIT_RUN. */
static int write_failed(run *r, const output *o)
{
    return run_error(r, "%s %s: cannot write: %s", o->option, o->path, strerror(errno));
}

/* After each tick: the events and the calls written so far must have reached their files. */
static int check_events(run *r)
{
    output *ev = &r->out[OUT_EVENTS], *tr = &r->out[OUT_TRACE];

    if (ev->f != NULL && r->tally.pending_lost) {
        errno = ENOMEM;
        return write_failed(r, ev);
    }
    if (ev->f != NULL && output_flush(ev) < 0)
        return write_failed(r, ev);
    if (tr->f != NULL && output_flush(tr) < 0)
        return write_failed(r, tr);
    return 0;
}

/* Plays the whole run; 0, or an exit status after printing why. */
static int play(run *r)
{
    const struct args *a = &r->a;
    sim_scene *s = &r->scene;
    output *svg = &r->out[OUT_SVG], *html = &r->out[OUT_HTML];
    long every = (a->ticks + a->frames - 1) / a->frames;
    double start = cli_now_seconds();
    int st;

    r->progress = (progress){!a->quiet, isatty(STDERR_FILENO), -1};
    if (r->tally.trace_out != NULL)
        start_trace(r->tally.trace_out, a, r->world);
    int record = r->tally.events_out != NULL || r->tally.trace_out != NULL;
    if (sim_scene_init(s, r->world, (size_t)a->entities, (int)a->ticks, a->seed, a->timing,
                       record ? after_call : NULL, &r->tally) < 0)
        return run_error(r, "%s", s->error);
    if ((st = check_events(r)) != 0)
        return st;
    sim_html_start(&r->html, html->f, s);
    for (long t = 1; t <= a->ticks; t++) {
        if (sim_scene_step(s) < 0)
            return run_error(r, "tick %ld: %s", t, s->error);
        if ((st = check_events(r)) != 0)
            return st;
        if (t == 1 || t % every == 0 || t == a->ticks) {
            if (sim_html_frame(&r->html, s) < 0)
                return run_error(r, "tick %ld: reading the world for %s failed", t, html->path);
            if (output_flush(html) < 0)
                return write_failed(r, html);
        }
        if (t == a->snapshot) {
            if (sim_svg_write(svg->f, s) < 0)
                return run_error(r, "tick %ld: reading the world for %s failed", t, svg->path);
            if (output_close(svg) < 0)
                return write_failed(r, svg);
        }
        progress_show(&r->progress, (int)t, (int)a->ticks, sim_phase_text(s->phase));
    }
    double seconds = cli_now_seconds() - start;

    /* The summary: printed, and (without timings and locations) shown in the page. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return run_error(r, "out of memory");
    write_summary(mem, s, &r->tally);
    if (fclose(mem) != 0) {
        free(text);
        return run_error(r, "out of memory");
    }
    sim_html_finish(&r->html, r->tally.changes, (int)a->ticks, text);

    /* The run itself is complete: its summary is worth printing even if a file failed. Every
     * file is renamed into place before it, so that a summary that cannot be written does not
     * cost the files, complete by then. */
    st = 0;
    for (int i = 0; i < OUT_COUNT && st == 0; i++)
        if (r->out[i].f != NULL && output_close(&r->out[i]) < 0)
            st = write_failed(r, &r->out[i]);
    if (st == 0 && commit_outputs(r->out) < 0)
        st = EXIT_RUN;
    fputs(text, r->report);
    free(text);
    if (a->timing)
        write_timing(r->report, s, seconds);
    if (st != 0)
        return st;
    write_location(r->report, "picture", a->svg);
    write_location(r->report, "animation", a->html);
    fprintf(r->report, "  (the picture shows tick %ld; the animation has %zu frames)\n",
            a->snapshot, r->html.frames);
    return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
    static run r;
    /* Read while no plugin has started a thread: the mode a new output file gets. */
    mode_t mask = umask(0);
    umask(mask);

    int status = parse_args(argc, argv, &r.a);
    if (status >= 0)
        return status;

    r.out[OUT_SVG] = (output){.option = "--svg", .path = r.a.svg, .slot = -1};
    r.out[OUT_HTML] = (output){.option = "--html", .path = r.a.html, .slot = -1};
    r.out[OUT_EVENTS] = (output){.option = "--events", .path = r.a.events, .slot = -1};
    r.out[OUT_TRACE] = (output){.option = "--trace", .path = r.a.trace, .slot = -1};
    r.report = stdout;
    for (int i = OUT_EVENTS; i <= OUT_TRACE; i++) {
        if (r.out[i].path != NULL && strcmp(r.out[i].path, "-") == 0) {
            r.out[i].std = 1;
            r.report = stderr; /* standard output holds the events or the trace alone */
        }
    }
    r.tally.scene = &r.scene;
    r.tally.changes = calloc((size_t)r.a.ticks * PERCEPT_SENSE_COUNT, sizeof *r.tally.changes);
    if (r.tally.changes == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        return EXIT_RUN;
    }
    /* The world first: a bad backend or config then leaves no file behind either. */
    if ((status = open_world(&r.a, &r.world)) == 0 && (status = open_outputs(r.out, mask)) == 0) {
        r.tally.events_out = r.out[OUT_EVENTS].f;
        r.tally.trace_out = r.out[OUT_TRACE].f;
        percept_set_event_callback(r.world, on_event, &r.tally);
        if (!r.a.quiet)
            print_start(&r.a, r.world);
        status = play(&r);
        if (status != EXIT_SUCCESS)
            discard_outputs(r.out);
    }
    for (int i = 0; i < OUT_COUNT; i++)
        free(r.out[i].resolved);
    sim_html_free(&r.html);
    sim_scene_free(&r.scene);
    percept_world_close(r.world);
    free(r.tally.pending);
    free(r.tally.changes);
    /* With "-", an error on standard output during the run was reported as the option's. */
    if ((fflush(stdout) != 0 || ferror(stdout)) && (status == 0 || r.report == stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output: %s\n", strerror(errno));
        return EXIT_RUN;
    }
    return status;
}
