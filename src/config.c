/*
 * config.c - reads a world's INI configuration with inih. The text is read
 * whole first (at most CONFIG_MAX_BYTES), then handed to inih line by line
 * by a reader of our own, so that every message can name its line and what
 * inih would pass over in silence is refused: over-long lines (inih would
 * split them), control characters and NUL bytes (a bare carriage return
 * would join lines), text after a section's ']', unknown or repeated
 * sections. Leading blanks are stripped, so indented keys are keys.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ini.h>

#include "alloc.h"
#include "decimal.h"
#include "message.h"
#include "pair_list.h" /* PAIR_SLOT_LIMIT: the most entities a world holds */

/* pc_error() with its arguments as a va_list; returns status. */
static int verror(percept_error *err, int status, const char *source, int line, const char *section,
                  const char *key, const char *fmt, va_list ap)
{
    if (!err)
        return status;
    char place[512] = "", reason[512];
    if (source && line)
        snprintf(place, sizeof place, "%s:%d: ", source, line);
    else if (source)
        snprintf(place, sizeof place, "%s: ", source);
    size_t n = strlen(place);
    if (key && section)
        snprintf(place + n, sizeof place - n, "key '%s' in [%s]: ", key, section);
    else if (section)
        snprintf(place + n, sizeof place - n, "[%s]: ", section);
    decimal_vsnprintf(reason, sizeof reason, fmt, ap);
    err->status = status;
    err->line = line;
    snprintf(err->section, sizeof err->section, "%s", section ? section : "");
    snprintf(err->key, sizeof err->key, "%s", key ? key : "");
    message_format(err->text, sizeof err->text, "%s%s", place, reason);
    return status;
}

int pc_error(percept_error *err, int status, const char *source, int line, const char *section,
             const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(err, status, source, line, section, key, fmt, ap);
    va_end(ap);
    return status;
}

/* ---------------------------------------------------------------- reading lines */

/* [percept], [world], then the senses: the sections a config may have. */
#define SECTION_COUNT (2 + PERCEPT_MAX_SENSES)

static const char *section_name(const pc_config *cfg, int i)
{
    return i == 0 ? "percept" : i == 1 ? "world" : cfg->sense_names[i - 2];
}

static int section_count(const pc_config *cfg)
{
    return 2 + cfg->sense_count;
}

typedef struct parse_state {
    const percept_allocator *a;
    pc_config *cfg;
    percept_error *err;
    const char *next, *end; /* the text not yet handed to inih */
    int line;               /* the number of the line last handed to inih */
    int section_line[SECTION_COUNT];
    /* The first pass reads [world] senses alone, so that the sections of
     * the senses are known wherever it stands; it reports nothing. */
    int prepass;
    int failed;    /* the first failure is recorded in *err; reading stops */
    int fail_line; /* its line */
    int fail_status;
} parse_state;

/* Records the first failure, at the current line; returns 0 for inih. */
__attribute__((format(printf, 5, 6))) static int
fail(parse_state *st, int status, const char *section, const char *key, const char *fmt, ...)
{
    if (st->failed)
        return 0;
    st->failed = 1;
    if (st->prepass)
        return 0;
    st->fail_line = st->line;
    st->fail_status = status;
    va_list ap;
    va_start(ap, fmt);
    verror(st->err, status, st->cfg->source, st->line, section, key, fmt, ap);
    va_end(ap);
    return 0;
}

/* Checked here rather than in the key handler, which inih never calls for
 * a section without keys: a misspelt empty section must not pass either. A
 * second [sight] is likelier a pasted block than intent, and inih would
 * merge the two, so it is an error. */
static void check_section(parse_state *st, const char *line)
{
    const char *close = strchr(line, ']');
    if (st->prepass || line[0] != '[' || !close)
        return;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(close - line - 1), line + 1);
    const char *rest = close + 1 + strspn(close + 1, " \t");
    if (*rest && *rest != ';' && *rest != '#') {
        fail(st, PERCEPT_ECONFIG, name, NULL,
             "text after ']': '%.40s' (a key goes on its own line)", rest);
        return;
    }
    char expected[400] = "";
    for (int i = 0; i < section_count(st->cfg); i++) {
        const char *known = section_name(st->cfg, i);
        size_t n = strlen(expected);
        snprintf(expected + n, sizeof expected - n, "%s[%s]", i ? ", " : "", known);
        if (strcmp(name, known))
            continue;
        if (st->section_line[i])
            fail(st, PERCEPT_ECONFIG, name, NULL, "given again (first on line %d)",
                 st->section_line[i]);
        st->section_line[i] = st->line;
        return;
    }
    fail(st, PERCEPT_ECONFIG, name, NULL, "unknown section (expected %s)", expected);
}

/* inih's fgets-like reader: one line per call, so st->line is the line inih works on. */
static char *read_line(char *buf, int size, void *stream)
{
    parse_state *st = stream;
    if (st->failed || st->next == st->end)
        return NULL;
    const char *start = st->next;
    const char *nl = memchr(start, '\n', (size_t)(st->end - start));
    const char *stop = nl ? nl : st->end;
    st->next = nl ? nl + 1 : st->end;
    st->line++;
    if (st->line == 1 && stop - start >= 3 && !memcmp(start, "\xEF\xBB\xBF", 3))
        start += 3; /* a byte order mark opening the file */
    if (stop > start && stop[-1] == '\r')
        stop--;
    size_t n = (size_t)(stop - start);
    /* inih keeps room for the line end and its NUL. */
    if (n > (size_t)size - 2)
        fail(st, PERCEPT_ECONFIG, NULL, NULL, "line too long (at most %d characters)", size - 2);
    for (size_t i = 0; i < n && !st->failed; i++) {
        unsigned char c = (unsigned char)start[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            fail(st, PERCEPT_ECONFIG, NULL, NULL, "control character 0x%02x in the line", c);
    }
    if (st->failed)
        return NULL;
    size_t skip = strspn(start, " \t");
    skip = skip < n ? skip : n;
    memcpy(buf, start + skip, n - skip);
    buf[n - skip] = '\0';
    check_section(st, buf);
    return st->failed ? NULL : buf;
}

/* ---------------------------------------------------------------- handling keys */

/* A plain decimal number within the coordinate limit, the whole value. */
static int parse_number(const char *value, double *out)
{
    return decimal_parse(value, out) || fabs(*out) > PERCEPT_COORD_LIMIT ? -1 : 0;
}

static int parse_bool(const char *value, int *out)
{
    static const char *const words[] = {"off", "on", "false", "true", "no", "yes", "0", "1"};
    for (int i = 0; i < 8; i++)
        if (!strcasecmp(value, words[i]))
            return *out = i % 2, 0;
    return -1;
}

/* Records a key's first line; a second setting is an error: a typo'd copy
 * is likelier than intent. */
static int once(parse_state *st, const char *section, const char *key, int *line)
{
    if (*line)
        return fail(st, PERCEPT_ECONFIG, section, key, "set twice (first on line %d)", *line);
    *line = st->line;
    return 1;
}

/* The key is set once: *slot holds nothing yet. */
static int set_string(parse_state *st, char **slot, const char *value)
{
    *slot = pc_strdup(st->a, value);
    return *slot ? 1 : fail(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
}

int pc_backend_name_ok(const char *name)
{
    static const char allowed[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-";
    return *name && !name[strspn(name, allowed)];
}

static int set_backend(parse_state *st, const char *section, const char *value, char **slot)
{
    if (!pc_backend_name_ok(value))
        return fail(st, PERCEPT_ECONFIG, section, "backend",
                    "not a backend name: letters, digits, '_' and '-' (read '%.40s')", value);
    return set_string(st, slot, value);
}

static int handle_percept(parse_state *st, const char *key, const char *value)
{
    pc_config *cfg = st->cfg;
    if (!strcmp(key, "backend"))
        return once(st, "percept", key, &cfg->backend_line) &&
               set_backend(st, "percept", value, &cfg->backend);
    if (!strcmp(key, "plugin_dir")) {
        if (!once(st, "percept", key, &cfg->plugin_dir_line))
            return 0;
        if (!*value)
            return fail(st, PERCEPT_ECONFIG, "percept", key, "empty directory name");
        return set_string(st, &cfg->plugin_dir, value);
    }
    if (!strcmp(key, "move_events")) {
        if (!once(st, "percept", key, &cfg->move_events_line))
            return 0;
        if (parse_bool(value, &cfg->move_events))
            return fail(st, PERCEPT_ECONFIG, "percept", key, "must be on or off (read '%.40s')",
                        value);
        return 1;
    }
    return fail(st, PERCEPT_ECONFIG, "percept", key,
                "unknown key (expected backend, plugin_dir, move_events)");
}

static const char *const bound_keys[4] = {"min_x", "min_y", "max_x", "max_y"};

static int ascii_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether `name` can name a sense: a letter, then letters, digits, '_' or
 * '-', at most 31 bytes, and not a section of its own. */
static int sense_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > 31 || !ascii_letter(name[0]))
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!ascii_letter(name[i]) && !(name[i] >= '0' && name[i] <= '9') && name[i] != '_' &&
            name[i] != '-')
            return 0;
    return !(len == 7 && !memcmp(name, "percept", 7)) && !(len == 5 && !memcmp(name, "world", 5));
}

/* [world] senses: 1 to PERCEPT_MAX_SENSES distinct names, which become the
 * config's senses only when all are good. Read by both passes: the first
 * learns the names, the second reports what is wrong with them. */
static int read_senses(parse_state *st, const char *value)
{
    char names[PERCEPT_MAX_SENSES][32];
    int n = 0;
    for (const char *p = value + strspn(value, " \t"); *p; p += strspn(p, " \t")) {
        size_t len = strcspn(p, " \t");
        if (n == PERCEPT_MAX_SENSES)
            return fail(st, PERCEPT_ECONFIG, "world", "senses",
                        "more than %d senses: '%.*s' would be the %dth", PERCEPT_MAX_SENSES,
                        (int)(len < 40 ? len : 40), p, PERCEPT_MAX_SENSES + 1);
        if (!sense_name_ok(p, len))
            return fail(st, PERCEPT_ECONFIG, "world", "senses",
                        "'%.*s' is not a sense name: a letter, then letters, digits, '_' or "
                        "'-', at most 31 bytes, not percept or world",
                        (int)(len < 40 ? len : 40), p);
        snprintf(names[n], sizeof names[n], "%.*s", (int)len, p);
        for (int i = 0; i < n; i++)
            if (!strcmp(names[i], names[n]))
                return fail(st, PERCEPT_ECONFIG, "world", "senses", "'%s' is named twice",
                            names[n]);
        n++;
        p += len;
    }
    if (n == 0)
        return fail(st, PERCEPT_ECONFIG, "world", "senses", "names no sense (1 to %d)",
                    PERCEPT_MAX_SENSES);
    memcpy(st->cfg->sense_names, names, sizeof names);
    st->cfg->sense_count = n;
    return 1;
}

static int handle_world(parse_state *st, const char *key, const char *value)
{
    pc_config *cfg = st->cfg;
    double *fields[4] = {&cfg->bounds.min_x, &cfg->bounds.min_y, &cfg->bounds.max_x,
                         &cfg->bounds.max_y};
    for (int i = 0; i < 4; i++) {
        if (strcmp(key, bound_keys[i]))
            continue;
        if (!once(st, "world", key, &cfg->bound_lines[i]))
            return 0;
        if (parse_number(value, fields[i]))
            return fail(st, PERCEPT_ECONFIG, "world", key,
                        "must be a decimal number of magnitude at most %g (read '%.40s')",
                        PERCEPT_COORD_LIMIT, value);
        return 1;
    }
    if (!strcmp(key, "senses"))
        return once(st, "world", key, &cfg->senses_line) && read_senses(st, value);
    if (!strcmp(key, "reserve")) {
        double n;
        if (!once(st, "world", key, &cfg->reserve_line))
            return 0;
        if (decimal_parse(value, &n) || n < 0 || n > PAIR_SLOT_LIMIT || n != floor(n))
            return fail(st, PERCEPT_ECONFIG, "world", key,
                        "must be a whole number from 0 to %lu (read '%.40s')",
                        (unsigned long)PAIR_SLOT_LIMIT, value);
        cfg->reserve = (size_t)n;
        return 1;
    }
    if (!strcmp(key, "threads")) {
        double n;
        if (!once(st, "world", key, &cfg->threads_line))
            return 0;
        if (decimal_parse(value, &n) || n < 1 || n > PERCEPT_MAX_THREADS || n != floor(n))
            return fail(st, PERCEPT_ECONFIG, "world", key,
                        "must be a whole number from 1 to %d (read '%.40s')", PERCEPT_MAX_THREADS,
                        value);
        cfg->threads = (unsigned)n;
        return 1;
    }
    return fail(st, PERCEPT_ECONFIG, "world", key,
                "unknown key (expected min_x, min_y, max_x, max_y, reserve, senses, threads)");
}

static int handle_sense(parse_state *st, int s, const char *key, const char *value)
{
    sense_config *sc = &st->cfg->sense[s];
    const char *section = st->cfg->sense_names[s];
    if (!strcmp(key, "backend"))
        return once(st, section, key, &sc->backend_line) &&
               set_backend(st, section, value, &sc->backend);
    if (!strcmp(key, "observer_cell_size")) {
        if (!once(st, section, key, &sc->observer_cell_size_line))
            return 0;
        /* Bounded below as the backends' cell sizes are: the grid works
         * with fractions of a cell, which must not underflow to 0. */
        if (parse_number(value, &sc->observer_cell_size) ||
            !(sc->observer_cell_size >= 1 / PERCEPT_COORD_LIMIT))
            return fail(st, PERCEPT_ECONFIG, section, key,
                        "must be a number from %g to %g (read '%.40s')", 1 / PERCEPT_COORD_LIMIT,
                        PERCEPT_COORD_LIMIT, value);
        return 1;
    }
    /* Everything else belongs to the backend, which validates it on creation. */
    for (size_t i = 0; i < sc->param_count; i++)
        if (!strcmp(sc->params[i].key, key))
            return once(st, section, key, &sc->params[i].line);
    void *params = sc->params;
    if (pc_grow(st->a, &params, sizeof *sc->params, &sc->param_cap, sc->param_count + 1))
        return fail(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
    sc->params = params;
    char *k = pc_strdup(st->a, key);
    char *v = k ? pc_strdup(st->a, value) : NULL;
    /* Kept even when incomplete: pc_config_free() frees what is there. */
    sc->params[sc->param_count++] = (percept_backend_param){k, v, st->line};
    return v ? 1 : fail(st, PERCEPT_ENOMEM, NULL, NULL, "out of memory");
}

static int handle(void *user, const char *section, const char *key, const char *value)
{
    parse_state *st = user;
    if (st->failed)
        return 0;
    if (st->prepass) {
        if (!strcmp(section, "world") && !strcmp(key, "senses") && !st->cfg->senses_line) {
            st->cfg->senses_line = st->line;
            read_senses(st, value);
        }
        return 1;
    }
    if (!*section)
        return fail(st, PERCEPT_ECONFIG, NULL, key, "key '%s' before any [section]", key);
    if (!strcmp(section, "percept"))
        return handle_percept(st, key, value);
    if (!strcmp(section, "world"))
        return handle_world(st, key, value);
    for (int s = 0; s < st->cfg->sense_count; s++)
        if (!strcmp(section, st->cfg->sense_names[s]))
            return handle_sense(st, s, key, value);
    return 0; /* check_section() refused the section */
}

/* ---------------------------------------------------------------- entry point */

/*
 * The file's text, read whole into *text (*len bytes). Opened without
 * blocking, as plugins are: a FIFO in the config's place must not hang
 * world creation; only a regular file of at most CONFIG_MAX_BYTES is read.
 */
static int read_file(const percept_allocator *a, const char *path, char **text, size_t *len,
                     percept_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    int rc = PERCEPT_OK;
    size_t got = 0;
    if (fd < 0 || fstat(fd, &st))
        rc = pc_error(err, PERCEPT_EIO, path, 0, NULL, NULL, "cannot open: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = pc_error(err, PERCEPT_EIO, path, 0, NULL, NULL, "not a regular file");
    else if (st.st_size > (off_t)CONFIG_MAX_BYTES)
        rc = pc_error(err, PERCEPT_ECONFIG, path, 0, NULL, NULL,
                      "larger than 1 MiB: not a configuration");
    else if (!(*text = pc_alloc(a, (size_t)st.st_size + 1)))
        rc = pc_error(err, PERCEPT_ENOMEM, path, 0, NULL, NULL, "out of memory");
    while (!rc && got < (size_t)st.st_size) {
        ssize_t n = read(fd, *text + got, (size_t)st.st_size - got);
        if (n > 0)
            got += (size_t)n;
        else if (n == 0)
            break; /* the file shrank: read what is there */
        else if (errno != EINTR)
            rc =
                pc_error(err, PERCEPT_EIO, path, 0, NULL, NULL, "cannot read: %s", strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    *len = got;
    return rc;
}

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

static int check_bounds(const pc_config *cfg, percept_error *err)
{
    const percept_bounds *b = &cfg->bounds;
    for (int axis = 0; axis < 2; axis++) {
        double lo = axis ? b->min_y : b->min_x, hi = axis ? b->max_y : b->max_x;
        if (lo <= hi)
            continue;
        /* Name the key set last: the other may be the default, set nowhere. */
        int k = cfg->bound_lines[axis] > cfg->bound_lines[axis + 2] ? axis : axis + 2;
        return pc_error(err, PERCEPT_ECONFIG, cfg->source, cfg->bound_lines[k], "world",
                        bound_keys[k], "the bounds are inverted: %s %.17g is above %s %.17g",
                        bound_keys[axis], lo, bound_keys[axis + 2], hi);
    }
    return PERCEPT_OK;
}

/* Hands the text to inih; the first error in it wins. */
static int parse_text(const percept_allocator *a, pc_config *cfg, const char *text, size_t len,
                      percept_error *err)
{
    /* The lines before a NUL byte are read, so that an earlier error comes first. */
    const char *nul = memchr(text, '\0', len);
    const char *end = nul ? nul : text + len;
    parse_state pre = {.a = a, .cfg = cfg, .next = text, .end = end, .prepass = 1};
    ini_parse_stream(read_line, &pre, handle, &pre);
    cfg->senses_line = 0; /* the second pass sees the key again */
    parse_state st = {.a = a, .cfg = cfg, .err = err, .next = text, .end = end};
    int syntax_line = ini_parse_stream(read_line, &st, handle, &st);
    if (nul && !st.failed) {
        st.line = 1;
        for (const char *p = text; p < nul; p++)
            st.line += *p == '\n';
        fail(&st, PERCEPT_ECONFIG, NULL, NULL, "a NUL byte (is this a text file?)");
    }
    /* inih goes on past a line it cannot parse. */
    if (syntax_line > 0 && (!st.failed || syntax_line < st.fail_line)) {
        st.failed = 0;
        st.line = syntax_line;
        fail(&st, PERCEPT_ECONFIG, NULL, NULL,
             "syntax error: expected '[section]', 'key = value' or a comment");
    }
    return st.failed ? st.fail_status : PERCEPT_OK;
}

int pc_config_parse(const percept_allocator *a, pc_config *cfg, const char *path, const char *text,
                    const char *label, percept_error *err)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->move_events = 1;
    cfg->threads = 1;
    static const char *const default_senses[] = {"sight", "hearing", "smell"};
    for (int s = 0; s < 3; s++)
        snprintf(cfg->sense_names[s], sizeof cfg->sense_names[s], "%s", default_senses[s]);
    cfg->sense_count = 3;
    cfg->bounds = (percept_bounds){0, 0, 1024, 1024};
    cfg->source = pc_strdup(a, path ? path : label ? label : "<string>");
    if (!cfg->source)
        return pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL,
                        "out of memory reading the config");
    char *file_text = NULL;
    size_t len = 0;
    int rc = PERCEPT_OK;
    if (path)
        rc = read_file(a, path, &file_text, &len, err);
    else if ((len = strnlen(text, CONFIG_MAX_BYTES + 1)) > CONFIG_MAX_BYTES)
        rc = pc_error(err, PERCEPT_ECONFIG, cfg->source, 0, NULL, NULL,
                      "larger than 1 MiB: not a configuration");
    if (!rc)
        rc = parse_text(a, cfg, path ? file_text : text, len, err);
    pc_free(a, file_text);
    if (!rc)
        rc = check_bounds(cfg, err);
    if (!rc && resolve_plugin_dir(a, cfg, path))
        rc = pc_error(err, PERCEPT_ENOMEM, NULL, 0, NULL, NULL, "out of memory reading the config");
    return rc;
}

void pc_config_free(const percept_allocator *a, pc_config *cfg)
{
    pc_free(a, cfg->source);
    pc_free(a, cfg->plugin_dir);
    pc_free(a, cfg->backend);
    for (int s = 0; s < PERCEPT_MAX_SENSES; s++) {
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
