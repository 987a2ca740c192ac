/*
 * reference.c - an independent brute-force evaluator of the perception
 * relation: reads a trace (the trace format, version 2: docs/trace-format.md)
 * and prints exactly the lines percept-replay must print for it. It shares no
 * code with the library on purpose, so that a bug there cannot hide by being
 * repeated here. It is the specification as a program: keep it as plain.
 *
 * Usage: reference [--full] [TRACE]   (standard input without TRACE)
 *
 * The relation is kept (a sorted array of pairs, each with its senses),
 * since with margins whether a pair is perceived depends on whether it was
 * before. By default a command judges again only the pairs of the entities
 * it changed (a tick: of every entity it names): the others' inputs are the
 * same, and a pair judged again on the same inputs keeps its state. --full
 * instead judges every pair after every command and diffs the result with
 * the relation before: slow (O(n^2) per command), but a check of the fast
 * path.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SENSES 8
#define SENSE_NAME_MAX 31
/* An add naming every field of eight senses has 40 fields: a line with more
 * is malformed, whatever they say. */
#define MAX_FIELDS 64

/* The double nearest to pi. */
static const double PI = 3.141592653589793;

static char sense_names[MAX_SENSES][SENSE_NAME_MAX + 1] = {"sight", "hearing", "smell"};
static int sense_count = 3;

/* What an entity has of one sense. */
typedef struct sense_settings {
    double range;    /* 0: the entity lacks the sense */
    double margin;   /* a target perceived is kept out to range + margin */
    double fov;      /* the cone's full angle in degrees; 360: no cone */
    uint32_t ignore; /* no target whose tags share a bit with it is perceived */
} sense_settings;

typedef struct entity {
    uint32_t id;
    double x, y, z;
    double fx, fy, fz; /* the facing */
    uint32_t tags;
    unsigned hidden; /* bit s: imperceptible to sense s */
    sense_settings sense[MAX_SENSES];
} entity;

/* An element of the relation: the senses by which observer perceives target. */
typedef struct pair {
    uint32_t observer, target;
    unsigned senses; /* bit s: by sense s; never 0 in the relation */
} pair;

/* One line of output: (observer, target, sense) entering or leaving the relation. */
typedef struct change {
    uint32_t observer, target;
    int sense;
    int enter;
} change;

/* A stimulus of `emit`. */
typedef struct stimulus {
    int sense;
    double x, y, z;
    double strength;
    int has_source;
    uint32_t source;
    uint32_t tags;
} stimulus;

static entity *ents; /* the world, dense, in no order */
static size_t ent_count, ent_cap;

/* The relation now, sorted; `next` is where the next one is built. */
static pair *rel, *next;
static size_t rel_count, rel_cap, next_count, next_cap;

static change *changes; /* of the command being run */
static size_t change_count, change_cap;

/* The IDs changed since the relation was last judged: one command's, or a
 * tick's until its end. */
static uint32_t *changed;
static size_t changed_count, changed_cap;

static const char *trace_name = "<stdin>";
static unsigned long line_no;
static int added;               /* an add has run: world and senses are no longer allowed */
static int in_tick;             /* between tick and end */
static unsigned long tick_line; /* the line of that tick */

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

/* ------------------------------------------------------------------------ */
/* The relation, rule by rule as the specification states it                 */

/* Rule 6: the offset (dx, dy, dz), at squared distance dd, is in the cone of
 * o's sense s around o's facing. */
static int in_cone(const entity *o, int s, double dx, double dy, double dz, double dd)
{
    double fov = o->sense[s].fov;
    if (fov == 360 || dd == 0)
        return 1;
    double c = cos(fov * (PI / 360));
    double dot = o->fx * dx + o->fy * dy + o->fz * dz;
    double q = c * c * (dd * (o->fx * o->fx + o->fy * o->fy + o->fz * o->fz));
    if (c >= 0)
        return dot >= 0 && dot * dot >= q;
    return dot >= 0 || dot * dot <= q;
}

/* Rules 5 and 6: the offset (dx, dy, dz) from o is within reach l, and in the cone. */
static int within(const entity *o, int s, double dx, double dy, double dz, double l)
{
    double dd = dx * dx + dy * dy + dz * dz;
    return dd <= l * l && in_cone(o, s, dx, dy, dz, dd);
}

/* Whether o perceives t by sense s, given whether it did before (rule 5). */
static int perceives(const entity *o, const entity *t, int s, int before)
{
    const sense_settings *os = &o->sense[s];
    if (o->id == t->id || !(os->range > 0) || (t->hidden >> s & 1u) || (os->ignore & t->tags))
        return 0;
    double l = before ? os->range + os->margin : os->range;
    return within(o, s, t->x - o->x, t->y - o->y, t->z - o->z, l);
}

/* Whether o perceives the stimulus: no hiding, no margin, reach strength * R. */
static int perceives_stimulus(const entity *o, const stimulus *st)
{
    const sense_settings *os = &o->sense[st->sense];
    if ((st->has_source && o->id == st->source) || !(os->range > 0) || (os->ignore & st->tags))
        return 0;
    return within(o, st->sense, st->x - o->x, st->y - o->y, st->z - o->z, st->strength * os->range);
}

/* ------------------------------------------------------------------------ */
/* Judging the relation after a command                                      */

static int cmp_u32(uint32_t a, uint32_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_pair(const void *pa, const void *pb)
{
    const pair *a = pa, *b = pb;
    int c = cmp_u32(a->observer, b->observer);
    return c != 0 ? c : cmp_u32(a->target, b->target);
}

/* The output's order: observer, target, then sense in the world's order. */
static int cmp_change(const void *pa, const void *pb)
{
    const change *a = pa, *b = pb;
    int c = cmp_u32(a->observer, b->observer);
    if (c == 0)
        c = cmp_u32(a->target, b->target);
    if (c == 0)
        c = (a->sense > b->sense) - (a->sense < b->sense);
    return c;
}

static int cmp_id(const void *pa, const void *pb)
{
    return cmp_u32(*(const uint32_t *)pa, *(const uint32_t *)pb);
}

/* The senses by which observer perceives target now. */
static unsigned related(uint32_t observer, uint32_t target)
{
    pair key = {observer, target, 0};
    const pair *p = rel_count > 0 ? bsearch(&key, rel, rel_count, sizeof *rel, cmp_pair) : NULL;
    return p != NULL ? p->senses : 0;
}

static entity *find(uint32_t id)
{
    for (size_t i = 0; i < ent_count; i++)
        if (ents[i].id == id)
            return &ents[i];
    return NULL;
}

/* The changes between the senses `was` and `now` of one pair. */
static void push_changes(uint32_t observer, uint32_t target, unsigned was, unsigned now)
{
    for (int s = 0; s < sense_count; s++)
        if ((was ^ now) >> s & 1u) {
            changes = grow(changes, &change_cap, change_count + 1, sizeof *changes);
            changes[change_count++] = (change){observer, target, s, (int)(now >> s & 1u)};
        }
}

static void push_next(pair p)
{
    next = grow(next, &next_cap, next_count + 1, sizeof *next);
    next[next_count++] = p;
}

/* The relation built in `next` becomes the relation. */
static void keep_next(void)
{
    pair *t = rel;
    size_t cap = rel_cap;
    rel = next, rel_cap = next_cap, rel_count = next_count;
    next = t, next_cap = cap, next_count = 0;
}

/* The senses by which o perceives t, given those by which it did before. */
static unsigned judge(const entity *o, const entity *t, unsigned before)
{
    unsigned now = 0;
    for (int s = 0; s < sense_count; s++)
        if (perceives(o, t, s, before >> s & 1u))
            now |= 1u << s;
    return now;
}

/* Judges o perceiving t again (NULL: not in the world), recording the changes. */
static void judge_pair(const entity *o, const entity *t, uint32_t oid, uint32_t tid)
{
    unsigned was = related(oid, tid);
    push_changes(oid, tid, was, o != NULL && t != NULL ? judge(o, t, was) : 0);
}

static int changed_before(uint32_t id, size_t k)
{
    for (size_t i = 0; i < k; i++)
        if (changed[i] == id)
            return 1;
    return 0;
}

/* The fast path: the pairs of the changed entities, both ways, each pair once. */
static void judge_changed(void)
{
    for (size_t k = 0; k < changed_count; k++) {
        uint32_t id = changed[k];
        const entity *e = find(id); /* NULL: removed */
        for (size_t i = 0; i < ent_count; i++) {
            const entity *x = &ents[i];
            if (x->id == id || changed_before(x->id, k))
                continue;
            judge_pair(e, x, id, x->id);
            judge_pair(x, e, x->id, id);
        }
    }
}

/* The sorted changes made to the relation, by a merge into `next`. */
static void apply_changes(void)
{
    size_t a = 0, i = 0;
    while (i < change_count) {
        pair p = {changes[i].observer, changes[i].target, 0};
        while (a < rel_count && cmp_pair(&rel[a], &p) < 0)
            push_next(rel[a++]);
        if (a < rel_count && cmp_pair(&rel[a], &p) == 0)
            p.senses = rel[a++].senses;
        for (;
             i < change_count && changes[i].observer == p.observer && changes[i].target == p.target;
             i++)
            p.senses ^= 1u << changes[i].sense;
        if (p.senses != 0)
            push_next(p);
    }
    while (a < rel_count)
        push_next(rel[a++]);
    keep_next();
}

static int cmp_entity(const void *pa, const void *pb)
{
    return cmp_u32(((const entity *)pa)->id, ((const entity *)pb)->id);
}

/*
 * --full: every pair judged, and the result diffed with the relation
 * before. With the entities in ID order the pairs come in the relation's
 * order, so one walk through the relation before finds what each pair was,
 * and the pairs it holds of an entity removed.
 */
static void judge_all(void)
{
    size_t a = 0; /* the first pair of rel not yet walked past */

    if (ent_count > 1)
        qsort(ents, ent_count, sizeof *ents, cmp_entity);
    for (size_t i = 0; i < ent_count; i++)
        for (size_t j = 0; j < ent_count; j++) {
            pair p = {ents[i].id, ents[j].id, 0};
            for (; a < rel_count && cmp_pair(&rel[a], &p) < 0; a++) /* gone */
                push_changes(rel[a].observer, rel[a].target, rel[a].senses, 0);
            unsigned before = a < rel_count && cmp_pair(&rel[a], &p) == 0 ? rel[a++].senses : 0;
            p.senses = judge(&ents[i], &ents[j], before);
            push_changes(p.observer, p.target, before, p.senses);
            if (p.senses != 0)
                push_next(p);
        }
    for (; a < rel_count; a++)
        push_changes(rel[a].observer, rel[a].target, rel[a].senses, 0);
    keep_next();
}

/* After a command, or a tick's end: the relation judged, its changes printed
 * at the current line and kept. */
static void settle(int full)
{
    if (full)
        judge_all();
    else
        judge_changed();
    changed_count = 0;
    if (change_count > 1)
        qsort(changes, change_count, sizeof *changes, cmp_change);
    for (size_t i = 0; i < change_count; i++)
        printf("%lu %lu %lu %s %s\n", line_no, (unsigned long)changes[i].observer,
               (unsigned long)changes[i].target, sense_names[changes[i].sense],
               changes[i].enter ? "enter" : "leave");
    if (!full && change_count > 0)
        apply_changes();
    change_count = 0;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                    */

/* A decimal integer in 0 .. 2^32-1. */
static uint32_t parse_u32(const char *s, const char *what)
{
    uint64_t v = 0;
    if (*s == '\0')
        die(what);
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            die(what);
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            die(what);
    }
    return (uint32_t)v;
}

static uint32_t parse_id(const char *s)
{
    return parse_u32(s, "bad ID");
}

/* N: decimal, or 0x and 1 to 8 hexadecimal digits. */
static uint32_t parse_mask(const char *s)
{
    if (s[0] == '0' && s[1] == 'x') {
        size_t digits = strlen(s + 2);
        if (digits < 1 || digits > 8 || strspn(s + 2, "0123456789abcdefABCDEF") != digits)
            die("bad mask");
        return (uint32_t)strtoul(s + 2, NULL, 16);
    }
    return parse_u32(s, "bad mask");
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

/* R and M. */
static double parse_nonnegative(const char *s)
{
    double v = parse_number(s);
    if (!(v >= 0))
        die("a range or margin below 0");
    return v;
}

/* K. */
static double parse_positive(const char *s)
{
    double v = parse_number(s);
    if (!(v > 0))
        die("a strength not above 0");
    return v;
}

static double parse_fov(const char *s)
{
    double v = parse_number(s);
    if (!(v > 0 && v <= 360))
        die("a fov not in 0 < DEG <= 360");
    return v;
}

static int sense_index(const char *name)
{
    for (int s = 0; s < sense_count; s++)
        if (strcmp(sense_names[s], name) == 0)
            return s;
    die("unknown sense");
    return -1;
}

/* hide=SENSE[,SENSE...] (one listed twice is hidden once). */
static unsigned parse_sense_list(char *list)
{
    unsigned bits = 0;
    for (char *p = list;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        bits |= 1u << sense_index(p);
        if (comma == NULL)
            return bits;
        p = comma + 1;
    }
}

/* facing=FX,FY[,FZ] */
static void parse_facing(entity *e, char *value)
{
    char *part[3];
    int n = 0;
    for (char *p = value; p != NULL; n++) {
        if (n == 3)
            die("facing: more than three numbers");
        part[n] = p;
        p = strchr(p, ',');
        if (p != NULL)
            *p++ = '\0';
    }
    if (n < 2)
        die("facing: fewer than two numbers");
    e->fx = parse_number(part[0]);
    e->fy = parse_number(part[1]);
    e->fz = n == 3 ? parse_number(part[2]) : 0;
}

static entity *must_find(const char *field)
{
    entity *e = find(parse_id(field));
    if (e == NULL)
        die("unknown ID");
    return e;
}

/* Marks field number `bit` of a command as given: a field given twice is an error. */
static void once(uint64_t *given, int bit)
{
    if (*given >> bit & 1u)
        die("a field given twice");
    *given |= (uint64_t)1 << bit;
}

/* One FIELD=VALUE of add or set. The format's own field names come before
 * the senses' names (a sense may be called "tags"). */
static void apply_field(entity *e, char *field, int in_add, uint64_t *given)
{
    char *value = strchr(field, '=');
    if (value == NULL)
        die("a field is not FIELD=VALUE");
    *value++ = '\0';
    if (strcmp(field, "tags") == 0) {
        once(given, 0);
        e->tags = parse_mask(value);
    } else if (strcmp(field, "facing") == 0) {
        once(given, 1);
        parse_facing(e, value);
    } else if (strcmp(field, "hide") == 0) {
        if (!in_add)
            die("hide= is for add only");
        once(given, 2);
        e->hidden = parse_sense_list(value);
    } else {
        char *dot = strchr(field, '.');
        if (dot != NULL)
            *dot++ = '\0';
        int s = sense_index(field);
        sense_settings *ss = &e->sense[s];
        if (dot == NULL) {
            once(given, 3 + 4 * s);
            ss->range = parse_nonnegative(value);
        } else if (strcmp(dot, "margin") == 0) {
            once(given, 4 + 4 * s);
            ss->margin = parse_nonnegative(value);
        } else if (strcmp(dot, "fov") == 0) {
            once(given, 5 + 4 * s);
            ss->fov = parse_fov(value);
        } else if (strcmp(dot, "ignore") == 0) {
            once(given, 6 + 4 * s);
            ss->ignore = parse_mask(value);
        } else {
            die("unknown field");
        }
    }
}

/* An entity with a cone must face somewhere once the command is done. */
static void check_facing(const entity *e)
{
    if (e->fx != 0 || e->fy != 0 || e->fz != 0)
        return;
    for (int s = 0; s < sense_count; s++)
        if (e->sense[s].fov < 360)
            die("a sense with a cone and a zero facing");
}

/* ------------------------------------------------------------------------ */
/* Commands                                                                  */

/* Notes that the command changed entity id; a tick names each entity once. */
static void note_changed(uint32_t id)
{
    if (in_tick && changed_before(id, changed_count))
        die("tick: an entity named twice");
    changed = grow(changed, &changed_cap, changed_count + 1, sizeof *changed);
    changed[changed_count++] = id;
}

static void cmd_senses(char **f, size_t n)
{
    if (n < 2 || n > 1 + MAX_SENSES)
        die("senses: 1 to 8 names");
    if (added)
        die("senses: must come before the first add");
    for (size_t i = 1; i < n; i++) {
        const char *name = f[i];
        size_t len = strlen(name);
        int letter = (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z');
        if (!letter || len > SENSE_NAME_MAX ||
            strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != len)
            die("senses: a bad name");
        for (size_t j = 1; j < i; j++)
            if (strcmp(f[j], name) == 0)
                die("senses: a name given twice");
    }
    sense_count = (int)(n - 1);
    for (int s = 0; s < sense_count; s++)
        strcpy(sense_names[s], f[1 + s]);
}

static void cmd_world(char **f, size_t n)
{
    if (n != 5)
        die("world: wrong number of fields");
    if (added)
        die("world: must come before the first add");
    double b[4];
    for (int i = 0; i < 4; i++)
        b[i] = parse_number(f[1 + i]);
    if (b[0] > b[2] || b[1] > b[3])
        die("world: a minimum above its maximum");
    /* The bounds only tune the backends: the relation ignores them. */
}

/* The optional Z of add, move and emit: field i when it is no FIELD=VALUE. */
static int has_z(char **f, size_t n, size_t i)
{
    return i < n && strchr(f[i], '=') == NULL;
}

static void cmd_add(char **f, size_t n)
{
    entity e = {0};
    uint64_t given = 0;

    if (n < 4)
        die("add: wrong number of fields");
    added = 1;
    e.id = parse_id(f[1]);
    if (find(e.id) != NULL)
        die("add: an ID in the world");
    e.x = parse_number(f[2]);
    e.y = parse_number(f[3]);
    size_t i = 4;
    if (has_z(f, n, i))
        e.z = parse_number(f[i++]);
    for (int s = 0; s < MAX_SENSES; s++)
        e.sense[s].fov = 360;
    for (; i < n; i++)
        apply_field(&e, f[i], 1, &given);
    check_facing(&e);
    ents = grow(ents, &ent_cap, ent_count + 1, sizeof *ents);
    ents[ent_count++] = e;
    note_changed(e.id);
}

static void cmd_remove(char **f, size_t n)
{
    if (n != 2)
        die("remove: wrong number of fields");
    entity *e = must_find(f[1]);
    note_changed(e->id);
    *e = ents[--ent_count];
}

static void cmd_move(char **f, size_t n)
{
    if (n != 4 && n != 5)
        die("move: wrong number of fields");
    entity *e = must_find(f[1]);
    e->x = parse_number(f[2]);
    e->y = parse_number(f[3]);
    e->z = n == 5 ? parse_number(f[4]) : 0;
    note_changed(e->id);
}

static void cmd_face(char **f, size_t n)
{
    if (n != 4 && n != 5)
        die("face: wrong number of fields");
    entity *e = must_find(f[1]);
    e->fx = parse_number(f[2]);
    e->fy = parse_number(f[3]);
    e->fz = n == 5 ? parse_number(f[4]) : 0;
    check_facing(e);
    note_changed(e->id);
}

static void cmd_set(char **f, size_t n)
{
    uint64_t given = 0;
    if (n < 3)
        die("set: wrong number of fields");
    entity *e = must_find(f[1]);
    for (size_t i = 2; i < n; i++)
        apply_field(e, f[i], 0, &given);
    check_facing(e);
    note_changed(e->id);
}

static void cmd_range(char **f, size_t n)
{
    if (n != 4)
        die("range: wrong number of fields");
    entity *e = must_find(f[1]);
    e->sense[sense_index(f[2])].range = parse_nonnegative(f[3]);
    note_changed(e->id);
}

static void cmd_hide_show(char **f, size_t n)
{
    if (n != 3)
        die("hide/show: wrong number of fields");
    entity *e = must_find(f[1]);
    unsigned bit = 1u << sense_index(f[2]);
    if (strcmp(f[0], "hide") == 0)
        e->hidden |= bit;
    else
        e->hidden &= ~bit;
    note_changed(e->id);
}

/* Prints who perceives the stimulus, by observer; the world is unchanged. */
static void cmd_emit(char **f, size_t n)
{
    stimulus st = {0};
    uint64_t given = 0;

    if (n < 4 || n > 8)
        die("emit: wrong number of fields");
    st.sense = sense_index(f[1]);
    st.x = parse_number(f[2]);
    st.y = parse_number(f[3]);
    size_t i = 4;
    if (has_z(f, n, i))
        st.z = parse_number(f[i++]);
    st.strength = 1;
    for (; i < n; i++) {
        char *value = strchr(f[i], '=');
        if (value == NULL)
            die("emit: a field is not FIELD=VALUE");
        *value++ = '\0';
        if (strcmp(f[i], "strength") == 0) {
            once(&given, 0);
            st.strength = parse_positive(value);
        } else if (strcmp(f[i], "source") == 0) {
            once(&given, 1);
            st.source = must_find(value)->id;
            st.has_source = 1;
        } else if (strcmp(f[i], "tags") == 0) {
            once(&given, 2);
            st.tags = parse_mask(value);
        } else {
            die("emit: unknown field");
        }
    }

    uint32_t *who = malloc((ent_count + 1) * sizeof *who);
    size_t count = 0;
    if (who == NULL)
        die("out of memory");
    for (size_t k = 0; k < ent_count; k++)
        if (perceives_stimulus(&ents[k], &st))
            who[count++] = ents[k].id;
    qsort(who, count, sizeof *who, cmp_id);
    for (size_t k = 0; k < count; k++) {
        printf("%lu %lu ", line_no, (unsigned long)who[k]);
        if (st.has_source)
            printf("%lu", (unsigned long)st.source);
        else
            putchar('-');
        printf(" %s stimulus\n", sense_names[st.sense]);
    }
    free(who);
}

static const struct {
    const char *name;
    void (*run)(char **f, size_t n);
    int in_tick; /* allowed between tick and end */
} commands[] = {
    {"senses", cmd_senses, 0},  {"world", cmd_world, 0}, {"add", cmd_add, 0},
    {"remove", cmd_remove, 0},  {"move", cmd_move, 1},   {"face", cmd_face, 1},
    {"set", cmd_set, 1},        {"range", cmd_range, 0}, {"hide", cmd_hide_show, 0},
    {"show", cmd_hide_show, 0}, {"emit", cmd_emit, 0},
};

/* Runs one line's command; outside a tick, the relation is judged after it. */
static void run(char **f, size_t n, int full)
{
    if (strcmp(f[0], "tick") == 0) {
        if (n != 1)
            die("tick: wrong number of fields");
        if (in_tick)
            die("tick: a tick inside a tick");
        in_tick = 1;
        tick_line = line_no;
        return;
    }
    if (strcmp(f[0], "end") == 0) {
        if (n != 1)
            die("end: wrong number of fields");
        if (!in_tick)
            die("end: no tick to end");
        in_tick = 0;
        settle(full); /* the tick's changes, at the line of its end */
        return;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(f[0], commands[i].name) != 0)
            continue;
        if (in_tick && !commands[i].in_tick)
            die("tick: only move, face and set until end");
        commands[i].run(f, n);
        if (!in_tick)
            settle(full);
        return;
    }
    die("unknown command");
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 16];
    FILE *in = stdin;
    int full = 0;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;

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

    while ((got = getline(&line, &cap, in)) >= 0) {
        char *f[MAX_FIELDS], *p = line;
        size_t len = (size_t)got, n = 0;

        line_no++;
        /* A UTF-8 byte order mark may start the file; a line ends with LF or
         * CRLF, and any other control character in it is an error. */
        if (line_no == 1 && len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
            p += 3, len -= 3;
        if (len > 0 && p[len - 1] == '\n')
            p[--len] = '\0';
        if (len > 0 && p[len - 1] == '\r')
            p[--len] = '\0';
        for (size_t i = 0; i < len; i++)
            if (((unsigned char)p[i] < 0x20 && p[i] != '\t') || p[i] == 0x7f)
                die("a control character");
        /* A comment may hold any number of words: skip it before splitting. */
        if (p[strspn(p, " \t")] == '#')
            continue;
        for (;;) {
            p += strspn(p, " \t");
            if (*p == '\0')
                break;
            if (n == MAX_FIELDS)
                die("too many fields");
            f[n++] = p;
            p += strcspn(p, " \t");
            if (*p != '\0')
                *p++ = '\0';
        }
        if (n > 0)
            run(f, n, full);
    }
    if (ferror(in))
        die("read error");
    if (in_tick) {
        line_no = tick_line;
        die("tick: no end");
    }
    free(line);
    if (fflush(stdout) != 0) {
        perror("reference: standard output");
        return 1;
    }
    return 0;
}
