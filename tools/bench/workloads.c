/*
 * workloads.c - generates the benchmark's named workloads into operation
 * arrays: a small agent simulation (walkers, crowds, chargers, groups, a
 * road, guards, flyers) stepped tick by tick, each step written down as a
 * percept call.
 * Nothing here is timed; the same array is replayed against every backend.
 */
#include "workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../splitmix.h"

#define PI 3.14159265358979323846
#define R BENCH_RANGE

/* mixed_ranges: hearing and smell reach these shares of an entity's sight range. */
#define MIXED_HEARING 0.6
#define MIXED_SMELL 0.3

/* Range jitter: each entity's range per sense is R * U(0.8, 1.2). E[f^2]: */
#define JITTER_LO 0.8
#define JITTER_HI 1.2
#define JITTER_F2 (1.0 + (JITTER_HI - JITTER_LO) * (JITTER_HI - JITTER_LO) / 12.0)

const bench_workload_info bench_workloads[] = {
    {"uniform_walk", "Every entity walks a tenth of its range per tick on a slowly turning "
                     "heading; about 20 neighbours per sense"},
    {"sight_walk", "As uniform_walk, with sight alone: the one-sense walk"},
    {"sparse_walk", "The same walk in a world 20 times larger: about 1 neighbour per sense"},
    {"town_square", "Half the entities, at most 1000, jitter inside a disk 3 ranges wide "
                    "(hundreds in range, not thousands); the others walk around it"},
    /* setup_boss_fight()'s rule, stated for every N: small worlds have no walkers. */
    {"boss_fight", "200 entities charge one boss and fight around it, 1000 onlookers stand in a "
                   "ring, the rest walk; below 1201 entities, 200 in 1201 of them charge and "
                   "the others, but the boss, look on, with no one walking"},
    {"clusters", "32 groups drift across the world, their members milling inside them"},
    {"road", "Everyone walks back and forth on one line along x (y is the same for all)"},
    {"teleport", "As uniform_walk, but each tick 2% of the entities jump anywhere instead"},
    {"mixed_ranges", "90% NPCs with sight r, 10% players with 4r; hearing and smell at 0.6 and 0.3 "
                     "of sight"},
    {"churn", "As uniform_walk, but 5% leave and 5% enter per tick, and once a login storm of 10% "
              "of N into one spot"},
    {"mostly_static", "The density of uniform_walk, but 90% of the entities never move"},
    {"npc_cones", "Guards of two factions (tags) watch with a 120 degree sight cone out to 60, "
                  "margin 15, and hear out to 30, ignoring their allies; a tenth of them turn "
                  "each tick. A quarter of the entities are players, who walk and make a "
                  "footstep (a hearing stimulus) at every step"},
    {"aoi_bands_3d", "Senses near, mid and far (ranges r, 2r, 4r, margins of a fifth): three in "
                     "four walk on floors up to 12 high, the others fly between 10 and 60"},
};

const size_t bench_workload_count = sizeof bench_workloads / sizeof bench_workloads[0];

size_t bench_workload_index(const char *name)
{
    size_t i = 0;
    while (i < bench_workload_count && strcmp(bench_workloads[i].name, name) != 0)
        i++;
    return i;
}

const char *bench_op_kind_name(int kind)
{
    static const char *const names[OP_KIND_COUNT] = {"add",   "move", "teleport", "remove",
                                                     "login", "turn", "emit"};
    return kind >= 0 && kind < OP_KIND_COUNT ? names[kind] : "?";
}

/* splitmix64 (splitmix.h): a seed means the same workload everywhere. */
static size_t below(uint64_t *s, size_t n)
{
    return n ? (size_t)(splitmix_next(s) % n) : 0;
}

typedef enum role {
    ROLE_WALK,    /* correlated random walk inside the bounds */
    ROLE_JITTER,  /* small random steps inside an annulus around (cx, cy) */
    ROLE_CHARGE,  /* runs to (cx, cy), then jitters within r_out of it */
    ROLE_CLUSTER, /* its group's centre plus an offset (cx, cy) jittering in a disk */
    ROLE_ROAD,    /* walks along x; heading is the direction, +1 or -1 */
    ROLE_STATIC,  /* never moves */
    ROLE_FLY      /* walks, and climbs or sinks at random between FLY_LOW and FLY_HIGH */
} role;

#define FLY_LOW 10.0
#define FLY_HIGH 60.0

typedef struct agent {
    double x, y, z;
    double heading, speed;
    double cx, cy, r_in, r_out;
    uint32_t group;
    uint8_t role;
    uint8_t alive;
} agent;

typedef struct group {
    double x, y, heading, speed, radius;
} group;

typedef struct gen {
    uint64_t rng;
    bench_workload *wl;
    agent *agents; /* by ID */
    size_t agent_count, agent_cap;
    size_t op_cap;
    size_t alive;
    group *groups;
    size_t group_count;
    double jitter;   /* step of the jittering roles */
    double teleport; /* fraction of the movers that teleport each tick */
    double churn;    /* fraction of N that leaves, and that enters, each tick */
    size_t storm_tick, storm_size;
    int mixed;         /* mixed_ranges' NPC / player profiles instead of jittered ranges */
    int sight_only;    /* every range but sight's is 0 */
    uint32_t *jumpers; /* [n]: this tick's teleporters */
    size_t guards;     /* npc_cones: IDs 0 .. guards - 1 are guards, who turn */
} gen;

static int push_op(gen *g, uint32_t kind, uint32_t id, double x, double y, double z)
{
    bench_workload *wl = g->wl;
    if (wl->op_count == g->op_cap) {
        size_t cap = g->op_cap ? g->op_cap * 2 : 4096;
        bench_op *ops = realloc(wl->ops, cap * sizeof *ops);
        if (!ops)
            return -1;
        wl->ops = ops;
        g->op_cap = cap;
    }
    wl->ops[wl->op_count++] = (bench_op){x, y, z, id, kind};
    return 0;
}

/* A new agent (not yet in the world) with its profile; returns its ID or -1. */
static long new_agent(gen *g, uint8_t role_, double x, double y)
{
    if (g->agent_count == g->agent_cap) {
        size_t cap = g->agent_cap ? g->agent_cap * 2 : 1024;
        agent *a = realloc(g->agents, cap * sizeof *a);
        bench_profile *p = realloc(g->wl->profiles, cap * sizeof *p);
        if (a)
            g->agents = a;
        if (p)
            g->wl->profiles = p;
        if (!a || !p)
            return -1;
        g->agent_cap = cap;
    }
    size_t id = g->agent_count++;
    agent *a = &g->agents[id];
    memset(a, 0, sizeof *a);
    a->x = x;
    a->y = y;
    a->role = role_;
    a->heading = splitmix_between(&g->rng, 0, 2 * PI);
    bench_profile *p = &g->wl->profiles[id];
    memset(p, 0, sizeof *p);
    if (g->mixed) {
        /* One in ten is a player who perceives four times as far. */
        double base = below(&g->rng, 10) == 0 ? 4 * R : R;
        p->range[PERCEPT_SIGHT] = base;
        p->range[PERCEPT_HEARING] = MIXED_HEARING * base;
        p->range[PERCEPT_SMELL] = MIXED_SMELL * base;
    } else {
        for (int s = 0; s < BENCH_SENSES; s++)
            p->range[s] = R * splitmix_between(&g->rng, JITTER_LO, JITTER_HI);
    }
    for (int s = 1; g->sight_only && s < BENCH_SENSES; s++)
        p->range[s] = 0;
    a->speed = 0.1 * p->range[PERCEPT_SIGHT];
    g->wl->profile_count = g->agent_count;
    return (long)id;
}

static int add_agent(gen *g, uint32_t kind, size_t id)
{
    agent *a = &g->agents[id];
    a->alive = 1;
    g->alive++;
    return push_op(g, kind, (uint32_t)id, a->x, a->y, a->z);
}

static void random_point(gen *g, double *x, double *y)
{
    const percept_bounds *b = &g->wl->bounds;
    *x = splitmix_between(&g->rng, b->min_x, b->max_x);
    *y = splitmix_between(&g->rng, b->min_y, b->max_y);
}

/* A point uniform in the annulus r_in..r_out around (cx, cy). */
static void annulus_point(gen *g, double cx, double cy, double r_in, double r_out, double *x,
                          double *y)
{
    double r = sqrt(splitmix_between(&g->rng, r_in * r_in, r_out * r_out));
    double t = splitmix_between(&g->rng, 0, 2 * PI);
    *x = cx + r * cos(t);
    *y = cy + r * sin(t);
}

/* Side of a square holding `count` entities with `neighbours` in range on average. */
static double side_for(size_t count, double neighbours, double mean_r2)
{
    double side = sqrt((double)(count ? count : 1) * PI * mean_r2 / neighbours);
    return side < 4 * R ? 4 * R : side;
}

static void set_square(bench_workload *wl, double side)
{
    wl->bounds = (percept_bounds){0, 0, side, side};
}

/* Reflects a coordinate into [lo, hi]; returns 1 if it bounced. */
static int reflect(double *v, double lo, double hi)
{
    if (*v < lo) {
        *v = 2 * lo - *v;
        if (*v > hi)
            *v = hi;
        return 1;
    }
    if (*v > hi) {
        *v = 2 * hi - *v;
        if (*v < lo)
            *v = lo;
        return 1;
    }
    return 0;
}

static void walk(gen *g, agent *a, double lo_x, double lo_y, double hi_x, double hi_y)
{
    /* A heading that turns a little each tick: paths look like walks, not noise. */
    a->heading += splitmix_between(&g->rng, -0.3, 0.3);
    double nx = a->x + a->speed * cos(a->heading);
    double ny = a->y + a->speed * sin(a->heading);
    if (reflect(&nx, lo_x, hi_x))
        a->heading = PI - a->heading;
    if (reflect(&ny, lo_y, hi_y))
        a->heading = -a->heading;
    a->x = nx;
    a->y = ny;
}

static int in_annulus(double x, double y, double cx, double cy, double r_in, double r_out)
{
    double d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
    return d2 >= r_in * r_in && d2 <= r_out * r_out;
}

/* A small random step that keeps (ox, oy) + centre inside the annulus. */
static void jitter(gen *g, double *ox, double *oy, double cx, double cy, double r_in, double r_out)
{
    for (int tries = 0; tries < 8; tries++) {
        double nx = *ox + splitmix_between(&g->rng, -g->jitter, g->jitter);
        double ny = *oy + splitmix_between(&g->rng, -g->jitter, g->jitter);
        if (in_annulus(nx, ny, cx, cy, r_in, r_out)) {
            *ox = nx;
            *oy = ny;
            return;
        }
    }
    /* Stuck at an edge: step along the radius, inwards or outwards. */
    double dx = *ox - cx, dy = *oy - cy, d = sqrt(dx * dx + dy * dy);
    double target = (r_in + r_out) / 2, step = d > target ? -g->jitter : g->jitter;
    if (d > 0) {
        *ox += step * dx / d;
        *oy += step * dy / d;
    } else {
        *ox += g->jitter;
    }
}

static void step_agent(gen *g, agent *a)
{
    const percept_bounds *b = &g->wl->bounds;
    switch (a->role) {
    case ROLE_WALK:
        walk(g, a, b->min_x, b->min_y, b->max_x, b->max_y);
        break;
    case ROLE_JITTER:
        jitter(g, &a->x, &a->y, a->cx, a->cy, a->r_in, a->r_out);
        break;
    case ROLE_CHARGE: {
        double dx = a->cx - a->x, dy = a->cy - a->y, d = sqrt(dx * dx + dy * dy);
        if (d > a->r_out) {
            double step = a->speed < d - a->r_out / 2 ? a->speed : d - a->r_out / 2;
            a->x += step * dx / d + splitmix_between(&g->rng, -0.02, 0.02) * R;
            a->y += step * dy / d + splitmix_between(&g->rng, -0.02, 0.02) * R;
        } else {
            jitter(g, &a->x, &a->y, a->cx, a->cy, 0, a->r_out);
        }
        break;
    }
    case ROLE_CLUSTER: {
        const group *gr = &g->groups[a->group];
        jitter(g, &a->cx, &a->cy, 0, 0, 0, gr->radius);
        a->x = gr->x + a->cx;
        a->y = gr->y + a->cy;
        break;
    }
    case ROLE_ROAD:
        if (below(&g->rng, 50) == 0)
            a->heading = -a->heading;
        a->x += a->heading * a->speed;
        if (reflect(&a->x, b->min_x, b->max_x))
            a->heading = -a->heading;
        break;
    case ROLE_FLY:
        walk(g, a, b->min_x, b->min_y, b->max_x, b->max_y);
        a->z += splitmix_between(&g->rng, -0.1, 0.1) * R;
        reflect(&a->z, FLY_LOW, FLY_HIGH);
        break;
    default:
        break;
    }
}

static int populate_walkers(gen *g, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        double x, y;
        random_point(g, &x, &y);
        if (new_agent(g, ROLE_WALK, x, y) < 0)
            return -1;
    }
    return 0;
}

static int setup_walk(gen *g, size_t n, double neighbours)
{
    set_square(g->wl, side_for(n, neighbours, R * R * JITTER_F2));
    return populate_walkers(g, n);
}

static int setup_town_square(gen *g, size_t n)
{
    /* Capped so that each member has hundreds in range at every size. */
    size_t crowd = n / 2 < 1000 ? n / 2 : 1000;
    double side = side_for(n - crowd, 20, R * R * JITTER_F2);
    if (side < 8 * R)
        side = 8 * R;
    set_square(g->wl, side);
    for (size_t i = 0; i < crowd; i++) {
        double x, y;
        annulus_point(g, side / 2, side / 2, 0, 1.5 * R, &x, &y);
        long id = new_agent(g, ROLE_JITTER, x, y);
        if (id < 0)
            return -1;
        agent *a = &g->agents[id];
        a->cx = a->cy = side / 2;
        a->r_out = 1.5 * R;
    }
    return populate_walkers(g, n - crowd);
}

static int setup_boss_fight(gen *g, size_t n, size_t ticks)
{
    size_t attackers = 200, onlookers = 1000;
    if (n < 1 + attackers + onlookers) {
        attackers = n * 200 / 1201;
        onlookers = n > attackers + 1 ? (n - 1 - attackers) : 0;
    }
    size_t walkers = n - 1 - attackers - onlookers;
    double side = side_for(walkers, 20, R * R * JITTER_F2);
    if (side < 20 * R)
        side = 20 * R;
    set_square(g->wl, side);
    double c = side / 2;
    long boss = new_agent(g, ROLE_JITTER, c, c);
    if (boss < 0)
        return -1;
    g->agents[boss].cx = g->agents[boss].cy = c;
    g->agents[boss].r_out = 0.3 * R;
    /* The charge reaches the boss halfway through the run. */
    double half = ticks > 2 ? (double)(ticks / 2) : 1;
    for (size_t i = 0; i < attackers; i++) {
        double x, y;
        annulus_point(g, c, c, 4 * R, 8 * R, &x, &y);
        long id = new_agent(g, ROLE_CHARGE, x, y);
        if (id < 0)
            return -1;
        agent *a = &g->agents[id];
        a->cx = a->cy = c;
        a->r_out = 0.5 * R;
        a->speed = (sqrt((x - c) * (x - c) + (y - c) * (y - c)) - a->r_out) / half;
    }
    for (size_t i = 0; i < onlookers; i++) {
        double x, y;
        annulus_point(g, c, c, 1.5 * R, 4 * R, &x, &y);
        long id = new_agent(g, ROLE_JITTER, x, y);
        if (id < 0)
            return -1;
        agent *a = &g->agents[id];
        a->cx = a->cy = c;
        a->r_in = 1.5 * R;
        a->r_out = 4 * R;
    }
    return populate_walkers(g, walkers);
}

static int setup_clusters(gen *g, size_t n)
{
    g->group_count = 32;
    g->groups = calloc(g->group_count, sizeof *g->groups);
    if (!g->groups)
        return -1;
    double side = side_for(n, 20, R * R * JITTER_F2);
    /* Each group packs its members at about 60 neighbours apiece. */
    double m = (double)n / (double)g->group_count;
    double radius = R * sqrt(m / 60.0);
    if (radius < 0.5 * R)
        radius = 0.5 * R;
    if (side < 6 * radius)
        side = 6 * radius;
    set_square(g->wl, side);
    for (size_t k = 0; k < g->group_count; k++) {
        group *gr = &g->groups[k];
        gr->radius = radius;
        gr->x = splitmix_between(&g->rng, radius, side - radius);
        gr->y = splitmix_between(&g->rng, radius, side - radius);
        gr->heading = splitmix_between(&g->rng, 0, 2 * PI);
        gr->speed = 0.1 * R;
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = i % g->group_count;
        group *gr = &g->groups[k];
        double ox, oy;
        annulus_point(g, 0, 0, 0, radius, &ox, &oy);
        long id = new_agent(g, ROLE_CLUSTER, gr->x + ox, gr->y + oy);
        if (id < 0)
            return -1;
        g->agents[id].group = (uint32_t)k;
        g->agents[id].cx = ox;
        g->agents[id].cy = oy;
    }
    return 0;
}

static int setup_road(gen *g, size_t n)
{
    /* 10 entities per range of road: about 20 within reach on the line. */
    double len = (double)n * R / 10.0;
    if (len < 4 * R)
        len = 4 * R;
    g->wl->bounds = (percept_bounds){0, -R, len, R};
    for (size_t i = 0; i < n; i++) {
        long id = new_agent(g, ROLE_ROAD, splitmix_between(&g->rng, 0, len), 0.0);
        if (id < 0)
            return -1;
        g->agents[id].heading = below(&g->rng, 2) ? 1.0 : -1.0;
    }
    return 0;
}

static int setup_mostly_static(gen *g, size_t n)
{
    if (setup_walk(g, n, 20))
        return -1;
    for (size_t i = 0; i < g->agent_count; i++)
        if (i % 10 != 0)
            g->agents[i].role = ROLE_STATIC;
    return 0;
}

/* npc_cones: guards (the first three quarters of the IDs) stand at posts
 * and look out, players walk; each belongs to faction 1 or 2 (its tags). */
static int setup_npc_cones(gen *g, size_t n)
{
    static const double sight = 60, margin = 15, fov = 120, hearing = 30, player_sight = 40;
    bench_workload *wl = g->wl;
    set_square(wl, side_for(n, 20, sight * sight));
    wl->cell = hearing;
    wl->emit_sense = PERCEPT_HEARING;
    g->guards = n - n / 4;
    for (uint32_t faction = 1; faction <= 2; faction++) {
        percept_entity_desc *guard = &wl->descs[faction], *player = &wl->descs[2 + faction];
        guard->tags = player->tags = faction;
        guard->facing[0] = 1;
        guard->sense[PERCEPT_SIGHT] = (percept_sense_params){0, margin, fov, faction};
        guard->sense[PERCEPT_HEARING].ignore = faction;
    }
    for (size_t i = 0; i < n; i++) {
        double x, y;
        random_point(g, &x, &y);
        long id = new_agent(g, i < g->guards ? ROLE_STATIC : ROLE_WALK, x, y);
        if (id < 0)
            return -1;
        g->agents[id].speed = 2;
        bench_profile *p = &wl->profiles[id];
        p->desc = (uint32_t)(1 + below(&g->rng, 2) + 2 * (i >= g->guards));
        p->range[PERCEPT_SIGHT] = i < g->guards ? sight : player_sight;
        p->range[PERCEPT_HEARING] = hearing;
        p->range[PERCEPT_SMELL] = 0;
    }
    return 0;
}

/* npc_cones' tick after the moves: every player that moved makes a
 * footstep where it stands now, and a tenth of the guards turn (every
 * guard in tick 0, to face its own way). */
static int guards_tick(gen *g, size_t tick)
{
    for (size_t id = g->guards; tick > 0 && id < g->agent_count; id++)
        if (g->agents[id].alive &&
            push_op(g, OP_EMIT, (uint32_t)id, g->agents[id].x, g->agents[id].y, g->agents[id].z))
            return -1;
    for (size_t i = 0; i < (tick > 0 ? g->guards / 10 : g->guards); i++) {
        double t = splitmix_between(&g->rng, 0, 2 * PI);
        if (push_op(g, OP_TURN, (uint32_t)(tick > 0 ? below(&g->rng, g->guards) : i), cos(t),
                    sin(t), 0))
            return -1;
    }
    return 0;
}

/* aoi_bands_3d: everyone has the three bands; walkers stand on floors 0,
 * 4, 8 or 12 high, flyers between FLY_LOW and FLY_HIGH. */
static int setup_bands(gen *g, size_t n)
{
    static const char *const senses[BENCH_SENSES] = {"near", "mid", "far"};
    bench_workload *wl = g->wl;
    set_square(wl, side_for(n, 20, 4 * R * R)); /* about 20 within mid, in the plane */
    wl->moves_3d = 1;
    for (int s = 0; s < BENCH_SENSES; s++) {
        wl->senses[s] = senses[s];
        wl->descs[1].sense[s].margin = 0.2 * R * (1 << s);
    }
    for (size_t i = 0; i < n; i++) {
        double x, y;
        random_point(g, &x, &y);
        int flyer = below(&g->rng, 4) == 0;
        long id = new_agent(g, flyer ? ROLE_FLY : ROLE_WALK, x, y);
        if (id < 0)
            return -1;
        g->agents[id].z =
            flyer ? splitmix_between(&g->rng, FLY_LOW, FLY_HIGH) : 4.0 * (double)below(&g->rng, 4);
        bench_profile *p = &wl->profiles[id];
        p->desc = 1;
        for (int s = 0; s < BENCH_SENSES; s++)
            p->range[s] = R * (1 << s);
    }
    return 0;
}

static int setup(gen *g, const char *name, size_t n, size_t ticks)
{
    g->jitter = 0.05 * R;
    if (strcmp(name, "uniform_walk") == 0)
        return setup_walk(g, n, 20);
    if (strcmp(name, "sight_walk") == 0) {
        g->sight_only = 1;
        return setup_walk(g, n, 20);
    }
    if (strcmp(name, "sparse_walk") == 0)
        return setup_walk(g, n, 1);
    if (strcmp(name, "town_square") == 0)
        return setup_town_square(g, n);
    if (strcmp(name, "boss_fight") == 0)
        return setup_boss_fight(g, n, ticks);
    if (strcmp(name, "clusters") == 0)
        return setup_clusters(g, n);
    if (strcmp(name, "road") == 0)
        return setup_road(g, n);
    if (strcmp(name, "teleport") == 0) {
        g->teleport = 0.02;
        return setup_walk(g, n, 20);
    }
    if (strcmp(name, "mixed_ranges") == 0) {
        g->mixed = 1;
        set_square(g->wl, side_for(n, 20, R * R));
        return populate_walkers(g, n);
    }
    if (strcmp(name, "churn") == 0) {
        g->churn = 0.05;
        g->storm_tick = 1; /* in the first tick, which the reference always runs */
        g->storm_size = n / 10;
        return setup_walk(g, n, 20);
    }
    if (strcmp(name, "mostly_static") == 0)
        return setup_mostly_static(g, n);
    if (strcmp(name, "npc_cones") == 0)
        return setup_npc_cones(g, n);
    if (strcmp(name, "aoi_bands_3d") == 0)
        return setup_bands(g, n);
    return -1;
}

static int churn_tick(gen *g, size_t n)
{
    size_t leave = (size_t)(g->churn * (double)n), enter = leave;
    /* Leavers are drawn among the living; a few draws may hit the dead, fine. */
    for (size_t i = 0; i < leave && g->alive > 1; i++) {
        size_t id = below(&g->rng, g->agent_count);
        agent *a = &g->agents[id];
        if (!a->alive)
            continue;
        a->alive = 0;
        g->alive--;
        if (push_op(g, OP_REMOVE, (uint32_t)id, a->x, a->y, a->z))
            return -1;
    }
    for (size_t i = 0; i < enter; i++) {
        double x, y;
        random_point(g, &x, &y);
        long id = new_agent(g, ROLE_WALK, x, y);
        if (id < 0 || add_agent(g, OP_ADD, (size_t)id))
            return -1;
    }
    return 0;
}

static int storm(gen *g)
{
    double cx, cy;
    random_point(g, &cx, &cy);
    for (size_t i = 0; i < g->storm_size; i++) {
        double x, y;
        annulus_point(g, cx, cy, 0, 0.5 * R, &x, &y);
        long id = new_agent(g, ROLE_WALK, x, y);
        if (id < 0 || add_agent(g, OP_LOGIN, (size_t)id))
            return -1;
    }
    return 0;
}

static int movement_tick(gen *g, size_t tick, size_t n)
{
    size_t movers = g->agent_count; /* the ones that entered this tick wait a tick */
    if (g->churn > 0 && churn_tick(g, n))
        return -1;
    if (g->storm_size && tick == g->storm_tick && storm(g))
        return -1;
    for (size_t k = 0; k < g->group_count; k++) {
        group *gr = &g->groups[k];
        agent tmp = {.x = gr->x, .y = gr->y, .heading = gr->heading, .speed = gr->speed};
        const percept_bounds *b = &g->wl->bounds;
        walk(g, &tmp, b->min_x + gr->radius, b->min_y + gr->radius, b->max_x - gr->radius,
             b->max_y - gr->radius);
        gr->x = tmp.x;
        gr->y = tmp.y;
        gr->heading = tmp.heading;
    }
    /* Teleports come after the moves, as one block, so each kind is timed
     * with few clock reads. */
    size_t teleports = 0;
    for (size_t id = 0; id < movers; id++) {
        agent *a = &g->agents[id];
        if (!a->alive || a->role == ROLE_STATIC)
            continue;
        if (g->teleport > 0 && splitmix_unit(&g->rng) < g->teleport) {
            g->jumpers[teleports++] = (uint32_t)id;
            continue;
        }
        step_agent(g, a);
        if (push_op(g, OP_MOVE, (uint32_t)id, a->x, a->y, a->z))
            return -1;
    }
    for (size_t i = 0; i < teleports; i++) {
        agent *a = &g->agents[g->jumpers[i]];
        random_point(g, &a->x, &a->y);
        if (push_op(g, OP_TELEPORT, g->jumpers[i], a->x, a->y, a->z))
            return -1;
    }
    return g->guards ? guards_tick(g, tick) : 0;
}

int bench_workload_generate(bench_workload *wl, const char *name, size_t n, size_t ticks,
                            uint64_t seed)
{
    memset(wl, 0, sizeof *wl);
    gen g = {.rng = seed ^ 0x5045524345505421ull, .wl = wl};
    for (const char *p = name; *p; p++) /* a different stream per workload */
        g.rng = g.rng * 31 + (unsigned char)*p;
    wl->name = name;
    wl->n = n;
    for (int k = 0; k < BENCH_DESCS; k++)
        wl->descs[k] = (percept_entity_desc)PERCEPT_ENTITY_DESC_INIT;
    wl->tick_end = calloc(ticks + 1, sizeof *wl->tick_end);
    if (!wl->tick_end || setup(&g, name, n, ticks))
        goto fail;
    if (g.teleport > 0 && !(g.jumpers = malloc((g.agent_count + 1) * sizeof *g.jumpers)))
        goto fail;
    size_t initial = g.agent_count;
    for (size_t id = 0; id < initial; id++)
        if (add_agent(&g, OP_ADD, id))
            goto fail;
    if (g.guards && guards_tick(&g, 0))
        goto fail;
    wl->tick_end[0] = wl->op_count;
    wl->tick_count = 1;
    for (size_t t = 1; t <= ticks; t++) {
        if (movement_tick(&g, t, n))
            goto fail;
        wl->tick_end[t] = wl->op_count;
        wl->tick_count = t + 1;
    }
    free(g.agents);
    free(g.groups);
    free(g.jumpers);
    return 0;
fail:
    free(g.agents);
    free(g.groups);
    free(g.jumpers);
    bench_workload_free(wl);
    return -1;
}

void bench_workload_free(bench_workload *wl)
{
    free(wl->ops);
    free(wl->tick_end);
    free(wl->profiles);
    memset(wl, 0, sizeof *wl);
}
