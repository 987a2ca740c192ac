/*
 * tracegen.c - writes a deterministic perception trace (docs/trace-format.md)
 * for the conformance test: the same KIND and SEED give the same bytes on
 * every platform, so a failure can always be reproduced from its name.
 *
 * Usage: tracegen KIND SEED [N] [OPS]
 *
 * Kinds: walk crowd teleport churn mixed outside boundary road hideshow ulps,
 * and all (every op drawn from one of the others, in one world).
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

#define SENSES 3
static const char *const sense_names[SENSES] = {"sight", "hearing", "smell"};

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
    size_t live_pos;       /* index in g.live while alive */
    int64_t x, y;          /* in ticks (1/den units) */
    int64_t range[SENSES]; /* in ticks; 0 = lacks the sense */
    int64_t saved[SENSES]; /* the last range > 0, to switch a sense back on */
    unsigned hidden;       /* bit s: imperceptible to sense s */
    /*
     * Values that are no ticks (the ulps kind): where a bit of `exact` is
     * set, the double is what the trace says, and the ticks above hold it
     * truncated, for the ops that only know ticks (which then put back a
     * tick value and clear the bit).
     */
    unsigned exact;
    double fx, fy, frange[SENSES];
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

static void put_pos(const entity *e)
{
    char x[48], y[48];
    format_value(x, sizeof x, e->exact & EXACT_X, e->fx, e->x);
    format_value(y, sizeof y, e->exact & EXACT_Y, e->fy, e->y);
    printf(" %s %s", x, y);
}

static void emit_add(const entity *e)
{
    char opt[SENSES + 1][64];
    int n = 0;

    for (int s = 0; s < SENSES; s++) {
        /* A missing sense is written as =0 or left out: both mean 0. */
        if (e->range[s] == 0 && chance(50))
            continue;
        char num[48];
        format_range(num, sizeof num, e, s);
        snprintf(opt[n++], sizeof opt[0], "%s=%s", sense_names[s], num);
    }
    if (e->hidden != 0) {
        char *p = opt[n++];
        p += sprintf(p, "hide=");
        const char *sep = "";
        for (int s = 0; s < SENSES; s++)
            if (e->hidden & (1u << s)) {
                p += sprintf(p, "%s%s", sep, sense_names[s]);
                sep = ",";
            }
    }
    /* The options may come in any order. */
    if (n > 1 && chance(15)) {
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rnd(i + 1);
            char tmp[64];
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
    printf("range %" PRIu32 " %s %s\n", e->id, sense_names[s], num);
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

/*                      STEP JUMP REM ADD RANGE HIDE BOUND COINC NOOP ULPS */
static const kind kinds[] = {
    {"walk",
     10,
     {0, 0, 1000, 1000},
     250,
     4000,
     place_uniform,
     range_walk,
     5,
     {900, 20, 15, 15, 30, 20, 40, 0, 0},
     0},
    {"crowd",
     2,
     {0, 0, 2000, 2000},
     400,
     2000,
     place_crowd,
     range_crowd,
     3,
     {850, 10, 30, 30, 50, 30, 0, 10, 0},
     0},
    {"teleport",
     2,
     {-512, -256, 512, 768},
     200,
     3000,
     place_teleport,
     range_teleport,
     10,
     {300, 600, 30, 30, 40, 0, 0, 0, 0},
     0},
    {"churn",
     2,
     {0, 0, 1000, 1000},
     250,
     3000,
     place_uniform,
     range_walk,
     10,
     {300, 50, 300, 300, 50, 0, 0, 0, 0},
     0},
    {"mixed",
     2,
     {0, 0, 2000, 2000},
     300,
     3000,
     place_mixed,
     range_mixed,
     10,
     {800, 40, 30, 30, 80, 20, 0, 0, 0},
     0},
    {"outside",
     2,
     {0, 0, 1000, 1000},
     250,
     3000,
     place_outside,
     range_outside,
     20,
     {650, 200, 50, 50, 50, 0, 0, 0, 0},
     0},
    {"boundary",
     1,
     {0, 0, 200, 200},
     200,
     3000,
     place_integer,
     range_boundary,
     3,
     {150, 20, 25, 25, 100, 50, 580, 50, 0},
     0},
    {"road",
     2,
     {0, 0, 2000, 1000},
     200,
     3000,
     place_road,
     range_road,
     20,
     {700, 150, 15, 15, 50, 20, 0, 50, 0},
     1},
    {"hideshow",
     2,
     {0, 0, 500, 500},
     150,
     3000,
     place_uniform,
     range_hideshow,
     10,
     {120, 0, 25, 25, 350, 450, 0, 0, 30},
     0},
    {"ulps",
     2,
     {0, 0, 1024, 1024},
     100,
     3000,
     place_uniform,
     range_ulps,
     10,
     {250, 30, 25, 25, 40, 10, 0, 0, 0, 450},
     0},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

/* `all` draws every op from one of the kinds above, in a shared world. */
static const kind kind_all = {
    "all", 2, {0, 0, 1000, 1000}, 250, 3000, NULL, NULL, 0, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0};

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
    for (int s = 0; s < SENSES; s++) {
        e->range[s] = g.cur->range(s);
        e->saved[s] = e->range[s] != 0 ? e->range[s] : g.cur->range(s);
    }
    e->hidden = 0;
    for (int s = 0; s < SENSES; s++)
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
    e->exact &= ~(EXACT_X | EXACT_Y);
    emit_move(e);
}

/* A new range, 0 (the sense switched off), or the last range again. */
static void op_range(entity *e)
{
    int s = (int)rnd(SENSES);
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
    int s = (int)rnd(SENSES);
    unsigned bit = 1u << s;
    /* Now and then hide what is hidden, or show what is shown: no change. */
    int hide = chance(10) ? (e->hidden & bit) != 0 : (e->hidden & bit) == 0;
    if (hide)
        e->hidden |= bit;
    else
        e->hidden &= ~bit;
    printf("%s %" PRIu32 " %s\n", hide ? "hide" : "show", e->id, sense_names[s]);
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
    e->exact &= ~(EXACT_X | EXACT_Y); /* from t's ticks, exact or not */
    emit_move(e);
    if (chance(50)) {
        entity *who = chance(50) ? e : t;
        int s = (int)rnd(SENSES);
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
    }
    emit_move(e);
}

/* A command that changes nothing: a move to where it is, the same range again. */
static void op_noop(entity *e)
{
    if (chance(50)) {
        emit_move(e);
    } else {
        int s = (int)rnd(SENSES);
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
    for (int s = 0; s < SENSES; s++)
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
    int s = (int)rnd(SENSES);
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
        printf("show %" PRIu32 " %s\n", t->id, sense_names[s]);
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

static void run_op(void)
{
    const kind *k = g.kind == &kind_all ? &kinds[rnd(KIND_COUNT)] : g.kind;
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
    fputs(" all\n", stderr);
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
    g.target_n = n;
    g.next_id = (uint32_t)rnd(10);
    for (int i = 0; i < 4; i++)
        g.w[i] = units(g.kind->world[i]);

    printf("# tracegen %s %llu n=%zu ops=%zu\n", g.kind->name, seed, n, ops);
    printf("world");
    for (int i = 0; i < 4; i++)
        put_num(g.w[i]);
    putchar('\n');
    for (size_t i = 0; i < n; i++) {
        g.cur = g.kind == &kind_all ? &kinds[rnd(KIND_COUNT)] : g.kind;
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
