/*
 * trace_syntax.c - reading a trace line by line and checking what each line
 * says, shared by percept-replay and percept-bench --trace (see
 * trace_syntax.h).
 */
#define _POSIX_C_SOURCE 200809L

#include "trace_syntax.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The most fields a line can have: add ID X Y plus at most one of each of
 * its four options. */
#define MAX_FIELDS 8

#define SENSE_EXPECTED "expected sight, hearing or smell"
#define ID_EXPECTED "must be a decimal integer in 0..4294967295"

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */

/* Splits s in place at spaces and tabs; returns the field count (may exceed
 * max: only the first max are stored). */
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

/* An ID: decimal digits only, 0 .. 4294967295. 0, or -1. */
static int parse_id(const char *s, percept_id *out)
{
    uint64_t v = 0;

    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
    }
    *out = (percept_id)v;
    return 0;
}

/* A decimal number (integer, fraction, optional exponent), finite. The
 * character check keeps out what strtod would also take: hex, inf, nan. */
static int parse_number(const char *s, double *out)
{
    char *end;

    if (*s == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    *out = strtod(s, &end);
    if (*end != '\0' || !isfinite(*out))
        return -1;
    return 0;
}

/* A range: a finite number >= 0 (-0 is taken as 0). */
static int parse_range(const char *s, double *out)
{
    if (parse_number(s, out) < 0 || !(*out >= 0))
        return -1;
    *out += 0.0; /* turns -0 into +0 */
    return 0;
}

/* A sense name, from the n bytes at s. */
static int parse_sense(const char *s, size_t n, percept_sense *out)
{
    for (int i = 0; i < PERCEPT_SENSE_COUNT; i++) {
        const char *name = percept_sense_name((percept_sense)i);
        if (name != NULL && strlen(name) == n && memcmp(name, s, n) == 0) {
            *out = (percept_sense)i;
            return 0;
        }
    }
    return -1;
}

static int fault(trace_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Notes what is wrong with the line in r->msg; returns -1. Fields of the
 * line are quoted through shown(), so every message fits. */
static int fault(trace_reader *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/*
 * The n bytes at s, as a message quotes a field of the line: whole up to
 * TRACE_FIELD_SHOWN characters, else their start and "...", in r->shown[k]
 * (a message quotes at most two fields, k = 0 and 1). A line may be as long
 * as memory allows; its message stays short, and both tools print the same.
 * A byte outside ASCII is shown as \xNN: no command, number or sense name
 * has one, and a terminal must not be handed a stray byte of a broken UTF-8
 * sequence or a bidirectional override from a file it did not write.
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
        return fault(r, "%s: bad ID '%s': " ID_EXPECTED, cmd, field(r, 0, s));
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

/* ID X Y, the start of add and move. */
static int get_id_position(trace_reader *r, const char *cmd, char **f, trace_line *out)
{
    if (get_id(r, cmd, f[1], &out->id) < 0 || get_number(r, cmd, "X", f[2], &out->desc.x) < 0 ||
        get_number(r, cmd, "Y", f[3], &out->desc.y) < 0)
        return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

static const struct {
    const char *name;
    trace_command command;
    size_t min_fields, max_fields; /* including the command's name */
    const char *usage;
} commands[] = {
    {"move", TRACE_MOVE, 4, 4, "move ID X Y"},
    {"add", TRACE_ADD, 4, MAX_FIELDS,
     "add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE,...]"},
    {"remove", TRACE_REMOVE, 2, 2, "remove ID"},
    {"range", TRACE_RANGE, 4, 4, "range ID SENSE R"},
    {"hide", TRACE_HIDE, 3, 3, "hide ID SENSE"},
    {"show", TRACE_SHOW, 3, 3, "show ID SENSE"},
    {"world", TRACE_WORLD, 5, 5, "world MINX MINY MAXX MAXY"},
};

/* The command of a split line (n fields, of which the first MAX_FIELDS are
 * in f): 1 when it is known and has a valid number of fields; 0 for a blank
 * or comment line; -1 otherwise. */
static int command_of(trace_reader *r, char **f, size_t n, trace_command *command)
{
    if (n == 0 || f[0][0] == '#')
        return 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(f[0], commands[i].name) != 0)
            continue;
        if (n < commands[i].min_fields || n > commands[i].max_fields)
            return fault(r, "%s: wrong number of fields (%zu): expected '%s'", commands[i].name, n,
                         commands[i].usage);
        *command = commands[i].command;
        return 1;
    }
    return fault(r, "unknown command '%s': expected world, add, move, remove, range, hide or show",
                 field(r, 0, f[0]));
}

/* world MINX MINY MAXX MAXY: only before the first add, within the
 * coordinate limit (which the user did not give as an option, so the
 * library's message about the options would mislead), MIN <= MAX. */
static int parse_world(trace_reader *r, char **f, percept_bounds *b)
{
    static const char *const name[4] = {"MINX", "MINY", "MAXX", "MAXY"};
    double v[4];

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
    if (v[0] > v[2])
        return fault(r, "world: MINX %s is greater than MAXX %s", field(r, 0, f[1]),
                     field(r, 1, f[3]));
    if (v[1] > v[3])
        return fault(r, "world: MINY %s is greater than MAXY %s", field(r, 0, f[2]),
                     field(r, 1, f[4]));
    *b = (percept_bounds){v[0], v[1], v[2], v[3]};
    return 0;
}

/* One add option (sight=R, hearing=R, smell=R, hide=SENSE[,SENSE...]). A
 * range's limit is the library's check, made after the line's. */
static int add_option(trace_reader *r, const char *opt, percept_entity_desc *d, unsigned *seen)
{
    const char *eq = strchr(opt, '=');
    size_t keylen = eq != NULL ? (size_t)(eq - opt) : 0;
    percept_sense sense = PERCEPT_SIGHT;
    unsigned bit;

    if (eq != NULL && keylen == 4 && memcmp(opt, "hide", 4) == 0)
        bit = 1u << PERCEPT_SENSE_COUNT;
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
    if (bit != 1u << PERCEPT_SENSE_COUNT) {
        if (parse_range(eq + 1, &d->range[sense]) < 0)
            return fault(r, "add: bad range '%s': must be a number >= 0", field(r, 0, opt));
        return 0;
    }
    /* hide=SENSE[,SENSE...]: every element must name a sense. */
    for (const char *p = eq + 1;;) {
        size_t n = strcspn(p, ",");
        if (parse_sense(p, n, &sense) < 0)
            return fault(r, "add: unknown sense '%s' in '%s': " SENSE_EXPECTED, shown(r, 0, p, n),
                         field(r, 1, opt));
        d->hidden |= PERCEPT_SENSE_BIT(sense);
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

/* add ID X Y [sight=R] [hearing=R] [smell=R] [hide=SENSE[,SENSE...]] */
static int parse_add(trace_reader *r, char **f, size_t n, trace_line *out)
{
    unsigned seen = 0;

    if (get_id_position(r, "add", f, out) < 0)
        return -1;
    for (size_t i = 4; i < n; i++)
        if (add_option(r, f[i], &out->desc, &seen) < 0)
            return -1;
    if (r->first_add_line == 0)
        r->first_add_line = r->line;
    return 0;
}

/* range ID SENSE R */
static int parse_range_line(trace_reader *r, char **f, trace_line *out)
{
    if (get_id(r, "range", f[1], &out->id) < 0 || get_sense(r, "range", f[2], &out->sense) < 0)
        return -1;
    if (parse_range(f[3], &out->range) < 0)
        return fault(r, "range: bad range '%s': must be a number >= 0", field(r, 0, f[3]));
    return 0;
}

int trace_parse_line(trace_reader *r, trace_line *out)
{
    char *f[MAX_FIELDS];
    const char *cmd;
    size_t n;
    int known;

    memset(out, 0, sizeof *out);
    /* A control character other than tab (a stray CR, a NUL) would otherwise
     * end up inside fields and messages. */
    for (size_t i = 0; i < r->text_len; i++) {
        unsigned char c = (unsigned char)r->text[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return fault(r, "control character 0x%02x in column %zu", c, i + 1);
    }
    if (r->too_long)
        return fault(r, "line longer than %d bytes", TRACE_LINE_MAX);
    n = split_fields(r->text, f, MAX_FIELDS);
    if ((known = command_of(r, f, n, &out->command)) <= 0)
        return known;
    cmd = f[0];
    switch (out->command) {
    case TRACE_WORLD:
        return parse_world(r, f, &out->bounds) < 0 ? -1 : 1;
    case TRACE_ADD:
        return parse_add(r, f, n, out) < 0 ? -1 : 1;
    case TRACE_MOVE:
        return get_id_position(r, cmd, f, out) < 0 ? -1 : 1;
    case TRACE_REMOVE:
        return get_id(r, cmd, f[1], &out->id) < 0 ? -1 : 1;
    case TRACE_RANGE:
        return parse_range_line(r, f, out) < 0 ? -1 : 1;
    case TRACE_HIDE:
    case TRACE_SHOW:
        return get_id(r, cmd, f[1], &out->id) < 0 || get_sense(r, cmd, f[2], &out->sense) < 0 ? -1
                                                                                              : 1;
    }
    return fault(r, "%s: not handled", cmd);
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

const char *trace_open(trace_reader *r, const char *path)
{
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0;
    const char *why = NULL;
    int err = 0;

    memset(r, 0, sizeof *r);
    r->name = is_stdin ? "<stdin>" : path;
    r->in = is_stdin ? stdin : fopen(path, "r");
    if (r->in == NULL)
        err = errno;
    else if (fstat(fileno(r->in), &sb) != 0)
        err = errno;
    else if (S_ISDIR(sb.st_mode))
        err = EISDIR; /* it opens, and would fail at the first read */
    else if (!is_stdin && !S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode) && !S_ISCHR(sb.st_mode))
        why = "not a regular file or a pipe";
    if (err == 0 && why == NULL)
        return NULL;
    trace_close(r);
    return err != 0 ? strerror(err) : why;
}

void trace_close(trace_reader *r)
{
    if (r->in != NULL && r->in != stdin)
        fclose(r->in);
    r->in = NULL;
    free(r->text);
    r->text = NULL;
    r->text_cap = 0;
}

int trace_read_line(trace_reader *r)
{
    size_t len = 0;
    int c = EOF;

    if (r->text == NULL) {
        r->text = malloc(TRACE_LINE_MAX + 1);
        if (r->text == NULL) {
            r->read_errno = ENOMEM;
            return -1;
        }
        r->text_cap = TRACE_LINE_MAX + 1;
    }
    r->too_long = 0;
    errno = 0;
    /* Bytes up to the newline, at most TRACE_LINE_MAX of them: a file
     * without newlines (/dev/zero, say) is refused after that many, not
     * read into memory whole. */
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
    /* A line cut short by a read error is not run: the error is reported. */
    if (ferror(r->in)) {
        r->read_errno = errno;
        return -1;
    }
    if (len == 0 && c == EOF)
        return 0;
    r->line++;
    /* A UTF-8 byte order mark, as some editors write at the start of a
     * file: skipped, as the config reader does, not an unknown command. */
    if (r->line == 1 && len >= 3 && memcmp(r->text, "\xef\xbb\xbf", 3) == 0) {
        memmove(r->text, r->text + 3, len - 3);
        len -= 3;
    }
    /* Only the last line can lack its newline: the caller warns that the
     * file may have been cut off (in "hearing=83", say, read as "hearing=8"). */
    r->cut = c == EOF;
    if (!r->too_long && len > 0 && r->text[len - 1] == '\r')
        len--;
    r->text[len] = '\0';
    r->text_len = len;
    return 1;
}
