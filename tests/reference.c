/*
 * reference.c - an independent brute-force evaluator of the perception
 * relation: reads a trace (docs/trace-format.md) and prints exactly the lines
 * percept-replay must print for it. It shares no code with the library on
 * purpose, so that a bug there cannot hide by being repeated here.
 *
 * Usage: reference [--full] [TRACE]   (standard input without TRACE)
 *
 * By default only the pairs involving the entity a command names are
 * re-evaluated, since a command changes nothing about any other entity and
 * the relation of a pair depends only on its two entities. --full instead
 * recomputes the whole relation after every command and diffs it with the
 * previous one: slow (O(n^2) per command), but a check of the fast path.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENSES 3
static const char *const sense_names[SENSES] = {"sight", "hearing", "smell"};

typedef struct entity {
    uint32_t id;
    double x, y;
    double range[SENSES];
    unsigned hidden; /* bit s: imperceptible to sense s */
} entity;

/* One line of output: a change of (observer, target, sense). */
typedef struct change {
    uint32_t observer, target;
    int sense;
    int enter;
} change;

/* One element of the relation, for --full. */
typedef struct triple {
    uint32_t observer, target;
    int sense;
} triple;

static entity *ents; /* dense, in no order */
static size_t ent_count, ent_cap;

static change *changes;
static size_t change_count, change_cap;

static const char *trace_name = "<stdin>";
static unsigned long line_no;
static int added; /* an add has run: a world line is no longer allowed */

static void die(const char *what)
{
    fflush(stdout);
    fprintf(stderr, "%s:%lu: %s\n", trace_name, line_no, what);
    exit(1);
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    p = realloc(p, n * elem);
    if (p == NULL)
        die("out of memory");
    *cap = n;
    return p;
}

/* The relation, straight from the specification's four conditions. */
static int perceives(const entity *o, const entity *t, int s)
{
    double r = o->range[s];
    double dx = t->x - o->x, dy = t->y - o->y;
    return o->id != t->id && r > 0 && !(t->hidden & (1u << s)) && dx * dx + dy * dy <= r * r;
}

static entity *find(uint32_t id)
{
    for (size_t i = 0; i < ent_count; i++)
        if (ents[i].id == id)
            return &ents[i];
    return NULL;
}

static void push_change(uint32_t observer, uint32_t target, int sense, int enter)
{
    changes = grow(changes, &change_cap, change_count + 1, sizeof *changes);
    changes[change_count++] = (change){observer, target, sense, enter};
}

/*
 * Records what changes for the pairs involving one entity, between its state
 * `before` and `after` (NULL: not in the world). Every other entity in the
 * table is its partner in two pairs per sense; the entity itself is skipped.
 */
static void diff_entity(const entity *before, const entity *after)
{
    for (size_t i = 0; i < ent_count; i++) {
        const entity *x = &ents[i];
        const entity *self = after != NULL ? after : before;
        if (x->id == self->id)
            continue;
        for (int s = 0; s < SENSES; s++) {
            int was = before != NULL && perceives(before, x, s);
            int now = after != NULL && perceives(after, x, s);
            if (was != now)
                push_change(self->id, x->id, s, now);
            was = before != NULL && perceives(x, before, s);
            now = after != NULL && perceives(x, after, s);
            if (was != now)
                push_change(x->id, self->id, s, now);
        }
    }
}

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_triple(const void *pa, const void *pb)
{
    const triple *a = pa, *b = pb;
    int c = cmp_u32(a->observer, b->observer);
    if (c == 0)
        c = cmp_u32(a->target, b->target);
    if (c == 0)
        c = (a->sense > b->sense) - (a->sense < b->sense);
    return c;
}

static int cmp_change(const void *pa, const void *pb)
{
    const change *a = pa, *b = pb;
    triple ta = {a->observer, a->target, a->sense}, tb = {b->observer, b->target, b->sense};
    return cmp_triple(&ta, &tb);
}

static void flush_changes(void)
{
    if (change_count > 1) /* qsort's array may not be NULL, even when empty */
        qsort(changes, change_count, sizeof *changes, cmp_change);
    for (size_t i = 0; i < change_count; i++)
        printf("%lu %lu %lu %s %s\n", line_no, (unsigned long)changes[i].observer,
               (unsigned long)changes[i].target, sense_names[changes[i].sense],
               changes[i].enter ? "enter" : "leave");
    change_count = 0;
}

/* --full: the whole relation now, sorted, replacing the previous one. */
static triple *rel_old, *rel_new;
static size_t rel_old_count, rel_new_count, rel_old_cap, rel_new_cap;

static void full_diff(void)
{
    rel_new_count = 0;
    for (size_t i = 0; i < ent_count; i++)
        for (size_t j = 0; j < ent_count; j++)
            for (int s = 0; s < SENSES; s++)
                if (perceives(&ents[i], &ents[j], s)) {
                    rel_new = grow(rel_new, &rel_new_cap, rel_new_count + 1, sizeof *rel_new);
                    rel_new[rel_new_count++] = (triple){ents[i].id, ents[j].id, s};
                }
    if (rel_new_count > 1)
        qsort(rel_new, rel_new_count, sizeof *rel_new, cmp_triple);

    size_t a = 0, b = 0;
    while (a < rel_old_count || b < rel_new_count) {
        int c = a == rel_old_count   ? 1
                : b == rel_new_count ? -1
                                     : cmp_triple(&rel_old[a], &rel_new[b]);
        if (c < 0) {
            push_change(rel_old[a].observer, rel_old[a].target, rel_old[a].sense, 0);
            a++;
        } else if (c > 0) {
            push_change(rel_new[b].observer, rel_new[b].target, rel_new[b].sense, 1);
            b++;
        } else {
            a++, b++;
        }
    }
    triple *t = rel_old;
    size_t cap = rel_old_cap;
    rel_old = rel_new, rel_old_cap = rel_new_cap, rel_old_count = rel_new_count;
    rel_new = t, rel_new_cap = cap;
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                   */

static uint32_t parse_id(const char *s)
{
    uint64_t v = 0;
    if (*s == '\0')
        die("bad ID");
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            die("bad ID");
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            die("bad ID");
    }
    return (uint32_t)v;
}

/* The format's numbers: sign, digits, fraction and exponent only (strtod
 * alone would also take hex, "inf" and "nan"), at most 1e15 in magnitude. */
static double parse_number(const char *s)
{
    char *end;
    if (*s == '\0' || strspn(s, "0123456789+-.eE") != strlen(s))
        die("bad number");
    double v = strtod(s, &end);
    if (*end != '\0' || !isfinite(v))
        die("bad number");
    if (fabs(v) > 1e15)
        die("number beyond 1e15");
    return v;
}

static double parse_range(const char *s)
{
    double r = parse_number(s);
    if (!(r >= 0))
        die("bad range");
    return r;
}

static int parse_sense(const char *s, size_t n)
{
    for (int i = 0; i < SENSES; i++)
        if (strlen(sense_names[i]) == n && memcmp(sense_names[i], s, n) == 0)
            return i;
    die("bad sense");
    return -1;
}

static entity *must_find(const char *field)
{
    entity *e = find(parse_id(field));
    if (e == NULL)
        die("unknown ID");
    return e;
}

/* Runs one command, filling `changes`. f[0] is the command, n the field count. */
static void run(char **f, size_t n, int full)
{
    const char *cmd = f[0];

    if (strcmp(cmd, "world") == 0) {
        if (n != 5)
            die("world: wrong number of fields");
        if (added)
            die("world: must come before the first add");
        double b[4];
        for (int i = 0; i < 4; i++)
            b[i] = parse_number(f[1 + i]);
        if (b[0] > b[2] || b[1] > b[3])
            die("world: a minimum above its maximum");
        return; /* bounds only tune the backends; the relation ignores them */
    }
    if (strcmp(cmd, "add") == 0) {
        if (n < 4)
            die("add: wrong number of fields");
        entity e = {0};
        unsigned seen = 0; /* options given: bit s for a sense, bit SENSES for hide */
        added = 1;
        e.id = parse_id(f[1]);
        if (find(e.id) != NULL)
            die("add: duplicate ID");
        e.x = parse_number(f[2]);
        e.y = parse_number(f[3]);
        for (size_t i = 4; i < n; i++) {
            char *eq = strchr(f[i], '=');
            if (eq == NULL)
                die("add: bad option");
            size_t klen = (size_t)(eq - f[i]);
            int hide = klen == 4 && memcmp(f[i], "hide", 4) == 0;
            unsigned bit = 1u << (hide ? SENSES : parse_sense(f[i], klen));
            if (seen & bit)
                die("add: option given twice");
            seen |= bit;
            if (hide) {
                for (char *p = eq + 1;;) {
                    size_t len = strcspn(p, ",");
                    e.hidden |= 1u << parse_sense(p, len);
                    if (p[len] == '\0')
                        break;
                    p += len + 1;
                }
            } else {
                e.range[parse_sense(f[i], klen)] = parse_range(eq + 1);
            }
        }
        ents = grow(ents, &ent_cap, ent_count + 1, sizeof *ents);
        ents[ent_count++] = e;
        if (!full)
            diff_entity(NULL, &ents[ent_count - 1]);
    } else if (strcmp(cmd, "remove") == 0) {
        if (n != 2)
            die("remove: wrong number of fields");
        entity *e = must_find(f[1]);
        entity old = *e;
        *e = ents[--ent_count];
        if (!full)
            diff_entity(&old, NULL);
    } else {
        entity *e, old;
        if (strcmp(cmd, "move") == 0) {
            if (n != 4)
                die("move: wrong number of fields");
            e = must_find(f[1]);
            old = *e;
            e->x = parse_number(f[2]);
            e->y = parse_number(f[3]);
        } else if (strcmp(cmd, "range") == 0) {
            if (n != 4)
                die("range: wrong number of fields");
            e = must_find(f[1]);
            old = *e;
            e->range[parse_sense(f[2], strlen(f[2]))] = parse_range(f[3]);
        } else if (strcmp(cmd, "hide") == 0 || strcmp(cmd, "show") == 0) {
            if (n != 3)
                die("hide/show: wrong number of fields");
            e = must_find(f[1]);
            old = *e;
            unsigned bit = 1u << parse_sense(f[2], strlen(f[2]));
            if (cmd[0] == 'h')
                e->hidden |= bit;
            else
                e->hidden &= ~bit;
        } else {
            die("unknown command");
            return;
        }
        if (!full)
            diff_entity(&old, e);
    }
    if (full)
        full_diff();
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 16];
    FILE *in = stdin;
    int full = 0;
    char *line = NULL;
    size_t cap = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0) {
            full = 1;
        } else if (in == stdin && argv[i][0] != '-') {
            trace_name = argv[i];
            in = fopen(argv[i], "r");
            if (in == NULL) {
                perror(argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: reference [--full] [TRACE]\n");
            return 2;
        }
    }
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    while (getline(&line, &cap, in) >= 0) {
        char *f[8], *p = line;
        size_t n = 0;

        line_no++;
        p[strcspn(p, "\r\n")] = '\0';
        /* A comment may hold any number of words: skip it before splitting. */
        if (p[strspn(p, " \t")] == '#')
            continue;
        for (;;) {
            p += strspn(p, " \t");
            if (*p == '\0')
                break;
            if (n == sizeof f / sizeof f[0])
                die("too many fields");
            f[n++] = p;
            p += strcspn(p, " \t");
            if (*p != '\0')
                *p++ = '\0';
        }
        if (n == 0)
            continue;
        run(f, n, full);
        flush_changes();
    }
    if (ferror(in))
        die("read error");
    free(line);
    if (fflush(stdout) != 0) {
        perror("reference: standard output");
        return 1;
    }
    return 0;
}
