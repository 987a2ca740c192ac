/*
 * percept-replay - runs a perception trace (docs: TRACE.md, format version 1)
 * against a configured world and prints every enter/leave event, so that two
 * backends or two builds can be compared byte for byte with cmp(1).
 *
 * Only the public API (percept.h) is used: the tool is also an example of it.
 */
#define _POSIX_C_SOURCE 200809L

#include <percept.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "trace_syntax.h"

#ifndef PERCEPT_DEFAULT_CONFIG
#define PERCEPT_DEFAULT_CONFIG "/usr/local/etc/percept/percept.ini"
#endif

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
          "backends refuse them, that is an error of the trace at that line. A last\n"
          "line without a newline still runs, with a warning: the file may have been\n"
          "cut off.\n"
          "\n"
          "Options:\n"
          "  --config FILE   create the world from the INI file FILE\n"
          "                  (default: " PERCEPT_DEFAULT_CONFIG ")\n"
          "  --backend NAME  use backend NAME for every sense (overrides the config's);\n"
          "                  without --config, every other setting keeps its default\n"
          "  --stats         print counts, backends, their plugin files and timings to\n"
          "                  standard error\n"
          "  --help          print this help and exit\n"
          "  --version       print the version of the percept library and exit\n"
          "\n"
          "Exit status: 0 on success; 1 if the trace has an error (reported as\n"
          "FILE:LINE: message, after the output of the lines before it)\n"
          "or cannot be read to its end; 2 on bad usage, a TRACE that cannot be\n"
          "opened, or a configuration that fails to load.\n",
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
    const char *name; /* the trace's name in messages */
    FILE *in;
    percept_world *world;
    unsigned long line;           /* 1-based number of the line being run */
    unsigned long first_add_line; /* the line of the first add: `world` must come before */
    unsigned long commands, enters, leaves;
};

/* Reports a trace error as FILE:LINE: message, the form the trace format
 * specifies (docs/trace-format.md, "Errors"), and returns -1. */
static int trace_error(struct replay *r, const char *fmt, ...)
{
    va_list ap;

    /* Whatever was printed stays a valid prefix of the full output. */
    fflush(stdout);
    fprintf(stderr, "%s:%lu: ", r->name, r->line);
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

    p = append_uint(p, r->line);
    p = append_uint(p, ev->observer);
    p = append_uint(p, ev->target);
    p = append(p, sense != NULL ? sense : "?");
    p = append(p, ev->kind == PERCEPT_ENTER ? " enter\n" : " leave\n");
    fwrite(buf, 1, (size_t)(p - buf), stdout);
}

/*
 * Creates r->world from --config, --backend or the installed default config,
 * with `bounds` (may be NULL) replacing the config's. --backend alone needs
 * no config: every other setting keeps its default. On failure fills *err.
 */
static int open_world(struct replay *r, const percept_bounds *bounds, percept_error *err)
{
    percept_options opt = PERCEPT_OPTIONS_INIT;
    const struct args *a = r->args;
    int st;

    opt.bounds = bounds;
    opt.backend = a->backend;
    if (a->config != NULL) {
        st = percept_world_open(&r->world, a->config, &opt, err);
    } else if (a->backend != NULL) {
        st = percept_world_open_string(&r->world, "", BACKEND_SOURCE, &opt, err);
    } else {
        st = percept_world_open(&r->world, PERCEPT_DEFAULT_CONFIG, &opt, err);
    }
    if (st < 0) {
        r->world = NULL;
        return st;
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
        (reason = cli_backend_reason(err->text, a->config != NULL ? a->config : BACKEND_SOURCE,
                                     a->config == NULL, &sense)) != NULL) {
        snprintf(buf, size, "--backend %s: %s", a->backend, reason);
        return buf;
    }
    return err->text;
}

/* ------------------------------------------------------------------------ */
/* Parsing fields                                                            */

static int parse_sense(const char *s, percept_sense *out)
{
    return trace_parse_sense(s, strlen(s), out);
}

#define SENSE_EXPECTED "expected sight, hearing or smell"
#define ID_EXPECTED "must be a decimal integer in 0..4294967295"

static int get_id(struct replay *r, const char *cmd, const char *s, percept_id *id)
{
    if (trace_parse_id(s, id) < 0)
        return trace_error(r, "%s: bad ID '%s': " ID_EXPECTED, cmd, s);
    return 0;
}

static int get_number(struct replay *r, const char *cmd, const char *what, const char *s, double *v)
{
    if (trace_parse_number(s, v) < 0)
        return trace_error(r, "%s: bad %s '%s': must be a finite decimal number", cmd, what, s);
    return 0;
}

static int get_sense(struct replay *r, const char *cmd, const char *s, percept_sense *sense)
{
    if (parse_sense(s, sense) < 0)
        return trace_error(r, "%s: unknown sense '%s': " SENSE_EXPECTED, cmd, s);
    return 0;
}

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

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

/* world MINX MINY MAXX MAXY: reopen the still empty world with these bounds. */
static int cmd_world(struct replay *r, char **f)
{
    percept_bounds b;
    percept_error err;
    char text[sizeof err.text + 64];
    int st;

    if (r->first_add_line != 0)
        return trace_error(r, "world: must come before the first add (line %lu)",
                           r->first_add_line);
    if (get_number(r, "world", "MINX", f[1], &b.min_x) < 0 ||
        get_number(r, "world", "MINY", f[2], &b.min_y) < 0 ||
        get_number(r, "world", "MAXX", f[3], &b.max_x) < 0 ||
        get_number(r, "world", "MAXY", f[4], &b.max_y) < 0)
        return -1;
    static const char *const name[4] = {"MINX", "MINY", "MAXX", "MAXY"};
    const double v[4] = {b.min_x, b.min_y, b.max_x, b.max_y};
    for (int i = 0; i < 4; i++)
        if (fabs(v[i]) > PERCEPT_COORD_LIMIT)
            return trace_error(r,
                               "world: %s %s is beyond the coordinate limit: must be within "
                               "[-1e15, 1e15]",
                               name[i], f[i + 1]);
    if (b.min_x > b.max_x)
        return trace_error(r, "world: MINX %s is greater than MAXX %s", f[1], f[3]);
    if (b.min_y > b.max_y)
        return trace_error(r, "world: MINY %s is greater than MAXY %s", f[2], f[4]);

    percept_world_close(r->world);
    memset(&err, 0, sizeof err);
    st = open_world(r, &b, &err);
    if (st < 0)
        return trace_error(r, "world: %s", open_error_text(r, &err, st, text, sizeof text));
    return 0;
}

/* One add option (sight=R, hearing=R, smell=R, hide=SENSE[,SENSE...]). */
static int add_option(struct replay *r, const char *opt, percept_entity_desc *d, unsigned *seen)
{
    const char *eq = strchr(opt, '=');
    size_t keylen = eq != NULL ? (size_t)(eq - opt) : 0;
    const char *value = eq != NULL ? eq + 1 : NULL;
    percept_sense sense;
    unsigned bit;

    if (eq != NULL && keylen == 4 && memcmp(opt, "hide", 4) == 0) {
        bit = 1u << PERCEPT_SENSE_COUNT;
    } else if (eq != NULL && trace_parse_sense(opt, keylen, &sense) == 0) {
        bit = PERCEPT_SENSE_BIT(sense);
    } else {
        return trace_error(r,
                           "add: unknown option '%s': expected sight=R, hearing=R, smell=R "
                           "or hide=SENSE[,SENSE...]",
                           opt);
    }
    if (*seen & bit)
        return trace_error(r, "add: option '%.*s' given more than once", (int)keylen, opt);
    *seen |= bit;

    if (bit != 1u << PERCEPT_SENSE_COUNT) {
        if (trace_parse_range(value, &d->range[sense]) < 0)
            return trace_error(r, "add: bad range '%s': must be a number >= 0", opt);
        return 0;
    }
    /* hide=SENSE[,SENSE...]: every element must name a sense. */
    for (const char *p = value;;) {
        size_t n = strcspn(p, ",");
        if (trace_parse_sense(p, n, &sense) < 0)
            return trace_error(r, "add: unknown sense '%.*s' in '%s': " SENSE_EXPECTED, (int)n, p,
                               opt);
        d->hidden |= PERCEPT_SENSE_BIT(sense);
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

/* add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE[,SENSE...]] */
static int cmd_add(struct replay *r, char **f, size_t n)
{
    percept_entity_desc d;
    percept_id id;
    unsigned seen = 0;
    int st;

    memset(&d, 0, sizeof d);
    if (get_id(r, "add", f[1], &id) < 0 || get_number(r, "add", "X", f[2], &d.x) < 0 ||
        get_number(r, "add", "Y", f[3], &d.y) < 0)
        return -1;
    for (size_t i = 4; i < n; i++)
        if (add_option(r, f[i], &d, &seen) < 0)
            return -1;

    if (r->first_add_line == 0)
        r->first_add_line = r->line;
    st = percept_add(r->world, id, &d);
    return st < 0 ? library_error(r, "add", id, st) : 0;
}

/* move ID X Y */
static int cmd_move(struct replay *r, char **f)
{
    percept_id id;
    double x, y;
    int st;

    if (get_id(r, "move", f[1], &id) < 0 || get_number(r, "move", "X", f[2], &x) < 0 ||
        get_number(r, "move", "Y", f[3], &y) < 0)
        return -1;
    st = percept_move(r->world, id, x, y);
    return st < 0 ? library_error(r, "move", id, st) : 0;
}

/* remove ID */
static int cmd_remove(struct replay *r, char **f)
{
    percept_id id;
    int st;

    if (get_id(r, "remove", f[1], &id) < 0)
        return -1;
    st = percept_remove(r->world, id);
    return st < 0 ? library_error(r, "remove", id, st) : 0;
}

/* range ID SENSE R */
static int cmd_range(struct replay *r, char **f)
{
    percept_id id;
    percept_sense sense;
    double range;
    int st;

    if (get_id(r, "range", f[1], &id) < 0 || get_sense(r, "range", f[2], &sense) < 0)
        return -1;
    if (trace_parse_range(f[3], &range) < 0)
        return trace_error(r, "range: bad range '%s': must be a number >= 0", f[3]);
    st = percept_set_range(r->world, id, sense, range);
    return st < 0 ? library_error(r, "range", id, st) : 0;
}

/* hide ID SENSE / show ID SENSE */
static int cmd_hidden(struct replay *r, char **f, int hidden)
{
    const char *cmd = hidden ? "hide" : "show";
    percept_id id;
    percept_sense sense;
    int st;

    if (get_id(r, cmd, f[1], &id) < 0 || get_sense(r, cmd, f[2], &sense) < 0)
        return -1;
    st = percept_set_hidden(r->world, id, sense, hidden);
    return st < 0 ? library_error(r, cmd, id, st) : 0;
}

static int run_command(struct replay *r, trace_command kind, char **f, size_t n)
{
    switch (kind) {
    case TRACE_WORLD:
        return cmd_world(r, f);
    case TRACE_ADD:
        return cmd_add(r, f, n);
    case TRACE_MOVE:
        return cmd_move(r, f);
    case TRACE_REMOVE:
        return cmd_remove(r, f);
    case TRACE_RANGE:
        return cmd_range(r, f);
    case TRACE_HIDE:
        return cmd_hidden(r, f, 1);
    case TRACE_SHOW:
        return cmd_hidden(r, f, 0);
    }
    return -1;
}

/* Runs one line (without its line end). Returns 0, or -1 after reporting. */
static int run_line(struct replay *r, char *line)
{
    char *f[TRACE_MAX_FIELDS], msg[256];
    size_t n = trace_split_fields(line, f, TRACE_MAX_FIELDS);
    trace_command command;
    int known = trace_command_of(f, n, &command, msg, sizeof msg);

    if (known < 0)
        return trace_error(r, "%s", msg);
    if (known == 0)
        return 0;
    if (run_command(r, command, f, n) < 0)
        return -1;
    r->commands++;
    return 0;
}

/* Reads and runs every line of the trace. Returns 0, or -1 after reporting. */
static int run_trace(struct replay *r)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int st = 0;

    errno = 0;
    while (st == 0 && (len = getline(&buf, &cap, r->in)) > 0 && !ferror(r->in)) {
        r->line++;
        /* Only the last line can lack its newline. The format allows it (an
         * editor may leave it out), and the independent reference runs it,
         * but a file cut off in "hearing=83" would run as "hearing=8": the
         * line runs, and the reader is warned. */
        int cut = buf[len - 1] != '\n';
        if (!cut)
            buf[--len] = '\0';
        if (len > 0 && buf[len - 1] == '\r')
            buf[--len] = '\0';
        char msg[64];
        st = trace_check_bytes(buf, (size_t)len, msg, sizeof msg) < 0 ? trace_error(r, "%s", msg)
                                                                      : 0;
        if (st == 0)
            st = run_line(r, buf);
        if (st == 0 && cut) {
            fflush(stdout);
            fprintf(stderr,
                    "%s:%lu: warning: the last line has no newline; if the file was cut off, "
                    "this line ran incomplete\n",
                    r->name, r->line);
        }
        errno = 0;
    }
    if (st == 0 && ferror(r->in)) {
        /* No line is at fault: name the place, not an invented line. */
        fflush(stdout);
        fprintf(stderr, PROGRAM ": cannot read trace '%s' after line %lu: %s\n", r->name, r->line,
                errno != 0 ? strerror(errno) : "read error");
        st = -1;
    }
    free(buf);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

static void print_stats(const struct replay *r, double seconds)
{
    double per = r->commands > 0 ? seconds * 1e9 / (double)r->commands : 0.0;
    size_t entities = r->world != NULL ? percept_entity_count(r->world) : 0;

    fprintf(stderr, PROGRAM ": statistics for %s\n", r->name);
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
    fprintf(stderr, "\n  wall time:         %.6f s (%.0f ns per command)\n", seconds, per);
}

/* ------------------------------------------------------------------------ */

/* Reports a trace that cannot be read at all (bad usage); returns its exit status. */
static int trace_open_error(const char *path, const char *reason)
{
    fprintf(stderr, PROGRAM ": cannot open trace '%s': %s\n", path, reason);
    return CLI_EXIT_USAGE;
}

/*
 * Opens the trace: a file, a pipe (a FIFO, "<(cmd)") or standard input. A
 * directory opens, but fails at the first read: refuse it here, like a
 * missing file, rather than report a line it does not have.
 */
static int open_trace(struct replay *r, const char *path)
{
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0;

    r->name = is_stdin ? "<stdin>" : path;
    r->in = is_stdin ? stdin : fopen(path, "r");
    if (r->in == NULL)
        return trace_open_error(path, strerror(errno));
    if (fstat(fileno(r->in), &sb) != 0)
        return trace_open_error(r->name, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return trace_open_error(r->name, strerror(EISDIR));
    if (!is_stdin && !S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode))
        return trace_open_error(r->name, "not a regular file or a pipe");
    return -1;
}

/* Opens the trace and the world. Returns -1 when ready, else an exit status. */
static int setup(struct replay *r, const struct args *a)
{
    percept_error err;
    char text[sizeof err.text + 64];
    int st;

    memset(r, 0, sizeof *r);
    r->args = a;
    if ((st = open_trace(r, a->trace)) >= 0)
        return st;
    memset(&err, 0, sizeof err);
    st = open_world(r, NULL, &err);
    if (st < 0) {
        fprintf(stderr, PROGRAM ": %s%s\n", open_error_text(r, &err, st, text, sizeof text),
                a->config == NULL && a->backend == NULL && st == PERCEPT_EIO
                    ? " (the default config: give --config FILE or --backend NAME)"
                    : "");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

static void teardown(struct replay *r)
{
    percept_world_close(r->world);
    if (r->in != NULL && r->in != stdin)
        fclose(r->in);
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
        status = run_trace(&r) == 0 ? EXIT_SUCCESS : EXIT_TRACE;
        if (a.stats)
            print_stats(&r, cli_now_seconds() - start);
    }
    teardown(&r);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, PROGRAM ": error writing standard output: %s\n", strerror(errno));
        return EXIT_TRACE;
    }
    return status;
}
