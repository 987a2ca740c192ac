/*
 * tracegen.c - writes a deterministic perception trace (docs/trace-format.md)
 * for the conformance test: the same KIND and SEED give the same bytes on
 * every platform, so a failure can always be reproduced from its name.
 *
 * Usage: tracegen KIND SEED [N] [OPS]
 *
 * Kinds: walk crowd teleport churn mixed outside boundary road hideshow ulps,
 * and all (every op drawn from one of the others, in one world): version 1
 * traces, whose bytes must not change. Version 2 kinds: cones margins masks
 * heights stimuli senses8 ticks, and v2all (every op drawn from any kind).
 * Each aims at its feature's boundaries:
 *   cones     targets on the edges of 90, 180 and 270 degree cones (the
 *             offsets are whole multiples of the facing and its
 *             perpendicular), straight ahead or behind, a unit off an edge,
 *             on the observer itself (dd == 0); facings and fovs change
 *   margins   targets swept across R and R + M both ways, at exact
 *             distances; range and margin set at once
 *   masks     tags and ignore masks that share a bit or not, set and reset
 *   heights   heights, moves straight up or down, 3D Pythagorean distances,
 *             cones around a vertical facing (3-4-5 is 45 degrees off it)
 *   stimuli   emits at exactly strength * R from an observer, or a tick
 *             either side, on an entity, with and without source,
 *             strength and tags
 *   senses8   eight senses named by the world, the longest name allowed
 *   ticks     tick blocks of moves, faces and sets, some of them a pair
 *             that would enter and leave within the block
 *
 * Coordinates and ranges are kept as integers counting 1/den units, where den
 * is 1, 2 or 10 per kind, and printed exactly. Kinds that aim at exact
 * boundaries use den 1 or 2, so every square they lead to is an exact double
 * and "on the boundary" means exactly that for any correct implementation.
 * walk uses tenths, which are rounded when read: its near-boundary pairs fall
 * an ulp or so to either side, and an index must agree with the double test.
 *
 * ulps goes further: it puts a target -4..+4 ulps around an observer's
 * rounded reach fl(o - R) or fl(o + R), on either axis and side, where the
 * rounded difference fl(t - o) can still be exactly R (an observer at 128
 * with range 64 perceives a target at 63.99999999999999), then may sweep
 * the target or the observer across it one ulp at a time (see op_ulps).
 * Such positions and ranges are no ticks: an entity then holds exact
 * doubles, printed with "%.17g" so that they read back bit for bit. They
 * come from single + - * / of doubles, each assigned to a double (correctly
 * rounded), and from ulp steps on the bits, never from libm, so the bytes
 * are the same wherever doubles are IEEE binary64 evaluated as such
 * (FLT_EVAL_METHOD 0, as on every 64-bit target).
 */
#include <float.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../tools/splitmix.h"

#define SENSES 3 /* the default senses, version 1's */
#define MAX_SENSES 8
static const char *const default_senses[SENSES] = {"sight", "hearing", "smell"};
/* senses8's: every character a name may hold, and a name of the most bytes (31). */
static const char *const eight_senses[MAX_SENSES] = {
    "sight",  "hearing", "smell", "touch",
    "heat_2", "Radio-X", "e",     "a_sense_with_the_longest_name31"};

/* ------------------------------------------------------------------------ */
/* PRNG: splitmix64, fully specified, so that a seed means one trace         */

static uint64_t rng_state;

/* Uniform in 0 .. n-1; n is small, so the modulo bias is tiny and fixed. */
static int64_t rnd(int64_t n)
{
    return n <= 1 ? 0 : (int64_t)(splitmix_next(&rng_state) % (uint64_t)n);
}

/* Uniform in lo .. hi, both included. */
static int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + rnd(hi - lo + 1);
}

/* 1 with probability pct/100. */
static int chance(int pct)
{
    return rnd(100) < pct;
}

/* ------------------------------------------------------------------------ */
/* State                                                                     */

/* Bits of entity.exact: the value is the double, not the ticks. */
#define EXACT_X 1u
#define EXACT_Y 2u
#define EXACT_RANGE(s) (4u << (s))

typedef struct entity {
    uint32_t id;
    int alive;
    size_t live_pos;           /* index in g.live while alive */
    int64_t x, y;              /* in ticks (1/den units) */
    int64_t range[MAX_SENSES]; /* in ticks; 0 = lacks the sense */
    int64_t saved[MAX_SENSES]; /* the last range > 0, to switch a sense back on */
    unsigned hidden;           /* bit s: imperceptible to sense s */
    /* Version 2 only: */
    int64_t z;                  /* in ticks */
    int64_t facing[3];          /* whole numbers: the direction is what counts */
    uint32_t tags;              /* what it is, for the others' ignore masks */
    int64_t margin[MAX_SENSES]; /* in ticks */
    double fov[MAX_SENSES];     /* degrees; 360: no cone */
    uint32_t ignore[MAX_SENSES];
    /*
     * Values that are no ticks (the ulps kind): where a bit of `exact` is
     * set, the double is what the trace says, and the ticks above hold it
     * truncated, for the ops that only know ticks (which then put back a
     * tick value and clear the bit).
     */
    unsigned exact;
    double fx, fy, frange[MAX_SENSES];
} entity;

struct kind;

typedef struct gen {
    const struct kind *kind; /* the trace's kind */
    const struct kind *cur;  /* the kind whose behaviour the current op follows */
    int64_t den;             /* ticks per unit */
    int64_t w[4];            /* world bounds in ticks: min_x, min_y, max_x, max_y */
    entity *ents;            /* every ID used so far, alive or removed */
    size_t ent_count, ent_cap;
    size_t *live; /* indices of the living entities in ents */
    size_t live_count;
    size_t target_n; /* how many entities the trace keeps around */
    uint32_t next_id;
    int v2; /* a version 2 trace: heights, facings, margins and the like */
    int sense_count;
    const char *const *sense_names;
} gen;

static gen g;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (p == NULL) {
        fputs("tracegen: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

static int64_t units(int64_t u)
{
    return u * g.den;
}

static int64_t world_w(void)
{
    return g.w[2] - g.w[0];
}

static int64_t world_h(void)
{
    return g.w[3] - g.w[1];
}

/* ------------------------------------------------------------------------ */
/* Output                                                                    */

/* Writes ticks / den exactly as a decimal number. */
static void format_num(char *buf, size_t size, int64_t t)
{
    uint64_t a = t < 0 ? (uint64_t)0 - (uint64_t)t : (uint64_t)t;
    uint64_t d = (uint64_t)g.den;
    const char *sign = t < 0 ? "-" : "";

    if (a % d == 0)
        snprintf(buf, size, "%s%" PRIu64, sign, a / d);
    else if (d == 2)
        snprintf(buf, size, "%s%" PRIu64 ".5", sign, a / d);
    else /* den 10: one decimal digit */
        snprintf(buf, size, "%s%" PRIu64 ".%" PRIu64, sign, a / d, a % d);
}

/* One value of an entity: the double v when exact (written so that it
 * reads back as exactly v), else its ticks t. */
static void format_value(char *buf, size_t size, unsigned exact, double v, int64_t t)
{
    if (exact)
        snprintf(buf, size, "%.17g", v);
    else
        format_num(buf, size, t);
}

/* An entity's range for sense s, as the trace says it. */
static void format_range(char *buf, size_t size, const entity *e, int s)
{
    format_value(buf, size, e->exact & EXACT_RANGE(s), e->frange[s], e->range[s]);
}

static void put_num(int64_t t)
{
    char buf[48];
    format_num(buf, sizeof buf, t);
    printf(" %s", buf);
}

/* X Y, and in version 2 Z: left out, it is 0. */
static void put_pos(const entity *e)
{
    char x[48], y[48];
    format_value(x, sizeof x, e->exact & EXACT_X, e->fx, e->x);
    format_value(y, sizeof y, e->exact & EXACT_Y, e->fy, e->y);
    printf(" %s %s", x, y);
    if (g.v2 && (e->z != 0 || chance(10)))
        put_num(e->z);
}

/* A mask, in any of the format's spellings. */
static void format_mask(char *buf, size_t size, uint32_t m)
{
    int64_t how = rnd(4);
    if (how == 0)
        snprintf(buf, size, "0x%" PRIx32, m);
    else if (how == 1)
        snprintf(buf, size, "0x%08" PRIX32, m);
    else
        snprintf(buf, size, "%" PRIu32, m);
}

/* The fields of add and set: four per sense, then tags and the facing. */
enum { FIELD_RANGE, FIELD_MARGIN, FIELD_FOV, FIELD_IGNORE, FIELDS_PER_SENSE };
#define FIELD_TAGS (MAX_SENSES * FIELDS_PER_SENSE)
#define FIELD_FACING (FIELD_TAGS + 1)
/* Room for the longest FIELD=VALUE: a hide= of all eight senses of senses8. */
#define FIELD_LEN 128

static int sense_field(int s, int which)
{
    return s * FIELDS_PER_SENSE + which;
}

static int facing_zero(const entity *e)
{
    return e->facing[0] == 0 && e->facing[1] == 0 && e->facing[2] == 0;
}

/* Field f of e as FIELD=VALUE, with e's value now. */
static void format_field(char *buf, const entity *e, int f)
{
    char v[48];
    int s = f / FIELDS_PER_SENSE;

    if (f == FIELD_TAGS) {
        format_mask(v, sizeof v, e->tags);
        snprintf(buf, FIELD_LEN, "tags=%s", v);
    } else if (f == FIELD_FACING) {
        int n = snprintf(buf, FIELD_LEN, "facing=%" PRId64 ",%" PRId64, e->facing[0], e->facing[1]);
        if (e->facing[2] != 0 || chance(20))
            snprintf(buf + n, FIELD_LEN - (size_t)n, ",%" PRId64, e->facing[2]);
    } else if (f % FIELDS_PER_SENSE == FIELD_RANGE) {
        format_range(v, sizeof v, e, s);
        snprintf(buf, FIELD_LEN, "%s=%s", g.sense_names[s], v);
    } else if (f % FIELDS_PER_SENSE == FIELD_MARGIN) {
        format_num(v, sizeof v, e->margin[s]);
        snprintf(buf, FIELD_LEN, "%s.margin=%s", g.sense_names[s], v);
    } else if (f % FIELDS_PER_SENSE == FIELD_FOV) {
        snprintf(buf, FIELD_LEN, "%s.fov=%g", g.sense_names[s], e->fov[s]);
    } else {
        format_mask(v, sizeof v, e->ignore[s]);
        snprintf(buf, FIELD_LEN, "%s.ignore=%s", g.sense_names[s], v);
    }
}

/* The version 2 fields of an add: those not at their default, and now and
 * then one that is, written out. */
static int v2_options(const entity *e, char (*opt)[FIELD_LEN])
{
    int n = 0;
    for (int s = 0; s < g.sense_count; s++) {
        if (e->margin[s] != 0 || chance(3))
            format_field(opt[n++], e, sense_field(s, FIELD_MARGIN));
        if (e->fov[s] != 360 || chance(3))
            format_field(opt[n++], e, sense_field(s, FIELD_FOV));
        if (e->ignore[s] != 0 || chance(3))
            format_field(opt[n++], e, sense_field(s, FIELD_IGNORE));
    }
    if (e->tags != 0 || chance(3))
        format_field(opt[n++], e, FIELD_TAGS);
    if (!facing_zero(e) || chance(3))
        format_field(opt[n++], e, FIELD_FACING);
    return n;
}

static void emit_add(const entity *e)
{
    char opt[MAX_SENSES * FIELDS_PER_SENSE + 3][FIELD_LEN]; /* and tags, facing, hide */
    int n = 0;

    for (int s = 0; s < g.sense_count; s++) {
        /* A missing sense is written as =0 or left out: both mean 0. */
        if (e->range[s] == 0 && chance(50))
            continue;
        char num[48];
        format_range(num, sizeof num, e, s);
        snprintf(opt[n++], sizeof opt[0], "%s=%s", g.sense_names[s], num);
    }
    if (g.v2)
        n += v2_options(e, opt + n);
    if (e->hidden != 0) {
        char *p = opt[n++];
        p += sprintf(p, "hide=");
        const char *sep = "";
        for (int s = 0; s < g.sense_count; s++)
            if (e->hidden & (1u << s)) {
                p += sprintf(p, "%s%s", sep, g.sense_names[s]);
                sep = ",";
            }
    }
    /* The options may come in any order. */
    if (n > 1 && chance(15)) {
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rnd(i + 1);
            char tmp[FIELD_LEN];
            memcpy(tmp, opt[i], sizeof tmp);
            memcpy(opt[i], opt[j], sizeof tmp);
            memcpy(opt[j], tmp, sizeof tmp);
        }
    }
    printf("add %" PRIu32, e->id);
    put_pos(e);
    for (int i = 0; i < n; i++)
        printf(" %s", opt[i]);
    putchar('\n');
}

static void emit_move(const entity *e)
{
    printf("move %" PRIu32, e->id);
    put_pos(e);
    putchar('\n');
}

static void emit_range(const entity *e, int s)
{
    char num[48];
    format_range(num, sizeof num, e, s);
    printf("range %" PRIu32 " %s %s\n", e->id, g.sense_names[s], num);
}

static void emit_face(const entity *e)
{
    printf("face %" PRIu32 " %" PRId64 " %" PRId64, e->id, e->facing[0], e->facing[1]);
    if (e->facing[2] != 0 || chance(20))
        printf(" %" PRId64, e->facing[2]);
    putchar('\n');
}

/* A set of the fields listed, with e's values now. */
static void emit_set(const entity *e, const int *fields, int n)
{
    char buf[FIELD_LEN];
    printf("set %" PRIu32, e->id);
    for (int i = 0; i < n; i++) {
        format_field(buf, e, fields[i]);
        printf(" %s", buf);
    }
    putchar('\n');
}

/* ------------------------------------------------------------------------ */
/* Kinds: where entities stand, their ranges, and what happens to them       */

enum op {
    OP_STEP,     /* a short move */
    OP_JUMP,     /* a move to a fresh position of the kind (a teleport) */
    OP_REMOVE,   /* an entity leaves */
    OP_ADD,      /* a new ID, or a removed one added again */
    OP_RANGE,    /* a new range for one sense, 0, or back to the last one */
    OP_HIDE,     /* hide or show one sense */
    OP_BOUNDARY, /* a move to an exact Pythagorean distance from another entity */
    OP_COINCIDE, /* a move onto another entity's position */
    OP_NOOP,     /* a command that changes nothing */
    OP_ULPS,     /* a target a few ulps around an observer's rounded reach */
    /* Version 2 only: */
    OP_FACE,   /* a new facing */
    OP_SET,    /* a set of a few fields at once */
    OP_CONE,   /* a target on an edge of an observer's cone */
    OP_MARGIN, /* a target swept across an observer's R and R + M */
    OP_MASK,   /* new tags or ignore masks */
    OP_HEIGHT, /* a move straight up or down, or to a 3D Pythagorean distance */
    OP_EMIT,   /* a stimulus */
    OP_TICK,   /* a tick block */
    OP_COUNT
};

typedef struct kind {
    const char *name;
    int64_t den;
    int64_t world[4]; /* in units */
    size_t n, ops;    /* defaults */
    void (*place)(int64_t *x, int64_t *y);
    int64_t (*range)(int s);
    int64_t step;         /* the longest step per axis, in units */
    int weight[OP_COUNT]; /* relative frequency of each op */
    int road;             /* every position keeps y on the road */
    /* Version 2 kinds: the trace's senses (NULL: the default ones), and
     * how often, in percent, an entity added has a height, tags, or a
     * sense a cone, a margin, an ignore mask. */
    int v2;
    const char *const *senses;
    int height, mask, cone, margin;
} kind;

/* A uniform position inside the world, bounds included. */
static void place_uniform(int64_t *x, int64_t *y)
{
    *x = rnd_in(g.w[0], g.w[2]);
    *y = rnd_in(g.w[1], g.w[3]);
}

/* Whole units only, for the kinds that place exact boundaries. */
static void place_integer(int64_t *x, int64_t *y)
{
    place_uniform(x, y);
    *x -= *x % g.den;
    *y -= *y % g.den;
    if (chance(10)) { /* on the world's edge or a little beyond */
        int64_t off = units(rnd_in(0, 3)) * (chance(50) ? 1 : -1);
        if (chance(50))
            *x = (chance(50) ? g.w[0] : g.w[2]) + off;
        else
            *y = (chance(50) ? g.w[1] : g.w[3]) + off;
    }
}

/* The town square: 15% of the world's side, around its centre. */
static void place_crowd(int64_t *x, int64_t *y)
{
    int64_t side = world_w() * 15 / 100;
    int64_t cx = g.w[0] + world_w() / 2, cy = g.w[1] + world_h() / 2;
    *x = rnd_in(cx - side / 2, cx + side / 2);
    *y = rnd_in(cy - side / 2, cy + side / 2);
}

/* Anywhere: inside, across the surroundings, far away, or right on a corner. */
static void place_teleport(int64_t *x, int64_t *y)
{
    int64_t k = rnd(100);
    if (k < 45) {
        place_uniform(x, y);
    } else if (k < 75) {
        *x = rnd_in(g.w[0] - world_w(), g.w[2] + world_w());
        *y = rnd_in(g.w[1] - world_h(), g.w[3] + world_h());
    } else if (k < 92) {
        *x = units(rnd_in(10000, 1000000)) * (chance(50) ? 1 : -1);
        *y = units(rnd_in(-1000000, 1000000));
    } else {
        *x = chance(50) ? g.w[0] : g.w[2];
        *y = chance(50) ? g.w[1] : g.w[3];
    }
}

/* NPC camps: most entities near one of eight fixed centres, the rest anywhere. */
static void place_mixed(int64_t *x, int64_t *y)
{
    if (chance(30)) {
        place_uniform(x, y);
        return;
    }
    int64_t c = rnd(8);
    /* Fixed centres, spread over the world in eighths. */
    int64_t cx = g.w[0] + world_w() * (1 + (c * 3) % 8) / 9;
    int64_t cy = g.w[1] + world_h() * (1 + (c * 5) % 8) / 9;
    int64_t spread = units(60);
    *x = cx + rnd_in(-spread, spread);
    *y = cy + rnd_in(-spread, spread);
}

/* Mostly outside: beside the bounds, negative, or in far clusters. */
static void place_outside(int64_t *x, int64_t *y)
{
    static const int64_t far[4][2] = {
        {-1000000, -1000000}, {-50000, 300}, {1000000, 1000000}, {3000, -2000}};
    int64_t k = rnd(100);
    if (k < 25) {
        place_uniform(x, y);
    } else if (k < 50) { /* within 100 units beyond one side */
        place_uniform(x, y);
        int64_t off = rnd_in(0, units(100));
        switch (rnd(4)) {
        case 0:
            *x = g.w[0] - off;
            break;
        case 1:
            *x = g.w[2] + off;
            break;
        case 2:
            *y = g.w[1] - off;
            break;
        default:
            *y = g.w[3] + off;
        }
    } else {
        int64_t c = rnd(4);
        *x = units(far[c][0]) + rnd_in(-units(300), units(300));
        *y = units(far[c][1]) + rnd_in(-units(300), units(300));
    }
}

/* On the road: y fixed at the middle of the world, x a little beyond the ends. */
static void place_road(int64_t *x, int64_t *y)
{
    *x = rnd_in(g.w[0] - units(100), g.w[2] + units(100));
    *y = g.w[1] + world_h() / 2;
    *y -= *y % g.den;
}

/* Ranges in whole units, lo .. hi. */
static int64_t range_units(int64_t lo, int64_t hi)
{
    return units(rnd_in(lo, hi));
}

/* Ranges in ticks (fractions allowed), lo .. hi units. */
static int64_t range_ticks(int64_t lo, int64_t hi)
{
    return rnd_in(units(lo), units(hi));
}

static int64_t range_walk(int s)
{
    static const int64_t lo[SENSES] = {20, 30, 5}, hi[SENSES] = {80, 120, 40};
    return chance(10) ? 0 : range_ticks(lo[s], hi[s]);
}

static int64_t range_crowd(int s)
{
    static const int64_t lo[SENSES] = {5, 10, 2}, hi[SENSES] = {30, 45, 12};
    return chance(10) ? 0 : range_ticks(lo[s], hi[s]);
}

static int64_t range_teleport(int s)
{
    static const int64_t lo[SENSES] = {20, 40, 10}, hi[SENSES] = {100, 150, 50};
    return chance(10) ? 0 : range_ticks(lo[s], hi[s]);
}

/* Small NPC ranges, a few four times larger, and many senses missing. */
static int64_t range_mixed(int s)
{
    static const int64_t lo[SENSES] = {10, 15, 5}, hi[SENSES] = {30, 40, 20};
    if (chance(25))
        return 0;
    int64_t r = range_ticks(lo[s], hi[s]);
    return chance(12) ? 4 * r : r;
}

static int64_t range_outside(int s)
{
    int64_t k = rnd(100);
    if (k < 10)
        return 0;
    if (k < 75)
        return range_ticks(20, s == 1 ? 150 : 100);
    if (k < 97)
        return range_ticks(200, 500);
    return range_units(1000000, 2500000); /* sees across the far clusters */
}

/* Integer ranges that are hypotenuses or legs of the triangles used. */
static int64_t range_boundary(int s)
{
    static const int64_t set[] = {1, 2, 3, 4, 5, 8, 10, 12, 13, 15, 16, 17, 20, 24, 25, 26, 30, 34};
    (void)s;
    return chance(8) ? 0 : units(set[rnd(sizeof set / sizeof set[0])]);
}

static int64_t range_road(int s)
{
    static const int64_t lo[SENSES] = {10, 20, 5}, hi[SENSES] = {80, 120, 40};
    return chance(10) ? 0 : range_units(lo[s], hi[s]);
}

static int64_t range_hideshow(int s)
{
    static const int64_t lo[SENSES] = {10, 15, 5}, hi[SENSES] = {50, 70, 30};
    return chance(20) ? 0 : range_ticks(lo[s], hi[s]);
}

/* The bystanders of ulps: short ranges, which the core finds as near
 * observers through the backends, and longer ones, which it keeps in its
 * observer grid (beyond 1.25 of its cells). */
static int64_t range_ulps(int s)
{
    static const int64_t lo[SENSES] = {5, 10, 2}, hi[SENSES] = {70, 50, 30};
    return chance(10) ? 0 : range_ticks(lo[s], hi[s]);
}

/* Version 2 kinds: any of up to eight senses. */
static int64_t range_cones(int s)
{
    (void)s;
    return chance(5) ? 0 : range_units(5, 40);
}

/* Whole units, several of them multiples of 5, so that margins' sweeps can
 * take a 3-4-5 diagonal (see margin_move). */
static int64_t range_margins(int s)
{
    static const int64_t set[] = {5, 10, 13, 15, 20, 25, 26, 30};
    (void)s;
    return chance(5) ? 0 : units(set[rnd(sizeof set / sizeof set[0])]);
}

static int64_t range_v2(int s)
{
    (void)s;
    return chance(10) ? 0 : range_ticks(5, 50);
}

/*                      STEP JUMP REM ADD RANGE HIDE BOUND COINC NOOP ULPS */
static const kind kinds[] = {
    {.name = "walk",
     .den = 10,
     .world = {0, 0, 1000, 1000},
     .n = 250,
     .ops = 4000,
     .place = place_uniform,
     .range = range_walk,
     .step = 5,
     .weight = {900, 20, 15, 15, 30, 20, 40, 0, 0},
     .road = 0},
    {.name = "crowd",
     .den = 2,
     .world = {0, 0, 2000, 2000},
     .n = 400,
     .ops = 2000,
     .place = place_crowd,
     .range = range_crowd,
     .step = 3,
     .weight = {850, 10, 30, 30, 50, 30, 0, 10, 0},
     .road = 0},
    {.name = "teleport",
     .den = 2,
     .world = {-512, -256, 512, 768},
     .n = 200,
     .ops = 3000,
     .place = place_teleport,
     .range = range_teleport,
     .step = 10,
     .weight = {300, 600, 30, 30, 40, 0, 0, 0, 0},
     .road = 0},
    {.name = "churn",
     .den = 2,
     .world = {0, 0, 1000, 1000},
     .n = 250,
     .ops = 3000,
     .place = place_uniform,
     .range = range_walk,
     .step = 10,
     .weight = {300, 50, 300, 300, 50, 0, 0, 0, 0},
     .road = 0},
    {.name = "mixed",
     .den = 2,
     .world = {0, 0, 2000, 2000},
     .n = 300,
     .ops = 3000,
     .place = place_mixed,
     .range = range_mixed,
     .step = 10,
     .weight = {800, 40, 30, 30, 80, 20, 0, 0, 0},
     .road = 0},
    {.name = "outside",
     .den = 2,
     .world = {0, 0, 1000, 1000},
     .n = 250,
     .ops = 3000,
     .place = place_outside,
     .range = range_outside,
     .step = 20,
     .weight = {650, 200, 50, 50, 50, 0, 0, 0, 0},
     .road = 0},
    {.name = "boundary",
     .den = 1,
     .world = {0, 0, 200, 200},
     .n = 200,
     .ops = 3000,
     .place = place_integer,
     .range = range_boundary,
     .step = 3,
     .weight = {150, 20, 25, 25, 100, 50, 580, 50, 0},
     .road = 0},
    {.name = "road",
     .den = 2,
     .world = {0, 0, 2000, 1000},
     .n = 200,
     .ops = 3000,
     .place = place_road,
     .range = range_road,
     .step = 20,
     .weight = {700, 150, 15, 15, 50, 20, 0, 50, 0},
     .road = 1},
    {.name = "hideshow",
     .den = 2,
     .world = {0, 0, 500, 500},
     .n = 150,
     .ops = 3000,
     .place = place_uniform,
     .range = range_hideshow,
     .step = 10,
     .weight = {120, 0, 25, 25, 350, 450, 0, 0, 30},
     .road = 0},
    {.name = "ulps",
     .den = 2,
     .world = {0, 0, 1024, 1024},
     .n = 100,
     .ops = 3000,
     .place = place_uniform,
     .range = range_ulps,
     .step = 10,
     .weight = {250, 30, 25, 25, 40, 10, 0, 0, 0, 450},
     .road = 0},
    /* Version 2 */
    {.name = "cones",
     .den = 1,
     .world = {0, 0, 100, 100},
     .n = 40,
     .ops = 3000,
     .place = place_integer,
     .range = range_cones,
     .step = 3,
     .weight = {[OP_STEP] = 200,
                [OP_JUMP] = 20,
                [OP_REMOVE] = 10,
                [OP_ADD] = 10,
                [OP_RANGE] = 20,
                [OP_HIDE] = 10,
                [OP_COINCIDE] = 20,
                [OP_FACE] = 100,
                [OP_SET] = 60,
                [OP_CONE] = 500},
     .v2 = 1,
     .cone = 70},
    {.name = "margins",
     .den = 2,
     .world = {0, 0, 300, 300},
     .n = 50,
     .ops = 3000,
     .place = place_integer,
     .range = range_margins,
     .step = 5,
     .weight = {[OP_STEP] = 200,
                [OP_JUMP] = 20,
                [OP_REMOVE] = 10,
                [OP_ADD] = 10,
                [OP_RANGE] = 30,
                [OP_HIDE] = 10,
                [OP_SET] = 80,
                [OP_MARGIN] = 500},
     .v2 = 1,
     .cone = 10,
     .margin = 70},
    {.name = "masks",
     .den = 2,
     .world = {0, 0, 120, 120},
     .n = 60,
     .ops = 3000,
     .place = place_uniform,
     .range = range_v2,
     .step = 10,
     .weight = {[OP_STEP] = 400,
                [OP_JUMP] = 20,
                [OP_REMOVE] = 20,
                [OP_ADD] = 20,
                [OP_HIDE] = 80,
                [OP_SET] = 40,
                [OP_MASK] = 400},
     .v2 = 1,
     .mask = 70,
     .cone = 10,
     .margin = 10},
    {.name = "heights",
     .den = 2,
     .world = {0, 0, 300, 300},
     .n = 50,
     .ops = 3000,
     .place = place_integer,
     .range = range_boundary,
     .step = 5,
     .weight = {[OP_STEP] = 200,
                [OP_JUMP] = 20,
                [OP_REMOVE] = 10,
                [OP_ADD] = 10,
                [OP_RANGE] = 40,
                [OP_FACE] = 30,
                [OP_CONE] = 100,
                [OP_MARGIN] = 50,
                [OP_HEIGHT] = 500},
     .v2 = 1,
     .height = 60,
     .cone = 30,
     .margin = 20},
    {.name = "stimuli",
     .den = 2,
     .world = {0, 0, 200, 200},
     .n = 50,
     .ops = 3000,
     .place = place_integer,
     .range = range_v2,
     .step = 5,
     .weight = {[OP_STEP] = 300,
                [OP_JUMP] = 20,
                [OP_REMOVE] = 10,
                [OP_ADD] = 10,
                [OP_RANGE] = 30,
                [OP_HIDE] = 20,
                [OP_FACE] = 20,
                [OP_MASK] = 40,
                [OP_EMIT] = 500},
     .v2 = 1,
     .height = 20,
     .mask = 30,
     .cone = 30,
     .margin = 10},
    {.name = "senses8",
     .den = 2,
     .world = {0, 0, 500, 500},
     .n = 60,
     .ops = 3000,
     .place = place_uniform,
     .range = range_v2,
     .step = 10,
     .weight = {[OP_STEP] = 400,
                [OP_JUMP] = 30,
                [OP_REMOVE] = 20,
                [OP_ADD] = 20,
                [OP_RANGE] = 100,
                [OP_HIDE] = 100,
                [OP_BOUNDARY] = 60,
                [OP_NOOP] = 10,
                [OP_FACE] = 30,
                [OP_SET] = 80,
                [OP_MARGIN] = 40,
                [OP_EMIT] = 20},
     .v2 = 1,
     .senses = eight_senses,
     .height = 10,
     .mask = 20,
     .cone = 20,
     .margin = 20},
    {.name = "ticks",
     .den = 2,
     .world = {0, 0, 300, 300},
     .n = 50,
     .ops = 3000,
     .place = place_integer,
     .range = range_v2,
     .step = 5,
     .weight = {[OP_STEP] = 100,
                [OP_ADD] = 20,
                [OP_REMOVE] = 20,
                [OP_RANGE] = 20,
                [OP_HIDE] = 20,
                [OP_MARGIN] = 50,
                [OP_EMIT] = 20,
                [OP_TICK] = 500},
     .v2 = 1,
     .height = 20,
     .mask = 20,
     .cone = 30,
     .margin = 40},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])
/* The version 1 kinds, the first ten: `all` draws from them alone, so that
 * its traces stay what they were. */
#define V1_KIND_COUNT 10

/* `all` draws every op from one of the version 1 kinds, in a shared world;
 * v2all from any kind, with entities as its own profile says. */
static const kind kind_all = {
    .name = "all", .den = 2, .world = {0, 0, 1000, 1000}, .n = 250, .ops = 3000};
static const kind kind_v2all = {.name = "v2all",
                                .den = 2,
                                .world = {0, 0, 1000, 1000},
                                .n = 200,
                                .ops = 3000,
                                .v2 = 1,
                                .height = 20,
                                .mask = 20,
                                .cone = 30,
                                .margin = 30};

/* The kind the next op follows: all and v2all draw one for each op. */
static const kind *draw_kind(void)
{
    if (g.kind == &kind_all)
        return &kinds[rnd(V1_KIND_COUNT)];
    if (g.kind == &kind_v2all)
        return &kinds[rnd(KIND_COUNT)];
    return g.kind;
}

/* ------------------------------------------------------------------------ */
/* Version 2 values                                                          */

/* The kind whose profile new values follow: the op's, or the trace's where
 * v2all draws a version 1 kind. */
static const kind *profile(void)
{
    return g.cur->v2 ? g.cur : g.kind;
}

static int has_cone(const entity *e)
{
    for (int s = 0; s < g.sense_count; s++)
        if (e->fov[s] < 360)
            return 1;
    return 0;
}

/* Masks of few bits, so that tags and ignore masks often share one or not
 * by a bit; the top bit, and every bit. */
static uint32_t pick_mask(void)
{
    static const uint32_t masks[] = {1, 2, 3, 4, 6, 0x10, 0x80000000u, 0x80000001u, 0xffffffffu};
    return masks[rnd(sizeof masks / sizeof masks[0])];
}

/* 0.5 to 10 units, where the ticks hold halves; else whole units. */
static int64_t pick_margin(void)
{
    static const int64_t halves[] = {1, 2, 4, 5, 10, 20};
    int64_t h = halves[rnd(sizeof halves / sizeof halves[0])];
    return g.den % 2 == 0 ? h * (g.den / 2) : units((h + 1) / 2);
}

/* The cones with exact edges (90, 180, 270: see op_cone), thin and wide
 * ones, and 360 (no cone) written out. */
static double pick_fov(void)
{
    static const double fovs[] = {0.5, 30, 60, 90, 90, 120, 180, 180, 270, 270, 300, 359, 360};
    return fovs[rnd(sizeof fovs / sizeof fovs[0])];
}

/* Facings of several lengths, along the axes, the diagonals and others; in
 * kinds with heights (when `tall`), now and then up or down. Never zero. */
static void pick_facing(entity *e, int tall)
{
    static const int64_t flat[][2] = {{1, 0},   {0, 1},  {-1, 0},  {0, -1}, {1, 1},
                                      {-1, 1},  {1, -1}, {-2, -2}, {3, 4},  {-4, 3},
                                      {5, -12}, {2, 1},  {1, -2},  {7, 0},  {0, -3}};
    static const int64_t up[][3] = {{0, 0, 1}, {0, 0, -2}, {1, 0, 1}, {1, 2, 2}, {-2, 1, -2}};
    if (tall && profile()->height > 0 && chance(25)) {
        memcpy(e->facing, up[rnd(sizeof up / sizeof up[0])], sizeof e->facing);
    } else {
        const int64_t *f = flat[rnd(sizeof flat / sizeof flat[0])];
        e->facing[0] = f[0];
        e->facing[1] = f[1];
        e->facing[2] = 0;
    }
}

static int64_t place_z(void)
{
    return units(rnd_in(-5, 30));
}

/* The version 2 fields of an entity entering the world. */
static void set_v2_fields(entity *e)
{
    const kind *p = profile();
    e->z = chance(p->height) ? place_z() : 0;
    e->tags = chance(p->mask) ? pick_mask() : 0;
    for (int s = 0; s < g.sense_count; s++) {
        e->margin[s] = chance(p->margin) ? pick_margin() : 0;
        e->fov[s] = chance(p->cone) ? pick_fov() : 360;
        e->ignore[s] = chance(p->mask) ? pick_mask() : 0;
    }
    memset(e->facing, 0, sizeof e->facing);
    if (has_cone(e) || chance(50))
        pick_facing(e, 1);
}

static void place(int64_t *x, int64_t *y)
{
    g.cur->place(x, y);
}

/* ------------------------------------------------------------------------ */
/* Entities                                                                  */

static entity *pick_live(void)
{
    return g.live_count == 0 ? NULL : &g.ents[g.live[rnd((int64_t)g.live_count)]];
}

static int id_used(uint32_t id)
{
    for (size_t i = 0; i < g.ent_count; i++)
        if (g.ents[i].id == id)
            return 1;
    return 0;
}

/* A fresh ID: mostly ascending with gaps, sometimes anywhere in 0 .. 2^32-1. */
static uint32_t new_id(void)
{
    uint32_t id;
    do {
        if (chance(5))
            id = (uint32_t)splitmix_next(&rng_state);
        else if (chance(1))
            id = chance(50) ? 0 : UINT32_MAX;
        else
            id = g.next_id += 1 + (uint32_t)rnd(3);
    } while (id_used(id));
    return id;
}

static void set_ranges(entity *e)
{
    for (int s = 0; s < g.sense_count; s++) {
        e->range[s] = g.cur->range(s);
        e->saved[s] = e->range[s] != 0 ? e->range[s] : g.cur->range(s);
    }
    e->hidden = 0;
    for (int s = 0; s < g.sense_count; s++)
        if (chance(8))
            e->hidden |= 1u << s;
}

/* Writes the add of e, which is not alive, as it stands. */
static void enter_world(entity *e)
{
    e->alive = 1;
    e->live_pos = g.live_count;
    g.live[g.live_count++] = (size_t)(e - g.ents);
    emit_add(e);
}

/* Adds a new ID, or (half the time, when there is one) a removed ID again. */
static void op_add(void)
{
    entity *e = NULL;

    if (chance(50) && g.live_count < g.ent_count) {
        /* Removed IDs exist: take the first after a random start. */
        size_t start = (size_t)rnd((int64_t)g.ent_count);
        for (size_t k = 0; k < g.ent_count && e == NULL; k++) {
            entity *c = &g.ents[(start + k) % g.ent_count];
            if (!c->alive)
                e = c;
        }
    }
    if (e == NULL) {
        if (g.ent_count == g.ent_cap) {
            g.ent_cap = g.ent_cap ? 2 * g.ent_cap : 256;
            g.ents = xrealloc(g.ents, g.ent_cap * sizeof *g.ents);
            g.live = xrealloc(g.live, g.ent_cap * sizeof *g.live);
        }
        e = &g.ents[g.ent_count++];
        memset(e, 0, sizeof *e);
        e->id = new_id();
    }
    place(&e->x, &e->y);
    set_ranges(e);
    if (g.v2)
        set_v2_fields(e);
    e->exact = 0;
    enter_world(e);
}

static void op_remove(entity *e)
{
    size_t last = g.live[--g.live_count];
    g.live[e->live_pos] = last;
    g.ents[last].live_pos = e->live_pos;
    e->alive = 0;
    printf("remove %" PRIu32 "\n", e->id);
}

/* Keeps a coordinate from drifting away: a step that would leave lo..hi turns back. */
static int64_t walk(int64_t v, int64_t d, int64_t lo, int64_t hi)
{
    return v + d < lo || v + d > hi ? v - d : v + d;
}

static void op_step(entity *e)
{
    int64_t step = units(g.cur->step);
    int64_t dx = rnd_in(-step, step), dy = g.cur->road ? 0 : rnd_in(-step, step);
    /* Entities already far away wander there; the others stay near the world. */
    int64_t mx = world_w() / 10, my = world_h() / 10;
    if (e->x >= g.w[0] - mx && e->x <= g.w[2] + mx)
        e->x = walk(e->x, dx, g.w[0] - mx, g.w[2] + mx);
    else
        e->x += dx;
    if (e->y >= g.w[1] - my && e->y <= g.w[3] + my)
        e->y = walk(e->y, dy, g.w[1] - my, g.w[3] + my);
    else
        e->y += dy;
    /* A step from an exact position starts from its ticks: back on them. */
    e->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(e);
}

static void op_jump(entity *e)
{
    place(&e->x, &e->y);
    if (g.v2 && chance(profile()->height))
        e->z = place_z();
    e->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(e);
}

/* A new range, 0 (the sense switched off), or the last range again. */
static void op_range(entity *e)
{
    int s = (int)rnd(g.sense_count);
    int64_t k = rnd(100);
    if (e->range[s] != 0)
        e->saved[s] = e->range[s];
    if (k < 30)
        e->range[s] = 0;
    else if (k < 60)
        e->range[s] = e->saved[s];
    else
        e->range[s] = g.cur->range(s);
    e->exact &= ~EXACT_RANGE(s);
    emit_range(e, s);
}

static void op_hide(entity *e)
{
    int s = (int)rnd(g.sense_count);
    unsigned bit = 1u << s;
    /* Now and then hide what is hidden, or show what is shown: no change. */
    int hide = chance(10) ? (e->hidden & bit) != 0 : (e->hidden & bit) == 0;
    if (hide)
        e->hidden |= bit;
    else
        e->hidden &= ~bit;
    printf("%s %" PRIu32 " %s\n", hide ? "hide" : "show", e->id, g.sense_names[s]);
}

/*
 * Moves e to a Pythagorean offset from another entity t (3-4-5, 5-12-13,
 * 8-15-17, or along an axis), scaled; then, half the time, sets a range of e
 * or t to exactly that distance.
 */
static void op_boundary(entity *e)
{
    static const int64_t tri[4][3] = {{3, 4, 5}, {5, 12, 13}, {8, 15, 17}, {1, 0, 1}};
    entity *t = pick_live();
    if (t == e) {
        op_step(e);
        return;
    }
    /*
     * In whole units the boundary is exact. In tenths (den 10) it is not:
     * 0.3, 0.4 and 0.5 are rounded, so the double test lands an ulp or so
     * to either side, and an index must agree with it wherever it falls.
     */
    int64_t k = g.den == 10 ? rnd_in(1, 40) : units(rnd_in(1, 3));
    const int64_t *p = tri[g.cur->road ? 3 : rnd(4)];
    int64_t a = p[0] * k, b = p[1] * k, c = p[2] * k;
    if (!g.cur->road && chance(50)) {
        int64_t tmp = a;
        a = b, b = tmp;
    }
    if (chance(50))
        a = -a;
    if (chance(50))
        b = -b;
    e->x = t->x + a;
    e->y = t->y + b;
    e->z = t->z;                      /* level with t (version 2) */
    e->exact &= ~(EXACT_X | EXACT_Y); /* from t's ticks, exact or not */
    emit_move(e);
    if (chance(50)) {
        entity *who = chance(50) ? e : t;
        int s = (int)rnd(g.sense_count);
        who->range[s] = c;
        who->exact &= ~EXACT_RANGE(s);
        emit_range(who, s);
    }
}

/* Moves e exactly onto another entity (on the road: onto its x). */
static void op_coincide(entity *e)
{
    entity *t = pick_live();
    e->x = t->x;
    e->fx = t->fx;
    e->exact = (e->exact & ~EXACT_X) | (t->exact & EXACT_X);
    if (!g.cur->road) {
        e->y = t->y;
        e->fy = t->fy;
        e->exact = (e->exact & ~EXACT_Y) | (t->exact & EXACT_Y);
        e->z = t->z; /* on t: dd == 0 (version 2) */
    }
    emit_move(e);
}

/* A command that changes nothing: a move to where it is, the same range again. */
static void op_noop(entity *e)
{
    if (chance(50)) {
        emit_move(e);
    } else {
        int s = (int)rnd(g.sense_count);
        emit_range(e, s);
    }
}

/* ------------------------------------------------------------------------ */
/* Exact doubles: targets a few ulps around an observer's rounded reach      */

/* The ulp steps below count on the bits of an IEEE binary64 double. */
_Static_assert(sizeof(double) == sizeof(uint64_t) && DBL_MANT_DIG == 53 && DBL_MAX_EXP == 1024,
               "tracegen's ulps kind needs IEEE binary64 doubles");

/*
 * The next double above v (finite, below DBL_MAX): what nextafter(v,
 * INFINITY) gives, from the bits, as libm is not linked. The bits of the
 * doubles of one sign count up with their magnitude.
 */
static double next_up(double v)
{
    uint64_t b;
    if (v == 0)
        return DBL_TRUE_MIN;
    memcpy(&b, &v, sizeof b);
    b = v > 0 ? b + 1 : b - 1;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* v moved k ulps: up for k > 0, down for k < 0. */
static double ulps_from(double v, int64_t k)
{
    for (; k > 0; k--)
        v = next_up(v);
    for (; k < 0; k++)
        v = -next_up(-v);
    return v;
}

/* Ticks to units, rounded as reading the decimal would round them. */
static double units_of(int64_t t)
{
    return (double)t / (double)g.den;
}

/* v in ticks, truncated: for the ops that only know ticks. */
static int64_t ticks_of(double v)
{
    double t = v * (double)g.den;
    return (int64_t)t;
}

static void set_exact_pos(entity *e, double x, double y)
{
    e->fx = x;
    e->fy = y;
    e->x = ticks_of(x);
    e->y = ticks_of(y);
    e->exact |= EXACT_X | EXACT_Y;
}

static void set_exact_range(entity *e, int s, double r)
{
    int64_t t = ticks_of(r);
    e->frange[s] = r;
    e->range[s] = t > 0 ? t : 1; /* the sense is on: its ticks say so too */
    e->exact |= EXACT_RANGE(s);
}

/* The longest range of e, in ticks. */
static int64_t longest_range(const entity *e)
{
    int64_t m = 0;
    for (int s = 0; s < g.sense_count; s++)
        if (e->range[s] > m)
            m = e->range[s];
    return m;
}

/*
 * e or one of two other living entities, whichever has the shortest longest
 * range. The core looks for a changing entity's pairs both ways with one
 * query as wide as its own reach: a target that sees as far as its observer
 * finds it by its own query and would hide a lost cell of the observer, and
 * so would an observer whose other senses reach further than the one set.
 */
static entity *shorter_sighted(entity *e)
{
    for (int i = 0; i < 2; i++) {
        entity *c = pick_live();
        if (longest_range(c) < longest_range(e))
            e = c;
    }
    return e;
}

/* Puts the target at (x, y): by a move, or removed and added there. */
static void ulps_place_target(entity *t, double x, double y)
{
    if (chance(35)) {
        op_remove(t);
        set_exact_pos(t, x, y);
        enter_world(t);
    } else {
        set_exact_pos(t, x, y);
        emit_move(t);
    }
}

/*
 * Gives the observer range r for sense s at (x, y): a move then a range, a
 * range then a move (each on its own is a change the index must follow),
 * or removed and added with both.
 */
static void ulps_place_observer(entity *o, int s, double r, double x, double y)
{
    int64_t how = rnd(3);
    if (how == 2) {
        op_remove(o);
        set_exact_pos(o, x, y);
        set_exact_range(o, s, r);
        enter_world(o);
        return;
    }
    if (how == 1) {
        set_exact_range(o, s, r);
        emit_range(o, s);
    }
    set_exact_pos(o, x, y);
    emit_move(o);
    if (how == 0) {
        set_exact_range(o, s, r);
        emit_range(o, s);
    }
}

/*
 * Observer o gets a range r for one sense and a position where its reach
 * along one axis, fl(o - r) or fl(o + r), falls on a cell edge or an ulp or
 * two from one (an edge of the core's observer grid, by its default of 32
 * cells along the world's longer side, or of the backends' default 64-unit
 * cells), far out where an ulp is large, or at an awkward coordinate.
 * Another entity t goes -4..+4 ulps around that rounded reach, level with o
 * on the other axis (or a few ulps off it): there fl(t - o) is r, just
 * beyond it or just within it, and a cell or window computed from fl(o - r)
 * or with too small a margin misses the target in the next cell out. Target
 * first or observer first, by add or by move (and the observer's range
 * before or after); then up to three times the target or the observer's
 * reach sweeps toward the other one ulp at a time, or the observer moves a
 * cell away and back, so that its rectangle of cells shifts and returns.
 */
static void op_ulps(entity *o)
{
    /* In ulps's world, ranges within 1.25 observer cells (40) are near
     * (found through the backends); 41.3 .. 100 are kept in the observer
     * grid; 127.9 and 1000.3 span too many cells: wide, scanned. */
    static const double ranges[] = {64, 0.1, 13.7, 41.3,  100,   0.5,
                                    96, 72,  50.1, 45.75, 127.9, 1000.3};
    static const double spots[] = {128, -128, 1000.3, 333.3, -500.1, 0.3, -0.7, 77.7, 64.05, 511.9};
    o = shorter_sighted(o);
    entity *t = shorter_sighted(pick_live());
    if (t == o) {
        op_step(o);
        return;
    }
    int axis = (int)rnd(2); /* 0: x, 1: y */
    int low = chance(50);   /* the reach o - r; else o + r */
    int s = (int)rnd(g.sense_count);
    double r = ranges[rnd(sizeof ranges / sizeof ranges[0])];
    int64_t longer = world_w() > world_h() ? world_w() : world_h();
    double grid_cell = units_of(longer) / 32;
    double cell = chance(50) ? grid_cell : 64;
    double oa; /* the observer's coordinate on the axis */
    int64_t k = rnd(100);
    if (k < 85) {
        double edge;
        if (k < 50) {
            /*
             * A cell edge between 0 and r (now and then below 0). Only
             * where |t| is within about r are the target's ulps finer than
             * those of t - o, so that fl(t - o) rounds and a target beyond
             * the rounded reach can still be within r; and only near the
             * origin of a grid (the world's minimum, 0 for hashgrid) does
             * the cell of t keep those ulps.
             */
            int64_t m = (int64_t)(r / cell);
            int64_t j = m > 0 && chance(80) ? rnd_in(1, m) : rnd_in(0, m);
            edge = cell * (double)(chance(25) ? -j : j);
        } else if (k < 75) { /* a cell edge of the world, or one beyond it */
            double lo = units_of(g.w[axis]), span = units_of(g.w[axis + 2] - g.w[axis]);
            double steps = span / cell;
            double step = cell * (double)rnd_in(-1, (int64_t)steps + 1);
            edge = lo + step;
        } else { /* far out, where an ulp is 2^-32 */
            double step = 64.0 * (double)rnd_in(-4, 4);
            edge = (chance(50) ? 1048576.0 : -1048576.0) + step;
        }
        /* Half the time the reach ends an ulp or two off the edge: on the
         * o + r side a reach exactly on an edge keeps the target's ulps in
         * its own cell, one just before it puts them across the edge. */
        if (chance(50))
            edge = ulps_from(edge, rnd_in(-2, 2));
        oa = low ? edge + r : edge - r;
    } else {
        oa = spots[rnd(sizeof spots / sizeof spots[0])];
    }
    double reach = low ? oa - r : oa + r;
    double ta = ulps_from(reach, rnd_in(-4, 4));
    double other = units_of(rnd_in(g.w[1 - axis], g.w[3 - axis]));
    double to = chance(70) ? other : ulps_from(other, rnd_in(-2, 2));
    double ox = axis == 0 ? oa : other, oy = axis == 0 ? other : oa;
    double tx = axis == 0 ? ta : to, ty = axis == 0 ? to : ta;

    if (t->hidden & (1u << s)) { /* hidden, it would test nothing */
        t->hidden &= ~(1u << s);
        printf("show %" PRIu32 " %s\n", t->id, g.sense_names[s]);
    }
    int target_first = chance(50);
    if (target_first)
        ulps_place_target(t, tx, ty);
    ulps_place_observer(o, s, r, ox, oy);
    if (!target_first)
        ulps_place_target(t, tx, ty);

    for (int64_t n = rnd(4); n > 0; n--) {
        int64_t what = rnd(100);
        double now = low ? oa - r : oa + r; /* the reach, rounded */
        int64_t dir = chance(50) ? 1 : -1;
        if (what < 70) {
            /* One ulp at a time, the observer's reach sweeps across the
             * target or the target across the reach (mostly toward the
             * other: through every ulp where a cell could be lost), each
             * step a change to follow. */
            if (chance(80))
                dir = (ta < now) == (what < 35) ? -1 : 1;
            for (int64_t steps = rnd_in(1, 8); steps > 0; steps--) {
                if (what < 35) {
                    oa = ulps_from(oa, dir);
                    set_exact_pos(o, axis == 0 ? oa : ox, axis == 0 ? oy : oa);
                    emit_move(o);
                } else {
                    ta = ulps_from(ta, dir);
                    set_exact_pos(t, axis == 0 ? ta : tx, axis == 0 ? ty : ta);
                    emit_move(t);
                }
            }
        } else { /* a cell away and back: the rectangle shifts, then returns */
            double away = oa + (dir > 0 ? cell : -cell);
            set_exact_pos(o, axis == 0 ? away : ox, axis == 0 ? oy : away);
            emit_move(o);
            set_exact_pos(o, axis == 0 ? oa : ox, axis == 0 ? oy : oa);
            emit_move(o);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Version 2 ops: facings and cones, margins, masks, heights, stimuli, ticks */

static int listed(const int *list, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

/* Gives field f of e a new value (for op_set and op_mask). */
static void change_field(entity *e, int f)
{
    int s = f / FIELDS_PER_SENSE;

    if (f == FIELD_TAGS) {
        e->tags = chance(25) ? 0 : pick_mask();
    } else if (f == FIELD_FACING) {
        if (!has_cone(e) && chance(10))
            memset(e->facing, 0, sizeof e->facing);
        else
            pick_facing(e, 1);
    } else if (f % FIELDS_PER_SENSE == FIELD_RANGE) {
        if (e->range[s] != 0)
            e->saved[s] = e->range[s];
        e->range[s] = chance(20) ? 0 : g.cur->range(s);
        e->exact &= ~EXACT_RANGE(s);
    } else if (f % FIELDS_PER_SENSE == FIELD_MARGIN) {
        e->margin[s] = chance(25) ? 0 : pick_margin();
    } else if (f % FIELDS_PER_SENSE == FIELD_FOV) {
        e->fov[s] = pick_fov();
    } else {
        e->ignore[s] = chance(25) ? 0 : pick_mask();
    }
}

/* A new facing; now and then none, for an entity without a cone. */
static void op_face(entity *e)
{
    change_field(e, FIELD_FACING);
    if (chance(20)) {
        int f = FIELD_FACING;
        emit_set(e, &f, 1);
    } else {
        emit_face(e);
    }
}

/* One set of one to four fields; one that leaves a cone without a facing
 * gives a facing too. */
static void op_set(entity *e)
{
    int fields[6], n = 0;
    for (int64_t want = rnd_in(1, 4); want > 0; want--) {
        int64_t k = rnd(100);
        int f = k < 10 ? FIELD_TAGS : FIELD_FACING;
        if (k >= 20) {
            int s = (int)rnd(g.sense_count); /* one draw a statement: a fixed order */
            f = sense_field(s, (int)rnd(FIELDS_PER_SENSE));
        }
        if (listed(fields, n, f))
            continue;
        change_field(e, f);
        fields[n++] = f;
    }
    if (has_cone(e) && facing_zero(e)) {
        pick_facing(e, 1);
        if (!listed(fields, n, FIELD_FACING))
            fields[n++] = FIELD_FACING;
    }
    emit_set(e, fields, n);
}

/* New tags, or an ignore mask, or both. */
static void op_mask(entity *e)
{
    int fields[2], n = 0;
    fields[n++] = chance(40) ? FIELD_TAGS : sense_field((int)rnd(g.sense_count), FIELD_IGNORE);
    if (chance(30)) {
        int f = sense_field((int)rnd(g.sense_count), FIELD_IGNORE);
        if (f != fields[0])
            fields[n++] = f;
    }
    for (int i = 0; i < n; i++)
        change_field(e, fields[i]);
    emit_set(e, fields, n);
}

/* Moves e level with o, at distance d in ticks: along an axis, or along a
 * 3-4-5 diagonal when d is a multiple of 5 ticks, so that dd is exact. */
static void move_at_distance(entity *e, const entity *o, int64_t d)
{
    int64_t dx = 0, dy = 0;
    if (d % 5 == 0 && chance(50)) {
        dx = d / 5 * 3;
        dy = d / 5 * 4;
    } else {
        dx = d;
    }
    if (chance(50)) {
        int64_t tmp = dx;
        dx = dy, dy = tmp;
    }
    e->x = o->x + (chance(50) ? dx : -dx);
    e->y = o->y + (chance(50) ? dy : -dy);
    e->z = o->z;
    e->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(e);
}

/* One move of t to a distance from o that matters to o's sense s: a unit
 * within R, R, between R and R + M, R + M, a tick or a unit beyond. */
static void margin_move(entity *t, const entity *o, int s)
{
    int64_t r = o->range[s], m = o->margin[s];
    int64_t spots[] = {r - units(1), r, r + m / 2, r + m, r + m + 1, r + m + units(1)};
    int64_t d = spots[rnd(sizeof spots / sizeof spots[0])];
    move_at_distance(t, o, d > 0 ? d : 0);
}

/* A target swept across R and R + M of one of o's senses, a few moves in
 * a row, both ways; first, now and then (and when o lacks the sense or
 * its margin), o's range and margin set at once. */
static void op_margin(entity *o)
{
    entity *t = pick_live();
    int s = (int)rnd(g.sense_count);
    if (t == o) {
        op_step(o);
        return;
    }
    if (o->range[s] == 0 || o->margin[s] == 0 || chance(25)) {
        if (o->range[s] != 0)
            o->saved[s] = o->range[s];
        do
            o->range[s] = g.cur->range(s);
        while (o->range[s] == 0);
        o->exact &= ~EXACT_RANGE(s);
        o->margin[s] = pick_margin();
        int fields[2] = {sense_field(s, FIELD_RANGE), sense_field(s, FIELD_MARGIN)};
        if (chance(50))
            fields[0] = fields[1], fields[1] = sense_field(s, FIELD_RANGE);
        emit_set(o, fields, 2);
    }
    if (t->hidden & (1u << s)) { /* hidden, it would test nothing */
        t->hidden &= ~(1u << s);
        printf("show %" PRIu32 " %s\n", t->id, g.sense_names[s]);
    }
    for (int64_t moves = rnd_in(2, 6); moves > 0; moves--)
        margin_move(t, o, s);
}

/*
 * A target on an edge of o's cone. Facing (a, b), with (-b, a) its
 * perpendicular, the offsets u(a, b) + v(-b, a) for u and v in -1 .. 1 lie
 * straight ahead, 45 degrees off (the edge of a 90 degree cone), 90 off
 * (180), 135 off (270), straight behind, or on o (dd == 0). Facing up or
 * down, 3-4-5 and 1-0-1 offsets lie 45 degrees off. Scaled by 1 to 3 they
 * are exact: which side of the edge a target falls is up to the rounding
 * the specification fixes (cos(), then left to right). Now and then the
 * target goes a unit off the edge instead; half the time o's sense then
 * gets the cone whose edge it is, and a range that reaches the target.
 */
static void op_cone(entity *o)
{
    static const int64_t up[][3] = {{3, 4, 5}, {-4, 3, 5}, {1, 0, 1},  {0, -1, 1}, {1, 0, 0},
                                    {0, 2, 0}, {3, 4, -5}, {0, 0, -1}, {0, 0, 1}};
    static const double up_fov[] = {90, 90, 90, 90, 180, 180, 270, 359, 30};
    /* by u + 1, v + 1 */
    static const double flat_fov[3][3] = {{270, 359, 270}, {180, 0.5, 180}, {90, 30, 90}};
    entity *t = pick_live();
    int64_t m = rnd_in(1, 3), d[3];
    double fov;

    if (t == o) {
        op_face(o);
        return;
    }
    if (profile()->height > 0 && chance(30)) {
        int64_t c = rnd_in(1, 2);
        c = chance(50) ? c : -c;
        int k = (int)rnd(sizeof up_fov / sizeof up_fov[0]);
        o->facing[0] = o->facing[1] = 0;
        o->facing[2] = c;
        emit_face(o);
        d[0] = m * up[k][0];
        d[1] = m * up[k][1];
        d[2] = m * up[k][2] * (c > 0 ? 1 : -1);
        fov = up_fov[k];
    } else {
        if (o->facing[2] != 0 || facing_zero(o)) {
            pick_facing(o, 0);
            emit_face(o);
        }
        int64_t a = o->facing[0], b = o->facing[1];
        int64_t u = rnd_in(-1, 1), v = rnd_in(-1, 1);
        d[0] = m * (u * a - v * b);
        d[1] = m * (u * b + v * a);
        d[2] = 0;
        fov = flat_fov[u + 1][v + 1];
    }
    if (chance(20)) { /* a unit off the edge */
        d[0] += rnd_in(-1, 1);
        d[1] += rnd_in(-1, 1);
    }
    t->x = o->x + units(d[0]);
    t->y = o->y + units(d[1]);
    t->z = o->z + units(d[2]);
    t->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(t);
    if (chance(50)) {
        int s = (int)rnd(g.sense_count);
        int64_t dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], r = 0;
        while (r * r < dd) /* the shortest whole range that reaches t */
            r++;
        o->fov[s] = fov;
        if (o->range[s] < units(r)) {
            o->range[s] = units(r + rnd(3));
            o->exact &= ~EXACT_RANGE(s);
        }
        int fields[2] = {sense_field(s, FIELD_FOV), sense_field(s, FIELD_RANGE)};
        emit_set(o, fields, 2);
    }
}

/* A move straight up or down; or to a 3D Pythagorean offset from another
 * entity (1-2-2 is 3, 2-3-6 is 7, 1-4-8 and 4-4-7 are 9, 2-6-9 is 11), and
 * half the time a range of either set to exactly that distance. */
static void op_height(entity *e)
{
    static const int64_t quad[][4] = {
        {1, 2, 2, 3}, {2, 3, 6, 7}, {1, 4, 8, 9}, {4, 4, 7, 9}, {2, 6, 9, 11}};
    entity *t = pick_live();
    if (t == e || chance(40)) {
        e->z = chance(20) ? 0 : e->z + units(rnd_in(-3, 3));
        emit_move(e);
        return;
    }
    const int64_t *q = quad[rnd(sizeof quad / sizeof quad[0])];
    int64_t k = units(rnd_in(1, 2)), turn = rnd(3), d[3];
    for (int i = 0; i < 3; i++)
        d[i] = q[(i + turn) % 3] * k * (chance(50) ? 1 : -1);
    e->x = t->x + d[0];
    e->y = t->y + d[1];
    e->z = t->z + d[2];
    e->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(e);
    if (chance(50)) {
        entity *who = chance(50) ? e : t;
        int s = (int)rnd(g.sense_count);
        who->range[s] = q[3] * k;
        who->exact &= ~EXACT_RANGE(s);
        emit_range(who, s);
    }
}

/*
 * A stimulus at exactly strength * R from o (R its range for the sense,
 * the strength 0.5 to 8), or a tick either side, level with it; or on an
 * entity (dd == 0); or anywhere. Source, strength and tags come and go;
 * the source is now and then o itself, which then does not perceive it.
 */
static void op_emit(entity *o)
{
    char opt[3][64], num[48];
    int s = (int)rnd(g.sense_count), n = 0;
    int64_t twice = rnd_in(1, 8); /* twice the strength */
    int64_t p[3], where = rnd(100);

    if (where < 60 && o->range[s] > 0) {
        if (twice * o->range[s] % 2 != 0) /* strength * R in whole ticks */
            twice *= 2;
        int64_t d = twice * o->range[s] / 2;
        if (chance(30))
            d += chance(50) ? 1 : -1;
        p[0] = o->x, p[1] = o->y, p[2] = o->z;
        if (d % 5 == 0 && chance(50)) {
            int64_t a = d / 5 * 3, b = d / 5 * 4;
            p[0] += chance(50) ? a : -a;
            p[1] += chance(50) ? b : -b;
        } else if (chance(50)) {
            p[0] += chance(50) ? d : -d;
        } else {
            p[1] += chance(50) ? d : -d;
        }
    } else if (where < 75) {
        const entity *on = pick_live();
        p[0] = on->x, p[1] = on->y, p[2] = on->z;
    } else {
        place(&p[0], &p[1]);
        p[2] = chance(profile()->height) ? place_z() : 0;
    }
    if (twice != 2 || chance(30))
        snprintf(opt[n++], sizeof opt[0], "strength=%" PRId64 "%s", twice / 2,
                 twice % 2 ? ".5" : "");
    if (chance(50))
        snprintf(opt[n++], sizeof opt[0], "source=%" PRIu32, chance(20) ? o->id : pick_live()->id);
    if (chance(30)) {
        format_mask(num, sizeof num, pick_mask());
        snprintf(opt[n++], sizeof opt[0], "tags=%s", num);
    }
    printf("emit %s", g.sense_names[s]);
    put_num(p[0]);
    put_num(p[1]);
    if (p[2] != 0 || chance(20))
        put_num(p[2]);
    for (int first = n > 0 ? (int)rnd(n) : 0, i = 0; i < n; i++) /* in any order */
        printf(" %s", opt[(first + i) % n]);
    putchar('\n');
}

/*
 * A tick: moves, faces and sets of distinct entities at once, up to eight
 * of them (now and then none). Now and then it starts with a pair that
 * would enter and leave within the block: a target moved beside an
 * observer, then the observer sent away.
 */
static void op_tick(void)
{
    const entity *named[10];
    int n = 0;

    puts("tick");
    if (g.live_count >= 2 && chance(30)) {
        entity *o = pick_live(), *t = pick_live();
        if (o != t) {
            move_at_distance(t, o, units(1));
            op_jump(o);
            named[n++] = o;
            named[n++] = t;
        }
    }
    for (int64_t lines = rnd_in(0, 8); lines > 0; lines--) {
        entity *e = pick_live(), *o = pick_live();
        int s = (int)rnd(g.sense_count);
        int seen = 0;
        for (int i = 0; i < n; i++)
            seen |= named[i] == e;
        if (seen)
            continue;
        named[n++] = e;
        int64_t what = rnd(100);
        if (what < 45)
            op_step(e);
        else if (what < 55)
            op_jump(e);
        else if (what < 70)
            op_face(e);
        else if (what < 85)
            op_set(e);
        else if (o != e && o->range[s] > 0)
            margin_move(e, o, s);
        else
            op_step(e);
    }
    puts("end");
}

static void run_op(void)
{
    const kind *k = draw_kind();
    int total = 0, op = 0;

    g.cur = k;
    for (int i = 0; i < OP_COUNT; i++)
        total += k->weight[i];
    int64_t x = rnd(total);
    while (x >= k->weight[op])
        x -= k->weight[op++];

    /* Keep the population near its target: churn in both directions. */
    if (op == OP_REMOVE && g.live_count < g.target_n / 2)
        op = OP_ADD;
    else if (op == OP_ADD && g.live_count > g.target_n * 3 / 2)
        op = OP_REMOVE;
    if (g.live_count == 0)
        op = OP_ADD;

    entity *e = pick_live();
    switch ((enum op)op) {
    case OP_STEP:
        op_step(e);
        break;
    case OP_JUMP:
        op_jump(e);
        break;
    case OP_REMOVE:
        op_remove(e);
        break;
    case OP_ADD:
        op_add();
        break;
    case OP_RANGE:
        op_range(e);
        break;
    case OP_HIDE:
        op_hide(e);
        break;
    case OP_BOUNDARY:
        op_boundary(e);
        break;
    case OP_COINCIDE:
        op_coincide(e);
        break;
    case OP_ULPS:
        op_ulps(e);
        break;
    case OP_FACE:
        op_face(e);
        break;
    case OP_SET:
        op_set(e);
        break;
    case OP_CONE:
        op_cone(e);
        break;
    case OP_MARGIN:
        op_margin(e);
        break;
    case OP_MASK:
        op_mask(e);
        break;
    case OP_HEIGHT:
        op_height(e);
        break;
    case OP_EMIT:
        op_emit(e);
        break;
    case OP_TICK:
        op_tick();
        break;
    case OP_NOOP:
    case OP_COUNT:
        op_noop(e);
        break;
    }
}

/* ------------------------------------------------------------------------ */

static int parse_count(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end != '\0' || v > 10000000)
        return -1;
    *out = (size_t)v;
    return 0;
}

static void usage(void)
{
    fputs("usage: tracegen KIND SEED [N] [OPS]\nkinds:", stderr);
    for (size_t i = 0; i < KIND_COUNT; i++)
        fprintf(stderr, " %s", kinds[i].name);
    fputs(" all v2all\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    static char outbuf[1 << 16];
    size_t n, ops;
    char *end;

    if (argc < 3 || argc > 5)
        usage();
    for (size_t i = 0; i < KIND_COUNT; i++)
        if (strcmp(argv[1], kinds[i].name) == 0)
            g.kind = &kinds[i];
    if (strcmp(argv[1], kind_all.name) == 0)
        g.kind = &kind_all;
    if (strcmp(argv[1], kind_v2all.name) == 0)
        g.kind = &kind_v2all;
    if (g.kind == NULL)
        usage();
    unsigned long long seed = strtoull(argv[2], &end, 10);
    if (argv[2][0] < '0' || argv[2][0] > '9' || *end != '\0')
        usage();
    n = g.kind->n;
    ops = g.kind->ops;
    if ((argc > 3 && parse_count(argv[3], &n) < 0) || (argc > 4 && parse_count(argv[4], &ops) < 0))
        usage();
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);

    /* The kind's name goes into the seed, so kinds never share a sequence. */
    rng_state = seed;
    for (const char *p = g.kind->name; *p != '\0'; p++)
        rng_state = rng_state * 31 + (unsigned char)*p;
    g.den = g.kind->den;
    g.v2 = g.kind->v2;
    g.sense_names = g.kind->senses != NULL ? g.kind->senses : default_senses;
    g.sense_count = g.kind->senses != NULL ? MAX_SENSES : SENSES;
    g.target_n = n;
    g.next_id = (uint32_t)rnd(10);
    for (int i = 0; i < 4; i++)
        g.w[i] = units(g.kind->world[i]);

    printf("# tracegen %s %llu n=%zu ops=%zu\n", g.kind->name, seed, n, ops);
    if (g.kind->senses != NULL) {
        printf("senses");
        for (int s = 0; s < g.sense_count; s++)
            printf(" %s", g.sense_names[s]);
        putchar('\n');
    }
    printf("world");
    for (int i = 0; i < 4; i++)
        put_num(g.w[i]);
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        g.cur = draw_kind();
        op_add();
    }
    for (size_t i = 0; i < ops; i++)
        run_op();

    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("tracegen: standard output");
        return 1;
    }
    return 0;
}
