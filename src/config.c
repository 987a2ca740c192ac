/*
 * config.c - reads a world's INI configuration with inih. A reader of our
 * own feeds inih line by line so every message can name its line, strips
 * leading blanks (so indented keys are keys, never continuation lines), and
 * refuses what inih would pass over in silence: over-long lines (inih would
 * split them), control characters and NUL bytes (a bare carriage return
 * would join lines), text after a section's ']' (inih drops it).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ini.h>

#include "alloc.h"
#include "decimal.h"
#include "safe_text.h"

/* The fields for programs, cleared: a message names nothing until told. */
static void error_clear_about(percept_error *err)
{
    err->reason = 0;
    err->senses = 0;
    err->section[0] = err->key[0] = err->option[0] = '\0';
}

void pc_error_set(percept_error *err, int status, int line, const char *fmt, ...)
{
    if (!err)
        return;
    err->status = status;
    err->line = line;
    error_clear_about(err);
    size_t at = 0;
    va_list ap;
    va_start(ap, fmt);
    safe_text_vprintf(err->text, sizeof err->text, &at, fmt, ap);
    va_end(ap);
}

static void error_vset_at(percept_error *err, int status, int line, const char *place,
                          const char *fmt, va_list ap)
{
    err->status = status;
    err->line = line;
    error_clear_about(err);
    /* A place too long for the text (a path of thousands of bytes) leaves
     * the reason no room: it is then the empty end of the text. */
    size_t at = 0;
    if (!safe_text_put(err->text, sizeof err->text, &at, place) ||
        !safe_text_put(err->text, sizeof err->text, &at, ": ")) {
        err->reason = (int)at;
        return;
    }
    err->reason = (int)at;
    safe_text_vprintf(err->text, sizeof err->text, &at, fmt, ap);
}

void pc_error_set_at(percept_error *err, int status, int line, const char *place, const char *fmt,
                     ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    error_vset_at(err, status, line, place, fmt, ap);
    va_end(ap);
}

void pc_error_set_key(percept_error *err, int status, const char *source, int line,
                      const char *section, const char *key, unsigned senses, const char *fmt, ...)
{
    if (!err)
        return;
    char place[1024];
    snprintf(place, sizeof place, "%s:%d: key '%s' in [%s]", source, line, key, section);
    va_list ap;
    va_start(ap, fmt);
    error_vset_at(err, status, line, place, fmt, ap);
    va_end(ap);
    pc_error_about(err, section, key, NULL, senses);
}

static int quote_len(const char *s, size_t len, size_t max);

/* Copies what fits, cut on a whole UTF-8 character, always ending the field. */
static void copy_field(char *out, size_t size, const char *s)
{
    s = s ? s : "";
    snprintf(out, size, "%.*s", quote_len(s, strlen(s), size - 1), s);
}

void pc_error_about(percept_error *err, const char *section, const char *key, const char *option,
                    unsigned senses)
{
    if (!err)
        return;
    copy_field(err->section, sizeof err->section, section);
    copy_field(err->key, sizeof err->key, key);
    copy_field(err->option, sizeof err->option, option);
    err->senses = senses;
}

unsigned pc_section_senses(const char *section)
{
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (section && !strcmp(section, percept_sense_name((percept_sense)s)))
            return PERCEPT_SENSE_BIT(s);
    return 0;
}

/* ---------------------------------------------------------------- reading lines */

typedef struct line_source {
    FILE *file;           /* reading a file, or */
    const char *text;     /* reading a string */
    int line;             /* the number of the line last handed to inih */
    int stopped;          /* a line could not be read as text: reading ended there */
    int bad_line;         /* first line the reader itself refused, or 0 */
    char bad_why[160];    /* and why */
    char bad_in[64];      /* the section that line names, or "" */
    int bad_section_line; /* first [section] we do not know, or 0 */
    char bad_section[64];
    int section_line[2 + PERCEPT_SENSE_COUNT]; /* where each known section began, or 0 */
    int repeat_line;                           /* first known section given again, or 0 */
    int repeat_first;                          /* the line it was first given on */
    char repeat_name[16];
    int read_errno; /* errno of a failed read, or 0 */
} line_source;

/* The sections besides the senses' own. */
static const char *const known_sections[] = {"percept", "world"};

/* [world]'s keys, in the order of cfg->bound_lines. */
static const char *const bound_keys[4] = {"min_x", "min_y", "max_x", "max_y"};

/* [world] when the file leaves a bound out. */
static const percept_bounds default_bounds = {0, 0, 1024, 1024};

/* A known section's index in section_line[]: [percept], [world], then the senses; or -1. */
static int section_index(const char *name, size_t n)
{
    const int others = (int)(sizeof known_sections / sizeof known_sections[0]);
    for (int i = 0; i < others; i++)
        if (strlen(known_sections[i]) == n && !strncmp(name, known_sections[i], n))
            return i;
    for (int k = 0; k < PERCEPT_SENSE_COUNT; k++) {
        const char *sense = percept_sense_name((percept_sense)k);
        if (strlen(sense) == n && !strncmp(name, sense, n))
            return others + k;
    }
    return -1;
}

/* How much of the `len` bytes at `s` to quote in at most `max` bytes
 * without cutting a UTF-8 character in two. */
static int quote_len(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return (int)len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--; /* s[max] continues the character before it */
    return (int)max;
}

/* Records the first line the reader refuses, and why. */
static void refuse_line(line_source *src, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse_line(line_source *src, int line, const char *fmt, ...)
{
    if (src->bad_line)
        return;
    src->bad_line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(src->bad_why, sizeof src->bad_why, fmt, ap);
    va_end(ap);
}

/* Checked here rather than in the key handler, which inih never calls for
 * a section without keys: a misspelt empty section must not pass either.
 * inih would merge a section given twice; a second [sight] is likelier a
 * pasted block than intent, and its keys would land on the first one's
 * backend, so it is an error. */
static void check_section(line_source *src, const char *line)
{
    const char *end = strchr(line, ']');
    if (line[0] != '[' || !end)
        return;
    size_t n = (size_t)(end - line - 1);
    const char *rest = end + 1 + strspn(end + 1, " \t");
    if (*rest && *rest != ';' && *rest != '#') {
        /* The message and percept_error.section show the same name. */
        int name = quote_len(line + 1, n, sizeof src->bad_in - 1);
        if (!src->bad_line) /* the refusal below is the first */
            snprintf(src->bad_in, sizeof src->bad_in, "%.*s", name, line + 1);
        int shown = quote_len(rest, strlen(rest), 40);
        refuse_line(src, src->line, "text after [%.*s]: '%.*s%s' (a key goes on a line of its own)",
                    name, line + 1, shown, rest, rest[shown] ? "..." : "");
    }
    int known = section_index(line + 1, n);
    if (known < 0) {
        if (!src->bad_section_line) {
            src->bad_section_line = src->line;
            snprintf(src->bad_section, sizeof src->bad_section, "%.*s",
                     quote_len(line + 1, n, sizeof src->bad_section - 1), line + 1);
        }
    } else if (!src->section_line[known]) {
        src->section_line[known] = src->line;
    } else if (!src->repeat_line) {
        src->repeat_line = src->line;
        src->repeat_first = src->section_line[known];
        snprintf(src->repeat_name, sizeof src->repeat_name, "%.*s", (int)n, line + 1);
    }
}

static int next_char(line_source *src)
{
    if (!src->file)
        return *src->text ? (unsigned char)*src->text++ : EOF;
    int c = getc(src->file);
    if (c == EOF && ferror(src->file) && !src->read_errno)
        src->read_errno = errno ? errno : EIO;
    return c;
}

/* The first control character in `line` (tabs aside), or 0. */
static int control_char(const char *line)
{
    for (const unsigned char *p = (const unsigned char *)line; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return *p;
    return 0;
}

/*
 * inih's fgets-like reader: one line per call, so `line` is the current
 * line. A line that is not text (too long, or holding a NUL byte) ends the
 * reading there: the error is that line's, and a device such as /dev/zero
 * must not be read for ever.
 */
static char *read_line(char *buf, int size, void *stream)
{
    line_source *src = stream;
    int n = 0, read = 0, c;
    if (src->stopped)
        return NULL;
    for (;;) {
        c = next_char(src);
        if (c == EOF) {
            if (n == 0)
                return NULL;
            break;
        }
        if (c == '\0') {
            refuse_line(src, src->line + 1, "a NUL byte (is this a text file?)");
            src->stopped = 1;
            return NULL;
        }
        if (c == '\n')
            break;
        /* inih's buffer is INI_MAX_LINE bytes: the line's text may take all
         * but two, and its end ("\n" or "\r\n") comes beyond them. */
        if (n == size - 1 || (n == size - 2 && c != '\r')) {
            refuse_line(src, src->line + 1, "line too long (at most %d characters)", size - 2);
            src->stopped = 1;
            return NULL;
        }
        buf[n++] = (char)c;
        /* A UTF-8 byte order mark opening the file is dropped as it is read,
         * so that it takes none of the first line's room. */
        if (++read == 3 && src->line == 0 && !memcmp(buf, "\xEF\xBB\xBF", 3))
            n = 0;
    }
    src->line++;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    buf[n] = '\0';
    int ctl = control_char(buf);
    if (ctl) {
        if (ctl == '\r')
            refuse_line(src, src->line,
                        "a carriage return inside the line (old Mac line ends? end lines "
                        "with \\n or \\r\\n)");
        else
            refuse_line(src, src->line, "control character 0x%02x in the line", ctl);
        buf[0] = '\0'; /* inih sees a blank line; we report the error */
        return buf;
    }
    size_t skip = strspn(buf, " \t");
    if (skip)
        memmove(buf, buf + skip, strlen(buf + skip) + 1);
    if (!strncmp(buf, "\xEF\xBB\xBF", 3)) {
        /* inih would skip this one too, on the first line, and what it
         * hides from check_section() with it. */
        refuse_line(src, src->line, "a byte order mark that does not begin the file");
        buf[0] = '\0';
        return buf;
    }
    check_section(src, buf);
    return buf;
}

/* ---------------------------------------------------------------- handling keys */

typedef struct parse_state {
    const percept_allocator *a;
    pc_config *cfg;
    line_source src;
    percept_error *err;
    int failed;    /* first error already recorded */
    int fail_line; /* its line */
    int fail_status;
} parse_state;

/*
 * Records the first failure (later ones are consequences). `section` and
 * `key` say what it is about, either may be NULL. With `named`, the message
 * names both as its place, "SRC:LINE: key 'K' in [S]: REASON"; else its
 * place is "SRC:LINE" and the reason names them if it needs to.
 */
static int record_failure(parse_state *st, int status, const char *section, const char *key,
                          int named, const char *reason)
{
    if (st->failed)
        return 0;
    st->failed = 1;
    st->fail_line = st->src.line;
    st->fail_status = status;
    unsigned senses = pc_section_senses(section);
    if (named) {
        pc_error_set_key(st->err, status, st->cfg->source, st->src.line, section, key, senses, "%s",
                         reason);
        return 0;
    }
    char place[1024];
    snprintf(place, sizeof place, "%s:%d", st->cfg->source, st->src.line);
    pc_error_set_at(st->err, status, st->src.line, place, "%s", reason);
    pc_error_about(st->err, section, key, NULL, senses);
    return 0;
}

/* A failure of the line as a whole (or of memory while reading it), or
 * about a section or a key (either may be NULL) that the reason names. */
static int fail_about(parse_state *st, int status, const char *section, const char *key,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail_about(parse_state *st, int status, const char *section, const char *key,
                      const char *fmt, ...)
{
    char reason[400];
    va_list ap;
    va_start(ap, fmt);
    decimal_vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    return record_failure(st, status, section, key, 0, reason);
}

/* A failure of a key: "SRC:LINE: key 'K' in [S]: WHY". */
static int key_fail(parse_state *st, const char *section, const char *key, const char *why)
{
    return record_failure(st, PERCEPT_ECONFIG, section, key, 1, why);
}

/* A bad value: the message quotes what was read, where a stray comment shows. */
static int value_fail(parse_state *st, const char *section, const char *key, const char *value,
                      const char *why)
{
    char read[96], reason[400];
    pc_describe_value(read, sizeof read, value);
    snprintf(reason, sizeof reason, "%s%s", why, read);
    return key_fail(st, section, key, reason);
}

void pc_describe_value(char *out, size_t size, const char *value)
{
    /* inih ends a value at " ;" only; "# ..." after a value is part of it. */
    const char *hint = strchr(value, '#')          ? "; a comment after a value starts with ' ;'"
                       : decimal_underflows(value) ? ", which is too small for a double: 0"
                                                   : "";
    int shown = quote_len(value, strlen(value), 40);
    snprintf(out, size, " (read '%.*s%s'%s)", shown, value, value[shown] ? "..." : "", hint);
}

/* A plain decimal number within the coordinate limit, the whole value. */
static int parse_number(const char *value, double *out)
{
    double v;
    if (decimal_parse(value, &v) || fabs(v) > PERCEPT_COORD_LIMIT)
        return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *value, int *out)
{
    static const char *const yes[] = {"on", "true", "yes", "1"};
    static const char *const no[] = {"off", "false", "no", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(value, yes[i]))
            return *out = 1, 0;
        if (!strcasecmp(value, no[i]))
            return *out = 0, 0;
    }
    return -1;
}

/* A key given a second time: an error, since a typo'd copy is likelier than intent. */
static int set_twice(parse_state *st, const char *section, const char *key, int first_line)
{
    char why[64];
    snprintf(why, sizeof why, "set twice (first on line %d)", first_line);
    return key_fail(st, section, key, why);
}

/* Records a key's first line; a second setting is an error (see set_twice()). */
static int once(parse_state *st, const char *section, const char *key, int *line)
{
    if (*line)
        return set_twice(st, section, key, *line);
    *line = st->src.line;
    return 1;
}

static int set_string(parse_state *st, char **slot, const char *value)
{
    char *copy = pc_strdup(st->a, value);
    if (!copy)
        return fail_about(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
    pc_free(st->a, *slot);
    *slot = copy;
    return 1;
}

int pc_backend_name_ok(const char *name)
{
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-'))
            return 0;
    return 1;
}

static int set_backend(parse_state *st, const char *section, const char *value, char **slot)
{
    if (!pc_backend_name_ok(value))
        return value_fail(st, section, "backend", value,
                          "a backend name is letters, digits, '_' and '-' (the plugin file is "
                          "NAME.so in the plugin directories)");
    return set_string(st, slot, value);
}

static int handle_percept(parse_state *st, const char *key, const char *value)
{
    pc_config *cfg = st->cfg;
    if (!strcmp(key, "backend")) {
        if (!once(st, "percept", key, &cfg->backend_line))
            return 0;
        return set_backend(st, "percept", value, &cfg->backend);
    }
    if (!strcmp(key, "plugin_dir")) {
        if (!once(st, "percept", key, &cfg->plugin_dir_line))
            return 0;
        if (!*value)
            return key_fail(st, "percept", key, "empty directory name");
        return set_string(st, &cfg->plugin_dir, value);
    }
    if (!strcmp(key, "move_events")) {
        if (!once(st, "percept", key, &cfg->move_events_line))
            return 0;
        if (parse_bool(value, &cfg->move_events))
            return value_fail(st, "percept", key, value,
                              "must be on or off (also true/false, yes/no, 1/0)");
        return 1;
    }
    return key_fail(st, "percept", key, "unknown key (expected backend, plugin_dir, move_events)");
}

static int handle_world(parse_state *st, const char *key, const char *value)
{
    double *fields[4] = {&st->cfg->bounds.min_x, &st->cfg->bounds.min_y, &st->cfg->bounds.max_x,
                         &st->cfg->bounds.max_y};
    for (int i = 0; i < 4; i++) {
        if (strcmp(key, bound_keys[i]))
            continue;
        if (!once(st, "world", key, &st->cfg->bound_lines[i]))
            return 0;
        if (parse_number(value, fields[i])) {
            char limit[32], why[96];
            snprintf(why, sizeof why, "must be a decimal number of magnitude at most %s",
                     decimal_limit_text(limit, sizeof limit, PERCEPT_COORD_LIMIT));
            return value_fail(st, "world", key, value, why);
        }
        return 1;
    }
    return key_fail(st, "world", key, "unknown key (expected min_x, min_y, max_x, max_y)");
}

static int handle_sense(parse_state *st, int s, const char *key, const char *value)
{
    sense_config *sc = &st->cfg->sense[s];
    const char *section = percept_sense_name((percept_sense)s);
    if (!strcmp(key, "backend")) {
        if (!once(st, section, key, &sc->backend_line))
            return 0;
        return set_backend(st, section, value, &sc->backend);
    }
    if (!strcmp(key, "observer_cell_size")) {
        if (!once(st, section, key, &sc->observer_cell_size_line))
            return 0;
        /* Bounded below as the backends' cell sizes are: the grid works
         * with fractions of a cell, which must not underflow to 0. */
        if (parse_number(value, &sc->observer_cell_size) ||
            !(sc->observer_cell_size >= 1 / PERCEPT_COORD_LIMIT)) {
            char low[32], high[32], why[96];
            snprintf(why, sizeof why, "must be a number from %s to %s",
                     decimal_limit_text(low, sizeof low, 1 / PERCEPT_COORD_LIMIT),
                     decimal_limit_text(high, sizeof high, PERCEPT_COORD_LIMIT));
            return value_fail(st, section, key, value, why);
        }
        return 1;
    }
    /* Everything else belongs to the backend, which validates it on creation. */
    for (size_t i = 0; i < sc->param_count; i++)
        if (!strcmp(sc->params[i].key, key))
            return set_twice(st, section, key, sc->params[i].line);
    void *params = sc->params;
    if (pc_grow(st->a, &params, sizeof *sc->params, &sc->param_cap, sc->param_count + 1))
        return fail_about(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
    sc->params = params;
    char *k = pc_strdup(st->a, key);
    char *v = k ? pc_strdup(st->a, value) : NULL;
    if (!v) {
        pc_free(st->a, k);
        return fail_about(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
    }
    sc->params[sc->param_count++] = (percept_backend_param){k, v, st->src.line};
    return 1;
}

static int handle(void *user, const char *section, const char *key, const char *value)
{
    parse_state *st = user;
    if (st->failed)
        return 0;
    if (!*section)
        return fail_about(st, PERCEPT_ECONFIG, NULL, key, "key '%s' before any [section]", key);
    if (!strcmp(section, "percept"))
        return handle_percept(st, key, value);
    if (!strcmp(section, "world"))
        return handle_world(st, key, value);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++)
        if (!strcmp(section, percept_sense_name((percept_sense)s)))
            return handle_sense(st, s, key, value);
    return fail_about(st, PERCEPT_ECONFIG, section, NULL,
                      "unknown section [%s] (expected [percept], [world], [sight], [hearing] or "
                      "[smell])",
                      section);
}

/* ---------------------------------------------------------------- entry point */

/* A relative plugin_dir in a file is relative to the file's own directory. */
static int resolve_plugin_dir(const percept_allocator *a, pc_config *cfg, const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!cfg->plugin_dir || cfg->plugin_dir[0] == '/' || !slash)
        return 0;
    size_t dir_len = (size_t)(slash - path);
    size_t n = dir_len + 1 + strlen(cfg->plugin_dir) + 1;
    char *joined = pc_alloc(a, n);
    if (!joined)
        return -1;
    snprintf(joined, n, "%.*s/%s", (int)dir_len, path, cfg->plugin_dir);
    pc_free(a, cfg->plugin_dir);
    cfg->plugin_dir = joined;
    return 0;
}

int pc_config_parse(const percept_allocator *a, pc_config *cfg, const char *path, const char *text,
                    const char *label, percept_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->move_events = 1;
    cfg->bounds = default_bounds;
    cfg->source = pc_strdup(a, path ? path : label ? label : "<string>");
    if (!cfg->source) {
        pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory reading the configuration");
        return PERCEPT_ENOMEM;
    }

    parse_state st = {.a = a, .cfg = cfg, .err = err};
    if (path) {
        st.src.file = fopen(path, "r");
        if (!st.src.file) {
            pc_error_set(err, PERCEPT_EIO, 0, "cannot open config '%s': %s", path, strerror(errno));
            return PERCEPT_EIO;
        }
    } else {
        st.src.text = text;
    }
    int syntax_line = ini_parse_stream(read_line, &st.src, handle, &st);
    if (st.src.file) {
        int read_error = ferror(st.src.file);
        fclose(st.src.file);
        if (read_error && !st.failed) {
            pc_error_set(err, PERCEPT_EIO, 0, "cannot read config '%s': %s", path,
                         strerror(st.src.read_errno));
            return PERCEPT_EIO;
        }
    }

    /* Report whichever problem comes first in the file. */
    int first_bad = st.failed ? st.fail_line : 0;
    const int found[4] = {st.src.bad_line, syntax_line > 0 ? syntax_line : 0,
                          st.src.bad_section_line, st.src.repeat_line};
    for (int i = 0; i < 4; i++)
        if (found[i] && (!first_bad || found[i] < first_bad))
            first_bad = found[i];
    if (first_bad && (!st.failed || first_bad < st.fail_line)) {
        st.failed = 0;
        st.src.line = first_bad;
        if (first_bad == st.src.bad_line)
            fail_about(&st, PERCEPT_ECONFIG, st.src.bad_in[0] ? st.src.bad_in : NULL, NULL, "%s",
                       st.src.bad_why);
        else if (first_bad == st.src.bad_section_line)
            fail_about(&st, PERCEPT_ECONFIG, st.src.bad_section, NULL,
                       "unknown section [%s] (expected [percept], [world], [sight], [hearing] or "
                       "[smell])",
                       st.src.bad_section);
        else if (first_bad == st.src.repeat_line)
            fail_about(&st, PERCEPT_ECONFIG, st.src.repeat_name, NULL,
                       "section [%s] given again (first on line %d): put its keys in one section",
                       st.src.repeat_name, st.src.repeat_first);
        else
            fail_about(&st, PERCEPT_ECONFIG, NULL, NULL,
                       "syntax error: expected '[section]', 'key = value' or a comment");
    }
    if (st.failed)
        return st.fail_status;

    const percept_bounds *b = &cfg->bounds;
    if (b->min_x > b->max_x || b->min_y > b->max_y) {
        /* bound_lines: min_x, min_y, max_x, max_y. Name the line of the
         * pair's key set last: the other may be the default, set nowhere. */
        int lo = b->min_x > b->max_x ? 0 : 1, hi = lo + 2;
        int lo_line = cfg->bound_lines[lo], hi_line = cfg->bound_lines[hi];
        int line = lo_line > hi_line ? lo_line : hi_line;
        char defaults[96] = "", dmin[32], dmax[32];
        if (!lo_line || !hi_line)
            decimal_snprintf(
                defaults, sizeof defaults, " (a bound not set takes its default: min %s, max %s)",
                decimal_exact_text(dmin, sizeof dmin,
                                   lo == 0 ? default_bounds.min_x : default_bounds.min_y),
                decimal_exact_text(dmax, sizeof dmax,
                                   lo == 0 ? default_bounds.max_x : default_bounds.max_y));
        /* Each bound as it was written, to its last digit: %g would show
         * min_x 1000000.5 and max_x 1000000.25 both as 1e+06. */
        char place[1024], x0[32], x1[32], y0[32], y1[32];
        snprintf(place, sizeof place, "%s:%d: [world]", cfg->source, line);
        pc_error_set_at(err, PERCEPT_ECONFIG, line, place,
                        "the bounds are inverted (min_x %s, max_x %s, min_y %s, max_y %s): each "
                        "min must not exceed its max%s",
                        decimal_exact_text(x0, sizeof x0, b->min_x),
                        decimal_exact_text(x1, sizeof x1, b->max_x),
                        decimal_exact_text(y0, sizeof y0, b->min_y),
                        decimal_exact_text(y1, sizeof y1, b->max_y), defaults);
        pc_error_about(err, "world", bound_keys[lo_line > hi_line ? lo : hi], NULL, 0);
        return PERCEPT_ECONFIG;
    }
    if (resolve_plugin_dir(a, cfg, path)) {
        pc_error_set(err, PERCEPT_ENOMEM, 0, "out of memory reading the configuration");
        return PERCEPT_ENOMEM;
    }
    return PERCEPT_OK;
}

void pc_config_free(const percept_allocator *a, pc_config *cfg)
{
    pc_free(a, cfg->source);
    pc_free(a, cfg->plugin_dir);
    pc_free(a, cfg->backend);
    for (int s = 0; s < PERCEPT_SENSE_COUNT; s++) {
        sense_config *sc = &cfg->sense[s];
        pc_free(a, sc->backend);
        for (size_t i = 0; i < sc->param_count; i++) {
            pc_free(a, (char *)sc->params[i].key);
            pc_free(a, (char *)sc->params[i].value);
        }
        pc_free(a, sc->params);
    }
    memset(cfg, 0, sizeof *cfg);
}
