/*
 * percept-replay - runs a perception trace (docs/trace-format.md, version 1)
 * against a configured world and prints every enter/leave event, so that two
 * backends or two builds can be compared byte for byte with cmp(1).
 *
 * Only the public API (percept.h) is used: the tool is also an example of it.
 */
#define _POSIX_C_SOURCE 200809L

#include <percept.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "unused_params.h"
#include "trace_syntax.h"

#include "install_dirs.h" /* written by make: the configured paths */

#define PROGRAM "percept-replay"

/* The INI text's label when --backend alone configures the world; messages
 * name the option instead (see open_error_text). */
#define BACKEND_SOURCE "<--backend>"

/* The exit status when the trace fails (a line error); bad usage is CLI_EXIT_USAGE. */
enum { EXIT_TRACE = 1 };

/* ------------------------------------------------------------------------ */
/* Command line                                                              */

struct args {
    const char *config;  /* --config FILE, or NULL */
    const char *backend; /* --backend NAME, or NULL */
    const char *trace;   /* TRACE path, "-" for standard input */
    int stats;
    unsigned seen; /* the options with a value given so far (cli_once) */
};

static void print_usage(FILE *out)
{
    fputs("Usage: " PROGRAM " [--config FILE] [--backend NAME] [--stats] TRACE\n"
          "       " PROGRAM " --help | --version\n"
          "\n"
          "Replay the perception trace TRACE (a file or a pipe; \"-\" reads standard\n"
          "input) against a percept world and print every change of the perception\n"
          "relation as\n"
          "  LINE OBSERVER TARGET SENSE enter|leave\n"
          "The trace format is version 1 (docs/trace-format.md): IDs 0..4294967295,\n"
          "world lines only before the first add. A world line replaces the bounds\n"
          "of the config's [world] (and of an earlier world line); if the config's\n"
          "backends refuse them, that is an error of the trace at that line. A config\n"
          "refused for its own bounds is tried with a leading world line's before\n"
          "the refusal counts; one refused whatever the bounds (an unknown key, say)\n"
          "is an error at once, before the trace is read. A last line without a\n"
          "newline still runs, with a warning: the file may have been cut off.\n"
          "\n"
          "Options:\n"
          "  --config FILE   create the world from the INI file FILE\n"
          "                  (default: " PERCEPT_DEFAULT_CONFIG ")\n"
          "  --backend NAME  use backend NAME for every sense (overrides the config's);\n"
          "                  without --config, every other setting keeps its default\n"
          "  --stats         print counts, backends, their plugin files, the memory the\n"
          "                  world holds at the end and timings to standard error\n"
          "  --help          print this help and exit\n"
          "  --version       print the version of the percept library and exit\n"
          "\n"
          "Exit status: 0 on success; 1 if the trace has an error (reported as\n"
          "FILE:LINE: message, after the output of the lines before it),\n"
          "cannot be read to its end, or standard output cannot be written;\n"
          "2 on bad usage, a TRACE that cannot be opened, or a configuration\n"
          "that fails to load.\n",
          out);
}

/* Returns -1 when the arguments are fine, else the exit status to end with. */
static int parse_args(int argc, char **argv, struct args *a)
{
    int only_operands = 0;

    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int r;

        if (!only_operands && strcmp(arg, "--") == 0) {
            only_operands = 1;
        } else if (!only_operands && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)) {
            print_usage(stdout);
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (!only_operands && cli_version(PROGRAM, arg)) {
            return fflush(stdout) == 0 ? EXIT_SUCCESS : CLI_EXIT_USAGE;
        } else if (!only_operands && strcmp(arg, "--stats") == 0) {
            a->stats = 1;
        } else if (!only_operands &&
                   (r = cli_option_value(argc, argv, &i, "--config", &a->config)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a FILE", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 0, "--config")) >= 0)
                return r;
        } else if (!only_operands &&
                   (r = cli_option_value(argc, argv, &i, "--backend", &a->backend)) != 0) {
            if (r < 0)
                return cli_usage_error(PROGRAM, "option '%s' needs a NAME", arg);
            if ((r = cli_once(PROGRAM, &a->seen, 1, "--backend")) >= 0)
                return r;
            if (!cli_backend_name_ok(a->backend))
                return cli_usage_error(PROGRAM,
                                       "bad backend name '%s': letters, digits, '_' and '-' only",
                                       a->backend);
        } else if (!only_operands && arg[0] == '-' && arg[1] != '\0') {
            return cli_usage_error(PROGRAM, "unknown option '%s'", arg);
        } else if (a->trace != NULL) {
            return cli_usage_error(PROGRAM, "unexpected argument '%s': only one TRACE is replayed",
                                   arg);
        } else {
            a->trace = arg;
        }
    }
    if (a->trace == NULL)
        return cli_usage_error(PROGRAM, "%s", "missing TRACE argument");
    if (a->config != NULL && a->config[0] == '\0')
        return cli_usage_error(PROGRAM, "%s", "--config needs a non-empty FILE");
    return -1;
}

/* ------------------------------------------------------------------------ */
/* Replay state                                                              */

struct replay {
    const struct args *args;
    trace_reader trace; /* its name and line number go into messages and events */
    percept_world *world;
    unsigned long commands, enters, leaves;
    /* A config refused with the default bounds waits here for the trace's
     * first command: a world line may give bounds it accepts. */
    int deferred_status; /* 0: none */
    percept_error deferred;
    int noted; /* the note on parameters --backend leaves unused is printed */
};

/* Reports a trace error as FILE:LINE: message, the form the trace format
 * specifies (docs/trace-format.md, "Errors"), and returns -1. */
static int trace_error(struct replay *r, const char *fmt, ...)
{
    va_list ap;

    /* Whatever was printed stays a valid prefix of the full output. */
    fflush(stdout);
    fprintf(stderr, "%s:%lu: ", r->trace.name, r->trace.line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return -1;
}

/* Writes v in decimal so that it ends just before `end`; returns its start. */
static char *format_uint(char *end, unsigned long long v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

/* Copies a NUL-terminated string to dst, returning the end of the copy. */
static char *append(char *dst, const char *s)
{
    while (*s != '\0')
        *dst++ = *s++;
    return dst;
}

/* Appends v followed by one space. */
static char *append_uint(char *dst, unsigned long long v)
{
    char digits[24];
    char *end = digits + sizeof digits;

    for (char *p = format_uint(end, v); p < end; p++)
        *dst++ = *p;
    *dst++ = ' ';
    return dst;
}

/* The world's event callback: one output line per enter or leave. */
static void on_event(void *user, const percept_event *ev)
{
    struct replay *r = user;
    const char *sense = percept_sense_name(ev->sense);
    char buf[128];
    char *p = buf;

    if (ev->kind == PERCEPT_ENTER)
        r->enters++;
    else if (ev->kind == PERCEPT_LEAVE)
        r->leaves++;
    else
        return; /* MOVE events are not part of the relation's changes */

    p = append_uint(p, r->trace.line);
    p = append_uint(p, ev->observer);
    p = append_uint(p, ev->target);
    p = append(p, sense != NULL ? sense : "?");
    p = append(p, ev->kind == PERCEPT_ENTER ? " enter\n" : " leave\n");
    fwrite(buf, 1, (size_t)(p - buf), stdout);
}

/*
 * Opens a world from --config, --backend or the installed default config,
 * with `bounds` (may be NULL) replacing the config's. --backend alone needs
 * no config: every other setting keeps its default. On failure *out is NULL
 * and *err filled.
 */
static int open_config(const struct args *a, const percept_bounds *bounds, percept_world **out,
                       percept_error *err)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;

    opt.bounds = bounds;
    opt.backend = a->backend;
    if (a->config != NULL)
        return percept_world_open(out, a->config, &opt, err);
    if (a->backend != NULL)
        return percept_world_open_string(out, "", BACKEND_SOURCE, &opt, err);
    return percept_world_open(out, PERCEPT_DEFAULT_CONFIG, &opt, err);
}

/* Creates r->world (open_config()), and says once which tuned parameters a
 * forced --backend leaves unused. */
static int open_world(struct replay *r, const percept_bounds *bounds, percept_error *err)
{
    const struct args *a = r->args;
    int st = open_config(a, bounds, &r->world, err);
    if (st < 0)
        return st;
    /* Once, not again for each world line that opens the world anew. */
    if (a->config != NULL && a->backend != NULL && !r->noted) {
        note_unused_params(stderr, PROGRAM, a->config, a->backend);
        r->noted = 1;
    }
    return percept_set_event_callback(r->world, on_event, r);
}

/*
 * The error text of a failed open, never empty. The library says where a
 * backend's name came from as "SOURCE: backend 'NAME' for [SENSE] (from the
 * options)"; the user typed --backend NAME, so that is what the message names.
 */
static const char *open_error_text(const struct replay *r, const percept_error *err, int status,
                                   char *buf, size_t size)
{
    const struct args *a = r->args;
    const char *reason;
    int sense;

    if (err->text[0] == '\0')
        return percept_strerror(status);
    if (a->backend != NULL &&
        (reason = cli_backend_reason(err, a->config == NULL, &sense)) != NULL) {
        snprintf(buf, size, "--backend %s: %s", a->backend, reason);
        return buf;
    }
    return err->text;
}

/* Reports a failed open of the world as the usage error it is. */
static void report_open_error(const struct replay *r, const percept_error *err, int status)
{
    char text[sizeof err->text + 64];
    const struct args *a = r->args;

    fflush(stdout);
    fprintf(stderr, PROGRAM ": %s%s\n", open_error_text(r, err, status, text, sizeof text),
            a->config == NULL && a->backend == NULL && status == PERCEPT_EIO
                ? " (the default config: give --config FILE or --backend NAME)"
                : "");
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

/*
 * Each line is run as soon as it is read and checked (trace_syntax.c): the
 * library itself says whether the entity is in the world and whether a
 * position or range is within its limits, and the events printed so far
 * stay a valid prefix of the output when a later line fails.
 */

/* Reports a failed library call of command `cmd` on entity `id`. */
static int library_error(struct replay *r, const char *cmd, percept_id id, int status)
{
    const char *msg = percept_errmsg(r->world);

    if (status == PERCEPT_ENOENT)
        return trace_error(r, "%s: unknown entity %lu", cmd, (unsigned long)id);
    if (status == PERCEPT_EEXIST)
        return trace_error(r, "%s: entity %lu is already in the world", cmd, (unsigned long)id);
    if (msg == NULL || msg[0] == '\0')
        msg = percept_strerror(status);
    return trace_error(r, "%s: %s (%s)", cmd, msg, percept_status_name(status));
}

/* world MINX MINY MAXX MAXY: reopen the still empty world with these bounds. */
static int cmd_world(struct replay *r, const percept_bounds *b)
{
    percept_error err;
    char text[sizeof err.text + 64];
    int st;

    percept_world_close(r->world);
    memset(&err, 0, sizeof err);
    st = open_world(r, b, &err);
    if (st < 0)
        return trace_error(r, "world: %s", open_error_text(r, &err, st, text, sizeof text));
    return 0;
}

/* Runs one checked command. Returns 0, or -1 after reporting. */
static int run_command(struct replay *r, const trace_line *c)
{
    static const char *const name[] = {
        [TRACE_ADD] = "add",     [TRACE_MOVE] = "move", [TRACE_REMOVE] = "remove",
        [TRACE_RANGE] = "range", [TRACE_HIDE] = "hide", [TRACE_SHOW] = "show",
    };
    int st = 0;

    switch (c->command) {
    case TRACE_WORLD:
        return cmd_world(r, &c->bounds);
    case TRACE_ADD:
        st = percept_add(r->world, c->id, &c->desc);
        break;
    case TRACE_MOVE:
        st = percept_move(r->world, c->id, c->desc.x, c->desc.y);
        break;
    case TRACE_REMOVE:
        st = percept_remove(r->world, c->id);
        break;
    case TRACE_RANGE:
        st = percept_set_range(r->world, c->id, c->sense, c->range);
        break;
    case TRACE_HIDE:
    case TRACE_SHOW:
        st = percept_set_hidden(r->world, c->id, c->sense, c->command == TRACE_HIDE);
        break;
    }
    return st < 0 ? library_error(r, name[c->command], c->id, st) : 0;
}

/*
 * The first command of a trace whose world the config refused: a world line
 * whose bounds the config accepts clears the refusal. Returns 0 to go on, -1
 * after reporting a refusal of the line's bounds at its line, or -2 after
 * reporting the config's refusal as a usage error: the first command is not a
 * world line, or its bounds are refused for the same reason, which then was
 * never theirs.
 */
static int run_deferred(struct replay *r, const trace_line *c)
{
    percept_error err;
    char text[sizeof err.text + 64];
    int st;

    if (c == NULL || c->command != TRACE_WORLD) {
        report_open_error(r, &r->deferred, r->deferred_status);
        return -2;
    }
    memset(&err, 0, sizeof err);
    st = open_world(r, &c->bounds, &err);
    if (st >= 0) {
        r->deferred_status = 0;
        return 0;
    }
    if (st == r->deferred_status && strcmp(err.text, r->deferred.text) == 0) {
        report_open_error(r, &r->deferred, r->deferred_status);
        return -2;
    }
    return trace_error(r, "world: %s", open_error_text(r, &err, st, text, sizeof text));
}

/* Reads and runs every line of the trace. Returns 0, -1 after reporting a
 * trace error, or -2 after reporting a usage error (see run_deferred()). */
static int run_trace(struct replay *r)
{
    trace_line command;
    int st, known;

    while ((st = trace_read_line(&r->trace)) > 0) {
        if ((known = trace_parse_line(&r->trace, &command)) < 0)
            return trace_error(r, "%s", r->trace.msg);
        if (known > 0) {
            if (r->deferred_status != 0) {
                int rc = run_deferred(r, &command);
                if (rc < 0)
                    return rc;
            } else if (run_command(r, &command) < 0) {
                return -1;
            }
            r->commands++;
        }
        /* The format allows a last line without its newline (an editor may
         * leave it out), and the independent reference runs it; but the
         * file may have been cut off there, so the reader is warned. */
        if (r->trace.cut) {
            fflush(stdout);
            fprintf(stderr,
                    "%s:%lu: warning: the last line has no newline; if the file was cut off, "
                    "this line ran incomplete\n",
                    r->trace.name, r->trace.line);
        }
    }
    if (st < 0) {
        /* No line is at fault: name the place, not an invented line. */
        fflush(stdout);
        fprintf(stderr, PROGRAM ": cannot read trace '%s' after line %lu: %s\n", r->trace.name,
                r->trace.line,
                r->trace.read_errno != 0 ? strerror(r->trace.read_errno) : "read error");
        return -1;
    }
    return r->deferred_status != 0 ? run_deferred(r, NULL) : 0;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

/* What the world holds at the end of the trace, by part: for sizing a
 * server's memory with a config, from a trace of its game. */
static void print_memory(const percept_world *w, size_t entities)
{
    percept_memory m;
    if (w == NULL || percept_memory_usage(w, &m) != PERCEPT_OK)
        return;
    fprintf(stderr, "\n  memory at end:     %.2f MiB held", (double)m.total / (1024.0 * 1024.0));
    if (entities == 0) {
        fprintf(stderr, " (no entity left)");
        return;
    }
    fputs(", ", stderr);
    cli_print_memory_per(stderr, &m, entities, "entity");
}

static void print_stats(const struct replay *r, double seconds)
{
    size_t entities = r->world != NULL ? percept_entity_count(r->world) : 0;

    fprintf(stderr, PROGRAM ": statistics for %s\n", r->trace.name);
    fprintf(stderr, "  commands executed: %lu\n", r->commands);
    fprintf(stderr, "  entities at end:   %zu\n", entities);
    fprintf(stderr, "  events:            %lu enter, %lu leave\n", r->enters, r->leaves);
    fprintf(stderr, "  backends:         ");
    for (int i = 0; i < PERCEPT_SENSE_COUNT; i++) {
        const char *b = r->world != NULL ? percept_backend_name(r->world, (percept_sense)i) : NULL;
        fprintf(stderr, " %s=%s", percept_sense_name((percept_sense)i), b != NULL ? b : "-");
    }
    fprintf(stderr, "\n  loaded from:       ");
    cli_print_backend_paths(stderr, r->world);
    print_memory(r->world, entities);
    fprintf(stderr, "\n  wall time:         %.6f s", seconds);
    if (r->commands > 0)
        fprintf(stderr, " (%.0f ns per command)\n", seconds * 1e9 / (double)r->commands);
    else
        fprintf(stderr, " (no command run)\n");
}

/* ------------------------------------------------------------------------ */

/*
 * Whether a config refused with its own bounds (`err`) may be accepted with
 * others: a world opened with other bounds is refused with another message,
 * or not at all. A refusal that does not depend on the bounds (an unknown
 * key, a syntax error) is then told at once, not after the trace's first
 * line, which on standard input may be a long time coming.
 */
static int refused_for_bounds(const struct args *a, const percept_error *err)
{
    static const percept_bounds other = {0.0, 0.0, 1.0, 1.0};
    percept_world *world;
    percept_error probe;

    memset(&probe, 0, sizeof probe);
    int st = open_config(a, &other, &world, &probe);
    percept_world_close(world);
    return st != err->status || strcmp(probe.text, err->text) != 0;
}

/* Opens the trace and the world. Returns -1 when ready, else an exit status.
 * A world the config refuses for its bounds is opened again by a leading
 * world line, with the line's bounds, before the refusal counts (see
 * run_trace()). */
static int setup(struct replay *r, const struct args *a)
{
    percept_error err;
    int st;

    memset(r, 0, sizeof *r);
    r->args = a;
    /* A trace that cannot be read at all is bad usage, like a missing file:
     * not a line it does not have. */
    const char *why = trace_open(&r->trace, a->trace);
    if (why != NULL) {
        fprintf(stderr, PROGRAM ": cannot open trace '%s': %s\n", r->trace.name, why);
        return CLI_EXIT_USAGE;
    }
    memset(&err, 0, sizeof err);
    st = open_world(r, NULL, &err);
    if (st < 0) {
        /* Only a value the config holds can be refused for the bounds (a
         * cell size too small for them, say); a plugin that does not load,
         * a file that cannot be read, a typo, fail with any bounds, and are
         * told at once, before a trace on standard input has said anything. */
        if (st != PERCEPT_ECONFIG || !refused_for_bounds(a, &err)) {
            report_open_error(r, &err, st);
            return CLI_EXIT_USAGE;
        }
        r->deferred_status = st;
        r->deferred = err;
    }
    return -1;
}

static void teardown(struct replay *r)
{
    percept_world_close(r->world);
    trace_close(&r->trace);
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 18];
    struct args a;
    struct replay r;
    double start;
    int status = parse_args(argc, argv, &a);

    if (status >= 0)
        return status;
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    status = setup(&r, &a);
    if (status < 0) {
        start = cli_now_seconds();
        int rc = run_trace(&r);
        status = rc == 0 ? EXIT_SUCCESS : rc == -1 ? EXIT_TRACE : CLI_EXIT_USAGE;
        if (a.stats && status != CLI_EXIT_USAGE)
            print_stats(&r, cli_now_seconds() - start);
    }
    teardown(&r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output: %s\n", strerror(errno));
        return EXIT_TRACE;
    }
    return status;
}
