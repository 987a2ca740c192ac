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

/* The most fields a line can have. An add naming ID, X, Y, Z, tags,
 * facing, hide and four fields of each of eight senses has 40: a longer
 * line names a field twice, or is wrong in another way. */
#define MAX_FIELDS 48

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

/* An unsigned decimal integer of at most `max`. */
static int parse_decimal(const char *s, uint32_t max, uint32_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return -1;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (uint64_t)(*s - '0')) > max)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* A mask: a decimal integer in 0 .. 2^32-1, or 0x and 1 to 8 hex digits. */
static int parse_mask(const char *s, uint32_t *out)
{
    size_t digits = strlen(s + (s[0] == '0' && s[1] == 'x' ? 2 : 0));
    if (s[0] != '0' || s[1] != 'x')
        return parse_decimal(s, UINT32_MAX, out);
    if (digits < 1 || digits > 8 || strspn(s + 2, "0123456789abcdefABCDEF") != digits)
        return -1;
    *out = (uint32_t)strtoul(s + 2, NULL, 16);
    return 0;
}

/* A decimal number: 0; -1 when it is none (the character check keeps out
 * what strtod would also take: hex, inf, nan); -2 beyond 1e15. */
static int parse_number(const char *s, double *out)
{
    char *end;
    if (*s == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        return -1;
    *out = strtod(s, &end);
    if (*end != '\0' || !isfinite(*out))
        return -1;
    return fabs(*out) > PERCEPT_COORD_LIMIT ? -2 : 0;
}

/* The index of the trace's sense named by the n bytes at s, or -1. */
static int find_sense(const trace_reader *r, const char *s, size_t n)
{
    for (int i = 0; i < r->sense_count; i++)
        if (strlen(r->sense_name[i]) == n && memcmp(r->sense_name[i], s, n) == 0)
            return i;
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

/* An unknown sense named by the n bytes at s, in `where` (may be NULL). */
static int unknown_sense(trace_reader *r, const char *cmd, const char *s, size_t n,
                         const char *where)
{
    char list[PERCEPT_MAX_SENSES * (TRACE_SENSE_NAME_MAX + 4)] = "";
    for (int i = 0; i < r->sense_count; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                 i == 0                    ? ""
                 : i + 1 == r->sense_count ? " or "
                                           : ", ",
                 r->sense_name[i]);
    return fault(r, "%s: unknown sense '%s'%s%s%s: expected %s", cmd, shown(r, 0, s, n),
                 where ? " in '" : "", where ? field(r, 1, where) : "", where ? "'" : "", list);
}

static int get_id(trace_reader *r, const char *cmd, const char *s, percept_id *id)
{
    if (parse_decimal(s, UINT32_MAX, id) < 0)
        return fault(r, "%s: bad ID '%s': must be a decimal integer in 0..4294967295", cmd,
                     field(r, 0, s));
    return 0;
}

static int get_mask(trace_reader *r, const char *cmd, const char *what, const char *s,
                    uint32_t *mask)
{
    if (parse_mask(s, mask) < 0)
        return fault(r,
                     "%s: bad %s '%s': must be a decimal integer in 0..4294967295 or 0x and 1 "
                     "to 8 hex digits",
                     cmd, what, field(r, 0, s));
    return 0;
}

/* What a number must be, besides decimal and within 1e15. */
enum value_rule { ANY, NONNEGATIVE, POSITIVE, ANGLE };

static int get_number(trace_reader *r, const char *cmd, const char *what, const char *s,
                      enum value_rule rule, double *v)
{
    static const char *const must[] = {
        "a finite decimal number",
        "a decimal number >= 0",
        "a decimal number above 0",
        "a decimal number above 0 and at most 360",
    };
    int st = parse_number(s, v);
    if (st == -2)
        return fault(r, "%s: %s %s is beyond the coordinate limit: must be within [-1e15, 1e15]",
                     cmd, what, field(r, 0, s));
    if (st < 0 || (rule == NONNEGATIVE && !(*v >= 0)) || (rule == POSITIVE && !(*v > 0)) ||
        (rule == ANGLE && !(*v > 0 && *v <= 360)))
        return fault(r, "%s: bad %s '%s': must be %s", cmd, what, field(r, 0, s), must[rule]);
    if (rule != ANY)
        *v += 0.0; /* -0 is 0 */
    return 0;
}

static int get_sense(trace_reader *r, const char *cmd, const char *s, percept_sense *sense)
{
    if ((*sense = find_sense(r, s, strlen(s))) < 0)
        return unknown_sense(r, cmd, s, strlen(s), NULL);
    return 0;
}

/* Whether field i of a line of n fields is a Z rather than a FIELD=VALUE. */
static int has_z(char **f, size_t n, size_t i)
{
    return i < n && strchr(f[i], '=') == NULL;
}

/* ------------------------------------------------------------------------ */
/* The fields of add and set                                                 */

/* facing=FX,FY[,FZ] (the value split in place) */
static int read_facing(trace_reader *r, const char *cmd, char *v, double facing[3])
{
    char *part[3];
    int n = 0;
    for (char *p = v; p != NULL && n < 4; n++) {
        if (n < 3)
            part[n] = p;
        if ((p = strchr(p, ',')) != NULL)
            *p++ = '\0';
    }
    if (n < 2 || n > 3)
        return fault(r, "%s: bad facing: expected facing=FX,FY or facing=FX,FY,FZ", cmd);
    facing[2] = 0;
    for (int i = 0; i < n; i++)
        if (get_number(r, cmd, "facing", part[i], ANY, &facing[i]) < 0)
            return -1;
    return 0;
}

/* hide=SENSE[,SENSE...] (one listed twice is hidden once) */
static int read_hide(trace_reader *r, const char *cmd, const char *v, unsigned *hidden)
{
    for (const char *p = v;;) {
        size_t len = strcspn(p, ",");
        int s = find_sense(r, p, len);
        if (s < 0)
            return unknown_sense(r, cmd, p, len, v);
        *hidden |= PERCEPT_SENSE_BIT(s);
        if (p[len] == '\0')
            return 0;
        p += len + 1;
    }
}

/* Marks a field as given (its bit in *given): a field given twice is an error. */
static int once(trace_reader *r, const char *cmd, const char *key, unsigned *given, unsigned bit)
{
    if (*given & bit)
        return fault(r, "%s: field '%s' given more than once", cmd, field(r, 0, key));
    *given |= bit;
    return 0;
}

/* SENSE=R, SENSE.margin=M, SENSE.fov=DEG or SENSE.ignore=N; `key` and `v`
 * are the field split at its '='. */
static int read_sense_field(trace_reader *r, const char *cmd, const char *key, const char *v,
                            trace_line *out)
{
    const char *dot = strchr(key, '.');
    size_t len = dot != NULL ? (size_t)(dot - key) : strlen(key);
    int s = find_sense(r, key, len), rc;
    if (s < 0)
        return unknown_sense(r, cmd, key, len, dot != NULL ? key : NULL);
    percept_sense_params *p = &out->desc.sense[s];
    trace_given *g = &out->given;
    unsigned *given;
    if (dot == NULL)
        given = &g->range, rc = get_number(r, cmd, key, v, NONNEGATIVE, &p->range);
    else if (strcmp(dot, ".margin") == 0)
        given = &g->margin, rc = get_number(r, cmd, key, v, NONNEGATIVE, &p->margin);
    else if (strcmp(dot, ".fov") == 0)
        given = &g->fov, rc = get_number(r, cmd, key, v, ANGLE, &p->fov);
    else if (strcmp(dot, ".ignore") == 0)
        given = &g->ignore, rc = get_mask(r, cmd, key, v, &p->ignore);
    else
        return fault(r, "%s: unknown field '%s': expected SENSE.margin, SENSE.fov or SENSE.ignore",
                     cmd, field(r, 0, key));
    return rc < 0 ? -1 : once(r, cmd, key, given, PERCEPT_SENSE_BIT(s));
}

/* One FIELD=VALUE of add or set (split in place). The format's own fields
 * come before the senses' names: a sense may be called "tags". */
static int read_field(trace_reader *r, const char *cmd, char *f, trace_line *out)
{
    char *v = strchr(f, '=');
    trace_given *g = &out->given;
    unsigned *given;
    int rc;
    if (v == NULL)
        return fault(r, "%s: '%s' is no FIELD=VALUE", cmd, field(r, 0, f));
    *v++ = '\0';
    if (strcmp(f, "tags") == 0)
        given = &g->tags, rc = get_mask(r, cmd, f, v, &out->desc.tags);
    else if (strcmp(f, "facing") == 0)
        given = &g->facing, rc = read_facing(r, cmd, v, out->desc.facing);
    else if (strcmp(f, "hide") == 0 && out->command == TRACE_ADD)
        given = &g->hide, rc = read_hide(r, cmd, v, &out->desc.hidden);
    else if (strcmp(f, "hide") == 0)
        return fault(r, "%s: hide= is for add only: use hide ID SENSE", cmd);
    else
        return read_sense_field(r, cmd, f, v, out);
    return rc < 0 ? -1 : once(r, cmd, f, given, 1);
}

void trace_apply_fields(const trace_line *line, percept_entity_desc *d)
{
    const trace_given *g = &line->given;
    for (int s = 0; s < PERCEPT_MAX_SENSES; s++) {
        const percept_sense_params *from = &line->desc.sense[s];
        percept_sense_params *to = &d->sense[s];
        unsigned bit = PERCEPT_SENSE_BIT(s);
        if (g->range & bit)
            to->range = from->range;
        if (g->margin & bit)
            to->margin = from->margin;
        if (g->fov & bit)
            to->fov = from->fov;
        if (g->ignore & bit)
            to->ignore = from->ignore;
    }
    if (g->tags)
        d->tags = line->desc.tags;
    if (g->facing)
        memcpy(d->facing, line->desc.facing, sizeof d->facing);
    if (g->hide)
        d->hidden = line->desc.hidden;
}

/* ------------------------------------------------------------------------ */
/* Commands: each reads the fields f[1..n-1] of its line into *out.          */

/* Senses and world come before the first add. */
static int before_adds(trace_reader *r, const char *cmd)
{
    if (r->first_add_line != 0)
        return fault(r, "%s: must come before the first add (line %lu)", cmd, r->first_add_line);
    return 0;
}

/* senses NAME...: 1 to 8 distinct names, each a letter, then letters,
 * digits, '_' or '-', at most 31 bytes. */
static int read_senses(trace_reader *r, char **f, size_t n, trace_line *out)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (void)out;
    if (before_adds(r, "senses") < 0)
        return -1;
    for (size_t i = 1; i < n; i++) {
        size_t len = strlen(f[i]);
        if (strchr(letters, f[i][0]) == NULL || len > TRACE_SENSE_NAME_MAX ||
            strspn(f[i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != len)
            return fault(r,
                         "senses: bad name '%s': a letter, then letters, digits, '_' or '-', at "
                         "most %d bytes",
                         field(r, 0, f[i]), TRACE_SENSE_NAME_MAX);
        for (size_t j = 1; j < i; j++)
            if (strcmp(f[j], f[i]) == 0)
                return fault(r, "senses: '%s' named twice", f[i]);
    }
    r->sense_count = (int)(n - 1);
    for (size_t i = 1; i < n; i++)
        strcpy(r->sense_name[i - 1], f[i]);
    return 0;
}

/* world MINX MINY MAXX MAXY: MIN <= MAX. */
static int read_world(trace_reader *r, char **f, size_t n, trace_line *out)
{
    static const char *const name[4] = {"MINX", "MINY", "MAXX", "MAXY"};
    double v[4];

    (void)n;
    if (before_adds(r, "world") < 0)
        return -1;
    for (int i = 0; i < 4; i++)
        if (get_number(r, "world", name[i], f[i + 1], ANY, &v[i]) < 0)
            return -1;
    for (int i = 0; i < 2; i++)
        if (v[i] > v[i + 2])
            return fault(r, "world: %s %s is greater than %s %s", name[i], field(r, 0, f[i + 1]),
                         name[i + 2], field(r, 1, f[i + 3]));
    out->bounds = (percept_bounds){v[0], v[1], v[2], v[3]};
    return 0;
}

/* ID X Y [Z]: the start of add and move; the index of the field after it. */
static size_t read_place(trace_reader *r, char **f, size_t n, trace_line *out)
{
    percept_entity_desc *d = &out->desc;
    if (get_id(r, f[0], f[1], &out->id) < 0 || get_number(r, f[0], "X", f[2], ANY, &d->x) < 0 ||
        get_number(r, f[0], "Y", f[3], ANY, &d->y) < 0)
        return 0;
    if (!has_z(f, n, 4))
        return 4;
    return get_number(r, f[0], "Z", f[4], ANY, &d->z) < 0 ? 0 : 5;
}

/* move ID X Y [Z] */
static int read_move(trace_reader *r, char **f, size_t n, trace_line *out)
{
    return read_place(r, f, n, out) == 0 ? -1 : 0;
}

/* add ID X Y [Z] [FIELD=VALUE...] */
static int read_add(trace_reader *r, char **f, size_t n, trace_line *out)
{
    size_t i = read_place(r, f, n, out);
    if (i == 0)
        return -1;
    for (; i < n; i++)
        if (read_field(r, "add", f[i], out) < 0)
            return -1;
    if (r->first_add_line == 0)
        r->first_add_line = r->line;
    return 0;
}

/* face ID FX FY [FZ] */
static int read_face(trace_reader *r, char **f, size_t n, trace_line *out)
{
    double *v = out->desc.facing;
    if (get_id(r, "face", f[1], &out->id) < 0 ||
        get_number(r, "face", "FX", f[2], ANY, &v[0]) < 0 ||
        get_number(r, "face", "FY", f[3], ANY, &v[1]) < 0)
        return -1;
    return n == 5 ? get_number(r, "face", "FZ", f[4], ANY, &v[2]) : 0;
}

/* set ID FIELD=VALUE... */
static int read_set(trace_reader *r, char **f, size_t n, trace_line *out)
{
    if (get_id(r, "set", f[1], &out->id) < 0)
        return -1;
    for (size_t i = 2; i < n; i++)
        if (read_field(r, "set", f[i], out) < 0)
            return -1;
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
    return get_number(r, "range", "range", f[3], NONNEGATIVE, &out->range);
}

/* hide ID SENSE, show ID SENSE */
static int read_hidden(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)n;
    if (get_id(r, f[0], f[1], &out->id) < 0)
        return -1;
    return get_sense(r, f[0], f[2], &out->sense);
}

/* emit SENSE X Y [Z] [strength=K] [source=ID] [tags=N] */
static int read_emit(trace_reader *r, char **f, size_t n, trace_line *out)
{
    percept_stimulus *st = &out->stimulus;
    unsigned given = 0;
    size_t i = 4;

    *st = (percept_stimulus)PERCEPT_STIMULUS_INIT;
    st->strength = 1;
    if (get_sense(r, "emit", f[1], &st->sense) < 0 ||
        get_number(r, "emit", "X", f[2], ANY, &st->x) < 0 ||
        get_number(r, "emit", "Y", f[3], ANY, &st->y) < 0 ||
        (has_z(f, n, i) && get_number(r, "emit", "Z", f[i++], ANY, &st->z) < 0))
        return -1;
    for (; i < n; i++) {
        char *v = strchr(f[i], '=');
        if (v == NULL)
            return fault(r, "emit: '%s' is no FIELD=VALUE", field(r, 0, f[i]));
        *v++ = '\0';
        unsigned bit;
        int rc;
        if (strcmp(f[i], "strength") == 0)
            bit = 1, rc = get_number(r, "emit", "strength", v, POSITIVE, &st->strength);
        else if (strcmp(f[i], "source") == 0)
            bit = 2, rc = get_id(r, "emit", v, &st->source);
        else if (strcmp(f[i], "tags") == 0)
            bit = 4, rc = get_mask(r, "emit", "tags", v, &st->tags);
        else
            return fault(r, "emit: unknown field '%s': expected strength=K, source=ID or tags=N",
                         field(r, 0, f[i]));
        if (rc < 0 || once(r, "emit", f[i], &given, bit) < 0)
            return -1;
    }
    st->has_source = (given & 2) != 0;
    return 0;
}

/* tick, end: nothing to read */
static int read_nothing(trace_reader *r, char **f, size_t n, trace_line *out)
{
    (void)r, (void)f, (void)n, (void)out;
    return 0;
}

static const struct {
    const char *name;
    trace_command command;
    size_t min_fields, max_fields; /* the command's name included */
    const char *usage;
    int (*read)(trace_reader *r, char **f, size_t n, trace_line *out);
} commands[] = {
    {"move", TRACE_MOVE, 4, 5, "move ID X Y [Z]", read_move},
    {"add", TRACE_ADD, 4, MAX_FIELDS, "add ID X Y [Z] [FIELD=VALUE...]", read_add},
    {"face", TRACE_FACE, 4, 5, "face ID FX FY [FZ]", read_face},
    {"set", TRACE_SET, 3, MAX_FIELDS, "set ID FIELD=VALUE...", read_set},
    {"remove", TRACE_REMOVE, 2, 2, "remove ID", read_remove},
    {"range", TRACE_RANGE, 4, 4, "range ID SENSE R", read_range},
    {"hide", TRACE_HIDE, 3, 3, "hide ID SENSE", read_hidden},
    {"show", TRACE_SHOW, 3, 3, "show ID SENSE", read_hidden},
    {"emit", TRACE_EMIT, 4, 8, "emit SENSE X Y [Z] [strength=K] [source=ID] [tags=N]", read_emit},
    {"tick", TRACE_TICK, 1, 1, "tick", read_nothing},
    {"end", TRACE_END, 1, 1, "end", read_nothing},
    {"senses", TRACE_SENSES, 2, 1 + PERCEPT_MAX_SENSES, "senses NAME... (1 to 8 names)",
     read_senses},
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
    return fault(r,
                 "unknown command '%s': expected senses, world, add, move, face, set, remove, "
                 "range, hide, show, emit or tick",
                 field(r, 0, f[0]));
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

const char *trace_open(trace_reader *r, const char *path)
{
    struct stat sb;
    int is_stdin = strcmp(path, "-") == 0, err = 0;

    memset(r, 0, sizeof *r);
    r->sense_count = 3;
    strcpy(r->sense_name[0], "sight");
    strcpy(r->sense_name[1], "hearing");
    strcpy(r->sense_name[2], "smell");
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
