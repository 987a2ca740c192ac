/*
 * percept-replay - runs a perception trace (docs/trace-format.md) against a
 * configured world and prints every enter and leave event and every
 * stimulus perceived, so that two backends or two builds can be compared
 * byte for byte with cmp(1).
 *
 * Only the public API (percept.h) is used: the tool is also an example of
 * it. main() returns rather than exits and frees everything, since the
 * trace fuzzer calls it once per input (fuzz/fuzz_trace.c).
 */
#include <percept.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace_syntax.h"

#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-replay"

/* The exit status for an error of the trace; bad usage is CLI_EXIT_USAGE. */
enum { EXIT_TRACE = 1 };

struct args {
    const char *config;  /* --config FILE, or NULL */
    const char *backend; /* --backend NAME, or NULL */
    const char *trace;   /* TRACE, "-" for standard input */
    size_t threads;      /* --threads N, or 0 for the config's */
    int stats;
};

static void print_usage(void)
{
    fputs("Usage: " PROGRAM " [--config FILE] [--backend NAME] [--threads N] [--stats] TRACE\n"
          "       " PROGRAM " --help | --version\n"
          "\n"
          "Replay the perception trace TRACE (\"-\": standard input; the format is in\n"
          "docs/trace-format.md) and print every change of the perception relation and\n"
          "every stimulus perceived as\n"
          "  LINE OBSERVER TARGET SENSE enter|leave\n"
          "  LINE OBSERVER SOURCE SENSE stimulus\n"
          "\n"
          "The world has the trace's senses (its senses line, else sight, hearing and\n"
          "smell). If the config names others, each of the trace's is served by the\n"
          "backend of the config's first sense, with that backend's default parameters.\n"
          "\n"
          "Options:\n"
          "  --config FILE   create the world from the INI file FILE\n"
          "                  (default: " PERCEPT_DEFAULT_CONFIG ")\n"
          "  --backend NAME  use backend NAME for every sense; without --config, every\n"
          "                  other setting keeps its default\n"
          "  --threads N     run each tick block on N threads, in place of the config's\n"
          "                  [world] threads (the output is the same for any N)\n"
          "  --stats         print counts, backends, memory and timings to standard error\n"
          "  --help          print this help and exit\n"
          "  --version       print the version of the percept library and exit\n"
          "\n"
          "Exit status: 0 on success; 1 if the trace has an error (FILE:LINE: message)\n"
          "or cannot be read; 2 on bad usage, a TRACE that cannot be opened, or a world\n"
          "that cannot be created.\n",
          stdout);
}

/* A count given to an option: decimal digits, above 0. */
static int parse_count(const char *s, size_t *out)
{
    char *end;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0 || v == 0 || v > SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

/* -1 when the arguments are fine, else the exit status to end with. */
static int parse_args(int argc, char **argv, struct args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value;
        int r;
        if (strcmp(arg, "--help") == 0) {
            print_usage();
            return EXIT_SUCCESS;
        } else if (cli_version(PROGRAM, arg)) {
            return EXIT_SUCCESS;
        } else if (strcmp(arg, "--stats") == 0) {
            a->stats = 1;
        } else if ((r = cli_option_value(argc, argv, &i, "--config", &a->config)) != 0) {
            if (r < 0 || a->config[0] == '\0')
                return cli_usage_error(PROGRAM, "--config needs a FILE");
        } else if ((r = cli_option_value(argc, argv, &i, "--backend", &a->backend)) != 0) {
            if (r < 0 || !cli_backend_name_ok(a->backend))
                return cli_usage_error(PROGRAM,
                                       "--backend needs a NAME: letters, digits, '_', '-'");
        } else if ((r = cli_option_value(argc, argv, &i, "--threads", &value)) != 0) {
            if (r < 0 || parse_count(value, &a->threads) < 0)
                return cli_usage_error(PROGRAM, "--threads needs a count N above 0");
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        } else if (a->trace != NULL) {
            return cli_usage_error(PROGRAM, "only one TRACE is replayed");
        } else {
            a->trace = arg;
        }
    }
    return a->trace != NULL ? -1 : cli_usage_error(PROGRAM, "missing TRACE argument");
}

/* One line of a tick block: its line number and, for a set, the entity's
 * description with the line's fields. */
struct tick_entry {
    unsigned long line;
    percept_entity_desc desc;
};

/* The tick block being read, run by one percept_tick() at its end. */
struct tick_block {
    unsigned long line; /* the tick line; 0 outside a block */
    size_t count, cap;
    percept_change *changes; /* room for cap + 1: see check_block() */
    struct tick_entry *entries;
};

struct replay {
    const struct args *args;
    trace_reader trace; /* its name, line number and senses go into messages and events */
    percept_world *world;
    percept_bounds bounds; /* the last world line's, if has_bounds */
    int has_bounds;
    int senses_matched; /* the world has the trace's senses (see match_senses()) */
    struct tick_block tick;
    unsigned long commands, enters, leaves, stimuli;
    /* A config refused with its own bounds waits here for the trace's first
     * command: a world line may give bounds it accepts. */
    int deferred_status; /* 0: none */
    percept_error deferred;
};

/* Reports an error of the trace as FILE:LINE: message; returns -1. */
static int trace_error_at(struct replay *r, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int vtrace_error_at(struct replay *r, unsigned long line, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static int trace_error(struct replay *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int vtrace_error_at(struct replay *r, unsigned long line, const char *fmt, va_list ap)
{
    fflush(stdout); /* what was printed stays a valid prefix of the whole output */
    fprintf(stderr, "%s:%lu: ", r->trace.name, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return -1;
}

static int trace_error_at(struct replay *r, unsigned long line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtrace_error_at(r, line, fmt, ap);
    va_end(ap);
    return -1;
}

/* The error at the line last read. */
static int trace_error(struct replay *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtrace_error_at(r, r->trace.line, fmt, ap);
    va_end(ap);
    return -1;
}

static void on_event(void *user, const percept_event *ev)
{
    struct replay *r = user;
    const char *sense = percept_sense_name(r->world, ev->sense);
    if (ev->kind == PERCEPT_STIMULUS) {
        r->stimuli++;
        if (ev->has_source)
            printf("%lu %lu %lu %s stimulus\n", r->trace.line, (unsigned long)ev->observer,
                   (unsigned long)ev->target, sense);
        else
            printf("%lu %lu - %s stimulus\n", r->trace.line, (unsigned long)ev->observer, sense);
        return;
    }
    if (ev->kind != PERCEPT_ENTER && ev->kind != PERCEPT_LEAVE)
        return; /* a MOVE is no change of the relation */
    int enter = ev->kind == PERCEPT_ENTER;
    r->enters += enter;
    r->leaves += !enter;
    printf("%lu %lu %lu %s %s\n", r->trace.line, (unsigned long)ev->observer,
           (unsigned long)ev->target, sense, enter ? "enter" : "leave");
}

/* Opens a world from --config, --backend alone or the installed default,
 * with `bounds` (may be NULL) in place of the config's. */
static int open_config(const struct args *a, const percept_bounds *bounds, percept_world **out,
                       percept_error *err)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    opt.bounds = bounds;
    opt.backend = a->backend;
    opt.threads = a->threads;
    memset(err, 0, sizeof *err);
    if (a->config == NULL && a->backend != NULL)
        return percept_world_open_string(out, "", "<--backend>", &opt, err);
    return percept_world_open(out, a->config ? a->config : PERCEPT_DEFAULT_CONFIG, &opt, err);
}

/* Opens the config's world, with the trace's bounds if it has given some;
 * whether it has the trace's senses is match_senses()' to see. */
static int open_world(struct replay *r, percept_error *err)
{
    int st = open_config(r->args, r->has_bounds ? &r->bounds : NULL, &r->world, err);
    r->senses_matched = 0;
    return st < 0 ? st : percept_set_event_callback(r->world, on_event, r);
}

static int same_senses(const percept_world *w, const trace_reader *t)
{
    if (percept_sense_count(w) != t->sense_count)
        return 0;
    for (int s = 0; s < t->sense_count; s++)
        if (strcmp(percept_sense_name(w, s), t->sense_name[s]) != 0)
            return 0;
    return 1;
}

/*
 * Replaces a world whose senses are not the trace's with one that has the
 * trace's senses, each served by the backend of the config's first sense,
 * found where that one was, with its default parameters: the config's
 * sections name its own senses. The bounds stay.
 */
static int match_senses(struct replay *r, percept_error *err)
{
    char text[32 + PERCEPT_MAX_SENSES * (TRACE_SENSE_NAME_MAX + 1)] = "[world]\nsenses =";
    char backend[64], *dir;
    percept_options opt = PERCEPT_OPTIONS_INIT;
    percept_bounds bounds;
    percept_world *w = NULL;

    r->senses_matched = 1;
    if (same_senses(r->world, &r->trace))
        return 0;
    for (int s = 0; s < r->trace.sense_count; s++)
        strcat(strcat(text, " "), r->trace.sense_name[s]);
    strcat(text, "\n");
    /* Copies: the names belong to the world closed below. */
    const char *path = percept_backend_path(r->world, 0), *slash = strrchr(path, '/');
    snprintf(backend, sizeof backend, "%s", percept_backend_name(r->world, 0));
    if ((dir = strdup(path)) == NULL)
        return PERCEPT_ENOMEM;
    if (slash != NULL)
        dir[slash > path ? slash - path : 1] = '\0';
    percept_get_bounds(r->world, &bounds);
    opt.backend = backend;
    opt.threads = r->args->threads;
    opt.plugin_dir = slash != NULL ? dir : NULL;
    opt.bounds = &bounds;
    memset(err, 0, sizeof *err);
    int st = percept_world_open_string(&w, text, "<the trace's senses>", &opt, err);
    free(dir);
    percept_world_close(r->world);
    r->world = w;
    return st < 0 ? st : percept_set_event_callback(w, on_event, r);
}

/* Reports a world that did not open as the usage error it is. */
static void report_open_error(const struct replay *r, const percept_error *err, int status)
{
    const struct args *a = r->args;
    fflush(stdout);
    fprintf(stderr, PROGRAM ": %s%s\n", err->text[0] ? err->text : percept_strerror(status),
            a->config == NULL && a->backend == NULL && status == PERCEPT_EIO
                ? " (the default config: give --config FILE or --backend NAME)"
                : "");
}

/* Reports a failed library call of command `cmd` at `line` on entity `id`; returns -1. */
static int library_error(struct replay *r, unsigned long line, const char *cmd, percept_id id,
                         int status)
{
    const char *msg = percept_errmsg(r->world);
    if (status == PERCEPT_ENOENT)
        return trace_error_at(r, line, "%s: unknown entity %lu", cmd, (unsigned long)id);
    if (status == PERCEPT_EEXIST)
        return trace_error_at(r, line, "%s: entity %lu is already in the world", cmd,
                              (unsigned long)id);
    if (msg == NULL || msg[0] == '\0')
        msg = percept_strerror(status);
    return trace_error_at(r, line, "%s: %s (%s)", cmd, msg, percept_status_name(status));
}

/* The world for a command, with the trace's senses: 0, or -1 after reporting. */
static int ready_world(struct replay *r, const char *cmd)
{
    percept_error err;
    int st = r->senses_matched ? 0 : match_senses(r, &err);
    if (st < 0)
        return trace_error(r, "%s: %s", cmd, err.text[0] ? err.text : percept_strerror(st));
    return 0;
}

static const char *const command_name[] = {
    [TRACE_SENSES] = "senses", [TRACE_WORLD] = "world", [TRACE_ADD] = "add",
    [TRACE_MOVE] = "move",     [TRACE_FACE] = "face",   [TRACE_SET] = "set",
    [TRACE_REMOVE] = "remove", [TRACE_RANGE] = "range", [TRACE_HIDE] = "hide",
    [TRACE_SHOW] = "show",     [TRACE_EMIT] = "emit",   [TRACE_TICK] = "tick",
    [TRACE_END] = "end",
};

/* ------------------------------------------------------------------------ */
/* Tick blocks                                                               */

/* Room for one more entry, and the one check_block() puts after the last: 0, or -1. */
static int grow_block(struct tick_block *t)
{
    if (t->count < t->cap)
        return 0;
    size_t cap = t->cap > 0 ? 2 * t->cap : 64;
    percept_change *changes = realloc(t->changes, (cap + 1) * sizeof *changes);
    if (changes == NULL)
        return -1;
    t->changes = changes;
    struct tick_entry *entries = realloc(t->entries, cap * sizeof *entries);
    if (entries == NULL)
        return -1;
    t->entries = entries;
    t->cap = cap;
    return 0;
}

static void free_block(struct tick_block *t)
{
    free(t->changes);
    free(t->entries);
}

/* The entries' descriptions, which a growing array may have moved. */
static void point_descs(struct tick_block *t)
{
    for (size_t i = 0; i < t->count; i++)
        t->changes[i].desc = &t->entries[i].desc;
}

/* Reports the block's entry `i`, refused with `status`, at its line; returns -1. */
static int entry_error(struct replay *r, size_t i, int status)
{
    static const trace_command command_of[] = {
        [PERCEPT_CHANGE_MOVE] = TRACE_MOVE,
        [PERCEPT_CHANGE_TURN] = TRACE_FACE,
        [PERCEPT_CHANGE_UPDATE] = TRACE_SET,
    };
    const percept_change *c = &r->tick.changes[i];
    return library_error(r, r->tick.entries[i].line, command_name[command_of[c->kind]], c->id,
                         status);
}

/*
 * Before an error found while reading a block (a bad line, another
 * command, a missing end) is reported: the lines before it come first, so
 * a bad entry among them is the error the replay stops at. percept_tick()
 * checks every entry before it changes anything, and an entry it always
 * refuses (a position that is not a number), put last, makes the call a
 * check that changes nothing. -1 after reporting an entry, 0 when none is
 * bad (or the check could not run: the error found stands).
 */
static int check_block(struct replay *r)
{
    struct tick_block *t = &r->tick;
    if (t->changes == NULL)
        return 0; /* no entry */
    t->changes[t->count] = (percept_change){.kind = PERCEPT_CHANGE_MOVE, .x = NAN};
    point_descs(t);
    int st = percept_tick(r->world, t->changes, t->count + 1);
    size_t i = percept_errindex(r->world);
    return st < 0 && i < t->count ? entry_error(r, i, st) : 0;
}

/* Adds a move, face or set line to the block: 0, or -1 after reporting. */
static int add_entry(struct replay *r, const trace_line *c)
{
    struct tick_block *t = &r->tick;
    if (grow_block(t) < 0)
        return check_block(r) < 0 ? -1
                                  : trace_error(r, "%s: out of memory", command_name[c->command]);
    percept_change *ch = &t->changes[t->count];
    struct tick_entry *e = &t->entries[t->count];
    *ch = (percept_change){.id = c->id};
    e->line = r->trace.line;
    if (c->command == TRACE_MOVE) {
        ch->kind = PERCEPT_CHANGE_MOVE;
        ch->x = c->desc.x, ch->y = c->desc.y, ch->z = c->desc.z;
    } else if (c->command == TRACE_FACE) {
        ch->kind = PERCEPT_CHANGE_TURN;
        ch->x = c->desc.facing[0], ch->y = c->desc.facing[1], ch->z = c->desc.facing[2];
    } else {
        /* The entity as it was before the block: the block names it only here. */
        ch->kind = PERCEPT_CHANGE_UPDATE;
        e->desc = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
        int st = percept_get_entity(r->world, c->id, &e->desc);
        if (st < 0)
            return check_block(r) < 0 ? -1 : library_error(r, r->trace.line, "set", c->id, st);
        trace_apply_fields(c, &e->desc);
    }
    t->count++;
    return 0;
}

/* Runs the block at its end line, as one tick: 0, or -1 after reporting. */
static int run_block(struct replay *r)
{
    struct tick_block *t = &r->tick;
    point_descs(t);
    int st = percept_tick(r->world, t->changes, t->count);
    size_t i = percept_errindex(r->world);
    t->line = 0;
    if (st < 0)
        return i < t->count ? entry_error(r, i, st) : library_error(r, r->trace.line, "end", 0, st);
    return 0;
}

/* A line inside a tick block: 0, or -1 after reporting. */
static int run_in_block(struct replay *r, const trace_line *c)
{
    const char *cmd = command_name[c->command];
    switch (c->command) {
    case TRACE_MOVE:
    case TRACE_FACE:
    case TRACE_SET:
        return add_entry(r, c);
    case TRACE_END:
        return run_block(r);
    default:
        if (check_block(r) < 0)
            return -1;
        if (c->command == TRACE_TICK)
            return trace_error(r, "tick: inside the tick block of line %lu", r->tick.line);
        return trace_error(r,
                           "%s: inside the tick block of line %lu: only move, face and set "
                           "until its end",
                           cmd, r->tick.line);
    }
}

/* Runs set: the entity's description with the fields the line names, as one change. */
static int run_set(struct replay *r, const trace_line *c)
{
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    int st = percept_get_entity(r->world, c->id, &d);
    if (st < 0)
        return st;
    trace_apply_fields(c, &d);
    return percept_update(r->world, c->id, &d);
}

/* Runs one checked command: the library itself says whether the entity is
 * in the world, whether a position or range is within its limits and
 * whether a cone is left without a facing. Returns 0, or -1 after reporting. */
static int run_command(struct replay *r, const trace_line *c)
{
    const char *cmd = command_name[c->command];
    percept_entity_desc d = PERCEPT_ENTITY_DESC_INIT;
    percept_error err;
    percept_id id = c->id;
    int st = 0;

    if (c->command == TRACE_SENSES || c->command == TRACE_WORLD) {
        /* The world is still empty: open it again with these senses or bounds. */
        r->bounds = c->command == TRACE_WORLD ? c->bounds : r->bounds;
        r->has_bounds |= c->command == TRACE_WORLD;
        percept_world_close(r->world);
        if ((st = open_world(r, &err)) < 0 || (st = match_senses(r, &err)) < 0)
            return trace_error(r, "%s: %s", cmd, err.text[0] ? err.text : percept_strerror(st));
        return 0;
    }
    if (c->command == TRACE_END)
        return trace_error(r, "end: no tick block to end");
    if (ready_world(r, cmd) < 0)
        return -1;
    if (c->command == TRACE_TICK) {
        r->tick.line = r->trace.line;
        r->tick.count = 0;
        return 0;
    }
    switch (c->command) {
    case TRACE_ADD:
        d.x = c->desc.x;
        d.y = c->desc.y;
        d.z = c->desc.z;
        trace_apply_fields(c, &d);
        st = percept_add(r->world, id, &d);
        break;
    case TRACE_MOVE:
        st = percept_move3(r->world, id, c->desc.x, c->desc.y, c->desc.z);
        break;
    case TRACE_FACE:
        st = percept_turn(r->world, id, c->desc.facing[0], c->desc.facing[1], c->desc.facing[2]);
        break;
    case TRACE_SET:
        st = run_set(r, c);
        break;
    case TRACE_REMOVE:
        st = percept_remove(r->world, id);
        break;
    case TRACE_RANGE:
        st = percept_set_range(r->world, id, c->sense, c->range);
        break;
    case TRACE_HIDE:
    case TRACE_SHOW:
        st = percept_set_hidden(r->world, id, c->sense, c->command == TRACE_HIDE);
        break;
    case TRACE_EMIT:
        id = c->stimulus.source;
        st = percept_emit(r->world, &c->stimulus);
        break;
    default:
        break;
    }
    return st < 0 ? library_error(r, r->trace.line, cmd, id, st) : 0;
}

/*
 * The first command of a trace whose config was refused for its bounds
 * (NULL: the trace has none). A senses line waits with it; a world line
 * whose bounds are accepted clears the refusal; one refused for another
 * reason is an error at its line (-1); else the config's refusal stands as
 * a usage error (-2).
 */
static int run_deferred(struct replay *r, const trace_line *c)
{
    percept_error err;
    int world = c != NULL && c->command == TRACE_WORLD, st = 0;
    if (c != NULL && c->command == TRACE_SENSES)
        return 0;
    if (world) {
        r->bounds = c->bounds;
        r->has_bounds = 1;
        st = open_world(r, &err);
    }
    if (world && st >= 0) {
        r->deferred_status = 0;
        if ((st = match_senses(r, &err)) >= 0)
            return 0;
    } else if (!world || (st == r->deferred_status && strcmp(err.text, r->deferred.text) == 0)) {
        report_open_error(r, &r->deferred, r->deferred_status);
        return -2;
    }
    return trace_error(r, "world: %s", err.text[0] ? err.text : percept_strerror(st));
}

/* Reads and runs every line. 0, -1 after a trace error, -2 after a usage error. */
static int run_trace(struct replay *r)
{
    trace_line command;
    int st, known, rc = 0;

    while (rc == 0 && (st = trace_read_line(&r->trace)) > 0) {
        if ((known = trace_parse_line(&r->trace, &command)) < 0)
            return r->tick.line != 0 && check_block(r) < 0 ? -1
                                                           : trace_error(r, "%s", r->trace.msg);
        if (known > 0) {
            rc = r->deferred_status != 0 ? run_deferred(r, &command)
                 : r->tick.line != 0     ? run_in_block(r, &command)
                                         : run_command(r, &command);
            r->commands += rc == 0 && r->tick.line == 0; /* a tick block is one command */
        }
        /* A last line without its newline runs, but the file may have been cut off. */
        if (rc == 0 && r->trace.cut) {
            fflush(stdout);
            fprintf(stderr,
                    "%s:%lu: warning: the last line has no newline; if the file was cut off, "
                    "this line ran incomplete\n",
                    r->trace.name, r->trace.line);
        }
    }
    if (rc != 0)
        return rc;
    if (st < 0) {
        fflush(stdout);
        fprintf(stderr, PROGRAM ": cannot read trace '%s' after line %lu: %s\n", r->trace.name,
                r->trace.line,
                r->trace.read_errno != 0 ? strerror(r->trace.read_errno) : "read error");
        return -1;
    }
    if (r->tick.line != 0)
        return check_block(r) < 0 ? -1 : trace_error_at(r, r->tick.line, "tick: no end");
    return r->deferred_status != 0 ? run_deferred(r, NULL) : 0;
}

static void print_stats(const struct replay *r, double seconds)
{
    size_t entities = r->world != NULL ? percept_entity_count(r->world) : 0;
    percept_memory m;

    fprintf(stderr, PROGRAM ": statistics for %s\n", r->trace.name);
    fprintf(stderr, "  commands executed: %lu\n", r->commands);
    fprintf(stderr, "  entities at end:   %zu\n", entities);
    fprintf(stderr, "  events:            %lu enter, %lu leave, %lu stimulus\n", r->enters,
            r->leaves, r->stimuli);
    fprintf(stderr, "  backends:         ");
    for (int i = 0; i < percept_sense_count(r->world); i++)
        fprintf(stderr, " %s=%s", percept_sense_name(r->world, i),
                percept_backend_name(r->world, i));
    if (percept_sense_count(r->world) == 0)
        fputs(" -", stderr);
    fprintf(stderr, "\n  loaded from:       ");
    cli_print_backend_paths(stderr, r->world);
    if (r->world != NULL && percept_memory_usage(r->world, &m) == PERCEPT_OK) {
        fprintf(stderr, "\n  memory at end:     %.2f MiB held",
                (double)m.total / (1024.0 * 1024.0));
        if (entities > 0) {
            fputs(", ", stderr);
            cli_print_memory_per(stderr, &m, entities, "entity");
        }
    }
    fprintf(stderr, "\n  wall time:         %.6f s", seconds);
    if (r->commands > 0)
        fprintf(stderr, " (%.0f ns per command)\n", seconds * 1e9 / (double)r->commands);
    else
        fprintf(stderr, " (no command run)\n");
}

/*
 * Opens the trace and the world: -1 when ready, else an exit status. A
 * config refused for a value that depends on the bounds (a cell size too
 * small for them, say) waits for a leading world line; one refused whatever
 * the bounds (an unknown key, a missing plugin) is told at once, before a
 * trace on standard input has said anything.
 */
static int setup(struct replay *r, const struct args *a)
{
    static const percept_bounds other = {0.0, 0.0, 1.0, 1.0};
    percept_error err, probe;
    percept_world *world = NULL;

    memset(r, 0, sizeof *r);
    r->args = a;
    const char *why = trace_open(&r->trace, a->trace);
    if (why != NULL) {
        fprintf(stderr, PROGRAM ": cannot open trace '%s': %s\n", r->trace.name, why);
        return CLI_EXIT_USAGE;
    }
    int st = open_world(r, &err);
    if (st == PERCEPT_ECONFIG) {
        int again = open_config(a, &other, &world, &probe);
        percept_world_close(world);
        if (again != st || strcmp(probe.text, err.text) != 0) {
            r->deferred_status = st;
            r->deferred = err;
            return -1;
        }
    }
    if (st < 0) {
        report_open_error(r, &err, st);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 18];
    struct args a;
    struct replay r;
    int status = parse_args(argc, argv, &a);

    if (status >= 0)
        return status;
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    status = setup(&r, &a);
    if (status < 0) {
        double start = cli_now_seconds();
        int rc = run_trace(&r);
        status = rc == 0 ? EXIT_SUCCESS : rc == -1 ? EXIT_TRACE : CLI_EXIT_USAGE;
        if (a.stats && status != CLI_EXIT_USAGE)
            print_stats(&r, cli_now_seconds() - start);
    }
    percept_world_close(r.world);
    free_block(&r.tick);
    trace_close(&r.trace);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output: %s\n", strerror(errno));
        return EXIT_TRACE;
    }
    return status;
}
