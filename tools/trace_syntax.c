/*
 * trace_syntax.c - reading a trace line by line and checking what each line
 * says (see trace_syntax.h). A command is a row of `commands`: its name, its
 * number of fields and the function that reads them.
 */
#include "trace_syntax.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The most fields a line can have: add ID X Y and its four options. */
#define MAX_FIELDS 8

#define SENSE_EXPECTED "expected sight, hearing or smell"

/* Splits s in place at spaces and tabs; returns the field count (only the
 * first max are stored). */
static size_t split_fields(char *s, char **fields, size_t max)
{
    size_t n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            return n;
        if (n < max)
            fields[n] = s;
        n++;
        while (*s != '\0' && *s != ' ' && *s != '\t')
            s++;
        if (*s != '\0')
            *s++ = '\0';
    }
}

/* An ID: decimal digits only, 0 .. 4294967295. */
static int parse_id(const char *s, percept_id *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (uint64_t)(*s - '0')) > UINT32_MAX)
            return -1;
    }
    *out = (percept_id)v;
    return 0;
}

/* A finite decimal number. The character check keeps out what strtod would
 * also take: hex, inf, nan. */
static int parse_number(const char *s, double *out)
{
    char *end;
    if (*s == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    *out = strtod(s, &end);
    return *end != '\0' || !isfinite(*out) ? -1 : 0;
}

/* A range: a finite number >= 0, -0 taken as 0. */
static int parse_range(const char *s, double *out)
{
    if (parse_number(s, out) < 0 || !(*out >= 0))
        return -1;
    *out += 0.0;
    return 0;
}

/* A sense name, from the n bytes at s. */
static int parse_sense(const char *s, size_t n, percept_sense *out)
{
    for (int i = 0; i < PERCEPT_SENSE_COUNT; i++) {
        const char *name = percept_sense_name((percept_sense)i);
        if (strlen(name) == n && memcmp(name, s, n) == 0) {
            *out = (percept_sense)i;
            return 0;
        }
    }
    return -1;
}

static int fault(trace_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Notes in r->msg what is wrong with the line; returns -1. */
static int fault(trace_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/*
 * The n bytes at s as a message quotes a field, in r->shown[k] (k 0 or 1):
 * cut to TRACE_FIELD_SHOWN characters and "...", so that a message stays
 * short however long the line, and a byte outside ASCII as \xNN, so that a
 * terminal is never handed a broken UTF-8 sequence or a bidirectional
 * override from a file it did not write.
 */
static const char *shown(trace_reader *r, int k, const char *s, size_t n)
{
    char *out = r->shown[k];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t width = c < 0x80 ? 1 : 4;
        if (len + width > TRACE_FIELD_SHOWN) {
            memcpy(out + len, "...", 4);
            return out;
        }
        if (c < 0x80)
            out[len] = (char)c;
        else
            snprintf(out + len, 5, "\\x%02x", c);
        len += width;
    }
    out[len] = '\0';
    return out;
}

static const char *field(trace_reader *r, int k, const char *s)
{
    return shown(r, k, s, strlen(s));
}

static int get_id(trace_reader *r, const char *cmd, const char *s, percept_id *id)
{
    if (parse_id(s, id) < 0)
        return fault(r, "%s: bad ID '%s': must be a decimal integer in 0..4294967295", cmd,
                     field(r, 0, s));
    return 0;
}

static int get_number(trace_reader *r, const char *cmd, const char *what, const char *s, double *v)
{
    if (parse_number(s, v) < 0)
        return fault(r, "%s: bad %s '%s': must be a finite decimal number", cmd, what,
                     field(r, 0, s));
    return 0;
}

static int get_sense(trace_reader *r, const char *cmd, const char *s, percept_sense *sense)
{
    if (parse_sense(s, strlen(s), sense) < 0)
        return fault(r, "%s: unknown sense '%s': " SENSE_EXPECTED, cmd, field(r, 0, s));
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Commands: each reads the fields f[1..n-1] of its line into *out.          */

/* move ID X Y (and the start of add) */
static int read_move(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)n;
    if (get_id(r, f[0], f[1], &out->id) < 0 || get_number(r, f[0], "X", f[2], &out->desc.x) < 0)
        return -1;
    return get_number(r, f[0], "Y", f[3], &out->desc.y);
}

/* One option of add: sight=R, hearing=R, smell=R or hide=SENSE[,SENSE...],
 * each at most once (`seen`). A range's limit is the library's to check. */
static int add_option(trace_reader *r, const char *opt, percept_entity_desc *d, unsigned *seen)
{
    const char *eq = strchr(opt, '=');
    size_t keylen = eq != NULL ? (size_t)(eq - opt) : 0;
    percept_sense sense = PERCEPT_SIGHT;
    unsigned hide_bit = 1u << PERCEPT_SENSE_COUNT, bit;

    if (eq != NULL && keylen == 4 && memcmp(opt, "hide", 4) == 0)
        bit = hide_bit;
    else if (eq != NULL && parse_sense(opt, keylen, &sense) == 0)
        bit = PERCEPT_SENSE_BIT(sense);
    else
        return fault(r,
                     "add: unknown option '%s': expected sight=R, hearing=R, smell=R or "
                     "hide=SENSE[,SENSE...]",
                     field(r, 0, opt));
    if (*seen & bit)
        return fault(r, "add: option '%.*s' given more than once", (int)keylen, opt);
    *seen |= bit;
    if (bit != hide_bit) {
        if (parse_range(eq + 1, &d->range[sense]) < 0)
            return fault(r, "add: bad range '%s': must be a number >= 0", field(r, 0, opt));
        return 0;
    }
    for (const char *p = eq + 1;;) {
        size_t len = strcspn(p, ",");
        if (parse_sense(p, len, &sense) < 0)
            return fault(r, "add: unknown sense '%s' in '%s': " SENSE_EXPECTED, shown(r, 0, p, len),
                         field(r, 1, opt));
        d->hidden |= PERCEPT_SENSE_BIT(sense);
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE,...] */
static int read_add(trace_reader *r, char **f, size_t n, trace_line *out)
{
    unsigned seen = 0;
    if (read_move(r, f, n, out) < 0)
        return -1;
    for (size_t i = 4; i < n; i++)
        if (add_option(r, f[i], &out->desc, &seen) < 0)
            return -1;
    if (r->first_add_line == 0)
        r->first_add_line = r->line;
    return 0;
}

/* remove ID */
static int read_remove(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)n;
    return get_id(r, f[0], f[1], &out->id);
}

/* range ID SENSE R */
static int read_range(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)n;
    if (get_id(r, f[0], f[1], &out->id) < 0 || get_sense(r, f[0], f[2], &out->sense) < 0)
        return -1;
    if (parse_range(f[3], &out->range) < 0)
        return fault(r, "range: bad range '%s': must be a number >= 0", field(r, 0, f[3]));
    return 0;
}

/* hide ID SENSE, show ID SENSE */
static int read_hidden(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)n;
    if (get_id(r, f[0], f[1], &out->id) < 0)
        return -1;
    return get_sense(r, f[0], f[2], &out->sense);
}

/* world MINX MINY MAXX MAXY: before the first add, within the coordinate
 * limit, MIN <= MAX. */
static int read_world(trace_reader *r, char **f, size_t n, trace_line *out)
{
    static const char *const name[4] = {"MINX", "MINY", "MAXX", "MAXY"};
    double v[4];

    (void)n;
    if (r->first_add_line != 0)
        return fault(r, "world: must come before the first add (line %lu)", r->first_add_line);
    for (int i = 0; i < 4; i++)
        if (get_number(r, "world", name[i], f[i + 1], &v[i]) < 0)
            return -1;
    for (int i = 0; i < 4; i++)
        if (fabs(v[i]) > PERCEPT_COORD_LIMIT)
            return fault(r,
                         "world: %s %s is beyond the coordinate limit: must be within "
                         "[-1e15, 1e15]",
                         name[i], field(r, 0, f[i + 1]));
    for (int i = 0; i < 2; i++)
        if (v[i] > v[i + 2])
            return fault(r, "world: %s %s is greater than %s %s", name[i], field(r, 0, f[i + 1]),
                         name[i + 2], field(r, 1, f[i + 3]));
    out->bounds = (percept_bounds){v[0], v[1], v[2], v[3]};
    return 0;
}

static const struct {
    const char *name;
    trace_command command;
    size_t min_fields, max_fields; /* the command's name included */
    const char *usage;
    int (*read)(trace_reader *r, char **f, size_t n, trace_line *out);
} commands[] = {
    {"move", TRACE_MOVE, 4, 4, "move ID X Y", read_move},
    {"add", TRACE_ADD, 4, MAX_FIELDS, "add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE,...]",
     read_add},
    {"remove", TRACE_REMOVE, 2, 2, "remove ID", read_remove},
    {"range", TRACE_RANGE, 4, 4, "range ID SENSE R", read_range},
    {"hide", TRACE_HIDE, 3, 3, "hide ID SENSE", read_hidden},
    {"show", TRACE_SHOW, 3, 3, "show ID SENSE", read_hidden},
    {"world", TRACE_WORLD, 5, 5, "world MINX MINY MAXX MAXY", read_world},
};

int trace_parse_line(trace_reader *r, trace_line *out)
{
    char *f[MAX_FIELDS];

    memset(out, 0, sizeof *out);
    /* A control character other than tab (a stray CR, a NUL) would end up
     * inside fields and messages. */
    for (size_t i = 0; i < r->text_len; i++) {
        unsigned char c = (unsigned char)r->text[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fault(r, "control character 0x%02x in column %zu", c, i + 1);
    }
    if (r->too_long)
        return fault(r, "line longer than %d bytes", TRACE_LINE_MAX);
    size_t n = split_fields(r->text, f, MAX_FIELDS);
    if (n == 0 || f[0][0] == '#')
        return 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(f[0], commands[i].name) != 0)
            continue;
        if (n < commands[i].min_fields || n > commands[i].max_fields)
            return fault(r, "%s: wrong number of fields (%zu): expected '%s'", f[0], n,
                         commands[i].usage);
        out->command = commands[i].command;
        return commands[i].read(r, f, n, out) < 0 ? -1 : 1;
    }
    return fault(r, "unknown command '%s': expected world, add, move, remove, range, hide or show",
                 field(r, 0, f[0]));
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

const char *trace_open(trace_reader *r, const char *path)
{
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0, err = 0;

    memset(r, 0, sizeof *r);
    r->name = is_stdin ? "<stdin>" : path;
    r->in = is_stdin ? stdin : fopen(path, "r");
    if (r->in == NULL || fstat(fileno(r->in), &sb) != 0)
        err = errno;
    else if (S_ISDIR(sb.st_mode))
        err = EISDIR; /* it opens, and would fail at the first read */
    if (err == 0)
        return NULL;
    trace_close(r);
    return strerror(err);
}

void trace_close(trace_reader *r)
{
    if (r->in != NULL && r->in != stdin)
        fclose(r->in);
    r->in = NULL;
    free(r->text);
    r->text = NULL;
}

int trace_read_line(trace_reader *r)
{
    size_t len = 0;
    int c = EOF;

    if (r->text == NULL && (r->text = malloc(TRACE_LINE_MAX + 1)) == NULL) {
        r->read_errno = ENOMEM;
        return -1;
    }
    r->too_long = 0;
    errno = 0;
    flockfile(r->in);
    while (len < TRACE_LINE_MAX && (c = getc_unlocked(r->in)) != EOF && c != '\n')
        r->text[len++] = (char)c;
    if (len == TRACE_LINE_MAX && c != '\n' && c != EOF) {
        c = getc_unlocked(r->in); /* the line may end right there, or after a CR */
        if (c == '\r')
            c = getc_unlocked(r->in);
        r->too_long = c != '\n' && c != EOF;
    }
    funlockfile(r->in);
    if (ferror(r->in)) { /* a line cut short by a read error is not run */
        r->read_errno = errno;
        return -1;
    }
    if (len == 0 && c == EOF)
        return 0;
    r->line++;
    /* A UTF-8 byte order mark, as some editors write, is skipped. */
    if (r->line == 1 && len >= 3 && memcmp(r->text, "\xef\xbb\xbf", 3) == 0) {
        memmove(r->text, r->text + 3, len - 3);
        len -= 3;
    }
    r->cut = c == EOF;
    if (!r->too_long && len > 0 && r->text[len - 1] == '\r')
        len--;
    r->text[len] = '\0';
    r->text_len = len;
    return 1;
}
